#include "ncmp_dmi.h"

#include <ctype.h>
#include <curl/curl.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ncmp_curl_loop.h"
#include "ncmp_json.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "ncmp_time.h"

#define LOG_COMP "dmi"

/* How long the event thread sleeps in epoll_wait when nothing happens; a
 * wakeup, a socket or libcurl's timer ends the wait sooner. */
#define EVENT_POLL_MS 1000

/* Characters of the body quoted in a "DMI answered HTTP n" message. */
#define BODY_QUOTE_MAX 200

/* A blocking caller waits on this until `remaining` reaches 0. */
typedef struct dmi_wait {
    pthread_mutex_t lock;
    pthread_cond_t done;
    size_t remaining;
} dmi_wait;

/* Requests in flight to one DMI plugin (event thread only). */
typedef struct dmi_host {
    char *key; /* scheme://host:port as in the URL */
    long in_flight;
    struct dmi_host *next;
} dmi_host;

/* One request from submission to completion. Prepared on the submitting
 * thread, then owned by the event thread. */
typedef struct dmi_xfer {
    ncmp_dmi *dmi;
    CURL *easy;
    struct curl_slist *headers;
    char *method;
    char *url;
    char *body;                                   /* copy of the request body, NULL when none */
    long connect_timeout_ms, response_timeout_ms; /* the client's, or the request's */
    int too_large;
    char errbuf[CURL_ERROR_SIZE];
    /* where the response goes: a blocking caller's slot and its wait, or a
     * heap response handed to `done` */
    ncmp_dmi_response *resp;
    dmi_wait *wait;
    ncmp_dmi_done_cb done;
    void *opaque;
    struct dmi_xfer *prev, *next; /* the submission queue or the in-flight list */
    dmi_host *host;               /* counted in its in_flight while in flight */
    double t_submit;              /* ncmp_now_ms() when it was handed to the client */
} dmi_xfer;

struct ncmp_dmi {
    ncmp_dmi_opts opts; /* strings below are the client's copies */
    char *auth_username;
    char *auth_password;
    CURLM *multi;
    ncmp_curl_loop loop; /* run by the event thread */
    pthread_t thread;
    pthread_mutex_t lock; /* guards queue_* and stopping */
    dmi_xfer *queue_head, *queue_tail;
    int stopping;
    dmi_xfer *in_flight; /* event thread only */
    dmi_host *hosts;     /* event thread only */
    ncmp_gauge *in_flight_gauge;
    ncmp_counter *shed;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

/* curl_global_init is not thread-safe in every libcurl build: once per
 * process, never undone (the process exit releases it). */
static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* --- responses ----------------------------------------------------------- */

void ncmp_dmi_response_free(ncmp_dmi_response *resp)
{
    if (!resp)
        return;
    ncmp_buf_free(&resp->body);
    free(resp->content_type);
    memset(resp, 0, sizeof(*resp));
}

void ncmp_dmi_response_destroy(ncmp_dmi_response *resp)
{
    if (!resp)
        return;
    ncmp_dmi_response_free(resp);
    free(resp);
}

const char *ncmp_dmi_failure_name(ncmp_dmi_failure failure)
{
    switch (failure) {
    case NCMP_DMI_OK:
        return "ok";
    case NCMP_DMI_FAIL_DNS:
        return "dns";
    case NCMP_DMI_FAIL_CONNECT:
        return "connect";
    case NCMP_DMI_FAIL_TIMEOUT:
        return "timeout";
    case NCMP_DMI_FAIL_TLS:
        return "tls";
    case NCMP_DMI_FAIL_IO:
        return "io";
    case NCMP_DMI_FAIL_TOO_LARGE:
        return "too-large";
    case NCMP_DMI_FAIL_CANCELLED:
        return "cancelled";
    case NCMP_DMI_FAIL_INTERNAL:
        return "internal";
    case NCMP_DMI_FAIL_BUSY:
        return "busy";
    }
    return "?";
}

int ncmp_dmi_response_check(const ncmp_dmi_response *resp, ncmp_err *err)
{
    int quote;

    if (resp->status == 0)
        return ncmp_err_set(err, NCMP_ERR_RETRY, "%s",
                            *resp->error ? resp->error : "no response from DMI");
    if (resp->status >= 200 && resp->status < 300)
        return 0;
    quote = resp->body.len > BODY_QUOTE_MAX ? BODY_QUOTE_MAX : (int)resp->body.len;
    return ncmp_err_set(
        err,
        resp->status >= 500 || resp->status == 408 || resp->status == 429 ? NCMP_ERR_RETRY
                                                                          : NCMP_ERR_REJECT,
        "DMI answered HTTP %ld%s%.*s%s", resp->status, quote ? ": " : "", quote,
        resp->body.data ? resp->body.data : "", resp->body.len > BODY_QUOTE_MAX ? "..." : "");
}

/* --- options ------------------------------------------------------------- */

void ncmp_dmi_opts_from_config(ncmp_dmi_opts *opts, const ncmp_config *cfg)
{
    memset(opts, 0, sizeof(*opts));
    opts->connect_timeout_ms = cfg->dmi_connect_timeout_ms;
    opts->response_timeout_ms = cfg->dmi_response_timeout_ms;
    opts->max_connections_per_host = cfg->dmi_max_connections_per_host;
    opts->max_connections = cfg->dmi_max_connections;
    opts->max_response_bytes = (size_t)cfg->dmi_max_response_bytes;
    opts->max_in_flight_per_host = cfg->dmi_max_in_flight_per_plugin;
    opts->auth_username = cfg->dmi_auth_username;
    opts->auth_password = cfg->dmi_auth_password;
}

static int opts_check(const ncmp_dmi_opts *o, ncmp_err *err)
{
    if (o->connect_timeout_ms <= 0 || o->response_timeout_ms <= 0)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "DMI client: timeouts must be positive");
    if (o->max_connections_per_host <= 0 || o->max_connections <= 0)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "DMI client: connection limits must be positive");
    if (o->max_response_bytes == 0)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "DMI client: max response bytes must be positive");
    return 0;
}

