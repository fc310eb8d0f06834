#include "ncmp_lcm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static const char *const state_names[] = {"", "ADVISED", "READY", "LOCKED", "DELETING", "DELETED"};

const char *ncmp_state_name(ncmp_handle_state state)
{
    if ((int)state < 0 || (size_t)state >= sizeof(state_names) / sizeof(state_names[0]))
        return "";
    return state_names[state];
}

ncmp_handle_state ncmp_state_parse(const char *s)
{
    for (size_t i = 1; s && i < sizeof(state_names) / sizeof(state_names[0]); i++)
        if (strcmp(s, state_names[i]) == 0)
            return (ncmp_handle_state)i;
    return NCMP_STATE_NONE;
}

const char *ncmp_lcm_event_type(const ncmp_lcm_event *ev)
{
    if (ev->old_values.state == NCMP_STATE_NONE && !ev->force_update)
        return "org.onap.ncmp.cmhandle-lcm-event.create";
    if (ev->new_values.state == NCMP_STATE_DELETED)
        return "org.onap.ncmp.cmhandle-lcm-event.delete";
    return "org.onap.ncmp.cmhandle-lcm-event.update";
}

/* On a create NCMP always sends the properties, `[{}]` when none. */
static void append_values(ncmp_buf *out, const char *name, const ncmp_lcm_values *v, int create)
{
    int first = 1;

    ncmp_buf_appendf(out, ",\"%s\":{", name);
    if (v->data_sync_enabled >= 0) {
        ncmp_buf_appendf(out, "\"dataSyncEnabled\":%s", v->data_sync_enabled ? "true" : "false");
        first = 0;
    }
    if (v->state != NCMP_STATE_NONE) {
        ncmp_buf_appendf(out, "%s\"cmHandleState\":\"%s\"", first ? "" : ",",
                         ncmp_state_name(v->state));
        first = 0;
    }
    if (v->public_properties_json || create) {
        /* NCMP sends a list holding one map (its Java type), not the object
         * its schema names; consumers deserialise the list form. */
        const char *props = v->public_properties_json;
        ncmp_buf_appendf(out, "%s\"cmHandleProperties\":[%s]", first ? "" : ",",
                         props && *props ? props : "{}");
    }
    ncmp_buf_append_char(out, '}');
}

ncmp_lcm_format ncmp_lcm_format_parse(const char *version)
{
    return version && strcmp(version, "v2") == 0 ? NCMP_LCM_V2 : NCMP_LCM_V1;
}

const char *ncmp_lcm_format_schema(ncmp_lcm_format format)
{
    return format == NCMP_LCM_V2 ? NCMP_LCM_EVENT_SCHEMA_V2 : NCMP_LCM_EVENT_SCHEMA;
}

static int is_create(const ncmp_lcm_event *ev)
{
    return ev->old_values.state == NCMP_STATE_NONE && !ev->force_update;
}

/* The header fields, the same in both formats but for eventSchema. */
static void append_header(ncmp_buf *out, const ncmp_lcm_event *ev, ncmp_lcm_format format,
                          const char *event_id, const char *event_time)
{
    ncmp_buf_append_str(out, "{\"eventId\":");
    ncmp_buf_append_json_string(out, event_id);
    ncmp_buf_append_str(out, ",\"eventCorrelationId\":");
    ncmp_buf_append_json_string(out, ev->cm_handle_id);
    ncmp_buf_append_str(out, ",\"eventTime\":");
    ncmp_buf_append_json_string(out, event_time);
    ncmp_buf_appendf(
        out,
        ",\"eventSource\":\"" NCMP_LCM_EVENT_SOURCE "\",\"eventType\":\"%s\","
        "\"eventSchema\":\"%s\",\"eventSchemaVersion\":\"" NCMP_LCM_EVENT_SCHEMA_VERSION "\"",
        ncmp_lcm_event_type(ev), ncmp_lcm_format_schema(format));
    ncmp_buf_append_str(out, ",\"event\":{\"cmHandleId\":");
    ncmp_buf_append_json_string(out, ev->cm_handle_id);
    ncmp_buf_append_str(out, ",\"alternateId\":");
    ncmp_buf_append_json_string(out, ev->alternate_id ? ev->alternate_id : "");
}

