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
#include <curl/curl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it_util.h"
#include "ncmp_buf.h"

#define PARTITIONS 2
#define MAXFLAGS   32
#define WAIT_MS    60000
#define ALT1       "/SubNetwork=Europe/ManagedElement=Node 1"
#define ALT1_URL   "/SubNetwork=Europe/ManagedElement=Node%201"
#define ALT_NOPROD "/SubNetwork=Europe/ManagedElement=NoProducer"
#define ALT_DOWN   "/SubNetwork=Europe/ManagedElement=DmiDown"
#define ALT_ADV    "/SubNetwork=Europe/ManagedElement=Deleting"
#define PATCH_JSON "application/json-patch+json"
#define K6_PATCH                                                                                   \
    "[{'op':'replace','path':'/parent=id1/child=id2/grandchild=id3#/attributes/plmnId/mcc',"       \
    "'value':'1234'}]"

typedef struct pm_case {
    char topic[128];
    char dbname[96], dburl[512];
    char log[512], stub_log[512], port_file[512];
    char flag[MAXFLAGS][640];
    int nflags;
    ncmp_db *db;
    pid_t pid, stub;
    int port;     /* ncmpd's REST port */
    char dmi[64]; /* the stub */
} pm_case;

static pm_case the_case;
static int the_case_live;

static void kill_wait(pid_t *pid)
{
    if (*pid > 0) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
        *pid = 0;
    }
}

static void pm_cleanup(void)
{
    pm_case *c = &the_case;

    if (!the_case_live)
        return;
    the_case_live = 0;
    kill_wait(&c->pid);
    kill_wait(&c->stub);
    ncmp_db_close(c->db);
    c->db = NULL;
    it_scratch_db_drop(c->dbname);
}

TestSuite(provmns, .fini = pm_cleanup);

/* --- HTTP ------------------------------------------------------------------ */

typedef struct reply {
    long status;
    ncmp_buf body;
    json_object *json;
} reply;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* One request to `base` + `path`; `body_sq` is single-quoted JSON (sent
 * with double quotes) or NULL; `headers` NULL-terminated "Name: value". */
static void http(const char *base, const char *method, const char *path, const char *body_sq,
                 const char *const *headers, reply *r)
{
    CURL *curl = curl_easy_init();
    struct curl_slist *h = NULL;
    ncmp_buf body = NCMP_BUF_INIT, url = NCMP_BUF_INIT;
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    for (size_t i = 0; headers && headers[i]; i++)
        h = curl_slist_append(h, headers[i]);
    for (const char *p = body_sq; p && *p; p++)
        ncmp_buf_append_char(&body, *p == '\'' ? '"' : *p);
    ncmp_buf_appendf(&url, "%s%s", base, path);
    curl_easy_setopt(curl, CURLOPT_URL, url.data);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
    if (body_sq) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data ? body.data : "");
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)body.len);
    }
    rc = curl_easy_perform(curl);
    cr_assert_eq(rc, CURLE_OK, "%s %s: %s", method, url.data, curl_easy_strerror(rc));
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    if (!r->body.data)
        ncmp_buf_append_str(&r->body, "");
    r->json = json_tokener_parse(r->body.data);
    curl_slist_free_all(h);
    curl_easy_cleanup(curl);
    ncmp_buf_free(&body);
    ncmp_buf_free(&url);
}

static void reply_free(reply *r)
{
    json_object_put(r->json);
    ncmp_buf_free(&r->body);
}

static const char *field(json_object *o, const char *key)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
        return NULL;
    return json_object_get_string(v);
}

static void ncmp(pm_case *c, const char *method, const char *path, const char *body_sq,
                 const char *const *headers, reply *r)
{
    char base[64];
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", c->port);
    http(base, method, path, body_sq, headers, r);
}

/* `method path` answers `status` with 3GPP's error body of `type` whose
 * title holds `title` (each check skipped when NULL). */
