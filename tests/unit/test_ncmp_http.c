/* Unit tests of lib/ncmp_http.c: a server on an ephemeral loopback port,
 * driven with libcurl. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_http.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "ncmp_time.h"
#include "unit_leak.h"

TestSuite(ncmp_http, .fini = unit_leak_check);

/* --- a client ------------------------------------------------------------ */

typedef struct reply {
    long status;
    ncmp_buf body;
    ncmp_buf headers;
} reply;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* `userpwd` may be NULL; `body` NULL for none. */
/* A request and its answer; with `no_expect`, a body of any size is sent
 * at once, as k6 and the load clients send it (no "Expect: 100-continue",
 * which libcurl adds to bodies over 1 MB). */
static void call_as(int port, const char *method, const char *path, const char *body, size_t len,
                    const char *userpwd, int no_expect, reply *r)
{
    CURL *c = curl_easy_init();
    char url[1024];
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    CURLcode rc;

    if (no_expect)
        h = curl_slist_append(h, "Expect:");

    memset(r, 0, sizeof(*r));
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
    }
    if (userpwd)
        curl_easy_setopt(c, CURLOPT_USERPWD, userpwd);
    rc = curl_easy_perform(c);
    cr_assert_eq(rc, CURLE_OK, "%s %s failed: %s", method, path, curl_easy_strerror(rc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    if (!r->body.data)
        ncmp_buf_append_str(&r->body, "");
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
}

static void call(int port, const char *method, const char *path, const char *body, size_t len,
                 const char *userpwd, reply *r)
{
    call_as(port, method, path, body, len, userpwd, 0, r);
}

static void reply_free(reply *r)
{
    ncmp_buf_free(&r->body);
    ncmp_buf_free(&r->headers);
}

/* --- handlers ------------------------------------------------------------ */

/* Echoes what the framework decoded: the {ref} parameter, query `q`, the
 * boolean `flag` and the body length. */
static void h_echo(ncmp_http_request *req, void *arg)
{
    ncmp_buf out = NCMP_BUF_INIT;
    const char *q = ncmp_http_query(req, "q");
    size_t len;
    int flag;

    if (ncmp_http_query_bool(req, "flag", 0, &flag) != 0) {
        ncmp_http_respond_error(req, 400, "bad flag", ncmp_http_query(req, "flag"));
        return;
    }
    ncmp_http_body(req, &len);
    ncmp_buf_append_str(&out, "{\"ref\":");
    ncmp_buf_append_json_string(&out, ncmp_http_param(req, "ref"));
    ncmp_buf_append_str(&out, ",\"q\":");
    if (q)
        ncmp_buf_append_json_string(&out, q);
    else
        ncmp_buf_append_str(&out, "null");
    ncmp_buf_appendf(&out, ",\"flag\":%s,\"len\":%zu,\"route\":", flag ? "true" : "false", len);
    ncmp_buf_append_json_string(&out, ncmp_http_route_pattern(req));
    ncmp_buf_append_char(&out, '}');
    ncmp_http_respond_json(req, 200, &out);
}

/* {"kind":..,"rest":..} of a "/deep/{kind}/{rest...}" route. */
static void h_rest(ncmp_http_request *req, void *arg)
{
    ncmp_buf out = NCMP_BUF_INIT;

    (void)arg;
    ncmp_buf_append_str(&out, "{\"kind\":");
    ncmp_buf_append_json_string(&out, ncmp_http_param(req, "kind"));
    ncmp_buf_append_str(&out, ",\"rest\":");
    ncmp_buf_append_json_string(&out, ncmp_http_param(req, "rest"));
    ncmp_buf_append_char(&out, '}');
    ncmp_http_respond_json(req, 200, &out);
}

/* A streamed body: its length and a checksum, answered at the end. */
typedef struct sink_count {
    ncmp_http_request *req;
    size_t bytes, chunks;
    unsigned long sum;
    int stop_after; /* ?stop=N: take no more after N bytes */
} sink_count;

static void *sink_open(ncmp_http_request *req, void *arg)
{
    sink_count *s;
    const char *stop = ncmp_http_query(req, "stop");

    (void)arg;
    if (ncmp_http_query(req, "refuse")) {
        ncmp_http_respond_error(req, 415, "refused at open", NULL);
        return NULL;
    }
    s = ncmp_xcalloc(1, sizeof(*s));
    s->stop_after = stop ? atoi(stop) : 0;
    return s;
}

static int sink_chunk(void *state, const char *data, size_t len)
{
    sink_count *s = state;

    for (size_t i = 0; i < len; i++)
        s->sum += (unsigned char)data[i];
    s->bytes += len;
    s->chunks++;
    return s->stop_after && s->bytes >= (size_t)s->stop_after ? -1 : 0;
}

static void sink_finish(void *state, ncmp_http_request *req, int too_large)
{
    sink_count *s = state;
    ncmp_buf out = NCMP_BUF_INIT;

    if (too_large) {
        ncmp_http_respond_error(req, 413, "too large", NULL);
    } else {
        ncmp_buf_appendf(&out, "{\"bytes\":%zu,\"sum\":%lu,\"chunks\":%zu}", s->bytes, s->sum,
                         s->chunks);
        ncmp_http_respond_json(req, 200, &out);
    }
    ncmp_buf_free(&out);
    free(s);
}

static const ncmp_http_sink counting_sink = {sink_open, sink_chunk, sink_finish, free};

typedef struct counter {
    long next, n;
} counter;

/* Numbers 0..n-1 as a JSON array, produced in small pieces. */
static ssize_t numbers_next(void *arg, char *buf, size_t max)
{
    counter *c = arg;
    char item[32];
    size_t used = 0;

    if (c->next > c->n)
        return 0;
    while (c->next <= c->n) {
        int len;
        if (c->next == c->n)
            len = snprintf(item, sizeof(item), "]");
        else
            len = snprintf(item, sizeof(item), "%s%ld", c->next ? "," : "[", c->next);
        if (used + (size_t)len > max)
            break;
        memcpy(buf + used, item, (size_t)len);
        used += (size_t)len;
        c->next++;
    }
    return (ssize_t)used;
}

static void h_numbers(ncmp_http_request *req, void *arg)
{
    counter *c = ncmp_xcalloc(1, sizeof(*c));

    c->n = atol(ncmp_http_query(req, "n") ? ncmp_http_query(req, "n") : "0");
    if (ncmp_http_query(req, "n"))
        ncmp_http_add_header(req, "total-numbers", ncmp_http_query(req, "n"));
    ncmp_http_respond_stream(req, 200, "application/json", 4096, numbers_next, c, free);
}

/* Answers from another thread, 50 ms later. */
static void *answer_later(void *arg)
{
    ncmp_http_request *req = arg;
    ncmp_buf out = NCMP_BUF_INIT;

    ncmp_sleep_ms(50);
    ncmp_buf_append_str(&out, "{\"late\":true}");
    ncmp_http_respond_json(req, 202, &out);
    return NULL;
}

static void h_async(ncmp_http_request *req, void *arg)
{
    pthread_t t;

    ncmp_http_suspend(req);
    pthread_create(&t, NULL, answer_later, req);
    pthread_detach(t);
}

static void h_silent(ncmp_http_request *req, void *arg)
{
}

static void h_busy(ncmp_http_request *req, void *arg)
{
    ncmp_http_respond_busy(req, "db", "Database unavailable", "no connection came free");
}

typedef struct hook_log {
    pthread_mutex_t lock;
    char last[256];
    atomic_int calls;
} hook_log;

static void after_hook(void *arg, const char *method, const char *route, int status,
                       double latency_ms)
{
    hook_log *h = arg;

    pthread_mutex_lock(&h->lock);
    snprintf(h->last, sizeof(h->last), "%s %s %d", method, route, status);
    pthread_mutex_unlock(&h->lock);
    cr_assert_geq(latency_ms, 0.0);
    atomic_fetch_add(&h->calls, 1);
}

static ncmp_http_server *server(const char *user, const char *password, hook_log *hook)
{
    ncmp_http_options o = {0};
    ncmp_http_server *srv = NULL;
    ncmp_err err = {0};

    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 2;
    o.max_body_bytes = 1000;
    o.auth_username = user;
    o.auth_password = password;
    o.connection_timeout_s = 10;
    o.after = hook ? after_hook : NULL;
    o.after_arg = hook;
    cr_assert_eq(ncmp_http_server_new(&srv, &o, &err), 0, "%s", err.msg);
    ncmp_http_route(srv, "GET", "/things/{ref}", h_echo, NULL);
    ncmp_http_route(srv, "POST", "/things/{ref}/body", h_echo, NULL);
    ncmp_http_route(srv, "GET", "/numbers", h_numbers, NULL);
    ncmp_http_route(srv, "POST", "/async", h_async, NULL);
    ncmp_http_route(srv, "GET", "/silent", h_silent, NULL);
    ncmp_http_route(srv, "GET", "/busy", h_busy, NULL);
    ncmp_http_route(srv, "GET", "/deep/{kind}/{rest...}", h_rest, NULL);
    ncmp_http_route(srv, "PATCH", "/deep/{kind}/{rest...}", h_rest, NULL);
    ncmp_http_route_sink(srv, "POST", "/stream/{id}", 4u << 20, &counting_sink, NULL);
    ncmp_http_route_open(srv, "GET", "/open/{ref}", h_echo, NULL);
    cr_assert_eq(ncmp_http_server_start(srv, &err), 0, "%s", err.msg);
    cr_assert_gt(ncmp_http_server_port(srv), 0);
    return srv;
}

static json_object *parse(const reply *r)
{
    json_object *o = json_tokener_parse(r->body.data);
    cr_assert_not_null(o, "not JSON: %s", r->body.data);
    return o;
}

static const char *field(json_object *o, const char *key)
{
    json_object *v = NULL;
    cr_assert(json_object_object_get_ex(o, key, &v), "no %s in %s", key,
              json_object_to_json_string(o));
    return json_object_get_string(v);
}

/* --- tests --------------------------------------------------------------- */

Test(ncmp_http, path_parameter_is_decoded_and_slash_stays_inside)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    reply r;
    json_object *o;

    call(ncmp_http_server_port(srv), "GET", "/things/%2FSubNetwork%3DEurope%2Fx%20y?q=a+b%26c",
         NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    o = parse(&r);
    cr_assert_str_eq(field(o, "ref"), "/SubNetwork=Europe/x y");
    cr_assert_str_eq(field(o, "q"), "a b&c");
    cr_assert_str_eq(field(o, "route"), "/things/{ref}");
    cr_assert(strstr(r.headers.data, "application/json") != NULL);
    json_object_put(o);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
}

/* GET path on a fresh server: the status, and the "rest" value when 200. */
static int rest_of(int port, const char *method, const char *path, char *rest, size_t max)
{
    reply r;
    int status;

    call(port, method, path, NULL, 0, NULL, &r);
    status = r.status;
    rest[0] = '\0';
    if (status == 200) {
        json_object *o = parse(&r);
        snprintf(rest, max, "%s|%s", field(o, "kind"), field(o, "rest"));
        json_object_put(o);
    }
    reply_free(&r);
    return status;
}

Test(ncmp_http, rest_of_path_parameter_takes_any_depth)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    int port = ncmp_http_server_port(srv);
    ncmp_buf deep = NCMP_BUF_INIT, want = NCMP_BUF_INIT;
    char rest[4096];

    cr_assert_eq(rest_of(port, "GET", "/deep/v1/A=1/B=2/C=3", rest, sizeof(rest)), 200);
    cr_assert_str_eq(rest, "v1|A=1/B=2/C=3");
    /* decoded as a whole: %2F becomes a '/' like the separators */
    cr_assert_eq(
        rest_of(port, "PATCH", "/deep/v1/A=My%20Node/B%3D2%2FC=%C3%A9", rest, sizeof(rest)), 200);
    cr_assert_str_eq(rest, "v1|A=My Node/B=2/C=\xc3\xa9");
    /* empty rest after the separator; none without it */
    cr_assert_eq(rest_of(port, "GET", "/deep/v1/", rest, sizeof(rest)), 200);
    cr_assert_str_eq(rest, "v1|");
    cr_assert_eq(rest_of(port, "GET", "/deep/v1", rest, sizeof(rest)), 404);
    /* deeper than any fixed route may be */
    ncmp_buf_append_str(&deep, "/deep/v2");
    ncmp_buf_append_str(&want, "v2|");
    for (int i = 0; i < 40; i++) {
        ncmp_buf_appendf(&deep, "/L%d=%d", i, i);
        ncmp_buf_appendf(&want, "%sL%d=%d", i ? "/" : "", i, i);
    }
    cr_assert_eq(rest_of(port, "GET", deep.data, rest, sizeof(rest)), 200);
    cr_assert_str_eq(rest, want.data);
    /* a bad escape far down is still a 400, not a 404 */
    ncmp_buf_append_str(&deep, "/x%ZZ");
    cr_assert_eq(rest_of(port, "GET", deep.data, rest, sizeof(rest)), 400);
    /* another method on a wildcard route: 405; fixed routes unchanged */
    cr_assert_eq(rest_of(port, "DELETE", "/deep/v1/A=1", rest, sizeof(rest)), 405);
    cr_assert_eq(rest_of(port, "GET", "/things/a/b", rest, sizeof(rest)), 404);
    ncmp_buf_free(&deep);
    ncmp_buf_free(&want);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, sink_route_streams_bodies_beyond_the_server_limit)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    int port = ncmp_http_server_port(srv);
    size_t n = 3u << 20; /* 3 MiB: the server's own limit is 1000 bytes */
    char *big = ncmp_xmalloc(n);
    unsigned long sum = 0;
    char want[128];
    reply r;

    for (size_t i = 0; i < n; i++) {
        big[i] = (char)('a' + i % 26);
        sum += (unsigned char)big[i];
    }
    call(port, "POST", "/stream/x", big, n, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    snprintf(want, sizeof(want), "\"bytes\":%zu,\"sum\":%lu", n, sum);
    cr_assert(strstr(r.body.data, want), "%s, want %s", r.body.data, want);
    cr_assert_null(strstr(r.body.data, "\"chunks\":1}"), "one chunk: not streamed: %s",
                   r.body.data);
    reply_free(&r);
    /* a sink that stops taking bytes still gets its finish */
    call(port, "POST", "/stream/x?stop=10", big, n, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_null(strstr(r.body.data, "\"bytes\":3145728"), "%s", r.body.data);
    reply_free(&r);
    /* over the sink's own limit: 413 before open (Content-Length) */
    big = ncmp_xrealloc(big, 5u << 20);
    memset(big, 'x', 5u << 20);
    call(port, "POST", "/stream/x", big, 5u << 20, NULL, &r);
    cr_assert_eq(r.status, 413, "%s", r.body.data);
    reply_free(&r);
    /* answered at open: the body is dropped, the answer stands */
    call(port, "POST", "/stream/x?refuse=1", big, 1000, NULL, &r);
    cr_assert_eq(r.status, 415, "%s", r.body.data);
    reply_free(&r);
    /* the other routes keep the server's limit */
    call(port, "POST", "/things/a/body", big, 2000, NULL, &r);
    cr_assert_eq(r.status, 413, "%s", r.body.data);
    reply_free(&r);
    free(big);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, query_booleans)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    int port = ncmp_http_server_port(srv);
    reply r;
    json_object *o;

    call(port, "GET", "/things/a?flag=TRUE", NULL, 0, NULL, &r);
    o = parse(&r);
    cr_assert_str_eq(field(o, "flag"), "true");
    json_object_put(o);
    reply_free(&r);
    call(port, "GET", "/things/a?flag=maybe", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 400);
    o = parse(&r);
    cr_assert_str_eq(field(o, "status"), "400 BAD_REQUEST");
    cr_assert_str_eq(field(o, "details"), "maybe");
    json_object_put(o);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, unknown_path_404_wrong_method_405_with_ncmp_body)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    int port = ncmp_http_server_port(srv);
    reply r;
    json_object *o;

    call(port, "GET", "/nothing/here", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 404);
    o = parse(&r);
    cr_assert_str_eq(field(o, "status"), "404 NOT_FOUND");
    json_object_put(o);
    reply_free(&r);
    /* an empty segment does not fill a {parameter} */
    call(port, "GET", "/things/", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 404);
    reply_free(&r);
    call(port, "DELETE", "/things/a", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 405);
    o = parse(&r);
    cr_assert_str_eq(field(o, "status"), "405 METHOD_NOT_ALLOWED");
    json_object_put(o);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, bad_percent_encoding_is_400)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    int port = ncmp_http_server_port(srv);
    const char *bad[] = {"/things/a%2",    "/things/a%zz",          "/things/a%00b",
                         "/things/%C3%28", "/things/a?q=%ED%A0%80", "/things/a?q=%"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        reply r;
        json_object *o;
        call(port, "GET", bad[i], NULL, 0, NULL, &r);
        cr_assert_eq(r.status, 400, "%s: %ld %s", bad[i], r.status, r.body.data);
        o = parse(&r);
        cr_assert_str_eq(field(o, "status"), "400 BAD_REQUEST");
        json_object_put(o);
        reply_free(&r);
    }
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, body_within_limit_is_read_beyond_is_413)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    int port = ncmp_http_server_port(srv);
    char big[1001];
    reply r;
    json_object *o;

    memset(big, 'x', sizeof(big));
    call(port, "POST", "/things/a/body", big, 1000, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    o = parse(&r);
    cr_assert_str_eq(field(o, "len"), "1000");
    json_object_put(o);
    reply_free(&r);
    call(port, "POST", "/things/a/body", big, 1001, NULL, &r);
    cr_assert_eq(r.status, 413);
    o = parse(&r);
    cr_assert_str_eq(field(o, "status"), "413 PAYLOAD_TOO_LARGE");
    json_object_put(o);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, basic_auth_when_configured)
{
    ncmp_http_server *srv = server("cpsuser", "s3cret:x", NULL);
    int port = ncmp_http_server_port(srv);
    reply r;
    json_object *o;

    call(port, "GET", "/things/a", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 401);
    cr_assert(strstr(r.headers.data, "WWW-Authenticate: Basic") != NULL, "%s", r.headers.data);
    o = parse(&r);
    cr_assert_str_eq(field(o, "status"), "401 UNAUTHORIZED");
    json_object_put(o);
    reply_free(&r);
    call(port, "GET", "/things/a", NULL, 0, "cpsuser:wrong", &r);
    cr_assert_eq(r.status, 401);
    reply_free(&r);
    call(port, "GET", "/things/a", NULL, 0, "cpsuser:s3cret:x", &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, open_route_needs_no_credentials_the_others_still_do)
{
    ncmp_http_server *srv = server("cpsuser", "s3cret:x", NULL);
    int port = ncmp_http_server_port(srv);
    reply r;
    json_object *o;

    call(port, "GET", "/open/a%2Fb", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    o = parse(&r);
    cr_assert_str_eq(field(o, "ref"), "a/b");
    json_object_put(o);
    reply_free(&r);
    /* wrong credentials do not matter either */
    call(port, "GET", "/open/a", NULL, 0, "cpsuser:wrong", &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    /* only the open route's method, and only its path */
    call(port, "POST", "/open/a", "{}", 2, NULL, &r);
    cr_assert_eq(r.status, 401);
    reply_free(&r);
    call(port, "GET", "/open/a/more", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 401);
    reply_free(&r);
    call(port, "GET", "/things/a", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 401);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
}

typedef struct route_list {
    ncmp_buf text;
} route_list;

static void route_seen(void *arg, const char *method, const char *pattern, int open)
{
    route_list *l = arg;
    ncmp_buf_appendf(&l->text, "%s %s%s\n", method, pattern, open ? " open" : "");
}

Test(ncmp_http, routes_each_lists_every_route_in_order)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    route_list l = {NCMP_BUF_INIT};

    ncmp_http_routes_each(srv, route_seen, &l);
    cr_assert_str_eq(l.text.data, "GET /things/{ref}\n"
                                  "POST /things/{ref}/body\n"
                                  "GET /numbers\n"
                                  "POST /async\n"
                                  "GET /silent\n"
                                  "GET /busy\n"
                                  "GET /deep/{kind}/{rest...}\n"
                                  "PATCH /deep/{kind}/{rest...}\n"
                                  "POST /stream/{id}\n"
                                  "GET /open/{ref} open\n");
    ncmp_buf_free(&l.text);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, no_auth_by_default)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    reply r;

    call(ncmp_http_server_port(srv), "GET", "/things/a", NULL, 0, "anyone:anything", &r);
    cr_assert_eq(r.status, 200);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, streamed_answer_arrives_whole_and_chunked)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    reply r;
    json_object *o;

    call(ncmp_http_server_port(srv), "GET", "/numbers?n=100000", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.headers.data, "chunked") != NULL, "%s", r.headers.data);
    cr_assert(strstr(r.headers.data, "total-numbers: 100000\r\n") != NULL,
              "a header added by the handler goes with the answer: %s", r.headers.data);
    o = parse(&r);
    cr_assert_eq(json_object_array_length(o), 100000);
    cr_assert_eq(json_object_get_int(json_object_array_get_idx(o, 99999)), 99999);
    json_object_put(o);
    reply_free(&r);
    call(ncmp_http_server_port(srv), "GET", "/numbers", NULL, 0, NULL, &r);
    cr_assert_str_eq(r.body.data, "]");
    reply_free(&r);
    ncmp_http_server_destroy(srv);
}

