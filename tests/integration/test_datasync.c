/*
 * NCMP's data sync end to end on real services: handles registered
 * through Kafka (ncmp-loadgen) against the DMI stub, which gives them the
 * Open ROADM model and one device each (tests/data/openroadm) -> ncmpd
 * (registration, module-sync, lcm-relay, rest, cps, data-sync) -> READY
 * -> PUT data-sync -> the cache in the CPS store (NFP-Operational), read
 * back through NCMP's operational datastore and through CPS's API;
 * lifecycle events on Kafka.
 *
 * Each test runs its own DMI stub, ncmpd, scratch database and topics.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it_util.h"
#include "ncmp_buf.h"

#define PARTITIONS  2
#define WAIT_MS     60000
#define NFLAGS      17
#define DEVICE_ROWS 87 /* openroadm-devices and the 86 nodes of the device */
#define ROOT        "openroadm-devices-inventory-v2:openroadm-devices/openroadm-device"

typedef struct ds_case {
    char topic[128];
    char lcm_topic[160];
    char dbname[96];
    char dburl[512];
    char log[512];
    char stub_log[512];
    char port_file[512];
    char flag[NFLAGS][640];
    ncmp_db *db;
    pid_t pid, pid2, stub;
    int stub_port, http_port;
    char dmi[64];
} ds_case;

static ds_case the_case;
static int the_case_live;

static void ds_cleanup(void)
{
    ds_case *c = &the_case;

    if (!the_case_live)
        return;
    the_case_live = 0;
    it_kill_wait(&c->pid);
    it_kill_wait(&c->pid2);
    it_kill_wait(&c->stub);
    ncmp_db_close(c->db);
    c->db = NULL;
    it_scratch_db_drop(c->dbname);
}

TestSuite(data_sync, .fini = ds_cleanup, .timeout = 240);

/* --- the DMI stub with the Open ROADM data --------------------------------- */

static void stub_start(ds_case *c, const char *const *extra)
{
    const char *argv[40];
    char model[512], tree[512];
    size_t n = 0;
    long waited = 0;

    snprintf(model, sizeof(model), "%s/tests/data/openroadm/model.zip", NCMP_SOURCE_DIR);
    snprintf(tree, sizeof(tree), "%s/tests/data/openroadm/device.json", NCMP_SOURCE_DIR);
    unlink(c->port_file);
    argv[n++] = NCMP_DMISTUB_PATH;
    argv[n++] = "--port";
    argv[n++] = "0";
    argv[n++] = "--port-file";
    argv[n++] = c->port_file;
    argv[n++] = "--module-references-delay-ms";
    argv[n++] = "10";
    argv[n++] = "--module-resources-delay-ms";
    argv[n++] = "10";
    argv[n++] = "--data-model";
    argv[n++] = model;
    argv[n++] = "--data-tree";
    argv[n++] = tree;
    argv[n++] = "--data-root";
    argv[n++] = ROOT;
    for (const char *const *e = extra; e && *e && n < 38; e++)
        argv[n++] = *e;
    argv[n] = NULL;
    c->stub = it_spawn(NCMP_DMISTUB_PATH, c->stub_log, argv);
    for (;;) {
        FILE *f = fopen(c->port_file, "r");
        int p = 0;
        if (f) {
            if (fscanf(f, "%d", &p) != 1)
                p = 0;
            fclose(f);
        }
        if (p > 0) {
            c->stub_port = p;
            break;
        }
        cr_assert_lt(waited, 20000, "the DMI stub did not start; log %s", c->stub_log);
        it_sleep_ms(20);
        waited += 20;
    }
    snprintf(c->dmi, sizeof(c->dmi), "http://127.0.0.1:%d", c->stub_port);
}

/* --- HTTP ------------------------------------------------------------------- */

typedef struct reply {
    long status;
    ncmp_buf body;
    json_object *json; /* NULL when the body is not JSON */
} reply;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

static void reply_free(reply *r)
{
    ncmp_buf_free(&r->body);
    json_object_put(r->json);
    memset(r, 0, sizeof(*r));
}

/* `method` on `url` (absolute); the reply is the caller's. */
static void http(const char *method, const char *url, reply *r)
{
    CURL *curl = curl_easy_init();

    memset(r, 0, sizeof(*r));
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
    cr_assert_eq(curl_easy_perform(curl), CURLE_OK, "%s %s", method, url);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_cleanup(curl);
    if (!r->body.data)
        ncmp_buf_append_str(&r->body, "");
    r->json = json_tokener_parse(r->body.data);
}

