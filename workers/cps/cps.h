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

/* Answer `req` as GET /v3/dataspaces/{dataspace}/anchors/{anchor}/node
 * ?xpath=&descendants= does: the node at `xpath` (NULL: the root) with
 * its descendants down to `depth` levels (-1 all), or CPS's 404. For
 * NCMP's operational datastore, which reads the data-sync cache. The
 * names are borrowed. */
void cps_api_read_node(cps_api *api, ncmp_http_request *req, const char *dataspace,
                       const char *anchor, const char *xpath, int depth);

/* The role row. */
typedef struct cps cps;

/* With the rest role selected too, nothing to start (rest serves the
 * routes); otherwise a pool and a server of its own. On success *c is
 * owned by the caller (cps_stop, cps_destroy). */
int cps_start(cps **c, const ncmp_services *svc, ncmp_err *err);
void cps_stop(cps *c);
void cps_destroy(cps *c);

#endif
