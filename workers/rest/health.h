/*
 * Health, readiness, metrics, the build's info and the OpenAPI document on
 * the REST server, at the paths Spring Boot's actuator and springdoc give
 * NCMP (what its deployments probe and scrape).
 *
 *   GET /actuator/health            {"status":"UP"} while the process serves
 *                                   (what NCMP's clients and DMI plugins
 *                                   expect of a health endpoint)
 *   GET /actuator/health/liveness   the same: Spring's liveness group, UP
 *                                   while the process serves requests
 *   GET /actuator/health/readiness  200 {"status":"UP",...} when the
 *                                   database answers and the broker gives
 *                                   metadata, else 503 {"status":"DOWN",...}
 *                                   naming what is down
 *   GET /metrics                    Prometheus text format 0.0.4
 *   GET /actuator/prometheus        (lib/ncmp_metrics.h), including
 *                                   ncmp_inventory_handles{state}; one
 *                                   exposition at two paths
 *   GET /actuator/info              {"build":{"artifact":"ncmpd","name":
 *                                   "ncmpd","version":"<NCMPD_VERSION>"}}
 *   GET /v3/api-docs                the OpenAPI 3 document of every route
 *                                   (docs/openapi.json, compiled in)
 *
 * /actuator/... are open (ncmp_http_route_open): served without
 * credentials when http.auth-* is set, as NCMP permits every /actuator path.
 * /metrics and /v3/api-docs need the credentials like every other path.
 */
#ifndef NCMPD_HEALTH_H
#define NCMPD_HEALTH_H

#include "ncmp_config.h"
#include "ncmp_err.h"
#include "ncmp_http.h"
#include "rest_db.h"
#include "role.h"

typedef struct health health;

/* The OpenAPI document served at /v3/api-docs (generated from
 * docs/openapi.json by docs/embed.cmake): JSON, NUL-terminated. */
extern const char ncmp_openapi_json[];
extern const size_t ncmp_openapi_json_len;

/* Add the routes to `server` (before it starts); `pool` is borrowed. */
int health_start(health **h, const ncmp_services *svc, ncmp_http_server *server, rest_pool *pool,
                 ncmp_err *err);
void health_stop(health *h);

/* The server's after-response hook: HTTP metrics. */
void health_http_observe(void *arg, const char *method, const char *route, int status,
                         double latency_ms);

#endif
