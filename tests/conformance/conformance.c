#include "conformance.h"

#include <ctype.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jschema.h"
#include "ncmp_json.h"

#ifndef NCMP_OWN_SCHEMAS
#error "define NCMP_OWN_SCHEMAS (the schema/ directory of the source tree)"
#endif
#ifndef NCMP_ONAP_SCHEMAS
#error "define NCMP_ONAP_SCHEMAS (where NCMP's published schemas are looked for by default)"
#endif

#define LCM_TYPE_PREFIX          "org.onap.ncmp.cmhandle-lcm-event."
#define LCM_EVENT_SOURCE         "org.onap.ncmp"
#define LCM_EVENT_SCHEMA         "org.onap.ncmp:cmhandle-lcm-event"
#define LCM_EVENT_SCHEMA_V2      "org.onap.ncmp:cmhandle-lcm-event.v2"
#define LCM_EVENT_SCHEMA_VERSION "1.0"
#define LCM_TIME_PATTERN         "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}\\+0000$"

/* What there is to check for each event: ncmpd's schema of its value and
 * of its headers (a $ref into schema/), and NCMP's schema with its patch. */
typedef struct event_schemas {
    const char *own;
    const char *own_headers;
    const char *onap;
    const char *onap_patch_pointer;
    const char *onap_patch;
    unsigned onap_flags; /* jschema_load flags for NCMP's schema */
} event_schemas;

static const event_schemas schemas[CONFORMANCE_EVENT_COUNT] = {
    [CONFORMANCE_REGISTRATION] = {"dmi-plugin-registration.json",
                                  "cloudevent-headers.json#/$defs/registrationRequest", NULL, NULL,
                                  NULL},
    [CONFORMANCE_REGISTRATION_RESPONSE] = {"dmi-plugin-registration-response.json",
                                           "cloudevent-headers.json#/$defs/registrationResponse",
                                           NULL, NULL, NULL},
    [CONFORMANCE_LCM] = {"lcm-event-v1.json", NULL, CONFORMANCE_LCM_SCHEMA_FILE,
                         CONFORMANCE_LCM_PATCH_POINTER, CONFORMANCE_LCM_PATCH_SCHEMA},
    [CONFORMANCE_LCM_V2] = {"lcm-event-v2.json", NULL, CONFORMANCE_LCM_V2_SCHEMA_FILE,
                            CONFORMANCE_LCM_V2_PATCH_POINTER, CONFORMANCE_LCM_V2_PATCH_SCHEMA},
    [CONFORMANCE_DEVICE_HEARTBEAT] = {"device-heartbeat.json",
                                      "cloudevent-headers.json#/$defs/deviceHeartbeat",
                                      "device-trust-level-event-schema-1.0.0.json", NULL, NULL},
    [CONFORMANCE_INVENTORY] = {"inventory-event.json",
                               "cloudevent-headers.json#/$defs/inventoryEvent",
                               CONFORMANCE_INVENTORY_AVC_SCHEMA_FILE,
                               CONFORMANCE_INVENTORY_AVC_PATCH_POINTER,
                               CONFORMANCE_INVENTORY_AVC_PATCH_SCHEMA},
    [CONFORMANCE_DATA_OPERATION] = {"data-operation-event.json",
                                    "cloudevent-headers.json#/$defs/dataOperationEvent",
                                    CONFORMANCE_DATA_OPERATION_SCHEMA_FILE,
                                    CONFORMANCE_DATA_OPERATION_PATCH_POINTER,
                                    CONFORMANCE_DATA_OPERATION_PATCH_SCHEMA},
    [CONFORMANCE_DATA_OPERATION_REQUEST] = {"data-operation-request.json",
                                            "cloudevent-headers.json#/$defs/dataOperationRequest",
                                            NULL, NULL, NULL},
    [CONFORMANCE_DMI_CM_AVC] = {"dmi-cm-avc-event.json", NULL, "dmi-cm-avc-event-schema-1.0.0.json",
                                NULL, NULL},
    [CONFORMANCE_MODULE_SYNC] = {"module-sync-handoff.json", NULL, NULL, NULL, NULL},
    [CONFORMANCE_INGEST] = {"ingest-event.json", NULL, NULL, NULL, NULL},
    [CONFORMANCE_DEAD_LETTER] = {NULL, "dead-letter-headers.json", NULL, NULL, NULL},
    /* CPS's published schema cannot be patched into one its events pass:
     * its top level requires `data` and its payload `operation`, neither
     * of which CPS sends (docs/events.md) */
    [CONFORMANCE_CPS_DATA_UPDATED] = {"cps-data-updated-event.json",
                                      "cloudevent-headers.json#/$defs/cpsDataUpdatedEvent", NULL,
                                      NULL, NULL},
    [CONFORMANCE_REST_REGISTRATION] = {"dmi-plugin-registration.json",
                                       "cloudevent-headers.json#/$defs/restRegistrationRequest",
                                       NULL, NULL, NULL},
    /* the value has no schema of its own yet (docs/events.md) */
    [CONFORMANCE_DATAJOB_RESULT] = {NULL, "cloudevent-headers.json#/$defs/dataJobResult", NULL,
                                    NULL, NULL},
    [CONFORMANCE_DMI_ASYNC] = {"dmi-async-request-response-event.json", NULL,
                               CONFORMANCE_DMI_ASYNC_SCHEMA_FILE, NULL, NULL, JSCHEMA_LENIENT},
    [CONFORMANCE_NCMP_ASYNC] = {"ncmp-async-request-response-event.json",
                                "ncmp-async-request-response-event.json#/$defs/headers",
                                CONFORMANCE_NCMP_ASYNC_SCHEMA_FILE, NULL, NULL, JSCHEMA_LENIENT},
};

