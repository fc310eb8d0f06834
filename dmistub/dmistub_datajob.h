/*
 * dmistub_datajob: what the stub answers to NCMP's data-job sub-jobs
 * (dmi-openapi-datajob.yml: POST /dmi/v1/cmwriteJob and /dmi/v1/cmreadJob,
 * GET /dmi/v1/cmwriteJob/dataProducer/{id}/dataProducerJob/{id}/status and
 * .../result), as ONAP's reference DMI stub answers them, and the last
 * sub-job requests, kept for the tests of a proxy in front of the stub.
 * dmistub_http routes, counts and delays; this file holds the checks, the
 * answers and the kept requests.
 *
 * Everything here is thread-safe.
 */
#ifndef DMISTUB_DATAJOB_H
#define DMISTUB_DATAJOB_H

#include <stddef.h>

#include "ncmp_buf.h"
#include "ncmp_err.h"
#include "ncmp_jscan.h"

/* How many sub-job requests GET /stub/datajob/last gives, and how many
 * operationIds of each. */
#define DMISTUB_DATAJOB_KEPT     50
#define DMISTUB_DATAJOB_KEPT_IDS 20

/* The dataProducerId whose sub-jobs answer 500 {"error":"simulated failure"}. */
#define DMISTUB_DATAJOB_FAILING "failing-producer"

/* The reference's answers to status and result (constant). */
#define DMISTUB_DATAJOB_STATUS_BODY "{\"status\":\"FINISHED\"}"
#define DMISTUB_DATAJOB_RESULT_BODY "{\"result\":\"some status\"}"
#define DMISTUB_DATAJOB_FAILED_BODY "{\"error\":\"simulated failure\"}"

typedef struct dmistub_datajob dmistub_datajob;

/* What a sub-job request holds (tokens borrowed from its body: a string
 * with its quotes and escapes as written, an integer, or NULL for null and
 * absent). */
typedef struct dmistub_subjob {
    ncmp_jtok data_producer_id, data_job_id;
    size_t operations;
    ncmp_jtok operation_ids[DMISTUB_DATAJOB_KEPT_IDS]; /* of the first operations */
    ncmp_jtok first_operation;                         /* data[0] as received */
} dmistub_subjob;

dmistub_datajob *dmistub_datajob_new(void);

void dmistub_datajob_free(dmistub_datajob *d);

/* Check a sub-job body, body[0..len), as SubjobWriteRequest (or
 * SubjobReadRequest) describes it, in one pass that builds nothing (a
 * sub-job may hold 100,000 operations): one JSON object (RFC 8259, valid
 * UTF-8, no \u0000, nesting at most 64 deep) whose dataProducerId,
 * dataJobId, dataAcceptType, dataContentType and destination are strings
 * or null when present, and whose "data" is an array of objects, each with
 * "path" and "op" (strings), an "operationId" that is a string, an integer
 * or null, and a "moduleSetTag" that is a string or null when present.
 * Other fields may hold any JSON. Else a REJECT saying what is wrong and
 * where. Members are matched by name as written (without escapes). */
int dmistub_datajob_check(const char *body, size_t len, dmistub_subjob *out, ncmp_err *err);

/* Is the sub-job's dataProducerId DMISTUB_DATAJOB_FAILING (as written)? */
int dmistub_datajob_failing(const dmistub_subjob *job);

/* The answer to a sub-job that succeeds: the reference's
 * {"subJobId":"<n>","dmiServiceName":"some-dmi-service-name",
 * "dataProducerId":"my-data-producer-id"}, n counting from 1. */
void dmistub_datajob_answer(dmistub_datajob *d, ncmp_buf *out);

/* Keep a checked sub-job request ({"path","query","dataProducerId",
 * "dataJobId","operations","operationIds","firstOperation" (data[0] as
 * received),"authorization"}); the oldest
 * goes beyond DMISTUB_DATAJOB_KEPT. `path` and `query` as received (NULL
 * becomes ""). */
void dmistub_datajob_keep(dmistub_datajob *d, const dmistub_subjob *job, const char *path,
                          const char *query, const char *authorization);

/* The kept requests, oldest first, as a JSON array (the caller frees it),
 * or NULL when none. */
char *dmistub_datajob_last(dmistub_datajob *d);

/* Forget the kept requests and restart the sub-job ids at 1. */
void dmistub_datajob_forget(dmistub_datajob *d);

#endif
