#include "ncmp_kafka.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"

struct ncmp_producer {
    rd_kafka_t *rk;
};

/* fetch.wait.max.ms of consumers and readers. The broker answers a fetch
 * as soon as a record arrives (fetch.min.bytes is 1), so this does not
 * delay records: it is how often an idle consumer asks again, and how
 * long partitions assigned meanwhile wait for the fetch in flight. At
 * 10-20 ms an idle ncmpd had the broker answer about 580 empty fetches a
 * second (15% of a core on the broker, 5% in ncmpd). */
#define FETCH_WAIT_MS "100"

/* How long ncmp_queue_waiter_wait sleeps on an empty queue (at most):
 * also how soon a worker with nothing to do sees that it should stop. */
#define CONSUMER_IDLE_WAIT_MS 100

struct ncmp_consumer {
    rd_kafka_t *rk;
    rd_kafka_queue_t *queue;
    ncmp_queue_waiter waiter;
    char group[256];
};

/* --- what every client gets ---------------------------------------------- */

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    ncmp_log_level lvl = ncmp_log_level_from_syslog(level);
    NCMP_LOG(lvl, "rdkafka", "%s: %s: %s", rd_kafka_name(rk), fac, buf);
}

/* A producer's fatal error: it cannot keep its promises any more. Log it
 * and stop the process in order; a new process starts from what the
 * database and the committed offsets say. */
static void fatal_stop(rd_kafka_t *rk)
{
    char why[512];
    rd_kafka_resp_err_t e = rd_kafka_fatal_error(rk, why, sizeof(why));

    log_error("kafka", "%s: fatal error %s: %s; stopping", rd_kafka_name(rk),
              e ? rd_kafka_err2name(e) : "-", e ? why : "(no detail)");
    ncmp_signal_request_stop();
}

/* Runs on the thread that polls the client. librdkafka reconnects and
 * retries on its own: only what needs a person is an error. A group
 * consumer's fatal error is its owner's to handle (ncmp_kafka_polled_take):
 * the member is made again, the process goes on. */
static void error_cb(rd_kafka_t *rk, int e, const char *reason, void *opaque)
{
    (void)opaque;
    switch (e) {
    case RD_KAFKA_RESP_ERR__FATAL:
        if (rd_kafka_type(rk) == RD_KAFKA_CONSUMER)
            log_warn("kafka", "%s: %s", rd_kafka_name(rk), reason);
        else
            fatal_stop(rk);
        break;
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR__SSL:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
        log_error("kafka", "%s: %s: %s", rd_kafka_name(rk), rd_kafka_err2name(e), reason);
        break;
    default: /* brokers away, connections closed, timeouts */
        log_warn("kafka", "%s: %s: %s", rd_kafka_name(rk), rd_kafka_err2name(e), reason);
        break;
    }
}

static int conf_set(rd_kafka_conf_t *conf, const char *key, const char *value, ncmp_err *err)
{
    char errstr[512];

    if (rd_kafka_conf_set(conf, key, value, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "kafka.%s: %s", key, errstr);
    return 0;
}

/* Every setting but the enforced ones: servers, client id, record size,
 * then `defaults` (NULL-terminated key/value pairs: the profile's), then
 * the pass-through properties, which may override them; the callbacks.
 * Owned by the caller (or by rd_kafka_new once it succeeded). */
static rd_kafka_conf_t *conf_new(const ncmp_kafka_opts *opts, const char *client_id,
                                 const char *const *defaults, const ncmp_kafka_hooks *hooks,
                                 ncmp_err *err)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char bytes[32];

    snprintf(bytes, sizeof(bytes), "%d",
             opts->max_message_bytes > 0 ? opts->max_message_bytes : NCMP_KAFKA_MAX_MESSAGE_BYTES);
    if ((opts->bootstrap_servers && *opts->bootstrap_servers &&
         conf_set(conf, "bootstrap.servers", opts->bootstrap_servers, err) != 0) ||
        conf_set(conf, "client.id", client_id, err) != 0 ||
        conf_set(conf, "message.max.bytes", bytes, err) != 0)
        goto fail;
    for (const char *const *d = defaults; d && *d; d += 2)
        if (conf_set(conf, d[0], d[1], err) != 0)
            goto fail;
    for (size_t i = 0; i < opts->nprops; i++)
        if (conf_set(conf, opts->props[i].key, opts->props[i].value, err) != 0)
            goto fail;
    rd_kafka_conf_set_log_cb(conf, log_cb);
    rd_kafka_conf_set_error_cb(conf, error_cb);
    if (hooks) {
        if (hooks->dr_msg_cb)
            rd_kafka_conf_set_dr_msg_cb(conf, hooks->dr_msg_cb);
        if (hooks->offset_commit_cb)
            rd_kafka_conf_set_offset_commit_cb(conf, hooks->offset_commit_cb);
        rd_kafka_conf_set_opaque(conf, hooks->opaque);
    }
    return conf;
fail:
    rd_kafka_conf_destroy(conf);
    return NULL;
}

