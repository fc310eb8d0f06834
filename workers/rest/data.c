#include "data.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "handle_cache.h"
#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_dlq.h"
#include "ncmp_dmi.h"
#include "ncmp_json.h"
#include "ncmp_kafka.h"
#include "ncmp_kafka_config.h"
#include "ncmp_lcm.h"
#include "ncmp_log.h"
#include "datajob.h"
#include "ncmp_pump.h"
#include "operational.h"
#include "policy.h"
#include "provmns.h"
#include "ncmp_signal.h"

#define DS_OPERATIONAL "ncmp-datastore:operational"
#define DS_PT_OPER     "ncmp-datastore:passthrough-operational"
#define DS_PT_RUNNING  "ncmp-datastore:passthrough-running"
#define MAX_TARGETS    200 /* NCMP's MAXIMUM_CM_HANDLES_PER_OPERATION */
#define POOL_WAIT_MS   5000
#define EVENT_TYPE     "org.onap.cps.ncmp.events.async1_0_0.DataOperationEvent"
#define EVENT_SCHEMA   "urn:cps:" EVENT_TYPE ":1.0.0"
#define ASYNC_DISABLED                                                                             \
    "Asynchronous request is unavailable as notification feature is currently disabled."
#define REQUEST_BATCH 100

/* NCMP's status codes of data operations (cps-ncmp-message-status-codes). */
#define ST_NOT_FOUND "100", "cm handle reference(s) not found"
#define ST_NOT_READY "101", "cm handle(s) not ready"
#define ST_DMI_DOWN  "102", "dmi plugin service is not responding"
#define ST_DMI_ERROR "103", "dmi plugin service is not able to read resource data"
#define ST_UNKNOWN   "108", "Unknown error"

struct data {
    const ncmp_config *cfg;
    rest_pool *pool;
    handle_cache *cache;
    ncmp_dmi **dmis; /* the role's own clients (dmi.data-threads), taken in turn */
    int ndmis;
    atomic_uint next_dmi;
    ncmp_producer *producer; /* the process's, shared */
    pthread_rwlock_t gate;   /* held for reading while a DMI call is submitted */
    int closed;
    /* DMI calls submitted and not completed yet: data_stop waits for them,
     * since the shared client outlives the HTTP server they answer on */
    pthread_mutex_t calls_lock;
    pthread_cond_t calls_done;
    long calls;
    ncmp_pump_role requests_role;
    ncmp_pump *requests; /* data.request-topic, or NULL */
    cps_api *cps;        /* the operational cache's reads (borrowed) */
    datajob *jobs;       /* data jobs (datajob.h) */
};

/* --- small helpers ------------------------------------------------------- */

int data_topic_valid(const char *topic, const char *async_m2m_topic)
{
    return topic && ncmp_kafka_topic_name_valid(topic, strlen(topic)) &&
           strcmp(topic, async_m2m_topic) != 0;
}

static void append_field(ncmp_buf *b, const char *name, const char *value)
{
    ncmp_buf_appendf(b, ",\"%s\":", name);
    ncmp_buf_append_json_string(b, value);
}

/* Take a connection of the pool, run fn, give it back. */
static int with_db(data *d, int (*fn)(data *d, ncmp_db *db, void *arg, ncmp_err *err), void *arg,
                   ncmp_err *err)
{
    ncmp_db *db = NULL;
    int rc;

    if (rest_pool_get(d->pool, POOL_WAIT_MS, &db, err) != 0)
        return -1;
    rc = fn(d, db, arg, err);
    rest_pool_put(d->pool, db);
    return rc;
}

typedef struct fetch_args {
    const char *const *refs;
    size_t n;
    handle_info *out;
    int *found;
} fetch_args;

static int fetch_fn(data *d, ncmp_db *db, void *arg, ncmp_err *err)
{
    fetch_args *a = arg;
    return handle_cache_fetch(d->cache, db, a->refs, a->n, a->out, a->found, err);
}

/* Resolve refs[0..n): the cache first, the database for what it misses.
 * found[i] says whether out[i] was filled (owned by the caller). */
static int resolve(data *d, const char *const *refs, size_t n, handle_info *out, int *found,
                   ncmp_err *err)
{
    const char **miss = ncmp_xcalloc(n ? n : 1, sizeof(*miss));
    size_t *at = ncmp_xcalloc(n ? n : 1, sizeof(*at));
    handle_info *got = ncmp_xcalloc(n ? n : 1, sizeof(*got));
    int *got_found = ncmp_xcalloc(n ? n : 1, sizeof(*got_found));
    fetch_args a = {miss, 0, got, got_found};
    size_t nmiss = 0;
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        found[i] = handle_cache_get(d->cache, refs[i], &out[i]);
        if (!found[i]) {
            at[nmiss] = i;
            miss[nmiss++] = refs[i];
        }
    }
    a.n = nmiss;
    if (nmiss && (rc = with_db(d, fetch_fn, &a, err)) == 0) {
        for (size_t k = 0; k < nmiss; k++) {
            found[at[k]] = got_found[k];
            out[at[k]] = got[k];
        }
    }
    free(miss);
    free(at);
    free(got);
    free(got_found);
    return rc;
}

int data_resolve_longest(data *d, const char *ref, handle_info *out, int *found, ncmp_err *err)
{
    size_t n;
    char **cands;
    handle_info *got;
    int *got_found, rc;

    *found = handle_cache_longest(d->cache, ref, out);
    if (*found)
        return 0;
    /* the map may lag a registration: the database has the last word */
    cands = handle_candidates(ref, &n);
    got = ncmp_xcalloc(n ? n : 1, sizeof(*got));
    got_found = ncmp_xcalloc(n ? n : 1, sizeof(*got_found));
    fetch_args a = {(const char *const *)cands, n, got, got_found};
    rc = n ? with_db(d, fetch_fn, &a, err) : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (got_found[i] && !*found) {
            *out = got[i];
            *found = 1;
        } else if (got_found[i]) {
            handle_info_free(&got[i]);
        }
    }
    free(got);
    free(got_found);
    handle_candidates_free(cands, n);
    return rc;
}

const ncmp_config *data_config(const data *d)
{
    return d->cfg;
}

handle_cache *data_cache(data *d)
{
    return d->cache;
}

/* --- DataOperationEvents ------------------------------------------------- */

/* One responses[] entry without its closing brace:
 * {"operationId":..,"ids":[..],"resourceIdentifier":..,"options":.. */
