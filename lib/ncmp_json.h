/*
 * ncmp_json: strict JSON parsing on json-c for untrusted input, and typed
 * field access that says what is wrong with a field.
 */
#ifndef NCMP_JSON_H
#define NCMP_JSON_H

#include <json-c/json.h>
#include <stddef.h>

#include "ncmp_err.h"

/* Parse one JSON value taking all of buf[0..len): strict syntax, valid
 * UTF-8, nesting at most 64 deep, nothing but white space after it. On
 * success *out is owned by the caller (json_object_put); it is NULL when
 * the document is just `null`. The syntax is RFC 8259's, stricter than
 * json-c's own strict mode (no NaN, no "1.", no single quotes, no raw
 * control characters, no \u0000, only RFC 3629 UTF-8), so that whatever
 * passes can be stored as jsonb. A failure is REJECT with the reason and
 * the byte offset. */
int ncmp_json_parse(const char *buf, size_t len, json_object **out, ncmp_err *err);

/* Field `key` of object `obj` as a string: *out is NULL when the field is
 * absent or JSON null; a field of another type is a REJECT naming it.
 * *out is borrowed from obj. */
int ncmp_json_string_field(json_object *obj, const char *key, const char **out, ncmp_err *err);

/* The same for an array field (*out borrowed, NULL when absent). */
int ncmp_json_array_field(json_object *obj, const char *key, json_object **out, ncmp_err *err);

/* The same for an object field (*out borrowed, NULL when absent). */
int ncmp_json_object_field(json_object *obj, const char *key, json_object **out, ncmp_err *err);

#endif
