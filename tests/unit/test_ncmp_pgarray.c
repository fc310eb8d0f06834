/* Unit tests of lib/ncmp_pgarray.c. Hostile strings are checked by reading
 * the literal back with a parser written from PostgreSQL's rules for
 * one-dimensional array input (docs: "Array Value Input"), which is what
 * array_in does with the parameter. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ncmp_pgarray.h"
#include "unit_leak.h"

TestSuite(ncmp_pgarray, .fini = unit_leak_check);

#define MAX_ELEMENTS 64

/* What PostgreSQL reads from a 1-D array literal: the elements (NULL for
 * SQL NULL), or -1 when it would refuse the literal. The caller frees
 * out[0..n). */
static int pg_array_parse(const char *s, char **out, size_t *n)
{
    const char *p = s;

    *n = 0;
    while (isspace((unsigned char)*p))
        p++;
    if (*p++ != '{')
        return -1;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '}') {
        p++;
        goto tail;
    }
    for (;;) {
        char *e = malloc(strlen(s) + 1);
        size_t len = 0, kept = 0; /* kept: length up to the last quoted/escaped byte */
        int quoted = 0, any_quote = 0, escaped = 0;

        while (isspace((unsigned char)*p))
            p++;
        for (;; p++) {
            char c = *p;
            if (c == '\0') {
                free(e);
                return -1;
            }
            if (c == '\\') {
                if (!*++p) {
                    free(e);
                    return -1;
                }
                e[len++] = *p;
                kept = len;
                escaped = 1;
                continue;
            }
            if (c == '"') {
                quoted = !quoted;
                any_quote = 1;
                kept = len;
                continue;
            }
            if (!quoted && (c == ',' || c == '}'))
                break;
            if (!quoted && (c == '{')) { /* a nested array: not 1-D */
                free(e);
                return -1;
            }
            e[len++] = c;
            if (quoted || !isspace((unsigned char)c))
                kept = len;
        }
        /* unquoted trailing white space is not part of the element */
        len = kept;
        e[len] = '\0';
        if (!any_quote && len == 0) { /* an empty unquoted element */
            free(e);
            return -1;
        }
        if (!any_quote && !escaped && strcasecmp(e, "NULL") == 0) {
            free(e);
            e = NULL;
        }
        if (*n == MAX_ELEMENTS) {
            free(e);
            return -1;
        }
        out[(*n)++] = e;
        if (*p++ == '}')
            break;
    }
tail:
    while (isspace((unsigned char)*p))
        p++;
    return *p ? -1 : 0;
}

static void parsed_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}

static const char *const hostile[] = {
    "",
    " ",
    "NULL",
    "null",
    "a,b",
    "{a}",
    "{",
    "}",
    "\"",
    "\\",
    "\\\"",
    "a\"b\\c\"",
    "  lead and trail  ",
    "tab\there",
    "new\nline",
    "caf\xc3\xa9",
    "it's",
    "$1",
    "{\"x\":[1,2]}",
    "[]",
    ",",
    "\"\"",
    "} , {",
    "ManagedElement=NRNode1/GNBDUFunction=1",
};

Test(ncmp_pgarray, hostile_strings_read_back_unchanged)
{
    size_t n = sizeof(hostile) / sizeof(hostile[0]);
    ncmp_buf b = NCMP_BUF_INIT;
    char *got[MAX_ELEMENTS];
    size_t ngot;

    ncmp_pgarray_text(&b, hostile, n);
    cr_assert_eq(pg_array_parse(b.data, got, &ngot), 0, "refused: %s", b.data);
    cr_assert_eq(ngot, n, "%zu elements in %s", ngot, b.data);
    for (size_t i = 0; i < n; i++) {
        cr_expect_not_null(got[i], "element %zu became NULL", i);
        if (got[i])
            cr_expect_str_eq(got[i], hostile[i], "element %zu", i);
    }
    parsed_free(got, ngot);
    /* and each alone */
    for (size_t i = 0; i < n; i++) {
        ncmp_pgarray_text(&b, &hostile[i], 1);
        cr_assert_eq(pg_array_parse(b.data, got, &ngot), 0, "refused: %s", b.data);
        cr_assert(ngot == 1 && got[0] && strcmp(got[0], hostile[i]) == 0, "'%s' from %s",
                  hostile[i], b.data);
        parsed_free(got, ngot);
    }
    ncmp_buf_free(&b);
}

