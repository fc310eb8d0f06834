#include "forward.h"

#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_dlq.h"
#include "ncmp_fault.h"
#include "ncmp_kafka.h"
#include "ncmp_kafka_config.h"
#include "ncmp_log.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define TOPIC_NAME_MAX NCMP_KAFKA_TOPIC_NAME_MAX
#define REASON_MAX     512

/* What became of one record of the batch. */
typedef enum slot_state {
    SLOT_DONE,      /* acknowledged where it had to go, or not ours */
    SLOT_SENT,      /* produced to its output; delivery report pending */
    SLOT_DEAD,      /* to be dead-lettered (reason set) */
    SLOT_DEAD_SENT, /* produced to the dead-letter topic; report pending */
    SLOT_RETRY,     /* failed for a passing reason: its partition restarts here */
} slot_state;

typedef struct fwd_slot {
    slot_state state;
    int truncate;                /* dead-letter without the value, whatever its size */
    char *reason;                /* owned; why it is dead-lettered or retried */
    rd_kafka_headers_t *headers; /* owned; the original headers once handed over */
} fwd_slot;

typedef enum route_kind {
    ROUTE_FORWARD,
    ROUTE_REJECT,
    ROUTE_SKIP,
} route_kind;

/* Where one record goes; filled by a role's route function. */
typedef struct fwd_route {
    char topic[TOPIC_NAME_MAX + 1];
    const void *key; /* borrowed from the record or its headers */
    size_t keylen;
    char reason[REASON_MAX];
} fwd_route;

typedef struct fwd_role {
    const char *name;
    const char *input;
    int workers;
    int batch_size;
    int batch_wait_ms;
    /* an unknown output topic is the record's fault (a client topic that
     * does not exist), not the deployment's */
    int unknown_topic_is_permanent;
    /* `headers` are the record's (may be NULL), borrowed */
    route_kind (*route)(const forward *f, const rd_kafka_message_t *m,
                        const rd_kafka_headers_t *headers, fwd_route *r);
} fwd_role;

typedef struct fwd_worker {
    forward *f;
    int index;
    pthread_t thread;
    int started;
    int ready; /* consuming, or given up: under f->lock */
    int failed;
    ncmp_err err;
    rd_kafka_t *consumer;
    rd_kafka_queue_t *queue;
    rd_kafka_t *producer;
    long pending; /* delivery reports to come; served on this thread */
    fwd_slot *slots;
    rd_kafka_message_t **msgs;
    long backoff_ms;
    long forwarded, dead, skipped, retried;
} fwd_worker;

struct forward {
    const ncmp_config *cfg;
    fwd_role role;
    char group[256];
    char dlq[256];
    char point_before[160];
    char point_after[160];
    fwd_worker *workers;
    int nworkers;
    pthread_mutex_t lock;
    pthread_cond_t ready_cond;
};

/* --- routes -------------------------------------------------------------- */

static route_kind route_avc(const forward *f, const rd_kafka_message_t *m,
                            const rd_kafka_headers_t *headers, fwd_route *r)
{
    snprintf(r->topic, sizeof(r->topic), "%s", f->cfg->avc_forward_output_topic);
    r->key = m->key;
    r->keylen = m->key ? m->key_len : 0;
    return ROUTE_FORWARD;
}

/* A header value for a log line or reason: printable ASCII, cut to 80. */
static void printable(char *out, size_t outlen, const void *value, size_t len)
{
    const unsigned char *s = value;
    size_t n = 0;

    for (size_t i = 0; i < len && n + 4 < outlen && i < 80; i++)
        out[n++] = (s[i] >= 0x20 && s[i] < 0x7f) ? (char)s[i] : '?';
    if (len > 80 && n + 4 < outlen) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}

