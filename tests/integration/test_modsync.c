/*
 * Module sync end to end on real services: registrations through Kafka
 * (ncmp-loadgen or hand-made requests) -> ncmpd (registration,
 * module-sync, lcm-relay) -> the DMI stub's model API -> module sets in
 * PostgreSQL, handles READY or LOCKED, lifecycle events on Kafka.
 *
 * Each test runs its own DMI stub (ephemeral port), its own ncmpd on its
 * own scratch database and its own topics.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"
#include "it_util.h"
#include "ncmp_buf.h"

#define PARTITIONS 3
#define WAIT_MS    90000
#define NFLAGS     14
#define LCM_UPDATE "org.onap.ncmp.cmhandle-lcm-event.update"

typedef struct ms_case {
    char topic[128]; /* registration */
    char ms_topic[160];
    char lcm_topic[160];
    char dbname[96];
    char dburl[512];
    char log[512];
    char stub_log[512];
    char port_file[512];
    char flag[NFLAGS][640];
    ncmp_db *db;
    pid_t pid, pid2, stub;
    int stub_port;
    char dmi[64]; /* http://127.0.0.1:<stub port> */
    long published;
} ms_case;

static ms_case the_case;
static int the_case_live;

static void ms_cleanup(void)
{
    ms_case *c = &the_case;

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

TestSuite(module_sync, .fini = ms_cleanup);

/* --- the DMI stub -------------------------------------------------------- */

/* Start the stub with `extra` flags (NULL-terminated, may be NULL) on
 * `port` (0: any). */
static void stub_start(ms_case *c, int port, const char *const *extra)
{
    const char *argv[32];
    char portarg[16];
    size_t n = 0;
    long waited = 0;

    snprintf(portarg, sizeof(portarg), "%d", port);
    unlink(c->port_file);
    argv[n++] = NCMP_DMISTUB_PATH;
    argv[n++] = "--port";
    argv[n++] = portarg;
    argv[n++] = "--port-file";
    argv[n++] = c->port_file;
    /* fast enough for tests, still not zero */
    argv[n++] = "--module-references-delay-ms";
    argv[n++] = "20";
    argv[n++] = "--module-resources-delay-ms";
    argv[n++] = "100";
    for (const char *const *e = extra; e && *e && n < 30; e++)
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

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* The stub's counters (GET /stub/stats), parsed; owned by the caller. */
static json_object *stub_stats(ms_case *c)
{
    CURL *h = curl_easy_init();
    ncmp_buf body = NCMP_BUF_INIT;
    char url[128];
    json_object *o;

    snprintf(url, sizeof(url), "%s/stub/stats", c->dmi);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    cr_assert_eq(curl_easy_perform(h), CURLE_OK, "GET %s", url);
    curl_easy_cleanup(h);
    o = json_tokener_parse(body.data ? body.data : "");
    cr_assert_not_null(o, "stub stats are JSON: %s", body.data);
    ncmp_buf_free(&body);
    return o;
}

/* A per-tag counter of the stub: `what` is "moduleReferences" or
 * "moduleResources". */
static long stub_count(json_object *stats, const char *what, const char *tag)
{
    json_object *per, *v;

    if (!json_object_object_get_ex(stats, what, &per) || !json_object_object_get_ex(per, tag, &v))
        return 0;
    return json_object_get_int64(v);
}

/* --- ncmpd ---------------------------------------------------------------- */

static ms_case *case_init(const char *name)
{
    ms_case *c = &the_case;
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    ncmp_err err;

    memset(c, 0, sizeof(*c));
    dir = dir && *dir ? dir : "/tmp";
    it_unique(c->topic, sizeof(c->topic), name);
    snprintf(c->ms_topic, sizeof(c->ms_topic), "%s-ms", c->topic);
    snprintf(c->lcm_topic, sizeof(c->lcm_topic), "%s-lcm", c->topic);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir, c->topic);
    snprintf(c->stub_log, sizeof(c->stub_log), "%s/%s-stub.log", dir, c->topic);
    snprintf(c->port_file, sizeof(c->port_file), "%s/%s-stub.port", dir, c->topic);
    it_scratch_db_create("it_ms", c->dbname, sizeof(c->dbname), c->dburl, sizeof(c->dburl));
    the_case_live = 1;
    snprintf(c->flag[0], sizeof(c->flag[0]), "--db.url=%s", c->dburl);
    snprintf(c->flag[1], sizeof(c->flag[1]), "--registration.topic=%s", c->topic);
    snprintf(c->flag[2], sizeof(c->flag[2]), "--registration.response-topic=%s-response", c->topic);
    snprintf(c->flag[3], sizeof(c->flag[3]), "--lcm.topic=%s", c->lcm_topic);
    snprintf(c->flag[4], sizeof(c->flag[4]), "--kafka.group.id=g-%s", c->topic);
    snprintf(c->flag[5], sizeof(c->flag[5]), "--module-sync.topic=%s", c->ms_topic);
    snprintf(c->flag[6], sizeof(c->flag[6]), "--roles=registration,module-sync,lcm-relay");
    snprintf(c->flag[7], sizeof(c->flag[7]), "--module-sync.retry-initial-ms=300");
    snprintf(c->flag[8], sizeof(c->flag[8]), "--module-sync.retry-max-ms=1000");
    snprintf(c->flag[9], sizeof(c->flag[9]), "--module-sync.sweep-interval-ms=200");
    snprintf(c->flag[10], sizeof(c->flag[10]), "--dmi.response-timeout-ms=5000");
    snprintf(c->flag[11], sizeof(c->flag[11]), "--module-sync.cleanup-interval-s=1");
    snprintf(c->flag[12], sizeof(c->flag[12]), "--log.level=debug");
    snprintf(c->flag[13], sizeof(c->flag[13]), "--kafka.topic-partitions=%d", PARTITIONS);
    it_create_topic(c->topic, PARTITIONS);
    it_create_topic(c->ms_topic, PARTITIONS);
    it_create_topic(c->lcm_topic, PARTITIONS);
    cr_assert_eq(ncmp_db_open(&c->db, c->dburl, NULL, 10, &err), 0, "%s", err.msg);
    return c;
}

/* Start an ncmpd with the case's flags and `extra`; `instance` names its
 * static membership (two processes need two names). */
static pid_t case_spawn(ms_case *c, const char *instance, const char *const *extra, int wait)
{
    const char *args[NFLAGS + 16];
    char inst[256];
    size_t n = 0;

    for (size_t i = 0; i < NFLAGS; i++)
        args[n++] = c->flag[i];
    snprintf(inst, sizeof(inst), "--kafka.instance-id=%s-%s", instance, c->topic);
    args[n++] = inst;
    for (const char *const *e = extra; e && *e && n < NFLAGS + 15; e++)
        args[n++] = *e;
    args[n] = NULL;
    return wait ? it_ncmpd_start(c->log, args) : it_ncmpd_spawn(c->log, args);
}

static void case_fini(ms_case *c)
{
    if (c->pid > 0) {
        int status = it_ncmpd_stop(c->pid);
        c->pid = 0;
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "ncmpd stops cleanly; log %s",
                  c->log);
    }
    if (c->pid2 > 0) {
        it_ncmpd_stop(c->pid2);
        c->pid2 = 0;
    }
    it_kill_wait(&c->stub);
    ncmp_db_close(c->db);
    c->db = NULL;
    the_case_live = 0;
    cr_assert_eq(it_scratch_db_drop(c->dbname), 0);
}