/* --- request checks ------------------------------------------------------ */

/* The URL with its user information (user:password@), if any, masked. */
static void url_for_log(const char *url, char *out, size_t outlen)
{
    const char *authority = strstr(url, "://");
    const char *end, *at;

    if (!authority) {
        snprintf(out, outlen, "%s", url);
        return;
    }
    authority += 3;
    end = authority + strcspn(authority, "/?#");
    at = memchr(authority, '@', (size_t)(end - authority));
    if (!at) {
        snprintf(out, outlen, "%s", url);
        return;
    }
    snprintf(out, outlen, "%.*s***%s", (int)(authority - url), url, at);
}

static int is_token_char(unsigned char c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int header_line_ok(const char *h)
{
    const char *colon = strchr(h, ':');

    if (!colon || colon == h)
        return 0;
    for (const char *p = h; p < colon; p++)
        if (!is_token_char((unsigned char)*p))
            return 0;
    return strpbrk(colon, "\r\n") == NULL;
}

static int request_check(const ncmp_dmi_request *req, ncmp_err *err)
{
    char url[NCMP_ERR_MSG_MAX];

    if (!req->url)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "DMI request: no URL");
    url_for_log(req->url, url, sizeof(url));
    if (strncmp(req->url, "http://", 7) != 0 && strncmp(req->url, "https://", 8) != 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "DMI request: URL '%s' is not http or https",
                            url);
    for (const char *p = req->url; *p; p++)
        if ((unsigned char)*p <= ' ' || (unsigned char)*p == 0x7f)
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "DMI request: URL '%s' holds white space or a control character",
                                url);
    if (req->method) {
        if (!*req->method)
            return ncmp_err_set(err, NCMP_ERR_REJECT, "DMI request: empty method");
        for (const char *p = req->method; *p; p++)
            if (!is_token_char((unsigned char)*p))
                return ncmp_err_set(err, NCMP_ERR_REJECT, "DMI request: bad method '%s'",
                                    req->method);
    }
    if (req->body_len && !req->body)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "DMI request: body length without a body");
    if (req->content_type && strpbrk(req->content_type, "\r\n"))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "DMI request: line break in the content type");
    for (const char *const *h = req->headers; h && *h; h++)
        if (!header_line_ok(*h))
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "DMI request: header %td is not a `Name: value` line",
                                h - req->headers);
    return 0;
}

/* --- transfers ----------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    dmi_xfer *x = userdata;
    size_t n = size * nmemb;

    if (x->resp->body.len + n > x->dmi->opts.max_response_bytes) {
        x->too_large = 1;
        return 0; /* libcurl fails the transfer with CURLE_WRITE_ERROR */
    }
    ncmp_buf_append(&x->resp->body, data, n);
    return n;
}

static void xfer_free(dmi_xfer *x)
{
    if (!x)
        return;
    if (x->easy)
        curl_easy_cleanup(x->easy);
    curl_slist_free_all(x->headers);
    free(x->method);
    free(x->url);
    free(x->body);
    free(x);
}

static int header_is(const char *line, const char *name)
{
    size_t n = strlen(name);

    return strncasecmp(line, name, n) == 0 && line[n] == ':';
}

static int xfer_add_header(dmi_xfer *x, const char *line)
{
    struct curl_slist *l = curl_slist_append(x->headers, line);

    if (!l)
        return -1;
    x->headers = l;
    return 0;
}

static int xfer_headers(dmi_xfer *x, const ncmp_dmi_request *req)
{
    ncmp_buf ct = NCMP_BUF_INIT;
    int rc = 0;

    /* No "Expect: 100-continue" round trip before a body. */
    if (xfer_add_header(x, "Expect:") != 0)
        return -1;
    if (x->body || req->body) {
        ncmp_buf_appendf(&ct, "Content-Type: %s",
                         req->content_type ? req->content_type : "application/json");
        rc = xfer_add_header(x, ct.data);
        ncmp_buf_free(&ct);
    }
    for (const char *const *h = req->headers; rc == 0 && h && *h; h++) {
        /* Configured Basic auth replaces a forwarded Authorization. */
        if (x->dmi->auth_username && header_is(*h, "Authorization"))
            continue;
        rc = xfer_add_header(x, *h);
    }
    return rc;
}

static int xfer_method(dmi_xfer *x, const ncmp_dmi_request *req)
{
    CURL *e = x->easy;
    const char *m = x->method;
    int rc = 0;

    if (strcmp(m, "HEAD") == 0)
        return curl_easy_setopt(e, CURLOPT_NOBODY, 1L) == CURLE_OK ? 0 : -1;
    if (strcmp(m, "GET") == 0 && !req->body)
        return curl_easy_setopt(e, CURLOPT_HTTPGET, 1L) == CURLE_OK ? 0 : -1;
    if (req->body || strcmp(m, "POST") == 0) {
        rc |= curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        rc |= curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body ? x->body : "");
    }
    if (strcmp(m, "POST") != 0)
        rc |= curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m);
    return rc == CURLE_OK ? 0 : -1;
}