#define CLOUDEVENT_HEADERS_FILE "cloudevent-headers.json#"

/* The loaded schemas, on first use. A cache and so mutable statics:
 * every Criterion test runs in its own process and loads what it needs
 * once; integration tests check many records per process. */
static jschema *own_cache[CONFORMANCE_EVENT_COUNT];
static jschema *own_headers_cache[CONFORMANCE_EVENT_COUNT];
static jschema *onap_cache[CONFORMANCE_EVENT_COUNT];

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *conformance_own_dir(void)
{
    return NCMP_OWN_SCHEMAS;
}

const char *conformance_onap_dir(void)
{
    const char *dir = getenv("NCMP_ONAP_SCHEMAS");

    return dir && *dir ? dir : NCMP_ONAP_SCHEMAS;
}

int conformance_onap_available(void)
{
    struct stat st;

    return stat(conformance_onap_dir(), &st) == 0 && S_ISDIR(st.st_mode);
}

const char *conformance_onap_status(char *buf, size_t len)
{
    char *real;

    if (conformance_onap_available()) {
        real = realpath(conformance_onap_dir(), NULL);
        snprintf(buf, len, "NCMP's published schemas: found at %s, checked",
                 real ? real : conformance_onap_dir());
        free(real);
    } else
        snprintf(buf, len,
                 "NCMP's published schemas: not found at %s (set NCMP_ONAP_SCHEMAS): skipped",
                 conformance_onap_dir());
    return buf;
}

static int event_known(conformance_event event)
{
    return (int)event >= 0 && event < CONFORMANCE_EVENT_COUNT;
}

const char *conformance_own_schema(conformance_event event)
{
    return event_known(event) ? schemas[event].own : NULL;
}

const char *conformance_own_headers_schema(conformance_event event)
{
    return event_known(event) ? schemas[event].own_headers : NULL;
}

const char *conformance_onap_schema(conformance_event event)
{
    return event_known(event) ? schemas[event].onap : NULL;
}

static const jschema *own_get(conformance_event event, char *err, size_t errlen)
{
    char path[4096], msg[1024];

    if (!own_cache[event]) {
        snprintf(path, sizeof(path), "%s/%s", conformance_own_dir(), schemas[event].own);
        own_cache[event] = jschema_load(path, 0, msg, sizeof(msg));
        if (!own_cache[event])
            fail(err, errlen, "loading ncmpd's schema: %s", msg);
    }
    return own_cache[event];
}

