/*
 * ncmp_kafka: every Kafka client of the code base is made here.
 *
 * ncmp_kafka.c is the only file that calls rd_kafka_new, so that what a
 * client promises is decided in one place; tests/scripts/
 * test_kafka_clients.sh fails otherwise. A client is made from
 *   - ncmp_kafka_opts: where the brokers are, the largest record, and the
 *     pass-through properties (the service's `kafka.*`, a tool's -X);
 *   - what it is for: a producer profile, a group consumer, a reader, or
 *     an admin client.
 * Its settings are applied in this order: the profile's, then the
 * pass-through properties (which may override them), then the settings the
 * code relies on (idempotence, manual commits), which win.
 *
 * Every client gets
 *   - librdkafka's log routed to ncmp_log. The log callback runs on
 *     librdkafka's own threads (ncmp_log is thread-safe); not log.queue,
 *     which would hold back the lines of a client nobody polls for a
 *     while (the admin client, a producer between batches);
 *   - an error callback, served by whichever thread polls the client. A
 *     producer's fatal error (rd_kafka_fatal_error: e.g. an idempotent
 *     producer that can no longer keep its order and no-duplicates
 *     promise) is logged and stops the process in order
 *     (ncmp_signal_request_stop): a new process starts from what the
 *     database and the committed offsets say. A group consumer's fatal
 *     error (a static member fenced: FENCED_INSTANCE_ID after a pause
 *     past its session or a broker restart) is its owner's: it drops what
 *     it polled, closes the consumer and makes a new one, which resumes
 *     from the committed offsets (ncmp_kafka_polled_take). Other
 *     errors are logged; librdkafka recovers from them itself.
 *
 * Two kinds of constructors: ncmp_producer and ncmp_consumer wrap their
 * client and do the bookkeeping (delivery tracking, commits); the
 * ncmp_kafka_*_new constructors hand back the rd_kafka_t itself, for
 * owners that do their own (they pass their callbacks in
 * ncmp_kafka_hooks).
 */
#ifndef NCMP_KAFKA_H
#define NCMP_KAFKA_H

#include <librdkafka/rdkafka.h>
#include <stdatomic.h>
#include <stddef.h>

#include "ncmp_err.h"
#include "ncmp_kv.h"

/* message.max.bytes when ncmp_kafka_opts leave it 0; the same as the
 * service option kafka.max-message-bytes (a reference registration
 * request of 2,000 handles is about 1.1 MB). */
#define NCMP_KAFKA_MAX_MESSAGE_BYTES 16777216

/* Where and how to reach Kafka. Everything is borrowed: it must stay valid
 * while a constructor runs, not after. ncmp_kafka_opts_from_config
 * (ncmp_kafka_config.h) fills one from the service config. */
typedef struct ncmp_kafka_opts {
    const char *bootstrap_servers; /* NULL or "": none (a mock cluster in props) */
    int max_message_bytes;         /* 0: NCMP_KAFKA_MAX_MESSAGE_BYTES */
    const ncmp_kv *props;          /* librdkafka properties, applied in order */
    size_t nprops;
} ncmp_kafka_opts;

/* What a producer is for. Every profile is idempotent (so acks=all, and
 * retries neither reorder nor duplicate records within a partition). */
typedef enum ncmp_producer_profile {
    /* linger.ms=5; librdkafka's partitioner (consistent_random). */
    NCMP_PRODUCER_DEFAULT,
    /* DEFAULT with partitioner murmur2_random: a key lands on the
     * partition NCMP's Java clients pick, for records that consumers
     * partition by key as NCMP does (the lifecycle events). */
    NCMP_PRODUCER_KEYED,
    /* KEYED for throughput: linger.ms=10, batches of up to 10000 records,
     * a local queue of 1000000, no compression (the forwarders). */
    NCMP_PRODUCER_BULK,
    /* DEFAULT with linger.ms=1: somebody waits for each record (the REST
     * registration requests). */
    NCMP_PRODUCER_PROMPT,
} ncmp_producer_profile;

/* The profile's name as in logs and docs ("default", "keyed", ...). */
const char *ncmp_producer_profile_name(ncmp_producer_profile profile);

/* Callbacks of an owner that does its own bookkeeping. Each runs on the
 * thread that polls the client and gets `opaque` (rd_kafka_opaque(rk)).
 * Any may be NULL; a NULL ncmp_kafka_hooks is no callbacks. */
