#include "ncmp_stage.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncmp_buf.h"
#include "ncmp_dlq.h"
#include "ncmp_fault.h"
#include "ncmp_kafka_config.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "ncmp_pgarray.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"

#define DELIVERY_TIMEOUT_MS 60000

typedef struct stage_worker {
    ncmp_stage *st;
    int index;
    pthread_t thread;
    int started;
    int ready;    /* connected and consuming, or given up: under st->lock */
    ncmp_err err; /* fatal error that ended it */
    int failed;
    ncmp_consumer *consumer; /* while it consumes: under st->lock, for the lag */
} stage_worker;

struct ncmp_stage {
    const ncmp_config *cfg;
    const ncmp_stage_role *role;
    ncmp_producer *producer;
    char group[256];
    char point_before[160];
    char point_after[160];
    stage_worker *workers;
    int nworkers;
    pthread_mutex_t lock;
    pthread_cond_t ready_cond;
    /* series of this role, looked up once; per topic in role->topics order */
    ncmp_counter **consumed;
    ncmp_gauge **lag;
    ncmp_histogram *batch_records;
    ncmp_histogram *batch_seconds;
    ncmp_counter *retries;
    int collector; /* computes the lag gauges at each scrape */
};

static void worker_set_ready(stage_worker *w)
{
    pthread_mutex_lock(&w->st->lock);
    w->ready = 1;
    pthread_cond_broadcast(&w->st->ready_cond);
    pthread_mutex_unlock(&w->st->lock);
}

/* Look the role's series up once; the workers count into them. */
static void stage_metrics_init(ncmp_stage *st)
{
    const ncmp_metrics_lib *lib = ncmp_metrics_lib_get();
    const ncmp_stage_role *role = st->role;
    const char *role_only[1] = {role->name};

    st->consumed = ncmp_xcalloc(role->ntopics ? role->ntopics : 1, sizeof(*st->consumed));
    st->lag = ncmp_xcalloc(role->ntopics ? role->ntopics : 1, sizeof(*st->lag));
    for (size_t t = 0; t < role->ntopics; t++) {
        const char *values[2] = {role->name, role->topics[t]};
        st->consumed[t] = ncmp_counter_get(lib->consumed_records, values);
        st->lag[t] = ncmp_gauge_get(lib->consumer_lag, values);
    }
    st->batch_records = ncmp_histogram_get(lib->batch_records, role_only);
    st->batch_seconds = ncmp_histogram_get(lib->batch_seconds, role_only);
    st->retries = ncmp_counter_get(lib->batch_retries, role_only);
}

static void count_consumed(ncmp_stage *st, rd_kafka_message_t **msgs, size_t n)
{
    const ncmp_stage_role *role = st->role;

    ncmp_histogram_observe(st->batch_records, (double)n);
    if (role->ntopics == 1) {
        ncmp_counter_add(st->consumed[0], n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *topic = rd_kafka_topic_name(msgs[i]->rkt);
        for (size_t t = 0; t < role->ntopics; t++) {
            if (strcmp(topic, role->topics[t]) == 0) {
                ncmp_counter_add(st->consumed[t], 1);
                break;
            }
        }
    }
}

/* Add the lag of each partition `consumer` holds to sum[topic index]
 * (ncmp_kafka_assigned_lag: no broker round trip on a metrics scrape). */
static void consumer_lag(ncmp_consumer *consumer, const ncmp_stage_role *role, double *sum)
{
    for (size_t t = 0; t < role->ntopics; t++)
        sum[t] += (double)ncmp_kafka_assigned_lag(ncmp_consumer_rk(consumer), role->topics[t]);
}

/* Collector (runs on the scraping thread): the lag of every worker's
 * partitions, per topic. It reads the consumers under st->lock, which a
 * worker takes before it closes its consumer. Being computed when asked,
 * the lag keeps growing while a batch is stuck in retries. */
static void stage_collect(void *arg)
{
    ncmp_stage *st = arg;
    const ncmp_stage_role *role = st->role;
    double *sum = ncmp_xcalloc(role->ntopics ? role->ntopics : 1, sizeof(*sum));

    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < st->nworkers; i++)
        if (st->workers[i].consumer)
            consumer_lag(st->workers[i].consumer, role, sum);
    pthread_mutex_unlock(&st->lock);
    for (size_t t = 0; t < role->ntopics; t++)
        ncmp_gauge_set(st->lag[t], sum[t]);
    free(sum);
}

static void worker_set_consumer(stage_worker *w, ncmp_consumer *consumer)
{
    pthread_mutex_lock(&w->st->lock);
    w->consumer = consumer;
    pthread_mutex_unlock(&w->st->lock);
}

