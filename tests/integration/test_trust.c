/*
 * Trust levels end to end on real services: registrations and device
 * heartbeats through Kafka -> ncmpd (registration, trust and its DMI
 * health watchdog) -> cm_handle.trust_level / effective_trust_level and
 * dmi_plugin in PostgreSQL, inventory AVC events on Kafka, checked
 * against schema/inventory-event.json (and NCMP's published schema, when
 * available).
 *
 * Each test runs its own DMI stub (ephemeral port; POST /stub/health
 * switches its health), its own ncmpd on its own scratch database and its
 * own topics.
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

#include "conformance.h"
#include "it_util.h"
#include "ncmp_buf.h"

#define PARTITIONS 2
#define WAIT_MS    60000
#define NFLAGS     11

typedef struct tr_case {
    char topic[128]; /* registration */
    char hb_topic[160];
    char inv_topic[160];
    char dbname[96];
    char dburl[512];
    char log[512];
    char log2[512];
    char stub_log[512];
    char port_file[512];
    char flag[NFLAGS][640];
    ncmp_db *db;
    pid_t pid, pid2, stub;
    char dmi[64]; /* http://127.0.0.1:<stub port> */
    long heartbeats;
} tr_case;

static tr_case the_case;
static int the_case_live;

static void tr_cleanup(void)
{
    tr_case *c = &the_case;

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

TestSuite(trust, .fini = tr_cleanup);

/* --- the DMI stub -------------------------------------------------------- */

static void stub_start(tr_case *c)
{
    const char *argv[] = {NCMP_DMISTUB_PATH, "--port", "0", "--port-file", c->port_file, NULL};
    long waited = 0;
    int port = 0;

    unlink(c->port_file);
    c->stub = it_spawn(NCMP_DMISTUB_PATH, c->stub_log, argv);
    while (port <= 0) {
        FILE *f = fopen(c->port_file, "r");
        if (f) {
            if (fscanf(f, "%d", &port) != 1)
                port = 0;
            fclose(f);
        }
        if (port > 0)
            break;
        cr_assert_lt(waited, 20000, "the DMI stub did not start; log %s", c->stub_log);
        it_sleep_ms(20);
        waited += 20;
    }
    snprintf(c->dmi, sizeof(c->dmi), "http://127.0.0.1:%d", port);
}

static size_t discard(char *p, size_t size, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return size * n;
}

/* POST /stub/health {"status":"UP"|"DOWN"}. */
static void stub_health(tr_case *c, const char *status)
{
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    char url[128], body[64];
    long code = 0;

    snprintf(url, sizeof(url), "%s/stub/health", c->dmi);
    snprintf(body, sizeof(body), "{\"status\":\"%s\"}", status);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    cr_assert_eq(curl_easy_perform(h), CURLE_OK, "POST %s", url);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    cr_assert_eq(code, 200, "POST %s answered %ld", url, code);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
}

/* --- ncmpd ---------------------------------------------------------------- */

static tr_case *case_init(const char *name)
{
    tr_case *c = &the_case;
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    ncmp_err err;

    memset(c, 0, sizeof(*c));
    dir = dir && *dir ? dir : "/tmp";
    it_unique(c->topic, sizeof(c->topic), name);
    snprintf(c->hb_topic, sizeof(c->hb_topic), "%s-hb", c->topic);
    snprintf(c->inv_topic, sizeof(c->inv_topic), "%s-inv", c->topic);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir, c->topic);
    snprintf(c->log2, sizeof(c->log2), "%s/%s-2.log", dir, c->topic);
    snprintf(c->stub_log, sizeof(c->stub_log), "%s/%s-stub.log", dir, c->topic);
    snprintf(c->port_file, sizeof(c->port_file), "%s/%s-stub.port", dir, c->topic);
    it_scratch_db_create("it_trust", c->dbname, sizeof(c->dbname), c->dburl, sizeof(c->dburl));
    the_case_live = 1;
    snprintf(c->flag[0], sizeof(c->flag[0]), "--db.url=%s", c->dburl);
    snprintf(c->flag[1], sizeof(c->flag[1]), "--registration.topic=%s", c->topic);
    snprintf(c->flag[2], sizeof(c->flag[2]), "--registration.response-topic=%s-response", c->topic);
    snprintf(c->flag[3], sizeof(c->flag[3]), "--lcm.topic=%s-lcm", c->topic);
    snprintf(c->flag[4], sizeof(c->flag[4]), "--kafka.group.id=g-%s", c->topic);
    snprintf(c->flag[5], sizeof(c->flag[5]), "--module-sync.topic=");
    snprintf(c->flag[6], sizeof(c->flag[6]), "--roles=registration,trust");
    snprintf(c->flag[7], sizeof(c->flag[7]), "--trust.heartbeat-topic=%s", c->hb_topic);
    snprintf(c->flag[8], sizeof(c->flag[8]), "--trust.inventory-events-topic=%s", c->inv_topic);
    snprintf(c->flag[9], sizeof(c->flag[9]), "--trust.dmi-check-interval-ms=200");
    snprintf(c->flag[10], sizeof(c->flag[10]), "--log.level=debug");
    it_create_topic(c->topic, PARTITIONS);
    it_create_topic(c->hb_topic, PARTITIONS);
    it_create_topic(c->inv_topic, PARTITIONS);
    cr_assert_eq(ncmp_db_open(&c->db, c->dburl, NULL, 10, &err), 0, "%s", err.msg);
    stub_start(c);
    return c;
}

