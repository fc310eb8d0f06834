/*
 * The lifecycle relay: publishes lcm_outbox to the lifecycle topic, in
 * order, exactly once (lib/ncmp_relay.h says how), with the lifecycle
 * event's headers.
 */
#ifndef NCMPD_LCM_RELAY_H
#define NCMPD_LCM_RELAY_H

#include "ncmp_err.h"
#include "ncmp_singleton.h"
#include "role.h"

/* The relay as a singleton task (lib/ncmp_singleton.h), with a producer of
 * its own (keyed as NCMP's Java clients key: murmur2). Fills *task; its arg
 * is flushed and freed by lcm_relay_free once the task ended. */
int lcm_relay_task(const ncmp_services *svc, ncmp_singleton_task *task, ncmp_err *err);
void lcm_relay_free(void *arg);

#endif
