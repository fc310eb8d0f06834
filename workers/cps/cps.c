#include "cps.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cps_events.h"
#include "cps_internal.h"
#include "cps_schema.h"
#include "health.h"
#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_multipart.h"
#include "rest.h"
#include "rest_json.h"

#define LIST_BLOCK 1000

/* --- helpers ------------------------------------------------------------- */

/* The {v} of the path as a number: 1 or 2 (3 where `max` allows it);
 * anything else is answered 404 (no such path) and gives 0. */
int cps_api_version(ncmp_http_request *req, int max)
{
    const char *v = ncmp_http_param(req, "v");
    int n = v && v[0] == 'v' && v[1] >= '1' && v[1] <= '9' && !v[2] ? v[1] - '0' : 0;

    if (n < 1 || n > max) {
        ncmp_http_respond_error(req, 404, "Not found", "no such API version");
        return 0;
    }
    return n;
}

/* CPS's names: no blanks, no characters that would need escaping in a
 * path or an xpath. Answers 400 and returns -1 otherwise. */
int cps_name_valid(ncmp_http_request *req, const char *what, const char *name)
{
    char details[256];

    if (!name) {
        snprintf(details, sizeof(details), "Required parameter '%s' is not present.", what);
        ncmp_http_respond_error(req, 400, "Missing request parameter", details);
        return -1;
    }
    if (*name && strlen(name) <= 255 &&
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:@~") ==
            strlen(name))
        return 0;
    snprintf(details, sizeof(details),
             "%s '%.100s' is empty, too long or has characters other "
             "than letters, digits and -_.:@~",
             what, name);
    ncmp_http_respond_error(req, 400, "Invalid name", details);
    return -1;
}

