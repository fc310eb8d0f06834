#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_yang.h"
#include "unit_leak.h"

TestSuite(ncmp_yang, .fini = unit_leak_check);

static const char MOD_A[] = "module a { yang-version 1.1; namespace \"urn:a\"; prefix a;\n"
                            "  import b { prefix b; }\n"
                            "  revision 2024-01-01 { description \"x\"; }\n"
                            "  container top { leaf l { type b:small; } } }";
static const char MOD_B[] = "module b { namespace \"urn:b\"; prefix b;\n"
                            "  include b-sub;\n"
                            "  revision 2023-05-05;\n"
                            "  typedef small { type uint8; } }";
static const char SUB_B[] = "// comment first\nsubmodule b-sub { belongs-to b { prefix b; }\n"
                            "  leaf extra { type string; } }";

Test(ncmp_yang, set_with_imports_and_includes)
{
    ncmp_yang_source src[] = {
        {"a", "2024-01-01", MOD_A, 0, NULL},
        {"b", "2023-05-05", MOD_B, 0, NULL},
        {"b-sub", "", SUB_B, 0, NULL},
    };
    ncmp_err err = {0};

    cr_assert_eq(ncmp_yang_check_set(src, 3, &err), 0, "%s", err.msg);
    cr_assert_str_eq(src[0].namespace_, "urn:a");
    cr_assert_str_eq(src[1].namespace_, "urn:b");
    cr_assert(src[2].submodule);
    cr_assert_not(src[0].submodule);
    ncmp_yang_sources_clear(src, 3);
}

Test(ncmp_yang, invalid_yang_is_rejected_with_the_module_named)
{
    ly_log_options(LY_LOSTORE);
    ncmp_yang_source src[] = {{"bad", "2024-01-01", "module bad { this is not yang", 0, NULL}};
    ncmp_err err = {0};

    cr_assert_eq(ncmp_yang_check_set(src, 1, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT);
    cr_assert(strstr(err.msg, "module bad revision 2024-01-01 is not valid YANG"), "%s", err.msg);
    /* libyang's reason, not only "parsing failed" */
    cr_assert_null(strstr(err.msg, "failed"), "%s", err.msg);
    ncmp_yang_sources_clear(src, 1);
}

Test(ncmp_yang, wrong_module_or_revision_is_rejected)
{
    ncmp_yang_source src[] = {{"b", "2020-01-01", MOD_B, 0, NULL}, {"b-sub", "", SUB_B, 0, NULL}};
    ncmp_err err = {0};

    cr_assert_eq(ncmp_yang_check_set(src, 2, &err), -1);
    cr_assert(strstr(err.msg, "is module b revision 2023-05-05"), "%s", err.msg);
    ncmp_yang_sources_clear(src, 2);
}

Test(ncmp_yang, missing_import_is_rejected)
{
    ncmp_yang_source src[] = {{"a", "2024-01-01", MOD_A, 0, NULL}};
    ncmp_err err = {0};

    cr_assert_eq(ncmp_yang_check_set(src, 1, &err), -1);
    cr_assert(strstr(err.msg, "module a revision 2024-01-01 is not valid YANG"), "%s", err.msg);
    ncmp_yang_sources_clear(src, 1);
}

static char *load_b(const char *name, const char *revision, void *arg)
{
    int *calls = arg;
    (*calls)++;
    if (strcmp(name, "b") == 0)
        return strdup(MOD_B);
    if (strcmp(name, "b-sub") == 0)
        return strdup(SUB_B);
    return NULL;
}

/* A new module importing one stored earlier: the loader supplies it. */
Test(ncmp_yang, imports_outside_the_set_come_from_the_loader)
{
    ncmp_yang_source src[] = {{"a", "2024-01-01", MOD_A, 0, NULL}};
    ncmp_err err = {0};
    int calls = 0;

    cr_assert_eq(ncmp_yang_check_set_with(src, 1, load_b, &calls, &err), 0, "%s", err.msg);
    cr_assert_geq(calls, 2); /* b, then its include */
    cr_assert_str_eq(src[0].namespace_, "urn:a");
    ncmp_yang_sources_clear(src, 1);
}

/* Parses, but does not compile: an unknown type is found when the set is
 * compiled as a whole. */
Test(ncmp_yang, semantic_errors_are_rejected)
{
    ncmp_yang_source src[] = {{"c", "",
                               "module c { namespace \"urn:c\"; prefix c;\n"
                               "  leaf l { type no-such-type; } }",
                               0, NULL}};
    ncmp_err err = {0};

    ly_log_options(LY_LOSTORE);
    cr_assert_eq(ncmp_yang_check_set(src, 1, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT);
    cr_assert(strstr(err.msg, "not valid YANG"), "%s", err.msg);
    ncmp_yang_sources_clear(src, 1);
}

/* A bad module names the line libyang stopped at. */
Test(ncmp_yang, invalid_yang_names_the_line)
{
    ly_log_options(LY_LOSTORE);
    ncmp_yang_source src[] = {
        {"bad", "", "module bad {\n  namespace \"urn:bad\";\n  prefix b;\n  leaf x { typo; }\n}", 0,
         NULL}};
    ncmp_err err = {0};

    cr_assert_eq(ncmp_yang_check_set(src, 1, &err), -1);
    cr_assert(strstr(err.msg, "module bad"), "%s", err.msg);
    cr_assert(strstr(err.msg, "Line number 4"), "%s", err.msg);
}

/* The kept context has every module of the set implemented, even one
 * that was first met as another's import. */
Test(ncmp_yang, context_from_set_implements_every_module)
{
    ncmp_yang_source src[] = {
        {"a", "2024-01-01", MOD_A, 0, NULL},
        {"b", "2023-05-05", MOD_B, 0, NULL},
        {"b-sub", "", SUB_B, 0, NULL},
    };
    struct ly_ctx *ctx = NULL;
    ncmp_err err = {0};
    const struct lys_module *b;

    cr_assert_eq(ncmp_yang_ctx_from_set(src, 3, NULL, NULL, 1, &ctx, &err), 0, "%s", err.msg);
    b = ly_ctx_get_module(ctx, "b", "2023-05-05");
    cr_assert_not_null(b);
    cr_assert(b->implemented);
    ly_ctx_destroy(ctx);
    ncmp_yang_sources_clear(src, 3);
}

Test(ncmp_yang, source_name_reads_name_and_newest_revision)
{
    static const struct {
        const char *src, *name, *rev;
    } cases[] = {
        {MOD_A, "a", "2024-01-01"},
        {SUB_B, "b-sub", ""},
        {"/* c */ module \"q\" { import x { revision-date 2030-01-01; }\n"
         " revision 2019-01-01; revision \"2021-02-03\" { } // revision 2099-01-01\n}",
         "q", "2021-02-03"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *name = NULL, *rev = NULL;
        ncmp_err err = {0};
        cr_assert_eq(ncmp_yang_source_name(cases[i].src, &name, &rev, &err), 0, "%s", err.msg);
        cr_expect_str_eq(name, cases[i].name);
        cr_expect_str_eq(rev, cases[i].rev);
        free(name);
        free(rev);
    }
}

Test(ncmp_yang, source_name_rejects_what_is_not_a_module)
{
    static const char *const bad[] = {"", "container x {}", "module", "module {", "/* open"};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *name = NULL, *rev = NULL;
        ncmp_err err = {0};
        cr_expect_eq(ncmp_yang_source_name(bad[i], &name, &rev, &err), -1, "case %zu", i);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT);
        cr_expect_null(name);
    }
}
