/*
 * Data access end to end on real services: ncmpd (registration,
 * module-sync, lcm-relay, rest, async-forward) on its own scratch
 * database and topics, the DMI stub (small delays, events on Kafka), and
 * a tiny DMI in this process for the answers the stub never gives (HTTP
 * 500, no answer in time).
 *
 * Handles are registered through POST /ncmpInventory/v1/ch and made
 * READY by module sync, so the handle cache learns them from lifecycle
 * events; rows inserted straight into cm_handle (no event) exercise the
 * database fallback.
 *
 * JSON in this file is written with single quotes and sent with double
 * quotes (json_text).
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
#include "ncmp_http.h"
#include "ncmp_json.h"

#define PARTITIONS 2
#define NFLAGS     18
#define WAIT_MS    60000
#define EVENT_TYPE "org.onap.cps.ncmp.events.async1_0_0.DataOperationEvent"
#define PT_OPER    "/data/ds/ncmp-datastore:passthrough-operational?resourceIdentifier=a%2Fb"
#define PT_RUN     "/data/ds/ncmp-datastore:passthrough-running?resourceIdentifier=a%2Fb"
#define ALT1       "%2FSubNetwork%3DEurope%2FMeContext%3DNode1"

typedef struct data_case {
    char topic[128]; /* registration; the other topics derive from it */
    char m2m[160], client[160], requests[160];
    char dbname[96], dburl[512];
    char log[512], stub_log[512], port_file[512];
    char flag[NFLAGS][640];
    ncmp_db *db;
    pid_t pid, stub;
    int port;               /* ncmpd's REST port */
    int stub_legacy;        /* the stub answers pass-through with ?topic= in the legacy form */
    char dmi[64];           /* the stub */
    ncmp_http_server *fake; /* the in-process DMI */
    char fake_dmi[64];
} data_case;

static data_case the_case;
static int the_case_live;

static void data_cleanup(void)
{
    data_case *c = &the_case;

    if (!the_case_live)
        return;
    the_case_live = 0;
    it_kill_wait(&c->pid);
    it_kill_wait(&c->stub);
    ncmp_http_server_destroy(c->fake);
    c->fake = NULL;
    ncmp_db_close(c->db);
    c->db = NULL;
    it_scratch_db_drop(c->dbname);
}

TestSuite(data, .fini = data_cleanup);

/* --- the in-process DMI: 500 on /err, a late answer on /slow ------------- */

static void fake_error(ncmp_http_request *req, void *arg)
{
    (void)arg;
    ncmp_http_respond(req, 500, "text/plain", "dmi broke", 9);
}

static void fake_slow(ncmp_http_request *req, void *arg)
{
    (void)arg;
    it_sleep_ms(2500); /* longer than --dmi.response-timeout-ms */
    ncmp_http_respond(req, 200, "application/json", "{}", 2);
}

static void fake_start(data_case *c)
{
    ncmp_http_options o = {0};
    ncmp_err err;

    o.host = "127.0.0.1";
    o.threads = 4;
    o.max_body_bytes = 1 << 20;
    cr_assert_eq(ncmp_http_server_new(&c->fake, &o, &err), 0, "%s", err.msg);
    ncmp_http_route(c->fake, "POST", "/err/dmi/v1/ch/{id}/data/ds/{ds}", fake_error, NULL);
    ncmp_http_route(c->fake, "POST", "/err/dmi/v1/data", fake_error, NULL);
    ncmp_http_route(c->fake, "POST", "/slow/dmi/v1/ch/{id}/data/ds/{ds}", fake_slow, NULL);
    cr_assert_eq(ncmp_http_server_start(c->fake, &err), 0, "%s", err.msg);
    snprintf(c->fake_dmi, sizeof(c->fake_dmi), "http://127.0.0.1:%d",
             ncmp_http_server_port(c->fake));
}

/* --- the stub and ncmpd --------------------------------------------------- */

static void stub_start(data_case *c)
{
    char kafka[256], topic[256];
    const char *argv[] = {NCMP_DMISTUB_PATH,
                          "--port",
                          "0",
                          "--port-file",
                          c->port_file,
                          "--module-references-delay-ms",
                          "10",
                          "--module-resources-delay-ms",
                          "20",
                          "--read-delay-ms",
                          "30",
                          "--write-delay-ms",
                          "60",
                          "--threads",
                          "2",
                          kafka,
                          topic,
                          c->stub_legacy ? "--async-legacy" : NULL,
                          NULL};
    long waited = 0;
    int p = 0;

    snprintf(kafka, sizeof(kafka), "--kafka=%s", it_kafka());
    snprintf(topic, sizeof(topic), "--async-topic=%s", c->m2m);
    c->stub = it_spawn(NCMP_DMISTUB_PATH, c->stub_log, argv);
    while (p <= 0) {
        FILE *f = fopen(c->port_file, "r");
        if (f) {
            if (fscanf(f, "%d", &p) != 1)
                p = 0;
            fclose(f);
        }
        cr_assert_lt(waited, 20000, "the DMI stub did not start; log %s", c->stub_log);
        it_sleep_ms(20);
        waited += 20;
    }
    snprintf(c->dmi, sizeof(c->dmi), "http://127.0.0.1:%d", p);
}