static pid_t case_spawn(tr_case *c, const char *instance, const char *log)
{
    const char *args[NFLAGS + 2];
    char inst[256];
    size_t n = 0;

    for (size_t i = 0; i < NFLAGS; i++)
        args[n++] = c->flag[i];
    snprintf(inst, sizeof(inst), "--kafka.instance-id=%s-%s", instance, c->topic);
    args[n++] = inst;
    args[n] = NULL;
    return it_ncmpd_start(log, args);
}

static void case_fini(tr_case *c)
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

/* Publish one registration request (JSON with single quotes). */
static void send_request(tr_case *c, const char *body_sq)
{
    ncmp_buf body = NCMP_BUF_INIT;
    char ce_id[64];
    const char *headers[] = {"ce_specversion", "1.0", "ce_id", ce_id, NULL};
    it_outgoing rec;

    it_unique(ce_id, sizeof(ce_id), "req");
    for (const char *p = body_sq; *p; p++)
        ncmp_buf_append_char(&body, *p == '\'' ? '"' : *p);
    rec.key = c->dmi;
    rec.value = body.data;
    rec.len = body.len;
    rec.headers = headers;
    it_publish(c->topic, &rec, 1);
    ncmp_buf_free(&body);
}

/* Publish device heartbeats: pairs of (handle id or NULL for no ce_id,
 * value), in order, all keyed by the test's DMI plugin. */
static void send_heartbeats(tr_case *c, const char *const *pairs, size_t n)
{
    it_outgoing *recs = calloc(n, sizeof(*recs));
    const char *(*hdrs)[9] = calloc(n, sizeof(*hdrs));

    for (size_t i = 0; i < n; i++) {
        const char *id = pairs[2 * i];
        size_t k = 0;
        hdrs[i][k++] = "ce_specversion";
        hdrs[i][k++] = "1.0";
        hdrs[i][k++] = "ce_type";
        hdrs[i][k++] = "org.onap.cps.ncmp.events.trustlevel.DeviceTrustLevel";
        if (id) {
            hdrs[i][k++] = "ce_id";
            hdrs[i][k++] = id;
        }
        hdrs[i][k] = NULL;
        recs[i].key = c->dmi;
        recs[i].value = pairs[2 * i + 1];
        recs[i].len = strlen(pairs[2 * i + 1]);
        recs[i].headers = hdrs[i];
    }
    it_publish(c->hb_topic, recs, n);
    c->heartbeats += (long)n;
    free(recs);
    free(hdrs);
}

