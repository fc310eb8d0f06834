/*
 * ncmp_http: a small HTTP server framework on libmicrohttpd.
 *
 * Create a server, add routes, start it:
 *
 *     ncmp_http_server *srv;
 *     ncmp_http_server_new(&srv, &opts, &err);
 *     ncmp_http_route(srv, "GET", "/ncmp/v1/ch/{ref}/state", get_state, ctx);
 *     ncmp_http_server_start(srv, &err);
 *     ...
 *     ncmp_http_server_destroy(srv);
 *
 * A route is a method and a path pattern whose `{name}` segments match one
 * non-empty path segment each; the values are percent-decoded (so %2F is a
 * '/' inside a value, never a separator). A last segment `{name...}`
 * matches the rest of the path, any number of segments (none too: the
 * value of "/a/" for "/a/{rest...}" is ""), as one value decoded as a
 * whole, separators included. Routes are tried in the order they
 * were added. A path that matches no route is a 404, one that matches only
 * with another method a 405, both with NCMP's error body.
 *
 * Handlers run on worker threads (`worker_threads` of them), fed by a
 * bounded queue, so that a handler may block (on the database) without
 * holding up the connections of the server's threads (`threads` of them,
 * each serving many connections). A route added with
 * ncmp_http_route_inline runs its handler on the server thread instead:
 * for handlers that answer from memory or start asynchronous work and
 * suspend, whose latency must not wait behind the queue. With
 * worker_threads 0 every handler runs on the server threads. Before a
 * handler runs, the framework has checked authentication (when configured:
 * HTTP Basic, or bearer tokens checked by ncmp_jwt; not for the routes
 * added with ncmp_http_route_open, as NCMP leaves /actuator open), read the body (at most
 * `max_body_bytes`, otherwise 413), and decoded the path and query parameters (a value that is not
 * valid percent-encoded UTF-8, or holds a NUL, is a 400).
 *
 * A handler answers exactly once, with one of the ncmp_http_respond_*
 * functions, before it returns - or it calls ncmp_http_suspend() and
 * answers later from any thread (the asynchronous mode: the connection
 * waits without holding a server thread). Large answers are streamed:
 * ncmp_http_respond_stream() sends a chunked body produced block by block
 * by a callback, so the whole answer never sits in memory.
 *
 * Errors use NCMP's body {"status":"404 NOT_FOUND","message":..,"details":..}.
 * Every finished request is logged at debug level and reported to the
 * `after` hook (method, route pattern, status, latency) for metrics.
 */
#ifndef NCMP_HTTP_H
#define NCMP_HTTP_H

#include <stddef.h>
#include <sys/types.h>

#include "ncmp_buf.h"
#include "ncmp_err.h"

typedef struct ncmp_http_server ncmp_http_server;
typedef struct ncmp_http_request ncmp_http_request;

/* A route's handler; `arg` is the pointer given to ncmp_http_route. */
typedef void (*ncmp_http_handler)(ncmp_http_request *req, void *arg);

/* Called on a server thread after every response was sent (or the client
 * went away). `route` is the matched pattern, or "-" when none matched;
 * `latency_ms` runs from the request line to the last byte. */
typedef void (*ncmp_http_after_fn)(void *arg, const char *method, const char *route, int status,
                                   double latency_ms);

typedef struct ncmp_http_options {
    const char *host;          /* address to bind; NULL or "": every interface */
    int port;                  /* 0: an ephemeral port (ncmp_http_server_port) */
    int threads;               /* server threads, >= 1 */
    size_t max_body_bytes;     /* larger bodies get 413 */
    const char *auth_username; /* NULL or "": no Basic authentication */
    const char *auth_password;
    struct ncmp_jwt *jwt;     /* not NULL: bearer tokens (JWT) instead of
                                 Basic; borrowed, must outlive the server */
    int connection_timeout_s; /* idle connections are closed; 0: never */
    /* Requests in flight (from their headers until their answer is sent:
     * reading the body, in the handler, suspended) beyond which a new
     * request is refused at once with 503 and Retry-After, before its body
     * is read or authentication is checked; routes added with
     * ncmp_http_route_open are never refused, so that probes still answer
     * under load. 0: no limit. */
    int max_in_flight;
    int retry_after_s; /* the Retry-After of every refusal for load; <= 0: 1 */
    /* threads that run the handlers of routes not added inline; 0: none,
     * every handler runs on the server threads */
    int worker_threads;
    /* requests waiting for a worker thread beyond which a new one is
     * answered 503 with Retry-After (after its body was read); 0: no
     * limit */
    int max_queued;
    /* a request that waited longer for a worker thread is answered 503
     * with Retry-After instead of being run (its client has likely given
     * up, and running it would make the next ones wait longer); 0: no
     * limit */
    int max_queue_wait_ms;
    ncmp_http_after_fn after; /* may be NULL */
    void *after_arg;
} ncmp_http_options;

/* A server that is not listening yet. The option strings are copied. On
 * success *srv is owned by the caller (ncmp_http_server_destroy). */
