#include "dmistub_events.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_kafka.h"
#include "ncmp_lcm.h"
#include "ncmp_log.h"
#include "ncmp_time.h"

#define EVENT_TYPE   "org.onap.cps.ncmp.events.async1_0_0.DataOperationEvent"
#define EVENT_SCHEMA "urn:cps:" EVENT_TYPE ":1.0.0"
#define STATUS_OK    "Successfully applied changes"

struct dmistub_job {
    char *correlation_id;
    char *destination;
    char *network_base;
    json_object *operations;
    dmistub_events *ev; /* for the timer callback */
    long avc_events;    /* > 0: a job of AVC events over `network_base`'s handles */
    char *legacy_op;    /* a pass-through answered as a DmiAsyncRequestResponseEvent */
    dmistub_job *next;
};

struct dmistub_events {
    const dmistub_opts *opts;
    dmistub_models *models;
    ncmp_producer *producer;
    ncmp_delivery delivery;
    atomic_long queued, send_failed;
    long base_queued, base_delivered, base_failed; /* at the last reset */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    dmistub_job *head, *tail;
    int stopping;
    pthread_t thread;
    uint64_t rng; /* publisher thread only */
};

/* --- jobs ---------------------------------------------------------------- */

static int optional_string(json_object *obj, const char *key, size_t at, ncmp_err *err)
{
    json_object *v;

    if (json_object_object_get_ex(obj, key, &v) && v && !json_object_is_type(v, json_type_string))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "operations[%zu].%s: not a string", at, key);
    return 0;
}

static int validate_handles(json_object *handles, size_t at, size_t *count, ncmp_err *err)
{
    if (!handles || !json_object_is_type(handles, json_type_array))
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "operations[%zu].cmHandles: missing or not an array", at);
    for (size_t i = 0; i < json_object_array_length(handles); i++) {
        json_object *h = json_object_array_get_idx(handles, i), *id;
        if (!json_object_is_type(h, json_type_object) || !json_object_object_get_ex(h, "id", &id) ||
            !json_object_is_type(id, json_type_string))
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "operations[%zu].cmHandles[%zu]: expected an object with a "
                                "string \"id\"",
                                at, i);
    }
    *count += json_object_array_length(handles);
    return 0;
}

int dmistub_job_validate(json_object *operations, size_t *handles, ncmp_err *err)
{
    size_t count = 0;

    if (!operations || !json_object_is_type(operations, json_type_array))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "operations: missing or not an array");
    for (size_t i = 0; i < json_object_array_length(operations); i++) {
        json_object *op = json_object_array_get_idx(operations, i), *id, *chs = NULL;
        if (!json_object_is_type(op, json_type_object))
            return ncmp_err_set(err, NCMP_ERR_REJECT, "operations[%zu]: not an object", i);
        if (!json_object_object_get_ex(op, "operationId", &id) ||
            !json_object_is_type(id, json_type_string))
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "operations[%zu].operationId: missing or not a string", i);
        json_object_object_get_ex(op, "cmHandles", &chs);
        if (optional_string(op, "resourceIdentifier", i, err) != 0 ||
            optional_string(op, "options", i, err) != 0 ||
            validate_handles(chs, i, &count, err) != 0)
            return -1;
    }
    *handles = count;
    return 0;
}

dmistub_job *dmistub_job_new(const char *correlation_id, const char *destination,
                             const char *network_base, json_object *operations)
{
    dmistub_job *job = ncmp_xcalloc(1, sizeof(*job));

    job->correlation_id = ncmp_xstrdup(correlation_id);
    job->destination = ncmp_xstrdup(destination);
    job->network_base = ncmp_xstrdup(network_base);
    job->operations = operations;
    return job;
}

void dmistub_job_free(dmistub_job *job)
{
    if (!job)
        return;
    free(job->correlation_id);
    free(job->destination);
    free(job->network_base);
    free(job->legacy_op);
    json_object_put(job->operations);
    free(job);
}

void dmistub_job_set_legacy(dmistub_job *job, const char *operation)
{
    free(job->legacy_op);
    job->legacy_op = ncmp_xstrdup(operation);
}

