/*
 * ncmp-dmi-stub from the outside: the binary started on port 0 with
 * --port-file, spoken to with libcurl. Module references and resources per
 * tag (the sources parsed with libyang), the busy window, health, the
 * fault modes, pass-through delays and body, auth, bad requests, many
 * waiting requests at once (curl multi), a clean stop, ProvMnS and its
 * actions (bodies, delays, media types, fault markers, the last request
 * kept), the policy executor (decisions, markers, 400s), data-job sub-jobs,
 * their status and result (answers, counters, the failure marker, the
 * last sub-jobs kept, 400s, a 100,000-operation sub-job, the delay), and
 * batch reads on the real Kafka with every event checked against
 * schema/data-operation-event.json (and NCMP's published schema, when
 * available).
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <libyang/libyang.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"
#include "it_util.h"
#include "ncmp_buf.h"
#include "ncmp_json.h"

#define EVENT_TYPE     "org.onap.cps.ncmp.events.async1_0_0.DataOperationEvent"
#define PASSTHROUGH_OP "/data/ds/ncmp-datastore:passthrough-operational?resourceIdentifier="

/* --- the stub process -------------------------------------------------------- */

typedef struct stub {
    pid_t pid;
    unsigned port;
    char log[512];
    char port_file[512];
    char base[64]; /* http://127.0.0.1:<port> */
} stub;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned read_port_file(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned port = 0;

    if (!f)
        return 0;
    if (fscanf(f, "%u", &port) != 1)
        port = 0;
    fclose(f);
    return port;
}

static void child_exec(stub *s, const char *const *args)
{
    const char *argv[64];
    int n = 0, fd;

    argv[n++] = NCMP_DMISTUB_PATH;
    argv[n++] = "--port=0";
    argv[n++] = "--port-file";
    argv[n++] = s->port_file;
    for (const char *const *a = args; a && *a && n < 62; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    /* die with the test; keep none of Criterion's descriptors */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int i = 3; i < 1024; i++)
        close(i);
    fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        dup2(fd, STDERR_FILENO);
        dup2(fd, STDOUT_FILENO);
        close(fd);
    }
    execv(NCMP_DMISTUB_PATH, (char *const *)argv);
    _exit(127);
}

/* Start the stub with `args` (NULL-terminated, may be NULL) and wait for
 * its port. */
static void stub_start(stub *s, const char *const *args)
{
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    char name[128];
    double deadline = now_s() + 20;

    memset(s, 0, sizeof(*s));
    it_unique(name, sizeof(name), "dmistub");
    snprintf(s->log, sizeof(s->log), "%s/%s.log", dir && *dir ? dir : "/tmp", name);
    snprintf(s->port_file, sizeof(s->port_file), "/tmp/%s.port", name);
    s->pid = fork();
    cr_assert_neq(s->pid, -1);
    if (s->pid == 0)
        child_exec(s, args);
    while (now_s() < deadline) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid)
            cr_assert_fail("ncmp-dmi-stub exited at start (status %d); log %s", status, s->log);
        if ((s->port = read_port_file(s->port_file)) != 0)
            break;
        it_sleep_ms(10);
    }
    cr_assert_neq(s->port, 0, "no port file within 20 s; log %s", s->log);
    snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%u", s->port);
}

/* SIGTERM; the stub must exit 0. */
static void stub_stop(stub *s)
{
    int status = it_ncmpd_stop(s->pid);

    unlink(s->port_file);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "ncmp-dmi-stub did not stop cleanly (status %d); log %s", status, s->log);
}

/* --- HTTP ------------------------------------------------------------------ */

typedef struct http_res {
    long status;
    double secs;
    ncmp_buf body;
    ncmp_buf headers;
} http_res;

static size_t on_data(char *data, size_t size, size_t n, void *userdata)
{
    ncmp_buf_append(userdata, data, size * n);
    return size * n;
}

static CURL *easy_new(const stub *s, const char *method, const char *path, const char *body,
                      http_res *res)
{
    CURL *c = curl_easy_init();
    char url[4096];

    cr_assert_not_null(c);
    snprintf(url, sizeof(url), "%s%s", s->base, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &res->body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &res->headers);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    return c;
}

static void easy_finish(CURL *c, http_res *res)
{
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res->status);
    curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, &res->secs);
    if (!res->body.data)
        ncmp_buf_append_str(&res->body, "");
    if (!res->headers.data)
        ncmp_buf_append_str(&res->headers, "");
}

/* One request with `headers` (NULL-terminated); `body` and `userpwd` may
 * be NULL. */
static void http_request(const stub *s, const char *method, const char *path, const char *body,
                         const char *const *headers, const char *userpwd, http_res *res)
{
    CURL *c;
    CURLcode rc;
    struct curl_slist *hdrs = NULL;

    for (const char *const *h = headers; *h; h++)
        hdrs = curl_slist_append(hdrs, *h);
    memset(res, 0, sizeof(*res));
    c = easy_new(s, method, path, body, res);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    if (userpwd)
        curl_easy_setopt(c, CURLOPT_USERPWD, userpwd);
    rc = curl_easy_perform(c);
    cr_assert_eq(rc, CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror(rc));
    easy_finish(c, res);
    curl_easy_cleanup(c);
    curl_slist_free_all(hdrs);
}

/* One JSON request; `body` and `userpwd` may be NULL. */
static void http_auth(const stub *s, const char *method, const char *path, const char *body,
                      const char *userpwd, http_res *res)
{
    static const char *const json[] = {"Content-Type: application/json", NULL};

    http_request(s, method, path, body, json, userpwd, res);
}

static void http(const stub *s, const char *method, const char *path, const char *body,
                 http_res *res)
{
    http_auth(s, method, path, body, NULL, res);
}

static void res_free(http_res *res)
{
    ncmp_buf_free(&res->body);
    ncmp_buf_free(&res->headers);
}

static json_object *res_json(const http_res *res)
{
    json_object *doc = NULL;
    ncmp_err err;

    cr_assert_eq(ncmp_json_parse(res->body.data, res->body.len, &doc, &err), 0,
                 "not JSON (%s): %.200s", err.msg, res->body.data);
    return doc;
}

/* A request that must answer `status` with a JSON error naming `needle`. */
static void expect_error(const stub *s, const char *method, const char *path, const char *body,
                         long status, const char *needle)
{
    http_res res;
    json_object *doc, *msg;

    http(s, method, path, body, &res);
    cr_assert_eq(res.status, status, "%s %s: %ld %s", method, path, res.status, res.body.data);
    doc = res_json(&res);
    cr_assert(json_object_object_get_ex(doc, "message", &msg), "%s", res.body.data);
    cr_assert(strstr(json_object_get_string(msg), needle), "%s %s: %s", method, path,
              res.body.data);
    json_object_put(doc);
    res_free(&res);
}

/* A counter of GET /stub/stats ("a" or "a.b"). */
static long stat_of(const stub *s, const char *name)
{
    http_res res;
    json_object *doc, *v = NULL;
    char key[128], *dot;
    long n;

    http(s, "GET", "/stub/stats", NULL, &res);
    cr_assert_eq(res.status, 200);
    doc = res_json(&res);
    snprintf(key, sizeof(key), "%s", name);
    dot = strchr(key, '.');
    if (dot)
        *dot = '\0';
    cr_assert(json_object_object_get_ex(doc, key, &v), "no %s in %s", name, res.body.data);
    if (dot)
        cr_assert(json_object_object_get_ex(v, dot + 1, &v), "no %s in %s", name, res.body.data);
    n = json_object_get_int64(v);
    json_object_put(doc);
    res_free(&res);
    return n;
}

static long stat_wait(const stub *s, const char *name, long expected, int timeout_ms)
{
    double deadline = now_s() + timeout_ms / 1000.0;
    long v;

    while ((v = stat_of(s, name)) != expected && now_s() < deadline)
        it_sleep_ms(50);
    return v;
}

/* --- module references ------------------------------------------------------- */

static const char *const tags[] = {"tagA", "tagB", "tagC", "tagD", "tagE"};
static const char *const revisions[] = {"2024-01-01", "2024-02-02", "2024-03-03", "2024-04-04",
                                        "2024-05-05"};

static void expect_references(const stub *s, const char *body, int count, const char *revision)
{
    http_res res;
    json_object *doc, *schemas;

    http(s, "POST", "/dmi/v1/ch/ch-1/modules", body, &res);
    cr_assert_eq(res.status, 200, "%s: %ld %s", body, res.status, res.body.data);
    doc = res_json(&res);
    cr_assert(json_object_object_get_ex(doc, "schemas", &schemas));
    cr_assert_eq((int)json_object_array_length(schemas), count, "%s", body);
    for (int i = 0; i < count; i++) {
        json_object *m = json_object_array_get_idx(schemas, i), *v;
        char name[32], ns[64];
        snprintf(name, sizeof(name), "module%d", i);
        snprintf(ns, sizeof(ns), "org:onap:cps:test:module%d", i);
        cr_assert(json_object_object_get_ex(m, "moduleName", &v));
        cr_assert_str_eq(json_object_get_string(v), name);
        cr_assert(json_object_object_get_ex(m, "revision", &v));
        cr_assert_str_eq(json_object_get_string(v), revision, "%s", body);
        cr_assert(json_object_object_get_ex(m, "namespace", &v));
        cr_assert_str_eq(json_object_get_string(v), ns);
    }
    json_object_put(doc);
    res_free(&res);
}

Test(dmistub, module_references_per_tag, .timeout = 60)
{
    static const char *const args[] = {"--module-references-delay-ms=0", NULL};
    stub s;
    char body[64];

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    for (int t = 0; t < 5; t++) {
        snprintf(body, sizeof(body), "{\"moduleSetTag\":\"%s\",\"cmHandleProperties\":{}}",
                 tags[t]);
        expect_references(&s, body, 200, revisions[t]);
    }
    expect_references(&s, "{}", 10, "2024-01-01");
    expect_references(&s, "{\"moduleSetTag\":\"\"}", 10, "2024-01-01");
    expect_references(&s, "{\"moduleSetTag\":\"tagZ\"}", 10, "2024-01-01");
    expect_references(&s, "{\"moduleSetTag\":null}", 10, "2024-01-01");
    expect_error(&s, "POST", "/dmi/v1/ch/ch-1/modules", "{\"moduleSetTag\":\"errorTag\"}", 400,
                 "errorTag");
    cr_assert_eq(stat_of(&s, "moduleReferences.tagA"), 1);
    cr_assert_eq(stat_of(&s, "moduleReferences.tagE"), 1);
    cr_assert_eq(stat_of(&s, "moduleReferences.tagDefault"), 4);
    cr_assert_eq(stat_of(&s, "errorTag"), 1);
    {
        http_res res;
        http(&s, "POST", "/stub/reset", NULL, &res);
        cr_assert_eq(res.status, 200);
        res_free(&res);
    }
    cr_assert_eq(stat_of(&s, "moduleReferences.tagA"), 0);
    cr_assert_eq(stat_of(&s, "moduleReferences.tagDefault"), 0);
    cr_assert_eq(stat_of(&s, "errorTag"), 0);
    stub_stop(&s);
}

/* --- module resources ---------------------------------------------------------- */

/* Parse a source with libyang: 0 and the module's name, revision and
 * namespace checked, or -1 when libyang rejects it. */
