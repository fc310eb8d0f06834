#include "rest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cps.h"
#include "data.h"
#include "ncmp_buf.h"
#include "ncmp_http.h"
#include "handle_cache.h"
#include "health.h"
#include "operational.h"
#include "refresh.h"
#include "ncmp_log.h"
#include "rest_db.h"
#include "rest_json.h"
#include "rest_registration.h"
#include "search.h"
#include "search_index.h"

/* Rows per FETCH: handle objects are ~300 bytes, ids ~20. */
#define HANDLE_BLOCK_ROWS 1000
#define ID_BLOCK_ROWS     10000

struct rest {
    const ncmp_config *cfg;
    rest_pool *pool;
    rest_registration *registration;
    ncmp_http_server *server;
    health *health;
    data *data;
    cps_api *cps;            /* CPS's API: its routes when the cps role is selected; its
                              * reads serve the operational datastore in any case */
    ncmp_jwt *jwt;           /* bearer-token checks of the server (jwt mode), or NULL */
    ncmp_producer *producer; /* the process's: module refresh hands over with it */
    search_index *index;     /* NULL with rest.search-index false */
    int stopped;
};

#define HANDLE_COLUMNS REST_HANDLE_COLUMNS
#define ID_COLUMN      "h.id"
#define ALT_ID_COLUMN  "h.alternate_id"

/* Longest match (NCMP's alternate-id rule): $1 is the JSON array of candidates,
 * the reference and its prefixes cut at '/'; the longest one that is an
 * alternate id or an id wins, an alternate id before an id. */
#define BY_LONGEST_MATCH(EXPR)                                                                     \
    "WITH c(ref) AS (SELECT jsonb_array_elements_text($1::jsonb)),"                                \
    " m AS (SELECT h.id, length(h.alternate_id) AS l, 1 AS alt"                                    \
    " FROM cm_handle h JOIN c ON h.alternate_id = c.ref"                                           \
    " UNION ALL SELECT h.id, length(h.id), 0 FROM cm_handle h JOIN c ON h.id = c.ref)"             \
    " SELECT " EXPR " FROM cm_handle h"                                                            \
    " WHERE h.id = (SELECT id FROM m ORDER BY l DESC, alt DESC LIMIT 1)"

/* Exact match on the id or the alternate id, the id first. */
#define BY_EXACT_MATCH(EXPR)                                                                       \
    "SELECT " EXPR " FROM cm_handle h WHERE h.id = $1 OR h.alternate_id = $1"                      \
    " ORDER BY h.id = $1 DESC LIMIT 1"

#define EXACT_MODULE_SET                                                                           \
    "(SELECT h.module_set_id FROM cm_handle h WHERE h.id = $1 OR h.alternate_id = $1"              \
    " ORDER BY h.id = $1 DESC LIMIT 1)"

static const char SQL_MODULES[] =
    "SELECT json_build_object('moduleName', m.module_name, 'revision', m.revision)::text"
    " FROM module_set_member m WHERE m.module_set_id = " EXACT_MODULE_SET
    " ORDER BY m.module_name, m.revision";

static const char SQL_MODULE_DEFINITIONS[] =
    "SELECT json_build_object('moduleName', m.module_name, 'revision', m.revision,"
    " 'content', y.source)::text"
    " FROM module_set_member m JOIN yang_resource y ON y.checksum = m.checksum"
    " WHERE m.module_set_id = " EXACT_MODULE_SET " AND ($2::text IS NULL OR m.module_name = $2)"
    " AND ($2::text IS NULL OR $3::text IS NULL OR m.revision = $3)"
    " ORDER BY m.module_name, m.revision";

#define BY_DMI_PLUGIN(EXPR)                                                                        \
    "SELECT " EXPR " FROM cm_handle h WHERE h.dmi_service_name = $1"                               \
    " OR h.dmi_data_service_name = $1 OR h.dmi_model_service_name = $1"

/* --- helpers ------------------------------------------------------------- */

static void not_found(ncmp_http_request *req, const void *ref)
{
    ncmp_buf details = NCMP_BUF_INIT;

    ncmp_buf_appendf(&details, "No cm handles found with reference %s", (const char *)ref);
    ncmp_http_respond_error(req, 404, "Cm handle not found", details.data);
    ncmp_buf_free(&details);
}

