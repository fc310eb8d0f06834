/*
 * ncmp_dlq: the dead-letter record, the one contract of docs/events.md
 * ("Dead-letter topics") that every role rejecting input keeps.
 *
 * A record a role cannot use goes to "<topic>-dlq" with its key, its value
 * and its headers, plus:
 *   dlq_reason     why
 *   dlq_topic      the topic it came from
 *   dlq_partition  its partition, decimal
 *   dlq_offset     its offset, decimal
 *   dlq_role       the role that rejected it
 * and, when the value is left out because it is too large to go anywhere
 * (the reason it was rejected, often), dlq_original_size (decimal) and
 * dlq_value_truncated ("true"). A rejected record must never block its
 * partition, so a dead letter that would itself be refused is not an option.
 *
 * This module builds the record; the caller produces it with whatever
 * producer it owns (the stage's, the forwarder's own, the REST role's).
 */
#ifndef NCMP_DLQ_H
#define NCMP_DLQ_H

#include <librdkafka/rdkafka.h>
#include <stddef.h>

/* Room kept for the headers a dead letter carries besides its value: a
 * value bigger than max.message.bytes minus this is left out. */
#define NCMP_DLQ_HEADROOM 65536

/* Enough for the dead-letter topic of any valid topic name (249 bytes). */
#define NCMP_DLQ_TOPIC_SIZE 256

/* "<topic>-dlq" into out[outlen] (cut to fit; never for a valid topic
 * name and NCMP_DLQ_TOPIC_SIZE). Returns out. */
char *ncmp_dlq_topic(char *out, size_t outlen, const char *topic);

/* Is a value of `len` bytes too large to be dead-lettered with its value,
 * given the producer's max.message.bytes? */
int ncmp_dlq_value_too_large(size_t len, size_t max_message_bytes);

/* One dead letter, ready to produce. */
typedef struct ncmp_dlq_record {
    char topic[NCMP_DLQ_TOPIC_SIZE]; /* "<topic of the record>-dlq" */
    const void *key;                 /* borrowed from the consumed record */
    size_t key_len;
    const void *value; /* borrowed from the consumed record; NULL when left out */
    size_t len;
    int truncated;               /* the value was left out */
    rd_kafka_headers_t *headers; /* owned; NULL once handed to a produce call */
} ncmp_dlq_record;

/* Build the dead letter of `m`, consumed by `role` and rejected for
 * `reason`; log it (warning, under the role's name) and count it in the
 * dead_letters metric {role, topic}. It is counted when built: a dead
 * letter whose produce fails and that is built again on the retry is
 * counted again.
 *
 * `headers`: the record's own headers when the caller already took them
 * out of `m` (rd_kafka_message_detach_headers for a produce, or a copy from
 * a delivery report); taken over. NULL: m's headers are copied.
 * `truncate`: leave the value out whatever its size (the destination said
 * it is too large); without it the value is left out when
 * ncmp_dlq_value_too_large(m->len, max_message_bytes).
 *
 * rec->key and rec->value point into m: m must outlive the produce call
 * (or the delivery report, without RD_KAFKA_MSG_F_COPY). The caller hands
 * rec->headers to its produce call (setting it to NULL) or calls
 * ncmp_dlq_record_clear(). */
void ncmp_dlq_record_init(ncmp_dlq_record *rec, const rd_kafka_message_t *m, const char *role,
                          const char *reason, size_t max_message_bytes, int truncate,
                          rd_kafka_headers_t *headers);

/* Free what rec still owns (its headers). Accepts NULL. */
void ncmp_dlq_record_clear(ncmp_dlq_record *rec);

#endif