/* --- one event ------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    /* xorshift64*: ids need to be unique, not secret */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* A version 4 UUID in lowercase. */
static void uuid_v4(uint64_t *rng, char out[37])
{
    uint64_t hi = rng_next(rng), lo = rng_next(rng);

    hi = (hi & ~0xF000ULL) | 0x4000ULL;             /* version 4 */
    lo = (lo & ~(0xC0ULL << 56)) | (0x80ULL << 56); /* variant 10 */
    snprintf(out, 37, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(hi >> 32),
             (unsigned)((hi >> 16) & 0xFFFF), (unsigned)(hi & 0xFFFF), (unsigned)(lo >> 48),
             (unsigned long long)(lo & 0xFFFFFFFFFFFFULL));
}

static void append_field(ncmp_buf *b, json_object *op, const char *key)
{
    json_object *v;

    if (!json_object_object_get_ex(op, key, &v) || !v)
        return;
    ncmp_buf_appendf(b, ",\"%s\":", key);
    ncmp_buf_append_json_string(b, json_object_get_string(v));
}

static void event_value(dmistub_events *ev, const dmistub_job *job, json_object *op,
                        const char *handle, ncmp_buf *b)
{
    json_object *id;
    ncmp_buf network_id = NCMP_BUF_INIT;

    json_object_object_get_ex(op, "operationId", &id);
    ncmp_buf_append_str(b, "{\"data\":{\"responses\":[{\"operationId\":");
    ncmp_buf_append_json_string(b, json_object_get_string(id));
    ncmp_buf_append_str(b, ",\"ids\":[");
    ncmp_buf_append_json_string(b, handle);
    ncmp_buf_append_char(b, ']');
    append_field(b, op, "resourceIdentifier");
    append_field(b, op, "options");
    ncmp_buf_append_str(b, ",\"statusCode\":\"0\",\"statusMessage\":\"" STATUS_OK "\",\"result\":");
    ncmp_buf_appendf(&network_id, "%s-%s", job->network_base, handle);
    dmistub_topology_append_compact(ev->models, b, network_id.data);
    ncmp_buf_append_str(b, "}]}}");
    ncmp_buf_free(&network_id);
}

static rd_kafka_headers_t *event_headers(dmistub_events *ev, const dmistub_job *job)
{
    char id[37];
    ncmp_cloudevent ce = {.id = id,
                          .source = "DMI",
                          .type = EVENT_TYPE,
                          .dataschema = EVENT_SCHEMA,
                          .correlation_id = job->correlation_id,
                          .destination = job->destination,
                          .content_type = "application/json"};

    /* its own generator: a getrandom call per event would cost at load */
    uuid_v4(&ev->rng, id);
    return ncmp_cloudevent_headers(&ce);
}

static void publish_one(dmistub_events *ev, const dmistub_job *job, json_object *op,
                        const char *handle, ncmp_buf *value)
{
    ncmp_err err;

    ncmp_buf_reset(value);
    event_value(ev, job, op, handle, value);
    if (ncmp_producer_send(ev->producer, &ev->delivery, ev->opts->async_topic,
                           RD_KAFKA_PARTITION_UA, handle, strlen(handle), value->data, value->len,
                           event_headers(ev, job), &err) != 0) {
        atomic_fetch_add(&ev->send_failed, 1);
        log_warn("events", "request=%s handle=%s: %s", job->correlation_id, handle, err.msg);
        return;
    }
    atomic_fetch_add(&ev->queued, 1);
}

static void publish_job(dmistub_events *ev, const dmistub_job *job)
{
    ncmp_buf value = NCMP_BUF_INIT;
    size_t n = 0;

    for (size_t i = 0; i < json_object_array_length(job->operations); i++) {
        json_object *op = json_object_array_get_idx(job->operations, i), *handles;
        json_object_object_get_ex(op, "cmHandles", &handles);
        for (size_t j = 0; j < json_object_array_length(handles); j++, n++) {
            json_object *id;
            json_object_object_get_ex(json_object_array_get_idx(handles, j), "id", &id);
            publish_one(ev, job, op, json_object_get_string(id), &value);
        }
    }
    ncmp_buf_free(&value);
    log_debug("events", "request=%s destination=%s: %zu events queued", job->correlation_id,
              job->destination, n);
}

/* --- legacy pass-through results --------------------------------------------- */

#define LEGACY_TYPE   "org.onap.cps.ncmp.event.model.DmiAsyncRequestResponseEvent"
#define LEGACY_SOURCE "org.onap.cps.ncmp.dmi"

/* The HTTP status ONAP's DMI plugin reports for an operation. */
static void legacy_status(const char *op, const char **status, const char **code)
{
    *status = "OK";
    *code = "200";
    if (strcmp(op, "create") == 0) {
        *status = "Created";
        *code = "201";
    } else if (strcmp(op, "delete") == 0) {
        *status = "No Content";
        *code = "204";
    }
}