/* A $ref with a fragment cannot be loaded as a file: a one-line schema
 * that refers to it is, resolved against schema/. */
static const jschema *own_headers_get(conformance_event event, char *err, size_t errlen)
{
    char text[512], msg[1024];

    if (!own_headers_cache[event]) {
        snprintf(text, sizeof(text), "{\"$ref\":\"%s\"}", schemas[event].own_headers);
        own_headers_cache[event] = jschema_parse(text, conformance_own_dir(), 0, msg, sizeof(msg));
        if (!own_headers_cache[event])
            fail(err, errlen, "loading ncmpd's schema %s: %s", schemas[event].own_headers, msg);
    }
    return own_headers_cache[event];
}

static const jschema *onap_get(conformance_event event, char *err, size_t errlen)
{
    const event_schemas *e = &schemas[event];
    char path[4096], msg[1024];
    jschema *s;

    if (onap_cache[event])
        return onap_cache[event];
    snprintf(path, sizeof(path), "%s/%s", conformance_onap_dir(), e->onap);
    s = jschema_load(path, e->onap_flags, msg, sizeof(msg));
    if (!s) {
        fail(err, errlen, "loading NCMP's schema: %s", msg);
        return NULL;
    }
    if (e->onap_patch_pointer &&
        jschema_patch(s, e->onap_patch_pointer, e->onap_patch, msg, sizeof(msg)) != 0) {
        fail(err, errlen, "patching NCMP's %s: %s", e->onap, msg);
        jschema_free(s);
        return NULL;
    }
    onap_cache[event] = s;
    return s;
}

void conformance_reset(void)
{
    for (size_t i = 0; i < CONFORMANCE_EVENT_COUNT; i++) {
        jschema_free(own_cache[i]);
        jschema_free(own_headers_cache[i]);
        jschema_free(onap_cache[i]);
        own_cache[i] = own_headers_cache[i] = onap_cache[i] = NULL;
    }
}

int conformance_check_event(conformance_event event, json_object *doc, char *err, size_t errlen)
{
    const jschema *s;
    char msg[1024];

    if (!event_known(event) || !schemas[event].own)
        return fail(err, errlen, "no schema for the value of event %d", (int)event);
    if (!(s = own_get(event, err, errlen)))
        return -1;
    if (jschema_validate(s, doc, msg, sizeof(msg)) != 0)
        return fail(err, errlen, "schema/%s: %s", schemas[event].own, msg);
    if (!schemas[event].onap || !conformance_onap_available())
        return 0;
    if (!(s = onap_get(event, err, errlen)))
        return -1;
    if (jschema_validate(s, doc, msg, sizeof(msg)) != 0)
        return fail(err, errlen, "NCMP's %s: %s", schemas[event].onap, msg);
    return 0;
}

int conformance_check_event_text(conformance_event event, const char *json_text, size_t len,
                                 char *err, size_t errlen)
{
    json_object *doc = NULL;
    ncmp_err perr = {0};
    int rc;

    if (ncmp_json_parse(json_text, len, &doc, &perr) != 0)
        return fail(err, errlen, "not JSON: %s", perr.msg);
    rc = conformance_check_event(event, doc, err, errlen);
    json_object_put(doc);
    return rc;
}

/* ---- RFC 3339 ------------------------------------------------------------ */

/* n digits at *p as a number, or -1; moves *p past them. */
static int digits(const char **p, int n)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    return v;
}

static int days_in_month(int year, int month)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

    return month == 2 && leap ? 29 : days[month - 1];
}