static ncmp_http_options loopback_opts(int threads);

/* A stream fed by another thread, 20 pieces 20 ms apart: its fn has
 * nothing most of the time and answers NCMP_HTTP_STREAM_WAIT. */
typedef struct trickle {
    pthread_mutex_t lock;
    ncmp_buf ready; /* produced, not yet taken */
    int done, refs;
    ncmp_http_stream *http; /* NULL once the stream is freed */
} trickle;

static void trickle_unref(trickle *t)
{
    int last;

    pthread_mutex_lock(&t->lock);
    last = --t->refs == 0;
    pthread_mutex_unlock(&t->lock);
    if (last) {
        ncmp_buf_free(&t->ready);
        pthread_mutex_destroy(&t->lock);
        free(t);
    }
}

static ssize_t trickle_next(void *arg, char *buf, size_t max)
{
    trickle *t = arg;
    ssize_t n;

    pthread_mutex_lock(&t->lock);
    n = (ssize_t)(t->ready.len < max ? t->ready.len : max);
    if (n) {
        memcpy(buf, t->ready.data, (size_t)n);
        memmove(t->ready.data, t->ready.data + n, t->ready.len - (size_t)n);
        t->ready.len -= (size_t)n;
    }
    if (!n && !t->done)
        n = NCMP_HTTP_STREAM_WAIT;
    pthread_mutex_unlock(&t->lock);
    return n;
}