/* CPS's error body with details from a format. */
void cps_respond_error(ncmp_http_request *req, int status, const char *message, const char *fmt,
                       ...)
{
    char details[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(details, sizeof(details), fmt, ap);
    va_end(ap);
    ncmp_http_respond_error(req, status, message, details);
}

/* Run one statement (autocommit) on a pooled connection. On failure the
 * request is answered and -1 returned. *res is the caller's. */
int cps_run_one(ncmp_http_request *req, cps_api *api, const char *sql, int nparams,
                const char *const *params, PGresult **res)
{
    ncmp_db *db = NULL;
    ncmp_err err;

    if (rest_pool_get(api->pool, CPS_POOL_WAIT_MS, &db, &err) != 0) {
        rest_db_answer_error(req, &err);
        return -1;
    }
    if (ncmp_db_query(db, sql, nparams, params, res, &err) != 0) {
        rest_pool_put(api->pool, db);
        rest_db_answer_error(req, &err);
        return -1;
    }
    rest_pool_put(api->pool, db);
    return 0;
}

/* 201 Created: v1 answers the name as text, v2 nothing. */
void cps_respond_created(ncmp_http_request *req, int version, const char *name)
{
    if (version == 1)
        ncmp_http_respond(req, 201, "text/plain", name, strlen(name));
    else
        ncmp_http_respond(req, 201, NULL, "", 0);
}

static void respond_row(const PGresult *res, ncmp_http_request *req)
{
    ncmp_buf out = NCMP_BUF_INIT;

    rest_json_raw_row(res, 0, &out);
    ncmp_http_respond_json(req, 200, &out);
}

/* --- dataspaces ----------------------------------------------------------- */

/* POST /cps/api/{v}/dataspaces?dataspace-name= */
static void h_dataspace_create(ncmp_http_request *req, void *arg)
{
    static const char sql[] =
        "INSERT INTO dataspace (name) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id";
    const char *name = ncmp_http_query(req, "dataspace-name");
    int v = cps_api_version(req, 2);
    PGresult *res = NULL;

    if (!v || cps_name_valid(req, "dataspace-name", name) != 0 ||
        cps_run_one(req, arg, sql, 1, &name, &res) != 0)
        return;
    if (PQntuples(res) == 0) {
        char details[512];
        snprintf(details, sizeof(details), "Dataspace with name %s already exists.", name);
        ncmp_http_respond_error(req, 409, "Already defined exception", details);
    } else {
        cps_respond_created(req, v, name);
    }
    PQclear(res);
}

/* DELETE /cps/api/{v}/dataspaces?dataspace-name=: refused (409) while it
 * holds schema sets or anchors, as CPS does. The row lock orders it with
 * a concurrent anchor or schema-set creation (their foreign key takes a
 * share lock on it). */
static void h_dataspace_delete(ncmp_http_request *req, void *arg)
{
    static const char sql[] =
        "WITH d AS (SELECT id, EXISTS (SELECT 1 FROM anchor a WHERE a.dataspace_id = d.id) AS "
        "anchors,"
        " EXISTS (SELECT 1 FROM schema_set s WHERE s.dataspace_id = d.id) AS sets"
        " FROM dataspace d WHERE name = $1 FOR UPDATE),"
        " del AS (DELETE FROM dataspace WHERE id IN (SELECT id FROM d WHERE NOT anchors AND NOT "
        "sets)"
        " RETURNING id)"
        " SELECT anchors, sets FROM d";
    const char *name = ncmp_http_query(req, "dataspace-name");
    PGresult *res = NULL;
    char details[512];

    if (!cps_api_version(req, 2) || cps_name_valid(req, "dataspace-name", name) != 0 ||
        cps_run_one(req, arg, sql, 1, &name, &res) != 0)
        return;
    if (PQntuples(res) == 0) {
        cps_respond_error(req, 404, "Dataspace not found", "Dataspace with name %s does not exist.",
                          name);
    } else if (strcmp(PQgetvalue(res, 0, 0), "t") == 0 || strcmp(PQgetvalue(res, 0, 1), "t") == 0) {
        snprintf(details, sizeof(details), "Dataspace with name %s is being referenced by %s.",
                 name, strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? "Anchor(s)" : "Schema Set(s)");
        ncmp_http_respond_error(req, 409, "Dataspace is being used.", details);
    } else {
        ncmp_http_respond(req, 204, NULL, "", 0);
    }
    PQclear(res);
}

/* GET /cps/api/{v}/admin/dataspaces */
static void h_dataspace_list(ncmp_http_request *req, void *arg)
{
    cps_api *api = arg;

    if (cps_api_version(req, 2))
        rest_db_stream_array(req, api->pool,
                             "SELECT json_build_object('name', name)::text FROM dataspace"
                             " ORDER BY name",
                             0, NULL, LIST_BLOCK, rest_json_raw_row);
}

/* GET /cps/api/{v}/admin/dataspaces/{dataspace} */
static void h_dataspace_get(ncmp_http_request *req, void *arg)
{
    static const char sql[] =
        "SELECT json_build_object('name', name)::text FROM dataspace WHERE name = $1";
    const char *name = ncmp_http_param(req, "dataspace");
    PGresult *res = NULL;

    if (!cps_api_version(req, 2) || cps_run_one(req, arg, sql, 1, &name, &res) != 0)
        return;
    if (PQntuples(res) == 0)
        cps_respond_error(req, 404, "Dataspace not found", "Dataspace with name %s does not exist.",
                          name);
    else
        respond_row(res, req);
    PQclear(res);
}

/* Does dataspace `name` exist? Answers 404 (or the error) and returns 0
 * when not. */
int cps_dataspace_exists(ncmp_http_request *req, cps_api *api, const char *name)
{
    PGresult *res = NULL;
    int found;

    if (cps_run_one(req, api, "SELECT 1 FROM dataspace WHERE name = $1", 1, &name, &res) != 0)
        return 0;
    found = PQntuples(res) > 0;
    PQclear(res);
    if (!found)
        cps_respond_error(req, 404, "Dataspace not found", "Dataspace with name %s does not exist.",
                          name);
    return found;
}

/* --- schema sets ---------------------------------------------------------- */

#define SCHEMA_SET_JSON                                                                            \
    "json_build_object('dataspaceName', d.name, 'name', s.name, 'moduleReferences',"               \
    " COALESCE((SELECT json_agg(json_build_object('name', m.module_name, 'namespace',"             \
    " y.namespace, 'revision', m.revision) ORDER BY m.module_name, m.revision)"                    \
    " FROM schema_set_member m JOIN yang_resource y ON y.checksum = m.checksum"                    \
    " WHERE m.schema_set_id = s.id), '[]'::json))::text"

/* Store the checked sources as set `name` of dataspace `dataspace`. */
static void schema_set_store(ncmp_http_request *req, cps_api *api, int version,
                             const char *dataspace, const char *name, const cps_sources *src)
{
    ncmp_db *db = NULL;
    PGresult *res = NULL;
    ncmp_err err;
    int created = 0;
    char details[512];

    if (rest_pool_get(api->pool, CPS_POOL_WAIT_MS, &db, &err) != 0) {
        rest_db_answer_error(req, &err);
        return;
    }
    if (ncmp_db_begin(db, &err) != 0 ||
        ncmp_db_query(db, "SELECT id FROM dataspace WHERE name = $1 FOR KEY SHARE", 1, &dataspace,
                      &res, &err) != 0)
        goto failed;
    if (PQntuples(res) == 0) {
        ncmp_db_rollback(db);
        cps_respond_error(req, 404, "Dataspace not found", "Dataspace with name %s does not exist.",
                          dataspace);
        goto cleanup;
    }
    if (cps_schema_store(db, PQgetvalue(res, 0, 0), name, src, &created, &err) != 0 ||
        ncmp_db_commit(db, &err) != 0)
        goto failed;
    if (created) {
        cps_respond_created(req, version, name);
    } else {
        snprintf(details, sizeof(details),
                 "Schema Set with name %s already exists in dataspace %s.", name, dataspace);
        ncmp_http_respond_error(req, 409, "Already defined exception", details);
    }
    goto cleanup;
failed:
    ncmp_db_rollback(db);
    rest_db_answer_error(req, &err);
cleanup:
    PQclear(res);
    rest_pool_put(api->pool, db);
}

/* POST /cps/api/{v}/dataspaces/{dataspace}/schema-sets?schema-set-name=,
 * multipart `file`: one .yang, or a .zip of them. */
static void h_schema_set_create(ncmp_http_request *req, void *arg)
{
    const char *dataspace = ncmp_http_param(req, "dataspace");
    const char *name = ncmp_http_query(req, "schema-set-name");
    int v = cps_api_version(req, 2);
    ncmp_multipart_part *parts = NULL;
    size_t nparts = 0, len;
    const char *body = ncmp_http_body(req, &len);
    const ncmp_multipart_part *file;
    cps_sources src = {0};
    struct ly_ctx *ctx = NULL;
    ncmp_err err;

    if (!v || cps_name_valid(req, "schema-set-name", name) != 0)
        return;
    if (ncmp_multipart_parse(ncmp_http_header(req, "Content-Type"), body, len, &parts, &nparts,
                             &err) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid multipart body", err.msg);
        return;
    }
    file = ncmp_multipart_find(parts, nparts, "file");
    if (!file) {
        ncmp_http_respond_error(req, 400, "Missing request part",
                                "Required part 'file' is not present.");
        goto cleanup;
    }
    /* checked as data writes will use it: every module implemented */
    if (cps_sources_from_upload(file->filename, file->data, file->len, &src, &err) != 0 ||
        ncmp_yang_ctx_from_set(src.src, src.n, NULL, NULL, 1, &ctx, &err) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid YANG", err.msg);
        goto cleanup;
    }
    ly_ctx_destroy(ctx);
    schema_set_store(req, arg, v, dataspace, name, &src);
cleanup:
    cps_sources_free(&src);
    ncmp_multipart_free(parts, nparts);
}

/* GET /cps/api/{v}/dataspaces/{dataspace}/schema-sets */
static void h_schema_set_list(ncmp_http_request *req, void *arg)
{
    cps_api *api = arg;
    const char *dataspace = ncmp_http_param(req, "dataspace");

    if (cps_api_version(req, 2) && cps_dataspace_exists(req, api, dataspace))
        rest_db_stream_array(req, api->pool,
                             "SELECT " SCHEMA_SET_JSON " FROM schema_set s"
                             " JOIN dataspace d ON d.id = s.dataspace_id WHERE d.name = $1"
                             " ORDER BY s.name",
                             1, &dataspace, 100, rest_json_raw_row);
}

/* GET /cps/api/{v}/dataspaces/{dataspace}/schema-sets/{schema-set} */
static void h_schema_set_get(ncmp_http_request *req, void *arg)
{
    const char *params[2] = {ncmp_http_param(req, "dataspace"), ncmp_http_param(req, "schema-set")};
    PGresult *res = NULL;

    if (!cps_api_version(req, 2) ||
        cps_run_one(req, arg,
                    "SELECT " SCHEMA_SET_JSON " FROM schema_set s JOIN dataspace d"
                    " ON d.id = s.dataspace_id WHERE d.name = $1 AND s.name = $2",
                    2, params, &res) != 0)
        return;
    if (PQntuples(res) == 0)
        cps_respond_error(req, 404, "Schema Set not found",
                          "Schema Set with name %s was not found for dataspace %s.", params[1],
                          params[0]);
    else
        respond_row(res, req);
    PQclear(res);
}

/* DELETE /cps/api/{v}/dataspaces/{dataspace}/schema-sets/{schema-set}
 * [?cascade=true]: refused (409) while anchors use it, as CPS's REST API
 * does; with cascade (an ncmpd extension: CPS's Java API has it) the
 * anchors and their data go first, in the same statement. */
static void h_schema_set_delete(ncmp_http_request *req, void *arg)
{
    static const char sql[] =
        "WITH s AS (SELECT s.id FROM schema_set s JOIN dataspace d ON d.id = s.dataspace_id"
        " WHERE d.name = $1 AND s.name = $2 FOR UPDATE OF s),"
        " used AS (SELECT EXISTS (SELECT 1 FROM anchor a WHERE a.schema_set_id IN"
        " (SELECT id FROM s)) AS u),"
        " gone_anchors AS (DELETE FROM anchor a WHERE $3::boolean AND a.schema_set_id IN"
        " (SELECT id FROM s)),"
        " del AS (DELETE FROM schema_set WHERE id IN (SELECT id FROM s)"
        " AND ($3::boolean OR NOT (SELECT u FROM used)))"
        " SELECT s.id, (SELECT u FROM used) FROM s";
    cps_api *api = arg;
    const char *params[3] = {ncmp_http_param(req, "dataspace"), ncmp_http_param(req, "schema-set"),
                             NULL};
    PGresult *res = NULL;
    int cascade;
    char details[512];

    if (!cps_api_version(req, 2))
        return;
    if (ncmp_http_query_bool(req, "cascade", 0, &cascade) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid query parameter",
                                "cascade must be true or false");
        return;
    }
    params[2] = cascade ? "true" : "false";
    if (cps_run_one(req, api, sql, 3, params, &res) != 0)
        return;
    if (PQntuples(res) == 0) {
        cps_respond_error(req, 404, "Schema Set not found",
                          "Schema Set with name %s was not found for dataspace %s.", params[1],
                          params[0]);
    } else if (!cascade && strcmp(PQgetvalue(res, 0, 1), "t") == 0) {
        snprintf(details, sizeof(details),
                 "Schema Set with name %s in dataspace %s is having Anchor records associated.",
                 params[1], params[0]);
        ncmp_http_respond_error(req, 409, "Schema Set is being used.", details);
    } else {
        cps_schema_forget(api->schemas, PQgetvalue(res, 0, 0));
        ncmp_http_respond(req, 204, NULL, "", 0);
    }
    PQclear(res);
}