int conformance_rfc3339(const char *s)
{
    const char *p = s;
    int year, month, day, hour, minute, second;

    if ((year = digits(&p, 4)) < 0 || *p++ != '-' || (month = digits(&p, 2)) < 1 || month > 12 ||
        *p++ != '-' || (day = digits(&p, 2)) < 1 || day > days_in_month(year, month))
        return 0;
    if (*p++ != 'T')
        return 0;
    if ((hour = digits(&p, 2)) < 0 || hour > 23 || *p++ != ':' || (minute = digits(&p, 2)) < 0 ||
        minute > 59 || *p++ != ':' || (second = digits(&p, 2)) < 0 || second > 60)
        return 0;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'Z')
        return p[1] == '\0';
    if (*p != '+' && *p != '-')
        return 0;
    p++;
    if ((hour = digits(&p, 2)) < 0 || hour > 23 || *p++ != ':' || (minute = digits(&p, 2)) < 0 ||
        minute > 59)
        return 0;
    return *p == '\0';
}

int conformance_rfc3339_utc_ms(const char *s)
{
    /* 2026-12-03T07:10:22.587Z */
    return conformance_rfc3339(s) && strlen(s) == 24 && s[19] == '.' && s[23] == 'Z';
}

/* A CloudEvent's ce_time (in the header map `map`), when it has one. */
static int check_ce_time(json_object *map, char *err, size_t errlen)
{
    json_object *v;

    if (!json_object_object_get_ex(map, "ce_time", &v))
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return fail(err, errlen, "ce_time: a header without a value");
    if (!conformance_rfc3339(json_object_get_string(v)))
        return fail(err, errlen, "ce_time \"%s\" is not an RFC 3339 date-time",
                    json_object_get_string(v));
    return 0;
}

int conformance_check_headers(conformance_event event, const rd_kafka_headers_t *headers, char *err,
                              size_t errlen)
{
    const jschema *s;
    json_object *map;
    const char *name;
    const void *value;
    size_t size;
    char msg[1024];
    int rc = 0;

    if (!event_known(event) || !schemas[event].own_headers)
        return fail(err, errlen, "no schema for the headers of event %d", (int)event);
    if (!(s = own_headers_get(event, err, errlen)))
        return -1;
    map = json_object_new_object();
    /* in order, so that a later value of a name replaces an earlier one */
    for (size_t i = 0; headers && rd_kafka_header_get_all(headers, i, &name, &value, &size) ==
                                      RD_KAFKA_RESP_ERR_NO_ERROR;
         i++)
        json_object_object_add(map, name,
                               value ? json_object_new_string_len(value, (int)size) : NULL);
    if (jschema_validate(s, map, msg, sizeof(msg)) != 0)
        rc = fail(err, errlen, "schema/%s: %s", schemas[event].own_headers, msg);
    else if (strncmp(schemas[event].own_headers, CLOUDEVENT_HEADERS_FILE,
                     strlen(CLOUDEVENT_HEADERS_FILE)) == 0)
        rc = check_ce_time(map, err, errlen);
    json_object_put(map);
    return rc;
}

/* v2 by its eventSchema; anything else is checked as v1 (and refused
 * there when it is not v1's). */
static int lcm_is_v2(json_object *event)
{
    json_object *v;

    return json_object_object_get_ex(event, "eventSchema", &v) &&
           json_object_is_type(v, json_type_string) &&
           strcmp(json_object_get_string(v), LCM_EVENT_SCHEMA_V2) == 0;
}

int conformance_check_lcm_schema(json_object *event, char *err, size_t errlen)
{
    return conformance_check_event(lcm_is_v2(event) ? CONFORMANCE_LCM_V2 : CONFORMANCE_LCM, event,
                                   err, errlen);
}

int conformance_check_lcm(const char *json_text, size_t len, char *err, size_t errlen)
{
    json_object *event = NULL;
    ncmp_err perr = {0};
    int rc = -1;

    if (ncmp_json_parse(json_text, len, &event, &perr) != 0)
        return fail(err, errlen, "not JSON: %s", perr.msg);
    if (conformance_check_lcm_schema(event, err, errlen) == 0 &&
        conformance_check_lcm_rules(event, err, errlen) == 0)
        rc = 0;
    json_object_put(event);
    return rc;
}

/* ---- rules beyond the schema ------------------------------------------ */

