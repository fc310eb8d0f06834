/*
 * cps_analyze: fresh planner statistics on the fragment table after bulk
 * writes.
 *
 * PostgreSQL's autovacuum analyzes a table once a tenth of its rows have
 * changed, but it looks at each database only once a minute
 * (autovacuum_naptime). Until it does, the planner knows nothing of rows
 * just stored: right after a load of 258,000 nodes it took a key range
 * of 86,000 rows for 42 and answered a leaf query over 1,000 devices in
 * 13 ms instead of 2.7. The API counts the nodes it writes; once they
 * pass autovacuum's own threshold (50 + a tenth of the table's rows at
 * the last analyze), a thread of its own runs ANALYZE on its table, at
 * most once every CPS_ANALYZE_INTERVAL_S. SKIP_LOCKED: a running
 * autovacuum of the table is neither waited for nor cancelled (it would
 * be, for a lock it blocks); the rows stay counted for the next turn.
 *
 * The API's analyzer runs VACUUM of fragment_store first: the rows near
 * the top of a tree are read from an index that holds their leaves
 * (migrations/0021), without the heap, once VACUUM has marked their pages
 * all-visible (autovacuum would a minute or more later). With the
 * removal of the rows deleted, whose pages COPY fills again and which
 * VACUUM cannot mark while they hold dead entries (without it, the rows
 * of an anchor stored after another was deleted kept their 1,001 heap
 * fetches; with it, 110 ms for a table of 246,000 rows with 112,000
 * deleted, the index scans in parallel workers). No truncation: its lock
 * would stop the reads for a moment. The data sync's partition has no
 * such index.
 */
#include "cps_analyze.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "ncmp_buf.h"
#include "ncmp_db.h"
#include "ncmp_log.h"
#include "ncmp_time.h"

#define CPS_ANALYZE_INTERVAL_S 10

struct cps_analyzer {
    const ncmp_config *cfg;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int started, stopping;
    const char *table;  /* "fragment" or one of its partitions */
    const char *vacuum; /* the partition to VACUUM first, or NULL */
    long pending;       /* nodes written since the last ANALYZE */
    double threshold;   /* pending that makes one due */
};

cps_analyzer *cps_analyzer_new(const ncmp_config *cfg, const char *table, const char *vacuum)
{
    cps_analyzer *a = ncmp_xcalloc(1, sizeof(*a));

    a->cfg = cfg;
    a->table = table;
    a->vacuum = vacuum;
    a->threshold = 50; /* autovacuum's base; the table's share is learnt */
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->wake, NULL);
    return a;
}

/* The rows of table $1 as the last ANALYZE counted them: a partition's
 * own, or the sum over the partitions of the partitioned fragment table
 * (migrations/0017_cps_fragment_cache.sql). */
#define SQL_ROWS                                                                                   \
    "SELECT coalesce(sum(greatest(c.reltuples, 0)), 0) FROM pg_class c"                            \
    " WHERE (c.oid = $1::regclass AND c.relkind = 'r')"                                            \
    " OR c.oid IN (SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent = $1::regclass)"

/* VACUUM when asked, ANALYZE (of a partitioned table: the partitions
 * with it), then the threshold from the table's rows as it left them. */
static int analyze(cps_analyzer *a, ncmp_db **db)
{
    char sql[96];
    PGresult *res = NULL;
    ncmp_err err;

    if (!*db && ncmp_db_open(db, a->cfg->db_url, a->cfg->db_password, a->cfg->db_connect_timeout_s,
                             &err) != 0)
        goto fail;
    if (a->vacuum) {
        snprintf(sql, sizeof(sql), "VACUUM (SKIP_LOCKED, TRUNCATE OFF) %s", a->vacuum);
        if (ncmp_db_exec(*db, sql, &err) != 0)
            goto fail;
    }
    snprintf(sql, sizeof(sql), "ANALYZE (SKIP_LOCKED) %s", a->table);
    if (ncmp_db_exec(*db, sql, &err) != 0 ||
        ncmp_db_query(*db, SQL_ROWS, 1, &a->table, &res, &err) != 0)
        goto fail;
    pthread_mutex_lock(&a->lock);
    if (PQntuples(res) == 1)
        a->threshold = 50 + 0.1 * strtod(PQgetvalue(res, 0, 0), NULL);
    pthread_mutex_unlock(&a->lock);
    PQclear(res);
    return 0;
fail:
    log_warn("cps", "analyzing %s after writes: %s", a->table, err.msg);
    return -1;
}

static void *analyzer_main(void *arg)
{
    cps_analyzer *a = arg;
    ncmp_db *db = NULL;

    pthread_mutex_lock(&a->lock);
    while (!a->stopping) {
        struct timespec until;
        if (a->pending < a->threshold) {
            pthread_cond_wait(&a->wake, &a->lock);
            continue;
        }
        a->pending = 0;
        pthread_mutex_unlock(&a->lock);
        analyze(a, &db);
        pthread_mutex_lock(&a->lock);
        /* the next one waits its turn: rows written meanwhile stay counted */
        until = ncmp_deadline_ts(CLOCK_REALTIME, CPS_ANALYZE_INTERVAL_S * 1000);
        while (!a->stopping && pthread_cond_timedwait(&a->wake, &a->lock, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&a->lock);
    ncmp_db_close(db);
    return NULL;
}

void cps_analyzer_wrote(cps_analyzer *a, long nodes)
{
    if (!a || nodes <= 0)
        return;
    pthread_mutex_lock(&a->lock);
    a->pending += nodes;
    if (!a->started && !a->stopping) {
        if (pthread_create(&a->thread, NULL, analyzer_main, a) == 0)
            a->started = 1;
        else
            log_warn("cps", "no thread to analyze the fragment table after writes");
    }
    if (a->pending >= a->threshold)
        pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
}

void cps_analyzer_free(cps_analyzer *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    a->stopping = 1;
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
    if (a->started)
        pthread_join(a->thread, NULL);
    pthread_cond_destroy(&a->wake);
    pthread_mutex_destroy(&a->lock);
    free(a);
}