static void flags_set(data_case *c)
{
    int i = 0;

#define FLAG(...) snprintf(c->flag[i++], sizeof(c->flag[0]), __VA_ARGS__)
    FLAG("--db.url=%s", c->dburl);
    FLAG("--registration.topic=%s", c->topic);
    FLAG("--registration.response-topic=%s-response", c->topic);
    FLAG("--lcm.topic=%s-lcm", c->topic);
    FLAG("--module-sync.topic=%s-ms", c->topic);
    FLAG("--kafka.group.id=g-%s", c->topic);
    FLAG("--roles=registration,module-sync,lcm-relay,rest,async-forward");
    FLAG("--http.port=0");
    FLAG("--http.host=127.0.0.1");
    FLAG("--rest.db-connections=3");
    FLAG("--async-forward.input-topic=%s", c->m2m);
    FLAG("--data.request-topic=%s", c->requests);
    FLAG("--dmi.response-timeout-ms=1000");
    FLAG("--dmi.connect-timeout-ms=500");
    FLAG("--module-sync.sweep-interval-ms=200");
    FLAG("--kafka.topic-partitions=%d", PARTITIONS);
    FLAG("--module-sync.retry-initial-ms=300");
    FLAG("--module-sync.retry-max-ms=1000");
#undef FLAG
}

/* ncmpd and the stub (with --async-legacy when `stub_legacy`) on topics
 * and a database of their own. */
static data_case *case_start_with(const char *name, int stub_legacy)
{
    data_case *c = &the_case;
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    const char *args[NFLAGS + 1];
    static const char *const suffixes[] = {"",     "-response", "-lcm", "-ms",
                                           "-m2m", "-client",   "-req"};
    char t[256];
    ncmp_err err;

    memset(c, 0, sizeof(*c));
    c->stub_legacy = stub_legacy;
    dir = dir && *dir ? dir : "/tmp";
    curl_global_init(CURL_GLOBAL_ALL);
    it_unique(c->topic, sizeof(c->topic), name);
    snprintf(c->m2m, sizeof(c->m2m), "%s-m2m", c->topic);
    snprintf(c->client, sizeof(c->client), "%s-client", c->topic);
    snprintf(c->requests, sizeof(c->requests), "%s-req", c->topic);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir, c->topic);
    snprintf(c->stub_log, sizeof(c->stub_log), "%s/%s-stub.log", dir, c->topic);
    snprintf(c->port_file, sizeof(c->port_file), "%s/%s-stub.port", dir, c->topic);
    it_scratch_db_create("it_data", c->dbname, sizeof(c->dbname), c->dburl, sizeof(c->dburl));
    the_case_live = 1;
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        snprintf(t, sizeof(t), "%s%s", c->topic, suffixes[i]);
        it_create_topic(t, PARTITIONS);
    }
    snprintf(t, sizeof(t), "%s-req-dlq", c->topic);
    it_create_topic(t, 1);
    fake_start(c);
    stub_start(c);
    flags_set(c);
    for (size_t i = 0; i < NFLAGS; i++)
        args[i] = c->flag[i];
    args[NFLAGS] = NULL;
    c->pid = it_ncmpd_start(c->log, args);
    c->port = it_logged_port(c->log);
    /* the relay publishes lifecycle events once its recovery is over */
    for (int i = 0; !it_file_contains(c->log, "relaying lifecycle events"); i++) {
        cr_assert_lt(i, 600, "the lifecycle relay did not start; log %s", c->log);
        it_sleep_ms(50);
    }
    cr_assert_eq(ncmp_db_open(&c->db, c->dburl, NULL, 10, &err), 0, "%s", err.msg);
    return c;
}

static data_case *case_start(const char *name)
{
    return case_start_with(name, 0);
}

static void case_fini(data_case *c)
{
    int status = it_ncmpd_stop(c->pid);

    c->pid = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "SIGTERM should stop ncmpd cleanly, status %d; log %s", status, c->log);
    data_cleanup();
}

static void sql(data_case *c, const char *text)
{
    ncmp_err err;
    cr_assert_eq(ncmp_db_exec(c->db, text, &err), 0, "%s", err.msg);
}

/* --- HTTP ---------------------------------------------------------------- */

typedef struct reply {
    long status;
    ncmp_buf body;
    json_object *json;
    char server_timing[256]; /* the Server-Timing header, "" when none */
    double took_ms;          /* the client's time, connect excluded */
} reply;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

static void json_text(ncmp_buf *b, const char *single_quoted)
{
    for (const char *p = single_quoted; *p; p++)
        ncmp_buf_append_char(b, *p == '\'' ? '"' : *p);
}

