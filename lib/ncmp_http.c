#include "ncmp_http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "ncmp_jwt.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "ncmp_time.h"
#include "ncmp_utf8.h"

#define MAX_PARAMS         8
#define MAX_QUERY          32
#define MAX_ROUTE_SEGMENTS 16

typedef struct http_route {
    char *method;
    char *pattern;
    char *segments[MAX_ROUTE_SEGMENTS]; /* literal, or "{name}" */
    int nsegments;
    ncmp_http_handler fn;
    const ncmp_http_sink *sink; /* a streamed body (ncmp_http_route_sink), or NULL */
    size_t max_body_bytes;      /* the sink's limit */
    int open;                   /* served without authentication */
    int inline_;                /* the handler runs on the server thread */
    void *arg;
} http_route;

struct ncmp_http_server {
    struct MHD_Daemon *daemon;
    ncmp_http_options opts;
    char *host, *auth_username, *auth_password;
    http_route *routes;
    size_t nroutes;
    int port;
    /* requests suspended and not answered yet (answered 503 on destroy) */
    pthread_mutex_t lock;
    ncmp_http_request *suspended;
    atomic_int in_flight; /* requests from their headers until on_completed */
    /* set on destroy: requests that begin after it are answered 503 (MHD's
     * own quiesce races its epoll threads in 0.9.7x and aborts) */
    atomic_int closing;
    ncmp_gauge *in_flight_gauge;
    /* the worker threads and their queue (guarded by qlock) */
    pthread_t *workers;
    int nworkers;
    pthread_mutex_t qlock;
    pthread_cond_t qcond;
    ncmp_http_request *qhead, *qtail;
    int queued;
    int stopping;
    ncmp_gauge *queued_gauge;
};

/* What the handler answered, until MHD takes it. */
typedef struct http_answer {
    int status;
    struct MHD_Response *resp;
} http_answer;

#define MAX_EXTRA_HEADERS 4

struct ncmp_http_request {
    ncmp_http_server *srv;
    struct MHD_Connection *conn;
    char *uri; /* raw: path?query */
    char *path;
    const char *method;
    const http_route *route;
    char *pnames[MAX_PARAMS], *pvalues[MAX_PARAMS];
    int nparams;
    char *qnames[MAX_QUERY], *qvalues[MAX_QUERY];
    int nquery;
    ncmp_buf body;
    int started;         /* the first access-handler call happened */
    int counted;         /* in srv->in_flight */
    int too_large;       /* body beyond the limit: discarded, 413 at the end */
    int bad_path;        /* undecodable path or query: 400 at the end */
    int dispatched;      /* the handler ran */
    void *sink_state;    /* the sink's, between open and finish */
    int sink_stopped;    /* the sink wants no more bytes */
    size_t sink_bytes;   /* body bytes seen by a sink route */
    int in_handler;      /* the handler is running (a respond now is synchronous) */
    int suspended;       /* MHD_suspend_connection was called */
    int suspend_wanted;  /* the handler called ncmp_http_suspend, or it was queued */
    int handler_suspend; /* the handler itself called ncmp_http_suspend */
    int on_worker;       /* a worker thread runs its handler (req->lock) */
    int free_pending;    /* completed meanwhile: the worker frees it (req->lock) */
    ncmp_http_request *next_queued;
    double t_queued;             /* when it was queued for a worker thread */
    ncmp_http_handler worker_fn; /* what the worker runs (the route's handler by default) */
    void *worker_arg;
    int answered; /* a respond function was called */
    int queued;   /* the answer went to MHD */
    int status;   /* what was answered, for the log and the hook */
    double t_start;
    char *xnames[MAX_EXTRA_HEADERS], *xvalues[MAX_EXTRA_HEADERS]; /* ncmp_http_add_header */
    int nextra;
    http_answer answer;
    pthread_mutex_t lock; /* answered/suspended across threads */
    /* srv->suspended's list: unlinked in O(1) when the answer comes */
    ncmp_http_request *next_suspended, *prev_suspended;
};

/* --- status texts and the error body ------------------------------------- */

const char *ncmp_http_status_name(int status)
{
    static const struct {
        int code;
        const char *name;
    } names[] = {
        {200, "OK"},
        {201, "CREATED"},
        {202, "ACCEPTED"},
        {204, "NO_CONTENT"},
        {400, "BAD_REQUEST"},
        {401, "UNAUTHORIZED"},
        {403, "FORBIDDEN"},
        {404, "NOT_FOUND"},
        {405, "METHOD_NOT_ALLOWED"},
        {406, "NOT_ACCEPTABLE"},
        {408, "REQUEST_TIMEOUT"},
        {409, "CONFLICT"},
        {413, "PAYLOAD_TOO_LARGE"},
        {414, "URI_TOO_LONG"},
        {415, "UNSUPPORTED_MEDIA_TYPE"},
        {500, "INTERNAL_SERVER_ERROR"},
        {501, "NOT_IMPLEMENTED"},
        {502, "BAD_GATEWAY"},
        {503, "SERVICE_UNAVAILABLE"},
        {504, "GATEWAY_TIMEOUT"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].code == status)
            return names[i].name;
    return "UNKNOWN";
}

void ncmp_http_error_json(ncmp_buf *out, int status, const char *message, const char *details)
{
    ncmp_buf_appendf(out, "{\"status\":\"%d %s\",\"message\":", status,
                     ncmp_http_status_name(status));
    ncmp_buf_append_json_string(out, message ? message : "");
    if (details) {
        ncmp_buf_append_str(out, ",\"details\":");
        ncmp_buf_append_json_string(out, details);
    }
    ncmp_buf_append_char(out, '}');
}