static void trickle_free(void *arg)
{
    trickle *t = arg;

    pthread_mutex_lock(&t->lock);
    t->http = NULL;
    pthread_mutex_unlock(&t->lock);
    trickle_unref(t);
}

static void *trickle_produce(void *arg)
{
    trickle *t = arg;

    for (int i = 0; i <= 20; i++) {
        ncmp_sleep_ms(20);
        pthread_mutex_lock(&t->lock);
        if (i == 20) {
            ncmp_buf_append_str(&t->ready, "]");
            t->done = 1;
        } else {
            ncmp_buf_appendf(&t->ready, "%s%d", i ? "," : "[", i);
        }
        if (t->http)
            ncmp_http_stream_wake(t->http);
        pthread_mutex_unlock(&t->lock);
    }
    trickle_unref(t);
    return NULL;
}

static void h_trickle(ncmp_http_request *req, void *arg)
{
    trickle *t = ncmp_xcalloc(1, sizeof(*t));
    pthread_t thread;

    (void)arg;
    pthread_mutex_init(&t->lock, NULL);
    t->refs = 2;
    pthread_mutex_lock(&t->lock);
    t->http =
        ncmp_http_respond_stream(req, 200, "application/json", 4096, trickle_next, t, trickle_free);
    pthread_mutex_unlock(&t->lock);
    pthread_create(&thread, NULL, trickle_produce, t);
    pthread_detach(thread);
}

