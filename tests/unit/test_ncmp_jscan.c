/*
 * ncmp_jscan: it takes exactly what ncmp_json_parse takes (the data-job
 * fast path and its parsed path must agree), its tokens are the values'
 * text, and its callbacks see every member and item in order.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ncmp_jscan.h"
#include "ncmp_json.h"

/* Does ncmp_jscan take `doc` as one JSON value? */
static int scans(const char *doc, size_t len, ncmp_err *err)
{
    ncmp_jscan sc;
    ncmp_jkind kind;
    ncmp_jtok tok;

    ncmp_jscan_init(&sc, doc, len, err);
    return ncmp_jscan_value(&sc, &kind, &tok) == 0 && ncmp_jscan_end(&sc) == 0;
}

static int parses(const char *doc, size_t len)
{
    json_object *o = NULL;
    ncmp_err err;
    int ok = ncmp_json_parse(doc, len, &o, &err) == 0;

    json_object_put(o);
    return ok;
}

Test(ncmp_jscan, takes_what_the_strict_parser_takes)
{
    static const char *const docs[] = {
        /* taken */
        "{}",
        "[]",
        "0",
        "-0",
        "1.5",
        "-1.5e-3",
        "1E+9",
        "\"\"",
        "true",
        "false",
        "null",
        " {\"a\" : [1, 2.5, \"x\", {\"b\": null}] } ",
        "\"\\u00e9\\n\\/\\\\\\\"\"",
        "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
        "[[[[[[[[[[]]]]]]]]]]",
        "\"\\ud83d\\ude00\"",
        /* refused */
        "",
        " ",
        "{",
        "}",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{a:1}",
        "'a'",
        "01",
        "1.",
        ".5",
        "+1",
        "1e",
        "1x",
        "NaN",
        "Infinity",
        "tru",
        "nul",
        "truex",
        "\"\\u0000\"",
        "\"\\x\"",
        "\"\\u12\"",
        "\"a\x01\"",
        "\"\xff\"",
        "\"\xc3\"",
        "\"\xed\xa0\x80\"",
        "[1] [2]",
        "{} x",
        "\"unterminated",
        "[\"a\" \"b\"]",
        "{\"a\":}",
        "{,}",
        "[,1]",
        /* JSON escapes of a lone surrogate: what the parser says, the scanner says */
        "\"\\ud800\"",
        "\"\\udc00x\"",
    };

    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        ncmp_err err;
        int s = scans(docs[i], strlen(docs[i]), &err), p = parses(docs[i], strlen(docs[i]));
        cr_expect_eq(s, p, "'%s': ncmp_jscan %s, ncmp_json_parse %s%s%s", docs[i],
                     s ? "takes it" : "refuses it", p ? "takes it" : "refuses it", s ? "" : ": ",
                     s ? "" : err.msg);
        if (!s)
            cr_expect_eq(err.cls, NCMP_ERR_REJECT);
    }
}

Test(ncmp_jscan, nesting_beyond_64_is_refused_like_the_parser)
{
    char deep[200];

    for (int depth = 63; depth <= 66; depth++) {
        ncmp_err err;
        memset(deep, '[', (size_t)depth);
        memset(deep + depth, ']', (size_t)depth);
        cr_expect_eq(scans(deep, 2 * (size_t)depth, &err), parses(deep, 2 * (size_t)depth),
                     "depth %d", depth);
    }
}

typedef struct walk {
    char names[256];
    int items;
} walk;

static int item(ncmp_jscan *sc, void *ctx)
{
    ncmp_jkind kind;
    ncmp_jtok tok;

    ((walk *)ctx)->items++;
    return ncmp_jscan_value(sc, &kind, &tok);
}

static int member(ncmp_jscan *sc, const ncmp_jtok *name, void *ctx)
{
    walk *w = ctx;
    ncmp_jkind kind;
    ncmp_jtok tok;

    strncat(w->names, name->p, name->n);
    if (ncmp_jtok_named(name, "list"))
        return ncmp_jscan_items(sc, item, w);
    if (ncmp_jscan_value(sc, &kind, &tok) != 0)
        return -1;
    if (ncmp_jtok_named(name, "v")) {
        cr_expect_eq(kind, NCMP_J_OBJECT);
        cr_expect_eq(tok.n, strlen("{\"k\": [1, \"}\"]}"));
        cr_expect_eq(memcmp(tok.p, "{\"k\": [1, \"}\"]}", tok.n), 0);
    }
    if (ncmp_jtok_named(name, "s")) {
        cr_expect_eq(kind, NCMP_J_STRING);
        cr_expect(ncmp_jtok_escaped(&tok));
    }
    if (ncmp_jtok_named(name, "n"))
        cr_expect_eq(kind, NCMP_J_NUMBER, "%s", ncmp_jkind_name(kind));
    if (ncmp_jtok_named(name, "i"))
        cr_expect_eq(kind, NCMP_J_INTEGER, "%s", ncmp_jkind_name(kind));
    return 0;
}

Test(ncmp_jscan, members_and_items_in_order_with_the_values_text)
{
    static const char doc[] = " {\"v\": {\"k\": [1, \"}\"]}, \"list\": [1, [2], {}], \"s\": "
                              "\"a\\\"b\", \"n\": 2.5e1, \"i\": -7, \"p\\u0061th\": 1} ";
    ncmp_jscan sc;
    ncmp_err err;
    walk w;

    memset(&w, 0, sizeof(w));
    ncmp_jscan_init(&sc, doc, strlen(doc), &err);
    cr_assert_eq(ncmp_jscan_members(&sc, member, &w), 0, "%s", err.msg);
    cr_assert_eq(ncmp_jscan_end(&sc), 0, "%s", err.msg);
    cr_expect_str_eq(w.names, "\"v\"\"list\"\"s\"\"n\"\"i\"\"p\\u0061th\"");
    cr_expect_eq(w.items, 3);
}

static int refuse_second(ncmp_jscan *sc, void *ctx)
{
    int *n = ctx;
    ncmp_jkind kind;
    ncmp_jtok tok;

    if (++*n == 2)
        return 7;
    return ncmp_jscan_value(sc, &kind, &tok);
}

Test(ncmp_jscan, a_callbacks_refusal_stops_the_scan_and_is_returned)
{
    ncmp_jscan sc;
    ncmp_err err;
    int n = 0;

    ncmp_jscan_init(&sc, "[1,2,3]", 7, &err);
    cr_expect_eq(ncmp_jscan_items(&sc, refuse_second, &n), 7);
    cr_expect_eq(n, 2);
}