typedef struct ncmp_kafka_hooks {
    void *opaque;
    void (*dr_msg_cb)(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);
    void (*offset_commit_cb)(rd_kafka_t *rk, rd_kafka_resp_err_t e,
                             rd_kafka_topic_partition_list_t *offsets, void *opaque);
} ncmp_kafka_hooks;

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

/* A producer of `profile`. On success *p is owned by the caller. */
int ncmp_producer_new(ncmp_producer **p, const ncmp_kafka_opts *opts, ncmp_producer_profile profile,
                      const char *client_id, ncmp_err *err);

/* Flushes (up to 10 s) and destroys. Accepts NULL. */
void ncmp_producer_destroy(ncmp_producer *p);

rd_kafka_t *ncmp_producer_rk(ncmp_producer *p);

/* Queue one record. `headers` (may be NULL) is taken over in every case.
 * `d` (may be NULL) counts the record until its delivery report.
 * Waits while the local queue is full. Fails with FATAL once the producer
 * had a fatal error (the process is stopping then). */
int ncmp_producer_send(ncmp_producer *p, ncmp_delivery *d, const char *topic, int32_t partition,
                       const void *key, size_t keylen, const void *value, size_t len,
                       rd_kafka_headers_t *headers, ncmp_err *err);

/* Wait until every record counted by `d` was acknowledged or failed.
 * Fails (RETRY) if any failed or the timeout passed, and at once (FATAL)
 * when the producer had a fatal error: its records will not come. */
int ncmp_producer_wait(ncmp_producer *p, ncmp_delivery *d, int timeout_ms, ncmp_err *err);

/* A producer of `profile` for an owner that tracks deliveries itself
 * (hooks->dr_msg_cb; records' _private is the owner's). On success *rk is
 * owned by the caller: rd_kafka_flush, then rd_kafka_destroy. */
int ncmp_kafka_producer_new(rd_kafka_t **rk, const ncmp_kafka_opts *opts,
                            ncmp_producer_profile profile, const char *client_id,
                            const ncmp_kafka_hooks *hooks, ncmp_err *err);

/* The same, transactional: with `transactional_id`, and its transactions
 * initialised (up to `timeout_ms`). Initialising fences every earlier
 * producer of that id: the broker aborts its open transaction and refuses
 * whatever of it still arrives (a killed process's requests in flight).
 * Fails with RETRY when the broker does not answer in time, FATAL when it
 * refuses transactions. */
int ncmp_kafka_txn_producer_new(rd_kafka_t **rk, const ncmp_kafka_opts *opts,
                                ncmp_producer_profile profile, const char *client_id,
                                const char *transactional_id, int timeout_ms,
                                const ncmp_kafka_hooks *hooks, ncmp_err *err);

/* `e` (a transactional call's error, destroyed here) as a RETRY error, or
 * FATAL when librdkafka says so; prefixed with `what`. Returns -1. */
int ncmp_kafka_txn_error(rd_kafka_error_t *e, const char *what, ncmp_err *err);

/* --- group consumer ------------------------------------------------------ */

typedef struct ncmp_consumer ncmp_consumer;

/* A member of consumer group `group` subscribed to `topics`; offsets are
 * committed only by ncmp_consumer_commit. `instance_id` (NULL or "" for
 * none) makes it a static member (group.instance.id): restarted with the
 * same id, it gets its partitions back without waiting for the old
 * session to time out. On success *c is owned by the caller. */
int ncmp_consumer_new(ncmp_consumer **c, const ncmp_kafka_opts *opts, const char *group,
                      const char *instance_id, const char *const *topics, size_t ntopics,
                      ncmp_err *err);

/* A consumer queue's idle sleep: librdkafka writes to an eventfd when the
 * queue stops being empty, so a worker with nothing to do can sleep on it
 * instead of polling every batch wait (5-20 ms) to find nothing. */
typedef struct ncmp_queue_waiter {
    rd_kafka_queue_t *queue; /* borrowed */
    int fd;                  /* -1: none could be made; wait returns at once */
} ncmp_queue_waiter;

void ncmp_queue_waiter_init(ncmp_queue_waiter *w, rd_kafka_queue_t *queue);

