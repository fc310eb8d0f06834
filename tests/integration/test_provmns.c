/*
 * ProvMnS and the policy executor end to end on real services: ncmpd
 * (registration, module-sync, lcm-relay, rest) on its own scratch database
 * and topics, in front of the DMI stub, which also plays the policy
 * executor. Handles are registered over REST and made READY by module
 * sync, so ncmpd's handle map learns them from lifecycle events; a row
 * inserted straight into cm_handle exercises the database fallback.
 *
 * What the stub received is read back from /stub/provmns/last and
 * /stub/policy/last; its counters from /stub/stats.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_front.h"
#include "it_util.h"
#include "ncmp_buf.h"
#include "ncmp_time.h"

#define ALT1       "/SubNetwork=Europe/ManagedElement=Node 1"
#define ALT1_URL   "/SubNetwork=Europe/ManagedElement=Node%201"
#define ALT_NOPROD "/SubNetwork=Europe/ManagedElement=NoProducer"
#define ALT_DOWN   "/SubNetwork=Europe/ManagedElement=DmiDown"
#define ALT_ADV    "/SubNetwork=Europe/ManagedElement=Deleting"
#define PATCH_JSON "application/json-patch+json"
#define K6_PATCH                                                                                   \
    "[{'op':'replace','path':'/parent=id1/child=id2/grandchild=id3#/attributes/plmnId/mcc',"       \
    "'value':'1234'}]"

TestSuite(provmns, .fini = it_front_cleanup);

/* `method path` answers `status` with 3GPP's error body of `type` whose
 * title holds `title` (each check skipped when NULL). */
static void expect_3gpp(front_case *c, const char *method, const char *path, const char *body_sq,
                        const char *const *headers, long status, const char *type,
                        const char *title, const char *badop)
{
    front_reply r;

    it_front_call(c, method, path, body_sq, headers, &r);
    cr_assert_eq(r.status, status, "%s %s: expected %ld, got %ld %s; log %s", method, path, status,
                 r.status, r.body.data, c->log);
    if (type) {
        char want[8];
        snprintf(want, sizeof(want), "%ld", status);
        cr_assert_str_eq(it_front_field(r.json, "status"), want, "%s", r.body.data);
        cr_assert_str_eq(it_front_field(r.json, "type"), type, "%s %s: %s", method, path,
                         r.body.data);
    }
    if (title)
        cr_assert(it_front_field(r.json, "title") && strstr(it_front_field(r.json, "title"), title),
                  "%s %s: title should hold '%s': %s", method, path, title, r.body.data);
    if (badop)
        cr_assert_str_eq(it_front_field(r.json, "badOp"), badop, "%s", r.body.data);
    else if (type)
        cr_assert_null(it_front_field(r.json, "badOp"), "%s", r.body.data);
    it_front_reply_free(&r);
}

/* --- handles --------------------------------------------------------------- */

/* Register: ch-1 (ALT1, with a data producer), ch-2 (no data producer),
 * ch-3 (its data service a port nobody listens on). All READY. */