/* String member `key` of `obj`, or NULL when it is absent or not one. */
static const char *member_string(json_object *obj, const char *key)
{
    json_object *v;

    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static int is_uuid4(const char *s)
{
    static const char hex[] = "0123456789abcdef";

    if (strlen(s) != 36)
        return 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return 0;
        } else if (!strchr(hex, s[i]) || s[i] == '\0') {
            return 0;
        }
    }
    /* version 4, variant 10xx (RFC 4122) */
    return s[14] == '4' && strchr("89ab", s[19]) != NULL;
}

static int matches(const char *pattern, const char *s)
{
    regex_t re;
    int ok;

    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
        return 0;
    ok = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

/* cmHandleProperties, where present: [ {"name": "value", ...} ]. */
static int check_properties(json_object *values, const char *where, char *err, size_t errlen)
{
    json_object *props, *map;
    struct json_object_iterator it, end;

    if (!json_object_object_get_ex(values, "cmHandleProperties", &props))
        return 0;
    if (!json_object_is_type(props, json_type_array) || json_object_array_length(props) != 1)
        return fail(err, errlen, "/event/%s/cmHandleProperties: not a list of exactly one map",
                    where);
    map = json_object_array_get_idx(props, 0);
    if (!json_object_is_type(map, json_type_object))
        return fail(err, errlen, "/event/%s/cmHandleProperties/0: not a map", where);
    end = json_object_iter_end(map);
    for (it = json_object_iter_begin(map); !json_object_iter_equal(&it, &end);
         json_object_iter_next(&it))
        if (!json_object_is_type(json_object_iter_peek_value(&it), json_type_string))
            return fail(err, errlen, "/event/%s/cmHandleProperties/0/%s: not a string", where,
                        json_object_iter_peek_name(&it));
    return 0;
}

/* On update only what changed appears: no key may have the same value on
 * both sides (a side may lack a key whose value there is null). */
static int check_update_values(json_object *old_values, json_object *new_values, char *err,
                               size_t errlen)
{
    static const char *const keys[] = {"dataSyncEnabled", "cmHandleState", "cmHandleProperties"};
    const char *state = member_string(new_values, "cmHandleState");

    if (state && strcmp(state, "DELETED") == 0)
        return fail(err, errlen,
                    "/event/newValues/cmHandleState: DELETED on an update (that is "
                    "a delete)");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_object *o, *n;

        if (json_object_object_get_ex(old_values, keys[i], &o) &&
            json_object_object_get_ex(new_values, keys[i], &n) && json_object_equal(o, n))
            return fail(err, errlen,
                        "/event: %s is %s in both oldValues and newValues; an update gives only "
                        "what changed",
                        keys[i], json_object_to_json_string_ext(n, JSON_C_TO_STRING_PLAIN));
    }
    return 0;
}

/* v2's keys of oldValues and newValues, all of them in a create's. */
static const char *const v2_keys[] = {
    "dataSyncEnabled", "cmHandleState",          "alternateId",
    "moduleSetTag",    "dataProducerIdentifier", "cmHandleProperties"};

/* v2's cmHandleProperties, where present: a map of strings, or null. */
static int check_properties_v2(json_object *values, const char *where, char *err, size_t errlen)
{
    json_object *map;
    struct json_object_iterator it, end;

    if (!json_object_object_get_ex(values, "cmHandleProperties", &map) || !map)
        return 0;
    if (!json_object_is_type(map, json_type_object))
        return fail(err, errlen, "/event/%s/cmHandleProperties: not a map (v2 has no list)", where);
    end = json_object_iter_end(map);
    for (it = json_object_iter_begin(map); !json_object_iter_equal(&it, &end);
         json_object_iter_next(&it))
        if (!json_object_is_type(json_object_iter_peek_value(&it), json_type_string))
            return fail(err, errlen, "/event/%s/cmHandleProperties/%s: not a string", where,
                        json_object_iter_peek_name(&it));
    return 0;
}

/* v2's update: the same keys on both sides (null where a side has no
 * value), none with the same value on both. */
