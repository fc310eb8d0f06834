#include "rest_db.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_time.h"

#define POOL_WAIT_MS 5000

struct rest_pool {
    int query_timeout_ms; /* rest.query-timeout-ms; 0: none */
    pthread_mutex_t lock;
    pthread_cond_t freed;
    ncmp_db **free_dbs;
    /* free_dbs[i] was given back with the end of its transaction sent
     * and not read yet (rest_pool_put_ending): the next taker reads it */
    unsigned char *committing;
    size_t nfree, n;
};

int rest_pool_new(rest_pool **out, const ncmp_config *cfg, ncmp_err *err)
{
    rest_pool *pool = ncmp_xcalloc(1, sizeof(*pool));

    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->freed, NULL);
    pool->query_timeout_ms = cfg->rest_query_timeout_ms;
    pool->free_dbs = ncmp_xcalloc((size_t)cfg->rest_db_connections, sizeof(*pool->free_dbs));
    pool->committing = ncmp_xcalloc((size_t)cfg->rest_db_connections, 1);
    for (int i = 0; i < cfg->rest_db_connections; i++) {
        ncmp_db *db = NULL;
        if (ncmp_db_open(&db, cfg->db_url, cfg->db_password, cfg->db_connect_timeout_s, err) != 0) {
            rest_pool_destroy(pool);
            return ncmp_err_prefix(err, "rest: database connection %d", i + 1);
        }
        pool->free_dbs[pool->nfree++] = db;
        pool->n++;
    }
    *out = pool;
    return 0;
}