static void handles_ready(front_case *c)
{
    ncmp_buf b = NCMP_BUF_INIT;
    front_reply r;
    int down = it_free_port();

    ncmp_buf_appendf(&b,
                     "{'dmiPlugin':'%s','createdCmHandles':["
                     "{'cmHandle':'ch-1','alternateId':'" ALT1 "','moduleSetTag':'tagA',"
                     "'dataProducerIdentifier':'producer-1'},"
                     "{'cmHandle':'ch-2','alternateId':'" ALT_NOPROD "','moduleSetTag':'tagA'}]}",
                     c->dmi[0]);
    it_front_call(c, "POST", "/ncmpInventory/v1/ch", b.data,
                  (const char *[]){"Content-Type: application/json", NULL}, &r);
    cr_assert_eq(r.status, 200, "registration: %ld %s", r.status, r.body.data);
    it_front_reply_free(&r);
    ncmp_buf_reset(&b);
    ncmp_buf_appendf(&b,
                     "{'dmiDataPlugin':'http://127.0.0.1:%d','dmiModelPlugin':'%s',"
                     "'createdCmHandles':[{'cmHandle':'ch-3','alternateId':'" ALT_DOWN "',"
                     "'moduleSetTag':'tagA','dataProducerIdentifier':'producer-1'}]}",
                     down, c->dmi[0]);
    it_front_call(c, "POST", "/ncmpInventory/v1/ch", b.data,
                  (const char *[]){"Content-Type: application/json", NULL}, &r);
    cr_assert_eq(r.status, 200, "registration: %ld %s", r.status, r.body.data);
    it_front_reply_free(&r);
    ncmp_buf_free(&b);
    it_front_wait_ready(c, 1, 3);
}

static const char *const ct_json[] = {"Content-Type: application/json", NULL};
static const char *const patch_type[] = {"Content-Type: " PATCH_JSON, NULL};

/* --- tests ------------------------------------------------------------------ */

