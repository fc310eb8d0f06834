#include "ncmp_kafka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "ncmp_time.h"

struct ncmp_producer {
    rd_kafka_t *rk;
};

struct ncmp_consumer {
    rd_kafka_t *rk;
    rd_kafka_queue_t *queue;
};

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    ncmp_log_level lvl = ncmp_log_level_from_syslog(level);
    NCMP_LOG(lvl, "rdkafka", "%s: %s: %s", rd_kafka_name(rk), fac, buf);
}

static int conf_set(rd_kafka_conf_t *conf, const char *key, const char *value, ncmp_err *err)
{
    char errstr[512];

    if (rd_kafka_conf_set(conf, key, value, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "kafka.%s: %s", key, errstr);
    return 0;
}

/* Common settings: servers, then `defaults` (NULL-terminated key/value
 * pairs that the pass-through properties may override), then the
 * pass-through properties. */
rd_kafka_conf_t *ncmp_kafka_conf_new(const ncmp_config *cfg, const char *client_id,
                                     const char *const *defaults, ncmp_err *err)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char bytes[32];

    snprintf(bytes, sizeof(bytes), "%d", cfg->kafka_max_message_bytes);
    if (conf_set(conf, "bootstrap.servers", cfg->kafka_bootstrap_servers, err) != 0 ||
        conf_set(conf, "client.id", client_id, err) != 0 ||
        conf_set(conf, "message.max.bytes", bytes, err) != 0)
        goto fail;
    for (const char *const *d = defaults; d && *d; d += 2)
        if (conf_set(conf, d[0], d[1], err) != 0)
            goto fail;
    for (size_t i = 0; i < cfg->kafka_props_len; i++)
        if (conf_set(conf, cfg->kafka_props[i].key, cfg->kafka_props[i].value, err) != 0)
            goto fail;
    rd_kafka_conf_set_log_cb(conf, log_cb);
    return conf;
fail:
    rd_kafka_conf_destroy(conf);
    return NULL;
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

int ncmp_producer_new(ncmp_producer **out, const ncmp_config *cfg, const char *client_id,
                      ncmp_err *err)
{
    char errstr[512];
    static const char *const defaults[] = {"linger.ms", "5", NULL};
    rd_kafka_conf_t *conf = ncmp_kafka_conf_new(cfg, client_id, defaults, err);
    ncmp_producer *p;

    if (!conf)
        return -1;
    if (conf_set(conf, "enable.idempotence", "true", err) != 0) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, dr_msg_cb);
    p = ncmp_xcalloc(1, sizeof(*p));
    p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (!p->rk) {
        rd_kafka_conf_destroy(conf);
        free(p);
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot create Kafka producer: %s", errstr);
    }
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
        if (ncmp_now_ms() >= deadline)
            return ncmp_err_set(err, NCMP_ERR_RETRY, "%ld records not acknowledged within %d ms",
                                (long)atomic_load(&d->pending), timeout_ms);
        rd_kafka_poll(p->rk, 5);
    }
    failed = atomic_load(&d->failed);
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

int ncmp_consumer_new(ncmp_consumer **out, const ncmp_config *cfg, const char *group,
                      const char *instance_id, const char *const *topics, size_t ntopics,
                      ncmp_err *err)
{
    /* A dead member holds its partitions until its session times out:
     * 10 s instead of Kafka's 45 s bounds that pause after a crash. */
    static const char *const defaults[] = {"session.timeout.ms", "10000", "heartbeat.interval.ms",
                                           "2000", NULL};
    char errstr[512];
    char client_id[256];
    char fetch_bytes[32];
    rd_kafka_conf_t *conf;
    rd_kafka_topic_partition_list_t *subs;
    ncmp_consumer *c;
    rd_kafka_resp_err_t e;

    snprintf(client_id, sizeof(client_id), "ncmpd-%s", group);
    conf = ncmp_kafka_conf_new(cfg, client_id, defaults, err);
    if (!conf)
        return -1;
    /* room for a full fetch (librdkafka's default 50 MiB) plus one record
     * of the largest size we accept */
    snprintf(fetch_bytes, sizeof(fetch_bytes), "%ld",
             52428800L + (long)cfg->kafka_max_message_bytes + 65536L);
    if (conf_set(conf, "group.id", group, err) != 0 ||
        conf_set(conf, "enable.auto.commit", "false", err) != 0 ||
        conf_set(conf, "enable.auto.offset.store", "false", err) != 0 ||
        conf_set(conf, "auto.offset.reset", "earliest", err) != 0 ||
        conf_set(conf, "receive.message.max.bytes", fetch_bytes, err) != 0 ||
        conf_set(conf, "fetch.wait.max.ms", "20", err) != 0 ||
        (instance_id && *instance_id &&
         conf_set(conf, "group.instance.id", instance_id, err) != 0)) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    c = ncmp_xcalloc(1, sizeof(*c));
    c->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
    if (!c->rk) {
        rd_kafka_conf_destroy(conf);
        free(c);
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot create Kafka consumer: %s", errstr);
    }
    rd_kafka_poll_set_consumer(c->rk);
    c->queue = rd_kafka_queue_get_consumer(c->rk);
    subs = rd_kafka_topic_partition_list_new((int)ntopics);
    for (size_t i = 0; i < ntopics; i++)
        rd_kafka_topic_partition_list_add(subs, topics[i], RD_KAFKA_PARTITION_UA);
    e = rd_kafka_subscribe(c->rk, subs);
    rd_kafka_topic_partition_list_destroy(subs);
    if (e) {
        ncmp_consumer_close(c);
        return ncmp_err_set(err, NCMP_ERR_FATAL, "subscribe failed: %s", rd_kafka_err2str(e));
    }
    *out = c;
    return 0;
}

