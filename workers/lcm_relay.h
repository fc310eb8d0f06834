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

#include "ncmp_config.h"
#include "ncmp_err.h"

typedef struct lcm_relay lcm_relay;

/* Start the relay thread. On success *r is owned by the caller. */
int lcm_relay_start(lcm_relay **r, const ncmp_config *cfg, ncmp_err *err);

/* Wait for the thread (it ends when ncmp_stopping is set). Returns -1 with
 * the error that ended it, if it failed. */
int lcm_relay_join(lcm_relay *r, ncmp_err *err);

void lcm_relay_destroy(lcm_relay *r);

#endif