Test(provmns, reads_and_writes_reach_the_dmi_as_ncmp_sends_them, .timeout = 180)
{
    front_case *c = it_front_start("pm-fwd", 1, NULL);
    const char *const auth_get[] = {"Authorization: Bearer token-1",
                                    "Accept: application/vnd.3gpp.object-tree-hierarchical+json",
                                    NULL};
    const char *const patch3gpp[] = {"Content-Type: application/3gpp-json-patch+json", NULL};
    json_object *last;
    front_reply r;

    handles_ready(c);

    /* a deep FDN below the handle, with a space, and every read parameter */
    it_front_call(c, "GET",
                  "/ProvMnS/v1" ALT1_URL
                  "/GNBDUFunction=1/NRCellDU=cell%2C1?scopeType=BASE_NTH_LEVEL"
                  "&scopeLevel=2&filter=%2Fx&attributes=a,b&fields=&dataNodeSelector=%2F%2Fy",
                  NULL, auth_get, &r);
    cr_assert_eq(r.status, 200, "%s; log %s", r.body.data, c->log);
    cr_assert_str_eq(it_front_field(r.json, "objectClass"), "dummyClass", "%s", r.body.data);
    it_front_reply_free(&r);
    last = it_front_stub_get(c, 0, "/stub/provmns/last");
    cr_assert_str_eq(it_front_field(last, "method"), "GET");
    cr_assert(
        strstr(it_front_field(last, "path"), "/ProvMnS/v1/SubNetwork=Europe/ManagedElement=Node"),
        "%s", it_front_field(last, "path"));
    cr_assert(strstr(it_front_field(last, "path"), "/GNBDUFunction=1/NRCellDU=cell,1"), "%s",
              it_front_field(last, "path"));
    cr_assert_str_eq(it_front_field(last, "query"),
                     "scopeType=BASE_NTH_LEVEL&scopeLevel=2&filter=%2Fx&attributes=a%2Cb&fields="
                     "&dataNodeSelector=%2F%2Fy");
    cr_assert_str_eq(it_front_field(last, "authorization"), "Bearer token-1");
    json_object_put(last);

    /* NCMP's k6 patch, both media types; the DMI's answer comes back */
    it_front_call(c, "PATCH", "/ProvMnS/v1" ALT1_URL, K6_PATCH, patch_type, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert(json_object_is_type(r.json, json_type_array), "%s", r.body.data);
    it_front_reply_free(&r);
    last = it_front_stub_get(c, 0, "/stub/provmns/last");
    cr_assert_str_eq(it_front_field(last, "method"), "PATCH");
    cr_assert_str_eq(it_front_field(last, "contentType"), PATCH_JSON);
    cr_assert(strstr(it_front_field(last, "body"), "plmnId/mcc"), "%s",
              it_front_field(last, "body"));
    json_object_put(last);
    it_front_call(c, "PATCH", "/ProvMnS/v1" ALT1_URL "/A=1", K6_PATCH, patch3gpp, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    it_front_reply_free(&r);

    /* create, delete a child, an action */
    it_front_call(c, "PUT", "/ProvMnS/v1" ALT1_URL "/A=1",
                  "{'id':'1','objectClass':'A','attributes':{'x':1}}", ct_json, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    it_front_reply_free(&r);
    it_front_call(c, "DELETE", "/ProvMnS/v1" ALT1_URL "/A=1", NULL, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    it_front_reply_free(&r);
    last = it_front_stub_get(c, 0, "/stub/provmns/last");
    cr_assert_str_eq(it_front_field(last, "method"), "DELETE");
    json_object_put(last);
    it_front_call(c, "POST", "/prov-mns-extensions/v1alpha1/actions" ALT1_URL "/A=1/restart",
                  "{'input':{'delay':1}}", ct_json, &r);
    cr_assert_lt(r.status, 300, "%ld %s", r.status, r.body.data);
    it_front_reply_free(&r);
    last = it_front_stub_get(c, 0, "/stub/provmns/last");
    cr_assert(strstr(it_front_field(last, "path"),
                     "/prov-mns-extensions/v1alpha1/actions/SubNetwork=Europe/"
                     "ManagedElement=Node"),
              "%s", it_front_field(last, "path"));
    cr_assert(strstr(it_front_field(last, "path"), "/A=1/restart"), "%s",
              it_front_field(last, "path"));
    json_object_put(last);
    cr_assert_eq(it_front_stub_count(c, 0, "provmnsReads"), 1);
    cr_assert_eq(it_front_stub_count(c, 0, "provmnsWrites"), 4);
    cr_assert_eq(it_front_stub_count(c, 0, "provmnsActions"), 1);

    /* the DMI's own failure comes back as it is; a slow one is a 504; one
     * that cannot be reached a 500 */
    it_front_call(c, "GET", "/ProvMnS/v1" ALT1_URL "/dmiSimulation=httpError_418", NULL, NULL, &r);
    cr_assert_eq(r.status, 418, "%s", r.body.data);
    cr_assert(strstr(r.body.data, "418"), "%s", r.body.data);
    it_front_reply_free(&r);
    expect_3gpp(c, "GET", "/ProvMnS/v1" ALT1_URL "/dmiSimulation=slowResponse_3000", NULL, NULL,
                504, "APPLICATION_LAYER_ERROR", "did not respond in a timely manner", NULL);
    expect_3gpp(c, "GET", "/ProvMnS/v1" ALT_DOWN, NULL, NULL, 500, "APPLICATION_LAYER_ERROR", NULL,
                NULL);
    it_front_fini(c);
}

Test(provmns, refusals_have_3gpp_bodies_and_never_reach_the_dmi, .timeout = 180)
{
    front_case *c = it_front_start("pm-err", 1, NULL);
    const char *const xml_type[] = {"Content-Type: text/xml", NULL};
    const char *const xml_accept[] = {"Accept: text/xml", NULL};
    ncmp_buf eleven = NCMP_BUF_INIT;
    char row[512];
    ncmp_err err;

    handles_ready(c);
    /* known to the database only (the map has no event for it), and being
     * deleted: nothing else touches it */
    snprintf(row, sizeof(row),
             "INSERT INTO cm_handle (id, alternate_id, state, dmi_service_name, module_set_tag,"
             " data_producer_identifier) VALUES ('ch-4', '" ALT_ADV "', 'DELETING', '%s', 'tagA',"
             " 'producer-1')",
             c->dmi[0]);
    cr_assert_eq(ncmp_db_exec(c->db, row, &err), 0, "%s", err.msg);

    expect_3gpp(c, "GET", "/ProvMnS/v1/SubNetwork=Asia/ManagedElement=X/A=1", NULL, NULL, 404,
                "IE_NOT_FOUND", "/SubNetwork=Asia/ManagedElement=X/A=1 not found", NULL);
    expect_3gpp(c, "GET", "/ProvMnS/v1" ALT_NOPROD "/A=1", NULL, NULL, 422, "SERVER_LIMITATION",
                "Registered DMI does not support the ProvMnS interface.", NULL);
    expect_3gpp(c, "GET", "/ProvMnS/v1" ALT_ADV, NULL, NULL, 406, "APPLICATION_LAYER_ERROR",
                ALT_ADV " is not in READY state. Current state: DELETING", NULL);
    expect_3gpp(c, "GET", "/ProvMnS/v1/someClass", NULL, NULL, 422, "SERVER_LIMITATION",
                "/someClass not a valid path", NULL);
    expect_3gpp(c, "GET", "/ProvMnS/v1/", NULL, NULL, 422, "SERVER_LIMITATION", "not a valid path",
                NULL);
    expect_3gpp(c, "GET", "/ProvMnS/v1" ALT1_URL "?scopeType=WRONG", NULL, NULL, 400,
                "VALIDATION_ERROR", "scopeType", NULL);
    expect_3gpp(c, "GET", "/ProvMnS/v1" ALT1_URL "?scopeLevel=-1", NULL, NULL, 400,
                "VALIDATION_ERROR", "scopeLevel", NULL);
    expect_3gpp(c, "GET", "/ProvMnS/v1" ALT1_URL, NULL, xml_accept, 406, "APPLICATION_LAYER_ERROR",
                NULL, NULL);

    /* patches: too many items, malformed bodies and items, media type */
    ncmp_buf_append_char(&eleven, '[');
    for (int i = 0; i < 11; i++)
        ncmp_buf_appendf(&eleven, "%s{'op':'remove','path':'/A=%d'}", i ? "," : "", i);
    ncmp_buf_append_char(&eleven, ']');
    expect_3gpp(c, "PATCH", "/ProvMnS/v1" ALT1_URL, eleven.data, patch_type, 413,
                "SERVER_LIMITATION", "11 operations in request, this exceeds the maximum of 10",
                NULL);
    expect_3gpp(c, "PATCH", "/ProvMnS/v1" ALT1_URL, "{malformed}", patch_type, 400,
                "VALIDATION_ERROR", "Malformed patch", NULL);
    expect_3gpp(c, "PATCH", "/ProvMnS/v1" ALT1_URL, "{'op':'remove','path':'/A=1'}", patch_type,
                400, "VALIDATION_ERROR", "Malformed patch", NULL);
    expect_3gpp(c, "PATCH", "/ProvMnS/v1" ALT1_URL,
                "[{'op':'remove','path':'/A=1'},{'op':'jump','path':'/A=2'}]", patch_type, 400,
                "VALIDATION_ERROR", "unknown op", "/1");
    expect_3gpp(c, "PATCH", "/ProvMnS/v1" ALT1_URL, "[{'op':'replace','path':'/A=1'}]", patch_type,
                400, "VALIDATION_ERROR", "needs a value", "/0");
    expect_3gpp(c, "PATCH", "/ProvMnS/v1" ALT1_URL, K6_PATCH, xml_type, 415, "VALIDATION_ERROR",
                NULL, NULL);
    expect_3gpp(c, "PUT", "/ProvMnS/v1" ALT1_URL "/A=1", "not json", ct_json, 400,
                "VALIDATION_ERROR", "Malformed resource", NULL);
    /* the managed element itself is never deleted through ProvMnS */
    expect_3gpp(c, "DELETE", "/ProvMnS/v1" ALT1_URL, NULL, NULL, 400, "VALIDATION_ERROR",
                "Data manipulation operations are not supported on " ALT1, NULL);
    expect_3gpp(c, "POST", "/prov-mns-extensions/v1alpha1/actions/restart", "{}", ct_json, 422,
                "SERVER_LIMITATION", "not a valid path", NULL);
    cr_assert_eq(it_front_stub_count(c, 0, "provmnsReads") +
                     it_front_stub_count(c, 0, "provmnsWrites") +
                     it_front_stub_count(c, 0, "provmnsActions"),
                 0, "a refused request reached the DMI");
    ncmp_buf_free(&eleven);
    it_front_fini(c);
}

/* The last permission request's operation (the first and only). */
static json_object *policy_last_op(front_case *c, json_object **whole)
{
    json_object *body, *ops;

    *whole = it_front_stub_get(c, 0, "/stub/policy/last");
    cr_assert(json_object_object_get_ex(*whole, "body", &body), "%s",
              json_object_to_json_string(*whole));
    cr_assert_str_eq(it_front_field(body, "changeRequestFormat"), "cm-legacy");
    cr_assert(json_object_object_get_ex(body, "operations", &ops) &&
              json_object_array_length(ops) == 1);
    return json_object_array_get_idx(ops, 0);
}

Test(provmns, policy_executor_guards_every_write, .timeout = 180)
{
    const char *const extra[] = {"--policy-executor.enabled=true", "--policy-executor.url=%s",
                                 "--policy-executor.timeout-ms=1000", NULL};
    front_case *c = it_front_start("pm-pol", 1, extra);
    const char *const auth_patch[] = {"Content-Type: " PATCH_JSON, "Authorization: Bearer token-2",
                                      NULL};
    json_object *whole, *op, *change;
    long writes;
    front_reply r;

    handles_ready(c);

    /* NCMP's k6 patch: an update of the grandchild's nested attribute */
    it_front_call(c, "PATCH", "/ProvMnS/v1" ALT1_URL, K6_PATCH, auth_patch, &r);
    cr_assert_eq(r.status, 200, "%s; log %s", r.body.data, c->log);
    it_front_reply_free(&r);
    op = policy_last_op(c, &whole);
    cr_assert_str_eq(it_front_field(whole, "authorization"), "Bearer token-2");
    cr_assert_str_eq(it_front_field(op, "operation"), "update");
    cr_assert_str_eq(it_front_field(op, "entityHandleId"), "ch-1");
    cr_assert_str_eq(it_front_field(op, "resourceIdentifier"), "/parent=id1/child=id2");
    cr_assert_str_eq(it_front_field(op, "targetIdentifier"), ALT1);
    cr_assert(json_object_object_get_ex(op, "changeRequest", &change));
    cr_assert_str_eq(json_object_to_json_string_ext(change, JSON_C_TO_STRING_PLAIN),
                     "{\"grandchild\":[{\"id\":\"id3\",\"attributes\":{\"plmnId\":{\"mcc\":"
                     "\"1234\"}}}]}");
    json_object_put(whole);

    /* one check per item; the second is refused: nothing reaches the DMI */
    writes = it_front_stub_count(c, 0, "provmnsWrites");
    expect_3gpp(c, "PATCH", "/ProvMnS/v1" ALT1_URL,
                "[{'op':'add','path':'/A=1','value':{'id':'1','attributes':{'x':1}}},"
                "{'op':'remove','path':'/policySimulation=policyResponse_deny'}]",
                patch_type, 409, "APPLICATION_LAYER_ERROR", "Operation not allowed. Decision id",
                "/1");
    cr_assert_eq(it_front_stub_count(c, 0, "provmnsWrites"), writes,
                 "a refused patch reached the DMI");
    op = policy_last_op(c, &whole);
    cr_assert_str_eq(it_front_field(op, "operation"), "delete");
    cr_assert_str_eq(it_front_field(op, "resourceIdentifier"),
                     "/policySimulation=policyResponse_deny");
    cr_assert_not(json_object_object_get_ex(op, "changeRequest", &change));
    json_object_put(whole);

    /* a create; then an executor that fails or is slow: the default, deny */
    it_front_call(c, "PUT", "/ProvMnS/v1" ALT1_URL "/A=1/B=2",
                  "{'id':'2','objectClass':'B','attributes':{'y':'z'}}", ct_json, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    it_front_reply_free(&r);
    op = policy_last_op(c, &whole);
    cr_assert_str_eq(it_front_field(op, "operation"), "create");
    cr_assert_str_eq(it_front_field(op, "resourceIdentifier"), "/A=1");
    cr_assert(json_object_object_get_ex(op, "changeRequest", &change));
    cr_assert_str_eq(json_object_to_json_string_ext(change, JSON_C_TO_STRING_PLAIN),
                     "{\"B\":[{\"id\":\"2\",\"attributes\":{\"y\":\"z\"}}]}");
    json_object_put(whole);
    expect_3gpp(c, "DELETE", "/ProvMnS/v1" ALT1_URL "/policySimulation=httpError_503", NULL, NULL,
                409, "APPLICATION_LAYER_ERROR", "Decision id N/A : deny", NULL);
    expect_3gpp(c, "DELETE", "/ProvMnS/v1" ALT1_URL "/policySimulation=slowResponse_3", NULL, NULL,
                409, "APPLICATION_LAYER_ERROR", "Decision id N/A : deny", NULL);
    /* the handle's own attributes are its root object: refused before asking */
    expect_3gpp(c, "PATCH", "/ProvMnS/v1" ALT1_URL,
                "[{'op':'replace','path':'#/attributes/userLabel','value':'x'}]", patch_type, 400,
                "VALIDATION_ERROR", "not supported", "/0");

    /* reads are never checked; pass-through writes on running are */
    writes = it_front_stub_count(c, 0, "policyRequests");
    it_front_call(c, "GET", "/ProvMnS/v1" ALT1_URL, NULL, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    it_front_reply_free(&r);
    cr_assert_eq(it_front_stub_count(c, 0, "policyRequests"), writes);
    it_front_call(
        c, "POST",
        "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:passthrough-running?resourceIdentifier=A%3D1",
        "{'A':{'x':1}}", ct_json, &r);
    cr_assert_eq(r.status, 201, "%s; log %s", r.body.data, c->log);
    it_front_reply_free(&r);
    op = policy_last_op(c, &whole);
    cr_assert_str_eq(it_front_field(op, "operation"), "create");
    cr_assert_str_eq(it_front_field(op, "resourceIdentifier"), "A=1");
    cr_assert(json_object_object_get_ex(op, "changeRequest", &change));
    cr_assert_str_eq(json_object_to_json_string_ext(change, JSON_C_TO_STRING_PLAIN),
                     "{\"A\":{\"x\":1}}");
    json_object_put(whole);
    it_front_call(c, "DELETE",
                  "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:passthrough-running?resourceIdentifier="
                  "policySimulation%3DpolicyResponse_deny",
                  NULL, NULL, &r);
    cr_assert_eq(r.status, 409, "%s", r.body.data);
    cr_assert(strstr(it_front_field(r.json, "message"), "Operation not allowed"), "%s",
              r.body.data);
    it_front_reply_free(&r);
    it_front_fini(c);
}

Test(provmns, executor_down_takes_the_default_decision, .timeout = 180)
{
    char url[64];
    const char *extra[] = {"--policy-executor.enabled=true", url,
                           "--policy-executor.default-decision=allow", NULL};
    front_case *c;
    front_reply r;

    snprintf(url, sizeof(url), "--policy-executor.url=http://127.0.0.1:%d", it_free_port());
    c = it_front_start("pm-down", 1, extra);
    handles_ready(c);
    it_front_call(c, "PATCH", "/ProvMnS/v1" ALT1_URL, K6_PATCH, patch_type, &r);
    cr_assert_eq(r.status, 200, "the default decision allows: %s; log %s", r.body.data, c->log);
    it_front_reply_free(&r);
    cr_assert_eq(it_front_stub_count(c, 0, "provmnsWrites"), 1);
    cr_assert_eq(it_front_stub_count(c, 0, "policyRequests"), 0);
    it_front_fini(c);
}

/* --- bounds under load --------------------------------------------------- */

typedef struct slow_read {
    front_case *c;
    front_reply r;
} slow_read;

static void *slow_read_run(void *arg)
{
    slow_read *s = arg;
    it_front_call(s->c, "GET", "/ProvMnS/v1" ALT1_URL "/dmiSimulation=slowResponse_3000", NULL,
                  NULL, &s->r);
    return NULL;
}

/* The value of the metric sample that starts with `series` (name and
 * labels as rendered), -1 when there is none. */
static double metric(front_case *c, const char *series)
{
    front_reply r;
    double v = -1;
    size_t n = strlen(series);

    it_front_call(c, "GET", "/actuator/prometheus", NULL, NULL, &r);
    cr_assert_eq(r.status, 200);
    for (const char *p = r.body.data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            v = strtod(p + n + 1, NULL);
    it_front_reply_free(&r);
    return v;
}

Test(provmns, a_dmi_plugin_at_its_in_flight_bound_sheds_with_retry_after, .timeout = 180)
{
    const char *const extra[] = {"--dmi.max-in-flight-per-plugin=2",
                                 "--dmi.response-timeout-ms=20000", "--http.retry-after-s=2", NULL};
    front_case *c = it_front_start("pm-busy", 1, extra);
    slow_read slow[2];
    pthread_t t[2];
    front_reply r;
    long reads;
    int i;

    handles_ready(c);
    reads = it_front_stub_count(c, 0, "provmnsReads");
    cr_assert_eq(metric(c, "ncmp_shed_requests_total{reason=\"dmi-in-flight\"}"), 0);

    /* two slow reads hold the plugin's two places */
    for (i = 0; i < 2; i++) {
        slow[i].c = c;
        pthread_create(&t[i], NULL, slow_read_run, &slow[i]);
    }
    for (i = 0; i < 400 && metric(c, "ncmp_dmi_requests_in_flight") < 2; i++)
        ncmp_sleep_ms(10);
    cr_assert_eq(metric(c, "ncmp_dmi_requests_in_flight"), 2, "log %s", c->log);

    /* a third is not sent: 503 with Retry-After, at once */
    it_front_call(c, "GET", "/ProvMnS/v1" ALT1_URL, NULL, NULL, &r);
    cr_assert_eq(r.status, 503, "%ld %s", r.status, r.body.data);
    cr_assert_str_eq(r.retry_after, "2");
    cr_assert(strstr(r.body.data, "dmi.max-in-flight-per-plugin"), "%s", r.body.data);
    it_front_reply_free(&r);
    cr_assert_eq(metric(c, "ncmp_shed_requests_total{reason=\"dmi-in-flight\"}"), 1);
    /* the probes answer meanwhile */
    it_front_call(c, "GET", "/actuator/health/liveness", NULL, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    it_front_reply_free(&r);

    /* the slow ones are answered; then the plugin takes requests again */
    for (i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        cr_assert_eq(slow[i].r.status, 200, "%ld %s", slow[i].r.status, slow[i].r.body.data);
        it_front_reply_free(&slow[i].r);
    }
    cr_assert_eq(metric(c, "ncmp_dmi_requests_in_flight"), 0);
    it_front_call(c, "GET", "/ProvMnS/v1" ALT1_URL, NULL, NULL, &r);
    cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
    it_front_reply_free(&r);
    /* the refused read never reached the plugin */
    cr_assert_eq(it_front_stub_count(c, 0, "provmnsReads"), reads + 3);
    it_front_fini(c);
}
