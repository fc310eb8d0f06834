/* Unit tests of lib/ncmp_json.c: what the strict parser accepts and
 * refuses, and the typed field getters. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_json.h"
#include "unit_leak.h"

TestSuite(ncmp_json, .fini = unit_leak_check);

/* Parse that must succeed; the caller puts the object. */
static json_object *parse_ok(const char *buf, size_t len)
{
    json_object *obj = NULL;
    ncmp_err err = {0};

    if (ncmp_json_parse(buf, len, &obj, &err) != 0)
        cr_assert_fail("refused '%.*s': %s", (int)len, buf, err.msg);
    cr_assert_not_null(obj);
    return obj;
}

/* Parse that must fail with REJECT and a byte offset in the message. */
static ncmp_err parse_rejected(const char *buf, size_t len)
{
    json_object *obj = (json_object *)&obj; /* must stay untouched */
    ncmp_err err = {0};

    cr_assert_eq(ncmp_json_parse(buf, len, &obj, &err), -1, "accepted '%.*s'", (int)len, buf);
    cr_assert_eq(obj, (json_object *)&obj, "output written on failure");
    cr_assert_eq(err.cls, NCMP_ERR_REJECT, "'%.*s': class %s", (int)len, buf,
                 ncmp_err_class_name(err.cls));
    return err;
}

static const char *const accepted[] = {
    "{}",
    "[]",
    "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
    "[1,-2.5,3e2,\"x\"]",
    "  {\"a\":1}\n\r\t ",
    "\"caf\xc3\xa9\"",
    "{\"emoji\":\"\xf0\x9f\x98\x80\"}",
    "\"\\u00e9\\n\"",
};

Test(ncmp_json, accepts_valid_documents)
{
    for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
        json_object *obj = parse_ok(accepted[i], strlen(accepted[i]));
        json_object_put(obj);
    }
}

Test(ncmp_json, returns_the_parsed_value)
{
    static const char doc[] = "{\"name\":\"n1\",\"list\":[1,2,3]}";
    json_object *obj = parse_ok(doc, strlen(doc));
    json_object *v = NULL;

    cr_assert(json_object_is_type(obj, json_type_object));
    cr_assert(json_object_object_get_ex(obj, "name", &v));
    cr_assert_str_eq(json_object_get_string(v), "n1");
    cr_assert(json_object_object_get_ex(obj, "list", &v));
    cr_assert_eq(json_object_array_length(v), 3);
    json_object_put(obj);
}

Test(ncmp_json, uses_only_len_bytes)
{
    /* the buffer goes on, but the document ends at len */
    static const char buf[] = "{\"a\":1}GARBAGE";
    json_object *obj = parse_ok(buf, 7);

    json_object_put(obj);
}

static const struct {
    const char *doc;
    size_t len; /* 0: strlen */
    const char *why;
} rejected[] = {
    {"{\"a\":1", 0, "truncated object"},
    {"[1,2", 0, "truncated array"},
    {"\"abc", 0, "truncated string"},
    {"{\"a\":", 0, "truncated after colon"},
    {"{} x", 0, "trailing garbage"},
    {"{}}", 0, "trailing brace"},
    {"[1] [2]", 0, "two documents"},
    {"{}\0", 3, "trailing NUL byte"},
    {"\"\xff\"", 0, "invalid UTF-8 byte"},
    {"{\"a\":\"\xc3\x28\"}", 0, "broken UTF-8 sequence"},
    {"[\"\xc3\"]", 0, "cut UTF-8 sequence"},
    {"['a']", 0, "single-quoted string"},
    {"{\"a\":'b'}", 0, "single-quoted value"},
    {"[1,]", 0, "trailing comma in array"},
    {"{\"a\":1,}", 0, "trailing comma in object"},
    {"[1 2]", 0, "missing comma"},
    {"{\"a\" 1}", 0, "missing colon"},
    {"[True]", 0, "capitalised literal"},
    {"[.5]", 0, "number without leading digit"},
    {"/*c*/{}", 0, "comment"},
    {"{}//c", 0, "trailing comment"},
    {"[\"a\\x\"]", 0, "bad escape"},
    {"{}\f", 0, "form feed is no JSON white space"},
    {"   ", 0, "white space only"},
};

