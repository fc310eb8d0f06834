/*
 * What ncmpd's HTTP server tells about itself, on the rest role started in
 * this process (roles rest,cps, with HTTP Basic credentials set) on a
 * scratch database and the real broker:
 *
 *   - the OpenAPI document at /v3/api-docs lists exactly the routes the
 *     server has (ncmp_http_routes_each), method by method, and marks
 *     exactly the open ones as needing no credentials;
 *   - the actuator paths NCMP's deployments probe and scrape answer
 *     without credentials, the others still need them.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_front.h"
#include "it_util.h"
#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "ncmp_migrate.h"
#include "rest.h"
#include "role.h"

#define USER     "cpsuser"
#define PASSWORD "cpsr0cks!"
/* base64 of USER ":" PASSWORD */
#define CREDENTIALS_B64 "Y3BzdXNlcjpjcHNyMGNrcyE="
#define MAX_OPS         256

typedef struct served {
    char dbname[96];
    char dburl[512];
    ncmp_config *cfg;
    ncmp_services svc;
    rest *rest;
    int port;
} served;

static served the_served;

static void served_stop(void)
{
    served *s = &the_served;

    rest_destroy(s->rest);
    s->rest = NULL;
    ncmp_services_free(&s->svc);
    ncmp_config_destroy(s->cfg);
    s->cfg = NULL;
    if (s->dbname[0])
        it_scratch_db_drop(s->dbname);
    s->dbname[0] = '\0';
}

TestSuite(openapi, .fini = served_stop);

static void set(ncmp_config *cfg, const char *name, const char *value)
{
    ncmp_err err;
    cr_assert_eq(ncmp_config_set(cfg, name, value, &err), 0, "%s=%s: %s", name, value, err.msg);
}