static void publish_legacy(dmistub_events *ev, const dmistub_job *job)
{
    json_object *op = json_object_array_get_idx(job->operations, 0), *handles = NULL, *id = NULL;
    const char *status, *code, *handle;
    ncmp_buf b = NCMP_BUF_INIT, network_id = NCMP_BUF_INIT;
    char event_id[37], event_time[32];
    rd_kafka_headers_t *h;
    ncmp_err err;

    json_object_object_get_ex(op, "cmHandles", &handles);
    json_object_object_get_ex(json_object_array_get_idx(handles, 0), "id", &id);
    handle = json_object_get_string(id);
    legacy_status(job->legacy_op, &status, &code);
    uuid_v4(&ev->rng, event_id);
    ncmp_event_time_now(event_time);
    ncmp_buf_append_str(&b, "{\"eventId\":");
    ncmp_buf_append_json_string(&b, event_id);
    ncmp_buf_append_str(&b, ",\"eventCorrelationId\":");
    ncmp_buf_append_json_string(&b, job->correlation_id);
    ncmp_buf_append_str(&b, ",\"eventTime\":");
    ncmp_buf_append_json_string(&b, event_time);
    ncmp_buf_append_str(&b, ",\"eventTarget\":");
    ncmp_buf_append_json_string(&b, job->destination);
    ncmp_buf_append_str(&b,
                        ",\"eventType\":\"" LEGACY_TYPE "\",\"eventSchema\":\"urn:cps:" LEGACY_TYPE
                        "\",\"eventSchemaVersion\":\"v1\",\"eventSource\":\"" LEGACY_SOURCE
                        "\",\"eventContent\":{\"response-data-schema\":\"urn:cps:" LEGACY_TYPE
                        ":v1\",\"response-status\":");
    ncmp_buf_append_json_string(&b, status);
    ncmp_buf_append_str(&b, ",\"response-code\":");
    ncmp_buf_append_json_string(&b, code);
    ncmp_buf_append_str(&b, ",\"response-data\":");
    ncmp_buf_appendf(&network_id, "%s-%s", job->network_base, handle);
    dmistub_topology_append_compact(ev->models, &b, network_id.data);
    ncmp_buf_append_str(&b, "}}");
    h = rd_kafka_headers_new(1);
    rd_kafka_header_add(h, "__TypeId__", -1, LEGACY_TYPE, -1);
    if (ncmp_producer_send(ev->producer, &ev->delivery, ev->opts->async_topic,
                           RD_KAFKA_PARTITION_UA, job->correlation_id, strlen(job->correlation_id),
                           b.data, b.len, h, &err) != 0) {
        atomic_fetch_add(&ev->send_failed, 1);
        log_warn("events", "request=%s handle=%s: %s", job->correlation_id, handle, err.msg);
    } else {
        atomic_fetch_add(&ev->queued, 1);
        log_debug("events", "request=%s destination=%s: legacy result queued", job->correlation_id,
                  job->destination);
    }
    ncmp_buf_free(&b);
    ncmp_buf_free(&network_id);
}

/* --- AVC events ------------------------------------------------------------ */

#define AVC_TYPE   "org.onap.cps.ncmp.events.avc1_0_0.AvcEvent"
#define AVC_SOURCE "ONAP-DMI-PLUGIN"

static void avc_value(ncmp_buf *b, const char *handle, const char *status)
{
    ncmp_buf_reset(b);
    ncmp_buf_append_str(b, "{\"data\":{\"push-change-update\":{\"datastore-changes\":{"
                           "\"ietf-yang-patch:yang-patch\":{\"patch-id\":\"dmi-stub\",\"edit\":[{"
                           "\"edit-id\":\"1\",\"operation\":\"patch\",\"target\":");
    ncmp_buf_append_str(b, "\"/openroadm-devices-inventory:openroadm-devices/openroadm-device=");
    for (const char *c = handle; *c; c++) /* RESTCONF: the key percent-encoded */
        if (strchr("/,=%\"\\", *c) || (unsigned char)*c < 0x20)
            ncmp_buf_appendf(b, "%%%02X", (unsigned char)*c);
        else
            ncmp_buf_append_char(b, *c);
    ncmp_buf_append_str(b, "\",\"value\":{\"openroadm-device\":[{\"device-id\":");
    ncmp_buf_append_json_string(b, handle);
    ncmp_buf_appendf(b, ",\"status\":\"%s\"}]}}]}}}}}", status);
}

