#include "dmistub_http.h"

#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dmistub_datajob.h"
#include "dmistub_events.h"
#include "dmistub_models.h"
#include "dmistub_provmns.h"
#include "dmistub_timer.h"
#include "ncmp_buf.h"
#include "ncmp_json.h"
#include "ncmp_log.h"
#include "ncmp_time.h"

#define JSON_TYPE     "application/json"
#define BUSY_TAGS_MAX 100000
#define GARBAGE_BODY  "<html><body>this is not JSON {\"moduleName\":</body></html>"

typedef struct stub_stats {
    atomic_long references[DMISTUB_TAGS]; /* /modules answered, per module set */
    atomic_long resources[DMISTUB_TAGS];  /* /moduleResources answered (fault modes too) */
    atomic_long error_tag;                /* errorTag refused */
    atomic_long busy;                     /* 503 in the busy window */
    atomic_long reads, writes;            /* pass-through */
    atomic_long async_passthrough;        /* pass-through with a topic */
    atomic_long batches, batch_handles;   /* POST /dmi/v1/data */
    atomic_long provmns_reads;            /* GET /ProvMnS/v1/... */
    atomic_long provmns_writes;           /* PUT, PATCH, DELETE /ProvMnS/v1/... */
    atomic_long provmns_actions;          /* POST /prov-mns-extensions/.../actions/... */
    atomic_long policy_requests;          /* POST /operation-permission/v1/permissions */
    atomic_long policy_decisions;         /* the id of the last decision */
    atomic_long datajob_writes;           /* POST /dmi/v1/cmwriteJob (errors too) */
    atomic_long datajob_reads;            /* POST /dmi/v1/cmreadJob (errors too) */
    atomic_long datajob_operations;       /* data[] items of the sub-jobs accepted */
    atomic_long datajob_status;           /* GET .../dataProducerJob/{id}/status */
    atomic_long datajob_result;           /* GET .../dataProducerJob/{id}/result */
    atomic_long bad_requests;             /* 400, 404, 405, 413, 415 */
    atomic_long unauthorized;             /* 401 */
    atomic_long data_reads;               /* reads of the --data-root (errors too) */
} stub_stats;

typedef struct busy_tag {
    char *tag;
    double first_ms;
} busy_tag;

/* What POST /stub/modules set for a tag. */
typedef struct tag_models {
    char *tag;
    int generation; /* > 0: sources of that generation */
    int failing;    /* /modules and /moduleResources answer 500 */
} tag_models;

struct dmistub_server {
    const dmistub_opts *opts;
    struct MHD_Daemon *daemon;
    MHD_socket listen_fd; /* after quiesce: closed by us after the stop */
    dmistub_timer *timer;
    dmistub_models *models;
    dmistub_data *data;     /* NULL without --data-model */
    dmistub_events *events; /* NULL without --kafka */
    dmistub_provmns *provmns;
    dmistub_datajob *datajob;
    char *auth_token;   /* base64 of user:password, NULL without --auth */
    char *default_base; /* http://host:port, when a request has no Host */
    uint16_t port;
    atomic_int health_up;
    atomic_long in_flight; /* requests between their first call and completion */
    pthread_mutex_t busy_lock;
    busy_tag *busy;
    size_t nbusy, capbusy;
    tag_models *models_set; /* under busy_lock */
    size_t nmodels_set;
    stub_stats stats;
};

/* One request: its body, then its prepared answer. */
typedef struct stub_req {
    char *uri;   /* as received: path and query, not decoded */
    int started; /* the first call (headers only) is past */
    ncmp_buf body;
    int too_large;
    int prepared;
    long delay_ms; /* 0: answer now; < 0: only when stopping */
    unsigned status;
    ncmp_buf out;
    const char *static_body; /* borrowed answer, instead of out */
    size_t static_len;
    const char *content_type;
    const char *allow;  /* for 405 */
    int auth_challenge; /* for 401 */
} stub_req;

/* --- answers --------------------------------------------------------------- */

static const char *reason(unsigned status)
{
    switch (status) {
    case 400:
        return "BAD_REQUEST";
    case 401:
        return "UNAUTHORIZED";
    case 404:
        return "NOT_FOUND";
    case 405:
        return "METHOD_NOT_ALLOWED";
    case 413:
        return "PAYLOAD_TOO_LARGE";
    case 415:
        return "UNSUPPORTED_MEDIA_TYPE";
    case 500:
        return "INTERNAL_SERVER_ERROR";
    case 503:
        return "SERVICE_UNAVAILABLE";
    default:
        return "ERROR";
    }
}

static void reply_json(stub_req *r, unsigned status, const char *json)
{
    r->status = status;
    r->content_type = JSON_TYPE;
    ncmp_buf_reset(&r->out);
    ncmp_buf_append_str(&r->out, json);
}

static void reply_error(stub_req *r, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reply_error(stub_req *r, unsigned status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    r->status = status;
    r->content_type = JSON_TYPE;
    r->static_body = NULL;
    r->delay_ms = 0;
    ncmp_buf_reset(&r->out);
    ncmp_buf_appendf(&r->out, "{\"status\":\"%u %s\",\"message\":", status, reason(status));
    ncmp_buf_append_json_string(&r->out, msg);
    ncmp_buf_append_char(&r->out, '}');
}

static void bad_request(dmistub_server *srv, stub_req *r, unsigned status, const char *msg)
{
    atomic_fetch_add(&srv->stats.bad_requests, 1);
    reply_error(r, status, "%s", msg);
}

/* The delay of an answer that passed validation. */
static long answer_delay(const dmistub_server *srv, long base_ms)
{
    return srv->opts->hang ? -1 : base_ms + srv->opts->extra_delay_ms;
}

static int require_method(dmistub_server *srv, stub_req *r, const char *method, const char *want)
{
    if (strcmp(method, want) == 0)
        return 1;
    atomic_fetch_add(&srv->stats.bad_requests, 1);
    reply_error(r, 405, "method %s is not allowed here; use %s", method, want);
    r->allow = want;
    return 0;
}

/* The request body as JSON (the caller puts it), or NULL after answering
 * 400 (a body of `null` too). */
static json_object *body_json(dmistub_server *srv, stub_req *r)
{
    json_object *doc = NULL;
    ncmp_err err;
    char msg[700];

    if (ncmp_json_parse(r->body.data ? r->body.data : "", r->body.len, &doc, &err) != 0) {
        snprintf(msg, sizeof(msg), "malformed JSON body: %s", err.msg);
        bad_request(srv, r, 400, msg);
        return NULL;
    }
    if (!doc)
        bad_request(srv, r, 400, "the request body must not be null");
    return doc;
}

/* The request body as a JSON object (the caller puts it), or NULL after
 * answering 400. */
static json_object *body_object(dmistub_server *srv, stub_req *r)
{
    json_object *doc = body_json(srv, r);

    if (doc && !json_object_is_type(doc, json_type_object)) {
        json_object_put(doc);
        bad_request(srv, r, 400, "the request body must be a JSON object");
        return NULL;
    }
    return doc;
}

/* "scheme://host:port" of this request, as the reference derives it. */
static void network_base(dmistub_server *srv, struct MHD_Connection *conn, ncmp_buf *out)
{
    const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);

    if (host && *host)
        ncmp_buf_appendf(out, "http://%s", host);
    else
        ncmp_buf_append_str(out, srv->default_base);
}