/* Partition bookkeeping of one batch. */
typedef struct part_state {
    const char *topic;
    int32_t partition;
    int64_t next; /* from the database */
    int64_t last; /* highest offset in the batch */
} part_state;

static const char SQL_LOCK_OFFSETS[] =
    "INSERT INTO consumer_offsets (group_id, topic, partition, next_offset) "
    "SELECT $1, t, p, 0 FROM unnest($2::text[], $3::int[]) AS v(t, p) ORDER BY t, p "
    "ON CONFLICT (group_id, topic, partition) "
    "DO UPDATE SET next_offset = consumer_offsets.next_offset "
    "RETURNING topic, partition, next_offset";

/* GREATEST: the applied offset never goes back. A redelivery that starts
 * behind the database (Kafka's committed offset lags after a kill between
 * the two commits, or while the broker refused commits) and comes in
 * smaller batches than the first time would otherwise move it back to the
 * end of a batch whose records were all skipped, and the records after it
 * would be applied a second time. */
static const char SQL_SAVE_OFFSETS[] =
    "UPDATE consumer_offsets c SET next_offset = GREATEST(c.next_offset, v.o), updated_at = now() "
    "FROM unnest($2::text[], $3::int[], $4::bigint[]) AS v(t, p, o) "
    "WHERE c.group_id = $1 AND c.topic = v.t AND c.partition = v.p";

/* Postgres array literal of the parts' topics, partitions or offsets. */
static void array_literal(ncmp_buf *b, const part_state *ps, size_t n, int what)
{
    ncmp_pgarray_begin(b);
    for (size_t i = 0; i < n; i++) {
        if (what == 0)
            ncmp_pgarray_add_text(b, ps[i].topic);
        else if (what == 1)
            ncmp_pgarray_add_int(b, ps[i].partition);
        else
            ncmp_pgarray_add_int(b, ps[i].last + 1);
    }
    ncmp_pgarray_end(b);
}

static size_t collect_parts(rd_kafka_message_t **msgs, size_t n, part_state *ps)
{
    size_t np = 0;

    for (size_t i = 0; i < n; i++) {
        const char *topic = rd_kafka_topic_name(msgs[i]->rkt);
        size_t j;
        for (j = 0; j < np; j++)
            if (ps[j].partition == msgs[i]->partition && strcmp(ps[j].topic, topic) == 0)
                break;
        if (j == np) {
            ps[np].topic = topic;
            ps[np].partition = msgs[i]->partition;
            ps[np].next = 0;
            ps[np].last = msgs[i]->offset;
            np++;
        } else if (msgs[i]->offset > ps[j].last) {
            ps[j].last = msgs[i]->offset;
        }
    }
    return np;
}

int ncmp_stage_reject(ncmp_stage_ctx *ctx, const rd_kafka_message_t *m, const char *reason,
                      ncmp_err *err)
{
    ncmp_dlq_record rec;

    ncmp_dlq_record_init(&rec, m, ctx->role, reason, (size_t)ctx->cfg->kafka_max_message_bytes, 0,
                         NULL);
    /* ncmp_producer_send takes the headers over in every case */
    return ncmp_producer_send(ctx->producer, &ctx->delivery, rec.topic, RD_KAFKA_PARTITION_UA,
                              rec.key, rec.key_len, rec.value, rec.len, rec.headers, err);
}

/* One transaction over msgs. With `reject_reason`, the records are
 * dead-lettered instead of applied. */
