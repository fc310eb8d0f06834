/* Unit tests of lib/ncmp_dmi.c: the client against a real HTTP server run
 * in-process (libmicrohttpd on an ephemeral loopback port, one thread per
 * connection so that delayed answers overlap), and the DMI API helpers. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ncmp_config.h"
#include "ncmp_dmi.h"
#include "ncmp_log.h"
#include "unit_leak.h"

TestSuite(ncmp_dmi, .fini = unit_leak_check);

/* --- the test server ----------------------------------------------------- */

/* Routes:
 *   /echo          200 {"ok":true}, the request recorded in `last`
 *   /delay/<ms>    200 {} after <ms> milliseconds
 *   /status/<n>    HTTP <n> with body "failure body"
 *   /big/<n>       200 with <n> bytes
 *   /health/up     200 {"status":"UP"};  /health/down  200 {"status":"DOWN"}
 */
typedef struct srv_request {
    char method[16];
    char url[256];
    char authorization[256]; /* "" when absent */
    char content_type[128];
    char custom[128]; /* X-Custom header */
    char body[512];
} srv_request;

typedef struct test_server {
    struct MHD_Daemon *daemon;
    char base[64]; /* http://127.0.0.1:<port> */
    atomic_int connections;
    atomic_int requests;
    atomic_int active, max_active;
    pthread_mutex_t lock;
    srv_request last;
    int with_authorization; /* requests that carried an Authorization header */
} test_server;

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    test_server *s = cls;

    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add(&s->connections, 1);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    ncmp_buf *body = *con_cls;

    if (body) {
        ncmp_buf_free(body);
        free(body);
        *con_cls = NULL;
    }
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned code, const char *body,
                               size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret;

    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static void copy_header(struct MHD_Connection *c, const char *name, char *out, size_t outlen)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);

    snprintf(out, outlen, "%s", v ? v : "");
}

static void record(test_server *s, struct MHD_Connection *c, const char *url, const char *method,
                   const ncmp_buf *body)
{
    pthread_mutex_lock(&s->lock);
    snprintf(s->last.method, sizeof(s->last.method), "%s", method);
    snprintf(s->last.url, sizeof(s->last.url), "%s", url);
    copy_header(c, "Authorization", s->last.authorization, sizeof(s->last.authorization));
    copy_header(c, "Content-Type", s->last.content_type, sizeof(s->last.content_type));
    copy_header(c, "X-Custom", s->last.custom, sizeof(s->last.custom));
    snprintf(s->last.body, sizeof(s->last.body), "%s", body->data ? body->data : "");
    if (*s->last.authorization)
        s->with_authorization++;
    pthread_mutex_unlock(&s->lock);
}

static enum MHD_Result route(test_server *s, struct MHD_Connection *c, const char *url)
{
    if (strncmp(url, "/delay/", 7) == 0) {
        usleep((useconds_t)atoi(url + 7) * 1000);
        return respond(c, 200, "{}", 2);
    }
    if (strncmp(url, "/status/", 8) == 0)
        return respond(c, (unsigned)atoi(url + 8), "failure body", 12);
    if (strncmp(url, "/big/", 5) == 0) {
        size_t n = (size_t)atol(url + 5);
        char *big = malloc(n);
        enum MHD_Result ret;
        memset(big, 'x', n);
        ret = respond(c, 200, big, n);
        free(big);
        return ret;
    }
    if (strcmp(url, "/health/up") == 0)
        return respond(c, 200, "{\"status\":\"UP\"}", 15);
    if (strcmp(url, "/health/down") == 0)
        return respond(c, 200, "{\"status\":\"DOWN\"}", 17);
    return respond(c, 200, "{\"ok\":true}", 11);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    test_server *s = cls;
    ncmp_buf *body = *con_cls;
    enum MHD_Result ret;
    int now, max;

    if (!body) {
        *con_cls = ncmp_xcalloc(1, sizeof(ncmp_buf));
        return MHD_YES;
    }
    if (*upload_data_size) {
        ncmp_buf_append(body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    atomic_fetch_add(&s->requests, 1);
    now = atomic_fetch_add(&s->active, 1) + 1;
    max = atomic_load(&s->max_active);
    while (now > max && !atomic_compare_exchange_weak(&s->max_active, &max, now))
        ;
    record(s, c, url, method, body);
    ret = route(s, c, url);
    atomic_fetch_sub(&s->active, 1);
    return ret;
}

static void server_start(test_server *s)
{
    struct sockaddr_in addr;
    const union MHD_DaemonInfo *info;

    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = 0; /* ephemeral */
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    s->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL,
        NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
        s, MHD_OPTION_END);
    cr_assert_not_null(s->daemon, "the test HTTP server did not start");
    info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    cr_assert(info && info->port, "the test HTTP server has no port");
    snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%u", (unsigned)info->port);
}

static void server_stop(test_server *s)
{
    MHD_stop_daemon(s->daemon);
    pthread_mutex_destroy(&s->lock);
}

/* A loopback port nothing listens on: bound, read, closed. */
static unsigned closed_port(void)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof(addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    unsigned port;

    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0);
    cr_assert(getsockname(fd, (struct sockaddr *)&addr, &len) == 0);
    port = ntohs(addr.sin_port);
    close(fd);
    return port;
}

/* --- helpers ------------------------------------------------------------- */

static ncmp_dmi_opts test_opts(void)
{
    ncmp_dmi_opts o;

    memset(&o, 0, sizeof(o));
    o.connect_timeout_ms = 5000;
    o.response_timeout_ms = 10000;
    o.max_connections_per_host = 64;
    o.max_connections = 256;
    o.max_response_bytes = 1 << 20;
    return o;
}

static ncmp_dmi *client_new(const ncmp_dmi_opts *o)
{
    ncmp_dmi *dmi = NULL;
    ncmp_err err;

    cr_assert_eq(ncmp_dmi_new(&dmi, o, &err), 0, "%s", err.msg);
    return dmi;
}

static char *url_of(const test_server *s, const char *path)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_appendf(&b, "%s%s", s->base, path);
    return b.data;
}

/* `n` GETs of `url` at once through ncmp_dmi_call_many, into resps. */
static void call_many_same(ncmp_dmi *dmi, const char *url, int n, ncmp_dmi_response *resps)
{
    ncmp_dmi_request *reqs = calloc((size_t)n, sizeof(*reqs));
    ncmp_err err;

    cr_assert_not_null(reqs);
    for (int i = 0; i < n; i++)
        reqs[i].url = url;
    cr_assert_eq(ncmp_dmi_call_many(dmi, reqs, (size_t)n, resps, &err), 0, "%s", err.msg);
    free(reqs);
}

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* One blocking call; the response must be filled. */
static ncmp_dmi_response call(ncmp_dmi *dmi, const ncmp_dmi_request *req)
{
    ncmp_dmi_response resp;
    ncmp_err err;

    cr_assert_eq(ncmp_dmi_call(dmi, req, &resp, &err), 0, "%s", err.msg);
    return resp;
}