/* --- the busy window ------------------------------------------------------- */

/* Is `tag` within --busy-ms of its first request? The first request
 * starts the window. Requests without a tag are never busy. */
static int tag_busy(dmistub_server *srv, const char *tag, long *left_ms)
{
    double now = ncmp_now_ms(), first = now;
    size_t i;

    if (srv->opts->busy_ms <= 0 || !tag || !*tag)
        return 0;
    pthread_mutex_lock(&srv->busy_lock);
    for (i = 0; i < srv->nbusy && strcmp(srv->busy[i].tag, tag) != 0; i++)
        ;
    if (i < srv->nbusy) {
        first = srv->busy[i].first_ms;
    } else if (srv->nbusy < BUSY_TAGS_MAX) {
        if (srv->nbusy == srv->capbusy) {
            srv->capbusy = srv->capbusy ? srv->capbusy * 2 : 16;
            srv->busy = ncmp_xrealloc(srv->busy, srv->capbusy * sizeof(*srv->busy));
        }
        srv->busy[srv->nbusy++] = (busy_tag){ncmp_xstrdup(tag), now};
    }
    pthread_mutex_unlock(&srv->busy_lock);
    *left_ms = (long)(first + (double)srv->opts->busy_ms - now);
    return *left_ms > 0;
}

/* --- module endpoints ------------------------------------------------------ */

/* What POST /stub/modules set for `tag` (NULL is ""). */
static tag_models models_of(dmistub_server *srv, const char *tag)
{
    tag_models t = {NULL, 0, 0};

    pthread_mutex_lock(&srv->busy_lock);
    for (size_t i = 0; i < srv->nmodels_set; i++)
        if (strcmp(srv->models_set[i].tag, tag ? tag : "") == 0)
            t = srv->models_set[i];
    pthread_mutex_unlock(&srv->busy_lock);
    return t;
}

static void models_set_clear(dmistub_server *srv)
{
    pthread_mutex_lock(&srv->busy_lock);
    for (size_t i = 0; i < srv->nmodels_set; i++)
        free(srv->models_set[i].tag);
    free(srv->models_set);
    srv->models_set = NULL;
    srv->nmodels_set = 0;
    pthread_mutex_unlock(&srv->busy_lock);
}

/* POST /stub/modules {"moduleSetTag","generation","failing"}: from now on
 * the tag's sources are of that generation (0: the reference's), or its
 * module requests fail with 500. */
static void h_set_models(dmistub_server *srv, stub_req *r, const char *method)
{
    json_object *doc, *v;
    const char *tag = NULL;
    tag_models t = {NULL, 0, 0};
    size_t i;
    ncmp_err err;

    if (!require_method(srv, r, method, "POST") || !(doc = body_object(srv, r)))
        return;
    if (ncmp_json_string_field(doc, "moduleSetTag", &tag, &err) != 0 || !tag) {
        bad_request(srv, r, 400, "expected {\"moduleSetTag\",\"generation\",\"failing\"}");
        json_object_put(doc);
        return;
    }
    if (json_object_object_get_ex(doc, "generation", &v))
        t.generation = json_object_get_int(v);
    if (json_object_object_get_ex(doc, "failing", &v))
        t.failing = json_object_get_boolean(v);
    pthread_mutex_lock(&srv->busy_lock);
    for (i = 0; i < srv->nmodels_set && strcmp(srv->models_set[i].tag, tag) != 0; i++)
        ;
    if (i == srv->nmodels_set) {
        srv->models_set =
            ncmp_xrealloc(srv->models_set, (srv->nmodels_set + 1) * sizeof(*srv->models_set));
        srv->models_set[srv->nmodels_set++].tag = ncmp_xstrdup(tag);
    }
    srv->models_set[i].generation = t.generation;
    srv->models_set[i].failing = t.failing;
    pthread_mutex_unlock(&srv->busy_lock);
    log_info("stub", "module set tag '%s': generation %d%s", tag, t.generation,
             t.failing ? ", failing" : "");
    reply_json(r, 200, "{\"status\":\"set\"}");
    json_object_put(doc);
}

/* Does module set `tag` get the --data-model? (Every tag when no
 * --data-tag is given.) */
static int data_tag(const dmistub_server *srv, const char *tag)
{
    return srv->data && (!*srv->opts->data_tags || dmistub_opts_tag_in(srv->opts->data_tags, tag));
}

static void module_resources(dmistub_server *srv, stub_req *r, json_object *doc, const char *tag)
{
    const dmistub_opts *o = srv->opts;
    int t = dmistub_tag_index(tag);
    json_object *data = NULL, *modules = NULL;
    ncmp_err err;

    if (ncmp_json_object_field(doc, "data", &data, &err) != 0 ||
        (data && ncmp_json_array_field(data, "modules", &modules, &err) != 0)) {
        bad_request(srv, r, 400, err.msg);
        return;
    }
    if (dmistub_opts_tag_in(o->error_tags, tag)) {
        reply_error(r, 500, "simulated server error for module set tag %s", tag);
    } else if (dmistub_opts_tag_in(o->garbage_tags, tag)) {
        r->status = 200;
        r->content_type = JSON_TYPE;
        r->static_body = GARBAGE_BODY;
        r->static_len = sizeof(GARBAGE_BODY) - 1;
    } else {
        int rc;
        ncmp_buf_reset(&r->out);
        rc = data_tag(srv, tag)
                 ? dmistub_data_resources(srv->data, modules, &r->out, &err)
                 : dmistub_models_resources(srv->models, t, modules,
                                            dmistub_opts_tag_in(o->bad_yang_tags, tag),
                                            models_of(srv, tag).generation, &r->out, &err);
        if (rc != 0) {
            bad_request(srv, r, 400, err.msg);
            return;
        }
        r->status = 200;
        r->content_type = JSON_TYPE;
    }
    atomic_fetch_add(&srv->stats.resources[t], 1);
    r->delay_ms = answer_delay(srv, o->module_resources_delay_ms);
}

