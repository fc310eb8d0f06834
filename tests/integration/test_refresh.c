/*
 * Module refresh end to end on real services: POST
 * /ncmpInventory/v1/ch/module/refresh -> ncmpd's answer (handles grouped
 * by module-set tag) and one sample per tag locked with MODULE_REFRESH ->
 * module sync reads the sample's modules again from the DMI stub -> the
 * stored set changed in place (or left alone), the sample READY again or
 * LOCKED with MODULE_REFRESH_FAILED, every transition on the lifecycle
 * topic.
 *
 * The stub answers every tag used here with its default set (module0..
 * module9, revision 2024-01-01); POST /stub/modules gives a tag sources
 * of another generation (same names and revisions, other content) or
 * makes it fail.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "it_front.h"
#include "it_util.h"
#include "ncmp_buf.h"

#define WAIT_MS 60000

TestSuite(module_refresh, .fini = it_front_cleanup);

static const char *const ct_json[] = {"Content-Type: application/json", NULL};

/* ch-1 (ALT-1) and ch-2 on tag refresh-a, ch-3 (ALT-3) on refresh-b,
 * ch-4 untagged: all READY. */
static void handles_ready(front_case *c)
{
    ncmp_buf b = NCMP_BUF_INIT;
    front_reply r;

    ncmp_buf_appendf(&b,
                     "{'dmiPlugin':'%s','createdCmHandles':["
                     "{'cmHandle':'ch-1','alternateId':'ALT-1','moduleSetTag':'refresh-a'},"
                     "{'cmHandle':'ch-2','moduleSetTag':'refresh-a'},"
                     "{'cmHandle':'ch-3','alternateId':'ALT-3','moduleSetTag':'refresh-b'},"
                     "{'cmHandle':'ch-4'}]}",
                     c->dmi[0]);
    it_front_call(c, "POST", "/ncmpInventory/v1/ch", b.data, ct_json, &r);
    cr_assert_eq(r.status, 200, "registration: %ld %s", r.status, r.body.data);
    it_front_reply_free(&r);
    ncmp_buf_free(&b);
    it_front_wait_ready(c, 1, 4);
}

/* POST the refresh with `body_sq`; answers 200 with `expected` (exact). */
static void refresh(front_case *c, const char *body_sq, const char *expected)
{
    front_reply r;

    it_front_call(c, "POST", "/ncmpInventory/v1/ch/module/refresh", body_sq, ct_json, &r);
    cr_assert_eq(r.status, 200, "refresh: %ld %s; log %s", r.status, r.body.data, c->log);
    cr_assert_str_eq(r.body.data, expected);
    cr_assert_str_eq(r.content_type, "application/json");
    it_front_reply_free(&r);
}

#define BY_TAG(TAG)                                                                                \
    "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath','conditionParameters':"    \
    "[{'cpsPath':'/dmi-registry/cm-handles[@module-set-tag=\\\"" TAG "\\\"]'}]}]}"

static void by_dmi(front_case *c, const char *dmi, ncmp_buf *out)
{
    ncmp_buf_reset(out);
    ncmp_buf_appendf(out,
                     "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithDmiPlugin',"
                     "'conditionParameters':[{'dmiPluginName':'%s'}]}]}",
                     dmi);
    (void)c;
}