static int header_last(const rd_kafka_headers_t *h, const char *name, const void **value,
                       size_t *len)
{
    *value = NULL;
    *len = 0;
    if (!h || rd_kafka_header_get_last(h, name, value, len) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return -1;
    if (!*value)
        *len = 0;
    return 0;
}

/* NCMP's DataOperationEventConsumer takes the records whose ce_type
 * contains "DataOperationEvent"; the others (legacy non-CloudEvent
 * responses, which carry no ce_type) are another consumer's. */
static route_kind route_async(const forward *f, const rd_kafka_message_t *m,
                              const rd_kafka_headers_t *headers, fwd_route *r)
{
    static const char wanted[] = "DataOperationEvent";
    const void *value;
    size_t len;
    char shown[96];

    if (header_last(headers, "ce_type", &value, &len) != 0 ||
        !memmem(value, len, wanted, sizeof(wanted) - 1))
        return ROUTE_SKIP;
    if (header_last(headers, "ce_destination", &value, &len) != 0) {
        snprintf(r->reason, sizeof(r->reason), "no ce_destination header");
        return ROUTE_REJECT;
    }
    if (!ncmp_kafka_topic_name_valid(value, len)) {
        printable(shown, sizeof(shown), value, len);
        snprintf(r->reason, sizeof(r->reason),
                 "ce_destination '%s' (%zu bytes) is not a valid topic name "
                 "(1-249 of [a-zA-Z0-9._-], not . or ..)",
                 shown, len);
        return ROUTE_REJECT;
    }
    memcpy(r->topic, value, len);
    r->topic[len] = '\0';
    if (strcmp(r->topic, f->role.input) == 0 || strcmp(r->topic, f->dlq) == 0) {
        snprintf(r->reason, sizeof(r->reason),
                 "ce_destination '%s' is a topic of the forwarder itself", r->topic);
        return ROUTE_REJECT;
    }
    /* the key points into the headers, which stay alive until the record
     * is produced (librdkafka copies keys) */
    if (header_last(headers, "ce_correlationid", &r->key, &r->keylen) != 0) {
        r->key = m->key;
        r->keylen = m->key ? m->key_len : 0;
    }
    return ROUTE_FORWARD;
}

/* --- the slots of a batch ------------------------------------------------ */

static void slot_clear(fwd_slot *s)
{
    free(s->reason);
    if (s->headers)
        rd_kafka_headers_destroy(s->headers);
    memset(s, 0, sizeof(*s));
}

static void slot_set(fwd_slot *s, slot_state state, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void slot_set(fwd_slot *s, slot_state state, const char *fmt, ...)
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
static int err_is_permanent(const forward *f, rd_kafka_resp_err_t e)
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
        return f->role.unknown_topic_is_permanent;
    default:
        return 0;
    }
}

/* Served by rd_kafka_poll() on the worker's thread. */
static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    fwd_worker *w = opaque;
    fwd_slot *s = m->_private;
    const char *topic = rd_kafka_topic_name(m->rkt);
    rd_kafka_headers_t *h = NULL;

    w->pending--;
    if (!m->err) {
        if (s->state == SLOT_DEAD_SENT)
            w->dead++;
        else
            w->forwarded++;
        s->state = SLOT_DONE;
        return;
    }
    if (s->state == SLOT_SENT && err_is_permanent(w->f, m->err)) {
        /* the headers went with the record: keep a copy for the dead letter */
        if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR && h)
            s->headers = rd_kafka_headers_copy(h);
        s->truncate = err_is_size(m->err);
        slot_set(s, SLOT_DEAD, "delivery to %s failed: %s", topic, rd_kafka_err2str(m->err));
        return;
    }
    slot_set(s, SLOT_RETRY, "delivery to %s failed: %s", topic, rd_kafka_err2str(m->err));
}

/* Queue one record; on success the headers are librdkafka's and the value
 * must stay alive until the delivery report (it is not copied). */
static rd_kafka_resp_err_t produce(fwd_worker *w, const char *topic, const void *key, size_t keylen,
                                   const void *value, size_t len, rd_kafka_headers_t *headers,
                                   fwd_slot *s)
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