static int xfer_options(dmi_xfer *x)
{
    ncmp_dmi *dmi = x->dmi;
    CURL *e = x->easy;
    int rc = 0;

    rc |= curl_easy_setopt(e, CURLOPT_URL, x->url);
    rc |= curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    rc |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    rc |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    rc |= curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    rc |= curl_easy_setopt(e, CURLOPT_PROXY, ""); /* ignore *_proxy variables */
    rc |= curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, x->connect_timeout_ms);
    rc |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, x->response_timeout_ms);
    rc |= curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    rc |= curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)dmi->opts.max_response_bytes);
    rc |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    rc |= curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    rc |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    rc |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
    if (dmi->auth_username) {
        rc |= curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        rc |= curl_easy_setopt(e, CURLOPT_USERNAME, dmi->auth_username);
        rc |= curl_easy_setopt(e, CURLOPT_PASSWORD, dmi->auth_password);
    }
    return rc == CURLE_OK ? 0 : -1;
}

/* A transfer ready to queue, or NULL with *err (the request was checked). */
static dmi_xfer *xfer_new(ncmp_dmi *dmi, const ncmp_dmi_request *req, ncmp_err *err)
{
    dmi_xfer *x = ncmp_xcalloc(1, sizeof(*x));

    x->dmi = dmi;
    x->t_submit = ncmp_now_ms();
    x->method = ncmp_xstrdup(req->method ? req->method : req->body ? "POST" : "GET");
    x->url = ncmp_xstrdup(req->url);
    x->connect_timeout_ms = dmi->opts.connect_timeout_ms;
    x->response_timeout_ms = dmi->opts.response_timeout_ms;
    if (req->timeout_ms > 0) {
        x->response_timeout_ms = req->timeout_ms;
        if (x->connect_timeout_ms > req->timeout_ms)
            x->connect_timeout_ms = req->timeout_ms;
    }
    if (req->body && req->take_body) {
        x->body = (char *)req->body;
    } else if (req->body) {
        x->body = ncmp_xmalloc(req->body_len + 1);
        memcpy(x->body, req->body, req->body_len);
        x->body[req->body_len] = '\0';
    }
    x->easy = curl_easy_init();
    if (!x->easy || xfer_headers(x, req) != 0 || xfer_method(x, req) != 0 || xfer_options(x) != 0) {
        xfer_free(x);
        ncmp_err_set(err, NCMP_ERR_FATAL, "DMI client: libcurl refused the request options");
        return NULL;
    }
    return x;
}

/* Hand the response over and free the transfer (event thread). */
static void xfer_complete(dmi_xfer *x)
{
    ncmp_dmi_response *resp = x->resp;
    dmi_wait *wait = x->wait;
    ncmp_dmi_done_cb done = x->done;
    void *opaque = x->opaque;

    xfer_free(x);
    if (wait) {
        pthread_mutex_lock(&wait->lock);
        if (--wait->remaining == 0)
            pthread_cond_broadcast(&wait->done);
        pthread_mutex_unlock(&wait->lock);
    } else {
        done(resp, opaque);
    }
}

static void xfer_fail(dmi_xfer *x, ncmp_dmi_failure failure, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void xfer_fail(dmi_xfer *x, ncmp_dmi_failure failure, const char *fmt, ...)
{
    char reason[NCMP_ERR_MSG_MAX], url[NCMP_ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    ncmp_buf_free(&x->resp->body);
    x->resp->status = 0;
    x->resp->failure = failure;
    url_for_log(x->url, url, sizeof(url));
    snprintf(x->resp->error, sizeof(x->resp->error), "%s (%s %s)", reason, x->method, url);
}

/* A timeout says where the request was when it ran out, and after how
 * long: waiting for one of the plugin's connections to come free
 * (dmi.max-connections-per-host: libcurl neither made a connection for it
 * nor sent it), connecting, or sent and waiting for the whole response
 * (on a new connection or a kept-alive one). */
static void xfer_fail_timeout(dmi_xfer *x)
{
    curl_off_t connect_us = 0, sent_us = 0;
    long connects = 0;
    double waited = ncmp_now_ms() - x->t_submit;

    curl_easy_getinfo(x->easy, CURLINFO_CONNECT_TIME_T, &connect_us);
    curl_easy_getinfo(x->easy, CURLINFO_PRETRANSFER_TIME_T, &sent_us);
    curl_easy_getinfo(x->easy, CURLINFO_NUM_CONNECTS, &connects);
    if (sent_us == 0 && connects == 0) {
        char in_flight[64] = "";
        if (x->host) /* counted when dmi.max-in-flight-per-plugin bounds them */
            snprintf(in_flight, sizeof(in_flight), "%ld requests in flight to this DMI plugin, ",
                     x->host->in_flight);
        xfer_fail(x, NCMP_DMI_FAIL_TIMEOUT,
                  "timeout: no connection came free within %ld ms (%sat most %ld connections: "
                  "dmi.max-connections-per-host; %.0f ms after the call)",
                  x->response_timeout_ms, in_flight, x->dmi->opts.max_connections_per_host, waited);
    } else if (sent_us == 0 && connect_us == 0) {
        long limit = x->connect_timeout_ms < x->response_timeout_ms ? x->connect_timeout_ms
                                                                    : x->response_timeout_ms;
        xfer_fail(x, NCMP_DMI_FAIL_TIMEOUT,
                  "timeout: no connection after %ld ms (%.0f ms after the call)", limit, waited);
    } else {
        xfer_fail(x, NCMP_DMI_FAIL_TIMEOUT,
                  "timeout: no complete response after %ld ms (sent on a %s connection; %.0f ms "
                  "after the call)",
                  x->response_timeout_ms, connects ? "new" : "kept-alive", waited);
    }
}

static void xfer_fail_connect(dmi_xfer *x)
{
    long os_errno = 0;

    curl_easy_getinfo(x->easy, CURLINFO_OS_ERRNO, &os_errno);
    if (os_errno)
        xfer_fail(x, NCMP_DMI_FAIL_CONNECT, "cannot connect: %s", strerror((int)os_errno));
    else
        xfer_fail(x, NCMP_DMI_FAIL_CONNECT, "cannot connect: %s", x->errbuf);
}

/* Classify a libcurl failure into resp (event thread). */
static void xfer_classify(dmi_xfer *x, CURLcode code)
{
    switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        xfer_fail(x, NCMP_DMI_FAIL_DNS, "DNS: %s", *x->errbuf ? x->errbuf : "host not found");
        break;
    case CURLE_COULDNT_CONNECT:
        xfer_fail_connect(x);
        break;
    case CURLE_OPERATION_TIMEDOUT:
        xfer_fail_timeout(x);
        break;
    case CURLE_FILESIZE_EXCEEDED:
        x->too_large = 1;
        /* fall through */
    case CURLE_WRITE_ERROR:
        if (x->too_large) {
            xfer_fail(x, NCMP_DMI_FAIL_TOO_LARGE, "response larger than %zu bytes",
                      x->dmi->opts.max_response_bytes);
            break;
        }
        /* fall through */
    default:
        if (code == CURLE_SSL_CONNECT_ERROR || code == CURLE_PEER_FAILED_VERIFICATION ||
            code == CURLE_SSL_CERTPROBLEM || code == CURLE_SSL_CACERT_BADFILE)
            xfer_fail(x, NCMP_DMI_FAIL_TLS, "TLS: %s",
                      *x->errbuf ? x->errbuf : curl_easy_strerror(code));
        else
            xfer_fail(x, NCMP_DMI_FAIL_IO, "connection failed: %s",
                      *x->errbuf ? x->errbuf : curl_easy_strerror(code));
        break;
    }
}

/* Fill the response of a finished transfer (event thread). */
static void xfer_finish(dmi_xfer *x, CURLcode code)
{
    ncmp_dmi_response *resp = x->resp;
    curl_off_t total_us = 0;
    char *ct = NULL;

    curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME_T, &total_us);
    resp->transfer_ms = (double)total_us / 1000.0;
    resp->call_ms = ncmp_now_ms() - x->t_submit;
    if (code == CURLE_OK) {
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &resp->status);
        curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
        resp->content_type = ct ? ncmp_xstrdup(ct) : NULL;
        resp->failure = NCMP_DMI_OK;
        if (resp->status == 0)
            xfer_fail(x, NCMP_DMI_FAIL_IO, "no HTTP status in the response");
    } else {
        xfer_classify(x, code);
    }
    if (NCMP_LOG_TRACE <= ncmp_log_threshold) {
        char url[NCMP_ERR_MSG_MAX];
        url_for_log(x->url, url, sizeof(url));
        log_trace(LOG_COMP, "%s %s status=%ld failure=%s transfer_ms=%.3f", x->method, url,
                  resp->status, ncmp_dmi_failure_name(resp->failure), resp->transfer_ms);
    }
}