static int yang_check(const char *src, const char *name, const char *revision)
{
    struct ly_ctx *ctx = NULL;
    struct lys_module *mod = NULL;
    char ns[64];
    LY_ERR rc;

    cr_assert_eq(ly_ctx_new(NULL, 0, &ctx), LY_SUCCESS);
    rc = lys_parse_mem(ctx, src, LYS_IN_YANG, &mod);
    if (rc == LY_SUCCESS) {
        snprintf(ns, sizeof(ns), "org:onap:cps:test:%s", name);
        cr_assert_str_eq(mod->name, name);
        cr_assert_str_eq(mod->revision, revision);
        cr_assert_str_eq(mod->ns, ns);
    }
    ly_ctx_destroy(ctx);
    return rc == LY_SUCCESS ? 0 : -1;
}

/* POST /moduleResources; returns the parsed array (owned). */
static json_object *resources(const stub *s, const char *body)
{
    http_res res;
    json_object *doc;

    http(s, "POST", "/dmi/v1/ch/ch-2/moduleResources", body, &res);
    cr_assert_eq(res.status, 200, "%s: %ld %.300s", body, res.status, res.body.data);
    doc = res_json(&res);
    cr_assert(json_object_is_type(doc, json_type_array));
    res_free(&res);
    return doc;
}

static const char *field(json_object *obj, const char *key)
{
    json_object *v;
    cr_assert(json_object_object_get_ex(obj, key, &v), "no %s", key);
    return json_object_get_string(v);
}

Test(dmistub, module_resources_are_32k_sources_that_libyang_parses, .timeout = 120)
{
    static const char *const args[] = {"--module-resources-delay-ms=0", NULL};
    static const char *const want[] = {"module0", "module199", "module7"};
    stub s;
    json_object *arr;

    curl_global_init(CURL_GLOBAL_ALL);
    ly_log_options(0);
    stub_start(&s, args);
    /* a wrong revision and a module the set lacks are left out */
    arr = resources(&s, "{\"moduleSetTag\":\"tagC\",\"data\":{\"modules\":["
                        "{\"name\":\"module0\",\"revision\":\"2024-03-03\"},"
                        "{\"name\":\"module199\",\"revision\":\"2024-03-03\"},"
                        "{\"name\":\"module5\",\"revision\":\"2024-01-01\"},"
                        "{\"name\":\"module200\",\"revision\":\"2024-03-03\"},"
                        "{\"name\":\"module7\"}]},\"cmHandleProperties\":{}}");
    cr_assert_eq(json_object_array_length(arr), 3);
    for (size_t i = 0; i < 3; i++) {
        json_object *m = json_object_array_get_idx(arr, i);
        const char *src = field(m, "yangSource");
        cr_assert_str_eq(field(m, "moduleName"), want[i]);
        cr_assert_str_eq(field(m, "revision"), "2024-03-03");
        cr_assert_eq(strlen(src), 32768, "%s is %zu characters", want[i], strlen(src));
        cr_assert_eq(yang_check(src, want[i], "2024-03-03"), 0, "libyang rejects %s", want[i]);
    }
    json_object_put(arr);
    /* without data.modules: the whole set; an unknown tag is tagDefault */
    arr = resources(&s, "{\"moduleSetTag\":\"other\"}");
    cr_assert_eq(json_object_array_length(arr), 10);
    for (size_t i = 0; i < 10; i++) {
        json_object *m = json_object_array_get_idx(arr, i);
        char name[32];
        snprintf(name, sizeof(name), "module%zu", i);
        cr_assert_eq(yang_check(field(m, "yangSource"), name, "2024-01-01"), 0);
    }
    json_object_put(arr);
    arr = resources(&s, "{\"moduleSetTag\":\"tagE\"}");
    cr_assert_eq(json_object_array_length(arr), 200);
    cr_assert_eq(yang_check(field(json_object_array_get_idx(arr, 150), "yangSource"), "module150",
                            "2024-05-05"),
                 0);
    json_object_put(arr);
    expect_error(&s, "POST", "/dmi/v1/ch/ch-2/moduleResources",
                 "{\"moduleSetTag\":\"tagA\",\"data\":{\"modules\":[{\"revision\":\"x\"}]}}", 400,
                 "data.modules[0]");
    expect_error(&s, "POST", "/dmi/v1/ch/ch-2/moduleResources",
                 "{\"moduleSetTag\":\"tagA\",\"data\":{\"modules\":{}}}", 400, "modules");
    expect_error(&s, "POST", "/dmi/v1/ch/ch-2/moduleResources", "{\"moduleSetTag\":\"errorTag\"}",
                 400, "errorTag");
    cr_assert_eq(stat_of(&s, "moduleResources.tagC"), 1);
    cr_assert_eq(stat_of(&s, "moduleResources.tagE"), 1);
    cr_assert_eq(stat_of(&s, "moduleResources.tagDefault"), 1);
    stub_stop(&s);
}

Test(dmistub, fault_modes_per_tag, .timeout = 60)
{
    static const char *const args[] = {"--module-resources-delay-ms=0",
                                       "--module-references-delay-ms=0",
                                       "--bad-yang-tag=tagA",
                                       "--garbage-tag",
                                       "tagB",
                                       "--error-tag=tagC,tagD",
                                       NULL};
    stub s;
    http_res res;
    json_object *arr, *doc = NULL;
    ncmp_err err;

    curl_global_init(CURL_GLOBAL_ALL);
    ly_log_options(0);
    stub_start(&s, args);
    /* invalid YANG: still 32,768 characters of JSON, but libyang says no */
    arr = resources(&s, "{\"moduleSetTag\":\"tagA\",\"data\":{\"modules\":[{\"name\":\"module1\","
                        "\"revision\":\"2024-01-01\"}]}}");
    cr_assert_eq(json_object_array_length(arr), 1);
    cr_assert_eq(strlen(field(json_object_array_get_idx(arr, 0), "yangSource")), 32768);
    cr_assert_eq(
        yang_check(field(json_object_array_get_idx(arr, 0), "yangSource"), "module1", "2024-01-01"),
        -1, "the bad-yang tag must give sources libyang rejects");
    json_object_put(arr);
    /* not JSON */
    http(&s, "POST", "/dmi/v1/ch/x/moduleResources", "{\"moduleSetTag\":\"tagB\"}", &res);
    cr_assert_eq(res.status, 200);
    cr_assert_neq(ncmp_json_parse(res.body.data, res.body.len, &doc, &err), 0, "%s", res.body.data);
    res_free(&res);
    /* HTTP 500, both tags of the list */
    expect_error(&s, "POST", "/dmi/v1/ch/x/moduleResources", "{\"moduleSetTag\":\"tagC\"}", 500,
                 "tagC");
    expect_error(&s, "POST", "/dmi/v1/ch/x/moduleResources", "{\"moduleSetTag\":\"tagD\"}", 500,
                 "tagD");
    /* other tags and the references of a faulty tag are unaffected */
    arr = resources(&s, "{\"moduleSetTag\":\"tagE\",\"data\":{\"modules\":[{\"name\":\"module1\","
                        "\"revision\":\"2024-05-05\"}]}}");
    cr_assert_eq(
        yang_check(field(json_object_array_get_idx(arr, 0), "yangSource"), "module1", "2024-05-05"),
        0);
    json_object_put(arr);
    expect_references(&s, "{\"moduleSetTag\":\"tagC\"}", 200, "2024-03-03");
    stub_stop(&s);
}

Test(dmistub, busy_window_answers_503_per_tag, .timeout = 60)
{
    static const char *const args[] = {"--busy-ms=3000", "--module-references-delay-ms=0",
                                       "--module-resources-delay-ms=0", NULL};
    stub s;
    double first;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    first = now_s();
    /* the first request of a tag opens its window */
    expect_error(&s, "POST", "/dmi/v1/ch/a/modules", "{\"moduleSetTag\":\"tagA\"}", 503, "tagA");
    expect_error(&s, "POST", "/dmi/v1/ch/a/moduleResources", "{\"moduleSetTag\":\"tagA\"}", 503,
                 "busy");
    expect_error(&s, "POST", "/dmi/v1/ch/b/modules", "{\"moduleSetTag\":\"tagB\"}", 503, "tagB");
    /* requests without a tag are never busy */
    expect_references(&s, "{}", 10, "2024-01-01");
    cr_assert_eq(stat_of(&s, "busy503"), 3);
    cr_assert_eq(stat_of(&s, "moduleReferences.tagA"), 0, "a 503 is not a served fetch");
    while (now_s() < first + 3.2)
        it_sleep_ms(50);
    expect_references(&s, "{\"moduleSetTag\":\"tagA\"}", 200, "2024-01-01");
    cr_assert_eq(stat_of(&s, "moduleReferences.tagA"), 1);
    stub_stop(&s);
}

/* --- health ------------------------------------------------------------------ */

static void expect_health(const stub *s, long status, const char *json)
{
    http_res res;

    http(s, "GET", "/actuator/health", NULL, &res);
    cr_assert_eq(res.status, status);
    cr_assert_str_eq(res.body.data, json);
    res_free(&res);
}

Test(dmistub, health_can_be_down_and_set, .timeout = 60)
{
    static const char *const args[] = {"--health-down", NULL};
    stub s;
    http_res res;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    expect_health(&s, 503, "{\"status\":\"DOWN\"}");
    http(&s, "POST", "/stub/health", "{\"status\":\"UP\"}", &res);
    cr_assert_eq(res.status, 200);
    res_free(&res);
    expect_health(&s, 200, "{\"status\":\"UP\"}");
    http(&s, "POST", "/stub/health", "{\"status\":\"DOWN\"}", &res);
    res_free(&res);
    expect_health(&s, 503, "{\"status\":\"DOWN\"}");
    expect_error(&s, "POST", "/stub/health", "{\"status\":\"SIDEWAYS\"}", 400, "UP");
    expect_error(&s, "POST", "/actuator/health", NULL, 405, "GET");
    stub_stop(&s);
}

/* --- pass-through -------------------------------------------------------------- */

/* The network-id of a topology answer. */
static const char *network_id(json_object *topo)
{
    json_object *v;

    cr_assert(json_object_object_get_ex(topo, "ietf-network:networks", &v));
    cr_assert(json_object_object_get_ex(v, "network", &v));
    v = json_object_array_get_idx(v, 0);
    cr_assert(json_object_object_get_ex(v, "network-id", &v));
    return json_object_get_string(v);
}

static void expect_passthrough(const stub *s, const char *id_in_path, const char *id,
                               const char *operation, double min_secs)
{
    http_res res;
    json_object *doc;
    char path[512], body[128], expected[256];

    snprintf(path, sizeof(path), "/dmi/v1/ch/%s" PASSTHROUGH_OP "ManagedElement%%3DNRNode1",
             id_in_path);
    snprintf(body, sizeof(body), "{\"operation\":\"%s\",\"cmHandleProperties\":{}}", operation);
    http(s, "POST", path, body, &res);
    cr_assert_eq(res.status, 200, "%s: %ld %s", operation, res.status, res.body.data);
    cr_assert_geq(res.secs, min_secs, "%s answered after %.3f s", operation, res.secs);
    cr_assert(res.body.len > 1700 && res.body.len < 2100, "%zu bytes", res.body.len);
    doc = res_json(&res);
    snprintf(expected, sizeof(expected), "%s-%s", s->base, id);
    cr_assert_str_eq(network_id(doc), expected);
    json_object_put(doc);
    res_free(&res);
}

