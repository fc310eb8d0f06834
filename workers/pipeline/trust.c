/*
 * Trust levels (see trust.h for the design).
 */
#include "trust.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "ncmp_db.h"
#include "ncmp_dmi.h"
#include "ncmp_json.h"
#include "ncmp_cloudevent.h"
#include "ncmp_log.h"
#include "ncmp_pgarray.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"
#include "ncmp_singleton.h"

/* The DMI plugin a handle's trust depends on: NCMP's DATA service. Written
 * exactly as in migration 0005's index. */
#define HANDLE_DMI(h)                                                                              \
    "(CASE WHEN " h ".dmi_data_service_name <> '' THEN " h ".dmi_data_service_name"                \
    " ELSE " h ".dmi_service_name END)"

#define WATCHDOG_LOCK "ncmp-trust-watchdog"

/* --- inventory AVC events ------------------------------------------------ */

void trust_avc_json(ncmp_buf *out, const char *old_level, const char *new_level)
{
    ncmp_buf_append_str(out, "{\"data\":{\"attributeValueChange\":[{\"attributeName\":"
                             "\"trustLevel\"");
    if (old_level) {
        ncmp_buf_append_str(out, ",\"oldAttributeValue\":");
        ncmp_buf_append_json_string(out, old_level);
    }
    ncmp_buf_append_str(out, ",\"newAttributeValue\":");
    ncmp_buf_append_json_string(out, new_level);
    ncmp_buf_append_str(out, "}]}}");
}

int trust_avc_send(ncmp_producer *p, ncmp_delivery *d, const char *topic, const char *cm_handle_id,
                   const char *old_level, const char *new_level, ncmp_err *err)
{
    ncmp_buf body = NCMP_BUF_INIT;
    const ncmp_cloudevent ce = {.source = TRUST_AVC_SOURCE,
                                .type = TRUST_AVC_TYPE,
                                .dataschema = TRUST_AVC_DATASCHEMA,
                                .correlation_id = cm_handle_id};
    rd_kafka_headers_t *h = ncmp_cloudevent_headers(&ce);
    int rc;

    trust_avc_json(&body, old_level, new_level);
    rc = ncmp_producer_send(p, d, topic, RD_KAFKA_PARTITION_UA, cm_handle_id, strlen(cm_handle_id),
                            body.data, body.len, h, err);
    ncmp_buf_free(&body);
    return rc;
}

/* --- device heartbeats: decoding ----------------------------------------- */

/* Is `obj` an object with no key but `key`? */
static int only_key(json_object *obj, const char *key, const char *where, ncmp_err *err)
{
    json_object_object_foreach(obj, k, v)
    {
        (void)v;
        if (strcmp(k, key) != 0)
            return ncmp_err_set(err, NCMP_ERR_REJECT, "device heartbeat: unknown field %s%s", where,
                                k);
    }
    return 0;
}

int trust_heartbeat_decode(const void *payload, size_t len, const char **level, ncmp_err *err)
{
    json_object *root = NULL, *data = NULL;
    const char *s = NULL;
    int rc = -1;

    if (ncmp_json_parse(payload, len, &root, err) != 0) {
        ncmp_err_prefix(err, "device heartbeat");
        goto done;
    }
    if (!json_object_is_type(root, json_type_object)) {
        ncmp_err_set(err, NCMP_ERR_REJECT,
                     "device heartbeat must be a JSON object {\"data\":{\"trustLevel\":...}}");
        goto done;
    }
    if (only_key(root, "data", "", err) != 0)
        goto done;
    if (ncmp_json_object_field(root, "data", &data, err) != 0) {
        ncmp_err_prefix(err, "device heartbeat");
        goto done;
    }
    if (!data) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "device heartbeat without data");
        goto done;
    }
    if (only_key(data, "trustLevel", "data.", err) != 0)
        goto done;
    if (ncmp_json_string_field(data, "trustLevel", &s, err) != 0) {
        ncmp_err_prefix(err, "device heartbeat: data");
        goto done;
    }
    if (!s) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "device heartbeat without data.trustLevel");
        goto done;
    }
    if (strcmp(s, TRUST_COMPLETE) == 0) {
        *level = TRUST_COMPLETE;
    } else if (strcmp(s, TRUST_NONE) == 0) {
        *level = TRUST_NONE;
    } else {
        ncmp_err_set(err, NCMP_ERR_REJECT,
                     "device heartbeat: trustLevel must be COMPLETE or NONE, not \"%.100s\"", s);
        goto done;
    }
    rc = 0;