int ncmp_http_server_new(ncmp_http_server **srv, const ncmp_http_options *opts, ncmp_err *err);

/* Add a route (before ncmp_http_server_start). `method` and `pattern` are
 * copied; `arg` is borrowed and must outlive the server. */
void ncmp_http_route(ncmp_http_server *srv, const char *method, const char *pattern,
                     ncmp_http_handler fn, void *arg);

/* Add a route whose handler runs on the server thread that read the
 * request (never queued for a worker thread): it must not block. */
void ncmp_http_route_inline(ncmp_http_server *srv, const char *method, const char *pattern,
                            ncmp_http_handler fn, void *arg);

/* ncmp_http_route_open, its handler run inline. */
void ncmp_http_route_open_inline(ncmp_http_server *srv, const char *method, const char *pattern,
                                 ncmp_http_handler fn, void *arg);

/* Add a route served without authentication even when the server has
 * credentials configured (health probes, metrics scrapes): only a request
 * whose decoded path and method match this route skips the check. */
void ncmp_http_route_open(ncmp_http_server *srv, const char *method, const char *pattern,
                          ncmp_http_handler fn, void *arg);

/* Call `fn` for every route, in the order they were added: its method,
 * its pattern as given, and whether it is open (ncmp_http_route_open).
 * For tests and documents that must list what a server serves. */
void ncmp_http_routes_each(const ncmp_http_server *srv,
                           void (*fn)(void *arg, const char *method, const char *pattern, int open),
                           void *arg);

/* A route whose body is streamed to the handler instead of being read
 * into memory first (for bodies far larger than max_body_bytes). Runs on
 * the server thread of the connection, in this order:
 *   open(req, arg)     once the request line and headers are in: the
 *                      path, query and headers are there, the body is
 *                      not. Returns the sink's state, or NULL after
 *                      answering (the body is then read and dropped);
 *   chunk(state, ..)   each piece of the body as it arrives; -1 to take
 *                      no more (the rest is read and dropped);
 *   finish(state, req, too_large)
 *                      the body is over: answer (or suspend) and free the
 *                      state. too_large: more than max_body_bytes came
 *                      (the pieces past the limit were dropped; a
 *                      Content-Length over it is a 413 before open);
 *   discard(state)     instead of finish, when the client went away.
 * ncmp_http_body() is empty for such a route. */
typedef struct ncmp_http_sink {
    void *(*open)(ncmp_http_request *req, void *arg);
    int (*chunk)(void *state, const char *data, size_t len);
    void (*finish)(void *state, ncmp_http_request *req, int too_large);
    void (*discard)(void *state);
} ncmp_http_sink;

/* Add a route with a streamed body (above); `sink` and `arg` are
 * borrowed and must outlive the server. */
void ncmp_http_route_sink(ncmp_http_server *srv, const char *method, const char *pattern,
                          size_t max_body_bytes, const ncmp_http_sink *sink, void *arg);

/* Requests in flight now (see max_in_flight). */
int ncmp_http_in_flight(const ncmp_http_server *srv);

/* Requests waiting for a worker thread now (see max_queued). */
int ncmp_http_queued(const ncmp_http_server *srv);

/* Bind and start the threads. A port in use or a bad host is FATAL. */
int ncmp_http_server_start(ncmp_http_server *srv, ncmp_err *err);

/* The port the server listens on (the chosen one when opts.port was 0). */
int ncmp_http_server_port(const ncmp_http_server *srv);

/* Stop listening and close every connection. Requests still suspended are
 * answered 503 first; whoever suspended them must have stopped answering
 * (stop the asynchronous workers before the server). Accepts NULL. */
void ncmp_http_server_destroy(ncmp_http_server *srv);

/* --- the request (valid until it is answered) ---------------------------- */

const char *ncmp_http_method(const ncmp_http_request *req);
/* The path as sent, still percent-encoded, without the query. */
const char *ncmp_http_path(const ncmp_http_request *req);
/* The matched route pattern. */
const char *ncmp_http_route_pattern(const ncmp_http_request *req);
/* Path parameter `{name}`, decoded; NULL when the route has none. */
const char *ncmp_http_param(const ncmp_http_request *req, const char *name);
/* Query parameter, decoded ('+' is a space); the first of that name; NULL
 * when absent. */
const char *ncmp_http_query(const ncmp_http_request *req, const char *name);
/* Query parameter as a boolean: absent -> `def`; "true"/"false" in any
 * case; anything else returns -1 (answer 400). */
int ncmp_http_query_bool(const ncmp_http_request *req, const char *name, int def, int *out);
/* Request header (case-insensitive name); NULL when absent. Only valid on
 * the handler's thread, before it returns. */
const char *ncmp_http_header(const ncmp_http_request *req, const char *name);
/* Milliseconds since the request's first line arrived. */
double ncmp_http_age_ms(const ncmp_http_request *req);
/* The body (NUL-terminated, so JSON parsers may take it as a string);
 * *len excludes the NUL. Empty when none was sent. */
