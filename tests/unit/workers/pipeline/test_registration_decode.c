/*
 * registration_decode: NCMP's DmiPluginRegistration body.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "registration_decode.h"

static void decode_ok(reg_request *r, const char *body)
{
    ncmp_err err;
    cr_assert_eq(registration_request_decode(r, body, strlen(body), &err), 0, "%s: %s", body,
                 err.msg);
}

static void decode_bad(const char *body, const char *reason)
{
    reg_request r;
    ncmp_err err;
    cr_assert_eq(registration_request_decode(&r, body, strlen(body), &err), -1, "%s accepted",
                 body);
    cr_expect_eq(err.cls, NCMP_ERR_REJECT, "%s", body);
    cr_expect(strstr(err.msg, reason), "%s: reason '%s' does not name '%s'", body, err.msg, reason);
    registration_request_free(&r);
}

Test(registration_decode, reads_every_list_and_field)
{
    reg_request r;

    decode_ok(&r, "{\"dmiPlugin\":\" http://dmi:8080 \",\"dmiModelPlugin\":\"http://m\","
                  "\"createdCmHandles\":[{\"cmHandle\":\"ch-1\",\"alternateId\":\" alt-1 \","
                  "\"moduleSetTag\":\"tagA\",\"dataProducerIdentifier\":\"p\","
                  "\"trustLevel\":\"NONE\",\"cmHandleProperties\":{\"a\":\"1\",\"n\":2,"
                  "\"gone\":null},\"publicCmHandleProperties\":{\"b\":true}}],"
                  "\"updatedCmHandles\":[{\"cmHandle\":\"ch-2\",\"alternateId\":\"  \"}],"
                  "\"removedCmHandles\":[\"ch-3\",\"ch-4\"],"
                  "\"upgradedCmHandles\":{\"cmHandles\":[\"ch-5\"],\"moduleSetTag\":\" t2 \"}}");
    cr_assert_str_eq(r.dmi_plugin, "http://dmi:8080", "trimmed");
    cr_assert_str_eq(r.dmi_model_plugin, "http://m");
    cr_assert_str_eq(r.dmi_data_plugin, "");
    cr_assert_eq(r.ncreated, 1);
    cr_assert_str_eq(r.created[0].id, "ch-1");
    cr_assert_str_eq(r.created[0].alternate_id, "alt-1");
    cr_assert_str_eq(r.created[0].module_set_tag, "tagA");
    cr_assert_str_eq(r.created[0].data_producer_identifier, "p");
    cr_assert_str_eq(r.created[0].trust_level, "NONE");
    /* numbers and booleans as their text (NCMP's Map<String,String>);
     * null means delete */
    cr_assert_str_eq(r.created[0].additional_set, "{\"a\":\"1\",\"n\":\"2\"}");
    cr_assert_str_eq(r.created[0].additional_del, "[\"gone\"]");
    cr_assert_str_eq(r.created[0].public_set, "{\"b\":\"true\"}");
    cr_assert_eq(r.nupdated, 1);
    cr_assert_null(r.updated[0].alternate_id, "a blank alternate id is none");
    cr_assert(r.updated[0].has_alternate_id);
    cr_assert_eq(r.nremoved, 2);
    cr_assert_str_eq(r.removed[1], "ch-4");
    cr_assert_eq(r.nupgraded, 1);
    cr_assert_str_eq(r.upgrade_tag, "t2");
    registration_request_free(&r);
}

Test(registration_decode, reads_the_data_job_services)
{
    reg_request r;

    decode_ok(&r, "{\"dmiPlugin\":\"http://dmi\",\"dmiDatajobsReadPlugin\":\" http://jobs-r \","
                  "\"dmiDatajobsWritePlugin\":\"http://jobs-w:8080\","
                  "\"createdCmHandles\":[{\"cmHandle\":\"ch-1\"}]}");
    cr_assert_str_eq(r.dmi_datajobs_read_plugin, "http://jobs-r", "trimmed as the other services");
    cr_assert_str_eq(r.dmi_datajobs_write_plugin, "http://jobs-w:8080");
    cr_assert_str_eq(r.dmi_plugin, "http://dmi");
    registration_request_free(&r);

    /* absent or null: "", never dmiPlugin (the fallback is resolved at use) */
    decode_ok(&r, "{\"dmiPlugin\":\"http://dmi\",\"dmiDatajobsWritePlugin\":null}");
    cr_assert_str_eq(r.dmi_datajobs_read_plugin, "");
    cr_assert_str_eq(r.dmi_datajobs_write_plugin, "");
    registration_request_free(&r);

    decode_bad("{\"dmiDatajobsReadPlugin\":[]}", "dmiDatajobsReadPlugin");
    decode_bad("{\"dmiDatajobsWritePlugin\":1}", "dmiDatajobsWritePlugin");
}

Test(registration_decode, an_empty_request_is_valid)
{
    reg_request r;

    decode_ok(&r, "{\"dmiPlugin\":\"http://d\"}");
    cr_assert_eq(r.ncreated + r.nupdated + r.nremoved + r.nupgraded, 0);
    registration_request_free(&r);
}

Test(registration_decode, rejects_bad_shapes_with_a_reason)
{
    decode_bad("[]", "JSON object");
    decode_bad("{\"createdCmHandles\":[{\"alternateId\":\"x\"}]}", "without cmHandle");
    decode_bad("{\"createdCmHandles\":[\"ch-1\"]}", "must be an object");
    decode_bad("{\"createdCmHandles\":[{\"cmHandle\":\"a\",\"trustLevel\":\"HIGH\"}]}",
               "trustLevel");
    decode_bad("{\"createdCmHandles\":[{\"cmHandle\":\"a\",\"cmHandleProperties\":{\"x\":{}}}]}",
               "cmHandleProperties.x");
    decode_bad("{\"removedCmHandles\":[1]}", "removedCmHandles[0]");
    decode_bad("{\"upgradedCmHandles\":{\"moduleSetTag\":\"t\"}}", "cmHandles is required");
    decode_bad("{\"dmiPlugin\":5}", "dmiPlugin");
}

Test(registration_decode, id_rule_is_ncmps)
{
    static const char *const good[] = {"ch-1", "A_b-9", "-"};
    static const char *const bad[] = {"",    "a b", "a/b", "a.b", "a=b",
                                      "a@b", "a:b", "a[b", "a%b", "x~"};

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        cr_expect(registration_id_valid(good[i]), "%s", good[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect(!registration_id_valid(bad[i]), "'%s' accepted", bad[i]);
    cr_expect(!registration_id_valid(NULL));
}
