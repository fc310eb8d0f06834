/* Unit tests of lib/ncmp_cpspath_parse.c: the tree the shared CPS-path
 * parser builds for the constructs of CPS's path language (prefixes,
 * ancestor paths, the attribute axis, where each part starts), and its
 * refusals. The inventory translator's refusals of the same text are in
 * test_ncmp_cpspath.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_cpspath_parse.h"
#include "unit_leak.h"

TestSuite(ncmp_cpspath_parse, .fini = unit_leak_check);

static ncmp_cpspath_ast *parse_ok(const char *src)
{
    ncmp_cpspath_ast *ast = NULL;
    ncmp_err err = {0};

    if (ncmp_cpspath_parse(src, &ast, &err) != 0)
        cr_assert_fail("%s: %s", src, err.msg);
    cr_assert_not_null(ast);
    cr_assert_eq(ast->src, src);
    return ast;
}

/* The text [at, at+len) of the tree's source. */
static void expect_text(const ncmp_cpspath_ast *ast, size_t at, size_t len, const char *want)
{
    cr_expect_eq(len, strlen(want), "'%.*s' is not '%s'", (int)len, ast->src + at, want);
    cr_expect(ncmp_cpspath_name_is(ast, at, len, want), "'%.*s' is not '%s'", (int)len,
              ast->src + at, want);
}

Test(ncmp_cpspath_parse, records_the_steps_and_where_they_start)
{
    const char *src = "/shops//book[@title='Dune'][@price=5]";
    ncmp_cpspath_ast *ast = parse_ok(src);

    cr_assert_eq(ast->nsteps, 2);
    expect_text(ast, ast->steps[0].name, ast->steps[0].name_len, "shops");
    cr_expect_eq(ast->steps[0].at, 0);
    cr_expect_not(ast->steps[0].descendant);
    expect_text(ast, ast->steps[1].name, ast->steps[1].name_len, "book");
    cr_expect_eq(ast->steps[1].at, 6);
    cr_expect(ast->steps[1].descendant);
    cr_assert_eq(ast->steps[1].npreds, 2);
    cr_expect_eq(ast->preds[0].at, strchr(src, '[') - src);
    cr_expect_eq(ast->preds[1].at, strrchr(src, '[') - src);
    cr_assert_eq(ast->natoms, 2);
    cr_expect_eq(ast->atoms[0].at, strchr(src, '@') - src);
    expect_text(ast, ast->atoms[0].leaf, ast->atoms[0].leaf_len, "title");
    cr_expect_str_eq(ast->atoms[0].lit, "Dune");
    cr_expect_eq(ast->atoms[0].lit_kind, NCMP_CPSPATH_LIT_STRING);
    cr_expect_str_eq(ast->atoms[1].lit, "5");
    cr_expect_eq(ast->atoms[1].lit_kind, NCMP_CPSPATH_LIT_NUMBER);
    cr_expect_eq(ast->nancestor, 0);
    cr_expect_not(ast->has_attribute);
    ncmp_cpspath_ast_free(ast);
}

Test(ncmp_cpspath_parse, takes_module_prefixes_off_names)
{
    const char *src = "/book-store:shops/bs:books[@bs:title='x']/ancestor::p:shops/@p:name";
    ncmp_cpspath_ast *ast = parse_ok(src);

    cr_assert_eq(ast->nsteps, 2);
    expect_text(ast, ast->steps[0].name, ast->steps[0].name_len, "shops");
    cr_expect_eq(ast->steps[0].colon, strchr(src, ':') - src);
    expect_text(ast, ast->steps[1].name, ast->steps[1].name_len, "books");
    expect_text(ast, ast->atoms[0].leaf, ast->atoms[0].leaf_len, "title");
    cr_expect_neq(ast->atoms[0].leaf_colon, 0);
    cr_assert_eq(ast->nancestor, 1);
    expect_text(ast, ast->ancestor[0].name, ast->ancestor[0].name_len, "shops");
    cr_expect_neq(ast->ancestor[0].colon, 0);
    cr_assert(ast->has_attribute);
    expect_text(ast, ast->attribute, ast->attribute_len, "name");
    cr_expect_neq(ast->attribute_colon, 0);
    ncmp_cpspath_ast_free(ast);

    ast = parse_ok("//books");
    cr_expect_eq(ast->steps[0].colon, 0);
    ncmp_cpspath_ast_free(ast);
}

