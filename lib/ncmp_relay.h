/*
 * ncmp_relay: publishes an outbox table to a Kafka topic, in order,
 * exactly once. The lifecycle events (lcm_outbox) and CPS's data-updated
 * events (cps_event_outbox) each have one.
 *
 * An outbox holds events written in the same transaction as the change
 * they announce: columns seq (identity), a key column, event_id,
 * event_time, event_type and payload. The writer NOTIFYs the table's
 * channel; the notification arrives when the transaction commits.
 *
 * One relay per outbox is active across all ncmpd processes (a PostgreSQL
 * advisory lock elects it; the others wait to take over). It wakes on the
 * NOTIFY, publishes up to a batch of events in seq order (each with header
 * ncmp_outbox_seq), waits for the broker's acknowledgements, then deletes
 * the rows and records, per partition, the offset after its last record
 * (lcm_relay_checkpoint, keyed by topic), in one transaction.
 *
 * A crash between the acknowledgement and that transaction would publish
 * the same events again on restart. So, on taking over, the relay first
 * reads each partition from its checkpoint to its end, and deletes the
 * outbox rows whose seq it finds there: those events are out already.
 *
 * That scan is only sound if nothing of the last leader can still land
 * after it, and a killed process's produce requests may reach a busy
 * broker a second later. So each round is one Kafka transaction of a
 * producer whose transactional.id belongs to the outbox's topic, and a new
 * leader first makes its own producer of that id: the broker then aborts
 * the last leader's open transaction and refuses the rest of it. The scan
 * reads committed records only. Consumers that read committed records
 * (isolation.level=read_committed, librdkafka's default) see every event
 * exactly once; one that reads uncommitted records may also see the
 * aborted records of a round a crash cut short.
 *
 * Order: rows are read in seq order, and seq is taken when the row is
 * written. Events of one key are in commit order when their writers take
 * turns on a lock of that key (a handle's row, an anchor's row), which
 * every writer of both outboxes does.
 *
 * Crash points for the fault tests: "<component>.after-publish" and
 * "<component>.after-commit".
 */
#ifndef NCMP_RELAY_H
#define NCMP_RELAY_H

#include <librdkafka/rdkafka.h>

#include "ncmp_config.h"
#include "ncmp_err.h"
#include "ncmp_singleton.h"

/* The headers of one event from its row (`schema`: its schema column, ""
 * when the outbox has none); the relay adds its seq header and hands them
 * to the produce call. */
typedef rd_kafka_headers_t *(*ncmp_relay_headers_fn)(void *arg, const char *key, const char *type,
                                                     const char *schema, const char *id,
                                                     const char *time);

/* What one relay publishes; the strings are constants or outlive the
 * task (a topic name of the configuration). */
typedef struct ncmp_relay_spec {
    const char *component;     /* log component, client id and crash points */
    const char *what;          /* what the events are, for messages */
    const char *leader_msg;    /* logged when this process takes over */
    const char *table;         /* the outbox */
    const char *key_column;    /* its column with the record key */
    const char *schema_column; /* its column with the value's schema, or NULL */
    const char *channel;       /* the NOTIFY channel its writers use */
    const char *topic;
    long long lock_key; /* advisory lock: any constant, one per outbox */
    int batch_size;     /* most events per round */
    int linger_ms;      /* woken by a NOTIFY, wait this long before the round */
    ncmp_relay_headers_fn headers;
    void *headers_arg;
} ncmp_relay_spec;

/* The relay as a singleton task (lib/ncmp_singleton.h), with a producer of
 * its own (keyed as NCMP's Java clients key: murmur2). Fills *task; its arg
 * is flushed and freed by ncmp_relay_free once the task ended. */
int ncmp_relay_task(const ncmp_config *cfg, const ncmp_relay_spec *spec, ncmp_singleton_task *task,
                    ncmp_err *err);
void ncmp_relay_free(void *arg);

#endif