static CURL *request_new(data_case *c, const char *method, const char *path, ncmp_buf *body,
                         struct curl_slist *h, reply *r)
{
    CURL *curl = curl_easy_init();
    char url[4096];

    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", c->port, path);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
    if (body && body->data) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)body->len);
    }
    return curl;
}

static void reply_finish(CURL *curl, reply *r)
{
    struct curl_header *st = NULL;
    curl_off_t total = 0, connect = 0;

    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_getinfo(curl, CURLINFO_TOTAL_TIME_T, &total);
    curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connect);
    r->took_ms = (double)(total - connect) / 1000.0;
    if (curl_easy_header(curl, "Server-Timing", 0, CURLH_HEADER, -1, &st) == CURLHE_OK)
        snprintf(r->server_timing, sizeof(r->server_timing), "%s", st->value);
    if (!r->body.data)
        ncmp_buf_append_str(&r->body, "");
    r->json = json_tokener_parse(r->body.data);
}

/* One request; `body_sq` single-quoted JSON or NULL. */
static void call(data_case *c, const char *method, const char *path, const char *body_sq, reply *r)
{
    ncmp_buf body = NCMP_BUF_INIT;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    CURL *curl;
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    if (body_sq)
        json_text(&body, body_sq);
    curl = request_new(c, method, path, &body, h, r);
    rc = curl_easy_perform(curl);
    cr_assert_eq(rc, CURLE_OK, "%s %s: %s; log %s", method, path, curl_easy_strerror(rc), c->log);
    reply_finish(curl, r);
    ncmp_buf_free(&body);
    curl_slist_free_all(h);
    curl_easy_cleanup(curl);
}

static void reply_free(reply *r)
{
    json_object_put(r->json);
    ncmp_buf_free(&r->body);
}

static const char *field(json_object *o, const char *path)
{
    char key[128];
    const char *dot;
    json_object *v = o;

    while (path && *path) {
        dot = strchr(path, '.');
        snprintf(key, sizeof(key), "%.*s", dot ? (int)(dot - path) : (int)strlen(path), path);
        if (!json_object_is_type(v, json_type_object) || !json_object_object_get_ex(v, key, &v))
            return NULL;
        path = dot ? dot + 1 : NULL;
    }
    return json_object_get_string(v);
}

/* `method path` answers `status`; for an error, NCMP's body with
 * `message` (when not NULL). */
static void expect_status(data_case *c, const char *method, const char *path, const char *body,
                          long status, const char *message)
{
    reply r;

    call(c, method, path, body, &r);
    cr_assert_eq(r.status, status, "%s %s: expected %ld, got %ld %s; log %s", method, path, status,
                 r.status, r.body.data, c->log);
    if (message)
        cr_assert_str_eq(field(r.json, "message"), message, "%s %s: %s", method, path, r.body.data);
    reply_free(&r);
}

/* --- inventory ----------------------------------------------------------- */

/* Register Node<first>..Node<first+n-1> (ids ch-<i>, alternate ids
 * /SubNetwork=Europe/MeContext=Node<i>) against the stub. */
static void register_handles(data_case *c, int first, int n)
{
    ncmp_buf b = NCMP_BUF_INIT;
    reply r;

    ncmp_buf_appendf(&b, "{'dmiPlugin':'%s','createdCmHandles':[", c->dmi);
    for (int i = first; i < first + n; i++)
        ncmp_buf_appendf(
            &b,
            "%s{'cmHandle':'ch-%d','alternateId':'/SubNetwork=Europe/MeContext=Node%d',"
            "'moduleSetTag':'tagA','cmHandleProperties':{'segment':'%d'}}",
            i > first ? "," : "", i, i, i);
    ncmp_buf_append_str(&b, "]}");
    call(c, "POST", "/ncmpInventory/v1/ch", b.data, &r);
    cr_assert_eq(r.status, 200, "registration: %ld %s", r.status, r.body.data);
    reply_free(&r);
    ncmp_buf_free(&b);
}

static void wait_ready(data_case *c, long n)
{
    long got =
        it_wait_long(c->db, "SELECT count(*) FROM cm_handle WHERE state = $1", "READY", n, WAIT_MS);
    cr_assert_eq(got, n, "%ld of %ld handles READY; log %s", got, n, c->log);
}

/* Wait until ncmpd serves `path` with `status` (its handle map follows
 * the lifecycle events, which the relay publishes a moment after the
 * commit the database already shows). */
static void wait_served(data_case *c, const char *path, long status)
{
    long got = 0;

    for (int i = 0; i < 200 && got != status; i++) {
        reply r;
        call(c, "GET", path, NULL, &r);
        got = r.status;
        reply_free(&r);
        if (got != status)
            it_sleep_ms(50);
    }
    cr_assert_eq(got, status, "GET %s: %ld, expected %ld; log %s", path, got, status, c->log);
}

/* Every handle of register_handles READY and known to ncmpd as such. */
static void wait_ready_served(data_case *c, int first, int n)
{
    char path[512];

    wait_ready(c, n);
    for (int i = first; i < first + n; i++) {
        snprintf(path, sizeof(path), "/ncmp/v1/ch/ch-%d%s", i, PT_OPER);
        wait_served(c, path, 200);
    }
}