/* --- anchors -------------------------------------------------------------- */

#define ANCHOR_JSON                                                                                \
    "json_build_object('name', a.name, 'dataspaceName', d.name, 'schemaSetName', s.name)::text"    \
    " FROM anchor a JOIN dataspace d ON d.id = a.dataspace_id"                                     \
    " JOIN schema_set s ON s.id = a.schema_set_id"

/* POST /cps/api/{v}/dataspaces/{dataspace}/anchors?schema-set-name=&anchor-name= */
static void h_anchor_create(ncmp_http_request *req, void *arg)
{
    static const char sql[] =
        "WITH x AS (SELECT d.id AS did, s.id AS sid FROM dataspace d LEFT JOIN schema_set s"
        " ON s.dataspace_id = d.id AND s.name = $2 WHERE d.name = $1),"
        " ins AS (INSERT INTO anchor (dataspace_id, schema_set_id, name)"
        " SELECT did, sid, $3 FROM x WHERE sid IS NOT NULL ON CONFLICT DO NOTHING RETURNING id)"
        " SELECT x.sid IS NOT NULL, (SELECT count(*) FROM ins) FROM x";
    const char *params[3] = {ncmp_http_param(req, "dataspace"),
                             ncmp_http_query(req, "schema-set-name"),
                             ncmp_http_query(req, "anchor-name")};
    int v = cps_api_version(req, 2);
    PGresult *res = NULL;
    char details[512];

    if (!v || cps_name_valid(req, "schema-set-name", params[1]) != 0 ||
        cps_name_valid(req, "anchor-name", params[2]) != 0 ||
        cps_run_one(req, arg, sql, 3, params, &res) != 0)
        return;
    if (PQntuples(res) == 0) {
        cps_respond_error(req, 404, "Dataspace not found", "Dataspace with name %s does not exist.",
                          params[0]);
    } else if (strcmp(PQgetvalue(res, 0, 0), "t") != 0) {
        cps_respond_error(req, 404, "Schema Set not found",
                          "Schema Set with name %s was not found for dataspace %s.", params[1],
                          params[0]);
    } else if (strcmp(PQgetvalue(res, 0, 1), "0") == 0) {
        snprintf(details, sizeof(details), "Anchor with name %s already exists in dataspace %s.",
                 params[2], params[0]);
        ncmp_http_respond_error(req, 409, "Already defined exception", details);
    } else {
        cps_respond_created(req, v, params[2]);
    }
    PQclear(res);
}