done:
    json_object_put(root);
    return rc;
}

/* --- device heartbeats: the role ----------------------------------------- */

/* Lock the DMI plugins of the batch's handles, in name order, so that the
 * watchdog cannot change their trust while the batch computes with it. */
static const char SQL_HB_LOCK_DMI[] =
    "SELECT d.name FROM dmi_plugin d WHERE d.name IN (SELECT " HANDLE_DMI(
        "h") " FROM cm_handle h WHERE h.id = ANY($1::text[])) "
             "ORDER BY d.name FOR SHARE OF d";

static const char SQL_HB_LOCK_HANDLES[] =
    "SELECT id, effective_trust_level FROM cm_handle WHERE id = ANY($1::text[]) "
    "ORDER BY id FOR UPDATE";

static const char SQL_HB_UPDATE[] =
    "UPDATE cm_handle h SET trust_level = v.trust,"
    " effective_trust_level = CASE WHEN v.trust = 'NONE' OR EXISTS (SELECT 1 FROM dmi_plugin d"
    "   WHERE d.name = " HANDLE_DMI("h") " AND d.trust_level = 'NONE')"
                                         " THEN 'NONE' ELSE 'COMPLETE' END "
                                         "FROM unnest($1::text[], $2::text[]) AS v(id, trust) "
                                         "WHERE h.id = v.id AND h.trust_level <> v.trust "
                                         "RETURNING h.id, h.effective_trust_level";

/* One decoded heartbeat of the batch. */
typedef struct hb_entry {
    char *id;
    const char *level;
    size_t pos;   /* in the batch */
    size_t round; /* how many earlier heartbeats of the batch name this handle */
} hb_entry;

/* A known handle and its effective trust as the batch goes. */
typedef struct hb_handle {
    const char *id; /* first member: cmp_id compares it */
    int none;       /* effective trust NONE */
} hb_handle;

typedef struct tr_worker {
    const ncmp_config *cfg;
    ncmp_buf a[2];
} tr_worker;