/* A row with no lifecycle event: only the database fallback finds it. */
static void insert_handle(data_case *c, const char *id, const char *alt, const char *state,
                          const char *dmi)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "INSERT INTO cm_handle (id, alternate_id, state, dmi_service_name, module_set_tag)"
             " VALUES ('%s', %s%s%s, '%s', '%s', 'tagA')",
             id, alt ? "'" : "", alt ? alt : "NULL", alt ? "'" : "", state, dmi);
    sql(c, text);
}

/* --- events on the client topic ------------------------------------------ */

/* Read `topic` until `n` records arrived; checks each CloudEvent's headers
 * and value against schema/ (and NCMP's schema, when available). */
static size_t events_read(data_case *c, const char *topic, size_t n, it_record **out)
{
    size_t got = it_read_topic(topic, n, WAIT_MS, out);
    char buf[256], err[1024];

    cr_assert_geq(got, n, "%zu of %zu events on %s; log %s", got, n, topic, c->log);
    for (size_t i = 0; i < got; i++) {
        it_record *r = &(*out)[i];
        json_object *doc = NULL;
        const char *source;
        ncmp_err perr;
        cr_assert_str_eq(it_record_header(r, "ce_type", buf, sizeof(buf)), EVENT_TYPE);
        cr_assert_str_eq(it_record_header(r, "ce_specversion", buf, sizeof(buf)), "1.0");
        cr_assert_str_eq(it_record_header(r, "ce_dataschema", buf, sizeof(buf)),
                         "urn:cps:" EVENT_TYPE ":1.0.0");
        cr_assert_str_eq(it_record_header(r, "ce_destination", buf, sizeof(buf)), topic);
        cr_assert_not_null(it_record_header(r, "ce_id", buf, sizeof(buf)));
        cr_assert_not_null(it_record_header(r, "ce_time", buf, sizeof(buf)));
        cr_assert_eq(ncmp_json_parse(r->value, r->len, &doc, &perr), 0, "%s", perr.msg);
        cr_assert_eq(conformance_check_event(CONFORMANCE_DATA_OPERATION, doc, err, sizeof(err)), 0,
                     "%s: %s", err, r->value);
        json_object_put(doc);
        /* the DMI's results come through unchanged, with the DMI's headers */
        source = it_record_header(r, "ce_source", buf, sizeof(buf));
        if (source && strcmp(source, "NCMP") == 0)
            cr_assert_eq(
                conformance_check_headers(CONFORMANCE_DATA_OPERATION, r->headers, err, sizeof(err)),
                0, "%s", err);
    }
    return got;
}

/* The responses of the events of request `request_id` as
 * "<statusCode>:<id>,<id>" lines, sorted, joined by ';'. */
static char *responses_of(it_record *recs, size_t n, const char *request_id)
{
    char buf[256];
    char *lines[64];
    size_t nl = 0;
    ncmp_buf out = NCMP_BUF_INIT;

    for (size_t i = 0; i < n; i++) {
        json_object *doc = json_tokener_parse(recs[i].value), *resps;
        const char *corr = it_record_header(&recs[i], "ce_correlationid", buf, sizeof(buf));
        if (!corr || strcmp(corr, request_id) != 0 || !doc) {
            json_object_put(doc);
            continue;
        }
        cr_assert_str_eq(recs[i].key, request_id);
        json_object_object_get_ex(json_object_object_get(doc, "data"), "responses", &resps);
        for (size_t k = 0; resps && k < json_object_array_length(resps) && nl < 64; k++) {
            json_object *resp = json_object_array_get_idx(resps, k), *ids;
            ncmp_buf line = NCMP_BUF_INIT;
            ncmp_buf_appendf(&line, "%s:", field(resp, "statusCode"));
            json_object_object_get_ex(resp, "ids", &ids);
            for (size_t j = 0; j < json_object_array_length(ids); j++)
                ncmp_buf_appendf(&line, "%s%s", j ? "," : "",
                                 json_object_get_string(json_object_array_get_idx(ids, j)));
            lines[nl++] = line.data;
        }
        json_object_put(doc);
    }
    for (size_t i = 1; i < nl; i++)
        for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
            char *t = lines[j];
            lines[j] = lines[j - 1];
            lines[j - 1] = t;
        }
    for (size_t i = 0; i < nl; i++) {
        ncmp_buf_appendf(&out, "%s%s", i ? ";" : "", lines[i]);
        free(lines[i]);
    }
    if (!out.data)
        ncmp_buf_append_str(&out, "");
    return out.data;
}

/* POST /ncmp/v1/data to the case's client topic; returns the request id
 * (owned by the caller). */