/* Register the reference workload's first `n` handles (ch-1.., tags
 * tagA..tagE round-robin) with ncmp-loadgen, against `dmi`. */
static void loadgen(ms_case *c, const char *verb, long n, long batch, const char *dmi)
{
    char handles[32], batches[32];
    const char *argv[] = {
        NCMP_LOADGEN_PATH, verb,    "--quiet", "--topic", c->topic,      "--handles", handles,
        "--batch",         batches, "--dmi",   dmi,       "--bootstrap", it_kafka(),  NULL};
    pid_t pid;
    int status;

    snprintf(handles, sizeof(handles), "%ld", n);
    snprintf(batches, sizeof(batches), "%ld", batch);
    pid = it_spawn(NCMP_LOADGEN_PATH, c->log, argv);
    status = it_wait_exit(pid, 60000);
    cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "ncmp-loadgen %s failed (status %d); log %s", verb, status, c->log);
    c->published += (n + batch - 1) / batch;
}

/* Publish one registration request (JSON with single quotes). */
static void send_request(ms_case *c, const char *body_sq)
{
    ncmp_buf body = NCMP_BUF_INIT;
    char ce_id[64];
    const char *headers[] = {"ce_specversion",
                             "1.0",
                             "ce_id",
                             ce_id,
                             "ce_source",
                             "it",
                             "ce_type",
                             "org.onap.ncmp.dmi-plugin-registration",
                             NULL};
    it_outgoing rec;

    it_unique(ce_id, sizeof(ce_id), "req");
    for (const char *p = body_sq; *p; p++)
        ncmp_buf_append_char(&body, *p == '\'' ? '"' : *p);
    rec.key = c->dmi;
    rec.value = body.data;
    rec.len = body.len;
    rec.headers = headers;
    it_publish(c->topic, &rec, 1);
    c->published++;
    ncmp_buf_free(&body);
}