static void publish_avc(dmistub_events *ev, const dmistub_job *job)
{
    ncmp_buf value = NCMP_BUF_INIT;
    char *ids = ncmp_xstrdup(job->network_base), *save = NULL;
    const char **handles = NULL;
    size_t nh = 0;

    for (char *h = strtok_r(ids, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
        handles = ncmp_xrealloc(handles, (nh + 1) * sizeof(*handles));
        handles[nh++] = h;
    }
    for (long i = 0; nh && i < job->avc_events; i++) {
        const char *h = handles[(size_t)i % nh];
        char id[37];
        ncmp_err err;
        ncmp_cloudevent ce = {.id = id,
                              .source = AVC_SOURCE,
                              .type = AVC_TYPE,
                              .dataschema = "urn:cps:" AVC_TYPE ":1.0.0",
                              .content_type = "application/json"};
        uuid_v4(&ev->rng, id);
        avc_value(&value, h, ((size_t)i / nh) % 2 ? "success" : "fail");
        if (ncmp_producer_send(ev->producer, &ev->delivery, ev->opts->avc_topic,
                               RD_KAFKA_PARTITION_UA, h, strlen(h), value.data, value.len,
                               ncmp_cloudevent_headers(&ce), &err) != 0) {
            atomic_fetch_add(&ev->send_failed, 1);
            log_warn("events", "AVC event for handle=%s: %s", h, err.msg);
            continue;
        }
        atomic_fetch_add(&ev->queued, 1);
    }
    log_info("events", "%ld AVC events over %zu handles queued to %s", job->avc_events, nh,
             ev->opts->avc_topic);
    free(handles);
    free(ids);
    ncmp_buf_free(&value);
}

/* --- the publisher ---------------------------------------------------------- */

static dmistub_job *queue_pop(dmistub_events *ev)
{
    dmistub_job *job = ev->head;

    ev->head = job->next;
    if (!ev->head)
        ev->tail = NULL;
    return job;
}

static void *publisher_main(void *arg)
{
    dmistub_events *ev = arg;

    pthread_mutex_lock(&ev->lock);
    for (;;) {
        if (ev->head) {
            dmistub_job *job = queue_pop(ev);
            pthread_mutex_unlock(&ev->lock);
            if (job->avc_events > 0)
                publish_avc(ev, job);
            else if (job->legacy_op)
                publish_legacy(ev, job);
            else
                publish_job(ev, job);
            dmistub_job_free(job);
            pthread_mutex_lock(&ev->lock);
            continue;
        }
        if (ev->stopping)
            break;
        /* idle: serve delivery reports now and then */
        pthread_mutex_unlock(&ev->lock);
        rd_kafka_poll(ncmp_producer_rk(ev->producer), 0);
        pthread_mutex_lock(&ev->lock);
        if (!ev->head && !ev->stopping) {
            struct timespec ts = ncmp_deadline_ts(CLOCK_MONOTONIC, 50);
            pthread_cond_timedwait(&ev->wake, &ev->lock, &ts);
        }
    }
    pthread_mutex_unlock(&ev->lock);
    return NULL;
}

/* Producer settings for tens of thousands of ~2 KB events per second;
 * --kafka-prop entries come after and win. */
static const char PRODUCER_PROPS[] = "linger.ms=10\nbatch.size=1000000\ncompression.type=lz4\n";

/* The "KEY=VALUE" lines of `text` (changed in place: it must outlive the
 * result) as up to `max` properties; returns how many. The lines were
 * checked when the options were parsed. */
static size_t props_split(char *text, ncmp_kv *props, size_t max)
{
    char *save = NULL;
    size_t n = 0;

    for (char *kv = strtok_r(text, "\n", &save); kv && n < max; kv = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        *eq = '\0';
        props[n].key = kv;
        props[n].value = eq + 1;
        n++;
    }
    return n;
}

static int producer_new(dmistub_events *ev, const dmistub_opts *opts, ncmp_err *err)
{
    ncmp_buf text = NCMP_BUF_INIT;
    ncmp_kv props[64];
    ncmp_kafka_opts kopts = {0};
    int rc;

    ncmp_buf_append_str(&text, PRODUCER_PROPS);
    if (opts->kafka_props)
        ncmp_buf_append_str(&text, opts->kafka_props);
    kopts.bootstrap_servers = opts->kafka;
    kopts.props = props;
    kopts.nprops = props_split(text.data, props, sizeof(props) / sizeof(props[0]));
    rc = ncmp_producer_new(&ev->producer, &kopts, NCMP_PRODUCER_DEFAULT, "ncmp-dmi-stub", err);
    ncmp_buf_free(&text);
    return rc;
}

int dmistub_events_start(dmistub_events **out, const dmistub_opts *opts, dmistub_models *models,
                         ncmp_err *err)
{
    dmistub_events *ev = ncmp_xcalloc(1, sizeof(*ev));
    pthread_condattr_t attr;
    int rc;

    ev->opts = opts;
    ev->models = models;
    ncmp_delivery_init(&ev->delivery);
    if (getrandom(&ev->rng, sizeof(ev->rng), 0) != sizeof(ev->rng) || !ev->rng)
        ev->rng = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL | 1;
    if (producer_new(ev, opts, err) != 0) {
        free(ev);
        return -1;
    }
    pthread_mutex_init(&ev->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&ev->wake, &attr);
    pthread_condattr_destroy(&attr);
    rc = pthread_create(&ev->thread, NULL, publisher_main, ev);
    if (rc != 0) {
        ncmp_producer_destroy(ev->producer);
        pthread_cond_destroy(&ev->wake);
        pthread_mutex_destroy(&ev->lock);
        free(ev);
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot start the publisher: %s", strerror(rc));
    }
    *out = ev;
    if (opts->avc_events > 0 && *opts->avc_handles)
        dmistub_events_submit_avc(ev, opts->avc_handles, opts->avc_events);
    return 0;
}

void dmistub_events_submit(dmistub_events *ev, dmistub_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&ev->lock);
    if (ev->tail)
        ev->tail->next = job;
    else
        ev->head = job;
    ev->tail = job;
    pthread_cond_signal(&ev->wake);
    pthread_mutex_unlock(&ev->lock);
}