/* When the queue is empty, sleep until something comes to it, 100 ms at
 * most (or timeout_ms when longer); then the caller takes its batch in one
 * call (records of a partition revoked meanwhile are dropped there). */
void ncmp_queue_waiter_wait(ncmp_queue_waiter *w, int timeout_ms);

/* Before the queue is destroyed. */
void ncmp_queue_waiter_fini(ncmp_queue_waiter *w);

/* Up to `max` records: on an empty queue, sleep until something comes
 * (ncmp_queue_waiter_wait), then wait up to `timeout_ms` for up to `max`
 * records. Returns with *n = 0 when none came. Records that carry an
 * error are logged and dropped. Fails with FATAL when the member failed
 * for good (ncmp_kafka_polled_take; nothing polled is returned): close
 * it and make a new one. The records in msgs[0..*n) are owned by the
 * caller (rd_kafka_message_destroy). */
int ncmp_consumer_poll(ncmp_consumer *c, rd_kafka_message_t **msgs, size_t max, int timeout_ms,
                       size_t *n, ncmp_err *err);

/* Commit, per partition, the offset after the last of msgs. A failed commit
 * is logged, not returned: the database holds the offsets that count. */
void ncmp_consumer_commit(ncmp_consumer *c, rd_kafka_message_t *const *msgs, size_t n);

/* Leave the group and destroy. Accepts NULL. */
void ncmp_consumer_close(ncmp_consumer *c);

/* Records of `topic` on the partitions `rk` (a group consumer) holds that
 * it has not consumed yet: high watermark minus position, summed, from
 * the values librdkafka cached at the last fetch (no broker round trip,
 * fit for a metrics scrape). A partition without a position yet counts
 * as 0. */
int64_t ncmp_kafka_assigned_lag(rd_kafka_t *rk, const char *topic);

rd_kafka_t *ncmp_consumer_rk(ncmp_consumer *c);

/* The group consumer of ncmp_consumer_new (the same settings, subscribed,
 * its events on the consumer queue: rd_kafka_poll_set_consumer) for an
 * owner that commits and polls itself. On success *rk is owned by the
 * caller: rd_kafka_consumer_close, then rd_kafka_destroy. */
int ncmp_kafka_consumer_new(rd_kafka_t **rk, const ncmp_kafka_opts *opts, const char *group,
                            const char *instance_id, const char *const *topics, size_t ntopics,
                            const ncmp_kafka_hooks *hooks, ncmp_err *err);

/* Take the n records a poll of group consumer `rk` (of `group`) returned;
 * call it after every poll (it is cheap). The records without an error are
 * kept, in order, at the front of msgs: *kept of them, owned by the caller.
 * The error events are destroyed; those that need a person are logged
 * under `who` (the end of a partition is not).
 *
 * Fails with FATAL (librdkafka's reason in err) when the member failed for
 * good: a fatal error, which for a consumer means its static instance id
 * was fenced (another member joined with it, or the broker already
 * replaced this member after a pause past its session). Nothing it polled
 * can be committed any more, so every record is destroyed (*kept is 0) and
 * the renewal is counted (ncmp_kafka_consumer_renewals_total{group}): the
 * owner closes the consumer and makes a new one with the same instance id
 * (ncmp_kafka_member_renew), which starts from the committed offsets. */
int ncmp_kafka_polled_take(rd_kafka_t *rk, const char *group, const char *who,
                           rd_kafka_message_t **msgs, size_t n, size_t *kept, ncmp_err *err);

/* The renewal after ncmp_kafka_polled_take failed, the failed consumer closed
 * by its owner: `make` (the owner's constructor, same instance id) after a
 * pause of 1 s, doubling up to 30 s while it fails, until it made the
 * member (0) or `stopping` says the owner stops (-1). Logged under `role`
 * as worker `index` of `group`, with `why`. */
int ncmp_kafka_member_renew(const char *role, int index, const char *group, const ncmp_err *why,
                            int (*make)(void *arg, ncmp_err *err), int (*stopping)(void *arg),
                            void *arg);

/* --- readers ------------------------------------------------------------- */

/* A reader: a consumer that reads the partitions it is assigned
 * (rd_kafka_assign), from where it is told, outside any consumer group.
 * `group` (NULL: the client id) only names it, as rd_kafka_assign and
 * rd_kafka_committed need a group.id: it never joins it and never commits.
 * Reaching the end of a partition is an event
 * (RD_KAFKA_RESP_ERR__PARTITION_EOF, once per end offset). Records and
 * events come from rd_kafka_consumer_poll. On success *rk is owned by the
 * caller: ncmp_kafka_reader_close. */