static void response_head(ncmp_buf *b, const char *operation_id, const char *const *ids, size_t n,
                          const char *resource_id, const char *options)
{
    ncmp_buf_append_str(b, "{\"operationId\":");
    ncmp_buf_append_json_string(b, operation_id ? operation_id : "");
    ncmp_buf_append_str(b, ",\"ids\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            ncmp_buf_append_char(b, ',');
        ncmp_buf_append_json_string(b, ids[i]);
    }
    ncmp_buf_append_char(b, ']');
    if (resource_id)
        append_field(b, "resourceIdentifier", resource_id);
    if (options)
        append_field(b, "options", options);
}

static void response_status(ncmp_buf *b, const char *code, const char *message)
{
    append_field(b, "statusCode", code);
    append_field(b, "statusMessage", message);
    ncmp_buf_append_char(b, '}');
}

/* Produce {"data":{"responses":[<responses>]}} to `topic` as a
 * DataOperationEvent CloudEvent (binary mode), key = the request id. */
static void event_send(data *d, const char *topic, const char *request_id, const char *responses)
{
    ncmp_buf v = NCMP_BUF_INIT;
    const ncmp_cloudevent ce = {.source = "NCMP",
                                .type = EVENT_TYPE,
                                .dataschema = EVENT_SCHEMA,
                                .correlation_id = request_id,
                                .destination = topic,
                                .content_type = "application/json"};
    rd_kafka_headers_t *h = ncmp_cloudevent_headers(&ce);
    ncmp_err err;

    ncmp_buf_append_str(&v, "{\"data\":{\"responses\":[");
    ncmp_buf_append_str(&v, responses);
    ncmp_buf_append_str(&v, "]}}");
    if (ncmp_producer_send(d->producer, NULL, topic, RD_KAFKA_PARTITION_UA, request_id,
                           strlen(request_id), v.data, v.len, h, &err) != 0)
        log_error("data", "request %s: result event to %s lost: %s", request_id, topic, err.msg);
    rd_kafka_poll(ncmp_producer_rk(d->producer), 0);
    ncmp_buf_free(&v);
}

/* The status of a failed DMI call in a DataOperationEvent: 102 for a
 * timeout (408), no connection or a call not sent because the plugin had
 * too many in flight, 103 for another HTTP error, 108 else. */
static void dmi_failure_status(const ncmp_dmi_response *r, const char **code, const char **message)
{
    static const char *const st[][2] = {{ST_DMI_DOWN}, {ST_DMI_ERROR}, {ST_UNKNOWN}};
    int k = 2;

    if (r->status == 408 || r->failure == NCMP_DMI_FAIL_TIMEOUT ||
        r->failure == NCMP_DMI_FAIL_CONNECT || r->failure == NCMP_DMI_FAIL_DNS ||
        r->failure == NCMP_DMI_FAIL_BUSY)
        k = 0;
    else if (r->status != 0)
        k = 1;
    *code = st[k][0];
    *message = st[k][1];
}

/* --- pass-through -------------------------------------------------------- */

typedef struct pt_call {
    data *d;
    ncmp_http_request *req; /* NULL with a topic: answered already */
    int status;             /* NCMP's success status for the method */
    int with_body;          /* GET and PATCH give the DMI's body back */
    char *ref, *topic, *request_id;
} pt_call;

static void pt_call_free(pt_call *c)
{
    free(c->ref);
    free(c->topic);
    free(c->request_id);
    free(c);
}

/* 502 DmiErrorMessage: the DMI's status (408 for a timeout, 503 when it
 * could not be reached) and its body as a JSON string. */
void data_answer_dmi_error(ncmp_http_request *req, const ncmp_dmi_response *r)
{
    ncmp_buf b = NCMP_BUF_INIT;
    ncmp_err err;
    long code = r->status ? r->status : r->failure == NCMP_DMI_FAIL_TIMEOUT ? 408 : 503;

    ncmp_dmi_response_check(r, &err);
    ncmp_buf_append_str(&b, "{\"message\":");
    ncmp_buf_append_json_string(&b, err.msg);
    ncmp_buf_appendf(&b, ",\"dmi-response\":{\"http-code\":%ld,\"body\":", code);
    ncmp_buf_append_json_string(&b, r->body.data ? r->body.data : "");
    ncmp_buf_append_str(&b, "}}");
    ncmp_http_respond_json(req, 502, &b);
    ncmp_buf_free(&b);
}

void data_server_timing(ncmp_http_request *req, const ncmp_dmi_response *r)
{
    char v[128];
    double held = ncmp_http_age_ms(req), own = held - r->call_ms;

    if (r->call_ms <= 0)
        return;
    snprintf(v, sizeof(v), "ncmpd;dur=%.3f, dmi-wait;dur=%.3f, dmi;dur=%.3f", own > 0 ? own : 0,
             r->call_ms > r->transfer_ms ? r->call_ms - r->transfer_ms : 0, r->transfer_ms);
    ncmp_http_add_header(req, "Server-Timing", v);
}

/* The DMI's answer to a pass-through call (on the DMI client's thread). */
static void pt_done(ncmp_dmi_response *r, void *opaque)
{
    pt_call *c = opaque;
    int ok = r->status >= 200 && r->status < 300;

    if (c->req)
        data_server_timing(c->req, r);
    if (!c->req && !ok) {
        const char *code, *message;
        ncmp_buf resp = NCMP_BUF_INIT;
        const char *ids[1] = {c->ref};
        dmi_failure_status(r, &code, &message);
        log_warn("data", "request %s for %s: %s %s", c->request_id, c->ref, code, r->error);
        response_head(&resp, c->request_id, ids, 1, NULL, NULL);
        response_status(&resp, code, message);
        event_send(c->d, c->topic, c->request_id, resp.data);
        ncmp_buf_free(&resp);
    } else if (!c->req) {
        /* accepted: the DMI publishes the result on ncmp-async-m2m */
    } else if (r->failure == NCMP_DMI_FAIL_CANCELLED) {
        ncmp_http_respond_error(c->req, 503, "Service stopping", NULL);
    } else if (r->failure == NCMP_DMI_FAIL_BUSY) {
        ncmp_http_respond_busy(c->req, NULL, "DMI plugin busy", r->error);
    } else if (!ok) {
        data_answer_dmi_error(c->req, r);
    } else if (c->with_body && r->body.len) {
        ncmp_http_respond(c->req, c->status, r->content_type ? r->content_type : "application/json",
                          r->body.data, r->body.len);
    } else {
        ncmp_http_respond(c->req, c->status, NULL, "", 0);
    }
    ncmp_dmi_response_destroy(r);
    pt_call_free(c);
}

typedef struct pt_method {
    const char *method, *operation;
    int status, with_body;
} pt_method;

static const pt_method pt_methods[] = {
    {"GET", "read", 200, 1},    {"POST", "create", 201, 0},   {"PUT", "update", 200, 0},
    {"PATCH", "patch", 200, 1}, {"DELETE", "delete", 204, 0},
};

