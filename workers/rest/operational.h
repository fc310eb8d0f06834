/*
 * NCMP's data sync in the rest role: the switch and the reads of the
 * operational cache (the data-sync role fills it: workers/datasync/).
 *
 *   PUT /ncmp/v1/ch/{cm-handle}/data-sync?dataSyncEnabled=true|false
 *     NCMP's setDataSyncEnabled: on a READY handle sets the flag and the
 *     operational sync state (UNSYNCHRONIZED when on, NONE_REQUESTED when
 *     off), in one transaction with a lifecycle event announcing the
 *     change (dataSyncEnabled in its old and new values) through the
 *     outbox; turning it off drops the handle's cache in the same
 *     transaction (migrations/0011's trigger deletes its anchor), turning
 *     it on queues the handle for the data-sync role. The same value again
 *     changes nothing (200). Unknown handle 404, not READY 500 (NCMP's
 *     "State mismatch exception."), a value not true/false 400.
 *
 *   GET /ncmp/v1/ch/{ref}/data/ds/ncmp-datastore:operational
 *       ?resourceIdentifier=&include-descendants=
 *     The node at resourceIdentifier (a CPS xpath) of the handle's anchor
 *     in NFP-Operational, as CPS's v3 node read answers it (NCMP's
 *     getDataNodesByAnchorV3).
 *
 *   GET /ncmp/v1/ch/{ref}/data/ds/ncmp-datastore:operational/query
 *       ?cps-path=&include-descendants=
 *     The nodes of the handle's anchor matching the CPS path, as NCMP
 *     answers them: its DataNode objects as JSON ({dataspace, anchorName,
 *     xpath, moduleNamePrefix, leaves, childDataNodes}, nulls left out).
 *
 * Handlers run on the HTTP server threads, each on a pooled connection.
 */
#ifndef NCMPD_OPERATIONAL_H
#define NCMPD_OPERATIONAL_H

#include "cps.h"
#include "cps_store.h"
#include "ncmp_http.h"
#include "rest_db.h"

/* PUT /ncmp/v1/ch/{ref}/data-sync */
void operational_data_sync(ncmp_http_request *req, rest_pool *pool, const ncmp_config *cfg);

/* The cache read of handle `handle_id` (resolved by the caller), with
 * the request's resourceIdentifier and include-descendants. */
void operational_read(ncmp_http_request *req, cps_api *api, const char *handle_id);

/* The cache query of handle `handle_id`, with the request's cps-path and
 * include-descendants. */
void operational_query(ncmp_http_request *req, rest_pool *pool, const char *handle_id);

#endif