/* GET /cps/api/{v}/dataspaces/{dataspace}/anchors[?schema-set-names=a,b] */
static void h_anchor_list(ncmp_http_request *req, void *arg)
{
    cps_api *api = arg;
    const char *params[2] = {ncmp_http_param(req, "dataspace"),
                             ncmp_http_query(req, "schema-set-names")};

    if (cps_api_version(req, 2) && cps_dataspace_exists(req, api, params[0]))
        rest_db_stream_array(req, api->pool,
                             "SELECT " ANCHOR_JSON " WHERE d.name = $1 AND ($2::text IS NULL"
                             " OR s.name = ANY (string_to_array($2, ','))) ORDER BY a.name",
                             2, params, LIST_BLOCK, rest_json_raw_row);
}

void cps_anchor_not_found(ncmp_http_request *req, const char *dataspace, const char *anchor)
{
    cps_respond_error(req, 404, "Anchor not found",
                      "Anchor with name %s does not exist in dataspace %s.", anchor, dataspace);
}

/* GET /cps/api/{v}/dataspaces/{dataspace}/anchors/{anchor} */
static void h_anchor_get(ncmp_http_request *req, void *arg)
{
    const char *params[2] = {ncmp_http_param(req, "dataspace"), ncmp_http_param(req, "anchor")};
    PGresult *res = NULL;

    if (!cps_api_version(req, 2) ||
        cps_run_one(req, arg, "SELECT " ANCHOR_JSON " WHERE d.name = $1 AND a.name = $2", 2, params,
                    &res) != 0)
        return;
    if (PQntuples(res) == 0)
        cps_anchor_not_found(req, params[0], params[1]);
    else
        respond_row(res, req);
    PQclear(res);
}