/* A boolean query parameter; answers 400 and returns -1 when malformed. */
static int query_flag(ncmp_http_request *req, const char *name, int *out)
{
    char details[160];

    if (ncmp_http_query_bool(req, name, 0, out) == 0)
        return 0;
    snprintf(details, sizeof(details), "%s must be true or false", name);
    ncmp_http_respond_error(req, 400, "Invalid query parameter", details);
    return -1;
}

/* A required query parameter; answers 400 and returns NULL when absent. */
static const char *query_required(ncmp_http_request *req, const char *name)
{
    const char *v = ncmp_http_query(req, name);
    char message[160];

    if (v)
        return v;
    snprintf(message, sizeof(message), "Required parameter '%s' is not present.", name);
    ncmp_http_respond_error(req, 400, message, NULL);
    return NULL;
}

/* The longest-match candidates of `ref` (handle_candidates) as a JSON
 * array, longest first. */
static void longest_candidates(const char *ref, ncmp_buf *out)
{
    size_t n;
    char **cands = handle_candidates(ref, &n);

    ncmp_buf_append_char(out, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            ncmp_buf_append_char(out, ',');
        ncmp_buf_append_json_string(out, cands[i]);
    }
    ncmp_buf_append_char(out, ']');
    handle_candidates_free(cands, n);
}

/* --- searches ------------------------------------------------------------ */

/* How each kind of answer is read from the database: columns, rows per
 * FETCH, formatter. */
static const struct {
    const char *columns;
    int block_rows;
    rest_row_fn fmt;
} SEARCH_SQL[] = {
    [SEARCH_OUT_ID] = {ID_COLUMN, ID_BLOCK_ROWS, rest_json_string_row},
    [SEARCH_OUT_ALTERNATE_ID] = {ALT_ID_COLUMN, ID_BLOCK_ROWS, rest_json_string_row},
    [SEARCH_OUT_HANDLE] = {HANDLE_COLUMNS, HANDLE_BLOCK_ROWS, rest_json_handle_row},
    [SEARCH_OUT_HANDLE_DMI] = {HANDLE_COLUMNS, HANDLE_BLOCK_ROWS, rest_json_handle_dmi_row},
    [SEARCH_OUT_LIGHT] = {REST_LIGHT_COLUMNS, HANDLE_BLOCK_ROWS, rest_json_light_row},
    [SEARCH_OUT_LIGHT_DMI] = {REST_LIGHT_DMI_COLUMNS, HANDLE_BLOCK_ROWS, rest_json_light_dmi_row},
};

/* From the search index when it can answer (search_index.h), else from
 * PostgreSQL; both write the same JSON. */
static void search_answer(ncmp_http_request *req, rest *r, search_side side, int legacy,
                          search_output out)
{
    size_t len;
    const char *body = ncmp_http_body(req, &len);
    search_query q;
    search_error e;
    ncmp_buf sql = NCMP_BUF_INIT;

    if (search_parse(body, len, side, legacy, &q, &e) != 0) {
        ncmp_http_respond_error(req, 400, e.message, e.details);
        return;
    }
    if (search_index_answer(r->index, req, &q, out) != 0) {
        ncmp_buf_appendf(&sql, "SELECT %s FROM cm_handle h WHERE %s", SEARCH_SQL[out].columns,
                         q.where.data);
        rest_db_stream_array(req, r->pool, sql.data, q.nparams, (const char *const *)q.params,
                             SEARCH_SQL[out].block_rows, SEARCH_SQL[out].fmt);
    }
    ncmp_buf_free(&sql);
    search_query_free(&q);
}

/* POST /ncmp/v1/ch/searches */
static void h_searches(ncmp_http_request *req, void *arg)
{
    search_answer(req, arg, SEARCH_NORTHBOUND, 1, SEARCH_OUT_HANDLE);
}

/* POST /ncmp/v1/ch/id-searches?outputAlternateId= */
static void h_id_searches(ncmp_http_request *req, void *arg)
{
    int alt;

    if (query_flag(req, "outputAlternateId", &alt) == 0)
        search_answer(req, arg, SEARCH_NORTHBOUND, 0,
                      alt ? SEARCH_OUT_ALTERNATE_ID : SEARCH_OUT_ID);
}

