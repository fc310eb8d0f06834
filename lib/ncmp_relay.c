#include "ncmp_relay.h"

#include <librdkafka/rdkafka.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncmp_buf.h"
#include "ncmp_db.h"
#include "ncmp_fault.h"
#include "ncmp_kafka.h"
#include "ncmp_kafka_config.h"
#include "ncmp_log.h"
#include "ncmp_pgarray.h"
#include "ncmp_signal.h"
#include "ncmp_singleton.h"
#include "ncmp_time.h"

#define MAX_PARTITIONS 1024
#define SEQ_HEADER     "ncmp_outbox_seq"
/* the longest wait for the broker's transaction coordinator */
#define TXN_TIMEOUT_MS 30000

typedef struct ncmp_relay {
    const ncmp_config *cfg;
    ncmp_relay_spec spec;
    char sql_read[256], sql_delete[128], sql_listen[96];
    char fault_published[96], fault_committed[96];
    char txn_id[320];
    ncmp_db *db; /* the runner's connection, during a callback */
    rd_kafka_t *rk;
    /* delivery reports of the current round (served on the relay thread) */
    long pending;
    long failed_records;
    char first_error[256];
    int64_t next_offset[MAX_PARTITIONS]; /* -1: no record this round */
} ncmp_relay;

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    ncmp_relay *r = opaque;

    r->pending--;
    if (m->err) {
        if (!r->failed_records++)
            snprintf(r->first_error, sizeof(r->first_error), "%s", rd_kafka_err2str(m->err));
        return;
    }
    if (m->partition >= 0 && m->partition < MAX_PARTITIONS &&
        m->offset + 1 > r->next_offset[m->partition])
        r->next_offset[m->partition] = m->offset + 1;
}

/* The relay's transactional producer, made anew by every leader: making
 * it fences the last leader's, so that nothing that producer still had in
 * flight can land after the recovery scan (see ncmp_relay.h). */
static int producer_new(ncmp_relay *r, ncmp_err *err)
{
    const ncmp_kafka_hooks hooks = {.opaque = r, .dr_msg_cb = dr_cb};
    ncmp_kafka_opts kopts;

    char client[96];

    if (r->rk) {
        rd_kafka_destroy(r->rk);
        r->rk = NULL;
    }
    /* keyed: an entity's events land where NCMP's Java producer puts them */
    snprintf(client, sizeof(client), "ncmpd-%s", r->spec.component);
    ncmp_kafka_opts_from_config(&kopts, r->cfg);
    if (ncmp_kafka_txn_producer_new(&r->rk, &kopts, NCMP_PRODUCER_KEYED, client, r->txn_id,
                                    TXN_TIMEOUT_MS, &hooks, err) != 0)
        return ncmp_err_prefix(err, "%s producer", r->spec.component);
    return 0;
}

static int partition_count(ncmp_relay *r, int *count, ncmp_err *err)
{
    if (ncmp_kafka_partition_count(r->rk, r->spec.topic, 10000, count, err) != 0)
        return ncmp_err_prefix(err, "topic %s (ncmpd create-topics makes it)", r->spec.topic);
    if (*count > MAX_PARTITIONS)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "topic %s has more than %d partitions",
                            r->spec.topic, MAX_PARTITIONS);
    return 0;
}

/* A record of the recovery scan: add its seq header to `arg` (a Postgres
 * array literal under construction). */
static int scan_seq(const rd_kafka_message_t *m, void *arg, ncmp_err *err)
{
    ncmp_buf *seqs = arg;
    char seq[32];

    (void)err;
    if (ncmp_kafka_header(m, SEQ_HEADER, seq, sizeof(seq)))
        ncmp_pgarray_add_text(seqs, seq);
    return 0;
}

/* In one transaction: delete the outbox rows of `seqs` (their events are
 * on the topic) and move the checkpoint of each partition of `parts` to
 * its offset in `offs` (never back). *deleted (may be NULL): how many rows
 * went. */