/* NCMP's DmiRequestBody: operation, dataType, data, cmHandleProperties,
 * requestId, moduleSetTag, nulls left out. */
static void pt_body(ncmp_buf *b, ncmp_http_request *req, const pt_method *m, const handle_info *h,
                    const char *request_id)
{
    size_t len;
    const char *body = ncmp_http_body(req, &len);
    const char *type = ncmp_http_header(req, "Content-Type");

    ncmp_buf_append_str(b, "{\"operation\":");
    ncmp_buf_append_json_string(b, m->operation);
    if (strcmp(m->operation, "read") != 0) {
        append_field(b, "dataType", type && *type ? type : "application/json");
        if (len)
            append_field(b, "data", body);
    }
    ncmp_buf_append_str(b, ",\"cmHandleProperties\":");
    ncmp_buf_append_str(b, h->properties);
    if (request_id)
        append_field(b, "requestId", request_id);
    append_field(b, "moduleSetTag", h->module_set_tag);
    ncmp_buf_append_char(b, '}');
}

/* A POST of `body` to `url`, with the client's Authorization forwarded
 * when there is one (`hdr` and `headers`, two entries, hold it). */
static void dmi_post(ncmp_dmi_request *dr, const ncmp_buf *url, const ncmp_buf *body,
                     const char *auth, ncmp_buf *hdr, const char **headers)
{
    if (auth) {
        ncmp_buf_appendf(hdr, "Authorization: %s", auth);
        headers[0] = hdr->data;
    }
    dr->method = "POST";
    dr->url = url->data;
    dr->body = body->data;
    dr->body_len = body->len;
    dr->headers = headers;
}

/* A submitted call: its completion, counted out of d->calls. */
typedef struct data_call {
    data *d;
    ncmp_dmi_done_cb done;
    void *opaque;
} data_call;

static void call_done(ncmp_dmi_response *r, void *opaque)
{
    data_call *c = opaque;
    data *d = c->d;

    c->done(r, c->opaque);
    free(c);
    pthread_mutex_lock(&d->calls_lock);
    if (--d->calls == 0)
        pthread_cond_broadcast(&d->calls_done);
    pthread_mutex_unlock(&d->calls_lock);
}

int data_submit(data *d, const ncmp_dmi_request *dr, ncmp_dmi_done_cb done, void *opaque,
                ncmp_err *err)
{
    data_call *c = ncmp_xcalloc(1, sizeof(*c));
    int rc = -1;

    c->d = d;
    c->done = done;
    c->opaque = opaque;
    pthread_rwlock_rdlock(&d->gate);
    if (d->closed) {
        ncmp_err_set(err, NCMP_ERR_RETRY, "service stopping");
        if (dr->take_body)
            free((char *)dr->body); /* taken, as ncmp_dmi_submit would have */
    } else {
        pthread_mutex_lock(&d->calls_lock);
        d->calls++;
        pthread_mutex_unlock(&d->calls_lock);
        unsigned k = atomic_fetch_add_explicit(&d->next_dmi, 1, memory_order_relaxed);
        rc = ncmp_dmi_submit(d->dmis[k % (unsigned)d->ndmis], dr, call_done, c, err);
        if (rc != 0) {
            pthread_mutex_lock(&d->calls_lock);
            d->calls--;
            pthread_mutex_unlock(&d->calls_lock);
        }
    }
    pthread_rwlock_unlock(&d->gate);
    if (rc != 0)
        free(c);
    return rc;
}

/* --- the policy executor (policy.h) -------------------------------------- */

typedef struct policy_call {
    data *d;
    data_policy_cb done;
    void *opaque;
} policy_call;

static void policy_answered(ncmp_dmi_response *r, void *opaque)
{
    policy_call *pc = opaque;
    policy_decision dec;

    policy_decide(r, pc->d->cfg->policy_executor_default_decision, &dec);
    if (!dec.allowed)
        log_info("policy", "refused: %s (%s)", dec.title, dec.details);
    pc->done(&dec, pc->opaque);
    ncmp_dmi_response_destroy(r);
    free(pc);
}

int data_policy_ask(data *d, const policy_op *op, const char *auth, data_policy_cb done,
                    void *opaque, ncmp_err *err)
{
    ncmp_buf url = NCMP_BUF_INIT, body = NCMP_BUF_INIT, hdr = NCMP_BUF_INIT;
    const char *headers[2] = {NULL, NULL};
    ncmp_dmi_request dr = {0};
    policy_call *pc;
    int rc = -1;

    if (policy_body(&body, op, err) == 0) {
        pc = ncmp_xcalloc(1, sizeof(*pc));
        *pc = (policy_call){d, done, opaque};
        policy_url(&url, d->cfg->policy_executor_url);
        dmi_post(&dr, &url, &body, auth, &hdr, headers);
        dr.timeout_ms = d->cfg->policy_executor_timeout_ms;
        rc = data_submit(d, &dr, policy_answered, pc, err);
        if (rc != 0)
            free(pc);
    }
    ncmp_buf_free(&url);
    ncmp_buf_free(&body);
    ncmp_buf_free(&hdr);
    return rc;
}

/* A pass-through write waiting for the policy executor: the DMI call it
 * will make when allowed. */
typedef struct pt_pending {
    pt_call *c;
    ncmp_buf url, body, hdr;
} pt_pending;

static void pt_pending_free(pt_pending *p)
{
    ncmp_buf_free(&p->url);
    ncmp_buf_free(&p->body);
    ncmp_buf_free(&p->hdr);
    free(p);
}

/* The policy's decision on a pass-through write (DMI client's thread). */
static void pt_permitted(const policy_decision *dec, void *opaque)
{
    pt_pending *p = opaque;
    pt_call *c = p->c;
    const char *headers[2] = {p->hdr.len ? p->hdr.data : NULL, NULL};
    ncmp_dmi_request dr = {0};
    ncmp_err err;

    if (!dec->allowed) {
        ncmp_http_respond_error(c->req, 409, dec->title, dec->details);
        pt_call_free(c);
    } else {
        dr.method = "POST";
        dr.url = p->url.data;
        dr.body = p->body.data;
        dr.body_len = p->body.len;
        dr.headers = headers;
        if (data_submit(c->d, &dr, pt_done, c, &err) != 0) {
            ncmp_http_respond_error(c->req, 503, "DMI call not started", err.msg);
            pt_call_free(c);
        }
    }
    pt_pending_free(p);
}

/* Ask the policy executor about a suspended pass-through write, then make
 * the DMI call (pt_permitted). Answers the request when it cannot ask. */