/* Wait until the trust role has applied every heartbeat published. */
static void wait_heartbeats_applied(tr_case *c)
{
    char sql[512];
    long got;

    snprintf(sql, sizeof(sql),
             "SELECT COALESCE(sum(next_offset), 0) FROM consumer_offsets WHERE topic = '%s'",
             c->hb_topic);
    got = it_wait_long(c->db, sql, NULL, c->heartbeats, WAIT_MS);
    cr_assert_eq(got, c->heartbeats, "heartbeats applied %ld of %ld; log %s", got, c->heartbeats,
                 c->log);
}

static void wait_count(tr_case *c, const char *cond, long n)
{
    char sql[512];
    long got;

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM cm_handle WHERE %s", cond);
    got = it_wait_long(c->db, sql, NULL, n, WAIT_MS);
    cr_assert_eq(got, n, "%ld handles with %s, expected %ld; log %s", got, cond, n, c->log);
}

static void wait_dmi(tr_case *c, const char *level)
{
    char sql[512];

    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM dmi_plugin WHERE name = '%s' AND trust_level"
             " = '%s'",
             c->dmi, level);
    cr_assert_eq(it_wait_long(c->db, sql, NULL, 1, WAIT_MS), 1, "DMI plugin %s not %s; log %s",
                 c->dmi, level, c->log);
}