static int forget(ncmp_relay *r, const ncmp_buf *seqs, const ncmp_buf *parts, const ncmp_buf *offs,
                  long *deleted, ncmp_err *err)
{
    const char *params[4] = {seqs->data, r->spec.topic, parts->data, offs->data};
    PGresult *res = NULL;

    if (ncmp_db_begin(r->db, err) != 0 ||
        ncmp_db_query(r->db, r->sql_delete, 1, params, &res, err) != 0)
        goto fail;
    if (deleted)
        *deleted = atol(PQcmdTuples(res));
    PQclear(res);
    if (ncmp_db_query(r->db,
                      "INSERT INTO lcm_relay_checkpoint (topic, partition, next_offset) "
                      "SELECT $1, p, o FROM unnest($2::int[], $3::bigint[]) AS v(p, o) "
                      "ON CONFLICT (topic, partition) DO UPDATE SET next_offset = "
                      "GREATEST(lcm_relay_checkpoint.next_offset, EXCLUDED.next_offset)",
                      3, params + 1, NULL, err) != 0 ||
        ncmp_db_commit(r->db, err) != 0)
        goto fail;
    return 0;
fail:
    ncmp_db_rollback(r->db);
    return -1;
}

/* Delete the outbox rows whose events are already in the topic. */
static int recover(ncmp_relay *r, ncmp_err *err)
{
    int nparts = 0;
    PGresult *res = NULL;
    int64_t checkpoint[MAX_PARTITIONS];
    int64_t high[MAX_PARTITIONS];
    ncmp_buf seqs = NCMP_BUF_INIT, parts = NCMP_BUF_INIT, offs = NCMP_BUF_INIT;
    ncmp_kafka_opts kopts;
    const char *params[1];
    long forgotten = 0;
    int rc = -1;

    if (partition_count(r, &nparts, err) != 0)
        return -1;
    params[0] = r->spec.topic;
    if (ncmp_db_query(r->db,
                      "SELECT partition, next_offset FROM lcm_relay_checkpoint WHERE topic = $1", 1,
                      params, &res, err) != 0)
        return -1;
    for (int p = 0; p < nparts; p++)
        checkpoint[p] = 0;
    for (int i = 0; i < PQntuples(res); i++) {
        int p = atoi(PQgetvalue(res, i, 0));
        if (p >= 0 && p < nparts)
            checkpoint[p] = atoll(PQgetvalue(res, i, 1));
    }
    PQclear(res);
    res = NULL; /* freed again on the way out if the scan fails */
    ncmp_pgarray_begin(&seqs);
    /* each partition from its checkpoint to its end */
    ncmp_kafka_opts_from_config(&kopts, r->cfg);
    char client[96];

    snprintf(client, sizeof(client), "ncmpd-%s-scan", r->spec.component);
    if (ncmp_kafka_scan(&kopts, client, r->spec.topic, checkpoint, nparts, 60000, scan_seq, &seqs,
                        high, err) != 0)
        goto done;
    for (int p = 0; p < nparts; p++) {
        if (high[p] > checkpoint[p])
            log_info(r->spec.component, "recovery read %s [%d] offsets %lld..%lld", r->spec.topic,
                     p, (long long)checkpoint[p], (long long)high[p] - 1);
    }
    ncmp_pgarray_end(&seqs);
    ncmp_pgarray_begin(&parts);
    ncmp_pgarray_begin(&offs);
    for (int p = 0; p < nparts; p++) {
        ncmp_pgarray_add_int(&parts, p);
        ncmp_pgarray_add_int(&offs, high[p]);
    }
    ncmp_pgarray_end(&parts);
    ncmp_pgarray_end(&offs);
    if (forget(r, &seqs, &parts, &offs, &forgotten, err) != 0)
        goto done;
    if (forgotten > 0)
        log_info(r->spec.component, "recovered: %ld events were already published", forgotten);
    rc = 0;
done:
    PQclear(res);
    ncmp_buf_free(&seqs);
    ncmp_buf_free(&parts);
    ncmp_buf_free(&offs);
    return rc;
}

/* Wait for a NOTIFY (or the timeout); after one, linger so that the next
 * round carries the events written meanwhile. Each round is a Kafka
 * transaction and a database round trip: when events come one per write
 * (CPS's data-updated events at a few hundred writes a second), a round
 * per NOTIFY cost the writers a third of their rate on two cores. */
