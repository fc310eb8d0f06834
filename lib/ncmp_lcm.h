/*
 * ncmp_lcm: CM-handle lifecycle (LCM) events in NCMP's v1 or v2 format.
 *
 * Not a CloudEvent: the value is a JSON object with the header fields
 * repeated inside it, the Kafka key is the handle id, and seven Kafka
 * headers carry eventId, eventCorrelationId, eventTime, eventSource,
 * eventType, eventSchema and eventSchemaVersion, as plain strings or, for
 * consumers written against NCMP's Java producer, as Java-serialised
 * strings (AC ED 00 05 74 <u16 length> <bytes>).
 *
 * The event type follows from the states: no old state is a create, a new
 * state DELETED is a delete, anything else an update. On update only the
 * values that changed are given; on delete no values at all.
 *
 * v1 (NCMP's default) repeats alternateId, moduleSetTag and
 * dataProducerIdentifier in `event` and gives cmHandleProperties as a
 * list holding one map. v2 (eventSchema ...cmhandle-lcm-event.v2) has only
 * cmHandleId and alternateId in `event`; its oldValues and newValues are
 * free maps over dataSyncEnabled, cmHandleState, alternateId, moduleSetTag,
 * dataProducerIdentifier and cmHandleProperties (a map): a create gives
 * all six in newValues (null where there is no value), an update the keys
 * that changed on both sides (null where a side has none), and an update
 * that changed nothing NCMP writes without either map.
 */
#ifndef NCMP_LCM_H
#define NCMP_LCM_H

#include <librdkafka/rdkafka.h>

#include "ncmp_buf.h"

typedef enum ncmp_handle_state {
    NCMP_STATE_NONE = 0, /* no state: the handle did not exist */
    NCMP_STATE_ADVISED,
    NCMP_STATE_READY,
    NCMP_STATE_LOCKED,
    NCMP_STATE_DELETING,
    NCMP_STATE_DELETED,
} ncmp_handle_state;

/* "ADVISED", ...; "" for NONE. */
const char *ncmp_state_name(ncmp_handle_state state);
/* The state named `s`, or NCMP_STATE_NONE when unknown. */
ncmp_handle_state ncmp_state_parse(const char *s);

typedef struct ncmp_lcm_values {
    ncmp_handle_state state;            /* NONE: absent */
    int data_sync_enabled;              /* -1: absent; else 0 or 1 */
    const char *public_properties_json; /* a JSON object as text; NULL: absent */
} ncmp_lcm_values;

typedef struct ncmp_lcm_event {
    const char *cm_handle_id;
    const char *alternate_id;             /* NULL is sent as "" */
    const char *module_set_tag;           /* NULL is sent as "" */
    const char *data_producer_identifier; /* NULL is sent as "" */
    /* On an update that changed them, their values before (v2 names the
     * change among the values; v1 gives the new ones alone); else NULL. */
    const char *old_module_set_tag;
    const char *old_data_producer_identifier;
    ncmp_lcm_values old_values;
    ncmp_lcm_values new_values;
    /* An update that changes no value (dataProducerIdentifier alone):
     * the states say nothing, so this says "update". */
    int force_update;
} ncmp_lcm_event;

#define NCMP_LCM_EVENT_SOURCE         "org.onap.ncmp"
#define NCMP_LCM_EVENT_SCHEMA         "org.onap.ncmp:cmhandle-lcm-event"
#define NCMP_LCM_EVENT_SCHEMA_V2      "org.onap.ncmp:cmhandle-lcm-event.v2"
#define NCMP_LCM_EVENT_SCHEMA_VERSION "1.0" /* in v2 too, as NCMP sends it */

/* The format: lcm.event-schema-version, NCMP's
 * app.lcm.events.event-schema-version. */
typedef enum ncmp_lcm_format {
    NCMP_LCM_V1 = 1,
    NCMP_LCM_V2 = 2,
} ncmp_lcm_format;

/* "v2" is v2; anything else v1 (the option's choices are checked when the
 * configuration is read). */
ncmp_lcm_format ncmp_lcm_format_parse(const char *version);

/* The eventSchema of the format. */
const char *ncmp_lcm_format_schema(ncmp_lcm_format format);

/* "org.onap.ncmp.cmhandle-lcm-event.create", ".update" or ".delete". */
const char *ncmp_lcm_event_type(const ncmp_lcm_event *ev);

/* Append the event's JSON value in `format` to `out`. */
void ncmp_lcm_event_json(ncmp_buf *out, const ncmp_lcm_event *ev, ncmp_lcm_format format,
                         const char *event_id, const char *event_time);

/* The seven Kafka headers (`event_schema`: the value's eventSchema, that
 * of its format); owned by the caller (or by a produce call). */
rd_kafka_headers_t *ncmp_lcm_headers(const char *cm_handle_id, const char *event_type,
                                     const char *event_schema, const char *event_id,
                                     const char *event_time, int java_serialized);

/* Now in NCMP's event time format, e.g. 2025-06-01T12:00:00.123+0000: the
 * eventTime of NCMP's legacy (non-CloudEvent) events only, this one and
 * the async results of workers/forward/async_legacy.h. A CloudEvent's
 * ce_time is RFC 3339
 * (ncmp_cloudevent_time_now). (ncmp_uuid4 is in ncmp_cloudevent.h.) */
void ncmp_event_time_now(char out[32]);

#endif