Test(ncmp_cpspath_parse, reads_an_ancestor_path_of_several_steps)
{
    const char *src = "//book/ancestor::categories[@code='1']/books/@price";
    ncmp_cpspath_ast *ast = parse_ok(src);

    cr_assert_eq(ast->nsteps, 1);
    cr_assert_eq(ast->nancestor, 2);
    expect_text(ast, ast->ancestor[0].name, ast->ancestor[0].name_len, "categories");
    cr_expect_eq(ast->ancestor[0].at, strlen("//book"));
    cr_expect_eq(ast->ancestor[0].npreds, 1);
    expect_text(ast, ast->ancestor[1].name, ast->ancestor[1].name_len, "books");
    cr_expect_eq(ast->ancestor[1].at, strstr(src, "/books") - src);
    cr_expect_not(ast->ancestor[1].descendant);
    cr_assert(ast->has_attribute);
    cr_expect_eq(ast->attribute_at, strstr(src, "/@") - src);
    expect_text(ast, ast->attribute, ast->attribute_len, "price");
    ncmp_cpspath_ast_free(ast);
}

Test(ncmp_cpspath_parse, reads_text_and_contains_and_both_quotes)
{
    ncmp_cpspath_ast *ast =
        parse_ok("//book/label[text()=\"say \"\"hi\"\"\" or contains(text(),'it''s')]");

    cr_assert_eq(ast->natoms, 2);
    cr_expect(ast->atoms[0].on_text);
    cr_expect_not(ast->atoms[0].is_contains);
    cr_expect_str_eq(ast->atoms[0].lit, "say \"hi\"");
    cr_expect(ast->atoms[1].on_text);
    cr_expect(ast->atoms[1].is_contains);
    cr_expect(ast->atoms[1].or_before);
    cr_expect_str_eq(ast->atoms[1].lit, "it's");
    ncmp_cpspath_ast_free(ast);
}

typedef struct refusal {
    const char *path;
    const char *msg;
} refusal;

static const refusal refusals[] = {
    {"//a/ancestor::b//c",
     "Invalid CPS path at position 16: the ancestor path takes '/' steps only"},
    {"//a/ancestor::b/ancestor::c",
     "Invalid CPS path at position 16: the ancestor axis must be the last step"},
    {"//a/ancestor::b[@x='1']]",
     "Invalid CPS path at position 24: the ancestor axis must be the last step"},
    {"//a/ancestor::b/", "Invalid CPS path at position 17: expected a node name"},
    {"//a:b:c", "Invalid CPS path at position 6: unexpected character ':'"},
    {"//a:", "Invalid CPS path at position 4: unexpected character ':'"},
    {"//:a", "Invalid CPS path at position 3: unexpected character ':'"},
    {"//a/@b:", "Invalid CPS path at position 7: unexpected character ':'"},
    {"//a/@b/c", "Invalid CPS path at position 7: the attribute axis '/@leaf' must come last"},
    {"//a[@b='c']/ancestor::", "Invalid CPS path at position 23: expected a node name after "
                               "'ancestor::'"},
    {NULL, "Invalid CPS path at position 1: empty path"},
};

Test(ncmp_cpspath_parse, refuses_with_the_position)
{
    for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
        ncmp_cpspath_ast *ast = NULL;
        ncmp_err err = {0};

        cr_expect_eq(ncmp_cpspath_parse(refusals[i].path, &ast, &err), -1, "accepted '%s'",
                     refusals[i].path);
        cr_expect_null(ast, "%s: output written", refusals[i].path);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT);
        cr_expect_str_eq(err.msg, refusals[i].msg, "for '%s'", refusals[i].path);
    }
}

/* The steps of the ancestor path count against the same limit. */
Test(ncmp_cpspath_parse, limits_the_steps_with_the_ancestor_path)
{
    ncmp_buf path = NCMP_BUF_INIT;
    ncmp_cpspath_ast *ast = NULL;
    ncmp_err err = {0};
    char want[128];

    for (int i = 0; i < 16; i++)
        ncmp_buf_append_str(&path, "/a");
    ncmp_buf_append_str(&path, "/ancestor::b");
    for (int i = 1; i < 16; i++)
        ncmp_buf_append_str(&path, "/b");
    ast = parse_ok(path.data);
    cr_expect_eq(ast->nsteps + ast->nancestor, NCMP_CPSPATH_MAX_STEPS);
    ncmp_cpspath_ast_free(ast);
    ast = NULL;
    ncmp_buf_append_str(&path, "/c");
    cr_expect_eq(ncmp_cpspath_parse(path.data, &ast, &err), -1);
    snprintf(want, sizeof(want), "Invalid CPS path at position %zu: too many steps (at most 32)",
             path.len);
    cr_expect_str_eq(err.msg, want);
    ncmp_buf_free(&path);
}

Test(ncmp_cpspath_parse, frees_null)
{
    ncmp_cpspath_ast_free(NULL);
}
