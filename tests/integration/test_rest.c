/*
 * The REST API over HTTP (libcurl) against ncmpd running the rest role on
 * a port of its own choosing (http.port=0; the port is read from its log),
 * on the real PostgreSQL and Kafka.
 *
 * Each test runs its own ncmpd on its own scratch database and topics.
 * Handles are inserted straight into cm_handle (the searches do not care
 * how they got there), except in the registration tests, which go through
 * POST /ncmpInventory/v1/ch and the registration role.
 *
 * JSON in this file is written with single quotes (it reads better in C)
 * and sent with double quotes; see json_text().
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <jwt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "conformance.h"
#include "it_util.h"
#include "ncmp_buf.h"
#include "ncmp_time.h"

#define PARTITIONS 2
#define NFLAGS     9
#define DMI_A      "http://dmi-a:8080"
#define DMI_B      "http://dmi-b:8080"

typedef struct rest_case {
    char topic[128];
    char response_topic[160];
    char lcm_topic[160];
    char dbname[96];
    char dburl[512];
    char log[512];
    char flag[NFLAGS][640];
    ncmp_db *db;
    pid_t pid;
    int port;
} rest_case;

/* Static: the suite's fini cleans up after a failed assertion. */
static rest_case the_case;
static int the_case_live;

static void rest_cleanup(void)
{
    rest_case *c = &the_case;

    if (!the_case_live)
        return;
    the_case_live = 0;
    if (c->pid > 0) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
        c->pid = 0;
    }
    ncmp_db_close(c->db);
    c->db = NULL;
    it_scratch_db_drop(c->dbname);
}

TestSuite(rest, .fini = rest_cleanup);

/* Start ncmpd with the rest role (and `roles`), plus `extra` flags
 * (NULL-terminated, may be NULL). */
static rest_case *case_start(const char *name, const char *roles, const char *const *extra)
{
    rest_case *c = &the_case;
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    const char *args[NFLAGS + 8];
    size_t n = 0;
    ncmp_err err;

    memset(c, 0, sizeof(*c));
    it_unique(c->topic, sizeof(c->topic), name);
    snprintf(c->response_topic, sizeof(c->response_topic), "%s-response", c->topic);
    snprintf(c->lcm_topic, sizeof(c->lcm_topic), "%s-lcm", c->topic);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir && *dir ? dir : "/tmp", c->topic);
    it_scratch_db_create("it_rest", c->dbname, sizeof(c->dbname), c->dburl, sizeof(c->dburl));
    the_case_live = 1;
    snprintf(c->flag[0], sizeof(c->flag[0]), "--db.url=%s", c->dburl);
    snprintf(c->flag[1], sizeof(c->flag[1]), "--registration.topic=%s", c->topic);
    snprintf(c->flag[2], sizeof(c->flag[2]), "--registration.response-topic=%s", c->response_topic);
    snprintf(c->flag[3], sizeof(c->flag[3]), "--lcm.topic=%s", c->lcm_topic);
    snprintf(c->flag[4], sizeof(c->flag[4]), "--kafka.group.id=g-%s", c->topic);
    snprintf(c->flag[5], sizeof(c->flag[5]), "--roles=%s", roles);
    snprintf(c->flag[6], sizeof(c->flag[6]), "--http.port=0");
    snprintf(c->flag[7], sizeof(c->flag[7]), "--http.host=127.0.0.1");
    snprintf(c->flag[8], sizeof(c->flag[8]), "--rest.db-connections=3");
    it_create_topic(c->topic, PARTITIONS);
    it_create_topic(c->response_topic, PARTITIONS);
    it_create_topic(c->lcm_topic, PARTITIONS);
    for (size_t i = 0; i < NFLAGS; i++)
        args[n++] = c->flag[i];
    for (const char *const *e = extra; e && *e && n < NFLAGS + 7; e++)
        args[n++] = *e;
    args[n] = NULL;
    c->pid = it_ncmpd_start(c->log, args);
    c->port = it_logged_port(c->log);
    cr_assert_eq(ncmp_db_open(&c->db, c->dburl, NULL, 10, &err), 0, "%s", err.msg);
    return c;
}

static void case_fini(rest_case *c)
{
    int status = it_ncmpd_stop(c->pid);

    c->pid = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "SIGTERM should stop ncmpd cleanly, status %d; log %s", status, c->log);
    ncmp_db_close(c->db);
    c->db = NULL;
    the_case_live = 0;
    cr_assert_eq(it_scratch_db_drop(c->dbname), 0, "drop %s", c->dbname);
}

static void sql(rest_case *c, const char *text)
{
    ncmp_err err;
    cr_assert_eq(ncmp_db_exec(c->db, text, &err), 0, "%s", err.msg);
}

/* --- HTTP ---------------------------------------------------------------- */

typedef struct reply {
    long status;
    ncmp_buf body;
    ncmp_buf headers;
    json_object *json; /* the parsed body, or NULL */
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

/* One request; `body_sq` is single-quoted JSON (NULL: none), sent as is
 * when `raw`. `userpwd` may be NULL; "Bearer <token>" is sent as the
 * Authorization header. */
static void call_full(rest_case *c, const char *method, const char *path, const char *body_sq,
                      int raw, const char *userpwd, reply *r)
{
    CURL *curl = curl_easy_init();
    char url[4096];
    ncmp_buf body = NCMP_BUF_INIT;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", c->port, path);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &r->headers);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
    if (userpwd && strncmp(userpwd, "Bearer ", 7) == 0) {
        ncmp_buf_appendf(&body, "Authorization: %s", userpwd);
        h = curl_slist_append(h, body.data);
        ncmp_buf_reset(&body);
    } else if (userpwd) {
        curl_easy_setopt(curl, CURLOPT_USERPWD, userpwd);
    }
    if (body_sq) {
        if (raw)
            ncmp_buf_append_str(&body, body_sq);
        else
            json_text(&body, body_sq);
        if (!body.data)
            ncmp_buf_append_str(&body, "");
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)body.len);
    }
    rc = curl_easy_perform(curl);
    cr_assert_eq(rc, CURLE_OK, "%s %s: %s; log %s", method, path, curl_easy_strerror(rc), c->log);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    if (!r->body.data)
        ncmp_buf_append_str(&r->body, "");
    r->json = json_tokener_parse(r->body.data);
    ncmp_buf_free(&body);
    curl_slist_free_all(h);
    curl_easy_cleanup(curl);
}

static void call(rest_case *c, const char *method, const char *path, const char *body_sq, reply *r)
{
    call_full(c, method, path, body_sq, 0, NULL, r);
}

static void reply_free(reply *r)
{
    json_object_put(r->json);
    ncmp_buf_free(&r->body);
    ncmp_buf_free(&r->headers);
}

/* The JSON array of strings `r` holds, sorted and joined by ','. */
static char *sorted_strings(const reply *r)
{
    size_t n;
    const char **v;
    ncmp_buf out = NCMP_BUF_INIT;

    cr_assert(r->json && json_object_is_type(r->json, json_type_array), "not an array: %s",
              r->body.data);
    n = json_object_array_length(r->json);
    v = calloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(r->json, i);
        if (json_object_is_type(e, json_type_object)) {
            json_object *id = NULL;
            json_object_object_get_ex(e, "cmHandle", &id);
            e = id;
        }
        v[i] = json_object_get_string(e);
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            const char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++)
        ncmp_buf_appendf(&out, "%s%s", i ? "," : "", v[i]);
    free(v);
    if (!out.data)
        ncmp_buf_append_str(&out, "");
    return out.data;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The elements of the JSON array `r` holds, each as compact JSON text,
 * sorted and joined by '\n': two answers that differ only in order give
 * the same text. */
static char *sorted_elements(const reply *r)
{
    size_t n = r->json ? json_object_array_length(r->json) : 0;
    char **v = calloc(n + 1, sizeof(*v));
    ncmp_buf out = NCMP_BUF_INIT;

    cr_assert(r->json && json_object_is_type(r->json, json_type_array), "%s", r->body.data);
    for (size_t i = 0; i < n; i++)
        v[i] = strdup(json_object_to_json_string_ext(json_object_array_get_idx(r->json, i),
                                                     JSON_C_TO_STRING_PLAIN));
    qsort(v, n, sizeof(*v), cmp_str);
    ncmp_buf_append_str(&out, "[");
    for (size_t i = 0; i < n; i++) {
        ncmp_buf_appendf(&out, "%s%s", i ? "\n" : "", v[i]);
        free(v[i]);
    }
    ncmp_buf_append_str(&out, "]");
    free(v);
    return out.data;
}

/* POST `path` with `body_sq`; expect 200 and the handles (ids, or the
 * cmHandle of objects) `expected` ("a,b", sorted). */