static void module_references(dmistub_server *srv, stub_req *r, const char *tag)
{
    int t = dmistub_tag_index(tag);

    r->status = 200;
    r->content_type = JSON_TYPE;
    r->static_body = data_tag(srv, tag) ? dmistub_data_references(srv->data, &r->static_len)
                                        : dmistub_models_references(srv->models, t, &r->static_len);
    atomic_fetch_add(&srv->stats.references[t], 1);
    r->delay_ms = answer_delay(srv, srv->opts->module_references_delay_ms);
}

static void h_modules(dmistub_server *srv, stub_req *r, const char *method, int resources)
{
    json_object *doc;
    const char *tag;
    long left_ms;
    ncmp_err err;

    if (!require_method(srv, r, method, "POST") || !(doc = body_object(srv, r)))
        return;
    if (ncmp_json_string_field(doc, "moduleSetTag", &tag, &err) != 0) {
        bad_request(srv, r, 400, err.msg);
    } else if (tag && strcmp(tag, "errorTag") == 0) {
        atomic_fetch_add(&srv->stats.error_tag, 1);
        reply_error(r, 400, "module set tag errorTag is refused (simulated error)");
    } else if (models_of(srv, tag).failing) {
        reply_error(r, 500, "simulated failure of module set tag %s (POST /stub/modules)",
                    tag ? tag : "");
    } else if (tag_busy(srv, tag, &left_ms)) {
        atomic_fetch_add(&srv->stats.busy, 1);
        reply_error(r, 503, "initial processing of module set tag %s: busy for another %ld ms", tag,
                    left_ms);
    } else if (resources) {
        module_resources(srv, r, doc, tag);
    } else {
        module_references(srv, r, tag);
    }
    json_object_put(doc);
}

/* --- data endpoints -------------------------------------------------------- */

static int operation_known(const char *op)
{
    static const char *const ops[] = {"read", "create", "update", "patch", "delete"};

    for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(op, ops[i]) == 0)
            return 1;
    return 0;
}

static const char *query(struct MHD_Connection *conn, const char *name)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
    return v && *v ? v : NULL;
}

/* The result goes to Kafka as a DataOperationEvent (with --async-legacy a
 * DmiAsyncRequestResponseEvent); the answer is 202. */
static void passthrough_async(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r,
                              json_object *doc, const char *id, const char *operation,
                              long delay_ms)
{
    const char *request_id = NULL, *options = query(conn, "options");
    json_object *ops, *op, *handles, *handle;
    dmistub_job *job;
    ncmp_buf base = NCMP_BUF_INIT;
    ncmp_err err;

    if (!srv->events) {
        reply_error(r, 503, "pass-through with a topic needs Kafka: start the stub with --kafka");
        return;
    }
    if (ncmp_json_string_field(doc, "requestId", &request_id, &err) != 0 || !request_id) {
        bad_request(srv, r, 400, "requestId (a string) is required in the body with a topic");
        return;
    }
    op = json_object_new_object();
    json_object_object_add(op, "operationId", json_object_new_string(request_id));
    json_object_object_add(op, "resourceIdentifier",
                           json_object_new_string(query(conn, "resourceIdentifier")));
    if (options)
        json_object_object_add(op, "options", json_object_new_string(options));
    handles = json_object_new_array();
    handle = json_object_new_object();
    json_object_object_add(handle, "id", json_object_new_string(id));
    json_object_array_add(handles, handle);
    json_object_object_add(op, "cmHandles", handles);
    ops = json_object_new_array();
    json_object_array_add(ops, op);
    network_base(srv, conn, &base);
    job = dmistub_job_new(request_id, query(conn, "topic"), base.data, ops);
    if (srv->opts->async_legacy)
        dmistub_job_set_legacy(job, operation);
    dmistub_events_submit_after(srv->events, srv->timer, delay_ms, job);
    ncmp_buf_free(&base);
    atomic_fetch_add(&srv->stats.async_passthrough, 1);
    r->status = 202;
    r->content_type = JSON_TYPE;
    ncmp_buf_append_str(&r->out, "{\"requestId\":");
    ncmp_buf_append_json_string(&r->out, request_id);
    ncmp_buf_append_char(&r->out, '}');
    r->delay_ms = answer_delay(srv, 0);
}

/* A read of a root of the --data-model (options=(fields=<root>)):
 * answered here (1), or not about the model (0). The first
 * --data-error-reads reads of the tree's root answer 500. */
static int data_read(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r, const char *id)
{
    int sel = srv->data ? dmistub_data_selects(srv->data, query(conn, "options")) : -1;

    if (sel < 0)
        return 0;
    if (sel == 0) {
        reply_json(r, 200, "{}");
        return 1;
    }
    if (atomic_fetch_add(&srv->stats.data_reads, 1) < srv->opts->data_error_reads) {
        reply_error(r, 500, "simulated failure of a read of %s", id);
        return 1;
    }
    r->status = 200;
    r->content_type = JSON_TYPE;
    dmistub_data_append(srv->data, id, &r->out);
    return 1;
}

static void h_passthrough(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r,
                          const char *method, const char *id)
{
    json_object *doc;
    const char *op = NULL;
    ncmp_buf network_id = NCMP_BUF_INIT;
    ncmp_err err;
    long delay;

    if (!require_method(srv, r, method, "POST"))
        return;
    if (!query(conn, "resourceIdentifier")) {
        bad_request(srv, r, 400, "the resourceIdentifier query parameter is required");
        return;
    }
    if (!(doc = body_object(srv, r)))
        return;
    if (ncmp_json_string_field(doc, "operation", &op, &err) != 0 || !operation_known(op)) {
        bad_request(srv, r, 400, "operation must be one of read, create, update, patch, delete");
        json_object_put(doc);
        return;
    }
    delay = strcmp(op, "read") == 0 ? srv->opts->read_delay_ms : srv->opts->write_delay_ms;
    atomic_fetch_add(strcmp(op, "read") == 0 ? &srv->stats.reads : &srv->stats.writes, 1);
    if (query(conn, "topic")) {
        passthrough_async(srv, conn, r, doc, id, op, delay);
    } else if (strcmp(op, "read") == 0 && data_read(srv, conn, r, id)) {
        r->delay_ms = answer_delay(srv, delay);
    } else {
        network_base(srv, conn, &network_id);
        ncmp_buf_appendf(&network_id, "-%s", id);
        r->status = 200;
        r->content_type = JSON_TYPE;
        dmistub_topology_append(&r->out, network_id.data);
        r->delay_ms = answer_delay(srv, delay);
        ncmp_buf_free(&network_id);
    }
    json_object_put(doc);
}