/* --- decoding ------------------------------------------------------------ */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *ncmp_http_decode(const char *s, size_t len, int plus_is_space)
{
    char *out = ncmp_xmalloc(len + 1);
    size_t n = 0;

    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '%') {
            int hi, lo;
            if (i + 2 >= len)
                goto bad;
            hi = hexval(s[i + 1]);
            lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0)
                goto bad;
            c = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        if (c == '\0')
            goto bad;
        out[n++] = c;
    }
    out[n] = '\0';
    if (!ncmp_utf8_valid(out, n))
        goto bad;
    return out;
bad:
    free(out);
    return NULL;
}

/* --- the server ---------------------------------------------------------- */

int ncmp_http_server_new(ncmp_http_server **out, const ncmp_http_options *opts, ncmp_err *err)
{
    ncmp_http_server *srv;

    if (opts->threads < 1)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "http: threads must be at least 1");
    if (opts->port < 0 || opts->port > 65535)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "http: port %d out of range", opts->port);
    srv = ncmp_xcalloc(1, sizeof(*srv));
    srv->opts = *opts;
    srv->host = ncmp_xstrdup(opts->host ? opts->host : "");
    srv->auth_username = ncmp_xstrdup(opts->auth_username ? opts->auth_username : "");
    srv->auth_password = ncmp_xstrdup(opts->auth_password ? opts->auth_password : "");
    srv->opts.host = srv->host;
    srv->opts.auth_username = srv->auth_username;
    srv->opts.auth_password = srv->auth_password;
    if (srv->opts.retry_after_s <= 0)
        srv->opts.retry_after_s = 1;
    pthread_mutex_init(&srv->lock, NULL);
    srv->in_flight_gauge = ncmp_gauge_get(ncmp_metrics_lib_get()->http_in_flight, NULL);
    srv->queued_gauge = ncmp_gauge_get(ncmp_metrics_lib_get()->http_queued, NULL);
    pthread_mutex_init(&srv->qlock, NULL);
    pthread_cond_init(&srv->qcond, NULL);
    *out = srv;
    return 0;
}

double ncmp_http_age_ms(const ncmp_http_request *req)
{
    return ncmp_now_ms() - req->t_start;
}

int ncmp_http_in_flight(const ncmp_http_server *srv)
{
    return atomic_load(&srv->in_flight);
}

int ncmp_http_queued(const ncmp_http_server *srv)
{
    int n;
    pthread_mutex_lock((pthread_mutex_t *)&srv->qlock);
    n = srv->queued;
    pthread_mutex_unlock((pthread_mutex_t *)&srv->qlock);
    return n;
}

void ncmp_http_route(ncmp_http_server *srv, const char *method, const char *pattern,
                     ncmp_http_handler fn, void *arg)
{
    http_route *r;
    char *p;

    srv->routes = ncmp_xrealloc(srv->routes, (srv->nroutes + 1) * sizeof(*srv->routes));
    r = &srv->routes[srv->nroutes++];
    memset(r, 0, sizeof(*r));
    r->method = ncmp_xstrdup(method);
    r->pattern = ncmp_xstrdup(pattern);
    r->fn = fn;
    r->arg = arg;
    p = ncmp_xstrdup(pattern[0] == '/' ? pattern + 1 : pattern);
    for (char *s = p; s && r->nsegments < MAX_ROUTE_SEGMENTS;) {
        char *slash = strchr(s, '/');
        if (slash)
            *slash = '\0';
        r->segments[r->nsegments++] = ncmp_xstrdup(s);
        s = slash ? slash + 1 : NULL;
    }
    free(p);
}

void ncmp_http_route_sink(ncmp_http_server *srv, const char *method, const char *pattern,
                          size_t max_body_bytes, const ncmp_http_sink *sink, void *arg)
{
    ncmp_http_route(srv, method, pattern, NULL, arg);
    srv->routes[srv->nroutes - 1].sink = sink;
    srv->routes[srv->nroutes - 1].max_body_bytes = max_body_bytes;
}

void ncmp_http_route_inline(ncmp_http_server *srv, const char *method, const char *pattern,
                            ncmp_http_handler fn, void *arg)
{
    ncmp_http_route(srv, method, pattern, fn, arg);
    srv->routes[srv->nroutes - 1].inline_ = 1;
}

void ncmp_http_route_open(ncmp_http_server *srv, const char *method, const char *pattern,
                          ncmp_http_handler fn, void *arg)
{
    ncmp_http_route(srv, method, pattern, fn, arg);
    srv->routes[srv->nroutes - 1].open = 1;
}

void ncmp_http_route_open_inline(ncmp_http_server *srv, const char *method, const char *pattern,
                                 ncmp_http_handler fn, void *arg)
{
    ncmp_http_route_open(srv, method, pattern, fn, arg);
    srv->routes[srv->nroutes - 1].inline_ = 1;
}

void ncmp_http_routes_each(const ncmp_http_server *srv,
                           void (*fn)(void *arg, const char *method, const char *pattern, int open),
                           void *arg)
{
    for (size_t i = 0; i < srv->nroutes; i++)
        fn(arg, srv->routes[i].method, srv->routes[i].pattern, srv->routes[i].open);
}

int ncmp_http_server_port(const ncmp_http_server *srv)
{
    return srv->port;
}

/* --- request parsing ----------------------------------------------------- */

static void query_parse(ncmp_http_request *req, const char *q)
{
    while (*q) {
        size_t n = strcspn(q, "&");
        const char *eq = memchr(q, '=', n);
        size_t nlen = eq ? (size_t)(eq - q) : n;
        if (n > 0 && req->nquery < MAX_QUERY) {
            char *name = ncmp_http_decode(q, nlen, 1);
            char *value = eq ? ncmp_http_decode(eq + 1, n - nlen - 1, 1) : ncmp_xstrdup("");
            if (!name || !value) {
                free(name);
                free(value);
                req->bad_path = 1;
                return;
            }
            req->qnames[req->nquery] = name;
            req->qvalues[req->nquery++] = value;
        }
        q += n;
        if (*q == '&')
            q++;
    }
}