static void expect_3gpp(pm_case *c, const char *method, const char *path, const char *body_sq,
                        const char *const *headers, long status, const char *type,
                        const char *title, const char *badop)
{
    reply r;

    ncmp(c, method, path, body_sq, headers, &r);
    cr_assert_eq(r.status, status, "%s %s: expected %ld, got %ld %s; log %s", method, path, status,
                 r.status, r.body.data, c->log);
    if (type) {
        char want[8];
        snprintf(want, sizeof(want), "%ld", status);
        cr_assert_str_eq(field(r.json, "status"), want, "%s", r.body.data);
        cr_assert_str_eq(field(r.json, "type"), type, "%s %s: %s", method, path, r.body.data);
    }
    if (title)
        cr_assert(field(r.json, "title") && strstr(field(r.json, "title"), title),
                  "%s %s: title should hold '%s': %s", method, path, title, r.body.data);
    if (badop)
        cr_assert_str_eq(field(r.json, "badOp"), badop, "%s", r.body.data);
    else if (type)
        cr_assert_null(field(r.json, "badOp"), "%s", r.body.data);
    reply_free(&r);
}

/* GET <stub>/stub/<what>: a JSON object (owned by the caller). */
static json_object *stub_get(pm_case *c, const char *what)
{
    reply r;
    json_object *o;

    http(c->dmi, "GET", what, NULL, NULL, &r);
    cr_assert_eq(r.status, 200, "GET %s: %ld %s", what, r.status, r.body.data);
    o = json_object_get(r.json);
    reply_free(&r);
    return o;
}

static long stub_count(pm_case *c, const char *name)
{
    json_object *o = stub_get(c, "/stub/stats");
    const char *v = field(o, name);
    long n;

    cr_assert_not_null(v, "no %s in /stub/stats", name);
    n = atol(v);
    json_object_put(o);
    return n;
}

/* --- the stub and ncmpd ---------------------------------------------------- */

static void stub_start(pm_case *c)
{
    const char *argv[] = {NCMP_DMISTUB_PATH,
                          "--port",
                          "0",
                          "--port-file",
                          c->port_file,
                          "--module-references-delay-ms",
                          "10",
                          "--module-resources-delay-ms",
                          "20",
                          "--provmns-read-delay-ms",
                          "20",
                          "--provmns-write-delay-ms",
                          "30",
                          "--read-delay-ms",
                          "20",
                          "--write-delay-ms",
                          "30",
                          "--threads",
                          "2",
                          NULL};
    long waited = 0;
    int p = 0;

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

static void flag(pm_case *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void flag(pm_case *c, const char *fmt, ...)
{
    va_list ap;

    cr_assert_lt(c->nflags, MAXFLAGS);
    va_start(ap, fmt);
    vsnprintf(c->flag[c->nflags++], sizeof(c->flag[0]), fmt, ap);
    va_end(ap);
}

/* ncmpd with the common flags and `extra` (NULL-terminated, may be NULL;
 * "%s" in one is replaced by the stub's URL). */
static pm_case *case_start(const char *name, const char *const *extra)
{
    pm_case *c = &the_case;
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    const char *args[MAXFLAGS + 1];
    static const char *const suffixes[] = {"", "-response", "-lcm", "-ms"};
    char t[256];
    ncmp_err err;

    memset(c, 0, sizeof(*c));
    dir = dir && *dir ? dir : "/tmp";
    curl_global_init(CURL_GLOBAL_ALL);
    it_unique(c->topic, sizeof(c->topic), name);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir, c->topic);
    snprintf(c->stub_log, sizeof(c->stub_log), "%s/%s-stub.log", dir, c->topic);
    snprintf(c->port_file, sizeof(c->port_file), "%s/%s-stub.port", dir, c->topic);
    it_scratch_db_create("it_provmns", c->dbname, sizeof(c->dbname), c->dburl, sizeof(c->dburl));
    the_case_live = 1;
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        snprintf(t, sizeof(t), "%s%s", c->topic, suffixes[i]);
        it_create_topic(t, PARTITIONS);
    }
    stub_start(c);
    flag(c, "--db.url=%s", c->dburl);
    flag(c, "--registration.topic=%s", c->topic);
    flag(c, "--registration.response-topic=%s-response", c->topic);
    flag(c, "--lcm.topic=%s-lcm", c->topic);
    flag(c, "--module-sync.topic=%s-ms", c->topic);
    flag(c, "--kafka.group.id=g-%s", c->topic);
    flag(c, "--roles=registration,module-sync,lcm-relay,rest");
    flag(c, "--http.port=0");
    flag(c, "--http.host=127.0.0.1");
    flag(c, "--rest.db-connections=3");
    flag(c, "--data.request-topic=");
    flag(c, "--dmi.response-timeout-ms=1000");
    flag(c, "--dmi.connect-timeout-ms=500");
    flag(c, "--module-sync.sweep-interval-ms=200");
    flag(c, "--kafka.topic-partitions=%d", PARTITIONS);
    for (size_t i = 0; extra && extra[i]; i++) {
        const char *at = strstr(extra[i], "%s");
        if (at)
            flag(c, "%.*s%s%s", (int)(at - extra[i]), extra[i], c->dmi, at + 2);
        else
            flag(c, "%s", extra[i]);
    }
    for (int i = 0; i < c->nflags; i++)
        args[i] = c->flag[i];
    args[c->nflags] = NULL;
    c->pid = it_ncmpd_start(c->log, args);
    c->port = it_logged_port(c->log);
    for (int i = 0; !it_file_contains(c->log, "relaying lifecycle events"); i++) {
        cr_assert_lt(i, 600, "the lifecycle relay did not start; log %s", c->log);
        it_sleep_ms(50);
    }
    cr_assert_eq(ncmp_db_open(&c->db, c->dburl, NULL, 10, &err), 0, "%s", err.msg);
    return c;
}