/* POST <stub>/stub/modules. */
static void stub_models(front_case *c, const char *body_sq)
{
    front_reply r;

    it_front_http(c->dmi[0], "POST", "/stub/modules", body_sq, ct_json, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    it_front_reply_free(&r);
}

static long query(front_case *c, const char *sql)
{
    return it_query_long(c->db, sql, 0, NULL);
}

static void wait_count(front_case *c, const char *sql, long n)
{
    long got = it_wait_long(c->db, sql, NULL, n, WAIT_MS);
    cr_assert_eq(got, n, "%s: %ld, expected %ld; log %s", sql, got, n, c->log);
}

/* The stub's counter of module requests of its default set. */
static long stub_default(front_case *c, const char *what)
{
    json_object *o = it_front_stub_get(c, 0, "/stub/stats"), *per, *v;
    long n = -1;

    if (json_object_object_get_ex(o, what, &per) &&
        json_object_object_get_ex(per, "tagDefault", &v))
        n = json_object_get_int64(v);
    json_object_put(o);
    return n;
}

/* Every handle's state transitions on the lifecycle topic, in order, as
 * "ch-1: >ADVISED ADVISED>READY ...; ch-2: ..." (handles in id order),
 * after the outbox emptied; every event checked against the schemas. */
static void transitions(front_case *c, size_t at_least, ncmp_buf *out)
{
    char topic[256];
    it_record *recs = NULL;
    size_t n;
    static const char *const ids[] = {"ch-1", "ch-2", "ch-3", "ch-4"};

    wait_count(c, "SELECT count(*) FROM lcm_outbox", 0);
    snprintf(topic, sizeof(topic), "%s-lcm", c->topic);
    n = it_read_topic(topic, at_least, WAIT_MS, &recs);
    ncmp_buf_reset(out);
    for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
        ncmp_buf_appendf(out, "%s%s:", k ? "; " : "", ids[k]);
        for (size_t i = 0; i < n; i++) {
            json_object *o, *ev, *vals, *st;
            const char *old = "", *new_ = "";
            char err[512] = "";
            if (strcmp(recs[i].key, ids[k]) != 0)
                continue;
            cr_assert_eq(conformance_check_lcm(recs[i].value, recs[i].len, err, sizeof(err)), 0,
                         "%s: %s", err, recs[i].value);
            o = json_tokener_parse(recs[i].value);
            cr_assert(json_object_object_get_ex(o, "event", &ev), "%s", recs[i].value);
            if (json_object_object_get_ex(ev, "oldValues", &vals) &&
                json_object_object_get_ex(vals, "cmHandleState", &st))
                old = json_object_get_string(st);
            if (json_object_object_get_ex(ev, "newValues", &vals) &&
                json_object_object_get_ex(vals, "cmHandleState", &st))
                new_ = json_object_get_string(st);
            ncmp_buf_appendf(out, " %s>%s", old, new_);
            json_object_put(o);
        }
    }
    it_records_free(recs, n);
}

/* Every handle READY, no lock reason left. */
static void wait_all_ready(front_case *c)
{
    wait_count(c, "SELECT count(*) FROM cm_handle WHERE state = 'READY' AND lock_reason IS NULL",
               4);
}

/* The answer for every handle. */
#define ALL_BY_TAG                                                                                 \
    "{\"cmHandlesByModuleSetTag\":["                                                               \
    "{\"moduleSetTag\":\"\",\"cmHandles\":[\"ch-4\"]},"                                            \
    "{\"moduleSetTag\":\"refresh-a\",\"cmHandles\":[\"ALT-1\",\"ch-2\"]},"                         \
    "{\"moduleSetTag\":\"refresh-b\",\"cmHandles\":[\"ALT-3\"]}]}"

#define SYNCED(ID) ID ": >ADVISED ADVISED>READY"
#define REFRESHED  " READY>LOCKED LOCKED>READY"

/* A fingerprint of every stored set: set, module, checksum. */
#define SQL_SETS                                                                                   \
    "SELECT count(*) FROM module_set_member m JOIN module_set s ON s.id = m.module_set_id"

/* --- tests ------------------------------------------------------------------ */

/* NCMP's answer: every matched handle by tag, the alternate id where there
 * is one; a narrow and a broad criterion, and no match. */
