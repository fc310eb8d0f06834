/*
 * rest_json: the JSON of answers written from rows. Its string writer
 * checks 8 bytes at a time; wherever the character to escape is, the
 * output must be a JSON string that reads back as the input, and a string
 * with nothing to escape must be copied as it is.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <string.h>

#include "ncmp_buf.h"
#include "rest_json.h"

/* A one-column, one-row result holding `value`. */
static PGresult *one_value(const char *value)
{
    PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    PGresAttDesc att = {.name = (char *)"v", .format = 0, .typid = 25, .typlen = -1};

    cr_assert(PQsetResultAttrs(res, 1, &att));
    cr_assert(PQsetvalue(res, 0, 0, (char *)value, (int)strlen(value)));
    return res;
}

static void reads_back(const char *s)
{
    PGresult *res = one_value(s);
    ncmp_buf got = NCMP_BUF_INIT;
    json_object *o;
    int plain =
        strcspn(s, "\"\\\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10"
                   "\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f") == strlen(s);

    rest_json_string_row(res, 0, &got);
    o = json_tokener_parse(got.data);
    cr_assert(o && json_object_is_type(o, json_type_string), "not a JSON string: %s", got.data);
    cr_assert_str_eq(json_object_get_string(o), s, "%s", got.data);
    if (plain)
        cr_assert(got.len == strlen(s) + 2 && memcmp(got.data + 1, s, strlen(s)) == 0, "%s",
                  got.data);
    json_object_put(o);
    ncmp_buf_free(&got);
    PQclear(res);
}

Test(rest_json, strings_are_escaped_wherever_the_character_is)
{
    static const char specials[] = {'"', '\\', '\n', '\t', 0x01, 0x1f};
    char s[40];

    reads_back("");
    reads_back("/SubNetwork=Europe/ManagedElement=ME-12345");
    reads_back("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f ~ \x20");
    for (size_t len = 1; len < sizeof(s) - 1; len++)
        for (size_t at = 0; at < len; at++)
            for (size_t k = 0; k < sizeof(specials); k++) {
                memset(s, 'a', len);
                s[len] = '\0';
                s[at] = specials[k];
                reads_back(s);
            }
}