typedef struct trickle_call {
    int port;
    reply r;
} trickle_call;

static void *trickle_call_run(void *arg)
{
    trickle_call *c = arg;
    call(c->port, "GET", "/trickle", NULL, 0, NULL, &c->r);
    return NULL;
}

/* A stream with nothing to send waits without its server thread: with one
 * server thread, other requests are answered meanwhile, and the stream
 * still arrives whole. */
Test(ncmp_http, waiting_stream_holds_no_server_thread)
{
    ncmp_http_options o = loopback_opts(1);
    ncmp_http_server *srv = NULL;
    ncmp_err err = {0};
    trickle_call c = {0};
    pthread_t thread;
    reply r;
    json_object *a;

    cr_assert_eq(ncmp_http_server_new(&srv, &o, &err), 0, "%s", err.msg);
    ncmp_http_route(srv, "GET", "/trickle", h_trickle, NULL);
    ncmp_http_route(srv, "GET", "/things/{ref}", h_echo, NULL);
    cr_assert_eq(ncmp_http_server_start(srv, &err), 0, "%s", err.msg);
    c.port = ncmp_http_server_port(srv);
    pthread_create(&thread, NULL, trickle_call_run, &c);
    ncmp_sleep_ms(60);
    for (int i = 0; i < 5; i++) {
        call(c.port, "GET", "/things/x", NULL, 0, NULL, &r);
        cr_assert_eq(r.status, 200, "%s", r.body.data);
        reply_free(&r);
    }
    pthread_join(thread, NULL);
    cr_assert_eq(c.r.status, 200, "%s", c.r.body.data);
    a = parse(&c.r);
    cr_assert_eq(json_object_array_length(a), 20, "%s", c.r.body.data);
    cr_assert_eq(json_object_get_int(json_object_array_get_idx(a, 19)), 19);
    json_object_put(a);
    reply_free(&c.r);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, suspended_request_answered_from_another_thread)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    reply r;
    json_object *o;

    call(ncmp_http_server_port(srv), "POST", "/async", "{}", 2, NULL, &r);
    cr_assert_eq(r.status, 202, "%s", r.body.data);
    o = parse(&r);
    cr_assert_str_eq(field(o, "late"), "true");
    json_object_put(o);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, handler_without_answer_is_500)
{
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    reply r;

    call(ncmp_http_server_port(srv), "GET", "/silent", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 500);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, after_hook_sees_method_route_status)
{
    hook_log hook = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ncmp_http_server *srv = server(NULL, NULL, &hook);
    reply r;
    double deadline;

    atomic_init(&hook.calls, 0);
    call(ncmp_http_server_port(srv), "GET", "/things/x%2Fy", NULL, 0, NULL, &r);
    reply_free(&r);
    /* the hook runs once the answer is out, maybe just after curl has it */
    deadline = ncmp_now_ms() + 5000;
    while (atomic_load(&hook.calls) < 1 && ncmp_now_ms() < deadline)
        ncmp_sleep_ms(5);
    pthread_mutex_lock(&hook.lock);
    cr_assert_str_eq(hook.last, "GET /things/{ref} 200");
    pthread_mutex_unlock(&hook.lock);
    call(ncmp_http_server_port(srv), "GET", "/nope", NULL, 0, NULL, &r);
    reply_free(&r);
    deadline = ncmp_now_ms() + 5000;
    while (atomic_load(&hook.calls) < 2 && ncmp_now_ms() < deadline)
        ncmp_sleep_ms(5);
    pthread_mutex_lock(&hook.lock);
    cr_assert_str_eq(hook.last, "GET - 404");
    pthread_mutex_unlock(&hook.lock);
    ncmp_http_server_destroy(srv);
}

