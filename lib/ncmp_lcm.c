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
static void append_values(ncmp_buf *out, const char *name, const ncmp_lcm_values *v, int is_create)
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
    if (v->public_properties_json || is_create) {
        /* NCMP sends a list holding one map (its Java type), not the object
         * its schema names; consumers deserialise the list form. */
        const char *props = v->public_properties_json;
        ncmp_buf_appendf(out, "%s\"cmHandleProperties\":[%s]", first ? "" : ",",
                         props && *props ? props : "{}");
    }
    ncmp_buf_append_char(out, '}');
}

void ncmp_lcm_event_json(ncmp_buf *out, const ncmp_lcm_event *ev, const char *event_id,
                         const char *event_time)
{
    const char *type = ncmp_lcm_event_type(ev);
    int is_delete = ev->new_values.state == NCMP_STATE_DELETED;

    ncmp_buf_append_str(out, "{\"eventId\":");
    ncmp_buf_append_json_string(out, event_id);
    ncmp_buf_append_str(out, ",\"eventCorrelationId\":");
    ncmp_buf_append_json_string(out, ev->cm_handle_id);
    ncmp_buf_append_str(out, ",\"eventTime\":");
    ncmp_buf_append_json_string(out, event_time);
    ncmp_buf_appendf(out,
                     ",\"eventSource\":\"" NCMP_LCM_EVENT_SOURCE "\",\"eventType\":\"%s\","
                     "\"eventSchema\":\"" NCMP_LCM_EVENT_SCHEMA
                     "\",\"eventSchemaVersion\":\"" NCMP_LCM_EVENT_SCHEMA_VERSION "\"",
                     type);
    ncmp_buf_append_str(out, ",\"event\":{\"cmHandleId\":");
    ncmp_buf_append_json_string(out, ev->cm_handle_id);
    ncmp_buf_append_str(out, ",\"alternateId\":");
    ncmp_buf_append_json_string(out, ev->alternate_id ? ev->alternate_id : "");
    ncmp_buf_append_str(out, ",\"moduleSetTag\":");
    ncmp_buf_append_json_string(out, ev->module_set_tag ? ev->module_set_tag : "");
    ncmp_buf_append_str(out, ",\"dataProducerIdentifier\":");
    ncmp_buf_append_json_string(out,
                                ev->data_producer_identifier ? ev->data_producer_identifier : "");
    if (!is_delete) {
        /* a create has no old values; an update has both, even if empty
         * (a change of dataProducerIdentifier alone, say) */
        if (ev->old_values.state != NCMP_STATE_NONE || ev->force_update)
            append_values(out, "oldValues", &ev->old_values, 0);
        append_values(out, "newValues", &ev->new_values,
                      ev->old_values.state == NCMP_STATE_NONE && !ev->force_update);
    }
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
                                     const char *event_id, const char *event_time,
                                     int java_serialized)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(7);

    header_add(h, "eventId", event_id, java_serialized);
    header_add(h, "eventCorrelationId", cm_handle_id, java_serialized);
    header_add(h, "eventTime", event_time, java_serialized);
    header_add(h, "eventSource", NCMP_LCM_EVENT_SOURCE, java_serialized);
    header_add(h, "eventType", event_type, java_serialized);
    header_add(h, "eventSchema", NCMP_LCM_EVENT_SCHEMA, java_serialized);
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