/* --- the event thread ---------------------------------------------------- */

/* The plugin of `url`: its scheme, host and port (what precedes the
 * path), found or added. */
static dmi_host *host_of(ncmp_dmi *dmi, const char *url)
{
    const char *auth = strstr(url, "://");
    size_t n = auth ? (size_t)(auth + 3 - url) + strcspn(auth + 3, "/?#") : strlen(url);
    dmi_host *h;

    for (h = dmi->hosts; h; h = h->next)
        if (strlen(h->key) == n && strncasecmp(h->key, url, n) == 0)
            return h;
    h = ncmp_xcalloc(1, sizeof(*h));
    h->key = ncmp_xcalloc(1, n + 1);
    memcpy(h->key, url, n);
    h->next = dmi->hosts;
    dmi->hosts = h;
    return h;
}

/* Count x in its plugin's requests in flight; 0, or -1 when the plugin has
 * max_in_flight_per_host already (x is then failed BUSY, not sent). */
static int host_admit(ncmp_dmi *dmi, dmi_xfer *x)
{
    dmi_host *h;

    if (dmi->opts.max_in_flight_per_host <= 0)
        return 0;
    h = host_of(dmi, x->url);
    if (h->in_flight >= dmi->opts.max_in_flight_per_host) {
        xfer_fail(x, NCMP_DMI_FAIL_BUSY,
                  "not sent: %ld requests in flight to this DMI plugin "
                  "(dmi.max-in-flight-per-plugin)",
                  h->in_flight);
        ncmp_counter_add(dmi->shed, 1);
        return -1;
    }
    h->in_flight++;
    x->host = h;
    return 0;
}

static void in_flight_link(ncmp_dmi *dmi, dmi_xfer *x)
{
    ncmp_gauge_add(dmi->in_flight_gauge, 1);
    x->prev = NULL;
    x->next = dmi->in_flight;
    if (dmi->in_flight)
        dmi->in_flight->prev = x;
    dmi->in_flight = x;
}

static void in_flight_unlink(ncmp_dmi *dmi, dmi_xfer *x)
{
    ncmp_gauge_add(dmi->in_flight_gauge, -1);
    if (x->host) {
        x->host->in_flight--;
        x->host = NULL;
    }
    if (x->prev)
        x->prev->next = x->next;
    else
        dmi->in_flight = x->next;
    if (x->next)
        x->next->prev = x->prev;
    x->prev = x->next = NULL;
}

static void cancel(dmi_xfer *x)
{
    xfer_fail(x, NCMP_DMI_FAIL_CANCELLED, "DMI client shut down before the response");
    xfer_complete(x);
}

static void start_queued(ncmp_dmi *dmi, dmi_xfer *queue)
{
    while (queue) {
        dmi_xfer *x = queue;
        CURLMcode mc;

        queue = x->next;
        x->next = NULL;
        if (host_admit(dmi, x) != 0) {
            xfer_complete(x);
            continue;
        }
        mc = curl_multi_add_handle(dmi->multi, x->easy);
        if (mc != CURLM_OK) {
            if (x->host)
                x->host->in_flight--;
            x->host = NULL;
            xfer_fail(x, NCMP_DMI_FAIL_INTERNAL, "libcurl: %s", curl_multi_strerror(mc));
            xfer_complete(x);
            continue;
        }
        in_flight_link(dmi, x);
    }
}