static void h_batch(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r,
                    const char *method)
{
    const char *topic = query(conn, "topic"), *request_id = query(conn, "requestId");
    json_object *doc, *ops = NULL;
    ncmp_buf base = NCMP_BUF_INIT;
    size_t handles;
    ncmp_err err;

    if (!require_method(srv, r, method, "POST"))
        return;
    if (!topic || !request_id) {
        bad_request(srv, r, 400, "the topic and requestId query parameters are required");
        return;
    }
    if (!srv->events) {
        reply_error(r, 503, "batch read needs Kafka: start the stub with --kafka");
        return;
    }
    if (!(doc = body_object(srv, r)))
        return;
    json_object_object_get_ex(doc, "operations", &ops);
    if (dmistub_job_validate(ops, &handles, &err) != 0) {
        bad_request(srv, r, 400, err.msg);
        json_object_put(doc);
        return;
    }
    network_base(srv, conn, &base);
    dmistub_events_submit_after(
        srv->events, srv->timer, srv->opts->read_delay_ms,
        dmistub_job_new(request_id, topic, base.data, json_object_get(ops)));
    ncmp_buf_free(&base);
    json_object_put(doc);
    atomic_fetch_add(&srv->stats.batches, 1);
    atomic_fetch_add(&srv->stats.batch_handles, (long)handles);
    r->status = 202;
    r->delay_ms = answer_delay(srv, 0);
}

/* --- ProvMnS, its actions and the policy executor ------------------------- */

#define ACTIONS_PREFIX     "/prov-mns-extensions/v1alpha1/actions/"
#define PERMISSIONS_PATH   "/operation-permission/v1/permissions"
#define PROVMNS_METHODS    "GET, PUT, PATCH, DELETE"
#define PATCH_TYPES_ACCEPT "application/json-patch+json or application/3gpp-json-patch+json"

static const char *const json_types[] = {JSON_TYPE, NULL};
static const char *const patch_types[] = {"application/json-patch+json",
                                          "application/3gpp-json-patch+json", NULL};

static const char *header(struct MHD_Connection *conn, const char *name)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
    return v ? v : "";
}

/* The path of the request as received (not decoded), without its query;
 * *query is what follows '?' ("" when nothing). Owned by the caller. */
static char *raw_path(const stub_req *r, const char *url, const char **query)
{
    char *path = ncmp_xstrdup(r->uri ? r->uri : url), *q = strchr(path, '?');

    if (q)
        *q++ = '\0';
    *query = q ? q : "";
    return path;
}

/* Keep the request for GET /stub/provmns/last: its path and query as
 * received. */
static void provmns_keep(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r,
                         const char *url, const char *method)
{
    const char *q;
    char *path = raw_path(r, url, &q);

    dmistub_provmns_keep(srv->provmns, method, path, q, header(conn, MHD_HTTP_HEADER_CONTENT_TYPE),
                         header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
                         r->body.data ? r->body.data : "");
    free(path);
}

/* The dmiSimulation markers of `url`, as the reference applies them: an
 * httpError marker answers that status at once (without the configured
 * delay); slowResponse adds its milliseconds. Sets the delay; 1 when the
 * answer is the simulated error. */
static int simulated(dmistub_server *srv, stub_req *r, const char *url, long delay_ms)
{
    unsigned http_error;
    long slow_ms;

    dmistub_provmns_simulation(url, &http_error, &slow_ms);
    if (http_error) {
        r->status = http_error;
        r->content_type = JSON_TYPE;
        ncmp_buf_appendf(&r->out, "{\"error\":\"simulated %u\"}", http_error);
        delay_ms = 0;
    }
    r->delay_ms = answer_delay(srv, delay_ms + slow_ms);
    return http_error != 0;
}

static void reply_static(stub_req *r, const char *body, size_t len)
{
    r->status = 200;
    r->content_type = JSON_TYPE;
    r->static_body = body;
    r->static_len = len;
}

/* The body of a PUT (a JSON object) or a PATCH (a JSON Patch): 0, or -1
 * after answering 415 or 400. */
static int provmns_body_check(dmistub_server *srv, stub_req *r, const char *content_type, int put)
{
    json_object *doc;
    ncmp_err err;
    int rc = 0;

    if (!dmistub_media_type_in(content_type, put ? json_types : patch_types)) {
        bad_request(srv, r, 415,
                    put ? "PUT needs Content-Type " JSON_TYPE
                        : "PATCH needs Content-Type " PATCH_TYPES_ACCEPT);
        return -1;
    }
    if (!(doc = put ? body_object(srv, r) : body_json(srv, r)))
        return -1;
    if (!put && dmistub_provmns_check_patch(doc, &err) != 0) {
        bad_request(srv, r, 400, err.msg);
        rc = -1;
    }
    json_object_put(doc);
    return rc;
}

static void h_provmns(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r,
                      const char *url, const char *method)
{
    int get = strcmp(method, "GET") == 0, put = strcmp(method, "PUT") == 0;
    int patch = strcmp(method, "PATCH") == 0, del = strcmp(method, "DELETE") == 0;
    const dmistub_opts *o = srv->opts;
    size_t len;

    provmns_keep(srv, conn, r, url, method);
    if (!get && !put && !patch && !del) {
        atomic_fetch_add(&srv->stats.bad_requests, 1);
        reply_error(r, 405, "method %s is not allowed here; use %s", method, PROVMNS_METHODS);
        r->allow = PROVMNS_METHODS;
        return;
    }
    atomic_fetch_add(get ? &srv->stats.provmns_reads : &srv->stats.provmns_writes, 1);
    if ((put || patch) &&
        provmns_body_check(srv, r, header(conn, MHD_HTTP_HEADER_CONTENT_TYPE), put) != 0)
        return;
    if (simulated(srv, r, url, get ? o->provmns_read_delay_ms : o->provmns_write_delay_ms))
        return;
    if (get) {
        const char *body = dmistub_provmns_get_body(srv->provmns, &len);
        reply_static(r, body, len);
    } else if (put) {
        reply_static(r, DMISTUB_PROVMNS_PUT_BODY, sizeof(DMISTUB_PROVMNS_PUT_BODY) - 1);
    } else if (patch) {
        const char *body = dmistub_provmns_patch_body(srv->provmns, &len);
        reply_static(r, body, len);
    } else {
        r->status = 200; /* no body, as the reference */
    }
}

/* POST /prov-mns-extensions/v1alpha1/actions/{dn}/{action}: no delay of
 * its own (the reference has none), markers and --extra-delay-ms apply. */