/* Completion counting for the asynchronous tests. */
typedef struct async_tally {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    int calls[4096]; /* times each request's callback ran */
    int status[4096];
    ncmp_dmi_failure failure[4096];
} async_tally;

typedef struct async_ticket {
    async_tally *tally;
    int index;
} async_ticket;

static void tally_init(async_tally *t)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
}

static void tally_fini(async_tally *t)
{
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
}

static void on_done(ncmp_dmi_response *resp, void *opaque)
{
    async_ticket *ticket = opaque;
    async_tally *t = ticket->tally;

    pthread_mutex_lock(&t->lock);
    t->calls[ticket->index]++;
    t->status[ticket->index] = (int)resp->status;
    t->failure[ticket->index] = resp->failure;
    t->done++;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    ncmp_dmi_response_destroy(resp);
}

/* Wait until `n` callbacks ran or 30 s passed; returns how many ran. */
static int tally_wait(async_tally *t, int n)
{
    struct timespec deadline;
    int done;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    pthread_mutex_lock(&t->lock);
    while (t->done < n && pthread_cond_timedwait(&t->cond, &t->lock, &deadline) == 0)
        ;
    done = t->done;
    pthread_mutex_unlock(&t->lock);
    return done;
}

/* --- call styles --------------------------------------------------------- */

Test(ncmp_dmi, blocking_call_get_and_post)
{
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *url;
    const char *headers[] = {"X-Custom: forwarded", NULL};
    ncmp_dmi_request get = {0}, post = {0};
    ncmp_dmi_response resp;
    ncmp_err err;

    server_start(&s);
    dmi = client_new(&o);
    url = url_of(&s, "/echo");
    get.url = url;
    resp = call(dmi, &get);
    cr_expect_eq(resp.status, 200);
    cr_expect_eq(resp.failure, NCMP_DMI_OK);
    cr_expect_str_eq(resp.error, "");
    cr_expect_str_eq(resp.body.data, "{\"ok\":true}");
    cr_expect_str_eq(resp.content_type, "application/json");
    cr_expect_eq(ncmp_dmi_response_check(&resp, &err), 0);
    cr_expect_str_eq(s.last.method, "GET");
    ncmp_dmi_response_free(&resp);

    post.url = url;
    post.body = "{\"a\":1}";
    post.body_len = 7;
    post.headers = headers;
    resp = call(dmi, &post);
    cr_expect_eq(resp.status, 200);
    cr_expect_str_eq(s.last.method, "POST");
    cr_expect_str_eq(s.last.body, "{\"a\":1}");
    cr_expect_str_eq(s.last.content_type, "application/json");
    cr_expect_str_eq(s.last.custom, "forwarded");
    ncmp_dmi_response_free(&resp);

    post.method = "PUT";
    post.content_type = "application/yang-data+json";
    resp = call(dmi, &post);
    cr_expect_eq(resp.status, 200);
    cr_expect_str_eq(s.last.method, "PUT");
    cr_expect_str_eq(s.last.body, "{\"a\":1}");
    cr_expect_str_eq(s.last.content_type, "application/yang-data+json");
    ncmp_dmi_response_free(&resp);

    get.method = "DELETE";
    resp = call(dmi, &get);
    cr_expect_eq(resp.status, 200);
    cr_expect_str_eq(s.last.method, "DELETE");
    ncmp_dmi_response_free(&resp);

    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    free(url);
}

Test(ncmp_dmi, keep_alive_reuses_one_connection)
{
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *url;
    ncmp_dmi_request req = {0};

    server_start(&s);
    dmi = client_new(&o);
    url = url_of(&s, "/echo");
    req.url = url;
    for (int i = 0; i < 20; i++) {
        ncmp_dmi_response resp = call(dmi, &req);
        cr_expect_eq(resp.status, 200);
        ncmp_dmi_response_free(&resp);
        /* POSTs with bodies keep the connection too */
        req.body = i % 2 ? "{}" : NULL;
        req.body_len = i % 2 ? 2 : 0;
    }
    cr_expect_eq(atomic_load(&s.requests), 20);
    cr_expect_eq(atomic_load(&s.connections), 1, "20 sequential calls opened %d connections",
                 atomic_load(&s.connections));
    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    free(url);
}

Test(ncmp_dmi, call_many_runs_in_parallel)
{
    enum { N = 50 };
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *url;
    ncmp_dmi_response resps[N];
    long t0, elapsed;

    server_start(&s);
    dmi = client_new(&o);
    url = url_of(&s, "/delay/200");
    t0 = now_ms();
    call_many_same(dmi, url, N, resps);
    elapsed = now_ms() - t0;
    for (int i = 0; i < N; i++) {
        cr_expect_eq(resps[i].status, 200, "request %d: %s", i, resps[i].error);
        ncmp_dmi_response_free(&resps[i]);
    }
    /* one after the other would take 10 s */
    cr_expect_lt(elapsed, 2000, "50 calls delayed 200 ms each took %ld ms", elapsed);
    cr_expect_gt(atomic_load(&s.max_active), 1, "the server never saw two requests at once");
    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    free(url);
}

Test(ncmp_dmi, per_host_limit_is_enforced)
{
    enum { N = 8 };
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *url;
    ncmp_dmi_response resps[N];

    server_start(&s);
    o.max_connections_per_host = 2;
    dmi = client_new(&o);
    url = url_of(&s, "/delay/100");
    call_many_same(dmi, url, N, resps);
    for (int i = 0; i < N; i++) {
        cr_expect_eq(resps[i].status, 200, "request %d: %s", i, resps[i].error);
        ncmp_dmi_response_free(&resps[i]);
    }
    cr_expect_leq(atomic_load(&s.connections), 2);
    cr_expect_leq(atomic_load(&s.max_active), 2);
    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    free(url);
}