static void reap_done(ncmp_dmi *dmi)
{
    CURLMsg *msg;
    int left;

    while ((msg = curl_multi_info_read(dmi->multi, &left))) {
        char *priv = NULL;
        dmi_xfer *x;

        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        x = (dmi_xfer *)priv;
        curl_multi_remove_handle(dmi->multi, msg->easy_handle);
        xfer_finish(x, msg->data.result); /* with x still counted in its plugin's */
        in_flight_unlink(dmi, x);
        xfer_complete(x);
    }
}

/* The event thread: start what was submitted, then wait in epoll for the
 * sockets libcurl named, a wakeup or libcurl's timer, and hand libcurl
 * only what happened (its socket interface: the cost follows the sockets
 * that are ready, not the transfers in flight). */
static void *event_main(void *arg)
{
    ncmp_dmi *dmi = arg;

    pthread_setname_np(pthread_self(), "ncmp-dmi");
    for (;;) {
        dmi_xfer *queue;
        int stopping;

        pthread_mutex_lock(&dmi->lock);
        queue = dmi->queue_head;
        dmi->queue_head = dmi->queue_tail = NULL;
        stopping = dmi->stopping;
        pthread_mutex_unlock(&dmi->lock);
        if (stopping) {
            /* submit refuses once stopping is set, so this is the last of
             * the queue */
            while (queue) {
                dmi_xfer *x = queue;
                queue = x->next;
                cancel(x);
            }
            break;
        }
        start_queued(dmi, queue);
        ncmp_curl_loop_run(&dmi->loop, EVENT_POLL_MS);
        reap_done(dmi);
    }
    while (dmi->in_flight) {
        dmi_xfer *x = dmi->in_flight;
        curl_multi_remove_handle(dmi->multi, x->easy);
        in_flight_unlink(dmi, x);
        cancel(x);
    }
    return NULL;
}

/* --- the client ---------------------------------------------------------- */

static int multi_setup(ncmp_dmi *dmi, ncmp_err *err)
{
    int rc = 0;

    dmi->multi = curl_multi_init();
    if (!dmi->multi)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "DMI client: curl_multi_init failed");
    if (ncmp_curl_loop_init(&dmi->loop, dmi->multi, err) != 0)
        return ncmp_err_prefix(err, "DMI client");
    rc |= curl_multi_setopt(dmi->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                            dmi->opts.max_connections_per_host);
    rc |= curl_multi_setopt(dmi->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, dmi->opts.max_connections);
    /* the connection cache: idle kept-alive connections */
    rc |= curl_multi_setopt(dmi->multi, CURLMOPT_MAXCONNECTS, dmi->opts.max_connections);
    if (rc != CURLM_OK)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "DMI client: libcurl refused the limits");
    return 0;
}

int ncmp_dmi_new(ncmp_dmi **out, const ncmp_dmi_opts *opts, ncmp_err *err)
{
    ncmp_dmi *dmi;
    int rc;

    if (opts_check(opts, err) != 0)
        return -1;
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "DMI client: curl_global_init: %s",
                            curl_easy_strerror(curl_init_rc));
    dmi = ncmp_xcalloc(1, sizeof(*dmi));
    dmi->opts = *opts;
    if (opts->auth_username && *opts->auth_username) {
        dmi->auth_username = ncmp_xstrdup(opts->auth_username);
        dmi->auth_password = ncmp_xstrdup(opts->auth_password ? opts->auth_password : "");
    }
    dmi->opts.auth_username = dmi->auth_username;
    dmi->opts.auth_password = dmi->auth_password;
    pthread_mutex_init(&dmi->lock, NULL);
    {
        static const char *const reason[] = {"dmi-in-flight", NULL};
        const ncmp_metrics_lib *lib = ncmp_metrics_lib_get();
        dmi->in_flight_gauge = ncmp_gauge_get(lib->dmi_in_flight, NULL);
        dmi->shed = ncmp_counter_get(lib->shed_requests, reason);
    }
    if (multi_setup(dmi, err) != 0)
        goto fail;
    rc = pthread_create(&dmi->thread, NULL, event_main, dmi);
    if (rc != 0) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "DMI client: cannot start its thread: %s", strerror(rc));
        goto fail;
    }
    log_debug(LOG_COMP,
              "client started: connect_timeout_ms=%ld response_timeout_ms=%ld "
              "max_connections_per_host=%ld max_connections=%ld auth=%s",
              dmi->opts.connect_timeout_ms, dmi->opts.response_timeout_ms,
              dmi->opts.max_connections_per_host, dmi->opts.max_connections,
              dmi->auth_username ? "basic" : "none");
    *out = dmi;
    return 0;
fail:
    /* the loop is made right after the multi handle, and closes itself
     * when it cannot be made */
    if (dmi->multi) {
        curl_multi_cleanup(dmi->multi);
        ncmp_curl_loop_close(&dmi->loop);
    }
    pthread_mutex_destroy(&dmi->lock);
    free(dmi->auth_username);
    free(dmi->auth_password);
    free(dmi);
    return -1;
}

void ncmp_dmi_destroy(ncmp_dmi *dmi)
{
    if (!dmi)
        return;
    pthread_mutex_lock(&dmi->lock);
    dmi->stopping = 1;
    pthread_mutex_unlock(&dmi->lock);
    ncmp_curl_loop_wake(&dmi->loop);
    pthread_join(dmi->thread, NULL);
    curl_multi_cleanup(dmi->multi);
    ncmp_curl_loop_close(&dmi->loop);
    pthread_mutex_destroy(&dmi->lock);
    while (dmi->hosts) {
        dmi_host *h = dmi->hosts;
        dmi->hosts = h->next;
        free(h->key);
        free(h);
    }
    free(dmi->auth_username);
    if (dmi->auth_password) {
        /* do not leave the secret in freed memory */
        memset(dmi->auth_password, 0, strlen(dmi->auth_password));
        free(dmi->auth_password);
    }
    free(dmi);
}