static void h_action(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r, const char *url,
                     const char *method)
{
    const char *rest = url + sizeof(ACTIONS_PREFIX) - 1, *slash = strrchr(rest, '/');
    json_object *doc;

    provmns_keep(srv, conn, r, url, method);
    if (!require_method(srv, r, method, "POST"))
        return;
    atomic_fetch_add(&srv->stats.provmns_actions, 1);
    if (!slash || slash == rest || !slash[1]) {
        bad_request(srv, r, 404, "no such action: expected " ACTIONS_PREFIX "{dn}/{action}");
        return;
    }
    if (!dmistub_media_type_in(header(conn, MHD_HTTP_HEADER_CONTENT_TYPE), json_types)) {
        bad_request(srv, r, 415, "an action needs Content-Type " JSON_TYPE);
        return;
    }
    if (!(doc = body_object(srv, r)))
        return;
    json_object_put(doc);
    if (!simulated(srv, r, url, 0))
        reply_static(r, DMISTUB_PROVMNS_ACTION_BODY, sizeof(DMISTUB_PROVMNS_ACTION_BODY) - 1);
}

/* POST /operation-permission/v1/permissions, as the reference policy
 * executor stub: the decision of the first operation's markers, else
 * --policy-decision, after --policy-delay-ms. --hang and
 * --extra-delay-ms do not apply. */
static void h_policy(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r,
                     const char *method)
{
    const char *resource = "", *result;
    dmistub_policy_sim sim;
    json_object *doc;
    ncmp_err err;
    long id;

    if (!require_method(srv, r, method, "POST"))
        return;
    dmistub_policy_keep(srv->provmns, header(conn, MHD_HTTP_HEADER_AUTHORIZATION), r->body.data,
                        r->body.len);
    atomic_fetch_add(&srv->stats.policy_requests, 1);
    if (!dmistub_media_type_in(header(conn, MHD_HTTP_HEADER_CONTENT_TYPE), json_types)) {
        bad_request(srv, r, 415, "a permission request needs Content-Type " JSON_TYPE);
        return;
    }
    if (!(doc = body_json(srv, r)))
        return;
    if (dmistub_policy_check(doc, &resource, &err) != 0) {
        bad_request(srv, r, 400, err.msg);
        json_object_put(doc);
        return;
    }
    dmistub_policy_simulation(resource, &sim);
    json_object_put(doc);
    id = atomic_fetch_add(&srv->stats.policy_decisions, 1) + 1;
    r->delay_ms = srv->opts->policy_delay_ms + sim.slow_ms;
    if (sim.http_error) {
        r->status = sim.http_error; /* no body, as the reference */
        return;
    }
    result = *sim.result ? sim.result : srv->opts->policy_decision;
    r->status = 200;
    r->content_type = JSON_TYPE;
    ncmp_buf_appendf(&r->out, "{\"id\":\"%ld\",\"permissionResult\":", id);
    ncmp_buf_append_json_string(&r->out, result);
    ncmp_buf_append_str(&r->out, ",\"message\":");
    if (*sim.result) {
        ncmp_buf_append_str(&r->out, "\"Stub is mocking a policy response: ");
        ncmp_buf_append_str(&r->out, sim.result); /* letters, digits and '_' */
        ncmp_buf_append_str(&r->out, "\"}");
    } else {
        ncmp_buf_append_str(&r->out, strcmp(result, "allow") == 0
                                         ? "\"all good\"}"
                                         : "\"denied by the stub's --policy-decision\"}");
    }
}

/* GET /stub/provmns/last and /stub/policy/last. */
static void h_last(dmistub_server *srv, stub_req *r, const char *method, int policy)
{
    char *json;

    if (!require_method(srv, r, method, "GET"))
        return;
    json = policy ? dmistub_policy_last(srv->provmns) : dmistub_provmns_last(srv->provmns);
    if (!json) {
        reply_error(r, 404, "no %s request yet", policy ? "permission" : "ProvMnS or action");
        return;
    }
    reply_json(r, 200, json);
    free(json);
}

/* --- data jobs (dmi-openapi-datajob.yml) ---------------------------------- */

#define DATAJOB_PREFIX "/dmi/v1/cmwriteJob/dataProducer/"

/* POST /dmi/v1/cmwriteJob?destination= and /dmi/v1/cmreadJob?destination=:
 * the reference's {"subJobId":"<n>",...} after --datajob-delay-ms; a
 * sub-job of DMISTUB_DATAJOB_FAILING answers 500 without that delay. */
static void h_subjob(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r, const char *url,
                     const char *method, int read)
{
    const char *q;
    dmistub_subjob job;
    ncmp_err err;
    char *path;

    if (!require_method(srv, r, method, "POST"))
        return;
    atomic_fetch_add(read ? &srv->stats.datajob_reads : &srv->stats.datajob_writes, 1);
    if (!MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "destination")) {
        bad_request(srv, r, 400, "the destination query parameter is required");
        return;
    }
    if (dmistub_datajob_check(r->body.data, r->body.len, &job, &err) != 0) {
        bad_request(srv, r, 400, err.msg);
        return;
    }
    atomic_fetch_add(&srv->stats.datajob_operations, (long)job.operations);
    path = raw_path(r, url, &q);
    dmistub_datajob_keep(srv->datajob, &job, path, q, header(conn, MHD_HTTP_HEADER_AUTHORIZATION));
    free(path);
    if (dmistub_datajob_failing(&job)) {
        reply_json(r, 500, DMISTUB_DATAJOB_FAILED_BODY);
        r->delay_ms = answer_delay(srv, 0);
    } else {
        r->status = 200;
        r->content_type = JSON_TYPE;
        dmistub_datajob_answer(srv->datajob, &r->out);
        r->delay_ms = answer_delay(srv, srv->opts->datajob_delay_ms);
    }
}

typedef enum datajob_query { DJ_NONE, DJ_STATUS, DJ_RESULT } datajob_query;

/* Which of .../dataProducer/{id}/dataProducerJob/{id}/status or /result
 * `path` (as received, without its query) is. Each id is one non-empty
 * segment. */
static datajob_query datajob_query_of(const char *path)
{
    const char *p = path + sizeof(DATAJOB_PREFIX) - 1;
    size_t n;

    if (strncmp(path, DATAJOB_PREFIX, sizeof(DATAJOB_PREFIX) - 1) != 0 ||
        (n = strcspn(p, "/")) == 0 || strncmp(p + n, "/dataProducerJob/", 17) != 0)
        return DJ_NONE;
    p += n + 17;
    if ((n = strcspn(p, "/")) == 0)
        return DJ_NONE;
    return strcmp(p + n, "/status") == 0   ? DJ_STATUS
           : strcmp(p + n, "/result") == 0 ? DJ_RESULT
                                           : DJ_NONE;
}