Test(ncmp_http, decode_rejects_bad_input)
{
    char *s = ncmp_http_decode("a%41+b", 6, 1);
    cr_assert_str_eq(s, "aA b");
    free(s);
    s = ncmp_http_decode("a+b", 3, 0);
    cr_assert_str_eq(s, "a+b");
    free(s);
    cr_assert_null(ncmp_http_decode("%4", 2, 0));
    cr_assert_null(ncmp_http_decode("%g0", 3, 0));
    cr_assert_null(ncmp_http_decode("%00", 3, 0));
    cr_assert_null(ncmp_http_decode("%C0%AF", 6, 0)); /* overlong '/' */
    cr_assert_null(ncmp_http_decode("%F4%90%80%80", 12, 0));
}

Test(ncmp_http, status_names_and_error_body)
{
    ncmp_buf b = NCMP_BUF_INIT;

    cr_assert_str_eq(ncmp_http_status_name(404), "NOT_FOUND");
    cr_assert_str_eq(ncmp_http_status_name(504), "GATEWAY_TIMEOUT");
    ncmp_http_error_json(&b, 404, "Cm handle not found", "No cm handles found with reference x\"");
    cr_assert_str_eq(b.data, "{\"status\":\"404 NOT_FOUND\",\"message\":\"Cm handle not found\","
                             "\"details\":\"No cm handles found with reference x\\\"\"}");
    ncmp_buf_free(&b);
}