static void case_fini(pm_case *c)
{
    int status = it_ncmpd_stop(c->pid);

    c->pid = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "SIGTERM should stop ncmpd cleanly, status %d; log %s", status, c->log);
    pm_cleanup();
}

/* --- handles --------------------------------------------------------------- */

/* Register: ch-1 (ALT1, with a data producer), ch-2 (no data producer),
 * ch-3 (its data service a port nobody listens on). All READY. */
static void handles_ready(pm_case *c)
{
    ncmp_buf b = NCMP_BUF_INIT;
    char path[256];
    reply r;
    int down = it_free_port();

    ncmp_buf_appendf(&b,
                     "{'dmiPlugin':'%s','createdCmHandles':["
                     "{'cmHandle':'ch-1','alternateId':'" ALT1 "','moduleSetTag':'tagA',"
                     "'dataProducerIdentifier':'producer-1'},"
                     "{'cmHandle':'ch-2','alternateId':'" ALT_NOPROD "','moduleSetTag':'tagA'}]}",
                     c->dmi);
    ncmp(c, "POST", "/ncmpInventory/v1/ch", b.data,
         (const char *[]){"Content-Type: application/json", NULL}, &r);
    cr_assert_eq(r.status, 200, "registration: %ld %s", r.status, r.body.data);
    reply_free(&r);
    ncmp_buf_reset(&b);
    ncmp_buf_appendf(&b,
                     "{'dmiDataPlugin':'http://127.0.0.1:%d','dmiModelPlugin':'%s',"
                     "'createdCmHandles':[{'cmHandle':'ch-3','alternateId':'" ALT_DOWN "',"
                     "'moduleSetTag':'tagA','dataProducerIdentifier':'producer-1'}]}",
                     down, c->dmi);
    ncmp(c, "POST", "/ncmpInventory/v1/ch", b.data,
         (const char *[]){"Content-Type: application/json", NULL}, &r);
    cr_assert_eq(r.status, 200, "registration: %ld %s", r.status, r.body.data);
    reply_free(&r);
    ncmp_buf_free(&b);
    cr_assert_eq(
        it_wait_long(c->db, "SELECT count(*) FROM cm_handle WHERE state = $1", "READY", 3, WAIT_MS),
        3, "handles not READY; log %s", c->log);
    /* READY in the database; the map follows the lifecycle events */
    for (int i = 1; i <= 3; i++) {
        long got = 0;
        snprintf(path, sizeof(path), "/ncmp/v1/ch/ch-%d/state", i);
        for (int k = 0; k < 200 && got != 200; k++) {
            ncmp(c, "GET", path, NULL, NULL, &r);
            got = r.status == 200 && strstr(r.body.data, "READY") ? 200 : r.status;
            reply_free(&r);
            if (got != 200)
                it_sleep_ms(50);
        }
    }
    it_sleep_ms(300);
}