/* GET /dmi/v1/cmwriteJob/dataProducer/{dataProducerId}/dataProducerJob/
 * {dataProducerJobId}/status, and .../result?destination=: the
 * reference's constant answers. The path is matched as received, so that
 * an id may hold an encoded '/'. */
static void h_datajob_query(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r,
                            const char *url, const char *method)
{
    const char *q;
    char *path = raw_path(r, url, &q);
    datajob_query what = datajob_query_of(path);

    free(path);
    if (what == DJ_NONE) {
        bad_request(srv, r, 404, "no such DMI endpoint");
        return;
    }
    if (!require_method(srv, r, method, "GET"))
        return;
    if (what == DJ_STATUS) {
        atomic_fetch_add(&srv->stats.datajob_status, 1);
        reply_static(r, DMISTUB_DATAJOB_STATUS_BODY, sizeof(DMISTUB_DATAJOB_STATUS_BODY) - 1);
    } else {
        atomic_fetch_add(&srv->stats.datajob_result, 1);
        if (!MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "destination")) {
            bad_request(srv, r, 400, "the destination query parameter is required");
            return;
        }
        reply_static(r, DMISTUB_DATAJOB_RESULT_BODY, sizeof(DMISTUB_DATAJOB_RESULT_BODY) - 1);
    }
    r->delay_ms = answer_delay(srv, 0);
}

/* GET /stub/datajob/last. */
static void h_datajob_last(dmistub_server *srv, stub_req *r, const char *method)
{
    char *json;

    if (!require_method(srv, r, method, "GET"))
        return;
    if (!(json = dmistub_datajob_last(srv->datajob))) {
        reply_error(r, 404, "no sub-job request yet");
        return;
    }
    reply_json(r, 200, json);
    free(json);
}

/* --- the stub's own endpoints ---------------------------------------------- */

static void h_health(dmistub_server *srv, stub_req *r, const char *method)
{
    if (!require_method(srv, r, method, "GET"))
        return;
    if (atomic_load(&srv->health_up))
        reply_json(r, 200, "{\"status\":\"UP\"}");
    else
        reply_json(r, 503, "{\"status\":\"DOWN\"}");
}

static void h_set_health(dmistub_server *srv, stub_req *r, const char *method)
{
    json_object *doc;
    const char *status = NULL;
    ncmp_err err;

    if (!require_method(srv, r, method, "POST") || !(doc = body_object(srv, r)))
        return;
    if (ncmp_json_string_field(doc, "status", &status, &err) != 0 || !status ||
        (strcmp(status, "UP") != 0 && strcmp(status, "DOWN") != 0)) {
        bad_request(srv, r, 400, "expected {\"status\":\"UP\"} or {\"status\":\"DOWN\"}");
    } else {
        atomic_store(&srv->health_up, strcmp(status, "UP") == 0);
        reply_json(r, 200,
                   strcmp(status, "UP") == 0 ? "{\"status\":\"UP\"}" : "{\"status\":\"DOWN\"}");
        log_info("stub", "health set to %s", status);
    }
    json_object_put(doc);
}

static void append_per_tag(ncmp_buf *b, const char *name, atomic_long *counts)
{
    ncmp_buf_appendf(b, "\"%s\":{", name);
    for (int t = 0; t < DMISTUB_TAGS; t++)
        ncmp_buf_appendf(b, "%s\"%s\":%ld", t ? "," : "", dmistub_tag_name(t),
                         atomic_load(&counts[t]));
    ncmp_buf_append_str(b, "},");
}

static void h_stats(dmistub_server *srv, stub_req *r, const char *method)
{
    stub_stats *s = &srv->stats;
    dmistub_event_stats ev = {0, 0, 0};
    ncmp_buf *b = &r->out;

    if (!require_method(srv, r, method, "GET"))
        return;
    if (srv->events)
        dmistub_events_stats(srv->events, &ev);
    r->status = 200;
    r->content_type = JSON_TYPE;
    ncmp_buf_append_char(b, '{');
    append_per_tag(b, "moduleReferences", s->references);
    append_per_tag(b, "moduleResources", s->resources);
    ncmp_buf_appendf(b,
                     "\"errorTag\":%ld,\"busy503\":%ld,\"passthroughReads\":%ld,"
                     "\"passthroughWrites\":%ld,\"asyncPassthrough\":%ld,\"batchRequests\":%ld,"
                     "\"batchHandles\":%ld,\"eventsQueued\":%ld,\"eventsDelivered\":%ld,"
                     "\"eventsFailed\":%ld,\"badRequests\":%ld,\"unauthorized\":%ld,"
                     "\"dataReads\":%ld,\"provmnsReads\":%ld,\"provmnsWrites\":%ld,"
                     "\"provmnsActions\":%ld,\"policyRequests\":%ld,\"datajobWrites\":%ld,"
                     "\"datajobReads\":%ld,\"datajobOperations\":%ld,\"datajobStatus\":%ld,"
                     "\"datajobResult\":%ld,\"waiting\":%zu}",
                     atomic_load(&s->error_tag), atomic_load(&s->busy), atomic_load(&s->reads),
                     atomic_load(&s->writes), atomic_load(&s->async_passthrough),
                     atomic_load(&s->batches), atomic_load(&s->batch_handles), ev.queued,
                     ev.delivered, ev.failed, atomic_load(&s->bad_requests),
                     atomic_load(&s->unauthorized), atomic_load(&s->data_reads),
                     atomic_load(&s->provmns_reads), atomic_load(&s->provmns_writes),
                     atomic_load(&s->provmns_actions), atomic_load(&s->policy_requests),
                     atomic_load(&s->datajob_writes), atomic_load(&s->datajob_reads),
                     atomic_load(&s->datajob_operations), atomic_load(&s->datajob_status),
                     atomic_load(&s->datajob_result), dmistub_timer_pending(srv->timer));
}

static void stats_zero(stub_stats *s)
{
    atomic_long *const scalars[] = {&s->error_tag,
                                    &s->busy,
                                    &s->reads,
                                    &s->writes,
                                    &s->async_passthrough,
                                    &s->batches,
                                    &s->batch_handles,
                                    &s->bad_requests,
                                    &s->unauthorized,
                                    &s->data_reads,
                                    &s->provmns_reads,
                                    &s->provmns_writes,
                                    &s->provmns_actions,
                                    &s->policy_requests,
                                    &s->policy_decisions,
                                    &s->datajob_writes,
                                    &s->datajob_reads,
                                    &s->datajob_operations,
                                    &s->datajob_status,
                                    &s->datajob_result};

    for (int t = 0; t < DMISTUB_TAGS; t++) {
        atomic_store(&s->references[t], 0);
        atomic_store(&s->resources[t], 0);
    }
    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
        atomic_store(scalars[i], 0);
}