/* Forward one record, or mark it for the dead-letter topic. */
static void forward_one(fwd_worker *w, rd_kafka_message_t *m, fwd_slot *s)
{
    forward *f = w->f;
    fwd_route r;
    rd_kafka_headers_t *headers = NULL;
    rd_kafka_resp_err_t e;

    if (rd_kafka_message_headers(m, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR)
        headers = NULL;
    r.reason[0] = '\0';
    switch (f->role.route(f, m, headers, &r)) {
    case ROUTE_SKIP:
        log_debug(f->role.name, "not forwarded topic=%s partition=%d offset=%lld: not ours",
                  f->role.input, m->partition, (long long)m->offset);
        w->skipped++;
        s->state = SLOT_DONE;
        return;
    case ROUTE_REJECT:
        slot_set(s, SLOT_DEAD, "%s", r.reason);
        return;
    case ROUTE_FORWARD:
        break;
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
    if (err_is_permanent(f, e)) {
        s->truncate = err_is_size(e);
        slot_set(s, SLOT_DEAD, "produce to %s: %s", r.topic, rd_kafka_err2str(e));
    } else {
        slot_set(s, SLOT_RETRY, "produce to %s: %s", r.topic, rd_kafka_err2str(e));
    }
}

/* The dead letter of m (ncmp_dlq), with the original headers the slot
 * may hold already. */
static void dead_letter(fwd_worker *w, rd_kafka_message_t *m, fwd_slot *s)
{
    forward *f = w->f;
    ncmp_dlq_record rec;
    rd_kafka_resp_err_t e;

    ncmp_dlq_record_init(&rec, m, f->role.name, s->reason, (size_t)f->cfg->kafka_max_message_bytes,
                         s->truncate, s->headers);
    s->headers = NULL; /* the record's now */
    s->state = SLOT_DEAD_SENT;
    e = produce(w, rec.topic, rec.key, rec.key_len, rec.value, rec.len, rec.headers, s);
    if (e) {
        ncmp_dlq_record_clear(&rec); /* not queued: still ours */
        slot_set(s, SLOT_RETRY, "dead letter to %s: %s", f->dlq, rd_kafka_err2str(e));
    }
}

/* Serve delivery reports until none is pending. Once a stop was asked for
 * and half the shutdown time has passed, give up on what the broker has
 * not acknowledged: it fails (and is not committed). */
static void wait_acks(fwd_worker *w)
{
    double give_up = 0;

    while (w->pending > 0) {
        rd_kafka_poll(w->producer, 50);
        if (!ncmp_stopping || w->pending <= 0)
            continue;
        if (!give_up) {
            give_up = ncmp_now_ms() + w->f->cfg->shutdown_timeout_s * 500.0;
        } else if (give_up > 0 && ncmp_now_ms() > give_up) {
            log_warn(w->f->role.name,
                     "worker %d: %ld records not acknowledged; not committing them", w->index,
                     w->pending);
            rd_kafka_purge(w->producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
            give_up = -1;
        }
    }
}

/* Forward msgs[0..n): every record ends DONE or RETRY. */
static void forward_batch(fwd_worker *w, rd_kafka_message_t **msgs, size_t n)
{
    int dead = 0;

    for (size_t i = 0; i < n; i++)
        forward_one(w, msgs[i], &w->slots[i]);
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

static size_t batch_positions(fwd_worker *w, rd_kafka_message_t **msgs, size_t n, part_pos *pos)
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
    fwd_worker *w = opaque;

    if (e && e != RD_KAFKA_RESP_ERR__NO_OFFSET)
        log_warn(w->f->role.name,
                 "worker %d: offset commit failed (those records may be forwarded again): %s",
                 w->index, rd_kafka_err2str(e));
}

/* Commit (asynchronously while running: the next commit or the close
 * waits for it) and rewind the partitions that have records to retry. */
static void commit_and_rewind(fwd_worker *w, const part_pos *pos, size_t np)
{
    const char *topic = w->f->role.input;
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
    ncmp_fault_point(w->f->point_before);
    e = rd_kafka_commit(w->consumer, commit, ncmp_stopping ? 0 : 1);
    if (e && e != RD_KAFKA_RESP_ERR__NO_OFFSET)
        log_warn(w->f->role.name, "worker %d: offset commit failed: %s", w->index,
                 rd_kafka_err2str(e));
    ncmp_fault_point(w->f->point_after);
    if (rewind) {
        rd_kafka_error_t *error = rd_kafka_seek_partitions(w->consumer, rewind, 10000);
        if (error) {
            /* a partition no longer ours restarts at its commit anyway */
            log_warn(w->f->role.name, "worker %d: rewind: %s", w->index,
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
static int consumer_new(fwd_worker *w, ncmp_err *err)
{
    const ncmp_config *cfg = w->f->cfg;
    const ncmp_kafka_hooks hooks = {.opaque = w, .offset_commit_cb = offset_commit_cb};
    const char *topics[1] = {w->f->role.input};
    char instance[300] = "";
    ncmp_kafka_opts kopts;

    if (*cfg->kafka_instance_id)
        snprintf(instance, sizeof(instance), "%s-%s-%d", cfg->kafka_instance_id, w->f->role.name,
                 w->index);
    ncmp_kafka_opts_from_config(&kopts, cfg);
    if (ncmp_kafka_consumer_new(&w->consumer, &kopts, w->f->group, instance, topics, 1, &hooks,
                                err) != 0)
        return ncmp_err_prefix(err, "%s", w->f->role.input);
    w->queue = rd_kafka_queue_get_consumer(w->consumer);
    return 0;
}

/* bulk: a key lands on the partition a Java client (NCMP) picks, and the
 * forwarders are about throughput. A fatal error of this producer stops
 * the process (ncmp_kafka's error callback): the records it failed are
 * not committed, and are forwarded again after the restart. */
static int producer_new(fwd_worker *w, ncmp_err *err)
{
    const ncmp_kafka_hooks hooks = {.opaque = w, .dr_msg_cb = dr_cb};
    char client_id[300];
    ncmp_kafka_opts kopts;

    snprintf(client_id, sizeof(client_id), "ncmpd-%s-%d", w->f->role.name, w->index);
    ncmp_kafka_opts_from_config(&kopts, w->f->cfg);
    return ncmp_kafka_producer_new(&w->producer, &kopts, NCMP_PRODUCER_BULK, client_id, &hooks,
                                   err);
}

/* --- the worker ---------------------------------------------------------- */

static void worker_set_ready(fwd_worker *w)
{
    pthread_mutex_lock(&w->f->lock);
    w->ready = 1;
    pthread_cond_broadcast(&w->f->ready_cond);
    pthread_mutex_unlock(&w->f->lock);
}

/* Wait for records; drop (and log) the error events among them. */
static size_t poll_batch(fwd_worker *w)
{
    ssize_t got = rd_kafka_consume_batch_queue(w->queue, w->f->role.batch_wait_ms, w->msgs,
                                               (size_t)w->f->role.batch_size);
    size_t kept = 0;

    for (ssize_t i = 0; i < got; i++) {
        rd_kafka_message_t *m = w->msgs[i];
        if (m->err) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                log_warn(w->f->role.name, "consumer error on %s [%d]: %s",
                         m->rkt ? rd_kafka_topic_name(m->rkt) : "-", m->partition,
                         rd_kafka_message_errstr(m));
            rd_kafka_message_destroy(m);
            continue;
        }
        w->msgs[kept++] = m;
    }
    return kept;
}

/* After a batch with records to retry, wait before taking them again. */
static void back_off(fwd_worker *w, size_t n)
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
    log_warn(w->f->role.name, "worker %d: %zu records to forward again in %ld ms: %s", w->index,
             retries, w->backoff_ms, why);
    for (long slept = 0; slept < w->backoff_ms && !ncmp_stopping; slept += 50)
        ncmp_sleep_ms(50);
    w->backoff_ms = w->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : w->backoff_ms * 2;
}

static void run_batch(fwd_worker *w, size_t n, part_pos *pos)
{
    double t0 = ncmp_now_ms();
    size_t np;

    forward_batch(w, w->msgs, n);
    np = batch_positions(w, w->msgs, n, pos);
    commit_and_rewind(w, pos, np);
    back_off(w, n);
    for (size_t i = 0; i < n; i++) {
        slot_clear(&w->slots[i]);
        rd_kafka_message_destroy(w->msgs[i]);
    }
    log_trace(w->f->role.name, "worker %d: batch of %zu in %.1f ms", w->index, n,
              ncmp_now_ms() - t0);
}

static void *worker_main(void *arg)
{
    fwd_worker *w = arg;
    size_t max = (size_t)w->f->role.batch_size;
    part_pos *pos = ncmp_xcalloc(max, sizeof(*pos));

    w->slots = ncmp_xcalloc(max, sizeof(*w->slots));
    w->msgs = ncmp_xcalloc(max, sizeof(*w->msgs));
    w->backoff_ms = BACKOFF_MIN_MS;
    if (producer_new(w, &w->err) != 0 || consumer_new(w, &w->err) != 0) {
        w->failed = 1;
        goto done;
    }
    worker_set_ready(w);
    while (!ncmp_stopping) {
        size_t n = poll_batch(w);
        if (n)
            run_batch(w, n, pos);
    }
    log_info(w->f->role.name,
             "worker %d stopping: %ld forwarded, %ld dead-lettered, %ld not ours, %ld retried",
             w->index, w->forwarded, w->dead, w->skipped, w->retried);
done:
    worker_set_ready(w);
    if (w->queue)
        rd_kafka_queue_destroy(w->queue);
    if (w->consumer) {
        rd_kafka_consumer_close(w->consumer);
        rd_kafka_destroy(w->consumer);
    }
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

/* --- the role ------------------------------------------------------------ */

static int role_init(fwd_role *role, const ncmp_config *cfg, const char *name, ncmp_err *err)
{
    memset(role, 0, sizeof(*role));
    if (strcmp(name, FORWARD_AVC_ROLE) == 0) {
        *role = (fwd_role){FORWARD_AVC_ROLE,
                           cfg->avc_forward_input_topic,
                           cfg->avc_forward_workers,
                           cfg->avc_forward_batch_size,
                           cfg->avc_forward_batch_wait_ms,
                           0,
                           route_avc};
        if (!ncmp_kafka_topic_name_valid(cfg->avc_forward_output_topic,
                                         strlen(cfg->avc_forward_output_topic)) ||
            strcmp(cfg->avc_forward_output_topic, role->input) == 0)
            return ncmp_err_set(err, NCMP_ERR_FATAL,
                                "avc-forward.output-topic '%s' must be a valid topic name other "
                                "than avc-forward.input-topic",
                                cfg->avc_forward_output_topic);
    } else if (strcmp(name, FORWARD_ASYNC_ROLE) == 0) {
        *role = (fwd_role){FORWARD_ASYNC_ROLE,
                           cfg->async_forward_input_topic,
                           cfg->async_forward_workers,
                           cfg->async_forward_batch_size,
                           cfg->async_forward_batch_wait_ms,
                           1,
                           route_async};
    } else {
        return ncmp_err_set(err, NCMP_ERR_FATAL, "no forwarder role '%s'", name);
    }
    if (!ncmp_kafka_topic_name_valid(role->input, strlen(role->input)) ||
        strlen(role->input) + 4 > TOPIC_NAME_MAX)
        return ncmp_err_set(err, NCMP_ERR_FATAL,
                            "%s.input-topic '%s' must be a valid topic name of at most %d bytes",
                            name, role->input, TOPIC_NAME_MAX - 4);
    return 0;
}

size_t forward_topics(const ncmp_config *cfg, const char *role, char (*names)[256], size_t max)
{
    fwd_role r;
    ncmp_err err;
    size_t n = 0;

    if (role_init(&r, cfg, role, &err) != 0)
        return 0;
    if (n < max)
        snprintf(names[n++], 256, "%s", r.input);
    if (n < max)
        ncmp_dlq_topic(names[n++], 256, r.input);
    if (strcmp(role, FORWARD_AVC_ROLE) == 0 && n < max)
        snprintf(names[n++], 256, "%s", cfg->avc_forward_output_topic);
    return n;
}

int forward_start(forward **out, const ncmp_config *cfg, const char *role, ncmp_err *err)
{
    forward *f = ncmp_xcalloc(1, sizeof(*f));

    if (role_init(&f->role, cfg, role, err) != 0) {
        free(f);
        return -1;
    }
    f->cfg = cfg;
    ncmp_kafka_group_name(f->group, sizeof(f->group), cfg->kafka_group_id, f->role.name);
    ncmp_dlq_topic(f->dlq, sizeof(f->dlq), f->role.input);
    snprintf(f->point_before, sizeof(f->point_before), "%s.before-commit", f->role.name);
    snprintf(f->point_after, sizeof(f->point_after), "%s.after-commit", f->role.name);
    f->nworkers = f->role.workers > 0 ? f->role.workers : 1;
    f->workers = ncmp_xcalloc((size_t)f->nworkers, sizeof(*f->workers));
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->ready_cond, NULL);
    for (int i = 0; i < f->nworkers; i++) {
        f->workers[i].f = f;
        f->workers[i].index = i;
        if (pthread_create(&f->workers[i].thread, NULL, worker_main, &f->workers[i]) != 0) {
            ncmp_signal_request_stop();
            forward_join(f, NULL);
            forward_destroy(f);
            return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot start a %s thread", role);
        }
        f->workers[i].started = 1;
    }
    pthread_mutex_lock(&f->lock);
    for (int i = 0; i < f->nworkers; i++)
        while (!f->workers[i].ready)
            pthread_cond_wait(&f->ready_cond, &f->lock);
    pthread_mutex_unlock(&f->lock);
    for (int i = 0; i < f->nworkers; i++) {
        if (f->workers[i].failed) {
            *err = f->workers[i].err;
            ncmp_signal_request_stop();
            forward_join(f, NULL);
            forward_destroy(f);
            return -1;
        }
    }
    log_info(f->role.name, "%d workers started, group %s, batch %d: %s -> %s", f->nworkers,
             f->group, f->role.batch_size, f->role.input,
             f->role.route == route_avc ? cfg->avc_forward_output_topic : "ce_destination");
    *out = f;
    return 0;
}

int forward_join(forward *f, ncmp_err *err)
{
    int rc = 0;

    for (int i = 0; i < f->nworkers; i++) {
        if (!f->workers[i].started)
            continue;
        pthread_join(f->workers[i].thread, NULL);
        f->workers[i].started = 0;
        if (f->workers[i].failed && rc == 0) {
            rc = -1;
            if (err)
                *err = f->workers[i].err;
        }
    }
    return rc;
}

void forward_destroy(forward *f)
{
    if (!f)
        return;
    pthread_mutex_destroy(&f->lock);
    pthread_cond_destroy(&f->ready_cond);
    free(f->workers);
    free(f);
}