static const char *const ct_json[] = {"Content-Type: application/json", NULL};
static const char *const patch_type[] = {"Content-Type: " PATCH_JSON, NULL};

/* --- tests ------------------------------------------------------------------ */

Test(provmns, reads_and_writes_reach_the_dmi_as_ncmp_sends_them, .timeout = 180)
{
    pm_case *c = case_start("pm-fwd", NULL);
    const char *const auth_get[] = {"Authorization: Bearer token-1",
                                    "Accept: application/vnd.3gpp.object-tree-hierarchical+json",
                                    NULL};
    const char *const patch3gpp[] = {"Content-Type: application/3gpp-json-patch+json", NULL};
    json_object *last;
    reply r;

    handles_ready(c);

    /* a deep FDN below the handle, with a space, and every read parameter */
    ncmp(c, "GET",
         "/ProvMnS/v1" ALT1_URL "/GNBDUFunction=1/NRCellDU=cell%2C1?scopeType=BASE_NTH_LEVEL"
         "&scopeLevel=2&filter=%2Fx&attributes=a,b&fields=&dataNodeSelector=%2F%2Fy",
         NULL, auth_get, &r);
    cr_assert_eq(r.status, 200, "%s; log %s", r.body.data, c->log);
    cr_assert_str_eq(field(r.json, "objectClass"), "dummyClass", "%s", r.body.data);
    reply_free(&r);
    last = stub_get(c, "/stub/provmns/last");
    cr_assert_str_eq(field(last, "method"), "GET");
    cr_assert(strstr(field(last, "path"), "/ProvMnS/v1/SubNetwork=Europe/ManagedElement=Node"),
              "%s", field(last, "path"));
    cr_assert(strstr(field(last, "path"), "/GNBDUFunction=1/NRCellDU=cell,1"), "%s",
              field(last, "path"));
    cr_assert_str_eq(field(last, "query"),
                     "scopeType=BASE_NTH_LEVEL&scopeLevel=2&filter=%2Fx&attributes=a%2Cb&fields="
                     "&dataNodeSelector=%2F%2Fy");
    cr_assert_str_eq(field(last, "authorization"), "Bearer token-1");
    json_object_put(last);

    /* NCMP's k6 patch, both media types; the DMI's answer comes back */
    ncmp(c, "PATCH", "/ProvMnS/v1" ALT1_URL, K6_PATCH, patch_type, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert(json_object_is_type(r.json, json_type_array), "%s", r.body.data);
    reply_free(&r);
    last = stub_get(c, "/stub/provmns/last");
    cr_assert_str_eq(field(last, "method"), "PATCH");
    cr_assert_str_eq(field(last, "contentType"), PATCH_JSON);
    cr_assert(strstr(field(last, "body"), "plmnId/mcc"), "%s", field(last, "body"));
    json_object_put(last);
    ncmp(c, "PATCH", "/ProvMnS/v1" ALT1_URL "/A=1", K6_PATCH, patch3gpp, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);

    /* create, delete a child, an action */
    ncmp(c, "PUT", "/ProvMnS/v1" ALT1_URL "/A=1",
         "{'id':'1','objectClass':'A','attributes':{'x':1}}", ct_json, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    ncmp(c, "DELETE", "/ProvMnS/v1" ALT1_URL "/A=1", NULL, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    last = stub_get(c, "/stub/provmns/last");
    cr_assert_str_eq(field(last, "method"), "DELETE");
    json_object_put(last);
    ncmp(c, "POST", "/prov-mns-extensions/v1alpha1/actions" ALT1_URL "/A=1/restart",
         "{'input':{'delay':1}}", ct_json, &r);
    cr_assert_lt(r.status, 300, "%ld %s", r.status, r.body.data);
    reply_free(&r);
    last = stub_get(c, "/stub/provmns/last");
    cr_assert(strstr(field(last, "path"), "/prov-mns-extensions/v1alpha1/actions/SubNetwork=Europe/"
                                          "ManagedElement=Node"),
              "%s", field(last, "path"));
    cr_assert(strstr(field(last, "path"), "/A=1/restart"), "%s", field(last, "path"));
    json_object_put(last);
    cr_assert_eq(stub_count(c, "provmnsReads"), 1);
    cr_assert_eq(stub_count(c, "provmnsWrites"), 4);
    cr_assert_eq(stub_count(c, "provmnsActions"), 1);

    /* the DMI's own failure comes back as it is; a slow one is a 504; one
     * that cannot be reached a 500 */
    ncmp(c, "GET", "/ProvMnS/v1" ALT1_URL "/dmiSimulation=httpError_418", NULL, NULL, &r);
    cr_assert_eq(r.status, 418, "%s", r.body.data);
    cr_assert(strstr(r.body.data, "418"), "%s", r.body.data);
    reply_free(&r);
    expect_3gpp(c, "GET", "/ProvMnS/v1" ALT1_URL "/dmiSimulation=slowResponse_3000", NULL, NULL,
                504, "APPLICATION_LAYER_ERROR", "did not respond in a timely manner", NULL);
    expect_3gpp(c, "GET", "/ProvMnS/v1" ALT_DOWN, NULL, NULL, 500, "APPLICATION_LAYER_ERROR", NULL,
                NULL);
    case_fini(c);
}

Test(provmns, refusals_have_3gpp_bodies_and_never_reach_the_dmi, .timeout = 180)
{
    pm_case *c = case_start("pm-err", NULL);
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
             c->dmi);
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
    cr_assert_eq(stub_count(c, "provmnsReads") + stub_count(c, "provmnsWrites") +
                     stub_count(c, "provmnsActions"),
                 0, "a refused request reached the DMI");
    ncmp_buf_free(&eleven);
    case_fini(c);
}

/* The last permission request's operation (the first and only). */
static json_object *policy_last_op(pm_case *c, json_object **whole)
{
    json_object *body, *ops;

    *whole = stub_get(c, "/stub/policy/last");
    cr_assert(json_object_object_get_ex(*whole, "body", &body), "%s",
              json_object_to_json_string(*whole));
    cr_assert_str_eq(field(body, "changeRequestFormat"), "cm-legacy");
    cr_assert(json_object_object_get_ex(body, "operations", &ops) &&
              json_object_array_length(ops) == 1);
    return json_object_array_get_idx(ops, 0);
}

Test(provmns, policy_executor_guards_every_write, .timeout = 180)
{
    const char *const extra[] = {"--policy-executor.enabled=true", "--policy-executor.url=%s",
                                 "--policy-executor.timeout-ms=1000", NULL};
    pm_case *c = case_start("pm-pol", extra);
    const char *const auth_patch[] = {"Content-Type: " PATCH_JSON, "Authorization: Bearer token-2",
                                      NULL};
    json_object *whole, *op, *change;
    long writes;
    reply r;

    handles_ready(c);

    /* NCMP's k6 patch: an update of the grandchild's nested attribute */
    ncmp(c, "PATCH", "/ProvMnS/v1" ALT1_URL, K6_PATCH, auth_patch, &r);
    cr_assert_eq(r.status, 200, "%s; log %s", r.body.data, c->log);
    reply_free(&r);
    op = policy_last_op(c, &whole);
    cr_assert_str_eq(field(whole, "authorization"), "Bearer token-2");
    cr_assert_str_eq(field(op, "operation"), "update");
    cr_assert_str_eq(field(op, "entityHandleId"), "ch-1");
    cr_assert_str_eq(field(op, "resourceIdentifier"), "/parent=id1/child=id2");
    cr_assert_str_eq(field(op, "targetIdentifier"), ALT1);
    cr_assert(json_object_object_get_ex(op, "changeRequest", &change));
    cr_assert_str_eq(json_object_to_json_string_ext(change, JSON_C_TO_STRING_PLAIN),
                     "{\"grandchild\":[{\"id\":\"id3\",\"attributes\":{\"plmnId\":{\"mcc\":"
                     "\"1234\"}}}]}");
    json_object_put(whole);

    /* one check per item; the second is refused: nothing reaches the DMI */
    writes = stub_count(c, "provmnsWrites");
    expect_3gpp(c, "PATCH", "/ProvMnS/v1" ALT1_URL,
                "[{'op':'add','path':'/A=1','value':{'id':'1','attributes':{'x':1}}},"
                "{'op':'remove','path':'/policySimulation=policyResponse_deny'}]",
                patch_type, 409, "APPLICATION_LAYER_ERROR", "Operation not allowed. Decision id",
                "/1");
    cr_assert_eq(stub_count(c, "provmnsWrites"), writes, "a refused patch reached the DMI");
    op = policy_last_op(c, &whole);
    cr_assert_str_eq(field(op, "operation"), "delete");
    cr_assert_str_eq(field(op, "resourceIdentifier"), "/policySimulation=policyResponse_deny");
    cr_assert_not(json_object_object_get_ex(op, "changeRequest", &change));
    json_object_put(whole);

    /* a create; then an executor that fails or is slow: the default, deny */
    ncmp(c, "PUT", "/ProvMnS/v1" ALT1_URL "/A=1/B=2",
         "{'id':'2','objectClass':'B','attributes':{'y':'z'}}", ct_json, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    op = policy_last_op(c, &whole);
    cr_assert_str_eq(field(op, "operation"), "create");
    cr_assert_str_eq(field(op, "resourceIdentifier"), "/A=1");
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
    writes = stub_count(c, "policyRequests");
    ncmp(c, "GET", "/ProvMnS/v1" ALT1_URL, NULL, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    cr_assert_eq(stub_count(c, "policyRequests"), writes);
    ncmp(c, "POST",
         "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:passthrough-running?resourceIdentifier=A%3D1",
         "{'A':{'x':1}}", ct_json, &r);
    cr_assert_eq(r.status, 201, "%s; log %s", r.body.data, c->log);
    reply_free(&r);
    op = policy_last_op(c, &whole);
    cr_assert_str_eq(field(op, "operation"), "create");
    cr_assert_str_eq(field(op, "resourceIdentifier"), "A=1");
    cr_assert(json_object_object_get_ex(op, "changeRequest", &change));
    cr_assert_str_eq(json_object_to_json_string_ext(change, JSON_C_TO_STRING_PLAIN),
                     "{\"A\":{\"x\":1}}");
    json_object_put(whole);
    ncmp(c, "DELETE",
         "/ncmp/v1/ch/ch-1/data/ds/ncmp-datastore:passthrough-running?resourceIdentifier="
         "policySimulation%3DpolicyResponse_deny",
         NULL, NULL, &r);
    cr_assert_eq(r.status, 409, "%s", r.body.data);
    cr_assert(strstr(field(r.json, "message"), "Operation not allowed"), "%s", r.body.data);
    reply_free(&r);
    case_fini(c);
}

Test(provmns, executor_down_takes_the_default_decision, .timeout = 180)
{
    char url[64];
    const char *extra[] = {"--policy-executor.enabled=true", url,
                           "--policy-executor.default-decision=allow", NULL};
    pm_case *c;
    reply r;

    snprintf(url, sizeof(url), "--policy-executor.url=http://127.0.0.1:%d", it_free_port());
    c = case_start("pm-down", extra);
    handles_ready(c);
    ncmp(c, "PATCH", "/ProvMnS/v1" ALT1_URL, K6_PATCH, patch_type, &r);
    cr_assert_eq(r.status, 200, "the default decision allows: %s; log %s", r.body.data, c->log);
    reply_free(&r);
    cr_assert_eq(stub_count(c, "provmnsWrites"), 1);
    cr_assert_eq(stub_count(c, "policyRequests"), 0);
    case_fini(c);
}
