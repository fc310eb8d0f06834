#include "async_legacy.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "ncmp_err.h"
#include "ncmp_json.h"

/* The text of `v` for a string field: a string, or a number or boolean as
 * its text; NULL for an object or array (*bad set) or null. */
static const char *scalar_text(json_object *v, int *bad)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        return NULL;
    case json_type_string:
    case json_type_int:
    case json_type_double:
    case json_type_boolean:
        return json_object_get_string(v);
    default:
        *bad = 1;
        return NULL;
    }
}

/* Field `key` of `obj` as a string (NULL when absent or null); -1 when it
 * cannot be one. */
static int field(json_object *obj, const char *key, const char **out, char *reason,
                 size_t reasonlen, const char *where)
{
    json_object *v = NULL;
    int bad = 0;

    *out = NULL;
    if (!json_object_object_get_ex(obj, key, &v) || !v)
        return 0;
    *out = scalar_text(v, &bad);
    if (bad) {
        snprintf(reason, reasonlen, "%s%s is a %s, not a string", where, key,
                 json_type_to_name(json_object_get_type(v)));
        return -1;
    }
    return 0;
}

/* ,"key":"value" (or the first member without the comma) when value is
 * not NULL. */
static void member(ncmp_buf *out, int *first, const char *key, const char *value)
{
    if (!value)
        return;
    ncmp_buf_appendf(out, "%s\"%s\":", *first ? "" : ",", key);
    ncmp_buf_append_json_string(out, value);
    *first = 0;
}

static const char *const header_fields[] = {
    "eventId",   "eventCorrelationId", "eventTime",          "eventTarget",
    "eventType", "eventSchema",        "eventSchemaVersion", "eventSource"};
#define NFIELDS (sizeof(header_fields) / sizeof(header_fields[0]))
static const char *const content_fields[] = {"response-data-schema", "response-status",
                                             "response-code"};
#define NCONTENT (sizeof(content_fields) / sizeof(content_fields[0]))

int async_legacy_map(const char *value, size_t len, const char *event_id, const char *event_time,
                     ncmp_buf *out, ncmp_buf *target, char *reason, size_t reasonlen)
{
    json_object *doc = NULL, *content = NULL, *data = NULL;
    const char *f[NFIELDS], *c[NCONTENT];
    ncmp_err err;
    int first = 1, rc = -1;

    if (ncmp_json_parse(value, len, &doc, &err) != 0) {
        snprintf(reason, reasonlen, "not a DmiAsyncRequestResponseEvent: %s", err.msg);
        return -1;
    }
    if (!json_object_is_type(doc, json_type_object)) {
        snprintf(reason, reasonlen, "not a DmiAsyncRequestResponseEvent: not a JSON object");
        goto done;
    }
    for (size_t i = 0; i < NFIELDS; i++)
        if (field(doc, header_fields[i], &f[i], reason, reasonlen, "") != 0)
            goto done;
    if (!f[3]) {
        snprintf(reason, reasonlen, "no eventTarget (the client topic)");
        goto done;
    }
    if (!json_object_object_get_ex(doc, "eventContent", &content) ||
        !json_object_is_type(content, json_type_object)) {
        snprintf(reason, reasonlen, "no eventContent object");
        goto done;
    }
    if (!json_object_object_get_ex(content, "response-data", &data) ||
        !json_object_is_type(data, json_type_object)) {
        snprintf(reason, reasonlen, "no eventContent.response-data object");
        goto done;
    }
    for (size_t i = 0; i < NCONTENT; i++)
        if (field(content, content_fields[i], &c[i], reason, reasonlen, "eventContent.") != 0)
            goto done;

    ncmp_buf_append_char(out, '{');
    member(out, &first, "eventId", event_id);
    member(out, &first, "eventCorrelationId", f[1]);
    member(out, &first, "eventTime", event_time);
    for (size_t i = 3; i < 7; i++) /* eventTarget .. eventSchemaVersion */
        member(out, &first, header_fields[i], f[i]);
    ncmp_buf_append_str(out, ",\"forwardedEvent\":{");
    first = 1;
    for (size_t i = 0; i < NFIELDS; i++)
        member(out, &first, header_fields[i], f[i]);
    for (size_t i = 0; i < NCONTENT; i++)
        member(out, &first, content_fields[i], c[i]);
    /* NCMP forwards response-data's members but "payload", a declared
     * property of its ResponseData type */
    json_object_object_del(data, "payload");
    ncmp_buf_appendf(out, "%s\"response-data\":", first ? "" : ",");
    ncmp_buf_append_str(out, json_object_to_json_string_ext(
                                 data, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    ncmp_buf_append_str(out, "}}");
    ncmp_buf_append_str(target, f[3]);
    rc = 0;
done:
    json_object_put(doc);
    return rc;
}