Test(ncmp_pgarray, the_reference_parser_can_tell_a_bad_literal)
{
    /* what the parser above must refuse or read differently, so that the
     * round trip means something */
    char *got[MAX_ELEMENTS];
    size_t ngot;

    cr_assert_eq(pg_array_parse("{\"a\"", got, &ngot), -1);
    parsed_free(got, ngot);
    cr_assert_eq(pg_array_parse("{{1},{2}}", got, &ngot), -1);
    parsed_free(got, ngot);
    cr_assert_eq(pg_array_parse("{a,b}", got, &ngot), 0);
    cr_assert(ngot == 2 && strcmp(got[1], "b") == 0);
    parsed_free(got, ngot);
    cr_assert_eq(pg_array_parse("{ a b ,NULL,N\\ULL}", got, &ngot), 0);
    cr_assert(ngot == 3 && strcmp(got[0], "a b") == 0 && got[1] == NULL &&
              strcmp(got[2], "NULL") == 0);
    parsed_free(got, ngot);
}

Test(ncmp_pgarray, exact_text_literal)
{
    ncmp_buf b = NCMP_BUF_INIT;
    const char *values[] = {"a", NULL, "b\"c", "d\\e", "NULL", ""};

    ncmp_pgarray_text(&b, values, 6);
    cr_assert_str_eq(b.data, "{\"a\",NULL,\"b\\\"c\",\"d\\\\e\",\"NULL\",\"\"}");
    ncmp_pgarray_text(&b, values, 0);
    cr_assert_str_eq(b.data, "{}");
    ncmp_buf_free(&b);
}

Test(ncmp_pgarray, sql_null_reads_back_as_null)
{
    ncmp_buf b = NCMP_BUF_INIT;
    const char *values[] = {NULL, "x", NULL};
    char *got[MAX_ELEMENTS];
    size_t ngot;

    ncmp_pgarray_text(&b, values, 3);
    cr_assert_eq(pg_array_parse(b.data, got, &ngot), 0);
    cr_assert_eq(ngot, 3);
    cr_assert_null(got[0]);
    cr_assert_str_eq(got[1], "x");
    cr_assert_null(got[2]);
    parsed_free(got, ngot);
    ncmp_buf_free(&b);
}

Test(ncmp_pgarray, integers_and_bigints)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_pgarray_begin(&b);
    ncmp_pgarray_add_int(&b, 0);
    ncmp_pgarray_add_int(&b, -1);
    ncmp_pgarray_add_int(&b, INT32_MAX);
    ncmp_pgarray_add_int(&b, INT64_MAX);
    ncmp_pgarray_add_int(&b, INT64_MIN);
    ncmp_pgarray_end(&b);
    cr_assert_str_eq(b.data, "{0,-1,2147483647,9223372036854775807,-9223372036854775808}");
    ncmp_buf_free(&b);
}

Test(ncmp_pgarray, begin_resets_a_used_buffer)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_str(&b, "left over, ending in {");
    ncmp_pgarray_begin(&b);
    ncmp_pgarray_end(&b);
    cr_assert_str_eq(b.data, "{}");
    ncmp_pgarray_begin(&b);
    ncmp_pgarray_add_text(&b, "{");
    ncmp_pgarray_add_int(&b, 7);
    ncmp_pgarray_add_text(&b, NULL);
    ncmp_pgarray_add_text(&b, "x");
    ncmp_pgarray_end(&b);
    cr_assert_str_eq(b.data, "{\"{\",7,NULL,\"x\"}");
    ncmp_buf_free(&b);
}