static void expect_ids(rest_case *c, const char *path, const char *body_sq, const char *expected)
{
    reply r;
    char *got;

    call(c, "POST", path, body_sq, &r);
    cr_assert_eq(r.status, 200, "POST %s %s: %ld %s", path, body_sq, r.status, r.body.data);
    got = sorted_strings(&r);
    cr_assert_str_eq(got, expected, "POST %s %s", path, body_sq);
    free(got);
    reply_free(&r);
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

/* Expect NCMP's error body with `status` ("400 BAD_REQUEST"). */
static void expect_error(const reply *r, long status, const char *status_text)
{
    cr_assert_eq(r->status, status, "expected %ld, got %ld: %s", status, r->status, r->body.data);
    cr_assert_not_null(r->json, "error body not JSON: %s", r->body.data);
    cr_assert_str_eq(field(r->json, "status"), status_text, "%s", r->body.data);
    cr_assert_not_null(field(r->json, "message"), "%s", r->body.data);
}

/* --- the inventory the search tests use ---------------------------------- */

/* ch-1: READY, dmi A, color=red, size=big, modules M1+M2, trust COMPLETE,
 *       alternate /Sub=1/Me=1, private k=1
 * ch-2: READY, dmi A (data service B), color=red, modules M1, trust NONE,
 *       alternate /Sub=1/Me=2, private k=2
 * ch-3: ADVISED, dmi B, color=blue, no modules, trust COMPLETE, no
 *       alternate, private k=1
 * ch-4: LOCKED (MODULE_SYNC_FAILED), dmi B (model service A), no
 *       properties, trust NONE, alternate alt-4 */
static void inventory(rest_case *c)
{
    sql(c,
        "INSERT INTO yang_resource (checksum, module_name, revision, source) VALUES"
        " ('s1', 'M1', '2024-01-01', 'module M1 {}'), ('s2', 'M2', '2024-02-02', 'module M2 {}'),"
        " ('s1b', 'M1', '2023-01-01', 'module M1 { revision 2023-01-01; }');"
        "INSERT INTO module_set (tag) VALUES ('tag-12'), ('tag-1');"
        "INSERT INTO module_set_member SELECT id, 's1', 'M1', '2024-01-01' FROM module_set;"
        "INSERT INTO module_set_member SELECT id, 's2', 'M2', '2024-02-02' FROM module_set"
        " WHERE tag = 'tag-12';"
        "INSERT INTO cm_handle (id, dmi_service_name, dmi_data_service_name,"
        " dmi_model_service_name, module_set_tag, alternate_id, data_producer_identifier,"
        " additional_properties, public_properties, state, lock_reason, lock_details,"
        " module_set_id, operational_sync_state, trust_level, effective_trust_level) VALUES"
        " ('ch-1', '" DMI_A "', '', '', 'tag-12', '/Sub=1/Me=1', 'p1', '{\"k\":\"1\"}',"
        "  '{\"color\":\"red\",\"size\":\"big\"}', 'READY', NULL, NULL,"
        "  (SELECT id FROM module_set WHERE tag = 'tag-12'), 'NONE_REQUESTED', 'COMPLETE',"
        "  'COMPLETE'),"
        " ('ch-2', '" DMI_A "', '" DMI_B "', '', 'tag-1', '/Sub=1/Me=2', '', '{\"k\":\"2\"}',"
        "  '{\"color\":\"red\"}', 'READY', NULL, NULL,"
        "  (SELECT id FROM module_set WHERE tag = 'tag-1'), 'NONE_REQUESTED', 'NONE', 'NONE'),"
        " ('ch-3', '" DMI_B "', '', '', '', NULL, '', '{\"k\":\"1\"}', '{\"color\":\"blue\"}',"
        "  'ADVISED', NULL, NULL, NULL, NULL, 'COMPLETE', 'COMPLETE'),"
        " ('ch-4', '" DMI_B "', '', '" DMI_A "', '', 'alt-4', '', '{}', '{}', 'LOCKED',"
        "  'MODULE_SYNC_FAILED', ' Attempt #1 failed: no', NULL, NULL, 'NONE', 'NONE')");
}

#define NB_IDS  "/ncmp/v1/ch/id-searches"
#define NB_FULL "/ncmp/v1/ch/searches"
#define SB_IDS  "/ncmpInventory/v1/ch/searches"
#define SB_FULL "/ncmpInventory/v1/ch/searchCmHandles"
#define NB_V2   "/ncmp/v2/ch/searches"
#define SB_V2   "/ncmpInventory/v2/ch/searches"

/* The northbound ones first. */
static const char *const all_search_paths[] = {NB_IDS, NB_FULL, NB_V2, SB_IDS, SB_FULL, SB_V2};
#define NB_PATHS  3u
#define ALL_PATHS (sizeof(all_search_paths) / sizeof(all_search_paths[0]))

/* --- where searches are answered ----------------------------------------- */

/* The value of the metric line starting with `prefix` (name and labels),
 * or -1 when the scrape does not hold it. */
static double metric(rest_case *c, const char *prefix)
{
    reply r;
    const char *at;
    double v = -1;

    call(c, "GET", "/metrics", NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    for (at = r.body.data; at && *at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL)
        if (strncmp(at, prefix, strlen(prefix)) == 0 && at[strlen(prefix)] == ' ') {
            v = strtod(at + strlen(prefix) + 1, NULL);
            break;
        }
    reply_free(&r);
    return v;
}

/* The search index's first load is done (it runs beside the start). */
static void index_loaded(rest_case *c)
{
    double t0 = ncmp_now_ms();

    while (metric(c, "ncmp_search_index_loads_total") < 1) {
        cr_assert_lt(ncmp_now_ms() - t0, 30000.0, "the search index was not loaded; log %s",
                     c->log);
        ncmp_sleep_ms(50);
    }
}

/* Which path the searches of a test take: the in-memory index (the
 * default) or PostgreSQL alone. */
typedef enum { BY_INDEX, BY_DATABASE } search_path;

static const char *const database_only[] = {"--rest.search-index=false", NULL};

static rest_case *search_case(const char *name, search_path path)
{
    rest_case *c = case_start(name, "rest", path == BY_DATABASE ? database_only : NULL);

    if (path == BY_INDEX)
        index_loaded(c);
    return c;
}

/* Every search of the test was answered where `path` says. */
static void searches_took(rest_case *c, search_path path)
{
    double memory = metric(c, "ncmp_searches_total{path=\"memory\"}");
    double database = metric(c, "ncmp_searches_total{path=\"database\"}");

    if (path == BY_INDEX) {
        cr_assert_gt(memory, 0, "no search was answered from the index");
        cr_assert(database <= 0, "%.0f searches read PostgreSQL", database);
    } else {
        cr_assert(memory <= 0 && database <= 0, "the index is off, yet counted %.0f/%.0f", memory,
                  database);
    }
}

/* --- searches ------------------------------------------------------------ */

static void every_condition(search_path path)
{
    rest_case *c = search_case("rest-cond", path);

    inventory(c);
    for (size_t i = 0; i < ALL_PATHS; i++) {
        const char *p = all_search_paths[i];
        expect_ids(c, p, "{}", "ch-1,ch-2,ch-3,ch-4");
        expect_ids(c, p, "{'cmHandleQueryParameters':[]}", "ch-1,ch-2,ch-3,ch-4");
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'hasAllModules',"
                   "'conditionParameters':[{'moduleName':'M1'},{'moduleName':'M2'}]}]}",
                   "ch-1");
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'hasAllModules',"
                   "'conditionParameters':[{'moduleName':'M1'}]}]}",
                   "ch-1,ch-2");
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'hasAllModules',"
                   "'conditionParameters':[{'moduleName':'M3'}]}]}",
                   "");
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
                   "'conditionParameters':[{'color':'red'}]}]}",
                   "ch-1,ch-2");
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
                   "'conditionParameters':[{'color':'red'},{'size':'big'}]}]}",
                   "ch-1");
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
                   "'conditionParameters':[{'color':'red'},{'color':'blue'}]}]}",
                   "");
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithTrustLevel',"
                   "'conditionParameters':[{'trustLevel':'NONE'}]}]}",
                   "ch-2,ch-4");
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithTrustLevel',"
                   "'conditionParameters':[{'anyKey':'COMPLETE'}]}]}",
                   "ch-1,ch-3");
        /* AND of conditions; only the first entry of a name counts */
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':["
                   "{'conditionName':'hasAllProperties','conditionParameters':[{'color':'red'}]},"
                   "{'conditionName':'cmHandleWithTrustLevel',"
                   "'conditionParameters':[{'trustLevel':'COMPLETE'}]},"
                   "{'conditionName':'cmHandleWithTrustLevel',"
                   "'conditionParameters':[{'trustLevel':'NONE'}]}]}",
                   "ch-1");
    }
    /* southbound only */
    for (size_t i = NB_PATHS; i < ALL_PATHS; i++) {
        const char *p = all_search_paths[i];
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'hasAllAdditionalProperties',"
                   "'conditionParameters':[{'k':'1'}]}]}",
                   "ch-1,ch-3");
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithDmiPlugin',"
                   "'conditionParameters':[{'dmiPluginName':'" DMI_A "'}]}]}",
                   "ch-1,ch-2,ch-4");
        expect_ids(c, p,
                   "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithDmiPlugin',"
                   "'conditionParameters':[{'dmiPluginName':'" DMI_B "'}]}]}",
                   "ch-2,ch-3,ch-4");
    }
    /* the deprecated form, where NCMP maps it */
    expect_ids(c, NB_FULL,
               "{'conditions':[{'name':'hasAllModules','conditionParameters':"
               "[{'moduleName':'M2'}]}]}",
               "ch-1");
    expect_ids(c, SB_FULL,
               "{'conditions':[{'name':'hasAllModules','conditionParameters':"
               "[{'moduleName':'M2'}]}]}",
               "ch-1");
    /* and ignored elsewhere, the v2 searches too */
    expect_ids(c, NB_IDS,
               "{'conditions':[{'name':'hasAllModules','conditionParameters':"
               "[{'moduleName':'M2'}]}]}",
               "ch-1,ch-2,ch-3,ch-4");
    expect_ids(c, NB_V2,
               "{'conditions':[{'name':'hasAllModules','conditionParameters':"
               "[{'moduleName':'M2'}]}]}",
               "ch-1,ch-2,ch-3,ch-4");
    expect_ids(c, SB_V2,
               "{'conditions':[{'name':'hasAllModules','conditionParameters':"
               "[{'moduleName':'M2'}]}]}",
               "ch-1,ch-2,ch-3,ch-4");
    searches_took(c, path);
    case_fini(c);
}

Test(rest, every_condition_on_every_search_endpoint, .timeout = 180)
{
    every_condition(BY_INDEX);
}

Test(rest, every_condition_on_every_search_endpoint_from_postgresql, .timeout = 180)
{
    every_condition(BY_DATABASE);
}