int ncmp_kafka_reader_new(rd_kafka_t **rk, const ncmp_kafka_opts *opts, const char *client_id,
                          const char *group, ncmp_err *err);

/* Assign the reader every partition of `topic`, each at `offset`: an
 * offset, RD_KAFKA_OFFSET_BEGINNING, or RD_KAFKA_OFFSET_END. The end is
 * looked up here and now (the partitions' high watermarks), so every
 * record produced after this returns will be read; a logical END would be
 * resolved later, at the first fetch. Waits up to timeout_ms for the
 * topic (a topic created by its first produce appears a moment later) and
 * for the leaders of a new topic's partitions. Fails with RETRY when they
 * are not there in time. *npartitions (may be NULL) is set on success. */
int ncmp_kafka_reader_assign_all(rd_kafka_t *rk, const char *topic, int64_t offset, int timeout_ms,
                                 int *npartitions, ncmp_err *err);

/* A tail reader: a reader of every partition of `topic` from its end now
 * (ncmp_kafka_reader_new, then ncmp_kafka_reader_assign_all at
 * RD_KAFKA_OFFSET_END). It reads exactly the records produced after it
 * returned, and fetches them in the background until polled. On success
 * *rk is owned by the caller: ncmp_kafka_reader_close. */
int ncmp_kafka_tail_reader_new(rd_kafka_t **rk, const ncmp_kafka_opts *opts, const char *client_id,
                               const char *group, const char *topic, int timeout_ms, ncmp_err *err);

/* Unassign, close and destroy a reader. Accepts NULL. */
void ncmp_kafka_reader_close(rd_kafka_t *rk);

/* Called for each record of a scan, in offset order within a partition.
 * Returns 0 to go on, or -1 with *err set to end the scan with that error.
 * `m` is borrowed for the call. */
typedef int (*ncmp_kafka_scan_fn)(const rd_kafka_message_t *m, void *arg, ncmp_err *err);

/* Read partitions 0..npartitions-1 of `topic`, each from from[p] to its
 * end, with one reader, calling fn for each record (the records of
 * different partitions interleave). The end of a partition is where the
 * reader found it; on success end[p] is that offset. A partition whose
 * from[p] is past its end is read from its start (auto.offset.reset).
 * Fails with RETRY when nothing arrives for idle_timeout_ms, when the
 * process stops, or on a partition's error. */
int ncmp_kafka_scan(const ncmp_kafka_opts *opts, const char *client_id, const char *topic,
                    const int64_t *from, int npartitions, int idle_timeout_ms,
                    ncmp_kafka_scan_fn fn, void *arg, int64_t *end, ncmp_err *err);

/* --- admin and helpers --------------------------------------------------- */

/* A client for the admin API (rd_kafka_CreateTopics, ...) and metadata
 * requests; it produces nothing. On success *rk is owned by the caller:
 * rd_kafka_destroy. */
int ncmp_kafka_admin_new(rd_kafka_t **rk, const ncmp_kafka_opts *opts, const char *client_id,
                         ncmp_err *err);

/* Create `topics` with `partitions` partitions each, unless they exist.
 * Waits for the broker (up to timeout_ms). */
int ncmp_kafka_create_topics(const ncmp_kafka_opts *opts, const char *const *topics, size_t ntopics,
                             int partitions, int timeout_ms, ncmp_err *err);

/* Value of header `name` (the last one of that name) as a NUL-terminated
 * copy in buf; returns NULL when absent. */
const char *ncmp_kafka_header(const rd_kafka_message_t *m, const char *name, char *buf,
                              size_t buflen);

/* The same from a list of headers (NULL: none). */
const char *ncmp_kafka_headers_value(const rd_kafka_headers_t *hdrs, const char *name, char *buf,
                                     size_t buflen);

/* The number of partitions of `topic`, waiting up to timeout_ms for it to
 * exist (a topic created by its first produce appears a moment later).
 * Fails with RETRY when it did not appear in time. */
int ncmp_kafka_partition_count(rd_kafka_t *rk, const char *topic, int timeout_ms, int *count,
                               ncmp_err *err);

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