/* `method` on ncmpd's `path`. */
static void call(ds_case *c, const char *method, const char *path, reply *r)
{
    char url[2048];

    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", c->http_port, path);
    http(method, url, r);
}

static void set_sync(ds_case *c, const char *id, const char *value, long expect)
{
    char path[512];
    reply r;

    snprintf(path, sizeof(path), "/ncmp/v1/ch/%s/data-sync?dataSyncEnabled=%s", id, value);
    call(c, "PUT", path, &r);
    cr_assert_eq(r.status, expect, "PUT %s: %ld %s", path, r.status, r.body.data);
    reply_free(&r);
}

/* A counter of the stub (GET /stub/stats). */
static long stub_stat(ds_case *c, const char *key)
{
    char url[128];
    reply r;
    json_object *v;
    long n = -1;

    snprintf(url, sizeof(url), "%s/stub/stats", c->dmi);
    http("GET", url, &r);
    if (r.json && json_object_object_get_ex(r.json, key, &v))
        n = json_object_get_int64(v);
    reply_free(&r);
    return n;
}

/* --- ncmpd ------------------------------------------------------------------ */

static ds_case *case_start(const char *name, const char *const *stub_extra,
                           const char *const *ncmpd_extra, long handles)
{
    ds_case *c = &the_case;
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    const char *args[NFLAGS + 8];
    char handles_text[16], path[256];
    const char *gen[] = {NCMP_LOADGEN_PATH, "register",   "--quiet", "--topic", c->topic,
                         "--handles",       handles_text, "--dmi",   c->dmi,    "--bootstrap",
                         it_kafka(),        NULL};
    size_t n = 0;
    pid_t pid;
    int status;
    ncmp_err err;

    memset(c, 0, sizeof(*c));
    dir = dir && *dir ? dir : "/tmp";
    it_unique(c->topic, sizeof(c->topic), name);
    snprintf(c->lcm_topic, sizeof(c->lcm_topic), "%s-lcm", c->topic);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir, c->topic);
    snprintf(c->stub_log, sizeof(c->stub_log), "%s/%s-stub.log", dir, c->topic);
    snprintf(c->port_file, sizeof(c->port_file), "%s/%s-stub.port", dir, c->topic);
    it_scratch_db_create("it_ds", c->dbname, sizeof(c->dbname), c->dburl, sizeof(c->dburl));
    the_case_live = 1;
    stub_start(c, stub_extra);
    c->http_port = it_free_port();
    snprintf(c->flag[0], sizeof(c->flag[0]), "--db.url=%s", c->dburl);
    snprintf(c->flag[1], sizeof(c->flag[1]), "--registration.topic=%s", c->topic);
    snprintf(c->flag[2], sizeof(c->flag[2]), "--registration.response-topic=%s-response", c->topic);
    snprintf(c->flag[3], sizeof(c->flag[3]), "--lcm.topic=%s", c->lcm_topic);
    snprintf(c->flag[4], sizeof(c->flag[4]), "--kafka.group.id=g-%s", c->topic);
    snprintf(c->flag[5], sizeof(c->flag[5]), "--module-sync.topic=%s-ms", c->topic);
    snprintf(c->flag[6], sizeof(c->flag[6]),
             "--roles=registration,module-sync,lcm-relay,rest,cps,data-sync");
    snprintf(c->flag[7], sizeof(c->flag[7]), "--http.host=127.0.0.1");
    snprintf(c->flag[8], sizeof(c->flag[8]), "--http.port=%d", c->http_port);
    snprintf(c->flag[9], sizeof(c->flag[9]), "--dmi.response-timeout-ms=10000");
    snprintf(c->flag[10], sizeof(c->flag[10]), "--log.level=debug");
    snprintf(c->flag[11], sizeof(c->flag[11]), "--kafka.topic-partitions=%d", PARTITIONS);
    snprintf(c->flag[12], sizeof(c->flag[12]), "--data-sync.sweep-interval-ms=1000");
    snprintf(c->flag[13], sizeof(c->flag[13]), "--kafka.instance-id=%s", c->topic);
    snprintf(c->flag[14], sizeof(c->flag[14]), "--data-sync.retry-initial-ms=500");
    snprintf(c->flag[15], sizeof(c->flag[15]), "--data-sync.retry-max-ms=1000");
    snprintf(c->flag[16], sizeof(c->flag[16]), "--module-sync.sweep-interval-ms=500");
    snprintf(path, sizeof(path), "%s-ms", c->topic);
    it_create_topic(path, PARTITIONS);
    snprintf(path, sizeof(path), "%s-response", c->topic);
    it_create_topic(path, PARTITIONS);
    it_create_topic(c->topic, PARTITIONS);
    it_create_topic(c->lcm_topic, PARTITIONS);
    for (size_t i = 0; i < NFLAGS; i++)
        args[n++] = c->flag[i];
    for (const char *const *e = ncmpd_extra; e && *e && n < NFLAGS + 7; e++)
        args[n++] = *e;
    args[n] = NULL;
    c->pid = it_ncmpd_start(c->log, args);
    cr_assert_eq(ncmp_db_open(&c->db, c->dburl, NULL, 10, &err), 0, "%s", err.msg);
    snprintf(handles_text, sizeof(handles_text), "%ld", handles);
    pid = it_spawn(NCMP_LOADGEN_PATH, c->log, gen);
    status = it_wait_exit(pid, 60000);
    cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "ncmp-loadgen failed; log %s", c->log);
    cr_assert_eq(it_wait_long(c->db, "SELECT count(*) FROM cm_handle WHERE state = 'READY'", NULL,
                              handles, WAIT_MS),
                 handles, "every handle READY; log %s", c->log);
    return c;
}