Test(dmistub, passthrough_read_and_write_delays_and_body, .timeout = 60)
{
    stub s;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, NULL); /* the reference delays: read 300 ms, write 670 ms */
    expect_passthrough(&s, "ch-7", "ch-7", "read", 0.3);
    expect_passthrough(&s, "ch-7", "ch-7", "create", 0.67);
    expect_passthrough(&s, "ch-7", "ch-7", "patch", 0.67);
    expect_passthrough(&s, "a%2Fb", "a/b", "read", 0.3);
    expect_error(&s, "POST", "/dmi/v1/ch/ch-7" PASSTHROUGH_OP "x", "{\"operation\":\"frob\"}", 400,
                 "operation");
    expect_error(&s, "POST", "/dmi/v1/ch/ch-7" PASSTHROUGH_OP "x", "{}", 400, "operation");
    expect_error(&s, "POST", "/dmi/v1/ch/ch-7/data/ds/ncmp-datastore:passthrough-running",
                 "{\"operation\":\"read\"}", 400, "resourceIdentifier");
    expect_error(&s, "POST", "/dmi/v1/ch/ch-7" PASSTHROUGH_OP "x", "{\"operation\":", 400,
                 "malformed JSON");
    /* a topic needs Kafka */
    expect_error(&s, "POST", "/dmi/v1/ch/ch-7" PASSTHROUGH_OP "x&topic=t",
                 "{\"operation\":\"read\",\"requestId\":\"r\"}", 503, "--kafka");
    cr_assert_eq(stat_of(&s, "passthroughReads"), 3);
    cr_assert_eq(stat_of(&s, "passthroughWrites"), 2);
    stub_stop(&s);
}

Test(dmistub, extra_delay_adds_to_every_dmi_answer, .timeout = 60)
{
    static const char *const args[] = {"--extra-delay-ms=400", "--module-references-delay-ms=0",
                                       NULL};
    stub s;
    http_res res;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    http(&s, "POST", "/dmi/v1/ch/x/modules", "{}", &res);
    cr_assert_eq(res.status, 200);
    cr_assert_geq(res.secs, 0.4);
    res_free(&res);
    stub_stop(&s);
}

/* --- auth and bad requests ----------------------------------------------------- */

Test(dmistub, basic_auth_on_dmi_paths, .timeout = 60)
{
    static const char *const args[] = {"--auth=cpsuser:cpsr0cks!", "--module-references-delay-ms=0",
                                       NULL};
    stub s;
    http_res res;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    http(&s, "POST", "/dmi/v1/ch/x/modules", "{}", &res);
    cr_assert_eq(res.status, 401);
    cr_assert(strstr(res.headers.data, "WWW-Authenticate: Basic"), "%s", res.headers.data);
    res_free(&res);
    http_auth(&s, "POST", "/dmi/v1/ch/x/modules", "{}", "cpsuser:wrong", &res);
    cr_assert_eq(res.status, 401);
    res_free(&res);
    http_auth(&s, "POST", "/dmi/v1/ch/x/modules", "{}", "cpsuser:cpsr0cks!", &res);
    cr_assert_eq(res.status, 200, "%s", res.body.data);
    res_free(&res);
    expect_health(&s, 200, "{\"status\":\"UP\"}");
    cr_assert_eq(stat_of(&s, "unauthorized"), 2);
    stub_stop(&s);
}

/* Bytes that are not JSON (NUL included) to every endpoint: a 4xx, never
 * a crash. */
static void send_garbage(const stub *s)
{
    static const char *const paths[] = {"/dmi/v1/ch/x/modules",
                                        "/dmi/v1/ch/x/moduleResources",
                                        "/dmi/v1/ch/x" PASSTHROUGH_OP "r",
                                        "/dmi/v1/data?topic=t&requestId=r",
                                        "/stub/health",
                                        "/dmi/v1/cmwriteJob?destination=d",
                                        "/dmi/v1/cmreadJob?destination=d"};
    unsigned seed = 12345;

    for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
        for (int round = 0; round < 20; round++) {
            char body[257];
            http_res res;
            CURL *c;
            size_t len = (size_t)(rand_r(&seed) % 256) + 1;
            for (size_t i = 0; i < len; i++)
                body[i] = (char)(rand_r(&seed) % 256);
            memset(&res, 0, sizeof(res));
            c = easy_new(s, "POST", paths[p], NULL, &res);
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
            cr_assert_eq(curl_easy_perform(c), CURLE_OK);
            easy_finish(c, &res);
            curl_easy_cleanup(c);
            cr_assert(res.status >= 400 && res.status < 600, "%s: %ld", paths[p], res.status);
            res_free(&res);
        }
    }
}

Test(dmistub, bad_requests_get_clear_errors, .timeout = 60)
{
    static const char *const args[] = {"--max-body-bytes=2048", NULL};
    stub s;
    http_res res;
    char big[4097];

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    expect_error(&s, "GET", "/nothing/here", NULL, 404, "no such endpoint");
    expect_error(&s, "POST", "/dmi/v1/nope", "{}", 404, "no such DMI endpoint");
    expect_error(&s, "POST", "/dmi/v1/ch//modules", "{}", 404, "no such DMI endpoint");
    expect_error(&s, "POST", "/dmi/v1/ch/x/data/ds/", "{}", 404, "no such DMI endpoint");
    http(&s, "GET", "/dmi/v1/data?topic=t&requestId=r", NULL, &res);
    cr_assert_eq(res.status, 405);
    cr_assert(strstr(res.headers.data, "Allow: POST"), "%s", res.headers.data);
    res_free(&res);
    expect_error(&s, "GET", "/stub/reset", NULL, 405, "POST");
    expect_error(&s, "POST", "/dmi/v1/ch/x/modules", "", 400, "malformed JSON");
    expect_error(&s, "POST", "/dmi/v1/ch/x/modules", "[1,2]", 400, "JSON object");
    expect_error(&s, "POST", "/dmi/v1/ch/x/modules", "{\"moduleSetTag\":7}", 400, "moduleSetTag");
    expect_error(&s, "POST", "/dmi/v1/ch/x/modules", "{\"a\":1} x", 400, "malformed JSON");
    memset(big, ' ', sizeof(big) - 1);
    big[0] = '{';
    big[sizeof(big) - 2] = '}';
    big[sizeof(big) - 1] = '\0';
    expect_error(&s, "POST", "/dmi/v1/ch/x/modules", big, 413, "2048");
    /* batch read: parameters first, then Kafka */
    expect_error(&s, "POST", "/dmi/v1/data?topic=t", "{\"operations\":[]}", 400, "requestId");
    expect_error(&s, "POST", "/dmi/v1/data?topic=t&requestId=r", "{\"operations\":[]}", 503,
                 "--kafka");
    send_garbage(&s);
    expect_health(&s, 200, "{\"status\":\"UP\"}");
    stub_stop(&s);
}

Test(dmistub, bad_flags_exit_2_and_help_shows_defaults, .timeout = 60)
{
    static const char *const needles[] = {"--port PORT",
                                          "8092",
                                          "--kafka BOOTSTRAP",
                                          "ncmp-async-m2m",
                                          "--busy-ms",
                                          "MODULE_INITIAL_PROCESSING_DELAY_MS",
                                          "--port-file",
                                          "--threads",
                                          "--hang",
                                          "--auth",
                                          "--bad-yang-tag",
                                          "--garbage-tag",
                                          "--error-tag",
                                          "--extra-delay-ms",
                                          "READ_DATA_FOR_CM_HANDLE_DELAY_MS",
                                          "--module-resources-delay-ms",
                                          "1000",
                                          "670",
                                          "--provmns-read-delay-ms",
                                          "PROVMNS_READ_DELAY_MS",
                                          "--provmns-write-delay-ms",
                                          "PROVMNS_WRITE_DELAY_MS",
                                          "--policy-decision",
                                          "DMI_STUB_POLICY_DECISION",
                                          "--policy-delay-ms",
                                          "DMI_STUB_POLICY_DELAY_MS",
                                          "--datajob-delay-ms",
                                          "DMI_STUB_DATAJOB_DELAY_MS",
                                          "--max-body-bytes",
                                          "67108864"};
    char cmd[1024], out[16384];
    FILE *p;
    size_t n;
    int status;

    snprintf(cmd, sizeof(cmd), "'%s' --help 2>&1", NCMP_DMISTUB_PATH);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    cr_assert_eq(pclose(p), 0);
    for (size_t i = 0; i < sizeof(needles) / sizeof(needles[0]); i++)
        cr_assert(strstr(out, needles[i]), "--help lacks %s", needles[i]);
    snprintf(cmd, sizeof(cmd), "MODULE_REFERENCES_DELAY_MS=soon '%s' 2>&1", NCMP_DMISTUB_PATH);
    p = popen(cmd, "r");
    n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    status = pclose(p);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2, "%s", out);
    cr_assert(strstr(out, "not an integer"), "%s", out);
    snprintf(cmd, sizeof(cmd), "'%s' --no-such-flag 2>&1", NCMP_DMISTUB_PATH);
    p = popen(cmd, "r");
    n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    status = pclose(p);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2, "%s", out);
    cr_assert(strstr(out, "--no-such-flag"), "%s", out);
    snprintf(cmd, sizeof(cmd), "'%s' --policy-decision=maybe 2>&1", NCMP_DMISTUB_PATH);
    p = popen(cmd, "r");
    n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    status = pclose(p);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2, "%s", out);
    cr_assert(strstr(out, "--policy-decision"), "%s", out);
}

/* --- ProvMnS, actions and the policy executor ------------------------------------ */

#define PROVMNS_FDN   "/ProvMnS/v1/SubNetwork=Europe/MeContext=Node1/ManagedElement=1"
#define JSON_PATCH    "Content-Type: application/json-patch+json"
#define JSON_CT       "Content-Type: application/json"
#define ACTION_PATH   "/prov-mns-extensions/v1alpha1/actions/SubNetwork=A/ManagedElement=1/reset"
#define PERMISSIONS   "/operation-permission/v1/permissions"
#define PATCH_REPLACE "[{\"op\":\"replace\",\"path\":\"/a=1#/attributes/mcc\",\"value\":\"1234\"}]"

/* One request with `headers` (NULL-terminated, at most 6; NULL: none)
 * instead of the JSON content type. */
static void http_with(const stub *s, const char *method, const char *path, const char *body,
                      const char *const *headers, http_res *res)
{
    const char *all[8] = {"Content-Type:"}; /* no Content-Type unless given */
    int n = 1;

    for (const char *const *h = headers; h && *h && n < 7; h++)
        all[n++] = *h;
    all[n] = NULL;
    http_request(s, method, path, body, all, NULL, res);
}

/* A request that must answer `status` (and `body`, unless NULL). */
static void expect_answer(const stub *s, const char *method, const char *path, const char *body,
                          const char *content_type, long status, const char *want)
{
    const char *const headers[] = {content_type, NULL};
    http_res res;

    http_with(s, method, path, body, content_type ? headers : NULL, &res);
    cr_assert_eq(res.status, status, "%s %s: %ld %s", method, path, res.status, res.body.data);
    if (want)
        cr_assert_str_eq(res.body.data, want, "%s %s", method, path);
    res_free(&res);
}

static void expect_status(const stub *s, const char *method, const char *path, const char *body,
                          const char *content_type, long status)
{
    expect_answer(s, method, path, body, content_type, status, NULL);
}

/* The "attributes" of a GET: the 5,696-byte topology (a JSON string that
 * holds a JSON object with nodes and links); returned owned. */
