/*
 * ncmp_dmi: the HTTP client of DMI plugins (libcurl), and NCMP's DMI model
 * API on top of it: URLs, request bodies and strict response parsers.
 *
 * One client per process, shared by every thread. It owns one curl multi
 * handle and one event thread that drives every transfer; the three ways
 * to call all go through it:
 *   - ncmp_dmi_call:      blocking, one request;
 *   - ncmp_dmi_call_many: blocking, n requests in parallel, returns when
 *                         all are done;
 *   - ncmp_dmi_submit:    asynchronous, a completion callback runs on the
 *                         event thread.
 * Why a multi handle and an event thread rather than a share handle with
 * per-thread easy handles:
 *   - libcurl enforces the per-host and total connection limits only among
 *     the transfers of one multi handle; a share handle shares the
 *     connection cache but limits nothing;
 *   - the asynchronous path (thousands in flight from the REST server, no
 *     thread parked per call) needs an event loop anyway, and a blocking
 *     call is that path plus a wait, so timeouts, auth and error texts are
 *     the same whichever style is used;
 *   - one connection cache for everything: a kept-alive connection is
 *     reused by whichever thread calls next.
 * Requests beyond the connection limits wait inside libcurl for a free
 * connection; the response timeout includes that wait.
 *
 * Submitting is safe from any thread, including from a completion
 * callback: the request is copied and its easy handle prepared on the
 * calling thread, then queued and the event thread woken (an eventfd).
 * The event thread waits in epoll on the sockets libcurl names and on that
 * eventfd, and drives libcurl through its socket interface
 * (curl_multi_socket_action), so that each wakeup costs what is ready, not
 * what is in flight. Completion callbacks run on the event thread, one
 * at a time: they must be cheap and must never block (no database, no
 * blocking DMI call - ncmp_dmi_call from a callback fails instead of
 * deadlocking), since every other transfer waits while one runs.
 *
 * Authentication: HTTP Basic with dmi.auth-username / dmi.auth-password
 * when the username is set. NCMP enables Basic auth by default with
 * cpsuser / cpsr0cks!; ncmpd sends no credentials unless configured,
 * because a default password is no protection and DMI plugins that do not
 * check it ignore it. When Basic auth is configured it replaces an
 * Authorization header the caller forwards (as NCMP does); otherwise a
 * forwarded header is sent as it is. The password is never logged and is
 * redacted in config dumps.
 *
 * Only http and https are spoken, redirects are not followed, and proxy
 * environment variables are ignored: DMI URLs are checked against
 * dmi.allowed-url-pattern at registration and must stay what was checked.
 */
#ifndef NCMP_DMI_H
#define NCMP_DMI_H

#include <json-c/json.h>
#include <stddef.h>

#include "ncmp_buf.h"
#include "ncmp_config.h"
#include "ncmp_err.h"

/* --- the client ---------------------------------------------------------- */

typedef struct ncmp_dmi ncmp_dmi;

typedef struct ncmp_dmi_opts {
    long connect_timeout_ms;       /* one connection attempt */
    long response_timeout_ms;      /* whole request, from submission to last byte */
    long max_connections_per_host; /* open connections to one host:port */
    long max_connections;          /* open connections in total (and kept alive) */
    size_t max_response_bytes;     /* a larger body fails the request */
    const char *auth_username;     /* NULL or "": no authentication */
    const char *auth_password;
    /* requests to one plugin (scheme://host:port) sent or waiting for a
     * connection; one more fails at once with NCMP_DMI_FAIL_BUSY, unsent.
     * 0: no limit */
    long max_in_flight_per_host;
} ncmp_dmi_opts;

/* The dmi.* options of `cfg`; the strings are borrowed from cfg. */
void ncmp_dmi_opts_from_config(ncmp_dmi_opts *opts, const ncmp_config *cfg);

/* Start a client (its event thread included). `opts` is copied. A bad
 * option is FATAL. On success *dmi is owned by the caller. */
int ncmp_dmi_new(ncmp_dmi **dmi, const ncmp_dmi_opts *opts, ncmp_err *err);

/* Stop the event thread and free the client. Every request still queued
 * or in flight completes first, with failure NCMP_DMI_FAIL_CANCELLED: its
 * callback runs (on the event thread, before this returns) and blocking
 * callers wake up. No call may start once destroy has begun. Accepts
 * NULL. */
void ncmp_dmi_destroy(ncmp_dmi *dmi);

/* --- requests and responses ---------------------------------------------- */

typedef struct ncmp_dmi_request {
    /* "GET", "POST", "PUT", "PATCH", "DELETE"...; NULL: POST when there is
     * a body, GET otherwise */
    const char *method;
    const char *url;  /* absolute http(s) URL, already encoded */
    const char *body; /* NULL: no body */
    size_t body_len;
    /* ncmp_dmi_submit only: `body` is a malloc'd buffer the client takes
     * over (and frees, whatever happens), instead of copying it - for
     * bodies of tens of megabytes */
    int take_body;
    const char *content_type; /* of the body; NULL: application/json */
    /* extra "Name: value" lines, NULL-terminated (e.g. a forwarded
     * Authorization), or NULL */
    const char *const *headers;
    /* > 0: this request's response timeout instead of the client's (the
     * connect timeout is cut to it when longer), so that callers with
     * different deadlines share one client and its connection limits */
    long timeout_ms;
} ncmp_dmi_request;