static char *batch_post(data_case *c, const char *targets_sq)
{
    ncmp_buf body = NCMP_BUF_INIT;
    char path[512];
    reply r;
    char *id;

    ncmp_buf_appendf(&body,
                     "{'operations':[{'operation':'read','operationId':'op-1',"
                     "'datastore':'ncmp-datastore:passthrough-operational',"
                     "'options':'(fields=x)','resourceIdentifier':'ManagedElement=1',"
                     "'targetIds':[%s]}]}",
                     targets_sq);
    snprintf(path, sizeof(path), "/ncmp/v1/data?topic=%s", c->client);
    call(c, "POST", path, body.data, &r);
    cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
    cr_assert_not_null(field(r.json, "requestId"), "%s", r.body.data);
    id = strdup(field(r.json, "requestId"));
    reply_free(&r);
    ncmp_buf_free(&body);
    return id;
}

/* --- the tests ----------------------------------------------------------- */

Test(data, passthrough_read_and_write_by_id_and_alternate_id, .timeout = 180)
{
    data_case *c = case_start("it-data-pt");
    reply r;
    char expected[256];

    register_handles(c, 1, 2);
    wait_ready_served(c, 1, 2);
    /* read by alternate id: the stub's body, network id naming ch-1 */
    call(c, "GET", "/ncmp/v1/ch/" ALT1 PT_OPER "&include-descendants=true", NULL, &r);
    cr_assert_eq(r.status, 200, "%ld %s; log %s", r.status, r.body.data, c->log);
    snprintf(expected, sizeof(expected), "%s-ch-1", c->dmi);
    cr_assert(strstr(r.body.data, expected), "%s not in %s", expected, r.body.data);
    {
        /* where the time went: ncmpd's part, the DMI client's wait and the
         * exchange with the stub, within what the client waited */
        double own = -1, wait = -1, dmi = -1;
        cr_assert_eq(sscanf(r.server_timing, "ncmpd;dur=%lf, dmi-wait;dur=%lf, dmi;dur=%lf", &own,
                            &wait, &dmi),
                     3, "Server-Timing: '%s'", r.server_timing);
        cr_assert(own >= 0 && wait >= 0 && dmi > 0, "%s", r.server_timing);
        cr_assert(own + wait + dmi <= r.took_ms + 0.5, "%s, the client waited %.3f ms",
                  r.server_timing, r.took_ms);
    }
    reply_free(&r);
    /* by id, on the running datastore */
    call(c, "GET", "/ncmp/v1/ch/ch-2" PT_RUN, NULL, &r);
    cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
    snprintf(expected, sizeof(expected), "%s-ch-2", c->dmi);
    cr_assert(strstr(r.body.data, expected), "%s", r.body.data);
    reply_free(&r);
    /* writes: NCMP's statuses; PATCH gives the DMI's body back */
    expect_status(c, "POST", "/ncmp/v1/ch/" ALT1 PT_RUN, "{'id':'123'}", 201, NULL);
    expect_status(c, "PUT", "/ncmp/v1/ch/ch-1" PT_RUN, "{'id':'123'}", 200, NULL);
    expect_status(c, "DELETE", "/ncmp/v1/ch/ch-1" PT_RUN, NULL, 204, NULL);
    call(c, "PATCH", "/ncmp/v1/ch/ch-1" PT_RUN, "{'id':'123'}", &r);
    cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
    cr_assert(strstr(r.body.data, "ch-1"), "%s", r.body.data);
    reply_free(&r);
    case_fini(c);
}

