/*
 * ncmp_db and ncmp_migrate on the real PostgreSQL: migrations applied once
 * and in order, a failing one named with the database's error, error
 * classes, COPY, and prepared statements that survive a lost connection;
 * and that the search index's cleanup can use its index.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_util.h"
#include "ncmp_migrate.h"
#include "ncmp_pgarray.h"
#include "modsync.h"
#include "search_index.h"

/* A scratch database of its own for each migration test. */
typedef struct scratch {
    char name[96];
    char url[512];
    ncmp_db *admin;
    ncmp_db *db;
} scratch;

static void scratch_open(scratch *s)
{
    char sql[256];
    ncmp_err err;
    const char *base = it_db_url();
    const char *slash = strrchr(base, '/');

    it_unique(s->name, sizeof(s->name), "it_mig");
    for (char *p = s->name; *p; p++)
        if (*p == '-')
            *p = '_';
    s->admin = it_db();
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s", s->name);
    cr_assert_eq(ncmp_db_exec(s->admin, sql, &err), 0, "%s", err.msg);
    cr_assert_not_null(slash, "NCMP_TEST_DB_URL must be a URL ending in /dbname");
    snprintf(s->url, sizeof(s->url), "%.*s/%s", (int)(slash - base), base, s->name);
    cr_assert_eq(ncmp_db_open(&s->db, s->url, NULL, 10, &err), 0, "%s", err.msg);
}

/* A scratch database with every migration applied. */
static void scratch_migrated(scratch *s)
{
    ncmp_err err;

    scratch_open(s);
    cr_assert_eq(ncmp_migrate_run(s->db, ncmp_migrations, NULL, &err), 0, "%s", err.msg);
}

static void scratch_close(scratch *s)
{
    char sql[256];
    ncmp_err err;
    ncmp_db_close(s->db);
    snprintf(sql, sizeof(sql), "DROP DATABASE %s", s->name);
    cr_assert_eq(ncmp_db_exec(s->admin, sql, &err), 0, "%s", err.msg);
    ncmp_db_close(s->admin);
}

Test(migrate, applies_every_migration_once_in_order, .timeout = 60)
{
    scratch s;
    ncmp_err err;
    int applied = -1;
    int total = 0;

    for (const ncmp_migration *m = ncmp_migrations; m->name; m++)
        total++;
    scratch_open(&s);
    cr_assert_eq(ncmp_migrate_run(s.db, ncmp_migrations, &applied, &err), 0, "%s", err.msg);
    cr_assert_eq(applied, total);
    cr_assert_eq(it_query_long(s.db, "SELECT count(*) FROM schema_migrations", 0, NULL), total);
    cr_assert_eq(ncmp_migrate_run(s.db, ncmp_migrations, &applied, &err), 0, "%s", err.msg);
    cr_assert_eq(applied, 0, "a second run applies nothing");
    cr_assert_eq(it_query_long(s.db,
                               "SELECT count(*) FROM information_schema.tables "
                               "WHERE table_name IN ('consumer_offsets', 'ingest_event')",
                               0, NULL),
                 2);
    scratch_close(&s);
}

Test(migrate, failed_migration_names_its_file_and_the_error, .timeout = 60)
{
    scratch s;
    ncmp_err err;
    int applied = -1;
    const ncmp_migration list[] = {
        {"0001_ok.sql", "CREATE TABLE mig_a (x int);"},
        {"0002_bad.sql", "CREATE TABLE mig_b (x int); CREATE TABLE mig_c (y nosuchtype);"},
        {"0003_later.sql", "CREATE TABLE mig_d (x int);"},
        {NULL, NULL},
    };

    scratch_open(&s);
    cr_assert_eq(ncmp_migrate_run(s.db, list, &applied, &err), -1);
    cr_assert(strstr(err.msg, "0002_bad.sql") != NULL, "message names the file: %s", err.msg);
    cr_assert(strstr(err.msg, "nosuchtype") != NULL, "message has the database error: %s", err.msg);
    cr_assert_eq(it_query_long(s.db, "SELECT count(*) FROM schema_migrations", 0, NULL), 1);
    cr_assert_eq(it_query_long(s.db,
                               "SELECT count(*) FROM information_schema.tables "
                               "WHERE table_name IN ('mig_b', 'mig_c', 'mig_d')",
                               0, NULL),
                 0, "the failed migration was rolled back whole and nothing after it ran");
    scratch_close(&s);
}