static served *served_start(void)
{
    served *s = &the_served;
    char name[128], topic[200];
    ncmp_db *db = NULL;
    ncmp_err err;
    int applied = 0;

    memset(s, 0, sizeof(*s));
    ncmp_log_setup(NCMP_LOG_WARN, NCMP_LOG_TEXT, NULL);
    it_unique(name, sizeof(name), "openapi");
    it_scratch_db_create("it_openapi", s->dbname, sizeof(s->dbname), s->dburl, sizeof(s->dburl));
    cr_assert_eq(ncmp_db_open(&db, s->dburl, NULL, 10, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_migrate_run(db, ncmp_migrations, &applied, &err), 0, "%s", err.msg);
    ncmp_db_close(db);
    s->cfg = it_config();
    set(s->cfg, "db.url", s->dburl);
    set(s->cfg, "roles", "rest,cps");
    set(s->cfg, "http.host", "127.0.0.1");
    set(s->cfg, "http.port", "0");
    set(s->cfg, "http.auth-username", USER);
    set(s->cfg, "http.auth-password", PASSWORD);
    set(s->cfg, "rest.db-connections", "2");
    snprintf(topic, sizeof(topic), "g-%s", name);
    set(s->cfg, "kafka.group.id", topic);
    snprintf(topic, sizeof(topic), "%s-response", name);
    set(s->cfg, "registration.response-topic", topic);
    it_create_topic(topic, 1);
    snprintf(topic, sizeof(topic), "%s-lcm", name);
    set(s->cfg, "lcm.topic", topic);
    it_create_topic(topic, 1);
    /* no Kafka inputs of the data paths: the routes are there all the same */
    set(s->cfg, "data.request-topic", "");
    set(s->cfg, "datajob.request-topic", "");
    cr_assert_eq(ncmp_services_new(&s->svc, s->cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(rest_start(&s->rest, &s->svc, &err), 0, "%s", err.msg);
    s->port = ncmp_http_server_port(rest_http_server(s->rest));
    return s;
}

/* --- HTTP ---------------------------------------------------------------- */

/* GET `path`, with the credentials when `auth`. */
static void get(const served *s, const char *path, int auth, front_reply *r)
{
    static const char *const credentials[] = {"Authorization: Basic " CREDENTIALS_B64, NULL};
    char base[64];

    snprintf(base, sizeof(base), "http://127.0.0.1:%d", s->port);
    it_front_http(base, "GET", path, NULL, auth ? credentials : NULL, r);
}

/* --- routes and operations ----------------------------------------------- */

/* "GET /a/{b}" and whether it needs no credentials. */
typedef struct op_list {
    char *names[MAX_OPS];
    int open[MAX_OPS];
    size_t n;
} op_list;

static void op_add(op_list *l, const char *method, const char *path, int open)
{
    ncmp_buf b = NCMP_BUF_INIT;

    cr_assert_lt(l->n, MAX_OPS);
    ncmp_buf_appendf(&b, "%s %s", method, path);
    l->names[l->n] = b.data;
    l->open[l->n++] = open;
}

/* A route pattern as an OpenAPI path: "{rest...}" is written "{rest}". */
static void route_seen(void *arg, const char *method, const char *pattern, int open)
{
    char path[512];
    size_t o = 0;

    for (const char *p = pattern; *p && o + 1 < sizeof(path); p++) {
        if (strncmp(p, "...}", 4) == 0)
            p += 3;
        path[o++] = *p;
    }
    path[o] = '\0';
    op_add(arg, method, path, open);
}

static const char *const METHODS[] = {"get", "put", "post", "delete", "patch", "head", "options"};

/* Each operation of the document; asserts every {name} of its path is a
 * declared path parameter. */
static void doc_ops(json_object *doc, op_list *l)
{
    json_object *paths = NULL;

    cr_assert(json_object_object_get_ex(doc, "paths", &paths), "no paths");
    json_object_object_foreach(paths, path, item)
    {
        for (size_t m = 0; m < sizeof(METHODS) / sizeof(METHODS[0]); m++) {
            json_object *op = NULL, *sec = NULL, *params = NULL;
            char upper[16];
            size_t i;

            if (!json_object_object_get_ex(item, METHODS[m], &op))
                continue;
            for (i = 0; METHODS[m][i]; i++)
                upper[i] = (char)(METHODS[m][i] - 'a' + 'A');
            upper[i] = '\0';
            json_object_object_get_ex(op, "parameters", &params);
            for (const char *p = strchr(path, '{'); p; p = strchr(p + 1, '{')) {
                size_t len = strcspn(p + 1, "}");
                int found = 0;
                for (size_t k = 0; params && k < json_object_array_length(params); k++) {
                    json_object *q = json_object_array_get_idx(params, k), *name, *in;
                    if (json_object_object_get_ex(q, "name", &name) &&
                        json_object_object_get_ex(q, "in", &in) &&
                        strcmp(json_object_get_string(in), "path") == 0 &&
                        strlen(json_object_get_string(name)) == len &&
                        strncmp(json_object_get_string(name), p + 1, len) == 0)
                        found = 1;
                }
                cr_assert(found, "%s %s: path parameter %.*s is not declared", upper, path,
                          (int)len, p + 1);
            }
            /* "security": [] overrides the document's basicAuth: open */
            op_add(l, upper, path,
                   json_object_object_get_ex(op, "security", &sec) &&
                       json_object_is_type(sec, json_type_array) &&
                       json_object_array_length(sec) == 0);
        }
    }
}

/* Index of `name` in `l`, or -1. */
static long op_find(const op_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->names[i], name) == 0)
            return (long)i;
    return -1;
}

static void op_list_free(op_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    l->n = 0;
}

static const char *str_at(json_object *o, const char *a, const char *b)
{
    json_object *v = NULL;

    if (!json_object_object_get_ex(o, a, &v) || (b && !json_object_object_get_ex(v, b, &v)))
        return NULL;
    return json_object_get_string(v);
}

/* --- tests --------------------------------------------------------------- */

Test(openapi, every_route_is_documented_and_every_documented_operation_is_served, .timeout = 180)
{
    served *s = served_start();
    op_list routes = {0}, ops = {0};
    json_object *doc;
    front_reply r;

    /* behind the credentials, as NCMP's springdoc document is */
    get(s, "/v3/api-docs", 0, &r);
    cr_assert_eq(r.status, 401, "%s", r.body.data);
    it_front_reply_free(&r);
    get(s, "/v3/api-docs", 1, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(r.content_type, "application/json");
    doc = json_object_get(r.json);
    cr_assert_not_null(doc, "not JSON");
    cr_assert_eq(strncmp(str_at(doc, "openapi", NULL), "3.", 2), 0);
    cr_assert_str_eq(str_at(doc, "info", "version"), NCMPD_VERSION);

    ncmp_http_routes_each(rest_http_server(s->rest), route_seen, &routes);
    doc_ops(doc, &ops);
    cr_assert_gt(routes.n, 60, "the rest and cps roles serve more than %zu routes", routes.n);
    for (size_t i = 0; i < routes.n; i++) {
        long at = op_find(&ops, routes.names[i]);
        cr_expect_geq(at, 0, "served but not in docs/openapi.json: %s", routes.names[i]);
        cr_expect(at < 0 || ops.open[at] == routes.open[i],
                  "%s: the document says %s, the server %s", routes.names[i],
                  at >= 0 && ops.open[at] ? "open" : "authenticated",
                  routes.open[i] ? "open" : "authenticated");
    }
    for (size_t i = 0; i < ops.n; i++)
        cr_expect_geq(op_find(&routes, ops.names[i]), 0, "in docs/openapi.json but not served: %s",
                      ops.names[i]);
    cr_expect_eq(ops.n, routes.n, "each operation once: %zu in the document, %zu routes", ops.n,
                 routes.n);

    op_list_free(&routes);
    op_list_free(&ops);
    json_object_put(doc);
    it_front_reply_free(&r);
    served_stop();
}

Test(openapi, actuator_paths_answer_without_credentials, .timeout = 180)
{
    served *s = served_start();
    static const char *const open_paths[] = {"/actuator/health", "/actuator/health/liveness",
                                             "/actuator/health/readiness", "/actuator/info",
                                             "/actuator/prometheus"};
    front_reply r, m;
    int types = 0;

    for (size_t i = 0; i < sizeof(open_paths) / sizeof(open_paths[0]); i++) {
        get(s, open_paths[i], 0, &r);
        cr_assert_eq(r.status, 200, "%s: %ld %s", open_paths[i], r.status, r.body.data);
        it_front_reply_free(&r);
    }
    /* liveness: Spring's body, UP while the process serves */
    get(s, "/actuator/health/liveness", 0, &r);
    cr_assert_str_eq(str_at(r.json, "status", NULL), "UP", "%s", r.body.data);
    it_front_reply_free(&r);
    /* info: the build's version, as `ncmpd --version` prints it */
    get(s, "/actuator/info", 0, &r);
    cr_assert_not_null(r.json, "%s", r.body.data);
    cr_assert_str_eq(str_at(r.json, "build", "name"), "ncmpd");
    cr_assert_str_eq(str_at(r.json, "build", "version"), NCMPD_VERSION);
    it_front_reply_free(&r);

    /* /actuator/prometheus is /metrics: one exposition, one content type */
    get(s, "/actuator/prometheus", 0, &r);
    get(s, "/metrics", 1, &m);
    cr_assert_eq(m.status, 200);
    cr_assert_str_eq(r.content_type, NCMP_METRICS_CONTENT_TYPE);
    cr_assert_str_eq(m.content_type, NCMP_METRICS_CONTENT_TYPE);
    for (const char *p = r.body.data; (p = strstr(p, "# TYPE ")) != NULL; p++) {
        char line[256];
        snprintf(line, sizeof(line), "%.*s\n", (int)strcspn(p, "\n"), p);
        cr_assert(strstr(m.body.data, line), "/metrics lacks %s", line);
        types++;
    }
    cr_assert_gt(types, 5);
    cr_assert(strstr(r.body.data, "ncmp_inventory_handles{state=\"READY\"} 0\n"), "%s",
              r.body.data);
    it_front_reply_free(&r);
    it_front_reply_free(&m);

    /* the others keep needing the credentials */
    get(s, "/metrics", 0, &r);
    cr_assert_eq(r.status, 401);
    it_front_reply_free(&r);
    get(s, "/ncmp/v1/ch/x", 0, &r);
    cr_assert_eq(r.status, 401);
    it_front_reply_free(&r);
    get(s, "/ncmp/v1/ch/x", 1, &r);
    cr_assert_eq(r.status, 404, "%s", r.body.data);
    it_front_reply_free(&r);
    served_stop();
}