Test(data, passthrough_errors_as_ncmp, .timeout = 180)
{
    data_case *c = case_start("it-data-err");
    char url[512];

    register_handles(c, 1, 1);
    wait_ready_served(c, 1, 1);
    insert_handle(c, "adv-1", "/adv=1", "ADVISED", c->dmi);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", it_free_port());
    insert_handle(c, "down-1", NULL, "READY", url);
    snprintf(url, sizeof(url), "%s/nothing-here", c->dmi);
    insert_handle(c, "404-1", NULL, "READY", url);
    snprintf(url, sizeof(url), "%s/err", c->fake_dmi);
    insert_handle(c, "500-1", NULL, "READY", url);
    snprintf(url, sizeof(url), "%s/slow", c->fake_dmi);
    insert_handle(c, "slow-1", NULL, "READY", url);

    expect_status(c, "GET", "/ncmp/v1/ch/nobody" PT_OPER, NULL, 404, "Cm handle not found");
    expect_status(c, "GET", "/ncmp/v1/ch/%2Fadv%3D1" PT_OPER, NULL, 500,
                  "State mismatch exception.");
    expect_status(c, "GET", "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:bogus?resourceIdentifier=a",
                  NULL, 400, "ncmp-datastore:bogus is an invalid datastore name");
    expect_status(c, "POST", "/ncmp/v1/ch/ch-1" PT_OPER, "{}", 400,
                  "ncmp-datastore:passthrough-operational is not supported");
    expect_status(c, "GET", "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:passthrough-running", NULL,
                  400, "Required parameter 'resourceIdentifier' is not present.");
    expect_status(c, "GET", "/ncmp/v1/ch/ch-1" PT_OPER "&topic=bad%20topic", NULL, 400,
                  "Invalid topic name");
    snprintf(url, sizeof(url), "%s&topic=%s", "/ncmp/v1/ch/ch-1" PT_OPER, c->m2m);
    expect_status(c, "GET", url, NULL, 400, "Invalid topic name");
    expect_status(c, "GET", "/ncmp/v1/ch/ch-1" PT_OPER "&include-descendants=maybe", NULL, 400,
                  NULL);
    {
        reply r;
        call(c, "GET", "/ncmp/v1/ch/down-1" PT_OPER, NULL, &r);
        cr_assert_eq(r.status, 502, "%ld %s", r.status, r.body.data);
        cr_assert_str_eq(field(r.json, "dmi-response.http-code"), "503", "%s", r.body.data);
        reply_free(&r);
        call(c, "GET", "/ncmp/v1/ch/404-1" PT_OPER, NULL, &r);
        cr_assert_eq(r.status, 502, "%ld %s", r.status, r.body.data);
        cr_assert_str_eq(field(r.json, "dmi-response.http-code"), "404", "%s", r.body.data);
        reply_free(&r);
        call(c, "PUT", "/ncmp/v1/ch/500-1" PT_RUN, "{'a':1}", &r);
        cr_assert_eq(r.status, 502, "%ld %s", r.status, r.body.data);
        cr_assert_str_eq(field(r.json, "dmi-response.http-code"), "500", "%s", r.body.data);
        cr_assert_str_eq(field(r.json, "dmi-response.body"), "dmi broke", "%s", r.body.data);
        reply_free(&r);
        call(c, "GET", "/ncmp/v1/ch/slow-1" PT_OPER, NULL, &r);
        cr_assert_eq(r.status, 502, "%ld %s", r.status, r.body.data);
        cr_assert_str_eq(field(r.json, "dmi-response.http-code"), "408", "%s", r.body.data);
        reply_free(&r);
    }
    case_fini(c);
}

/* Register one handle, wait until it is READY and served, then read it
 * through pass-through with ?topic=<the client topic>; returns the
 * requestId ncmpd answered (the caller frees it). */
static char *read_with_topic(data_case *c)
{
    char path[512];
    reply r;
    char *id;

    register_handles(c, 1, 1);
    wait_ready_served(c, 1, 1);
    snprintf(path, sizeof(path), "%s&topic=%s", "/ncmp/v1/ch/" ALT1 PT_OPER, c->client);
    call(c, "GET", path, NULL, &r);
    cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
    id = strdup(field(r.json, "requestId"));
    reply_free(&r);
    return id;
}

Test(data, passthrough_with_topic_result_on_the_client_topic, .timeout = 180)
{
    data_case *c = case_start("it-data-async");
    char buf[128];
    it_record *recs = NULL;
    size_t n;
    char *id = read_with_topic(c);

    n = events_read(c, c->client, 1, &recs);
    cr_assert_str_eq(it_record_header(&recs[0], "ce_correlationid", buf, sizeof(buf)), id);
    cr_assert_str_eq(it_record_header(&recs[0], "ce_source", buf, sizeof(buf)), "DMI");
    cr_assert(strstr(recs[0].value, "\"statusCode\":\"0\""), "%s", recs[0].value);
    it_records_free(recs, n);
    free(id);
    case_fini(c);
}

/* The older answer of ONAP's DMI plugin, end to end: the stub publishes a
 * DmiAsyncRequestResponseEvent (no CloudEvent headers) on ncmp-async-m2m,
 * async-forward maps it to the NcmpAsyncRequestResponseEvent on the
 * client topic, read here as NCMP's clients read it. */
