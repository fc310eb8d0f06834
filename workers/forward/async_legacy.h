/*
 * async_legacy: NCMP's older form of an async pass-through result.
 *
 * A DMI plugin answers a single-handle pass-through sent with `?topic=`
 * by publishing a DmiAsyncRequestResponseEvent on ncmp-async-m2m: plain
 * JSON, no CloudEvent headers. NCMP maps it to an
 * NcmpAsyncRequestResponseEvent and sends that to the client topic named
 * by eventTarget, keyed by the new eventId (NCMP's
 * NcmpAsyncRequestResponseEventMapper and DmiAsyncRequestResponseEventConsumer):
 *
 *   eventId             a new random UUID (also the record key)
 *   eventTime           now, as 2026-12-03T18:40:00.123+0000
 *   eventCorrelationId, eventTarget, eventType, eventSchema,
 *   eventSchemaVersion  the DMI event's
 *   forwardedEvent      the DMI event's eventId, eventCorrelationId,
 *                       eventTime, eventTarget, eventType, eventSchema,
 *                       eventSchemaVersion, eventSource, and from its
 *                       eventContent response-data-schema,
 *                       response-status, response-code and response-data
 *
 * A field that is absent or null is left out, as NCMP's Jackson does; a
 * number or boolean where a string belongs is taken as its text (Jackson's
 * scalar coercion). response-data loses a top-level "payload" member:
 * NCMP's ResponseData type declares one and forwards only the others.
 *
 * The record's one header is Spring's type header, as NCMP's JSON
 * serialiser writes it (the class name as plain UTF-8):
 *   __TypeId__  org.onap.cps.ncmp.event.model.NcmpAsyncRequestResponseEvent
 */
#ifndef NCMPD_ASYNC_LEGACY_H
#define NCMPD_ASYNC_LEGACY_H

#include <stddef.h>

#include "ncmp_buf.h"

#define ASYNC_LEGACY_TYPE_HEADER "__TypeId__"
#define ASYNC_LEGACY_NCMP_TYPE   "org.onap.cps.ncmp.event.model.NcmpAsyncRequestResponseEvent"

/* Map the DmiAsyncRequestResponseEvent in value[0..len) to the
 * NcmpAsyncRequestResponseEvent with `event_id` and `event_time`,
 * appended to `out`, and append its eventTarget to `target`. Returns 0,
 * or -1 with why in reason[reasonlen] (not a JSON object; no eventTarget
 * string; no eventContent object with a response-data object; a field
 * that is an object or array where a string belongs); `out` and `target`
 * are then unspecified. */
int async_legacy_map(const char *value, size_t len, const char *event_id, const char *event_time,
                     ncmp_buf *out, ncmp_buf *target, char *reason, size_t reasonlen);

#endif