/* The one call of rd_kafka_new. Takes `conf` over in every case. */
static int client_new(rd_kafka_t **out, rd_kafka_type_t type, rd_kafka_conf_t *conf,
                      const char *what, ncmp_err *err)
{
    char errstr[512];
    rd_kafka_t *rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));

    if (!rk) {
        rd_kafka_conf_destroy(conf);
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot create Kafka %s: %s", what, errstr);
    }
    *out = rk;
    return 0;
}

/* --- producer ------------------------------------------------------------ */

/* Each profile's settings, which the pass-through properties may override. */
static const char *const profile_default[] = {"linger.ms", "5", NULL};
static const char *const profile_keyed[] = {"linger.ms", "5", "partitioner", "murmur2_random",
                                            NULL};
static const char *const profile_bulk[] = {"partitioner",
                                           "murmur2_random",
                                           "linger.ms",
                                           "10",
                                           "batch.num.messages",
                                           "10000",
                                           "queue.buffering.max.messages",
                                           "1000000",
                                           "compression.codec",
                                           "none",
                                           NULL};
static const char *const profile_prompt[] = {"linger.ms", "1", NULL};

static const struct {
    const char *name;
    const char *const *settings;
} profiles[] = {
    [NCMP_PRODUCER_DEFAULT] = {"default", profile_default},
    [NCMP_PRODUCER_KEYED] = {"keyed", profile_keyed},
    [NCMP_PRODUCER_BULK] = {"bulk", profile_bulk},
    [NCMP_PRODUCER_PROMPT] = {"prompt", profile_prompt},
};

#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))

const char *ncmp_producer_profile_name(ncmp_producer_profile profile)
{
    return (size_t)profile < NPROFILES ? profiles[profile].name : "?";
}

static int producer_new(rd_kafka_t **rk, const ncmp_kafka_opts *opts, ncmp_producer_profile profile,
                        const char *client_id, const char *transactional_id,
                        const ncmp_kafka_hooks *hooks, ncmp_err *err)
{
    rd_kafka_conf_t *conf;

    if ((size_t)profile >= NPROFILES)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "no producer profile %d", (int)profile);
    conf = conf_new(opts, client_id, profiles[profile].settings, hooks, err);
    if (!conf)
        return -1;
    /* order within a partition across retries, and no duplicates from
     * them; idempotence needs acks=all, said here for whoever reads it */
    if (conf_set(conf, "enable.idempotence", "true", err) != 0 ||
        conf_set(conf, "acks", "all", err) != 0 ||
        (transactional_id && conf_set(conf, "transactional.id", transactional_id, err) != 0)) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    return client_new(rk, RD_KAFKA_PRODUCER, conf, "producer", err);
}

int ncmp_kafka_producer_new(rd_kafka_t **rk, const ncmp_kafka_opts *opts,
                            ncmp_producer_profile profile, const char *client_id,
                            const ncmp_kafka_hooks *hooks, ncmp_err *err)
{
    return producer_new(rk, opts, profile, client_id, NULL, hooks, err);
}

int ncmp_kafka_txn_error(rd_kafka_error_t *e, const char *what, ncmp_err *err)
{
    ncmp_err_class cls = rd_kafka_error_is_fatal(e) ? NCMP_ERR_FATAL : NCMP_ERR_RETRY;

    ncmp_err_set(err, cls, "%s: %s", what, rd_kafka_error_string(e));
    rd_kafka_error_destroy(e);
    return -1;
}

int ncmp_kafka_txn_producer_new(rd_kafka_t **rk, const ncmp_kafka_opts *opts,
                                ncmp_producer_profile profile, const char *client_id,
                                const char *transactional_id, int timeout_ms,
                                const ncmp_kafka_hooks *hooks, ncmp_err *err)
{
    rd_kafka_error_t *e;

    if (producer_new(rk, opts, profile, client_id, transactional_id, hooks, err) != 0)
        return -1;
    e = rd_kafka_init_transactions(*rk, timeout_ms);
    if (e) {
        rd_kafka_destroy(*rk);
        *rk = NULL;
        return ncmp_kafka_txn_error(e, "initialising transactions", err);
    }
    return 0;
}

void ncmp_delivery_init(ncmp_delivery *d)
{
    atomic_init(&d->pending, 0);
    atomic_init(&d->failed, 0);
    d->first_error[0] = '\0';
}

/* The produced/failed series of a topic. Delivery reports come on every
 * thread that polls the producer, for a handful of topics each, so a small
 * per-thread cache saves the registry lookup on nearly every record. */
typedef struct topic_series {
    char topic[256];
    ncmp_counter *produced;
    ncmp_counter *failed;
} topic_series;

#define TOPIC_CACHE 4

static const topic_series *topic_series_get(const char *topic)
{
    static _Thread_local topic_series cache[TOPIC_CACHE];
    static _Thread_local unsigned next;
    const ncmp_metrics_lib *lib;
    topic_series *ts;
    const char *labels[1] = {topic};

    for (unsigned i = 0; i < TOPIC_CACHE; i++)
        if (cache[i].produced && strcmp(cache[i].topic, topic) == 0)
            return &cache[i];
    lib = ncmp_metrics_lib_get();
    ts = &cache[next++ % TOPIC_CACHE];
    ts->produced = ncmp_counter_get(lib->produced_records, labels);
    ts->failed = ncmp_counter_get(lib->produce_failures, labels);
    /* a name too long for the cache is looked up every time */
    snprintf(ts->topic, sizeof(ts->topic), "%s", strlen(topic) < sizeof(ts->topic) ? topic : "");
    return ts;
}

