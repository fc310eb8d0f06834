/* Unit tests of lib/ncmp_buf.c: growth and the two escapers (JSON string
 * literals for log lines and records, COPY text fields for PostgreSQL). */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "unit_leak.h"

TestSuite(ncmp_buf, .fini = unit_leak_check);

Test(ncmp_buf, append_grows_and_keeps_content)
{
    ncmp_buf b = NCMP_BUF_INIT;
    char chunk[37];

    for (size_t i = 0; i < sizeof(chunk); i++)
        chunk[i] = (char)('a' + i % 26);
    /* far beyond the first allocation, so that it has to grow many times */
    for (int i = 0; i < 1000; i++)
        ncmp_buf_append(&b, chunk, sizeof(chunk));
    cr_assert_eq(b.len, 1000 * sizeof(chunk));
    cr_assert_geq(b.cap, b.len + 1);
    cr_assert_eq(b.data[b.len], '\0');
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(memcmp(b.data + i * sizeof(chunk), chunk, sizeof(chunk)), 0, "chunk %d", i);
    ncmp_buf_free(&b);
}

Test(ncmp_buf, append_keeps_embedded_nul_bytes)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append(&b, "a\0b", 3);
    cr_assert_eq(b.len, 3);
    cr_assert_eq(memcmp(b.data, "a\0b", 4), 0);
    ncmp_buf_free(&b);
}

Test(ncmp_buf, empty_append_makes_an_empty_string)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append(&b, "", 0);
    cr_assert_not_null(b.data);
    cr_assert_str_eq(b.data, "");
    cr_assert_eq(b.len, 0);
    ncmp_buf_free(&b);
}

Test(ncmp_buf, reserve_makes_room_without_moving)
{
    ncmp_buf b = NCMP_BUF_INIT;
    char *data;

    ncmp_buf_append_str(&b, "x");
    ncmp_buf_reserve(&b, 1000);
    cr_assert_geq(b.cap, 1 + 1000 + 1);
    data = b.data;
    for (int i = 0; i < 1000; i++)
        ncmp_buf_append_char(&b, 'y');
    cr_assert_eq(b.data, data, "the reserved room was not enough");
    cr_assert_eq(b.len, 1001);
    ncmp_buf_free(&b);
}

Test(ncmp_buf, append_str_and_char)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_str(&b, "abc");
    ncmp_buf_append_char(&b, '-');
    for (int i = 0; i < 200; i++)
        ncmp_buf_append_char(&b, 'x');
    cr_assert_eq(b.len, 204);
    cr_assert_eq(strncmp(b.data, "abc-xxx", 7), 0);
    cr_assert_eq(strlen(b.data), 204);
    ncmp_buf_free(&b);
}