int ncmp_consumer_poll(ncmp_consumer *c, rd_kafka_message_t **msgs, size_t max, int timeout_ms,
                       size_t *n, ncmp_err *err)
{
    ssize_t got = rd_kafka_consume_batch_queue(c->queue, timeout_ms, msgs, max);
    size_t kept = 0;

    if (got < 0) {
        *n = 0;
        return ncmp_err_set(err, NCMP_ERR_RETRY, "consume failed: %s",
                            rd_kafka_err2str(rd_kafka_last_error()));
    }
    for (ssize_t i = 0; i < got; i++) {
        rd_kafka_message_t *m = msgs[i];
        if (m->err) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                log_warn("kafka", "consumer error on %s [%d]: %s",
                         m->rkt ? rd_kafka_topic_name(m->rkt) : "-", m->partition,
                         rd_kafka_message_errstr(m));
            rd_kafka_message_destroy(m);
            continue;
        }
        msgs[kept++] = m;
    }
    *n = kept;
    return 0;
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
    if (c->queue)
        rd_kafka_queue_destroy(c->queue);
    rd_kafka_consumer_close(c->rk);
    rd_kafka_destroy(c->rk);
    free(c);
}

rd_kafka_t *ncmp_consumer_rk(ncmp_consumer *c)
{
    return c->rk;
}

/* --- helpers ------------------------------------------------------------- */

const char *ncmp_kafka_header(const rd_kafka_message_t *m, const char *name, char *buf,
                              size_t buflen)
{
    rd_kafka_headers_t *hdrs = NULL;
    const void *val = NULL;
    size_t size = 0;

    if (!buflen || rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return NULL;
    if (rd_kafka_header_get_last(hdrs, name, &val, &size) != RD_KAFKA_RESP_ERR_NO_ERROR)
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

int ncmp_kafka_create_topics(const ncmp_config *cfg, const char *const *topics, size_t ntopics,
                             int partitions, int timeout_ms, ncmp_err *err)
{
    char errstr[512];
    rd_kafka_conf_t *conf = ncmp_kafka_conf_new(cfg, "ncmpd-admin", NULL, err);
    rd_kafka_t *rk;
    rd_kafka_NewTopic_t **nt = NULL;
    rd_kafka_AdminOptions_t *opts = NULL;
    rd_kafka_queue_t *q = NULL;
    rd_kafka_event_t *ev = NULL;
    const rd_kafka_CreateTopics_result_t *res;
    const rd_kafka_topic_result_t **tres;
    const struct rd_kafka_metadata *md = NULL;
    size_t cnt;
    int rc = -1;
    long deadline = ncmp_now_ms() + timeout_ms;

    if (!conf)
        return -1;
    rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (!rk) {
        rd_kafka_conf_destroy(conf);
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot create Kafka client: %s", errstr);
    }
    /* Wait for the broker: metadata answers once it is up. */
    for (;;) {
        rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, NULL, &md, 2000);
        if (!e)
            break;
        if (ncmp_now_ms() >= deadline) {
            ncmp_err_set(err, NCMP_ERR_RETRY, "Kafka at %s did not answer: %s",
                         cfg->kafka_bootstrap_servers, rd_kafka_err2str(e));
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
    opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_operation_timeout(opts, timeout_ms, errstr, sizeof(errstr));
    q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, nt, ntopics, opts, q);
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
    if (opts)
        rd_kafka_AdminOptions_destroy(opts);
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