static char *provmns_read(const stub *s, const char *path)
{
    http_res res;
    json_object *doc, *inner, *v;
    ncmp_err err;
    char *attributes;

    http_with(s, "GET", path, NULL, NULL, &res);
    cr_assert_eq(res.status, 200, "GET %s: %ld %s", path, res.status, res.body.data);
    cr_assert(strstr(res.headers.data, "Content-Type: application/json"), "%s", res.headers.data);
    cr_assert_geq(res.secs, 0.15, "GET answered before the ProvMnS read delay");
    doc = res_json(&res);
    cr_assert_eq(json_object_object_length(doc), 4, "%.300s", res.body.data);
    cr_assert_str_eq(field(doc, "id"), "some id");
    cr_assert_str_eq(field(doc, "objectClass"), "dummyClass");
    cr_assert_str_eq(field(doc, "objectInstance"), "dummyInstance");
    cr_assert(json_object_object_get_ex(doc, "attributes", &v));
    cr_assert(json_object_is_type(v, json_type_string));
    cr_assert_eq(json_object_get_string_len(v), 5696);
    attributes = strdup(json_object_get_string(v));
    cr_assert_eq(ncmp_json_parse(attributes, strlen(attributes), &inner, &err), 0, "%s", err.msg);
    cr_assert(json_object_object_get_ex(inner, "node", &v));
    cr_assert_gt(json_object_array_length(v), 1);
    cr_assert(json_object_object_get_ex(inner, "ietf-network-topology:link", &v));
    cr_assert_gt(json_object_array_length(v), 1);
    json_object_put(inner);
    json_object_put(doc);
    res_free(&res);
    return attributes;
}

Test(dmistub, provmns_answers_as_the_reference_after_its_delays, .timeout = 60)
{
    static const char *const args[] = {"--provmns-read-delay-ms=150",
                                       "--provmns-write-delay-ms=250", NULL};
    static const char *const patch_3gpp[] = {"Content-Type: application/3gpp-json-patch+json",
                                             NULL};
    static const char *const patch_json[] = {JSON_PATCH "; charset=utf-8", NULL};
    stub s;
    http_res res;
    json_object *doc, *item;
    char *attributes, *again;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    attributes = provmns_read(&s, PROVMNS_FDN "?scope=BASE_ALL&fields=attributes");
    again = provmns_read(&s, "/ProvMnS/v1/A=1");
    cr_assert_str_eq(attributes, again);
    free(again);

    /* PATCH: the two-item list, its add carrying the same string */
    for (int i = 0; i < 2; i++) {
        http_with(&s, "PATCH", PROVMNS_FDN, PATCH_REPLACE, i ? patch_3gpp : patch_json, &res);
        cr_assert_eq(res.status, 200, "%ld %s", res.status, res.body.data);
        cr_assert_geq(res.secs, 0.25, "PATCH answered before the ProvMnS write delay");
        doc = res_json(&res);
        cr_assert_eq(json_object_array_length(doc), 2);
        item = json_object_array_get_idx(doc, 0);
        cr_assert_str_eq(field(item, "op"), "add");
        cr_assert_str_eq(field(item, "path"), "/path=setByStub");
        cr_assert_str_eq(field(item, "value"), attributes);
        item = json_object_array_get_idx(doc, 1);
        cr_assert_str_eq(field(item, "op"), "remove");
        cr_assert_str_eq(field(item, "path"), "/path=alsoSetByStub");
        json_object_put(doc);
        res_free(&res);
    }
    free(attributes);

    /* PUT: the stub's resource; DELETE: 200 without a body */
    http_with(&s, "PUT", PROVMNS_FDN, "{\"id\":\"x\",\"attributes\":{}}",
              (const char *const[]){JSON_CT, NULL}, &res);
    cr_assert_eq(res.status, 200, "%ld %s", res.status, res.body.data);
    cr_assert_geq(res.secs, 0.25);
    cr_assert_str_eq(res.body.data,
                     "{\"id\":\"Id set by Stub\",\"objectClass\":\"ObjectClass set by Stub\","
                     "\"objectInstance\":\"ObjectInstance set by Stub\","
                     "\"attributes\":\"Attribute set by Stub\"}");
    res_free(&res);
    http_with(&s, "DELETE", PROVMNS_FDN, NULL, NULL, &res);
    cr_assert_eq(res.status, 200, "%ld %s", res.status, res.body.data);
    cr_assert_geq(res.secs, 0.25);
    cr_assert_str_eq(res.body.data, "");
    res_free(&res);

    /* media types and bodies as the reference accepts them */
    expect_status(&s, "PATCH", PROVMNS_FDN, PATCH_REPLACE, JSON_CT, 415);
    expect_status(&s, "PATCH", PROVMNS_FDN, PATCH_REPLACE, NULL, 415);
    expect_status(&s, "PUT", PROVMNS_FDN, "{}", JSON_PATCH, 415);
    expect_status(&s, "PATCH", PROVMNS_FDN, "{\"op\":\"add\"}", JSON_PATCH, 400);
    expect_status(&s, "PATCH", PROVMNS_FDN, "[{\"op\":\"frob\",\"path\":\"/a\"}]", JSON_PATCH, 400);
    expect_status(&s, "PATCH", PROVMNS_FDN, "[{\"op\":\"add\"}]", JSON_PATCH, 400);
    expect_status(&s, "PATCH", PROVMNS_FDN, "[{", JSON_PATCH, 400);
    expect_status(&s, "PUT", PROVMNS_FDN, "[]", JSON_CT, 400);
    http_with(&s, "POST", PROVMNS_FDN, "{}", (const char *const[]){JSON_CT, NULL}, &res);
    cr_assert_eq(res.status, 405);
    cr_assert(strstr(res.headers.data, "Allow: GET, PUT, PATCH, DELETE"), "%s", res.headers.data);
    res_free(&res);
    expect_status(&s, "GET", "/ProvMnS/v2/A=1", NULL, NULL, 404);

    /* counted when received, errors included; the 405 is not */
    cr_assert_eq(stat_of(&s, "provmnsReads"), 2);
    cr_assert_eq(stat_of(&s, "provmnsWrites"), 12);
    cr_assert_eq(stat_of(&s, "provmnsActions"), 0);
    stub_stop(&s);
}

Test(dmistub, provmns_fault_markers_and_test_delays, .timeout = 60)
{
    static const char *const args[] = {"--provmns-read-delay-ms=1500",
                                       "--provmns-write-delay-ms=100", NULL};
    static const char *const extra[] = {"--provmns-read-delay-ms=0", "--extra-delay-ms=300", NULL};
    stub s;
    http_res res;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    /* an error at once, whatever the delay, for any method */
    http_with(&s, "GET", "/ProvMnS/v1/SubNetwork=A/dmiSimulation=httpError_503/ManagedElement=1",
              NULL, NULL, &res);
    cr_assert_eq(res.status, 503, "%ld %s", res.status, res.body.data);
    cr_assert_str_eq(res.body.data, "{\"error\":\"simulated 503\"}");
    cr_assert_lt(res.secs, 1.0, "the simulated error waited for the read delay");
    res_free(&res);
    expect_answer(&s, "PATCH", "/ProvMnS/v1/A=1/dmiSimulation=httpError_418", PATCH_REPLACE,
                  JSON_PATCH, 418, "{\"error\":\"simulated 418\"}");
    expect_answer(&s, "DELETE", "/ProvMnS/v1/dmiSimulation=httpError_500", NULL, NULL, 500,
                  "{\"error\":\"simulated 500\"}");
    expect_answer(&s, "POST",
                  "/prov-mns-extensions/v1alpha1/actions/A=1/dmiSimulation=httpError_504/reboot",
                  "{}", JSON_CT, 504, "{\"error\":\"simulated 504\"}");
    /* not a marker: another name, a value that is not one */
    expect_status(&s, "DELETE", "/ProvMnS/v1/A=1/xdmiSimulation=httpError_503", NULL, NULL, 200);
    expect_status(&s, "DELETE", "/ProvMnS/v1/A=1/dmiSimulation=httpError_5x3", NULL, NULL, 200);
    /* slowResponse adds its milliseconds to the delay */
    http_with(&s, "DELETE", "/ProvMnS/v1/A=1/dmiSimulation=slowResponse_400/B=2", NULL, NULL, &res);
    cr_assert_eq(res.status, 200);
    cr_assert_geq(res.secs, 0.5, "slowResponse_400 + 100 ms answered in %.3f s", res.secs);
    res_free(&res);
    http_with(&s, "POST", "/prov-mns-extensions/v1alpha1/actions/dmiSimulation=slowResponse_300/go",
              "{}", (const char *const[]){JSON_CT, NULL}, &res);
    cr_assert_eq(res.status, 200);
    cr_assert_geq(res.secs, 0.3);
    res_free(&res);
    stub_stop(&s);

    /* --extra-delay-ms applies to ProvMnS */
    stub_start(&s, extra);
    http_with(&s, "GET", "/ProvMnS/v1/A=1", NULL, NULL, &res);
    cr_assert_eq(res.status, 200);
    cr_assert_geq(res.secs, 0.3);
    res_free(&res);
    stub_stop(&s);
}

Test(dmistub, provmns_actions, .timeout = 60)
{
    static const char want[] =
        "{\"customProperties\":{\"KeySetByStub\":\"ValueSetByStub\"},\"value\":null}";
    stub s;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, NULL);
    expect_answer(&s, "POST", ACTION_PATH, "{\"customProperties\":{},\"value\":{\"input\":{}}}",
                  JSON_CT, 200, want);
    expect_status(&s, "POST", ACTION_PATH, "{}", "Content-Type: text/plain", 415);
    expect_status(&s, "POST", ACTION_PATH, "[1]", JSON_CT, 400);
    expect_status(&s, "POST", "/prov-mns-extensions/v1alpha1/actions/reset", "{}", JSON_CT, 404);
    expect_status(&s, "GET", ACTION_PATH, NULL, NULL, 405);
    cr_assert_eq(stat_of(&s, "provmnsActions"), 4);
    cr_assert_eq(stat_of(&s, "provmnsWrites"), 0);
    stub_stop(&s);
}

/* A field of GET /stub/provmns/last. */
static void expect_kept(json_object *doc, const char *name, const char *want)
{
    cr_assert_str_eq(field(doc, name), want, "%s", name);
}