static void dr_msg_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    ncmp_delivery *d = m->_private;
    const topic_series *ts = topic_series_get(rd_kafka_topic_name(m->rkt));

    ncmp_counter_add(m->err ? ts->failed : ts->produced, 1);
    if (m->err) {
        log_warn("kafka", "delivery to %s [%d] failed: %s", rd_kafka_topic_name(m->rkt),
                 m->partition, rd_kafka_err2str(m->err));
    }
    if (!d)
        return;
    if (m->err && atomic_fetch_add(&d->failed, 1) == 0)
        snprintf(d->first_error, sizeof(d->first_error), "%s: %s", rd_kafka_topic_name(m->rkt),
                 rd_kafka_err2str(m->err));
    /* last: the waiter reads first_error once pending reaches zero */
    atomic_fetch_sub(&d->pending, 1);
}

int ncmp_producer_new(ncmp_producer **out, const ncmp_kafka_opts *opts,
                      ncmp_producer_profile profile, const char *client_id, ncmp_err *err)
{
    const ncmp_kafka_hooks hooks = {.dr_msg_cb = dr_msg_cb};
    rd_kafka_t *rk = NULL;
    ncmp_producer *p;

    if (ncmp_kafka_producer_new(&rk, opts, profile, client_id, &hooks, err) != 0)
        return -1;
    p = ncmp_xcalloc(1, sizeof(*p));
    p->rk = rk;
    *out = p;
    return 0;
}

void ncmp_producer_destroy(ncmp_producer *p)
{
    if (!p)
        return;
    if (rd_kafka_flush(p->rk, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        log_warn("kafka", "%d records not delivered at shutdown", rd_kafka_outq_len(p->rk));
    rd_kafka_destroy(p->rk);
    free(p);
}

rd_kafka_t *ncmp_producer_rk(ncmp_producer *p)
{
    return p->rk;
}

/* The producer had a fatal error: serve the error callback (which logs it
 * and asks the process to stop), make sure of the stop, and say so. */
static int producer_fatal(ncmp_producer *p, ncmp_err *err)
{
    char why[256];
    rd_kafka_resp_err_t e = rd_kafka_fatal_error(p->rk, why, sizeof(why));

    rd_kafka_poll(p->rk, 0);
    ncmp_signal_request_stop();
    return ncmp_err_set(err, NCMP_ERR_FATAL, "producer %s failed: %s: %s", rd_kafka_name(p->rk),
                        e ? rd_kafka_err2name(e) : "fatal error", e ? why : "");
}

int ncmp_producer_send(ncmp_producer *p, ncmp_delivery *d, const char *topic, int32_t partition,
                       const void *key, size_t keylen, const void *value, size_t len,
                       rd_kafka_headers_t *headers, ncmp_err *err)
{
    rd_kafka_resp_err_t e;

    if (d)
        atomic_fetch_add(&d->pending, 1);
    for (;;) {
        e = rd_kafka_producev(p->rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
                              RD_KAFKA_V_KEY(key, keylen), RD_KAFKA_V_VALUE((void *)value, len),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(headers),
                              RD_KAFKA_V_OPAQUE(d), RD_KAFKA_V_END);
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            break;
        rd_kafka_poll(p->rk, 10);
    }
    if (e) {
        ncmp_counter_add(topic_series_get(topic)->failed, 1);
        /* not queued: the headers are still ours */
        if (headers)
            rd_kafka_headers_destroy(headers);
        if (d)
            atomic_fetch_sub(&d->pending, 1);
        if (e == RD_KAFKA_RESP_ERR__FATAL)
            return producer_fatal(p, err);
        return ncmp_err_set(
            err, e == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ? NCMP_ERR_REJECT : NCMP_ERR_RETRY,
            "produce to %s: %s", topic, rd_kafka_err2str(e));
    }
    rd_kafka_poll(p->rk, 0);
    return 0;
}

int ncmp_producer_wait(ncmp_producer *p, ncmp_delivery *d, int timeout_ms, ncmp_err *err)
{
    long deadline = ncmp_now_ms() + timeout_ms;
    long failed;

    while (atomic_load(&d->pending) > 0) {
        if (rd_kafka_fatal_error(p->rk, NULL, 0))
            return producer_fatal(p, err);
        if (ncmp_now_ms() >= deadline)
            return ncmp_err_set(err, NCMP_ERR_RETRY, "%ld records not acknowledged within %d ms",
                                (long)atomic_load(&d->pending), timeout_ms);
        rd_kafka_poll(p->rk, 5);
    }
    failed = atomic_load(&d->failed);
    if (failed && rd_kafka_fatal_error(p->rk, NULL, 0)) {
        ncmp_delivery_init(d);
        return producer_fatal(p, err);
    }
    if (failed) {
        ncmp_err_set(err, NCMP_ERR_RETRY, "%ld records failed, first: %s", failed, d->first_error);
        ncmp_delivery_init(d);
        return -1;
    }
    return 0;
}

/* --- consumer ------------------------------------------------------------ */

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t e,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    char list[512] = "";
    size_t off = 0;

    for (int i = 0; i < parts->cnt && off < sizeof(list) - 32; i++)
        off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s[%d]", i ? " " : "",
                                parts->elems[i].topic, parts->elems[i].partition);
    if (e == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        log_info("kafka", "%s assigned: %s", rd_kafka_name(rk), list);
        rd_kafka_assign(rk, parts);
    } else {
        log_info("kafka", "%s revoked: %s", rd_kafka_name(rk), list);
        rd_kafka_assign(rk, NULL);
    }
}

