#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "async_legacy.h"
#include "../../unit_leak.h"

TestSuite(async_legacy, .fini = unit_leak_check);

/* A DmiAsyncRequestResponseEvent as ONAP's DMI plugin writes it. */
#define DMI_EVENT(content)                                                                         \
    "{\"eventId\":\"dmi-ev-1\",\"eventCorrelationId\":\"req-7\","                                  \
    "\"eventTime\":\"2026-12-03T10:00:00.000+0000\",\"eventTarget\":\"client-topic\","             \
    "\"eventType\":\"org.onap.cps.ncmp.event.model.DmiAsyncRequestResponseEvent\","                \
    "\"eventSchema\":\"urn:cps:org.onap.cps.ncmp.event.model.DmiAsyncRequestResponseEvent\","      \
    "\"eventSchemaVersion\":\"v1\",\"eventSource\":\"org.onap.cps.ncmp.dmi\","                     \
    "\"eventContent\":" content "}"

#define CONTENT_OK                                                                                 \
    "{\"response-data-schema\":\"urn:cps:org.onap.cps.ncmp.event.model."                           \
    "DmiAsyncRequestResponseEvent:v1\",\"response-status\":\"OK\",\"response-code\":\"200\","      \
    "\"response-data\":{\"ietf-network:networks\":{\"network\":[{\"network-id\":\"n1\"}]}}}"

/* Map `in`; returns the parsed result (asserts success). */
static json_object *map_ok(const char *in, char *target, size_t targetlen)
{
    ncmp_buf out = NCMP_BUF_INIT, t = NCMP_BUF_INIT;
    char reason[512] = "";
    json_object *doc;

    cr_assert_eq(async_legacy_map(in, strlen(in), "new-id", "2026-12-03T11:00:00.000+0000", &out,
                                  &t, reason, sizeof(reason)),
                 0, "%s", reason);
    doc = json_tokener_parse(out.data);
    cr_assert_not_null(doc, "%s", out.data);
    snprintf(target, targetlen, "%s", t.data);
    ncmp_buf_free(&out);
    ncmp_buf_free(&t);
    return doc;
}

static const char *str(json_object *obj, const char *path0, const char *path1)
{
    json_object *v = obj;

    if (path0 && !json_object_object_get_ex(v, path0, &v))
        return NULL;
    if (path1 && !json_object_object_get_ex(v, path1, &v))
        return NULL;
    return json_object_get_string(v);
}

Test(async_legacy, maps_as_ncmp_does)
{
    char target[64];
    json_object *doc = map_ok(DMI_EVENT(CONTENT_OK), target, sizeof(target)), *fwd, *data;

    cr_assert_str_eq(target, "client-topic");
    /* a new id and time; the rest of the header copied */
    cr_expect_str_eq(str(doc, "eventId", NULL), "new-id");
    cr_expect_str_eq(str(doc, "eventTime", NULL), "2026-12-03T11:00:00.000+0000");
    cr_expect_str_eq(str(doc, "eventCorrelationId", NULL), "req-7");
    cr_expect_str_eq(str(doc, "eventTarget", NULL), "client-topic");
    cr_expect_str_eq(str(doc, "eventType", NULL),
                     "org.onap.cps.ncmp.event.model.DmiAsyncRequestResponseEvent");
    cr_expect_str_eq(str(doc, "eventSchemaVersion", NULL), "v1");
    cr_expect_null(str(doc, "eventSource", NULL), "not a field of the NCMP event");
    cr_expect_null(str(doc, "eventContent", NULL));
    /* the original, flattened, under forwardedEvent */
    cr_assert(json_object_object_get_ex(doc, "forwardedEvent", &fwd));
    cr_expect_str_eq(str(fwd, "eventId", NULL), "dmi-ev-1");
    cr_expect_str_eq(str(fwd, "eventTime", NULL), "2026-12-03T10:00:00.000+0000");
    cr_expect_str_eq(str(fwd, "eventSource", NULL), "org.onap.cps.ncmp.dmi");
    cr_expect_str_eq(str(fwd, "response-status", NULL), "OK");
    cr_expect_str_eq(str(fwd, "response-code", NULL), "200");
    cr_expect_str_eq(str(fwd, "response-data-schema", NULL),
                     "urn:cps:org.onap.cps.ncmp.event.model.DmiAsyncRequestResponseEvent:v1");
    cr_assert(json_object_object_get_ex(fwd, "response-data", &data));
    cr_expect_str_eq(json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN),
                     "{\"ietf-network:networks\":{\"network\":[{\"network-id\":\"n1\"}]}}");
    json_object_put(doc);
}

