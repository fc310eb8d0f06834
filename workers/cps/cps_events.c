#include "cps_events.h"

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cps_path.h"
#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_relay.h"

#define OUTBOX_CHANNEL  "cps_event_outbox"
#define ADMIN_DATASPACE "CPS-Admin"
#define ADMIN_ANCHOR    "cps-notification-subscriptions"
#define EVENT_TYPE      "org.onap.cps.events.model.CpsDataUpdatedEvent"

/* Any constant will do, the same in every process (not the lifecycle
 * relay's). */
#define RELAY_LOCK_KEY 7340217003LL

/* `hit` has a row when the anchor whose subscription paths are $1 (the
 * anchor's), $2 (its dataspace's) and $3 (the dataspace's anchors
 * container) is subscribed: named, or its dataspace named without
 * anchors (CPS's rule). */
#define SQL_SUBSCRIBED                                                                             \
    "WITH sub AS (SELECT a.id FROM dataspace d JOIN anchor a ON a.dataspace_id = d.id"             \
    "  WHERE d.name = '" ADMIN_DATASPACE "' AND a.name = '" ADMIN_ANCHOR "'),"                     \
    " hit AS (SELECT 1 FROM sub WHERE"                                                             \
    "  EXISTS (SELECT 1 FROM fragment f WHERE f.anchor_id = sub.id AND f.path = $1)"               \
    "  OR (EXISTS (SELECT 1 FROM fragment f WHERE f.anchor_id = sub.id AND f.path = $2)"           \
    "   AND NOT EXISTS (SELECT 1 FROM fragment f WHERE f.anchor_id = sub.id AND f.path = $3)))"

static atomic_int events_enabled = 1, delta_enabled = 0;

void cps_events_configure(int enabled, int delta)
{
    atomic_store(&events_enabled, enabled);
    atomic_store(&delta_enabled, delta);
}

/* A key predicate's value as CPS writes it: in single quotes, a quote
 * doubled. */
static void quoted(ncmp_buf *b, const char *s)
{
    ncmp_buf_append_char(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            ncmp_buf_append_char(b, '\'');
        ncmp_buf_append_char(b, *s);
    }
    ncmp_buf_append_char(b, '\'');
}

/* The stored paths of the subscriptions that cover t: the anchor's, the
 * dataspace's and its anchors container. */
static int subscription_paths(const cps_target *t, ncmp_buf *anchor, ncmp_buf *dataspace,
                              ncmp_buf *anchors, ncmp_err *err)
{
    ncmp_buf x = NCMP_BUF_INIT;
    size_t ds_len, anchors_len;
    int rc = -1;

    ncmp_buf_append_str(&x, "/dataspaces/dataspace[@name=");
    quoted(&x, t->dataspace);
    ncmp_buf_append_char(&x, ']');
    ds_len = x.len;
    ncmp_buf_append_str(&x, "/anchors");
    anchors_len = x.len;
    ncmp_buf_append_str(&x, "/anchor[@name=");
    quoted(&x, t->anchor_name);
    ncmp_buf_append_str(&x, "]");
    ncmp_buf_append_char(&x, '\0');
    if (cps_path_encode(x.data, anchor, err) != 0)
        goto cleanup;
    x.data[anchors_len] = '\0';
    if (cps_path_encode(x.data, anchors, err) != 0)
        goto cleanup;
    x.data[ds_len] = '\0';
    if (cps_path_encode(x.data, dataspace, err) != 0)
        goto cleanup;
    ncmp_buf_append_char(anchor, '\0');
    ncmp_buf_append_char(anchors, '\0');
    ncmp_buf_append_char(dataspace, '\0');
    rc = 0;
cleanup:
    ncmp_buf_free(&x);
    return rc;
}

static int cps_events_note(ncmp_db *db, const cps_target *t, const char *action, const char *xpath,
                           ncmp_err *err);

/* The event's payload: CPS's field order, observedTimestamp only when
 * the write gave one, cloudEventData only with a side of a delta entry. */
