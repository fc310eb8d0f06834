/*
 * ncmp_kafka: the producer and the batching consumer every role uses.
 *
 * Both take their librdkafka settings from the config: bootstrap servers,
 * then every `kafka.*` pass-through property, then the settings the code
 * relies on (which win: manual commits, idempotence).
 *
 * librdkafka's log callback runs on librdkafka's own threads; it writes
 * through ncmp_log, which is thread-safe.
 */
#ifndef NCMP_KAFKA_H
#define NCMP_KAFKA_H

#include <librdkafka/rdkafka.h>
#include <stdatomic.h>
#include <stddef.h>

#include "ncmp_config.h"
#include "ncmp_err.h"

/* librdkafka settings from the config: bootstrap servers, then `defaults`
 * (NULL-terminated key/value pairs that pass-through properties may
 * override), then the kafka.* pass-through properties; logs routed to
 * ncmp_log. Owned by the caller (or by rd_kafka_new on success). */
rd_kafka_conf_t *ncmp_kafka_conf_new(const ncmp_config *cfg, const char *client_id,
                                     const char *const *defaults, ncmp_err *err);

/* --- producer ------------------------------------------------------------ */

typedef struct ncmp_producer ncmp_producer;

/* Tracks the delivery of a group of records (a batch's output), so that a
 * worker can wait for exactly its own records while sharing the producer. */
typedef struct ncmp_delivery {
    atomic_long pending;
    atomic_long failed;
    char first_error[256];
} ncmp_delivery;

void ncmp_delivery_init(ncmp_delivery *d);

/* Idempotent producer, acks=all. On success *p is owned by the caller. */
int ncmp_producer_new(ncmp_producer **p, const ncmp_config *cfg, const char *client_id,
                      ncmp_err *err);

/* Flushes (up to 10 s) and destroys. Accepts NULL. */
void ncmp_producer_destroy(ncmp_producer *p);

rd_kafka_t *ncmp_producer_rk(ncmp_producer *p);

/* Queue one record. `headers` (may be NULL) is taken over in every case.
 * `d` (may be NULL) counts the record until its delivery report.
 * Waits while the local queue is full. */
int ncmp_producer_send(ncmp_producer *p, ncmp_delivery *d, const char *topic, int32_t partition,
                       const void *key, size_t keylen, const void *value, size_t len,
                       rd_kafka_headers_t *headers, ncmp_err *err);

/* Wait until every record counted by `d` was acknowledged or failed.
 * Fails (RETRY) if any failed or the timeout passed. */
int ncmp_producer_wait(ncmp_producer *p, ncmp_delivery *d, int timeout_ms, ncmp_err *err);

/* --- consumer ------------------------------------------------------------ */

typedef struct ncmp_consumer ncmp_consumer;

/* A member of consumer group `group` subscribed to `topics`; offsets are
 * committed only by ncmp_consumer_commit. `instance_id` (NULL or "" for
 * none) makes it a static member (group.instance.id): restarted with the
 * same id, it gets its partitions back without waiting for the old
 * session to time out. On success *c is owned by the caller. */
int ncmp_consumer_new(ncmp_consumer **c, const ncmp_config *cfg, const char *group,
                      const char *instance_id, const char *const *topics, size_t ntopics,
                      ncmp_err *err);

/* Wait up to `timeout_ms` for up to `max` records. Records that carry an
 * error are logged and dropped. The records in msgs[0..*n) are owned by the
 * caller (rd_kafka_message_destroy). */
int ncmp_consumer_poll(ncmp_consumer *c, rd_kafka_message_t **msgs, size_t max, int timeout_ms,
                       size_t *n, ncmp_err *err);

/* Commit, per partition, the offset after the last of msgs. A failed commit
 * is logged, not returned: the database holds the offsets that count. */
void ncmp_consumer_commit(ncmp_consumer *c, rd_kafka_message_t *const *msgs, size_t n);

/* Leave the group and destroy. Accepts NULL. */
void ncmp_consumer_close(ncmp_consumer *c);

rd_kafka_t *ncmp_consumer_rk(ncmp_consumer *c);

/* --- helpers ------------------------------------------------------------- */

/* Value of header `name` (the last one of that name) as a NUL-terminated
 * copy in buf; returns NULL when absent. */
const char *ncmp_kafka_header(const rd_kafka_message_t *m, const char *name, char *buf,
                              size_t buflen);

/* The number of partitions of `topic`, waiting up to timeout_ms for it to
 * exist (a topic created by its first produce appears a moment later).
 * Fails with RETRY when it did not appear in time. */
int ncmp_kafka_partition_count(rd_kafka_t *rk, const char *topic, int timeout_ms, int *count,
                               ncmp_err *err);

/* Create `topics` with `partitions` partitions each, unless they exist.
 * Waits for the broker (up to timeout_ms). */
int ncmp_kafka_create_topics(const ncmp_config *cfg, const char *const *topics, size_t ntopics,
                             int partitions, int timeout_ms, ncmp_err *err);

/* The longest topic name Kafka accepts. */
#define NCMP_KAFKA_TOPIC_NAME_MAX 249

/* Kafka's rule for a topic name, the one NCMP applies to client topics:
 * 1 to 249 bytes of [a-zA-Z0-9._-], and not "." or "..". `name` need not
 * be NUL-terminated (a header value); NULL is not valid. */
int ncmp_kafka_topic_name_valid(const void *name, size_t len);

/* The consumer group of one role: "<group_id>-<role>", group_id being
 * kafka.group-id, the deployment's prefix. Other code finds a role's
 * offsets by this name (consumer_offsets.group_id), so it is made here
 * only. Cut to fit outlen. Returns out. */
char *ncmp_kafka_group_name(char *out, size_t outlen, const char *group_id, const char *role);

#endif