static void case_stop(ds_case *c)
{
    int status;

    if (c->pid2 > 0) {
        status = it_ncmpd_stop(c->pid2);
        c->pid2 = 0;
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the second ncmpd stops cleanly");
    }
    status = it_ncmpd_stop(c->pid);

    c->pid = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "ncmpd stops cleanly; log %s", c->log);
    it_kill_wait(&c->stub);
    ncmp_db_close(c->db);
    c->db = NULL;
    the_case_live = 0;
    cr_assert_eq(it_scratch_db_drop(c->dbname), 0);
}

static long sync_state_is(ds_case *c, const char *id, const char *state, int timeout_ms)
{
    char sql[256];

    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM cm_handle WHERE id = $1 AND operational_sync_state = '%s'",
             state);
    return it_wait_long(c->db, sql, id, 1, timeout_ms);
}

static long cache_rows(ds_case *c, const char *id)
{
    const char *params[1] = {id};
    return it_query_long(c->db,
                         "SELECT count(*) FROM fragment f JOIN anchor a ON a.id = f.anchor_id"
                         " JOIN dataspace d ON d.id = a.dataspace_id"
                         " WHERE d.name = 'NFP-Operational' AND a.name = $1",
                         1, params);
}

static long anchors_of(ds_case *c, const char *id)
{
    const char *params[1] = {id};
    return it_query_long(c->db,
                         "SELECT count(*) FROM anchor a JOIN dataspace d ON d.id = a.dataspace_id"
                         " WHERE d.name = 'NFP-Operational' AND a.name = $1",
                         1, params);
}

/* Data sync on for all `n` handles at once, as PUT data-sync sets it
 * (the trigger queues them). */
static void enable_all(ds_case *c, long n)
{
    cr_assert_eq(it_query_long(c->db,
                               "WITH u AS (UPDATE cm_handle SET data_sync_enabled = true,"
                               " operational_sync_state = 'UNSYNCHRONIZED' RETURNING 1)"
                               " SELECT count(*) FROM u",
                               0, NULL),
                 n);
}

/* The handles SYNCHRONIZED once `n` are, or when WAIT_MS is over. */
static long synced_within(ds_case *c, long n)
{
    return it_wait_long(
        c->db, "SELECT count(*) FROM cm_handle WHERE operational_sync_state = 'SYNCHRONIZED'", NULL,
        n, WAIT_MS);
}

/* The device-id of the one device under `devices` (a JSON object holding
 * openroadm-device), or "". */
static const char *device_id(json_object *devices)
{
    json_object *list, *dev, *id;

    if (!devices || !json_object_object_get_ex(devices, "openroadm-device", &list) ||
        !json_object_is_type(list, json_type_array) || json_object_array_length(list) != 1)
        return "";
    dev = json_object_array_get_idx(list, 0);
    if (!json_object_object_get_ex(dev, "device-id", &id))
        return "";
    return json_object_get_string(id);
}

/* The lifecycle events of handle `id` on the case's topic with
 * dataSyncEnabled in their old and new values: "false>true" etc., joined
 * by ',' in topic order (one partition per key keeps it). */
