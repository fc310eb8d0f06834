/*
 * conformance: is what ncmpd emits (and what it accepts) what it says?
 *
 * Two layers. Always: ncmpd's own JSON Schemas in schema/ (the directory
 * compiled in from the source tree), one per event, which say exactly
 * what ncmpd writes and reads. In addition, when NCMP's published schemas
 * are available ($NCMP_ONAP_SCHEMAS, else ../shared/onap/schemas beside
 * the source tree): NCMP's schema of the same event, with the few patches
 * below where NCMP's own events differ from its published schema. A
 * missing NCMP directory skips that layer (conformance_onap_available
 * says so; the test programs print it); a missing own schema fails.
 *
 * For lifecycle events, then what no schema says (the event type against
 * the values, only changed values on update, the id equal to the handle)
 * and the seven Kafka headers against the value.
 *
 * No Criterion here: the integration tests link this (and jschema) to
 * check events captured from a real broker. Not thread-safe: each schema
 * is loaded once per process and kept (conformance_reset frees them).
 */
#ifndef CONFORMANCE_H
#define CONFORMANCE_H

#include <json-c/json.h>
#include <librdkafka/rdkafka.h>
#include <stddef.h>

/* NCMP's published schema files (in conformance_onap_dir()) and the
 * patches made to them. */
#define CONFORMANCE_LCM_SCHEMA_FILE "lcm-event-v1.json"
/* NCMP sends cmHandleProperties as a list holding one map (its Java type
 * is List<Map<String,String>>) while its published schema says object:
 * the only change made to NCMP's LCM schema. */
#define CONFORMANCE_LCM_PATCH_POINTER "/$defs/Values/properties/cmHandleProperties"
#define CONFORMANCE_LCM_PATCH_SCHEMA  "{\"type\":\"array\",\"items\":{\"type\":\"object\"}}"

/* NCMP's v2 schema gives oldValues and newValues "additionalProperties":
 * false and no properties, which only {} satisfies, while its Java type
 * is a free Map<String,Object> and NCMP fills it: the payload's
 * properties are patched to the same names and types with the two maps
 * open (objects of any keys). */
#define CONFORMANCE_LCM_V2_SCHEMA_FILE   "lcm-event-v2.json"
#define CONFORMANCE_LCM_V2_PATCH_POINTER "/$defs/PayloadV2/properties"
#define CONFORMANCE_LCM_V2_PATCH_SCHEMA                                                            \
    "{\"cmHandleId\":{\"type\":\"string\"},\"alternateId\":{\"type\":\"string\"},"                 \
    "\"oldValues\":{\"type\":\"object\"},\"newValues\":{\"type\":\"object\"}}"

/* NCMP's DataOperationEvent schema gives `result` "additionalProperties":
 * false and no properties, which only {} satisfies; its "existingJavaType"
 * java.lang.Object is what NCMP and the DMI plugins use, so any object. */
#define CONFORMANCE_DATA_OPERATION_SCHEMA_FILE "data-operation-event-schema-1.0.0.json"
#define CONFORMANCE_DATA_OPERATION_PATCH_POINTER                                                   \
    "/definitions/DataOperationEvent/properties/data/properties/responses/items/properties/result"
#define CONFORMANCE_DATA_OPERATION_PATCH_SCHEMA "{\"type\":\"object\"}"

/* NCMP's inventory AVC schema makes Data require "avc", a property it
 * neither defines nor allows; NCMP's events carry attributeValueChange,
 * so that is what is required. */
#define CONFORMANCE_INVENTORY_AVC_SCHEMA_FILE   "ncmp-inventory-avc-event-schema-1.0.0.json"
#define CONFORMANCE_INVENTORY_AVC_PATCH_POINTER "/definitions/Data"
#define CONFORMANCE_INVENTORY_AVC_PATCH_SCHEMA                                                     \
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"                         \
    "\"attributeValueChange\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/definitions/Avc\"}}},"   \
    "\"required\":[\"attributeValueChange\"]}"

/* NCMP's legacy async schemas put the "required" list of
 * Forwarded-Event (NcmpAsyncRequestResponseEvent) and of Event-Content
 * (DmiAsyncRequestResponseEvent) inside "properties", where it is the
 * schema of a property named "required" (an array, which is no schema);
 * Jackson never enforced it. They are loaded with JSCHEMA_LENIENT, which
 * takes that property as `true`. */
