/*
 * The Kafka forwarders: two roles that move records from one topic to
 * another at Kafka's pace, with nothing lost. No database. Both run on the
 * pump engine (lib/ncmp_pump.h: at least once, order kept per partition,
 * bad records dead-lettered, retries rewound); this module only says
 * where each record goes.
 *
 *   avc-forward    `avc-forward.input-topic` (dmi-cm-events) to
 *                  `avc-forward.output-topic` (cm-events): every record
 *                  unchanged (value, key, headers).
 *   async-forward  `async-forward.input-topic` (ncmp-async-m2m) to the
 *                  client topic named by each DataOperationEvent's
 *                  `ce_destination` header, keyed by `ce_correlationid`,
 *                  value and headers unchanged. CloudEvents of other
 *                  types are not its own (NCMP's DataOperationEventConsumer
 *                  ignores them too). A record without ce_type is a
 *                  legacy DmiAsyncRequestResponseEvent: mapped to NCMP's
 *                  NcmpAsyncRequestResponseEvent and sent to its
 *                  eventTarget (async_legacy.h). A missing, invalid or
 *                  unknown destination, one of the forwarder's own topics,
 *                  or a legacy record that cannot be mapped, is a dead
 *                  letter.
 */
#ifndef NCMPD_FORWARD_H
#define NCMPD_FORWARD_H

#include <stddef.h>

#include "ncmp_config.h"
#include "ncmp_err.h"
#include "ncmp_pump.h"
#include "role.h"

#define FORWARD_AVC_ROLE   "avc-forward"
#define FORWARD_ASYNC_ROLE "async-forward"

/* Fill the pump role of each forwarder (a pump row of workers/role.c).
 * FATAL on options that cannot work (an output topic that is not a valid
 * name, or the input itself). */
int forward_avc_pump(const ncmp_services *svc, ncmp_pump_role *role, ncmp_err *err);
int forward_async_pump(const ncmp_services *svc, ncmp_pump_role *role, ncmp_err *err);

/* The topics a role reads and writes (input, dead-letter, and output for
 * avc-forward), for `ncmpd create-topics`. Writes up to `max` names into
 * `names` and returns how many. */
size_t forward_topics(const ncmp_config *cfg, const char *role, char (*names)[256], size_t max);

#endif