static long count_where(ms_case *c, const char *cond)
{
    char sql[512];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM cm_handle WHERE %s", cond);
    return it_query_long(c->db, sql, 0, NULL);
}

/* Wait until `cond` holds for `n` handles. */
static void wait_handles(ms_case *c, const char *cond, long n)
{
    char sql[512];
    long got;

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM cm_handle WHERE %s", cond);
    got = it_wait_long(c->db, sql, NULL, n, WAIT_MS);
    cr_assert_eq(got, n, "%ld handles with %s, expected %ld; log %s", got, cond, n, c->log);
}

/* Wait until the outbox is empty: every event is on Kafka. */
static void wait_outbox(ms_case *c)
{
    cr_assert_eq(it_wait_long(c->db, "SELECT count(*) FROM lcm_outbox", NULL, 0, WAIT_MS), 0,
                 "events left in the outbox; log %s", c->log);
}

/* --- lifecycle events --------------------------------------------------- */

typedef struct lcm_counts {
    long ready;  /* updates to READY */
    long locked; /* updates to LOCKED */
    long total;
} lcm_counts;

/* Count the READY and LOCKED updates of handle `id` (or all when NULL)
 * and check every event against NCMP's schema. */
static lcm_counts read_lcm(ms_case *c, size_t at_least, const char *id, const char *old_state)
{
    it_record *recs = NULL;
    size_t n = it_read_topic(c->lcm_topic, at_least, WAIT_MS, &recs);
    lcm_counts k = {0, 0, 0};

    for (size_t i = 0; i < n; i++) {
        json_object *o = json_tokener_parse(recs[i].value), *ev, *nv, *ov, *st, *ds;
        cr_assert_not_null(o);
        if (id && strcmp(recs[i].key, id) != 0) {
            json_object_put(o);
            continue;
        }
        k.total++;
        if (json_object_object_get_ex(o, "event", &ev) &&
            json_object_object_get_ex(ev, "newValues", &nv) &&
            json_object_object_get_ex(nv, "cmHandleState", &st)) {
            const char *s = json_object_get_string(st);
            if (strcmp(s, "READY") == 0) {
                char err[512] = "";
                k.ready++;
                cr_assert(json_object_object_get_ex(nv, "dataSyncEnabled", &ds) &&
                              json_object_is_type(ds, json_type_boolean) &&
                              !json_object_get_boolean(ds),
                          "READY carries dataSyncEnabled false: %s", recs[i].value);
                cr_assert(json_object_object_get_ex(ev, "oldValues", &ov) &&
                              json_object_object_get_ex(ov, "cmHandleState", &st),
                          "READY says the old state: %s", recs[i].value);
                if (old_state)
                    cr_assert_str_eq(json_object_get_string(st), old_state, "%s", recs[i].value);
                cr_assert_eq(conformance_check_lcm(recs[i].value, recs[i].len, err, sizeof(err)), 0,
                             "%s: %s", err, recs[i].value);
            } else if (strcmp(s, "LOCKED") == 0) {
                k.locked++;
            }
        }
        json_object_put(o);
    }
    it_records_free(recs, n);
    return k;
}

/* The YANG sources module sync stored: not those of a CPS schema set
 * (the store's own, such as the notification-subscription model of
 * migration 0010, live in the same table). */
#define SQL_SOURCES                                                                                \
    "SELECT count(*) FROM yang_resource r"                                                         \
    " WHERE NOT EXISTS (SELECT 1 FROM schema_set_member m WHERE m.checksum = r.checksum)"

/* --- tests ---------------------------------------------------------------- */

/* The reference workload's tags: every handle READY, each tag's modules
 * fetched once, sources stored once, one READY event per handle. */
