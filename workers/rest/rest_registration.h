/*
 * Registration over REST: POST /ncmpInventory/v1/ch takes NCMP's
 * DmiPluginRegistration and sends it through the same pipeline as the
 * Kafka path. The body's shape is checked here (what the registration role
 * would dead-letter is a 400 instead), then it is published to
 * `registration.topic` as a CloudEvent (binary mode, a fresh ce_id, key =
 * the DMI plugin URL), and the request is suspended until the outcome with
 * that ce_id arrives on `registration.response-topic`:
 *
 * The answer waits until the registration role has committed the
 * request (consumer_offsets passed its offset), so a client reading right
 * after it sees the handles:
 *
 *   nothing failed          200, empty body
 *   handles failed          500, NCMP's DmiPluginRegistrationErrorResponse
 *   request refused whole   400, NCMP's error body (e.g. a bad DMI URL)
 *   no outcome in time      504 (rest.registration-timeout-ms)
 *
 * One consumer per process reads every partition of the response topic,
 * from the end as it was at start-up (so no outcome published after that
 * is missed), and hands each outcome to the request waiting for it. Its
 * thread also answers the requests whose time ran out.
 */
#ifndef NCMPD_REST_REGISTRATION_H
#define NCMPD_REST_REGISTRATION_H

#include "ncmp_config.h"
#include "ncmp_err.h"
#include "ncmp_http.h"

typedef struct rest_registration rest_registration;

/* Open a producer, a database connection and the outcome consumer, and
 * start the outcome thread. On success *rr is owned by the caller
 * (rest_registration_destroy). */
int rest_registration_start(rest_registration **rr, const ncmp_config *cfg, ncmp_err *err);

/* The handler of POST /ncmpInventory/v1/ch; `arg` is the
 * rest_registration. */
void rest_registration_handle(ncmp_http_request *req, void *arg);

/* Answer the requests still waiting with 503 and refuse new ones (503),
 * stop the thread, close the consumer. Call before the HTTP server is
 * destroyed (the handler stays safe to call). Accepts NULL. */
void rest_registration_stop(rest_registration *rr);

/* Free, after the HTTP server is gone. Accepts NULL. */
void rest_registration_destroy(rest_registration *rr);

/* Check the shape of a DmiPluginRegistration as the registration role
 * decodes it. Returns -1 with a REJECT naming the problem. */
int rest_registration_check(const char *body, size_t len, ncmp_err *err);

#endif