/* --- the bound on requests in flight --------------------------------------- */

/* Requests parked by h_hold until the test answers them. */
typedef struct held {
    pthread_mutex_t lock;
    ncmp_http_request *reqs[8];
    int n;
} held;

static void h_hold(ncmp_http_request *req, void *arg)
{
    held *h = arg;

    ncmp_http_suspend(req);
    pthread_mutex_lock(&h->lock);
    h->reqs[h->n++] = req;
    pthread_mutex_unlock(&h->lock);
}

typedef struct hold_call {
    int port;
    reply r;
} hold_call;

static void *hold_call_run(void *arg)
{
    hold_call *c = arg;
    call(c->port, "GET", "/hold", NULL, 0, NULL, &c->r);
    return NULL;
}

static int held_count(held *h)
{
    int n;
    pthread_mutex_lock(&h->lock);
    n = h->n;
    pthread_mutex_unlock(&h->lock);
    return n;
}

static uint64_t shed_count(const char *reason)
{
    const char *values[2] = {reason, NULL};
    return ncmp_counter_value(ncmp_counter_get(ncmp_metrics_lib_get()->shed_requests, values));
}

/* Options of a loopback server with `threads` server threads; the test
 * sets its bounds. */
static ncmp_http_options loopback_opts(int threads)
{
    ncmp_http_options o = {0};

    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    o.host = "127.0.0.1";
    o.threads = threads;
    o.max_body_bytes = 1000;
    o.connection_timeout_s = 10;
    return o;
}