static int check_update_values_v2(json_object *old_values, json_object *new_values, char *err,
                                  size_t errlen)
{
    const char *state = member_string(new_values, "cmHandleState");

    if (state && strcmp(state, "DELETED") == 0)
        return fail(err, errlen,
                    "/event/newValues/cmHandleState: DELETED on an update (that is a delete)");
    for (size_t i = 0; i < sizeof(v2_keys) / sizeof(v2_keys[0]); i++) {
        json_object *o = NULL, *n = NULL;
        int in_old = json_object_object_get_ex(old_values, v2_keys[i], &o);
        int in_new = json_object_object_get_ex(new_values, v2_keys[i], &n);

        if (in_old != in_new)
            return fail(err, errlen, "/event: %s in %s only; v2 names a change on both sides",
                        v2_keys[i], in_old ? "oldValues" : "newValues");
        if (in_old && json_object_equal(o, n))
            return fail(err, errlen,
                        "/event: %s is %s in both oldValues and newValues; an update gives only "
                        "what changed",
                        v2_keys[i],
                        n ? json_object_to_json_string_ext(n, JSON_C_TO_STRING_PLAIN) : "null");
    }
    return 0;
}

int conformance_check_lcm_rules(json_object *ev, char *err, size_t errlen)
{
    static const char *const header_fields[] = {
        "eventId",   "eventCorrelationId", "eventTime",         "eventSource",
        "eventType", "eventSchema",        "eventSchemaVersion"};
    static const char *const payload_fields[] = {"cmHandleId", "alternateId", "moduleSetTag",
                                                 "dataProducerIdentifier"};
    json_object *payload, *old_values = NULL, *new_values = NULL;
    const char *type, *kind, *v, *schema;
    size_t npayload;
    int has_old, has_new, v2 = lcm_is_v2(ev);

    if (!json_object_is_type(ev, json_type_object))
        return fail(err, errlen, "the event is not a JSON object");
    for (size_t i = 0; i < sizeof(header_fields) / sizeof(header_fields[0]); i++)
        if (!member_string(ev, header_fields[i]))
            return fail(err, errlen, "/%s: missing or not a string", header_fields[i]);
    if (!json_object_object_get_ex(ev, "event", &payload) ||
        !json_object_is_type(payload, json_type_object))
        return fail(err, errlen, "/event: missing or not an object");
    /* v2 has the two ids alone beside the values */
    npayload = v2 ? 2 : sizeof(payload_fields) / sizeof(payload_fields[0]);
    for (size_t i = 0; i < npayload; i++)
        if (!member_string(payload, payload_fields[i]))
            return fail(err, errlen, "/event/%s: missing or not a string (NCMP sends \"\")",
                        payload_fields[i]);

    if (strcmp(v = member_string(ev, "eventSource"), LCM_EVENT_SOURCE) != 0)
        return fail(err, errlen, "/eventSource: \"%s\", not \"" LCM_EVENT_SOURCE "\"", v);
    schema = v2 ? LCM_EVENT_SCHEMA_V2 : LCM_EVENT_SCHEMA;
    if (strcmp(v = member_string(ev, "eventSchema"), schema) != 0)
        return fail(err, errlen, "/eventSchema: \"%s\", not \"%s\"", v, schema);
    if (strcmp(v = member_string(ev, "eventSchemaVersion"), LCM_EVENT_SCHEMA_VERSION) != 0)
        return fail(err, errlen,
                    "/eventSchemaVersion: \"%s\", not \"" LCM_EVENT_SCHEMA_VERSION "\"", v);
    if (!is_uuid4(v = member_string(ev, "eventId")))
        return fail(err, errlen, "/eventId: \"%s\" is not a lowercase version 4 UUID", v);
    if (!matches(LCM_TIME_PATTERN, v = member_string(ev, "eventTime")))
        return fail(err, errlen, "/eventTime: \"%s\" does not match %s", v, LCM_TIME_PATTERN);
    if (strcmp(member_string(ev, "eventCorrelationId"), member_string(payload, "cmHandleId")) != 0)
        return fail(err, errlen, "/eventCorrelationId: \"%s\" is not the cmHandleId \"%s\"",
                    member_string(ev, "eventCorrelationId"), member_string(payload, "cmHandleId"));

    type = member_string(ev, "eventType");
    if (strncmp(type, LCM_TYPE_PREFIX, strlen(LCM_TYPE_PREFIX)) != 0)
        return fail(err, errlen, "/eventType: \"%s\" does not start with " LCM_TYPE_PREFIX, type);
    kind = type + strlen(LCM_TYPE_PREFIX);
    has_old = json_object_object_get_ex(payload, "oldValues", &old_values);
    has_new = json_object_object_get_ex(payload, "newValues", &new_values);

    if (strcmp(kind, "create") == 0) {
        if (has_old)
            return fail(err, errlen, "/event/oldValues: present on a create");
        if (!has_new)
            return fail(err, errlen, "/event/newValues: missing on a create");
        if (!member_string(new_values, "cmHandleState"))
            return fail(err, errlen, "/event/newValues/cmHandleState: missing on a create");
        for (size_t i = 0; v2 && i < sizeof(v2_keys) / sizeof(v2_keys[0]); i++)
            if (!json_object_object_get_ex(new_values, v2_keys[i], NULL))
                return fail(err, errlen,
                            "/event/newValues/%s: missing on a create (v2 gives every key, null "
                            "where there is no value)",
                            v2_keys[i]);
        if (!json_object_object_get_ex(new_values, "cmHandleProperties", NULL))
            return fail(err, errlen,
                        "/event/newValues/cmHandleProperties: missing on a create (NCMP sends "
                        "[{}] when there are none)");
    } else if (strcmp(kind, "delete") == 0) {
        if (has_old || has_new)
            return fail(err, errlen, "/event/%s: present on a delete",
                        has_old ? "oldValues" : "newValues");
    } else if (strcmp(kind, "update") == 0) {
        if (has_old != has_new)
            return fail(err, errlen, "/event: %s without %s on an update",
                        has_old ? "oldValues" : "newValues", has_old ? "newValues" : "oldValues");
        if (has_old && (v2 ? check_update_values_v2(old_values, new_values, err, errlen)
                           : check_update_values(old_values, new_values, err, errlen)) != 0)
            return -1;
    } else {
        return fail(err, errlen, "/eventType: \"%s\" is not create, update or delete", type);
    }
    if (v2)
        return (has_old && check_properties_v2(old_values, "oldValues", err, errlen) != 0) ||
                       (has_new && check_properties_v2(new_values, "newValues", err, errlen) != 0)
                   ? -1
                   : 0;
    if (has_old && check_properties(old_values, "oldValues", err, errlen) != 0)
        return -1;
    if (has_new && check_properties(new_values, "newValues", err, errlen) != 0)
        return -1;
    return 0;
}

