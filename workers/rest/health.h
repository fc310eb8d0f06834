/*
 * Health, readiness and metrics on the REST server.
 *
 *   GET /actuator/health            {"status":"UP"} while the process serves
 *                                   (what NCMP's clients and DMI plugins
 *                                   expect of a health endpoint)
 *   GET /actuator/health/readiness  200 {"status":"UP",...} when the
 *                                   database answers and the broker gives
 *                                   metadata, else 503 {"status":"DOWN",...}
 *                                   naming what is down
 *   GET /metrics                    Prometheus text format 0.0.4
 *                                   (lib/ncmp_metrics.h), including
 *                                   ncmp_inventory_handles{state}
 */
#ifndef NCMPD_HEALTH_H
#define NCMPD_HEALTH_H

#include "ncmp_config.h"
#include "ncmp_err.h"
#include "ncmp_http.h"
#include "rest_db.h"
#include "role.h"

typedef struct health health;

/* Add the routes to `server` (before it starts); `pool` is borrowed. */
int health_start(health **h, const ncmp_services *svc, ncmp_http_server *server, rest_pool *pool,
                 ncmp_err *err);
void health_stop(health *h);

/* The server's after-response hook: HTTP metrics. */
void health_http_observe(void *arg, const char *method, const char *route, int status,
                         double latency_ms);

#endif