static void event_json_v1(ncmp_buf *out, const ncmp_lcm_event *ev)
{
    ncmp_buf_append_str(out, ",\"moduleSetTag\":");
    ncmp_buf_append_json_string(out, ev->module_set_tag ? ev->module_set_tag : "");
    ncmp_buf_append_str(out, ",\"dataProducerIdentifier\":");
    ncmp_buf_append_json_string(out,
                                ev->data_producer_identifier ? ev->data_producer_identifier : "");
    if (ev->new_values.state != NCMP_STATE_DELETED) {
        /* a create has no old values; an update has both, even if empty
         * (a change of dataProducerIdentifier alone, say) */
        if (!is_create(ev))
            append_values(out, "oldValues", &ev->old_values, 0);
        append_values(out, "newValues", &ev->new_values, is_create(ev));
    }
}

/* --- v2: free maps of what changed --------------------------------------- */

static void v2_key(ncmp_buf *out, int *first, const char *key)
{
    ncmp_buf_appendf(out, "%s\"%s\":", *first ? "" : ",", key);
    *first = 0;
}

static void v2_string(ncmp_buf *out, const char *s)
{
    if (s)
        ncmp_buf_append_json_string(out, s);
    else
        ncmp_buf_append_str(out, "null");
}

static int same_string(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* A changed string of the event itself (moduleSetTag,
 * dataProducerIdentifier): `before` is NULL when it did not change. */
typedef struct v2_change {
    const char *key, *before, *after;
} v2_change;

/* One side of an update: the keys that changed, in a fixed order, with
 * this side's values (null where it has none). */
static void v2_update_side(ncmp_buf *out, const char *name, const ncmp_lcm_values *v,
                           const ncmp_lcm_values *other, const v2_change *changes, size_t nchanges,
                           int old_side)
{
    int first = 1;

    ncmp_buf_appendf(out, ",\"%s\":{", name);
    if (v->data_sync_enabled != other->data_sync_enabled) {
        v2_key(out, &first, "dataSyncEnabled");
        ncmp_buf_append_str(out, v->data_sync_enabled < 0 ? "null"
                                 : v->data_sync_enabled   ? "true"
                                                          : "false");
    }
    if (v->state != other->state) {
        v2_key(out, &first, "cmHandleState");
        v2_string(out, v->state != NCMP_STATE_NONE ? ncmp_state_name(v->state) : NULL);
    }
    for (size_t i = 0; i < nchanges; i++) {
        v2_key(out, &first, changes[i].key);
        v2_string(out, old_side ? changes[i].before : changes[i].after);
    }
    if (!same_string(v->public_properties_json, other->public_properties_json)) {
        v2_key(out, &first, "cmHandleProperties");
        ncmp_buf_append_str(out, !v->public_properties_json   ? "null"
                                 : *v->public_properties_json ? v->public_properties_json
                                                              : "{}");
    }
    ncmp_buf_append_char(out, '}');
}

static void event_json_v2(ncmp_buf *out, const ncmp_lcm_event *ev)
{
    const ncmp_lcm_values *nv = &ev->new_values;

    if (nv->state == NCMP_STATE_DELETED)
        return;
    if (is_create(ev)) {
        /* every key, null where there is no value */
        ncmp_buf_appendf(out, ",\"newValues\":{\"dataSyncEnabled\":%s,\"cmHandleState\":",
                         nv->data_sync_enabled < 0 ? "null"
                         : nv->data_sync_enabled   ? "true"
                                                   : "false");
        v2_string(out, nv->state != NCMP_STATE_NONE ? ncmp_state_name(nv->state) : NULL);
        ncmp_buf_append_str(out, ",\"alternateId\":");
        ncmp_buf_append_json_string(out, ev->alternate_id ? ev->alternate_id : "");
        ncmp_buf_append_str(out, ",\"moduleSetTag\":");
        ncmp_buf_append_json_string(out, ev->module_set_tag ? ev->module_set_tag : "");
        ncmp_buf_append_str(out, ",\"dataProducerIdentifier\":");
        ncmp_buf_append_json_string(out, ev->data_producer_identifier ? ev->data_producer_identifier
                                                                      : "");
        ncmp_buf_appendf(out, ",\"cmHandleProperties\":%s}",
                         nv->public_properties_json && *nv->public_properties_json
                             ? nv->public_properties_json
                             : "{}");
        return;
    }
    {
        const ncmp_lcm_values *ov = &ev->old_values;
        v2_change changes[2];
        size_t n = 0;

        if (ev->old_module_set_tag && !same_string(ev->old_module_set_tag, ev->module_set_tag))
            changes[n++] = (v2_change){"moduleSetTag", ev->old_module_set_tag,
                                       ev->module_set_tag ? ev->module_set_tag : ""};
        if (ev->old_data_producer_identifier &&
            !same_string(ev->old_data_producer_identifier, ev->data_producer_identifier))
            changes[n++] =
                (v2_change){"dataProducerIdentifier", ev->old_data_producer_identifier,
                            ev->data_producer_identifier ? ev->data_producer_identifier : ""};
        if (!n && ov->data_sync_enabled == nv->data_sync_enabled && ov->state == nv->state &&
            same_string(ov->public_properties_json, nv->public_properties_json))
            return; /* nothing changed: NCMP writes neither map */
        v2_update_side(out, "oldValues", ov, nv, changes, n, 1);
        v2_update_side(out, "newValues", nv, ov, changes, n, 0);
    }
}

void ncmp_lcm_event_json(ncmp_buf *out, const ncmp_lcm_event *ev, ncmp_lcm_format format,
                         const char *event_id, const char *event_time)
{
    append_header(out, ev, format, event_id, event_time);
    if (format == NCMP_LCM_V2)
        event_json_v2(out, ev);
    else
        event_json_v1(out, ev);
    ncmp_buf_append_str(out, "}}");
}

/* Java's ObjectOutputStream form of a String: the stream header, then
 * TC_STRING and a 16-bit length (TC_LONGSTRING and a 64-bit one past
 * 65535 bytes), then the text in modified UTF-8, where a character outside
 * the BMP is a surrogate pair of two 3-byte sequences. */
static void header_add(rd_kafka_headers_t *h, const char *name, const char *value, int java)
{
    const unsigned char *s = (const unsigned char *)value;
    size_t n = strlen(value);
    ncmp_buf b = NCMP_BUF_INIT;
    ncmp_buf text = NCMP_BUF_INIT;

    if (!java) {
        rd_kafka_header_add(h, name, -1, value, (ssize_t)n);
        return;
    }
    for (size_t i = 0; i < n;) {
        if (s[i] >= 0xf0 && i + 3 < n) {
            unsigned cp = ((unsigned)(s[i] & 0x07) << 18) | ((unsigned)(s[i + 1] & 0x3f) << 12) |
                          ((unsigned)(s[i + 2] & 0x3f) << 6) | (unsigned)(s[i + 3] & 0x3f);
            unsigned hi = 0xd800 + ((cp - 0x10000) >> 10), lo = 0xdc00 + ((cp - 0x10000) & 0x3ff);
            char enc[6] = {(char)(0xe0 | (hi >> 12)),         (char)(0x80 | ((hi >> 6) & 0x3f)),
                           (char)(0x80 | (hi & 0x3f)),        (char)(0xe0 | (lo >> 12)),
                           (char)(0x80 | ((lo >> 6) & 0x3f)), (char)(0x80 | (lo & 0x3f))};
            ncmp_buf_append(&text, enc, sizeof(enc));
            i += 4;
        } else {
            ncmp_buf_append_char(&text, (char)s[i]);
            i++;
        }
    }
    ncmp_buf_append(&b, "\xac\xed\x00\x05", 4);
    if (text.len <= 0xffff) {
        unsigned char hdr[3] = {0x74, (unsigned char)(text.len >> 8),
                                (unsigned char)(text.len & 0xff)};
        ncmp_buf_append(&b, hdr, sizeof(hdr));
    } else {
        unsigned char hdr[9] = {0x7c, 0, 0, 0, 0};
        for (int k = 0; k < 4; k++)
            hdr[5 + k] = (unsigned char)(text.len >> (8 * (3 - k)));
        ncmp_buf_append(&b, hdr, sizeof(hdr));
    }
    ncmp_buf_append(&b, text.data ? text.data : "", text.len);
    rd_kafka_header_add(h, name, -1, b.data, (ssize_t)b.len);
    ncmp_buf_free(&b);
    ncmp_buf_free(&text);
}

rd_kafka_headers_t *ncmp_lcm_headers(const char *cm_handle_id, const char *event_type,
                                     const char *event_schema, const char *event_id,
                                     const char *event_time, int java_serialized)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(7);

    header_add(h, "eventId", event_id, java_serialized);
    header_add(h, "eventCorrelationId", cm_handle_id, java_serialized);
    header_add(h, "eventTime", event_time, java_serialized);
    header_add(h, "eventSource", NCMP_LCM_EVENT_SOURCE, java_serialized);
    header_add(h, "eventType", event_type, java_serialized);
    header_add(h, "eventSchema", event_schema, java_serialized);
    header_add(h, "eventSchemaVersion", NCMP_LCM_EVENT_SCHEMA_VERSION, java_serialized);
    return h;
}

void ncmp_event_time_now(char out[32])
{
    struct timeval tv;
    struct tm tm;

    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    snprintf(out, 32, "%04d-%02d-%02dT%02d:%02d:%02d.%03d+0000", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000));
}