Test(ncmp_dmi, in_flight_bound_per_plugin_fails_the_excess_unsent)
{
    enum { N = 6 };
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *slow, *other;
    ncmp_dmi_response resps[N], r;
    ncmp_err err;
    int ok = 0, busy = 0;

    server_start(&s);
    o.max_in_flight_per_host = 2;
    dmi = client_new(&o);
    slow = url_of(&s, "/delay/300");
    /* six at once to one plugin: two are sent, four fail at once */
    call_many_same(dmi, slow, N, resps);
    for (int i = 0; i < N; i++) {
        if (resps[i].status == 200) {
            ok++;
        } else {
            busy++;
            cr_expect_eq(resps[i].failure, NCMP_DMI_FAIL_BUSY, "request %d: %s", i, resps[i].error);
            cr_expect(strstr(resps[i].error, "dmi.max-in-flight-per-plugin"), "%s", resps[i].error);
            cr_expect_eq(ncmp_dmi_response_check(&resps[i], &err), -1);
            cr_expect_eq(err.cls, NCMP_ERR_RETRY);
        }
        ncmp_dmi_response_free(&resps[i]);
    }
    cr_expect_eq(ok, 2);
    cr_expect_eq(busy, 4);
    cr_expect_eq(s.requests, 2, "the refused requests never reached the plugin");
    cr_expect_str_eq(ncmp_dmi_failure_name(NCMP_DMI_FAIL_BUSY), "busy");
    /* once they are answered, the places are free again */
    r = call(dmi, &(ncmp_dmi_request){.url = slow});
    cr_expect_eq(r.status, 200, "%s", r.error);
    ncmp_dmi_response_free(&r);
    /* the bound is per plugin: with 127.0.0.1's two places taken, the
     * same server named localhost is another plugin */
    {
        async_tally *t = calloc(1, sizeof(*t));
        async_ticket tickets[2];
        ncmp_buf b = NCMP_BUF_INIT;
        tally_init(t);
        for (int i = 0; i < 2; i++) {
            tickets[i] = (async_ticket){t, i};
            cr_assert_eq(
                ncmp_dmi_submit(dmi, &(ncmp_dmi_request){.url = slow}, on_done, &tickets[i], &err),
                0, "%s", err.msg);
        }
        ncmp_buf_appendf(&b, "http://localhost:%s/delay/10", strrchr(s.base, ':') + 1);
        other = b.data;
        r = call(dmi, &(ncmp_dmi_request){.url = other});
        cr_expect_eq(r.status, 200, "%s", r.error);
        ncmp_dmi_response_free(&r);
        cr_expect_eq(tally_wait(t, 2), 2);
        cr_expect_eq(t->status[0], 200);
        cr_expect_eq(t->status[1], 200);
        tally_fini(t);
        free(t);
        free(other);
    }
    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    free(slow);
}

Test(ncmp_dmi, async_callback_once_per_request_also_for_failures)
{
    enum { N = 2000 };
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *ok_url, refused_url[64];
    static async_tally tally;
    static async_ticket tickets[N];
    int done;

    server_start(&s);
    o.max_connections_per_host = 16; /* most requests wait for a connection */
    dmi = client_new(&o);
    ok_url = url_of(&s, "/echo");
    snprintf(refused_url, sizeof(refused_url), "http://127.0.0.1:%u/x", closed_port());
    tally_init(&tally);
    for (int i = 0; i < N; i++) {
        ncmp_dmi_request req = {0};
        ncmp_err err;
        req.url = i % 10 == 9 ? refused_url : ok_url;
        tickets[i].tally = &tally;
        tickets[i].index = i;
        cr_assert_eq(ncmp_dmi_submit(dmi, &req, on_done, &tickets[i], &err), 0, "%s", err.msg);
    }
    done = tally_wait(&tally, N);
    cr_assert_eq(done, N, "%d of %d callbacks ran", done, N);
    for (int i = 0; i < N; i++) {
        cr_expect_eq(tally.calls[i], 1, "request %d: callback ran %d times", i, tally.calls[i]);
        if (i % 10 == 9) {
            cr_expect_eq(tally.status[i], 0);
            cr_expect_eq(tally.failure[i], NCMP_DMI_FAIL_CONNECT);
        } else {
            cr_expect_eq(tally.status[i], 200, "request %d", i);
        }
    }
    ncmp_dmi_destroy(dmi);
    /* no late second call */
    for (int i = 0; i < N; i++)
        cr_expect_eq(tally.calls[i], 1);
    tally_fini(&tally);
    server_stop(&s);
    free(ok_url);
}

typedef struct submitter {
    ncmp_dmi *dmi;
    const char *url;
    async_ticket *tickets;
    int n;
    int failed;
} submitter;

static void *submit_many(void *arg)
{
    submitter *sub = arg;

    for (int i = 0; i < sub->n; i++) {
        ncmp_dmi_request req = {0};
        ncmp_err err;
        req.url = sub->url;
        req.body = "{}";
        req.body_len = 2;
        if (ncmp_dmi_submit(sub->dmi, &req, on_done, &sub->tickets[i], &err) != 0)
            sub->failed++;
    }
    return NULL;
}

