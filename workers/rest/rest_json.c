#include "rest_json.h"

#include <stdint.h>
#include <string.h>

/* Does any of the 8 bytes of x need an escape in a JSON string (below
 * 0x20, '"' or '\\')? Bytes of UTF-8 sequences (0x80 and up) never do. */
static int escape_in8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t quote = x ^ (ones * '"'), backslash = x ^ (ones * '\\');

    return ((((x - ones * 0x20) & ~x) | ((quote - ones) & ~quote) |
             ((backslash - ones) & ~backslash)) &
            highs) != 0;
}

/* ncmp_buf_append_json_string, faster for the common case: the string is
 * checked 8 bytes at a time and a string without escapes (nearly every
 * id, alternate id and property) is copied in one go. */
static void json_string(ncmp_buf *out, const char *s)
{
    size_t n = strlen(s), i = 0;
    const char *run;

    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (escape_in8(x))
            break;
    }
    for (; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == '"' || ch == '\\')
            break;
    }
    ncmp_buf_reserve(out, n + 2);
    ncmp_buf_append_char(out, '"');
    ncmp_buf_append(out, s, i);
    run = s + i;
    for (const char *p = run; i < n; p++, i++) {
        unsigned char ch = (unsigned char)*p;
        if (ch >= 0x20 && ch != '"' && ch != '\\')
            continue;
        ncmp_buf_append(out, run, (size_t)(p - run));
        if (ch == '"' || ch == '\\') {
            ncmp_buf_append_char(out, '\\');
            ncmp_buf_append_char(out, (char)ch);
        } else {
            ncmp_buf_appendf(out, "\\u%04x", ch);
        }
        run = p + 1;
    }
    ncmp_buf_append(out, run, (size_t)(s + n - run));
    ncmp_buf_append_char(out, '"');
}

static const char *col(const PGresult *res, int row, int c)
{
    return PQgetisnull(res, row, c) ? NULL : PQgetvalue(res, row, c);
}

void rest_json_append_compact_n(ncmp_buf *out, const char *json, size_t len)
{
    const char *p = json, *end = json + len, *run = json;
    int in_string = 0;

    for (; p < end; p++) {
        if (in_string) {
            if (*p == '\\' && p + 1 < end)
                p++;
            else if (*p == '"')
                in_string = 0;
        } else if (*p == '"') {
            in_string = 1;
        } else if (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') {
            ncmp_buf_append(out, run, (size_t)(p - run));
            run = p + 1;
        }
    }
    ncmp_buf_append(out, run, (size_t)(p - run));
}

void rest_json_append_compact(ncmp_buf *out, const char *json)
{
    rest_json_append_compact_n(out, json, strlen(json));
}

void rest_json_append_time(ncmp_buf *out, const char *iso)
{
    size_t n = strlen(iso);
    const char *frac = n > 19 && iso[19] == '.' ? iso + 20 : "";
    char ms[4] = "000";

    if (n < 19) {
        json_string(out, iso);
        return;
    }
    for (int i = 0; i < 3 && frac[i] >= '0' && frac[i] <= '9'; i++)
        ms[i] = frac[i];
    ncmp_buf_append_char(out, '"');
    ncmp_buf_append(out, iso, 10);
    ncmp_buf_append_char(out, 'T');
    ncmp_buf_append(out, iso + 11, 8);
    ncmp_buf_append_char(out, '.');
    ncmp_buf_append(out, ms, 3);
    ncmp_buf_append_str(out, "+0000\"");
}

/* CmHandleCompositeState. dataSyncEnabled is unset until a handle was
 * first READY, as in NCMP (its composite state starts without it); a
 * LOCKED handle without a reason shows LOCKED_MISBEHAVING. */
static void state_json(const PGresult *res, int row, ncmp_buf *out)
{
    const char *state = col(res, row, REST_COL_STATE);
    const char *reason = col(res, row, REST_COL_LOCK_REASON);
    const char *details = col(res, row, REST_COL_LOCK_DETAILS);
    const char *sync = col(res, row, REST_COL_OPERATIONAL_SYNC);
    const char *enabled = col(res, row, REST_COL_DATA_SYNC_ENABLED);
    int locked = state && strcmp(state, "LOCKED") == 0;
    int is_true = enabled && enabled[0] == 't';

    ncmp_buf_append_str(out, "{\"cmHandleState\":");
    json_string(out, state ? state : "");
    if (reason || locked) {
        ncmp_buf_append_str(out, ",\"lockReason\":{\"reason\":");
        json_string(out, reason && *reason ? reason : "LOCKED_MISBEHAVING");
        if (details) {
            ncmp_buf_append_str(out, ",\"details\":");
            json_string(out, details);
        }
        ncmp_buf_append_char(out, '}');
    }
    ncmp_buf_append_str(out, ",\"lastUpdateTime\":");
    rest_json_append_time(out, col(res, row, REST_COL_LAST_UPDATE));
    if ((state && strcmp(state, "READY") == 0) || sync || is_true)
        ncmp_buf_append_str(out,
                            is_true ? ",\"dataSyncEnabled\":true" : ",\"dataSyncEnabled\":false");
    if (sync) {
        const char *synced_at = col(res, row, REST_COL_LAST_SYNC);
        ncmp_buf_append_str(out, ",\"dataSyncState\":{\"operational\":{\"syncState\":");
        json_string(out, sync);
        if (synced_at) { /* NCMP's lastSyncTime, the format of lastUpdateTime */
            ncmp_buf_append_str(out, ",\"lastSyncTime\":");
            rest_json_append_time(out, synced_at);
        }
        ncmp_buf_append_str(out, "}}");
    }
    ncmp_buf_append_char(out, '}');
}

