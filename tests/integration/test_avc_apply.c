/*
 * The avc-apply role on real PostgreSQL and Kafka: AVC events from a DMI
 * plugin change the operational cache (dataspace NFP-Operational, an
 * anchor per handle), read back through the CPS API, while avc-forward
 * still forwards every event unchanged.
 *
 * The events are published before the roles start, on a topic of one
 * partition, so that they reach avc-apply as one batch: the bad events
 * (unknown handle, no cache, a target outside the schema, a node not in
 * the tree, a node that exists, bad JSON) are in the same batch as the
 * good ones, which must all be applied.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>

#include "it_cps.h"
#include "it_util.h"
#include "ncmp_buf.h"
#include "ncmp_db.h"

#define WAIT_MS 90000
#define OPS     "/cps/api/v2/dataspaces/NFP-Operational"
#define DEV     "/openroadm-devices/openroadm-device"

#define WRAP(edits)                                                                                \
    "{\"data\":{\"push-change-update\":{\"datastore-changes\":{\"ietf-yang-patch:yang-patch\":{"   \
    "\"patch-id\":\"p\",\"edit\":[" edits "]}}}}}"

typedef struct avc_case {
    cps_case c; /* for it_cps_send: port and log */
    char in[128], out[160], dlq[160], group[160];
    char flags[12][640];
    int runs;
} avc_case;

static pid_t case_run(avc_case *a, const char *roles)
{
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    const char *args[12];

    /* a log per run: the port is read from it */
    snprintf(a->c.log, sizeof(a->c.log), "%s/%s-%d.log", dir && *dir ? dir : "/tmp", a->in,
             ++a->runs);
    snprintf(a->flags[0], sizeof(a->flags[0]), "--db.url=%s", a->c.dburl);
    snprintf(a->flags[1], sizeof(a->flags[1]), "--roles=%s", roles);
    snprintf(a->flags[2], sizeof(a->flags[2]), "--http.port=0");
    snprintf(a->flags[3], sizeof(a->flags[3]), "--http.host=127.0.0.1");
    snprintf(a->flags[4], sizeof(a->flags[4]), "--kafka.bootstrap.servers=%s", it_kafka());
    snprintf(a->flags[5], sizeof(a->flags[5]), "--kafka.group.id=%s", a->group);
    snprintf(a->flags[6], sizeof(a->flags[6]), "--avc-forward.input-topic=%s", a->in);
    snprintf(a->flags[7], sizeof(a->flags[7]), "--avc-forward.output-topic=%s", a->out);
    snprintf(a->flags[8], sizeof(a->flags[8]), "--avc-apply.batch-wait-ms=500");
    for (int i = 0; i < 9; i++)
        args[i] = a->flags[i];
    args[9] = NULL;
    a->c.pid = it_ncmpd_start(a->c.log, args);
    a->c.port = it_logged_port(a->c.log);
    return a->c.pid;
}

static void case_stop(avc_case *a)
{
    int status = it_ncmpd_stop(a->c.pid);

    a->c.pid = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "SIGTERM should stop ncmpd cleanly, status %d; log %s", status, a->c.log);
}

static void expect_call(avc_case *a, const char *method, const char *path, const char *file,
                        const char *body, long status)
{
    reply r;

    it_cps_send(&a->c, method, path, file, NULL, body, body ? strlen(body) : 0, &r);
    cr_assert_eq(r.status, status, "%s %s: %ld, expected %ld: %s", method, path, r.status, status,
                 r.body.data);
    it_cps_reply_free(&r);
}

/* The sample Open ROADM device with id `id`, in its list. */
static char *device_tree(const char *id)
{
    char path[1024];
    ncmp_buf out = NCMP_BUF_INIT;
    FILE *f;
    char *data, *mark;
    long n;

    snprintf(path, sizeof(path), "%s/tests/data/openroadm/device.json", NCMP_SOURCE_DIR);
    f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    data = calloc(1, (size_t)n + 1);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    mark = strstr(data, "C201-7-1A-NODE_ID_HERE");
    cr_assert_not_null(mark);
    ncmp_buf_append_str(&out, "{\"openroadm-devices\":{\"openroadm-device\":[");
    ncmp_buf_append(&out, data, (size_t)(mark - data));
    ncmp_buf_append_str(&out, id);
    ncmp_buf_append_str(&out, mark + strlen("C201-7-1A-NODE_ID_HERE"));
    ncmp_buf_append_str(&out, "]}}");
    ncmp_buf_append_char(&out, '\0');
    free(data);
    return out.data;
}