Test(ncmp_dmi, async_submit_from_many_threads)
{
    enum { THREADS = 4, PER = 250 };
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *url;
    static async_tally tally;
    static async_ticket tickets[THREADS * PER];
    submitter subs[THREADS];
    pthread_t threads[THREADS];

    server_start(&s);
    dmi = client_new(&o);
    url = url_of(&s, "/echo");
    tally_init(&tally);
    for (int i = 0; i < THREADS * PER; i++) {
        tickets[i].tally = &tally;
        tickets[i].index = i;
    }
    for (int t = 0; t < THREADS; t++) {
        subs[t] = (submitter){dmi, url, &tickets[t * PER], PER, 0};
        cr_assert_eq(pthread_create(&threads[t], NULL, submit_many, &subs[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        cr_expect_eq(subs[t].failed, 0);
    }
    cr_assert_eq(tally_wait(&tally, THREADS * PER), THREADS * PER);
    for (int i = 0; i < THREADS * PER; i++) {
        cr_expect_eq(tally.calls[i], 1);
        cr_expect_eq(tally.status[i], 200);
    }
    cr_expect_eq(atomic_load(&s.requests), THREADS * PER);
    ncmp_dmi_destroy(dmi);
    tally_fini(&tally);
    server_stop(&s);
    free(url);
}

Test(ncmp_dmi, destroy_with_requests_in_flight_cancels_each_once)
{
    enum { N = 100 };
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *url;
    static async_tally tally;
    static async_ticket tickets[N];

    server_start(&s);
    o.max_connections_per_host = 4; /* some in flight, most waiting in libcurl */
    dmi = client_new(&o);
    url = url_of(&s, "/delay/500");
    tally_init(&tally);
    for (int i = 0; i < N; i++) {
        ncmp_dmi_request req = {0};
        ncmp_err err;
        req.url = url;
        tickets[i].tally = &tally;
        tickets[i].index = i;
        cr_assert_eq(ncmp_dmi_submit(dmi, &req, on_done, &tickets[i], &err), 0, "%s", err.msg);
    }
    usleep(100 * 1000);
    ncmp_dmi_destroy(dmi);
    /* every callback has run before destroy returned */
    cr_expect_eq(tally.done, N);
    for (int i = 0; i < N; i++) {
        cr_expect_eq(tally.calls[i], 1, "request %d: callback ran %d times", i, tally.calls[i]);
        cr_expect_eq(tally.failure[i], NCMP_DMI_FAIL_CANCELLED, "request %d: %s", i,
                     ncmp_dmi_failure_name(tally.failure[i]));
    }
    tally_fini(&tally);
    server_stop(&s);
    free(url);
}

/* A callback may submit more work but must not make a blocking call. */
typedef struct chain {
    ncmp_dmi *dmi;
    const char *url;
    int blocking_rc;
    ncmp_err_class blocking_cls;
    async_ticket next;
} chain;

static void on_chain(ncmp_dmi_response *resp, void *opaque)
{
    chain *ch = opaque;
    ncmp_dmi_request req = {0};
    ncmp_dmi_response r;
    ncmp_err err;

    ncmp_dmi_response_destroy(resp);
    req.url = ch->url;
    ch->blocking_rc = ncmp_dmi_call(ch->dmi, &req, &r, &err);
    ch->blocking_cls = err.cls;
    if (ncmp_dmi_submit(ch->dmi, &req, on_done, &ch->next, &err) != 0)
        ch->blocking_rc = 99;
}

Test(ncmp_dmi, callback_may_submit_but_not_block)
{
    test_server s;
    ncmp_dmi_opts o = test_opts();
    static async_tally tally;
    chain ch;
    char *url;
    ncmp_dmi_request req = {0};
    ncmp_err err;

    server_start(&s);
    url = url_of(&s, "/echo");
    tally_init(&tally);
    memset(&ch, 0, sizeof(ch));
    ch.dmi = client_new(&o);
    ch.url = url;
    ch.next.tally = &tally;
    req.url = url;
    cr_assert_eq(ncmp_dmi_submit(ch.dmi, &req, on_chain, &ch, &err), 0, "%s", err.msg);
    cr_assert_eq(tally_wait(&tally, 1), 1);
    cr_expect_eq(ch.blocking_rc, -1);
    cr_expect_eq(ch.blocking_cls, NCMP_ERR_FATAL);
    cr_expect_eq(tally.status[0], 200);
    ncmp_dmi_destroy(ch.dmi);
    tally_fini(&tally);
    server_stop(&s);
    free(url);
}

/* --- failures ------------------------------------------------------------ */

Test(ncmp_dmi, connection_refused)
{
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi = client_new(&o);
    char url[64];
    ncmp_dmi_request req = {0};
    ncmp_dmi_response resp;
    ncmp_err err;

    snprintf(url, sizeof(url), "http://127.0.0.1:%u/dmi/v1/ch/x/modules", closed_port());
    req.url = url;
    req.body = "{}";
    req.body_len = 2;
    resp = call(dmi, &req);
    cr_expect_eq(resp.status, 0);
    cr_expect_eq(resp.failure, NCMP_DMI_FAIL_CONNECT);
    cr_expect(strstr(resp.error, "Connection refused"), "%s", resp.error);
    cr_expect(strstr(resp.error, url), "the message names the URL: %s", resp.error);
    cr_expect_eq(ncmp_dmi_response_check(&resp, &err), -1);
    cr_expect_eq(err.cls, NCMP_ERR_RETRY);
    cr_expect(strstr(err.msg, "Connection refused"), "%s", err.msg);
    ncmp_dmi_response_free(&resp);
    ncmp_dmi_destroy(dmi);
}

Test(ncmp_dmi, response_timeout)
{
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *url;
    ncmp_dmi_request req = {0};
    ncmp_dmi_response resp;
    ncmp_err err;

    server_start(&s);
    o.response_timeout_ms = 300;
    dmi = client_new(&o);
    url = url_of(&s, "/delay/1500");
    req.url = url;
    resp = call(dmi, &req);
    cr_expect_eq(resp.status, 0);
    cr_expect_eq(resp.failure, NCMP_DMI_FAIL_TIMEOUT, "%s", resp.error);
    cr_expect(strstr(resp.error, "timeout"), "%s", resp.error);
    cr_expect(strstr(resp.error, "300 ms"), "%s", resp.error);
    cr_expect_eq(ncmp_dmi_response_check(&resp, &err), -1);
    cr_expect_eq(err.cls, NCMP_ERR_RETRY);
    ncmp_dmi_response_free(&resp);
    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    free(url);
}

Test(ncmp_dmi, unknown_host)
{
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi = client_new(&o);
    ncmp_dmi_request req = {0};
    ncmp_dmi_response resp;

    /* .invalid never resolves (RFC 2606) */
    req.url = "http://dmi-plugin.invalid:8080/actuator/health";
    resp = call(dmi, &req);
    cr_expect_eq(resp.status, 0);
    cr_expect_eq(resp.failure, NCMP_DMI_FAIL_DNS, "%s: %s", ncmp_dmi_failure_name(resp.failure),
                 resp.error);
    cr_expect(strstr(resp.error, "DNS"), "%s", resp.error);
    ncmp_dmi_response_free(&resp);
    ncmp_dmi_destroy(dmi);
}

Test(ncmp_dmi, http_error_statuses)
{
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *u503, *u404;
    ncmp_dmi_request req = {0};
    ncmp_dmi_response resp;
    ncmp_err err;

    server_start(&s);
    dmi = client_new(&o);
    u503 = url_of(&s, "/status/503");
    u404 = url_of(&s, "/status/404");
    req.url = u503;
    resp = call(dmi, &req);
    cr_expect_eq(resp.status, 503);
    cr_expect_eq(resp.failure, NCMP_DMI_OK);
    cr_expect_str_eq(resp.body.data, "failure body");
    cr_expect_eq(ncmp_dmi_response_check(&resp, &err), -1);
    cr_expect_eq(err.cls, NCMP_ERR_RETRY);
    cr_expect_str_eq(err.msg, "DMI answered HTTP 503: failure body");
    ncmp_dmi_response_free(&resp);
    req.url = u404;
    resp = call(dmi, &req);
    cr_expect_eq(resp.status, 404);
    cr_expect_eq(ncmp_dmi_response_check(&resp, &err), -1);
    cr_expect_eq(err.cls, NCMP_ERR_REJECT);
    ncmp_dmi_response_free(&resp);
    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    free(u503);
    free(u404);
}

Test(ncmp_dmi, response_larger_than_the_limit)
{
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *big, *fits;
    ncmp_dmi_request req = {0};
    ncmp_dmi_response resp;

    server_start(&s);
    o.max_response_bytes = 4096;
    dmi = client_new(&o);
    big = url_of(&s, "/big/100000");
    fits = url_of(&s, "/big/4096");
    req.url = big;
    resp = call(dmi, &req);
    cr_expect_eq(resp.status, 0);
    cr_expect_eq(resp.failure, NCMP_DMI_FAIL_TOO_LARGE, "%s", resp.error);
    cr_expect(strstr(resp.error, "4096 bytes"), "%s", resp.error);
    cr_expect_eq(resp.body.len, 0);
    ncmp_dmi_response_free(&resp);
    req.url = fits;
    resp = call(dmi, &req);
    cr_expect_eq(resp.status, 200);
    cr_expect_eq(resp.body.len, 4096);
    ncmp_dmi_response_free(&resp);
    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    free(big);
    free(fits);
}

Test(ncmp_dmi, malformed_requests_are_rejected)
{
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi = client_new(&o);
    const char *crlf[] = {"X-Evil: a\r\nInjected: b", NULL};
    const char *noname[] = {": value", NULL};
    ncmp_dmi_request reqs[5];
    ncmp_dmi_response resp, two[2];
    static async_tally tally;
    async_ticket ticket = {&tally, 0};
    ncmp_err err;

    tally_init(&tally);
    memset(reqs, 0, sizeof(reqs));
    reqs[0].url = NULL;
    reqs[1].url = "ftp://dmi/x";
    reqs[2].url = "http://dmi/x y";
    reqs[3].url = "http://dmi/x";
    reqs[3].headers = crlf;
    reqs[4].url = "http://dmi/x";
    reqs[4].headers = noname;
    for (int i = 0; i < 5; i++) {
        cr_expect_eq(ncmp_dmi_call(dmi, &reqs[i], &resp, &err), -1, "request %d", i);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT, "request %d", i);
        cr_expect_eq(ncmp_dmi_submit(dmi, &reqs[i], on_done, &ticket, &err), -1);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT);
    }
    cr_expect_eq(ncmp_dmi_call_many(dmi, reqs + 3, 2, two, &err), -1);
    ncmp_dmi_destroy(dmi);
    cr_expect_eq(tally.done, 0, "a rejected submit must never call back");
    tally_fini(&tally);
}

Test(ncmp_dmi, bad_options_are_fatal)
{
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi = NULL;
    ncmp_err err;

    o.response_timeout_ms = 0;
    cr_expect_eq(ncmp_dmi_new(&dmi, &o, &err), -1);
    cr_expect_eq(err.cls, NCMP_ERR_FATAL);
    o = test_opts();
    o.max_connections_per_host = 0;
    cr_expect_eq(ncmp_dmi_new(&dmi, &o, &err), -1);
    cr_expect_null(dmi);
    ncmp_dmi_destroy(NULL);
}

/* --- authentication ------------------------------------------------------ */

Test(ncmp_dmi, basic_auth_sent_exactly_when_configured)
{
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *url;
    const char *bearer[] = {"Authorization: Bearer client-token", NULL};
    ncmp_dmi_request req = {0};
    ncmp_dmi_response resp;

    server_start(&s);
    url = url_of(&s, "/echo");
    req.url = url;

    /* not configured: nothing sent, a forwarded header passes as it is */
    dmi = client_new(&o);
    resp = call(dmi, &req);
    ncmp_dmi_response_free(&resp);
    cr_expect_str_eq(s.last.authorization, "");
    cr_expect_eq(s.with_authorization, 0);
    req.headers = bearer;
    resp = call(dmi, &req);
    ncmp_dmi_response_free(&resp);
    cr_expect_str_eq(s.last.authorization, "Bearer client-token");
    ncmp_dmi_destroy(dmi);

    /* configured: Basic on every call, replacing a forwarded header */
    o.auth_username = "cpsuser";
    o.auth_password = "s3cr3t!";
    dmi = client_new(&o);
    resp = call(dmi, &req);
    ncmp_dmi_response_free(&resp);
    cr_expect_str_eq(s.last.authorization, "Basic Y3BzdXNlcjpzM2NyM3Qh");
    req.headers = NULL;
    resp = call(dmi, &req);
    ncmp_dmi_response_free(&resp);
    cr_expect_str_eq(s.last.authorization, "Basic Y3BzdXNlcjpzM2NyM3Qh");
    ncmp_dmi_destroy(dmi);

    /* an empty user name is no authentication */
    o.auth_username = "";
    dmi = client_new(&o);
    resp = call(dmi, &req);
    ncmp_dmi_response_free(&resp);
    cr_expect_str_eq(s.last.authorization, "");
    ncmp_dmi_destroy(dmi);

    server_stop(&s);
    free(url);
}

Test(ncmp_dmi, password_never_logged)
{
    static const char password[] = "pa55-w0rd-never-logged";
    test_server s;
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_dmi_opts o;
    ncmp_dmi *dmi;
    char *url, refused[64];
    char *text = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    ncmp_dmi_request req = {0};
    ncmp_dmi_response resp;
    ncmp_err err;

    cr_assert_not_null(log);
    server_start(&s);
    ncmp_log_setup(NCMP_LOG_TRACE, NCMP_LOG_TEXT, log);
    cr_assert_eq(ncmp_config_set(cfg, "dmi.auth-username", "cpsuser", &err), 0);
    cr_assert_eq(ncmp_config_set(cfg, "dmi.auth-password", password, &err), 0);
    ncmp_dmi_opts_from_config(&o, cfg);
    dmi = client_new(&o);
    url = url_of(&s, "/status/401");
    snprintf(refused, sizeof(refused), "http://127.0.0.1:%u/", closed_port());
    req.url = url;
    resp = call(dmi, &req);
    cr_expect_eq(resp.status, 401);
    cr_expect_eq(ncmp_dmi_response_check(&resp, &err), -1);
    cr_expect_null(strstr(err.msg, password));
    ncmp_dmi_response_free(&resp);
    req.url = refused;
    resp = call(dmi, &req);
    cr_expect_null(strstr(resp.error, password));
    ncmp_dmi_response_free(&resp);
    ncmp_dmi_destroy(dmi);
    ncmp_config_dump(cfg, log);
    ncmp_log_setup(NCMP_LOG_INFO, NCMP_LOG_TEXT, NULL);
    fclose(log);
    cr_expect(strstr(text, "status=401"), "trace logging was on: %s", text);
    cr_expect(strstr(text, "dmi.auth-password = ********"), "%s", text);
    cr_expect_null(strstr(text, password), "the password is in the log:\n%s", text);
    free(text);
    ncmp_config_destroy(cfg);
    server_stop(&s);
    free(url);
}

Test(ncmp_dmi, credentials_in_a_url_stay_out_of_messages)
{
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi = client_new(&o);
    char url[96], masked[96];
    ncmp_dmi_request req = {0};
    ncmp_dmi_response resp;
    unsigned port = closed_port();

    snprintf(url, sizeof(url), "http://user:hunter2@127.0.0.1:%u/a@b", port);
    snprintf(masked, sizeof(masked), "http://***@127.0.0.1:%u/a@b", port);
    req.url = url;
    resp = call(dmi, &req);
    cr_expect_eq(resp.failure, NCMP_DMI_FAIL_CONNECT);
    cr_expect_null(strstr(resp.error, "hunter2"), "%s", resp.error);
    cr_expect(strstr(resp.error, masked), "%s", resp.error);
    ncmp_dmi_response_free(&resp);
    ncmp_dmi_destroy(dmi);
}

Test(ncmp_dmi, options_from_config_defaults)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_dmi_opts o;

    ncmp_dmi_opts_from_config(&o, cfg);
    cr_expect_eq(o.connect_timeout_ms, 30000);
    cr_expect_eq(o.response_timeout_ms, 60000);
    cr_expect_eq(o.max_connections_per_host, 256);
    cr_expect_eq(o.max_connections, 1024);
    cr_expect_eq(o.max_response_bytes, 64u << 20);
    cr_expect_str_eq(o.auth_username, "", "no credentials unless configured");
    ncmp_config_destroy(cfg);
}