Test(module_sync, reference_tags_ready_with_one_fetch_per_tag, .timeout = 240)
{
    ms_case *c = case_init("ms-ref");
    static const char *const tags[] = {"tagA", "tagB", "tagC", "tagD", "tagE"};
    json_object *stats;
    lcm_counts k;

    stub_start(c, 0, NULL);
    c->pid = case_spawn(c, "a", NULL, 1);
    loadgen(c, "register", 1000, 200, c->dmi);
    wait_handles(c, "state = 'READY'", 1000);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM module_set", 0, NULL), 5);
    cr_assert_eq(it_query_long(c->db, SQL_SOURCES, 0, NULL), 1000,
                 "200 modules per tag, one revision per tag");
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM module_set_member", 0, NULL), 1000);
    cr_assert_eq(count_where(c, "module_set_id IS NULL OR module_set_id <> (SELECT s.id FROM "
                                "module_set s WHERE s.tag = cm_handle.module_set_tag)"),
                 0, "every handle points at its tag's set");
    cr_assert_eq(count_where(c, "data_sync_enabled OR operational_sync_state <> "
                                "'NONE_REQUESTED' OR lock_reason IS NOT NULL"),
                 0);
    /* every source checked: its checksum is the SHA-256 of what is stored */
    cr_assert_eq(
        it_query_long(c->db,
                      "SELECT count(*) FROM yang_resource r WHERE (length(source) <> 32768"
                      " OR namespace <> 'org:onap:cps:test:' || module_name) AND NOT"
                      " EXISTS (SELECT 1 FROM schema_set_member m WHERE m.checksum = r.checksum)",
                      0, NULL),
        0);
    stats = stub_stats(c);
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(stub_count(stats, "moduleReferences", tags[i]), 1, "%s: %s", tags[i],
                     json_object_to_json_string(stats));
        cr_assert_eq(stub_count(stats, "moduleResources", tags[i]), 1, "%s: %s", tags[i],
                     json_object_to_json_string(stats));
    }
    json_object_put(stats);
    wait_outbox(c);
    k = read_lcm(c, 2000, NULL, "ADVISED");
    cr_assert_eq(k.ready, 1000, "one READY event per handle, got %ld", k.ready);
    cr_assert_eq(k.total, 2000, "create + READY per handle, got %ld", k.total);
    case_fini(c);
}

/* A handle without a tag gets a set of its own; the sources it shares
 * with earlier ones are stored once. */
Test(module_sync, untagged_handles_get_their_own_set, .timeout = 120)
{
    ms_case *c = case_init("ms-untagged");
    char body[1024];

    stub_start(c, 0, NULL);
    c->pid = case_spawn(c, "a", NULL, 1);
    snprintf(body, sizeof(body),
             "{'dmiPlugin':'%s','createdCmHandles':[{'cmHandle':'u-1'},{'cmHandle':'u-2'},"
             "{'cmHandle':'u-3','cmHandleProperties':{'k':'v'}}]}",
             c->dmi);
    send_request(c, body);
    wait_handles(c, "state = 'READY'", 3);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM module_set WHERE handle_id IS NOT NULL",
                               0, NULL),
                 3);
    cr_assert_eq(count_where(c, "module_set_id <> (SELECT s.id FROM module_set s WHERE "
                                "s.handle_id = cm_handle.id)"),
                 0);
    /* the stub's default set: 10 modules */
    cr_assert_eq(it_query_long(c->db, SQL_SOURCES, 0, NULL), 10);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM module_set_member", 0, NULL), 30);
    case_fini(c);
}

/* The DMI plugin is down: LOCKED with the reason, retried with back-off;
 * once it is up, READY. Every transition announced. */
Test(module_sync, dmi_down_locks_then_retries_to_ready, .timeout = 180)
{
    ms_case *c = case_init("ms-down");
    int port = it_free_port();
    char dmi[64], details[1024];
    PGresult *res = NULL;
    ncmp_err err;
    lcm_counts k;

    snprintf(dmi, sizeof(dmi), "http://127.0.0.1:%d", port);
    c->pid = case_spawn(c, "a", NULL, 1);
    loadgen(c, "register", 10, 10, dmi);
    wait_handles(c, "state = 'LOCKED' AND lock_reason = 'MODULE_SYNC_FAILED'", 10);
    cr_assert_eq(ncmp_db_query(c->db, "SELECT lock_details FROM cm_handle WHERE id = 'ch-1'", 0,
                               NULL, &res, &err),
                 0, "%s", err.msg);
    snprintf(details, sizeof(details), "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    cr_assert(strncmp(details, "Attempt #", 9) == 0 && strstr(details, " failed: "), "%s", details);
    /* retried: the attempt count goes up while the DMI stays down */
    wait_handles(c, "sync_attempts >= 2", 10);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM module_sync_retry", 0, NULL), 10,
                 "each failed handle waits for its retry");
    cr_assert_eq(count_where(c, "lock_details LIKE 'Attempt #_ failed: %' OR lock_details LIKE "
                                "'Attempt #__ failed: %'"),
                 10);
    stub_start(c, port, NULL);
    wait_handles(c, "state = 'READY'", 10);
    cr_assert_eq(count_where(c, "sync_attempts <> 0"), 0);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM module_sync_retry", 0, NULL), 0,
                 "a handle READY waits for no retry");
    wait_outbox(c);
    k = read_lcm(c, 30, "ch-1", "LOCKED");
    cr_assert_eq(k.locked, 1, "ADVISED -> LOCKED once (retries keep it LOCKED)");
    cr_assert_eq(k.ready, 1);
    case_fini(c);
}

