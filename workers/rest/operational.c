#include "operational.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cps_path.h"
#include "cps_query.h"
#include "ncmp_buf.h"
#include "ncmp_lcm.h"
#include "ncmp_log.h"
#include "outbox.h"
#include "rest_json.h"

#define POOL_WAIT_MS 5000
#define MAX_DEPTH    128

/* --- PUT data-sync ----------------------------------------------------------- */

typedef struct sync_row {
    int found, ready, enabled;
    char state[16];
    char *alternate_id, *tag, *producer;
} sync_row;

static void sync_row_free(sync_row *r)
{
    free(r->alternate_id);
    free(r->tag);
    free(r->producer);
}

/* The handle's row, locked for the change. */
static int sync_lock(ncmp_db *db, const char *id, sync_row *out, ncmp_err *err)
{
    static const char sql[] =
        "SELECT state, data_sync_enabled, alternate_id, module_set_tag, data_producer_identifier"
        " FROM cm_handle WHERE id = $1 FOR UPDATE";
    const char *params[1] = {id};
    PGresult *res = NULL;

    if (ncmp_db_query(db, sql, 1, params, &res, err) != 0)
        return -1;
    out->found = PQntuples(res) > 0;
    if (out->found) {
        snprintf(out->state, sizeof(out->state), "%s", PQgetvalue(res, 0, 0));
        out->ready = strcmp(out->state, "READY") == 0;
        out->enabled = PQgetvalue(res, 0, 1)[0] == 't';
        out->alternate_id = ncmp_xstrdup(PQgetvalue(res, 0, 2));
        out->tag = ncmp_xstrdup(PQgetvalue(res, 0, 3));
        out->producer = ncmp_xstrdup(PQgetvalue(res, 0, 4));
    }
    PQclear(res);
    return 0;
}

/* The change and its lifecycle event, in the caller's transaction. */
static int sync_set(ncmp_db *db, const ncmp_config *cfg, const char *id, const sync_row *row,
                    int enable, ncmp_err *err)
{
    static const char sql[] =
        "UPDATE cm_handle SET data_sync_enabled = $2::boolean, operational_sync_state ="
        " CASE WHEN $2::boolean THEN 'UNSYNCHRONIZED' ELSE 'NONE_REQUESTED' END,"
        " operational_last_sync_time = NULL, last_update_time = now() WHERE id = $1";
    const char *params[2] = {id, enable ? "true" : "false"};
    ncmp_outbox ob;
    ncmp_lcm_event ev;
    int rc;

    if (ncmp_db_query(db, sql, 2, params, NULL, err) != 0)
        return -1;
    memset(&ev, 0, sizeof(ev));
    ev.cm_handle_id = id;
    ev.alternate_id = row->alternate_id;
    ev.module_set_tag = row->tag;
    ev.data_producer_identifier = row->producer;
    ev.old_values.data_sync_enabled = row->enabled;
    ev.new_values.data_sync_enabled = enable;
    ev.force_update = 1; /* the states are not part of this change */
    ncmp_outbox_init(&ob, db, cfg);
    ncmp_outbox_add(&ob, &ev);
    rc = ncmp_outbox_flush(&ob, err);
    ncmp_outbox_free(&ob);
    return rc;
}

void operational_data_sync(ncmp_http_request *req, rest_pool *pool, const ncmp_config *cfg)
{
    const char *id = ncmp_http_param(req, "ref");
    const char *value = ncmp_http_query(req, "dataSyncEnabled");
    sync_row row = {0};
    ncmp_db *db = NULL;
    ncmp_buf msg = NCMP_BUF_INIT;
    ncmp_err err;
    int enable;

    if (!value) {
        ncmp_http_respond_error(req, 400, "Required parameter 'dataSyncEnabled' is not present.",
                                NULL);
        return;
    }
    if (ncmp_http_query_bool(req, "dataSyncEnabled", 0, &enable) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid query parameter",
                                "dataSyncEnabled must be true or false");
        return;
    }
    if (rest_pool_get(pool, POOL_WAIT_MS, &db, &err) != 0) {
        rest_db_answer_error(req, &err);
        return;
    }
    if (ncmp_db_begin(db, &err) != 0 || sync_lock(db, id, &row, &err) != 0)
        goto fail;
    if (!row.found) {
        ncmp_db_rollback(db);
        ncmp_buf_appendf(&msg, "No cm handles found with reference %s", id);
        ncmp_http_respond_error(req, 404, "Cm handle not found", msg.data);
        goto cleanup;
    }
    if (row.enabled == enable) { /* NCMP: already so, nothing to do */
        ncmp_db_rollback(db);
        ncmp_http_respond(req, 200, NULL, "", 0);
        goto cleanup;
    }
    if (!row.ready) {
        ncmp_db_rollback(db);
        ncmp_buf_appendf(&msg, "Cm-Handle not in READY state. Cm handle state is: %s", row.state);
        ncmp_http_respond_error(req, 500, "State mismatch exception.", msg.data);
        goto cleanup;
    }
    if (sync_set(db, cfg, id, &row, enable, &err) != 0 || ncmp_db_commit(db, &err) != 0)
        goto fail;
    log_info("rest", "%s: data sync %s", id, enable ? "enabled" : "disabled");
    ncmp_http_respond(req, 200, NULL, "", 0);
    goto cleanup;