static void h_reset(dmistub_server *srv, stub_req *r, const char *method)
{
    if (!require_method(srv, r, method, "POST"))
        return;
    stats_zero(&srv->stats);
    models_set_clear(srv);
    dmistub_provmns_forget(srv->provmns);
    dmistub_datajob_forget(srv->datajob);
    if (srv->events)
        dmistub_events_stats_reset(srv->events);
    reply_json(r, 200, "{\"status\":\"reset\"}");
}

/* --- routing --------------------------------------------------------------- */

static int authorized(const dmistub_server *srv, struct MHD_Connection *conn)
{
    const char *h =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);

    if (!srv->auth_token)
        return 1;
    if (!h || strncasecmp(h, "Basic ", 6) != 0)
        return 0;
    for (h += 6; *h == ' '; h++)
        ;
    return strcmp(h, srv->auth_token) == 0;
}

/* `s` ends with `suffix`: the length of what comes before, else -1. */
static long before_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0 ? (long)(n - m) : -1;
}

/* /dmi/v1/ch/{id}/...: the id may hold '/' (MHD has decoded %2F). */
static void route_handle(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r,
                         const char *method, const char *rest)
{
    const char *ds = NULL;
    char *id;

    for (const char *p = strstr(rest, "/data/ds/"); p; p = strstr(p + 1, "/data/ds/"))
        ds = p;
    if (before_suffix(rest, "/modules") > 0) {
        h_modules(srv, r, method, 0);
    } else if (before_suffix(rest, "/moduleResources") > 0) {
        h_modules(srv, r, method, 1);
    } else if (ds && ds > rest && ds[9] && !strchr(ds + 9, '/')) {
        id = ncmp_xstrdup(rest);
        id[ds - rest] = '\0';
        h_passthrough(srv, conn, r, method, id);
        free(id);
    } else {
        bad_request(srv, r, 404, "no such DMI endpoint");
    }
}

static void route_dmi(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r,
                      const char *url, const char *method)
{
    if (!authorized(srv, conn)) {
        atomic_fetch_add(&srv->stats.unauthorized, 1);
        reply_error(r, 401, "missing or wrong HTTP Basic credentials");
        r->auth_challenge = 1;
    } else if (strcmp(url, "/dmi/v1/data") == 0) {
        h_batch(srv, conn, r, method);
    } else if (strcmp(url, "/dmi/v1/cmwriteJob") == 0 || strcmp(url, "/dmi/v1/cmreadJob") == 0) {
        h_subjob(srv, conn, r, url, method, strcmp(url, "/dmi/v1/cmreadJob") == 0);
    } else if (strncmp(url, "/dmi/v1/cmwriteJob/", 19) == 0) {
        h_datajob_query(srv, conn, r, url, method);
    } else if (strncmp(url, "/dmi/v1/ch/", 11) == 0) {
        route_handle(srv, conn, r, method, url + 11);
    } else {
        bad_request(srv, r, 404, "no such DMI endpoint");
    }
}

static void route(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r, const char *url,
                  const char *method)
{
    char msg[256];

    if (r->too_large) {
        snprintf(msg, sizeof(msg), "request body larger than %ld bytes", srv->opts->max_body_bytes);
        bad_request(srv, r, 413, msg);
    } else if (strncmp(url, "/dmi/", 5) == 0) {
        route_dmi(srv, conn, r, url, method);
    } else if (strncmp(url, "/ProvMnS/v1/", 12) == 0) {
        h_provmns(srv, conn, r, url, method);
    } else if (strncmp(url, ACTIONS_PREFIX, sizeof(ACTIONS_PREFIX) - 1) == 0) {
        h_action(srv, conn, r, url, method);
    } else if (strcmp(url, PERMISSIONS_PATH) == 0) {
        h_policy(srv, conn, r, method);
    } else if (strcmp(url, "/stub/provmns/last") == 0) {
        h_last(srv, r, method, 0);
    } else if (strcmp(url, "/stub/policy/last") == 0) {
        h_last(srv, r, method, 1);
    } else if (strcmp(url, "/stub/datajob/last") == 0) {
        h_datajob_last(srv, r, method);
    } else if (strcmp(url, "/actuator/health") == 0) {
        h_health(srv, r, method);
    } else if (strcmp(url, "/stub/stats") == 0) {
        h_stats(srv, r, method);
    } else if (strcmp(url, "/stub/reset") == 0) {
        h_reset(srv, r, method);
    } else if (strcmp(url, "/stub/health") == 0) {
        h_set_health(srv, r, method);
    } else if (strcmp(url, "/stub/modules") == 0) {
        h_set_models(srv, r, method);
    } else {
        bad_request(srv, r, 404, "no such endpoint");
    }
}

/* --- MHD callbacks --------------------------------------------------------- */

static enum MHD_Result send_answer(struct MHD_Connection *conn, stub_req *r)
{
    struct MHD_Response *resp;
    enum MHD_Result ret;