static void uri_parse(ncmp_http_request *req)
{
    const char *q = strchr(req->uri, '?');
    size_t plen = q ? (size_t)(q - req->uri) : strlen(req->uri);

    req->path = ncmp_xmalloc(plen + 1);
    memcpy(req->path, req->uri, plen);
    req->path[plen] = '\0';
    if (q)
        query_parse(req, q + 1);
}

static void params_clear(ncmp_http_request *req)
{
    for (int i = 0; i < req->nparams; i++) {
        free(req->pnames[i]);
        free(req->pvalues[i]);
    }
    req->nparams = 0;
}

/* Is route segment `p` the rest-of-path wildcard "{name...}"? */
static int seg_is_rest(const char *p)
{
    size_t n = strlen(p);
    return p[0] == '{' && n > 5 && strcmp(p + n - 4, "...}") == 0;
}

/* The raw path after its first `skip` segments and their separators, or
 * NULL when it has no more than that. */
static const char *path_rest(const char *path, int skip)
{
    const char *s = path[0] == '/' ? path + 1 : path;

    for (int i = 0; i < skip; i++) {
        s = strchr(s, '/');
        if (!s)
            return NULL;
        s++;
    }
    return s;
}

static void param_add(ncmp_http_request *req, const char *pattern_seg, char *value)
{
    if (req->nparams == MAX_PARAMS) {
        free(value);
        return;
    }
    req->pnames[req->nparams] = ncmp_xstrdup(pattern_seg + 1);
    req->pnames[req->nparams][strcspn(pattern_seg + 1, ".}")] = '\0';
    req->pvalues[req->nparams++] = value;
}

/* Does `route` match the decoded segments? Sets the path parameters. A
 * last segment "{name...}" takes the rest of the raw path (decoded as a
 * whole), so nsegs may be capped for a deep path. */
static int route_try(ncmp_http_request *req, const http_route *route, char **segs, int nsegs)
{
    int fixed = route->nsegments, rest = 0;
    const char *raw = NULL;
    char *value = NULL;

    if (fixed > 0 && seg_is_rest(route->segments[fixed - 1])) {
        rest = 1;
        fixed--;
    }
    if (rest ? nsegs <= fixed : route->nsegments != nsegs)
        return 0;
    for (int i = 0; i < fixed; i++) {
        const char *p = route->segments[i];
        if (p[0] != '{' && strcmp(p, segs[i]) != 0)
            return 0;
        if (p[0] == '{' && !segs[i][0])
            return 0;
    }
    if (rest) {
        raw = path_rest(req->path, fixed);
        if (!raw || !(value = ncmp_http_decode(raw, strlen(raw), 0)))
            return 0; /* cannot happen: path_split decoded every segment */
    }
    params_clear(req);
    for (int i = 0; i < fixed; i++)
        if (route->segments[i][0] == '{')
            param_add(req, route->segments[i], ncmp_xstrdup(segs[i]));
    if (rest)
        param_add(req, route->segments[fixed], value);
    return 1;
}

/* Split the path into decoded segments; -1 when one does not decode. */
static int path_split(const char *path, char **segs, int max, int *nsegs)
{
    const char *s = path[0] == '/' ? path + 1 : path;

    *nsegs = 0;
    for (;;) {
        size_t n = strcspn(s, "/");
        if (*nsegs == max) {
            /* deeper than any fixed route: only a "{name...}" one may
             * match, but the rest must decode all the same */
            char *rest = ncmp_http_decode(s, strlen(s), 0);
            free(rest);
            return rest ? 0 : -1;
        }
        segs[*nsegs] = ncmp_http_decode(s, n, 0);
        if (!segs[*nsegs])
            return -1;
        (*nsegs)++;
        if (!s[n])
            return 0;
        s += n + 1;
    }
}

/* The route for the request; *other_method says a route matched the path
 * with another method (405). -1 when the path does not decode. */
static int route_find(ncmp_http_request *req, int *other_method)
{
    char *segs[MAX_ROUTE_SEGMENTS + 1];
    int nsegs = 0, rc;
    const ncmp_http_server *srv = req->srv;

    *other_method = 0;
    rc = path_split(req->path, segs, MAX_ROUTE_SEGMENTS + 1, &nsegs);
    for (size_t i = 0; rc == 0 && i < srv->nroutes && !req->route; i++) {
        if (!route_try(req, &srv->routes[i], segs, nsegs))
            continue;
        if (strcmp(srv->routes[i].method, req->method) == 0)
            req->route = &srv->routes[i];
        else
            *other_method = 1;
    }
    if (!req->route)
        params_clear(req);
    for (int i = 0; i < nsegs; i++)
        free(segs[i]);
    return rc;
}

/* --- request accessors --------------------------------------------------- */

const char *ncmp_http_method(const ncmp_http_request *req)
{
    return req->method;
}

const char *ncmp_http_path(const ncmp_http_request *req)
{
    return req->path;
}

const char *ncmp_http_route_pattern(const ncmp_http_request *req)
{
    return req->route ? req->route->pattern : "-";
}

const char *ncmp_http_param(const ncmp_http_request *req, const char *name)
{
    for (int i = 0; i < req->nparams; i++)
        if (strcmp(req->pnames[i], name) == 0)
            return req->pvalues[i];
    return NULL;
}

const char *ncmp_http_query(const ncmp_http_request *req, const char *name)
{
    for (int i = 0; i < req->nquery; i++)
        if (strcmp(req->qnames[i], name) == 0)
            return req->qvalues[i];
    return NULL;
}