#define CONFORMANCE_NCMP_ASYNC_SCHEMA_FILE "ncmp-async-request-response-event-schema-v1.json"
#define CONFORMANCE_DMI_ASYNC_SCHEMA_FILE  "dmi-async-request-response-event-schema-v1.json"

/* The events and headers there is a schema for. */
typedef enum conformance_event {
    CONFORMANCE_REGISTRATION,           /* in: ncmp-dmi-registration */
    CONFORMANCE_REGISTRATION_RESPONSE,  /* out: ncmp-dmi-registration-response */
    CONFORMANCE_LCM,                    /* out: ncmp-events */
    CONFORMANCE_LCM_V2,                 /* out: ncmp-events, lcm.event-schema-version=v2 */
    CONFORMANCE_DEVICE_HEARTBEAT,       /* in: dmi-device-heartbeat */
    CONFORMANCE_INVENTORY,              /* out: ncmp-inventory-events */
    CONFORMANCE_DATA_OPERATION,         /* in ncmp-async-m2m, out client topics */
    CONFORMANCE_DATA_OPERATION_REQUEST, /* in: ncmp-data-operation-requests */
    CONFORMANCE_DMI_CM_AVC,             /* in dmi-cm-events, out cm-events, unchanged */
    CONFORMANCE_MODULE_SYNC,            /* internal: ncmp-module-sync */
    CONFORMANCE_INGEST,                 /* in: ncmp-ingest */
    CONFORMANCE_DEAD_LETTER,            /* out: <topic>-dlq (headers only) */
    CONFORMANCE_CPS_DATA_UPDATED,       /* out: cps-data-updated-events */
    CONFORMANCE_REST_REGISTRATION,      /* out: ncmp-dmi-registration, by the rest role */
    CONFORMANCE_DATAJOB_RESULT,         /* out: ncmp-datajob-responses (headers only) */
    CONFORMANCE_DMI_ASYNC,              /* in: ncmp-async-m2m, legacy async results */
    CONFORMANCE_NCMP_ASYNC,             /* out: client topics, legacy async results */
    CONFORMANCE_EVENT_COUNT
} conformance_event;

/* ncmpd's own schemas: the schema/ directory of the source tree the
 * build was configured from. Borrowed. */
const char *conformance_own_dir(void);

/* Where NCMP's published schemas are looked for: $NCMP_ONAP_SCHEMAS when
 * set and not empty, else ../shared/onap/schemas beside the source tree.
 * Borrowed; the directory may not exist. */
const char *conformance_onap_dir(void);

/* 1 when conformance_onap_dir() is a directory (NCMP's schemas are then
 * checked as well), else 0. */
int conformance_onap_available(void);

/* One line saying whether NCMP's published schemas are checked, e.g.
 * "NCMP's published schemas: found at /x, checked" or "... not found at
 * /x (set NCMP_ONAP_SCHEMAS): skipped", into buf. Returns buf. */
const char *conformance_onap_status(char *buf, size_t len);

/* The file name in schema/ of the value of `event` (NULL for a dead
 * letter, whose value is the original record's), and the $ref of the
 * schema of its headers (NULL when there is none). Static strings. */
const char *conformance_own_schema(conformance_event event);
const char *conformance_own_headers_schema(conformance_event event);

/* NCMP's schema file of the same event, or NULL when NCMP publishes none.
 * Static string. */
const char *conformance_onap_schema(conformance_event event);

/* Validate a parsed value (borrowed; NULL is JSON null) against ncmpd's
 * schema of `event` and, when NCMP's are available and NCMP has one for
 * it, against NCMP's (patched as above). Returns 0, or -1 with the first
 * problem in err, naming the schema that refused it. */
int conformance_check_event(conformance_event event, json_object *doc, char *err, size_t errlen);

/* The same on a record's value as JSON text, parsed strictly. */
int conformance_check_event_text(conformance_event event, const char *json_text, size_t len,
                                 char *err, size_t errlen);

/* Validate a record's headers (borrowed) against ncmpd's header schema of
 * `event`, the headers taken as an object of name to the last value of
 * that name (a header without a value is null). For a CloudEvent (a
 * header schema in cloudevent-headers.json), a ce_time must in addition
 * pass conformance_rfc3339: CloudEvents require RFC 3339 of every event,
 * and the schemas of the events ncmpd writes require ce_time in ncmpd's
 * form (UTC, milliseconds). Returns 0, or -1 with a message; -1 too when
 * `event` has no header schema. */
