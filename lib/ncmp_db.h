/*
 * ncmp_db: one PostgreSQL connection (libpq) with reconnect, prepared
 * statements that survive a reconnect, transactions and COPY.
 *
 * A connection belongs to one thread at a time (a worker owns its own).
 * Errors are classified from SQLSTATE: a lost connection, a serialization
 * failure, a deadlock or a cancelled statement is RETRY; a data or integrity error is REJECT;
 * anything else (a missing table, bad SQL) is FATAL.
 */
#ifndef NCMP_DB_H
#define NCMP_DB_H

#include <libpq-fe.h>
#include <stddef.h>

#include "ncmp_err.h"

typedef struct ncmp_db ncmp_db;

/* Connect. `password` may be NULL or "". On success *db is owned by the
 * caller (ncmp_db_close). A failed first connection is RETRY. */
int ncmp_db_open(ncmp_db **db, const char *url, const char *password, int connect_timeout_s,
                 ncmp_err *err);
void ncmp_db_close(ncmp_db *db);

/* The libpq connection (borrowed); valid until the next reconnect. */
PGconn *ncmp_db_conn(ncmp_db *db);

/* Reconnect if the connection was lost. */
int ncmp_db_ensure(ncmp_db *db, ncmp_err *err);

/* Run SQL with no parameters and no rows wanted (may hold several
 * statements). */
int ncmp_db_exec(ncmp_db *db, const char *sql, ncmp_err *err);

/* Run SQL with text parameters. On success *res (if res is not NULL) is
 * owned by the caller (PQclear). */
int ncmp_db_query(ncmp_db *db, const char *sql, int nparams, const char *const *params,
                  PGresult **res, ncmp_err *err);

/* Register a named statement. It is prepared on the connection when first
 * used, and again after a reconnect. `sql` is copied. Registering a name
 * again with the same SQL changes nothing (so a caller may register
 * where it runs); with other SQL, the new SQL is prepared at the next run. */
void ncmp_db_statement(ncmp_db *db, const char *name, const char *sql);

/* A named statement, for tables of them (static data). */
typedef struct ncmp_db_stmt {
    const char *name;
    const char *sql;
} ncmp_db_stmt;

/* Register every statement of `stmts`, up to an entry whose name is NULL
 * (`stmts` may be NULL). */
void ncmp_db_statements(ncmp_db *db, const ncmp_db_stmt *stmts);

/* Run a registered statement with text parameters; *res as ncmp_db_query. */
int ncmp_db_run(ncmp_db *db, const char *name, int nparams, const char *const *params,
                PGresult **res, ncmp_err *err);

int ncmp_db_begin(ncmp_db *db, ncmp_err *err);
int ncmp_db_commit(ncmp_db *db, ncmp_err *err);
/* Roll back if a transaction is open; never fails (a lost connection has
 * no transaction left to roll back). */
void ncmp_db_rollback(ncmp_db *db);

/* One statement in two halves, so that the server works on it while the
 * caller does something else: send it (no parameters), then receive its
 * one result (*out is the caller's). Nothing else may use the connection
 * in between. */
int ncmp_db_send(ncmp_db *db, const char *sql, ncmp_err *err);
int ncmp_db_receive(ncmp_db *db, PGresult **out, ncmp_err *err);

/* One statement of ncmp_db_pipeline: text parameters, as ncmp_db_query;
 * `out`, when set, gets its result (the caller's). With `stmt` set, the
 * statement registered under that name (ncmp_db_statement) runs prepared
 * instead of `sql`, as ncmp_db_run runs it; a connection that has not
 * prepared it yet does so before the pipeline is sent. */
typedef struct ncmp_db_step {
    const char *sql;
    int nparams;
    const char *const *params;
    PGresult **out;
    const char *stmt;
} ncmp_db_step;

/* Send `n` statements at once and read their results: one round trip to
 * the server where a call each takes n (libpq's pipeline mode). The first
 * that fails is the error in *err and the ones after it are not run; in
 * an open transaction, it is left aborted (ncmp_db_rollback), and no
 * result is handed over. On success each step's `out` gets its result,
 * and *last (may be NULL) the last statement's. */
int ncmp_db_pipeline(ncmp_db *db, const ncmp_db_step *steps, size_t n, PGresult **last,
                     ncmp_err *err);

/* `copy_sql` is "COPY t (cols) FROM STDIN"; `data` is COPY text format. */
int ncmp_db_copy(ncmp_db *db, const char *copy_sql, const char *data, size_t len, ncmp_err *err);

/* The same in steps, for data produced while it is sent (the server
 * stores one block while the next is made): start, put any number of
 * times, end (which reports the COPY's own failure, e.g. a unique
 * violation). After a failed put the COPY is over; after a failure of the
 * caller's own, ncmp_db_copy_abort ends it (the transaction is then
 * failed: roll it back). */
int ncmp_db_copy_start(ncmp_db *db, const char *copy_sql, ncmp_err *err);
int ncmp_db_copy_put(ncmp_db *db, const char *data, size_t len, ncmp_err *err);
int ncmp_db_copy_end(ncmp_db *db, ncmp_err *err);
void ncmp_db_copy_abort(ncmp_db *db, const char *why);

/* Classify a failed result (or a connection without a result). */
ncmp_err_class ncmp_db_classify(PGconn *conn, const PGresult *res);

#endif