/* Why a request got no HTTP response. */
typedef enum ncmp_dmi_failure {
    NCMP_DMI_OK = 0,         /* an HTTP response arrived (any status) */
    NCMP_DMI_FAIL_DNS,       /* the host name did not resolve */
    NCMP_DMI_FAIL_CONNECT,   /* connection refused or host unreachable */
    NCMP_DMI_FAIL_TIMEOUT,   /* connect or response timeout */
    NCMP_DMI_FAIL_TLS,       /* TLS handshake or certificate */
    NCMP_DMI_FAIL_IO,        /* connection broken, or not HTTP */
    NCMP_DMI_FAIL_TOO_LARGE, /* body over max_response_bytes */
    NCMP_DMI_FAIL_CANCELLED, /* the client was destroyed first */
    NCMP_DMI_FAIL_INTERNAL,  /* libcurl refused the request */
    NCMP_DMI_FAIL_BUSY,      /* not sent: max_in_flight_per_host reached */
} ncmp_dmi_failure;

typedef struct ncmp_dmi_response {
    long status;                  /* HTTP status; 0 when the transport failed */
    ncmp_buf body;                /* the response body (empty on failure) */
    char *content_type;           /* owned; NULL when the DMI sent none */
    ncmp_dmi_failure failure;     /* NCMP_DMI_OK whenever status != 0 */
    char error[NCMP_ERR_MSG_MAX]; /* what failed, with method and URL; "" when status != 0 */
    /* From the start of the transfer to its end, to the microsecond, and
     * the whole call: from its submission to its end, the wait for the
     * event thread and for a connection included (both 0 when no transfer
     * ran) */
    double transfer_ms, call_ms;
} ncmp_dmi_response;

/* Free what the response holds (not the struct) and zero it. */
void ncmp_dmi_response_free(ncmp_dmi_response *resp);

/* Free an asynchronous response: its contents and the struct. Accepts
 * NULL. */
void ncmp_dmi_response_destroy(ncmp_dmi_response *resp);

/* 0 when the response is a 2xx; otherwise -1 and *err says why, fit for
 * `Attempt #n failed: <reason>`: the transport failure, or "DMI answered
 * HTTP <status>: <start of the body>". RETRY for transport failures, 5xx,
 * 408 and 429; REJECT for other statuses. */
int ncmp_dmi_response_check(const ncmp_dmi_response *resp, ncmp_err *err);

/* "ok", "dns", "connect", "timeout", "tls", "io", "too-large",
 * "cancelled", "internal", "busy". */
const char *ncmp_dmi_failure_name(ncmp_dmi_failure failure);

/* --- the three ways to call ---------------------------------------------- */

/* Carry out one request and wait for it. Returns 0 with *resp filled
 * (owned by the caller: ncmp_dmi_response_free) whenever the request was
 * tried - a transport failure is a response with status 0, see
 * ncmp_dmi_response_check. -1 when the request is malformed (REJECT: no
 * URL, a header with a line break...), when the client is shutting down
 * (RETRY), or when called from the event thread (FATAL: it would
 * deadlock); *resp is then untouched. */
int ncmp_dmi_call(ncmp_dmi *dmi, const ncmp_dmi_request *req, ncmp_dmi_response *resp,
                  ncmp_err *err);

/* Carry out n requests in parallel and wait for all of them. Returns 0
 * with resps[0..n) filled (each owned by the caller) - a request that
 * could not start because the client is shutting down is a response with
 * failure NCMP_DMI_FAIL_CANCELLED. -1 when one of the requests is
 * malformed (checked before any starts) or when called from the event
 * thread; resps is then untouched. */
int ncmp_dmi_call_many(ncmp_dmi *dmi, const ncmp_dmi_request *reqs, size_t n,
                       ncmp_dmi_response *resps, ncmp_err *err);

/* Runs on the client's event thread when a submitted request completes,
 * exactly once per accepted request, failures and cancellation included.
 * It owns `resp` (ncmp_dmi_response_destroy, possibly later on another
 * thread). It must return quickly and never block. */
typedef void (*ncmp_dmi_done_cb)(ncmp_dmi_response *resp, void *opaque);

/* Start one request without waiting; callable from any thread. The
 * request is copied. 0: `done` will be called exactly once. -1: the
 * request is malformed (REJECT) or the client is shutting down (RETRY),
 * and `done` is never called. */
int ncmp_dmi_submit(ncmp_dmi *dmi, const ncmp_dmi_request *req, ncmp_dmi_done_cb done, void *opaque,
                    ncmp_err *err);

/* --- NCMP's DMI API: URLs ------------------------------------------------ */

