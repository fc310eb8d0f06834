/*
 * NCMP's REST output objects written from database rows in C: the
 * server sends plain columns and this code writes compact JSON, which is
 * several times cheaper than having PostgreSQL build JSON per row.
 *
 * A query selects REST_HANDLE_COLUMNS (on the row alias `h`), in that
 * order, and the formatters read the row by position. The timestamp
 * column must be in ISO DateStyle and UTC (rest_db sets both).
 */
#ifndef NCMPD_REST_JSON_H
#define NCMPD_REST_JSON_H

#include <libpq-fe.h>

#include "ncmp_buf.h"

#define REST_HANDLE_COLUMNS                                                                        \
    "h.id, h.alternate_id, h.state, h.lock_reason, h.lock_details, h.last_update_time,"            \
    " h.data_sync_enabled, h.operational_sync_state, h.effective_trust_level,"                     \
    " h.module_set_tag, h.data_producer_identifier, h.public_properties, h.additional_properties," \
    " h.operational_last_sync_time"
/* The positions of REST_HANDLE_COLUMNS, in its order; a query that selects
 * more columns after them finds the first at REST_COL_COUNT. */
enum {
    REST_COL_ID,
    REST_COL_ALTERNATE_ID,
    REST_COL_STATE,
    REST_COL_LOCK_REASON,
    REST_COL_LOCK_DETAILS,
    REST_COL_LAST_UPDATE,
    REST_COL_DATA_SYNC_ENABLED,
    REST_COL_OPERATIONAL_SYNC,
    REST_COL_TRUST,
    REST_COL_TAG,
    REST_COL_PRODUCER,
    REST_COL_PUBLIC,
    REST_COL_ADDITIONAL,
    REST_COL_LAST_SYNC,
    REST_COL_COUNT,
};

/* RestOutputCmHandleLightweight's columns, in this order; with
 * outputDmiProperties the private map as well. */
#define REST_LIGHT_COLUMNS                                                                         \
    "h.id, h.alternate_id, h.state, h.effective_trust_level, h.module_set_tag,"                    \
    " h.data_producer_identifier"
#define REST_LIGHT_DMI_COLUMNS REST_LIGHT_COLUMNS ", h.additional_properties"

/* RestOutputCmHandle, nulls omitted; cmHandleStatus is the state's name
 * (what NCMP's 2026-04-23 inventory model stores); cmHandleProperties too when
 * `with_dmi` (outputDmiProperties=true). */
void rest_json_handle(const PGresult *res, int row, int with_dmi, ncmp_buf *out);
/* Formatters with the signature rest_db streams with (see rest_db.h). */
void rest_json_handle_row(const PGresult *res, int row, ncmp_buf *out);
void rest_json_handle_dmi_row(const PGresult *res, int row, ncmp_buf *out);
/* RestOutputCmHandleLightweight of a REST_LIGHT_COLUMNS row (the v2
 * searches), and with dmiProperties of a REST_LIGHT_DMI_COLUMNS row. */
void rest_json_light_row(const PGresult *res, int row, ncmp_buf *out);
void rest_json_light_dmi_row(const PGresult *res, int row, ncmp_buf *out);
/* The same two, and the alternate id as a JSON string ("" when none), of
 * a REST_HANDLE_COLUMNS row. */
void rest_json_light_of_handle_row(const PGresult *res, int row, ncmp_buf *out);
void rest_json_light_dmi_of_handle_row(const PGresult *res, int row, ncmp_buf *out);
void rest_json_alternate_id_of_handle_row(const PGresult *res, int row, ncmp_buf *out);
/* {"state":{...}} and {"publicCmHandleProperties":[{...}]} of a handle row. */
void rest_json_state_row(const PGresult *res, int row, ncmp_buf *out);
void rest_json_properties_row(const PGresult *res, int row, ncmp_buf *out);
/* The first column as a JSON string ("" for NULL). */
void rest_json_string_row(const PGresult *res, int row, ncmp_buf *out);
/* The first column as it is: it already holds JSON. */
void rest_json_raw_row(const PGresult *res, int row, ncmp_buf *out);

/* Append jsonb's text output without the blanks it puts after ':' and ','
 * (blanks inside strings stay). */
void rest_json_append_compact(ncmp_buf *out, const char *json);
/* The same for any JSON text json[0..len): every blank outside strings
 * (space, tab, newline, carriage return) is left out. */
void rest_json_append_compact_n(ncmp_buf *out, const char *json, size_t len);

/* "2026-12-02 13:21:59.902+00" (ISO, UTC) -> "2026-12-02T13:21:59.902+0000",
 * NCMP's pattern, milliseconds truncated. */
void rest_json_append_time(ncmp_buf *out, const char *iso);

#endif
