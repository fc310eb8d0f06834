/*
 * The rest role: NCMP's inventory REST API on ncmp_http.
 *
 * Northbound (clients): POST /ncmp/v1/ch/searches and /id-searches, GET
 * /ncmp/v1/ch/{ref} (longest alternate-id match), .../properties, .../state,
 * .../modules, .../modules/definitions. Southbound (DMI plugins): POST
 * /ncmpInventory/v1/ch (registration, through the Kafka pipeline),
 * .../ch/searches, .../ch/searchCmHandles, GET .../ch/cmHandles and
 * .../ch?distinguishedName=. docs/rest.md describes each.
 *
 * When the cps role is selected too, CPS's API (workers/cps) is served on
 * the same server, pool and port.
 *
 * Every search is one SQL statement whose rows PostgreSQL renders as JSON;
 * lists are streamed to the client block by block from a cursor.
 */
#ifndef NCMPD_REST_H
#define NCMPD_REST_H

#include "ncmp_err.h"
#include "ncmp_http.h"
#include "ncmp_jwt.h"
#include "role.h"

typedef struct rest rest;

/* The HTTP server's options from http.* (shared with the cps role when it
 * runs a server of its own). The strings are borrowed from `cfg`. In jwt
 * mode (http.auth-mode) *jwt is a new token verifier, to free with
 * ncmp_jwt_free after the server; otherwise NULL. FATAL when the
 * authentication settings do not fit together. */
int rest_http_options(ncmp_http_options *o, const ncmp_config *cfg, ncmp_jwt **jwt, ncmp_err *err);

/* Open the database pool, start the registration side (its producer and
 * outcome consumer) and the HTTP server on http.host:http.port; data
 * access uses the process's DMI client and producer (`svc`, borrowed). On
 * success *r is owned by the caller (rest_stop, then rest_destroy). */
int rest_start(rest **r, const ncmp_services *svc, ncmp_err *err);

/* The HTTP server (borrowed; for listing its routes with
 * ncmp_http_routes_each). */
ncmp_http_server *rest_http_server(const rest *r);

/* Stop serving: waiting registrations are answered 503, the DMI calls in
 * flight are answered, the server closes. Accepts NULL; once is enough. */
void rest_stop(rest *r);

/* Stop if not yet stopped, close the pool, free. Accepts NULL. */
void rest_destroy(rest *r);

#endif
