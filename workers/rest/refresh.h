/*
 * Module refresh in the rest role:
 *
 *   POST /ncmpInventory/v1/ch/module/refresh
 *     body: CmHandleQueryParameters, as the inventory searches
 *     (southbound conditions; the deprecated `conditions` form too, as
 *     NCMP maps it). Answer 200, NCMP's RestModuleRefreshResponse:
 *       {"cmHandlesByModuleSetTag":[{"moduleSetTag":"tagA",
 *                                    "cmHandles":["<alternate id or id>",...]}]}
 *     every matched handle, whatever its state, grouped by module-set
 *     tag ("" for untagged handles), tags and handles in id order; no
 *     match: {"cmHandlesByModuleSetTag":[]}. A bad body answers 400 with
 *     the search's message.
 *
 * NCMP only reports so far; ncmpd also does the refresh NCMP plans
 * (CPS-3293): for each tag, the first READY handle (by id) becomes
 * LOCKED with lock reason MODULE_REFRESH (details "Refresh of
 * ModuleSetTag: <tag>"), with its lifecycle event through the outbox,
 * and is handed to module sync (modsync_queue, as an upgrade is), all in
 * one transaction that commits once the broker has the hand-over. A tag
 * whose refresh is still under way (a handle LOCKED with MODULE_REFRESH
 * or MODULE_REFRESH_FAILED) gets no second one. Module sync does the rest
 * (workers/pipeline/modsync.h).
 *
 * Runs on an HTTP server thread, on a pooled connection.
 */
#ifndef NCMPD_REFRESH_H
#define NCMPD_REFRESH_H

#include "ncmp_config.h"
#include "ncmp_http.h"
#include "ncmp_kafka.h"
#include "rest_db.h"

void refresh_modules(ncmp_http_request *req, rest_pool *pool, ncmp_producer *producer,
                     const ncmp_config *cfg);

#endif