/* Queue a prepared transfer; -1 (and x freed) when the client stops. */
static int enqueue(ncmp_dmi *dmi, dmi_xfer *x, ncmp_err *err)
{
    pthread_mutex_lock(&dmi->lock);
    if (dmi->stopping) {
        pthread_mutex_unlock(&dmi->lock);
        xfer_free(x);
        return ncmp_err_set(err, NCMP_ERR_RETRY, "DMI client is shutting down");
    }
    x->next = NULL;
    if (dmi->queue_tail)
        dmi->queue_tail->next = x;
    else
        dmi->queue_head = x;
    dmi->queue_tail = x;
    pthread_mutex_unlock(&dmi->lock);
    ncmp_curl_loop_wake(&dmi->loop);
    return 0;
}

int ncmp_dmi_submit(ncmp_dmi *dmi, const ncmp_dmi_request *req, ncmp_dmi_done_cb done, void *opaque,
                    ncmp_err *err)
{
    dmi_xfer *x;
    ncmp_dmi_response *resp;

    if (request_check(req, err) != 0) {
        if (req->take_body)
            free((char *)req->body);
        return -1;
    }
    x = xfer_new(dmi, req, err);
    if (!x)
        return -1;
    resp = x->resp = ncmp_xcalloc(1, sizeof(*x->resp));
    x->done = done;
    x->opaque = opaque;
    if (enqueue(dmi, x, err) != 0) {
        /* enqueue freed x (reading x->resp now would be a use after
         * free), not the response */
        free(resp);
        return -1;
    }
    return 0;
}

static int on_event_thread(ncmp_dmi *dmi, ncmp_err *err)
{
    if (pthread_equal(pthread_self(), dmi->thread))
        return ncmp_err_set(err, NCMP_ERR_FATAL,
                            "blocking DMI call from a completion callback would deadlock");
    return 0;
}

/* Start reqs[0..n) (already checked) and wait for all. A request that
 * cannot start gets a response saying why and counts in *refused; the
 * first such error is in *err. */
static void run_and_wait(ncmp_dmi *dmi, const ncmp_dmi_request *reqs, size_t n,
                         ncmp_dmi_response *resps, size_t *refused, ncmp_err *err)
{
    dmi_wait wait;

    *refused = 0;
    memset(resps, 0, n * sizeof(*resps));
    pthread_mutex_init(&wait.lock, NULL);
    pthread_cond_init(&wait.done, NULL);
    wait.remaining = n;
    for (size_t i = 0; i < n; i++) {
        ncmp_err qerr;
        dmi_xfer *x = xfer_new(dmi, &reqs[i], &qerr);
        if (x) {
            x->resp = &resps[i];
            x->wait = &wait;
        }
        if (!x || enqueue(dmi, x, &qerr) != 0) {
            resps[i].failure =
                qerr.cls == NCMP_ERR_RETRY ? NCMP_DMI_FAIL_CANCELLED : NCMP_DMI_FAIL_INTERNAL;
            snprintf(resps[i].error, sizeof(resps[i].error), "%s", qerr.msg);
            if ((*refused)++ == 0)
                *err = qerr;
            pthread_mutex_lock(&wait.lock);
            wait.remaining--;
            pthread_mutex_unlock(&wait.lock);
        }
    }
    pthread_mutex_lock(&wait.lock);
    while (wait.remaining > 0)
        pthread_cond_wait(&wait.done, &wait.lock);
    pthread_mutex_unlock(&wait.lock);
    pthread_cond_destroy(&wait.done);
    pthread_mutex_destroy(&wait.lock);
}

int ncmp_dmi_call_many(ncmp_dmi *dmi, const ncmp_dmi_request *reqs, size_t n,
                       ncmp_dmi_response *resps, ncmp_err *err)
{
    ncmp_err refuse_err;
    size_t refused;

    if (on_event_thread(dmi, err) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (request_check(&reqs[i], err) != 0)
            return ncmp_err_prefix(err, "request %zu", i);
    run_and_wait(dmi, reqs, n, resps, &refused, &refuse_err);
    return 0;
}

int ncmp_dmi_call(ncmp_dmi *dmi, const ncmp_dmi_request *req, ncmp_dmi_response *resp,
                  ncmp_err *err)
{
    ncmp_dmi_response r;
    ncmp_err refuse_err;
    size_t refused;

    if (on_event_thread(dmi, err) != 0 || request_check(req, err) != 0)
        return -1;
    run_and_wait(dmi, req, 1, &r, &refused, &refuse_err);
    if (refused) {
        ncmp_dmi_response_free(&r);
        if (err)
            *err = refuse_err;
        return -1;
    }
    *resp = r;
    return 0;
}

/* --- NCMP's DMI API: URLs ------------------------------------------------ */

void ncmp_dmi_url_encode(ncmp_buf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    ncmp_buf_reserve(out, strlen(s));
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            ncmp_buf_append_char(out, (char)*p);
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            ncmp_buf_append(out, esc, 3);
        }
    }
}

void ncmp_dmi_url_base(ncmp_buf *out, const char *dmi)
{
    size_t n = strlen(dmi);

    while (n > 0 && dmi[n - 1] == '/')
        n--;
    ncmp_buf_append(out, dmi, n);
}