Test(dmistub, provmns_last_request_is_kept_as_received, .timeout = 60)
{
    static const char *const args[] = {"--provmns-read-delay-ms=0", "--provmns-write-delay-ms=0",
                                       NULL};
    static const char *const hdrs[] = {JSON_PATCH, "Authorization: Bearer token-1", NULL};
    stub s;
    http_res res;
    json_object *doc;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    expect_error(&s, "GET", "/stub/provmns/last", NULL, 404, "no ProvMnS");
    http_with(&s, "PATCH", "/ProvMnS/v1/SubNetwork=A/MeContext=x%2Fy?a=%2Fb&c=d", PATCH_REPLACE,
              hdrs, &res);
    cr_assert_eq(res.status, 200);
    res_free(&res);
    http(&s, "GET", "/stub/provmns/last", NULL, &res);
    cr_assert_eq(res.status, 200);
    doc = res_json(&res);
    cr_assert_eq(json_object_object_length(doc), 6, "%s", res.body.data);
    expect_kept(doc, "method", "PATCH");
    expect_kept(doc, "path", "/ProvMnS/v1/SubNetwork=A/MeContext=x%2Fy");
    expect_kept(doc, "query", "a=%2Fb&c=d");
    expect_kept(doc, "contentType", "application/json-patch+json");
    expect_kept(doc, "authorization", "Bearer token-1");
    expect_kept(doc, "body", PATCH_REPLACE);
    json_object_put(doc);
    res_free(&res);
    /* the next one replaces it; what is absent is "" */
    http_with(&s, "GET", "/ProvMnS/v1/A=1", NULL, NULL, &res);
    res_free(&res);
    http(&s, "GET", "/stub/provmns/last", NULL, &res);
    doc = res_json(&res);
    expect_kept(doc, "method", "GET");
    expect_kept(doc, "path", "/ProvMnS/v1/A=1");
    expect_kept(doc, "query", "");
    expect_kept(doc, "contentType", "");
    expect_kept(doc, "authorization", "");
    expect_kept(doc, "body", "");
    json_object_put(doc);
    res_free(&res);
    /* actions too */
    http_with(&s, "POST", ACTION_PATH, "{\"value\":{}}", (const char *const[]){JSON_CT, NULL},
              &res);
    res_free(&res);
    http(&s, "GET", "/stub/provmns/last", NULL, &res);
    doc = res_json(&res);
    expect_kept(doc, "method", "POST");
    expect_kept(doc, "path", ACTION_PATH);
    expect_kept(doc, "body", "{\"value\":{}}");
    json_object_put(doc);
    res_free(&res);
    /* the reset forgets it and zeroes the counters */
    cr_assert_eq(stat_of(&s, "provmnsReads"), 1);
    http(&s, "POST", "/stub/reset", NULL, &res);
    cr_assert_eq(res.status, 200);
    res_free(&res);
    expect_error(&s, "GET", "/stub/provmns/last", NULL, 404, "no ProvMnS");
    cr_assert_eq(stat_of(&s, "provmnsReads"), 0);
    cr_assert_eq(stat_of(&s, "provmnsWrites"), 0);
    cr_assert_eq(stat_of(&s, "provmnsActions"), 0);
    stub_stop(&s);
}

/* A permission request whose first operation is `op` on `resource`, with
 * `change` ("" for none) as its changeRequest. */
static void permission_body(char *buf, size_t len, const char *op, const char *resource,
                            const char *change)
{
    snprintf(buf, len,
             "{\"changeRequestFormat\":\"cm-legacy\",\"operations\":[{\"operation\":\"%s\","
             "\"entityHandleId\":\"ch-1\",\"resourceIdentifier\":\"%s\","
             "\"targetIdentifier\":\"/SubNetwork=A/ManagedElement=1\"%s%s}]}",
             op, resource, *change ? ",\"changeRequest\":" : "", change);
}

/* POST a permission request: the answer's status; with 200 the id, result
 * and message are checked. */
static void expect_permission(const stub *s, const char *body, long status, const char *id,
                              const char *result, const char *message, double min_secs)
{
    static const char *const hdrs[] = {JSON_CT, "Authorization: Bearer policy-token", NULL};
    http_res res;
    json_object *doc;

    http_with(s, "POST", PERMISSIONS, body, hdrs, &res);
    cr_assert_eq(res.status, status, "%s: %ld %s", body, res.status, res.body.data);
    cr_assert_geq(res.secs, min_secs, "%s", body);
    if (status == 200) {
        doc = res_json(&res);
        cr_assert_eq(json_object_object_length(doc), 3, "%s", res.body.data);
        cr_assert_str_eq(field(doc, "id"), id);
        cr_assert_str_eq(field(doc, "permissionResult"), result);
        cr_assert_str_eq(field(doc, "message"), message);
        json_object_put(doc);
    }
    res_free(&res);
}

Test(dmistub, policy_executor_decides_as_the_reference, .timeout = 60)
{
    static const char change[] = "{\"Cell\":[{\"id\":\"c1\",\"attributes\":{}}]}";
    stub s;
    char body[1024];
    http_res res;
    json_object *doc, *want, *v;
    ncmp_err err;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, NULL);
    expect_error(&s, "GET", "/stub/policy/last", NULL, 404, "no permission");
    permission_body(body, sizeof(body), "update", "ManagedElement=1/GNBDUFunction=1", change);
    expect_permission(&s, body, 200, "1", "allow", "all good", 0);
    permission_body(body, sizeof(body), "delete", "a/policySimulation=policyResponse_deny", "");
    expect_permission(&s, body, 200, "2", "deny", "Stub is mocking a policy response: deny", 0);
    permission_body(body, sizeof(body), "create", "policySimulation=policyResponse_other/x",
                    change);
    expect_permission(&s, body, 200, "3", "other", "Stub is mocking a policy response: other", 0);
    permission_body(body, sizeof(body), "patch", "a/policySimulation=slowResponse_1", change);
    expect_permission(&s, body, 200, "4", "allow", "all good", 1.0);
    permission_body(body, sizeof(body), "delete", "segment1=1/policySimulation=httpError_418", "");
    http_with(&s, "POST", PERMISSIONS, body, (const char *const[]){JSON_CT, NULL}, &res);
    cr_assert_eq(res.status, 418);
    cr_assert_str_eq(res.body.data, "");
    res_free(&res);
    /* the error took an id: the next is 6 */
    permission_body(body, sizeof(body), "delete", "", "");
    expect_permission(&s, body, 200, "6", "allow", "all good", 0);

    /* the last request: its Authorization and its body as JSON */
    http(&s, "GET", "/stub/policy/last", NULL, &res);
    cr_assert_eq(res.status, 200);
    doc = res_json(&res);
    cr_assert_str_eq(field(doc, "authorization"), "Bearer policy-token");
    cr_assert(json_object_object_get_ex(doc, "body", &v));
    cr_assert_eq(ncmp_json_parse(body, strlen(body), &want, &err), 0);
    cr_assert(json_object_equal(v, want), "%s", res.body.data);
    json_object_put(want);
    json_object_put(doc);
    res_free(&res);

    /* 400: not that shape, no operations, no changeRequest but for delete */
    expect_status(&s, "POST", PERMISSIONS, "[]", JSON_CT, 400);
    expect_status(&s, "POST", PERMISSIONS, "{\"operations\":[]}", JSON_CT, 400);
    expect_status(&s, "POST", PERMISSIONS, "{\"changeRequestFormat\":\"cm-legacy\"}", JSON_CT, 400);
    expect_status(&s, "POST", PERMISSIONS,
                  "{\"changeRequestFormat\":\"cm-legacy\",\"operations\":[]}", JSON_CT, 400);
    expect_status(&s, "POST", PERMISSIONS,
                  "{\"changeRequestFormat\":\"cm-legacy\",\"operations\":{}}", JSON_CT, 400);
    expect_status(&s, "POST", PERMISSIONS,
                  "{\"changeRequestFormat\":\"cm-legacy\",\"operations\":[{\"operation\":"
                  "\"delete\"}]}",
                  JSON_CT, 400);
    expect_status(&s, "POST", PERMISSIONS,
                  "{\"changeRequestFormat\":\"cm-legacy\",\"operations\":[7]}", JSON_CT, 400);
    permission_body(body, sizeof(body), "update", "x", "");
    expect_status(&s, "POST", PERMISSIONS, body, JSON_CT, 400);
    permission_body(body, sizeof(body), "update", "x", "null");
    expect_status(&s, "POST", PERMISSIONS, body, JSON_CT, 400);
    permission_body(body, sizeof(body), "update", "x", "{}");
    expect_status(&s, "POST", PERMISSIONS, body, "Content-Type: text/plain", 415);
    expect_status(&s, "GET", PERMISSIONS, NULL, NULL, 405);
    expect_status(&s, "POST", PERMISSIONS, "not json", JSON_CT, 400);
    /* the last request is the last POST received, also when refused; a
     * body that is not JSON is kept as a string */
    http(&s, "GET", "/stub/policy/last", NULL, &res);
    doc = res_json(&res);
    cr_assert_str_eq(field(doc, "body"), "not json", "%s", res.body.data);
    cr_assert_str_eq(field(doc, "authorization"), "");
    json_object_put(doc);
    res_free(&res);

    cr_assert_eq(stat_of(&s, "policyRequests"), 17);
    http(&s, "POST", "/stub/reset", NULL, &res);
    res_free(&res);
    cr_assert_eq(stat_of(&s, "policyRequests"), 0);
    expect_error(&s, "GET", "/stub/policy/last", NULL, 404, "no permission");
    stub_stop(&s);
}

Test(dmistub, policy_decision_and_delay_options, .timeout = 60)
{
    static const char *const args[] = {"--policy-delay-ms=300", NULL};
    stub s;
    char body[1024];

    curl_global_init(CURL_GLOBAL_ALL);
    setenv("DMI_STUB_POLICY_DECISION", "deny", 1); /* the stub inherits it */
    stub_start(&s, args);
    permission_body(body, sizeof(body), "update", "ManagedElement=1", "{}");
    expect_permission(&s, body, 200, "1", "deny", "denied by the stub's --policy-decision", 0.3);
    /* a marker wins */
    permission_body(body, sizeof(body), "update", "policySimulation=policyResponse_allow", "{}");
    expect_permission(&s, body, 200, "2", "allow", "Stub is mocking a policy response: allow", 0.3);
    stub_stop(&s);
    unsetenv("DMI_STUB_POLICY_DECISION");
}

/* --- data jobs ------------------------------------------------------------------- */

#define CMWRITE       "/dmi/v1/cmwriteJob?destination=device%2Fmanaged-element-collection"
#define CMREAD        "/dmi/v1/cmreadJob?destination=some-destination"
#define DATAJOB_QUERY "/dmi/v1/cmwriteJob/dataProducer/some-producer/dataProducerJob/"
#define SUBJOB_ANSWER(n)                                                                           \
    "{\"subJobId\":\"" n "\",\"dmiServiceName\":\"some-dmi-service-name\","                        \
    "\"dataProducerId\":\"my-data-producer-id\"}"

/* A sub-job body as NCMP sends it: `ops` operations of `producer` in data
 * job `job`, two per alternate id (add, merge), as the workload builds
 * (100,000 of them make about 22 MB). */
static void subjob_body(ncmp_buf *b, const char *producer, const char *job, long ops)
{
    ncmp_buf_reset(b);
    ncmp_buf_appendf(b,
                     "{\"destination\":\"device/managed-element-collection\",\"dataAcceptType\":"
                     "\"application/json\",\"dataContentType\":\"application/merge-patch+json\","
                     "\"dataProducerId\":\"%s\",\"dataJobId\":\"%s\",\"data\":[",
                     producer, job);
    for (long i = 0; i < ops; i++)
        ncmp_buf_appendf(
            b,
            "%s{\"path\":\"SubNetwork=Europe/SubNetwork=Ireland/MeContext=MyRadioNode%ld/"
            "ManagedElement=MyManagedElement%ld/SomeChild=child-%ld\","
            "\"op\":\"%s\",\"moduleSetTag\":\"tagA\",\"value\":{\"key\":"
            "\"some-value-%ld\"},\"operationId\":\"%ld-%ld\"}",
            i ? "," : "", i / 2, i / 2, i % 2 + 1, i % 2 ? "merge" : "add", i, i / 2, i % 2 + 1);
    ncmp_buf_append_str(b, "]}");
}

/* POST a sub-job; it must answer `status` and `want` (unless NULL). */
static void expect_subjob(const stub *s, const char *path, const char *body, long status,
                          const char *want, http_res *res)
{
    static const char *const hdrs[] = {JSON_CT,
                                       "Authorization: Basic Y3BzdXNlcjpjcHNyMGNrcyE=", NULL};

    http_with(s, "POST", path, body, hdrs, res);
    cr_assert_eq(res->status, status, "POST %s: %ld %.300s", path, res->status, res->body.data);
    if (want)
        cr_assert_str_eq(res->body.data, want, "POST %s", path);
    cr_assert(strstr(res->headers.data, "Content-Type: application/json"), "%s", res->headers.data);
}