Test(ncmp_json, rejects_bad_documents)
{
    for (size_t i = 0; i < sizeof(rejected) / sizeof(rejected[0]); i++) {
        size_t len = rejected[i].len ? rejected[i].len : strlen(rejected[i].doc);
        ncmp_err err = parse_rejected(rejected[i].doc, len);
        cr_expect(strstr(err.msg, "byte "), "%s: no offset in '%s'", rejected[i].why, err.msg);
    }
}

Test(ncmp_json, rejects_empty_input)
{
    ncmp_err err = parse_rejected("", 0);

    cr_assert(strstr(err.msg, "empty"), "%s", err.msg);
}

Test(ncmp_json, error_gives_the_offset)
{
    ncmp_err err;

    err = parse_rejected("{} x", 4);
    cr_assert(strstr(err.msg, "byte 3"), "%s", err.msg);
    err = parse_rejected("{\"a\":1", 6);
    cr_assert(strstr(err.msg, "byte 6"), "%s", err.msg);
    err = parse_rejected("[1,]", 4);
    cr_assert(strstr(err.msg, "byte 3"), "%s", err.msg);
}

/* "[[[...]]]" nested `depth` deep; the caller frees. */
static char *nested_arrays(int depth)
{
    char *doc = malloc((size_t)depth * 2 + 1);

    cr_assert_not_null(doc);
    memset(doc, '[', (size_t)depth);
    memset(doc + depth, ']', (size_t)depth);
    doc[depth * 2] = '\0';
    return doc;
}

Test(ncmp_json, nesting_up_to_64_deep)
{
    char *doc = nested_arrays(64);
    json_object *obj = parse_ok(doc, strlen(doc));

    json_object_put(obj);
    free(doc);
}

Test(ncmp_json, rejects_nesting_deeper_than_64)
{
    char *doc = nested_arrays(65);
    ncmp_err err = parse_rejected(doc, strlen(doc));

    cr_assert(strstr(err.msg, "byte"), "%s", err.msg);
    free(doc);
    doc = nested_arrays(10000);
    parse_rejected(doc, strlen(doc));
    free(doc);
}

/* Regression: json-c's strict mode still accepts
 * single-quoted member names, NaN/Infinity, "1." and raw control
 * characters inside strings (lib/ncmp_json.c, ncmp_json_parse). */
Test(ncmp_json, rejects_what_json_c_lets_through)
{
    static const char *const lax[] = {
        "{'a':1}", "{\"a\":NaN}", "[Infinity]", "[1.]", "[\"a\tb\"]",
    };

    for (size_t i = 0; i < sizeof(lax) / sizeof(lax[0]); i++)
        parse_rejected(lax[i], strlen(lax[i]));
}

/* Regression: json-c's UTF-8 check lets overlong
 * forms and UTF-16 surrogates through; PostgreSQL refuses them, so such a
 * record fails its whole batch in the database instead of being rejected
 * here (lib/ncmp_json.c, ncmp_json_parse). */
Test(ncmp_json, rejects_overlong_and_surrogate_utf8)
{
    static const char *const bad[] = {
        "[\"\xc0\xaf\"]",         /* overlong '/' */
        "[\"\xe0\x80\xaf\"]",     /* overlong '/', three bytes */
        "[\"\xed\xa0\x80\"]",     /* surrogate U+D800 */
        "[\"\xf4\x90\x80\x80\"]", /* beyond U+10FFFF */
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        parse_rejected(bad[i], strlen(bad[i]));
}

/* Regression: a document that is a bare number or
 * literal with nothing after it is reported as ending early, because the
 * tokener waits for more digits (lib/ncmp_json.c, ncmp_json_parse). */
Test(ncmp_json, accepts_top_level_scalars)
{
    static const char *const scalars[] = {"123", "true", "false", "-1.5"};

    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
        json_object *obj = parse_ok(scalars[i], strlen(scalars[i]));
        json_object_put(obj);
    }
}

