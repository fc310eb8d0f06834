/*
 * ncmp-dmi-stub: a DMI plugin that answers like ONAP's reference dmi-stub
 * (onap/dmi-stub 1.8.0), ProvMnS included, and a policy executor that
 * answers like ONAP's policy-executor-stub, for ncmpd's tests, demo and
 * benchmarks.
 *
 * README
 *
 *   ncmp-dmi-stub [--host 127.0.0.1] [--port 8092] [--kafka BOOTSTRAP] ...
 *   ncmp-dmi-stub --help        every flag, its default and its env name
 *
 * What it serves (the DMI plugin API of dmi-openapi.yml and
 * dmi-openapi-datajob.yml):
 *   POST /dmi/v1/ch/{id}/modules          after 100 ms: the module references
 *        of the body's moduleSetTag. tagA..tagE have module0..module199 at
 *        revisions 2024-01-01, 2024-02-02, ... 2024-05-05; any other or
 *        absent tag is tagDefault (module0..module9, 2024-01-01); errorTag
 *        answers 400. {"schemas":[{"moduleName","revision","namespace"}]}
 *   POST /dmi/v1/ch/{id}/moduleResources  after 1000 ms: the YANG sources of
 *        the modules in data.modules (all of the tag's without it), each
 *        the reference template padded with '*' to 32,768 characters.
 *   POST /dmi/v1/ch/{id}/data/ds/{ds}?resourceIdentifier=[&options][&topic]
 *        body {"operation":"read|create|update|patch|delete",...}: after
 *        300 ms (read) or 670 ms (the others), 200 with a sample RFC 8345
 *        topology (about 1.9 KB) whose network-id is
 *        "http://<Host header>-<id>". With a topic the stub acts as an
 *        asynchronous DMI: 202 {"requestId":<the body's requestId>} at
 *        once, then after the delay one DataOperationEvent (as for a batch
 *        read, operationId = requestId) to the async topic.
 *   POST /dmi/v1/data?requestId=&topic=   legacy batch read: 202 at once;
 *        after the read delay (once per request) one CloudEvent per CM
 *        handle of the body's operations to ncmp-async-m2m, key = the CM
 *        handle id, ce_correlationid = requestId, ce_destination = topic
 *        (see dmistub_events.h for the exact headers and body). Without
 *        --kafka it answers 503.
 *   POST /dmi/v1/cmwriteJob?destination=  a data-job sub-job, body
 *        {"dataProducerId","dataJobId","dataAcceptType","dataContentType",
 *        "data":[{"path","op","operationId","moduleSetTag","value"}]}: at
 *        once (--datajob-delay-ms), as the reference, 200
 *        {"subJobId":"<n>","dmiServiceName":"some-dmi-service-name",
 *        "dataProducerId":"my-data-producer-id"}, n counting from 1. POST
 *        /dmi/v1/cmreadJob is answered the same way (the reference stub
 *        has no read sub-jobs). 400 for another shape or no destination;
 *        a sub-job of dataProducerId "failing-producer" answers 500
 *        {"error":"simulated failure"} at once. The body is checked in
 *        one pass without building it, so 100,000 operations (22 MB; the
 *        default --max-body-bytes is 64 MiB) take about 0.1 s.
 *   GET  /dmi/v1/cmwriteJob/dataProducer/{id}/dataProducerJob/{id}/status
 *        {"status":"FINISHED"};  .../result?destination=  {"result":
 *        "some status"}, as the reference.
 *   GET  /ProvMnS/v1/{fdn}[?query]         after 300 ms
 *        (--provmns-read-delay-ms): {"id":"some id","objectClass":
 *        "dummyClass","objectInstance":"dummyInstance","attributes":<a
 *        5,696-byte RFC 8345 topology, as a string>}
 *   PUT, PATCH, DELETE /ProvMnS/v1/{fdn}   after 670 ms
 *        (--provmns-write-delay-ms). PUT (application/json): a Resource
 *        "set by Stub"; PATCH (application/json-patch+json or
 *        application/3gpp-json-patch+json, a JSON Patch array): an add of
 *        the topology string and a remove; DELETE: 200, no body. Other
 *        media types answer 415.
 *   POST /prov-mns-extensions/v1alpha1/actions/{dn}/{action}  at once:
 *        {"customProperties":{"KeySetByStub":"ValueSetByStub"},"value":null}
 *        Fault markers of these paths, a segment each:
 *        dmiSimulation=httpError_<code> answers <code> at once with
 *        {"error":"simulated <code>"}; dmiSimulation=slowResponse_<ms>
 *        adds <ms> to the delay. --extra-delay-ms and --hang apply.
 *   POST /operation-permission/v1/permissions  the policy executor:
 *        {"changeRequestFormat","operations":[{"operation",
 *        "targetIdentifier",...}]} answers 200 {"id":"<n>",
 *        "permissionResult":"allow|deny","message"} after --policy-delay-ms
 *        (--policy-decision sets the result). Markers in the first
 *        operation's resourceIdentifier: policySimulation=slowResponse_<s>
 *        (seconds), httpError_<code> (no body), policyResponse_<word>.
 *        400 for another shape, no operations, or a first operation other
 *        than delete without a changeRequest.
 *   GET  /stub/provmns/last                the last ProvMnS or action
 *        request: {"method","path","query","contentType","authorization",
 *        "body"}, path and query as received (not decoded); 404 when none
 *   GET  /stub/policy/last                 the last permission request:
 *        {"authorization","body":<the body's JSON>}; 404 when none
 *   GET  /stub/datajob/last                the last 50 sub-job requests
 *        that passed the checks, oldest first: [{"path","query",
 *        "dataProducerId","dataJobId","operations":<count>,
 *        "operationIds":[the first 20, as strings; null when absent],
 *        "authorization"}]; 404 when none
 *   GET  /actuator/health                  {"status":"UP"} (503 DOWN after
 *        --health-down or POST /stub/health {"status":"DOWN"})
 *   POST /stub/modules                     {"moduleSetTag":"t","generation":n,
 *        "failing":false}: from now on tag t's YANG sources are of
 *        generation n (other content, same names, revisions and lengths;
 *        0 is the reference's), or with "failing":true its /modules and
 *        /moduleResources answer 500 at once. For testing a module
 *        refresh. /stub/reset forgets these.
 *   GET  /stub/stats, POST /stub/reset     counters: module references and
 *        resources answered per tag, 503s of the busy window, pass-through
 *        reads and writes, batch requests and handles, events queued,
 *        delivered and failed, bad requests, 401s, ProvMnS reads, writes
 *        and actions, permission requests, data-job sub-jobs
 *        (datajobWrites, datajobReads: received, errors included),
 *        their operations (datajobOperations: of the accepted ones),
 *        status and result requests (datajobStatus, datajobResult), and
 *        "waiting": answers and
 *        batch jobs still waiting for their delay. The reset also forgets
 *        the last requests and restarts the sub-job ids.
 *
 * Behaviour worth knowing:
 *   - Delays never hold a thread: the connection is suspended and resumed
 *     by a timer, so hundreds of concurrent requests all answer after
 *     their delay. Errors (400, 401, 404, 405, 413, 415) answer at once.
 *   - --busy-ms N (env MODULE_INITIAL_PROCESSING_DELAY_MS; the reference
 *     workload uses 180000): 503 on /modules and /moduleResources for N ms
 *     after the first request of each tag; requests without a tag pass.
 *   - Fault modes for tests, per tag, on /moduleResources: --bad-yang-tag
 *     (sources libyang rejects), --garbage-tag (200 with a body that is not
 *     JSON), --error-tag (500). --extra-delay-ms adds to every /dmi/,
 *     ProvMnS and action delay, --hang never answers them (503 when the
 *     stub stops); neither applies to the policy executor.
 *   - --auth user:password: /dmi/ requires those HTTP Basic credentials
 *     (401 otherwise); ProvMnS, actions, permissions, health and /stub/
 *     stay open (their Authorization is kept for /stub/.../last).
 *   - --port 0 picks a free port; --port-file FILE receives it. One log
 *     line at start gives the address. SIGTERM or SIGINT stop it: waiting
 *     requests are answered, due events published and Kafka flushed.
 *
 * Examples:
 *   ncmp-dmi-stub --busy-ms 180000 --kafka 127.0.0.1:9092      reference
 *   ncmp-dmi-stub --port 0 --port-file /tmp/stub.port \
 *       --module-resources-delay-ms 0 --error-tag tagE            a test
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dmistub_http.h"
#include "dmistub_opts.h"
#include "ncmp_log.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"

extern char **environ;

/* Concurrent requests need descriptors: take the hard limit. */
static void raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Write the port to `path` whole: a reader never sees half a number. */
static int write_port_file(const char *path, unsigned port)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
    f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "%u\n", port);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    dmistub_opts *opts = NULL;
    dmistub_server *srv = NULL;
    ncmp_err err;

    if (dmistub_opts_load(&opts, argc, argv, environ, &err) != 0) {
        fprintf(stderr, "ncmp-dmi-stub: %s\n", err.msg);
        return 2;
    }
    if (opts->help) {
        dmistub_opts_help(stdout);
        dmistub_opts_free(opts);
        return 0;
    }
    ncmp_log_setup((ncmp_log_level)ncmp_log_level_parse(opts->log_level), NCMP_LOG_TEXT, stderr);
    raise_fd_limit();
    ncmp_signal_install();
    if (dmistub_server_start(&srv, opts, &err) != 0) {
        log_error("stub", "%s", err.msg);
        dmistub_opts_free(opts);
        return 1;
    }
    if (*opts->port_file && write_port_file(opts->port_file, dmistub_server_port(srv)) != 0)
        log_error("stub", "cannot write --port-file %s", opts->port_file);
    log_info("stub",
             "listening on %s port %u (threads=%ld kafka=%s async-topic=%s busy-ms=%ld "
             "delays: references=%ld resources=%ld read=%ld write=%ld)",
             opts->host, (unsigned)dmistub_server_port(srv), opts->threads,
             *opts->kafka ? opts->kafka : "none", opts->async_topic, opts->busy_ms,
             opts->module_references_delay_ms, opts->module_resources_delay_ms, opts->read_delay_ms,
             opts->write_delay_ms);
    while (!ncmp_stopping)
        ncmp_sleep_ms(100);
    log_info("stub", "stopping");
    dmistub_server_stop(srv);
    log_info("stub", "stopped");
    dmistub_opts_free(opts);
    return 0;
}