static void pt_ask_policy(data *d, ncmp_http_request *req, pt_call *c, const pt_method *m,
                          const handle_info *h, const char *auth, ncmp_buf *url, ncmp_buf *body,
                          ncmp_buf *hdr)
{
    pt_pending *p = ncmp_xcalloc(1, sizeof(*p));
    size_t len;
    const char *data_text = ncmp_http_body(req, &len);
    const policy_op op = {.operation = m->operation,
                          .handle_id = h->id,
                          .resource_identifier = ncmp_http_query(req, "resourceIdentifier"),
                          .target_identifier = h->alternate_id,
                          .change_request = strcmp(m->operation, "delete") ? data_text : NULL};
    ncmp_err err;

    p->c = c;
    p->url = *url;
    p->body = *body;
    p->hdr = *hdr;
    *url = *body = *hdr = (ncmp_buf)NCMP_BUF_INIT;
    if (data_policy_ask(d, &op, auth, pt_permitted, p, &err) != 0) {
        if (err.cls == NCMP_ERR_REJECT)
            ncmp_http_respond_error(req, 400, err.msg, NULL);
        else
            ncmp_http_respond_error(req, 503, "Policy executor not asked", err.msg);
        pt_call_free(c);
        pt_pending_free(p);
    }
}

static void pt_forward(data *d, ncmp_http_request *req, const pt_method *m, const handle_info *h,
                       const char *topic)
{
    const char *ds = ncmp_http_param(req, "datastore");
    const char *auth = ncmp_http_header(req, "Authorization");
    pt_call *c = ncmp_xcalloc(1, sizeof(*c));
    ncmp_buf url = NCMP_BUF_INIT, body = NCMP_BUF_INIT, hdr = NCMP_BUF_INIT;
    const char *headers[2] = {NULL, NULL};
    ncmp_dmi_request dr = {0};
    char request_id[37];
    ncmp_err err;

    c->d = d;
    c->ref = ncmp_xstrdup(ncmp_http_param(req, "ref"));
    c->status = m->status;
    c->with_body = m->with_body;
    if (topic) {
        ncmp_uuid4(request_id);
        c->topic = ncmp_xstrdup(topic);
        c->request_id = ncmp_xstrdup(request_id);
    }
    ncmp_dmi_url_data(&url, h->dmi, h->id, ds, ncmp_http_query(req, "resourceIdentifier"),
                      ncmp_http_query(req, "options"), topic);
    pt_body(&body, req, m, h, c->request_id);
    dmi_post(&dr, &url, &body, auth, &hdr, headers);
    if (!topic) {
        c->req = req;
        ncmp_http_suspend(req);
    }
    if (d->cfg->policy_executor_enabled && strcmp(m->operation, "read") != 0 &&
        strcmp(ds, DS_PT_RUNNING) == 0) {
        pt_ask_policy(d, req, c, m, h, auth, &url, &body, &hdr);
    } else if (data_submit(d, &dr, pt_done, c, &err) != 0) {
        ncmp_http_respond_error(req, 503, "DMI call not started", err.msg);
        pt_call_free(c);
    } else if (topic) {
        ncmp_buf ans = NCMP_BUF_INIT;
        ncmp_buf_append_str(&ans, "{\"requestId\":");
        ncmp_buf_append_json_string(&ans, request_id);
        ncmp_buf_append_char(&ans, '}');
        ncmp_http_respond_json(req, 200, &ans);
        ncmp_buf_free(&ans);
    }
    ncmp_buf_free(&url);
    ncmp_buf_free(&body);
    ncmp_buf_free(&hdr);
}

/* Datastore and method: 0, or -1 with the request answered 400. */
static int pt_check_datastore(ncmp_http_request *req, const pt_method *m)
{
    const char *ds = ncmp_http_param(req, "datastore");
    char msg[512];

    if (strcmp(ds, DS_PT_OPER) != 0 && strcmp(ds, DS_PT_RUNNING) != 0 &&
        strcmp(ds, DS_OPERATIONAL) != 0) {
        snprintf(msg, sizeof(msg), "%.400s is an invalid datastore name", ds);
        ncmp_http_respond_error(req, 400, msg, NULL);
        return -1;
    }
    /* writes only on passthrough-running; the operational datastore (the
     * data-sync cache) is read by h_passthrough before this check */
    if (strcmp(m->operation, "read") != 0 && strcmp(ds, DS_PT_RUNNING) != 0) {
        snprintf(msg, sizeof(msg), "%.400s is not supported", ds);
        ncmp_http_respond_error(req, 400, msg, NULL);
        return -1;
    }
    return 0;
}

/* Query parameters: 0 with *topic (NULL for a synchronous call), or -1
 * with the request answered 400. */
static int pt_check_query(data *d, ncmp_http_request *req, const pt_method *m, const char **topic)
{
    const char *t = ncmp_http_query(req, "topic");
    int descendants;

    *topic = NULL;
    if (!ncmp_http_query(req, "resourceIdentifier")) {
        ncmp_http_respond_error(req, 400, "Required parameter 'resourceIdentifier' is not present.",
                                NULL);
        return -1;
    }
    if (ncmp_http_query_bool(req, "include-descendants", 0, &descendants) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid query parameter",
                                "include-descendants must be true or false");
        return -1;
    }
    if (!t || strcmp(m->operation, "read") != 0 || !d->cfg->data_async_enabled)
        return 0;
    if (!data_topic_valid(t, d->cfg->async_forward_input_topic)) {
        ncmp_http_respond_error(req, 400, "Invalid topic name", t);
        return -1;
    }
    *topic = t;
    return 0;
}

/* The handle of {ref}: 0 with *h filled (owned by the caller), or -1
 * with the request answered (404, 500 not READY, 503). */
static void h_passthrough(ncmp_http_request *req, void *arg);

static int pt_handle(data *d, ncmp_http_request *req, handle_info *h)
{
    const char *ref = ncmp_http_param(req, "ref");
    int found = 0;
    ncmp_err err;
    ncmp_buf msg = NCMP_BUF_INIT;

    if (!ncmp_http_on_worker(req) && !(found = handle_cache_get(d->cache, ref, h))) {
        /* not in the map (it may lag a registration): the database has
         * the last word, asked on a worker thread, never a server thread */
        ncmp_http_to_worker(req, h_passthrough, d);
        return -1;
    }
    if (!found && resolve(d, &ref, 1, h, &found, &err) != 0) {
        rest_db_answer_error(req, &err);
        return -1;
    }
    if (!found) {
        ncmp_buf_appendf(&msg, "No cm handles found with reference %s", ref);
        ncmp_http_respond_error(req, 404, "Cm handle not found", msg.data);
    } else if (h->state != NCMP_STATE_READY) {
        ncmp_buf_appendf(&msg, "Cm-Handle not in READY state. cm handle state is %s",
                         ncmp_state_name(h->state));
        ncmp_http_respond_error(req, 500, "State mismatch exception.", msg.data);
        handle_info_free(h);
    }
    ncmp_buf_free(&msg);
    return found && h->id ? 0 : -1;
}