/* ---- Kafka headers ---------------------------------------------------- */

/* One UTF-16 unit from modified UTF-8 at s[*i]; -1 if malformed. The
 * forms are those java.io.DataInputStream.readUTF accepts: 1, 2 or 3
 * bytes (NUL as C0 80), never 4. */
static long java_unit(const unsigned char *s, size_t n, size_t *i)
{
    unsigned char c = s[*i];

    if (c >= 0x01 && c <= 0x7f) {
        *i += 1;
        return c;
    }
    if ((c & 0xe0) == 0xc0 && *i + 1 < n && (s[*i + 1] & 0xc0) == 0x80) {
        long u = ((long)(c & 0x1f) << 6) | (s[*i + 1] & 0x3f);

        *i += 2;
        return u;
    }
    if ((c & 0xf0) == 0xe0 && *i + 2 < n && (s[*i + 1] & 0xc0) == 0x80 &&
        (s[*i + 2] & 0xc0) == 0x80) {
        long u = ((long)(c & 0x0f) << 12) | ((long)(s[*i + 1] & 0x3f) << 6) | (s[*i + 2] & 0x3f);

        *i += 3;
        return u;
    }
    return -1;
}

static size_t utf8_put(unsigned long cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

long conformance_java_string_decode(const void *value, size_t size, char *out, size_t outlen,
                                    char *err, size_t errlen)
{
    static const unsigned char magic[] = {0xac, 0xed, 0x00, 0x05, 0x74};
    const unsigned char *b = value;
    size_t n, i = 7, o = 0;

    if (!b || size < 7 || memcmp(b, magic, sizeof(magic)) != 0)
        return fail(err, errlen, "not a Java-serialised String (no AC ED 00 05 74 prefix)");
    n = ((size_t)b[5] << 8) | b[6];
    if (n != size - 7)
        return fail(err, errlen, "Java string length %zu, but %zu bytes follow", n, size - 7);
    while (i < size) {
        size_t at = i;
        long u = java_unit(b, size, &i);
        unsigned long cp;
        char utf8[4];
        size_t len;

        if (u < 0)
            return fail(err, errlen,
                        "byte %zu (0x%02x): not modified UTF-8 (Java's readUTF would throw)", at,
                        b[at]);
        cp = (unsigned long)u;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            long lo = i < size ? java_unit(b, size, &i) : -1;

            if (lo < 0xdc00 || lo > 0xdfff)
                return fail(err, errlen, "byte %zu: a high surrogate without its low half", at);
            cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned long)lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return fail(err, errlen, "byte %zu: a lone low surrogate", at);
        } else if (cp == 0) {
            return fail(err, errlen, "byte %zu: NUL in a header value", at);
        }
        len = utf8_put(cp, utf8);
        if (o + len + 1 > outlen)
            return fail(err, errlen, "decoded value longer than %zu bytes", outlen);
        memcpy(out + o, utf8, len);
        o += len;
    }
    if (outlen == 0)
        return fail(err, errlen, "no room for the value");
    out[o] = '\0';
    return (long)o;
}

