/*
 * The lifecycle relay: publishes lcm_outbox to the lifecycle topic, in
 * order, exactly once.
 *
 * One relay is active across all ncmpd processes (a PostgreSQL advisory
 * lock elects it; the others wait to take over). It wakes on the outbox's
 * NOTIFY, publishes up to lcm.relay-batch-size events in seq order (each
 * with header ncmp_outbox_seq), waits for the broker's acknowledgements,
 * then deletes the rows and records, per partition, the offset after its
 * last record (lcm_relay_checkpoint), in one transaction.
 *
 * A crash between the acknowledgement and that transaction would publish
 * the same events again on restart. So, on taking over, the relay first
 * reads each partition from its checkpoint to its end, and deletes the
 * outbox rows whose seq it finds there: those events are out already.
 */
#ifndef NCMPD_LCM_RELAY_H
#define NCMPD_LCM_RELAY_H

#include "ncmp_err.h"
#include "ncmp_singleton.h"
#include "role.h"

typedef struct lcm_relay lcm_relay;

/* The relay as a singleton task (lib/ncmp_singleton.h), with a producer of
 * its own (keyed as NCMP's Java clients key: murmur2). Fills *task; its arg
 * is flushed and freed by lcm_relay_free once the task ended. */
int lcm_relay_task(const ncmp_services *svc, ncmp_singleton_task *task, ncmp_err *err);
void lcm_relay_free(void *arg);

#endif