int ncmp_kafka_consumer_new(rd_kafka_t **out, const ncmp_kafka_opts *opts, const char *group,
                            const char *instance_id, const char *const *topics, size_t ntopics,
                            const ncmp_kafka_hooks *hooks, ncmp_err *err)
{
    /* A dead member holds its partitions until its session times out:
     * 10 s instead of Kafka's 45 s bounds that pause after a crash. */
    static const char *const defaults[] = {
        "session.timeout.ms", "10000", "heartbeat.interval.ms", "2000", "fetch.wait.max.ms",
        FETCH_WAIT_MS,        NULL};
    char client_id[300];
    char fetch_bytes[32];
    rd_kafka_conf_t *conf;
    rd_kafka_topic_partition_list_t *subs;
    rd_kafka_t *rk = NULL;
    rd_kafka_resp_err_t e;
    int max_bytes =
        opts->max_message_bytes > 0 ? opts->max_message_bytes : NCMP_KAFKA_MAX_MESSAGE_BYTES;

    snprintf(client_id, sizeof(client_id), "ncmpd-%s", group);
    conf = conf_new(opts, client_id, defaults, hooks, err);
    if (!conf)
        return -1;
    /* room for a full fetch (librdkafka's default 50 MiB) plus one record
     * of the largest size we accept */
    snprintf(fetch_bytes, sizeof(fetch_bytes), "%ld", 52428800L + (long)max_bytes + 65536L);
    if (conf_set(conf, "group.id", group, err) != 0 ||
        conf_set(conf, "enable.auto.commit", "false", err) != 0 ||
        conf_set(conf, "enable.auto.offset.store", "false", err) != 0 ||
        conf_set(conf, "auto.offset.reset", "earliest", err) != 0 ||
        conf_set(conf, "receive.message.max.bytes", fetch_bytes, err) != 0 ||
        (instance_id && *instance_id &&
         conf_set(conf, "group.instance.id", instance_id, err) != 0)) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    if (client_new(&rk, RD_KAFKA_CONSUMER, conf, "consumer", err) != 0)
        return -1;
    rd_kafka_poll_set_consumer(rk);
    subs = rd_kafka_topic_partition_list_new((int)ntopics);
    for (size_t i = 0; i < ntopics; i++)
        rd_kafka_topic_partition_list_add(subs, topics[i], RD_KAFKA_PARTITION_UA);
    e = rd_kafka_subscribe(rk, subs);
    rd_kafka_topic_partition_list_destroy(subs);
    if (e) {
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
        return ncmp_err_set(err, NCMP_ERR_FATAL, "subscribe failed: %s", rd_kafka_err2str(e));
    }
    *out = rk;
    return 0;
}

int ncmp_consumer_new(ncmp_consumer **out, const ncmp_kafka_opts *opts, const char *group,
                      const char *instance_id, const char *const *topics, size_t ntopics,
                      ncmp_err *err)
{
    rd_kafka_t *rk = NULL;
    ncmp_consumer *c;

    if (ncmp_kafka_consumer_new(&rk, opts, group, instance_id, topics, ntopics, NULL, err) != 0)
        return -1;
    c = ncmp_xcalloc(1, sizeof(*c));
    c->rk = rk;
    snprintf(c->group, sizeof(c->group), "%s", group);
    c->queue = rd_kafka_queue_get_consumer(rk);
    ncmp_queue_waiter_init(&c->waiter, c->queue);
    *out = c;
    return 0;
}

/* Keep the records without an error, in order, at the front of msgs;
 * return how many. The error events are destroyed; those that need a
 * person are logged under `who` (the end of a partition is not; a fatal
 * one is consumer_failed's to say). */
static size_t keep_records(rd_kafka_message_t **msgs, size_t n, const char *who)
{
    size_t kept = 0;

    for (size_t i = 0; i < n; i++) {
        rd_kafka_message_t *m = msgs[i];
        if (m->err) {
            /* the fatal one is consumer_failed's to say */
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF && m->err != RD_KAFKA_RESP_ERR__FATAL)
                log_warn(who, "consumer error on %s [%d]: %s",
                         m->rkt ? rd_kafka_topic_name(m->rkt) : "-", m->partition,
                         rd_kafka_message_errstr(m));
            rd_kafka_message_destroy(m);
            continue;
        }
        msgs[kept++] = m;
    }
    return kept;
}