int conformance_check_lcm_headers(const rd_kafka_headers_t *headers, json_object *event,
                                  int java_serialized, char *err, size_t errlen)
{
    static const char *const names[] = {"eventId",           "eventCorrelationId", "eventTime",
                                        "eventSource",       "eventType",          "eventSchema",
                                        "eventSchemaVersion"};
    int seen[sizeof(names) / sizeof(names[0])] = {0};
    const char *name;
    const void *value;
    size_t size;
    char msg[256];

    if (!headers)
        return fail(err, errlen, "no headers");
    for (size_t idx = 0;
         rd_kafka_header_get_all(headers, idx, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
         idx++) {
        size_t k;
        const char *want;
        char *got;
        long len;
        int java;

        for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            if (strcmp(name, names[k]) == 0)
                break;
        if (k == sizeof(names) / sizeof(names[0]))
            continue;
        if (seen[k]++)
            return fail(err, errlen, "header %s: given more than once", name);
        want = member_string(event, name);
        if (!want)
            return fail(err, errlen, "header %s: the value has no string field %s", name, name);
        if (!value)
            return fail(err, errlen, "header %s: no value", name);
        /* read as a consumer does that takes both forms: Java's stream
         * header says which one it is */
        java = size >= 4 && memcmp(value, "\xac\xed\x00\x05", 4) == 0;
        if (java != !!java_serialized)
            return fail(err, errlen, "header %s: %s, expected %s", name,
                        java ? "Java-serialised" : "a plain string",
                        java_serialized ? "Java-serialised" : "a plain string");
        got = malloc(size + 1);
        if (!got)
            return fail(err, errlen, "out of memory");
        if (!java) {
            memcpy(got, value, size);
            got[size] = '\0';
            len = (long)size;
        } else {
            len = conformance_java_string_decode(value, size, got, size + 1, msg, sizeof(msg));
        }
        if (len < 0) {
            free(got);
            return fail(err, errlen, "header %s: %s", name, msg);
        }
        if ((size_t)len != strlen(want) || strcmp(got, want) != 0) {
            fail(err, errlen, "header %s: \"%s\", but the value says \"%s\"", name, got, want);
            free(got);
            return -1;
        }
        free(got);
    }
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        if (!seen[k])
            return fail(err, errlen, "header %s: missing", names[k]);
    return 0;
}