/* Append s percent-encoded as NCMP encodes URL template values (Spring's
 * strict encoding): every byte but A-Z a-z 0-9 - . _ ~ becomes %XX
 * (upper-case hex), so '/' ':' '=' '(' ',' ' ' are all encoded. */
void ncmp_dmi_url_encode(ncmp_buf *out, const char *s);

/* The URLs below start with the DMI plugin's base URL `dmi` as it was
 * registered (trailing slashes dropped) and append to *out. */

/* The base URL `dmi` without its trailing slashes (every DMI URL starts
 * with it). */
void ncmp_dmi_url_base(ncmp_buf *out, const char *dmi);

/* {dmi}/dmi/v1/ch/{id}/modules */
void ncmp_dmi_url_modules(ncmp_buf *out, const char *dmi, const char *cm_handle_id);

/* {dmi}/dmi/v1/ch/{id}/moduleResources */
void ncmp_dmi_url_module_resources(ncmp_buf *out, const char *dmi, const char *cm_handle_id);

/* {dmi}/dmi/v1/ch/{id}/data/ds/{datastore}?resourceIdentifier=&options=&topic=
 * Each query parameter only when its value is not blank (NULL, empty or
 * white space only), as NCMP does. */
void ncmp_dmi_url_data(ncmp_buf *out, const char *dmi, const char *cm_handle_id,
                       const char *datastore, const char *resource_identifier, const char *options,
                       const char *topic);

/* {dmi}/dmi/v1/data?requestId=&topic= (the legacy batch data operation) */
void ncmp_dmi_url_data_operation(ncmp_buf *out, const char *dmi, const char *request_id,
                                 const char *topic);

/* {dmi}/actuator/health */
void ncmp_dmi_url_health(ncmp_buf *out, const char *dmi);

/* --- NCMP's DMI API: request bodies -------------------------------------- */

/* The module references request, appended to *out:
 *     {"cmHandleProperties":{...},"moduleSetTag":"<tag>"}
 * `properties_json` is the handle's private properties as a JSON object
 * of strings (as stored; NULL or "" for none); anything else is a REJECT.
 * `module_set_tag` NULL is "". */
int ncmp_dmi_body_modules(ncmp_buf *out, const char *properties_json, const char *module_set_tag,
                          ncmp_err *err);

/* One module of a module set. The strings are owned by the list. */
typedef struct ncmp_dmi_module {
    char *name;
    char *revision;  /* "" when the DMI gave none */
    char *namespace; /* module references only; "" when none */
    char *source;    /* module resources only (the YANG text); NULL otherwise */
} ncmp_dmi_module;

typedef struct ncmp_dmi_module_list {
    ncmp_dmi_module *items;
    size_t len;
} ncmp_dmi_module_list;

void ncmp_dmi_module_list_free(ncmp_dmi_module_list *list);

/* The module resources request for `modules[0..n)` (name and revision of
 * each are sent), appended to *out:
 *     {"moduleSetTag":"<tag>","data":{"modules":[{"name":..,"revision":..}]},
 *      "cmHandleProperties":{...}}
 * moduleSetTag is left out when empty, as NCMP does. Properties as for
 * ncmp_dmi_body_modules. */
int ncmp_dmi_body_module_resources(ncmp_buf *out, const char *properties_json,
                                   const char *module_set_tag, const ncmp_dmi_module *modules,
                                   size_t n, ncmp_err *err);

/* --- NCMP's DMI API: response parsers ------------------------------------ */

/* The module references answer {"schemas":[{"moduleName","revision",
 * "namespace"}...]} into *out (owned by the caller on success). moduleName
 * is required and not empty; revision and namespace may be absent or null
 * but are strings when present. Any other shape is a REJECT naming the
 * element (counted from 0): "module references: element 3 has no
 * moduleName". */
int ncmp_dmi_parse_module_references(const char *body, size_t len, ncmp_dmi_module_list *out,
                                     ncmp_err *err);

/* The module resources answer [{"moduleName","revision","yangSource"}...]
 * into *out (owned by the caller on success). moduleName and yangSource
 * are required, yangSource not empty; revision as above. REJECT names the
 * element: "module resources: element 3 has no yangSource". */
int ncmp_dmi_parse_module_resources(const char *body, size_t len, ncmp_dmi_module_list *out,
                                    ncmp_err *err);

/* 1 when `resp` is the health answer of a live plugin: HTTP 200 and a
 * JSON object whose "status" is "UP" (NCMP's trust-level watchdog rule);
 * 0 for anything else. */
int ncmp_dmi_health_up(const ncmp_dmi_response *resp);

/* --- DMI URL check ------------------------------------------------------- */

/* NCMP's check of a registered DMI plugin URL: when `allowed_pattern` is
 * not empty, a full match of that POSIX extended regular expression (a
 * pattern that does not compile accepts nothing); otherwise http or https
 * with a host and no white space, control characters, '"', '<', '>' or
 * '\'. Returns 1 when acceptable. */
int ncmp_dmi_url_valid(const char *url, const char *allowed_pattern);

#endif