int ncmp_http_query_bool(const ncmp_http_request *req, const char *name, int def, int *out)
{
    const char *v = ncmp_http_query(req, name);

    if (!v) {
        *out = def;
        return 0;
    }
    if (strcasecmp(v, "true") == 0) {
        *out = 1;
        return 0;
    }
    if (strcasecmp(v, "false") == 0) {
        *out = 0;
        return 0;
    }
    return -1;
}

const char *ncmp_http_header(const ncmp_http_request *req, const char *name)
{
    return req->conn ? MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name) : NULL;
}

const char *ncmp_http_body(const ncmp_http_request *req, size_t *len)
{
    *len = req->body.len;
    return req->body.data ? req->body.data : "";
}

/* --- answering ----------------------------------------------------------- */

/* Hand the answer over; resumes the connection when it was suspended.
 * Lock order everywhere: server, then request. */
void ncmp_http_add_header(ncmp_http_request *req, const char *name, const char *value)
{
    if (req->nextra == MAX_EXTRA_HEADERS) {
        log_error("http", "%s %s: more than %d extra headers; %s dropped", req->method, req->path,
                  MAX_EXTRA_HEADERS, name);
        return;
    }
    req->xnames[req->nextra] = ncmp_xstrdup(name);
    req->xvalues[req->nextra++] = ncmp_xstrdup(value);
}

static void answer_set(ncmp_http_request *req, int status, struct MHD_Response *resp)
{
    ncmp_http_server *srv = req->srv;

    pthread_mutex_lock(&srv->lock);
    pthread_mutex_lock(&req->lock);
    if (req->answered) {
        pthread_mutex_unlock(&req->lock);
        pthread_mutex_unlock(&srv->lock);
        log_error("http", "%s %s answered twice; the second answer (%d) is dropped", req->method,
                  req->path, status);
        MHD_destroy_response(resp);
        return;
    }
    req->answered = 1;
    req->status = status;
    for (int i = 0; i < req->nextra; i++)
        MHD_add_response_header(resp, req->xnames[i], req->xvalues[i]);
    req->answer.status = status;
    req->answer.resp = resp;
    if (req->suspended) {
        if (req->prev_suspended)
            req->prev_suspended->next_suspended = req->next_suspended;
        else
            srv->suspended = req->next_suspended;
        if (req->next_suspended)
            req->next_suspended->prev_suspended = req->prev_suspended;
        req->next_suspended = req->prev_suspended = NULL;
        req->suspended = 0;
        MHD_resume_connection(req->conn);
    }
    pthread_mutex_unlock(&req->lock);
    pthread_mutex_unlock(&srv->lock);
}

void ncmp_http_respond(ncmp_http_request *req, int status, const char *content_type,
                       const void *body, size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);

    if (content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    answer_set(req, status, resp);
}

void ncmp_http_respond_json(ncmp_http_request *req, int status, ncmp_buf *body)
{
    struct MHD_Response *resp;

    if (!body->data)
        ncmp_buf_append_str(body, "");
    resp = MHD_create_response_from_buffer(body->len, body->data, MHD_RESPMEM_MUST_FREE);
    body->data = NULL;
    body->len = body->cap = 0;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    answer_set(req, status, resp);
}

void ncmp_http_respond_error(ncmp_http_request *req, int status, const char *message,
                             const char *details)
{
    ncmp_buf body = NCMP_BUF_INIT;

    ncmp_http_error_json(&body, status, message, details);
    ncmp_http_respond_json(req, status, &body);
}

void ncmp_http_respond_busy(ncmp_http_request *req, const char *reason, const char *message,
                            const char *details)
{
    const char *values[2] = {reason, NULL};
    ncmp_buf body = NCMP_BUF_INIT;
    struct MHD_Response *resp;
    char secs[16];

    if (reason)
        ncmp_counter_add(ncmp_counter_get(ncmp_metrics_lib_get()->shed_requests, values), 1);
    ncmp_http_error_json(&body, 503, message, details);
    resp = MHD_create_response_from_buffer(body.len, body.data, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    snprintf(secs, sizeof(secs), "%d", req->srv->opts.retry_after_s);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, secs);
    answer_set(req, 503, resp);
}

struct ncmp_http_stream {
    ncmp_http_stream_fn fn;
    void *arg;
    void (*free_fn)(void *);
    struct MHD_Connection *conn;
    pthread_mutex_t lock; /* guards suspended and woken */
    int suspended;        /* waiting for ncmp_http_stream_wake */
    int woken;            /* woken before it could wait: ask fn again */
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    ncmp_http_stream *st = cls;
    ssize_t n = st->fn(st->arg, buf, max);