void rest_pool_destroy(rest_pool *pool)
{
    if (!pool)
        return;
    if (pool->nfree != pool->n)
        log_error("rest", "%zu database connections still in use at shutdown",
                  pool->n - pool->nfree);
    for (size_t i = 0; i < pool->nfree; i++)
        ncmp_db_close(pool->free_dbs[i]);
    free(pool->free_dbs);
    free(pool->committing);
    pthread_cond_destroy(&pool->freed);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

int rest_pool_get(rest_pool *pool, int timeout_ms, ncmp_db **db, ncmp_err *err)
{
    struct timespec until = ncmp_deadline_ts(CLOCK_REALTIME, timeout_ms);
    int rc = 0, committing;

    pthread_mutex_lock(&pool->lock);
    while (pool->nfree == 0 && rc == 0)
        rc = pthread_cond_timedwait(&pool->freed, &pool->lock, &until);
    if (pool->nfree == 0) {
        pthread_mutex_unlock(&pool->lock);
        return ncmp_err_set(err, NCMP_ERR_RETRY,
                            "no database connection came free within %d ms "
                            "(rest.db-connections)",
                            timeout_ms);
    }
    *db = pool->free_dbs[--pool->nfree];
    committing = pool->committing[pool->nfree];
    pthread_mutex_unlock(&pool->lock);
    if (committing) {
        PGresult *res = NULL;
        ncmp_err cerr;
        /* a read-only transaction's end: its answer is out whatever this says */
        if (ncmp_db_receive(*db, &res, &cerr) != 0)
            log_warn("rest", "ending a read: %s", cerr.msg);
        PQclear(res);
    }
    return 0;
}

static void pool_put(rest_pool *pool, ncmp_db *db, int committing)
{
    pthread_mutex_lock(&pool->lock);
    pool->committing[pool->nfree] = (unsigned char)committing;
    pool->free_dbs[pool->nfree++] = db;
    pthread_cond_signal(&pool->freed);
    pthread_mutex_unlock(&pool->lock);
}

void rest_pool_put(rest_pool *pool, ncmp_db *db)
{
    pool_put(pool, db, 0);
}

void rest_pool_put_ending(rest_pool *pool, ncmp_db *db, const char *end)
{
    ncmp_err err;

    if (ncmp_db_send(db, end, &err) != 0) {
        log_warn("rest", "ending a read: %s", err.msg);
        ncmp_db_rollback(db);
        pool_put(pool, db, 0);
        return;
    }
    pool_put(pool, db, 1);
}

void rest_db_answer_error(ncmp_http_request *req, const ncmp_err *err)
{
    switch (err->cls) {
    case NCMP_ERR_REJECT:
        ncmp_http_respond_error(req, 400, "Invalid request", err->msg);
        break;
    case NCMP_ERR_RETRY:
        /* no pooled connection came free in time, or PostgreSQL is away:
         * nothing was done, the client may come back */
        log_warn("rest", "%s %s: %s", ncmp_http_method(req), ncmp_http_path(req), err->msg);
        ncmp_http_respond_busy(req, "db", "Database unavailable", err->msg);
        break;
    default:
        log_error("rest", "%s %s: %s", ncmp_http_method(req), ncmp_http_path(req), err->msg);
        ncmp_http_respond_error(req, 500, "Internal error", err->msg);
        break;
    }
}

/* --- streaming a JSON array from a cursor -------------------------------- */

/* Every query of the role: read-only, timestamps in ISO and UTC (the row
 * formatters rely on it), a cursor planned to be read to the end (it is
 * planned for its first rows otherwise), no JIT compilation (a large
 * answer's plan crosses its cost threshold and pays 100 ms or more of
 * compiling for a query that runs in less), and what is left of the
 * request's budget as its statement_timeout. Sent with the query itself:
 * one round trip (ncmp_db_pipeline); the settings prepared, as they are
 * the same every time but for the timeout. */
static const char SQL_BEGIN[] = "BEGIN READ ONLY";
/* A read whose check (rest_db_check) and query must see one snapshot. */
static const char SQL_BEGIN_SNAPSHOT[] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
#define SETTINGS                                                                                   \
    "SELECT set_config('TimeZone', 'UTC', true), set_config('DateStyle', 'ISO, YMD', true),"       \
    " set_config('cursor_tuple_fraction', '1.0', true), set_config('jit', 'off', true),"           \
    " set_config('statement_timeout', $1, true)"
static const char SQL_SETTINGS[] = SETTINGS;
/* A small read's: its statement keeps one plan, made for any parameters
 * (rest_db_small). */
#define GENERIC ", set_config('plan_cache_mode', 'force_generic_plan', true)"
static const char SQL_SETTINGS_GENERIC[] = SETTINGS GENERIC;
/* A read of rows that lie in the table in its index's order
 * (rest_stream_ops.in_key_order), and the same for a small read. */
static const char SQL_SETTINGS_KEYED[] = SETTINGS ", " REST_DB_KEY_ORDER;
static const char SQL_SETTINGS_KEYED_GENERIC[] = SETTINGS ", " REST_DB_KEY_ORDER GENERIC;

/* A read's transaction: its opening statements, then the caller's. */
typedef struct read_txn {
    char timeout[16];
    const char *timeout_param[1];
    ncmp_db_step steps[5];
} read_txn;

/* What is left of `req`'s rest.query-timeout-ms (INT_MAX when there is no
 * limit); a RETRY error in *err when nothing is. */
static int budget_left(rest_pool *pool, const ncmp_http_request *req, int *left_ms, ncmp_err *err)
{
    double left;

    *left_ms = INT_MAX;
    if (pool->query_timeout_ms <= 0 || !req)
        return 0;
    left = pool->query_timeout_ms - ncmp_http_age_ms(req);
    if (left < 1)
        return ncmp_err_set(
            err, NCMP_ERR_RETRY,
            "the request waited past rest.query-timeout-ms (%d ms) before its query",
            pool->query_timeout_ms);
    *left_ms = (int)left;
    return 0;
}

/* Take a connection for a query of `req`, and write the statements that
 * open its read-only transaction into txn->steps[0..1], its statements cut
 * at what is left of its budget. */
static int query_begin(rest_pool *pool, const ncmp_http_request *req, ncmp_db **db, read_txn *txn,
                       ncmp_err *err)
{
    int left;

    *db = NULL;
    if (budget_left(pool, req, &left, err) != 0 ||
        rest_pool_get(pool, left < POOL_WAIT_MS ? left : POOL_WAIT_MS, db, err) != 0 ||
        budget_left(pool, req, &left, err) != 0)
        return -1;
    snprintf(txn->timeout, sizeof(txn->timeout), "%d", left == INT_MAX ? 0 : left);
    txn->timeout_param[0] = txn->timeout;
    txn->steps[0] = (ncmp_db_step){SQL_BEGIN, 0, NULL, NULL, NULL};
    ncmp_db_statement(*db, "rest_settings", SQL_SETTINGS);
    txn->steps[1] = (ncmp_db_step){NULL, 1, txn->timeout_param, NULL, "rest_settings"};
    return 0;
}

/* Answer a failed read of `req`: one cut by its budget (it waited past it
 * for a connection, or its statement_timeout cancelled its query) is shed
 * as "query-timeout" and says so in the client's terms; anything else as
 * rest_db_answer_error. */
static void answer_read_error(rest_pool *pool, ncmp_http_request *req, const ncmp_err *err)
{
    int cancelled = strstr(err->msg, "(SQLSTATE 57014)") != NULL;
    char details[160];

    if (err->cls != NCMP_ERR_RETRY || (!cancelled && !strstr(err->msg, "rest.query-timeout-ms"))) {
        rest_db_answer_error(req, err);
        return;
    }
    snprintf(details, sizeof(details),
             "the request ran past rest.query-timeout-ms (%d ms from its arrival)%s",
             pool->query_timeout_ms, cancelled ? ": its query was cancelled" : "");
    log_warn("rest", "%s %s: %s", ncmp_http_method(req), ncmp_http_path(req), details);
    ncmp_http_respond_busy(req, "query-timeout", "Request took too long", details);
}

/* How far a worker thread reads ahead of what the client has taken. */
#define READ_AHEAD_BYTES (256 * 1024)

/* A streamed answer. Its rows are read where the request's handler runs:
 * on a worker thread, which reads ahead of the client (READ_AHEAD_BYTES)
 * while the server thread only sends what is there, and has the
 * connection wait (NCMP_HTTP_STREAM_WAIT) when nothing is: a slow query
 * never holds a server thread, nor the other connections it serves. A
 * handler on a server thread (http.worker-threads 0) reads the next block
 * when the last one is sent, as before. */
typedef struct db_stream {
    rest_pool *pool;
    ncmp_db *db; /* NULL once given back; the fetching thread's alone */
    const rest_stream_ops *ops;
    void *state;
    int block_rows;
    char fetch_sql[64]; /* FETCH block_rows FROM rest_cursor */
    int ahead;          /* that FETCH is sent and its result not read yet */
    int last_block;     /* the last FETCH returned fewer rows than asked */
    /* shared by the fetching worker and the server thread (lock) */
    pthread_mutex_t lock;
    pthread_cond_t taken;   /* the client took bytes: room to read ahead */
    ncmp_http_stream *http; /* to wake the connection; NULL: read inline */
    int refs;               /* the stream, and the worker while it reads */
    int gone;               /* the stream is done or its client went away */
    int failed;             /* a read failed: the answer is cut */
    int closed;             /* the tail is in `pending` */
    ncmp_buf pending;       /* formatted, not yet sent */
    size_t sent;            /* bytes of `pending` already sent */
} db_stream;

static void stream_release(db_stream *st, int commit)
{
    ncmp_err err;

    if (!st->db)
        return;
    if (st->ahead) { /* a cut answer: the FETCH in flight is read and dropped */
        PGresult *res = NULL;
        if (ncmp_db_receive(st->db, &res, &err) == 0)
            PQclear(res);
        st->ahead = 0;
    }
    if (commit) {
        rest_pool_put_ending(st->pool, st->db, "COMMIT");
    } else {
        ncmp_db_rollback(st->db);
        rest_pool_put(st->pool, st->db);
    }
    st->db = NULL;
}

/* FETCH the next block, or take `got` (the first, which came with the
 * DECLARE; NULL: none), and format it into `out` (the tail too after the
 * last block); *rows is how many came. The FETCH after it is sent before
 * this one's rows are formatted, so that PostgreSQL reads the next block
 * while the last one travels (a large answer took half again as long
 * without). */
static int stream_fetch(db_stream *st, PGresult *got, ncmp_buf *out, int *rows, ncmp_err *err)
{
    PGresult *res = got;
    int n;

    if (!res) {
        if (!st->ahead && ncmp_db_send(st->db, st->fetch_sql, err) != 0)
            return -1;
        st->ahead = 0;
        if (ncmp_db_receive(st->db, &res, err) != 0)
            return -1;
    }
    n = PQntuples(res);
    st->last_block = n < st->block_rows;
    if (!st->last_block) {
        if (ncmp_db_send(st->db, st->fetch_sql, err) != 0) {
            PQclear(res);
            return -1;
        }
        st->ahead = 1;
    }
    for (int i = 0; i < n; i++)
        st->ops->row(st->state, res, i, out);
    PQclear(res);
    if (st->last_block)
        st->ops->tail(st->state, out);
    if (rows)
        *rows = n;
    return 0;
}

/* Read inline: the next block (or `got`, as stream_fetch) into
 * `pending`, the transaction closed after the last. */
static int stream_fetch_inline(db_stream *st, PGresult *got, int *rows, ncmp_err *err)
{
    if (stream_fetch(st, got, &st->pending, rows, err) != 0)
        return -1;
    if (st->last_block) {
        st->closed = 1;
        stream_release(st, 1);
    }
    return 0;
}

static ssize_t stream_next(void *arg, char *buf, size_t max)
{
    db_stream *st = arg;
    ssize_t out = 0;
    ncmp_err err;

    pthread_mutex_lock(&st->lock);
    while ((size_t)out < max) {
        size_t left = st->pending.len - st->sent;
        if (left) {
            size_t n = left < max - (size_t)out ? left : max - (size_t)out;
            memcpy(buf + out, st->pending.data + st->sent, n);
            st->sent += n;
            out += (ssize_t)n;
            continue;
        }
        ncmp_buf_reset(&st->pending);
        st->sent = 0;
        if (st->closed)
            break;
        if (st->http) { /* the worker reads: what there is, or wait for it */
            if (!out)
                out = st->failed ? -1 : NCMP_HTTP_STREAM_WAIT;
            break;
        }
        if (stream_fetch_inline(st, NULL, NULL, &err) != 0) {
            log_warn("rest", "streamed answer cut: %s", err.msg);
            stream_release(st, 0);
            out = -1;
            break;
        }
    }
    if (st->http)
        pthread_cond_signal(&st->taken); /* room to read ahead */
    pthread_mutex_unlock(&st->lock);
    return out;
}

static void stream_destroy(db_stream *st)
{
    stream_release(st, 0);
    ncmp_buf_free(&st->pending);
    if (st->ops->free)
        st->ops->free(st->state);
    pthread_cond_destroy(&st->taken);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

/* Drop one reference; the last one frees. */
static void stream_unref(db_stream *st)
{
    int last;

    pthread_mutex_lock(&st->lock);
    last = --st->refs == 0;
    pthread_mutex_unlock(&st->lock);
    if (last)
        stream_destroy(st);
}

/* The HTTP side is done with the stream (answered or client gone). */
static void stream_free(void *arg)
{
    db_stream *st = arg;

    pthread_mutex_lock(&st->lock);
    st->gone = 1;
    st->http = NULL; /* freed after this returns: not to be woken */
    pthread_cond_signal(&st->taken);
    pthread_mutex_unlock(&st->lock);
    stream_unref(st);
}

/* On the worker thread that answered: read the rest of the answer ahead
 * of the client, until the last block, a failure, the client gone or the
 * server stopping. */
static void stream_read_ahead(db_stream *st, const ncmp_http_request *req)
{
    ncmp_buf block = NCMP_BUF_INIT;
    ncmp_err err;
    int rc = 0;

    for (;;) {
        pthread_mutex_lock(&st->lock);
        while (!st->gone && st->pending.len - st->sent >= READ_AHEAD_BYTES &&
               !ncmp_http_stopping(req)) {
            struct timespec until = ncmp_deadline_ts(CLOCK_REALTIME, 100);
            pthread_cond_timedwait(&st->taken, &st->lock, &until);
        }
        if (st->gone || ncmp_http_stopping(req)) {
            st->failed = !st->closed;
            if (st->http)
                ncmp_http_stream_wake(st->http);
            pthread_mutex_unlock(&st->lock);
            break;
        }
        pthread_mutex_unlock(&st->lock);
        ncmp_buf_reset(&block);
        rc = stream_fetch(st, NULL, &block, NULL, &err); /* the database, unlocked */
        if (rc != 0)
            log_warn("rest", "streamed answer cut: %s", err.msg);
        pthread_mutex_lock(&st->lock);
        if (st->sent) { /* what was sent goes: the buffer stays within the read-ahead */
            memmove(st->pending.data, st->pending.data + st->sent, st->pending.len - st->sent);
            st->pending.len -= st->sent;
            st->sent = 0;
        }
        ncmp_buf_append(&st->pending, block.data, block.len);
        st->failed = rc != 0;
        st->closed = rc == 0 && st->last_block;
        if (st->http)
            ncmp_http_stream_wake(st->http);
        pthread_mutex_unlock(&st->lock);
        if (rc != 0 || st->last_block)
            break;
    }
    ncmp_buf_free(&block);
    stream_release(st, rc == 0 && st->last_block);
    stream_unref(st);
}

/* The cursor's two steps at `steps`: DECLARE rest_cursor for `sql` (its
 * text in `declare`) and the FETCH of the first block. */
static void cursor_steps(const db_stream *st, ncmp_db_step *steps, ncmp_buf *declare,
                         const char *sql, int nparams, const char *const *params)
{
    ncmp_buf_append_str(declare, "DECLARE rest_cursor NO SCROLL CURSOR FOR ");
    ncmp_buf_append_str(declare, sql);
    steps[0] = (ncmp_db_step){declare->data, nparams, params, NULL, NULL};
    steps[1] = (ncmp_db_step){st->fetch_sql, 0, NULL, NULL, NULL};
}

/* Open the transaction, run the check (when there is one), DECLARE the
 * cursor and FETCH the first block, in one round trip: what can fail for
 * a reason the client should hear about fails here, before the first
 * byte. A small read runs its prepared statement instead of the cursor,
 * and only an answer of a whole block or more is read again through the
 * cursor, in a second round trip. 1: the check said no (nothing
 * formatted). */
static int stream_open(db_stream *st, read_txn *txn, const rest_db_check *check,
                       const rest_db_small *small, const char *sql, int nparams,
                       const char *const *params, int *rows, ncmp_err *err)
{
    ncmp_buf declare = NCMP_BUF_INIT;
    PGresult *res = NULL, *checked = NULL;
    const char **limited = NULL;
    const char *settings = NULL, *settings_sql = NULL; /* NULL: query_begin's */
    char limit[16];
    int rc, n = 2;

    if (check) {
        ncmp_db_statement(st->db, check->stmt, check->sql);
        txn->steps[0].sql = SQL_BEGIN_SNAPSHOT;
        txn->steps[n++] =
            (ncmp_db_step){NULL, check->nparams, check->params, &checked, check->stmt};
    }
    if (st->ops->in_key_order && small) {
        settings = "rest_settings_keyed_generic";
        settings_sql = SQL_SETTINGS_KEYED_GENERIC;
    } else if (st->ops->in_key_order) {
        settings = "rest_settings_keyed";
        settings_sql = SQL_SETTINGS_KEYED;
    } else if (small) {
        settings = "rest_settings_generic";
        settings_sql = SQL_SETTINGS_GENERIC;
    }
    if (settings) {
        ncmp_db_statement(st->db, settings, settings_sql);
        txn->steps[1].stmt = settings;
    }
    if (small) {
        ncmp_db_statement(st->db, small->stmt, small->sql);
        limited = ncmp_xcalloc((size_t)nparams + 1, sizeof(*limited));
        memcpy(limited, params, (size_t)nparams * sizeof(*limited));
        snprintf(limit, sizeof(limit), "%d", st->block_rows);
        limited[nparams] = limit;
        txn->steps[n++] = (ncmp_db_step){NULL, nparams + 1, limited, NULL, small->stmt};
    } else {
        cursor_steps(st, &txn->steps[n], &declare, sql, nparams, params);
        n += 2;
    }
    rc = ncmp_db_pipeline(st->db, txn->steps, (size_t)n, &res, err);
    free(limited);
    if (rc != 0) {
        PQclear(checked);
        goto cleanup;
    }
    if (check) {
        rc = check->holds(check->arg, checked);
        PQclear(checked);
        if (!rc) {
            PQclear(res);
            rc = 1;
            goto cleanup;
        }
    }
    if (small && PQntuples(res) >= st->block_rows) { /* not small: the cursor */
        PQclear(res);
        res = NULL;
        cursor_steps(st, txn->steps, &declare, sql, nparams, params);
        if ((rc = ncmp_db_pipeline(st->db, txn->steps, 2, &res, err)) != 0)
            goto cleanup;
    }
    st->ops->head(st->state, &st->pending);
    rc = stream_fetch_inline(st, res, rows, err);
cleanup:
    ncmp_buf_free(&declare);
    return rc;
}

int rest_db_stream_checked(ncmp_http_request *req, rest_pool *pool, const rest_db_check *check,
                           const rest_db_small *small, const char *sql, int nparams,
                           const char *const *params, int block_rows, const rest_stream_ops *ops,
                           void *state)
{
    db_stream *st = ncmp_xcalloc(1, sizeof(*st));
    int rows = 0, ahead, rc = 0;
    read_txn txn;
    ncmp_err err;

    st->pool = pool;
    st->block_rows = block_rows;
    snprintf(st->fetch_sql, sizeof(st->fetch_sql), "FETCH %d FROM rest_cursor", block_rows);
    st->ops = ops;
    st->state = state;
    st->refs = 1;
    pthread_mutex_init(&st->lock, NULL);
    pthread_cond_init(&st->taken, NULL);
    if (query_begin(pool, req, &st->db, &txn, &err) != 0 ||
        (rc = stream_open(st, &txn, check, small, sql, nparams, params, &rows, &err)) < 0) {
        stream_destroy(st);
        answer_read_error(pool, req, &err);
        return 0;
    }
    if (rc == 1) { /* nothing answered */
        stream_destroy(st);
        return 1;
    }
    if (rows == 0 && ops->empty && ops->empty(state, req)) {
        stream_destroy(st);
        return 0;
    }
    /* more to read, and a worker thread to read it on: it reads ahead */
    ahead = !st->closed && ncmp_http_on_worker(req);
    if (ahead)
        st->refs = 2;
    pthread_mutex_lock(&st->lock);
    st->http = ncmp_http_respond_stream(req, 200,
                                        ops->content_type ? ops->content_type : "application/json",
                                        64 * 1024, stream_next, st, stream_free);
    if (!ahead)
        st->http = NULL;
    pthread_mutex_unlock(&st->lock);
    if (ahead)
        stream_read_ahead(st, req);
    return 0;
}

void rest_db_stream(ncmp_http_request *req, rest_pool *pool, const char *sql, int nparams,
                    const char *const *params, int block_rows, const rest_stream_ops *ops,
                    void *state)
{
    rest_db_stream_checked(req, pool, NULL, NULL, sql, nparams, params, block_rows, ops, state);
}

/* A JSON array of rows, each written by a rest_row_fn. */
typedef struct array_state {
    rest_row_fn fmt;
    int emitted; /* a row is out: the next one needs a ',' */
} array_state;

static void array_head(void *arg, ncmp_buf *out)
{
    (void)arg;
    ncmp_buf_append_char(out, '[');
}

static void array_row(void *arg, const PGresult *res, int row, ncmp_buf *out)
{
    array_state *a = arg;

    if (a->emitted)
        ncmp_buf_append_char(out, ',');
    a->fmt(res, row, out);
    a->emitted = 1;
}

static void array_tail(void *arg, ncmp_buf *out)
{
    (void)arg;
    ncmp_buf_append_char(out, ']');
}

static const rest_stream_ops array_ops = {array_head, array_row, array_tail, NULL, free, NULL, 0};

void rest_db_stream_array(ncmp_http_request *req, rest_pool *pool, const char *sql, int nparams,
                          const char *const *params, int block_rows, rest_row_fn fmt)
{
    array_state *a = ncmp_xcalloc(1, sizeof(*a));

    a->fmt = fmt;
    rest_db_stream(req, pool, sql, nparams, params, block_rows, &array_ops, a);
}

void rest_db_answer_one(ncmp_http_request *req, rest_pool *pool, const char *sql, int nparams,
                        const char *const *params, rest_row_fn fmt,
                        void (*missing)(ncmp_http_request *req, const void *arg),
                        const void *missing_arg)
{
    ncmp_db *db = NULL;
    PGresult *res = NULL;
    ncmp_buf out = NCMP_BUF_INIT;
    read_txn txn;
    ncmp_err err;
    int rc = query_begin(pool, req, &db, &txn, &err);

    if (rc == 0) {
        txn.steps[2] = (ncmp_db_step){sql, nparams, params, NULL, NULL};
        rc = ncmp_db_pipeline(db, txn.steps, 3, &res, &err);
    }
    if (rc != 0) {
        if (db) {
            ncmp_db_rollback(db);
            rest_pool_put(pool, db);
        }
        answer_read_error(pool, req, &err);
        return;
    }
    rest_pool_put_ending(pool, db, "COMMIT");
    if (PQntuples(res) == 0) {
        missing(req, missing_arg);
    } else {
        fmt(res, 0, &out);
        ncmp_http_respond_json(req, 200, &out);
    }
    PQclear(res);
}
