#include "ncmp_pump.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_dlq.h"
#include "ncmp_fault.h"
#include "ncmp_metrics.h"
#include "ncmp_kafka_config.h"
#include "ncmp_log.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define REASON_MAX     512

/* What became of one record of the batch. */
typedef enum slot_state {
    SLOT_DONE,      /* acknowledged where it had to go, or nothing to send */
    SLOT_SENT,      /* produced to its output; delivery report pending */
    SLOT_DEAD,      /* to be dead-lettered (reason set) */
    SLOT_DEAD_SENT, /* produced to the dead-letter topic; report pending */
    SLOT_RETRY,     /* failed for a passing reason: its partition restarts here */
} slot_state;

typedef struct pump_slot {
    slot_state state;
    int truncate;                /* dead-letter without the value, whatever its size */
    char *reason;                /* owned; why it is dead-lettered or retried */
    rd_kafka_headers_t *headers; /* owned; the original headers once handed over */
    char *value;                 /* owned; the role's own value (route.value), or NULL */
} pump_slot;

typedef struct pump_worker {
    ncmp_pump *p;
    int index;
    pthread_t thread;
    int started;
    int ready; /* consuming, or given up: under p->lock */
    int failed;
    ncmp_err err;
    rd_kafka_t *consumer;
    rd_kafka_queue_t *queue;
    ncmp_queue_waiter waiter; /* the idle sleep on queue */
    rd_kafka_t *producer;
    long pending; /* delivery reports to come; served on this thread */
    pump_slot *slots;
    rd_kafka_message_t **msgs;
    long backoff_ms;
    long sent, dead, done, skipped, retried;
} pump_worker;

struct ncmp_pump {
    const ncmp_config *cfg;
    const ncmp_pump_role *role;
    char group[256];
    char dlq[256];
    char point_before[160];
    char point_after[160];
    pump_worker *workers;
    int nworkers;
    pthread_mutex_t lock;
    pthread_cond_t ready_cond;
    atomic_int stop; /* ncmp_pump_stop: this pump only */
    ncmp_gauge *lag; /* ncmp_consumer_lag_records{role, input} */
    int collector;
};

static int pump_stopping(ncmp_pump *p)
{
    return ncmp_stopping || atomic_load(&p->stop);
}

/* --- the slots of a batch ------------------------------------------------ */

static void slot_clear(pump_slot *s)
{
    free(s->reason);
    free(s->value);
    if (s->headers)
        rd_kafka_headers_destroy(s->headers);
    memset(s, 0, sizeof(*s));
}

static void slot_set(pump_slot *s, slot_state state, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void slot_set(pump_slot *s, slot_state state, const char *fmt, ...)
{
    char buf[REASON_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    free(s->reason);
    s->reason = ncmp_xstrdup(buf);
    s->state = state;
}

static int err_is_size(rd_kafka_resp_err_t e)
{
    return e == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ||
           e == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE;
}

/* Will this error come again however often the record is sent? */
static int err_is_permanent(const ncmp_pump *p, rd_kafka_resp_err_t e)
{
    switch (e) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
    case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
        return 1;
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
        return p->role->unknown_topic_is_permanent;
    default:
        return 0;
    }
}

/* Served by rd_kafka_poll() on the worker's thread. */
static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    pump_worker *w = opaque;
    pump_slot *s = m->_private;
    const char *topic = rd_kafka_topic_name(m->rkt);
    rd_kafka_headers_t *h = NULL;

    w->pending--;
    if (!m->err) {
        if (s->state == SLOT_DEAD_SENT)
            w->dead++;
        else
            w->sent++;
        s->state = SLOT_DONE;
        return;
    }
    if (s->state == SLOT_SENT && err_is_permanent(w->p, m->err)) {
        /* the headers went with the record: keep a copy for the dead letter
         * (a mapped record's own are still on the consumed one) */
        if (!s->value && rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR && h)
            s->headers = rd_kafka_headers_copy(h);
        s->truncate = err_is_size(m->err);
        slot_set(s, SLOT_DEAD, "delivery to %s failed: %s", topic, rd_kafka_err2str(m->err));
        return;
    }
    slot_set(s, SLOT_RETRY, "delivery to %s failed: %s", topic, rd_kafka_err2str(m->err));
}

/* Queue one record; on success the headers are librdkafka's and the value
 * must stay alive until the delivery report (it is not copied). */