/* The reference {ref} of a read of the operational cache (any state: the
 * cache is read, not the plugin): 0 with *h filled, or -1 answered. */
static int cache_handle(data *d, ncmp_http_request *req, handle_info *h)
{
    const char *ref = ncmp_http_param(req, "ref");
    int found = 0;
    ncmp_err err;
    ncmp_buf msg = NCMP_BUF_INIT;

    if (resolve(d, &ref, 1, h, &found, &err) != 0) {
        rest_db_answer_error(req, &err);
        return -1;
    }
    if (found)
        return 0;
    ncmp_buf_appendf(&msg, "No cm handles found with reference %s", ref);
    ncmp_http_respond_error(req, 404, "Cm handle not found", msg.data);
    ncmp_buf_free(&msg);
    return -1;
}

/* GET .../data/ds/ncmp-datastore:operational (query: .../query), from
 * the handle's cache (operational.h). */
static void cache_read(data *d, ncmp_http_request *req, int query)
{
    handle_info h = {0};

    if (!query && !ncmp_http_query(req, "resourceIdentifier")) {
        ncmp_http_respond_error(req, 400, "Required parameter 'resourceIdentifier' is not present.",
                                NULL);
        return;
    }
    if (cache_handle(d, req, &h) != 0)
        return;
    if (query)
        operational_query(req, d->pool, h.id);
    else
        operational_read(req, d->cps, h.id);
    handle_info_free(&h);
}

/* GET /ncmp/v1/ch/{ref}/data/ds/{datastore}/query?cps-path=: the
 * operational datastore only, as NCMP */
static void h_query(ncmp_http_request *req, void *arg)
{
    const char *ds = ncmp_http_param(req, "datastore");
    char msg[512];

    if (strcmp(ds, DS_OPERATIONAL) != 0) {
        snprintf(msg, sizeof(msg), "%.400s is not supported", ds);
        ncmp_http_respond_error(req, 400, msg, NULL);
        return;
    }
    cache_read(arg, req, 1);
}

/* A read of the operational datastore: the data-sync cache, in the
 * database (on a worker thread) */
static void operational_get(ncmp_http_request *req, void *arg)
{
    cache_read(arg, req, 0);
}

/* {GET|POST|PUT|PATCH|DELETE} /ncmp/v1/ch/{ref}/data/ds/{datastore} (on
 * the server thread; on a worker when the handle map misses) */
static void h_passthrough(ncmp_http_request *req, void *arg)
{
    data *d = arg;
    const char *method = ncmp_http_method(req), *topic;
    const pt_method *m = NULL;
    handle_info h = {0};

    for (size_t i = 0; i < sizeof(pt_methods) / sizeof(pt_methods[0]); i++)
        if (strcmp(method, pt_methods[i].method) == 0)
            m = &pt_methods[i];
    if (!m) {
        ncmp_http_respond_error(req, 405, "Method not allowed", method);
        return;
    }
    if (strcmp(m->operation, "read") == 0 &&
        strcmp(ncmp_http_param(req, "datastore"), DS_OPERATIONAL) == 0) {
        ncmp_http_to_worker(req, operational_get, d);
        return;
    }
    if (pt_check_datastore(req, m) != 0 || pt_check_query(d, req, m, &topic) != 0 ||
        pt_handle(d, req, &h) != 0)
        return;
    pt_forward(d, req, m, &h, topic);
    handle_info_free(&h);
}

/* --- batch read: validation ---------------------------------------------- */