/* --- health -------------------------------------------------------------- */

Test(ncmp_dmi, health_check)
{
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    ncmp_buf url = NCMP_BUF_INIT;
    char *down, *unavailable;
    ncmp_dmi_request req = {0};
    ncmp_dmi_response resp;

    server_start(&s);
    dmi = client_new(&o);
    /* {dmi}/actuator/health is served as /health/up by the test server */
    ncmp_buf_appendf(&url, "%s/health/up", s.base);
    req.url = url.data;
    resp = call(dmi, &req);
    cr_expect_eq(ncmp_dmi_health_up(&resp), 1);
    ncmp_dmi_response_free(&resp);
    down = url_of(&s, "/health/down");
    unavailable = url_of(&s, "/status/503");
    req.url = down;
    resp = call(dmi, &req);
    cr_expect_eq(ncmp_dmi_health_up(&resp), 0);
    ncmp_dmi_response_free(&resp);
    req.url = unavailable;
    resp = call(dmi, &req);
    cr_expect_eq(ncmp_dmi_health_up(&resp), 0);
    ncmp_dmi_response_free(&resp);
    memset(&resp, 0, sizeof(resp)); /* a transport failure */
    cr_expect_eq(ncmp_dmi_health_up(&resp), 0);
    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    ncmp_buf_free(&url);
    free(down);
    free(unavailable);
}

