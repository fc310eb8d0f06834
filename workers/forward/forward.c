#include "forward.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async_legacy.h"
#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_dlq.h"
#include "ncmp_kafka.h"
#include "ncmp_lcm.h"
#include "ncmp_log.h"

/* --- routes -------------------------------------------------------------- */

static ncmp_pump_verdict route_avc(void *arg, const rd_kafka_message_t *m,
                                   const rd_kafka_headers_t *headers, ncmp_pump_route *r)
{
    const ncmp_config *cfg = arg;

    snprintf(r->topic, sizeof(r->topic), "%s", cfg->avc_forward_output_topic);
    r->key = m->key;
    r->keylen = m->key ? m->key_len : 0;
    return NCMP_PUMP_SEND;
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

/* Can a record go to `topic` (len bytes, named by header or field
 * `what`)? 0 with r->topic set, or -1 with the reason. */
static int destination(const ncmp_config *cfg, const char *what, const void *topic, size_t len,
                       ncmp_pump_route *r)
{
    char dlq[NCMP_KAFKA_TOPIC_NAME_MAX + 8];
    char shown[96];

    if (!ncmp_kafka_topic_name_valid(topic, len)) {
        printable(shown, sizeof(shown), topic, len);
        snprintf(r->reason, sizeof(r->reason),
                 "%s '%s' (%zu bytes) is not a valid topic name "
                 "(1-249 of [a-zA-Z0-9._-], not . or ..)",
                 what, shown, len);
        return -1;
    }
    memcpy(r->topic, topic, len);
    r->topic[len] = '\0';
    ncmp_dlq_topic(dlq, sizeof(dlq), cfg->async_forward_input_topic);
    if (strcmp(r->topic, cfg->async_forward_input_topic) == 0 || strcmp(r->topic, dlq) == 0) {
        snprintf(r->reason, sizeof(r->reason), "%s '%s' is a topic of the forwarder itself", what,
                 r->topic);
        return -1;
    }
    return 0;
}

/* A record without ce_type: NCMP's DmiAsyncRequestResponseEventConsumer
 * takes it as a DmiAsyncRequestResponseEvent and sends the
 * NcmpAsyncRequestResponseEvent it maps to eventTarget (async_legacy.h). */
static ncmp_pump_verdict route_legacy(const ncmp_config *cfg, const rd_kafka_message_t *m,
                                      ncmp_pump_route *r)
{
    ncmp_buf out = NCMP_BUF_INIT, target = NCMP_BUF_INIT;
    char event_time[32];
    ncmp_pump_verdict v = NCMP_PUMP_REJECT;

    ncmp_uuid4(r->own_key);
    ncmp_event_time_now(event_time);
    if (async_legacy_map(m->payload ? m->payload : "", m->payload ? m->len : 0, r->own_key,
                         event_time, &out, &target, r->reason, sizeof(r->reason)) != 0 ||
        destination(cfg, "eventTarget", target.data, target.len, r) != 0)
        goto done;
    r->key = r->own_key;
    r->keylen = strlen(r->own_key);
    r->len = out.len;
    r->value = out.data; /* taken over by the pump */
    out = (ncmp_buf)NCMP_BUF_INIT;
    r->headers = rd_kafka_headers_new(1);
    rd_kafka_header_add(r->headers, ASYNC_LEGACY_TYPE_HEADER, -1, ASYNC_LEGACY_NCMP_TYPE, -1);
    v = NCMP_PUMP_SEND;
done:
    ncmp_buf_free(&out);
    ncmp_buf_free(&target);
    return v;
}

/* NCMP's DataOperationEventConsumer takes the records whose ce_type
 * contains "DataOperationEvent" and ignores the other CloudEvents; the
 * records with no ce_type at all are legacy results (route_legacy). */
static ncmp_pump_verdict route_async(void *arg, const rd_kafka_message_t *m,
                                     const rd_kafka_headers_t *headers, ncmp_pump_route *r)
{
    static const char wanted[] = "DataOperationEvent";
    const ncmp_config *cfg = arg;
    const void *value;
    size_t len;

    if (header_last(headers, "ce_type", &value, &len) != 0)
        return route_legacy(cfg, m, r);
    if (!memmem(value, len, wanted, sizeof(wanted) - 1))
        return NCMP_PUMP_SKIP;
    if (header_last(headers, "ce_destination", &value, &len) != 0) {
        snprintf(r->reason, sizeof(r->reason), "no ce_destination header");
        return NCMP_PUMP_REJECT;
    }
    if (destination(cfg, "ce_destination", value, len, r) != 0)
        return NCMP_PUMP_REJECT;
    /* the key points into the headers, which stay alive until the record
     * is produced (librdkafka copies keys) */
    if (header_last(headers, "ce_correlationid", &r->key, &r->keylen) != 0) {
        r->key = m->key;
        r->keylen = m->key ? m->key_len : 0;
    }
    return NCMP_PUMP_SEND;
}

/* --- the roles ------------------------------------------------------------ */

int forward_avc_pump(const ncmp_services *svc, ncmp_pump_role *role, ncmp_err *err)
{
    const ncmp_config *cfg = svc->cfg;

    *role = (ncmp_pump_role){.name = FORWARD_AVC_ROLE,
                             .input = cfg->avc_forward_input_topic,
                             .workers = cfg->avc_forward_workers,
                             .batch_size = cfg->avc_forward_batch_size,
                             .batch_wait_ms = cfg->avc_forward_batch_wait_ms,
                             .handle = route_avc,
                             .arg = (void *)cfg};
    if (!ncmp_kafka_topic_name_valid(cfg->avc_forward_output_topic,
                                     strlen(cfg->avc_forward_output_topic)) ||
        strcmp(cfg->avc_forward_output_topic, role->input) == 0)
        return ncmp_err_set(err, NCMP_ERR_FATAL,
                            "avc-forward.output-topic '%s' must be a valid topic name other "
                            "than avc-forward.input-topic",
                            cfg->avc_forward_output_topic);
    log_info(FORWARD_AVC_ROLE, "%s -> %s", role->input, cfg->avc_forward_output_topic);
    return 0;
}

int forward_async_pump(const ncmp_services *svc, ncmp_pump_role *role, ncmp_err *err)
{
    const ncmp_config *cfg = svc->cfg;

    *role = (ncmp_pump_role){.name = FORWARD_ASYNC_ROLE,
                             .input = cfg->async_forward_input_topic,
                             .workers = cfg->async_forward_workers,
                             .batch_size = cfg->async_forward_batch_size,
                             .batch_wait_ms = cfg->async_forward_batch_wait_ms,
                             .unknown_topic_is_permanent = 1,
                             .handle = route_async,
                             .arg = (void *)cfg};
    log_info(FORWARD_ASYNC_ROLE, "%s -> ce_destination", role->input);
    return 0;
}

size_t forward_topics(const ncmp_config *cfg, const char *role, char (*names)[256], size_t max)
{
    const char *input = strcmp(role, FORWARD_AVC_ROLE) == 0 ? cfg->avc_forward_input_topic
                                                            : cfg->async_forward_input_topic;
    size_t n = 0;

    if (n < max)
        snprintf(names[n++], 256, "%s", input);
    if (n < max)
        ncmp_dlq_topic(names[n++], 256, input);
    if (strcmp(role, FORWARD_AVC_ROLE) == 0 && n < max)
        snprintf(names[n++], 256, "%s", cfg->avc_forward_output_topic);
    return n;
}