/* Invalid YANG, a garbage body, an HTTP error: LOCKED with a reason that
 * says which, retried, while the other tags go READY. */
Test(module_sync, bad_dmi_answers_lock_with_a_clear_reason, .timeout = 180)
{
    ms_case *c = case_init("ms-bad");
    const char *extra[] = {"--bad-yang-tag", "tagB", "--garbage-tag", "tagC", "--error-tag",
                           "tagD",           NULL};

    stub_start(c, 0, extra);
    c->pid = case_spawn(c, "a", NULL, 1);
    loadgen(c, "register", 20, 20, c->dmi);
    wait_handles(c, "state = 'READY'", 8); /* tagA and tagE */
    wait_handles(c,
                 "module_set_tag = 'tagB' AND lock_reason = 'MODULE_SYNC_FAILED' AND "
                 "lock_details LIKE '%not valid YANG%'",
                 4);
    wait_handles(c,
                 "module_set_tag = 'tagC' AND lock_reason = 'MODULE_SYNC_FAILED' AND "
                 "lock_details LIKE '%module resources%'",
                 4);
    wait_handles(c,
                 "module_set_tag = 'tagD' AND lock_reason = 'MODULE_SYNC_FAILED' AND "
                 "lock_details LIKE '%HTTP 500%'",
                 4);
    wait_handles(c, "state = 'LOCKED' AND sync_attempts >= 3", 12);
    cr_assert_eq(kill(c->pid, 0), 0, "ncmpd still runs");
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM module_set", 0, NULL), 2,
                 "nothing stored for a failed tag");
    case_fini(c);
}

/* Upgrade: READY -> LOCKED (MODULE_UPGRADE) -> READY on the target tag. */
Test(module_sync, upgrade_moves_handles_to_the_target_tag, .timeout = 180)
{
    ms_case *c = case_init("ms-upgrade");
    char body[512];
    lcm_counts k;

    stub_start(c, 0, NULL);
    c->pid = case_spawn(c, "a", NULL, 1);
    loadgen(c, "register", 10, 10, c->dmi);
    wait_handles(c, "state = 'READY'", 10);
    snprintf(body, sizeof(body),
             "{'dmiPlugin':'%s','upgradedCmHandles':{'cmHandles':['ch-1','ch-2'],"
             "'moduleSetTag':'tagB'}}",
             c->dmi);
    send_request(c, body);
    wait_handles(c,
                 "state = 'READY' AND module_set_tag = 'tagB' AND upgrade_module_set_tag IS "
                 "NULL AND lock_reason IS NULL",
                 3); /* ch-1 moved; ch-2 and ch-7 were on tagB already */
    cr_assert_eq(count_where(c, "id = 'ch-1' AND module_set_id = (SELECT id FROM module_set "
                                "WHERE tag = 'tagB')"),
                 1);
    wait_outbox(c);
    k = read_lcm(c, 22, "ch-1", NULL);
    cr_assert_eq(k.locked, 1, "READY -> LOCKED for the upgrade");
    cr_assert_eq(k.ready, 2, "ADVISED -> READY, then LOCKED -> READY");
    case_fini(c);
}

/* The values at `ptr` of the event of `id` number `k` (0-based, in
 * publication order) equal the JSON text `want`. */