void dmistub_events_submit_avc(dmistub_events *ev, const char *handles, long n)
{
    /* the handle list rides in network_base; operations stay NULL */
    dmistub_job *job = dmistub_job_new("avc", "", handles, NULL);

    job->avc_events = n;
    dmistub_events_submit(ev, job);
}

static void job_due(void *arg)
{
    dmistub_job *job = arg;

    dmistub_events_submit(job->ev, job);
}

void dmistub_events_submit_after(dmistub_events *ev, dmistub_timer *timer, long delay_ms,
                                 dmistub_job *job)
{
    job->ev = ev;
    if (delay_ms == 0 || dmistub_timer_add(timer, delay_ms, job_due, job) != 0)
        dmistub_events_submit(ev, job);
}

static void stats_now(dmistub_events *ev, dmistub_event_stats *s)
{
    long queued = atomic_load(&ev->queued);
    long failed_dr = atomic_load(&ev->delivery.failed);
    long pending = atomic_load(&ev->delivery.pending);

    s->queued = queued;
    s->delivered = queued - pending - failed_dr;
    if (s->delivered < 0)
        s->delivered = 0;
    s->failed = atomic_load(&ev->send_failed) + failed_dr;
}

void dmistub_events_stats(dmistub_events *ev, dmistub_event_stats *out)
{
    stats_now(ev, out);
    pthread_mutex_lock(&ev->lock);
    out->queued -= ev->base_queued;
    out->delivered -= ev->base_delivered;
    out->failed -= ev->base_failed;
    pthread_mutex_unlock(&ev->lock);
}

void dmistub_events_stats_reset(dmistub_events *ev)
{
    dmistub_event_stats s;

    stats_now(ev, &s);
    pthread_mutex_lock(&ev->lock);
    ev->base_queued = s.queued;
    ev->base_delivered = s.delivered;
    ev->base_failed = s.failed;
    pthread_mutex_unlock(&ev->lock);
}

void dmistub_events_stop(dmistub_events *ev)
{
    if (!ev)
        return;
    pthread_mutex_lock(&ev->lock);
    ev->stopping = 1;
    pthread_cond_signal(&ev->wake);
    pthread_mutex_unlock(&ev->lock);
    pthread_join(ev->thread, NULL);
    ncmp_producer_destroy(ev->producer);
    pthread_cond_destroy(&ev->wake);
    pthread_mutex_destroy(&ev->lock);
    free(ev);
}