fail:
    ncmp_db_rollback(db);
    rest_db_answer_error(req, &err);
cleanup:
    rest_pool_put(pool, db);
    sync_row_free(&row);
    ncmp_buf_free(&msg);
}

/* --- the reads ---------------------------------------------------------------- */

/* include-descendants as a depth (0 or all); answers 400 and returns -1
 * when malformed. */
static int descendants(ncmp_http_request *req, int *depth)
{
    int all = 0;

    if (ncmp_http_query_bool(req, "include-descendants", 0, &all) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid query parameter",
                                "include-descendants must be true or false");
        return -1;
    }
    *depth = all ? -1 : 0;
    return 0;
}

void operational_read(ncmp_http_request *req, cps_api *api, const char *handle_id)
{
    int depth;

    if (descendants(req, &depth) != 0)
        return;
    cps_api_respond_node(api, req, CPS_OPERATIONAL_DATASPACE, handle_id,
                         ncmp_http_query(req, "resourceIdentifier"), depth, 3);
}

/* The anchor of the handle's cache: 1 with its id, 0 when it has none. */
static int cache_anchor(ncmp_db *db, const char *handle_id, char id[24], ncmp_err *err)
{
    static const char sql[] = "SELECT a.id FROM anchor a JOIN dataspace d ON d.id = a.dataspace_id"
                              " WHERE d.name = $1 AND a.name = $2";
    const char *params[2] = {CPS_OPERATIONAL_DATASPACE, handle_id};
    PGresult *res = NULL;
    int found;

    if (ncmp_db_query(db, sql, 2, params, &res, err) != 0)
        return -1;
    found = PQntuples(res) > 0;
    if (found)
        snprintf(id, 24, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    return found;
}

/* Rows (path, attributes, match) in key order, matches grouped, to NCMP's
 * DataNode JSON: each node an object whose childDataNodes hold its
 * children. */
typedef struct node_writer {
    const char *anchor;
    ncmp_buf *out;
    size_t open[MAX_DEPTH]; /* stored path length of each open node */
    int children[MAX_DEPTH];
    int nopen, tops;
    ncmp_buf path, match;
} node_writer;

static void nw_close(node_writer *w)
{
    ncmp_buf_append_str(w->out, "]}");
    w->nopen--;
}

static void nw_row(node_writer *w, const char *path, size_t len, const char *attrs,
                   const char *match)
{
    ncmp_buf xpath = NCMP_BUF_INIT;

    if (!w->match.data || strcmp(w->match.data, match) != 0) {
        while (w->nopen > 0)
            nw_close(w);
        ncmp_buf_reset(&w->match);
        ncmp_buf_append_str(&w->match, match);
    }
    while (w->nopen > 0) {
        size_t plen = w->open[w->nopen - 1];
        if (len > plen && memcmp(path, w->path.data, plen) == 0 && path[plen] == CPS_PATH_SEP)
            break;
        nw_close(w);
    }
    if (w->nopen == MAX_DEPTH) /* deeper than any model: left out */
        return;
    if (w->nopen == 0) {
        if (w->tops++)
            ncmp_buf_append_char(w->out, ',');
    } else if (w->children[w->nopen - 1]++) {
        ncmp_buf_append_char(w->out, ',');
    }
    cps_path_decode(path, len, &xpath);
    ncmp_buf_append_char(&xpath, '\0');
    ncmp_buf_append_str(w->out, "{\"dataspace\":\"" CPS_OPERATIONAL_DATASPACE "\",\"anchorName\":");
    ncmp_buf_append_json_string(w->out, w->anchor);
    ncmp_buf_append_str(w->out, ",\"xpath\":");
    ncmp_buf_append_json_string(w->out, xpath.data);
    ncmp_buf_append_str(w->out, ",\"leaves\":");
    rest_json_append_compact(w->out, attrs);
    ncmp_buf_append_str(w->out, ",\"childDataNodes\":[");
    ncmp_buf_reset(&w->path);
    ncmp_buf_append(&w->path, path, len);
    w->open[w->nopen] = len;
    w->children[w->nopen] = 0;
    w->nopen++;
    ncmp_buf_free(&xpath);
}

/* The matches of the query with their subtrees ($2 levels below each). */
#define SQL_MATCHES                                                                                \
    "WITH m AS MATERIALIZED (%s) SELECT f.path, f.attributes::text, m.path FROM m"                 \
    " JOIN LATERAL (SELECT f.path, f.attributes FROM fragment f"                                   \
    " WHERE f.anchor_id = m.anchor_id AND f.path >= m.path AND f.path < m.path || E'\\x02'"        \
    " AND f.depth <= m.depth + $2::int ORDER BY f.path) f ON true"

void operational_query(ncmp_http_request *req, rest_pool *pool, const char *handle_id)
{
    const char *cpspath = ncmp_http_query(req, "cps-path");
    ncmp_buf msql = NCMP_BUF_INIT, sql = NCMP_BUF_INIT, out = NCMP_BUF_INIT;
    ncmp_cpspath_params qp = {0};
    const char **params = NULL;
    cps_query_kind kind;
    char anchor_id[24], anchors[32], depth_text[16];
    node_writer w = {0};
    ncmp_db *db = NULL;
    PGresult *res = NULL;
    ncmp_err err;
    int depth, found;

    if (!cpspath) {
        ncmp_http_respond_error(req, 400, "Required parameter 'cps-path' is not present.", NULL);
        return;
    }
    if (descendants(req, &depth) != 0)
        return;
    if (cps_query_to_sql(cpspath, 1, 3, &msql, &qp, &kind, NULL, &err) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid CPS path", err.msg);
        goto cleanup;
    }
    if (kind != CPS_QUERY_NODES) {
        ncmp_http_respond_error(req, 400, "Invalid CPS path",
                                "a query of the operational datastore selects data nodes");
        goto cleanup;
    }
    if (rest_pool_get(pool, POOL_WAIT_MS, &db, &err) != 0) {
        rest_db_answer_error(req, &err);
        goto cleanup;
    }
    found = cache_anchor(db, handle_id, anchor_id, &err);
    if (found < 0) {
        rest_db_answer_error(req, &err);
        goto cleanup;
    }
    if (!found) {
        ncmp_buf_appendf(&out, "Anchor with name %s does not exist in dataspace %s.", handle_id,
                         CPS_OPERATIONAL_DATASPACE);
        ncmp_http_respond_error(req, 404, "Anchor not found", out.data);
        goto cleanup;
    }
    snprintf(anchors, sizeof(anchors), "{%s}", anchor_id);
    snprintf(depth_text, sizeof(depth_text), "%d", depth < 0 ? 32767 : depth);
    params = ncmp_xcalloc(2 + qp.n, sizeof(*params));
    params[0] = anchors;
    params[1] = depth_text;
    for (size_t i = 0; i < qp.n; i++)
        params[2 + i] = qp.values[i];
    ncmp_buf_appendf(&sql, SQL_MATCHES, msql.data);
    if (ncmp_db_query(db, sql.data, (int)(2 + qp.n), params, &res, &err) != 0) {
        rest_db_answer_error(req, &err);
        goto cleanup;
    }
    w.anchor = handle_id;
    w.out = &out;
    ncmp_buf_append_char(&out, '[');
    for (int r = 0; r < PQntuples(res); r++)
        nw_row(&w, PQgetvalue(res, r, 0), (size_t)PQgetlength(res, r, 0), PQgetvalue(res, r, 1),
               PQgetvalue(res, r, 2));
    while (w.nopen > 0)
        nw_close(&w);
    ncmp_buf_append_char(&out, ']');
    ncmp_http_respond_json(req, 200, &out);
cleanup:
    PQclear(res);
    if (db)
        rest_pool_put(pool, db);
    free(params);
    ncmp_cpspath_params_free(&qp);
    ncmp_buf_free(&msql);
    ncmp_buf_free(&sql);
    ncmp_buf_free(&out);
    ncmp_buf_free(&w.path);
    ncmp_buf_free(&w.match);
}
