/*
 * Data access in the rest role: NCMP's pass-through reads and writes and
 * the legacy batch read, forwarded to the DMI plugins without holding a
 * server thread (docs/rest.md describes each answer).
 *
 *   GET|POST|PUT|PATCH|DELETE /ncmp/v1/ch/{ref}/data/ds/{datastore}
 *       ?resourceIdentifier=&options=&topic=&include-descendants=
 *     The reference is resolved with the handle cache (handle_cache.h),
 *     the request suspended, and POST {dmi}/dmi/v1/ch/{id}/data/ds/{ds}
 *     submitted to the DMI client; its completion callback answers with
 *     NCMP's status (GET 200, POST 201, PUT 200, PATCH 200, DELETE 204)
 *     and the DMI's body, or 502 with `dmi-response`. With `topic` the
 *     answer is 200 {"requestId"} at once; the DMI publishes the result
 *     on ncmp-async-m2m and the async-forward role takes it to the topic.
 *
 *   GET /ncmp/v1/ch/{ref}/data/ds/ncmp-datastore:operational[/query]
 *     Read from the handle's data-sync cache, not from the plugin
 *     (operational.h).
 *
 *   POST /ncmp/v1/data?topic=
 *     Validated in NCMP's order, answered 200 {"requestId"}, then the
 *     targets are grouped per DMI data service and one
 *     POST {dmi}/dmi/v1/data?requestId=&topic= is submitted per group.
 *     Unknown references (100), handles not READY (101) and failed DMI
 *     calls (102/103/108) are reported on the client topic as
 *     DataOperationEvents produced here.
 *
 *   `data.request-topic` (Kafka)
 *     The same batch read as a CloudEvent: data = the request body,
 *     ce_destination = the client topic, ce_id = the request id. Records
 *     that cannot be used go to `<topic>-dlq` with the reason.
 *
 * Threads: handlers run on the server threads; DMI completions on the
 * DMI client's event thread (they only answer or produce, never block);
 * the request-topic consumer on its own thread.
 */
#ifndef NCMPD_DATA_H
#define NCMPD_DATA_H

#include "cps.h"
#include "handle_cache.h"
#include "ncmp_config.h"
#include "ncmp_dmi.h"
#include "ncmp_err.h"
#include "ncmp_http.h"
#include "policy.h"
#include "rest_db.h"
#include "role.h"

typedef struct data data;

/* Start the handle cache and the request-topic consumer, and add the
 * routes to `srv` (which must not be started yet). DMI calls and result
 * events go through the process's DMI client and producer (`svc`,
 * borrowed). `pool` is borrowed (reference look-ups the cache misses) and
 * must outlive data_stop; so is `cps_reads`, whose reads answer the
 * operational datastore (the data-sync cache, operational.h). On success
 * *d is owned by the caller (data_stop, then data_destroy). */
int data_start(data **d, const ncmp_services *svc, ncmp_http_server *srv, rest_pool *pool,
               cps_api *cps_reads, ncmp_err *err);

/* Refuse new requests (503), stop the request consumer, and wait for the
 * DMI calls in flight to be answered (at most the DMI response timeout
 * and a margin). Call before the HTTP server is destroyed. Accepts
 * NULL. */
void data_stop(data *d);

/* Free what is left (after the server is gone). Accepts NULL. */
void data_destroy(data *d);

/* --- for provmns.c: the same handle cache, DMI calls and policy ------- */

/* The handle of the longest candidate of `ref` (handle_candidates): from
 * the map, else from the database (the map may lag a registration).
 * *found says whether *out was filled (owned by the caller). RETRY/FATAL
 * when the database could not be asked. */
int data_resolve_longest(data *d, const char *ref, handle_info *out, int *found, ncmp_err *err);

/* Submit a call to the DMI client, counted so that data_stop waits for
 * its completion. -1 when stopping (RETRY) or malformed (REJECT): `done`
 * is then never called. */
int data_submit(data *d, const ncmp_dmi_request *dr, ncmp_dmi_done_cb done, void *opaque,
                ncmp_err *err);

/* Runs on the DMI client's thread with the policy executor's decision. */
typedef void (*data_policy_cb)(const policy_decision *dec, void *opaque);

/* Ask the policy executor about `op` (policy.h), forwarding `auth` when
 * not NULL. 0: `done` will run once. -1: not asked - REJECT when the
 * change request is not a JSON object, RETRY when stopping. */
int data_policy_ask(data *d, const policy_op *op, const char *auth, data_policy_cb done,
                    void *opaque, ncmp_err *err);

/* Answer a failed DMI call as NCMP does: 502 DmiErrorMessage, the DMI's
 * status (408 for a timeout, 503 when it could not be reached) and its
 * body as a JSON string under "dmi-response". */
void data_answer_dmi_error(ncmp_http_request *req, const ncmp_dmi_response *r);

/* Say where the time of a request answered from a DMI call went, in a
 * Server-Timing header (W3C Server Timing), before the answer is given:
 * `ncmpd` is ncmpd's own part (from the request's arrival to the call and
 * from the call's end to now), `dmi-wait` the call's wait for the DMI
 * client's thread and a connection, `dmi` the HTTP exchange with the
 * plugin. Their sum is the time ncmpd held the request; a client that
 * subtracts it from its own time sees what lay outside ncmpd. Nothing when
 * no transfer ran. */
void data_server_timing(ncmp_http_request *req, const ncmp_dmi_response *r);

const ncmp_config *data_config(const data *d);

/* The handle map (never NULL once started). */
handle_cache *data_cache(data *d);

/* NCMP's rule for a client topic: a Kafka topic name
 * (^(?!\.{1,2}$)[a-zA-Z0-9._-]{1,249}$) that is not `async_m2m_topic`. */
int data_topic_valid(const char *topic, const char *async_m2m_topic);

/* Why a batch request was refused: the status (400, 413) and message. */
typedef struct batch_error {
    int status;
    char message[512];
} batch_error;

/* Parse and check a DataOperationRequest body (POST /ncmp/v1/data, or a
 * record of the request topic): 0 with *root owned by the caller, or -1
 * with *e filled and *root NULL. */
int data_batch_parse(const char *body, size_t len, json_object **root, batch_error *e);

#endif
