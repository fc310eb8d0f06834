/*
 * The rest role's database side: a pool of connections shared by the
 * HTTP server threads, and JSON arrays streamed from a cursor.
 *
 * A streamed answer reads its rows in blocks (FETCH n) inside one
 * read-only transaction and holds its connection until the last byte is
 * sent, so memory stays flat whatever the size of the answer. The blocks
 * after the first are read on the worker thread that ran the handler, at
 * most 256 KB ahead of the client, while the server thread only sends
 * what is there: the database never holds a server thread. A query
 * error before the first byte becomes the HTTP status (rest_db_answer_error);
 * one after it cuts the chunked body, which the client sees as an error.
 * Every query has what is left of rest.query-timeout-ms as its
 * statement_timeout: past it the request is answered 503 with Retry-After.
 */
#ifndef NCMPD_REST_DB_H
#define NCMPD_REST_DB_H

#include "ncmp_buf.h"
#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_err.h"
#include "ncmp_http.h"

typedef struct rest_pool rest_pool;

/* Open `rest.db-connections` connections. On success *pool is owned by
 * the caller (rest_pool_destroy). */
int rest_pool_new(rest_pool **pool, const ncmp_config *cfg, ncmp_err *err);
void rest_pool_destroy(rest_pool *pool);

/* Take a connection, waiting up to `timeout_ms` (RETRY when none came
 * free). Give it back with rest_pool_put. */
int rest_pool_get(rest_pool *pool, int timeout_ms, ncmp_db **db, ncmp_err *err);
void rest_pool_put(rest_pool *pool, ncmp_db *db);

/* Give back a connection whose transaction is to end with `end` ("COMMIT"
 * of a read-only transaction, or "ROLLBACK"): it is sent, and the next
 * taker reads its answer, so that no request waits for the round trip
 * (nothing a read-only transaction did can fail to commit; a lost
 * connection is found by the next taker). Not for a write, whose commit
 * must be known before it is answered. */
void rest_pool_put_ending(rest_pool *pool, ncmp_db *db, const char *end);

/* Answer a database failure: REJECT (bad data in the request, e.g. an
 * invalid regular expression) is 400, RETRY (database away) 503, anything
 * else 500. */
void rest_db_answer_error(ncmp_http_request *req, const ncmp_err *err);

/* Append row `row` of `res` to `out` as one JSON value (rest_json.h). */
typedef void (*rest_row_fn)(const PGresult *res, int row, ncmp_buf *out);

/* Run `sql` (parameters $1..$nparams as text, copied; a NULL is SQL NULL)
 * and stream its rows as a JSON array, each written by `fmt`. `block_rows`
 * rows are fetched at a time. Queries run in a read-only transaction with
 * TimeZone UTC and DateStyle ISO. Answers the request in every case (200
 * with the array, or an error). */
void rest_db_stream_array(ncmp_http_request *req, rest_pool *pool, const char *sql, int nparams,
                          const char *const *params, int block_rows, rest_row_fn fmt);

/* A streamed answer of any shape: `head` before the first row, `row` for
 * each, `tail` after the last, all appending to the body. `empty`, when
 * set, is asked when the query returned no row at all: it may answer the
 * request itself (a 404) and return 1, or return 0 to send head and tail.
 * `free` (may be NULL) releases the state when the answer is done. */
typedef struct rest_stream_ops {
    void (*head)(void *state, ncmp_buf *out);
    void (*row)(void *state, const PGresult *res, int row, ncmp_buf *out);
    void (*tail)(void *state, ncmp_buf *out);
    int (*empty)(void *state, ncmp_http_request *req);
    void (*free)(void *state);
    const char *content_type; /* NULL: application/json */
    /* the rows read lie in the table in the order of the index the query
     * reads them by (the CPS store's fragments, written by COPY in key
     * order): planned with REST_DB_KEY_ORDER */
    int in_key_order;
} rest_stream_ops;

/* The planner's setting, for the transaction, of a read whose rows lie in
 * the table in its index's order. PostgreSQL prices an index scan by the
 * correlation of the column with the table's order over the whole table;
 * the CPS store's anchors share their paths, so the correlation of path
 * is low (0.56), though each anchor's rows were written in key order. It
 * took the 86,001 rows of an anchor by a parallel scan of the whole
 * table and a sort on disk (75-95 ms) rather than by the key's range in
 * its order (23-26 ms, the heap read in order): with random_page_cost at
 * 1.1, what a table held in memory or on SSD costs, it takes the key. An
 * expression of a SELECT list. */
#define REST_DB_KEY_ORDER "set_config('random_page_cost', '1.1', true)"

/* rest_db_stream_array with the body written by `ops` on `state` (owned
 * by the stream from here on: ops->free releases it in every case). */
void rest_db_stream(ncmp_http_request *req, rest_pool *pool, const char *sql, int nparams,
                    const char *const *params, int block_rows, const rest_stream_ops *ops,
                    void *state);

/* What a caller of rest_db_stream_checked assumed (an anchor's id it
 * remembered, say), checked in the read's own round trip: the prepared
 * statement `stmt` (`sql`, registered on the connection) runs first, in
 * the read's snapshot, and `holds(arg, its result)` says whether the
 * assumption holds. */
typedef struct rest_db_check {
    const char *stmt, *sql;
    int nparams;
    const char *const *params;
    int (*holds)(void *arg, const PGresult *res);
    void *arg;
} rest_db_check;

/* A read that is most often smaller than a block: `stmt`, registered on
 * the connection as `sql` (the read's query with " LIMIT $n+1" appended,
 * n its parameters), runs prepared with one plan made for any parameters
 * (plan_cache_mode force_generic_plan: PostgreSQL would otherwise plan
 * each execution anew, as it does each cursor), so the query must be one
 * whose best plan does not depend on its values; an answer of a whole
 * block or more is read again through the cursor. */
typedef struct rest_db_small {
    const char *stmt, *sql;
} rest_db_small;

/* rest_db_stream with `check` (NULL: none) in the same round trip as the
 * query, in one snapshot (REPEATABLE READ), and the query run as `small`
 * says (NULL: a cursor). When the check does not hold nothing is
 * answered, `state` is freed all the same, and 1 is returned (the caller
 * asks again without its assumption); 0 otherwise, the request answered. */
int rest_db_stream_checked(ncmp_http_request *req, rest_pool *pool, const rest_db_check *check,
                           const rest_db_small *small, const char *sql, int nparams,
                           const char *const *params, int block_rows, const rest_stream_ops *ops,
                           void *state);

/* Run `sql` expecting at most one row; answer 200 with it written by
 * `fmt`, or call `missing(req, arg)` when there is no row. */
void rest_db_answer_one(ncmp_http_request *req, rest_pool *pool, const char *sql, int nparams,
                        const char *const *params, rest_row_fn fmt,
                        void (*missing)(ncmp_http_request *req, const void *arg),
                        const void *missing_arg);

#endif