static void string_field(ncmp_buf *out, const char *key, const char *value)
{
    ncmp_buf_append_str(out, key);
    json_string(out, value ? value : "");
}

void rest_json_handle(const PGresult *res, int row, int with_dmi, ncmp_buf *out)
{
    string_field(out, "{\"cmHandle\":", col(res, row, REST_COL_ID));
    ncmp_buf_append_str(out, ",\"publicCmHandleProperties\":[");
    rest_json_append_compact(out, col(res, row, REST_COL_PUBLIC));
    ncmp_buf_append_char(out, ']');
    if (with_dmi) {
        ncmp_buf_append_str(out, ",\"cmHandleProperties\":");
        rest_json_append_compact(out, col(res, row, REST_COL_ADDITIONAL));
    }
    ncmp_buf_append_str(out, ",\"state\":");
    state_json(res, row, out);
    string_field(out, ",\"trustLevel\":", col(res, row, REST_COL_TRUST));
    string_field(out, ",\"moduleSetTag\":", col(res, row, REST_COL_TAG));
    string_field(out, ",\"alternateId\":", col(res, row, REST_COL_ALTERNATE_ID));
    string_field(out, ",\"dataProducerIdentifier\":", col(res, row, REST_COL_PRODUCER));
    string_field(out, ",\"cmHandleStatus\":", col(res, row, REST_COL_STATE));
    ncmp_buf_append_char(out, '}');
}

void rest_json_handle_row(const PGresult *res, int row, ncmp_buf *out)
{
    rest_json_handle(res, row, 0, out);
}

void rest_json_handle_dmi_row(const PGresult *res, int row, ncmp_buf *out)
{
    rest_json_handle(res, row, 1, out);
}

/* Where a lightweight handle's fields are in a row: id, alternate id,
 * state, trust level, module-set tag, data producer, private map. */
typedef struct light_cols {
    int id, alternate_id, state, trust, tag, producer, additional;
} light_cols;

/* REST_LIGHT_COLUMNS (and REST_LIGHT_DMI_COLUMNS) */
static const light_cols LIGHT = {0, 1, 2, 3, 4, 5, 6};
/* REST_HANDLE_COLUMNS */
static const light_cols LIGHT_OF_HANDLE = {
    REST_COL_ID,  REST_COL_ALTERNATE_ID, REST_COL_STATE,     REST_COL_TRUST,
    REST_COL_TAG, REST_COL_PRODUCER,     REST_COL_ADDITIONAL};

/* RestOutputCmHandleLightweight, in NCMP's field order. dmiProperties is
 * the private map as a JSON string, as NCMP's 2026-04-23 inventory model
 * keeps it ("{}" when there is none). */
static void light_json(const PGresult *res, int row, const light_cols *c, int with_dmi,
                       ncmp_buf *out)
{
    string_field(out, "{\"cmHandle\":", col(res, row, c->id));
    string_field(out, ",\"alternateId\":", col(res, row, c->alternate_id));
    string_field(out, ",\"cmHandleStatus\":", col(res, row, c->state));
    string_field(out, ",\"moduleSetTag\":", col(res, row, c->tag));
    string_field(out, ",\"dataProducerIdentifier\":", col(res, row, c->producer));
    string_field(out, ",\"trustLevel\":", col(res, row, c->trust));
    if (with_dmi) {
        const char *map = col(res, row, c->additional);
        ncmp_buf compact = NCMP_BUF_INIT;

        rest_json_append_compact(&compact, map ? map : "{}");
        string_field(out, ",\"dmiProperties\":", compact.data);
        ncmp_buf_free(&compact);
    }
    ncmp_buf_append_char(out, '}');
}

void rest_json_light_row(const PGresult *res, int row, ncmp_buf *out)
{
    light_json(res, row, &LIGHT, 0, out);
}

void rest_json_light_dmi_row(const PGresult *res, int row, ncmp_buf *out)
{
    light_json(res, row, &LIGHT, 1, out);
}

void rest_json_light_of_handle_row(const PGresult *res, int row, ncmp_buf *out)
{
    light_json(res, row, &LIGHT_OF_HANDLE, 0, out);
}

void rest_json_light_dmi_of_handle_row(const PGresult *res, int row, ncmp_buf *out)
{
    light_json(res, row, &LIGHT_OF_HANDLE, 1, out);
}

void rest_json_alternate_id_of_handle_row(const PGresult *res, int row, ncmp_buf *out)
{
    const char *v = col(res, row, REST_COL_ALTERNATE_ID);
    json_string(out, v ? v : "");
}

void rest_json_state_row(const PGresult *res, int row, ncmp_buf *out)
{
    ncmp_buf_append_str(out, "{\"state\":");
    state_json(res, row, out);
    ncmp_buf_append_char(out, '}');
}

void rest_json_properties_row(const PGresult *res, int row, ncmp_buf *out)
{
    ncmp_buf_append_str(out, "{\"publicCmHandleProperties\":[");
    rest_json_append_compact(out, col(res, row, REST_COL_PUBLIC));
    ncmp_buf_append_str(out, "]}");
}

void rest_json_string_row(const PGresult *res, int row, ncmp_buf *out)
{
    const char *v = col(res, row, 0);
    json_string(out, v ? v : "");
}

void rest_json_raw_row(const PGresult *res, int row, ncmp_buf *out)
{
    const char *v = col(res, row, 0);
    ncmp_buf_append_str(out, v ? v : "null");
}