static int refuse(batch_error *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(batch_error *e, int status, const char *fmt, ...)
{
    va_list ap;

    e->status = status;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
    return -1;
}

static int required_string(json_object *op, const char *key, size_t i, const char **out,
                           batch_error *e)
{
    ncmp_err err;

    if (ncmp_json_string_field(op, key, out, &err) != 0)
        return refuse(e, 400, "operations[%zu]: %s", i, err.msg);
    if (!*out)
        return refuse(e, 400, "operations[%zu]: %s is required", i, key);
    return 0;
}

static int check_operation(json_object *op, size_t i, batch_error *e)
{
    static const char *const writes[] = {"create", "update", "patch", "delete"};
    const char *name, *id, *ds, *s;
    json_object *targets;
    ncmp_err err;

    if (!json_object_is_type(op, json_type_object))
        return refuse(e, 400, "operations[%zu] must be an object", i);
    if (required_string(op, "operation", i, &name, e) ||
        required_string(op, "operationId", i, &id, e) ||
        required_string(op, "datastore", i, &ds, e))
        return -1;
    if (ncmp_json_string_field(op, "options", &s, &err) != 0 ||
        ncmp_json_string_field(op, "resourceIdentifier", &s, &err) != 0 ||
        ncmp_json_array_field(op, "targetIds", &targets, &err) != 0)
        return refuse(e, 400, "operations[%zu]: %s", i, err.msg);
    if (strcmp(name, "read") != 0) {
        for (size_t k = 0; k < sizeof(writes) / sizeof(writes[0]); k++)
            if (strcmp(name, writes[k]) == 0)
                return refuse(e, 400, "%.100s operation not yet supported", name);
        return refuse(e, 400, "%.100s is an invalid operation name", name);
    }
    if (strcmp(ds, DS_OPERATIONAL) == 0)
        return refuse(e, 400, "%s datastore is not supported", ds);
    if (strcmp(ds, DS_PT_OPER) != 0 && strcmp(ds, DS_PT_RUNNING) != 0)
        return refuse(e, 400, "%.200s is an invalid datastore name", ds);
    for (size_t k = 0; targets && k < json_object_array_length(targets); k++)
        if (!json_object_is_type(json_object_array_get_idx(targets, k), json_type_string))
            return refuse(e, 400, "operations[%zu].targetIds[%zu] must be a string", i, k);
    if (targets && json_object_array_length(targets) > MAX_TARGETS)
        return refuse(e, 413, "Operation '%.200s' affects too many (%zu) cm handles", id,
                      json_object_array_length(targets));
    return 0;
}

int data_batch_parse(const char *body, size_t len, json_object **root, batch_error *e)
{
    json_object *ops;
    ncmp_err err;

    *root = NULL;
    if (len == 0)
        return refuse(e, 400, "Required request body is missing");
    if (ncmp_json_parse(body, len, root, &err) != 0)
        return refuse(e, 400, "Invalid JSON: %s", err.msg);
    if (!json_object_is_type(*root, json_type_object))
        goto bad;
    if (ncmp_json_array_field(*root, "operations", &ops, &err) != 0 || !ops)
        goto bad;
    for (size_t i = 0; i < json_object_array_length(ops); i++)
        if (check_operation(json_object_array_get_idx(ops, i), i, e) != 0)
            goto fail;
    return 0;
bad:
    refuse(e, 400, "the body must be a DataOperationRequest: {\"operations\":[...]}");
fail:
    json_object_put(*root);
    *root = NULL;
    return -1;
}

/* --- batch read: dispatch ------------------------------------------------ */

/* One operation's targets, resolved. */
typedef struct batch_op {
    const char *operation_id, *datastore, *options, *resource_id; /* borrowed */
    size_t n;
    const char **refs; /* as the client sent them */
    handle_info *info;
    int *found;
} batch_op;

typedef struct batch {
    data *d;
    const char *topic, *request_id, *auth;
    batch_op *ops;
    size_t nops;
    ncmp_buf failures; /* responses[] entries for 100/101, comma-separated */
} batch;

/* What a DMI call must report when it fails. */
typedef struct group_call {
    data *d;
    char *topic, *request_id;
    ncmp_buf heads; /* response_head()s separated by '\n' (JSON has no raw newline) */
} group_call;

static const char *str_field(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static void group_done(ncmp_dmi_response *r, void *opaque)
{
    group_call *g = opaque;

    if (r->status < 200 || r->status >= 300) {
        const char *code, *message;
        ncmp_buf resp = NCMP_BUF_INIT;
        char *save = NULL;
        dmi_failure_status(r, &code, &message);
        log_warn("data", "batch %s: %s", g->request_id, r->error[0] ? r->error : "DMI refused");
        for (char *head = strtok_r(g->heads.data, "\n", &save); head;
             head = strtok_r(NULL, "\n", &save)) {
            if (resp.len)
                ncmp_buf_append_char(&resp, ',');
            ncmp_buf_append_str(&resp, head);
            response_status(&resp, code, message);
        }
        event_send(g->d, g->topic, g->request_id, resp.data);
        ncmp_buf_free(&resp);
    }
    ncmp_dmi_response_destroy(r);
    free(g->topic);
    free(g->request_id);
    ncmp_buf_free(&g->heads);
    free(g);
}

static void batch_op_free(batch_op *op)
{
    for (size_t i = 0; i < op->n; i++)
        if (op->found[i])
            handle_info_free(&op->info[i]);
    free(op->refs);
    free(op->info);
    free(op->found);
}

/* Record the references of `op` for which keep(i) holds as one response
 * with the given status. */
static void batch_fail(batch *b, const batch_op *op, int ready, const char *code,
                       const char *message)
{
    const char **ids = ncmp_xcalloc(op->n ? op->n : 1, sizeof(*ids));
    size_t n = 0;

    for (size_t i = 0; i < op->n; i++) {
        int is = op->found[i] && op->info[i].state == NCMP_STATE_READY;
        if (ready ? (op->found[i] && !is) : !op->found[i])
            ids[n++] = op->refs[i];
    }
    if (n) {
        if (b->failures.len)
            ncmp_buf_append_char(&b->failures, ',');
        response_head(&b->failures, op->operation_id, ids, n, op->resource_id, op->options);
        response_status(&b->failures, code, message);
    }
    free(ids);
}

static int batch_resolve(batch *b, json_object *ops, ncmp_err *err)
{
    b->nops = json_object_array_length(ops);
    b->ops = ncmp_xcalloc(b->nops ? b->nops : 1, sizeof(*b->ops));
    for (size_t k = 0; k < b->nops; k++) {
        json_object *o = json_object_array_get_idx(ops, k), *targets = NULL;
        batch_op *op = &b->ops[k];
        op->operation_id = str_field(o, "operationId");
        op->datastore = str_field(o, "datastore");
        op->options = str_field(o, "options");
        op->resource_id = str_field(o, "resourceIdentifier");
        json_object_object_get_ex(o, "targetIds", &targets);
        op->n = targets ? json_object_array_length(targets) : 0;
        op->refs = ncmp_xcalloc(op->n ? op->n : 1, sizeof(*op->refs));
        op->info = ncmp_xcalloc(op->n ? op->n : 1, sizeof(*op->info));
        op->found = ncmp_xcalloc(op->n ? op->n : 1, sizeof(*op->found));
        for (size_t i = 0; i < op->n; i++)
            op->refs[i] = json_object_get_string(json_object_array_get_idx(targets, i));
        if (resolve(b->d, op->refs, op->n, op->info, op->found, err) != 0)
            return -1;
        batch_fail(b, op, 0, ST_NOT_FOUND);
        batch_fail(b, op, 1, ST_NOT_READY);
    }
    return 0;
}

static int target_in(const batch_op *op, size_t i, const char *dmi)
{
    return op->found[i] && op->info[i].state == NCMP_STATE_READY &&
           strcmp(op->info[i].dmi, dmi) == 0;
}

/* The operation object of `op` for the DMI `dmi` (its READY handles
 * there), appended to the body, and its failure head to g->heads. */
static void group_op(ncmp_buf *body, group_call *g, const batch_op *op, const char *dmi)
{
    const char **ids = ncmp_xcalloc(op->n ? op->n : 1, sizeof(*ids));
    size_t n = 0;

    for (size_t i = 0; i < op->n; i++) {
        if (!target_in(op, i, dmi))
            continue;
        if (n == 0) {
            if (body->data[body->len - 1] == '}')
                ncmp_buf_append_char(body, ',');
            ncmp_buf_append_str(body, "{\"operation\":\"read\"");
            append_field(body, "operationId", op->operation_id);
            append_field(body, "datastore", op->datastore);
            if (op->options)
                append_field(body, "options", op->options);
            if (op->resource_id)
                append_field(body, "resourceIdentifier", op->resource_id);
            ncmp_buf_append_str(body, ",\"cmHandles\":[");
        } else {
            ncmp_buf_append_char(body, ',');
        }
        ncmp_buf_append_str(body, "{\"id\":");
        ncmp_buf_append_json_string(body, op->info[i].id);
        ncmp_buf_append_str(body, ",\"cmHandleProperties\":");
        ncmp_buf_append_str(body, op->info[i].properties);
        append_field(body, "moduleSetTag", op->info[i].module_set_tag);
        ncmp_buf_append_char(body, '}');
        ids[n++] = op->refs[i];
    }
    if (n) {
        ncmp_buf_append_str(body, "]}");
        if (g->heads.len)
            ncmp_buf_append_char(&g->heads, '\n');
        response_head(&g->heads, op->operation_id, ids, n, op->resource_id, op->options);
    }
    free(ids);
}

/* One POST {dmi}/dmi/v1/data for the READY targets of DMI `dmi`. */
static void batch_send_group(batch *b, const char *dmi)
{
    group_call *g = ncmp_xcalloc(1, sizeof(*g));
    ncmp_buf url = NCMP_BUF_INIT, body = NCMP_BUF_INIT, hdr = NCMP_BUF_INIT;
    const char *headers[2] = {NULL, NULL};
    ncmp_dmi_request dr = {0};
    ncmp_err err;

    g->d = b->d;
    g->topic = ncmp_xstrdup(b->topic);
    g->request_id = ncmp_xstrdup(b->request_id);
    ncmp_buf_append_str(&body, "{\"operations\":[");
    for (size_t k = 0; k < b->nops; k++)
        group_op(&body, g, &b->ops[k], dmi);
    ncmp_buf_append_str(&body, "]}");
    ncmp_dmi_url_data_operation(&url, dmi, b->request_id, b->topic);
    dmi_post(&dr, &url, &body, b->auth, &hdr, headers);
    if (data_submit(b->d, &dr, group_done, g, &err) != 0) {
        ncmp_dmi_response *r = ncmp_xcalloc(1, sizeof(*r));
        r->failure = NCMP_DMI_FAIL_CANCELLED;
        snprintf(r->error, sizeof(r->error), "%s", err.msg);
        group_done(r, g);
    }
    ncmp_buf_free(&url);
    ncmp_buf_free(&body);
    ncmp_buf_free(&hdr);
}

/* Every distinct DMI of the READY targets, once. */
static void batch_send(batch *b)
{
    const char **sent = NULL;
    size_t nsent = 0, cap = 0;

    for (size_t k = 0; k < b->nops; k++) {
        const batch_op *op = &b->ops[k];
        for (size_t i = 0; i < op->n; i++) {
            int seen = 0;
            if (!op->found[i] || op->info[i].state != NCMP_STATE_READY)
                continue;
            for (size_t s = 0; s < nsent && !seen; s++)
                seen = strcmp(sent[s], op->info[i].dmi) == 0;
            if (seen)
                continue;
            if (nsent == cap) {
                cap = cap ? cap * 2 : 8;
                sent = ncmp_xrealloc(sent, cap * sizeof(*sent));
            }
            sent[nsent++] = op->info[i].dmi;
            batch_send_group(b, op->info[i].dmi);
        }
    }
    free(sent);
}

/* Carry out a checked request: DMI calls and failure events. */
static void batch_dispatch(data *d, json_object *root, const char *topic, const char *request_id,
                           const char *auth)
{
    batch b = {d, topic, request_id, auth, NULL, 0, NCMP_BUF_INIT};
    json_object *ops = NULL;
    ncmp_err err;

    json_object_object_get_ex(root, "operations", &ops);
    if (batch_resolve(&b, ops, &err) != 0) {
        /* the database is away: every target of the request fails */
        log_error("data", "batch %s: %s", request_id, err.msg);
        ncmp_buf_reset(&b.failures);
        for (size_t k = 0; k < b.nops; k++) {
            if (b.failures.len)
                ncmp_buf_append_char(&b.failures, ',');
            response_head(&b.failures, b.ops[k].operation_id, b.ops[k].refs, b.ops[k].n,
                          b.ops[k].resource_id, b.ops[k].options);
            response_status(&b.failures, ST_UNKNOWN);
        }
        event_send(d, topic, request_id, b.failures.data);
        goto out;
    }
    if (b.failures.len)
        event_send(d, topic, request_id, b.failures.data);
    batch_send(&b);
out:
    for (size_t k = 0; k < b.nops; k++)
        batch_op_free(&b.ops[k]);
    free(b.ops);
    ncmp_buf_free(&b.failures);
}

/* POST /ncmp/v1/data?topic= */
static void h_batch(ncmp_http_request *req, void *arg)
{
    data *d = arg;
    const char *topic = ncmp_http_query(req, "topic");
    const char *auth = ncmp_http_header(req, "Authorization");
    size_t len;
    const char *body = ncmp_http_body(req, &len);
    json_object *root = NULL;
    batch_error e;
    ncmp_buf ans = NCMP_BUF_INIT;
    char request_id[37];
    char *auth_copy;

    if (!topic) {
        ncmp_http_respond_error(req, 400, "Required parameter 'topic' is not present.", NULL);
        return;
    }
    if (!data_topic_valid(topic, d->cfg->async_forward_input_topic)) {
        ncmp_http_respond_error(req, 400, "Invalid topic name", topic);
        return;
    }
    if (data_batch_parse(body, len, &root, &e) != 0) {
        ncmp_http_respond_error(req, e.status, e.message, NULL);
        return;
    }
    if (!d->cfg->data_async_enabled) {
        ncmp_buf_append_str(&ans, "{\"status\":\"" ASYNC_DISABLED "\"}");
        ncmp_http_respond_json(req, 200, &ans);
        json_object_put(root);
        return;
    }
    /* answer first: the client waits for nothing but the request id; the
     * topic and header are copied since the request ends with the answer */
    ncmp_uuid4(request_id);
    ncmp_buf_append_str(&ans, "{\"requestId\":\"");
    ncmp_buf_append_str(&ans, request_id);
    ncmp_buf_append_str(&ans, "\"}");
    topic = ncmp_xstrdup(topic);
    auth_copy = auth ? ncmp_xstrdup(auth) : NULL;
    ncmp_http_respond_json(req, 200, &ans);
    batch_dispatch(d, root, topic, request_id, auth_copy);
    free((char *)topic);
    free(auth_copy);
    json_object_put(root);
}

/* --- batch read from Kafka ----------------------------------------------- */

/* The request topic is read by the rest role: dlq_role is "rest". */
/* One record of the request topic (on a pump worker's thread): a batch
 * read to dispatch, or a dead letter with the reason. At least once: the
 * pump commits it once the DMI calls were submitted. */
static ncmp_pump_verdict request_record(void *arg, const rd_kafka_message_t *m,
                                        const rd_kafka_headers_t *headers, ncmp_pump_route *r)
{
    data *d = arg;
    char topic[256], request_id[256];
    json_object *root = NULL;
    batch_error e;

    if (!ncmp_kafka_header(m, "ce_destination", topic, sizeof(topic))) {
        snprintf(r->reason, sizeof(r->reason), "no ce_destination header (the client topic)");
        return NCMP_PUMP_REJECT;
    }
    if (!data_topic_valid(topic, d->cfg->async_forward_input_topic)) {
        snprintf(r->reason, sizeof(r->reason), "ce_destination is not a valid client topic");
        return NCMP_PUMP_REJECT;
    }
    if (!ncmp_kafka_header(m, "ce_id", request_id, sizeof(request_id)) || !*request_id)
        ncmp_uuid4(request_id);
    if (data_batch_parse(m->payload, m->payload ? m->len : 0, &root, &e) != 0) {
        snprintf(r->reason, sizeof(r->reason), "%d: %s", e.status, e.message);
        return NCMP_PUMP_REJECT;
    }
    batch_dispatch(d, root, topic, request_id, NULL);
    json_object_put(root);
    return NCMP_PUMP_DONE;
}

static int requests_start(data *d, ncmp_err *err)
{
    const char *topics[2] = {d->cfg->data_request_topic, NULL};
    char dlq[300];
    ncmp_kafka_opts kopts;

    if (!*d->cfg->data_request_topic)
        return 0;
    /* made here when missing (create-topics knows it too), so that a rest
     * process started before anyone created it does not wait on it */
    ncmp_dlq_topic(dlq, sizeof(dlq), topics[0]);
    topics[1] = dlq;
    ncmp_kafka_opts_from_config(&kopts, d->cfg);
    if (ncmp_kafka_create_topics(&kopts, topics, 2, d->cfg->kafka_topic_partitions, 30000, err) !=
        0)
        return ncmp_err_prefix(err, "data: request topic %s", topics[0]);
    d->requests_role = (ncmp_pump_role){.name = "data-requests",
                                        .dlq_role = "rest",
                                        .input = d->cfg->data_request_topic,
                                        .workers = 1,
                                        .batch_size = REQUEST_BATCH,
                                        .batch_wait_ms = 100,
                                        .handle = request_record,
                                        .arg = d};
    if (ncmp_pump_start(&d->requests, d->cfg, &d->requests_role, err) != 0)
        return ncmp_err_prefix(err, "data: request topic %s", topics[0]);
    return 0;
}

/* --- start and stop ------------------------------------------------------ */

static void routes_add(data *d, ncmp_http_server *srv)
{
    static const char pattern[] = "/ncmp/v1/ch/{ref}/data/ds/{datastore}";

    for (size_t i = 0; i < sizeof(pt_methods) / sizeof(pt_methods[0]); i++)
        /* from the handle map, then the DMI asynchronously: on the server
         * thread, never behind queued searches */
        ncmp_http_route_inline(srv, pt_methods[i].method, pattern, h_passthrough, d);
    ncmp_http_route(srv, "GET", "/ncmp/v1/ch/{ref}/data/ds/{datastore}/query", h_query, d);
    ncmp_http_route(srv, "POST", "/ncmp/v1/data", h_batch, d);
    provmns_routes_add(d, srv);
}

/* share of `limit` for one of n clients, rounded up (0: none stays none) */
static int share_of(int limit, int n)
{
    return limit <= 0 ? limit : (limit + n - 1) / n;
}

/* The role's DMI clients: dmi.data-threads of them, the limits shared out. */
static int dmis_start(data *d, ncmp_err *err)
{
    ncmp_dmi_opts opts;
    int n = d->cfg->dmi_data_threads > 0 ? d->cfg->dmi_data_threads : 1;

    ncmp_dmi_opts_from_config(&opts, d->cfg);
    opts.max_connections_per_host = share_of((int)opts.max_connections_per_host, n);
    opts.max_connections = share_of((int)opts.max_connections, n);
    opts.max_in_flight_per_host = share_of((int)opts.max_in_flight_per_host, n);
    d->dmis = ncmp_xcalloc((size_t)n, sizeof(*d->dmis));
    for (; d->ndmis < n; d->ndmis++)
        if (ncmp_dmi_new(&d->dmis[d->ndmis], &opts, err) != 0)
            return -1;
    return 0;
}

int data_start(data **out, const ncmp_services *svc, ncmp_http_server *srv, rest_pool *pool,
               cps_api *cps_reads, ncmp_err *err)
{
    data *d = ncmp_xcalloc(1, sizeof(*d));

    if (!policy_default_valid(svc->cfg->policy_executor_default_decision)) {
        free(d);
        return ncmp_err_set(err, NCMP_ERR_FATAL,
                            "policy-executor.default-decision must be allow or deny, not '%s'",
                            svc->cfg->policy_executor_default_decision);
    }
    d->cfg = svc->cfg;
    d->pool = pool;
    d->cps = cps_reads;
    d->producer = svc->producer;
    pthread_rwlock_init(&d->gate, NULL);
    pthread_mutex_init(&d->calls_lock, NULL);
    pthread_cond_init(&d->calls_done, NULL);
    if (dmis_start(d, err) != 0 || handle_cache_start(&d->cache, d->cfg, err) != 0 ||
        requests_start(d, err) != 0 || datajob_start(&d->jobs, d, svc, srv, err) != 0) {
        data_stop(d);
        data_destroy(d);
        return -1;
    }
    routes_add(d, srv);
    *out = d;
    return 0;
}

void data_stop(data *d)
{
    struct timespec deadline;

    if (!d)
        return;
    datajob_stop(d->jobs);
    d->jobs = NULL;
    if (d->requests) {
        ncmp_err ignore;
        ncmp_pump_stop(d->requests);
        ncmp_pump_join(d->requests, &ignore);
        ncmp_pump_destroy(d->requests);
        d->requests = NULL;
    }
    pthread_rwlock_wrlock(&d->gate);
    d->closed = 1;
    pthread_rwlock_unlock(&d->gate);
    /* The calls in flight get their answers (each ends within the DMI
     * response timeout); past that and a margin, the process's shutdown
     * watchdog has the last word. */
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += d->cfg->dmi_response_timeout_ms / 1000 + 5;
    pthread_mutex_lock(&d->calls_lock);
    while (d->calls > 0)
        if (pthread_cond_timedwait(&d->calls_done, &d->calls_lock, &deadline) != 0)
            break;
    if (d->calls > 0)
        log_warn("data", "%ld DMI calls still in flight at shutdown", d->calls);
    pthread_mutex_unlock(&d->calls_lock);
}

void data_destroy(data *d)
{
    if (!d)
        return;
    data_stop(d);
    handle_cache_stop(d->cache);
    /* calls still out past data_stop's wait would be cancelled into
     * requests that are gone: then the clients are left to the exit */
    if (d->calls == 0) {
        for (int i = 0; i < d->ndmis; i++)
            ncmp_dmi_destroy(d->dmis[i]);
        free(d->dmis);
    }
    pthread_rwlock_destroy(&d->gate);
    pthread_mutex_destroy(&d->calls_lock);
    pthread_cond_destroy(&d->calls_done);
    free(d);
}