    (void)pos;
    if (n > 0)
        return n;
    if (n == NCMP_HTTP_STREAM_WAIT) {
        /* MHD asks again at once after a 0: suspended, it waits for the
         * wake instead (suspending from here is allowed) */
        pthread_mutex_lock(&st->lock);
        if (st->woken) {
            st->woken = 0;
        } else {
            st->suspended = 1;
            MHD_suspend_connection(st->conn);
        }
        pthread_mutex_unlock(&st->lock);
        return 0;
    }
    return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls)
{
    ncmp_http_stream *st = cls;

    if (st->free_fn)
        st->free_fn(st->arg);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

ncmp_http_stream *ncmp_http_respond_stream(ncmp_http_request *req, int status,
                                           const char *content_type, size_t block,
                                           ncmp_http_stream_fn fn, void *arg,
                                           void (*free_fn)(void *))
{
    ncmp_http_stream *st = ncmp_xcalloc(1, sizeof(*st));
    struct MHD_Response *resp;

    st->fn = fn;
    st->arg = arg;
    st->free_fn = free_fn;
    st->conn = req->conn;
    pthread_mutex_init(&st->lock, NULL);
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, block ? block : 65536, stream_read,
                                             st, stream_free);
    if (content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    answer_set(req, status, resp);
    return st;
}

void ncmp_http_stream_wake(ncmp_http_stream *st)
{
    pthread_mutex_lock(&st->lock);
    if (st->suspended) {
        st->suspended = 0;
        MHD_resume_connection(st->conn);
    } else {
        st->woken = 1;
    }
    pthread_mutex_unlock(&st->lock);
}

int ncmp_http_on_worker(const ncmp_http_request *req)
{
    int on;

    pthread_mutex_lock((pthread_mutex_t *)&req->lock);
    on = req->on_worker;
    pthread_mutex_unlock((pthread_mutex_t *)&req->lock);
    return on;
}

int ncmp_http_stopping(const ncmp_http_request *req)
{
    return atomic_load(&req->srv->closing);
}

void ncmp_http_suspend(ncmp_http_request *req)
{
    pthread_mutex_lock(&req->lock);
    req->suspend_wanted = 1;
    req->handler_suspend = 1;
    pthread_mutex_unlock(&req->lock);
}

/* --- authentication ------------------------------------------------------ */

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Base64 (padding optional) into a new string; NULL when malformed. */
static char *b64_decode(const char *s)
{
    size_t n = strlen(s);
    char *out = ncmp_xmalloc(n + 1);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;

    for (size_t i = 0; i < n && s[i] != '='; i++) {
        int v = b64val(s[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xFF);
        }
    }
    out[o] = '\0';
    return out;
}

/* Compare without an early exit, so timing does not tell a prefix. */
static int secret_equal(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    unsigned diff = (unsigned)(na ^ nb);

    for (size_t i = 0; i < na; i++)
        diff |= (unsigned char)a[i] ^ (unsigned char)b[i % (nb ? nb : 1)];
    return diff == 0 && na == nb;
}

static int basic_ok(const ncmp_http_request *req)
{
    const ncmp_http_server *srv = req->srv;
    const char *h;
    char *plain, *expected;
    ncmp_buf e = NCMP_BUF_INIT;
    int ok;

    h = ncmp_http_header(req, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Basic ", 6) != 0)
        return 0;
    h += 6;
    while (*h == ' ')
        h++;
    plain = b64_decode(h);
    if (!plain)
        return 0;
    ncmp_buf_appendf(&e, "%s:%s", srv->auth_username, srv->auth_password);
    expected = e.data;
    ok = secret_equal(plain, expected);
    free(plain);
    ncmp_buf_free(&e);
    return ok;
}

/* Does the request match an open route (ncmp_http_route_open), method
 * included? The route is looked up again when the request is dispatched. */
static int route_open(ncmp_http_request *req)
{
    int other_method, open;

    if (req->bad_path || route_find(req, &other_method) != 0 || !req->route)
        return 0;
    open = req->route->open;
    req->route = NULL;
    params_clear(req);
    return open;
}

/* A bearer token (RFC 6750 §2.1) checked by the verifier. On failure
 * *challenge is the WWW-Authenticate value: bare without a token, with
 * error="invalid_token" and the reason for a bad one. */
static int bearer_ok(const ncmp_http_request *req, ncmp_buf *challenge)
{
    const char *h = ncmp_http_header(req, MHD_HTTP_HEADER_AUTHORIZATION);
    char why[160];

    if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
        ncmp_buf_append_str(challenge, "Bearer realm=\"ncmpd\"");
        return 0;
    }
    h += 7;
    while (*h == ' ')
        h++;
    if (ncmp_jwt_check(req->srv->opts.jwt, h, time(NULL), why, sizeof(why)) == 0)
        return 1;
    log_debug("http", "bearer token refused: %s", why);
    ncmp_buf_appendf(challenge,
                     "Bearer realm=\"ncmpd\", error=\"invalid_token\", error_description=\"%s\", "
                     "error_uri=\"https://tools.ietf.org/html/rfc6750#section-3.1\"",
                     why);
    return 0;
}

/* 1 when the request may go on; else *challenge is the WWW-Authenticate
 * value of the 401. */
static int auth_ok(ncmp_http_request *req, int open, ncmp_buf *challenge)
{
    const ncmp_http_server *srv = req->srv;

    if ((!srv->opts.jwt && !srv->auth_username[0]) || open)
        return 1;
    if (srv->opts.jwt)
        return bearer_ok(req, challenge);
    if (basic_ok(req))
        return 1;
    ncmp_buf_append_str(challenge, "Basic realm=\"ncmpd\"");
    return 0;
}

/* --- the MHD callbacks --------------------------------------------------- */

/* A request for `uri` (path?query as sent), its path and query parsed. */
static ncmp_http_request *request_new(ncmp_http_server *srv, struct MHD_Connection *conn,
                                      const char *uri)
{
    ncmp_http_request *req = ncmp_xcalloc(1, sizeof(*req));

    req->srv = srv;
    req->conn = conn;
    req->uri = ncmp_xstrdup(uri ? uri : "/");
    req->t_start = ncmp_now_ms();
    pthread_mutex_init(&req->lock, NULL);
    uri_parse(req);
    return req;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    return request_new(cls, conn, uri);
}

/* Is the request for a sink route? Then it keeps its route from now on,
 * and its sink is opened (unless the declared body is over the sink's
 * limit: 413 at once). Returns 1 for a sink route. */
static int sink_begin(ncmp_http_request *req)
{
    const char *cl = ncmp_http_header(req, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const http_route *route;
    int other_method = 0;
    char msg[128];

    if (req->bad_path || route_find(req, &other_method) != 0 || !req->route || !req->route->sink) {
        req->route = NULL;
        params_clear(req);
        return 0;
    }
    route = req->route;
    if (cl && strtoull(cl, NULL, 10) > route->max_body_bytes) {
        snprintf(msg, sizeof(msg), "the limit is %zu bytes", route->max_body_bytes);
        ncmp_http_respond_error(req, 413, "Request body too large", msg);
        return 1;
    }
    req->sink_state = route->sink->open(req, route->arg);
    if (!req->sink_state)
        req->sink_stopped = 1; /* answered already: the body is read and dropped */
    return 1;
}

/* First call: the request line and headers are in. Answer at once what
 * needs no body: failed authentication, a declared body beyond the limit. */
static void request_begin(ncmp_http_request *req, const char *method)
{
    const char *cl = ncmp_http_header(req, MHD_HTTP_HEADER_CONTENT_LENGTH);
    ncmp_http_server *srv = req->srv;
    ncmp_buf challenge = NCMP_BUF_INIT;
    char msg[128];
    int open, busy;

    req->started = 1;
    req->method = ncmp_xstrdup(method);
    req->counted = 1;
    busy = atomic_fetch_add(&srv->in_flight, 1) >= srv->opts.max_in_flight &&
           srv->opts.max_in_flight > 0;
    ncmp_gauge_add(srv->in_flight_gauge, 1);
    if (atomic_load(&srv->closing)) {
        ncmp_http_respond_error(req, 503, "Service stopping", NULL);
        return;
    }
    open = route_open(req);
    if (busy && !open) {
        snprintf(msg, sizeof(msg), "more than %d requests in flight (http.max-in-flight)",
                 srv->opts.max_in_flight);
        ncmp_http_respond_busy(req, "http-in-flight", "Too many requests in flight", msg);
        return;
    }
    if (!auth_ok(req, open, &challenge)) {
        ncmp_buf body = NCMP_BUF_INIT;
        struct MHD_Response *resp;
        ncmp_http_error_json(&body, 401, "Authentication required", NULL);
        resp = MHD_create_response_from_buffer(body.len, body.data, MHD_RESPMEM_MUST_FREE);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge.data);
        ncmp_buf_free(&challenge);
        answer_set(req, 401, resp);
        return;
    }
    ncmp_buf_free(&challenge);
    if (sink_begin(req))
        return;
    if (cl && strtoull(cl, NULL, 10) > req->srv->opts.max_body_bytes) {
        snprintf(msg, sizeof(msg), "the limit is %zu bytes", req->srv->opts.max_body_bytes);
        ncmp_http_respond_error(req, 413, "Request body too large", msg);
    }
}

static void body_append(ncmp_http_request *req, const char *data, size_t len)
{
    if (req->route && req->route->sink) {
        req->sink_bytes += len;
        if (req->sink_bytes > req->route->max_body_bytes)
            req->too_large = 1;
        if (!req->too_large && !req->sink_stopped &&
            req->route->sink->chunk(req->sink_state, data, len) != 0)
            req->sink_stopped = 1;
        return;
    }
    if (req->too_large || req->answered)
        return;
    if (req->body.len + len > req->srv->opts.max_body_bytes) {
        req->too_large = 1;
        ncmp_buf_free(&req->body);
        return;
    }
    ncmp_buf_append(&req->body, data, len);
}

/* --- the worker threads ------------------------------------------------- */

/* Hand the request to a worker thread: the connection waits suspended
 * until the handler answers. A full queue is a 503 at once. */
static void queue_push(ncmp_http_request *req)
{
    ncmp_http_server *srv = req->srv;
    int full;
    char msg[128];

    pthread_mutex_lock(&srv->qlock);
    full = srv->opts.max_queued > 0 && srv->queued >= srv->opts.max_queued;
    if (!full) {
        pthread_mutex_lock(&req->lock);
        req->suspend_wanted = 1;
        pthread_mutex_unlock(&req->lock);
        req->next_queued = NULL;
        req->t_queued = ncmp_now_ms();
        if (srv->qtail)
            srv->qtail->next_queued = req;
        else
            srv->qhead = req;
        srv->qtail = req;
        srv->queued++;
        ncmp_gauge_add(srv->queued_gauge, 1);
        pthread_cond_signal(&srv->qcond);
    }
    pthread_mutex_unlock(&srv->qlock);
    if (full) {
        snprintf(msg, sizeof(msg), "%d requests wait for a worker thread (http.max-queued)",
                 srv->opts.max_queued);
        ncmp_http_respond_busy(req, "http-queue", "Too many requests queued", msg);
    }
}

static void request_free(ncmp_http_request *req);

void ncmp_http_to_worker(ncmp_http_request *req, ncmp_http_handler fn, void *arg)
{
    if (req->srv->nworkers == 0) {
        fn(req, arg);
        return;
    }
    req->worker_fn = fn;
    req->worker_arg = arg;
    queue_push(req);
}

/* Run one queued request's handler. The request may be answered, sent
 * and completed by MHD while the handler still runs: on_completed then
 * leaves the free to this thread (free_pending). */
static void worker_run(ncmp_http_request *req)
{
    int answered, suspended_by_handler, free_pending;

    pthread_mutex_lock(&req->lock);
    req->on_worker = 1;
    pthread_mutex_unlock(&req->lock);
    if (req->worker_fn)
        req->worker_fn(req, req->worker_arg);
    else
        req->route->fn(req, req->route->arg);
    pthread_mutex_lock(&req->lock);
    req->on_worker = 0;
    answered = req->answered;
    suspended_by_handler = req->handler_suspend;
    free_pending = req->free_pending;
    pthread_mutex_unlock(&req->lock);
    if (free_pending) {
        request_free(req);
        return;
    }
    if (!answered && !suspended_by_handler) {
        log_error("http", "%s %s: the handler gave no answer", req->method, req->path);
        ncmp_http_respond_error(req, 500, "Internal error", "the handler gave no answer");
    }
}

static void *worker_main(void *arg)
{
    ncmp_http_server *srv = arg;

    pthread_mutex_lock(&srv->qlock);
    for (;;) {
        ncmp_http_request *req;
        while (!srv->qhead && !srv->stopping)
            pthread_cond_wait(&srv->qcond, &srv->qlock);
        if (!srv->qhead)
            break;
        req = srv->qhead;
        srv->qhead = req->next_queued;
        if (!srv->qhead)
            srv->qtail = NULL;
        srv->queued--;
        ncmp_gauge_add(srv->queued_gauge, -1);
        pthread_mutex_unlock(&srv->qlock);
        if (srv->opts.max_queue_wait_ms > 0 &&
            ncmp_now_ms() - req->t_queued > (double)srv->opts.max_queue_wait_ms) {
            char msg[128];
            snprintf(msg, sizeof(msg),
                     "waited more than %d ms for a worker thread (http.max-queue-wait-ms)",
                     srv->opts.max_queue_wait_ms);
            ncmp_http_respond_busy(req, "http-queue", "Too many requests queued", msg);
        } else {
            worker_run(req);
        }
        pthread_mutex_lock(&srv->qlock);
    }
    pthread_mutex_unlock(&srv->qlock);
    return NULL;
}

static void request_dispatch(ncmp_http_request *req)
{
    int other_method = 0;
    char msg[128];

    req->dispatched = 1;
    if (req->route && req->route->sink) {
        if (req->sink_state) {
            void *state = req->sink_state;
            req->sink_state = NULL;
            req->route->sink->finish(state, req, req->too_large);
        }
        return;
    }
    if (req->too_large) {
        snprintf(msg, sizeof(msg), "the limit is %zu bytes", req->srv->opts.max_body_bytes);
        ncmp_http_respond_error(req, 413, "Request body too large", msg);
        return;
    }
    if (req->bad_path || route_find(req, &other_method) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid request URI",
                                "the path or query is not valid percent-encoded UTF-8");
        return;
    }
    if (!req->route) {
        if (other_method)
            ncmp_http_respond_error(req, 405, "Method not allowed", req->method);
        else
            ncmp_http_respond_error(req, 404, "Not found", req->path);
        return;
    }
    if (!req->route->inline_ && req->srv->nworkers > 0) {
        queue_push(req);
        return;
    }
    req->route->fn(req, req->route->arg);
}