/* --- URLs ---------------------------------------------------------------- */

static void expect_url(const char *got, const char *want)
{
    cr_expect_str_eq(got, want);
}

Test(ncmp_dmi, url_encoding_is_strict)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_dmi_url_encode(&b, "aZ09-._~/:=(),; +?&#%'\"\xc3\xa9");
    expect_url(b.data, "aZ09-._~%2F%3A%3D%28%29%2C%3B%20%2B%3F%26%23%25%27%22%C3%A9");
    ncmp_buf_free(&b);
}

Test(ncmp_dmi, model_urls)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_dmi_url_modules(&b, "http://dmi:8080", "ch-1");
    expect_url(b.data, "http://dmi:8080/dmi/v1/ch/ch-1/modules");
    ncmp_buf_reset(&b);
    ncmp_dmi_url_module_resources(&b, "http://dmi:8080/", "ch 1/x");
    expect_url(b.data, "http://dmi:8080/dmi/v1/ch/ch%201%2Fx/moduleResources");
    ncmp_buf_reset(&b);
    ncmp_dmi_url_health(&b, "https://dmi.example:8443//");
    expect_url(b.data, "https://dmi.example:8443/actuator/health");
    ncmp_buf_free(&b);
}

Test(ncmp_dmi, data_urls_as_ncmp_encodes_them)
{
    ncmp_buf b = NCMP_BUF_INIT;

    /* NCMP's example of a DMI data URL */
    ncmp_dmi_url_data(&b, "http://dmi:8080", "ch-1", "ncmp-datastore:passthrough-operational",
                      "parent/child", "(a=1,b=2)", NULL);
    expect_url(b.data, "http://dmi:8080/dmi/v1/ch/ch-1/data/ds/"
                       "ncmp-datastore%3Apassthrough-operational"
                       "?resourceIdentifier=parent%2Fchild&options=%28a%3D1%2Cb%3D2%29");
    ncmp_buf_reset(&b);
    /* blank query values are left out */
    ncmp_dmi_url_data(&b, "http://dmi:8080", "ch-1", "ncmp-datastore:passthrough-running", "  ", "",
                      "my-topic");
    expect_url(b.data, "http://dmi:8080/dmi/v1/ch/ch-1/data/ds/"
                       "ncmp-datastore%3Apassthrough-running?topic=my-topic");
    ncmp_buf_reset(&b);
    ncmp_dmi_url_data(&b, "http://dmi:8080", "ch-1", "ncmp-datastore:passthrough-running", NULL,
                      NULL, NULL);
    expect_url(b.data,
               "http://dmi:8080/dmi/v1/ch/ch-1/data/ds/ncmp-datastore%3Apassthrough-running");
    ncmp_buf_reset(&b);
    ncmp_dmi_url_data(&b, "http://dmi:8080", "ch-1", "ncmp-datastore:passthrough-operational",
                      "/ManagedElement=NRNode1/GNBDUFunction=1", "(fields=NRCellDU/attributes)",
                      "client-topic");
    expect_url(b.data, "http://dmi:8080/dmi/v1/ch/ch-1/data/ds/"
                       "ncmp-datastore%3Apassthrough-operational"
                       "?resourceIdentifier=%2FManagedElement%3DNRNode1%2FGNBDUFunction%3D1"
                       "&options=%28fields%3DNRCellDU%2Fattributes%29&topic=client-topic");
    ncmp_buf_reset(&b);
    ncmp_dmi_url_data_operation(&b, "http://dmi:8080", "3a9ce55c-e365", "client-topic");
    expect_url(b.data, "http://dmi:8080/dmi/v1/data?requestId=3a9ce55c-e365&topic=client-topic");
    ncmp_buf_free(&b);
}

