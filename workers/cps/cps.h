/*
 * The cps role: CPS's data store REST API (/cps/api/v1, v2, v3) on the
 * CPS store tables (migrations/0007_cps_store.sql). docs/cps.md describes
 * the endpoints.
 *
 * One HTTP server per process: when the rest role runs too, it owns the
 * server and adds these routes to it (cps_api_new + cps_api_routes_add,
 * called from rest.c), so NCMP and CPS share the port, the threads, the
 * database pool and the optional authentication. When cps runs without
 * rest, its row starts a server of its own with the same http.* options.
 */
#ifndef NCMPD_CPS_H
#define NCMPD_CPS_H

#include "ncmp_config.h"
#include "ncmp_err.h"
#include "ncmp_http.h"
#include "ncmp_singleton.h"
#include "rest_db.h"
#include "role.h"

typedef struct cps_api cps_api;

/* The API's state on a borrowed pool (it must outlive the api). On
 * success *api is owned by the caller (cps_api_destroy, after the server
 * that routes to it is destroyed). */
int cps_api_new(cps_api **api, const ncmp_config *cfg, rest_pool *pool, ncmp_err *err);

/* Add CPS's routes to `server` (before it starts). */
void cps_api_routes_add(cps_api *api, ncmp_http_server *server);

/* Accepts NULL. */
void cps_api_destroy(cps_api *api);

/* Answer `req` with the node `xpath` (NULL: the root) of anchor `anchor`
 * of `dataspace` and its descendants `fetch` levels down (-1: all), in
 * the shape of CPS's API version `version` (1 to 3), JSON or XML as the
 * request accepts: GET .../node's answer, for routes outside /cps/api
 * that read the store. */
void cps_api_respond_node(cps_api *api, ncmp_http_request *req, const char *dataspace,
                          const char *anchor, const char *xpath, int fetch, int version);

/* Whether the store's writes announce themselves on the data-updated
 * topic (cps.data-updated-events; cps_events.h), and with one event per
 * delta entry (cps.delta-notification): set once per process at start,
 * before any write; events on and deltas off until set. */
void cps_events_configure(int enabled, int delta);

/* The cps-relay role: publishes the data-updated events (a singleton task,
 * see lib/ncmp_relay.h). */
int cps_relay_task(const ncmp_services *svc, ncmp_singleton_task *task, ncmp_err *err);
void cps_relay_free(void *arg);

/* The role row. */
typedef struct cps cps;

/* With the rest role selected too, nothing to start (rest serves the
 * routes); otherwise a pool and a server of its own. On success *c is
 * owned by the caller (cps_stop, cps_destroy). */
int cps_start(cps **c, const ncmp_services *svc, ncmp_err *err);
void cps_stop(cps *c);
void cps_destroy(cps *c);

#endif
