/*
 * ncmp_pump: a pool of workers that move records from one topic to others
 * at Kafka's pace, at least once, without a database: the forwarders
 * (dmi-cm-events to cm-events, ncmp-async-m2m to client topics) and the
 * batch-read request topic.
 *
 * Each worker thread owns a consumer (a member of group
 * `<kafka.group.id>-<role>`) and a producer of the bulk profile, and loops:
 *
 *   take up to batch-size records
 *   ask the role's handle() what each one is: SEND (to a topic, with a
 *   key; the value is not copied, the consumed record stays alive until
 *   its delivery report, and its headers are handed over; or a value and
 *   headers of the role's own, mapped from the record), REJECT (a
 *   dead letter with the reason, lib/ncmp_dlq.h), DONE (the role did
 *   what the record asks) or SKIP (the record is not the role's)
 *   wait until the broker acknowledged every record of the batch
 *   dead-letter what failed for good, wait for those acknowledgements
 *   commit, per partition, the offset after the last record handled
 *
 * At least once: a crash after the acknowledgements and before the commit
 * sends the uncommitted tail again. A record whose delivery failed for a
 * passing reason (broker away, timeout) is not committed: its partition
 * is rewound to it and sent again from there after a back-off (100 ms
 * doubling to 5 s), so each partition keeps its order (a record may
 * follow a copy of itself, never precede an earlier record). The records
 * behind one that could not even be queued are not sent in that batch:
 * they come again with it, once. A record
 * that can never be delivered (too large for the output, an unknown topic
 * where the role says that is the record's fault) is dead-lettered to
 * `<input>-dlq` and its partition moves on. Bad input never blocks.
 *
 * Stop: when ncmp_stopping is set (or ncmp_pump_stop was called), a worker finishes the batch in
 * flight, waits for its acknowledgements, commits and leaves the group. If the broker does not
 * acknowledge within half of shutdown-timeout-s, the unacknowledged records are purged and not
 * committed. A fatal error of a producer stops the process (lib/ncmp_kafka.h); its records were not
 * committed and are sent again after the restart.
 *
 * Fault points `<role>.before-commit` and `<role>.after-commit` surround
 * the offset commit.
 */
#ifndef NCMP_PUMP_H
#define NCMP_PUMP_H

#include <librdkafka/rdkafka.h>
#include <stddef.h>

#include "ncmp_config.h"
#include "ncmp_err.h"
#include "ncmp_kafka.h"

typedef enum ncmp_pump_verdict {
    NCMP_PUMP_SEND,   /* produce the record to route->topic, keyed route->key */
    NCMP_PUMP_REJECT, /* dead-letter it with route->reason */
    NCMP_PUMP_DONE,   /* nothing to send: the role did what the record asks */
    NCMP_PUMP_SKIP,   /* nothing to send: the record is not the role's */
} ncmp_pump_verdict;

/* What handle() says about one record. */
typedef struct ncmp_pump_route {
    char topic[NCMP_KAFKA_TOPIC_NAME_MAX + 1];
    /* borrowed from the record or its headers (both alive until the
     * record is produced) */
    const void *key;
    size_t keylen;
    char own_key[64]; /* a key of the role's own: `key` may point here */
    char reason[512];
    /* SEND a value of the role's own instead of the record's (a role that
     * maps one event to another): malloc'd and taken over by the pump,
     * which frees it after its delivery report, with `headers` (taken
     * over; NULL: none). NULL value: the record goes as it came, value and
     * headers. A mapped record that fails for good is dead-lettered as it
     * came in (its own value and headers). */
    char *value;
    size_t len;
    rd_kafka_headers_t *headers;
} ncmp_pump_route;

typedef struct ncmp_pump_role {
    const char *name;     /* group <kafka.group.id>-<name>, logs, fault points */
    const char *dlq_role; /* dead letters' dlq_role; NULL: the name */
    const char *input;
    int workers;
    int batch_size;
    int batch_wait_ms;
    /* an unknown output topic is the record's fault (a client topic that
     * does not exist), not the deployment's: dead-letter, do not retry */
    int unknown_topic_is_permanent;
    /* On the worker's thread. `headers` are the record's (may be NULL),
     * borrowed; *route comes zeroed. */
    ncmp_pump_verdict (*handle)(void *arg, const rd_kafka_message_t *m,
                                const rd_kafka_headers_t *headers, ncmp_pump_route *route);
    void *arg;
} ncmp_pump_role;

typedef struct ncmp_pump ncmp_pump;

/* Start the workers. `cfg` and `role` must outlive the pump. Returns once
 * every worker joined its group (or failed: then -1, nothing left
 * running). On success *p is owned by the caller. */
int ncmp_pump_start(ncmp_pump **p, const ncmp_config *cfg, const ncmp_pump_role *role,
                    ncmp_err *err);

/* Ask this pump's workers to stop as on ncmp_stopping (finish the batch,
 * commit, leave the group); does not wait. Accepts NULL. */
void ncmp_pump_stop(ncmp_pump *p);

/* Wait for the workers to end (they end when ncmp_stopping is set, after
 * ncmp_pump_stop, or when one fails fatally, which sets ncmp_stopping). Returns -1 with the first
 * fatal error. */
int ncmp_pump_join(ncmp_pump *p, ncmp_err *err);

/* Accepts NULL. Call after ncmp_pump_join. */
void ncmp_pump_destroy(ncmp_pump *p);

#endif
