/*
 * datajob: NCMP's data jobs in the rest role (docs/rest.md, "Data jobs").
 *
 *   POST /do-not-use/dataJobs/{dataJobId}/write
 *     {"dataJobMetadata":{"destination","dataAcceptType","dataContentType"},
 *      "dataJobWriteRequest":{"data":[{"path","op","operationId","value"}...]}}
 *     The body is never held whole: it is scanned as it arrives
 *     (datajob_scan), each operation parsed alone, its path resolved by
 *     the longest alternate-id match from the handle map, and the
 *     operation appended at once to the body of its sub-job, one per
 *     (data-job write service, data producer). Then every sub-job goes out
 *     at the same time as POST {dmi}/dmi/v1/cmwriteJob?destination= and
 *     the answer is NCMP's list [{"subJobId","dmiServiceName",
 *     "dataProducerId"}...]. Nothing is sent when a path matches no
 *     handle (404) or a handle that is not READY (409).
 *   POST /do-not-use/dataJobs/read
 *     NCMP's classification of the dataNodeSelector's selectors:
 *     broadcast, per DMI and data producer, not ready, error.
 *   GET /do-not-use/dataJobs/{dataJobId}/status?dmiServiceName=&dataProducerId=&dataProducerJobId=
 *   GET
 * /do-not-use/dataJobs/{dataJobId}/result?dmiServiceName=&dataProducerId=&dataProducerJobId=&destination=
 *     Forwarded to the DMI's cmwriteJob status and result.
 *   `datajob.request-topic` (Kafka)
 *     A write job as a CloudEvent (ce_id = the data job id, data = the
 *     body above); its outcome on `datajob.response-topic` keyed by the
 *     job id. Records that cannot be used go to `<topic>-dlq`.
 */
#ifndef NCMPD_DATAJOB_H
#define NCMPD_DATAJOB_H

#include <json-c/json.h>
#include <stddef.h>

#include "ncmp_err.h"
#include "ncmp_http.h"
#include "role.h"

typedef struct data data;
typedef struct datajob datajob;

/* Add the routes (before the server starts) and start the request-topic
 * consumer when datajob.request-topic is set. `d` is borrowed and must
 * outlive the returned object. On success *out is owned by the caller
 * (datajob_stop). */
int datajob_start(datajob **out, data *d, const ncmp_services *svc, ncmp_http_server *srv,
                  ncmp_err *err);

/* Stop the consumer (jobs in flight are finished by data_stop's wait).
 * Accepts NULL. */
void datajob_stop(datajob *j);

/* --- the body scanner (for tests) ---------------------------------------- */

/* Scans a write job's JSON as it arrives, handing over the metadata
 * object (parsed strictly, ncmp_json_parse) and each element of
 * dataJobWriteRequest.data whole, as its text, and skipping everything
 * else. An element's text has balanced brackets and quotes; the
 * callback checks its syntax (ncmp_jscan or ncmp_json_parse). The rest is
 * checked for structure. */
typedef struct datajob_scan datajob_scan;

typedef struct datajob_scan_cb {
    /* the dataJobMetadata value (borrowed for the call); -1 stops the scan */
    int (*metadata)(void *arg, json_object *meta, ncmp_err *err);
    /* one element of dataJobWriteRequest.data, text[0..len) as written
     * (borrowed for the call), with its index */
    int (*operation)(void *arg, const char *text, size_t len, size_t index, ncmp_err *err);
    void *arg;
} datajob_scan_cb;

/* `max_value_bytes`: the largest element or metadata value taken (a
 * larger one is a REJECT). */
datajob_scan *datajob_scan_new(const datajob_scan_cb *cb, size_t max_value_bytes);
/* Feed the next bytes: 0, or -1 with *err (REJECT: not JSON, or what a
 * callback refused). After a failure, feeding again fails again. */
int datajob_scan_feed(datajob_scan *s, const char *bytes, size_t len, ncmp_err *err);
/* The end of the body: 0 when it was one whole JSON object with a
 * dataJobWriteRequest.data array, else -1 (REJECT). */
int datajob_scan_end(datajob_scan *s, ncmp_err *err);
void datajob_scan_free(datajob_scan *s);

/* The JEX selectors of a dataNodeSelector (lines or OR, trimmed, "&&"
 * comments and duplicates left out), as NCMP's JexParser.toXpaths; and
 * its FDN prefix ("/ManagedElement=1/..." from [id="..."] steps, "" when
 * none). Owned by the caller. */
char **datajob_selectors(const char *selector_text, size_t *n);
char *datajob_fdn_prefix(const char *xpath);
void datajob_strings_free(char **s, size_t n);

#endif
