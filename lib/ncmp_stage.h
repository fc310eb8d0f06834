/*
 * ncmp_stage: a pool of workers that consume topics in batches and apply
 * each batch in one PostgreSQL transaction, exactly once in effect.
 *
 * Each worker thread owns a consumer (one member of the role's group), a
 * database connection and its role state. For every batch:
 *
 *   BEGIN
 *   lock the batch's partitions in consumer_offsets and read next_offset
 *   drop records below next_offset (applied before a crash or rebalance)
 *   role->ops.apply(...)                role writes; may queue records
 *   next_offset = last + 1 per partition
 *   wait until every queued record (outputs, dead letters) is acknowledged
 *   COMMIT
 *   commit the offsets to Kafka         a hint for the next assignment
 *
 * The database, not Kafka, decides what was applied: a crash anywhere
 * redelivers at most the batch in flight, and the offset check drops what
 * the database already has. The row lock on consumer_offsets also settles a
 * race between an old and a new owner of a partition after a rebalance.
 *
 * Bad input never blocks a partition: a role rejects a record with
 * ncmp_stage_reject() (dead-letter record, with the reason and the original
 * headers, on `<topic>-dlq`). If apply() fails the whole batch with a REJECT
 * (a data error it could not pin on one record), the batch is rolled back
 * and applied one record at a time, so only the culprit is dead-lettered.
 * RETRY errors roll back and try the same batch again with back-off.
 */
#ifndef NCMP_STAGE_H
#define NCMP_STAGE_H

#include <librdkafka/rdkafka.h>

#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_err.h"
#include "ncmp_kafka.h"

typedef struct ncmp_stage ncmp_stage;

/* What apply() works with; owned by the worker. */
typedef struct ncmp_stage_ctx {
    const ncmp_config *cfg;
    ncmp_db *db;
    ncmp_producer *producer;
    /* Count records that must be acknowledged before the commit here. */
    ncmp_delivery delivery;
    const char *role;
    int worker;
} ncmp_stage_ctx;

/* What a role does; a role module exports one of these (static data). */
typedef struct ncmp_stage_ops {
    /* The role's statements, registered on each worker's connection before
     * worker_init (NULL-terminated; may be NULL). */
    const ncmp_db_stmt *statements;
    /* Per worker, after the database is connected (register statements).
     * `arg` is the role's. */
    int (*worker_init)(void *arg, ncmp_stage_ctx *ctx, void **state, ncmp_err *err);
    /* Apply records inside the open transaction. */
    int (*apply)(void *state, ncmp_stage_ctx *ctx, rd_kafka_message_t **msgs, size_t n,
                 ncmp_err *err);
    void (*worker_fini)(void *state);
} ncmp_stage_ops;

typedef struct ncmp_stage_role {
    const char *name; /* group <kafka.group.id>-<name>; fault points <name>.* */
    const char *const *topics;
    size_t ntopics;
    int workers;
    int batch_size;
    int batch_wait_ms;
    void *arg; /* shared by the workers, read-only */
    ncmp_stage_ops ops;
} ncmp_stage_role;

/* Start the workers. `producer` is shared and stays owned by the caller;
 * `role` must outlive the stage. */
int ncmp_stage_start(ncmp_stage **st, const ncmp_config *cfg, const ncmp_stage_role *role,
                     ncmp_producer *producer, ncmp_err *err);

/* Wait for every worker to end (they end when ncmp_stopping is set, or when
 * one fails fatally, which sets it). Returns -1 with the first fatal error. */
int ncmp_stage_join(ncmp_stage *st, ncmp_err *err);

void ncmp_stage_destroy(ncmp_stage *st);

/* Dead-letter `m` with `reason` and go on. The record is counted in
 * ctx->delivery, so the transaction commits only once it is stored. */
int ncmp_stage_reject(ncmp_stage_ctx *ctx, const rd_kafka_message_t *m, const char *reason,
                      ncmp_err *err);

#endif