Test(rest, search_outputs_alternate_ids_and_handle_objects, .timeout = 180)
{
    rest_case *c = search_case("rest-out", BY_INDEX);
    reply r;
    json_object *h = NULL;

    inventory(c);
    expect_ids(c, NB_IDS "?outputAlternateId=true", "{}", ",/Sub=1/Me=1,/Sub=1/Me=2,alt-4");
    expect_ids(c, SB_IDS "?outputAlternateId=TRUE", "{}", ",/Sub=1/Me=1,/Sub=1/Me=2,alt-4");
    expect_ids(c, NB_IDS "?outputAlternateId=false", "{}", "ch-1,ch-2,ch-3,ch-4");

    call(c, "POST", NB_FULL,
         "{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
         "'conditionParameters':[{'size':'big'}]}]}",
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_eq(json_object_array_length(r.json), 1);
    h = json_object_array_get_idx(r.json, 0);
    cr_assert_str_eq(field(h, "cmHandle"), "ch-1");
    {
        json_object *props = json_object_object_get(h, "publicCmHandleProperties");
        cr_assert_eq(json_object_array_length(props), 1, "a list holding one map");
        cr_assert_str_eq(field(json_object_array_get_idx(props, 0), "color"), "red");
        cr_assert_str_eq(field(json_object_array_get_idx(props, 0), "size"), "big");
    }
    cr_assert_null(field(h, "cmHandleProperties"), "no private properties northbound");
    cr_assert_str_eq(field(h, "state.cmHandleState"), "READY");
    cr_assert_str_eq(field(h, "state.dataSyncEnabled"), "false");
    cr_assert_str_eq(field(h, "state.dataSyncState.operational.syncState"), "NONE_REQUESTED");
    cr_assert_null(field(h, "state.lockReason"));
    cr_assert_eq(strlen(field(h, "state.lastUpdateTime")), 28, "%s",
                 field(h, "state.lastUpdateTime"));
    cr_assert(strstr(field(h, "state.lastUpdateTime"), "+0000") != NULL);
    cr_assert_str_eq(field(h, "trustLevel"), "COMPLETE");
    cr_assert_str_eq(field(h, "moduleSetTag"), "tag-12");
    cr_assert_str_eq(field(h, "alternateId"), "/Sub=1/Me=1");
    cr_assert_str_eq(field(h, "dataProducerIdentifier"), "p1");
    reply_free(&r);

    /* a LOCKED handle with its reason; an ADVISED one without sync fields */
    call(c, "POST", SB_FULL "?outputDmiProperties=true", "{}", &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    for (size_t i = 0; i < json_object_array_length(r.json); i++) {
        json_object *e = json_object_array_get_idx(r.json, i);
        cr_assert_not_null(field(e, "cmHandleProperties"), "%s", r.body.data);
        if (strcmp(field(e, "cmHandle"), "ch-4") == 0) {
            cr_assert_str_eq(field(e, "state.lockReason.reason"), "MODULE_SYNC_FAILED");
            cr_assert_str_eq(field(e, "state.lockReason.details"), " Attempt #1 failed: no");
            cr_assert_str_eq(field(e, "trustLevel"), "NONE");
        }
        if (strcmp(field(e, "cmHandle"), "ch-3") == 0) {
            cr_assert_null(field(e, "state.dataSyncEnabled"));
            cr_assert_null(field(e, "state.dataSyncState"));
            cr_assert_str_eq(field(e, "cmHandleProperties.k"), "1");
            cr_assert_str_eq(field(e, "alternateId"), "");
        }
    }
    reply_free(&r);
    call(c, "POST", SB_FULL, "{}", &r);
    cr_assert_null(field(json_object_array_get_idx(r.json, 0), "cmHandleProperties"));
    reply_free(&r);
    searches_took(c, BY_INDEX);
    case_fini(c);
}

/* The object of handle `id` in the array `arr`, or NULL. */
static json_object *handle_in(json_object *arr, const char *id)
{
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        const char *h = field(e, "cmHandle");
        if (h && strcmp(h, id) == 0)
            return e;
    }
    return NULL;
}

static const char *plain(json_object *o)
{
    return json_object_to_json_string_ext(o,
                                          JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* Every element of `r` is a RestOutputCmHandleLightweight: only its
 * properties, each a string; dmiProperties exactly when `with_dmi`. */
static void expect_lightweight(const reply *r, int with_dmi)
{
    static const char *const props[] = {
        "cmHandle",   "alternateId",  "cmHandleStatus", "moduleSetTag", "dataProducerIdentifier",
        "trustLevel", "dmiProperties"};

    cr_assert(r->json && json_object_is_type(r->json, json_type_array), "%s", r->body.data);
    for (size_t i = 0; i < json_object_array_length(r->json); i++) {
        json_object *e = json_object_array_get_idx(r->json, i);
        json_object_object_foreach(e, key, val)
        {
            int known = 0;
            for (size_t k = 0; k < sizeof(props) / sizeof(props[0]); k++)
                known |= strcmp(key, props[k]) == 0;
            cr_assert(known, "%s is not a property of RestOutputCmHandleLightweight: %s", key,
                      plain(e));
            cr_assert(json_object_is_type(val, json_type_string), "%s: %s", key, plain(e));
        }
        cr_assert_eq(json_object_object_get_ex(e, "dmiProperties", NULL), with_dmi, "%s", plain(e));
    }
}

Test(rest, v2_lightweight_searches_and_cm_handle_status, .timeout = 180)
{
    rest_case *c = search_case("rest-v2", BY_INDEX);
    reply r;
    json_object *dmi = NULL;

    inventory(c);
    /* northbound: the top-level leaves, in NCMP's order, status = state */
    call(c, "POST", NB_V2, "{}", &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_eq(json_object_array_length(r.json), 4, "%s", r.body.data);
    expect_lightweight(&r, 0);
    cr_assert_str_eq(plain(handle_in(r.json, "ch-1")),
                     "{\"cmHandle\":\"ch-1\",\"alternateId\":\"/Sub=1/Me=1\","
                     "\"cmHandleStatus\":\"READY\",\"moduleSetTag\":\"tag-12\","
                     "\"dataProducerIdentifier\":\"p1\",\"trustLevel\":\"COMPLETE\"}");
    cr_assert_str_eq(plain(handle_in(r.json, "ch-3")),
                     "{\"cmHandle\":\"ch-3\",\"alternateId\":\"\",\"cmHandleStatus\":\"ADVISED\","
                     "\"moduleSetTag\":\"\",\"dataProducerIdentifier\":\"\","
                     "\"trustLevel\":\"COMPLETE\"}");
    cr_assert_str_eq(field(handle_in(r.json, "ch-4"), "cmHandleStatus"), "LOCKED");
    cr_assert_str_eq(field(handle_in(r.json, "ch-2"), "trustLevel"), "NONE");
    reply_free(&r);
    /* outputDmiProperties is not a northbound parameter */
    call(c, "POST", NB_V2 "?outputDmiProperties=true", "{}", &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    expect_lightweight(&r, 0);
    reply_free(&r);

    /* southbound: dmiProperties only when asked, the private map as a JSON string */
    call(c, "POST", SB_V2, "{}", &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_eq(json_object_array_length(r.json), 4, "%s", r.body.data);
    expect_lightweight(&r, 0);
    reply_free(&r);
    call(c, "POST", SB_V2 "?outputDmiProperties=false", "{}", &r);
    expect_lightweight(&r, 0);
    reply_free(&r);
    call(c, "POST", SB_V2 "?outputDmiProperties=true",
         "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithDmiPlugin',"
         "'conditionParameters':[{'dmiPluginName':'" DMI_B "'}]}]}",
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    expect_lightweight(&r, 1);
    {
        char *got = sorted_strings(&r);
        cr_assert_str_eq(got, "ch-2,ch-3,ch-4");
        free(got);
    }
    cr_assert_str_eq(field(handle_in(r.json, "ch-2"), "dmiProperties"), "{\"k\":\"2\"}");
    cr_assert_str_eq(field(handle_in(r.json, "ch-4"), "dmiProperties"), "{}");
    dmi = json_tokener_parse(field(handle_in(r.json, "ch-3"), "dmiProperties"));
    cr_assert_not_null(dmi, "dmiProperties is not JSON: %s", r.body.data);
    cr_assert_str_eq(field(dmi, "k"), "1");
    json_object_put(dmi);
    cr_assert_str_eq(field(handle_in(r.json, "ch-3"), "cmHandleStatus"), "ADVISED");
    reply_free(&r);
    call(c, "POST", SB_V2 "?outputDmiProperties=2", "{}", &r);
    expect_error(&r, 400, "400 BAD_REQUEST");
    reply_free(&r);

    /* one handle, by the longest match, as GET /ncmp/v1/ch/{ref} */
    call(c, "GET", "/ncmp/v2/ch/%2FSub%3D1%2FMe%3D2%2FCell%3D7", NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(r.body.data, "{\"cmHandle\":\"ch-2\",\"alternateId\":\"/Sub=1/Me=2\","
                                  "\"cmHandleStatus\":\"READY\",\"moduleSetTag\":\"tag-1\","
                                  "\"dataProducerIdentifier\":\"\",\"trustLevel\":\"NONE\"}");
    reply_free(&r);
    call(c, "GET", "/ncmp/v2/ch/alt-4", NULL, &r);
    cr_assert_str_eq(field(r.json, "cmHandleStatus"), "LOCKED", "%s", r.body.data);
    reply_free(&r);
    call(c, "GET", "/ncmp/v2/ch/nope", NULL, &r);
    expect_error(&r, 404, "404 NOT_FOUND");
    cr_assert_str_eq(field(r.json, "details"), "No cm handles found with reference nope");
    reply_free(&r);

    /* the v1 handle objects carry cmHandleStatus too */
    call(c, "GET", "/ncmp/v1/ch/alt-4", NULL, &r);
    cr_assert_str_eq(field(r.json, "cmHandleStatus"), "LOCKED", "%s", r.body.data);
    reply_free(&r);
    call(c, "POST", SB_FULL, "{}", &r);
    cr_assert_str_eq(field(handle_in(r.json, "ch-3"), "cmHandleStatus"), "ADVISED", "%s",
                     r.body.data);
    reply_free(&r);
    case_fini(c);
}

/* A handle row for the freshness test: id, public properties. */
static void add_handle(ncmp_db *db, const char *id, const char *props)
{
    char q[512];
    ncmp_err err;

    snprintf(q, sizeof(q),
             "INSERT INTO cm_handle (id, dmi_service_name, public_properties, state)"
             " VALUES ('%s', '" DMI_A "', '%s', 'ADVISED')",
             id, props);
    cr_assert_eq(ncmp_db_exec(db, q, &err), 0, "%s", err.msg);
}

/* What a search must see: every change committed before it was sent,
 * whatever made it, and nothing uncommitted (search_index.h). */
Test(rest, search_index_sees_each_committed_change_at_once, .timeout = 180)
{
    rest_case *c = search_case("rest-fresh", BY_INDEX);
    const char *m12 = "{'cmHandleQueryParameters':[{'conditionName':'hasAllModules',"
                      "'conditionParameters':[{'moduleName':'M1'},{'moduleName':'M2'}]}]}";
    ncmp_db *other;
    ncmp_err err;

    inventory(c);
    expect_ids(c, NB_IDS, "{}", "ch-1,ch-2,ch-3,ch-4");
    sql(c, "UPDATE cm_handle SET public_properties = '{\"color\":\"green\"}' WHERE id = 'ch-3'");
    expect_ids(c, NB_IDS,
               "{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
               "'conditionParameters':[{'color':'green'}]}]}",
               "ch-3");
    sql(c, "DELETE FROM cm_handle WHERE id = 'ch-4'");
    expect_ids(c, NB_FULL, "{}", "ch-1,ch-2,ch-3");
    /* a module set changed in place (as a module refresh does) */
    expect_ids(c, SB_IDS, m12, "ch-1");
    sql(c, "INSERT INTO module_set_member SELECT id, 's2', 'M2', '2024-02-02' FROM module_set"
           " WHERE tag = 'tag-1'");
    expect_ids(c, SB_IDS, m12, "ch-1,ch-2");
    /* commits out of the order the transactions began in */
    cr_assert_eq(ncmp_db_open(&other, c->dburl, NULL, 10, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_db_exec(other, "BEGIN", &err), 0, "%s", err.msg);
    add_handle(other, "ch-5", "{}");
    add_handle(c->db, "ch-6", "{}");
    expect_ids(c, NB_IDS, "{}", "ch-1,ch-2,ch-3,ch-6");
    cr_assert_eq(ncmp_db_exec(other, "COMMIT", &err), 0, "%s", err.msg);
    expect_ids(c, NB_IDS, "{}", "ch-1,ch-2,ch-3,ch-5,ch-6");
    /* a rolled-back write is never seen */
    cr_assert_eq(ncmp_db_exec(other, "BEGIN", &err), 0, "%s", err.msg);
    add_handle(other, "ch-8", "{}");
    cr_assert_eq(ncmp_db_exec(other, "ROLLBACK", &err), 0, "%s", err.msg);
    expect_ids(c, NB_IDS, "{}", "ch-1,ch-2,ch-3,ch-5,ch-6");
    ncmp_db_close(other);
    /* many handles at once (the index's tables grow), then all changed */
    sql(c, "INSERT INTO cm_handle (id, dmi_service_name, public_properties, state)"
           " SELECT 'many-' || i, '" DMI_A "', '{\"batch\":\"1\"}', 'ADVISED'"
           " FROM generate_series(1, 5000) i");
    sql(c, "UPDATE cm_handle SET public_properties = '{\"batch\":\"2\"}' WHERE id LIKE 'many-%'");
    {
        reply r;
        call(c, "POST", NB_IDS, "{}", &r);
        cr_assert_eq(r.status, 200, "%s", r.body.data);
        cr_assert_eq(json_object_array_length(r.json), 5005, "every handle once");
        reply_free(&r);
        call(c, "POST", NB_IDS,
             "{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
             "'conditionParameters':[{'batch':'2'}]}]}",
             &r);
        cr_assert_eq(json_object_array_length(r.json), 5000);
        reply_free(&r);
    }
    sql(c, "DELETE FROM cm_handle WHERE id LIKE 'many-%'");
    expect_ids(c, NB_IDS, "{}", "ch-1,ch-2,ch-3,ch-5,ch-6");
    /* a truncate: everything read again */
    sql(c, "TRUNCATE cm_handle CASCADE");
    add_handle(c->db, "ch-7", "{\"color\":\"red\"}");
    expect_ids(c, NB_V2, "{}", "ch-7");
    /* rows kept for a few live handles are packed by a load of its own */
    {
        double loads = metric(c, "ncmp_search_index_loads_total"), t0 = ncmp_now_ms();
        reply r;
        sql(c, "INSERT INTO cm_handle (id, dmi_service_name, state)"
               " SELECT 'pack-' || i, '" DMI_A "', 'ADVISED' FROM generate_series(1, 40000) i");
        expect_ids(c, NB_IDS,
                   "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
                   "'conditionParameters':[{'cpsPath':'//cm-handles[@id=\\\"pack-40000\\\"]'}]}]}",
                   "pack-40000");
        sql(c, "DELETE FROM cm_handle WHERE id LIKE 'pack-%' AND id <> 'pack-1'");
        while (metric(c, "ncmp_search_index_loads_total") < loads + 1) {
            cr_assert_lt(ncmp_now_ms() - t0, 20000.0, "the rows were not packed; log %s", c->log);
            ncmp_sleep_ms(100);
        }
        call(c, "POST", NB_IDS, "{}", &r);
        cr_assert_eq(json_object_array_length(r.json), 2, "%s", r.body.data);
        reply_free(&r);
    }
    searches_took(c, BY_INDEX);
    case_fini(c);
}

/* Both paths write the same answer, for every condition, endpoint and
 * output: ncmpd with the index and one without, on the same database. */
Test(rest, search_index_and_postgresql_answer_alike, .timeout = 180)
{
    rest_case *c = search_case("rest-alike", BY_INDEX);
    static const char *const bodies[] = {
        "{}",
        "{'cmHandleQueryParameters':[{'conditionName':'hasAllModules',"
        "'conditionParameters':[{'moduleName':'M1'}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'hasAllModules',"
        "'conditionParameters':[{'moduleName':'M1'},{'moduleName':'M2'},{'moduleName':'M1'}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'hasAllModules',"
        "'conditionParameters':[{'name':'M1'}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
        "'conditionParameters':[{'color':'red'},{'size':'big'}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
        "'conditionParameters':[{'size':5}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithTrustLevel',"
        "'conditionParameters':[{'trustLevel':'NONE'}]}]}",
        "{'conditions':[{'name':'hasAllModules','conditionParameters':[{'moduleName':'M2'}]}],"
        "'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
        "'conditionParameters':[{'color':'red'}]}]}",
        /* CPS paths: one comparison is answered by the index, the rest by PostgreSQL */
        "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
        "'conditionParameters':[{'cpsPath':'//state[@cm-handle-state=\\\"READY\\\"]'}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
        "'conditionParameters':[{'cpsPath':'//cm-handle-state[text()!=\\\"READY\\\"]'}]},"
        "{'conditionName':'cmHandleWithTrustLevel','conditionParameters':[{'t':'NONE'}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
        "'conditionParameters':[{'cpsPath':'//"
        "lock-reason[@reason=\\\"MODULE_SYNC_FAILED\\\"]'}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
        "'conditionParameters':[{'cpsPath':'/dmi-registry/"
        "cm-handles[@alternate-id=\\\"alt-4\\\"]'}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
        "'conditionParameters':[{'cpsPath':'//state[@cm-handle-state=\\\"READY\\\" or "
        "@cm-handle-state=\\\"LOCKED\\\"]'}]}]}",
        /* southbound only, from here */
        "{'cmHandleQueryParameters':[{'conditionName':'hasAllAdditionalProperties',"
        "'conditionParameters':[{'k':'1'}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithDmiPlugin',"
        "'conditionParameters':[{'dmiPluginName':'" DMI_A "'}]}]}",
        "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithDmiPlugin',"
        "'conditionParameters':[{'dmiPluginName':''}]}]}",
    };
#define SOUTHBOUND_BODIES 3
    static const char *const paths[] = {
        NB_IDS, NB_IDS "?outputAlternateId=true",  NB_FULL, NB_V2,
        SB_IDS, SB_IDS "?outputAlternateId=true",  SB_FULL, SB_FULL "?outputDmiProperties=true",
        SB_V2,  SB_V2 "?outputDmiProperties=true",
    };
#define NORTHBOUND_PATHS 4
    const size_t nbodies = sizeof(bodies) / sizeof(bodies[0]);
    const char *args[NFLAGS + 2];
    char group[200], log[600];
    rest_case plain_db = {0};
    pid_t pid;
    size_t compared = 0;

    inventory(c);
    /* the same flags, another consumer group, and no index */
    for (size_t i = 0; i < NFLAGS; i++)
        args[i] = c->flag[i];
    snprintf(group, sizeof(group), "--kafka.group.id=g2-%s", c->topic);
    snprintf(log, sizeof(log), "%s.postgresql.log", c->log);
    args[4] = group;
    args[NFLAGS] = database_only[0];
    args[NFLAGS + 1] = NULL;
    pid = it_ncmpd_start(log, args);
    plain_db.port = it_logged_port(log);
    snprintf(plain_db.log, sizeof(plain_db.log), "%s", log);
    for (size_t b = 0; b < nbodies; b++)
        for (size_t p = b < nbodies - SOUTHBOUND_BODIES ? 0 : NORTHBOUND_PATHS;
             p < sizeof(paths) / sizeof(paths[0]); p++) {
            reply x, y;
            char *sx, *sy;
            call(c, "POST", paths[p], bodies[b], &x);
            call(&plain_db, "POST", paths[p], bodies[b], &y);
            cr_assert_eq(x.status, 200, "%s %s: %s", paths[p], bodies[b], x.body.data);
            cr_assert_eq(y.status, 200, "%s %s: %s", paths[p], bodies[b], y.body.data);
            sx = sorted_elements(&x);
            sy = sorted_elements(&y);
            cr_assert_str_eq(sx, sy, "%s %s", paths[p], bodies[b]);
            compared += strlen(sx) > 2;
            free(sx);
            free(sy);
            reply_free(&x);
            reply_free(&y);
        }
    cr_assert_gt(compared, 80, "too few answers held handles");
    {
        int status = it_ncmpd_stop(pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d; log %s", status, log);
    }
    /* the CPS path with an `or`, on each of its paths, read PostgreSQL */
    cr_assert_geq(metric(c, "ncmp_searches_total{path=\"database\"}"), 10.0);
    cr_assert_gt(metric(c, "ncmp_searches_total{path=\"memory\"}"), 100.0);
    case_fini(c);
}

Test(rest, bad_search_requests_are_400_with_ncmp_messages, .timeout = 180)
{
    rest_case *c = case_start("rest-bad", "rest", NULL);
    /* clang-format off */
    static const struct { const char *body; int raw; const char *details; } bad[] = {
        {"{bad", 1, NULL},
        {"", 1, NULL},
        {"[1]", 1, NULL},
        {"{\"cmHandleQueryParameters\":{}}", 1, NULL},
        {"{\"cmHandleQueryParameters\":[1]}", 1, NULL},
        {"{'cmHandleQueryParameters':[{'conditionName':'nope','conditionParameters':[{'a':'b'}]}]}",
         0, "Wrong 'conditionName': nope - please supply a valid name."},
        {"{'cmHandleQueryParameters':[{'conditionName':'hasAllAdditionalProperties',"
         "'conditionParameters':[{'k':'1'}]}]}", 0,
         "Wrong 'conditionName': hasAllAdditionalProperties - please supply a valid name."},
        {"{'cmHandleQueryParameters':[{'conditionParameters':[{'a':'b'}]}]}", 0,
         "Missing 'conditionName' - please supply a valid name."},
        {"{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties'}]}", 0,
         "Empty conditionsParameters - please supply a valid condition parameter."},
        {"{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties','conditionParameters':[]}]}",
         0, "Empty conditionsParameters - please supply a valid condition parameter."},
        {"{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties','conditionParameters':[{}]}]}",
         0, "Empty conditionsParameter - please supply a valid condition parameter."},
        {"{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
         "'conditionParameters':[{'a':'1','b':'2'}]}]}", 0,
         "Too many conditionsParameters - please supply only one parameter per condition."},
        {"{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
         "'conditionParameters':[{'':'1'}]}]}", 0,
         "Missing 'conditionsParameter' - please supply a valid condition parameter name."},
        {"{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
         "'conditionParameters':[{'a':{'b':1}}]}]}", 0, NULL},
        {"{'cmHandleQueryParameters':[{'conditionName':7,'conditionParameters':[{'a':'1'}]}]}",
         0, NULL},
        {"{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
         "'conditionParameters':[{'path':'//x'}]}]}", 0, NULL},
    };
    /* clang-format on */

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        /* a southbound condition is refused on the northbound paths */
        int nb_only = strstr(bad[i].body, "hasAllAdditionalProperties") != NULL;
        for (size_t p = 0; p < (nb_only ? NB_PATHS : ALL_PATHS); p++) {
            reply r;
            call_full(c, "POST", all_search_paths[p], bad[i].body, bad[i].raw, NULL, &r);
            cr_assert_eq(r.status, 400, "%s %s -> %ld %s", all_search_paths[p], bad[i].body,
                         r.status, r.body.data);
            expect_error(&r, 400, "400 BAD_REQUEST");
            if (bad[i].details)
                cr_assert_str_eq(field(r.json, "details"), bad[i].details, "%s", r.body.data);
            reply_free(&r);
        }
    }
    {
        reply r;
        call(c, "POST", NB_IDS "?outputAlternateId=yes", "{}", &r);
        expect_error(&r, 400, "400 BAD_REQUEST");
        reply_free(&r);
        call(c, "POST", SB_FULL "?outputDmiProperties=2", "{}", &r);
        expect_error(&r, 400, "400 BAD_REQUEST");
        reply_free(&r);
    }
    case_fini(c);
}

Test(rest, cps_path_condition, .timeout = 180)
{
    rest_case *c = case_start("rest-cps", "rest", NULL);
    reply r;

    inventory(c);
    for (size_t p = 0; p < ALL_PATHS; p++) {
        expect_ids(
            c, all_search_paths[p],
            "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
            "'conditionParameters':[{'cpsPath':'//state[@cm-handle-state=\\\"READY\\\"]'}]}]}",
            "ch-1,ch-2");
        expect_ids(
            c, all_search_paths[p],
            "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
            "'conditionParameters':[{'cpsPath':'//cm-handles[@alternate-id=\\\"alt-4\\\"]'}]},"
            "{'conditionName':'cmHandleWithTrustLevel',"
            "'conditionParameters':[{'trustLevel':'NONE'}]}]}",
            "ch-4");
        /* private properties are not searchable by path, as in NCMP */
        expect_ids(
            c, all_search_paths[p],
            "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
            "'conditionParameters':[{'cpsPath':'//additional-properties[@name=\\\"k\\\"]'}]}]}",
            "");
        expect_ids(c, all_search_paths[p],
                   "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
                   "'conditionParameters':[{'cpsPath':'//public-properties[@name=\\\"color\\\" and "
                   "@value=\\\"red\\\"]'}]}]}",
                   "ch-1,ch-2");
    }
    call(c, "POST", NB_IDS,
         "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
         "'conditionParameters':[{'cpsPath':'//state[@cm-handle-state=\\\"READY\\\"'}]}]}",
         &r);
    expect_error(&r, 400, "400 BAD_REQUEST");
    cr_assert(strstr(r.body.data, "position") != NULL, "%s", r.body.data);
    reply_free(&r);
    case_fini(c);
}

Test(rest, large_answer_is_streamed_whole, .timeout = 240)
{
    rest_case *c = case_start("rest-big", "rest", NULL);
    reply r;

    sql(c, "INSERT INTO cm_handle (id, dmi_service_name, alternate_id, public_properties, state)"
           " SELECT 'big-' || i, '" DMI_A "', '/Sub=big/Me=' || i,"
           " jsonb_build_object('n', i::text, 'quote', 'a\"b\\c'), 'ADVISED'"
           " FROM generate_series(1, 20000) i");
    call(c, "POST", NB_FULL, "{}", &r);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.headers.data, "chunked") != NULL, "%s", r.headers.data);
    cr_assert_not_null(r.json, "the streamed answer is not one JSON document");
    cr_assert_eq(json_object_array_length(r.json), 20000);
    {
        json_object *props = json_object_object_get(json_object_array_get_idx(r.json, 0),
                                                    "publicCmHandleProperties");
        cr_assert_str_eq(field(json_object_array_get_idx(props, 0), "quote"), "a\"b\\c");
    }
    reply_free(&r);
    call(c, "POST", NB_IDS "?outputAlternateId=true", "{}", &r);
    cr_assert_eq(r.status, 200);
    cr_assert_eq(json_object_array_length(r.json), 20000);
    reply_free(&r);
    call(c, "POST", NB_V2, "{}", &r);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.headers.data, "chunked") != NULL, "%s", r.headers.data);
    cr_assert_eq(json_object_array_length(r.json), 20000);
    reply_free(&r);
    case_fini(c);
}

/* --- one handle ---------------------------------------------------------- */

Test(rest, single_handle_reads_and_reference_resolution, .timeout = 180)
{
    rest_case *c = case_start("rest-one", "rest", NULL);
    reply r;

    inventory(c);
    /* exact id, exact alternate id, longest alternate-id match */
    call(c, "GET", "/ncmp/v1/ch/ch-2", NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(field(r.json, "cmHandle"), "ch-2");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/%2FSub%3D1%2FMe%3D1", NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(field(r.json, "cmHandle"), "ch-1");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/%2FSub%3D1%2FMe%3D2%2FCell%3D7%2FX%3D1%23frag%2Fmore", NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(field(r.json, "cmHandle"), "ch-2");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/alt-4", NULL, &r);
    cr_assert_str_eq(field(r.json, "cmHandle"), "ch-4");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/%2FSub%3D1", NULL, &r);
    expect_error(&r, 404, "404 NOT_FOUND");
    cr_assert_str_eq(field(r.json, "message"), "Cm handle not found");
    cr_assert_str_eq(field(r.json, "details"), "No cm handles found with reference /Sub=1");
    reply_free(&r);

    call(c, "GET", "/ncmp/v1/ch/ch-1/properties", NULL, &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body.data,
                     "{\"publicCmHandleProperties\":[{\"size\":\"big\",\"color\":\"red\"}]}");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/alt-4/state", NULL, &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(field(r.json, "state.cmHandleState"), "LOCKED");
    cr_assert_str_eq(field(r.json, "state.lockReason.reason"), "MODULE_SYNC_FAILED");
    reply_free(&r);
    /* state and properties take exact references only */
    call(c, "GET", "/ncmp/v1/ch/%2FSub%3D1%2FMe%3D1%2Fx/state", NULL, &r);
    expect_error(&r, 404, "404 NOT_FOUND");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/nope/properties", NULL, &r);
    expect_error(&r, 404, "404 NOT_FOUND");
    reply_free(&r);

    /* modules */
    call(c, "GET", "/ncmp/v1/ch/ch-1/modules", NULL, &r);
    cr_assert_eq(r.status, 200);
    cr_assert_eq(json_object_array_length(r.json), 2, "%s", r.body.data);
    cr_assert_str_eq(field(json_object_array_get_idx(r.json, 1), "moduleName"), "M2");
    cr_assert_str_eq(field(json_object_array_get_idx(r.json, 1), "revision"), "2024-02-02");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/nope/modules", NULL, &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body.data, "[]");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/%2FSub%3D1%2FMe%3D1/modules/definitions?module-name=M2", NULL, &r);
    cr_assert_eq(r.status, 200);
    cr_assert_eq(json_object_array_length(r.json), 1, "%s", r.body.data);
    cr_assert_str_eq(field(json_object_array_get_idx(r.json, 0), "content"), "module M2 {}");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/ch-1/modules/definitions?module-name=M2&revision=1999-01-01", NULL,
         &r);
    cr_assert_str_eq(r.body.data, "[]");
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/ch-1/modules/definitions?revision=1999-01-01", NULL, &r);
    cr_assert_eq(json_object_array_length(r.json), 2, "revision alone is ignored: %s", r.body.data);
    reply_free(&r);
    call(c, "GET", "/ncmp/v1/ch/nope/modules/definitions", NULL, &r);
    cr_assert_str_eq(r.body.data, "[]");
    reply_free(&r);
    case_fini(c);
}

Test(rest, southbound_lookups, .timeout = 180)
{
    rest_case *c = case_start("rest-sb", "rest", NULL);
    reply r;

    inventory(c);
    call(c, "GET", "/ncmpInventory/v1/ch/cmHandles?dmi-plugin-identifier=http%3A%2F%2Fdmi-a%3A8080",
         NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    {
        char *got = sorted_strings(&r);
        cr_assert_str_eq(got, "ch-1,ch-2,ch-4");
        free(got);
    }
    reply_free(&r);
    call(c, "GET",
         "/ncmpInventory/v1/ch/cmHandles?dmi-plugin-identifier=" DMI_B "&outputAlternateId=true",
         NULL, &r);
    {
        char *got = sorted_strings(&r);
        cr_assert_str_eq(got, ",/Sub=1/Me=2,alt-4");
        free(got);
    }
    reply_free(&r);
    call(c, "GET", "/ncmpInventory/v1/ch/cmHandles", NULL, &r);
    expect_error(&r, 400, "400 BAD_REQUEST");
    reply_free(&r);

    call(c, "GET", "/ncmpInventory/v1/ch?distinguishedName=/Sub=1/Me=1/Cell=3", NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(field(r.json, "cmHandle"), "ch-1");
    cr_assert_null(field(r.json, "cmHandleProperties"));
    reply_free(&r);
    call(c, "GET", "/ncmpInventory/v1/ch?distinguishedName=ch-3&outputDmiProperties=true", NULL,
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(field(r.json, "cmHandleProperties.k"), "1");
    reply_free(&r);
    call(c, "GET", "/ncmpInventory/v1/ch?distinguishedName=/Other=1", NULL, &r);
    expect_error(&r, 404, "404 NOT_FOUND");
    reply_free(&r);
    call(c, "GET", "/ncmpInventory/v1/ch", NULL, &r);
    expect_error(&r, 400, "400 BAD_REQUEST");
    reply_free(&r);
    /* unknown paths and methods */
    call(c, "GET", "/ncmp/v1/nothing", NULL, &r);
    expect_error(&r, 404, "404 NOT_FOUND");
    reply_free(&r);
    call(c, "DELETE", "/ncmp/v1/ch/searches", NULL, &r);
    expect_error(&r, 405, "405 METHOD_NOT_ALLOWED");
    reply_free(&r);
    case_fini(c);
}

/* --- hostile input ------------------------------------------------------- */

static const char *const injections[] = {
    "' OR '1'='1",
    "'; DROP TABLE cm_handle; --",
    "\\\" OR 1=1 --",
    "x') OR true; --",
    "$1",
    "%' OR 'a' LIKE '%",
    "{\\\"a\\\":1}",
    "ch-1' UNION SELECT id FROM cm_handle --",
    "[*]",
    "\\\\u0000",
};

static void expect_not_5xx(rest_case *c, const char *method, const char *path, const char *body)
{
    reply r;

    call_full(c, method, path, body, 1, NULL, &r);
    cr_assert_lt(r.status, 500, "%s %s %s -> %ld %s", method, path, body ? body : "", r.status,
                 r.body.data);
    reply_free(&r);
}

/* Percent-encode s into out. */
static void url_escape(ncmp_buf *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_')
            ncmp_buf_append_char(out, (char)*p);
        else
            ncmp_buf_appendf(out, "%%%02X", *p);
    }
}

Test(rest, sql_injection_strings_never_cause_a_5xx, .timeout = 240)
{
    rest_case *c = case_start("rest-inj", "rest", NULL);
    static const char *const conditions[] = {
        "hasAllModules",          "hasAllProperties",      "hasAllAdditionalProperties",
        "cmHandleWithTrustLevel", "cmHandleWithDmiPlugin", "cmHandleWithCpsPath"};

    inventory(c);
    for (size_t i = 0; i < sizeof(injections) / sizeof(injections[0]); i++) {
        const char *s = injections[i];
        ncmp_buf esc = NCMP_BUF_INIT, path = NCMP_BUF_INIT, body = NCMP_BUF_INIT;
        url_escape(&esc, s);
        for (size_t k = 0; k < sizeof(conditions) / sizeof(conditions[0]); k++) {
            const char *key = strcmp(conditions[k], "cmHandleWithCpsPath") == 0 ? "cpsPath" : s;
            for (int as_key = 0; as_key < 2; as_key++) {
                ncmp_buf_reset(&body);
                ncmp_buf_appendf(&body,
                                 "{\"cmHandleQueryParameters\":[{\"conditionName\":\"%s\","
                                 "\"conditionParameters\":[{\"%s\":\"%s\"}]}]}",
                                 conditions[k], as_key ? s : key, s);
                for (size_t p = 0; p < ALL_PATHS; p++)
                    expect_not_5xx(c, "POST", all_search_paths[p], body.data);
            }
        }
        ncmp_buf_reset(&body);
        ncmp_buf_appendf(&body, "{\"cmHandleQueryParameters\":[{\"conditionName\":\"%s\"}]}", s);
        expect_not_5xx(c, "POST", NB_IDS, body.data);
        /* the string goes between each prefix and suffix */
        static const char *const gets[][2] = {
            {"/ncmp/v1/ch/", ""},
            {"/ncmp/v1/ch/", "/properties"},
            {"/ncmp/v1/ch/", "/state"},
            {"/ncmp/v1/ch/", "/modules"},
            {"/ncmp/v1/ch/ch-1/modules/definitions?module-name=", ""},
            {"/ncmp/v1/ch/ch-1/modules/definitions?module-name=M1&revision=", ""},
            {"/ncmpInventory/v1/ch?distinguishedName=", ""},
            {"/ncmpInventory/v1/ch/cmHandles?dmi-plugin-identifier=", ""},
            {"/ncmp/v1/ch/ch-1?", "=1"},
        };
        for (size_t g = 0; g < sizeof(gets) / sizeof(gets[0]); g++) {
            ncmp_buf_reset(&path);
            ncmp_buf_appendf(&path, "%s%s%s", gets[g][0], esc.data, gets[g][1]);
            expect_not_5xx(c, "GET", path.data, NULL);
        }
        ncmp_buf_reset(&path);
        ncmp_buf_appendf(&path, NB_IDS "?outputAlternateId=%s", esc.data);
        expect_not_5xx(c, "POST", path.data, "{}");
        ncmp_buf_free(&esc);
        ncmp_buf_free(&path);
        ncmp_buf_free(&body);
    }
    /* the table is still there, and whole */
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM cm_handle", 0, NULL), 4);
    case_fini(c);
}

Test(rest, body_beyond_the_limit_is_413, .timeout = 180)
{
    const char *extra[] = {"--http.max-body-bytes=2048", NULL};
    rest_case *c = case_start("rest-413", "rest", extra);
    ncmp_buf big = NCMP_BUF_INIT;
    reply r;

    ncmp_buf_append_str(&big, "{\"cmHandleQueryParameters\":[],\"pad\":\"");
    for (int i = 0; i < 3000; i++)
        ncmp_buf_append_char(&big, 'x');
    ncmp_buf_append_str(&big, "\"}");
    call_full(c, "POST", NB_IDS, big.data, 1, NULL, &r);
    expect_error(&r, 413, "413 PAYLOAD_TOO_LARGE");
    reply_free(&r);
    call_full(c, "POST", "/ncmpInventory/v1/ch", big.data, 1, NULL, &r);
    expect_error(&r, 413, "413 PAYLOAD_TOO_LARGE");
    reply_free(&r);
    /* within the limit */
    call(c, "POST", NB_IDS, "{}", &r);
    cr_assert_eq(r.status, 200);
    reply_free(&r);
    ncmp_buf_free(&big);
    case_fini(c);
}

/* A read that cannot finish within rest.query-timeout-ms of its arrival
 * (here: its table locked by another transaction) is cancelled and
 * answered 503 with Retry-After, not left to the client's own timeout;
 * once the table is free the same reads answer. */
/* PostgreSQL's path: the search index answers a search from memory when
 * nothing changed, even while the table is locked. */
Test(rest, read_past_the_query_timeout_is_503_with_retry_after, .timeout = 180)
{
    const char *extra[] = {"--rest.query-timeout-ms=700", "--rest.search-index=false", NULL};
    rest_case *c = case_start("rest-deadline", "rest", extra);
    const char *paths[] = {"/ncmp/v1/ch/h-1", NULL};
    double t0;
    reply r;

    sql(c, "BEGIN; LOCK TABLE cm_handle IN ACCESS EXCLUSIVE MODE");
    t0 = ncmp_now_ms();
    call(c, "POST", NB_IDS, "{}", &r);
    expect_error(&r, 503, "503 SERVICE_UNAVAILABLE");
    cr_assert(strstr(r.headers.data, "Retry-After:"), "%s", r.headers.data);
    cr_assert_str_eq(field(r.json, "message"), "Request took too long");
    cr_assert(strstr(field(r.json, "details"), "rest.query-timeout-ms (700 ms"), "%s", r.body.data);
    cr_assert_lt(ncmp_now_ms() - t0, 5000.0, "answered only after %.0f ms", ncmp_now_ms() - t0);
    reply_free(&r);
    for (const char *const *p = paths; *p; p++) {
        call(c, "GET", *p, NULL, &r);
        expect_error(&r, 503, "503 SERVICE_UNAVAILABLE");
        cr_assert(strstr(r.headers.data, "Retry-After:"), "%s", r.headers.data);
        reply_free(&r);
    }
    sql(c, "COMMIT");
    call(c, "POST", NB_IDS, "{}", &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    call(c, "GET", paths[0], NULL, &r);
    expect_error(&r, 404, "404 NOT_FOUND");
    reply_free(&r);
    case_fini(c);
}

Test(rest, basic_auth_when_configured, .timeout = 180)
{
    const char *extra[] = {"--http.auth-username=cpsuser", "--http.auth-password=cpsr0cks!", NULL};
    rest_case *c = case_start("rest-auth", "rest", extra);
    reply r;

    call(c, "POST", NB_IDS, "{}", &r);
    expect_error(&r, 401, "401 UNAUTHORIZED");
    reply_free(&r);
    call_full(c, "POST", NB_IDS, "{}", 1, "cpsuser:wrong", &r);
    expect_error(&r, 401, "401 UNAUTHORIZED");
    reply_free(&r);
    call_full(c, "POST", NB_IDS, "{}", 1, "cpsuser:cpsr0cks!", &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    call(c, "GET", "/actuator/health", NULL, &r);
    cr_assert_eq(r.status, 200, "actuator is open: %s", r.body.data);
    reply_free(&r);
    /* the password never reaches the log */
    cr_assert(!it_file_contains(c->log, "cpsr0cks!"));
    case_fini(c);
}

/* An HS256 token of the given claims (JSON) as "Bearer <token>". */
static char *bearer(jwt_alg_t alg, const char *secret, const char *claims)
{
    jwt_t *j = NULL;
    char *t;
    ncmp_buf b = NCMP_BUF_INIT;

    cr_assert_eq(jwt_new(&j), 0);
    cr_assert_eq(jwt_add_grants_json(j, claims), 0);
    cr_assert_eq(
        jwt_set_alg(j, alg, (const unsigned char *)secret, secret ? (int)strlen(secret) : 0), 0);
    t = jwt_encode_str(j);
    ncmp_buf_appendf(&b, "Bearer %s", t);
    free(t);
    jwt_free(j);
    return b.data;
}

Test(rest, jwt_auth_when_configured, .timeout = 180)
{
    const char *extra[] = {
        "--http.auth-mode=jwt", "--http.jwt-hs256-secret=hs256-s3cret-of-32-bytes-at-least",
        "--http.jwt-issuer=https://idp/realms/cps", "--http.jwt-audience=ncmp", NULL};
    rest_case *c = case_start("rest-jwt", "rest", extra);
    const char *key = "hs256-s3cret-of-32-bytes-at-least";
    long now = (long)time(NULL);
    char claims[512];
    char *good, *bad[5];
    reply r;

    snprintf(claims, sizeof(claims),
             "{\"sub\":\"u\",\"iss\":\"https://idp/realms/cps\",\"aud\":[\"ncmp\"],\"exp\":%ld}",
             now + 300);
    good = bearer(JWT_ALG_HS256, key, claims);
    bad[0] = bearer(JWT_ALG_HS256, "another-secret-of-32-bytes-at-least", claims);
    bad[1] = bearer(JWT_ALG_NONE, NULL, claims);
    snprintf(claims, sizeof(claims),
             "{\"iss\":\"https://idp/realms/cps\",\"aud\":\"ncmp\",\"exp\":%ld}", now - 3600);
    bad[2] = bearer(JWT_ALG_HS256, key, claims);
    snprintf(claims, sizeof(claims),
             "{\"iss\":\"https://idp/realms/cps\",\"aud\":\"other\",\"exp\":%ld}", now + 300);
    bad[3] = bearer(JWT_ALG_HS256, key, claims);
    bad[4] = ncmp_xstrdup("Bearer not.a-token");

    call(c, "POST", NB_IDS, "{}", &r);
    expect_error(&r, 401, "401 UNAUTHORIZED");
    cr_assert(strstr(r.headers.data, "WWW-Authenticate: Bearer"), "%s", r.headers.data);
    reply_free(&r);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        call_full(c, "POST", NB_IDS, "{}", 1, bad[i], &r);
        expect_error(&r, 401, "401 UNAUTHORIZED");
        cr_assert(strstr(r.headers.data, "error=\"invalid_token\""), "token %zu: %s", i,
                  r.headers.data);
        reply_free(&r);
        free(bad[i]);
    }
    call_full(c, "POST", NB_IDS, "{}", 1, "cpsuser:cpsr0cks!", &r);
    expect_error(&r, 401, "401 UNAUTHORIZED");
    reply_free(&r);
    call_full(c, "POST", NB_IDS, "{}", 1, good, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    /* actuator stays open, as in NCMP */
    call(c, "GET", "/actuator/health", NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    cr_assert(!it_file_contains(c->log, key));
    free(good);
    case_fini(c);
}

/* --- registration over REST ---------------------------------------------- */

/* A registration of hostile strings: a 4xx, a 200, or NCMP's 500 listing
 * the handles that failed with their codes - never another 5xx. */
static void expect_not_5xx_or_failed(rest_case *c, const char *body)
{
    reply r;

    call_full(c, "POST", "/ncmpInventory/v1/ch", body, 1, NULL, &r);
    if (r.status == 500) {
        cr_assert_not_null(r.json, "%s", r.body.data);
        cr_assert_not_null(json_object_object_get(r.json, "failedCreatedCmHandles"), "%s -> %s",
                           body, r.body.data);
    } else {
        cr_assert_lt(r.status, 500, "%s -> %ld %s", body, r.status, r.body.data);
    }
    reply_free(&r);
}

Test(rest, registration_goes_through_the_pipeline, .timeout = 240)
{
    rest_case *c = case_start("rest-reg", "registration,lcm-relay,rest", NULL);
    reply r;

    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_A "','createdCmHandles':[{'cmHandle':'r-1','alternateId':'/R=1',"
         "'publicCmHandleProperties':{'color':'red'},'cmHandleProperties':{'k':1}},"
         "{'cmHandle':'r-2','trustLevel':'NONE'}]}",
         &r);
    cr_assert_eq(r.status, 200, "%s; log %s", r.body.data, c->log);
    cr_assert_str_eq(r.body.data, "");
    reply_free(&r);
    /* the outcome is published just before the registration commits */
    cr_assert_eq(
        it_wait_long(c->db, "SELECT count(*) FROM cm_handle WHERE id LIKE $1", "r-%", 2, 10000), 2);
    /* readable at once */
    call(c, "GET", "/ncmp/v1/ch/%2FR%3D1", NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(field(r.json, "state.cmHandleState"), "ADVISED");
    reply_free(&r);

    /* a duplicate: 500 with the failed handle, NCMP's code 109 */
    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_A "','createdCmHandles':[{'cmHandle':'r-1'},{'cmHandle':'r-3'}],"
         "'removedCmHandles':['gone']}",
         &r);
    cr_assert_eq(r.status, 500, "%s", r.body.data);
    {
        json_object *created = json_object_object_get(r.json, "failedCreatedCmHandles");
        json_object *removed = json_object_object_get(r.json, "failedRemovedCmHandles");
        cr_assert_eq(json_object_array_length(created), 1, "%s", r.body.data);
        cr_assert_str_eq(field(json_object_array_get_idx(created, 0), "cmHandle"), "r-1");
        cr_assert_str_eq(field(json_object_array_get_idx(created, 0), "errorCode"), "109");
        cr_assert_str_eq(field(json_object_array_get_idx(created, 0), "errorText"),
                         "cm-handle already exists");
        cr_assert_str_eq(field(json_object_array_get_idx(removed, 0), "errorCode"), "100");
    }
    reply_free(&r);

    /* refused whole, malformed, wrong shape */
    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'ftp://dmi','createdCmHandles':[{'cmHandle':'r-9'}]}", &r);
    expect_error(&r, 400, "400 BAD_REQUEST");
    cr_assert_str_eq(field(r.json, "message"), "Invalid DMI plugin URL for dmiPlugin");
    reply_free(&r);
    call_full(c, "POST", "/ncmpInventory/v1/ch", "{\"dmiPlugin\":", 1, NULL, &r);
    expect_error(&r, 400, "400 BAD_REQUEST");
    reply_free(&r);
    call_full(c, "POST", "/ncmpInventory/v1/ch", "", 1, NULL, &r);
    expect_error(&r, 400, "400 BAD_REQUEST");
    reply_free(&r);
    {
        static const char *const shapes[] = {
            "[]",
            "{'dmiPlugin':7}",
            "{'createdCmHandles':{}}",
            "{'createdCmHandles':[{'alternateId':'x'}]}",
            "{'createdCmHandles':[{'cmHandle':'x','trustLevel':'SOME'}]}",
            "{'createdCmHandles':[{'cmHandle':'x','publicCmHandleProperties':{'a':[1]}}]}",
            "{'removedCmHandles':[1]}",
            "{'upgradedCmHandles':{'moduleSetTag':'t'}}",
        };
        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
            call(c, "POST", "/ncmpInventory/v1/ch", shapes[i], &r);
            expect_error(&r, 400, "400 BAD_REQUEST");
            reply_free(&r);
        }
    }
    for (size_t i = 0; i < sizeof(injections) / sizeof(injections[0]); i++) {
        ncmp_buf body = NCMP_BUF_INIT;
        ncmp_buf_appendf(&body,
                         "{\"dmiPlugin\":\"http://x/%s\",\"createdCmHandles\":[{\"cmHandle\":"
                         "\"%s\",\"alternateId\":\"%s\",\"publicCmHandleProperties\":{\"%s\":"
                         "\"%s\"}}],\"removedCmHandles\":[\"%s\"]}",
                         injections[i], injections[i], injections[i], injections[i], injections[i],
                         injections[i]);
        expect_not_5xx_or_failed(c, body.data);
        ncmp_buf_free(&body);
    }
    /* a removal through REST */
    call(c, "POST", "/ncmpInventory/v1/ch", "{'dmiPlugin':'" DMI_A "','removedCmHandles':['r-2']}",
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    cr_assert_eq(
        it_wait_long(c->db, "SELECT count(*) FROM cm_handle WHERE id = $1", "r-2", 0, 10000), 0);
    case_fini(c);
}

/* ncmp-loadgen --rest (NCMP's k6 setup and teardown, which `./run bench
 * kpi` times): each request POSTed in turn, the summary line says how
 * many were ok, and a refused request makes it fail. */
static int loadgen_rest(rest_case *c, const char *verb, const char *out)
{
    char url[64];
    const char *argv[] = {NCMP_LOADGEN_PATH, verb,  "--rest",  url,      "--handles", "250",
                          "--batch",         "100", "--first", "700001", "--dmi",     DMI_A,
                          "--quiet",         NULL};
    pid_t pid;
    int status;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d", c->port);
    pid = it_spawn(NCMP_LOADGEN_PATH, out, argv);
    status = it_wait_exit(pid, 60000);
    cr_assert(status != -1 && WIFEXITED(status), "ncmp-loadgen %s did not end; log %s", verb, out);
    return WEXITSTATUS(status);
}

Test(rest, loadgen_registers_and_removes_through_the_rest_door, .timeout = 240)
{
    rest_case *c = case_start("rest-loadgen", "registration,lcm-relay,rest", NULL);
    char out[600];

    snprintf(out, sizeof(out), "%s.loadgen", c->log);
    cr_assert_eq(loadgen_rest(c, "register", out), 0, "log %s", out);
    cr_assert(it_file_contains(out, "rest 3 ok 3 handles 250 seconds"), "log %s", out);
    cr_assert_eq(
        it_wait_long(c->db, "SELECT count(*) FROM cm_handle WHERE id LIKE $1", "ch-7%", 250, 10000),
        250);
    /* the same handles again: NCMP's 500 with the failed handles, not ok */
    cr_assert_eq(loadgen_rest(c, "register", out), 1, "log %s", out);
    cr_assert(it_file_contains(out, "rest 3 ok 0 handles 0 seconds"), "log %s", out);
    cr_assert(it_file_contains(out, "HTTP 500"), "log %s", out);
    cr_assert_eq(loadgen_rest(c, "deregister", out), 0, "log %s", out);
    cr_assert(it_file_contains(out, "rest 3 ok 3 handles 250 seconds"), "log %s", out);
    cr_assert_eq(
        it_wait_long(c->db, "SELECT count(*) FROM cm_handle WHERE id LIKE $1", "ch-7%", 0, 10000),
        0);
    case_fini(c);
}

/* cmHandleStatus in a registration is accepted and not stored, as in
 * NCMP: the status answered is the handle's state. */
Test(rest, registration_takes_cm_handle_status_without_storing_it, .timeout = 240)
{
    rest_case *c = case_start("rest-status", "registration,lcm-relay,rest", NULL);
    reply r;

    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_A "','createdCmHandles':[{'cmHandle':'s-1','alternateId':'/S=1',"
         "'cmHandleStatus':'READY','cmHandleProperties':{'k':'v'}}]}",
         &r);
    cr_assert_eq(r.status, 200, "%s; log %s", r.body.data, c->log);
    reply_free(&r);
    call(c, "GET", "/ncmp/v2/ch/s-1", NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(field(r.json, "cmHandleStatus"), "ADVISED", "%s", r.body.data);
    cr_assert_str_eq(field(r.json, "alternateId"), "/S=1");
    reply_free(&r);
    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_A "','updatedCmHandles':[{'cmHandle':'s-1',"
         "'cmHandleStatus':'LOCKED','cmHandleProperties':{'k2':'v2'}}]}",
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    /* the update applied, the status not */
    call(c, "POST", SB_V2 "?outputDmiProperties=true", "{}", &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_eq(json_object_array_length(r.json), 1, "%s", r.body.data);
    cr_assert_str_eq(field(handle_in(r.json, "s-1"), "cmHandleStatus"), "ADVISED");
    {
        json_object *dmi = json_tokener_parse(field(handle_in(r.json, "s-1"), "dmiProperties"));
        cr_assert_str_eq(field(dmi, "k"), "v", "%s", r.body.data);
        cr_assert_str_eq(field(dmi, "k2"), "v2", "%s", r.body.data);
        json_object_put(dmi);
    }
    reply_free(&r);
    /* a string, like the other fields */
    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_A "','createdCmHandles':[{'cmHandle':'s-2','cmHandleStatus':{}}]}",
         &r);
    expect_error(&r, 400, "400 BAD_REQUEST");
    cr_assert(strstr(r.body.data, "cmHandleStatus") != NULL, "%s", r.body.data);
    reply_free(&r);
    case_fini(c);
}

/* A search body with one cmHandleWithCpsPath condition on the leaf
 * `leaf` of cm-handles equal to `value`. */
static void cps_leaf_query(ncmp_buf *b, const char *leaf, const char *value)
{
    ncmp_buf_reset(b);
    ncmp_buf_appendf(b,
                     "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithCpsPath',"
                     "'conditionParameters':[{'cpsPath':'//cm-handles[@%s=\\\"%s\\\"]'}]}]}",
                     leaf, value);
}

Test(rest, registration_stores_the_data_job_services, .timeout = 240)
{
    rest_case *c = case_start("rest-jobs", "registration,lcm-relay,rest", NULL);
    ncmp_buf q = NCMP_BUF_INIT;
    reply r;

    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_A "','dmiDatajobsReadPlugin':'http://jobs-r:8080',"
         "'dmiDatajobsWritePlugin':'http://jobs-w:8080',"
         "'createdCmHandles':[{'cmHandle':'j-1','alternateId':'/J=1'},{'cmHandle':'j-2'}]}",
         &r);
    cr_assert_eq(r.status, 200, "%s; log %s", r.body.data, c->log);
    reply_free(&r);
    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_B "','createdCmHandles':[{'cmHandle':'j-3'}]}", &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);

    /* read back through the CPS-path condition, on every search */
    for (size_t p = 0; p < ALL_PATHS; p++) {
        cps_leaf_query(&q, "dmi-datajobs-read-service", "http://jobs-r:8080");
        expect_ids(c, all_search_paths[p], q.data, "j-1,j-2");
        cps_leaf_query(&q, "dmi-datajobs-write-service", "http://jobs-w:8080");
        expect_ids(c, all_search_paths[p], q.data, "j-1,j-2");
        /* not sent: stored blank, not as dmiPlugin */
        cps_leaf_query(&q, "dmi-datajobs-write-service", "");
        expect_ids(c, all_search_paths[p], q.data, "j-3");
        cps_leaf_query(&q, "dmi-datajobs-read-service", DMI_B);
        expect_ids(c, all_search_paths[p], q.data, "");
    }
    /* a DMI plugin is matched on its three services only, as in NCMP */
    expect_ids(c, SB_IDS,
               "{'cmHandleQueryParameters':[{'conditionName':'cmHandleWithDmiPlugin',"
               "'conditionParameters':[{'dmiPluginName':'http://jobs-r:8080'}]}]}",
               "");
    /* NCMP's RestOutputCmHandle has no DMI service fields */
    call(c, "GET", "/ncmpInventory/v1/ch?distinguishedName=/J=1&outputDmiProperties=true", NULL,
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(field(r.json, "cmHandle"), "j-1");
    cr_assert_null(strstr(r.body.data, "jobs-"), "%s", r.body.data);
    reply_free(&r);

    /* an update keeps them (the request's services are its creates') */
    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_A "','dmiDatajobsReadPlugin':'http://jobs-r2:8080',"
         "'createdCmHandles':[{'cmHandle':'j-4'}],"
         "'updatedCmHandles':[{'cmHandle':'j-1','publicCmHandleProperties':{'color':'red'}},"
         "{'cmHandle':'j-3','publicCmHandleProperties':{'color':'red'}}]}",
         &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    expect_ids(c, NB_IDS,
               "{'cmHandleQueryParameters':[{'conditionName':'hasAllProperties',"
               "'conditionParameters':[{'color':'red'}]}]}",
               "j-1,j-3");
    cps_leaf_query(&q, "dmi-datajobs-read-service", "http://jobs-r:8080");
    expect_ids(c, NB_IDS, q.data, "j-1,j-2");
    cps_leaf_query(&q, "dmi-datajobs-read-service", "http://jobs-r2:8080");
    expect_ids(c, NB_IDS, q.data, "j-4");
    cps_leaf_query(&q, "dmi-datajobs-write-service", "");
    expect_ids(c, NB_IDS, q.data, "j-3,j-4");

    /* checked as the other DMI URLs: the request is refused whole */
    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_A "','dmiDatajobsWritePlugin':'ftp://jobs',"
         "'createdCmHandles':[{'cmHandle':'j-9'}]}",
         &r);
    expect_error(&r, 400, "400 BAD_REQUEST");
    cr_assert_str_eq(field(r.json, "message"), "Invalid DMI plugin URL for dmiDatajobsWritePlugin");
    reply_free(&r);
    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_A "','dmiDatajobsReadPlugin':7,"
         "'createdCmHandles':[{'cmHandle':'j-9'}]}",
         &r);
    expect_error(&r, 400, "400 BAD_REQUEST");
    reply_free(&r);
    cr_assert_eq(it_query_long(c->db, "SELECT count(*) FROM cm_handle WHERE id = 'j-9'", 0, NULL),
                 0);
    ncmp_buf_free(&q);
    case_fini(c);
}

Test(rest, registration_without_outcome_times_out_504, .timeout = 180)
{
    /* no registration role: nobody answers */
    const char *extra[] = {"--rest.registration-timeout-ms=1000", NULL};
    rest_case *c = case_start("rest-504", "rest", extra);
    reply r;

    call(c, "POST", "/ncmpInventory/v1/ch",
         "{'dmiPlugin':'" DMI_A "','createdCmHandles':[{'cmHandle':'t-1'}]}", &r);
    expect_error(&r, 504, "504 GATEWAY_TIMEOUT");
    reply_free(&r);
    /* the request stays on the registration topic: a CloudEvent whose
     * ce_time the strict RFC 3339 checker reads */
    {
        it_record *got = NULL;
        size_t n = it_read_topic(c->topic, 1, 30000, &got);
        char err[1024] = "";
        cr_assert_eq(n, 1, "%zu requests on %s", n, c->topic);
        cr_assert_eq(conformance_check_headers(CONFORMANCE_REST_REGISTRATION, got[0].headers, err,
                                               sizeof(err)),
                     0, "%s", err);
        cr_assert_eq(conformance_check_event_text(CONFORMANCE_REST_REGISTRATION, got[0].value,
                                                  got[0].len, err, sizeof(err)),
                     0, "%s: %s", err, got[0].value);
        it_records_free(got, n);
    }
    case_fini(c);
}

/* Health, readiness and metrics: what an operator and a load balancer use. */
Test(rest, health_readiness_and_metrics, .timeout = 180)
{
    rest_case *c = case_start("rest-health", "rest", NULL);
    reply r;
    char line[256];

    inventory(c);
    call(c, "GET", "/actuator/health", NULL, &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(field(r.json, "status"), "UP", "%s", r.body.data);
    reply_free(&r);
    call(c, "GET", "/actuator/health/readiness", NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(field(r.json, "status"), "UP");
    cr_assert_str_eq(field(r.json, "components.db.status"), "UP");
    cr_assert_str_eq(field(r.json, "components.kafka.status"), "UP");
    reply_free(&r);
    /* a request to count, then the scrape */
    call(c, "GET", "/ncmp/v1/ch/ch-1", NULL, &r);
    cr_assert_eq(r.status, 200);
    reply_free(&r);
    call(c, "GET", "/metrics", NULL, &r);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.headers.data, "text/plain; version=0.0.4"), "%s", r.headers.data);
    /* the inventory: 2 READY, 1 ADVISED, 1 LOCKED (see inventory()) */
    cr_assert(strstr(r.body.data, "# TYPE ncmp_inventory_handles gauge\n"), "%s", r.body.data);
    cr_assert(strstr(r.body.data, "ncmp_inventory_handles{state=\"READY\"} 2\n"), "%s",
              r.body.data);
    cr_assert(strstr(r.body.data, "ncmp_inventory_handles{state=\"LOCKED\"} 1\n"));
    cr_assert(strstr(r.body.data, "ncmp_inventory_handles{state=\"DELETING\"} 0\n"));
    snprintf(
        line, sizeof(line),
        "ncmp_http_requests_total{method=\"GET\",route=\"/ncmp/v1/ch/{ref}\",status=\"200\"} 1\n");
    cr_assert(strstr(r.body.data, line), "%s", r.body.data);
    cr_assert(strstr(r.body.data, "# TYPE ncmp_db_statement_duration_seconds histogram\n"));
    reply_free(&r);
    case_fini(c);
}

/* A role that cannot reach PostgreSQL while it starts (the database
 * refuses connections, as while PostgreSQL crashes) is started again
 * until it can, instead of stopping the process; the process then runs,
 * and stops cleanly. */
Test(rest, a_role_starts_once_the_database_takes_connections, .timeout = 180)
{
    char dbname[96], dburl[512], log[512], name[128], sql[256];
    char flags[9][600];
    const char *args[10], *migrate[4];
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    ncmp_db *admin = it_db();
    ncmp_err err;
    pid_t pid;
    int status, waited = 0;

    it_unique(name, sizeof(name), "role-wait");
    snprintf(log, sizeof(log), "%s/%s.log", dir && *dir ? dir : "/tmp", name);
    it_scratch_db_create("it_wait", dbname, sizeof(dbname), dburl, sizeof(dburl));
    snprintf(flags[0], sizeof(flags[0]), "--db.url=%s", dburl);
    migrate[0] = NCMPD_PATH;
    migrate[1] = flags[0];
    migrate[2] = "migrate";
    migrate[3] = NULL;
    status = it_wait_exit(it_spawn(NCMPD_PATH, log, migrate), 60000);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "ncmpd migrate failed; log %s", log);
    snprintf(sql, sizeof(sql), "ALTER DATABASE %s ALLOW_CONNECTIONS false", dbname);
    cr_assert_eq(ncmp_db_exec(admin, sql, &err), 0, "%s", err.msg);

    snprintf(flags[1], sizeof(flags[1]), "--db.migrate-on-start=false");
    snprintf(flags[2], sizeof(flags[2]), "--roles=rest");
    snprintf(flags[3], sizeof(flags[3]), "--http.port=0");
    snprintf(flags[4], sizeof(flags[4]), "--http.host=127.0.0.1");
    snprintf(flags[5], sizeof(flags[5]), "--kafka.bootstrap.servers=%s", it_kafka());
    {
        static const char *const topics[] = {"registration.topic", "registration.response-topic",
                                             "lcm.topic"};
        for (int i = 0; i < 3; i++) {
            char topic[200];
            snprintf(topic, sizeof(topic), "%s-%d", name, i);
            it_create_topic(topic, 1);
            snprintf(flags[6 + i], sizeof(flags[6 + i]), "--%s=%s", topics[i], topic);
        }
    }
    for (int i = 0; i < 9; i++)
        args[i] = flags[i];
    args[9] = NULL;
    pid = it_ncmpd_spawn(log, args);
    while (!it_file_contains(log, "starting it again") && waited < 30000) {
        it_sleep_ms(100);
        waited += 100;
    }
    cr_expect(it_file_contains(log, "starting it again"),
              "no retry of the role's start logged in 30 s; log %s", log);
    cr_expect_eq(waitpid(pid, &status, WNOHANG), 0, "ncmpd stopped while the database refused it");
    cr_expect(!it_file_contains(log, "running ("), "running without its database; log %s", log);
    cr_expect(!it_file_contains(log, "rest: rest:"), "the role named twice in a line; log %s", log);

    snprintf(sql, sizeof(sql), "ALTER DATABASE %s ALLOW_CONNECTIONS true", dbname);
    cr_assert_eq(ncmp_db_exec(admin, sql, &err), 0, "%s", err.msg);
    for (waited = 0; !it_file_contains(log, "running (") && waited < 30000; waited += 100)
        it_sleep_ms(100);
    cr_expect(it_file_contains(log, "running ("),
              "not running 30 s after the database took connections again; log %s", log);
    status = it_ncmpd_stop(pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "stop: status %d; log %s", status,
              log);
    ncmp_db_close(admin);
    it_scratch_db_drop(dbname);
}

/* A role that cannot start (here: its HTTP port is taken) stops ncmpd
 * with the reason and a failing status, and ncmpd never logs that it is
 * running: `./run` and supervisors wait for that line, and a benchmark
 * once waited ten minutes on an ncmpd that had logged it and stopped. */
Test(rest, a_taken_http_port_stops_ncmpd_before_it_says_running, .timeout = 60)
{
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    char name[96], log[512], flags[5][256], needle[96];
    const char *args[6];
    int fd, port = it_taken_port(&fd), status;

    it_unique(name, sizeof(name), "port-taken");
    snprintf(log, sizeof(log), "%s/%s.log", dir && *dir ? dir : "/tmp", name);
    snprintf(flags[0], sizeof(flags[0]), "--db.url=%s", it_db_url());
    snprintf(flags[1], sizeof(flags[1]), "--kafka.bootstrap.servers=%s", it_kafka());
    snprintf(flags[2], sizeof(flags[2]), "--roles=cps");
    snprintf(flags[3], sizeof(flags[3]), "--http.host=127.0.0.1");
    snprintf(flags[4], sizeof(flags[4]), "--http.port=%d", port);
    for (int i = 0; i < 5; i++)
        args[i] = flags[i];
    args[5] = NULL;
    status = it_wait_exit(it_ncmpd_spawn(log, args), 30000);
    close(fd);
    cr_assert_neq(status, -1, "ncmpd still runs 30 s after its port was found taken; log %s", log);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d; log %s", status, log);
    snprintf(needle, sizeof(needle), "cannot listen on 127.0.0.1:%d", port);
    cr_expect(it_file_contains(log, needle), "no '%s' in %s", needle, log);
    cr_expect(!it_file_contains(log, "running ("), "it said it was running; log %s", log);
}