Test(module_refresh, answer_groups_matched_handles_by_tag, .timeout = 180)
{
    front_case *c = it_front_start("rf-groups", 1, NULL);
    ncmp_buf body = NCMP_BUF_INIT, ev = NCMP_BUF_INIT;

    handles_ready(c);
    by_dmi(c, "http://no-such-dmi:8080", &body);
    refresh(c, body.data, "{\"cmHandlesByModuleSetTag\":[]}");
    refresh(c, BY_TAG("refresh-b"),
            "{\"cmHandlesByModuleSetTag\":[{\"moduleSetTag\":\"refresh-b\",\"cmHandles\":"
            "[\"ALT-3\"]}]}");
    wait_all_ready(c);
    by_dmi(c, c->dmi[0], &body);
    refresh(c, body.data, ALL_BY_TAG);
    wait_all_ready(c);
    /* one sample per tag: the first READY handle by id */
    transitions(c, 16, &ev);
    cr_assert_str_eq(ev.data, SYNCED("ch-1") REFRESHED "; " SYNCED("ch-2") "; " SYNCED("ch-3")
                                  REFRESHED REFRESHED "; " SYNCED("ch-4") REFRESHED);
    ncmp_buf_free(&body);
    ncmp_buf_free(&ev);
    it_front_fini(c);
}

/* The DMI regenerated its models (same names and revisions): the set is
 * changed in place, the new content served, the old one gone from every
 * set that held it. */
Test(module_refresh, changed_modules_update_the_set_in_place, .timeout = 180)
{
    front_case *c = it_front_start("rf-changed", 1, NULL);
    ncmp_buf ev = NCMP_BUF_INIT;
    long set_a, refs, resources, old_sources;
    front_reply r;

    handles_ready(c);
    set_a = query(c, "SELECT id FROM module_set WHERE tag = 'refresh-a'");
    cr_assert_eq(query(c, "SELECT count(*) FROM module_set_member m JOIN yang_resource y"
                          " ON y.checksum = m.checksum WHERE y.source LIKE '%generation%'"),
                 0);
    old_sources = query(c, "SELECT count(DISTINCT checksum) FROM module_set_member");
    cr_assert_eq(old_sources, 10, "the three sets share the default set's ten sources");
    refs = stub_default(c, "moduleReferences");
    resources = stub_default(c, "moduleResources");

    stub_models(c, "{'moduleSetTag':'refresh-a','generation':1}");
    refresh(c, BY_TAG("refresh-a"),
            "{\"cmHandlesByModuleSetTag\":[{\"moduleSetTag\":\"refresh-a\",\"cmHandles\":"
            "[\"ALT-1\",\"ch-2\"]}]}");
    cr_assert_eq(query(c, "SELECT count(*) FROM cm_handle WHERE id = 'ch-1' AND state = 'LOCKED'"
                          " AND lock_reason = 'MODULE_REFRESH'"
                          " AND lock_details = 'Refresh of ModuleSetTag: refresh-a'"),
                 1, "the sample is locked when the answer comes");
    wait_count(c,
               "SELECT count(*) FROM module_set_member m JOIN yang_resource y"
               " ON y.checksum = m.checksum WHERE y.source LIKE '%generation 1 %'",
               30);
    wait_all_ready(c);
    /* in place: the same set, its handles still on it, ten members */
    cr_assert_eq(query(c, "SELECT id FROM module_set WHERE tag = 'refresh-a'"), set_a);
    cr_assert_eq(query(c, "SELECT count(*) FROM cm_handle WHERE module_set_tag = 'refresh-a'"
                          " AND module_set_id = (SELECT id FROM module_set WHERE tag ="
                          " 'refresh-a')"),
                 2);
    cr_assert_eq(query(c, SQL_SETS " WHERE s.id = (SELECT id FROM module_set WHERE tag ="
                                   " 'refresh-a')"),
                 10);
    cr_assert_eq(query(c, "SELECT count(*) FROM module_set"), 3);
    cr_assert_eq(query(c, "SELECT count(DISTINCT checksum) FROM module_set_member"), 10,
                 "every set holds the new sources, none the old");
    /* one more read of the references and of every source */
    cr_assert_eq(stub_default(c, "moduleReferences"), refs + 1);
    cr_assert_eq(stub_default(c, "moduleResources"), resources + 1);
    /* served: the new content, same name and revision, for every handle */
    it_front_call(c, "GET",
                  "/ncmp/v1/ch/ch-4/modules/definitions?module-name=module3&revision=2024-01-01",
                  NULL, NULL, &r);
    cr_assert_eq(r.status, 200);
    cr_assert(json_object_array_length(r.json) == 1 && strstr(r.body.data, "generation 1 "), "%s",
              r.body.data);
    it_front_reply_free(&r);
    cr_assert(it_file_contains(c->log, "module refresh of ch-1 (alternate id 'ALT-1'), "
                                       "ModuleSetTag refresh-a: module module3 revision "
                                       "2024-01-01 changed content"),
              "log %s", c->log);
    /* the sample's refresh announced; nothing else */
    transitions(c, 10, &ev);
    cr_assert_str_eq(ev.data, SYNCED("ch-1") REFRESHED
                     "; " SYNCED("ch-2") "; " SYNCED("ch-3") "; " SYNCED("ch-4"));
    /* data sync is the handle's business: a refresh leaves it */
    cr_assert_eq(query(c, "SELECT count(*) FROM cm_handle WHERE sync_attempts <> 0"), 0);
    cr_assert_eq(query(c, "SELECT count(*) FROM module_sync_retry"), 0);
    ncmp_buf_free(&ev);
    it_front_fini(c);
}