/* Whether group consumer `rk` failed for good (see ncmp_kafka_polled_take);
 * then err is set and the renewal counted. */
static int consumer_failed(rd_kafka_t *rk, const char *group, ncmp_err *err)
{
    char why[512];
    rd_kafka_resp_err_t e = rd_kafka_fatal_error(rk, why, sizeof(why));

    if (!e)
        return 0;
    ncmp_counter_add(
        ncmp_counter_get(ncmp_metrics_lib_get()->consumer_renewals, (const char *const[]){group}),
        1);
    ncmp_err_set(err, NCMP_ERR_FATAL, "group %s: member failed for good (%s: %s)", group,
                 rd_kafka_err2name(e), why);
    return 1;
}

int ncmp_kafka_polled_take(rd_kafka_t *rk, const char *group, const char *who,
                           rd_kafka_message_t **msgs, size_t n, size_t *kept, ncmp_err *err)
{
    size_t good = keep_records(msgs, n, who);

    if (consumer_failed(rk, group, err)) {
        /* nothing of this member can be committed any more */
        for (size_t i = 0; i < good; i++)
            rd_kafka_message_destroy(msgs[i]);
        *kept = 0;
        return -1;
    }
    *kept = good;
    return 0;
}

void ncmp_queue_waiter_init(ncmp_queue_waiter *w, rd_kafka_queue_t *queue)
{
    static const uint64_t one = 1;

    w->queue = queue;
    w->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->fd >= 0)
        rd_kafka_queue_io_event_enable(queue, w->fd, &one, sizeof(one));
}

void ncmp_queue_waiter_wait(ncmp_queue_waiter *w, int timeout_ms)
{
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    uint64_t v;
    int ms = timeout_ms > CONSUMER_IDLE_WAIT_MS ? timeout_ms : CONSUMER_IDLE_WAIT_MS;

    if (w->fd < 0 || rd_kafka_queue_length(w->queue) > 0)
        return;
    /* the write that woke an earlier wait; then look, then sleep: what
     * comes after the look writes again */
    while (read(w->fd, &v, sizeof(v)) > 0)
        ;
    if (rd_kafka_queue_length(w->queue) > 0)
        return;
    while (poll(&p, 1, ms) < 0 && errno == EINTR)
        ;
}

void ncmp_queue_waiter_fini(ncmp_queue_waiter *w)
{
    if (w->fd < 0)
        return;
    rd_kafka_queue_io_event_enable(w->queue, -1, NULL, 0);
    close(w->fd);
    w->fd = -1;
}

int ncmp_consumer_poll(ncmp_consumer *c, rd_kafka_message_t **msgs, size_t max, int timeout_ms,
                       size_t *n, ncmp_err *err)
{
    ssize_t got;

    /* a worker with nothing to do sleeps until something comes, where
     * waiting timeout_ms at a time (5 ms for module sync) woke it hundreds
     * of times a second to find nothing; the batch is then gathered in
     * one call, as before (records of a partition revoked meanwhile are
     * dropped there, not kept from an earlier call) */
    ncmp_queue_waiter_wait(&c->waiter, timeout_ms);
    got = rd_kafka_consume_batch_queue(c->queue, timeout_ms, msgs, max);
    if (got < 0) {
        *n = 0;
        return ncmp_err_set(err, NCMP_ERR_RETRY, "consume failed: %s",
                            rd_kafka_err2str(rd_kafka_last_error()));
    }
    return ncmp_kafka_polled_take(c->rk, c->group, "kafka", msgs, (size_t)got, n, err);
}

int ncmp_kafka_member_renew(const char *role, int index, const char *group, const ncmp_err *why,
                            int (*make)(void *arg, ncmp_err *err), int (*stopping)(void *arg),
                            void *arg)
{
    long pause = 1000;
    ncmp_err err;

    log_error(role, "worker %d: %s; making the member again", index, why->msg);
    while (!stopping(arg)) {
        for (long slept = 0; slept < pause && !stopping(arg); slept += 50)
            ncmp_sleep_ms(50);
        if (stopping(arg))
            break;
        if (make(arg, &err) == 0) {
            log_info(role, "worker %d: member of %s again", index, group);
            return 0;
        }
        log_warn(role, "worker %d: %s; retrying", index, err.msg);
        pause = pause * 2 > 30000 ? 30000 : pause * 2;
    }
    return -1;
}

void ncmp_consumer_commit(ncmp_consumer *c, rd_kafka_message_t *const *msgs, size_t n)
{
    rd_kafka_topic_partition_list_t *offsets;
    rd_kafka_resp_err_t e;

    if (!n)
        return;
    offsets = rd_kafka_topic_partition_list_new(8);
    for (size_t i = 0; i < n; i++) {
        const char *topic = rd_kafka_topic_name(msgs[i]->rkt);
        rd_kafka_topic_partition_t *tp =
            rd_kafka_topic_partition_list_find(offsets, topic, msgs[i]->partition);
        if (!tp)
            tp = rd_kafka_topic_partition_list_add(offsets, topic, msgs[i]->partition);
        if (tp->offset < msgs[i]->offset + 1)
            tp->offset = msgs[i]->offset + 1;
    }
    e = rd_kafka_commit(c->rk, offsets, 0);
    if (e && e != RD_KAFKA_RESP_ERR__NO_OFFSET)
        log_warn("kafka", "offset commit failed (the database keeps the applied offsets): %s",
                 rd_kafka_err2str(e));
    rd_kafka_topic_partition_list_destroy(offsets);
}