/* --- typed fields -------------------------------------------------------- */

static const char fields_doc[] = "{\"s\":\"text\",\"n\":5,\"nul\":null,\"arr\":[1],"
                                 "\"obj\":{\"k\":\"v\"},\"b\":true}";

Test(ncmp_json, string_field)
{
    json_object *obj = parse_ok(fields_doc, strlen(fields_doc));
    const char *s = "untouched";
    ncmp_err err = {0};

    cr_assert_eq(ncmp_json_string_field(obj, "s", &s, &err), 0, "%s", err.msg);
    cr_assert_str_eq(s, "text");
    s = "untouched";
    cr_assert_eq(ncmp_json_string_field(obj, "absent", &s, &err), 0);
    cr_assert_null(s);
    s = "untouched";
    cr_assert_eq(ncmp_json_string_field(obj, "nul", &s, &err), 0, "JSON null is absent");
    cr_assert_null(s);
    json_object_put(obj);
}

Test(ncmp_json, array_and_object_fields)
{
    json_object *obj = parse_ok(fields_doc, strlen(fields_doc));
    json_object *v = NULL;
    ncmp_err err = {0};

    cr_assert_eq(ncmp_json_array_field(obj, "arr", &v, &err), 0, "%s", err.msg);
    cr_assert_not_null(v);
    cr_assert_eq(json_object_array_length(v), 1);
    cr_assert_eq(ncmp_json_object_field(obj, "obj", &v, &err), 0, "%s", err.msg);
    cr_assert_not_null(v);
    cr_assert(json_object_is_type(v, json_type_object));
    v = obj;
    cr_assert_eq(ncmp_json_array_field(obj, "absent", &v, &err), 0);
    cr_assert_null(v);
    v = obj;
    cr_assert_eq(ncmp_json_object_field(obj, "nul", &v, &err), 0);
    cr_assert_null(v);
    json_object_put(obj);
}

Test(ncmp_json, wrong_type_is_rejected_naming_the_field)
{
    static const struct {
        const char *key;
        int getter; /* 0 string, 1 array, 2 object */
        const char *want;
    } cases[] = {
        {"n", 0, "must be a string"},    {"arr", 0, "must be a string"},
        {"s", 1, "must be an array"},    {"obj", 1, "must be an array"},
        {"arr", 2, "must be an object"}, {"b", 2, "must be an object"},
    };
    json_object *obj = parse_ok(fields_doc, strlen(fields_doc));

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ncmp_err err = {0};
        const char *s = NULL;
        json_object *v = NULL;
        char field[32];
        int rc;

        if (cases[i].getter == 0)
            rc = ncmp_json_string_field(obj, cases[i].key, &s, &err);
        else if (cases[i].getter == 1)
            rc = ncmp_json_array_field(obj, cases[i].key, &v, &err);
        else
            rc = ncmp_json_object_field(obj, cases[i].key, &v, &err);
        cr_expect_eq(rc, -1, "case %zu", i);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT, "case %zu", i);
        snprintf(field, sizeof(field), "'%s'", cases[i].key);
        cr_expect(strstr(err.msg, field), "case %zu: %s", i, err.msg);
        cr_expect(strstr(err.msg, cases[i].want), "case %zu: %s", i, err.msg);
    }
    json_object_put(obj);
}

Test(ncmp_json, field_of_a_non_object_is_rejected)
{
    json_object *arr = parse_ok("[1]", 3);
    const char *s = "untouched";
    ncmp_err err = {0};

    cr_assert_eq(ncmp_json_string_field(arr, "k", &s, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT);
    cr_assert(strstr(err.msg, "'k'"), "%s", err.msg);
    cr_assert_eq(ncmp_json_string_field(NULL, "k", &s, &err), -1);
    json_object_put(arr);
}