Test(migrate, a_changed_migration_is_refused, .timeout = 60)
{
    scratch s;
    ncmp_err err;
    const ncmp_migration v1[] = {{"0001_a.sql", "CREATE TABLE mig_a (x int);"}, {NULL, NULL}};
    const ncmp_migration v2[] = {{"0001_a.sql", "CREATE TABLE mig_a (x bigint);"}, {NULL, NULL}};

    scratch_open(&s);
    cr_assert_eq(ncmp_migrate_run(s.db, v1, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_migrate_run(s.db, v2, NULL, &err), -1);
    cr_assert(strstr(err.msg, "changed") != NULL, "%s", err.msg);
    scratch_close(&s);
}

/* The first column of each row `sql` returns, a line each. */
static void rows_of(ncmp_db *db, const char *sql, int nparams, const char *const *params,
                    ncmp_buf *out)
{
    ncmp_err err;
    PGresult *res = NULL;

    cr_assert_eq(ncmp_db_query(db, sql, nparams, params, &res, &err), 0, "%s", err.msg);
    ncmp_buf_reset(out);
    for (int i = 0; i < PQntuples(res); i++)
        ncmp_buf_appendf(out, "%s\n", PQgetvalue(res, i, 0));
    PQclear(res);
}

/* `value` of each row of `sql` (its columns named `columns`), sorted
 * bytewise, a line each. */
static void sorted_rows_of(ncmp_db *db, const char *value, const char *columns, const char *sql,
                           int nparams, const char *const *params, ncmp_buf *out)
{
    ncmp_buf q = NCMP_BUF_INIT;

    ncmp_buf_appendf(&q, "SELECT %s FROM (%s) AS q(%s) ORDER BY %s COLLATE \"C\"", value, sql,
                     columns, value);
    rows_of(db, q.data, nparams, params, out);
    ncmp_buf_free(&q);
}

/* PostgreSQL's plan of `query` (no parameters), a line each. */
static void plan_of(ncmp_db *db, const char *query, ncmp_buf *plan)
{
    ncmp_buf sql = NCMP_BUF_INIT;

    ncmp_buf_appendf(&sql, "EXPLAIN %s", query);
    rows_of(db, sql.data, 0, NULL, plan);
    ncmp_buf_free(&sql);
}

/* The search index's minute cleanup of old change rows can use the index
 * on their time (migration 0015): with sequential scans priced out, its
 * plan names the index. A volatile function in the condition, or no index,
 * leaves a sequential scan. */
Test(migrate, the_change_cleanup_can_use_the_index_on_their_time, .timeout = 60)
{
    scratch s;
    ncmp_err err;
    ncmp_buf plan = NCMP_BUF_INIT;

    scratch_migrated(&s);
    cr_assert_eq(ncmp_db_exec(s.db, "SET enable_seqscan = off", &err), 0, "%s", err.msg);
    plan_of(s.db, search_index_cleanup_sql, &plan);
    cr_expect(strstr(plan.data, "Index Scan") && strstr(plan.data, "inventory_change_at"),
              "the cleanup does not use the index on `at`:\n%s", plan.data);
    ncmp_buf_free(&plan);
    scratch_close(&s);
}

/* The rows of inventory_change as "kind:key,key,..." lines, in the order
 * they were written (the keys of a row sorted). */
static const char SQL_CHANGE_ROWS[] =
    "SELECT kind::text || ':' || array_to_string(ARRAY(SELECT k FROM"
    " unnest(COALESCE(keys, ARRAY[key])) AS k ORDER BY k), ',')"
    " FROM inventory_change ORDER BY at, ctid";

/* The search index's feed (migration 0019): one row per statement with
 * every key it touched, none for a statement that touched nothing; and
 * the index's own query reads the keys back, rows of the old form too. */
Test(migrate, the_search_feed_has_a_row_per_statement_with_its_keys, .timeout = 60)
{
    scratch s;
    ncmp_err err;
    ncmp_buf got = NCMP_BUF_INIT;
    PGresult *res = NULL;
    const char *params[1];

    scratch_migrated(&s);
    cr_assert_eq(ncmp_db_query(s.db, "SELECT pg_current_snapshot()::text", 0, NULL, &res, &err), 0,
                 "%s", err.msg);
    char *snapshot = strdup(PQgetvalue(res, 0, 0));
    PQclear(res);
    cr_assert_eq(ncmp_db_exec(s.db,
                              "INSERT INTO cm_handle (id, state) VALUES ('ch-1', 'ADVISED'),"
                              " ('ch-2', 'ADVISED'), ('ch-3', 'ADVISED');"
                              "UPDATE cm_handle SET state = 'READY' WHERE id = 'none';"
                              "UPDATE cm_handle SET state = 'READY' WHERE id <> 'ch-2';"
                              "DELETE FROM cm_handle WHERE id = 'ch-3';"
                              "INSERT INTO yang_resource (checksum, module_name, revision, source)"
                              " VALUES ('c1', 'm1', '', ''), ('c2', 'm2', '', '');"
                              "INSERT INTO module_set (tag) VALUES ('tagA');"
                              "INSERT INTO module_set_member SELECT id, c, c, '' FROM module_set,"
                              " (VALUES ('c1'), ('c2')) AS v(c);"
                              /* a row as migration 0014 wrote them */
                              "INSERT INTO inventory_change (kind, key) VALUES ('h', 'ch-old')",
                              &err),
                 0, "%s", err.msg);
    rows_of(s.db, SQL_CHANGE_ROWS, 0, NULL, &got);
    cr_expect_str_eq(got.data, "h:ch-1,ch-2,ch-3\nh:ch-1,ch-3\nh:ch-3\nm:1\nh:ch-old\n");
    /* each key once */
    params[0] = snapshot;
    sorted_rows_of(s.db, "kind::text || ':' || key", "kind, key", search_index_changes_sql, 1,
                   params, &got);
    cr_expect_str_eq(got.data, "h:ch-1\nh:ch-2\nh:ch-3\nh:ch-old\nm:1\n");
    free(snapshot);
    ncmp_buf_free(&got);
    scratch_close(&s);
}

/* The module-sync sweep: every sweep's query, the retries, is answered
 * through the index of module_sync_retry, not by a scan of the inventory;
 * the scan for handles left past the grace period runs every half grace
 * period. Both find what is due, and a due row whose handle is READY or
 * gone is not taken for a retry. */
Test(migrate, the_sweep_finds_its_retries_through_an_index, .timeout = 60)
{
    scratch s;
    ncmp_err err;
    ncmp_buf got = NCMP_BUF_INIT;
    const char *grace[1] = {"60000"};

    scratch_migrated(&s);
    cr_assert_eq(
        ncmp_db_exec(s.db,
                     "INSERT INTO cm_handle (id, state, module_set_tag)"
                     " SELECT 'ch-' || g, 'READY', 'tagA' FROM generate_series(1, 20000) g;"
                     "INSERT INTO cm_handle (id, state, lock_reason)"
                     " SELECT 'wait-' || g, 'LOCKED', 'MODULE_SYNC_FAILED'"
                     " FROM generate_series(1, 20000) g;"
                     "INSERT INTO module_sync_retry (id, due_at)"
                     " SELECT 'wait-' || g, now() + interval '1 hour'"
                     " FROM generate_series(1, 20000) g;"
                     "INSERT INTO cm_handle (id, state, lock_reason) VALUES"
                     " ('due-1', 'LOCKED', 'MODULE_SYNC_FAILED'),"
                     " ('due-2', 'LOCKED', 'MODULE_UPGRADE_FAILED'),"
                     " ('later', 'LOCKED', 'MODULE_SYNC_FAILED');"
                     "INSERT INTO module_sync_retry (id, due_at) VALUES"
                     " ('due-1', now() - interval '1 second'),"
                     " ('due-2', now() - interval '1 minute'),"
                     " ('later', now() + interval '1 hour'),"
                     " ('ch-5', now() - interval '1 second'),"
                     " ('gone', now() - interval '1 second');"
                     "INSERT INTO cm_handle (id, state, last_update_time) VALUES"
                     " ('lost', 'ADVISED', now() - interval '2 minutes'),"
                     " ('new', 'ADVISED', now());"
                     "ANALYZE cm_handle; ANALYZE module_sync_retry",
                     &err),
        0, "%s", err.msg);
    plan_of(s.db, modsync_sql_due_retries, &got);
    cr_expect(strstr(got.data, "module_sync_retry_due") && !strstr(got.data, "Seq Scan"),
              "the sweep's retries are not read through the index of module_sync_retry:\n%s",
              got.data);
    sorted_rows_of(s.db, "id", "tag, id, retry", modsync_sql_due_retries, 0, NULL, &got);
    cr_expect_str_eq(got.data, "due-1\ndue-2\n");
    sorted_rows_of(s.db, "id", "tag, id, retry", modsync_sql_due_all, 1, grace, &got);
    cr_expect_str_eq(got.data, "due-1\ndue-2\nlost\n");
    cr_expect_eq(modsync_missed_interval_ms(5000, 60000), 30000);
    cr_expect_eq(modsync_missed_interval_ms(5000, 6000), 5000);
    cr_expect_eq(modsync_missed_interval_ms(200, 0), 200);
    ncmp_buf_free(&got);
    scratch_close(&s);
}

/* An instance upgraded with handles waiting for a retry keeps their next
 * attempt's time: migration 0020 moves it from cm_handle.next_sync_at to
 * module_sync_retry. The migrations before it are applied first, then the
 * rest to a database holding such handles. */
Test(migrate, handles_waiting_for_a_retry_keep_it_through_the_upgrade, .timeout = 60)
{
    enum { MAX = 64 };
    scratch s;
    ncmp_err err;
    ncmp_migration before[MAX];
    ncmp_buf got = NCMP_BUF_INIT;
    size_t n = 0;

    while (ncmp_migrations[n].name && strncmp(ncmp_migrations[n].name, "0020_", 5) != 0) {
        cr_assert_lt(n, MAX - 1);
        before[n] = ncmp_migrations[n];
        n++;
    }
    cr_assert_not_null(ncmp_migrations[n].name, "migration 0020 not found");
    before[n] = (ncmp_migration){NULL, NULL};
    scratch_open(&s);
    cr_assert_eq(ncmp_migrate_run(s.db, before, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_db_exec(s.db,
                              "INSERT INTO cm_handle (id, state, lock_reason, next_sync_at) VALUES"
                              " ('waiting', 'LOCKED', 'MODULE_SYNC_FAILED',"
                              "  '2030-01-02 03:04:05+00'),"
                              " ('ready', 'READY', NULL, NULL)",
                              &err),
                 0, "%s", err.msg);
    cr_assert_eq(ncmp_migrate_run(s.db, ncmp_migrations, NULL, &err), 0, "%s", err.msg);
    rows_of(s.db,
            "SELECT id || ' ' || to_char(due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
            " FROM module_sync_retry ORDER BY id",
            0, NULL, &got);
    cr_expect_str_eq(got.data, "waiting 2030-01-02 03:04:05\n");
    cr_expect_eq(it_query_long(s.db, "SELECT count(*) FROM cm_handle", 0, NULL), 2);
    ncmp_buf_free(&got);
    scratch_close(&s);
}

/* cm_handle's updates and heap-only updates counted by this connection
 * so far (flushed or not). */
static void updates_of_inventory(ncmp_db *db, long *updated, long *hot)
{
    ncmp_err err;
    PGresult *res = NULL;

    cr_assert_eq(ncmp_db_query(db,
                               "SELECT pg_stat_get_xact_tuples_updated('cm_handle'::regclass),"
                               " pg_stat_get_xact_tuples_hot_updated('cm_handle'::regclass)",
                               0, NULL, &res, &err),
                 0, "%s", err.msg);
    *updated = atol(PQgetvalue(res, 0, 0));
    *hot = atol(PQgetvalue(res, 0, 1));
    PQclear(res);
}

/* A retry of module sync against a DMI plugin that stays down writes no
 * index of cm_handle: the sweep's claim writes module_sync_retry alone,
 * and the failure changes no indexed column, so every update of the
 * inventory can be heap-only. Before migration 0020 each retry updated each handle twice
 * and neither update could be heap-only: a long outage grew the table and
 * every index by two row versions per handle per attempt. The first
 * failure (ADVISED -> LOCKED), then five retries, each in its own
 * transaction as the sweep and the worker run them. */
Test(migrate, a_module_sync_retry_rewrites_no_index_of_the_inventory, .timeout = 60)
{
    enum { N = 500, ROUNDS = 6 };
    scratch s;
    ncmp_err err;
    ncmp_buf a[4] = {NCMP_BUF_INIT, NCMP_BUF_INIT, NCMP_BUF_INIT, NCMP_BUF_INIT};
    const char *claim[2], *locked[4], grace[] = "60000";
    char attempts[16], sql[512];
    long upd0, hot0, upd, hot;

    scratch_migrated(&s);
    /* pages kept nine-tenths empty hold every round's version of their
     * rows without pruning, which any open transaction on the server
     * holds back (another test's, in another database): what is measured
     * is whether an update changes an indexed column, not whether its page
     * had room */
    snprintf(sql, sizeof(sql),
             "ALTER TABLE cm_handle SET (fillfactor = 10, autovacuum_enabled = false);"
             "INSERT INTO cm_handle (id, alternate_id, state, module_set_tag, dmi_service_name,"
             " public_properties) SELECT 'ch-' || g, 'alt-' || g, 'ADVISED', 'tagA',"
             " 'http://dmi:8080', jsonb_build_object('segment', g %% 7)"
             " FROM generate_series(1, %d) g; ANALYZE cm_handle",
             N);
    cr_assert_eq(ncmp_db_exec(s.db, sql, &err), 0, "%s", err.msg);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < 4; i++)
            ncmp_pgarray_begin(&a[i]);
        for (int i = 1; i <= N; i++) {
            char v[64];
            snprintf(v, sizeof(v), "ch-%d", i);
            ncmp_pgarray_add_text(&a[0], v);
            ncmp_pgarray_add_text(&a[1], "MODULE_SYNC_FAILED");
            snprintf(v, sizeof(v), "Attempt #%d failed: connection refused", round + 1);
            ncmp_pgarray_add_text(&a[2], v);
            ncmp_pgarray_add_text(&a[3], "5000");
        }
        for (int i = 0; i < 4; i++) {
            ncmp_pgarray_end(&a[i]);
            locked[i] = a[i].data;
        }
        claim[0] = a[0].data;
        claim[1] = grace;
        updates_of_inventory(s.db, &upd0, &hot0);
        cr_assert_eq(ncmp_db_begin(s.db, &err), 0, "%s", err.msg);
        if (round > 0)
            cr_assert_eq(ncmp_db_query(s.db, modsync_sql_claim, 2, claim, NULL, &err), 0, "%s",
                         err.msg);
        cr_assert_eq(ncmp_db_query(s.db, modsync_sql_locked, 4, locked, NULL, &err), 0, "%s",
                     err.msg);
        cr_assert_eq(ncmp_db_commit(s.db, &err), 0, "%s", err.msg);
        updates_of_inventory(s.db, &upd, &hot);
        cr_expect_eq(upd - upd0, N, "round %d: %ld updates of cm_handle, one per handle expected",
                     round, upd - upd0);
        cr_expect_eq(hot - hot0, N, "round %d: %ld of %d updates heap-only", round, hot - hot0, N);
        snprintf(attempts, sizeof(attempts), "%d", round + 1);
        cr_expect_eq(
            it_query_long(s.db,
                          "SELECT count(*) FROM cm_handle h JOIN module_sync_retry r"
                          " USING (id) WHERE h.state = 'LOCKED' AND"
                          " h.sync_attempts = $1::int AND"
                          " r.due_at > now() + interval '4 seconds'",
                          1, (const char *[]){attempts}),
            N, "round %d: every handle LOCKED, its attempt counted, due after the back-off", round);
    }
    for (int i = 0; i < 4; i++)
        ncmp_buf_free(&a[i]);
    scratch_close(&s);
}