/* Give MHD the answer, or park the connection until there is one. */
static enum MHD_Result answer_queue(ncmp_http_request *req)
{
    ncmp_http_server *srv = req->srv;
    enum MHD_Result ret = MHD_YES;
    int missing = 0;

    pthread_mutex_lock(&srv->lock);
    pthread_mutex_lock(&req->lock);
    if (req->answered && !req->queued) {
        req->queued = 1;
        ret = MHD_queue_response(req->conn, (unsigned)req->answer.status, req->answer.resp);
        MHD_destroy_response(req->answer.resp);
        req->answer.resp = NULL;
    } else if (!req->answered && req->suspend_wanted && !req->suspended) {
        req->suspended = 1;
        req->prev_suspended = NULL;
        req->next_suspended = srv->suspended;
        if (srv->suspended)
            srv->suspended->prev_suspended = req;
        srv->suspended = req;
        MHD_suspend_connection(req->conn);
    } else if (!req->answered) {
        missing = 1;
    }
    pthread_mutex_unlock(&req->lock);
    pthread_mutex_unlock(&srv->lock);
    if (missing) {
        log_error("http", "%s %s: the handler gave no answer", req->method, req->path);
        ncmp_http_respond_error(req, 500, "Internal error", "the handler gave no answer");
        return answer_queue(req);
    }
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    ncmp_http_request *req = *con_cls;