static const char *trust_of(tr_case *c, const char *id, const char *column, char *buf, size_t len)
{
    PGresult *res = NULL;
    ncmp_err err;
    char sql[256];
    const char *params[1] = {id};

    snprintf(sql, sizeof(sql), "SELECT %s FROM cm_handle WHERE id = $1", column);
    cr_assert_eq(ncmp_db_query(c->db, sql, 1, params, &res, &err), 0, "%s", err.msg);
    cr_assert_eq(PQntuples(res), 1, "handle %s exists", id);
    snprintf(buf, len, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    return buf;
}

/* --- inventory events ------------------------------------------------------ */

/* One inventory event as read back: "<key> <old or -> <new>". */
typedef struct avc_seen {
    char line[256];
} avc_seen;

/* A record of the inventory topic against NCMP's contract: the schemas
 * of its value and headers, the key. */
static void check_avc(const it_record *r)
{
    char buf[512], err[512] = "";
    json_object *o = json_tokener_parse(r->value);
    static const char *const fixed[][2] = {
        {"ce_specversion", "1.0"},
        {"ce_source", "NCMP"},
        {"ce_type", "org.onap.cps.ncmp.events.avc.ncmp_to_client.AvcEvent"},
        {"ce_dataschema", "urn:cps:org.onap.cps.ncmp.events:inventory-event:1.0.0"},
    };

    cr_assert_not_null(o, "inventory event is JSON: %s", r->value);
    cr_assert_eq(conformance_check_event(CONFORMANCE_INVENTORY, o, err, sizeof(err)), 0, "%s: %s",
                 err, r->value);
    json_object_put(o);
    /* ce_time too, with the strict RFC 3339 checker */
    cr_assert_eq(conformance_check_headers(CONFORMANCE_INVENTORY, r->headers, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_not_null(r->key, "inventory events are keyed by handle id");
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        cr_assert_not_null(it_record_header(r, fixed[i][0], buf, sizeof(buf)), "header %s",
                           fixed[i][0]);
        cr_assert_str_eq(buf, fixed[i][1], "header %s", fixed[i][0]);
    }
    cr_assert_not_null(it_record_header(r, "ce_correlationid", buf, sizeof(buf)));
    cr_assert_str_eq(buf, r->key, "ce_correlationid is the handle id");
    cr_assert_not_null(it_record_header(r, "ce_id", buf, sizeof(buf)));
    cr_assert_eq(strlen(buf), 36, "ce_id is a UUID: %s", buf);
}

/* Read the inventory topic until `expected` events are there (and no
 * more arrive for a moment); check each; return "<key> <old> <new>" lines
 * in topic order per handle. *n gets the count. */
static avc_seen *read_avc(tr_case *c, size_t expected, size_t *n)
{
    it_record *recs = NULL;
    avc_seen *seen;
    size_t got = it_read_topic(c->inv_topic, expected, WAIT_MS, &recs);

    /* nothing more on its way */
    if (got == expected) {
        it_records_free(recs, got);
        it_sleep_ms(600);
        got = it_read_topic(c->inv_topic, expected, WAIT_MS, &recs);
    }
    seen = calloc(got + 1, sizeof(*seen));
    for (size_t i = 0; i < got; i++) {
        json_object *o = json_tokener_parse(recs[i].value), *d, *l, *a, *v;
        const char *old = "-", *nw = "?";
        check_avc(&recs[i]);
        if (json_object_object_get_ex(o, "data", &d) &&
            json_object_object_get_ex(d, "attributeValueChange", &l) &&
            (a = json_object_array_get_idx(l, 0))) {
            if (json_object_object_get_ex(a, "oldAttributeValue", &v))
                old = json_object_get_string(v);
            if (json_object_object_get_ex(a, "newAttributeValue", &v))
                nw = json_object_get_string(v);
            cr_assert(json_object_object_get_ex(a, "attributeName", &v) &&
                          strcmp(json_object_get_string(v), "trustLevel") == 0,
                      "%s", recs[i].value);
        }
        snprintf(seen[i].line, sizeof(seen[i].line), "%s %s %s", recs[i].key, old, nw);
        json_object_put(o);
    }
    it_records_free(recs, got);
    *n = got;
    return seen;
}

/* How many of `seen` are exactly `line`. */
static size_t count_seen(const avc_seen *seen, size_t n, const char *line)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += strcmp(seen[i].line, line) == 0;
    return k;
}

/* Assert that `line` occurs `times` times, with the whole list on failure. */
static void expect_seen(const avc_seen *seen, size_t n, const char *line, size_t times)
{
    ncmp_buf all = NCMP_BUF_INIT;
    size_t k = count_seen(seen, n, line);

    for (size_t i = 0; i < n; i++) {
        ncmp_buf_append_str(&all, seen[i].line);
        ncmp_buf_append_str(&all, "; ");
    }
    cr_assert_eq(k, times, "\"%s\" seen %zu times, expected %zu: %s", line, k, times,
                 all.data ? all.data : "(none)");
    ncmp_buf_free(&all);
}

/* Are the events of handle `id` in `seen` the lines `want` in order? */
static void expect_order(const avc_seen *seen, size_t n, const char *id, const char *const *want,
                         size_t nwant)
{
    size_t k = 0, idlen = strlen(id);

    for (size_t i = 0; i < n; i++) {
        if (strncmp(seen[i].line, id, idlen) != 0 || seen[i].line[idlen] != ' ')
            continue;
        cr_assert_lt(k, nwant, "more events for %s than expected: %s", id, seen[i].line);
        cr_assert_str_eq(seen[i].line, want[k], "event %zu of %s", k, id);
        k++;
    }
    cr_assert_eq(k, nwant, "%zu events for %s, expected %zu", k, id, nwant);
}

/* --- tests ---------------------------------------------------------------- */

/* A DMI plugin goes down: its handles' effective trust NONE, one event
 * each; back up: COMPLETE again, except the handle whose own trust is
 * NONE. A handle registered with trustLevel NONE is announced at once. */
Test(trust, dmi_down_and_up_changes_effective_trust, .timeout = 180)
{
    tr_case *c = case_init("tr-dmi");
    char body[1024], buf[32];
    avc_seen *seen;
    size_t n;

    c->pid = case_spawn(c, "a", c->log);
    snprintf(body, sizeof(body),
             "{'dmiPlugin':'%s','createdCmHandles':[{'cmHandle':'t-1'},"
             "{'cmHandle':'t-2','trustLevel':'COMPLETE'},{'cmHandle':'t-3','trustLevel':'NONE'}]}",
             c->dmi);
    send_request(c, body);
    wait_count(c, "true", 3);
    wait_dmi(c, "COMPLETE");
    cr_assert_str_eq(trust_of(c, "t-3", "effective_trust_level", buf, sizeof(buf)), "NONE");
    cr_assert_str_eq(trust_of(c, "t-1", "effective_trust_level", buf, sizeof(buf)), "COMPLETE");

    stub_health(c, "DOWN");
    wait_dmi(c, "NONE");
    wait_count(c, "effective_trust_level = 'NONE'", 3);
    cr_assert_str_eq(trust_of(c, "t-1", "trust_level", buf, sizeof(buf)), "COMPLETE",
                     "the handle's own trust is untouched");

    stub_health(c, "UP");
    wait_dmi(c, "COMPLETE");
    wait_count(c, "effective_trust_level = 'COMPLETE'", 2);
    cr_assert_str_eq(trust_of(c, "t-3", "effective_trust_level", buf, sizeof(buf)), "NONE",
                     "own trust NONE stays NONE when the DMI plugin is back");

    seen = read_avc(c, 5, &n);
    cr_assert_eq(n, 5, "5 inventory events, got %zu", n);
    expect_seen(seen, n, "t-3 - NONE", 1);
    {
        static const char *const t1[] = {"t-1 COMPLETE NONE", "t-1 NONE COMPLETE"};
        static const char *const t2[] = {"t-2 COMPLETE NONE", "t-2 NONE COMPLETE"};
        expect_order(seen, n, "t-1", t1, 2);
        expect_order(seen, n, "t-2", t2, 2);
    }
    free(seen);
    case_fini(c);
}

/* Heartbeats set a handle's own trust; an event only when the effective
 * trust changes; heartbeats of one handle in one batch applied in order;
 * unknown handles ignored; bad heartbeats dead-lettered with the reason. */
Test(trust, heartbeats_change_trust_and_announce_effective_changes, .timeout = 180)
{
    tr_case *c = case_init("tr-hb");
    char body[1024], buf[32], dlq[200];
    it_record *dead = NULL;
    avc_seen *seen;
    size_t n, ndead;
    static const char *const none_hb = "{\"data\":{\"trustLevel\":\"NONE\"}}";
    static const char *const complete_hb = "{\"data\":{\"trustLevel\":\"COMPLETE\"}}";

    c->pid = case_spawn(c, "a", c->log);
    snprintf(body, sizeof(body),
             "{'dmiPlugin':'%s','createdCmHandles':[{'cmHandle':'h-1'},{'cmHandle':'h-2'}]}",
             c->dmi);
    send_request(c, body);
    wait_count(c, "true", 2);
    wait_dmi(c, "COMPLETE");
    {
        /* h-1 NONE (an event), again NONE (none), h-2 COMPLETE (no change),
         * an unknown handle, and three bad records */
        const char *const hbs[] = {
            "h-1", none_hb,      "h-1",  none_hb,
            "h-2", complete_hb,  "nope", none_hb,
            NULL,  none_hb,      "h-2",  "{\"data\":{\"trustLevel\":\"MAYBE\"}}",
            "h-2", "{\"data\":", "h-2",  "{\"data\":{\"trustLevel\":\"NONE\",\"x\":1}}"};
        send_heartbeats(c, hbs, 8);
    }
    wait_heartbeats_applied(c);
    cr_assert_str_eq(trust_of(c, "h-1", "trust_level", buf, sizeof(buf)), "NONE");
    cr_assert_str_eq(trust_of(c, "h-1", "effective_trust_level", buf, sizeof(buf)), "NONE");
    cr_assert_str_eq(trust_of(c, "h-2", "effective_trust_level", buf, sizeof(buf)), "COMPLETE");
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM cm_handle WHERE id = 'nope'", 0, NULL),
                 0, "a heartbeat creates no handle");

    snprintf(dlq, sizeof(dlq), "%s-dlq", c->hb_topic);
    ndead = it_read_topic(dlq, 4, WAIT_MS, &dead);
    cr_assert_eq(ndead, 4, "4 dead letters, got %zu", ndead);
    {
        int no_id = 0, bad_level = 0, bad_json = 0, extra = 0;
        for (size_t i = 0; i < ndead; i++) {
            cr_assert_eq(conformance_check_headers(CONFORMANCE_DEAD_LETTER, dead[i].headers, body,
                                                   sizeof(body)),
                         0, "%s", body);
            cr_assert_not_null(it_record_header(&dead[i], "dlq_reason", body, sizeof(body)));
            no_id += strstr(body, "ce_id") != NULL;
            bad_level += strstr(body, "MAYBE") != NULL;
            bad_json += strstr(body, "JSON") != NULL || strstr(body, "json") != NULL;
            extra += strstr(body, "unknown field data.x") != NULL;
        }
        cr_assert(no_id == 1 && bad_level == 1 && bad_json == 1 && extra == 1,
                  "reasons: no ce_id %d, bad level %d, bad JSON %d, extra field %d", no_id,
                  bad_level, bad_json, extra);
    }
    it_records_free(dead, ndead);

    /* the DMI plugin down: h-2 NONE (an event), h-1 was NONE already */
    stub_health(c, "DOWN");
    wait_count(c, "effective_trust_level = 'NONE'", 2);
    {
        /* own trust COMPLETE while the plugin is down: no event */
        const char *const hbs[] = {"h-1", complete_hb};
        send_heartbeats(c, hbs, 1);
    }
    wait_heartbeats_applied(c);
    cr_assert_str_eq(trust_of(c, "h-1", "trust_level", buf, sizeof(buf)), "COMPLETE");
    cr_assert_str_eq(trust_of(c, "h-1", "effective_trust_level", buf, sizeof(buf)), "NONE");

    stub_health(c, "UP");
    wait_count(c, "effective_trust_level = 'COMPLETE'", 2);
    {
        /* one batch: h-2 down and up again, both announced in order */
        const char *const hbs[] = {"h-2", none_hb, "h-2", complete_hb};
        send_heartbeats(c, hbs, 2);
    }
    wait_heartbeats_applied(c);

    seen = read_avc(c, 6, &n);
    cr_assert_eq(n, 6, "6 inventory events, got %zu", n);
    {
        static const char *const h1[] = {"h-1 COMPLETE NONE", "h-1 NONE COMPLETE"};
        static const char *const h2[] = {"h-2 COMPLETE NONE", "h-2 NONE COMPLETE",
                                         "h-2 COMPLETE NONE", "h-2 NONE COMPLETE"};
        expect_order(seen, n, "h-1", h1, 2);
        expect_order(seen, n, "h-2", h2, 4);
    }
    free(seen);
    case_fini(c);
}