static void expect_event_values(const it_record *recs, size_t n, const char *id, size_t k,
                                const char *ptr, const char *want)
{
    for (size_t i = 0, seen = 0; i < n; i++) {
        json_object *o, *v = NULL, *w;
        int same;

        if (strcmp(recs[i].key, id) != 0 || seen++ != k)
            continue;
        o = json_tokener_parse(recs[i].value);
        w = json_tokener_parse(want);
        cr_assert_not_null(o);
        same = json_pointer_get(o, ptr, &v) == 0 && json_object_equal(v, w);
        json_object_put(w);
        json_object_put(o);
        cr_assert(same, "%s event %zu %s: expected %s in %s", id, k, ptr, want, recs[i].value);
        return;
    }
    cr_assert_fail("%s has no event %zu", id, k);
}

/* lcm.event-schema-version=v2 (NCMP's app.lcm.events.event-schema-version):
 * every event of sync and upgrade in v2, as NCMP's PayloadFactory gives
 * them: READY names dataSyncEnabled from null to false, the READY that
 * ends an upgrade the new tag too. Every event passes the v2 schema and
 * rules (conformance_check_lcm takes the format from eventSchema). */
Test(module_sync, lcm_v2_events_of_sync_and_upgrade, .timeout = 180)
{
    static const char *const v2[] = {"--lcm.event-schema-version=v2", NULL};
    ms_case *c = case_init("ms-lcm-v2");
    it_record *recs = NULL;
    char body[512];
    size_t n;
    lcm_counts k;

    stub_start(c, 0, NULL);
    c->pid = case_spawn(c, "a", v2, 1);
    loadgen(c, "register", 10, 10, c->dmi);
    wait_handles(c, "state = 'READY'", 10);
    snprintf(body, sizeof(body),
             "{'dmiPlugin':'%s','upgradedCmHandles':{'cmHandles':['ch-1'],"
             "'moduleSetTag':'tagB'}}",
             c->dmi);
    send_request(c, body);
    wait_handles(c, "id = 'ch-1' AND state = 'READY' AND module_set_tag = 'tagB'", 1);
    wait_outbox(c);
    k = read_lcm(c, 22, "ch-1", NULL);
    cr_assert_eq(k.total, 4, "create, READY, LOCKED, READY; got %ld", k.total);
    cr_assert_eq(k.ready, 2);
    n = it_read_topic(c->lcm_topic, 22, WAIT_MS, &recs);
    for (size_t i = 0; i < n; i++) {
        char err[1024] = "";
        json_object *o = json_tokener_parse(recs[i].value), *schema = NULL;
        int v2_value, headers;

        cr_assert_eq(conformance_check_lcm(recs[i].value, recs[i].len, err, sizeof(err)), 0,
                     "%s: %s", err, recs[i].value);
        v2_value =
            json_object_object_get_ex(o, "eventSchema", &schema) &&
            strcmp(json_object_get_string(schema), "org.onap.ncmp:cmhandle-lcm-event.v2") == 0;
        /* the headers (Java-serialised by default) say what the value says */
        headers = conformance_check_lcm_headers(recs[i].headers, o, 1, err, sizeof(err));
        json_object_put(o);
        cr_assert(v2_value, "not v2: %s", recs[i].value);
        cr_assert_eq(headers, 0, "headers of %s: %s", recs[i].key, err);
    }
    expect_event_values(recs, n, "ch-1", 0, "/eventType",
                        "\"org.onap.ncmp.cmhandle-lcm-event.create\"");
    expect_event_values(recs, n, "ch-1", 0, "/event/newValues/dataSyncEnabled", "null");
    expect_event_values(recs, n, "ch-1", 0, "/event/newValues/moduleSetTag", "\"tagA\"");
    expect_event_values(recs, n, "ch-1", 1, "/event/oldValues",
                        "{\"dataSyncEnabled\":null,\"cmHandleState\":\"ADVISED\"}");
    expect_event_values(recs, n, "ch-1", 1, "/event/newValues",
                        "{\"dataSyncEnabled\":false,\"cmHandleState\":\"READY\"}");
    expect_event_values(recs, n, "ch-1", 2, "/event/oldValues", "{\"cmHandleState\":\"READY\"}");
    expect_event_values(recs, n, "ch-1", 2, "/event/newValues", "{\"cmHandleState\":\"LOCKED\"}");
    expect_event_values(recs, n, "ch-1", 3, "/event/oldValues",
                        "{\"dataSyncEnabled\":null,\"cmHandleState\":\"LOCKED\","
                        "\"moduleSetTag\":\"tagA\"}");
    expect_event_values(recs, n, "ch-1", 3, "/event/newValues",
                        "{\"dataSyncEnabled\":false,\"cmHandleState\":\"READY\","
                        "\"moduleSetTag\":\"tagB\"}");
    it_records_free(recs, n);
    case_fini(c);
}