static void payload_json(ncmp_buf *out, const cps_target *t, const char *action, const char *xpath,
                         json_object *source, json_object *target)
{
    ncmp_buf_append_str(out, "{\"eventPayload\":{");
    if (t->observed_timestamp) {
        ncmp_buf_append_str(out, "\"observedTimestamp\":");
        ncmp_buf_append_json_string(out, t->observed_timestamp);
        ncmp_buf_append_char(out, ',');
    }
    ncmp_buf_append_str(out, "\"dataspaceName\":");
    ncmp_buf_append_json_string(out, t->dataspace);
    ncmp_buf_append_str(out, ",\"schemaSetName\":");
    ncmp_buf_append_json_string(out, t->schema_set ? t->schema_set : "");
    ncmp_buf_append_str(out, ",\"anchorName\":");
    ncmp_buf_append_json_string(out, t->anchor_name);
    ncmp_buf_append_str(out, ",\"action\":");
    ncmp_buf_append_json_string(out, action);
    ncmp_buf_append_str(out, ",\"xpath\":");
    ncmp_buf_append_json_string(out, xpath ? xpath : "/");
    if (source || target) {
        const char *sep = "";
        ncmp_buf_append_str(out, ",\"cloudEventData\":{");
        if (source) {
            ncmp_buf_append_str(out, "\"sourceData\":");
            ncmp_buf_append_json_string(
                out, json_object_to_json_string_ext(source, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
            sep = ",";
        }
        if (target) {
            ncmp_buf_appendf(out, "%s\"targetData\":", sep);
            ncmp_buf_append_json_string(
                out, json_object_to_json_string_ext(target, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
        }
        ncmp_buf_append_char(out, '}');
    }
    ncmp_buf_append_str(out, "}}");
    ncmp_buf_append_char(out, '\0');
}

/* An event of a subscribed anchor, written without looking again. */
static int event_insert(ncmp_db *db, const cps_target *t, const char *action, const char *xpath,
                        json_object *source, json_object *target, ncmp_err *err)
{
    static const char sql[] =
        "WITH ins AS (INSERT INTO cps_event_outbox (event_key, event_id, event_time, event_type,"
        " payload) VALUES ($1, $2, $3, $4, $5) RETURNING 1)"
        " SELECT pg_notify('" OUTBOX_CHANNEL "', '') FROM ins";
    ncmp_buf key = NCMP_BUF_INIT, payload = NCMP_BUF_INIT;
    char id[37], now[NCMP_CLOUDEVENT_TIME_SIZE];
    const char *params[5];
    int rc;

    ncmp_buf_appendf(&key, "%s:%s", t->dataspace, t->anchor_name);
    ncmp_buf_append_char(&key, '\0');
    ncmp_uuid4(id);
    ncmp_cloudevent_time_now(now);
    payload_json(&payload, t, action, xpath, source, target);
    params[0] = key.data;
    params[1] = id;
    params[2] = now;
    params[3] = action;
    params[4] = payload.data;
    rc = ncmp_db_query(db, sql, 5, params, NULL, err);
    ncmp_buf_free(&key);
    ncmp_buf_free(&payload);
    return rc;
}

/* Is anchor t subscribed? */
static int subscribed(ncmp_db *db, const cps_target *t, int *yes, ncmp_err *err)
{
    static const char sql[] = SQL_SUBSCRIBED " SELECT EXISTS (SELECT 1 FROM hit)";
    ncmp_buf anchor = NCMP_BUF_INIT, dataspace = NCMP_BUF_INIT, anchors = NCMP_BUF_INIT;
    const char *params[3];
    PGresult *res = NULL;
    int rc = -1;

    if (subscription_paths(t, &anchor, &dataspace, &anchors, err) != 0)
        goto cleanup;
    params[0] = anchor.data;
    params[1] = dataspace.data;
    params[2] = anchors.data;
    if (ncmp_db_query(db, sql, 3, params, &res, err) != 0)
        goto cleanup;
    *yes = PQgetvalue(res, 0, 0)[0] == 't';
    rc = 0;
cleanup:
    PQclear(res);
    ncmp_buf_free(&anchor);
    ncmp_buf_free(&dataspace);
    ncmp_buf_free(&anchors);
    return rc;
}

int cps_events_begin_reads(void)
{
    return atomic_load(&events_enabled) && atomic_load(&delta_enabled);
}

int cps_events_begin(ncmp_db *db, const cps_target *t, const char *path, cps_notice *n,
                     ncmp_err *err)
{
    int yes = 0;

    memset(n, 0, sizeof(*n));
    if (!atomic_load(&events_enabled) || !atomic_load(&delta_enabled))
        return 0;
    if (subscribed(db, t, &yes, err) != 0)
        return -1;
    if (!yes)
        return 0;
    if (cps_delta_snapshot(db, t, path, n->scratch, sizeof(n->scratch), err) != 0)
        return -1;
    n->path = ncmp_xstrdup(path);
    n->delta = 1;
    return 0;
}

typedef struct entry_sink {
    ncmp_db *db;
    const cps_target *t;
    int count;
} entry_sink;

static int entry_event(void *arg, const char *action, const char *xpath, json_object *source,
                       json_object *target, ncmp_err *err)
{
    entry_sink *s = arg;

    s->count++;
    return event_insert(s->db, s->t, action, xpath, source, target, err);
}

int cps_events_end(ncmp_db *db, const cps_target *t, cps_notice *n, const char *action,
                   const char *xpath, ncmp_err *err)
{
    static const char sql_drop[] = "DELETE FROM anchor WHERE id = $1";
    entry_sink sink = {db, t, 0};
    const char *params[1];

    if (!n->delta)
        return cps_events_note(db, t, action, xpath, err);
    if (cps_delta_each(db, n->scratch, t->anchor_id, n->path, entry_event, &sink, err) != 0)
        return -1;
    if (!sink.count && event_insert(db, t, action, xpath, NULL, NULL, err) != 0)
        return -1;
    params[0] = n->scratch;
    return ncmp_db_query(db, sql_drop, 1, params, NULL, err);
}

void cps_notice_clear(cps_notice *n)
{
    free(n->path);
    n->path = NULL;
    n->delta = 0;
}

int cps_events_note_step(ncmp_db *db, const cps_target *t, const char *action, const char *xpath,
                         cps_note *note, ncmp_db_step *step, ncmp_err *err)
{
    /* prepared: planned once per connection, not at every write */
    static const char sql[] =
        SQL_SUBSCRIBED ", ins AS (INSERT INTO cps_event_outbox"
                       "  (event_key, event_id, event_time, event_type, payload)"
                       "  SELECT $4, $5, $6, $7, $8 FROM hit RETURNING 1)"
                       " SELECT pg_notify('" OUTBOX_CHANNEL "', '') FROM ins";

    if (!atomic_load(&events_enabled))
        return 0;
    if (subscription_paths(t, &note->anchor, &note->dataspace, &note->anchors, err) != 0)
        return -1;
    ncmp_buf_appendf(&note->key, "%s:%s", t->dataspace, t->anchor_name);
    ncmp_buf_append_char(&note->key, '\0');
    ncmp_uuid4(note->id);
    ncmp_cloudevent_time_now(note->now);
    payload_json(&note->payload, t, action, xpath, NULL, NULL);
    note->params[0] = note->anchor.data;
    note->params[1] = note->dataspace.data;
    note->params[2] = note->anchors.data;
    note->params[3] = note->key.data;
    note->params[4] = note->id;
    note->params[5] = note->now;
    note->params[6] = action;
    note->params[7] = note->payload.data;
    ncmp_db_statement(db, "cps_event_note", sql);
    *step = (ncmp_db_step){sql, 8, note->params, NULL, "cps_event_note"};
    return 1;
}

void cps_note_clear(cps_note *note)
{
    ncmp_buf_free(&note->anchor);
    ncmp_buf_free(&note->dataspace);
    ncmp_buf_free(&note->anchors);
    ncmp_buf_free(&note->key);
    ncmp_buf_free(&note->payload);
}

static int cps_events_note(ncmp_db *db, const cps_target *t, const char *action, const char *xpath,
                           ncmp_err *err)
{
    cps_note note = {0};
    ncmp_db_step step;
    int rc = cps_events_note_step(db, t, action, xpath, &note, &step, err);

    if (rc > 0)
        rc = ncmp_db_run(db, step.stmt, step.nparams, step.params, NULL, err);
    cps_note_clear(&note);
    return rc;
}

int cps_store_dataspace_watched(ncmp_db *db, const char *dataspace, int *watched, ncmp_err *err)
{
    static const char sql[] =
        "SELECT EXISTS (SELECT 1 FROM fragment f JOIN anchor a ON a.id = f.anchor_id"
        " JOIN dataspace d ON d.id = a.dataspace_id WHERE d.name = '" ADMIN_DATASPACE "'"
        " AND a.name = '" ADMIN_ANCHOR "' AND f.path = $1)";
    ncmp_buf x = NCMP_BUF_INIT, path = NCMP_BUF_INIT;
    const char *params[1];
    PGresult *res = NULL;
    int rc = -1;

    if (!atomic_load(&events_enabled)) {
        *watched = 0;
        return 0;
    }
    ncmp_buf_append_str(&x, "/dataspaces/dataspace[@name=");
    quoted(&x, dataspace);
    ncmp_buf_append_str(&x, "]");
    ncmp_buf_append_char(&x, '\0');
    if (cps_path_encode(x.data, &path, err) != 0)
        goto cleanup;
    ncmp_buf_append_char(&path, '\0');
    params[0] = path.data;
    if (ncmp_db_query(db, sql, 1, params, &res, err) != 0)
        goto cleanup;
    *watched = PQgetvalue(res, 0, 0)[0] == 't';
    rc = 0;
cleanup:
    PQclear(res);
    ncmp_buf_free(&x);
    ncmp_buf_free(&path);
    return rc;
}

int cps_store_announce(ncmp_db *db, const cps_target *t, const char *action, const char *xpath,
                       ncmp_err *err)
{
    return cps_events_note(db, t, action, xpath, err);
}

/* --- the subscriptions ---------------------------------------------------- */

static const char *subscription_xpath(ncmp_http_request *req)
{
    const char *xpath = ncmp_http_query(req, "xpath");
    return xpath && *xpath ? xpath : "/dataspaces";
}

/* GET: the subscriptions under xpath, as CPS's v2 node read answers them. */
static void h_get(ncmp_http_request *req, void *arg)
{
    if (!cps_api_version(req, 2))
        return;
    cps_api_respond_node(arg, req, ADMIN_DATASPACE, ADMIN_ANCHOR, subscription_xpath(req), -1, 2);
}

/* POST (list entries under xpath) and DELETE (the node at xpath), each in
 * a transaction of its own. */
static void subscription_write(ncmp_http_request *req, cps_api *api, int delete)
{
    const char *xpath = subscription_xpath(req);
    size_t len = 0;
    const char *body = ncmp_http_body(req, &len);
    cps_target t = {0};
    cps_refusal why = {0};
    ncmp_db *db = NULL;
    ncmp_err err;
    int rc;

    if (!cps_api_version(req, 2))
        return;
    if (!delete &&(!body || len == 0)) {
        ncmp_http_respond_error(req, 400, "Invalid request", "the request has no data");
        return;
    }
    if (rest_pool_get(api->pool, CPS_POOL_WAIT_MS, &db, &err) != 0) {
        rest_db_answer_error(req, &err);
        return;
    }
    if (cps_store_resolve(db, api->schemas, ADMIN_DATASPACE, ADMIN_ANCHOR, &t, &why, &err) != 0 ||
        ncmp_db_begin(db, &err) != 0) {
        cps_respond_refusal(req, &why, &err);
        goto cleanup;
    }
    rc = delete ? cps_store_delete(db, &t, xpath, &why, &err)
                : cps_store_write(db, &t, CPS_WRITE_SAVE_LIST, xpath, body, len, 0, 0, NULL, &why,
                                  &err);
    if (rc != 0) {
        ncmp_db_rollback(db);
        cps_respond_refusal(req, &why, &err);
        goto cleanup;
    }
    if (ncmp_db_commit(db, &err) != 0) {
        rest_db_answer_error(req, &err);
        goto cleanup;
    }
    if (delete)
        ncmp_http_respond(req, 204, NULL, "", 0);
    else
        ncmp_http_respond(req, 201, NULL, "", 0);
cleanup:
    rest_pool_put(api->pool, db);
    cps_target_clear(&t);
}

static void h_post(ncmp_http_request *req, void *arg)
{
    subscription_write(req, arg, 0);
}

static void h_delete(ncmp_http_request *req, void *arg)
{
    subscription_write(req, arg, 1);
}

void cps_events_routes_add(cps_api *api, ncmp_http_server *s)
{
    ncmp_http_route(s, "GET", "/cps/api/{v}/notification-subscription", h_get, api);
    ncmp_http_route(s, "POST", "/cps/api/{v}/notification-subscription", h_post, api);
    ncmp_http_route(s, "DELETE", "/cps/api/{v}/notification-subscription", h_delete, api);
}

/* --- the relay ------------------------------------------------------------ */

static rd_kafka_headers_t *event_headers(void *arg, const char *key, const char *type,
                                         const char *schema, const char *id, const char *time)
{
    const ncmp_cloudevent ce = {.id = id,
                                .source = "CPS",
                                .type = EVENT_TYPE,
                                .dataschema = "urn:cps:" EVENT_TYPE ":1.0.0",
                                .time = time,
                                .correlation_id = key};
    (void)arg;
    (void)type;
    (void)schema;
    return ncmp_cloudevent_headers(&ce);
}

int cps_relay_task(const ncmp_services *svc, ncmp_singleton_task *task, ncmp_err *err)
{
    const ncmp_relay_spec spec = {.component = "cps-relay",
                                  .what = "data-updated events",
                                  .leader_msg = "this process relays CPS's data-updated events",
                                  .table = "cps_event_outbox",
                                  .key_column = "event_key",
                                  .channel = OUTBOX_CHANNEL,
                                  .topic = svc->cfg->cps_data_updated_topic,
                                  .lock_key = RELAY_LOCK_KEY,
                                  .batch_size = svc->cfg->cps_relay_batch_size,
                                  .linger_ms = svc->cfg->cps_relay_linger_ms,
                                  .headers = event_headers};
    return ncmp_relay_task(svc->cfg, &spec, task, err);
}

void cps_relay_free(void *arg)
{
    ncmp_relay_free(arg);
}