/* POST /ncmpInventory/v1/ch/searches?outputAlternateId= */
static void h_inventory_searches(ncmp_http_request *req, void *arg)
{
    int alt;

    if (query_flag(req, "outputAlternateId", &alt) == 0)
        search_answer(req, arg, SEARCH_SOUTHBOUND, 0,
                      alt ? SEARCH_OUT_ALTERNATE_ID : SEARCH_OUT_ID);
}

/* POST /ncmpInventory/v1/ch/searchCmHandles?outputDmiProperties= */
static void h_inventory_search_handles(ncmp_http_request *req, void *arg)
{
    int dmi;

    if (query_flag(req, "outputDmiProperties", &dmi) == 0)
        search_answer(req, arg, SEARCH_SOUTHBOUND, 1,
                      dmi ? SEARCH_OUT_HANDLE_DMI : SEARCH_OUT_HANDLE);
}

/* POST /ncmp/v2/ch/searches: lightweight handles (no deprecated form) */
static void h_v2_searches(ncmp_http_request *req, void *arg)
{
    search_answer(req, arg, SEARCH_NORTHBOUND, 0, SEARCH_OUT_LIGHT);
}

/* POST /ncmpInventory/v2/ch/searches?outputDmiProperties= */
static void h_inventory_v2_searches(ncmp_http_request *req, void *arg)
{
    int dmi;

    if (query_flag(req, "outputDmiProperties", &dmi) == 0)
        search_answer(req, arg, SEARCH_SOUTHBOUND, 0,
                      dmi ? SEARCH_OUT_LIGHT_DMI : SEARCH_OUT_LIGHT);
}

/* --- one handle ---------------------------------------------------------- */

/* The handle `ref` finds by longest match, its `sql` selecting the
 * columns `fmt` reads. */
static void answer_longest(ncmp_http_request *req, rest *r, const char *ref, const char *sql,
                           rest_row_fn fmt)
{
    ncmp_buf cands = NCMP_BUF_INIT;
    const char *params[1];

    longest_candidates(ref, &cands);
    params[0] = cands.data;
    rest_db_answer_one(req, r->pool, sql, 1, params, fmt, not_found, ref);
    ncmp_buf_free(&cands);
}

/* GET /ncmp/v1/ch/{ref} */
static void h_handle(ncmp_http_request *req, void *arg)
{
    answer_longest(req, arg, ncmp_http_param(req, "ref"), BY_LONGEST_MATCH(HANDLE_COLUMNS),
                   rest_json_handle_row);
}

/* GET /ncmp/v2/ch/{ref}: lightweight */
static void h_v2_handle(ncmp_http_request *req, void *arg)
{
    answer_longest(req, arg, ncmp_http_param(req, "ref"), BY_LONGEST_MATCH(REST_LIGHT_COLUMNS),
                   rest_json_light_row);
}

/* GET /ncmpInventory/v1/ch?distinguishedName=&outputDmiProperties= */
static void h_inventory_handle(ncmp_http_request *req, void *arg)
{
    const char *dn = query_required(req, "distinguishedName");
    int dmi;

    if (dn && query_flag(req, "outputDmiProperties", &dmi) == 0)
        answer_longest(req, arg, dn, BY_LONGEST_MATCH(HANDLE_COLUMNS),
                       dmi ? rest_json_handle_dmi_row : rest_json_handle_row);
}

static void answer_exact(ncmp_http_request *req, rest *r, rest_row_fn fmt)
{
    const char *ref = ncmp_http_param(req, "ref");
    const char *params[1] = {ref};

    rest_db_answer_one(req, r->pool, BY_EXACT_MATCH(HANDLE_COLUMNS), 1, params, fmt, not_found,
                       ref);
}

/* GET /ncmp/v1/ch/{ref}/properties */
static void h_properties(ncmp_http_request *req, void *arg)
{
    answer_exact(req, arg, rest_json_properties_row);
}

/* GET /ncmp/v1/ch/{ref}/state */
static void h_state(ncmp_http_request *req, void *arg)
{
    answer_exact(req, arg, rest_json_state_row);
}

/* GET /ncmp/v1/ch/{ref}/modules: [] for an unknown handle */
static void h_modules(ncmp_http_request *req, void *arg)
{
    rest *r = arg;
    const char *params[1] = {ncmp_http_param(req, "ref")};

    rest_db_stream_array(req, r->pool, SQL_MODULES, 1, params, HANDLE_BLOCK_ROWS,
                         rest_json_raw_row);
}