static void sync_events(ds_case *c, const char *id, size_t at_least, ncmp_buf *out)
{
    it_record *recs = NULL;
    size_t n = it_read_topic(c->lcm_topic, at_least, 20000, &recs);

    for (size_t i = 0; i < n; i++) {
        json_object *doc = json_tokener_parse(recs[i].value), *ev, *o, *nv, *ov, *ts;
        const char *type;
        if (!doc || !recs[i].key || strcmp(recs[i].key, id) != 0 ||
            !json_object_object_get_ex(doc, "event", &ev) ||
            !json_object_object_get_ex(doc, "eventType", &ts)) {
            json_object_put(doc);
            continue;
        }
        type = json_object_get_string(ts);
        if (json_object_object_get_ex(ev, "oldValues", &o) &&
            json_object_object_get_ex(o, "dataSyncEnabled", &ov) &&
            json_object_object_get_ex(ev, "newValues", &o) &&
            json_object_object_get_ex(o, "dataSyncEnabled", &nv) &&
            strstr(type, ".update") != NULL) {
            ncmp_buf_appendf(out, "%s%s>%s", out->len ? "," : "",
                             json_object_get_boolean(ov) ? "true" : "false",
                             json_object_get_boolean(nv) ? "true" : "false");
        }
        json_object_put(doc);
    }
    it_records_free(recs, n);
    if (!out->data)
        ncmp_buf_append_str(out, "");
}

/* --- tests ------------------------------------------------------------------ */

/* The rows of the operational cache (not the CPS store's other data, such
 * as the subscriptions root of migration 0010). */
#define SQL_CACHE_ROWS                                                                             \
    "SELECT count(*) FROM fragment f JOIN anchor a ON a.id = f.anchor_id"                          \
    " JOIN dataspace d ON d.id = a.dataspace_id WHERE d.name = 'NFP-Operational'"