Test(data, passthrough_with_topic_legacy_result_on_the_client_topic, .timeout = 180)
{
    data_case *c = case_start_with("it-data-legacy", 1);
    char buf[256], err[1024];
    it_record *m2m = NULL, *recs = NULL;
    size_t nm2m, n;
    json_object *doc, *fwd, *data;
    char *id = read_with_topic(c);

    /* what the stub published: the DMI plugin's form */
    nm2m = it_read_topic(c->m2m, 1, WAIT_MS, &m2m);
    cr_assert_eq(nm2m, 1, "%zu records on %s; stub log %s", nm2m, c->m2m, c->stub_log);
    cr_assert_null(it_record_header(&m2m[0], "ce_type", buf, sizeof(buf)), "no CloudEvent");
    cr_assert_str_eq(m2m[0].key, id, "keyed by the request id");
    cr_assert_eq(conformance_check_event_text(CONFORMANCE_DMI_ASYNC, m2m[0].value, m2m[0].len, err,
                                              sizeof(err)),
                 0, "%s: %s", err, m2m[0].value);

    /* what the client gets */
    n = it_read_topic(c->client, 1, WAIT_MS, &recs);
    cr_assert_eq(n, 1, "%zu results on %s; log %s", n, c->client, c->log);
    cr_assert_eq(
        conformance_check_headers(CONFORMANCE_NCMP_ASYNC, recs[0].headers, err, sizeof(err)), 0,
        "%s", err);
    cr_assert_str_eq(it_record_header(&recs[0], "__TypeId__", buf, sizeof(buf)),
                     "org.onap.cps.ncmp.event.model.NcmpAsyncRequestResponseEvent");
    cr_assert_eq(conformance_check_event_text(CONFORMANCE_NCMP_ASYNC, recs[0].value, recs[0].len,
                                              err, sizeof(err)),
                 0, "%s: %s", err, recs[0].value);
    doc = json_tokener_parse(recs[0].value);
    cr_assert_not_null(doc);
    cr_assert_str_eq(field(doc, "eventCorrelationId"), id);
    cr_assert_str_eq(field(doc, "eventTarget"), c->client);
    cr_assert_str_eq(field(doc, "eventId"), recs[0].key, "keyed by the new event id");
    cr_assert(json_object_object_get_ex(doc, "forwardedEvent", &fwd));
    /* a read: ONAP's DMI plugin says OK 200 */
    cr_assert_str_eq(field(fwd, "response-status"), "OK");
    cr_assert_str_eq(field(fwd, "response-code"), "200");
    cr_assert_str_eq(field(fwd, "eventSource"), "org.onap.cps.ncmp.dmi");
    cr_assert(json_object_object_get_ex(fwd, "response-data", &data));
    cr_assert(json_object_object_get_ex(data, "ietf-network:networks", NULL), "the stub's data: %s",
              recs[0].value);
    json_object_put(doc);
    it_records_free(m2m, nm2m);
    it_records_free(recs, n);
    free(id);
    case_fini(c);
}

Test(data, handle_cache_follows_lifecycle_events, .timeout = 180)
{
    data_case *c = case_start("it-data-cache");
    char path[256];

    /* registered after ncmpd started: learnt from its events */
    register_handles(c, 1, 2);
    wait_ready_served(c, 1, 2);
    /* a change made behind ncmpd's back (no event) is not seen: requests
     * are served from the map, not the database */
    sql(c, "UPDATE cm_handle SET dmi_service_name = 'http://127.0.0.1:1' WHERE id = 'ch-1'");
    expect_status(c, "GET", "/ncmp/v1/ch/ch-1" PT_OPER, NULL, 200, NULL);
    /* deregistered: 404 without a restart */
    {
        reply r;
        snprintf(path, sizeof(path), "{'dmiPlugin':'%s','removedCmHandles':['ch-1']}", c->dmi);
        call(c, "POST", "/ncmpInventory/v1/ch", path, &r);
        cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
        reply_free(&r);
    }
    for (int i = 0; i < 100; i++) {
        reply r;
        call(c, "GET", "/ncmp/v1/ch/" ALT1 PT_OPER, NULL, &r);
        long s = r.status;
        reply_free(&r);
        if (s == 404)
            break;
        cr_assert_lt(i, 99, "deleted handle still served; log %s", c->log);
        it_sleep_ms(50);
    }
    case_fini(c);
}

Test(data, batch_read_events_per_handle_and_failures, .timeout = 180)
{
    data_case *c = case_start("it-data-batch");
    it_record *recs = NULL;
    char url[128], *id, *got, expected[256];
    size_t n;

    register_handles(c, 1, 3);
    wait_ready_served(c, 1, 3);
    insert_handle(c, "adv-1", NULL, "ADVISED", c->dmi);
    id = batch_post(c, "'ch-1','/SubNetwork=Europe/MeContext=Node2','ch-3','nobody','adv-1'");
    /* 3 results from the stub (forwarded), 1 event from ncmpd with 100 and 101 */
    n = events_read(c, c->client, 4, &recs);
    got = responses_of(recs, n, id);
    snprintf(expected, sizeof(expected), "%s", "0:ch-1;0:ch-2;0:ch-3;100:nobody;101:adv-1");
    cr_assert_str_eq(got, expected, "log %s", c->log);
    free(got);
    free(id);
    it_records_free(recs, n);

    /* the DMI down: 102 for its handles */
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", it_free_port());
    insert_handle(c, "down-1", NULL, "READY", url);
    snprintf(url, sizeof(url), "%s/err", c->fake_dmi);
    insert_handle(c, "500-1", NULL, "READY", url);
    id = batch_post(c, "'down-1','500-1'");
    n = events_read(c, c->client, 6, &recs);
    got = responses_of(recs, n, id);
    cr_assert_str_eq(got, "102:down-1;103:500-1", "log %s", c->log);
    free(got);
    free(id);
    it_records_free(recs, n);
    case_fini(c);
}