static void url_handle(ncmp_buf *out, const char *dmi, const char *cm_handle_id)
{
    ncmp_dmi_url_base(out, dmi);
    ncmp_buf_append_str(out, "/dmi/v1/ch/");
    ncmp_dmi_url_encode(out, cm_handle_id);
}

static int blank(const char *s)
{
    if (!s)
        return 1;
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return 0;
    return 1;
}

/* "?name=value" or "&name=value" when value is not blank. */
static void url_query(ncmp_buf *out, int *first, const char *name, const char *value)
{
    if (blank(value))
        return;
    ncmp_buf_append_char(out, *first ? '?' : '&');
    *first = 0;
    ncmp_buf_append_str(out, name);
    ncmp_buf_append_char(out, '=');
    ncmp_dmi_url_encode(out, value);
}

void ncmp_dmi_url_modules(ncmp_buf *out, const char *dmi, const char *cm_handle_id)
{
    url_handle(out, dmi, cm_handle_id);
    ncmp_buf_append_str(out, "/modules");
}

void ncmp_dmi_url_module_resources(ncmp_buf *out, const char *dmi, const char *cm_handle_id)
{
    url_handle(out, dmi, cm_handle_id);
    ncmp_buf_append_str(out, "/moduleResources");
}

void ncmp_dmi_url_data(ncmp_buf *out, const char *dmi, const char *cm_handle_id,
                       const char *datastore, const char *resource_identifier, const char *options,
                       const char *topic)
{
    int first = 1;

    url_handle(out, dmi, cm_handle_id);
    ncmp_buf_append_str(out, "/data/ds/");
    ncmp_dmi_url_encode(out, datastore);
    url_query(out, &first, "resourceIdentifier", resource_identifier);
    url_query(out, &first, "options", options);
    url_query(out, &first, "topic", topic);
}

void ncmp_dmi_url_data_operation(ncmp_buf *out, const char *dmi, const char *request_id,
                                 const char *topic)
{
    int first = 1;

    ncmp_dmi_url_base(out, dmi);
    ncmp_buf_append_str(out, "/dmi/v1/data");
    url_query(out, &first, "requestId", request_id);
    url_query(out, &first, "topic", topic);
}

void ncmp_dmi_url_health(ncmp_buf *out, const char *dmi)
{
    ncmp_dmi_url_base(out, dmi);
    ncmp_buf_append_str(out, "/actuator/health");
}

/* --- NCMP's DMI API: request bodies -------------------------------------- */

/* Append the properties object, checked: a JSON object of strings. */
static int append_properties(ncmp_buf *out, const char *properties_json, ncmp_err *err)
{
    json_object *props = NULL;
    int rc = 0;

    if (blank(properties_json)) {
        ncmp_buf_append_str(out, "{}");
        return 0;
    }
    if (ncmp_json_parse(properties_json, strlen(properties_json), &props, err) != 0)
        return ncmp_err_prefix(err, "cmHandleProperties");
    if (!json_object_is_type(props, json_type_object)) {
        rc = ncmp_err_set(err, NCMP_ERR_REJECT, "cmHandleProperties: not a JSON object");
        goto cleanup;
    }
    json_object_object_foreach(props, key, value)
    {
        if (!json_object_is_type(value, json_type_string)) {
            rc = ncmp_err_set(err, NCMP_ERR_REJECT,
                              "cmHandleProperties: the value of '%s' is not a string", key);
            goto cleanup;
        }
    }
    ncmp_buf_append_str(out, json_object_to_json_string_ext(
                                 props, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
cleanup:
    json_object_put(props);
    return rc;
}

int ncmp_dmi_body_modules(ncmp_buf *out, const char *properties_json, const char *module_set_tag,
                          ncmp_err *err)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_str(&b, "{\"cmHandleProperties\":");
    if (append_properties(&b, properties_json, err) != 0) {
        ncmp_buf_free(&b);
        return -1;
    }
    ncmp_buf_append_str(&b, ",\"moduleSetTag\":");
    ncmp_buf_append_json_string(&b, module_set_tag ? module_set_tag : "");
    ncmp_buf_append_char(&b, '}');
    ncmp_buf_append(out, b.data, b.len);
    ncmp_buf_free(&b);
    return 0;
}

int ncmp_dmi_body_module_resources(ncmp_buf *out, const char *properties_json,
                                   const char *module_set_tag, const ncmp_dmi_module *modules,
                                   size_t n, ncmp_err *err)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_char(&b, '{');
    if (module_set_tag && *module_set_tag) {
        ncmp_buf_append_str(&b, "\"moduleSetTag\":");
        ncmp_buf_append_json_string(&b, module_set_tag);
        ncmp_buf_append_char(&b, ',');
    }
    ncmp_buf_append_str(&b, "\"data\":{\"modules\":[");
    for (size_t i = 0; i < n; i++) {
        if (!modules[i].name || !*modules[i].name) {
            ncmp_buf_free(&b);
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "module resources request: module %zu has no name", i);
        }
        ncmp_buf_append_str(&b, i ? ",{\"name\":" : "{\"name\":");
        ncmp_buf_append_json_string(&b, modules[i].name);
        ncmp_buf_append_str(&b, ",\"revision\":");
        ncmp_buf_append_json_string(&b, modules[i].revision ? modules[i].revision : "");
        ncmp_buf_append_char(&b, '}');
    }
    ncmp_buf_append_str(&b, "]},\"cmHandleProperties\":");
    if (append_properties(&b, properties_json, err) != 0) {
        ncmp_buf_free(&b);
        return -1;
    }
    ncmp_buf_append_char(&b, '}');
    ncmp_buf_append(out, b.data, b.len);
    ncmp_buf_free(&b);
    return 0;
}

/* --- NCMP's DMI API: response parsers ------------------------------------ */

