#include "ncmp_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "ncmp_time.h"

typedef struct db_stmt {
    char *name;
    char *sql;
    unsigned prepared_gen;   /* connection generation it was prepared on */
    unsigned replaced_gen;   /* the generation its old SQL is prepared on (0: none) */
    ncmp_histogram *seconds; /* its latency series */
} db_stmt;

struct ncmp_db {
    PGconn *conn;
    unsigned gen; /* bumped on every (re)connect */
    char *url;
    char *password;
    int connect_timeout_s;
    db_stmt *stmts;
    size_t nstmts;
    /* latency series of what is not a registered statement */
    ncmp_histogram *adhoc_seconds;
    ncmp_histogram *begin_seconds;
    ncmp_histogram *commit_seconds;
    ncmp_histogram *copy_seconds;
    double copy_started; /* ncmp_now_ms() of the COPY in progress */
};

static ncmp_histogram *statement_seconds(const char *name)
{
    const char *labels[1] = {name};
    return ncmp_histogram_get(ncmp_metrics_lib_get()->db_statement_seconds, labels);
}

/* Time one round trip into `h`: pass the ncmp_now_ms() taken before it. */
static void observe_since(ncmp_histogram *h, double start_ms)
{
    ncmp_histogram_observe(h, (ncmp_now_ms() - start_ms) / 1000.0);
}

static void strip_newline(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

static int fail(ncmp_db *db, PGresult *res, const char *what, ncmp_err *err)
{
    char msg[NCMP_ERR_MSG_MAX];
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    ncmp_err_class cls = ncmp_db_classify(db->conn, res);

    snprintf(msg, sizeof(msg), "%s", res ? PQresultErrorMessage(res) : PQerrorMessage(db->conn));
    strip_newline(msg);
    if (!*msg)
        snprintf(msg, sizeof(msg), "%s", PQerrorMessage(db->conn));
    strip_newline(msg);
    ncmp_err_set(err, cls, "%s: %s%s%s%s", what, msg, state ? " (SQLSTATE " : "",
                 state ? state : "", state ? ")" : "");
    if (res)
        PQclear(res);
    return -1;
}

ncmp_err_class ncmp_db_classify(PGconn *conn, const PGresult *res)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

    if (!conn || PQstatus(conn) != CONNECTION_OK)
        return NCMP_ERR_RETRY;
    if (!state)
        return NCMP_ERR_RETRY; /* no SQLSTATE: the server went away mid-call */
    if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0 ||
        strncmp(state, "53", 2) == 0 || strcmp(state, "40001") == 0 ||
        strcmp(state, "40P01") == 0 || strcmp(state, "55P03") == 0 ||
        strcmp(state, "57014") == 0) /* cancelled (statement_timeout): nothing done */
        return NCMP_ERR_RETRY;
    if (strncmp(state, "22", 2) == 0 || strncmp(state, "23", 2) == 0)
        return NCMP_ERR_REJECT;
    return NCMP_ERR_FATAL;
}

/* Server notices ("relation exists, skipping") go to the log, not stderr. */
static void notice_cb(void *arg, const char *message)
{
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s", message);
    strip_newline(msg);
    log_debug("db", "%s", msg);
}