const char *ncmp_http_body(const ncmp_http_request *req, size_t *len);

/* --- answering: exactly once per request ---------------------------------- */

/* A body copied from `body`; `content_type` NULL for none. */
void ncmp_http_respond(ncmp_http_request *req, int status, const char *content_type,
                       const void *body, size_t len);
/* A JSON body taken over from `body` (left empty). */
void ncmp_http_respond_json(ncmp_http_request *req, int status, ncmp_buf *body);
/* NCMP's error body with the status text ("400 BAD_REQUEST"); `details`
 * may be NULL (then omitted). */
void ncmp_http_respond_error(ncmp_http_request *req, int status, const char *message,
                             const char *details);

/* 503 with NCMP's error body and `Retry-After` (the server's
 * retry_after_s): the request was refused for load, before anything was
 * done for it, so the client may send it again later. From any thread,
 * like the other respond functions. Counted in ncmp_shed_requests_total
 * under `reason` (e.g. "db"); NULL: counted where it was refused (a DMI
 * call the DMI client did not send). */
void ncmp_http_respond_busy(ncmp_http_request *req, const char *reason, const char *message,
                            const char *details);

/* Fill buf[0..max) with the next bytes of the body. Return how many (> 0),
 * 0 at the end, -1 to abort (the client sees a cut chunked body), or
 * NCMP_HTTP_STREAM_WAIT when the next bytes are not there yet: the
 * connection then waits, holding no thread, until ncmp_http_stream_wake().
 * Runs on a server thread, any time until the end or the free callback;
 * it must not wait itself. */
typedef ssize_t (*ncmp_http_stream_fn)(void *arg, char *buf, size_t max);
#define NCMP_HTTP_STREAM_WAIT (-2)

typedef struct ncmp_http_stream ncmp_http_stream;

/* A chunked body produced by `fn`, in blocks of about `block` bytes.
 * `arg` is taken over: `free_fn(arg)` runs once the body is done or the
 * client went away (may be NULL). Returns the stream, for
 * ncmp_http_stream_wake(), valid until free_fn has run. */
ncmp_http_stream *ncmp_http_respond_stream(ncmp_http_request *req, int status,
                                           const char *content_type, size_t block,
                                           ncmp_http_stream_fn fn, void *arg,
                                           void (*free_fn)(void *));

/* The next bytes of a stream whose fn answered NCMP_HTTP_STREAM_WAIT are
 * there: fn is asked again. From any thread, until free_fn has run (so a
 * producer calls it under the lock its free_fn takes). */
void ncmp_http_stream_wake(ncmp_http_stream *s);

/* Whether `req`'s handler runs on a worker thread (it may wait there
 * while its answer is sent), and whether the server is stopping (such a
 * wait must then end). */
int ncmp_http_on_worker(const ncmp_http_request *req);
int ncmp_http_stopping(const ncmp_http_request *req);

/* A header for the answer, whichever respond function sends it (call
 * before it, from the handler's thread); up to 4 per request. */
void ncmp_http_add_header(ncmp_http_request *req, const char *name, const char *value);

/* From a handler that runs inline: continue on a worker thread, as
 * fn(req, arg), queued like the handlers of routes that are not inline
 * (the same bounds: a full queue or a long wait is a 503). For the rare
 * case of an inline route that must wait on the database. The calling
 * handler returns without answering. Without worker threads, fn runs at
 * once. */
void ncmp_http_to_worker(ncmp_http_request *req, ncmp_http_handler fn, void *arg);

/* Answer later: after the handler returns, the connection waits (without
 * a server thread) until one of the respond functions is called for `req`
 * from any thread. Path, query and body stay valid until then; headers do
 * not. Every suspended request must be answered exactly once. */
void ncmp_http_suspend(ncmp_http_request *req);

/* --- helpers ------------------------------------------------------------- */

/* Route `method` `uri` (the request target as sent, path?query) the way
 * the server does, without a connection, authentication or body: 0 when a
 * route matched, after calling fn(arg, req) (may be NULL) with the parsed
 * request (method, path, route pattern, path and query parameters; no
 * headers, no body; valid during the call only), or the status the
 * framework itself answers: 400 (the path or query does not decode), 404,
 * 405. For tests and the fuzz targets. */
int ncmp_http_resolve(ncmp_http_server *srv, const char *method, const char *uri,
                      void (*fn)(void *arg, const ncmp_http_request *req), void *arg);

/* Spring's name of a status: "NOT_FOUND", "BAD_REQUEST", ...; "UNKNOWN"
 * for one it does not know. */
const char *ncmp_http_status_name(int status);

/* Append NCMP's error body to `out`. */
void ncmp_http_error_json(ncmp_buf *out, int status, const char *message, const char *details);

/* Decode %XX escapes (and '+' as a space when `plus_is_space`) of
 * s[0..len) into a new string. Fails (returns NULL) on a bad escape, a NUL
 * or invalid UTF-8. The result is owned by the caller. */
char *ncmp_http_decode(const char *s, size_t len, int plus_is_space);

#endif