    if (!req->started) {
        request_begin(req, method);
        return req->answered ? answer_queue(req) : MHD_YES;
    }
    if (*upload_data_size) {
        body_append(req, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!req->dispatched && !req->answered)
        request_dispatch(req);
    return answer_queue(req);
}

static void request_free(ncmp_http_request *req)
{
    if (req->sink_state) /* the client went away before the end of its body */
        req->route->sink->discard(req->sink_state);
    params_clear(req);
    for (int i = 0; i < req->nquery; i++) {
        free(req->qnames[i]);
        free(req->qvalues[i]);
    }
    for (int i = 0; i < req->nextra; i++) {
        free(req->xnames[i]);
        free(req->xvalues[i]);
    }
    if (req->answer.resp)
        MHD_destroy_response(req->answer.resp);
    ncmp_buf_free(&req->body);
    pthread_mutex_destroy(&req->lock);
    free((char *)req->method);
    free(req->path);
    free(req->uri);
    free(req);
}

int ncmp_http_resolve(ncmp_http_server *srv, const char *method, const char *uri,
                      void (*fn)(void *arg, const ncmp_http_request *req), void *arg)
{
    ncmp_http_request *req = request_new(srv, NULL, uri);
    int other_method = 0, status = 0;

    req->method = ncmp_xstrdup(method);
    if (req->bad_path || route_find(req, &other_method) != 0)
        status = 400;
    else if (!req->route)
        status = other_method ? 405 : 404;
    else if (fn)
        fn(arg, req);
    request_free(req);
    return status;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    ncmp_http_request *req = *con_cls;
    ncmp_http_server *srv = cls;
    double ms;
    const char *method;

    if (!req)
        return;
    ms = ncmp_now_ms() - req->t_start;
    method = req->method ? req->method : "-";
    log_debug("http", "%s %s %d %.2f ms route=%s%s", method, req->uri, req->status, ms,
              ncmp_http_route_pattern(req),
              toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection closed early)");
    if (srv->opts.after)
        srv->opts.after(srv->opts.after_arg, method, ncmp_http_route_pattern(req), req->status, ms);
    *con_cls = NULL;
    if (req->counted) {
        atomic_fetch_sub(&srv->in_flight, 1);
        ncmp_gauge_add(srv->in_flight_gauge, -1);
    }
    pthread_mutex_lock(&req->lock);
    if (req->on_worker) { /* its handler still runs: the worker frees it */
        req->free_pending = 1;
        pthread_mutex_unlock(&req->lock);
        return;
    }
    pthread_mutex_unlock(&req->lock);
    request_free(req);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];

    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    log_warn("http", "%s", line);
}