/* Two processes with the trust role: one checks the DMI plugins, events
 * are not doubled; when it stops, the other takes over. */
Test(trust, one_watchdog_across_processes, .timeout = 240)
{
    tr_case *c = case_init("tr-two");
    static const char *const leader_line = "this process checks the health of DMI plugins";
    char body[1024];
    avc_seen *seen;
    size_t n;
    int first_leads, second_leads;

    c->pid = case_spawn(c, "a", c->log);
    c->pid2 = case_spawn(c, "b", c->log2);
    snprintf(body, sizeof(body),
             "{'dmiPlugin':'%s','createdCmHandles':[{'cmHandle':'w-1'},{'cmHandle':'w-2'}]}",
             c->dmi);
    send_request(c, body);
    wait_count(c, "true", 2);
    wait_dmi(c, "COMPLETE");
    first_leads = it_file_contains(c->log, leader_line);
    second_leads = it_file_contains(c->log2, leader_line);
    cr_assert_eq(first_leads + second_leads, 1, "exactly one watchdog (logs %s, %s)", c->log,
                 c->log2);
    stub_health(c, "DOWN");
    wait_count(c, "effective_trust_level = 'NONE'", 2);

    /* stop the one that checks: the other takes over */
    if (first_leads) {
        cr_assert_eq(WEXITSTATUS(it_ncmpd_stop(c->pid)), 0);
        c->pid = 0;
    } else {
        cr_assert_eq(WEXITSTATUS(it_ncmpd_stop(c->pid2)), 0);
        c->pid2 = 0;
    }
    stub_health(c, "UP");
    wait_count(c, "effective_trust_level = 'COMPLETE'", 2);
    cr_assert(it_file_contains(first_leads ? c->log2 : c->log, leader_line),
              "the other process took over");

    seen = read_avc(c, 4, &n);
    cr_assert_eq(n, 4, "4 inventory events, got %zu", n);
    expect_seen(seen, n, "w-1 COMPLETE NONE", 1);
    expect_seen(seen, n, "w-2 COMPLETE NONE", 1);
    expect_seen(seen, n, "w-1 NONE COMPLETE", 1);
    expect_seen(seen, n, "w-2 NONE COMPLETE", 1);
    free(seen);
    if (c->pid <= 0) {
        c->pid = c->pid2;
        c->pid2 = 0;
    }
    case_fini(c);
}