Test(dmistub, datajob_subjobs_status_and_result_answer_as_the_reference, .timeout = 60)
{
    static const char *const patch_3gpp[] = {"Content-Type: application/3gpp-json-patch+json",
                                             NULL};
    stub s;
    http_res res;
    ncmp_buf body = NCMP_BUF_INIT;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, NULL); /* no delay by default, as the reference */
    subjob_body(&body, "producer-1", "job-1", 4);
    expect_subjob(&s, CMWRITE, body.data, 200, SUBJOB_ANSWER("1"), &res);
    cr_assert_lt(res.secs, 0.5, "a sub-job waited %.3f s without a delay", res.secs);
    res_free(&res);
    /* the API's own media type too; each sub-job the next id */
    http_with(&s, "POST", CMWRITE, body.data, patch_3gpp, &res);
    cr_assert_eq(res.status, 200, "%ld %s", res.status, res.body.data);
    cr_assert_str_eq(res.body.data, SUBJOB_ANSWER("2"));
    res_free(&res);
    /* a read sub-job is answered the same way */
    expect_subjob(&s, CMREAD,
                  "{\"dataProducerId\":\"p\",\"data\":[{\"op\":\"read\",\"operationId\":\"1\","
                  "\"path\":\"SubNetwork=Europe\",\"attributes\":[\"userLabel\"],"
                  "\"scopeType\":\"BASE_ONLY\",\"scopeLevel\":0}]}",
                  200, SUBJOB_ANSWER("3"), &res);
    res_free(&res);

    /* status and result: constant, whatever the ids (an encoded '/' included) */
    expect_answer(&s, "GET", DATAJOB_QUERY "3/status", NULL, NULL, 200,
                  "{\"status\":\"FINISHED\"}");
    expect_answer(&s, "GET", "/dmi/v1/cmwriteJob/dataProducer/a%2Fb/dataProducerJob/x%2Fy/status",
                  NULL, NULL, 200, "{\"status\":\"FINISHED\"}");
    expect_answer(&s, "GET", DATAJOB_QUERY "3/result?destination=some-destination", NULL, NULL, 200,
                  "{\"result\":\"some status\"}");
    expect_error(&s, "GET", DATAJOB_QUERY "3/result", NULL, 400, "destination");
    http(&s, "POST", DATAJOB_QUERY "3/status", "{}", &res);
    cr_assert_eq(res.status, 405);
    cr_assert(strstr(res.headers.data, "Allow: GET"), "%s", res.headers.data);
    res_free(&res);
    http(&s, "GET", CMWRITE, NULL, &res);
    cr_assert_eq(res.status, 405);
    cr_assert(strstr(res.headers.data, "Allow: POST"), "%s", res.headers.data);
    res_free(&res);
    expect_error(&s, "GET", DATAJOB_QUERY "3/other", NULL, 404, "no such DMI endpoint");
    expect_error(&s, "GET", "/dmi/v1/cmwriteJob/dataProducer//dataProducerJob/3/status", NULL, 404,
                 "no such DMI endpoint");
    expect_error(&s, "GET", DATAJOB_QUERY "/status", NULL, 404, "no such DMI endpoint");
    expect_error(&s, "GET", DATAJOB_QUERY "3/status/more", NULL, 404, "no such DMI endpoint");

    /* counted when received (errors too, not the 405s); operations of accepted sub-jobs */
    cr_assert_eq(stat_of(&s, "datajobWrites"), 2);
    cr_assert_eq(stat_of(&s, "datajobReads"), 1);
    cr_assert_eq(stat_of(&s, "datajobOperations"), 9);
    cr_assert_eq(stat_of(&s, "datajobStatus"), 2);
    cr_assert_eq(stat_of(&s, "datajobResult"), 2);

    /* the reset zeroes them and restarts the ids */
    http(&s, "POST", "/stub/reset", NULL, &res);
    cr_assert_eq(res.status, 200);
    res_free(&res);
    cr_assert_eq(stat_of(&s, "datajobWrites"), 0);
    cr_assert_eq(stat_of(&s, "datajobReads"), 0);
    cr_assert_eq(stat_of(&s, "datajobOperations"), 0);
    cr_assert_eq(stat_of(&s, "datajobStatus"), 0);
    cr_assert_eq(stat_of(&s, "datajobResult"), 0);
    expect_subjob(&s, CMWRITE, body.data, 200, SUBJOB_ANSWER("1"), &res);
    res_free(&res);
    ncmp_buf_free(&body);
    stub_stop(&s);
}

Test(dmistub, datajob_failing_producer_and_malformed_subjobs, .timeout = 60)
{
    static const struct {
        const char *body, *needle;
    } bad[] = {
        {"", "malformed JSON at byte 0"},
        {"null", "must be a JSON object"},
        {"[{\"path\":\"a\",\"op\":\"add\"}]", "must be a JSON object"},
        {"{}", "data (an array of operations) is required"},
        {"{\"data\":null}", "data must be an array"},
        {"{\"data\":{\"path\":\"a\",\"op\":\"add\"}}", "data must be an array"},
        {"{\"data\":[]} x", "more after the JSON value"},
        {"{\"data\":[", "malformed JSON"},
        {"{\"data\":[{\"path\":\"a\",\"op\":\"add\"}", "malformed JSON"},
        {"{\"data\":[{\"path\":\"a\",\"op\":\"add\"},7]}", "data[1] must be an object"},
        {"{\"data\":[{\"op\":\"add\"}]}", "data[0].path (a string) is required"},
        {"{\"data\":[{\"path\":\"a\"}]}", "data[0].op (a string) is required"},
        {"{\"data\":[{\"path\":1,\"op\":\"add\"}]}", "data[0].path must be a string"},
        {"{\"data\":[{\"path\":\"a\",\"op\":\"add\",\"operationId\":1.5}]}",
         "data[0].operationId must be a string, an integer or null"},
        {"{\"data\":[{\"path\":\"a\",\"op\":\"add\",\"moduleSetTag\":[]}]}",
         "data[0].moduleSetTag must be a string or null"},
        {"{\"dataProducerId\":7,\"data\":[]}", "dataProducerId must be a string"},
        {"{\"dataJobId\":{},\"data\":[]}", "dataJobId must be a string"},
        {"{\"data\":[{\"path\":\"a\",\"op\":\"add\",\"value\":{\"k\":tru}}]}", "unexpected word"},
        {"{\"data\":[{\"path\":\"a\\u0000\",\"op\":\"add\"}]}", "\\u0000"},
        {"{\"data\":[{\"path\":\"a\\q\",\"op\":\"add\"}]}", "bad escape"},
        {"{\"data\":[{\"path\":\"a\",\"op\":\"add\",\"value\":01}]}", "malformed number"},
        {"{\"data\":[{\"path\":\"\xc3\x28\",\"op\":\"add\"}]}", "invalid UTF-8"},
    };
    stub s;
    http_res res;
    ncmp_buf body = NCMP_BUF_INIT, deep = NCMP_BUF_INIT;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, NULL);
    /* the marker fails its sub-job only: the others of the same data job succeed */
    subjob_body(&body, "producer-1", "job-1", 2);
    expect_subjob(&s, CMWRITE, body.data, 200, SUBJOB_ANSWER("1"), &res);
    res_free(&res);
    subjob_body(&body, "failing-producer", "job-1", 3);
    expect_subjob(&s, CMWRITE, body.data, 500, "{\"error\":\"simulated failure\"}", &res);
    res_free(&res);
    subjob_body(&body, "producer-2", "job-1", 2);
    expect_subjob(&s, CMWRITE, body.data, 200, SUBJOB_ANSWER("2"), &res);
    res_free(&res);
    subjob_body(&body, "failing-producer-not", "job-1", 1);
    expect_subjob(&s, CMWRITE, body.data, 200, SUBJOB_ANSWER("3"), &res);
    res_free(&res);
    expect_subjob(&s, CMREAD, "{\"dataProducerId\":\"failing-producer\",\"data\":[]}", 500,
                  "{\"error\":\"simulated failure\"}", &res);
    res_free(&res);
    cr_assert_eq(stat_of(&s, "datajobWrites"), 4);
    cr_assert_eq(stat_of(&s, "datajobOperations"), 8);

    /* malformed: 400 with what is wrong, not counted as operations, not kept */
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_error(&s, "POST", CMWRITE, bad[i].body, 400, bad[i].needle);
    expect_error(&s, "POST", "/dmi/v1/cmwriteJob", body.data, 400, "destination");
    expect_error(&s, "POST", "/dmi/v1/cmreadJob", body.data, 400, "destination");
    /* nesting: 64 deep passes, deeper does not */
    for (int depth = 61; depth <= 62; depth++) {
        ncmp_buf_reset(&deep);
        ncmp_buf_append_str(&deep, "{\"data\":[{\"path\":\"a\",\"op\":\"add\",\"value\":");
        for (int i = 0; i < depth; i++)
            ncmp_buf_append_char(&deep, '[');
        for (int i = 0; i < depth; i++)
            ncmp_buf_append_char(&deep, ']');
        ncmp_buf_append_str(&deep, "}]}");
        if (depth == 61) {
            expect_subjob(&s, CMWRITE, deep.data, 200, SUBJOB_ANSWER("4"), &res);
            res_free(&res);
        } else {
            expect_error(&s, "POST", CMWRITE, deep.data, 400, "nested more than 64 deep");
        }
    }
    cr_assert_eq(stat_of(&s, "datajobWrites"), 4 + (long)(sizeof(bad) / sizeof(bad[0])) + 1 + 2);
    cr_assert_eq(stat_of(&s, "datajobReads"), 2);
    cr_assert_eq(stat_of(&s, "datajobOperations"), 9);
    http(&s, "GET", "/stub/datajob/last", NULL, &res);
    cr_assert_eq(res.status, 200);
    {
        json_object *doc = res_json(&res);
        cr_assert_eq(json_object_array_length(doc), 6, "%s", res.body.data);
        json_object_put(doc);
    }
    res_free(&res);
    ncmp_buf_free(&deep);
    ncmp_buf_free(&body);
    stub_stop(&s);
}

/* Item `i` of GET /stub/datajob/last (the caller puts the array). */
static json_object *kept_subjob(const stub *s, json_object **all, size_t i)
{
    http_res res;

    http(s, "GET", "/stub/datajob/last", NULL, &res);
    cr_assert_eq(res.status, 200, "%ld %s", res.status, res.body.data);
    *all = res_json(&res);
    res_free(&res);
    cr_assert(json_object_is_type(*all, json_type_array));
    cr_assert_lt(i, json_object_array_length(*all));
    return json_object_array_get_idx(*all, i);
}