static int db_connect(ncmp_db *db, ncmp_err *err)
{
    char timeout[16];
    const char *keys[5];
    const char *vals[5];
    int n = 0;

    snprintf(timeout, sizeof(timeout), "%d", db->connect_timeout_s);
    keys[n] = "dbname";
    vals[n++] = db->url;
    keys[n] = "connect_timeout";
    vals[n++] = timeout;
    keys[n] = "fallback_application_name";
    vals[n++] = "ncmpd";
    if (db->password && *db->password) {
        keys[n] = "password";
        vals[n++] = db->password;
    }
    keys[n] = NULL;
    vals[n] = NULL;

    if (db->conn)
        PQfinish(db->conn);
    db->conn = PQconnectdbParams(keys, vals, 1);
    db->gen++;
    if (PQstatus(db->conn) != CONNECTION_OK) {
        char msg[NCMP_ERR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", PQerrorMessage(db->conn));
        strip_newline(msg);
        return ncmp_err_set(err, NCMP_ERR_RETRY, "cannot connect to PostgreSQL: %s", msg);
    }
    PQsetNoticeProcessor(db->conn, notice_cb, NULL);
    return 0;
}

int ncmp_db_open(ncmp_db **out, const char *url, const char *password, int connect_timeout_s,
                 ncmp_err *err)
{
    ncmp_db *db = ncmp_xcalloc(1, sizeof(*db));

    db->url = ncmp_xstrdup(url);
    db->password = ncmp_xstrdup(password ? password : "");
    db->connect_timeout_s = connect_timeout_s > 0 ? connect_timeout_s : 10;
    db->adhoc_seconds = statement_seconds("adhoc");
    db->begin_seconds = statement_seconds("begin");
    db->commit_seconds = statement_seconds("commit");
    db->copy_seconds = statement_seconds("copy");
    if (db_connect(db, err) != 0) {
        ncmp_db_close(db);
        return -1;
    }
    *out = db;
    return 0;
}

void ncmp_db_close(ncmp_db *db)
{
    if (!db)
        return;
    if (db->conn)
        PQfinish(db->conn);
    for (size_t i = 0; i < db->nstmts; i++) {
        free(db->stmts[i].name);
        free(db->stmts[i].sql);
    }
    free(db->stmts);
    free(db->url);
    free(db->password);
    free(db);
}

PGconn *ncmp_db_conn(ncmp_db *db)
{
    return db->conn;
}

int ncmp_db_ensure(ncmp_db *db, ncmp_err *err)
{
    if (db->conn && PQstatus(db->conn) == CONNECTION_OK)
        return 0;
    log_warn("db", "connection lost; reconnecting");
    ncmp_counter_add(ncmp_counter_get(ncmp_metrics_lib_get()->db_reconnects, NULL), 1);
    return db_connect(db, err);
}

/* ncmp_db_exec, timed into `h`. */
static int exec_timed(ncmp_db *db, const char *sql, ncmp_histogram *h, ncmp_err *err)
{
    PGresult *res;
    double start;

    if (ncmp_db_ensure(db, err) != 0)
        return -1;
    start = ncmp_now_ms();
    res = PQexec(db->conn, sql);
    observe_since(h, start);
    if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
        return fail(db, res, "SQL failed", err);
    PQclear(res);
    return 0;
}

int ncmp_db_exec(ncmp_db *db, const char *sql, ncmp_err *err)
{
    return exec_timed(db, sql, db->adhoc_seconds, err);
}

static int result_ok(PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

int ncmp_db_query(ncmp_db *db, const char *sql, int nparams, const char *const *params,
                  PGresult **out, ncmp_err *err)
{
    PGresult *res;
    double start;

    if (ncmp_db_ensure(db, err) != 0)
        return -1;
    start = ncmp_now_ms();
    res = PQexecParams(db->conn, sql, nparams, NULL, params, NULL, NULL, 0);
    observe_since(db->adhoc_seconds, start);
    if (!result_ok(res))
        return fail(db, res, "query failed", err);
    if (out)
        *out = res;
    else
        PQclear(res);
    return 0;
}

int ncmp_db_send(ncmp_db *db, const char *sql, ncmp_err *err)
{
    if (ncmp_db_ensure(db, err) != 0)
        return -1;
    if (!PQsendQuery(db->conn, sql))
        return fail(db, NULL, "query not sent", err);
    return 0;
}

int ncmp_db_receive(ncmp_db *db, PGresult **out, ncmp_err *err)
{
    PGresult *res = PQgetResult(db->conn), *more;

    while ((more = PQgetResult(db->conn))) /* the end of the query */
        PQclear(more);
    if (!result_ok(res))
        return fail(db, res, "query failed", err);
    *out = res;
    return 0;
}

static db_stmt *stmt_find(ncmp_db *db, const char *name, ncmp_err *err)
{
    for (size_t i = 0; i < db->nstmts; i++)
        if (strcmp(db->stmts[i].name, name) == 0)
            return &db->stmts[i];
    ncmp_err_set(err, NCMP_ERR_FATAL, "statement '%s' was never registered", name);
    return NULL;
}

/* Prepare st on the connection unless it is already (the connection is
 * up). */
static int stmt_ready(ncmp_db *db, db_stmt *st, ncmp_err *err)
{
    PGresult *res;

    if (st->prepared_gen != db->gen) {
        if (st->replaced_gen == db->gen) { /* its old SQL holds the name */
            char sql[256];
            snprintf(sql, sizeof(sql), "DEALLOCATE \"%s\"", st->name);
            res = PQexec(db->conn, sql);
            if (!result_ok(res))
                return fail(db, res, st->name, err);
            PQclear(res);
        }
        st->replaced_gen = 0;
        res = PQprepare(db->conn, st->name, st->sql, 0, NULL);
        if (!result_ok(res))
            return fail(db, res, st->name, err);
        PQclear(res);
        st->prepared_gen = db->gen;
    }
    return 0;
}

/* Where step i's result goes (NULL: dropped). */
static PGresult **step_out(const ncmp_db_step *steps, size_t i, size_t n, PGresult **last)
{
    return i == n - 1 && last ? last : steps[i].out;
}

int ncmp_db_pipeline(ncmp_db *db, const ncmp_db_step *steps, size_t n, PGresult **last,
                     ncmp_err *err)
{
    PGresult *res;
    size_t sent = 0;
    int rc = 0;
    double start;

    for (size_t i = 0; i < n; i++)
        if (step_out(steps, i, n, last))
            *step_out(steps, i, n, last) = NULL;
    if (ncmp_db_ensure(db, err) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        db_stmt *st = steps[i].stmt ? stmt_find(db, steps[i].stmt, err) : NULL;
        if (steps[i].stmt && (!st || stmt_ready(db, st, err) != 0))
            return -1;
    }
    start = ncmp_now_ms();
    if (!PQenterPipelineMode(db->conn))
        return fail(db, NULL, "pipeline not started", err);
    for (; sent < n; sent++) {
        const ncmp_db_step *st = &steps[sent];
        if (!(st->stmt
                  ? PQsendQueryPrepared(db->conn, st->stmt, st->nparams, st->params, NULL, NULL, 0)
                  : PQsendQueryParams(db->conn, st->sql, st->nparams, NULL, st->params, NULL, NULL,
                                      0))) {
            rc = fail(db, NULL, "query not sent", err);
            break;
        }
    }
    if (!PQpipelineSync(db->conn) && rc == 0)
        rc = fail(db, NULL, "pipeline not sent", err);
    /* each statement's result, then the NULL that ends it; then the sync.
     * A lost connection gives an error result and no more. */
    for (size_t i = 0; i < sent && PQstatus(db->conn) == CONNECTION_OK; i++) {
        res = PQgetResult(db->conn);
        if (!res)
            continue;
        if (PQresultStatus(res) == PGRES_PIPELINE_ABORTED) /* after a failure */
            PQclear(res);
        else if (!result_ok(res)) {
            if (rc == 0)
                rc = fail(db, res, "query failed", err);
            else
                PQclear(res);
        } else if (rc == 0 && step_out(steps, i, n, last)) {
            *step_out(steps, i, n, last) = res;
        } else {
            PQclear(res);
        }
        while ((res = PQgetResult(db->conn)))
            PQclear(res);
    }
    while (PQstatus(db->conn) == CONNECTION_OK && (res = PQgetResult(db->conn))) {
        ExecStatusType st = PQresultStatus(res);
        PQclear(res);
        if (st == PGRES_PIPELINE_SYNC)
            break;
    }
    if (!PQexitPipelineMode(db->conn) && rc == 0)
        rc = fail(db, NULL, "pipeline not ended", err);
    observe_since(db->adhoc_seconds, start);
    if (rc == 0 && PQstatus(db->conn) != CONNECTION_OK)
        rc = fail(db, NULL, "pipeline failed", err);
    if (rc != 0)
        for (size_t i = 0; i < n; i++) {
            PGresult **out = step_out(steps, i, n, last);
            if (out) {
                PQclear(*out);
                *out = NULL;
            }
        }
    return rc;
}

void ncmp_db_statements(ncmp_db *db, const ncmp_db_stmt *stmts)
{
    for (const ncmp_db_stmt *s = stmts; s && s->name; s++)
        ncmp_db_statement(db, s->name, s->sql);
}

void ncmp_db_statement(ncmp_db *db, const char *name, const char *sql)
{
    for (size_t i = 0; i < db->nstmts; i++) {
        if (strcmp(db->stmts[i].name, name) == 0) {
            if (strcmp(db->stmts[i].sql, sql) == 0)
                return; /* prepared already, or on its first run */
            free(db->stmts[i].sql);
            db->stmts[i].sql = ncmp_xstrdup(sql);
            if (db->stmts[i].prepared_gen)
                db->stmts[i].replaced_gen = db->stmts[i].prepared_gen;
            db->stmts[i].prepared_gen = 0;
            return;
        }
    }
    db->stmts = ncmp_xrealloc(db->stmts, (db->nstmts + 1) * sizeof(*db->stmts));
    db->stmts[db->nstmts].name = ncmp_xstrdup(name);
    db->stmts[db->nstmts].sql = ncmp_xstrdup(sql);
    db->stmts[db->nstmts].prepared_gen = 0;
    db->stmts[db->nstmts].replaced_gen = 0;
    db->stmts[db->nstmts].seconds = statement_seconds(name);
    db->nstmts++;
}

int ncmp_db_run(ncmp_db *db, const char *name, int nparams, const char *const *params,
                PGresult **out, ncmp_err *err)
{
    db_stmt *st = stmt_find(db, name, err);
    PGresult *res;
    double start;

    if (!st || ncmp_db_ensure(db, err) != 0 || stmt_ready(db, st, err) != 0)
        return -1;
    start = ncmp_now_ms();
    res = PQexecPrepared(db->conn, st->name, nparams, params, NULL, NULL, 0);
    observe_since(st->seconds, start);
    if (!result_ok(res))
        return fail(db, res, st->name, err);
    if (out)
        *out = res;
    else
        PQclear(res);
    return 0;
}

int ncmp_db_begin(ncmp_db *db, ncmp_err *err)
{
    return exec_timed(db, "BEGIN", db->begin_seconds, err);
}

int ncmp_db_commit(ncmp_db *db, ncmp_err *err)
{
    PGresult *res;
    double start;

    if (!db->conn || PQstatus(db->conn) != CONNECTION_OK)
        return ncmp_err_set(err, NCMP_ERR_RETRY, "commit: connection lost");
    start = ncmp_now_ms();
    res = PQexec(db->conn, "COMMIT");
    observe_since(db->commit_seconds, start);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        return fail(db, res, "commit failed", err);
    PQclear(res);
    return 0;
}

void ncmp_db_rollback(ncmp_db *db)
{
    if (db->conn && PQstatus(db->conn) == CONNECTION_OK &&
        PQtransactionStatus(db->conn) != PQTRANS_IDLE)
        PQclear(PQexec(db->conn, "ROLLBACK"));
}

int ncmp_db_copy_start(ncmp_db *db, const char *copy_sql, ncmp_err *err)
{
    PGresult *res;

    if (ncmp_db_ensure(db, err) != 0)
        return -1;
    db->copy_started = ncmp_now_ms();
    res = PQexec(db->conn, copy_sql);
    if (PQresultStatus(res) != PGRES_COPY_IN)
        return fail(db, res, "COPY failed to start", err);
    PQclear(res);
    return 0;
}

int ncmp_db_copy_put(ncmp_db *db, const char *data, size_t len, ncmp_err *err)
{
    const size_t chunk = 1 << 20;

    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        if (PQputCopyData(db->conn, data + off, (int)n) != 1) {
            PQputCopyEnd(db->conn, "client error");
            return fail(db, PQgetResult(db->conn), "COPY data", err);
        }
    }
    return 0;
}

int ncmp_db_copy_end(ncmp_db *db, ncmp_err *err)
{
    PGresult *res;

    if (PQputCopyEnd(db->conn, NULL) != 1)
        return fail(db, NULL, "COPY end", err);
    res = PQgetResult(db->conn);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        int rc = fail(db, res, "COPY failed", err);
        while ((res = PQgetResult(db->conn)))
            PQclear(res);
        return rc;
    }
    PQclear(res);
    while ((res = PQgetResult(db->conn)))
        PQclear(res);
    observe_since(db->copy_seconds, db->copy_started);
    return 0;
}

void ncmp_db_copy_abort(ncmp_db *db, const char *why)
{
    PGresult *res;

    if (PQputCopyEnd(db->conn, why ? why : "aborted") == 1)
        while ((res = PQgetResult(db->conn)))
            PQclear(res);
}

int ncmp_db_copy(ncmp_db *db, const char *copy_sql, const char *data, size_t len, ncmp_err *err)
{
    if (ncmp_db_copy_start(db, copy_sql, err) != 0 || ncmp_db_copy_put(db, data, len, err) != 0)
        return -1;
    return ncmp_db_copy_end(db, err);
}