/* DELETE /cps/api/{v}/dataspaces/{dataspace}/anchors/{anchor}: its data
 * goes with it (0008's trigger deletes its fragments). */
static void h_anchor_delete(ncmp_http_request *req, void *arg)
{
    static const char sql[] = "DELETE FROM anchor a USING dataspace d WHERE d.id = a.dataspace_id"
                              " AND d.name = $1 AND a.name = $2 RETURNING a.id";
    const char *params[2] = {ncmp_http_param(req, "dataspace"), ncmp_http_param(req, "anchor")};
    PGresult *res = NULL;

    if (!cps_api_version(req, 2) || cps_run_one(req, arg, sql, 2, params, &res) != 0)
        return;
    if (PQntuples(res) == 0)
        cps_anchor_not_found(req, params[0], params[1]);
    else
        ncmp_http_respond(req, 204, NULL, "", 0);
    PQclear(res);
}

/* --- the API -------------------------------------------------------------- */

int cps_api_new(cps_api **out, const ncmp_config *cfg, rest_pool *pool, ncmp_err *err)
{
    cps_api *api = ncmp_xcalloc(1, sizeof(*api));

    api->cfg = cfg;
    api->pool = pool;
    api->schemas = cps_schema_cache_new();
    api->anchors = cps_anchor_cache_new();
    api->analyzer = cps_analyzer_new(cfg, "fragment", "fragment_store");
    *out = api;
    return 0;
}