/* A cache for handle `id`: anchor `id` with one device "dev-1". */
static void cache_make(avc_case *a, const char *id)
{
    char path[512];
    char *tree = device_tree("dev-1");

    snprintf(path, sizeof(path), OPS "/anchors?schema-set-name=or&anchor-name=%s", id);
    expect_call(a, "POST", path, NULL, NULL, 201);
    snprintf(path, sizeof(path), OPS "/anchors/%s/nodes?xpath=/", id);
    expect_call(a, "POST", path, NULL, tree, 201);
    free(tree);
}

/* GET a node of handle `id`'s cache: its status, and the body in *body
 * (when not NULL, caller frees). */
static long node_get(avc_case *a, const char *id, const char *xpath, char **body)
{
    char path[1024];
    reply r;
    long status;

    snprintf(path, sizeof(path), OPS "/anchors/%s/node?xpath=%s&descendants=0", id, xpath);
    it_cps_send(&a->c, "GET", path, NULL, NULL, NULL, 0, &r);
    status = r.status;
    if (body)
        *body = strdup(r.body.data ? r.body.data : "");
    it_cps_reply_free(&r);
    return status;
}

static const char *const DMI[] = {"ce_source", "ONAP-DMI-PLUGIN", "ce_type",
                                  "org.onap.cps.ncmp.events.avc1_0_0.AvcEvent", NULL};
static const char *const OTHER[] = {"ce_source", "DMI", NULL};

#define PATCH_STATUS(dev, status)                                                                  \
    WRAP("{\"edit-id\":\"1\",\"operation\":\"patch\",\"target\":\"/openroadm-devices-inventory:"   \
         "openroadm-devices/openroadm-device=" dev                                                 \
         "\",\"value\":{\"openroadm-device\":[{\"device-"                                          \
         "id\":\"" dev "\",\"status\":\"" status "\"}]}}")

/* What a test expects of one dead letter. */
typedef struct expected_dlq {
    const char *key, *reason;
} expected_dlq;