/* A handle registered while its DMI plugin is known down starts with
 * effective trust NONE and is announced; the plugin of a handle is its
 * data service when one is registered, as in NCMP. */
Test(trust, registration_under_a_down_dmi_plugin_starts_none, .timeout = 180)
{
    tr_case *c = case_init("tr-reg");
    char body[1024], buf[32];
    avc_seen *seen;
    size_t n;

    c->pid = case_spawn(c, "a", c->log);
    snprintf(body, sizeof(body), "{'dmiPlugin':'%s','createdCmHandles':[{'cmHandle':'r-1'}]}",
             c->dmi);
    send_request(c, body);
    wait_count(c, "true", 1);
    stub_health(c, "DOWN");
    wait_dmi(c, "NONE");
    wait_count(c, "effective_trust_level = 'NONE'", 1);
    /* r-2 through the same plugin; r-3 names it as data service of an
     * unreachable model-and-base plugin */
    snprintf(body, sizeof(body), "{'dmiPlugin':'%s','createdCmHandles':[{'cmHandle':'r-2'}]}",
             c->dmi);
    send_request(c, body);
    snprintf(body, sizeof(body),
             "{'dmiPlugin':'http://127.0.0.1:1','dmiDataPlugin':'%s',"
             "'createdCmHandles':[{'cmHandle':'r-3'}]}",
             c->dmi);
    send_request(c, body);
    wait_count(c, "true", 3);
    cr_assert_str_eq(trust_of(c, "r-2", "effective_trust_level", buf, sizeof(buf)), "NONE");
    cr_assert_str_eq(trust_of(c, "r-3", "effective_trust_level", buf, sizeof(buf)), "NONE");
    cr_assert_str_eq(trust_of(c, "r-2", "trust_level", buf, sizeof(buf)), "COMPLETE");

    seen = read_avc(c, 3, &n);
    cr_assert_eq(n, 3, "3 inventory events, got %zu", n);
    expect_seen(seen, n, "r-1 COMPLETE NONE", 1);
    expect_seen(seen, n, "r-2 - NONE", 1);
    expect_seen(seen, n, "r-3 - NONE", 1);
    free(seen);
    case_fini(c);
}