Test(data, batch_read_validation, .timeout = 180)
{
    data_case *c = case_start("it-data-batchval");
    ncmp_buf body = NCMP_BUF_INIT;
    char path[512];

    snprintf(path, sizeof(path), "/ncmp/v1/data?topic=%s", c->client);
    ncmp_buf_append_str(&body, "{'operations':[{'operation':'read','operationId':'big',"
                               "'datastore':'ncmp-datastore:passthrough-operational',"
                               "'targetIds':[");
    for (int i = 0; i < 201; i++)
        ncmp_buf_appendf(&body, "%s'ch-%d'", i ? "," : "", i);
    ncmp_buf_append_str(&body, "]}]}");
    expect_status(c, "POST", path, body.data, 413,
                  "Operation 'big' affects too many (201) cm handles");
    ncmp_buf_free(&body);
    expect_status(c, "POST", "/ncmp/v1/data", "{'operations':[]}", 400, NULL);
    expect_status(c, "POST", "/ncmp/v1/data?topic=..", "{'operations':[]}", 400,
                  "Invalid topic name");
    expect_status(c, "POST", path,
                  "{'operations':[{'operation':'delete','operationId':'1',"
                  "'datastore':'ncmp-datastore:passthrough-running','targetIds':[]}]}",
                  400, "delete operation not yet supported");
    expect_status(c, "POST", path,
                  "{'operations':[{'operation':'fly','operationId':'1',"
                  "'datastore':'ncmp-datastore:passthrough-running','targetIds':[]}]}",
                  400, "fly is an invalid operation name");
    expect_status(c, "POST", path,
                  "{'operations':[{'operation':'read','operationId':'1',"
                  "'datastore':'ncmp-datastore:operational','targetIds':[]}]}",
                  400, "ncmp-datastore:operational datastore is not supported");
    expect_status(c, "POST", path, "{'operations':[{'operation':'read'}]}", 400, NULL);
    expect_status(c, "POST", path, "not json", 400, NULL);
    case_fini(c);
}

Test(data, batch_read_from_the_request_topic, .timeout = 180)
{
    data_case *c = case_start("it-data-batchkafka");
    const char *good = "{\"operations\":[{\"operation\":\"read\",\"operationId\":\"k1\","
                       "\"datastore\":\"ncmp-datastore:passthrough-operational\","
                       "\"targetIds\":[\"ch-1\",\"nobody\"]}]}";
    const char *hdr_good[] = {"ce_id", "kafka-req-1", "ce_destination", c->client, NULL};
    const char *hdr_none[] = {"ce_id", "kafka-req-2", NULL};
    it_outgoing recs[2] = {{"k", good, strlen(good), hdr_good},
                           {"k", good, strlen(good), hdr_none}};
    it_record *got = NULL;
    char dlq[256], buf[256], *resp;
    size_t n;

    register_handles(c, 1, 1);
    wait_ready_served(c, 1, 1);
    it_publish(c->requests, recs, 2);
    n = events_read(c, c->client, 2, &got);
    resp = responses_of(got, n, "kafka-req-1");
    cr_assert_str_eq(resp, "0:ch-1;100:nobody", "log %s", c->log);
    free(resp);
    it_records_free(got, n);
    snprintf(dlq, sizeof(dlq), "%s-dlq", c->requests);
    n = it_read_topic(dlq, 1, WAIT_MS, &got);
    cr_assert_eq(n, 1, "log %s", c->log);
    cr_assert(strstr(it_record_header(&got[0], "dlq_reason", buf, sizeof(buf)), "ce_destination"));
    cr_assert_eq(
        conformance_check_headers(CONFORMANCE_DEAD_LETTER, got[0].headers, buf, sizeof(buf)), 0,
        "%s", buf);
    it_records_free(got, n);
    case_fini(c);
}

Test(data, many_concurrent_reads, .timeout = 180)
{
    data_case *c = case_start("it-data-many");
    enum { N = 300 };
    CURLM *multi = curl_multi_init();
    CURL *easy[N];
    reply *r = calloc(N, sizeof(*r));
    struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
    int running = 1, ok = 0;

    register_handles(c, 1, 10);
    wait_ready_served(c, 1, 10);
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, 200L);
    for (int i = 0; i < N; i++) {
        char path[256];
        snprintf(path, sizeof(path),
                 "/ncmp/v1/ch/%%2FSubNetwork%%3DEurope%%2FMeContext%%3DNode%d%s", i % 10 + 1,
                 PT_OPER);
        easy[i] = request_new(c, "GET", path, NULL, h, &r[i]);
        curl_multi_add_handle(multi, easy[i]);
    }
    while (running) {
        curl_multi_perform(multi, &running);
        curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    for (int i = 0; i < N; i++) {
        reply_finish(easy[i], &r[i]);
        ok += r[i].status == 200 && strstr(r[i].body.data, "MeContext") == NULL &&
              strstr(r[i].body.data, "-ch-") != NULL;
        curl_multi_remove_handle(multi, easy[i]);
        curl_easy_cleanup(easy[i]);
        reply_free(&r[i]);
    }
    free(r);
    curl_slist_free_all(h);
    curl_multi_cleanup(multi);
    cr_assert_eq(ok, N, "%d of %d concurrent reads answered 200 with the stub's body; log %s", ok,
                 N, c->log);
    case_fini(c);
}