void cps_api_routes_add(cps_api *api, ncmp_http_server *s)
{
#define P "/cps/api/{v}"
    ncmp_http_route(s, "POST", P "/dataspaces", h_dataspace_create, api);
    ncmp_http_route(s, "DELETE", P "/dataspaces", h_dataspace_delete, api);
    ncmp_http_route(s, "GET", P "/admin/dataspaces", h_dataspace_list, api);
    ncmp_http_route(s, "GET", P "/admin/dataspaces/{dataspace}", h_dataspace_get, api);
    ncmp_http_route(s, "POST", P "/dataspaces/{dataspace}/schema-sets", h_schema_set_create, api);
    ncmp_http_route(s, "GET", P "/dataspaces/{dataspace}/schema-sets", h_schema_set_list, api);
    ncmp_http_route(s, "GET", P "/dataspaces/{dataspace}/schema-sets/{schema-set}",
                    h_schema_set_get, api);
    ncmp_http_route(s, "DELETE", P "/dataspaces/{dataspace}/schema-sets/{schema-set}",
                    h_schema_set_delete, api);
    ncmp_http_route(s, "POST", P "/dataspaces/{dataspace}/anchors", h_anchor_create, api);
    ncmp_http_route(s, "GET", P "/dataspaces/{dataspace}/anchors", h_anchor_list, api);
    ncmp_http_route(s, "GET", P "/dataspaces/{dataspace}/anchors/{anchor}", h_anchor_get, api);
    ncmp_http_route(s, "DELETE", P "/dataspaces/{dataspace}/anchors/{anchor}", h_anchor_delete,
                    api);
#undef P
    cps_data_routes_add(api, s);
    cps_read_routes_add(api, s);
    cps_events_routes_add(api, s);
    cps_delta_routes_add(api, s);
}

void cps_api_destroy(cps_api *api)
{
    if (!api)
        return;
    cps_analyzer_free(api->analyzer);
    cps_anchor_cache_destroy(api->anchors);
    cps_schema_cache_destroy(api->schemas);
    free(api);
}

/* --- the role ------------------------------------------------------------- */

struct cps {
    rest_pool *pool;          /* NULL when the rest role serves the routes */
    ncmp_http_server *server; /* likewise */
    ncmp_jwt *jwt;            /* the server's bearer-token checks, or NULL */
    cps_api *api;
};

int cps_start(cps **out, const ncmp_services *svc, ncmp_err *err)
{
    cps *c = ncmp_xcalloc(1, sizeof(*c));
    ncmp_http_options o;

    if (ncmp_role_name_selected("rest", svc->cfg->roles)) {
        log_info("cps", "CPS API served on the rest role's HTTP server");
        *out = c;
        return 0;
    }
    if (rest_http_options(&o, svc->cfg, &c->jwt, err) != 0 ||
        rest_pool_new(&c->pool, svc->cfg, err) != 0 ||
        cps_api_new(&c->api, svc->cfg, c->pool, err) != 0 ||
        ncmp_http_server_new(&c->server, &o, err) != 0)
        goto fail;
    cps_api_routes_add(c->api, c->server);
    if (ncmp_http_server_start(c->server, err) != 0)
        goto fail;
    log_info("cps", "CPS API on its own HTTP server, port %d", ncmp_http_server_port(c->server));
    *out = c;
    return 0;
fail:
    cps_destroy(c);
    return -1;
}

void cps_stop(cps *c)
{
    if (!c)
        return;
    ncmp_http_server_destroy(c->server);
    c->server = NULL;
}

void cps_destroy(cps *c)
{
    if (!c)
        return;
    cps_stop(c);
    cps_api_destroy(c->api);
    rest_pool_destroy(c->pool);
    ncmp_jwt_free(c->jwt);
    free(c);
}