static int run_tx(ncmp_stage *st, ncmp_stage_ctx *ctx, void *state, rd_kafka_message_t **msgs,
                  size_t n, const char *reject_reason, ncmp_err *err)
{
    part_state *ps = ncmp_xcalloc(n, sizeof(*ps));
    rd_kafka_message_t **todo = ncmp_xcalloc(n, sizeof(*todo));
    ncmp_buf topics = NCMP_BUF_INIT, parts = NCMP_BUF_INIT, offs = NCMP_BUF_INIT;
    PGresult *res = NULL;
    size_t np, ntodo = 0;
    int rc = -1;
    double t0 = ncmp_now_ms(), t_applied, t_saved, t_delivered;

    ncmp_delivery_init(&ctx->delivery);
    np = collect_parts(msgs, n, ps);
    array_literal(&topics, ps, np, 0);
    array_literal(&parts, ps, np, 1);
    array_literal(&offs, ps, np, 2);

    if (ncmp_db_begin(ctx->db, err) != 0)
        goto done;
    {
        const char *params[3] = {st->group, topics.data, parts.data};
        if (ncmp_db_run(ctx->db, "stage_lock_offsets", 3, params, &res, err) != 0)
            goto done;
    }
    for (int r = 0; r < PQntuples(res); r++) {
        const char *t = PQgetvalue(res, r, 0);
        int32_t p = (int32_t)atoi(PQgetvalue(res, r, 1));
        int64_t next = atoll(PQgetvalue(res, r, 2));
        for (size_t j = 0; j < np; j++)
            if (ps[j].partition == p && strcmp(ps[j].topic, t) == 0)
                ps[j].next = next;
    }
    PQclear(res);
    res = NULL;

    for (size_t i = 0; i < n; i++) {
        const char *topic = rd_kafka_topic_name(msgs[i]->rkt);
        for (size_t j = 0; j < np; j++) {
            if (ps[j].partition == msgs[i]->partition && strcmp(ps[j].topic, topic) == 0) {
                if (msgs[i]->offset >= ps[j].next)
                    todo[ntodo++] = msgs[i];
                else
                    log_debug(st->role->name,
                              "skipping record topic=%s partition=%d offset=%lld: already applied",
                              topic, msgs[i]->partition, (long long)msgs[i]->offset);
                break;
            }
        }
    }

    if (ntodo) {
        if (reject_reason) {
            for (size_t i = 0; i < ntodo; i++)
                if (ncmp_stage_reject(ctx, todo[i], reject_reason, err) != 0)
                    goto done;
        } else if (st->role->ops.apply(state, ctx, todo, ntodo, err) != 0) {
            goto done;
        }
    }
    ncmp_fault_point(st->point_before);
    t_applied = ncmp_now_ms();
    {
        const char *params[4] = {st->group, topics.data, parts.data, offs.data};
        if (ncmp_db_run(ctx->db, "stage_save_offsets", 4, params, NULL, err) != 0)
            goto done;
    }
    t_saved = ncmp_now_ms();
    if (ncmp_producer_wait(ctx->producer, &ctx->delivery, DELIVERY_TIMEOUT_MS, err) != 0)
        goto done;
    t_delivered = ncmp_now_ms();
    if (ncmp_db_commit(ctx->db, err) != 0)
        goto done;
    ncmp_fault_point(st->point_after);
    log_debug(st->role->name,
              "batch of %zu records: begin and apply %.0f ms, offsets %.0f ms, deliveries %.0f ms, "
              "commit %.0f ms",
              n, t_applied - t0, t_saved - t_applied, t_delivered - t_saved,
              ncmp_now_ms() - t_delivered);
    rc = 0;
done:
    if (rc != 0) {
        ncmp_db_rollback(ctx->db);
        /* Records queued for a rolled-back batch may still be delivered;
         * wait so that their reports do not count against the next one. */
        ncmp_err ignore;
        ncmp_producer_wait(ctx->producer, &ctx->delivery, DELIVERY_TIMEOUT_MS, &ignore);
    }
    PQclear(res);
    ncmp_buf_free(&topics);
    ncmp_buf_free(&parts);
    ncmp_buf_free(&offs);
    free(ps);
    free(todo);
    return rc;
}

/* Apply msgs until done, retrying and isolating bad records. Returns -1
 * only for a fatal error or a stop request in the middle of retries (the
 * batch is then redelivered to whoever owns the partitions next). */
static int process_batch(ncmp_stage *st, ncmp_stage_ctx *ctx, void *state,
                         rd_kafka_message_t **msgs, size_t n, ncmp_err *err)
{
    long backoff = 100;

    for (;;) {
        if (run_tx(st, ctx, state, msgs, n, NULL, err) == 0)
            return 0;
        if (err->cls == NCMP_ERR_REJECT) {
            if (n == 1) {
                char reason[NCMP_ERR_MSG_MAX];
                snprintf(reason, sizeof(reason), "%s", err->msg);
                if (run_tx(st, ctx, state, msgs, 1, reason, err) == 0)
                    return 0;
                if (err->cls == NCMP_ERR_REJECT)
                    err->cls = NCMP_ERR_RETRY; /* could not even dead-letter it */
            } else {
                log_info(st->role->name,
                         "batch of %zu failed (%s); applying its records one by one", n, err->msg);
                for (size_t i = 0; i < n; i++)
                    if (process_batch(st, ctx, state, &msgs[i], 1, err) != 0)
                        return -1;
                return 0;
            }
        }
        if (err->cls == NCMP_ERR_FATAL)
            return -1;
        if (ncmp_stopping)
            return -1;
        log_warn(st->role->name, "batch of %zu failed, retrying in %ld ms: %s", n, backoff,
                 err->msg);
        ncmp_counter_add(st->retries, 1);
        ncmp_sleep_ms(backoff);
        backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
    }
}