Test(ncmp_dmi, url_valid_default_rule)
{
    cr_expect(ncmp_dmi_url_valid("http://dmi:8080", ""));
    cr_expect(ncmp_dmi_url_valid("https://dmi.example/base", NULL));
    cr_expect(ncmp_dmi_url_valid("http://10.0.0.1", ""));
    cr_expect_not(ncmp_dmi_url_valid("ftp://dmi", ""));
    cr_expect_not(ncmp_dmi_url_valid("dmi:8080", ""));
    cr_expect_not(ncmp_dmi_url_valid("http://", ""));
    cr_expect_not(ncmp_dmi_url_valid("http:///path", ""));
    cr_expect_not(ncmp_dmi_url_valid("http://:8080", ""));
    cr_expect_not(ncmp_dmi_url_valid("http://dmi host", ""));
    cr_expect_not(ncmp_dmi_url_valid("http://dmi/<script>", ""));
    cr_expect_not(ncmp_dmi_url_valid("http://dmi\n", ""));
    cr_expect_not(ncmp_dmi_url_valid("", ""));
    cr_expect_not(ncmp_dmi_url_valid(NULL, ""));
}

Test(ncmp_dmi, url_valid_with_pattern)
{
    const char *pattern = "http://dmi-[0-9]+:8080";

    cr_expect(ncmp_dmi_url_valid("http://dmi-1:8080", pattern));
    cr_expect(ncmp_dmi_url_valid("http://dmi-42:8080", pattern));
    /* the whole URL must match */
    cr_expect_not(ncmp_dmi_url_valid("http://dmi-1:8080/x", pattern));
    cr_expect_not(ncmp_dmi_url_valid("xhttp://dmi-1:8080", pattern));
    cr_expect_not(ncmp_dmi_url_valid("https://dmi-1:8080", pattern));
    /* alternatives stay inside the anchors */
    cr_expect_not(ncmp_dmi_url_valid("http://evil", "http://a|http://b"));
    cr_expect(ncmp_dmi_url_valid("http://b", "http://a|http://b"));
    /* the pattern replaces the default rule */
    cr_expect(ncmp_dmi_url_valid("dmi-plugin", "dmi-.*"));
    /* a pattern that does not compile accepts nothing */
    cr_expect_not(ncmp_dmi_url_valid("http://dmi:8080", "(unclosed"));
}

/* --- bodies -------------------------------------------------------------- */

Test(ncmp_dmi, module_references_body)
{
    ncmp_buf b = NCMP_BUF_INIT;
    ncmp_err err;

    cr_assert_eq(ncmp_dmi_body_modules(&b, "{\"k\": \"v\", \"q\": \"a\\\"b\"}", "tagA", &err), 0,
                 "%s", err.msg);
    cr_expect_str_eq(
        b.data,
        "{\"cmHandleProperties\":{\"k\":\"v\",\"q\":\"a\\\"b\"},\"moduleSetTag\":\"tagA\"}");
    ncmp_buf_reset(&b);
    cr_assert_eq(ncmp_dmi_body_modules(&b, NULL, NULL, &err), 0);
    cr_expect_str_eq(b.data, "{\"cmHandleProperties\":{},\"moduleSetTag\":\"\"}");
    ncmp_buf_reset(&b);
    cr_expect_eq(ncmp_dmi_body_modules(&b, "[1]", "t", &err), -1);
    cr_expect_eq(err.cls, NCMP_ERR_REJECT);
    cr_expect_eq(ncmp_dmi_body_modules(&b, "{\"k\":1}", "t", &err), -1);
    cr_expect(strstr(err.msg, "'k'"), "%s", err.msg);
    cr_expect_eq(ncmp_dmi_body_modules(&b, "{bad", "t", &err), -1);
    cr_expect_eq(b.len, 0, "nothing appended on failure");
    ncmp_buf_free(&b);
}

Test(ncmp_dmi, module_resources_body)
{
    ncmp_dmi_module mods[2] = {{"module0", "2024-01-01", NULL, NULL}, {"m1", NULL, NULL, NULL}};
    ncmp_dmi_module unnamed = {NULL, "2024-01-01", NULL, NULL};
    ncmp_buf b = NCMP_BUF_INIT;
    ncmp_err err;

    cr_assert_eq(ncmp_dmi_body_module_resources(&b, "{\"k\":\"v\"}", "tagA", mods, 2, &err), 0,
                 "%s", err.msg);
    cr_expect_str_eq(b.data, "{\"moduleSetTag\":\"tagA\",\"data\":{\"modules\":["
                             "{\"name\":\"module0\",\"revision\":\"2024-01-01\"},"
                             "{\"name\":\"m1\",\"revision\":\"\"}]},"
                             "\"cmHandleProperties\":{\"k\":\"v\"}}");
    ncmp_buf_reset(&b);
    /* no tag: the field is left out, as NCMP does */
    cr_assert_eq(ncmp_dmi_body_module_resources(&b, "", "", mods, 1, &err), 0);
    cr_expect_str_eq(b.data, "{\"data\":{\"modules\":[{\"name\":\"module0\",\"revision\":"
                             "\"2024-01-01\"}]},\"cmHandleProperties\":{}}");
    ncmp_buf_reset(&b);
    cr_expect_eq(ncmp_dmi_body_module_resources(&b, "", "", &unnamed, 1, &err), -1);
    cr_expect_eq(err.cls, NCMP_ERR_REJECT);
    cr_expect_eq(b.len, 0);
    ncmp_buf_free(&b);
}

/* --- parsers ------------------------------------------------------------- */

static int parse_refs(const char *body, ncmp_dmi_module_list *out, ncmp_err *err)
{
    return ncmp_dmi_parse_module_references(body, strlen(body), out, err);
}

static int parse_res(const char *body, ncmp_dmi_module_list *out, ncmp_err *err)
{
    return ncmp_dmi_parse_module_resources(body, strlen(body), out, err);
}

Test(ncmp_dmi, parse_module_references_good)
{
    ncmp_dmi_module_list l = {0};
    ncmp_err err;

    cr_assert_eq(parse_refs("{\"schemas\":[{\"moduleName\":\"M1\",\"revision\":\"2024-01-01\","
                            "\"namespace\":\"urn:m1\"},{\"moduleName\":\"M2\"},"
                            "{\"moduleName\":\"M3\",\"revision\":null}]}",
                            &l, &err),
                 0, "%s", err.msg);
    cr_assert_eq(l.len, 3);
    cr_expect_str_eq(l.items[0].name, "M1");
    cr_expect_str_eq(l.items[0].revision, "2024-01-01");
    cr_expect_str_eq(l.items[0].namespace, "urn:m1");
    cr_expect_null(l.items[0].source);
    cr_expect_str_eq(l.items[1].revision, "");
    cr_expect_str_eq(l.items[1].namespace, "");
    cr_expect_str_eq(l.items[2].revision, "");
    ncmp_dmi_module_list_free(&l);
    cr_assert_eq(parse_refs("{\"schemas\":[]}", &l, &err), 0);
    cr_expect_eq(l.len, 0);
    ncmp_dmi_module_list_free(&l);
}