Test(async_legacy, absent_and_null_fields_are_left_out_and_scalars_taken_as_text)
{
    static const char in[] = "{\"eventTarget\":\"t\",\"eventType\":null,\"eventCorrelationId\":42,"
                             "\"eventContent\":{\"response-code\":200,\"response-data\":{}}}";
    char target[64];
    json_object *doc = map_ok(in, target, sizeof(target)), *fwd;

    cr_expect_str_eq(str(doc, "eventCorrelationId", NULL), "42");
    cr_expect_null(str(doc, "eventType", NULL));
    cr_expect_null(str(doc, "eventSchema", NULL));
    cr_assert(json_object_object_get_ex(doc, "forwardedEvent", &fwd));
    cr_expect_null(str(fwd, "eventId", NULL));
    cr_expect_null(str(fwd, "response-status", NULL));
    cr_expect_str_eq(str(fwd, "response-code", NULL), "200");
    cr_expect_str_eq(str(fwd, "eventTarget", NULL), "t");
    json_object_put(doc);
}

Test(async_legacy, a_payload_member_of_the_response_data_is_not_forwarded)
{
    static const char in[] = "{\"eventTarget\":\"t\",\"eventContent\":{\"response-data\":"
                             "{\"payload\":{\"x\":1},\"y\":2}}}";
    char target[64];
    json_object *doc = map_ok(in, target, sizeof(target)), *fwd, *data;

    cr_assert(json_object_object_get_ex(doc, "forwardedEvent", &fwd));
    cr_assert(json_object_object_get_ex(fwd, "response-data", &data));
    cr_expect_str_eq(json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN), "{\"y\":2}");
    json_object_put(doc);
}

Test(async_legacy, refuses_what_ncmp_cannot_map_and_says_why)
{
    static const struct {
        const char *in;
        const char *why;
    } bad[] = {
        {"not json", "not a DmiAsyncRequestResponseEvent"},
        {"[1,2]", "not a JSON object"},
        {"null", "not a JSON object"},
        {"{\"eventContent\":{\"response-data\":{}}}", "no eventTarget"},
        {"{\"eventTarget\":null,\"eventContent\":{\"response-data\":{}}}", "no eventTarget"},
        {"{\"eventTarget\":[\"t\"],\"eventContent\":{\"response-data\":{}}}",
         "eventTarget is a array, not a string"},
        {"{\"eventTarget\":\"t\"}", "no eventContent object"},
        {"{\"eventTarget\":\"t\",\"eventContent\":\"x\"}", "no eventContent object"},
        {"{\"eventTarget\":\"t\",\"eventContent\":{}}", "no eventContent.response-data object"},
        {"{\"eventTarget\":\"t\",\"eventContent\":{\"response-data\":[]}}",
         "no eventContent.response-data object"},
        {"{\"eventTarget\":\"t\",\"eventContent\":{\"response-code\":{},\"response-data\":{}}}",
         "eventContent.response-code is a object, not a string"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ncmp_buf out = NCMP_BUF_INIT, t = NCMP_BUF_INIT;
        char reason[512] = "";
        cr_expect_eq(async_legacy_map(bad[i].in, strlen(bad[i].in), "id", "time", &out, &t, reason,
                                      sizeof(reason)),
                     -1, "%s is refused", bad[i].in);
        cr_expect(strstr(reason, bad[i].why), "%s: reason '%s' should say '%s'", bad[i].in, reason,
                  bad[i].why);
        ncmp_buf_free(&out);
        ncmp_buf_free(&t);
    }
}