Test(data_sync, enable_fills_cache_and_reads_answer_from_it)
{
    ds_case *c = case_start("ds-enable", NULL, NULL, 2);
    char path[512], want_id[64];
    json_object *state, *ds, *op, *v, *top;
    reply r;
    ncmp_buf events = NCMP_BUF_INIT;

    cr_assert_eq(anchors_of(c, "ch-1"), 0, "no cache before data sync");
    set_sync(c, "ch-1", "true", 200);
    cr_assert_eq(sync_state_is(c, "ch-1", "SYNCHRONIZED", WAIT_MS), 1, "ch-1 SYNCHRONIZED; log %s",
                 c->log);
    cr_assert_eq(cache_rows(c, "ch-1"), DEVICE_ROWS, "the cache holds the stub's device");
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM fragment_cache", 0, NULL), DEVICE_ROWS,
                 "the cache's rows are in the cache's partition (migration 0017)");
    cr_assert_eq(anchors_of(c, "ch-2"), 0, "ch-2 (data sync off) has no cache");
    cr_assert_eq(stub_stat(c, "dataReads"), 1, "one read of the device's root");

    /* the handle shows it, with the sync time */
    call(c, "GET", "/ncmp/v1/ch/ch-1", &r);
    cr_assert_eq(r.status, 200);
    cr_assert(json_object_object_get_ex(r.json, "state", &state));
    cr_assert(json_object_object_get_ex(state, "dataSyncEnabled", &v) &&
              json_object_get_boolean(v));
    cr_assert(json_object_object_get_ex(state, "dataSyncState", &ds) &&
                  json_object_object_get_ex(ds, "operational", &op),
              "%s", r.body.data);
    cr_assert(json_object_object_get_ex(op, "syncState", &v));
    cr_assert_str_eq(json_object_get_string(v), "SYNCHRONIZED");
    cr_assert(json_object_object_get_ex(op, "lastSyncTime", &v), "%s", r.body.data);
    reply_free(&r);

    /* NCMP's operational datastore: the device with its descendants */
    snprintf(want_id, sizeof(want_id), "C201-7-1A-%s", "ch-1");
    call(c, "GET",
         "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:operational?resourceIdentifier=/"
         "&include-descendants=true",
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert(json_object_object_get_ex(r.json, "owbiv2:openroadm-devices", &top), "%s",
              r.body.data);
    cr_assert_str_eq(device_id(top), want_id);
    reply_free(&r);

    /* by alternate id, without descendants: the node alone */
    call(c, "GET",
         "/ncmp/v1/ch/%2FSubNetwork%3DEurope%2FSubNetwork%3DIreland%2FMeContext%3DMyRadioNode1"
         "%2FManagedElement%3DMyManagedElement1/data/ds/ncmp-datastore:operational"
         "?resourceIdentifier=/openroadm-devices",
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert(json_object_object_get_ex(r.json, "owbiv2:openroadm-devices", &top), "%s",
              r.body.data);
    cr_assert(!json_object_object_get_ex(top, "openroadm-device", NULL), "%s", r.body.data);
    reply_free(&r);

    /* CPS's own read of the same anchor */
    snprintf(path, sizeof(path),
             "/cps/api/v2/dataspaces/NFP-Operational/anchors/ch-1/node?xpath=/openroadm-devices"
             "&descendants=all");
    call(c, "GET", path, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert(json_object_is_type(r.json, json_type_array) && json_object_array_length(r.json) == 1,
              "%s", r.body.data);
    cr_assert(json_object_object_get_ex(json_object_array_get_idx(r.json, 0),
                                        "owbiv2:openroadm-devices", &top),
              "%s", r.body.data);
    cr_assert_str_eq(device_id(top), want_id);
    reply_free(&r);

    /* a handle without a cache: 404 */
    call(c, "GET", "/ncmp/v1/ch/ch-2/data/ds/ncmp-datastore:operational?resourceIdentifier=/", &r);
    cr_assert_eq(r.status, 404, "%s", r.body.data);
    reply_free(&r);

    /* the lifecycle event of the switch (none for SYNCHRONIZED, as NCMP) */
    sync_events(c, "ch-1", 5, &events);
    cr_assert_str_eq(events.data, "false>true");
    ncmp_buf_free(&events);
    case_stop(c);
}

/* A first sync writes whole trees: the planner hears of them (ANALYZE of
 * fragment once the nodes written pass autovacuum's threshold), as it
 * does for the CPS API's writes. */
Test(data_sync, synced_trees_are_analyzed)
{
    ds_case *c = case_start("ds-analyzed", NULL, NULL, 1);
    const char *sql = "SELECT count(*) FROM pg_stat_user_tables WHERE relname = 'fragment_cache'"
                      " AND last_analyze IS NOT NULL";
    long analyzed = 0;

    cr_assert_eq(it_query_long(c->db, sql, 0, NULL), 0,
                 "a new database has never analyzed fragment");
    set_sync(c, "ch-1", "true", 200);
    cr_assert_eq(sync_state_is(c, "ch-1", "SYNCHRONIZED", WAIT_MS), 1, "ch-1 SYNCHRONIZED; log %s",
                 c->log);
    /* 87 nodes: past the threshold of a table never analyzed (50) */
    for (int i = 0; i < 150 && !analyzed; i++) {
        it_sleep_ms(100);
        analyzed = it_query_long(c->db, sql, 0, NULL);
    }
    cr_expect_eq(analyzed, 1,
                 "a device (87 nodes) synchronized, fragment not analyzed in 15 s; log %s", c->log);
    case_stop(c);
}

Test(data_sync, disable_drops_cache_and_says_so)
{
    ds_case *c = case_start("ds-disable", NULL, NULL, 1);
    ncmp_buf events = NCMP_BUF_INIT;
    reply r;

    set_sync(c, "ch-1", "true", 200);
    cr_assert_eq(sync_state_is(c, "ch-1", "SYNCHRONIZED", WAIT_MS), 1, "log %s", c->log);
    cr_assert_eq(cache_rows(c, "ch-1"), DEVICE_ROWS);
    set_sync(c, "ch-1", "true", 200); /* the same again: nothing changes, no event */
    set_sync(c, "ch-1", "false", 200);
    cr_assert_eq(sync_state_is(c, "ch-1", "NONE_REQUESTED", 1000), 1);
    cr_assert_eq(cache_rows(c, "ch-1"), 0, "the cache is dropped with the switch");
    cr_assert_eq(anchors_of(c, "ch-1"), 0);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM data_sync_work", 0, NULL), 0);
    call(c, "GET", "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:operational?resourceIdentifier=/", &r);
    cr_assert_eq(r.status, 404, "%s", r.body.data);
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/ch-1", &r);
    cr_assert(strstr(r.body.data, "\"dataSyncEnabled\":false") &&
                  strstr(r.body.data, "\"syncState\":\"NONE_REQUESTED\"") &&
                  !strstr(r.body.data, "lastSyncTime"),
              "%s", r.body.data);
    reply_free(&r);
    sync_events(c, "ch-1", 4, &events);
    cr_assert_str_eq(events.data, "false>true,true>false");
    ncmp_buf_free(&events);
    case_stop(c);
}

Test(data_sync, refusals_as_ncmp)
{
    ds_case *c = case_start("ds-refuse", NULL, NULL, 1);
    reply r;

    set_sync(c, "no-such-handle", "true", 404);
    set_sync(c, "ch-1", "maybe", 400);
    call(c, "PUT", "/ncmp/v1/ch/ch-1/data-sync", &r);
    cr_assert_eq(r.status, 400, "a missing dataSyncEnabled: %s", r.body.data);
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:passthrough-running/query?cps-path=/a",
         &r);
    cr_assert_eq(r.status, 400, "%s", r.body.data);
    cr_assert(strstr(r.body.data, "ncmp-datastore:passthrough-running is not supported"), "%s",
              r.body.data);
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/nope/data/ds/ncmp-datastore:operational/query?cps-path=/a", &r);
    cr_assert_eq(r.status, 404, "%s", r.body.data);
    reply_free(&r);
    call(c, "POST", "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:operational?resourceIdentifier=/", &r);
    cr_assert_eq(r.status, 400, "no writes to the cache: %s", r.body.data);
    reply_free(&r);
    /* not READY: NCMP's state mismatch */
    cr_assert_eq(it_query_long(c->db,
                               "UPDATE cm_handle SET state = 'LOCKED' WHERE id = 'ch-1'"
                               " RETURNING 1",
                               0, NULL),
                 1);
    set_sync(c, "ch-1", "true", 500);
    cr_assert_eq(
        it_query_long(c->db, "SELECT count(*) FROM cm_handle WHERE data_sync_enabled", 0, NULL), 0);
    case_stop(c);
}

Test(data_sync, query_by_cps_path)
{
    ds_case *c = case_start("ds-query", NULL, NULL, 1);
    json_object *node, *v, *kids;
    reply r;

    set_sync(c, "ch-1", "true", 200);
    cr_assert_eq(sync_state_is(c, "ch-1", "SYNCHRONIZED", WAIT_MS), 1, "log %s", c->log);
    call(c, "GET",
         "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:operational/query"
         "?cps-path=//degree%5B@degree-number=1%5D&include-descendants=true",
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert(json_object_is_type(r.json, json_type_array) && json_object_array_length(r.json) == 1,
              "%s", r.body.data);
    node = json_object_array_get_idx(r.json, 0);
    cr_assert(json_object_object_get_ex(node, "xpath", &v));
    cr_assert_str_eq(json_object_get_string(v),
                     "/openroadm-devices/openroadm-device[@device-id='C201-7-1A-ch-1']"
                     "/org-openroadm-device/degree[@degree-number='1']");
    cr_assert(json_object_object_get_ex(node, "anchorName", &v));
    cr_assert_str_eq(json_object_get_string(v), "ch-1");
    cr_assert(json_object_object_get_ex(node, "leaves", &v) &&
              json_object_object_get_ex(v, "max-wavelengths", NULL));
    cr_assert(json_object_object_get_ex(node, "childDataNodes", &kids) &&
                  json_object_array_length(kids) == 2,
              "its circuit pack and connection port: %s", r.body.data);
    reply_free(&r);
    /* without descendants: the match alone */
    call(c, "GET",
         "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:operational/query"
         "?cps-path=//degree%5B@degree-number=1%5D",
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    node = json_object_array_get_idx(r.json, 0);
    cr_assert(json_object_object_get_ex(node, "childDataNodes", &kids) &&
                  json_object_array_length(kids) == 0,
              "%s", r.body.data);
    reply_free(&r);
    call(c, "GET",
         "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:operational/query?cps-path=//no-such-node", &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body.data, "[]");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:operational/query?cps-path=%5B%5B", &r);
    cr_assert_eq(r.status, 400, "%s", r.body.data);
    reply_free(&r);
    case_stop(c);
}

Test(data_sync, failed_read_backs_off_then_syncs)
{
    /* the first two reads of the device's root answer 500 */
    const char *stub_extra[] = {"--data-error-reads", "2", NULL};
    ds_case *c = case_start("ds-fail", stub_extra, NULL, 1);

    set_sync(c, "ch-1", "true", 200);
    cr_assert_eq(it_wait_long(c->db,
                              "SELECT count(*) FROM data_sync_work WHERE handle_id = $1"
                              " AND attempts >= 1",
                              "ch-1", 1, WAIT_MS),
                 1, "a failed attempt is counted; log %s", c->log);
    cr_assert_eq(it_query_long(c->db,
                               "SELECT count(*) FROM cm_handle WHERE id = 'ch-1'"
                               " AND operational_sync_state = 'UNSYNCHRONIZED'",
                               0, NULL),
                 1, "still UNSYNCHRONIZED after a failed read");
    cr_assert_eq(cache_rows(c, "ch-1"), 0, "nothing cached from a failed read");
    cr_assert_eq(sync_state_is(c, "ch-1", "SYNCHRONIZED", WAIT_MS), 1, "then synced; log %s",
                 c->log);
    cr_assert_eq(stub_stat(c, "dataReads"), 3, "two failed reads, then the good one");
    cr_assert_eq(cache_rows(c, "ch-1"), DEVICE_ROWS);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM data_sync_work", 0, NULL), 0);
    case_stop(c);
}

Test(data_sync, disable_while_reading_leaves_nothing)
{
    /* reads take 3 s: the switch goes off while they are in flight */
    const char *stub_extra[] = {"--read-delay-ms", "3000", NULL};
    ds_case *c = case_start("ds-race", stub_extra, NULL, 1);
    long waited = 0;

    set_sync(c, "ch-1", "true", 200);
    while (stub_stat(c, "dataReads") < 1) {
        cr_assert_lt(waited, WAIT_MS, "the read never reached the stub; log %s", c->log);
        it_sleep_ms(50);
        waited += 50;
    }
    set_sync(c, "ch-1", "false", 200);
    /* the read completes and its answer reaches a writer */
    waited = 0;
    while (stub_stat(c, "waiting") > 0 && waited < 10000) {
        it_sleep_ms(100);
        waited += 100;
    }
    it_sleep_ms(1500);
    cr_assert_eq(it_query_long(c->db,
                               "SELECT count(*) FROM cm_handle WHERE id = 'ch-1'"
                               " AND operational_sync_state = 'NONE_REQUESTED'",
                               0, NULL),
                 1);
    cr_assert_eq(anchors_of(c, "ch-1"), 0, "no anchor left; log %s", c->log);
    cr_assert_eq(cache_rows(c, "ch-1"), 0, "no data left");
    cr_assert_eq(it_query_long(c->db, SQL_CACHE_ROWS, 0, NULL), 0);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM data_sync_work", 0, NULL), 0);
    cr_assert(it_file_contains(c->log, "0 handles synchronized"),
              "the answer arrived and was refused by the writer; log %s", c->log);
    case_stop(c);
}

Test(data_sync, two_processes_share_the_queue)
{
    /* two handles in flight per process at most: both must take part */
    const char *extra[] = {"--data-sync.max-in-flight=2", "--data-sync.batch-size=2", NULL};
    ds_case *c = case_start("ds-two", NULL, extra, 20);
    const char *args[NFLAGS + 8];
    char log2[600], inst[300], port[64];
    size_t n = 0;
    long done = 0;

    snprintf(log2, sizeof(log2), "%s-2.log", c->log);
    snprintf(inst, sizeof(inst), "--kafka.instance-id=%s-2", c->topic);
    snprintf(port, sizeof(port), "--http.port=%d", it_free_port());
    for (size_t i = 0; i < NFLAGS; i++)
        if (strncmp(c->flag[i], "--roles=", 8) != 0 &&
            strncmp(c->flag[i], "--http.port=", 12) != 0 &&
            strncmp(c->flag[i], "--kafka.instance-id=", 20) != 0)
            args[n++] = c->flag[i];
    args[n++] = "--roles=data-sync";
    args[n++] = inst;
    args[n++] = port;
    args[n++] = extra[0];
    args[n++] = extra[1];
    args[n] = NULL;
    c->pid2 = it_ncmpd_start(log2, args);
    enable_all(c, 20);
    done = synced_within(c, 20);
    cr_assert_eq(done, 20, "every handle synced; logs %s, %s", c->log, log2);
    cr_assert_eq(stub_stat(c, "dataReads"), 20, "each handle read once, by one of the two");
    cr_assert_eq(it_query_long(c->db, SQL_CACHE_ROWS, 0, NULL), 20 * DEVICE_ROWS);
    cr_assert(it_file_contains(c->log, "handles synchronized (87 nodes)") ||
                  it_file_contains(c->log, "handles synchronized (174 nodes)"),
              "the first process synced some; log %s", c->log);
    cr_assert(it_file_contains(log2, "handles synchronized (87 nodes)") ||
                  it_file_contains(log2, "handles synchronized (174 nodes)"),
              "the second process synced some; log %s", log2);
    case_stop(c);
}

Test(data_sync, every_writer_keeps_writing)
{
    /* small batches, a long batch wait, two writers: one waits for its
     * batch to fill while the other comes back and takes what is there */
    const char *extra[] = {"--data-sync.workers=2", "--data-sync.batch-size=3",
                           "--data-sync.batch-wait-ms=50", NULL};
    ds_case *c = case_start("ds-writers", NULL, extra, 150);
    reply r;

    enable_all(c, 150);
    cr_assert_eq(synced_within(c, 150), 150, "every handle synced; log %s", c->log);
    call(c, "GET", "/metrics", &r);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body.data, "\nncmp_data_sync_writers 2\n"),
              "both writers still run after %d batches; log %s; metrics:\n%s", 150 / 3, c->log,
              r.body.data);
    reply_free(&r);
    case_stop(c);
}

Test(data_sync, unsent_reads_are_not_failures)
{
    /* four requests in flight to the stub at most, three roots a device,
     * slow answers: most reads of ten handles claimed at once are not
     * sent. Each such handle must come back soon, as the same attempt: a
     * counted failure would wait the ten minutes of back-off asked here */
    const char *stub_extra[] = {"--read-delay-ms", "100", NULL};
    const char *extra[] = {"--dmi.max-in-flight-per-plugin=4",
                           "--data-sync.retry-initial-ms=600000", "--data-sync.retry-max-ms=600000",
                           NULL};
    ds_case *c = case_start("ds-unsent", stub_extra, extra, 10);

    enable_all(c, 10);
    cr_assert_eq(synced_within(c, 10), 10, "every handle synced without a back-off; log %s",
                 c->log);
    cr_assert(it_file_contains(c->log, "whose reads were not sent"),
              "some reads were not sent (the case tests nothing otherwise); log %s", c->log);
    cr_assert(!it_file_contains(c->log, "handles not synchronized, retried later"),
              "no read counted as failed; log %s", c->log);
    cr_assert_eq(it_query_long(c->db, SQL_CACHE_ROWS, 0, NULL), 10 * DEVICE_ROWS);
    case_stop(c);
}

Test(data_sync, a_second_sync_replaces_the_cache)
{
    /* a synced handle made UNSYNCHRONIZED again (as NCMP does when it
     * resyncs): its anchor is there already, locked and emptied, then
     * filled; an anchor made by the writer's own transaction is not */
    ds_case *c = case_start("ds-again", NULL, NULL, 2);
    const char *params[1] = {"ch-1"};
    long anchor_before;

    set_sync(c, "ch-1", "true", 200);
    cr_assert_eq(sync_state_is(c, "ch-1", "SYNCHRONIZED", WAIT_MS), 1, "log %s", c->log);
    anchor_before = it_query_long(c->db,
                                  "SELECT a.id FROM anchor a JOIN dataspace d ON d.id = "
                                  "a.dataspace_id WHERE d.name = 'NFP-Operational' AND a.name = $1",
                                  1, params);
    cr_assert_geq(anchor_before, 281474976710656L, "a cache anchor's id is in the cache's range");
    cr_assert_eq(
        it_query_long(c->db,
                      "WITH u AS (UPDATE cm_handle SET operational_sync_state ="
                      " 'UNSYNCHRONIZED' WHERE id = $1 RETURNING 1) SELECT count(*) FROM u",
                      1, params),
        1);
    cr_assert_eq(it_wait_long(c->db, "SELECT count(*) FROM data_sync_work", NULL, 0, WAIT_MS), 0,
                 "the second sync done; log %s", c->log);
    cr_assert_eq(sync_state_is(c, "ch-1", "SYNCHRONIZED", WAIT_MS), 1, "log %s", c->log);
    cr_assert_eq(stub_stat(c, "dataReads"), 2, "the device read once for each sync");
    cr_assert_eq(anchors_of(c, "ch-1"), 1, "one anchor");
    cr_assert_eq(it_query_long(c->db,
                               "SELECT a.id FROM anchor a JOIN dataspace d ON d.id = "
                               "a.dataspace_id WHERE d.name = 'NFP-Operational' AND a.name = $1",
                               1, params),
                 anchor_before, "the same anchor, emptied and filled again");
    cr_assert_eq(cache_rows(c, "ch-1"), DEVICE_ROWS, "the tree once, not twice");
    cr_assert_eq(it_query_long(c->db, SQL_CACHE_ROWS, 0, NULL), DEVICE_ROWS);
    case_stop(c);
}