void ncmp_consumer_close(ncmp_consumer *c)
{
    if (!c)
        return;
    if (c->queue) {
        ncmp_queue_waiter_fini(&c->waiter);
        rd_kafka_queue_destroy(c->queue);
    }
    rd_kafka_consumer_close(c->rk);
    rd_kafka_destroy(c->rk);
    free(c);
}

rd_kafka_t *ncmp_consumer_rk(ncmp_consumer *c)
{
    return c->rk;
}

/* --- readers ------------------------------------------------------------- */

int ncmp_kafka_reader_new(rd_kafka_t **out, const ncmp_kafka_opts *opts, const char *client_id,
                          const char *group, ncmp_err *err)
{
    static const char *const defaults[] = {"fetch.wait.max.ms", FETCH_WAIT_MS, NULL};
    rd_kafka_conf_t *conf = conf_new(opts, client_id, defaults, NULL, err);
    rd_kafka_t *rk = NULL;

    if (!conf)
        return -1;
    /* assign-only: the group is never joined, nothing is committed */
    if (conf_set(conf, "group.id", group ? group : client_id, err) != 0 ||
        conf_set(conf, "enable.auto.commit", "false", err) != 0 ||
        conf_set(conf, "enable.auto.offset.store", "false", err) != 0 ||
        conf_set(conf, "auto.offset.reset", "earliest", err) != 0 ||
        conf_set(conf, "enable.partition.eof", "true", err) != 0) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    if (client_new(&rk, RD_KAFKA_CONSUMER, conf, "reader", err) != 0)
        return -1;
    rd_kafka_poll_set_consumer(rk);
    *out = rk;
    return 0;
}

/* The end (high watermark) of partition p of `topic`, asked of its leader
 * now. rd_kafka_query_watermark_offsets is reliable against Kafka 4 with
 * Debian's librdkafka 2.0.2, which sends ListOffsets v2 (Kafka 4 dropped
 * only v0); tests/integration/test_kafka.c pins that. The partitions of a
 * topic created a moment ago answer NOT_LEADER or UNKNOWN_PARTITION until
 * their leaders are elected: that is retried until `deadline`. */
static int high_watermark(rd_kafka_t *rk, const char *topic, int32_t p, double deadline,
                          int64_t *high, ncmp_err *err)
{
    int64_t lo = 0, hi = 0;
    rd_kafka_resp_err_t e;

    for (;;) {
        double left = deadline - ncmp_now_ms();
        e = rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi,
                                             left > 5000 ? 5000 : (left > 100 ? (int)left : 100));
        if (!e || ncmp_now_ms() >= deadline || ncmp_stopping)
            break;
        ncmp_sleep_ms(200);
    }
    if (e)
        return ncmp_err_set(err, NCMP_ERR_RETRY, "end of %s [%d]: %s", topic, p,
                            rd_kafka_err2str(e));
    *high = hi;
    return 0;
}

int ncmp_kafka_reader_assign_all(rd_kafka_t *rk, const char *topic, int64_t offset, int timeout_ms,
                                 int *npartitions, ncmp_err *err)
{
    double deadline = ncmp_now_ms() + timeout_ms;
    rd_kafka_topic_partition_list_t *parts = NULL;
    rd_kafka_resp_err_t e;
    int count = 0;
    int rc = -1;

    if (ncmp_kafka_partition_count(rk, topic, timeout_ms, &count, err) != 0)
        return -1;
    parts = rd_kafka_topic_partition_list_new(count);
    for (int p = 0; p < count; p++) {
        int64_t at = offset;
        if (offset == RD_KAFKA_OFFSET_END && high_watermark(rk, topic, p, deadline, &at, err) != 0)
            goto cleanup;
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = at;
    }
    e = rd_kafka_assign(rk, parts);
    if (e) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "assign %s: %s", topic, rd_kafka_err2str(e));
        goto cleanup;
    }
    if (npartitions)
        *npartitions = count;
    rc = 0;
cleanup:
    rd_kafka_topic_partition_list_destroy(parts);
    return rc;
}

int ncmp_kafka_tail_reader_new(rd_kafka_t **out, const ncmp_kafka_opts *opts, const char *client_id,
                               const char *group, const char *topic, int timeout_ms, ncmp_err *err)
{
    rd_kafka_t *rk = NULL;

    if (ncmp_kafka_reader_new(&rk, opts, client_id, group, err) != 0)
        return -1;
    if (ncmp_kafka_reader_assign_all(rk, topic, RD_KAFKA_OFFSET_END, timeout_ms, NULL, err) != 0) {
        ncmp_kafka_reader_close(rk);
        return -1;
    }
    *out = rk;
    return 0;
}