static rd_kafka_resp_err_t produce(pump_worker *w, const char *topic, const void *key,
                                   size_t keylen, const void *value, size_t len,
                                   rd_kafka_headers_t *headers, pump_slot *s)
{
    rd_kafka_resp_err_t e;

    for (;;) {
        e = rd_kafka_producev(w->producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, keylen),
                              RD_KAFKA_V_VALUE((void *)value, len), RD_KAFKA_V_MSGFLAGS(0),
                              RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(s), RD_KAFKA_V_END);
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            break;
        rd_kafka_poll(w->producer, 10);
    }
    if (!e)
        w->pending++;
    return e;
}

/* A record that could not be queued: dead-letter or retry it. */
static void pump_failed(ncmp_pump *p, const rd_kafka_message_t *m, pump_slot *s,
                        const ncmp_pump_route *r, rd_kafka_resp_err_t e)
{
    if (err_is_permanent(p, e)) {
        s->truncate = err_is_size(e) ||
                      ncmp_dlq_value_too_large(m->len, (size_t)p->cfg->kafka_max_message_bytes);
        slot_set(s, SLOT_DEAD, "produce to %s: %s", r->topic, rd_kafka_err2str(e));
    } else {
        slot_set(s, SLOT_RETRY, "produce to %s: %s", r->topic, rd_kafka_err2str(e));
    }
}

/* Send one record where handle() says, or mark it for the dead-letter
 * topic. */