Test(dmistub, datajob_last_keeps_the_last_50_subjobs, .timeout = 60)
{
    static const char *const hdrs[] = {JSON_CT, "Authorization: Bearer token-7", NULL};
    stub s;
    http_res res;
    ncmp_buf body = NCMP_BUF_INIT;
    json_object *all, *job, *ids;
    char name[32];

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, NULL);
    expect_error(&s, "GET", "/stub/datajob/last", NULL, 404, "no sub-job");
    subjob_body(&body, "producer-\\u00e9", "job-0", 25);
    http_with(&s, "POST", "/dmi/v1/cmwriteJob?destination=a%2Fb&x=1", body.data, hdrs, &res);
    cr_assert_eq(res.status, 200);
    res_free(&res);
    job = kept_subjob(&s, &all, 0);
    cr_assert_eq(json_object_array_length(all), 1);
    cr_assert_eq(json_object_object_length(job), 8, "%s", json_object_to_json_string(job));
    cr_assert_str_eq(json_object_get_string(json_object_object_get(
                         json_object_object_get(job, "firstOperation"), "operationId")),
                     "0-1", "%s", json_object_to_json_string(job));
    expect_kept(job, "path", "/dmi/v1/cmwriteJob");
    expect_kept(job, "query", "destination=a%2Fb&x=1");
    expect_kept(job, "dataProducerId", "producer-\xc3\xa9");
    expect_kept(job, "dataJobId", "job-0");
    expect_kept(job, "authorization", "Bearer token-7");
    cr_assert_eq(json_object_get_int(json_object_object_get(job, "operations")), 25);
    ids = json_object_object_get(job, "operationIds");
    cr_assert_eq(json_object_array_length(ids), 20);
    cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(ids, 0)), "0-1");
    cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(ids, 19)), "9-2");
    json_object_put(all);

    /* integers are given as strings, absent and null ids as null */
    expect_subjob(&s, CMREAD,
                  "{\"data\":[{\"path\":\"a\",\"op\":\"read\",\"operationId\":12},"
                  "{\"path\":\"b\",\"op\":\"read\"},{\"path\":\"c\",\"op\":\"read\","
                  "\"operationId\":null}]}",
                  200, NULL, &res);
    res_free(&res);
    job = kept_subjob(&s, &all, 1);
    expect_kept(job, "path", "/dmi/v1/cmreadJob");
    cr_assert(json_object_is_type(json_object_object_get(job, "dataProducerId"), json_type_null));
    cr_assert(json_object_is_type(json_object_object_get(job, "dataJobId"), json_type_null));
    expect_kept(job, "authorization", "Basic Y3BzdXNlcjpjcHNyMGNrcyE=");
    ids = json_object_object_get(job, "operationIds");
    cr_assert_str_eq(json_object_to_json_string_ext(ids, JSON_C_TO_STRING_PLAIN),
                     "[\"12\",null,null]");
    json_object_put(all);

    /* the last 50, oldest first */
    for (int i = 1; i <= 55; i++) {
        snprintf(name, sizeof(name), "job-%d", i);
        subjob_body(&body, "producer-1", name, i % 3);
        expect_subjob(&s, CMWRITE, body.data, 200, NULL, &res);
        res_free(&res);
    }
    job = kept_subjob(&s, &all, 0);
    cr_assert_eq(json_object_array_length(all), 50);
    expect_kept(job, "dataJobId", "job-6");
    job = json_object_array_get_idx(all, 49);
    expect_kept(job, "dataJobId", "job-55");
    cr_assert_eq(json_object_get_int(json_object_object_get(job, "operations")), 1);
    json_object_put(all);

    /* the reset forgets them */
    http(&s, "POST", "/stub/reset", NULL, &res);
    res_free(&res);
    expect_error(&s, "GET", "/stub/datajob/last", NULL, 404, "no sub-job");
    ncmp_buf_free(&body);
    stub_stop(&s);
}

Test(dmistub, datajob_large_subjob_and_delay_option, .timeout = 120)
{
    static const char *const args[] = {"--datajob-delay-ms=400", NULL};
    stub s;
    http_res res;
    ncmp_buf body = NCMP_BUF_INIT;
    json_object *all, *job;

    curl_global_init(CURL_GLOBAL_ALL);
    /* the workload's large data job: 100,000 operations, over 16 MiB, in
     * one sub-job, with the default --max-body-bytes */
    stub_start(&s, NULL);
    subjob_body(&body, "producer-1", "job-large", 100000);
    cr_assert_gt(body.len, 16u << 20, "%zu bytes", body.len);
    expect_subjob(&s, CMWRITE, body.data, 200, SUBJOB_ANSWER("1"), &res);
    res_free(&res);
    cr_assert_eq(stat_of(&s, "datajobOperations"), 100000);
    job = kept_subjob(&s, &all, 0);
    cr_assert_eq(json_object_get_int(json_object_object_get(job, "operations")), 100000);
    cr_assert_eq(json_object_array_length(json_object_object_get(job, "operationIds")), 20);
    json_object_put(all);
    stub_stop(&s);

    /* --datajob-delay-ms delays sub-jobs only; the failure marker answers at once */
    stub_start(&s, args);
    subjob_body(&body, "producer-1", "job-1", 2);
    expect_subjob(&s, CMWRITE, body.data, 200, SUBJOB_ANSWER("1"), &res);
    cr_assert_geq(res.secs, 0.4, "answered after %.3f s", res.secs);
    res_free(&res);
    expect_subjob(&s, CMREAD, body.data, 200, SUBJOB_ANSWER("2"), &res);
    cr_assert_geq(res.secs, 0.4, "answered after %.3f s", res.secs);
    res_free(&res);
    subjob_body(&body, "failing-producer", "job-1", 2);
    expect_subjob(&s, CMWRITE, body.data, 500, NULL, &res);
    cr_assert_lt(res.secs, 0.4, "the failure waited %.3f s", res.secs);
    res_free(&res);
    http(&s, "GET", DATAJOB_QUERY "1/status", NULL, &res);
    cr_assert_eq(res.status, 200);
    cr_assert_lt(res.secs, 0.4, "the status waited %.3f s", res.secs);
    res_free(&res);
    stub_stop(&s);

    /* its environment variable */
    setenv("DMI_STUB_DATAJOB_DELAY_MS", "300", 1); /* the stub inherits it */
    stub_start(&s, NULL);
    subjob_body(&body, "producer-1", "job-1", 1);
    expect_subjob(&s, CMWRITE, body.data, 200, SUBJOB_ANSWER("1"), &res);
    cr_assert_geq(res.secs, 0.3, "answered after %.3f s", res.secs);
    res_free(&res);
    stub_stop(&s);
    unsetenv("DMI_STUB_DATAJOB_DELAY_MS");
    ncmp_buf_free(&body);
}

/* --- many requests waiting at once ------------------------------------------------- */

Test(dmistub, concurrent_requests_wait_together, .timeout = 120)
{
    enum { N = 500 };
    static const char *const args[] = {"--read-delay-ms=200", NULL};
    static const char body[] = "{\"operation\":\"read\"}";
    stub s;
    CURLM *multi;
    CURL *easy[N];
    http_res res[N];
    double t0, elapsed;
    int running = 1;
    char path[256];

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
    for (int i = 0; i < N; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        snprintf(path, sizeof(path), "/dmi/v1/ch/ch-%d" PASSTHROUGH_OP "r", i);
        easy[i] = easy_new(&s, "POST", path, body, &res[i]);
        curl_multi_add_handle(multi, easy[i]);
    }
    t0 = now_s();
    while (running) {
        cr_assert_eq(curl_multi_perform(multi, &running), CURLM_OK);
        if (running)
            curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    elapsed = now_s() - t0;
    for (int i = 0; i < N; i++) {
        easy_finish(easy[i], &res[i]);
        cr_assert_eq(res[i].status, 200, "request %d: %ld", i, res[i].status);
        cr_assert_geq(res[i].secs, 0.2, "request %d answered before its delay", i);
        curl_multi_remove_handle(multi, easy[i]);
        curl_easy_cleanup(easy[i]);
        res_free(&res[i]);
    }
    curl_multi_cleanup(multi);
    /* one at a time they would take 100 s; together about the delay */
    cr_assert_lt(elapsed, 2.0, "%d requests of 200 ms took %.2f s", N, elapsed);
    cr_assert_eq(stat_of(&s, "passthroughReads"), N);
    stub_stop(&s);
}

Test(dmistub, stop_answers_hung_requests_and_exits_0, .timeout = 60)
{
    static const char *const args[] = {"--hang", NULL};
    stub s;
    CURLM *multi;
    CURL *easy, *easy2;
    http_res res, res2;
    int running = 1, status;
    double deadline;

    curl_global_init(CURL_GLOBAL_ALL);
    stub_start(&s, args);
    multi = curl_multi_init();
    memset(&res, 0, sizeof(res));
    memset(&res2, 0, sizeof(res2));
    easy = easy_new(&s, "POST", "/dmi/v1/ch/x/modules", "{}", &res);
    curl_multi_add_handle(multi, easy);
    easy2 = easy_new(&s, "GET", "/ProvMnS/v1/SubNetwork=A/ManagedElement=1", NULL, &res2);
    curl_multi_add_handle(multi, easy2);
    /* the requests are in and wait */
    deadline = now_s() + 10;
    while (stat_of(&s, "waiting") != 2 && now_s() < deadline) {
        curl_multi_perform(multi, &running);
        curl_multi_poll(multi, NULL, 0, 20, NULL);
    }
    cr_assert_eq(stat_of(&s, "waiting"), 2);
    kill(s.pid, SIGTERM);
    while (running) {
        cr_assert_eq(curl_multi_perform(multi, &running), CURLM_OK);
        if (running)
            curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    easy_finish(easy, &res);
    cr_assert_eq(res.status, 503, "%ld %s", res.status, res.body.data);
    cr_assert(strstr(res.body.data, "stopping"), "%s", res.body.data);
    easy_finish(easy2, &res2);
    cr_assert_eq(res2.status, 503, "ProvMnS: %ld %s", res2.status, res2.body.data);
    curl_multi_remove_handle(multi, easy);
    curl_easy_cleanup(easy);
    curl_multi_remove_handle(multi, easy2);
    curl_easy_cleanup(easy2);
    curl_multi_cleanup(multi);
    res_free(&res);
    res_free(&res2);
    status = it_wait_exit(s.pid, 30000);
    cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d; log %s",
              status, s.log);
    cr_assert(it_file_contains(s.log, "stopped"), "log %s", s.log);
    unlink(s.port_file);
}

/* --- events on Kafka --------------------------------------------------------------- */

typedef struct kafka_stub {
    stub s;
    char topic[128]; /* the stub's async topic */
    char flag_kafka[256];
    char flag_topic[192];
} kafka_stub;

/* `extra`: one more flag, or NULL. */
static void kafka_stub_start_with(kafka_stub *k, const char *read_delay_flag, const char *extra)
{
    const char *args[8] = {k->flag_kafka,        k->flag_topic, read_delay_flag,
                           "--write-delay-ms=0", extra,         NULL};
    curl_global_init(CURL_GLOBAL_ALL);
    it_unique(k->topic, sizeof(k->topic), "dmistub-m2m");
    snprintf(k->flag_kafka, sizeof(k->flag_kafka), "--kafka=%s", it_kafka());
    snprintf(k->flag_topic, sizeof(k->flag_topic), "--async-topic=%s", k->topic);
    it_create_topic(k->topic, 3);
    stub_start(&k->s, args);
}

static void kafka_stub_start(kafka_stub *k, const char *read_delay_flag)
{
    kafka_stub_start_with(k, read_delay_flag, NULL);
}

static void kafka_stub_stop(kafka_stub *k)
{
    stub_stop(&k->s);
}

static const char *header(const it_record *r, const char *name, char *buf, size_t len)
{
    const char *v = it_record_header(r, name, buf, len);
    cr_assert_not_null(v, "record %s lacks header %s", r->key ? r->key : "-", name);
    return v;
}

static void expect_match(const char *value, const char *pattern)
{
    regex_t re;
    cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
    cr_assert_eq(regexec(&re, value, 0, NULL, 0), 0, "'%s' does not match %s", value, pattern);
    regfree(&re);
}

/* One event: headers, key, schema; returns its only response (the parsed
 * document is put in *doc, owned by the caller). */
static json_object *event_checked(const kafka_stub *k, const it_record *r, const char *destination,
                                  const char *correlation, json_object **doc)
{
    char buf[256], err[1024];
    json_object *v, *resp;
    ncmp_err perr;

    cr_assert_str_eq(header(r, "ce_specversion", buf, sizeof(buf)), "1.0");
    cr_assert_str_eq(header(r, "ce_type", buf, sizeof(buf)), EVENT_TYPE);
    cr_assert_str_eq(header(r, "ce_source", buf, sizeof(buf)), "DMI");
    cr_assert_str_eq(header(r, "ce_dataschema", buf, sizeof(buf)), "urn:cps:" EVENT_TYPE ":1.0.0");
    cr_assert_str_eq(header(r, "ce_destination", buf, sizeof(buf)), destination);
    cr_assert_str_eq(header(r, "ce_correlationid", buf, sizeof(buf)), correlation);
    cr_assert_str_eq(header(r, "content-type", buf, sizeof(buf)), "application/json");
    expect_match(header(r, "ce_id", buf, sizeof(buf)),
                 "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
    cr_assert(conformance_rfc3339_utc_ms(header(r, "ce_time", buf, sizeof(buf))), "ce_time %s",
              buf);
    cr_assert_eq(ncmp_json_parse(r->value, r->len, doc, &perr), 0, "%s", perr.msg);
    cr_assert_eq(conformance_check_event(CONFORMANCE_DATA_OPERATION, *doc, err, sizeof(err)), 0,
                 "%s: %s", err, r->value);
    cr_assert(json_object_object_get_ex(*doc, "data", &v));
    cr_assert(json_object_object_get_ex(v, "responses", &v));
    cr_assert_eq(json_object_array_length(v), 1);
    resp = json_object_array_get_idx(v, 0);
    cr_assert_str_eq(field(resp, "statusCode"), "0");
    cr_assert(json_object_object_get_ex(resp, "ids", &v));
    cr_assert_eq(json_object_array_length(v), 1);
    cr_assert_not_null(r->key);
    cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(v, 0)), r->key,
                     "the key is the CM handle id");
    return resp;
}

