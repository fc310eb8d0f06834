/*
 * avc_apply: the `avc-apply` role, which keeps NCMP's operational cache
 * current with the CM AVC events DMI plugins publish (NCMP's
 * CmAvcEventConsumer + CmAvcEventService).
 *
 * Where it runs, and why not inside avc-forward: forwarding dmi-cm-events
 * to cm-events is a pump with no database, at Kafka's pace (bench avc);
 * applying an event is a transaction in PostgreSQL. In one consumer, a slow
 * or unreachable database would hold back the forwarding of every event,
 * also of the events that are not applied at all (other sources, handles
 * without data sync), and a retry of the database would re-forward the
 * batch. So the cache is a second consumer group on the same topic
 * (`<kafka.group.id>-avc-apply`, reading `avc-forward.input-topic`): the
 * two read every record independently, neither waits for the other, and
 * the forwarding stays exactly as it was. It is a stage row (lib/
 * ncmp_stage.h): batches of events applied in one transaction with the
 * consumed offsets, so an event is applied exactly once and in order per
 * partition (the key is the handle id: one handle's events in order).
 *
 * Per event, as NCMP does:
 *   - ce_source other than ONAP-DMI-PLUGIN: not applied (only forwarded);
 *   - the key is the CM handle id; a handle with data sync off: ignored
 *     (NCMP checks dataSyncEnabled and does nothing else);
 *   - each edit applied to anchor <handle id> of dataspace NFP-Operational
 *     (avc_event.h: create, update/replace, patch/merge, delete/remove).
 * What NCMP would fail on is a dead letter on `<topic>-dlq` (ncmp_dlq.h,
 * dlq_role avc-apply) with the reason: no key, an unknown handle, a handle
 * with data sync on but no cache yet, an event that is not JSON or not an
 * AVC event, an unsupported operation, a target outside the schema, and a
 * write the store refuses (a node not in the tree, invalid data, a node
 * that exists). An event is all or nothing: its edits are applied together
 * or it is dead-lettered with none of them. A bad event never costs the
 * others of its batch: a refusal that left nothing written is
 * dead-lettered in place; one that did (a later edit of the event, or a
 * failed COPY) fails the batch with REJECT, and the stage applies its
 * records one by one, so that only the culprit is dead-lettered.
 *
 * Uses the CPS store without HTTP (workers/cps/cps_store.h) in the stage's
 * transaction, with a schema cache per worker.
 */
#ifndef NCMPD_AVC_APPLY_H
#define NCMPD_AVC_APPLY_H

#include <stddef.h>

#include "cps_store.h"
#include "ncmp_stage.h"

#define AVC_APPLY_ROLE "avc-apply"

/* The CloudEvent source whose events NCMP applies to its cache. */
#define AVC_APPLY_SOURCE "ONAP-DMI-PLUGIN"

/* Is a ce_source header's value (len bytes; NULL: none) AVC_APPLY_SOURCE?
 * The value may be plain or, as NCMP's Java clients can send headers, a
 * Java-serialized string (AC ED 00 05 74, a 2-byte length, the text). */
int avc_source_is_dmi_plugin(const void *value, size_t len);

extern const ncmp_stage_ops avc_apply_stage;

#endif
