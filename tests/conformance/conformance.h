/*
 * conformance: is an LCM event what NCMP itself would put on Kafka?
 *
 * The rules are those of /work/shared/onap/CONTRACT.md §3: the published
 * schema lcm-event-v1.json (which extends lcm-event-base.json) with the
 * one patch that section prescribes, since NCMP sends cmHandleProperties
 * as a list holding one map while the schema says object; then what the
 * schema cannot say (constant header values, the event type against the
 * values, only changed values on update, the time and id formats); and
 * the seven Kafka headers against the value.
 *
 * No Criterion here: the integration tests link this (and jschema) to
 * check events captured from a real broker. Not thread-safe: the schema
 * is loaded once per process and kept (conformance_reset frees it).
 */
#ifndef CONFORMANCE_H
#define CONFORMANCE_H

#include <json-c/json.h>
#include <librdkafka/rdkafka.h>
#include <stddef.h>

#define CONFORMANCE_LCM_SCHEMA_FILE "lcm-event-v1.json"
/* CONTRACT.md §3 "Schema vs wire": the only change to the published schema. */
#define CONFORMANCE_LCM_PATCH_POINTER "/$defs/Values/properties/cmHandleProperties"
#define CONFORMANCE_LCM_PATCH_SCHEMA  "{\"type\":\"array\",\"items\":{\"type\":\"object\"}}"

/* The directory of ONAP's published schemas: $NCMP_ONAP_SCHEMAS when set
 * and not empty, else the one the build was configured with. Borrowed. */
/* NCMP's DataOperationEvent schema gives `result` "additionalProperties":
 * false and no properties, which only {} satisfies; its "existingJavaType"
 * java.lang.Object is what NCMP and the DMI plugins use, so any object. */
#define CONFORMANCE_DATA_OPERATION_SCHEMA_FILE "data-operation-event-schema-1.0.0.json"
#define CONFORMANCE_DATA_OPERATION_PATCH_POINTER                                                   \
    "/definitions/DataOperationEvent/properties/data/properties/responses/items/properties/result"
#define CONFORMANCE_DATA_OPERATION_PATCH_SCHEMA "{\"type\":\"object\"}"

/* NCMP's inventory AVC schema makes Data require "avc", a property it
 * neither defines nor allows; NCMP's events carry attributeValueChange
 * (CONTRACT.md §8), so that is what is required. */
#define CONFORMANCE_INVENTORY_AVC_SCHEMA_FILE   "ncmp-inventory-avc-event-schema-1.0.0.json"
#define CONFORMANCE_INVENTORY_AVC_PATCH_POINTER "/definitions/Data"
#define CONFORMANCE_INVENTORY_AVC_PATCH_SCHEMA                                                     \
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"                         \
    "\"attributeValueChange\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/definitions/Avc\"}}},"   \
    "\"required\":[\"attributeValueChange\"]}"

const char *conformance_schema_dir(void);

/* Check one LCM event given as JSON text (a Kafka record's value): strict
 * JSON, the patched schema, then conformance_check_lcm_rules. Returns 0,
 * or -1 with the first problem in err. A missing schema directory is a
 * failure (with a message saying where it was looked for), never a pass. */
int conformance_check_lcm(const char *json_text, size_t len, char *err, size_t errlen);

/* Only the patched schema, on a parsed event (borrowed). */
int conformance_check_lcm_schema(json_object *event, char *err, size_t errlen);

/* Only the rules the schema cannot express, on a parsed event (borrowed):
 * eventSource, eventSchema and eventSchemaVersion constant; eventType one
 * of create/update/delete; eventCorrelationId equal to event.cmHandleId;
 * eventTime like 2025-06-01T12:00:05.123+0000; eventId a lowercase
 * version 4 UUID; alternateId, moduleSetTag and dataProducerIdentifier
 * present; create: newValues with cmHandleState and cmHandleProperties,
 * no oldValues; delete: no values; update: oldValues and newValues both
 * or neither, no value that is the same on both sides, no new state
 * DELETED; cmHandleProperties a list of one map of strings. */
int conformance_check_lcm_rules(json_object *event, char *err, size_t errlen);

/* The Kafka headers of an LCM record against its parsed value (both
 * borrowed): eventId, eventCorrelationId, eventTime, eventSource,
 * eventType, eventSchema and eventSchemaVersion each exactly once and
 * equal to the field of that name in the value; with java_serialized,
 * each a Java-serialised String (AC ED 00 05 74, a big-endian u16 length,
 * modified UTF-8). Other headers (Spring's __TypeId__) are allowed. */
int conformance_check_lcm_headers(const rd_kafka_headers_t *headers, json_object *event,
                                  int java_serialized, char *err, size_t errlen);

/* Decode a Java-serialised String header value (`size` bytes at `value`)
 * into `out` as UTF-8 with a NUL. Returns the length, or -1 with a
 * message when it is not one or does not fit in outlen. */
long conformance_java_string_decode(const void *value, size_t size, char *out, size_t outlen,
                                    char *err, size_t errlen);

/* Free the schema loaded by the checks above; safe to call at any time. */
void conformance_reset(void);

#endif
