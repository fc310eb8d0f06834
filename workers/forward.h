/*
 * The Kafka forwarders: two roles that move records from one topic to
 * another at Kafka's pace, with nothing lost. No database.
 *
 *   avc-forward    `avc-forward.input-topic` (dmi-cm-events) to
 *                  `avc-forward.output-topic` (cm-events): every record
 *                  unchanged (value, key, headers).
 *   async-forward  `async-forward.input-topic` (ncmp-async-m2m) to the
 *                  client topic named by each DataOperationEvent's
 *                  `ce_destination` header, keyed by `ce_correlationid`,
 *                  value and headers unchanged.
 *
 * Each role is a pool of worker threads; a worker owns one consumer (a
 * member of group `<kafka.group.id>-<role>`) and one producer, and loops:
 *
 *   take up to batch-size records
 *   produce each one (the value is not copied: the consumed record stays
 *   alive until its delivery report; its headers are handed over)
 *   wait until the broker acknowledged every record of the batch
 *   dead-letter what failed for good, wait for those acknowledgements
 *   commit, per partition, the offset after the last record handled
 *
 * At least once: a crash after the acknowledgements and before the commit
 * forwards the uncommitted tail again. A record whose delivery failed for
 * a passing reason (broker away, timeout) is not committed: its partition
 * is rewound to it and forwarded again from there after a back-off, so the
 * output keeps each partition's order (a record may follow a copy of
 * itself, never precede an earlier record). A record that can never be
 * delivered (too large for the output topic, a bad or missing destination,
 * an unknown topic for async-forward) goes to `<input-topic>-dlq` with the
 * dead-letter headers of ncmp_dlq (dlq_reason, dlq_topic, dlq_partition,
 * dlq_offset, dlq_role), and the partition moves on.
 *
 * Stop: when ncmp_stopping is set, a worker finishes the batch in flight,
 * waits for its acknowledgements, commits and leaves the group. If the
 * broker does not acknowledge within half of shutdown-timeout-s, the
 * unacknowledged records are purged and not committed.
 */
#ifndef NCMPD_FORWARD_H
#define NCMPD_FORWARD_H

#include <stddef.h>

#include "ncmp_config.h"
#include "ncmp_err.h"

#define FORWARD_AVC_ROLE   "avc-forward"
#define FORWARD_ASYNC_ROLE "async-forward"

typedef struct forward forward;

/* Start role `role` (FORWARD_AVC_ROLE or FORWARD_ASYNC_ROLE) for `cfg`,
 * which must outlive it. Returns once every worker joined its group (or
 * failed: then -1, nothing left running). On success *f is owned by the
 * caller. */
int forward_start(forward **f, const ncmp_config *cfg, const char *role, ncmp_err *err);

/* Wait for the workers to end (they end when ncmp_stopping is set, or
 * when one fails fatally, which sets it). Returns -1 with the first fatal
 * error. */
int forward_join(forward *f, ncmp_err *err);

/* Accepts NULL. Call after forward_join. */
void forward_destroy(forward *f);

/* The topics a role reads and writes (input, dead-letter, and output for
 * avc-forward), for `ncmpd create-topics`. Writes up to `max` names into
 * `names` and returns how many (0 for an unknown role or bad options). */
size_t forward_topics(const ncmp_config *cfg, const char *role, char (*names)[256], size_t max);

#endif