void ncmp_kafka_reader_close(rd_kafka_t *rk)
{
    if (!rk)
        return;
    rd_kafka_assign(rk, NULL);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
}

int ncmp_kafka_scan(const ncmp_kafka_opts *opts, const char *client_id, const char *topic,
                    const int64_t *from, int npartitions, int idle_timeout_ms,
                    ncmp_kafka_scan_fn fn, void *arg, int64_t *end, ncmp_err *err)
{
    rd_kafka_t *rk = NULL;
    rd_kafka_topic_partition_list_t *parts;
    rd_kafka_resp_err_t e;
    int64_t *at = ncmp_xcalloc((size_t)(npartitions > 0 ? npartitions : 1), sizeof(*at));
    unsigned char *done = ncmp_xcalloc((size_t)(npartitions > 0 ? npartitions : 1), 1);
    int left = npartitions;
    double idle_deadline;
    int rc = -1;

    if (npartitions <= 0) {
        rc = 0;
        goto cleanup;
    }
    if (ncmp_kafka_reader_new(&rk, opts, client_id, NULL, err) != 0)
        goto cleanup;
    parts = rd_kafka_topic_partition_list_new(npartitions);
    for (int p = 0; p < npartitions; p++) {
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = from[p];
        at[p] = from[p];
    }
    e = rd_kafka_assign(rk, parts);
    rd_kafka_topic_partition_list_destroy(parts);
    if (e) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "scan of %s: assign: %s", topic, rd_kafka_err2str(e));
        goto cleanup;
    }
    idle_deadline = ncmp_now_ms() + idle_timeout_ms;
    while (left > 0) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 200);
        int32_t p;
        if (!m) {
            if (ncmp_now_ms() > idle_deadline || ncmp_stopping) {
                ncmp_err_set(err, NCMP_ERR_RETRY,
                             "scan of %s stalled: %d of %d partitions not read to the end", topic,
                             left, npartitions);
                goto cleanup;
            }
            continue;
        }
        idle_deadline = ncmp_now_ms() + idle_timeout_ms;
        p = m->partition;
        if (p < 0 || p >= npartitions || done[p]) {
            /* past the end we found: not part of this scan */
            rd_kafka_message_destroy(m);
            continue;
        }
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            at[p] = m->offset;
            done[p] = 1;
            left--;
        } else if (m->err) {
            ncmp_err_set(err, NCMP_ERR_RETRY, "scan of %s [%d]: %s", topic, p,
                         rd_kafka_message_errstr(m));
            rd_kafka_message_destroy(m);
            goto cleanup;
        } else {
            at[p] = m->offset + 1;
            if (fn(m, arg, err) != 0) {
                rd_kafka_message_destroy(m);
                goto cleanup;
            }
        }
        rd_kafka_message_destroy(m);
    }
    rc = 0;
cleanup:
    if (rc == 0)
        memcpy(end, at, (size_t)(npartitions > 0 ? npartitions : 0) * sizeof(*end));
    ncmp_kafka_reader_close(rk);
    free(at);
    free(done);
    return rc;
}

/* --- admin and helpers --------------------------------------------------- */

int ncmp_kafka_admin_new(rd_kafka_t **rk, const ncmp_kafka_opts *opts, const char *client_id,
                         ncmp_err *err)
{
    rd_kafka_conf_t *conf = conf_new(opts, client_id, NULL, NULL, err);

    if (!conf)
        return -1;
    return client_new(rk, RD_KAFKA_PRODUCER, conf, "client", err);
}

const char *ncmp_kafka_header(const rd_kafka_message_t *m, const char *name, char *buf,
                              size_t buflen)
{
    rd_kafka_headers_t *hdrs = NULL;

    if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return NULL;
    return ncmp_kafka_headers_value(hdrs, name, buf, buflen);
}

const char *ncmp_kafka_headers_value(const rd_kafka_headers_t *hdrs, const char *name, char *buf,
                                     size_t buflen)
{
    const void *val = NULL;
    size_t size = 0;

    if (!buflen || !hdrs ||
        rd_kafka_header_get_last(hdrs, name, &val, &size) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return NULL;
    if (!val)
        size = 0;
    if (size >= buflen)
        size = buflen - 1;
    if (size)
        memcpy(buf, val, size);
    buf[size] = '\0';
    return buf;
}

int ncmp_kafka_partition_count(rd_kafka_t *rk, const char *topic, int timeout_ms, int *count,
                               ncmp_err *err)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    long deadline = ncmp_now_ms() + timeout_ms;
    rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
    int rc = -1;

    for (;;) {
        const struct rd_kafka_metadata *md = NULL;
        long left = deadline - ncmp_now_ms();
        e = rd_kafka_metadata(rk, 0, rkt, &md, left > 5000 ? 5000 : (left > 100 ? (int)left : 100));
        if (!e) {
            int ok = md->topic_cnt == 1 && !md->topics[0].err && md->topics[0].partition_cnt > 0;
            if (ok)
                *count = md->topics[0].partition_cnt;
            else
                e = md->topic_cnt == 1 && md->topics[0].err ? md->topics[0].err
                                                            : RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC;
            rd_kafka_metadata_destroy(md);
            if (ok) {
                rc = 0;
                break;
            }
        }
        if (ncmp_now_ms() >= deadline)
            break;
        rd_kafka_poll(rk, 100);
    }
    rd_kafka_topic_destroy(rkt);
    if (rc != 0)
        ncmp_err_set(err, NCMP_ERR_RETRY, "topic %s is not there: %s", topic, rd_kafka_err2str(e));
    return rc;
}

