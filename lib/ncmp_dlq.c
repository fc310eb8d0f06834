#include "ncmp_dlq.h"

#include <stdio.h>
#include <string.h>

#include "ncmp_log.h"
#include "ncmp_metrics.h"

char *ncmp_dlq_topic(char *out, size_t outlen, const char *topic)
{
    snprintf(out, outlen, "%s-dlq", topic);
    return out;
}

int ncmp_dlq_value_too_large(size_t len, size_t max_message_bytes)
{
    return len + NCMP_DLQ_HEADROOM > max_message_bytes;
}

void ncmp_dlq_record_init(ncmp_dlq_record *rec, const rd_kafka_message_t *m, const char *role,
                          const char *reason, size_t max_message_bytes, int truncate,
                          rd_kafka_headers_t *headers)
{
    const char *topic = rd_kafka_topic_name(m->rkt);
    const char *labels[2] = {role, topic};
    rd_kafka_headers_t *orig = NULL;
    char num[32];

    log_warn(role, "rejected record topic=%s partition=%d offset=%lld: %s", topic,
             (int)m->partition, (long long)m->offset, reason);
    ncmp_counter_add(ncmp_counter_get(ncmp_metrics_lib_get()->dead_letters, labels), 1);

    memset(rec, 0, sizeof(*rec));
    ncmp_dlq_topic(rec->topic, sizeof(rec->topic), topic);
    rec->key = m->key;
    rec->key_len = m->key ? m->key_len : 0;
    rec->truncated = truncate || ncmp_dlq_value_too_large(m->len, max_message_bytes);
    if (!rec->truncated) {
        rec->value = m->payload;
        rec->len = m->payload ? m->len : 0;
    }
    if (headers)
        rec->headers = headers;
    else if (rd_kafka_message_headers(m, &orig) == RD_KAFKA_RESP_ERR_NO_ERROR && orig)
        rec->headers = rd_kafka_headers_copy(orig);
    else
        rec->headers = rd_kafka_headers_new(7);
    /* the order of docs/events.md; consumers look them up by name */
    rd_kafka_header_add(rec->headers, "dlq_reason", -1, reason, -1);
    rd_kafka_header_add(rec->headers, "dlq_topic", -1, topic, -1);
    snprintf(num, sizeof(num), "%d", (int)m->partition);
    rd_kafka_header_add(rec->headers, "dlq_partition", -1, num, -1);
    snprintf(num, sizeof(num), "%lld", (long long)m->offset);
    rd_kafka_header_add(rec->headers, "dlq_offset", -1, num, -1);
    rd_kafka_header_add(rec->headers, "dlq_role", -1, role, -1);
    if (rec->truncated) {
        snprintf(num, sizeof(num), "%zu", m->len);
        rd_kafka_header_add(rec->headers, "dlq_original_size", -1, num, -1);
        rd_kafka_header_add(rec->headers, "dlq_value_truncated", -1, "true", -1);
    }
}

void ncmp_dlq_record_clear(ncmp_dlq_record *rec)
{
    if (!rec)
        return;
    if (rec->headers)
        rd_kafka_headers_destroy(rec->headers);
    rec->headers = NULL;
}