    if (r->static_body) {
        resp = MHD_create_response_from_buffer(r->static_len, (void *)r->static_body,
                                               MHD_RESPMEM_PERSISTENT);
    } else if (r->out.data) {
        /* MHD frees the buffer (malloc'd by ncmp_buf) */
        resp = MHD_create_response_from_buffer(r->out.len, r->out.data, MHD_RESPMEM_MUST_FREE);
        r->out = (ncmp_buf)NCMP_BUF_INIT;
    } else {
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (!resp)
        return MHD_NO;
    if (r->content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
    if (r->allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (r->auth_challenge)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic realm=\"dmi\"");
    ret = MHD_queue_response(conn, r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void resume_connection(void *arg)
{
    MHD_resume_connection(arg);
}

/* Suspend until the answer's delay has passed. Suspending comes first, so
 * that the timer can never resume a connection that is not suspended yet. */
static void wait_for_answer(dmistub_server *srv, struct MHD_Connection *conn, stub_req *r)
{
    MHD_suspend_connection(conn);
    if (dmistub_timer_add(srv->timer, r->delay_ms, resume_connection, conn) != 0) {
        /* stopping: answer at once */
        r->delay_ms = r->delay_ms < 0 ? -1 : 0;
        MHD_resume_connection(conn);
    }
}

static void body_append(dmistub_server *srv, stub_req *r, const char *data, size_t size)
{
    if (r->too_large || r->body.len + size > (size_t)srv->opts->max_body_bytes) {
        r->too_large = 1;
        return;
    }
    ncmp_buf_append(&r->body, data, size);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls)
{
    dmistub_server *srv = cls;
    stub_req *r = *con_cls;

    if (!r->started) {
        r->started = 1;
        return MHD_YES;
    }
    if (*upload_size) {
        body_append(srv, r, upload_data, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (!r->prepared) {
        r->prepared = 1;
        route(srv, conn, r, url, method);
        log_debug("http", "%s %s -> %u (delay %ld ms)", method, url, r->status, r->delay_ms);
        if (r->delay_ms != 0) {
            wait_for_answer(srv, conn, r);
            return MHD_YES;
        }
    } else if (r->delay_ms < 0) {
        /* a hung request, resumed because the stub stops */
        reply_error(r, 503, "the DMI stub is stopping");
    }
    return send_answer(conn, r);
}

/* A request begins: its state, with the URI as received (MHD decodes its
 * copy). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    dmistub_server *srv = cls;
    stub_req *r = ncmp_xcalloc(1, sizeof(*r));

    r->uri = ncmp_xstrdup(uri);
    atomic_fetch_add(&srv->in_flight, 1);
    return r;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    dmistub_server *srv = cls;
    stub_req *r = *con_cls;

    if (!r)
        return;
    free(r->uri);
    ncmp_buf_free(&r->body);
    ncmp_buf_free(&r->out);
    free(r);
    *con_cls = NULL;
    atomic_fetch_sub(&srv->in_flight, 1);
}

/* MHD's printf-style log: the attribute lets clang check the vsnprintf */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    size_t n;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = '\0';
    log_warn("mhd", "%s", msg);
}

/* --- start and stop -------------------------------------------------------- */

static char *base64(const char *s)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), o = 0;
    char *out = ncmp_xmalloc(4 * ((n + 2) / 3) + 1);
    const unsigned char *p = (const unsigned char *)s;

    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

static int resolve(const dmistub_opts *o, struct sockaddr_storage *addr, int *ipv6, ncmp_err *err)
{
    struct addrinfo hints, *res = NULL;
    char port[16];
    int rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(port, sizeof(port), "%ld", o->port);
    rc = getaddrinfo(o->host, port, &hints, &res);
    if (rc != 0)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "--host %s: %s", o->host, gai_strerror(rc));
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *ipv6 = res->ai_family == AF_INET6;
    freeaddrinfo(res);
    return 0;
}

/* As many connections as the open-file limit allows (main raises it). */
static unsigned connection_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 4000;
    return rl.rlim_cur > 60064 ? 60000 : rl.rlim_cur > 256 ? (unsigned)rl.rlim_cur - 64 : 192;
}

static int listen_start(dmistub_server *srv, ncmp_err *err)
{
    struct sockaddr_storage addr;
    const union MHD_DaemonInfo *info;
    int ipv6 = 0;
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;

    if (resolve(srv->opts, &addr, &ipv6, err) != 0)
        return -1;
    if (ipv6)
        flags |= MHD_USE_IPv6;
    /* the logger comes first, so that MHD logs nothing past it */
    srv->daemon = MHD_start_daemon(
        flags, (uint16_t)srv->opts->port, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER,
        on_mhd_log, srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)srv->opts->threads, MHD_OPTION_CONNECTION_LIMIT,
        connection_limit(), MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)4096,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)300, MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_END);
    if (!srv->daemon)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot listen on %s:%ld (see the log above)",
                            srv->opts->host, srv->opts->port);
    info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : (uint16_t)srv->opts->port;
    return 0;
}

int dmistub_server_start(dmistub_server **out, const dmistub_opts *opts, ncmp_err *err)
{
    dmistub_server *srv = ncmp_xcalloc(1, sizeof(*srv));
    ncmp_buf base = NCMP_BUF_INIT;

    srv->opts = opts;
    srv->listen_fd = MHD_INVALID_SOCKET;
    atomic_init(&srv->health_up, !opts->health_down);
    pthread_mutex_init(&srv->busy_lock, NULL);
    srv->models = dmistub_models_new();
    srv->provmns = dmistub_provmns_new();
    srv->datajob = dmistub_datajob_new();
    if (*opts->auth)
        srv->auth_token = base64(opts->auth);
    if (*opts->data_model && dmistub_data_load(&srv->data, opts->data_model, opts->data_tree,
                                               opts->data_root, opts->data_id_marker, err) != 0) {
        dmistub_server_stop(srv);
        return -1;
    }
    if ((*opts->kafka && dmistub_events_start(&srv->events, opts, srv->models, err) != 0) ||
        dmistub_timer_start(&srv->timer, err) != 0 || listen_start(srv, err) != 0) {
        dmistub_server_stop(srv);
        return -1;
    }
    ncmp_buf_appendf(&base, strchr(opts->host, ':') ? "http://[%s]:%u" : "http://%s:%u", opts->host,
                     (unsigned)srv->port);
    srv->default_base = base.data;
    *out = srv;
    return 0;
}

uint16_t dmistub_server_port(const dmistub_server *srv)
{
    return srv->port;
}

/* Give resumed requests a moment to be answered before MHD closes them. */
static void drain(dmistub_server *srv)
{
    double deadline = ncmp_now_ms() + 2000;

    while (atomic_load(&srv->in_flight) > 0 && ncmp_now_ms() < deadline)
        ncmp_sleep_ms(10);
}

void dmistub_server_stop(dmistub_server *srv)
{
    if (!srv)
        return;
    if (srv->daemon)
        srv->listen_fd = MHD_quiesce_daemon(srv->daemon);
    /* every waiting answer and batch job is released here; from now on a
     * request that would wait is answered at once */
    dmistub_timer_stop(srv->timer);
    if (srv->daemon) {
        drain(srv);
        MHD_stop_daemon(srv->daemon);
    }
    if (srv->listen_fd != MHD_INVALID_SOCKET)
        close(srv->listen_fd);
    dmistub_timer_free(srv->timer);
    dmistub_events_stop(srv->events);
    dmistub_models_free(srv->models);
    dmistub_provmns_free(srv->provmns);
    dmistub_datajob_free(srv->datajob);
    dmistub_data_free(srv->data);
    for (size_t i = 0; i < srv->nbusy; i++)
        free(srv->busy[i].tag);
    free(srv->busy);
    models_set_clear(srv);
    pthread_mutex_destroy(&srv->busy_lock);
    free(srv->auth_token);
    free(srv->default_base);
    free(srv);
}