Test(ncmp_dmi, parse_module_references_bad)
{
    static const struct {
        const char *body;
        const char *message;
    } cases[] = {
        {"", "module references"},
        {"[]", "not a JSON object"},
        {"{}", "no \"schemas\" array"},
        {"{\"schemas\":{}}", "schemas"},
        {"{\"schemas\":[1]}", "element 0 is not an object"},
        {"{\"schemas\":[{\"moduleName\":\"a\"},{\"revision\":\"r\"}]}",
         "module references: element 1 has no moduleName"},
        {"{\"schemas\":[{\"moduleName\":\"\"}]}", "element 0: moduleName is empty"},
        {"{\"schemas\":[{\"moduleName\":7}]}", "element 0: moduleName is not a string"},
        {"{\"schemas\":[{\"moduleName\":\"a\",\"revision\":1}]}",
         "element 0: revision is not a string"},
        {"{\"schemas\":[{\"moduleName\":\"a\",\"namespace\":[]}]}",
         "element 0: namespace is not a string"},
        {"{\"schemas\":[]} x", "module references"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ncmp_dmi_module_list l = {0};
        ncmp_err err;
        cr_expect_eq(parse_refs(cases[i].body, &l, &err), -1, "case %zu", i);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT, "case %zu", i);
        cr_expect(strstr(err.msg, cases[i].message), "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].message);
        cr_expect_null(l.items, "case %zu: output written on failure", i);
    }
}

Test(ncmp_dmi, parse_module_resources_good)
{
    ncmp_dmi_module_list l = {0};
    ncmp_err err;

    cr_assert_eq(parse_res("[{\"moduleName\":\"M1\",\"revision\":\"2024-01-01\","
                           "\"yangSource\":\"module M1 { namespace \\\"urn:m1\\\"; }\"},"
                           "{\"moduleName\":\"M2\",\"yangSource\":\"module M2 {}\"}]",
                           &l, &err),
                 0, "%s", err.msg);
    cr_assert_eq(l.len, 2);
    cr_expect_str_eq(l.items[0].name, "M1");
    cr_expect_str_eq(l.items[0].revision, "2024-01-01");
    cr_expect_str_eq(l.items[0].source, "module M1 { namespace \"urn:m1\"; }");
    cr_expect_null(l.items[0].namespace);
    cr_expect_str_eq(l.items[1].revision, "");
    ncmp_dmi_module_list_free(&l);
}

Test(ncmp_dmi, parse_module_resources_bad)
{
    static const struct {
        const char *body;
        const char *message;
    } cases[] = {
        {"{}", "module resources: not a JSON array"},
        {"null", "not a JSON array"},
        {"[{\"moduleName\":\"a\",\"yangSource\":\"s\"},{\"moduleName\":\"b\",\"yangSource\":\"s\"},"
         "{\"moduleName\":\"c\",\"yangSource\":\"s\"},{\"moduleName\":\"d\"}]",
         "module resources: element 3 has no yangSource"},
        {"[{\"moduleName\":\"a\",\"yangSource\":\"\"}]", "element 0: yangSource is empty"},
        {"[{\"moduleName\":\"a\",\"yangSource\":1}]", "element 0: yangSource is not a string"},
        {"[{\"yangSource\":\"s\"}]", "element 0 has no moduleName"},
        {"[\"a\"]", "element 0 is not an object"},
        {"[{\"moduleName\":\"a\",\"yangSource\":\"\\u0000\"}]", "module resources"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ncmp_dmi_module_list l = {0};
        ncmp_err err;
        cr_expect_eq(parse_res(cases[i].body, &l, &err), -1, "case %zu", i);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT, "case %zu", i);
        cr_expect(strstr(err.msg, cases[i].message), "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].message);
        cr_expect_null(l.items, "case %zu: output written on failure", i);
    }
}

Test(ncmp_dmi, response_timeout_counts_the_wait_for_a_connection)
{
    enum { N = 3 };
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *url;
    ncmp_dmi_response resps[N];
    int timed_out = 0, waited = 0, sent = 0;

    server_start(&s);
    o.max_connections_per_host = 1;
    o.response_timeout_ms = 900;
    dmi = client_new(&o);
    url = url_of(&s, "/delay/600");
    call_many_same(dmi, url, N, resps);
    /* one connection: the first answers after 600 ms, the others would end
     * 1200 and 1800 ms after they were submitted; the second was sent on
     * the first one's connection, the last never had it, and their
     * failures say which */
    for (int i = 0; i < N; i++) {
        timed_out += resps[i].failure == NCMP_DMI_FAIL_TIMEOUT;
        waited += strstr(resps[i].error, "no connection came free within 900 ms") != NULL &&
                  strstr(resps[i].error, "at most 1 connections") != NULL;
        sent += strstr(resps[i].error, "no complete response after 900 ms (sent on a kept-alive") !=
                NULL;
        ncmp_dmi_response_free(&resps[i]);
    }
    cr_expect_eq(timed_out, N - 1);
    cr_expect_eq(waited, 1);
    cr_expect_eq(sent, 1);
    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    free(url);
}

/* A request waiting for a connection is bounded by its response timeout
 * alone: the connect timeout is each connection attempt's
 * (dmi.connect-timeout-ms), not counted while libcurl holds the request
 * behind CURLMOPT_MAX_HOST_CONNECTIONS. */
Test(ncmp_dmi, the_wait_for_a_connection_is_not_a_connect_timeout)
{
    enum { N = 3 };
    test_server s;
    ncmp_dmi_opts o = test_opts();
    ncmp_dmi *dmi;
    char *url;
    ncmp_dmi_response resps[N];

    server_start(&s);
    o.max_connections_per_host = 1;
    o.connect_timeout_ms = 300;
    o.response_timeout_ms = 5000;
    dmi = client_new(&o);
    url = url_of(&s, "/delay/400");
    call_many_same(dmi, url, N, resps);
    /* one connection: the last waits 800 ms for it */
    for (int i = 0; i < N; i++) {
        cr_expect_eq(resps[i].status, 200, "request %d: %s", i, resps[i].error);
        ncmp_dmi_response_free(&resps[i]);
    }
    cr_expect_eq(atomic_load(&s.max_active), 1);
    ncmp_dmi_destroy(dmi);
    server_stop(&s);
    free(url);
}