/* Nothing changed at the DMI: nothing changes in the store. */
Test(module_refresh, unchanged_modules_change_nothing, .timeout = 180)
{
    front_case *c = it_front_start("rf-same", 1, NULL);
    static const char fingerprint[] =
        "SELECT count(*) FROM (SELECT string_agg(m.module_set_id || m.module_name || m.checksum,"
        " ',' ORDER BY 1) AS f FROM module_set_member m) x WHERE x.f = $1";
    char *before;
    PGresult *res = NULL;
    ncmp_err err;
    ncmp_buf body = NCMP_BUF_INIT, ev = NCMP_BUF_INIT;
    const char *params[1];
    long refs, sources;

    handles_ready(c);
    cr_assert_eq(ncmp_db_query(c->db,
                               "SELECT string_agg(m.module_set_id || m.module_name || m.checksum,"
                               " ',' ORDER BY 1) FROM module_set_member m",
                               0, NULL, &res, &err),
                 0, "%s", err.msg);
    before = strdup(PQgetvalue(res, 0, 0));
    PQclear(res);
    sources = query(c, "SELECT count(*) FROM yang_resource");
    refs = stub_default(c, "moduleReferences");
    by_dmi(c, c->dmi[0], &body);
    refresh(c, body.data, ALL_BY_TAG);
    wait_all_ready(c);
    cr_assert_eq(stub_default(c, "moduleReferences"), refs + 3, "one read per tag");
    params[0] = before;
    cr_assert_eq(it_query_long(c->db, fingerprint, 1, params), 1, "the sets are as they were");
    cr_assert_eq(query(c, "SELECT count(*) FROM yang_resource"), sources);
    cr_assert(it_file_contains(c->log, "ModuleSetTag refresh-b: no change in 10 modules"), "log %s",
              c->log);
    cr_assert(!it_file_contains(c->log, "changed content"), "log %s", c->log);
    transitions(c, 14, &ev);
    cr_assert_str_eq(ev.data, SYNCED("ch-1") REFRESHED "; " SYNCED("ch-2") "; " SYNCED("ch-3")
                                  REFRESHED "; " SYNCED("ch-4") REFRESHED);
    free(before);
    ncmp_buf_free(&body);
    ncmp_buf_free(&ev);
    it_front_fini(c);
}

/* The DMI fails: MODULE_REFRESH_FAILED with the reason, no second refresh
 * of the tag meanwhile, retried until the DMI answers: READY. */
