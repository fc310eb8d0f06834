/*
 * datasync: the data-sync role's pure rules (back-off, schema set names,
 * NCMP's read options, what of a DMI answer is kept), and its row.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "datasync.h"
#include "role.h"

Test(datasync, backoff_doubles_up_to_the_cap)
{
    cr_assert_eq(datasync_backoff_ms(1, 500, 10000), 500);
    cr_assert_eq(datasync_backoff_ms(2, 500, 10000), 1000);
    cr_assert_eq(datasync_backoff_ms(3, 500, 10000), 2000);
    cr_assert_eq(datasync_backoff_ms(5, 500, 10000), 8000);
    cr_assert_eq(datasync_backoff_ms(6, 500, 10000), 10000);
    cr_assert_eq(datasync_backoff_ms(1000000, 500, 10000), 10000, "no overflow");
    cr_assert_eq(datasync_backoff_ms(0, 500, 10000), 500, "no failure yet: the initial wait");
    cr_assert_eq(datasync_backoff_ms(3, 20000, 10000), 10000, "the cap wins over the start");
    cr_assert_eq(datasync_backoff_ms(40, 0x3fffffffL, 0x7fffffffL), 0x7fffffffL);
}

Test(datasync, schema_set_named_by_tag_else_by_handle)
{
    cr_assert_str_eq(datasync_schema_set_name("tagA", "ch-1"), "tagA");
    cr_assert_str_eq(datasync_schema_set_name("", "ch-1"), "ch-1");
    cr_assert_str_eq(datasync_schema_set_name(NULL, "ch-1"), "ch-1");
}

Test(datasync, fields_option_as_ncmp_sends_it)
{
    ncmp_buf b = NCMP_BUF_INIT;

    datasync_fields_option(&b, "openroadm-devices-inventory-v2:openroadm-devices");
    cr_assert_str_eq(b.data, "(fields=openroadm-devices-inventory-v2:openroadm-devices)");
    ncmp_buf_free(&b);
}

static int first(const char *body, ncmp_buf *scratch, const char **start, size_t *len,
                 ncmp_err *err)
{
    ncmp_buf_reset(scratch);
    return datasync_first_member(body, strlen(body), scratch, start, len, err);
}

Test(datasync, first_member_of_the_answer)
{
    ncmp_buf scratch = NCMP_BUF_INIT;
    const char *start = NULL, *one = "{\"m:a\":{\"x\":1}}";
    size_t len = 0;
    ncmp_err err;

    cr_assert_eq(first(one, &scratch, &start, &len, &err), 1);
    cr_assert_eq(start, one, "one member: the body itself");
    cr_assert_eq(len, strlen(one));
    cr_assert_eq(first("{\"m:a\":{\"x\":1},\"m:b\":[1,2]}", &scratch, &start, &len, &err), 1);
    cr_assert_eq(start, scratch.data, "two members: the first alone");
    cr_assert_eq(len, strlen("{\"m:a\":{\"x\":1}}"));
    cr_assert_eq(memcmp(start, "{\"m:a\":{\"x\":1}}", len), 0, "%.*s", (int)len, start);
    cr_assert_eq(first("{}", &scratch, &start, &len, &err), 0, "nothing to store");
    cr_assert_eq(first(" { } ", &scratch, &start, &len, &err), 0);
    cr_assert_eq(first("[1]", &scratch, &start, &len, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT);
    cr_assert_eq(first("{\"a\":", &scratch, &start, &len, &err), -1, "cut short");
    cr_assert_eq(first("not json", &scratch, &start, &len, &err), -1);
    cr_assert_eq(first("{\"a\":1} x", &scratch, &start, &len, &err), -1, "trailing text");
    cr_assert_eq(first("{\"a\":1,}", &scratch, &start, &len, &err), -1, "a comma and nothing");
    cr_assert_eq(first("{\"a\" 1}", &scratch, &start, &len, &err), -1, "no colon");
    cr_assert_eq(first("{\"a\":{\"b\":[1,{\"c\":2}]}", &scratch, &start, &len, &err), -1,
                 "an object not closed");
    ncmp_buf_free(&scratch);
}

Test(datasync, first_member_follows_strings_and_nesting)
{
    ncmp_buf scratch = NCMP_BUF_INIT;
    const char *start = NULL;
    size_t len = 0;
    ncmp_err err;
    const char *tricky = " {\n \"m:a\" : {\"s\":\"}{,\\\"]\",\"l\":[1,[2,{\"x\":\"]\"}]]} ,\n"
                         " \"m:b\":\"v\", \"m:c\": 12.5 }\n";
    const char *want = "{\"m:a\" : {\"s\":\"}{,\\\"]\",\"l\":[1,[2,{\"x\":\"]\"}]]}}";

    cr_assert_eq(first(tricky, &scratch, &start, &len, &err), 1, "%s", err.msg);
    cr_assert_eq(len, strlen(want), "%.*s", (int)len, start);
    cr_assert_eq(memcmp(start, want, len), 0, "%.*s", (int)len, start);
    cr_assert_eq(first("{\"n\":-1.5e3,\"t\":true}", &scratch, &start, &len, &err), 1);
    cr_assert_eq(memcmp(start, "{\"n\":-1.5e3}", len), 0, "%.*s", (int)len, start);
    ncmp_buf_free(&scratch);
}

Test(datasync, role_row_uses_the_database_and_the_dmi_client)
{
    const ncmp_role *r = NULL;

    for (size_t i = 0; i < ncmp_nroles; i++)
        if (strcmp(ncmp_roles[i].name, "data-sync") == 0)
            r = &ncmp_roles[i];
    cr_assert_not_null(r, "a data-sync row");
    cr_assert(r->needs_db && !r->no_services);
    cr_assert(r->stop && r->join && r->destroy);
    cr_assert(ncmp_role_name_selected("data-sync", "rest,data-sync"));
    cr_assert(!ncmp_role_name_selected("data-sync", "rest,cps"));
    cr_assert(ncmp_roles_check("data-sync", &(ncmp_err){0}) == 0);
}