/* Two processes share the work: each tag fetched once, each handle
 * synced once. */
Test(module_sync, two_processes_fetch_each_tag_once, .timeout = 240)
{
    ms_case *c = case_init("ms-two");
    static const char *const tags[] = {"tagA", "tagB", "tagC", "tagD", "tagE"};
    json_object *stats;
    lcm_counts k;

    stub_start(c, 0, NULL);
    c->pid = case_spawn(c, "a", NULL, 1);
    c->pid2 = case_spawn(c, "b", NULL, 1);
    loadgen(c, "register", 2000, 100, c->dmi);
    wait_handles(c, "state = 'READY'", 2000);
    stats = stub_stats(c);
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(stub_count(stats, "moduleReferences", tags[i]), 1, "%s: %s", tags[i],
                     json_object_to_json_string(stats));
        cr_assert_eq(stub_count(stats, "moduleResources", tags[i]), 1);
    }
    json_object_put(stats);
    wait_outbox(c);
    k = read_lcm(c, 4000, NULL, "ADVISED");
    cr_assert_eq(k.ready, 2000, "each handle synced once, got %ld READY events", k.ready);
    case_fini(c);
}

/* kill -9 before and after the module-sync commit, then restart: every
 * handle READY, one READY event each. */
static void crash_at(const char *point)
{
    ms_case *c = case_init("ms-crash");
    char fault[128];
    const char *extra[] = {fault, NULL};
    int status;
    lcm_counts k;

    snprintf(fault, sizeof(fault), "--debug.fault=%s:1", point);
    stub_start(c, 0, NULL);
    c->pid = case_spawn(c, "a", extra, 1);
    loadgen(c, "register", 500, 100, c->dmi);
    status = it_wait_exit(c->pid, WAIT_MS);
    c->pid = 0;
    cr_assert(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "ncmpd killed at %s (status %d); log %s", point, status, c->log);
    c->pid = case_spawn(c, "a", NULL, 1);
    wait_handles(c, "state = 'READY'", 500);
    wait_outbox(c);
    k = read_lcm(c, 1000, NULL, "ADVISED");
    cr_assert_eq(k.ready, 500, "one READY event per handle after a crash at %s, got %ld", point,
                 k.ready);
    case_fini(c);
}

Test(module_sync, crash_before_commit, .timeout = 240)
{
    crash_at("module-sync.before-commit");
}

Test(module_sync, crash_after_commit, .timeout = 240)
{
    crash_at("module-sync.after-commit");
}

/* The hand-over to module sync survives a kill right after the
 * registration commit: the records were on Kafka before it, so the handles
 * go READY as soon as ncmpd is back, not when the sweep finds them (the
 * grace period is ten minutes here, far beyond the test's time). */
Test(module_sync, handover_survives_a_crash_after_the_registration_commit, .timeout = 240)
{
    ms_case *c = case_init("ms-handover");
    const char *extra[] = {"--module-sync.advised-grace-ms=600000",
                           "--registration.batch-wait-ms=2000",
                           "--debug.fault=registration.after-commit:1", NULL};
    const char *again[] = {"--module-sync.advised-grace-ms=600000", NULL};
    int status;
    long at_crash;
    double t0, secs;

    stub_start(c, 0, NULL);
    c->pid = case_spawn(c, "a", extra, 1);
    loadgen(c, "register", 500, 100, c->dmi);
    status = it_wait_exit(c->pid, WAIT_MS);
    c->pid = 0;
    cr_assert(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "ncmpd killed after the registration commit (status %d); log %s", status, c->log);
    at_crash = count_where(c, "true");
    cr_assert_gt(at_crash, 0, "a registration batch was committed before the kill");
    t0 = (double)time(NULL);
    c->pid = case_spawn(c, "a", again, 1);
    wait_handles(c, "state = 'READY'", 500);
    secs = (double)time(NULL) - t0;
    cr_log_info("%ld handles committed before the kill; all 500 READY %.0f s after the restart",
                at_crash, secs);
    cr_assert_lt(secs, 60, "READY in %.0f s: the hand-over was not lost", secs);
    case_fini(c);
}

