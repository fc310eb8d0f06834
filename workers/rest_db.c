#include "rest_db.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncmp_buf.h"
#include "ncmp_log.h"

#define POOL_WAIT_MS 5000

struct rest_pool {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    ncmp_db **free_dbs;
    size_t nfree, n;
};

int rest_pool_new(rest_pool **out, const ncmp_config *cfg, ncmp_err *err)
{
    rest_pool *pool = ncmp_xcalloc(1, sizeof(*pool));

    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->freed, NULL);
    pool->free_dbs = ncmp_xcalloc((size_t)cfg->rest_db_connections, sizeof(*pool->free_dbs));
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
    pthread_cond_destroy(&pool->freed);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

int rest_pool_get(rest_pool *pool, int timeout_ms, ncmp_db **db, ncmp_err *err)
{
    struct timespec until;
    int rc = 0;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
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
    pthread_mutex_unlock(&pool->lock);
    return 0;
}

void rest_pool_put(rest_pool *pool, ncmp_db *db)
{
    pthread_mutex_lock(&pool->lock);
    pool->free_dbs[pool->nfree++] = db;
    pthread_cond_signal(&pool->freed);
    pthread_mutex_unlock(&pool->lock);
}

void rest_db_answer_error(ncmp_http_request *req, const ncmp_err *err)
{
    switch (err->cls) {
    case NCMP_ERR_REJECT:
        ncmp_http_respond_error(req, 400, "Invalid request", err->msg);
        break;
    case NCMP_ERR_RETRY:
        log_warn("rest", "%s %s: %s", ncmp_http_method(req), ncmp_http_path(req), err->msg);
        ncmp_http_respond_error(req, 503, "Database unavailable", err->msg);
        break;
    default:
        log_error("rest", "%s %s: %s", ncmp_http_method(req), ncmp_http_path(req), err->msg);
        ncmp_http_respond_error(req, 500, "Internal error", err->msg);
        break;
    }
}

/* --- streaming a JSON array from a cursor -------------------------------- */

enum { ST_OPEN, ST_ROWS, ST_CLOSE, ST_DONE };

typedef struct db_stream {
    rest_pool *pool;
    ncmp_db *db; /* NULL once given back */
    PGresult *res;
    int row, nrows, block_rows;
    int last_block; /* the last FETCH returned fewer rows than asked */
    size_t off;     /* bytes of the current row already sent */
    int sep_done;   /* the ',' before the current row is out */
    int emitted;    /* a row is out */
    int state;
} db_stream;

static void stream_release(db_stream *st, int commit)
{
    ncmp_err err;

    PQclear(st->res);
    st->res = NULL;
    if (!st->db)
        return;
    if (commit && ncmp_db_commit(st->db, &err) != 0)
        log_warn("rest", "closing a streamed query: %s", err.msg);
    if (!commit)
        ncmp_db_rollback(st->db);
    rest_pool_put(st->pool, st->db);
    st->db = NULL;
}

static int stream_fetch(db_stream *st, ncmp_err *err)
{
    char sql[64];

    PQclear(st->res);
    st->res = NULL;
    snprintf(sql, sizeof(sql), "FETCH %d FROM rest_cursor", st->block_rows);
    if (ncmp_db_query(st->db, sql, 0, NULL, &st->res, err) != 0)
        return -1;
    st->nrows = PQntuples(st->res);
    st->row = 0;
    st->last_block = st->nrows < st->block_rows;
    return 0;
}

/* Copy as much of the current row as fits; returns the bytes copied. */
static size_t stream_row(db_stream *st, char *buf, size_t room)
{
    const char *v = "null";
    size_t len = 4, n;

    if (!PQgetisnull(st->res, st->row, 0)) {
        v = PQgetvalue(st->res, st->row, 0);
        len = (size_t)PQgetlength(st->res, st->row, 0);
    }
    n = len - st->off < room ? len - st->off : room;
    memcpy(buf, v + st->off, n);
    st->off += n;
    if (st->off == len) {
        st->row++;
        st->off = 0;
        st->sep_done = 0;
        st->emitted = 1;
    }
    return n;
}