Test(ncmp_http, beyond_max_in_flight_is_503_with_retry_after_but_open_routes_answer)
{
    ncmp_http_options o;
    ncmp_http_server *srv = NULL;
    ncmp_err err = {0};
    held h = {.n = 0};
    hold_call calls[2];
    pthread_t threads[2];
    uint64_t shed0 = shed_count("http-in-flight");
    reply r;
    json_object *obj;
    int port;

    pthread_mutex_init(&h.lock, NULL);
    o = loopback_opts(2);
    o.max_in_flight = 2;
    o.retry_after_s = 3;
    o.max_body_bytes = 16u << 20;
    cr_assert_eq(ncmp_http_server_new(&srv, &o, &err), 0, "%s", err.msg);
    ncmp_http_route(srv, "GET", "/hold", h_hold, &h);
    ncmp_http_route(srv, "GET", "/things/{ref}", h_echo, NULL);
    ncmp_http_route(srv, "POST", "/things/{ref}/body", h_echo, NULL);
    ncmp_http_route_open(srv, "GET", "/open/{ref}", h_echo, NULL);
    cr_assert_eq(ncmp_http_server_start(srv, &err), 0, "%s", err.msg);
    port = ncmp_http_server_port(srv);

    /* two requests wait in their handler: the server is full */
    for (int i = 0; i < 2; i++) {
        calls[i].port = port;
        pthread_create(&threads[i], NULL, hold_call_run, &calls[i]);
    }
    for (int i = 0; i < 500 && held_count(&h) < 2; i++)
        ncmp_sleep_ms(10);
    cr_assert_eq(held_count(&h), 2);
    cr_assert_eq(ncmp_http_in_flight(srv), 2);

    /* a third is refused at once, body unread, with NCMP's error body */
    call(port, "POST", "/things/a/body", "{\"x\":1}", 7, NULL, &r);
    cr_assert_eq(r.status, 503, "%ld %s", r.status, r.body.data);
    cr_assert(strstr(r.headers.data, "Retry-After: 3\r\n"), "%s", r.headers.data);
    obj = parse(&r);
    cr_assert_str_eq(field(obj, "status"), "503 SERVICE_UNAVAILABLE");
    cr_assert(strstr(field(obj, "details"), "http.max-in-flight"), "%s", r.body.data);
    json_object_put(obj);
    reply_free(&r);
    cr_assert_eq(shed_count("http-in-flight"), shed0 + 1);

    /* so is a large body sent at once (a data job): the client reads the
     * 503, not a connection reset by a close with its body unread */
    {
        size_t big = 8u << 20;
        char *body = ncmp_xmalloc(big);
        memset(body, ' ', big);
        body[0] = '{';
        body[big - 1] = '}';
        for (int i = 0; i < 5; i++) {
            call_as(port, "POST", "/things/a/body", body, big, NULL, 1, &r);
            cr_assert_eq(r.status, 503, "%ld %s", r.status, r.body.data);
            cr_assert(strstr(r.headers.data, "Retry-After: 3\r\n"), "%s", r.headers.data);
            reply_free(&r);
        }
        free(body);
    }
    cr_assert_eq(shed_count("http-in-flight"), shed0 + 6);

    /* a probe still answers */
    call(port, "GET", "/open/a", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);

    /* once the two are answered, requests are served again */
    for (int i = 0; i < 2; i++)
        ncmp_http_respond_error(h.reqs[i], 409, "held", NULL);
    for (int i = 0; i < 2; i++) {
        pthread_join(threads[i], NULL);
        cr_assert_eq(calls[i].r.status, 409);
        reply_free(&calls[i].r);
    }
    for (int i = 0; i < 500 && ncmp_http_in_flight(srv) > 0; i++)
        ncmp_sleep_ms(10);
    cr_assert_eq(ncmp_http_in_flight(srv), 0);
    call(port, "GET", "/things/b", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    cr_assert_eq(shed_count("http-in-flight"), shed0 + 6);
    ncmp_http_server_destroy(srv);
    pthread_mutex_destroy(&h.lock);
}

/* Stopping answers what still waits 503 and returns, again and again:
 * with server threads in a pool (the runs' shape), where MHD's own quiesce
 * could abort now and then. */
Test(ncmp_http, destroy_answers_parked_requests_503_and_returns)
{
    for (int round = 0; round < 20; round++) {
        ncmp_http_options o = loopback_opts(2);
        ncmp_http_server *srv = NULL;
        ncmp_err err = {0};
        held h = {.n = 0};
        hold_call c;
        pthread_t thread;

        pthread_mutex_init(&h.lock, NULL);
        cr_assert_eq(ncmp_http_server_new(&srv, &o, &err), 0, "%s", err.msg);
        ncmp_http_route(srv, "GET", "/hold", h_hold, &h);
        cr_assert_eq(ncmp_http_server_start(srv, &err), 0, "%s", err.msg);
        c.port = ncmp_http_server_port(srv);
        pthread_create(&thread, NULL, hold_call_run, &c);
        for (int i = 0; i < 500 && held_count(&h) < 1; i++)
            ncmp_sleep_ms(10);
        cr_assert_eq(held_count(&h), 1);
        ncmp_http_server_destroy(srv);
        pthread_join(thread, NULL);
        cr_assert_eq(c.r.status, 503, "round %d: %ld %s", round, c.r.status, c.r.body.data);
        cr_assert(strstr(c.r.body.data, "Service stopping"), "%s", c.r.body.data);
        reply_free(&c.r);
        pthread_mutex_destroy(&h.lock);
    }
}

Test(ncmp_http, respond_busy_counts_its_reason_and_sets_retry_after)
{
    uint64_t db0 = shed_count("db");
    ncmp_http_server *srv = server(NULL, NULL, NULL);
    reply r;

    /* the default Retry-After is 1 s */
    call(ncmp_http_server_port(srv), "GET", "/busy", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 503, "%s", r.body.data);
    cr_assert(strstr(r.headers.data, "Retry-After: 1\r\n"), "%s", r.headers.data);
    cr_assert(strstr(r.body.data, "\"message\":\"Database unavailable\""), "%s", r.body.data);
    reply_free(&r);
    cr_assert_eq(shed_count("db"), db0 + 1);
    ncmp_http_server_destroy(srv);
}

/* --- the worker threads and their queue ------------------------------------ */

/* Blocks its worker thread until the test opens the gate. */
typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int open, waiting;
} gate;

static void gate_init(gate *g, int open)
{
    memset(g, 0, sizeof(*g));
    g->open = open;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
}

static void gate_fini(gate *g)
{
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->lock);
}

static void h_gate(ncmp_http_request *req, void *arg)
{
    gate *g = arg;

    pthread_mutex_lock(&g->lock);
    g->waiting++;
    pthread_cond_broadcast(&g->cond);
    while (!g->open)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
    ncmp_http_respond(req, 200, "text/plain", "passed", 6);
}

typedef struct gate_call {
    int port;
    const char *path;
    reply r;
} gate_call;

static void *gate_call_run(void *arg)
{
    gate_call *c = arg;
    call(c->port, "GET", c->path, NULL, 0, NULL, &c->r);
    return NULL;
}