static int cmp_id(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_entry(const void *a, const void *b)
{
    const hb_entry *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c)
        return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_pos(const void *a, const void *b)
{
    const hb_entry *x = a, *y = b;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int tr_init(void *arg, ncmp_stage_ctx *ctx, void **state, ncmp_err *err)
{
    tr_worker *w = ncmp_xcalloc(1, sizeof(*w));

    (void)arg;
    (void)err;
    w->cfg = ctx->cfg;
    *state = w;
    return 0;
}

static void tr_fini(void *state)
{
    tr_worker *w = state;
    if (!w)
        return;
    ncmp_buf_free(&w->a[0]);
    ncmp_buf_free(&w->a[1]);
    free(w);
}

/* The ce_id header's whole value as a new string; NULL when absent or
 * when it holds a NUL byte (no handle id does). */
static char *ce_id_dup(const rd_kafka_message_t *m)
{
    rd_kafka_headers_t *hdrs = NULL;
    const void *val = NULL;
    size_t size = 0;
    char *s;

    if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR ||
        rd_kafka_header_get_last(hdrs, "ce_id", &val, &size) != RD_KAFKA_RESP_ERR_NO_ERROR ||
        !val || memchr(val, '\0', size))
        return NULL;
    s = ncmp_xmalloc(size + 1);
    memcpy(s, val, size);
    s[size] = '\0';
    return s;
}

/* Decode the batch into entries[0..*n); dead-letter what cannot be used. */
static int hb_decode(ncmp_stage_ctx *ctx, rd_kafka_message_t **msgs, size_t n, hb_entry *entries,
                     size_t *nentries, ncmp_err *err)
{
    for (size_t i = 0; i < n; i++) {
        ncmp_err perr = {NCMP_ERR_NONE, ""};
        const char *level = NULL;
        char *id = ce_id_dup(msgs[i]);
        const char *reason = NULL;

        if (!id || !*id)
            reason = "missing ce_id header: a device heartbeat names its CM handle in ce_id";
        else if (trust_heartbeat_decode(msgs[i]->payload, msgs[i]->len, &level, &perr) != 0)
            reason = perr.msg;
        if (reason) {
            free(id);
            if (ncmp_stage_reject(ctx, msgs[i], reason, err) != 0)
                return -1;
            continue;
        }
        entries[*nentries].id = id;
        entries[*nentries].level = level;
        entries[*nentries].pos = i;
        (*nentries)++;
    }
    return 0;
}

/* Number each heartbeat within its handle: the k-th of a handle is applied
 * in round k. Returns the number of rounds. Leaves entries in batch order. */
static size_t hb_rounds(hb_entry *e, size_t n)
{
    size_t rounds = 0;

    qsort(e, n, sizeof(*e), cmp_entry);
    for (size_t i = 0; i < n; i++) {
        e[i].round = (i > 0 && strcmp(e[i].id, e[i - 1].id) == 0) ? e[i - 1].round + 1 : 0;
        if (e[i].round + 1 > rounds)
            rounds = e[i].round + 1;
    }
    qsort(e, n, sizeof(*e), cmp_pos);
    return rounds;
}

/* The batch's handles that exist, locked, with their effective trust,
 * sorted by id for lookups. `res` keeps the strings. */
static int hb_known(tr_worker *w, ncmp_stage_ctx *ctx, const hb_entry *e, size_t n, PGresult **res,
                    hb_handle **known, size_t *nknown, ncmp_err *err)
{
    const char *params[1];

    ncmp_pgarray_begin(&w->a[0]);
    for (size_t i = 0; i < n; i++)
        ncmp_pgarray_add_text(&w->a[0], e[i].id);
    ncmp_pgarray_end(&w->a[0]);
    params[0] = w->a[0].data;
    /* the plugins first, then the handles: the watchdog locks in the same
     * order (its plugins, then their handles) */
    if (ncmp_db_run(ctx->db, "tr_lock_dmi", 1, params, NULL, err) != 0 ||
        ncmp_db_run(ctx->db, "tr_lock_handles", 1, params, res, err) != 0)
        return -1;
    *nknown = (size_t)PQntuples(*res);
    *known = ncmp_xcalloc(*nknown + 1, sizeof(**known));
    for (size_t i = 0; i < *nknown; i++) {
        (*known)[i].id = PQgetvalue(*res, (int)i, 0);
        (*known)[i].none = strcmp(PQgetvalue(*res, (int)i, 1), TRUST_NONE) == 0;
    }
    /* the database sorts by collation; lookups need byte order */
    qsort(*known, *nknown, sizeof(**known), cmp_id);
    return 0;
}

static hb_handle *hb_find(hb_handle *known, size_t n, const char *id)
{
    return n ? bsearch(&id, known, n, sizeof(*known), cmp_id) : NULL;
}

/* Apply round `round`; an event for each handle whose effective trust
 * changed. */
static int hb_apply_round(tr_worker *w, ncmp_stage_ctx *ctx, const hb_entry *e, size_t n,
                          size_t round, hb_handle *known, size_t nknown, size_t *nevents,
                          ncmp_err *err)
{
    PGresult *res = NULL;
    const char *params[2];
    size_t count = 0;
    int rc = -1;

    ncmp_pgarray_begin(&w->a[0]);
    ncmp_pgarray_begin(&w->a[1]);
    for (size_t i = 0; i < n; i++) {
        if (e[i].round != round || !hb_find(known, nknown, e[i].id))
            continue;
        ncmp_pgarray_add_text(&w->a[0], e[i].id);
        ncmp_pgarray_add_text(&w->a[1], e[i].level);
        count++;
    }
    ncmp_pgarray_end(&w->a[0]);
    ncmp_pgarray_end(&w->a[1]);
    if (!count)
        return 0;
    params[0] = w->a[0].data;
    params[1] = w->a[1].data;
    if (ncmp_db_run(ctx->db, "tr_update", 2, params, &res, err) != 0)
        goto done;
    for (int r = 0; r < PQntuples(res); r++) {
        hb_handle *h = hb_find(known, nknown, PQgetvalue(res, r, 0));
        int none = strcmp(PQgetvalue(res, r, 1), TRUST_NONE) == 0;
        if (!h || h->none == none)
            continue;
        if (*w->cfg->trust_inventory_events_topic &&
            trust_avc_send(ctx->producer, &ctx->delivery, w->cfg->trust_inventory_events_topic,
                           h->id, h->none ? TRUST_NONE : TRUST_COMPLETE,
                           none ? TRUST_NONE : TRUST_COMPLETE, err) != 0)
            goto done;
        log_debug("trust", "handle=%s effective trust %s -> %s (heartbeat)", h->id,
                  h->none ? TRUST_NONE : TRUST_COMPLETE, none ? TRUST_NONE : TRUST_COMPLETE);
        h->none = none;
        (*nevents)++;
    }
    rc = 0;
done:
    PQclear(res);
    return rc;
}

static int tr_apply(void *state, ncmp_stage_ctx *ctx, rd_kafka_message_t **msgs, size_t n,
                    ncmp_err *err)
{
    tr_worker *w = state;
    hb_entry *entries = ncmp_xcalloc(n + 1, sizeof(*entries));
    hb_handle *known = NULL;
    PGresult *res = NULL;
    size_t nentries = 0, nknown = 0, rounds, nevents = 0;
    double t0 = ncmp_now_ms();
    int rc = -1;

    if (hb_decode(ctx, msgs, n, entries, &nentries, err) != 0)
        goto done;
    if (!nentries) {
        rc = 0;
        goto done;
    }
    rounds = hb_rounds(entries, nentries);
    if (hb_known(w, ctx, entries, nentries, &res, &known, &nknown, err) != 0)
        goto done;
    for (size_t r = 0; r < rounds; r++)
        if (hb_apply_round(w, ctx, entries, nentries, r, known, nknown, &nevents, err) != 0)
            goto done;
    if (ncmp_log_threshold >= NCMP_LOG_DEBUG)
        for (size_t i = 0; i < nentries; i++)
            if (!hb_find(known, nknown, entries[i].id))
                log_debug("trust", "heartbeat for unknown handle=%s ignored", entries[i].id);
    log_debug("trust", "batch of %zu heartbeats: %zu handles known, %zu events, %.0f ms", n, nknown,
              nevents, ncmp_now_ms() - t0);
    rc = 0;
done:
    for (size_t i = 0; i < nentries; i++)
        free(entries[i].id);
    free(entries);
    free(known);
    PQclear(res);
    return rc;
}

static const ncmp_db_stmt tr_statements[] = {{"tr_lock_dmi", SQL_HB_LOCK_DMI},
                                             {"tr_lock_handles", SQL_HB_LOCK_HANDLES},
                                             {"tr_update", SQL_HB_UPDATE},
                                             {NULL, NULL}};

const ncmp_stage_ops trust_stage = {tr_statements, tr_init, tr_apply, tr_fini};

/* --- the DMI health watchdog --------------------------------------------- */

struct trust_watchdog {
    const ncmp_config *cfg;
    ncmp_dmi *dmi;
    ncmp_producer *producer;
};

/* Every DMI plugin that has handles. */
static const char SQL_WD_PLUGINS[] =
    "SELECT DISTINCT " HANDLE_DMI("h") " FROM cm_handle h WHERE " HANDLE_DMI("h") " <> ''";

static const char SQL_WD_STORED[] = "SELECT name, trust_level FROM dmi_plugin";

/* The plugins whose trust changed (or that are new), in name order. */
static const char SQL_WD_SET[] =
    "INSERT INTO dmi_plugin (name, trust_level, checked_at) "
    "SELECT n, t, now() FROM unnest($1::text[], $2::text[]) AS v(n, t) ORDER BY n "
    "ON CONFLICT (name) DO UPDATE SET trust_level = EXCLUDED.trust_level, checked_at = now()";

static const char SQL_WD_DROP[] = "DELETE FROM dmi_plugin WHERE name <> ALL($1::text[])";

/* Every handle whose effective trust is not the lower of its own and its
 * plugin's (a plugin without a row counts as COMPLETE, as NCMP's
 * registration makes it). */
static const char SQL_WD_RECOMPUTE[] =
    "WITH want AS (SELECT h.id, h.effective_trust_level AS old, d.trust_level = 'NONE' AS dmi_none"
    " FROM cm_handle h LEFT JOIN dmi_plugin d ON d.name = " HANDLE_DMI(
        "h") ") "
             "UPDATE cm_handle h SET effective_trust_level ="
             " CASE WHEN h.trust_level = 'NONE' OR w.dmi_none THEN 'NONE' ELSE 'COMPLETE' END "
             "FROM want w WHERE h.id = w.id AND w.old <>"
             " CASE WHEN h.trust_level = 'NONE' OR w.dmi_none THEN 'NONE' ELSE 'COMPLETE' END "
             "RETURNING h.id, w.old, h.effective_trust_level";

static const char SQL_WD_CHECKED[] =
    "UPDATE dmi_plugin SET checked_at = now() WHERE name = ANY($1::text[])";

/* GET {dmi}/actuator/health of each plugin, in parallel; up[i] says. */
static void wd_check_health(ncmp_dmi *dmi, long timeout_ms, PGresult *plugins, int *up)
{
    int n = PQntuples(plugins);
    ncmp_dmi_request *rq = ncmp_xcalloc((size_t)n + 1, sizeof(*rq));
    ncmp_dmi_response *rs = ncmp_xcalloc((size_t)n + 1, sizeof(*rs));
    ncmp_buf *urls = ncmp_xcalloc((size_t)n + 1, sizeof(*urls));
    ncmp_err err;

    for (int i = 0; i < n; i++) {
        ncmp_dmi_url_health(&urls[i], PQgetvalue(plugins, i, 0));
        rq[i].method = "GET";
        rq[i].url = urls[i].data;
        rq[i].timeout_ms = timeout_ms;
        up[i] = 0;
    }
    if (ncmp_dmi_call_many(dmi, rq, (size_t)n, rs, &err) != 0) {
        /* a URL libcurl refuses: check one by one, so only that one is down */
        for (int i = 0; i < n; i++) {
            if (ncmp_dmi_call(dmi, &rq[i], &rs[i], &err) != 0) {
                log_warn("trust", "health check of %s: %s", PQgetvalue(plugins, i, 0), err.msg);
                continue;
            }
            up[i] = ncmp_dmi_health_up(&rs[i]);
            ncmp_dmi_response_free(&rs[i]);
        }
    } else {
        for (int i = 0; i < n; i++) {
            up[i] = ncmp_dmi_health_up(&rs[i]);
            if (!up[i] && rs[i].status)
                log_debug("trust", "dmi=%s not up: HTTP %ld", PQgetvalue(plugins, i, 0),
                          rs[i].status);
            else if (!up[i])
                log_debug("trust", "dmi=%s not up: %s", PQgetvalue(plugins, i, 0), rs[i].error);
            ncmp_dmi_response_free(&rs[i]);
        }
    }
    for (int i = 0; i < n; i++)
        ncmp_buf_free(&urls[i]);
    free(rq);
    free(rs);
    free(urls);
}

/* The stored trust of `name`: 1 NONE, 0 COMPLETE, -1 no row. */
static int stored_none(PGresult *stored, const char *name)
{
    for (int r = 0; r < PQntuples(stored); r++)
        if (strcmp(PQgetvalue(stored, r, 0), name) == 0)
            return strcmp(PQgetvalue(stored, r, 1), TRUST_NONE) == 0;
    return -1;
}

/* In the open transaction: store the changed plugins, drop those without
 * handles, recompute the handles, send their events. */
static int wd_apply(const ncmp_config *cfg, ncmp_db *db, ncmp_producer *p, ncmp_delivery *d,
                    const char *all, const char *changed_names, const char *changed_levels,
                    size_t *nevents, ncmp_err *err)
{
    PGresult *res = NULL;
    const char *params[2] = {changed_names, changed_levels};

    if (ncmp_db_query(db, SQL_WD_SET, 2, params, NULL, err) != 0)
        return -1;
    params[0] = all;
    if (ncmp_db_query(db, SQL_WD_DROP, 1, params, NULL, err) != 0 ||
        ncmp_db_query(db, SQL_WD_RECOMPUTE, 0, NULL, &res, err) != 0)
        return -1;
    for (int r = 0; r < PQntuples(res); r++) {
        const char *id = PQgetvalue(res, r, 0), *old = PQgetvalue(res, r, 1);
        const char *now = PQgetvalue(res, r, 2);
        if (strcmp(old, now) == 0)
            continue;
        if (*cfg->trust_inventory_events_topic &&
            trust_avc_send(p, d, cfg->trust_inventory_events_topic, id, old, now, err) != 0) {
            PQclear(res);
            return -1;
        }
        (*nevents)++;
    }
    PQclear(res);
    return 0;
}

/* One round: check every plugin, apply what changed. */
static int wd_round(const ncmp_config *cfg, ncmp_db *db, ncmp_dmi *dmi, ncmp_producer *p,
                    ncmp_err *err)
{
    PGresult *plugins = NULL, *stored = NULL;
    ncmp_buf all = NCMP_BUF_INIT, names = NCMP_BUF_INIT, levels = NCMP_BUF_INIT;
    ncmp_delivery d;
    int *up = NULL, n, rc = -1;
    size_t nchanged = 0, nevents = 0;
    const char *params[1];

    if (ncmp_db_query(db, SQL_WD_PLUGINS, 0, NULL, &plugins, err) != 0 ||
        ncmp_db_query(db, SQL_WD_STORED, 0, NULL, &stored, err) != 0)
        goto done;
    n = PQntuples(plugins);
    up = ncmp_xcalloc((size_t)n + 1, sizeof(*up));
    wd_check_health(dmi, cfg->trust_dmi_check_timeout_ms, plugins, up);
    ncmp_pgarray_begin(&all);
    ncmp_pgarray_begin(&names);
    ncmp_pgarray_begin(&levels);
    for (int i = 0; i < n; i++) {
        const char *name = PQgetvalue(plugins, i, 0);
        int was = stored_none(stored, name);
        ncmp_pgarray_add_text(&all, name);
        if (was == !up[i])
            continue;
        ncmp_pgarray_add_text(&names, name);
        ncmp_pgarray_add_text(&levels, up[i] ? TRUST_COMPLETE : TRUST_NONE);
        log_info("trust", "dmi=%s trust %s -> %s", name,
                 was < 0 ? "(new)"
                 : was   ? TRUST_NONE
                         : TRUST_COMPLETE,
                 up[i] ? TRUST_COMPLETE : TRUST_NONE);
        nchanged++;
    }
    ncmp_pgarray_end(&all);
    ncmp_pgarray_end(&names);
    ncmp_pgarray_end(&levels);
    ncmp_delivery_init(&d);
    if (ncmp_db_begin(db, err) != 0)
        goto done;
    if (wd_apply(cfg, db, p, &d, all.data, names.data, levels.data, &nevents, err) != 0 ||
        ncmp_producer_wait(p, &d, 60000, err) != 0) {
        ncmp_db_rollback(db);
        goto done;
    }
    if (ncmp_db_commit(db, err) != 0)
        goto done;
    params[0] = all.data;
    if (ncmp_db_query(db, SQL_WD_CHECKED, 1, params, NULL, err) != 0)
        goto done;
    if (nchanged || nevents)
        log_info("trust",
                 "watchdog: %d DMI plugins checked, %zu changed, %zu handles changed "
                 "effective trust",
                 n, nchanged, nevents);
    else
        log_debug("trust", "watchdog: %d DMI plugins checked, no change", n);
    rc = 0;
done:
    PQclear(plugins);
    PQclear(stored);
    free(up);
    ncmp_buf_free(&all);
    ncmp_buf_free(&names);
    ncmp_buf_free(&levels);
    return rc;
}

static int wd_check(void *arg, ncmp_db *db, ncmp_err *err)
{
    trust_watchdog *w = arg;
    return wd_round(w->cfg, db, w->dmi, w->producer, err);
}

int trust_watchdog_task(const ncmp_services *svc, ncmp_singleton_task *task, ncmp_err *err)
{
    trust_watchdog *w = ncmp_xcalloc(1, sizeof(*w));

    w->cfg = svc->cfg;
    w->dmi = svc->dmi;
    w->producer = svc->producer;
    *task = (ncmp_singleton_task){.component = "trust",
                                  .what = "watchdog",
                                  .lock = WATCHDOG_LOCK,
                                  .leader_msg = "this process checks the health of DMI plugins",
                                  .idle_ms = w->cfg->trust_dmi_check_interval_ms,
                                  .round = wd_check,
                                  .arg = w};
    return 0;
}

void trust_watchdog_free(void *arg)
{
    free(arg);
}