Test(ncmp_buf, appendf_grows_past_first_allocation)
{
    ncmp_buf b = NCMP_BUF_INIT;
    char big[301];
    char expect[400];

    memset(big, 'y', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ncmp_buf_appendf(&b, "n=%d ", 42);
    ncmp_buf_appendf(&b, "[%s]", big);
    ncmp_buf_appendf(&b, " %s%zu", "end", (size_t)7);
    snprintf(expect, sizeof(expect), "n=42 [%s] end7", big);
    cr_assert_str_eq(b.data, expect);
    cr_assert_eq(b.len, strlen(expect));
    cr_assert_geq(b.cap, b.len + 1);
    ncmp_buf_free(&b);
}

Test(ncmp_buf, reset_empties_and_free_releases)
{
    ncmp_buf b = NCMP_BUF_INIT;
    size_t cap;

    ncmp_buf_append_str(&b, "something long enough to allocate");
    cap = b.cap;
    ncmp_buf_reset(&b);
    cr_assert_eq(b.len, 0);
    cr_assert_str_eq(b.data, "");
    cr_assert_eq(b.cap, cap, "reset keeps the allocation for reuse");
    ncmp_buf_append_str(&b, "again");
    cr_assert_str_eq(b.data, "again");
    ncmp_buf_free(&b);
    cr_assert_null(b.data);
    cr_assert_eq(b.len, 0);
    cr_assert_eq(b.cap, 0);
    ncmp_buf_free(&b); /* twice is harmless */
}

Test(ncmp_buf, xstrdup_copies)
{
    const char *s = "copy me";
    char *c = ncmp_xstrdup(s);

    cr_assert_str_eq(c, s);
    cr_assert_neq(c, s);
    free(c);
}

/* --- JSON string literals ------------------------------------------------ */

static const struct {
    const char *in;
    const char *out;
} json_cases[] = {
    {"", "\"\""},
    {"plain", "\"plain\""},
    {"say \"hi\"", "\"say \\\"hi\\\"\""},
    {"back\\slash", "\"back\\\\slash\""},
    {"a\nb\rc\td", "\"a\\nb\\rc\\td\""},
    {"\x01", "\"\\u0001\""},
    {"\x08\x0c", "\"\\u0008\\u000c\""},
    {"\x1f", "\"\\u001f\""},
    {"\x7f", "\"\x7f\""},
    {"caf\xc3\xa9", "\"caf\xc3\xa9\""}, /* UTF-8 passes unchanged */
    {"/", "\"/\""},
};

Test(ncmp_buf, json_string_escapes)
{
    for (size_t i = 0; i < sizeof(json_cases) / sizeof(json_cases[0]); i++) {
        ncmp_buf b = NCMP_BUF_INIT;
        ncmp_buf_append_json_string(&b, json_cases[i].in);
        cr_expect_str_eq(b.data, json_cases[i].out, "case %zu", i);
        cr_expect_eq(b.len, strlen(json_cases[i].out), "case %zu", i);
        ncmp_buf_free(&b);
    }
}

Test(ncmp_buf, json_string_round_trips_every_control_char)
{
    /* every byte 1..127 once: json-c must read back the very same string */
    char in[128];
    ncmp_buf b = NCMP_BUF_INIT;
    json_object *obj;

    for (int i = 1; i < 128; i++)
        in[i - 1] = (char)i;
    in[127] = '\0';
    ncmp_buf_append_json_string(&b, in);
    for (size_t i = 0; i < b.len; i++)
        cr_assert_geq((unsigned char)b.data[i], 0x20, "raw control byte at %zu", i);
    obj = json_tokener_parse(b.data);
    cr_assert_not_null(obj, "not JSON: %s", b.data);
    cr_assert(json_object_is_type(obj, json_type_string));
    cr_assert_str_eq(json_object_get_string(obj), in);
    json_object_put(obj);
    ncmp_buf_free(&b);
}

Test(ncmp_buf, json_string_appends_after_existing_content)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_str(&b, "{\"k\":");
    ncmp_buf_append_json_string(&b, "v");
    ncmp_buf_append_char(&b, '}');
    cr_assert_str_eq(b.data, "{\"k\":\"v\"}");
    ncmp_buf_free(&b);
}

/* --- COPY text fields ---------------------------------------------------- */

Test(ncmp_buf, copy_field_escapes)
{
    static const struct {
        const char *in;
        const char *out;
    } cases[] = {
        {"plain", "plain"},
        {"a\\b", "a\\\\b"},
        {"a\tb", "a\\tb"},
        {"a\nb", "a\\nb"},
        {"a\rb", "a\\rb"},
        {"\\N", "\\\\N"}, /* the text \N is not NULL */
        {"{\"k\": \"v\"}", "{\"k\": \"v\"}"},
        {"caf\xc3\xa9", "caf\xc3\xa9"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ncmp_buf b = NCMP_BUF_INIT;
        ncmp_buf_append_copy_field(&b, cases[i].in, strlen(cases[i].in));
        cr_expect_str_eq(b.data, cases[i].out, "case %zu", i);
        cr_expect_eq(b.len, strlen(cases[i].out), "case %zu", i);
        ncmp_buf_free(&b);
    }
}

Test(ncmp_buf, copy_field_null_is_backslash_n)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_copy_field(&b, NULL, 0);
    cr_assert_str_eq(b.data, "\\N");
    ncmp_buf_free(&b);
}

Test(ncmp_buf, copy_field_takes_exactly_len_bytes)
{
    ncmp_buf b = NCMP_BUF_INIT;

    /* a row: the length bounds the field, an embedded NUL-free prefix */
    ncmp_buf_append_copy_field(&b, "abc\tdef", 4);
    ncmp_buf_append_char(&b, '\t');
    ncmp_buf_append_copy_field(&b, NULL, 0);
    ncmp_buf_append_char(&b, '\n');
    cr_assert_str_eq(b.data, "abc\\t\t\\N\n");
    ncmp_buf_free(&b);
}