int conformance_check_headers(conformance_event event, const rd_kafka_headers_t *headers, char *err,
                              size_t errlen);

/* Check one LCM event given as JSON text (a Kafka record's value): strict
 * JSON, conformance_check_lcm_schema, then conformance_check_lcm_rules.
 * Its eventSchema says the format: v2's (...cmhandle-lcm-event.v2) is
 * checked as v2, anything else as v1. Returns 0, or -1 with the first
 * problem in err. */
int conformance_check_lcm(const char *json_text, size_t len, char *err, size_t errlen);

/* Only the schemas (ncmpd's, and NCMP's patched one when available), on a
 * parsed event (borrowed): conformance_check_event(CONFORMANCE_LCM, or
 * CONFORMANCE_LCM_V2 for a v2 eventSchema). */
int conformance_check_lcm_schema(json_object *event, char *err, size_t errlen);

/* Only the rules the schema cannot express, on a parsed event (borrowed):
 * eventSource, eventSchema and eventSchemaVersion constant; eventType one
 * of create/update/delete; eventCorrelationId equal to event.cmHandleId;
 * eventTime like 2025-06-01T12:00:05.123+0000; eventId a lowercase
 * version 4 UUID; alternateId, moduleSetTag and dataProducerIdentifier
 * present; create: newValues with cmHandleState and cmHandleProperties,
 * no oldValues; delete: no values; update: oldValues and newValues both
 * or neither, no value that is the same on both sides, no new state
 * DELETED; cmHandleProperties a list of one map of strings.
 * For v2: eventSchema ...cmhandle-lcm-event.v2, alternateId present;
 * create: newValues with all six keys; update: the two maps with the
 * same keys, none the same on both sides; cmHandleProperties a map of
 * strings or null. */
int conformance_check_lcm_rules(json_object *event, char *err, size_t errlen);

/* The Kafka headers of an LCM record against its parsed value (both
 * borrowed): eventId, eventCorrelationId, eventTime, eventSource,
 * eventType, eventSchema and eventSchemaVersion each exactly once and
 * equal to the field of that name in the value. Each is read in either
 * form, as a consumer of NCMP's events does (Java's stream header AC ED
 * 00 05 says which): a Java-serialised String (AC ED 00 05 74, a
 * big-endian u16 length, modified UTF-8) or plain text; the form must be
 * the one `java_serialized` names. Other headers (Spring's __TypeId__)
 * are allowed. */
int conformance_check_lcm_headers(const rd_kafka_headers_t *headers, json_object *event,
                                  int java_serialized, char *err, size_t errlen);

/* Decode a Java-serialised String header value (`size` bytes at `value`)
 * into `out` as UTF-8 with a NUL. Returns the length, or -1 with a
 * message when it is not one or does not fit in outlen. */
long conformance_java_string_decode(const void *value, size_t size, char *out, size_t outlen,
                                    char *err, size_t errlen);

/* Is `s` an RFC 3339 date-time, read strictly from the RFC's grammar
 * (section 5.6) and calendar (section 5.7)?
 *   date-time   = full-date "T" full-time
 *   full-date   = 4DIGIT "-" 2DIGIT "-" 2DIGIT  (month 01-12, the day in
 *                                                its month, leap years)
 *   full-time   = 2DIGIT ":" 2DIGIT ":" 2DIGIT [ "." 1*DIGIT ] time-offset
 *                 (hour 00-23, minute 00-59, second 00-60)
 *   time-offset = "Z" / ( "+" / "-" ) 2DIGIT ":" 2DIGIT  (00-23, 00-59)
 * Stricter than the RFC in one way: only the upper-case "T" and "Z" that
 * CloudEvents' SDKs and NCMP write. NCMP's legacy "+0000" is refused, as
 * the CloudEvents Java SDK refuses it. 1 or 0. */
int conformance_rfc3339(const char *s);

/* ncmpd's ce_time: conformance_rfc3339, in UTC ("Z") with exactly
 * milliseconds, e.g. 2026-12-03T07:10:22.587Z. 1 or 0. */
int conformance_rfc3339_utc_ms(const char *s);

/* Free the schemas loaded by the checks above; safe to call at any time. */
void conformance_reset(void);

#endif