Test(module_refresh, dmi_failure_locks_with_module_refresh_failed, .timeout = 180)
{
    const char *extra[] = {"--module-sync.retry-initial-ms=300", "--module-sync.retry-max-ms=600",
                           NULL};
    front_case *c = it_front_start("rf-fail", 1, extra);
    static const char answer[] = "{\"cmHandlesByModuleSetTag\":[{\"moduleSetTag\":\"refresh-b\","
                                 "\"cmHandles\":[\"ALT-3\"]}]}";
    ncmp_buf ev = NCMP_BUF_INIT;
    front_reply r;
    json_object *reason;

    handles_ready(c);
    stub_models(c, "{'moduleSetTag':'refresh-b','failing':true}");
    refresh(c, BY_TAG("refresh-b"), answer);
    wait_count(c,
               "SELECT count(*) FROM cm_handle WHERE id = 'ch-3' AND state = 'LOCKED'"
               " AND lock_reason = 'MODULE_REFRESH_FAILED'"
               " AND lock_details LIKE 'Attempt #_ failed: module references: %HTTP 500%'",
               1);
    it_front_call(c, "GET", "/ncmp/v1/ch/ch-3/state", NULL, NULL, &r);
    cr_assert_eq(r.status, 200);
    cr_assert(json_object_object_get_ex(r.json, "state", &reason) &&
                  json_object_object_get_ex(reason, "lockReason", &reason),
              "%s", r.body.data);
    cr_assert_str_eq(it_front_field(reason, "reason"), "MODULE_REFRESH_FAILED", "%s", r.body.data);
    it_front_reply_free(&r);
    /* retried while the DMI fails; asked again meanwhile: the same answer,
     * no second sample */
    wait_count(c, "SELECT count(*) FROM cm_handle WHERE id = 'ch-3' AND sync_attempts >= 2", 1);
    refresh(c, BY_TAG("refresh-b"), answer);
    cr_assert_eq(query(c, "SELECT count(*) FROM cm_handle WHERE state = 'LOCKED'"), 1);
    stub_models(c, "{'moduleSetTag':'refresh-b','failing':false}");
    wait_all_ready(c);
    cr_assert_eq(query(c, "SELECT count(*) FROM cm_handle WHERE sync_attempts <> 0"), 0);
    /* LOCKED once (the failures keep it LOCKED), READY once */
    transitions(c, 10, &ev);
    cr_assert_str_eq(ev.data, SYNCED("ch-1") "; " SYNCED("ch-2") "; " SYNCED("ch-3") REFRESHED
                     "; " SYNCED("ch-4"));
    ncmp_buf_free(&ev);
    it_front_fini(c);
}

/* A bad body: 400 with NCMP's error and what is wrong; nothing locked. */
Test(module_refresh, bad_requests_answer_400, .timeout = 120)
{
    front_case *c = it_front_start("rf-bad", 1, NULL);
    static const struct {
        const char *body, *message;
    } cases[] = {
        {"", "Required request body is missing"},
        {"{'cmHandleQueryParameters':", "Invalid JSON body"},
        {"{'cmHandleQueryParameters':[{'conditionName':'noSuchCondition',"
         "'conditionParameters':[]}]}",
         NULL},
        {"{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
         "'conditionParameters':[{'cpsPath':'not a path'}]}]}",
         NULL},
    };
    front_reply r;

    handles_ready(c);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        it_front_call(c, "POST", "/ncmpInventory/v1/ch/module/refresh", cases[i].body, ct_json, &r);
        cr_assert_eq(r.status, 400, "case %zu: %ld %s", i, r.status, r.body.data);
        cr_assert_not_null(it_front_field(r.json, "message"), "case %zu: %s", i, r.body.data);
        if (cases[i].message)
            cr_assert_str_eq(it_front_field(r.json, "message"), cases[i].message);
        it_front_reply_free(&r);
    }
    cr_assert_eq(query(c, "SELECT count(*) FROM cm_handle WHERE state <> 'READY'"), 0);
    it_front_fini(c);
}