static void wait_notify(ncmp_relay *r, int timeout_ms)
{
    PGconn *conn = ncmp_db_conn(r->db);
    struct pollfd pfd = {PQsocket(conn), POLLIN, 0};
    PGnotify *n;

    if (pfd.fd >= 0 && poll(&pfd, 1, timeout_ms) > 0 && r->spec.linger_ms > 0)
        ncmp_sleep_ms(r->spec.linger_ms);
    PQconsumeInput(conn);
    while ((n = PQnotifies(conn)))
        PQfreemem(n);
}

/* A failed transactional call: the round fails with RETRY, whatever
 * librdkafka's class (a fenced or broken producer included): the runner
 * starts over with `lead`, which makes a new producer and scans. */
static int relay_txn_error(rd_kafka_error_t *e, const char *what, ncmp_err *err)
{
    ncmp_kafka_txn_error(e, what, err);
    err->cls = NCMP_ERR_RETRY;
    return -1;
}

/* One round: publish up to a batch, then forget it. Returns the number of
 * events published, or -1. */
static long publish_round(ncmp_relay *r, ncmp_err *err)
{
    char limit[16];
    const char *params[4];
    PGresult *res = NULL;
    ncmp_buf seqs = NCMP_BUF_INIT, parts = NCMP_BUF_INIT, offs = NCMP_BUF_INIT;
    long n;
    double t0 = ncmp_now_ms(), t_read, t_acked;

    snprintf(limit, sizeof(limit), "%d", r->spec.batch_size);
    params[0] = limit;
    if (ncmp_db_query(r->db, r->sql_read, 1, params, &res, err) != 0)
        return -1;
    n = PQntuples(res);
    if (!n) {
        PQclear(res);
        return 0;
    }
    t_read = ncmp_now_ms();
    for (int p = 0; p < MAX_PARTITIONS; p++)
        r->next_offset[p] = -1;
    r->failed_records = 0;
    {
        rd_kafka_error_t *te = rd_kafka_begin_transaction(r->rk);
        if (te) {
            PQclear(res);
            return relay_txn_error(te, "beginning a transaction", err);
        }
    }
    ncmp_pgarray_begin(&seqs);
    for (long i = 0; i < n; i++) {
        const char *seq = PQgetvalue(res, (int)i, 0);
        const char *key = PQgetvalue(res, (int)i, 1);
        rd_kafka_headers_t *h = r->spec.headers(
            r->spec.headers_arg, key, PQgetvalue(res, (int)i, 4), PQgetvalue(res, (int)i, 6),
            PQgetvalue(res, (int)i, 2), PQgetvalue(res, (int)i, 3));
        rd_kafka_resp_err_t e;
        rd_kafka_header_add(h, SEQ_HEADER, -1, seq, -1);
        r->pending++;
        for (;;) {
            e = rd_kafka_producev(
                r->rk, RD_KAFKA_V_TOPIC(r->spec.topic), RD_KAFKA_V_KEY(key, strlen(key)),
                RD_KAFKA_V_VALUE(PQgetvalue(res, (int)i, 5), (size_t)PQgetlength(res, (int)i, 5)),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
            if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                break;
            rd_kafka_poll(r->rk, 10);
        }
        if (e) {
            r->pending--;
            rd_kafka_headers_destroy(h);
            ncmp_err_set(err, NCMP_ERR_RETRY, "produce to %s: %s", r->spec.topic,
                         rd_kafka_err2str(e));
            n = -1;
            break;
        }
        ncmp_pgarray_add_text(&seqs, seq);
    }
    PQclear(res);
    while (r->pending > 0)
        rd_kafka_poll(r->rk, 50);
    t_acked = ncmp_now_ms();
    if (n < 0)
        goto done;
    if (r->failed_records) {
        ncmp_err_set(err, NCMP_ERR_RETRY, "%ld %s not delivered: %s", r->failed_records,
                     r->spec.what, r->first_error);
        n = -1;
        goto done;
    }
    {
        /* the round is visible to read_committed consumers from here */
        rd_kafka_error_t *te = rd_kafka_commit_transaction(r->rk, TXN_TIMEOUT_MS);
        if (te) {
            relay_txn_error(te, "committing the transaction", err);
            n = -1;
            goto done;
        }
    }
    ncmp_fault_point(r->fault_published);
    ncmp_pgarray_end(&seqs);
    ncmp_pgarray_begin(&parts);
    ncmp_pgarray_begin(&offs);
    for (int p = 0; p < MAX_PARTITIONS; p++) {
        if (r->next_offset[p] < 0)
            continue;
        ncmp_pgarray_add_int(&parts, p);
        ncmp_pgarray_add_int(&offs, r->next_offset[p]);
    }
    ncmp_pgarray_end(&parts);
    ncmp_pgarray_end(&offs);
    if (forget(r, &seqs, &parts, &offs, NULL, err) != 0) {
        n = -1;
        goto done;
    }
    ncmp_fault_point(r->fault_committed);
    log_debug(r->spec.component,
              "published %ld events: read %.0f ms, publish %.0f ms, forget %.0f ms", n, t_read - t0,
              t_acked - t_read, ncmp_now_ms() - t_acked);
done:
    ncmp_buf_free(&seqs);
    ncmp_buf_free(&parts);
    ncmp_buf_free(&offs);
    return n;
}

/* Taking over: listen for the outbox, and forget what the last holder
 * published without recording it. */
static int relay_lead(void *arg, ncmp_db *db, ncmp_err *err)
{
    ncmp_relay *r = arg;

    r->db = db;
    if (ncmp_db_exec(db, r->sql_listen, err) != 0 || producer_new(r, err) != 0 ||
        recover(r, err) != 0)
        return -1;
    log_info(r->spec.component, "relaying %s to %s", r->spec.what, r->spec.topic);
    return 0;
}

static int relay_round(void *arg, ncmp_db *db, ncmp_err *err)
{
    ncmp_relay *r = arg;
    long n;

    r->db = db;
    n = publish_round(r, err);
    if (n < 0)
        return -1;
    return n < r->spec.batch_size ? NCMP_SINGLETON_IDLE : NCMP_SINGLETON_MORE;
}

static void relay_wait(void *arg, ncmp_db *db, int ms)
{
    ncmp_relay *r = arg;

    r->db = db;
    wait_notify(r, ms);
}

int ncmp_relay_task(const ncmp_config *cfg, const ncmp_relay_spec *spec, ncmp_singleton_task *task,
                    ncmp_err *err)
{
    ncmp_relay *r = ncmp_xcalloc(1, sizeof(*r));

    r->cfg = cfg;
    r->spec = *spec;
    snprintf(r->sql_read, sizeof(r->sql_read),
             "SELECT seq, %s, event_id, event_time, event_type, payload, %s FROM %s"
             " ORDER BY seq LIMIT $1::int",
             spec->key_column, spec->schema_column ? spec->schema_column : "''", spec->table);
    snprintf(r->sql_delete, sizeof(r->sql_delete), "DELETE FROM %s WHERE seq = ANY($1::bigint[])",
             spec->table);
    snprintf(r->sql_listen, sizeof(r->sql_listen), "LISTEN %s", spec->channel);
    snprintf(r->fault_published, sizeof(r->fault_published), "%s.after-publish", spec->component);
    snprintf(r->fault_committed, sizeof(r->fault_committed), "%s.after-commit", spec->component);
    /* one id per outbox topic: every ncmpd relaying it fences the last */
    snprintf(r->txn_id, sizeof(r->txn_id), "ncmpd-%s-%s", spec->component, spec->topic);
    (void)err;
    /* 200 ms: the longest wait for a NOTIFY, and how often a process that
     * does not relay asks whether the one that does is still there */
    *task = (ncmp_singleton_task){.component = spec->component,
                                  .what = "relay",
                                  .lock_key = spec->lock_key,
                                  .leader_msg = spec->leader_msg,
                                  .idle_ms = 200,
                                  .lead = relay_lead,
                                  .round = relay_round,
                                  .wait = relay_wait,
                                  .arg = r};
    return 0;
}

void ncmp_relay_free(void *arg)
{
    ncmp_relay *r = arg;

    if (!r)
        return;
    if (r->rk) {
        rd_kafka_flush(r->rk, 10000);
        rd_kafka_destroy(r->rk);
    }
    free(r);
}
