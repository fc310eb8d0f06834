#include "refresh.h"

#include <stdlib.h>
#include <string.h>

#include "modsync_queue.h"
#include "ncmp_buf.h"
#include "ncmp_lcm.h"
#include "ncmp_log.h"
#include "ncmp_pgarray.h"
#include "outbox.h"
#include "search.h"

#define POOL_WAIT_MS     5000
#define HANDOVER_WAIT_MS 30000

/* The matched handles, grouped: the tag first, then the id. */
#define SQL_MATCHED                                                                                \
    "SELECT h.id, COALESCE(h.alternate_id, ''), h.module_set_tag, h.state,"                        \
    " COALESCE(h.lock_reason, '') FROM cm_handle h WHERE %s ORDER BY h.module_set_tag, h.id"

/* The samples, if still READY. */
static const char SQL_LOCK[] =
    "UPDATE cm_handle SET state = 'LOCKED', lock_reason = 'MODULE_REFRESH',"
    " lock_details = 'Refresh of ModuleSetTag: ' || module_set_tag, sync_attempts = 0,"
    " last_update_time = now() "
    "WHERE id = ANY($1::text[]) AND state = 'READY' "
    "RETURNING id, alternate_id, module_set_tag, data_producer_identifier";

/* Is a refresh of this row's tag under way? */
static int refreshing(const PGresult *res, int row)
{
    const char *reason = PQgetvalue(res, row, 4);
    return strcmp(PQgetvalue(res, row, 3), "LOCKED") == 0 &&
           (strcmp(reason, "MODULE_REFRESH") == 0 || strcmp(reason, "MODULE_REFRESH_FAILED") == 0);
}

/* NCMP's answer: the rows grouped by tag, the alternate id where there
 * is one. Collects the first READY row of each tag with no refresh under
 * way into the PostgreSQL array `samples`. */
static size_t answer_and_samples(const PGresult *res, ncmp_buf *out, ncmp_buf *samples)
{
    int n = PQntuples(res), start = 0;
    size_t nsamples = 0;

    ncmp_buf_append_str(out, "{\"cmHandlesByModuleSetTag\":[");
    ncmp_pgarray_begin(samples);
    while (start < n) {
        const char *tag = PQgetvalue(res, start, 2);
        int end = start, sample = -1, busy = 0;
        while (end < n && strcmp(PQgetvalue(res, end, 2), tag) == 0)
            end++;
        ncmp_buf_append_str(out, start ? ",{\"moduleSetTag\":" : "{\"moduleSetTag\":");
        ncmp_buf_append_json_string(out, tag);
        ncmp_buf_append_str(out, ",\"cmHandles\":[");
        for (int r = start; r < end; r++) {
            const char *alt = PQgetvalue(res, r, 1);
            if (r > start)
                ncmp_buf_append_char(out, ',');
            ncmp_buf_append_json_string(out, *alt ? alt : PQgetvalue(res, r, 0));
            if (sample < 0 && strcmp(PQgetvalue(res, r, 3), "READY") == 0)
                sample = r;
            busy |= refreshing(res, r);
        }
        ncmp_buf_append_str(out, "]}");
        if (sample >= 0 && !busy) {
            ncmp_pgarray_add_text(samples, PQgetvalue(res, sample, 0));
            nsamples++;
        }
        start = end;
    }
    ncmp_buf_append_str(out, "]}");
    ncmp_pgarray_end(samples);
    return nsamples;
}

/* Lock the samples, announce it, hand them to module sync. In the
 * caller's transaction; the broker has the hand-over on return. */
static int lock_and_hand_over(ncmp_db *db, ncmp_producer *producer, const ncmp_config *cfg,
                              const char *samples, ncmp_err *err)
{
    const char *params[1] = {samples};
    PGresult *res = NULL;
    modsync_queue q = {0};
    ncmp_outbox ob;
    ncmp_delivery d;
    ncmp_buf slots = NCMP_BUF_INIT;
    int rc = -1;

    ncmp_outbox_init(&ob, db, cfg);
    if (ncmp_db_query(db, SQL_LOCK, 1, params, &res, err) != 0)
        goto done;
    for (int i = 0; i < PQntuples(res); i++) {
        const char *id = PQgetvalue(res, i, 0), *tag = PQgetvalue(res, i, 2);
        ncmp_outbox_add_state(&ob, id, PQgetvalue(res, i, 1), tag, PQgetvalue(res, i, 3),
                              NCMP_STATE_READY, NCMP_STATE_LOCKED);
        modsync_queue_add(&q, tag, id);
        log_info("rest", "module refresh: %s locked as the sample of ModuleSetTag '%s'", id, tag);
    }
    if (!q.n) {
        rc = 0;
        goto done;
    }
    modsync_queue_slots(&q, &slots);
    params[0] = slots.data;
    ncmp_delivery_init(&d);
    if (ncmp_outbox_flush(&ob, err) != 0 ||
        ncmp_db_query(db, MODSYNC_SQL_HANDOVER_LOCK, 1, params, NULL, err) != 0 ||
        modsync_queue_send(&q, producer, &d, cfg->module_sync_topic, err) != 0 ||
        ncmp_producer_wait(producer, &d, HANDOVER_WAIT_MS, err) != 0)
        goto done;
    rc = 0;
done:
    PQclear(res);
    modsync_queue_free(&q);
    ncmp_outbox_free(&ob);
    ncmp_buf_free(&slots);
    return rc;
}

void refresh_modules(ncmp_http_request *req, rest_pool *pool, ncmp_producer *producer,
                     const ncmp_config *cfg)
{
    size_t len;
    const char *body = ncmp_http_body(req, &len);
    search_query q;
    search_error e;
    ncmp_buf sql = NCMP_BUF_INIT, out = NCMP_BUF_INIT, samples = NCMP_BUF_INIT;
    PGresult *res = NULL;
    ncmp_db *db = NULL;
    ncmp_err err;

    if (search_parse(body, len, SEARCH_SOUTHBOUND, 1, &q, &e) != 0) {
        ncmp_http_respond_error(req, 400, e.message, e.details);
        return;
    }
    ncmp_buf_appendf(&sql, SQL_MATCHED, q.where.data);
    if (rest_pool_get(pool, POOL_WAIT_MS, &db, &err) != 0) {
        rest_db_answer_error(req, &err);
        goto cleanup;
    }
    if (ncmp_db_begin(db, &err) != 0 ||
        ncmp_db_query(db, sql.data, q.nparams, (const char *const *)q.params, &res, &err) != 0)
        goto fail;
    if (answer_and_samples(res, &out, &samples) &&
        lock_and_hand_over(db, producer, cfg, samples.data, &err) != 0)
        goto fail;
    if (ncmp_db_commit(db, &err) != 0)
        goto fail;
    ncmp_http_respond_json(req, 200, &out);
    goto cleanup;
fail:
    ncmp_db_rollback(db);
    rest_db_answer_error(req, &err);
cleanup:
    if (db)
        rest_pool_put(pool, db);
    PQclear(res);
    search_query_free(&q);
    ncmp_buf_free(&sql);
    ncmp_buf_free(&out);
    ncmp_buf_free(&samples);
}