/* GET /ncmp/v1/ch/{ref}/modules/definitions?module-name=&revision= */
static void h_module_definitions(ncmp_http_request *req, void *arg)
{
    rest *r = arg;
    const char *name = ncmp_http_query(req, "module-name");
    const char *revision = ncmp_http_query(req, "revision");
    const char *params[3];

    /* the revision counts only with a module name; empty means absent */
    params[0] = ncmp_http_param(req, "ref");
    params[1] = name && *name ? name : NULL;
    params[2] = params[1] && revision && *revision ? revision : NULL;
    rest_db_stream_array(req, r->pool, SQL_MODULE_DEFINITIONS, 3, params, 100, rest_json_raw_row);
}

/* GET /ncmpInventory/v1/ch/cmHandles?dmi-plugin-identifier=&outputAlternateId= */
static void h_inventory_dmi_handles(ncmp_http_request *req, void *arg)
{
    rest *r = arg;
    const char *dmi = query_required(req, "dmi-plugin-identifier");
    const char *params[1] = {dmi};
    int alt;

    if (!dmi || query_flag(req, "outputAlternateId", &alt) != 0)
        return;
    rest_db_stream_array(req, r->pool,
                         alt ? BY_DMI_PLUGIN(ALT_ID_COLUMN) : BY_DMI_PLUGIN(ID_COLUMN), 1, params,
                         ID_BLOCK_ROWS, rest_json_string_row);
}

/* PUT /ncmp/v1/ch/{ref}/data-sync?dataSyncEnabled= */
static void h_data_sync(ncmp_http_request *req, void *arg)
{
    rest *r = arg;
    operational_data_sync(req, r->pool, r->cfg);
}

/* POST /ncmpInventory/v1/ch/module/refresh */
static void h_module_refresh(ncmp_http_request *req, void *arg)
{
    rest *r = arg;
    refresh_modules(req, r->pool, r->producer, r->cfg);
}

/* --- the role ------------------------------------------------------------ */

static void routes_add(rest *r)
{
    ncmp_http_server *s = r->server;

    ncmp_http_route(s, "POST", "/ncmp/v1/ch/searches", h_searches, r);
    ncmp_http_route(s, "POST", "/ncmp/v1/ch/id-searches", h_id_searches, r);
    ncmp_http_route(s, "GET", "/ncmp/v1/ch/{ref}", h_handle, r);
    ncmp_http_route(s, "GET", "/ncmp/v1/ch/{ref}/properties", h_properties, r);
    ncmp_http_route(s, "GET", "/ncmp/v1/ch/{ref}/state", h_state, r);
    ncmp_http_route(s, "GET", "/ncmp/v1/ch/{ref}/modules", h_modules, r);
    ncmp_http_route(s, "GET", "/ncmp/v1/ch/{ref}/modules/definitions", h_module_definitions, r);
    ncmp_http_route(s, "PUT", "/ncmp/v1/ch/{ref}/data-sync", h_data_sync, r);
    ncmp_http_route(s, "POST", "/ncmpInventory/v1/ch", rest_registration_handle, r->registration);
    ncmp_http_route(s, "GET", "/ncmpInventory/v1/ch", h_inventory_handle, r);
    ncmp_http_route(s, "POST", "/ncmpInventory/v1/ch/searches", h_inventory_searches, r);
    ncmp_http_route(s, "POST", "/ncmpInventory/v1/ch/searchCmHandles", h_inventory_search_handles,
                    r);
    ncmp_http_route(s, "GET", "/ncmpInventory/v1/ch/cmHandles", h_inventory_dmi_handles, r);
    ncmp_http_route(s, "POST", "/ncmpInventory/v1/ch/module/refresh", h_module_refresh, r);
    ncmp_http_route(s, "POST", "/ncmp/v2/ch/searches", h_v2_searches, r);
    ncmp_http_route(s, "GET", "/ncmp/v2/ch/{ref}", h_v2_handle, r);
    ncmp_http_route(s, "POST", "/ncmpInventory/v2/ch/searches", h_inventory_v2_searches, r);
}