Test(ncmp_http, blocking_handlers_queue_for_workers_while_inline_routes_answer)
{
    ncmp_http_options o;
    ncmp_http_server *srv = NULL;
    ncmp_err err = {0};
    gate g;
    gate_call calls[2];
    pthread_t threads[2];
    uint64_t shed0 = shed_count("http-queue");
    reply r;
    int port;

    gate_init(&g, 0);
    o = loopback_opts(1); /* one server thread: a blocked handler there would stop everything */
    o.worker_threads = 1;
    o.max_queued = 1;
    cr_assert_eq(ncmp_http_server_new(&srv, &o, &err), 0, "%s", err.msg);
    ncmp_http_route(srv, "GET", "/gate", h_gate, &g);
    ncmp_http_route(srv, "GET", "/silent", h_silent, NULL);
    ncmp_http_route(srv, "POST", "/async", h_async, NULL);
    ncmp_http_route_inline(srv, "GET", "/things/{ref}", h_echo, NULL);
    ncmp_http_route_open_inline(srv, "GET", "/open/{ref}", h_echo, NULL);
    cr_assert_eq(ncmp_http_server_start(srv, &err), 0, "%s", err.msg);
    port = ncmp_http_server_port(srv);

    /* the first holds the worker, the second waits in the queue */
    for (int i = 0; i < 2; i++) {
        calls[i] = (gate_call){.port = port, .path = "/gate"};
        pthread_create(&threads[i], NULL, gate_call_run, &calls[i]);
        for (int k = 0; k < 500 && (i == 0 ? g.waiting < 1 : ncmp_http_queued(srv) < 1); k++)
            ncmp_sleep_ms(10);
    }
    cr_assert_eq(g.waiting, 1);
    cr_assert_eq(ncmp_http_queued(srv), 1);

    /* the queue is full: 503 at once */
    call(port, "GET", "/gate", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 503, "%s", r.body.data);
    cr_assert(strstr(r.headers.data, "Retry-After: 1\r\n"), "%s", r.headers.data);
    cr_assert(strstr(r.body.data, "http.max-queued"), "%s", r.body.data);
    reply_free(&r);
    cr_assert_eq(shed_count("http-queue"), shed0 + 1);

    /* inline routes are served by the one server thread meanwhile */
    call(port, "GET", "/things/x", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);
    call(port, "GET", "/open/y", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    reply_free(&r);

    /* the gate opens: both are answered in turn */
    pthread_mutex_lock(&g.lock);
    g.open = 1;
    pthread_cond_broadcast(&g.cond);
    pthread_mutex_unlock(&g.lock);
    for (int i = 0; i < 2; i++) {
        pthread_join(threads[i], NULL);
        cr_assert_eq(calls[i].r.status, 200, "%s", calls[i].r.body.data);
        cr_assert_str_eq(calls[i].r.body.data, "passed");
        reply_free(&calls[i].r);
    }
    cr_assert_eq(g.waiting, 2);

    /* on a worker too: a handler that suspends answers later, one that
     * gives no answer is a 500 */
    call(port, "POST", "/async", "{}", 2, NULL, &r);
    cr_assert_eq(r.status, 202, "%s", r.body.data);
    reply_free(&r);
    call(port, "GET", "/silent", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 500, "%s", r.body.data);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
    gate_fini(&g);
}

Test(ncmp_http, a_request_that_waited_too_long_for_a_worker_is_503_unrun)
{
    ncmp_http_options o;
    ncmp_http_server *srv = NULL;
    ncmp_err err = {0};
    gate g;
    gate_call calls[2];
    pthread_t threads[2];

    gate_init(&g, 0);
    o = loopback_opts(2);
    o.worker_threads = 1;
    o.max_queue_wait_ms = 100;
    cr_assert_eq(ncmp_http_server_new(&srv, &o, &err), 0, "%s", err.msg);
    ncmp_http_route(srv, "GET", "/gate", h_gate, &g);
    cr_assert_eq(ncmp_http_server_start(srv, &err), 0, "%s", err.msg);
    for (int i = 0; i < 2; i++) {
        calls[i] = (gate_call){.port = ncmp_http_server_port(srv), .path = "/gate"};
        pthread_create(&threads[i], NULL, gate_call_run, &calls[i]);
        for (int k = 0; k < 500 && (i == 0 ? g.waiting < 1 : ncmp_http_queued(srv) < 1); k++)
            ncmp_sleep_ms(10);
    }
    cr_assert_eq(ncmp_http_queued(srv), 1);
    ncmp_sleep_ms(300); /* the second waits past its limit */
    pthread_mutex_lock(&g.lock);
    g.open = 1;
    pthread_cond_broadcast(&g.cond);
    pthread_mutex_unlock(&g.lock);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    cr_assert_eq(calls[0].r.status, 200, "%s", calls[0].r.body.data);
    cr_assert_eq(calls[1].r.status, 503, "%s", calls[1].r.body.data);
    cr_assert(strstr(calls[1].r.body.data, "http.max-queue-wait-ms"), "%s", calls[1].r.body.data);
    cr_assert(strstr(calls[1].r.headers.data, "Retry-After: 1\r\n"), "%s", calls[1].r.headers.data);
    cr_assert_eq(g.waiting, 1, "the late request's handler never ran");
    for (int i = 0; i < 2; i++)
        reply_free(&calls[i].r);
    ncmp_http_server_destroy(srv);
    gate_fini(&g);
}

static void h_to_worker(ncmp_http_request *req, void *arg)
{
    ncmp_http_to_worker(req, h_gate, arg);
}

Test(ncmp_http, an_inline_handler_can_continue_on_a_worker)
{
    ncmp_http_options o;
    ncmp_http_server *srv = NULL;
    ncmp_err err = {0};
    gate g;
    reply r;

    gate_init(&g, 1);
    o = loopback_opts(1);
    o.worker_threads = 1;
    cr_assert_eq(ncmp_http_server_new(&srv, &o, &err), 0, "%s", err.msg);
    ncmp_http_route_inline(srv, "GET", "/later", h_to_worker, &g);
    cr_assert_eq(ncmp_http_server_start(srv, &err), 0, "%s", err.msg);
    call(ncmp_http_server_port(srv), "GET", "/later", NULL, 0, NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_assert_str_eq(r.body.data, "passed");
    cr_assert_eq(g.waiting, 1);
    reply_free(&r);
    ncmp_http_server_destroy(srv);
    gate_fini(&g);
}