static int worker_connect(ncmp_stage *st, ncmp_stage_ctx *ctx, ncmp_err *err)
{
    long backoff = 200;

    while (!ncmp_stopping) {
        if (ncmp_db_open(&ctx->db, st->cfg->db_url, st->cfg->db_password,
                         st->cfg->db_connect_timeout_s, err) == 0) {
            static const ncmp_db_stmt stage_statements[] = {
                {"stage_lock_offsets", SQL_LOCK_OFFSETS},
                {"stage_save_offsets", SQL_SAVE_OFFSETS},
                {NULL, NULL}};
            ncmp_db_statements(ctx->db, stage_statements);
            ncmp_db_statements(ctx->db, st->role->ops.statements);
            return 0;
        }
        log_warn(st->role->name, "worker %d: %s; retrying", ctx->worker, err->msg);
        ncmp_sleep_ms(backoff);
        backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
    }
    return ncmp_err_set(err, NCMP_ERR_RETRY, "stopped before the database was reached");
}

/* What ncmp_kafka_member_renew needs to make a stage worker's member. */
typedef struct member_maker {
    stage_worker *w;
    const char *instance;
    ncmp_consumer *made;
} member_maker;

static int member_make(void *arg, ncmp_err *err)
{
    member_maker *m = arg;
    const ncmp_stage *st = m->w->st;
    ncmp_kafka_opts kopts;

    ncmp_kafka_opts_from_config(&kopts, st->cfg);
    return ncmp_consumer_new(&m->made, &kopts, st->group, m->instance, st->role->topics,
                             st->role->ntopics, err);
}

static int process_stopping(void *arg)
{
    (void)arg;
    return ncmp_stopping != 0;
}

/* The worker's member of the group, made again after it failed for good
 * (fenced: ncmp_kafka_polled_take): closed, then a new one with the
 * same instance id (ncmp_kafka_member_renew), until one is made or the
 * process stops (NULL). It resumes from the committed offsets; what the
 * old one had applied without committing is skipped by the offsets kept
 * in the database. */
static ncmp_consumer *renew_consumer(stage_worker *w, ncmp_consumer *old, const char *instance)
{
    member_maker m = {w, instance, NULL};

    worker_set_consumer(w, NULL);
    ncmp_consumer_close(old);
    if (ncmp_kafka_member_renew(w->st->role->name, w->index, w->st->group, &w->err, member_make,
                                process_stopping, &m) != 0)
        return NULL;
    worker_set_consumer(w, m.made);
    return m.made;
}

static void *worker_main(void *arg)
{
    stage_worker *w = arg;
    ncmp_stage *st = w->st;
    const ncmp_stage_role *role = st->role;
    ncmp_stage_ctx ctx;
    ncmp_consumer *consumer = NULL;
    ncmp_kafka_opts kopts;
    void *state = NULL;
    int have_state = 0;
    size_t max = (size_t)role->batch_size;
    char instance[256] = "";
    rd_kafka_message_t **msgs = ncmp_xcalloc(max, sizeof(*msgs));

    memset(&ctx, 0, sizeof(ctx));
    ctx.cfg = st->cfg;
    ctx.producer = st->producer;
    ctx.role = role->name;
    ctx.worker = w->index;
    ncmp_delivery_init(&ctx.delivery);

    if (worker_connect(st, &ctx, &w->err) != 0) {
        if (!ncmp_stopping)
            w->failed = 1;
        goto done;
    }
    if (role->ops.worker_init && role->ops.worker_init(role->arg, &ctx, &state, &w->err) != 0) {
        w->failed = 1;
        goto done;
    }
    have_state = 1;
    if (*st->cfg->kafka_instance_id)
        snprintf(instance, sizeof(instance), "%s-%s-%d", st->cfg->kafka_instance_id, role->name,
                 w->index);
    ncmp_kafka_opts_from_config(&kopts, st->cfg);
    if (ncmp_consumer_new(&consumer, &kopts, st->group, instance, role->topics, role->ntopics,
                          &w->err) != 0) {
        w->failed = 1;
        goto done;
    }
    log_debug(role->name, "worker %d consuming in group %s", w->index, st->group);
    worker_set_consumer(w, consumer);
    worker_set_ready(w);

    while (!ncmp_stopping) {
        size_t n = 0;
        double start;
        if (ncmp_consumer_poll(consumer, msgs, max, role->batch_wait_ms, &n, &w->err) != 0) {
            if (w->err.cls != NCMP_ERR_FATAL)
                log_warn(role->name, "%s", w->err.msg);
            else if (!(consumer = renew_consumer(w, consumer, instance)))
                break; /* stopping */
            continue;
        }
        if (!n)
            continue;
        count_consumed(st, msgs, n);
        start = ncmp_now_ms();
        if (process_batch(st, &ctx, state, msgs, n, &w->err) != 0) {
            for (size_t i = 0; i < n; i++)
                rd_kafka_message_destroy(msgs[i]);
            if (w->err.cls == NCMP_ERR_FATAL) {
                w->failed = 1;
                log_error(role->name, "worker %d stops: %s", w->index, w->err.msg);
                ncmp_signal_request_stop();
            }
            break;
        }
        ncmp_histogram_observe(st->batch_seconds, (ncmp_now_ms() - start) / 1000.0);
        ncmp_consumer_commit(consumer, msgs, n);
        for (size_t i = 0; i < n; i++)
            rd_kafka_message_destroy(msgs[i]);
    }
done:
    worker_set_ready(w);
    worker_set_consumer(w, NULL);
    ncmp_consumer_close(consumer);
    if (have_state && role->ops.worker_fini)
        role->ops.worker_fini(state);
    ncmp_db_close(ctx.db);
    free(msgs);
    if (w->failed)
        ncmp_signal_request_stop();
    return NULL;
}

