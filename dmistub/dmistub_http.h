/*
 * dmistub_http: the stub's HTTP server (libmicrohttpd).
 *
 * MHD runs an epoll event loop on --threads threads. A request that must
 * wait (the reference delays) is answered by suspending its connection
 * and adding a deadline to a dmistub_timer whose callback resumes it, so
 * a thousand requests sleeping 300 ms hold no thread and all answer after
 * about 300 ms. Validation errors answer at once; the delays (and
 * --extra-delay-ms, --hang) apply to answers that passed validation.
 *
 * Endpoints (the DMI plugin API of dmi-openapi.yml and
 * dmi-openapi-datajob.yml, plus the stub's own):
 *   POST /dmi/v1/ch/{id}/modules              module references of a tag
 *   POST /dmi/v1/ch/{id}/moduleResources      YANG sources asked for
 *   POST /dmi/v1/ch/{id}/data/ds/{datastore}  pass-through read/write
 *   POST /dmi/v1/data?requestId=&topic=       batch read: 202, then events
 *   POST /dmi/v1/cmwriteJob?destination=      a data-job sub-job (and
 *   POST /dmi/v1/cmreadJob?destination=       cmreadJob): {"subJobId",...}
 *   GET  /dmi/v1/cmwriteJob/dataProducer/{id}/dataProducerJob/{id}/status
 *        and .../result?destination=         (dmistub_datajob.h)
 *   GET|PUT|PATCH|DELETE /ProvMnS/v1/{fdn}    ProvMnS (dmistub_provmns.h)
 *   POST /prov-mns-extensions/v1alpha1/actions/{dn}/{action}
 *   POST /operation-permission/v1/permissions the policy executor stub
 *   GET  /actuator/health                     {"status":"UP"} or 503 DOWN
 *   GET  /stub/stats   POST /stub/reset       counters (and the last requests)
 *   POST /stub/health  {"status":"UP"|"DOWN"} set the health answer
 *   GET  /stub/provmns/last, /stub/policy/last  the last ProvMnS or action
 *                                             request, the last permission
 *                                             request (404 when none)
 *   GET  /stub/datajob/last                   the last 50 sub-job requests
 * Errors are JSON {"status":"<code> <REASON>","message":"..."}: 400 for a
 * malformed body or parameter, 401 when --auth is set and the request's
 * Basic credentials differ (on /dmi/ only), 404 for an unknown path, 405
 * for a wrong method (with Allow), 413 for a body over --max-body-bytes,
 * 415 for a ProvMnS, action or permission body of another media type,
 * 503 for the busy window or a Kafka feature without --kafka. A
 * dmiSimulation=httpError_<code> segment of a ProvMnS path answers
 * <code> with {"error":"simulated <code>"}; a sub-job of dataProducerId
 * "failing-producer" answers 500 {"error":"simulated failure"}.
 */
#ifndef DMISTUB_HTTP_H
#define DMISTUB_HTTP_H

#include <stdint.h>

#include "dmistub_opts.h"
#include "ncmp_err.h"

typedef struct dmistub_server dmistub_server;

/* Build the models, connect to Kafka when opts->kafka is set, start the
 * timer and listen. On success *srv is owned by the caller
 * (dmistub_server_stop); `opts` is borrowed and must outlive it. */
int dmistub_server_start(dmistub_server **srv, const dmistub_opts *opts, ncmp_err *err);

/* The port the server listens on (the chosen one when --port 0). */
uint16_t dmistub_server_port(const dmistub_server *srv);

/* Stop accepting, answer every waiting request (hung ones with 503),
 * publish the events already due or waiting, flush Kafka, free. Accepts
 * NULL. */
void dmistub_server_stop(dmistub_server *srv);

#endif