int ncmp_kafka_create_topics(const ncmp_kafka_opts *opts, const char *const *topics, size_t ntopics,
                             int partitions, int timeout_ms, ncmp_err *err)
{
    char errstr[512];
    rd_kafka_t *rk = NULL;
    rd_kafka_NewTopic_t **nt = NULL;
    rd_kafka_AdminOptions_t *aopts = NULL;
    rd_kafka_queue_t *q = NULL;
    rd_kafka_event_t *ev = NULL;
    const rd_kafka_CreateTopics_result_t *res;
    const rd_kafka_topic_result_t **tres;
    const struct rd_kafka_metadata *md = NULL;
    size_t cnt;
    int rc = -1;
    long deadline = ncmp_now_ms() + timeout_ms;

    if (ncmp_kafka_admin_new(&rk, opts, "ncmpd-admin", err) != 0)
        return -1;
    /* Wait for the broker: metadata answers once it is up. */
    for (;;) {
        rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, NULL, &md, 2000);
        if (!e)
            break;
        if (ncmp_now_ms() >= deadline) {
            ncmp_err_set(err, NCMP_ERR_RETRY, "Kafka at %s did not answer: %s",
                         opts->bootstrap_servers ? opts->bootstrap_servers : "-",
                         rd_kafka_err2str(e));
            goto done;
        }
    }
    rd_kafka_metadata_destroy(md);

    nt = ncmp_xcalloc(ntopics, sizeof(*nt));
    for (size_t i = 0; i < ntopics; i++) {
        nt[i] = rd_kafka_NewTopic_new(topics[i], partitions, 1, errstr, sizeof(errstr));
        if (!nt[i]) {
            ncmp_err_set(err, NCMP_ERR_FATAL, "topic %s: %s", topics[i], errstr);
            goto done;
        }
    }
    aopts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_operation_timeout(aopts, timeout_ms, errstr, sizeof(errstr));
    q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, nt, ntopics, aopts, q);
    ev = rd_kafka_queue_poll(q, timeout_ms + 2000);
    if (!ev) {
        ncmp_err_set(err, NCMP_ERR_RETRY, "create topics: no answer in time");
        goto done;
    }
    if (rd_kafka_event_error(ev)) {
        ncmp_err_set(err, NCMP_ERR_RETRY, "create topics: %s", rd_kafka_event_error_string(ev));
        goto done;
    }
    res = rd_kafka_event_CreateTopics_result(ev);
    tres = rd_kafka_CreateTopics_result_topics(res, &cnt);
    for (size_t i = 0; i < cnt; i++) {
        rd_kafka_resp_err_t e = rd_kafka_topic_result_error(tres[i]);
        if (e && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
            ncmp_err_set(err, NCMP_ERR_FATAL, "create topic %s: %s",
                         rd_kafka_topic_result_name(tres[i]),
                         rd_kafka_topic_result_error_string(tres[i]));
            goto done;
        }
    }
    rc = 0;
done:
    if (ev)
        rd_kafka_event_destroy(ev);
    if (q)
        rd_kafka_queue_destroy(q);
    if (aopts)
        rd_kafka_AdminOptions_destroy(aopts);
    if (nt) {
        for (size_t i = 0; i < ntopics; i++)
            if (nt[i])
                rd_kafka_NewTopic_destroy(nt[i]);
        free(nt);
    }
    rd_kafka_destroy(rk);
    return rc;
}

int ncmp_kafka_topic_name_valid(const void *name, size_t len)
{
    const unsigned char *s = name;

    if (!s || len < 1 || len > NCMP_KAFKA_TOPIC_NAME_MAX)
        return 0;
    if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

char *ncmp_kafka_group_name(char *out, size_t outlen, const char *group_id, const char *role)
{
    snprintf(out, outlen, "%s-%s", group_id, role);
    return out;
}

int64_t ncmp_kafka_assigned_lag(rd_kafka_t *rk, const char *topic)
{
    rd_kafka_topic_partition_list_t *parts = NULL;
    int64_t sum = 0;

    if (rd_kafka_assignment(rk, &parts) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return 0;
    rd_kafka_position(rk, parts);
    for (int i = 0; i < parts->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &parts->elems[i];
        int64_t lo, hi;
        if (tp->offset < 0 || strcmp(tp->topic, topic) != 0 ||
            rd_kafka_get_watermark_offsets(rk, tp->topic, tp->partition, &lo, &hi) !=
                RD_KAFKA_RESP_ERR_NO_ERROR)
            continue;
        if (hi > tp->offset)
            sum += hi - tp->offset;
    }
    rd_kafka_topic_partition_list_destroy(parts);
    return sum;
}