int rest_http_options(ncmp_http_options *o, const ncmp_config *cfg, ncmp_jwt **jwt, ncmp_err *err)
{
    const char *mode = cfg->http_auth_mode;

    memset(o, 0, sizeof(*o));
    *jwt = NULL;
    o->host = cfg->http_host;
    o->port = cfg->http_port;
    o->threads = cfg->http_threads;
    o->max_body_bytes = (size_t)cfg->http_max_body_bytes;
    o->connection_timeout_s = 60;
    o->max_in_flight = cfg->http_max_in_flight;
    o->retry_after_s = cfg->http_retry_after_s;
    o->worker_threads = cfg->http_worker_threads;
    o->max_queued = cfg->http_max_queued;
    o->max_queue_wait_ms = cfg->http_max_queue_wait_ms;
    o->after = health_http_observe;
    if (strcmp(mode, "auto") == 0)
        mode = *cfg->http_auth_username ? "basic" : "none";
    if (strcmp(mode, "basic") == 0) {
        if (!*cfg->http_auth_username)
            return ncmp_err_set(err, NCMP_ERR_FATAL,
                                "http.auth-mode basic needs http.auth-username");
        o->auth_username = cfg->http_auth_username;
        o->auth_password = cfg->http_auth_password;
    } else if (strcmp(mode, "jwt") == 0) {
        ncmp_jwt_options j = {
            .jwks_file = cfg->http_jwt_jwks_file,
            .jwks_url = cfg->http_jwt_jwks_url,
            .jwks_refresh_s = cfg->http_jwt_jwks_refresh_s,
            .hs256_secret = cfg->http_jwt_hs256_secret,
            .issuer = cfg->http_jwt_issuer,
            .audience = cfg->http_jwt_audience,
            .clock_skew_s = cfg->http_jwt_clock_skew_s,
        };
        if (ncmp_jwt_new(jwt, &j, err) != 0)
            return -1;
        o->jwt = *jwt;
    }
    return 0;
}

int rest_start(rest **out, const ncmp_services *svc, ncmp_err *err)
{
    rest *r = ncmp_xcalloc(1, sizeof(*r));
    const ncmp_config *cfg = svc->cfg;
    ncmp_http_options o;

    r->cfg = cfg;
    r->producer = svc->producer;
    if (rest_http_options(&o, cfg, &r->jwt, err) != 0 || rest_pool_new(&r->pool, cfg, err) != 0 ||
        rest_registration_start(&r->registration, cfg, err) != 0 ||
        ncmp_http_server_new(&r->server, &o, err) != 0 ||
        health_start(&r->health, svc, r->server, r->pool, err) != 0)
        goto fail;
    if (cfg->rest_search_index && search_index_start(&r->index, cfg, err) != 0)
        goto fail;
    routes_add(r);
    /* one server per process: the cps role's routes join this one */
    if (cps_api_new(&r->cps, cfg, r->pool, err) != 0)
        goto fail;
    if (ncmp_role_name_selected("cps", cfg->roles))
        cps_api_routes_add(r->cps, r->server);
    if (data_start(&r->data, svc, r->server, r->pool, r->cps, err) != 0 ||
        ncmp_http_server_start(r->server, err) != 0)
        goto fail;
    *out = r;
    return 0;
fail:
    rest_stop(r);
    rest_destroy(r);
    return -1;
}

ncmp_http_server *rest_http_server(const rest *r)
{
    return r->server;
}

void rest_stop(rest *r)
{
    if (!r || r->stopped)
        return;
    r->stopped = 1;
    /* waiting registrations first (the handler then refuses new ones),
     * then the DMI calls in flight, then the server, which answers
     * whatever else is suspended */
    rest_registration_stop(r->registration);
    data_stop(r->data);
    ncmp_http_server_destroy(r->server);
    r->server = NULL;
    /* after the server: no answer streams from it any more */
    search_index_stop(r->index);
    r->index = NULL;
    health_stop(r->health);
    r->health = NULL;
}

void rest_destroy(rest *r)
{
    if (!r)
        return;
    rest_stop(r);
    data_destroy(r->data);
    cps_api_destroy(r->cps);
    rest_registration_destroy(r->registration);
    rest_pool_destroy(r->pool);
    ncmp_jwt_free(r->jwt);
    free(r);
}