/* --- start and stop ------------------------------------------------------ */

/* The address to bind: `host` (name or numeric) and `port`. */
static int bind_address(const ncmp_http_server *srv, struct sockaddr_storage *ss, int *ipv6,
                        ncmp_err *err)
{
    struct addrinfo hints, *ai = NULL;
    int rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    rc = getaddrinfo(srv->host[0] ? srv->host : NULL, "0", &hints, &ai);
    if (rc != 0 || !ai)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "http.host '%s': %s", srv->host, gai_strerror(rc));
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *ipv6 = ai->ai_family == AF_INET6;
    if (*ipv6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)srv->opts.port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)srv->opts.port);
    freeaddrinfo(ai);
    return 0;
}

static int listen_port(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    if (!info || getsockname(info->listen_fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

int ncmp_http_server_start(ncmp_http_server *srv, ncmp_err *err)
{
    struct sockaddr_storage ss;
    int ipv6 = 0;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;

    if (bind_address(srv, &ss, &ipv6, err) != 0)
        return -1;
    if (ipv6)
        flags |= MHD_USE_IPv6;
    srv->daemon =
        /* the logger first: MHD logs what the options after it find */
        MHD_start_daemon(flags, (uint16_t)srv->opts.port, NULL, NULL, on_request, srv,
                         MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv, MHD_OPTION_SOCK_ADDR,
                         (struct sockaddr *)&ss, MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
                         MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)srv->opts.connection_timeout_s,
                         MHD_OPTION_THREAD_POOL_SIZE,
                         (unsigned)(srv->opts.threads > 1 ? srv->opts.threads : 0), MHD_OPTION_END);
    if (!srv->daemon)
        return ncmp_err_set(err, NCMP_ERR_FATAL,
                            "http: cannot listen on %s:%d (address in use or not available)",
                            srv->host[0] ? srv->host : "*", srv->opts.port);
    srv->port = listen_port(srv->daemon);
    if (srv->opts.worker_threads > 0) {
        srv->workers = ncmp_xcalloc((size_t)srv->opts.worker_threads, sizeof(*srv->workers));
        for (; srv->nworkers < srv->opts.worker_threads; srv->nworkers++)
            if (pthread_create(&srv->workers[srv->nworkers], NULL, worker_main, srv) != 0)
                return ncmp_err_set(err, NCMP_ERR_FATAL, "http: cannot start a worker thread");
    }
    log_info("http", "listening on %s:%d (%d threads, %d worker threads)",
             srv->host[0] ? srv->host : "*", srv->port, srv->opts.threads, srv->nworkers);
    return 0;
}

/* Answer every suspended request 503, so that MHD can close them. */
static void suspended_answer_all(ncmp_http_server *srv)
{
    for (;;) {
        ncmp_http_request *req;
        pthread_mutex_lock(&srv->lock);
        req = srv->suspended;
        pthread_mutex_unlock(&srv->lock);
        if (!req)
            return;
        ncmp_http_respond_error(req, 503, "Service stopping", NULL);
    }
}

/* Stop the worker threads: queued requests are answered 503 unrun, the
 * handlers running finish first. */
static void workers_stop(ncmp_http_server *srv)
{
    ncmp_http_request *queue;

    pthread_mutex_lock(&srv->qlock);
    srv->stopping = 1;
    queue = srv->qhead;
    srv->qhead = srv->qtail = NULL;
    ncmp_gauge_add(srv->queued_gauge, -srv->queued);
    srv->queued = 0;
    pthread_cond_broadcast(&srv->qcond);
    pthread_mutex_unlock(&srv->qlock);
    while (queue) {
        ncmp_http_request *req = queue;
        queue = req->next_queued;
        ncmp_http_respond_error(req, 503, "Service stopping", NULL);
    }
    for (int i = 0; i < srv->nworkers; i++)
        pthread_join(srv->workers[i], NULL);
    free(srv->workers);
    srv->workers = NULL;
    srv->nworkers = 0;
}

void ncmp_http_server_destroy(ncmp_http_server *srv)
{
    if (!srv)
        return;
    atomic_store(&srv->closing, 1);
    workers_stop(srv);
    if (srv->daemon) {
        suspended_answer_all(srv);
        ncmp_sleep_ms(20); /* let the threads send those answers */
        MHD_stop_daemon(srv->daemon);
    }
    for (size_t i = 0; i < srv->nroutes; i++) {
        for (int s = 0; s < srv->routes[i].nsegments; s++)
            free(srv->routes[i].segments[s]);
        free(srv->routes[i].method);
        free(srv->routes[i].pattern);
    }
    free(srv->routes);
    free(srv->host);
    free(srv->auth_username);
    free(srv->auth_password);
    pthread_mutex_destroy(&srv->lock);
    pthread_mutex_destroy(&srv->qlock);
    pthread_cond_destroy(&srv->qcond);
    free(srv);
}