/* Deregistered handles leave no module data behind. */
Test(module_sync, orphan_modules_cleaned_after_deregistration, .timeout = 180)
{
    ms_case *c = case_init("ms-orphans");

    stub_start(c, 0, NULL);
    c->pid = case_spawn(c, "a", NULL, 1);
    loadgen(c, "register", 10, 10, c->dmi);
    wait_handles(c, "state = 'READY'", 10);
    cr_assert_eq(it_query_long(c->db, SQL_SOURCES, 0, NULL), 1000);
    loadgen(c, "deregister", 10, 10, c->dmi);
    wait_handles(c, "true", 0);
    cr_assert_eq(it_wait_long(c->db, "SELECT count(*) FROM module_set", NULL, 0, WAIT_MS), 0);
    cr_assert_eq(it_wait_long(c->db, SQL_SOURCES, NULL, 0, WAIT_MS), 0);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM module_set_member", 0, NULL), 0);
    case_fini(c);
}

/* Handles deregistered while they wait for a retry leave no retry behind
 * (the cleanup deletes the rows of module_sync_retry whose handle has
 * gone), and the sweep hands nothing over for them meanwhile. */
Test(module_sync, deregistered_handles_leave_no_retry, .timeout = 180)
{
    ms_case *c = case_init("ms-dereg-retry");
    char dmi[64];

    snprintf(dmi, sizeof(dmi), "http://127.0.0.1:%d", it_free_port());
    c->pid = case_spawn(c, "a", NULL, 1);
    loadgen(c, "register", 10, 10, dmi);
    wait_handles(c, "state = 'LOCKED' AND sync_attempts >= 2", 10);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM module_sync_retry", 0, NULL), 10);
    loadgen(c, "deregister", 10, 10, dmi);
    wait_handles(c, "true", 0);
    cr_assert_eq(it_wait_long(c->db, "SELECT count(*) FROM module_sync_retry", NULL, 0, WAIT_MS), 0,
                 "retry rows of deregistered handles deleted; log %s", c->log);
    case_fini(c);
}

/* A bad record on the module-sync topic is dead-lettered; the good ones
 * after it still work. */
Test(module_sync, bad_records_are_dead_lettered, .timeout = 120)
{
    ms_case *c = case_init("ms-dlq");
    char dlq[200];
    static const char *const bad[] = {"not json", "{\"cmHandles\":[1,2]}", "[]"};
    size_t lens[] = {8, 19, 2};
    it_record *recs = NULL;
    size_t n;

    snprintf(dlq, sizeof(dlq), "%s-dlq", c->ms_topic);
    it_create_topic(dlq, PARTITIONS);
    stub_start(c, 0, NULL);
    c->pid = case_spawn(c, "a", NULL, 1);
    it_publish_raw(c->ms_topic, bad, lens, 3, NULL);
    loadgen(c, "register", 5, 5, c->dmi);
    wait_handles(c, "state = 'READY'", 5);
    n = it_read_topic(dlq, 3, WAIT_MS, &recs);
    cr_assert_eq(n, 3, "three dead letters, got %zu", n);
    for (size_t i = 0; i < n; i++) {
        char reason[512];
        cr_assert_not_null(it_record_header(&recs[i], "dlq_reason", reason, sizeof(reason)));
        cr_assert(strstr(reason, "JSON") || strstr(reason, "module-sync record"), "%s", reason);
        cr_assert_eq(conformance_check_headers(CONFORMANCE_DEAD_LETTER, recs[i].headers, reason,
                                               sizeof(reason)),
                     0, "%s", reason);
    }
    it_records_free(recs, n);
    case_fini(c);
}

/* A busy DMI plugin (503, the reference stub's initial processing window)
 * is asked again after the initial wait, not after a growing back-off; once
 * the window is over the handles go READY. */
Test(module_sync, busy_dmi_is_asked_again_without_back_off, .timeout = 180)
{
    ms_case *c = case_init("ms-busy");
    const char *stub[] = {"--busy-ms", "3000", NULL};
    const char *extra[] = {"--module-sync.retry-max-ms=60000", NULL};

    stub_start(c, 0, stub);
    c->pid = case_spawn(c, "a", extra, 1);
    loadgen(c, "register", 5, 5, c->dmi);
    /* three failed attempts, each due 300 ms after it (doubling would have
     * made the third wait 1,200 ms) */
    wait_handles(c, "sync_attempts >= 3", 5);
    cr_assert_eq(count_where(c, "state = 'LOCKED' AND lock_details LIKE '%HTTP 503%' AND "
                                "(SELECT r.due_at FROM module_sync_retry r WHERE r.id ="
                                " cm_handle.id) - last_update_time > interval '1 second'"),
                 0, "a busy DMI is not backed off from");
    wait_handles(c, "state = 'READY'", 5);
    case_fini(c);
}