Test(avc_apply, applies_a_batch_and_dead_letters_only_the_bad_events, .timeout = 240)
{
    static const it_outgoing recs[] = {
        /* good: a leaf of a list entry, patched */
        {"h1", PATCH_STATUS("dev-1", "fail"), 0, DMI},
        /* not from a DMI plugin: forwarded, never applied */
        {"h1", PATCH_STATUS("dev-1", "success"), 0, OTHER},
        /* good: a new entry, created under the target's parent */
        {"h1",
         WRAP("{\"edit-id\":\"1\",\"operation\":\"create\",\"target\":\"/openroadm-devices/"
              "openroadm-device=dev-2\",\"value\":{\"openroadm-device\":[{\"device-id\":\"dev-2\","
              "\"ne-state\":\"inservice\"}]}}"),
         0, DMI},
        /* bad: unknown handle */
        {"nobody", PATCH_STATUS("dev-1", "fail"), 0, DMI},
        /* bad: data sync on, no cache */
        {"h3", PATCH_STATUS("dev-1", "fail"), 0, DMI},
        /* bad: a target outside the schema */
        {"h1",
         WRAP("{\"edit-id\":\"1\",\"operation\":\"delete\",\"target\":\"/openroadm-devices/"
              "orchard\"}"),
         0, DMI},
        /* bad: not JSON */
        {"h1", "{\"data\": not json", 0, DMI},
        /* bad: a node not in the tree */
        {"h1", PATCH_STATUS("ghost", "fail"), 0, DMI},
        /* bad: a node that exists, after a good edit of the same event
         * (the event is all or nothing: dev-3 must not stay) */
        {"h1",
         WRAP(
             "{\"edit-id\":\"1\",\"operation\":\"create\",\"target\":\"/openroadm-devices/"
             "openroadm-device=dev-3\",\"value\":{\"openroadm-device\":[{\"device-id\":\"dev-3\"}]}"
             "},{\"edit-id\":\"2\",\"operation\":\"create\",\"target\":\"/openroadm-devices/"
             "openroadm-device=dev-1\",\"value\":{\"openroadm-device\":[{\"device-id\":\"dev-1\"}]"
             "}}"),
         0, DMI},
        /* good: a subtree deleted */
        {"h1",
         WRAP("{\"edit-id\":\"1\",\"operation\":\"delete\",\"target\":\"/openroadm-devices/"
              "openroadm-device=dev-1/org-openroadm-device/degree=2\"}"),
         0, DMI},
        /* good: an entry replaced (RFC 8072's name for NCMP's update) */
        {"h1",
         WRAP("{\"edit-id\":\"1\",\"operation\":\"replace\",\"target\":\"/openroadm-devices/"
              "openroadm-device=dev-2\",\"value\":\"{\\\"openroadm-device\\\":[{\\\"device-id\\\":"
              "\\\"dev-2\\\",\\\"ne-state\\\":\\\"jeopardy\\\"}]}\"}"),
         0, DMI},
        /* data sync off: ignored */
        {"h2", PATCH_STATUS("dev-1", "fail"), 0, DMI},
    };
    static const expected_dlq dlq[] = {
        {"nobody", "unknown CM handle"},         {"h3", "no operational cache"},
        {"h1", "no node orchard in the schema"}, {"h1", "not an AVC event"},
        {"h1", "404 DataNode not found"},        {"h1", "409"},
    };
    const size_t n = sizeof(recs) / sizeof(recs[0]), ndlq = sizeof(dlq) / sizeof(dlq[0]);
    it_outgoing out[sizeof(recs) / sizeof(recs[0])];
    avc_case a = {0};
    char zip[1024], sql_offsets[256], *body = NULL;
    it_record *fw = NULL, *dl = NULL;
    size_t nfw, ndl;
    ncmp_db *db;
    ncmp_err err;

    it_unique(a.in, sizeof(a.in), "avc-apply");
    snprintf(a.out, sizeof(a.out), "%s-out", a.in);
    snprintf(a.dlq, sizeof(a.dlq), "%s-dlq", a.in);
    snprintf(a.group, sizeof(a.group), "g-%s", a.in);
    it_create_topic(a.in, 1);
    it_create_topic(a.out, 1);
    it_create_topic(a.dlq, 1);
    it_scratch_db_create("it_avc", a.c.dbname, sizeof(a.c.dbname), a.c.dburl, sizeof(a.c.dburl));

    /* the caches, made through the CPS API as data sync makes them */
    case_run(&a, "cps");
    snprintf(zip, sizeof(zip), "%s/tests/data/openroadm/model.zip", NCMP_SOURCE_DIR);
    expect_call(&a, "POST", "/cps/api/v2/dataspaces?dataspace-name=NFP-Operational", NULL, NULL,
                201);
    expect_call(&a, "POST", OPS "/schema-sets?schema-set-name=or", zip, NULL, 201);
    cache_make(&a, "h1");
    cache_make(&a, "h2");
    cr_assert_eq(ncmp_db_open(&db, a.c.dburl, NULL, 5, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_db_exec(db,
                              "INSERT INTO cm_handle (id, state, data_sync_enabled) VALUES"
                              " ('h1', 'READY', true), ('h2', 'READY', false),"
                              " ('h3', 'READY', true)",
                              &err),
                 0, "%s", err.msg);
    case_stop(&a);

    for (size_t i = 0; i < n; i++) {
        out[i] = recs[i];
        out[i].len = strlen(recs[i].value);
    }
    it_publish(a.in, out, n);
    case_run(&a, "cps,avc-forward,avc-apply");

    /* applied: the avc-apply group's offsets (kept with the writes) cover
     * every record */
    snprintf(sql_offsets, sizeof(sql_offsets),
             "SELECT coalesce(sum(next_offset), 0) FROM consumer_offsets WHERE group_id = $1");
    {
        char group[200];
        snprintf(group, sizeof(group), "%s-avc-apply", a.group);
        cr_assert_eq(it_wait_long(db, sql_offsets, group, (long)n, WAIT_MS), (long)n,
                     "avc-apply did not commit all %zu records; log %s", n, a.c.log);
    }

    /* the good events are applied */
    cr_expect_eq(node_get(&a, "h1", DEV "[@device-id='dev-1']", &body), 200);
    cr_expect(strstr(body, "\"status\": \"fail\""), "dev-1 not patched: %s", body);
    free(body);
    cr_expect_eq(node_get(&a, "h1", DEV "[@device-id='dev-2']", &body), 200, "dev-2 not created");
    cr_expect(strstr(body, "\"ne-state\": \"jeopardy\""), "dev-2 not replaced: %s", body);
    free(body);
    cr_expect_eq(
        node_get(&a, "h1",
                 DEV "[@device-id='dev-1']/org-openroadm-device/degree[@degree-number='2']", NULL),
        404, "degree 2 not deleted");
    cr_expect_eq(
        node_get(&a, "h1",
                 DEV "[@device-id='dev-1']/org-openroadm-device/degree[@degree-number='3']", NULL),
        200, "degree 3 went too");
    /* the refused event left nothing: all or nothing */
    cr_expect_eq(node_get(&a, "h1", DEV "[@device-id='dev-3']", NULL), 404,
                 "the refused event's first edit stayed");
    /* data sync off: the cache is as it was */
    cr_expect_eq(node_get(&a, "h2", DEV "[@device-id='dev-1']", &body), 200);
    cr_expect(strstr(body, "\"status\": \"success\""), "h2 changed: %s", body);
    free(body);

    /* every bad event dead-lettered, with its reason, once */
    ndl = it_read_topic(a.dlq, ndlq, WAIT_MS, &dl);
    cr_expect_eq(ndl, ndlq, "%zu dead letters, expected %zu; log %s", ndl, ndlq, a.c.log);
    for (size_t j = 0; j < ndlq; j++) {
        int found = 0;
        for (size_t i = 0; i < ndl && !found; i++) {
            char reason[1024], role[64];
            found = dl[i].key && strcmp(dl[i].key, dlq[j].key) == 0 &&
                    it_record_header(&dl[i], "dlq_reason", reason, sizeof(reason)) &&
                    strstr(reason, dlq[j].reason) &&
                    it_record_header(&dl[i], "dlq_role", role, sizeof(role)) &&
                    strcmp(role, "avc-apply") == 0;
        }
        cr_expect(found, "no dead letter for %s with reason '%s'", dlq[j].key, dlq[j].reason);
    }

    /* and every event forwarded unchanged, bad ones included */
    nfw = it_read_topic(a.out, n, WAIT_MS, &fw);
    cr_expect_eq(nfw, n, "%zu forwarded of %zu", nfw, n);
    for (size_t i = 0; i < nfw && i < n; i++) {
        char source[64];
        cr_expect_str_eq(fw[i].value, recs[i].value, "record %zu changed", i);
        cr_expect_str_eq(fw[i].key, recs[i].key, "record %zu's key", i);
        cr_expect_str_eq(it_record_header(&fw[i], "ce_source", source, sizeof(source)),
                         recs[i].headers[1], "record %zu's headers", i);
    }
    it_records_free(fw, nfw);
    it_records_free(dl, ndl);
    ncmp_db_close(db);
    case_stop(&a);
    cr_assert_eq(it_scratch_db_drop(a.c.dbname), 0);
}

/* The DMI stub's --avc-events: N events round robin over the handles, as
 * avc-apply takes them (a DMI plugin's source, keyed by handle, a patch of
 * the device's status). */
Test(avc_apply, the_dmi_stub_publishes_avc_events, .timeout = 120)
{
    char topic[128], flag_topic[200], log[512];
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    it_record *recs = NULL;
    size_t n;
    pid_t pid;

    it_unique(topic, sizeof(topic), "avc-stub");
    it_create_topic(topic, 1);
    snprintf(flag_topic, sizeof(flag_topic), "--avc-topic=%s", topic);
    snprintf(log, sizeof(log), "%s/%s.log", dir && *dir ? dir : "/tmp", topic);
    {
        const char *argv[] = {NCMP_DMISTUB_PATH, "--port",   "0",
                              "--kafka",         it_kafka(), flag_topic,
                              "--avc-events",    "5",        "--avc-handle",
                              "ch-1,ch/2",       NULL};
        pid = it_spawn(NCMP_DMISTUB_PATH, log, argv);
    }
    n = it_read_topic(topic, 5, 60000, &recs);
    cr_assert_eq(n, 5, "%zu AVC events; log %s", n, log);
    for (size_t i = 0; i < n; i++) {
        char source[64];
        const char *key = i % 2 ? "ch/2" : "ch-1";
        const char *status = (i / 2) % 2 ? "success" : "fail";
        char want[256];
        cr_expect_str_eq(recs[i].key, key);
        cr_expect_str_eq(it_record_header(&recs[i], "ce_source", source, sizeof(source)),
                         "ONAP-DMI-PLUGIN");
        snprintf(want, sizeof(want), "\"status\":\"%s\"", status);
        cr_expect(strstr(recs[i].value, want), "event %zu: %s", i, recs[i].value);
        cr_expect(
            strstr(recs[i].value, i % 2 ? "openroadm-device=ch%2F2\"" : "openroadm-device=ch-1\""),
            "event %zu: %s", i, recs[i].value);
    }
    it_records_free(recs, n);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

#define PATCH_LEAF(dev, leaf, value)                                                               \
    WRAP("{\"edit-id\":\"1\",\"operation\":\"patch\",\"target\":\"/openroadm-devices/"             \
         "openroadm-device=" dev "\",\"value\":{\"openroadm-device\":[{\"device-id\":\"" dev       \
         "\",\"" leaf "\":\"" value "\"}]}}")

/* A batch of patches only is merged with one statement: a node patched
 * twice keeps the later value of a leaf and both leaves; refusals found
 * before the write are dead-lettered in place. A patch of a node not in
 * the tree sends its batch back one event at a time: the culprit alone is
 * dead-lettered, the others are applied. */
Test(avc_apply, a_batch_of_patches_is_one_statement, .timeout = 240)
{
    static const it_outgoing first[] = {
        {"h1", PATCH_LEAF("dev-1", "status", "fail"), 0, DMI},
        {"h2", PATCH_LEAF("dev-1", "ne-state", "jeopardy"), 0, DMI},
        {"h1", PATCH_LEAF("dev-1", "ne-state", "unmanaged"), 0, DMI},
        {"nobody", PATCH_LEAF("dev-1", "status", "fail"), 0, DMI},
        {"h1", PATCH_LEAF("dev-1", "status", "success"), 0, DMI},
        {"h2", PATCH_LEAF("dev-1", "reason", "fast"), 0, DMI},
    };
    static const it_outgoing second[] = {
        {"h2", PATCH_LEAF("dev-1", "status", "fail"), 0, DMI},
        {"h1", PATCH_LEAF("ghost", "status", "fail"), 0, DMI},
        {"h1", PATCH_LEAF("dev-1", "ne-state", "inservice"), 0, DMI},
    };
    const size_t n1 = sizeof(first) / sizeof(first[0]), n2 = sizeof(second) / sizeof(second[0]);
    it_outgoing out[8];
    avc_case a = {0};
    char zip[1024], group[200], *body = NULL;
    static const char sql_offsets[] =
        "SELECT coalesce(sum(next_offset), 0) FROM consumer_offsets WHERE group_id = $1";
    it_record *dl = NULL;
    size_t ndl;
    ncmp_db *db;
    ncmp_err err;

    it_unique(a.in, sizeof(a.in), "avc-batch");
    snprintf(a.out, sizeof(a.out), "%s-out", a.in);
    snprintf(a.dlq, sizeof(a.dlq), "%s-dlq", a.in);
    snprintf(a.group, sizeof(a.group), "g-%s", a.in);
    snprintf(group, sizeof(group), "%s-avc-apply", a.group);
    it_create_topic(a.in, 1);
    it_create_topic(a.out, 1);
    it_create_topic(a.dlq, 1);
    it_scratch_db_create("it_avc", a.c.dbname, sizeof(a.c.dbname), a.c.dburl, sizeof(a.c.dburl));
    case_run(&a, "cps");
    snprintf(zip, sizeof(zip), "%s/tests/data/openroadm/model.zip", NCMP_SOURCE_DIR);
    expect_call(&a, "POST", "/cps/api/v2/dataspaces?dataspace-name=NFP-Operational", NULL, NULL,
                201);
    expect_call(&a, "POST", OPS "/schema-sets?schema-set-name=or", zip, NULL, 201);
    cache_make(&a, "h1");
    cache_make(&a, "h2");
    cr_assert_eq(ncmp_db_open(&db, a.c.dburl, NULL, 5, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_db_exec(db,
                              "INSERT INTO cm_handle (id, state, data_sync_enabled) VALUES"
                              " ('h1', 'READY', true), ('h2', 'READY', true)",
                              &err),
                 0, "%s", err.msg);
    case_stop(&a);

    for (size_t i = 0; i < n1; i++) {
        out[i] = first[i];
        out[i].len = strlen(first[i].value);
    }
    it_publish(a.in, out, n1);
    case_run(&a, "cps,avc-apply");
    cr_assert_eq(it_wait_long(db, sql_offsets, group, (long)n1, WAIT_MS), (long)n1,
                 "avc-apply did not commit the first %zu records; log %s", n1, a.c.log);
    cr_expect_eq(node_get(&a, "h1", DEV "[@device-id='dev-1']", &body), 200);
    cr_expect(strstr(body, "\"status\": \"success\"") &&
                  strstr(body, "\"ne-state\": \"unmanaged\""),
              "h1's dev-1: %s", body);
    free(body);
    cr_expect_eq(node_get(&a, "h2", DEV "[@device-id='dev-1']", &body), 200);
    cr_expect(strstr(body, "\"ne-state\": \"jeopardy\"") && strstr(body, "\"reason\": \"fast\""),
              "h2's dev-1: %s", body);
    free(body);

    for (size_t i = 0; i < n2; i++) {
        out[i] = second[i];
        out[i].len = strlen(second[i].value);
    }
    it_publish(a.in, out, n2);
    cr_assert_eq(it_wait_long(db, sql_offsets, group, (long)(n1 + n2), WAIT_MS), (long)(n1 + n2),
                 "avc-apply did not commit all records; log %s", a.c.log);
    cr_expect_eq(node_get(&a, "h2", DEV "[@device-id='dev-1']", &body), 200);
    cr_expect(strstr(body, "\"status\": \"fail\""), "h2's dev-1: %s", body);
    free(body);
    cr_expect_eq(node_get(&a, "h1", DEV "[@device-id='dev-1']", &body), 200);
    cr_expect(strstr(body, "\"ne-state\": \"inservice\""), "h1's dev-1: %s", body);
    free(body);

    /* two dead letters: the unknown handle and the ghost */
    ndl = it_read_topic(a.dlq, 3, 5000, &dl);
    cr_expect_eq(ndl, 2, "%zu dead letters; log %s", ndl, a.c.log);
    for (size_t i = 0; i < ndl; i++) {
        char reason[1024];
        cr_expect(
            it_record_header(&dl[i], "dlq_reason", reason, sizeof(reason)) &&
                (strstr(reason, "unknown CM handle") || strstr(reason, "404 DataNode not found")),
            "%s", reason);
    }
    it_records_free(dl, ndl);
    ncmp_db_close(db);
    case_stop(&a);
    cr_assert_eq(it_scratch_db_drop(a.c.dbname), 0);
}