Test(dmistub, batch_read_publishes_one_event_per_handle, .timeout = 120)
{
    static const char body[] =
        "{\"operations\":["
        "{\"operation\":\"read\",\"operationId\":\"12\","
        "\"datastore\":\"ncmp-datastore:passthrough-operational\","
        "\"options\":\"(fields=NRCellDU/attributes/cellLocalId)\","
        "\"resourceIdentifier\":\"/ManagedElement=NRNode1/GNBDUFunction=1\","
        "\"cmHandles\":[{\"id\":\"ch-1\",\"cmHandleProperties\":{\"k\":\"v\"},"
        "\"moduleSetTag\":\"tagA\"},{\"id\":\"ch-2\"},{\"id\":\"ch-3\"}]},"
        "{\"operation\":\"read\",\"operationId\":\"13\","
        "\"datastore\":\"ncmp-datastore:passthrough-running\",\"cmHandles\":[{\"id\":\"ch-4\"},"
        "{\"id\":\"ch-5\"}]}]}";
    kafka_stub k;
    http_res res;
    it_record *recs = NULL;
    size_t n;
    char ids[5][64];

    kafka_stub_start(&k, "--read-delay-ms=1000");
    http(&k.s, "POST", "/dmi/v1/data?topic=legacy_batch_topic&requestId=req-42", body, &res);
    cr_assert_eq(res.status, 202, "%ld %s", res.status, res.body.data);
    cr_assert_lt(res.secs, 0.9, "202 comes at once, not after the read delay");
    res_free(&res);
    cr_assert_eq(stat_of(&k.s, "eventsQueued"), 0, "nothing is published before the delay");
    cr_assert_eq(stat_wait(&k.s, "eventsDelivered", 5, 30000), 5);
    n = it_read_topic(k.topic, 5, 30000, &recs);
    cr_assert_eq(n, 5, "%zu events", n);
    for (size_t i = 0; i < n; i++) {
        json_object *doc, *resp, *result;
        char expected[128];
        int first_op;
        resp = event_checked(&k, &recs[i], "legacy_batch_topic", "req-42", &doc);
        snprintf(ids[i], sizeof(ids[i]), "%s", recs[i].key);
        first_op = strcmp(recs[i].key, "ch-4") != 0 && strcmp(recs[i].key, "ch-5") != 0;
        cr_assert_str_eq(field(resp, "operationId"), first_op ? "12" : "13");
        if (first_op) {
            cr_assert_str_eq(field(resp, "options"), "(fields=NRCellDU/attributes/cellLocalId)");
            cr_assert_str_eq(field(resp, "resourceIdentifier"),
                             "/ManagedElement=NRNode1/GNBDUFunction=1");
        } else {
            cr_assert_not(json_object_object_get_ex(resp, "options", NULL));
        }
        cr_assert(json_object_object_get_ex(resp, "result", &result));
        snprintf(expected, sizeof(expected), "%s-%s", k.s.base, recs[i].key);
        cr_assert_str_eq(network_id(result), expected);
        json_object_put(doc);
    }
    /* one per handle: five distinct keys */
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            cr_assert_str_neq(ids[i], ids[j]);
    it_records_free(recs, n);
    cr_assert_eq(stat_of(&k.s, "batchRequests"), 1);
    cr_assert_eq(stat_of(&k.s, "batchHandles"), 5);
    expect_error(&k.s, "POST", "/dmi/v1/data?topic=t&requestId=r",
                 "{\"operations\":[{\"operationId\":\"1\",\"cmHandles\":[{\"id\":3}]}]}", 400,
                 "cmHandles[0]");
    expect_error(&k.s, "POST", "/dmi/v1/data?topic=t&requestId=r",
                 "{\"operations\":[{\"cmHandles\":[]}]}", 400, "operationId");
    kafka_stub_stop(&k);
}

Test(dmistub, async_passthrough_publishes_a_data_operation_event, .timeout = 120)
{
    kafka_stub k;
    http_res res;
    it_record *recs = NULL;
    json_object *doc, *resp, *result;
    char expected[128];
    size_t n;

    kafka_stub_start(&k, "--read-delay-ms=100");
    http(&k.s, "POST",
         "/dmi/v1/ch/ch-9" PASSTHROUGH_OP "ManagedElement%3DNRNode1&options=(a%3D1)&topic=client-t",
         "{\"operation\":\"read\",\"requestId\":\"3a9ce55c-e365-4dc9-8da3-a06f07cbc6d7\","
         "\"cmHandleProperties\":{},\"moduleSetTag\":\"\"}",
         &res);
    cr_assert_eq(res.status, 202, "%ld %s", res.status, res.body.data);
    cr_assert_str_eq(res.body.data, "{\"requestId\":\"3a9ce55c-e365-4dc9-8da3-a06f07cbc6d7\"}");
    res_free(&res);
    expect_error(&k.s, "POST", "/dmi/v1/ch/ch-9" PASSTHROUGH_OP "x&topic=client-t",
                 "{\"operation\":\"read\"}", 400, "requestId");
    n = it_read_topic(k.topic, 1, 30000, &recs);
    cr_assert_eq(n, 1);
    resp = event_checked(&k, &recs[0], "client-t", "3a9ce55c-e365-4dc9-8da3-a06f07cbc6d7", &doc);
    cr_assert_str_eq(recs[0].key, "ch-9");
    cr_assert_str_eq(field(resp, "operationId"), "3a9ce55c-e365-4dc9-8da3-a06f07cbc6d7");
    cr_assert_str_eq(field(resp, "resourceIdentifier"), "ManagedElement=NRNode1");
    cr_assert_str_eq(field(resp, "options"), "(a=1)");
    cr_assert(json_object_object_get_ex(resp, "result", &result));
    snprintf(expected, sizeof(expected), "%s-ch-9", k.s.base);
    cr_assert_str_eq(network_id(result), expected);
    json_object_put(doc);
    it_records_free(recs, n);
    cr_assert_eq(stat_of(&k.s, "asyncPassthrough"), 1);
    kafka_stub_stop(&k);
}

/* --async-legacy: the answer of ONAP's DMI plugin, a
 * DmiAsyncRequestResponseEvent without CloudEvent headers, keyed by the
 * request id, its status and code following the operation. */
Test(dmistub, async_legacy_passthrough_publishes_a_dmi_async_request_response_event, .timeout = 120)
{
    static const struct {
        const char *op, *status, *code;
    } ops[] = {
        {"read", "OK", "200"}, {"create", "Created", "201"}, {"delete", "No Content", "204"}};
    kafka_stub k;
    http_res res;
    it_record *recs = NULL;
    char body[256], id[64], buf[256], err[1024], expected[128];
    size_t n;

    kafka_stub_start_with(&k, "--read-delay-ms=0", "--async-legacy");
    for (size_t i = 0; i < 3; i++) {
        snprintf(body, sizeof(body), "{\"operation\":\"%s\",\"requestId\":\"req-%zu\"}", ops[i].op,
                 i);
        http(&k.s, "POST", "/dmi/v1/ch/ch-9" PASSTHROUGH_OP "x&topic=client-t", body, &res);
        cr_assert_eq(res.status, 202, "%ld %s", res.status, res.body.data);
        res_free(&res);
    }
    n = it_read_topic(k.topic, 3, 30000, &recs);
    cr_assert_eq(n, 3);
    for (size_t i = 0; i < n; i++) {
        json_object *doc = json_tokener_parse(recs[i].value), *data;
        size_t op = 0;
        cr_assert_not_null(doc, "%s", recs[i].value);
        cr_assert_null(it_record_header(&recs[i], "ce_type", buf, sizeof(buf)), "no CloudEvent");
        cr_assert_str_eq(header(&recs[i], "__TypeId__", buf, sizeof(buf)),
                         "org.onap.cps.ncmp.event.model.DmiAsyncRequestResponseEvent");
        cr_assert_eq(conformance_check_event(CONFORMANCE_DMI_ASYNC, doc, err, sizeof(err)), 0,
                     "%s: %s", err, recs[i].value);
        snprintf(id, sizeof(id), "%s", recs[i].key);
        cr_assert_str_eq(field(doc, "eventCorrelationId"), id, "keyed by the request id");
        op = (size_t)(id[4] - '0');
        cr_assert_lt(op, 3);
        cr_assert_str_eq(field(doc, "eventTarget"), "client-t");
        cr_assert_str_eq(field(doc, "eventSource"), "org.onap.cps.ncmp.dmi");
        cr_assert_str_eq(field(doc, "eventSchemaVersion"), "v1");
        expect_match(field(doc, "eventId"),
                     "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
        expect_match(field(doc, "eventTime"),
                     "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}\\+0000$");
        cr_assert(json_object_object_get_ex(doc, "eventContent", &data));
        cr_assert_str_eq(field(data, "response-status"), ops[op].status);
        cr_assert_str_eq(field(data, "response-code"), ops[op].code);
        cr_assert(json_object_object_get_ex(data, "response-data", &data));
        snprintf(expected, sizeof(expected), "%s-ch-9", k.s.base);
        cr_assert_str_eq(network_id(data), expected);
        json_object_put(doc);
    }
    it_records_free(recs, n);
    kafka_stub_stop(&k);
}