void ncmp_dmi_module_list_free(ncmp_dmi_module_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->len; i++) {
        free(list->items[i].name);
        free(list->items[i].revision);
        free(list->items[i].namespace);
        free(list->items[i].source);
    }
    free(list->items);
    list->items = NULL;
    list->len = 0;
}

/* A string member of element i: required (and then not empty), or optional
 * ("" when absent or null). *out is a copy. */
static int member_string(json_object *elem, const char *what, size_t i, const char *key,
                         int required, char **out, ncmp_err *err)
{
    json_object *v = NULL;

    if (!json_object_object_get_ex(elem, key, &v) || json_object_is_type(v, json_type_null)) {
        if (required)
            return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: element %zu has no %s", what, i, key);
        *out = ncmp_xstrdup("");
        return 0;
    }
    if (!json_object_is_type(v, json_type_string))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: element %zu: %s is not a string", what, i,
                            key);
    if (required && json_object_get_string_len(v) == 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: element %zu: %s is empty", what, i, key);
    *out = ncmp_xstrdup(json_object_get_string(v));
    return 0;
}

/* Element i of a module array into *m: "moduleName" and "revision", then
 * "yangSource" (required) for a resource or "namespace" (optional) for a
 * reference. */
static int module_from_json(json_object *elem, const char *what, size_t i, int is_resource,
                            ncmp_dmi_module *m, ncmp_err *err)
{
    if (!json_object_is_type(elem, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: element %zu is not an object", what, i);
    if (member_string(elem, what, i, "moduleName", 1, &m->name, err) != 0 ||
        member_string(elem, what, i, "revision", 0, &m->revision, err) != 0)
        return -1;
    if (is_resource)
        return member_string(elem, what, i, "yangSource", 1, &m->source, err);
    return member_string(elem, what, i, "namespace", 0, &m->namespace, err);
}

static int modules_from_array(json_object *array, const char *what, int is_resource,
                              ncmp_dmi_module_list *out, ncmp_err *err)
{
    ncmp_dmi_module_list list = {NULL, 0};
    size_t n = json_object_array_length(array);

    list.items = ncmp_xcalloc(n ? n : 1, sizeof(*list.items));
    for (size_t i = 0; i < n; i++) {
        list.len = i + 1; /* so that a failure frees what element i got */
        if (module_from_json(json_object_array_get_idx(array, i), what, i, is_resource,
                             &list.items[i], err) != 0) {
            ncmp_dmi_module_list_free(&list);
            return -1;
        }
    }
    list.len = n;
    *out = list;
    return 0;
}

int ncmp_dmi_parse_module_references(const char *body, size_t len, ncmp_dmi_module_list *out,
                                     ncmp_err *err)
{
    static const char what[] = "module references";
    json_object *doc = NULL, *schemas = NULL;
    int rc = -1;

    if (ncmp_json_parse(body, len, &doc, err) != 0)
        return ncmp_err_prefix(err, "%s", what);
    if (!json_object_is_type(doc, json_type_object)) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "%s: not a JSON object", what);
        goto cleanup;
    }
    if (ncmp_json_array_field(doc, "schemas", &schemas, err) != 0) {
        ncmp_err_prefix(err, "%s", what);
        goto cleanup;
    }
    if (!schemas) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "%s: no \"schemas\" array", what);
        goto cleanup;
    }
    rc = modules_from_array(schemas, what, 0, out, err);
cleanup:
    json_object_put(doc);
    return rc;
}

int ncmp_dmi_parse_module_resources(const char *body, size_t len, ncmp_dmi_module_list *out,
                                    ncmp_err *err)
{
    static const char what[] = "module resources";
    json_object *doc = NULL;
    int rc = -1;

    if (ncmp_json_parse(body, len, &doc, err) != 0)
        return ncmp_err_prefix(err, "%s", what);
    if (!json_object_is_type(doc, json_type_array)) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "%s: not a JSON array", what);
        goto cleanup;
    }
    rc = modules_from_array(doc, what, 1, out, err);
cleanup:
    json_object_put(doc);
    return rc;
}

int ncmp_dmi_health_up(const ncmp_dmi_response *resp)
{
    json_object *doc = NULL, *status = NULL;
    ncmp_err err;
    int up;

    if (resp->status != 200 || !resp->body.data)
        return 0;
    if (ncmp_json_parse(resp->body.data, resp->body.len, &doc, &err) != 0)
        return 0;
    up = json_object_is_type(doc, json_type_object) &&
         json_object_object_get_ex(doc, "status", &status) &&
         json_object_is_type(status, json_type_string) &&
         strcmp(json_object_get_string(status), "UP") == 0;
    json_object_put(doc);
    return up;
}

/* --- DMI URL check ------------------------------------------------------- */

static int url_matches(const char *url, const char *pattern)
{
    ncmp_buf anchored = NCMP_BUF_INIT;
    regex_t re;
    int ok;

    ncmp_buf_appendf(&anchored, "^(%s)$", pattern);
    if (regcomp(&re, anchored.data, REG_EXTENDED | REG_NOSUB) != 0) {
        ncmp_buf_free(&anchored);
        return 0;
    }
    ok = regexec(&re, url, 0, NULL, 0) == 0;
    regfree(&re);
    ncmp_buf_free(&anchored);
    return ok;
}

int ncmp_dmi_url_valid(const char *url, const char *allowed_pattern)
{
    const char *host;

    if (!url)
        return 0;
    if (allowed_pattern && *allowed_pattern)
        return url_matches(url, allowed_pattern);
    if (strncmp(url, "http://", 7) == 0)
        host = url + 7;
    else if (strncmp(url, "https://", 8) == 0)
        host = url + 8;
    else
        return 0;
    if (!*host || *host == '/' || *host == ':' || *host == '?' || *host == '#')
        return 0;
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == '"' || *p == '<' || *p == '>' || *p == '\\')
            return 0;
    return 1;
}