int ncmp_stage_start(ncmp_stage **out, const ncmp_config *cfg, const ncmp_stage_role *role,
                     ncmp_producer *producer, ncmp_err *err)
{
    ncmp_stage *st = ncmp_xcalloc(1, sizeof(*st));

    st->cfg = cfg;
    st->role = role;
    st->producer = producer;
    ncmp_kafka_group_name(st->group, sizeof(st->group), cfg->kafka_group_id, role->name);
    snprintf(st->point_before, sizeof(st->point_before), "%s.before-commit", role->name);
    snprintf(st->point_after, sizeof(st->point_after), "%s.after-commit", role->name);
    st->nworkers = role->workers > 0 ? role->workers : 1;
    st->workers = ncmp_xcalloc((size_t)st->nworkers, sizeof(*st->workers));
    stage_metrics_init(st);
    st->collector = ncmp_metrics_collector_add(stage_collect, st);
    pthread_mutex_init(&st->lock, NULL);
    pthread_cond_init(&st->ready_cond, NULL);
    for (int i = 0; i < st->nworkers; i++) {
        st->workers[i].st = st;
        st->workers[i].index = i;
        if (pthread_create(&st->workers[i].thread, NULL, worker_main, &st->workers[i]) != 0) {
            ncmp_signal_request_stop();
            ncmp_stage_join(st, NULL);
            ncmp_stage_destroy(st);
            return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot start worker thread");
        }
        st->workers[i].started = 1;
    }
    /* Report "started" only once every worker reached its database and
     * joined the group, or gave up: a start-up error is then the caller's. */
    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < st->nworkers; i++)
        while (!st->workers[i].ready)
            pthread_cond_wait(&st->ready_cond, &st->lock);
    pthread_mutex_unlock(&st->lock);
    for (int i = 0; i < st->nworkers; i++) {
        if (st->workers[i].failed) {
            *err = st->workers[i].err;
            ncmp_signal_request_stop();
            ncmp_stage_join(st, NULL);
            ncmp_stage_destroy(st);
            return -1;
        }
    }
    log_info(role->name, "%d workers started, group %s, batch %d", st->nworkers, st->group,
             role->batch_size);
    *out = st;
    return 0;
}

int ncmp_stage_join(ncmp_stage *st, ncmp_err *err)
{
    int rc = 0;

    for (int i = 0; i < st->nworkers; i++) {
        if (!st->workers[i].started)
            continue;
        pthread_join(st->workers[i].thread, NULL);
        st->workers[i].started = 0;
        if (st->workers[i].failed && rc == 0) {
            rc = -1;
            if (err)
                *err = st->workers[i].err;
        }
    }
    return rc;
}

void ncmp_stage_destroy(ncmp_stage *st)
{
    if (!st)
        return;
    /* returns once a scrape in progress is done with st */
    ncmp_metrics_collector_remove(st->collector);
    for (size_t t = 0; t < st->role->ntopics; t++)
        ncmp_gauge_set(st->lag[t], 0);
    pthread_mutex_destroy(&st->lock);
    pthread_cond_destroy(&st->ready_cond);
    free(st->consumed);
    free(st->lag);
    free(st->workers);
    free(st);
}
