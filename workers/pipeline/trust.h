/*
 * Trust levels: a handle's own trust (registration, then device
 * heartbeats), its DMI plugin's trust (a health watchdog), and the
 * effective trust - the lower of the two - kept on the handle's row
 * (cm_handle.effective_trust_level) and announced on the inventory events
 * topic whenever it changes. NCMP's rules:
 *
 *   - values NONE and COMPLETE; effective = NONE if either is NONE;
 *   - the DMI plugin of a handle is its DATA service: the data service
 *     name when one was registered, else the DMI plugin name;
 *   - a DMI plugin is COMPLETE while GET {dmi}/actuator/health answers
 *     {"status":"UP"}, NONE after one check with any other outcome;
 *   - a device heartbeat (topic trust.heartbeat-topic, a CloudEvent whose
 *     ce_id is the handle id and whose data is {"data":{"trustLevel":..}})
 *     sets the handle's own trust.
 *
 * The role `trust` consumes the heartbeats in batches (lib/ncmp_stage.h):
 * per batch it locks the DMI plugins of the batch's handles FOR SHARE (so
 * the watchdog cannot change one half-way), locks the handles, and sets
 * trust_level and effective_trust_level with one UPDATE over unnest
 * arrays (one more per repeated heartbeat of one handle, so that each is
 * applied in order). Heartbeats that change nothing write nothing.
 * Heartbeats for unknown handles are ignored; undecodable ones are
 * dead-lettered with the reason.
 *
 * The watchdog (a thread in each process with the trust role; one process
 * checks at a time, elected by a PostgreSQL advisory lock) checks every
 * trust.dmi-check-interval-ms the health of every DMI plugin that has
 * handles, all in parallel. In one transaction it stores the plugins
 * whose trust changed (table dmi_plugin; rows of plugins without handles
 * are dropped), recomputes the effective trust of every handle that
 * disagrees with its own and its plugin's (one UPDATE, which also repairs
 * any handle that missed a change), produces one inventory event per
 * handle whose effective trust changed, waits for the broker's
 * acknowledgements, then commits.
 *
 * Inventory events are at least once: they are acknowledged before the
 * transaction that made the change commits, so a crash in between sends
 * them again when the change is made again.
 */
#ifndef NCMPD_TRUST_H
#define NCMPD_TRUST_H

#include <stddef.h>

#include "ncmp_buf.h"
#include "ncmp_config.h"
#include "ncmp_err.h"
#include "ncmp_kafka.h"
#include "ncmp_stage.h"
#include "ncmp_singleton.h"
#include "role.h"

#define TRUST_NONE     "NONE"
#define TRUST_COMPLETE "COMPLETE"

/* The inventory AVC event's CloudEvent attributes (NCMP's values). */
#define TRUST_AVC_SOURCE     "NCMP"
#define TRUST_AVC_TYPE       "org.onap.cps.ncmp.events.avc.ncmp_to_client.AvcEvent"
#define TRUST_AVC_DATASCHEMA "urn:cps:org.onap.cps.ncmp.events:inventory-event:1.0.0"

/* The event's data, appended to *out:
 *   {"data":{"attributeValueChange":[{"attributeName":"trustLevel",
 *    "oldAttributeValue":"COMPLETE","newAttributeValue":"NONE"}]}}
 * oldAttributeValue is left out when old_level is NULL (a handle
 * registered with effective trust NONE: NCMP's "no old value"). */
void trust_avc_json(ncmp_buf *out, const char *old_level, const char *new_level);

/* Queue one inventory event for handle `cm_handle_id` on `topic`, keyed
 * and correlated (ce_correlationid) by the handle id, with a fresh ce_id
 * and ce_time. Counted in `d` (may be NULL) until acknowledged. */
int trust_avc_send(ncmp_producer *p, ncmp_delivery *d, const char *topic, const char *cm_handle_id,
                   const char *old_level, const char *new_level, ncmp_err *err);

/* Decode a device heartbeat's value: exactly {"data":{"trustLevel":L}}
 * with L "COMPLETE" or "NONE" (the published schema allows no other
 * field). *level points to a static string on success; anything else is
 * a REJECT with the reason. */
int trust_heartbeat_decode(const void *payload, size_t len, const char **level, ncmp_err *err);

/* The stage row's functions (workers/role.c). */
extern const ncmp_stage_ops trust_stage;

/* The DMI health watchdog: a singleton task (lib/ncmp_singleton.h) on the
 * process's DMI client and producer. Fills *task; its arg is freed by
 * trust_watchdog_free once the task ended. */
typedef struct trust_watchdog trust_watchdog;
int trust_watchdog_task(const ncmp_services *svc, ncmp_singleton_task *task, ncmp_err *err);
void trust_watchdog_free(void *arg);

#endif
