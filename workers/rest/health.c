#include "health.h"

#include <librdkafka/rdkafka.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_kafka.h"
#include "ncmp_kafka_config.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"

#define CHECK_TIMEOUT_MS 2000

struct health {
    rest_pool *pool;
    ncmp_producer *probe; /* the process's, asked for the broker's metadata */
    ncmp_metric *handles; /* ncmp_inventory_handles{state} */
    int collector;
};

static const char *const STATES[] = {"ADVISED", "READY", "LOCKED", "DELETING"};
#define NSTATES (sizeof(STATES) / sizeof(STATES[0]))

static void h_health(ncmp_http_request *req, void *arg)
{
    static const char body[] = "{\"status\":\"UP\"}";
    ncmp_http_respond(req, 200, "application/json", body, sizeof(body) - 1);
}

static int db_up(health *h, char *why, size_t len)
{
    ncmp_db *db = NULL;
    ncmp_err err;
    int ok;

    if (rest_pool_get(h->pool, CHECK_TIMEOUT_MS, &db, &err) != 0) {
        snprintf(why, len, "%s", err.msg);
        return 0;
    }
    ok = ncmp_db_exec(db, "SELECT 1", &err) == 0;
    if (!ok)
        snprintf(why, len, "%s", err.msg);
    rest_pool_put(h->pool, db);
    return ok;
}

static int broker_up(health *h, char *why, size_t len)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e =
        rd_kafka_metadata(ncmp_producer_rk(h->probe), 0, NULL, &md, CHECK_TIMEOUT_MS);

    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(why, len, "%s", rd_kafka_err2str(e));
        return 0;
    }
    rd_kafka_metadata_destroy(md);
    return 1;
}

static void h_readiness(ncmp_http_request *req, void *arg)
{
    health *h = arg;
    char dbwhy[256] = "", brwhy[256] = "";
    int db = db_up(h, dbwhy, sizeof(dbwhy)), br = broker_up(h, brwhy, sizeof(brwhy));
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_appendf(&b, "{\"status\":\"%s\",\"components\":{\"db\":{\"status\":\"%s\"",
                     db && br ? "UP" : "DOWN", db ? "UP" : "DOWN");
    if (!db) {
        ncmp_buf_append_str(&b, ",\"reason\":");
        ncmp_buf_append_json_string(&b, dbwhy);
    }
    ncmp_buf_appendf(&b, "},\"kafka\":{\"status\":\"%s\"", br ? "UP" : "DOWN");
    if (!br) {
        ncmp_buf_append_str(&b, ",\"reason\":");
        ncmp_buf_append_json_string(&b, brwhy);
    }
    ncmp_buf_append_str(&b, "}}}");
    ncmp_http_respond_json(req, db && br ? 200 : 503, &b);
    ncmp_buf_free(&b);
}

/* GET /metrics and GET /actuator/prometheus */
static void h_metrics(ncmp_http_request *req, void *arg)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_metrics_render(&b);
    ncmp_http_respond(req, 200, NCMP_METRICS_CONTENT_TYPE, b.data ? b.data : "", b.len);
    ncmp_buf_free(&b);
}

/* GET /actuator/info: Spring's build section */
static void h_info(ncmp_http_request *req, void *arg)
{
    static const char body[] =
        "{\"build\":{\"artifact\":\"ncmpd\",\"name\":\"ncmpd\",\"version\":\"" NCMPD_VERSION "\"}}";
    ncmp_http_respond(req, 200, "application/json", body, sizeof(body) - 1);
}

/* GET /v3/api-docs */
static void h_api_docs(ncmp_http_request *req, void *arg)
{
    ncmp_http_respond(req, 200, "application/json", ncmp_openapi_json, ncmp_openapi_json_len);
}

/* At each scrape: handles by state, one indexed count per state. The
 * scrape runs on a server thread, so that it answers under load: it takes
 * a database connection only when one is free at once, and otherwise
 * leaves the last counts. */
static void collect_handles(void *arg)
{
    health *h = arg;
    ncmp_db *db = NULL;
    PGresult *res = NULL;
    ncmp_err err;

    if (rest_pool_get(h->pool, 0, &db, &err) != 0)
        return;
    if (ncmp_db_query(db, "SELECT state, count(*) FROM cm_handle GROUP BY state", 0, NULL, &res,
                      &err) == 0) {
        for (size_t s = 0; s < NSTATES; s++) {
            const char *labels[] = {STATES[s]};
            double n = 0;
            for (int r = 0; r < PQntuples(res); r++)
                if (strcmp(PQgetvalue(res, r, 0), STATES[s]) == 0)
                    n = atof(PQgetvalue(res, r, 1));
            ncmp_gauge_set(ncmp_gauge_get(h->handles, labels), n);
        }
    } else {
        log_debug("rest", "metrics: handles by state: %s", err.msg);
    }
    PQclear(res);
    rest_pool_put(h->pool, db);
}

void health_http_observe(void *arg, const char *method, const char *route, int status,
                         double latency_ms)
{
    ncmp_metrics_http_observe(method, route, status, latency_ms / 1000.0);
}

int health_start(health **out, const ncmp_services *svc, ncmp_http_server *server, rest_pool *pool,
                 ncmp_err *err)
{
    health *h = ncmp_xcalloc(1, sizeof(*h));

    h->pool = pool;
    h->probe = svc->producer;
    h->handles = ncmp_metrics_lib_get()->inventory_handles;
    h->collector = ncmp_metrics_collector_add(collect_handles, h);
    /* the probes answer from the server thread, whatever the queue */
    ncmp_http_route_open_inline(server, "GET", "/actuator/health", h_health, h);
    ncmp_http_route_open_inline(server, "GET", "/actuator/health/liveness", h_health, h);
    ncmp_http_route_open(server, "GET", "/actuator/health/readiness", h_readiness, h);
    ncmp_http_route_open_inline(server, "GET", "/actuator/prometheus", h_metrics, h);
    ncmp_http_route_open_inline(server, "GET", "/actuator/info", h_info, h);
    ncmp_http_route_inline(server, "GET", "/metrics", h_metrics, h);
    ncmp_http_route_inline(server, "GET", "/v3/api-docs", h_api_docs, h);
    *out = h;
    return 0;
}

void health_stop(health *h)
{
    if (!h)
        return;
    ncmp_metrics_collector_remove(h->collector);
    free(h);
}