Test(db, errors_are_classified, .timeout = 60)
{
    ncmp_db *db = it_db();
    ncmp_err err;

    cr_assert_eq(ncmp_db_exec(db, "CREATE TEMP TABLE t (k int PRIMARY KEY)", &err), 0, "%s",
                 err.msg);
    cr_assert_eq(ncmp_db_exec(db, "INSERT INTO t VALUES (1)", &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_db_exec(db, "INSERT INTO t VALUES (1)", &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT, "unique violation is this input's fault");
    cr_assert(strstr(err.msg, "23505") != NULL, "%s", err.msg);
    cr_assert_eq(ncmp_db_exec(db, "SELEC 1", &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_FATAL, "bad SQL is ours");
    cr_assert_eq(ncmp_db_exec(db, "SELECT 'x'::int", &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT);
    ncmp_db_close(db);
}

Test(db, copy_stores_escaped_text, .timeout = 60)
{
    ncmp_db *db = it_db();
    ncmp_err err;
    const char data[] = "1\ttab\\there\n2\tnew\\nline\n3\t\\N\n";
    PGresult *res = NULL;

    cr_assert_eq(ncmp_db_exec(db, "CREATE TEMP TABLE c (k int, v text)", &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_db_copy(db, "COPY c (k, v) FROM STDIN", data, strlen(data), &err), 0, "%s",
                 err.msg);
    cr_assert_eq(ncmp_db_query(db, "SELECT v FROM c ORDER BY k", 0, NULL, &res, &err), 0);
    cr_assert_eq(PQntuples(res), 3);
    cr_assert_str_eq(PQgetvalue(res, 0, 0), "tab\there");
    cr_assert_str_eq(PQgetvalue(res, 1, 0), "new\nline");
    cr_assert(PQgetisnull(res, 2, 0));
    PQclear(res);
    /* a bad row fails the COPY with a data error and leaves the connection usable */
    cr_assert_eq(ncmp_db_copy(db, "COPY c (k, v) FROM STDIN", "x\ty\n", 4, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT, "%s", err.msg);
    cr_assert_eq(it_query_long(db, "SELECT count(*) FROM c", 0, NULL), 3);
    ncmp_db_close(db);
}

Test(db, prepared_statements_survive_a_lost_connection, .timeout = 60)
{
    ncmp_db *db = it_db();
    ncmp_err err;
    PGresult *res = NULL;
    const char *params[1] = {"41"};
    int rc;

    ncmp_db_statement(db, "plus_one", "SELECT $1::int + 1");
    cr_assert_eq(ncmp_db_run(db, "plus_one", 1, params, &res, &err), 0, "%s", err.msg);
    cr_assert_str_eq(PQgetvalue(res, 0, 0), "42");
    PQclear(res);

    it_db_kill_backend(db);

    rc = ncmp_db_run(db, "plus_one", 1, params, &res, &err);
    if (rc != 0) {
        cr_assert_eq(err.cls, NCMP_ERR_RETRY, "a lost connection is retryable: %s", err.msg);
        rc = ncmp_db_run(db, "plus_one", 1, params, &res, &err);
    }
    cr_assert_eq(rc, 0, "reconnected and prepared again: %s", err.msg);
    cr_assert_str_eq(PQgetvalue(res, 0, 0), "42");
    PQclear(res);
    ncmp_db_close(db);
}

/* ncmp_db_pipeline: the statements run in order in one round trip and the
 * last one's rows come back; the first that fails is the error, the ones
 * after it do not run, and the connection serves on once rolled back. A
 * lost connection is a RETRY, and the next pipeline connects again. */
Test(db, a_pipeline_runs_in_order_and_stops_at_the_first_failure, .timeout = 60)
{
    ncmp_db *db = it_db();
    ncmp_err err;
    PGresult *res = NULL;
    const char *two[1] = {"2"};
    const ncmp_db_step ok[] = {
        {"BEGIN", 0, NULL, NULL, NULL},
        {"CREATE TEMP TABLE pipe_t (x int) ON COMMIT DROP", 0, NULL, NULL, NULL},
        {"INSERT INTO pipe_t SELECT generate_series(1, $1::int)", 1, two, NULL, NULL},
        {"SELECT sum(x), current_setting('transaction_read_only') FROM pipe_t", 0, NULL, NULL,
         NULL},
    };
    const ncmp_db_step bad[] = {
        {"BEGIN", 0, NULL, NULL, NULL},
        {"CREATE TEMP TABLE pipe_u (x int)", 0, NULL, NULL, NULL},
        {"SELECT 1 / (x - x) FROM (VALUES (1)) v(x)", 0, NULL, NULL, NULL},
        {"CREATE TEMP TABLE pipe_never (x int)", 0, NULL, NULL, NULL},
    };
    const ncmp_db_step seven[] = {{"SELECT 7", 0, NULL, NULL, NULL}};

    cr_assert_eq(ncmp_db_pipeline(db, ok, 4, &res, &err), 0, "%s", err.msg);
    cr_assert_str_eq(PQgetvalue(res, 0, 0), "3", "the insert ran before the select");
    PQclear(res);
    cr_assert_eq(PQtransactionStatus(ncmp_db_conn(db)), PQTRANS_INTRANS, "left open, as asked");
    cr_assert_eq(ncmp_db_commit(db, &err), 0, "%s", err.msg);

    res = NULL;
    cr_assert_eq(ncmp_db_pipeline(db, bad, 4, &res, &err), -1);
    cr_assert_null(res);
    cr_assert(strstr(err.msg, "division by zero") != NULL, "the failing statement's error: %s",
              err.msg);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT, "%s", err.msg);
    cr_assert_eq(PQtransactionStatus(ncmp_db_conn(db)), PQTRANS_INERROR);
    ncmp_db_rollback(db);
    cr_assert_eq(it_query_long(db,
                               "SELECT count(*) FROM pg_class WHERE relname IN ('pipe_u', "
                               "'pipe_never') AND relpersistence = 't'",
                               0, NULL),
                 0, "nothing of the failed pipeline is left, nor run after its failure");

    it_db_kill_backend(db);
    if (ncmp_db_pipeline(db, seven, 1, NULL, &err) != 0)
        cr_assert_eq(err.cls, NCMP_ERR_RETRY, "a lost connection is retryable: %s", err.msg);
    cr_assert_eq(ncmp_db_pipeline(db, seven, 1, &res, &err), 0, "connected again: %s", err.msg);
    cr_assert_str_eq(PQgetvalue(res, 0, 0), "7");
    PQclear(res);
    ncmp_db_close(db);
}

/* A step naming a registered statement runs it prepared: prepared before
 * the first pipeline that needs it, not again in the next one, and again
 * on a new connection; a name never registered is an error, nothing sent. */
Test(db, a_pipeline_runs_registered_statements_prepared, .timeout = 60)
{
    ncmp_db *db = it_db();
    ncmp_err err;
    PGresult *res = NULL, *first = NULL;
    const char *params[1] = {"20"};
    const ncmp_db_step steps[] = {
        {"BEGIN", 0, NULL, NULL, NULL},
        {NULL, 1, params, &first, "pipe_plus"},
        {"SELECT count(*) FROM pg_prepared_statements WHERE name = 'pipe_plus'", 0, NULL, NULL,
         NULL},
        {"COMMIT", 0, NULL, NULL, NULL},
    };
    const ncmp_db_step unknown[] = {{"SELECT 1", 0, NULL, NULL, NULL},
                                    {NULL, 0, NULL, NULL, "pipe_never_registered"}};
    PGresult *count = NULL;
    ncmp_db_step counted[4];

    memcpy(counted, steps, sizeof(steps));
    counted[2].out = &count;
    ncmp_db_statement(db, "pipe_plus", "SELECT $1::int + 22");
    for (int round = 0; round < 3; round++) {
        if (round == 2)
            it_db_kill_backend(db);
        if (round == 2 && ncmp_db_pipeline(db, counted, 4, NULL, &err) != 0)
            cr_assert_eq(err.cls, NCMP_ERR_RETRY, "a lost connection is retryable: %s", err.msg);
        cr_assert_eq(ncmp_db_pipeline(db, counted, 4, NULL, &err), 0, "round %d: %s", round,
                     err.msg);
        cr_assert_str_eq(PQgetvalue(first, 0, 0), "42", "round %d", round);
        cr_assert_str_eq(PQgetvalue(count, 0, 0), "1", "round %d: prepared once, by its name",
                         round);
        PQclear(first);
        PQclear(count);
        first = count = NULL;
    }
    cr_assert_eq(ncmp_db_pipeline(db, unknown, 2, &res, &err), -1);
    cr_assert_null(res);
    cr_assert(strstr(err.msg, "pipe_never_registered") != NULL, "%s", err.msg);
    cr_assert_eq(PQtransactionStatus(ncmp_db_conn(db)), PQTRANS_IDLE, "nothing was sent");
    ncmp_db_close(db);
}

Test(db, a_statement_registered_again_keeps_or_replaces_its_sql, .timeout = 60)
{
    ncmp_db *db = it_db();
    ncmp_err err;
    PGresult *res = NULL;
    const char *params[1] = {"41"};

    ncmp_db_statement(db, "again", "SELECT $1::int + 1");
    cr_assert_eq(ncmp_db_run(db, "again", 1, params, &res, &err), 0, "%s", err.msg);
    PQclear(res);
    /* the same SQL where it runs: still prepared, still runs */
    ncmp_db_statement(db, "again", "SELECT $1::int + 1");
    cr_assert_eq(ncmp_db_run(db, "again", 1, params, &res, &err), 0, "%s", err.msg);
    cr_assert_str_eq(PQgetvalue(res, 0, 0), "42");
    PQclear(res);
    /* other SQL under the name: the new one runs */
    ncmp_db_statement(db, "again", "SELECT $1::int + 2");
    cr_assert_eq(ncmp_db_run(db, "again", 1, params, &res, &err), 0, "%s", err.msg);
    cr_assert_str_eq(PQgetvalue(res, 0, 0), "43");
    PQclear(res);
    ncmp_db_close(db);
}

Test(db, unreachable_server_is_a_retry, .timeout = 60)
{
    ncmp_db *db = NULL;
    ncmp_err err;
    /* port 1 on loopback: nothing listens there */
    cr_assert_eq(ncmp_db_open(&db, "postgresql://nobody@127.0.0.1:1/x", NULL, 2, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_RETRY);
    cr_assert(strstr(err.msg, "cannot connect") != NULL, "%s", err.msg);
    cr_assert_null(db, "output untouched on failure");
}