static ssize_t stream_next(void *arg, char *buf, size_t max)
{
    db_stream *st = arg;
    size_t out = 0;
    ncmp_err err;

    while (out < max && st->state != ST_DONE) {
        if (st->state == ST_OPEN) {
            buf[out++] = '[';
            st->state = ST_ROWS;
        } else if (st->state == ST_CLOSE) {
            buf[out++] = ']';
            st->state = ST_DONE;
            stream_release(st, 1);
        } else if (st->row < st->nrows) {
            if (!st->sep_done) {
                if (st->emitted)
                    buf[out++] = ',';
                st->sep_done = 1;
            } else {
                out += stream_row(st, buf + out, max - out);
            }
        } else if (st->last_block) {
            st->state = ST_CLOSE;
        } else if (stream_fetch(st, &err) != 0) {
            log_warn("rest", "streamed answer cut: %s", err.msg);
            stream_release(st, 0);
            return -1;
        }
    }
    return (ssize_t)out;
}

static void stream_free(void *arg)
{
    db_stream *st = arg;

    stream_release(st, 0);
    free(st);
}

/* BEGIN, DECLARE the cursor, FETCH the first block: what can fail for a
 * reason the client should hear about fails here, before the first byte. */
static int stream_open(db_stream *st, const char *sql, int nparams, const char *const *params,
                       ncmp_err *err)
{
    ncmp_buf declare = NCMP_BUF_INIT;
    int rc;

    /* a cursor is planned for its first rows unless told otherwise; these
     * are read to the end */
    if (ncmp_db_exec(st->db, "BEGIN READ ONLY; SET LOCAL cursor_tuple_fraction = 1.0", err) != 0)
        return -1;
    ncmp_buf_append_str(&declare, "DECLARE rest_cursor NO SCROLL CURSOR FOR ");
    ncmp_buf_append_str(&declare, sql);
    rc = ncmp_db_query(st->db, declare.data, nparams, params, NULL, err);
    ncmp_buf_free(&declare);
    if (rc != 0)
        return -1;
    return stream_fetch(st, err);
}

void rest_db_stream_array(ncmp_http_request *req, rest_pool *pool, const char *sql, int nparams,
                          const char *const *params, int block_rows)
{
    db_stream *st = ncmp_xcalloc(1, sizeof(*st));
    ncmp_err err;

    st->pool = pool;
    st->block_rows = block_rows;
    if (rest_pool_get(pool, POOL_WAIT_MS, &st->db, &err) != 0 ||
        stream_open(st, sql, nparams, params, &err) != 0) {
        stream_free(st);
        rest_db_answer_error(req, &err);
        return;
    }
    ncmp_http_respond_stream(req, 200, "application/json", 64 * 1024, stream_next, st, stream_free);
}

void rest_db_answer_one(ncmp_http_request *req, rest_pool *pool, const char *sql, int nparams,
                        const char *const *params,
                        void (*missing)(ncmp_http_request *req, const void *arg),
                        const void *missing_arg)
{
    ncmp_db *db = NULL;
    PGresult *res = NULL;
    ncmp_err err;

    if (rest_pool_get(pool, POOL_WAIT_MS, &db, &err) != 0 ||
        ncmp_db_query(db, sql, nparams, params, &res, &err) != 0) {
        if (db)
            rest_pool_put(pool, db);
        rest_db_answer_error(req, &err);
        return;
    }
    rest_pool_put(pool, db);
    if (PQntuples(res) == 0 || PQgetisnull(res, 0, 0))
        missing(req, missing_arg);
    else
        ncmp_http_respond(req, 200, "application/json", PQgetvalue(res, 0, 0),
                          (size_t)PQgetlength(res, 0, 0));
    PQclear(res);
}