static void pump_one(pump_worker *w, rd_kafka_message_t *m, pump_slot *s)
{
    ncmp_pump *p = w->p;
    ncmp_pump_route r;
    ncmp_pump_verdict verdict;
    rd_kafka_headers_t *headers = NULL;
    rd_kafka_resp_err_t e;

    if (rd_kafka_message_headers(m, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR)
        headers = NULL;
    memset(&r, 0, sizeof(r));
    verdict = p->role->handle(p->role->arg, m, headers, &r);
    if (verdict != NCMP_PUMP_SEND || !r.value) {
        free(r.value);
        if (r.headers)
            rd_kafka_headers_destroy(r.headers);
        r.value = NULL;
    }
    switch (verdict) {
    case NCMP_PUMP_DONE:
        w->done++;
        s->state = SLOT_DONE;
        return;
    case NCMP_PUMP_SKIP:
        log_debug(p->role->name, "not taken topic=%s partition=%d offset=%lld: not ours",
                  p->role->input, m->partition, (long long)m->offset);
        w->skipped++;
        s->state = SLOT_DONE;
        return;
    case NCMP_PUMP_REJECT:
        s->truncate = ncmp_dlq_value_too_large(m->len, (size_t)p->cfg->kafka_max_message_bytes);
        slot_set(s, SLOT_DEAD, "%s", r.reason);
        return;
    case NCMP_PUMP_SEND:
        break;
    }
    if (r.value) {
        /* the role's own value and headers; the record keeps its own for
         * a dead letter */
        s->value = r.value;
        s->state = SLOT_SENT;
        e = produce(w, r.topic, r.key, r.keylen, r.value, r.len, r.headers, s);
        if (!e)
            return;
        if (r.headers)
            rd_kafka_headers_destroy(r.headers);
        pump_failed(p, m, s, &r, e);
        return;
    }
    /* hand the parsed headers over instead of copying them; r.key may
     * point into them, which is fine until producev returns */
    if (rd_kafka_message_detach_headers(m, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR)
        headers = NULL;
    s->state = SLOT_SENT;
    e = produce(w, r.topic, r.key, r.keylen, m->payload, m->len, headers, s);
    if (!e)
        return;
    s->headers = headers; /* not queued: still ours */
    pump_failed(p, m, s, &r, e);
}

/* The dead letter of m (ncmp_dlq), with the original headers the slot
 * may hold already. */
static void dead_letter(pump_worker *w, rd_kafka_message_t *m, pump_slot *s)
{
    ncmp_pump *p = w->p;
    ncmp_dlq_record rec;
    rd_kafka_resp_err_t e;

    ncmp_dlq_record_init(&rec, m, p->role->dlq_role ? p->role->dlq_role : p->role->name, s->reason,
                         (size_t)p->cfg->kafka_max_message_bytes, s->truncate, s->headers);
    s->headers = NULL; /* the record's now */
    s->state = SLOT_DEAD_SENT;
    e = produce(w, rec.topic, rec.key, rec.key_len, rec.value, rec.len, rec.headers, s);
    if (e) {
        ncmp_dlq_record_clear(&rec); /* not queued: still ours */
        slot_set(s, SLOT_RETRY, "dead letter to %s: %s", p->dlq, rd_kafka_err2str(e));
    }
}

/* Serve delivery reports until none is pending. Once a stop was asked for
 * and half the shutdown time has passed, give up on what the broker has
 * not acknowledged: it fails (and is not committed). */
static void wait_acks(pump_worker *w)
{
    double give_up = 0;

    while (w->pending > 0) {
        rd_kafka_poll(w->producer, 50);
        if (!pump_stopping(w->p) || w->pending <= 0)
            continue;
        if (!give_up) {
            give_up = ncmp_now_ms() + w->p->cfg->shutdown_timeout_s * 500.0;
        } else if (give_up > 0 && ncmp_now_ms() > give_up) {
            log_warn(w->p->role->name,
                     "worker %d: %ld records not acknowledged; not committing them", w->index,
                     w->pending);
            rd_kafka_purge(w->producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
            give_up = -1;
        }
    }
}

/* Forward msgs[0..n): every record ends DONE or RETRY. */
/* After a record failed to be queued for a passing reason, the records
 * behind it in its partition come again with it after the rewind: they are
 * not sent now, which would deliver them twice (now and after the rewind)
 * and ahead of the record that failed. */
static int partition_blocked(const int32_t *blocked, size_t nblocked, int32_t partition)
{
    for (size_t k = 0; k < nblocked; k++)
        if (blocked[k] == partition)
            return 1;
    return 0;
}

static void pump_batch(pump_worker *w, rd_kafka_message_t **msgs, size_t n)
{
    int32_t *blocked = NULL;
    size_t nblocked = 0;
    int dead = 0;

    for (size_t i = 0; i < n; i++) {
        int32_t part = msgs[i]->partition;
        if (partition_blocked(blocked, nblocked, part)) {
            slot_set(&w->slots[i], SLOT_RETRY, "an earlier record of partition %d comes again",
                     (int)part);
            continue;
        }
        pump_one(w, msgs[i], &w->slots[i]);
        if (w->slots[i].state == SLOT_RETRY) {
            blocked = ncmp_xrealloc(blocked, (nblocked + 1) * sizeof(*blocked));
            blocked[nblocked++] = part;
        }
    }
    free(blocked);
    wait_acks(w);
    for (size_t i = 0; i < n; i++) {
        if (w->slots[i].state == SLOT_DEAD) {
            dead_letter(w, msgs[i], &w->slots[i]);
            dead = 1;
        }
    }
    if (dead)
        wait_acks(w);
}

/* --- commit and rewind --------------------------------------------------- */

/* Per partition: the offset to commit (after the last record handled, or
 * at the first one to retry), and whether to rewind to it. */
typedef struct part_pos {
    int32_t partition;
    int64_t next;
    int retry;
} part_pos;

static size_t batch_positions(pump_worker *w, rd_kafka_message_t **msgs, size_t n, part_pos *pos)
{
    size_t np = 0;

    for (size_t i = 0; i < n; i++) {
        size_t j;
        for (j = 0; j < np && pos[j].partition != msgs[i]->partition; j++)
            ;
        if (j == np) {
            pos[np].partition = msgs[i]->partition;
            pos[np].retry = 0;
            np++;
        } else if (pos[j].retry) {
            continue; /* everything after the first retry comes again */
        }
        if (w->slots[i].state == SLOT_RETRY) {
            pos[j].retry = 1;
            pos[j].next = msgs[i]->offset;
        } else {
            pos[j].next = msgs[i]->offset + 1;
        }
    }
    return np;
}

static void offset_commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t e,
                             rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    pump_worker *w = opaque;

    if (e && e != RD_KAFKA_RESP_ERR__NO_OFFSET)
        log_warn(w->p->role->name,
                 "worker %d: offset commit failed (those records may be sent again): %s", w->index,
                 rd_kafka_err2str(e));
}

/* Commit (asynchronously while running: the next commit or the close
 * waits for it) and rewind the partitions that have records to retry. */
static void commit_and_rewind(pump_worker *w, const part_pos *pos, size_t np)
{
    const char *topic = w->p->role->input;
    rd_kafka_topic_partition_list_t *commit = rd_kafka_topic_partition_list_new((int)np);
    rd_kafka_topic_partition_list_t *rewind = NULL;
    rd_kafka_resp_err_t e;

    for (size_t j = 0; j < np; j++) {
        rd_kafka_topic_partition_list_add(commit, topic, pos[j].partition)->offset = pos[j].next;
        if (!pos[j].retry)
            continue;
        if (!rewind)
            rewind = rd_kafka_topic_partition_list_new((int)np);
        rd_kafka_topic_partition_list_add(rewind, topic, pos[j].partition)->offset = pos[j].next;
    }
    ncmp_fault_point(w->p->point_before);
    e = rd_kafka_commit(w->consumer, commit, pump_stopping(w->p) ? 0 : 1);
    if (e && e != RD_KAFKA_RESP_ERR__NO_OFFSET)
        log_warn(w->p->role->name, "worker %d: offset commit failed: %s", w->index,
                 rd_kafka_err2str(e));
    ncmp_fault_point(w->p->point_after);
    if (rewind) {
        rd_kafka_error_t *error = rd_kafka_seek_partitions(w->consumer, rewind, 10000);
        if (error) {
            /* a partition no longer ours restarts at its commit anyway */
            log_warn(w->p->role->name, "worker %d: rewind: %s", w->index,
                     rd_kafka_error_string(error));
            rd_kafka_error_destroy(error);
        }
        rd_kafka_topic_partition_list_destroy(rewind);
    }
    rd_kafka_topic_partition_list_destroy(commit);
}

/* --- clients ------------------------------------------------------------- */

/* A member of the role's group; a batch is always settled before the next
 * poll, so nothing of a revoked partition is in flight at a rebalance. */
static int consumer_new(pump_worker *w, ncmp_err *err)
{
    const ncmp_config *cfg = w->p->cfg;
    const ncmp_kafka_hooks hooks = {.opaque = w, .offset_commit_cb = offset_commit_cb};
    const char *topics[1] = {w->p->role->input};
    char instance[300] = "";
    ncmp_kafka_opts kopts;
    rd_kafka_t *consumer = NULL;

    if (*cfg->kafka_instance_id)
        snprintf(instance, sizeof(instance), "%s-%s-%d", cfg->kafka_instance_id, w->p->role->name,
                 w->index);
    ncmp_kafka_opts_from_config(&kopts, cfg);
    if (ncmp_kafka_consumer_new(&consumer, &kopts, w->p->group, instance, topics, 1, &hooks, err) !=
        0)
        return ncmp_err_prefix(err, "%s", w->p->role->input);
    w->queue = rd_kafka_queue_get_consumer(consumer);
    ncmp_queue_waiter_init(&w->waiter, w->queue);
    pthread_mutex_lock(&w->p->lock); /* in the lag collector's sight */
    w->consumer = consumer;
    pthread_mutex_unlock(&w->p->lock);
    return 0;
}

/* bulk: a key lands on the partition a Java client (NCMP) picks, and a
 * pump is about throughput. A fatal error of this producer stops the
 * process (ncmp_kafka's error callback): the records it failed are not
 * committed, and are sent again after the restart. */
static int producer_new(pump_worker *w, ncmp_err *err)
{
    const ncmp_kafka_hooks hooks = {.opaque = w, .dr_msg_cb = dr_cb};
    char client_id[300];
    ncmp_kafka_opts kopts;

    snprintf(client_id, sizeof(client_id), "ncmpd-%s-%d", w->p->role->name, w->index);
    ncmp_kafka_opts_from_config(&kopts, w->p->cfg);
    return ncmp_kafka_producer_new(&w->producer, &kopts, NCMP_PRODUCER_BULK, client_id, &hooks,
                                   err);
}

/* --- the worker ---------------------------------------------------------- */

static void worker_set_ready(pump_worker *w)
{
    pthread_mutex_lock(&w->p->lock);
    w->ready = 1;
    pthread_cond_broadcast(&w->p->ready_cond);
    pthread_mutex_unlock(&w->p->lock);
}

static void consumer_close(pump_worker *w)
{
    rd_kafka_t *consumer = w->consumer;

    if (w->queue) {
        ncmp_queue_waiter_fini(&w->waiter);
        rd_kafka_queue_destroy(w->queue);
    }
    w->queue = NULL;
    if (!consumer)
        return;
    pthread_mutex_lock(&w->p->lock); /* out of the lag collector's sight */
    w->consumer = NULL;
    pthread_mutex_unlock(&w->p->lock);
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
}

static int worker_make_consumer(void *arg, ncmp_err *err)
{
    return consumer_new(arg, err);
}

static int worker_stopping(void *arg)
{
    const pump_worker *w = arg;
    return pump_stopping(w->p);
}

/* The member failed for good (fenced: ncmp_kafka_polled_take): close
 * it and make a new one with the same instance id (ncmp_kafka_member_renew),
 * until one is made or the pump stops. The new one resumes from the
 * committed offsets: what the old one forwarded without committing is
 * forwarded again (forwarding is at least once). */
static void renew_consumer(pump_worker *w, const ncmp_err *why)
{
    consumer_close(w);
    ncmp_kafka_member_renew(w->p->role->name, w->index, w->p->group, why, worker_make_consumer,
                            worker_stopping, w);
}

/* Wait for records; drop (and log) the error events among them. */
static size_t poll_batch(pump_worker *w)
{
    ssize_t got;
    size_t kept;
    ncmp_err err;

    ncmp_queue_waiter_wait(&w->waiter, w->p->role->batch_wait_ms);
    got = rd_kafka_consume_batch_queue(w->queue, w->p->role->batch_wait_ms, w->msgs,
                                       (size_t)w->p->role->batch_size);
    if (ncmp_kafka_polled_take(w->consumer, w->p->group, w->p->role->name, w->msgs,
                               got > 0 ? (size_t)got : 0, &kept, &err) != 0) {
        renew_consumer(w, &err);
        return 0;
    }
    return kept;
}

/* After a batch with records to retry, wait before taking them again. */
static void back_off(pump_worker *w, size_t n)
{
    const char *why = "";
    size_t retries = 0;

    for (size_t i = 0; i < n; i++) {
        if (w->slots[i].state != SLOT_RETRY)
            continue;
        if (!retries++)
            why = w->slots[i].reason;
    }
    if (!retries) {
        w->backoff_ms = BACKOFF_MIN_MS;
        return;
    }
    w->retried += (long)retries;
    log_warn(w->p->role->name, "worker %d: %zu records to forward again in %ld ms: %s", w->index,
             retries, w->backoff_ms, why);
    for (long slept = 0; slept < w->backoff_ms && !pump_stopping(w->p); slept += 50)
        ncmp_sleep_ms(50);
    w->backoff_ms = w->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : w->backoff_ms * 2;
}

static void run_batch(pump_worker *w, size_t n, part_pos *pos)
{
    double t0 = ncmp_now_ms();
    size_t np;

    pump_batch(w, w->msgs, n);
    np = batch_positions(w, w->msgs, n, pos);
    commit_and_rewind(w, pos, np);
    back_off(w, n);
    for (size_t i = 0; i < n; i++) {
        slot_clear(&w->slots[i]);
        rd_kafka_message_destroy(w->msgs[i]);
    }
    log_trace(w->p->role->name, "worker %d: batch of %zu in %.1f ms", w->index, n,
              ncmp_now_ms() - t0);
}

static void *worker_main(void *arg)
{
    pump_worker *w = arg;
    size_t max = (size_t)w->p->role->batch_size;
    part_pos *pos = ncmp_xcalloc(max, sizeof(*pos));

    w->slots = ncmp_xcalloc(max, sizeof(*w->slots));
    w->msgs = ncmp_xcalloc(max, sizeof(*w->msgs));
    w->backoff_ms = BACKOFF_MIN_MS;
    if (producer_new(w, &w->err) != 0 || consumer_new(w, &w->err) != 0) {
        w->failed = 1;
        goto done;
    }
    worker_set_ready(w);
    while (!pump_stopping(w->p) && w->consumer) {
        size_t n = poll_batch(w);
        if (n)
            run_batch(w, n, pos);
    }
    log_info(w->p->role->name,
             "worker %d stopping: %ld forwarded, %ld dead-lettered, %ld handled, %ld not ours, "
             "%ld retried",
             w->index, w->sent, w->dead, w->done, w->skipped, w->retried);
done:
    worker_set_ready(w);
    consumer_close(w);
    if (w->producer) {
        rd_kafka_flush(w->producer, 10000);
        rd_kafka_destroy(w->producer);
    }
    free(w->slots);
    free(w->msgs);
    free(pos);
    if (w->failed)
        ncmp_signal_request_stop();
    return NULL;
}

/* --- the pool ------------------------------------------------------------- */

/* Collector (on the scraping thread): the lag of the workers' partitions,
 * so that a pump falling behind shows as ncmp_consumer_lag_records as a
 * stage role's does. */
static void pump_collect(void *arg)
{
    ncmp_pump *p = arg;
    double sum = 0;

    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nworkers; i++)
        if (p->workers[i].consumer && p->workers[i].ready && !p->workers[i].failed)
            sum += (double)ncmp_kafka_assigned_lag(p->workers[i].consumer, p->role->input);
    pthread_mutex_unlock(&p->lock);
    ncmp_gauge_set(p->lag, sum);
}

int ncmp_pump_start(ncmp_pump **out, const ncmp_config *cfg, const ncmp_pump_role *role,
                    ncmp_err *err)
{
    ncmp_pump *p;

    if (!ncmp_kafka_topic_name_valid(role->input, strlen(role->input)) ||
        strlen(role->input) + 4 > NCMP_KAFKA_TOPIC_NAME_MAX)
        return ncmp_err_set(err, NCMP_ERR_FATAL,
                            "%s: input topic '%s' must be a valid topic name of at most %d bytes",
                            role->name, role->input, NCMP_KAFKA_TOPIC_NAME_MAX - 4);
    p = ncmp_xcalloc(1, sizeof(*p));
    p->cfg = cfg;
    p->role = role;
    ncmp_kafka_group_name(p->group, sizeof(p->group), cfg->kafka_group_id, role->name);
    ncmp_dlq_topic(p->dlq, sizeof(p->dlq), role->input);
    snprintf(p->point_before, sizeof(p->point_before), "%s.before-commit", role->name);
    snprintf(p->point_after, sizeof(p->point_after), "%s.after-commit", role->name);
    p->nworkers = role->workers > 0 ? role->workers : 1;
    p->workers = ncmp_xcalloc((size_t)p->nworkers, sizeof(*p->workers));
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->ready_cond, NULL);
    for (int i = 0; i < p->nworkers; i++) {
        p->workers[i].p = p;
        p->workers[i].index = i;
        if (pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]) != 0) {
            ncmp_signal_request_stop();
            ncmp_pump_join(p, NULL);
            ncmp_pump_destroy(p);
            return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot start a %s thread", role->name);
        }
        p->workers[i].started = 1;
    }
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->nworkers; i++)
        while (!p->workers[i].ready)
            pthread_cond_wait(&p->ready_cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nworkers; i++) {
        if (p->workers[i].failed) {
            *err = p->workers[i].err;
            ncmp_signal_request_stop();
            ncmp_pump_join(p, NULL);
            ncmp_pump_destroy(p);
            return -1;
        }
    }
    {
        const char *values[2] = {role->name, role->input};
        p->lag = ncmp_gauge_get(ncmp_metrics_lib_get()->consumer_lag, values);
        p->collector = ncmp_metrics_collector_add(pump_collect, p);
    }
    log_info(role->name, "%d workers started, group %s, batch %d, from %s", p->nworkers, p->group,
             role->batch_size, role->input);
    *out = p;
    return 0;
}

void ncmp_pump_stop(ncmp_pump *p)
{
    if (p)
        atomic_store(&p->stop, 1);
}

int ncmp_pump_join(ncmp_pump *p, ncmp_err *err)
{
    int rc = 0;

    for (int i = 0; i < p->nworkers; i++) {
        if (!p->workers[i].started)
            continue;
        pthread_join(p->workers[i].thread, NULL);
        p->workers[i].started = 0;
        if (p->workers[i].failed && rc == 0) {
            rc = -1;
            if (err)
                *err = p->workers[i].err;
        }
    }
    return rc;
}

void ncmp_pump_destroy(ncmp_pump *p)
{
    if (!p)
        return;
    if (p->collector)
        ncmp_metrics_collector_remove(p->collector);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->ready_cond);
    free(p->workers);
    free(p);
}
