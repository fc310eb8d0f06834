/*
 * jschema: a small JSON Schema validator on json-c, for the tests.
 *
 * It covers what ONAP NCMP's published event schemas use, with draft
 * 2019-09 semantics:
 *   type (a name or a list; "integer" also accepts 2.0), enum, const,
 *   properties, required, additionalProperties (boolean or schema),
 *   items (one schema), minItems, maxItems, minLength, maxLength (in code
 *   points), pattern (POSIX extended regex, unanchored like ECMA's),
 *   allOf, anyOf, oneOf, not, boolean schemas, and $ref next to other
 *   keywords.
 * $ref may be "#/..." (a JSON pointer into the same file: $defs,
 * definitions or anything else), "other.json" or "other.json#/...", the
 * file resolved against the directory of the file that refers to it.
 * $id does not change that base; URIs with a scheme are not supported.
 *
 * jsonschema2pojo's "extends": {"$ref": "base.json"} is Java inheritance:
 * it is validated like one more allOf entry, except that an
 * additionalProperties on either side sees the properties declared on
 * both (the derived class has the base's fields and its own). A literal
 * allOf would reject every LCM event, since lcm-event-base.json says
 * additionalProperties false and does not know "event".
 *
 * Annotations (description, title, default, examples, format, $schema,
 * $id, $comment, javaType, existingJavaType, javaInterfaces, ...) are
 * ignored. Validation keywords that are not implemented (minimum,
 * uniqueItems, patternProperties, if/then/else, ...) make the load fail
 * instead of passing documents unchecked.
 *
 * All $refs are resolved, every file they name is read and every pattern
 * compiled when the schema is loaded, so a validation cannot fail on the
 * schema itself (except for a $ref cycle that consumes no input).
 *
 * Independent of ncmpd's own modules: integration tests link it to check
 * what the service put on Kafka.
 */
#ifndef JSCHEMA_H
#define JSCHEMA_H

#include <json-c/json.h>
#include <stddef.h>

typedef struct jschema jschema;

/* Load flags. */
enum {
    /* A subschema of the wrong JSON type (not an object or a boolean), as
     * in ONAP's async request/response schemas where "required" slipped
     * into "properties", is taken as `true` instead of failing the load. */
    JSCHEMA_LENIENT = 1u << 0,
};

/* Load the schema in file `path` and every file it refers to. Returns a
 * schema the caller owns (jschema_free), or NULL with a message in err
 * (err may be NULL when errlen is 0). */
jschema *jschema_load(const char *path, unsigned flags, char *err, size_t errlen);

/* The same for a schema given as text; relative file $refs are resolved
 * against base_dir (NULL: the current directory). */
jschema *jschema_parse(const char *text, const char *base_dir, unsigned flags, char *err,
                       size_t errlen);

/* Validate `doc` (borrowed; NULL is JSON null). Returns 0 when it is
 * valid, else -1 with a message that names the JSON pointer of the first
 * violation in the document, the keyword, and where that keyword is in
 * the schema, e.g.
 *   instance "/event/newValues/cmHandleState": enum: "FOO" is not one of
 *   ["ADVISED",...] (schema lcm-event-v1.json#/$defs/Values/properties/
 *   cmHandleState/enum)
 * err is written on failure only. A schema may be used by one thread at a
 * time (json-c caches printed text inside the schema's objects). */
int jschema_validate(const jschema *s, json_object *doc, char *err, size_t errlen);

/* Replace the subschema at JSON pointer `pointer` (RFC 6901, into the
 * main file, e.g. "/$defs/Values/properties/cmHandleProperties"; "" is
 * the whole schema) by the JSON text `replacement_json`. The location
 * must exist. The replacement is checked and its $refs resolved like a
 * loaded schema. Returns 0, or -1 with a message and the schema
 * unchanged. */
int jschema_patch(jschema *s, const char *pointer, const char *replacement_json, char *err,
                  size_t errlen);

/* Free a schema and everything it loaded; NULL is accepted. */
void jschema_free(jschema *s);

#endif
