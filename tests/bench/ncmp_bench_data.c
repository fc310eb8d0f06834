/*
 * ncmp-bench-data: the load client of `./run bench data` and `./run bench
 * provmns` (libcurl multi, one thread, kept-alive connections).
 *
 *   ncmp-bench-data pt --url BASE [--method GET|POST] [--handles N]
 *       [--rate R | --concurrency C] [--seconds S] [--delay-ms D]
 *     Pass-through reads (GET on passthrough-operational) or writes (POST
 *     on passthrough-running, NCMP's k6 body) by the reference workload's
 *     alternate ids, chosen at random among the first N. With --rate, an
 *     open loop of R requests/s (NCMP's constant-arrival-rate); with
 *     --concurrency, C clients each sending the next request as soon as
 *     the last one is answered. Prints one line:
 *       pt <n> ok <ok> rps <r> avg <ms> p50 <ms> p99 <ms> max <ms>
 *     where the times are overheads: the request's time without its
 *     connect time (as k6's timings.duration) minus D. When the answers
 *     say where ncmpd's time went (Server-Timing: ncmpd, dmi-wait, dmi),
 *     the line goes on with each hop's average and p99 over them:
 *       hops <n> ncmpd <avg> <p99> dmi_wait <avg> <p99> dmi_beyond_delay
 *       <avg> <p99> outside <avg> <p99>
 *     ncmpd's own time, the DMI call's wait for ncmpd's DMI client, the
 *     exchange with the plugin less D (the stub, its host and the
 *     loopback), and what lay outside ncmpd (this client, the kernel, the
 *     wait for a server thread): together the overhead.
 *
 *   ncmp-bench-data provmns --url BASE [--method GET|PATCH] (as pt)
 *     ProvMnS reads (GET) or patches (PATCH, NCMP's k6 body, one replace
 *     item) of /ProvMnS/v1<alternate id>, the path not encoded. BASE is
 *     ncmpd, or the DMI stub itself for the raw round trip (same path).
 *     Prints the line of pt, starting "provmns".
 *
 *   ncmp-bench-data policy --url BASE (as pt, D = 0)
 *     Permission requests straight to a policy executor
 *     (POST BASE/operation-permission/v1/permissions, one update
 *     operation as a ProvMnS patch asks for): the round trip a policy
 *     check cannot go below. Prints the line of pt, starting "policy".
 *
 *   ncmp-bench-data batch --url BASE --bootstrap B --topic T [--handles N]
 *       [--concurrency C] [--seconds S]
 *     Legacy batch reads of 200 distinct alternate ids each, as fast as
 *     they are accepted (C in flight), for S seconds, while counting the
 *     events arriving on T (read from its end). Prints:
 *       batch <requests> ok <ok> handles <n> events <e> events_per_s <r> window <s>
 *     counting the events that arrived from the first request until S
 *     seconds later.
 *
 *   ncmp-bench-data datajob --url BASE [--ops N] [--handles H]
 *       [--rate R | --every S | --concurrency C] [--seconds S] [--variants V]
 *     NCMP's KPI write data jobs (bench_datajob.h): POST
 *     /do-not-use/dataJobs/<id>/write with a body of N operations on
 *     alternate ids among H from the K-th on (--first), a fresh job id each. V bodies (1 by
 *     default; each with its own draw, the first one that of
 *     BENCH_DATAJOB_SEED) are made once, before the clock starts, and sent
 *     in turn. --every S is --rate 1/S. A job counts as ok, as in NCMP's
 *     suite, when the answer is 200 with a JSON array of one sub-job (one
 *     DMI) that has its subJobId. Prints one line:
 *       datajob <n> ok <ok> jobs_per_s <r> ops_per_s <r> avg <ms> p50 <ms>
 *       p99 <ms> max <ms> body_bytes <average>
 *     where a job's time is k6's timings.duration (the request's time
 *     without its connect time: sending the body, waiting, receiving) and
 *     the rates are of ok jobs over the run's wall time.
 *
 *   ncmp-bench-data search --url BASE --kind id|full [--filter F]
 *       [--expect N] (as pt, D = 0)
 *     NCMP's KPI searches: POST /ncmp/v1/ch/id-searches?outputAlternateId=
 *     true (id) or /ncmp/v1/ch/searches (full), the five filters of NCMP's
 *     suite (none, module, property, cpspath, trust) in turn, or only
 *     filter F. As NCMP's suite checks it, an answer is ok only when it is
 *     a 200 whose JSON array holds N entries (default: --handles; every
 *     filter matches every handle of the reference workload; -1: any
 *     number, for an inventory that moves, as in `./run chaos`); another
 *     200 counts as failed. The entries are counted as the answer streams in,
 *     without keeping it.
 *
 * Every mode also takes:
 *   --timeout-s T   a request without an answer after T s counts as a
 *                   timeout (60 s; data jobs 600 s)
 *   --first K       pt, provmns and datajob: the handles are the
 *                   reference workload's K..K+N-1 (1)
 *   --start-ms MS   with --rate: the first request leaves MS after the
 *                   start (k6's startTime), the run still ends S s after it
 *   --ramp-ms MS    with --concurrency: the C clients start one after the
 *                   other, evenly over the first MS (client i at i*MS/C),
 *                   instead of all at once. Against a server with a fixed
 *                   delay D, clients started together stay together: every
 *                   D all C requests arrive within a few ms. With MS = D
 *                   they arrive spread over D, as C clients that did not
 *                   start in the same millisecond would.
 *   --report FILE   write the run as JSON (for `./run bench overload`):
 *                   requests sent, ok (2xx), shed (503 or 429: refused for
 *                   load; shed_without_retry_after those without the
 *                   header), failed (other statuses), timeouts, errors (no
 *                   answer for another reason; first_error says what the
 *                   first of them met), the overheads of the ok
 *                   answers, the client's own CPU time, and `timeline`: the
 *                   same counts, the median and p99 overhead and the sum
 *                   of the overheads (sum_ms, for averages over longer
 *                   spans) of each second of the run (by the second the
 *                   answer came in). batch adds the events counted
 *                   (events, window_s).
 *                   With --report the exit status is 0 whatever the
 *                   answers were: the report says.
 */
#include <curl/curl.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_datajob.h"
#include "bench_usage.h"
#include "ncmp_buf.h"
#include "ncmp_curl_loop.h"
#include "ncmp_err.h"
#include "ncmp_json.h"
#include "ncmp_kafka.h"

#define MAX_INFLIGHT 4096
#define ALT_FMT                                                                                    \
    "%%2FSubNetwork%%3DEurope%%2FSubNetwork%%3DIreland%%2FMeContext%%3DMyRadioNode%ld"             \
    "%%2FManagedElement%%3DMyManagedElement%ld"
#define READ_PATH                                                                                  \
    "/data/ds/"                                                                                    \
    "ncmp-datastore:passthrough-operational?resourceIdentifier=ManagedElement%3DNRNode1%"          \
    "2FGNBDUFunction%3D1&include-descendants=true"
#define WRITE_PATH                                                                                 \
    "/data/ds/"                                                                                    \
    "ncmp-datastore:passthrough-running?resourceIdentifier=ManagedElement%3DNRNode1%"              \
    "2FGNBDUFunction%3D1"
#define WRITE_BODY "{\"id\":\"123\",\"attributes\":{\"userLabel\":\"test\"}}"
#define FDN_FMT                                                                                    \
    "/SubNetwork=Europe/SubNetwork=Ireland/MeContext=MyRadioNode%ld"                               \
    "/ManagedElement=MyManagedElement%ld"
/* NCMP's k6 ProvMnS patch (provmns-crud.js) */
#define PATCH_BODY                                                                                 \
    "[{\"op\":\"replace\",\"path\":\"/parent=id1/child=id2/grandchild=id3#/attributes/plmnId/"     \
    "mcc\",\"value\":\"1234\"}]"
/* what a policy check of that patch asks (policy executor API, cm-legacy) */
#define POLICY_FMT                                                                                 \
    "{\"permissionId\":\"bench-%ld\",\"changeRequestFormat\":\"cm-legacy\",\"operations\":[{"      \
    "\"operation\":\"update\",\"entityHandleId\":\"ch-%ld\",\"resourceIdentifier\":"               \
    "\"/parent=id1/child=id2/grandchild=id3\",\"targetIdentifier\":\"" FDN_FMT "\","               \
    "\"changeRequest\":{\"grandchild\":[{\"id\":\"id3\",\"attributes\":{\"plmnId\":{\"mcc\":"      \
    "\"1234\"}}}]}}]}"

/* NCMP's KPI search bodies (k6-tests/ncmp/common/search-base.js): every
 * filter matches every handle of the reference workload */
static const char usage[] =
    "usage: ncmp-bench-data MODE --url BASE [options]\n"
    "The load client of ./run bench data, provmns, datajobs, kpi and overload. MODE:\n"
    "  pt        pass-through reads or writes [--method GET|POST] [--handles N]\n"
    "            [--rate R | --concurrency C] [--seconds S] [--delay-ms D]\n"
    "  provmns   ProvMnS reads or patches [--method GET|PATCH] (options as pt)\n"
    "  policy    permission requests to a policy executor (options as pt)\n"
    "  batch     legacy batch reads --bootstrap B --topic T [--handles N]\n"
    "            [--concurrency C] [--seconds S]\n"
    "  datajob   write data jobs [--ops N] [--handles H] [--rate R | --every S |\n"
    "            --concurrency C] [--seconds S] [--variants V]\n"
    "  search    NCMP's KPI searches --kind id|full [--filter F] [--expect N]\n"
    "Every mode: [--timeout-s T] [--first K] [--start-ms MS] [--ramp-ms MS]\n"
    "[--report FILE]. The head of tests/bench/ncmp_bench_data.c says what each\n"
    "prints.\n";

static const char *const search_bodies[] = {
    "{\"cmHandleQueryParameters\":[]}",
    "{\"cmHandleQueryParameters\":[{\"conditionName\":\"hasAllModules\",\"conditionParameters\":"
    "[{\"moduleName\":\"module100\"}]}]}",
    "{\"cmHandleQueryParameters\":[{\"conditionName\":\"hasAllProperties\",\"conditionParameters\""
    ":[{\"systemName\":\"ncmp\"}]}]}",
    "{\"cmHandleQueryParameters\":[{\"conditionName\":\"cmHandleWithCpsPath\",\"conditionParamete"
    "rs\":[{\"cpsPath\":\"//state[@cm-handle-state='READY']\"}]}]}",
    "{\"cmHandleQueryParameters\":[{\"conditionName\":\"cmHandleWithTrustLevel\",\"conditionParam"
    "eters\":[{\"trustLevel\":\"COMPLETE\"}]}]}",
};

static const char *const search_filters[] = {"none", "module", "property", "cpspath", "trust"};
_Static_assert(sizeof(search_filters) == sizeof(search_bodies), "a name for every search body");

/* The entries of a JSON array answer, counted as it streams in: commas
 * and a first value at depth 1, outside strings. -1 once it is not an
 * array. */
typedef struct array_count {
    long n;
    int depth, in_string, escaped, seen_value;
} array_count;

static size_t count_entries(char *p, size_t size, size_t n, void *arg)
{
    array_count *c = arg;

    for (size_t i = 0; i < size * n && c->n >= 0; i++) {
        char ch = p[i];
        if (c->in_string) {
            if (c->escaped)
                c->escaped = 0;
            else if (ch == '\\')
                c->escaped = 1;
            else if (ch == '"')
                c->in_string = 0;
            continue;
        }
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        if (c->depth == 0) {
            if (ch != '[' || c->seen_value) {
                c->n = -1; /* not an array, or something after it */
                break;
            }
            c->depth = 1;
            continue;
        }
        if (c->depth == 1 && ch == ']') {
            c->depth = 0;
            c->seen_value = 1; /* closed: nothing may follow */
            continue;
        }
        if (c->depth == 1 && !c->seen_value) {
            c->seen_value = 1;
            c->n = 1;
        }
        if (ch == '"')
            c->in_string = 1;
        else if (ch == '[' || ch == '{')
            c->depth++;
        else if (ch == ']' || ch == '}')
            c->depth--;
        else if (ch == ',' && c->depth == 1)
            c->n++;
    }
    return size * n;
}

typedef enum mode {
    MODE_PT,
    MODE_PROVMNS,
    MODE_POLICY,
    MODE_BATCH,
    MODE_DATAJOB,
    MODE_SEARCH
} mode;
static const char *const mode_names[] = {"pt", "provmns", "policy", "batch", "datajob", "search"};

typedef struct opts {
    mode mode;
    const char *url, *method, *bootstrap, *topic, *kind, *report;
    long handles, concurrency, seconds, delay_ms, ops, variants, timeout_s, start_ms, ramp_ms;
    long first;  /* pt, provmns, datajob: the handles are ch-first.. (1) */
    int filter;  /* search: index in search_bodies, -1: all in turn */
    long expect; /* search: entries an ok answer holds (0: handles) */
    double rate;
} opts;

/* How an answered (or unanswered) request counts. */
typedef enum outcome { OUT_OK, OUT_SHED, OUT_FAILED, OUT_TIMEOUT, OUT_ERROR, OUT_N } outcome;
static const char *const outcome_names[] = {"ok", "shed", "failed", "timeouts", "errors"};

/* One finished request, for the report's timeline. */
typedef struct done_rec {
    float t;   /* seconds from the start of the run to the answer */
    float lat; /* overhead in ms (ok answers) */
    unsigned char out;
} done_rec;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t discard(char *p, size_t size, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return size * n;
}

static unsigned long long rng_state = 88172645463325252ULL;
static long pick(long n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (long)(rng_state % (unsigned long long)n) + 1;
}

/* --- the HTTP side ------------------------------------------------------- */

typedef struct load {
    const opts *o;
    CURLM *multi;
    ncmp_curl_loop loop; /* drives multi */
    struct curl_slist *headers, *patch_headers;
    double *lat; /* overheads in ms, of the 2xx answers */
    size_t nlat, caplat;
    double *hops[4]; /* of the 2xx answers with Server-Timing: HOP_* */
    size_t nhops, caphops;
    long sent, done, ok;
    long inflight;
    long counts[OUT_N];
    long shed_without_retry_after;
    char first_error[160]; /* what the first request without an answer met */
    done_rec *recs;        /* with --report */
    size_t nrecs, caprecs;
    double t0;
    char batch_body[64 * 1024]; /* reused by batch requests (copied by curl) */
    ncmp_buf *jobs;             /* datajob: the bodies, sent in turn (not copied) */
    size_t njobs;
    double job_bytes; /* their average size */
} load;

static size_t keep(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* NCMP's suite's check: a JSON array of one sub-job (one DMI), here with
 * its subJobId. */
static int job_answer_ok(const ncmp_buf *answer)
{
    json_object *doc = NULL, *sub, *id;
    ncmp_err err;
    int ok;

    if (!answer->data || ncmp_json_parse(answer->data, answer->len, &doc, &err) != 0)
        return 0;
    ok = json_object_is_type(doc, json_type_array) && json_object_array_length(doc) == 1 &&
         (sub = json_object_array_get_idx(doc, 0)) != NULL &&
         json_object_object_get_ex(sub, "subJobId", &id) &&
         json_object_is_type(id, json_type_string);
    json_object_put(doc);
    return ok;
}

static void make_jobs(load *l)
{
    unsigned long long seed = BENCH_DATAJOB_SEED;
    double sum = 0;

    l->njobs = (size_t)l->o->variants;
    l->jobs = ncmp_xcalloc(l->njobs, sizeof(*l->jobs));
    for (size_t i = 0; i < l->njobs; i++) {
        bench_datajob_body(&l->jobs[i], l->o->ops, l->o->first, l->o->handles, &seed);
        sum += (double)l->jobs[i].len;
    }
    l->job_bytes = sum / (double)l->njobs;
}

static void batch_body(load *l)
{
    long ids[200];
    size_t off = 0;
    char *b = l->batch_body;

    off += (size_t)snprintf(b + off, sizeof(l->batch_body) - off,
                            "{\"operations\":[{\"resourceIdentifier\":\"ManagedElement=NRNode1/"
                            "GNBDUFunction=1\",\"targetIds\":[");
    for (int i = 0; i < 200; i++) {
        long id;
        int dup;
        do {
            id = pick(l->o->handles);
            dup = 0;
            for (int k = 0; k < i && !dup; k++)
                dup = ids[k] == id;
        } while (dup && l->o->handles >= 200);
        ids[i] = id;
        off += (size_t)snprintf(b + off, sizeof(l->batch_body) - off,
                                "%s\"/SubNetwork=Europe/SubNetwork=Ireland/MeContext=MyRadioNode%ld"
                                "/ManagedElement=MyManagedElement%ld\"",
                                i ? "," : "", id, id);
    }
    snprintf(b + off, sizeof(l->batch_body) - off,
             "],"
             "\"datastore\":\"ncmp-datastore:passthrough-operational\","
             "\"options\":\"(fields=NRCellDU/attributes/cellLocalId)\",\"operationId\":\"12\","
             "\"operation\":\"read\"}]}");
}

static void start_one(load *l)
{
    CURL *e = curl_easy_init();
    char url[1024];
    const opts *o = l->o;
    int write = strcmp(o->method, "GET") != 0;
    long id = o->first - 1 + pick(o->handles);

    switch (o->mode) {
    case MODE_DATAJOB: {
        const ncmp_buf *body = &l->jobs[(size_t)l->sent % l->njobs];
        snprintf(url, sizeof(url), "%s/do-not-use/dataJobs/bench-%ld-%ld/write", o->url,
                 (long)getpid(), l->sent + 1);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body->data);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
        break;
    }
    case MODE_BATCH:
        snprintf(url, sizeof(url), "%s/ncmp/v1/data?topic=%s", o->url, o->topic);
        batch_body(l);
        curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, l->batch_body);
        break;
    case MODE_PT:
        snprintf(url, sizeof(url), "%s/ncmp/v1/ch/" ALT_FMT "%s", o->url, id, id,
                 write ? WRITE_PATH : READ_PATH);
        if (write)
            curl_easy_setopt(e, CURLOPT_POSTFIELDS, WRITE_BODY);
        break;
    case MODE_PROVMNS:
        snprintf(url, sizeof(url), "%s/ProvMnS/v1" FDN_FMT, o->url, id, id);
        if (write) {
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PATCH");
            curl_easy_setopt(e, CURLOPT_POSTFIELDS, PATCH_BODY);
        }
        break;
    case MODE_SEARCH:
        snprintf(url, sizeof(url), "%s/ncmp/v1/ch/%s", o->url,
                 strcmp(o->kind, "id") == 0 ? "id-searches?outputAlternateId=true" : "searches");
        curl_easy_setopt(
            e, CURLOPT_POSTFIELDS,
            search_bodies[o->filter >= 0 ? (size_t)o->filter
                                         : (size_t)l->sent %
                                               (sizeof(search_bodies) / sizeof(search_bodies[0]))]);
        break;
    case MODE_POLICY: {
        char body[1024];
        snprintf(url, sizeof(url), "%s/operation-permission/v1/permissions", o->url);
        snprintf(body, sizeof(body), POLICY_FMT, l->sent, id, id, id);
        curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, body);
        break;
    }
    }
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER,
                     o->mode == MODE_PROVMNS && write ? l->patch_headers : l->headers);
    if (o->mode == MODE_SEARCH) {
        /* the answer's entries are counted (finish) */
        array_count *c = ncmp_xcalloc(1, sizeof(*c));
        curl_easy_setopt(e, CURLOPT_PRIVATE, c);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, count_entries);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
        curl_easy_setopt(e, CURLOPT_TIMEOUT, o->timeout_s ? o->timeout_s : 60L);
    } else if (l->jobs) {
        /* the answer is checked (finish) */
        ncmp_buf *answer = ncmp_xcalloc(1, sizeof(*answer));
        curl_easy_setopt(e, CURLOPT_PRIVATE, answer);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, keep);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, answer);
        curl_easy_setopt(e, CURLOPT_TIMEOUT, o->timeout_s ? o->timeout_s : 600L);
    } else {
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(e, CURLOPT_TIMEOUT, o->timeout_s ? o->timeout_s : 60L);
    }
    curl_multi_add_handle(l->multi, e);
    l->sent++;
    l->inflight++;
}

static void record(load *l, outcome out, double lat)
{
    l->counts[out]++;
    if (!l->o->report)
        return;
    if (l->nrecs == l->caprecs) {
        l->caprecs = l->caprecs ? l->caprecs * 2 : 4096;
        l->recs = realloc(l->recs, l->caprecs * sizeof(*l->recs));
    }
    l->recs[l->nrecs++] = (done_rec){(float)(now_s() - l->t0), (float)lat, (unsigned char)out};
}

/* The overhead of an answer split by hop (see the top of the file). */
enum { HOP_NCMPD, HOP_DMI_WAIT, HOP_DMI_BEYOND, HOP_OUTSIDE };
static const char *const hop_names[] = {"ncmpd", "dmi_wait", "dmi_beyond_delay", "outside"};

/* The value of `name;dur=` in a Server-Timing header, or -1. */
static double timing_of(const char *header, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = header; (p = strstr(p, name)); p += n)
        if ((p == header || p[-1] == ' ' || p[-1] == ',') && strncmp(p + n, ";dur=", 5) == 0)
            return strtod(p + n + 5, NULL);
    return -1;
}

static void hops_add(load *l, CURL *e, double took_ms)
{
    struct curl_header *h = NULL;
    double own, wait, dmi;

    if (curl_easy_header(e, "Server-Timing", 0, CURLH_HEADER, -1, &h) != CURLHE_OK)
        return;
    own = timing_of(h->value, "ncmpd");
    wait = timing_of(h->value, "dmi-wait");
    dmi = timing_of(h->value, "dmi");
    if (own < 0 || wait < 0 || dmi < 0)
        return;
    if (l->nhops == l->caphops) {
        l->caphops = l->caphops ? l->caphops * 2 : 4096;
        for (int k = 0; k < 4; k++)
            l->hops[k] = realloc(l->hops[k], l->caphops * sizeof(double));
    }
    l->hops[HOP_NCMPD][l->nhops] = own;
    l->hops[HOP_DMI_WAIT][l->nhops] = wait;
    l->hops[HOP_DMI_BEYOND][l->nhops] = dmi - (double)l->o->delay_ms;
    l->hops[HOP_OUTSIDE][l->nhops] = took_ms - own - wait - dmi;
    l->nhops++;
}

static void finish(load *l, CURL *e, CURLcode result)
{
    long status = 0;
    curl_off_t total = 0, connect = 0;
    struct curl_header *retry = NULL;
    outcome out;

    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(e, CURLINFO_TOTAL_TIME_T, &total);
    curl_easy_getinfo(e, CURLINFO_CONNECT_TIME_T, &connect);
    l->done++;
    l->inflight--;
    if (l->jobs) {
        ncmp_buf *answer = NULL;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&answer);
        if (status != 200 || !job_answer_ok(answer)) {
            if (l->done - l->ok <= 5 && !l->o->report)
                fprintf(stderr, "ncmp-bench-data: data job: HTTP %ld: %.300s\n", status,
                        answer->data ? answer->data : "");
            if (status == 200)
                status = 0; /* a 200 that is not NCMP's answer: failed */
        }
        ncmp_buf_free(answer);
        free(answer);
    }
    if (l->o->mode == MODE_SEARCH) {
        array_count *c = NULL;
        long want = l->o->expect ? l->o->expect : l->o->handles;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&c);
        if (status == 200 && ((want > 0 && c->n != want) || c->depth != 0)) {
            if (l->done - l->ok <= 5 && !l->o->report)
                fprintf(stderr, "ncmp-bench-data: search: %ld entries, %ld wanted\n", c->n, want);
            status = 0; /* a 200 that does not hold every handle: failed */
        }
        free(c);
    }
    if (result == CURLE_OPERATION_TIMEDOUT)
        out = OUT_TIMEOUT;
    else if (result != CURLE_OK) {
        out = OUT_ERROR;
        if (!l->first_error[0])
            snprintf(l->first_error, sizeof(l->first_error), "%.1f s: %s (curl %d)",
                     now_s() - l->t0, curl_easy_strerror(result), (int)result);
    } else if (status >= 200 && status < 300)
        out = OUT_OK;
    else if (status == 503 || status == 429)
        out = OUT_SHED;
    else
        out = OUT_FAILED;
    if (out == OUT_SHED &&
        curl_easy_header(e, "Retry-After", 0, CURLH_HEADER, -1, &retry) != CURLHE_OK)
        l->shed_without_retry_after++;
    if (out == OUT_OK) {
        double lat = (double)(total - connect) / 1000.0 - (double)l->o->delay_ms;
        hops_add(l, e, (double)(total - connect) / 1000.0);
        l->ok++;
        if (l->nlat == l->caplat) {
            l->caplat = l->caplat ? l->caplat * 2 : 4096;
            l->lat = realloc(l->lat, l->caplat * sizeof(*l->lat));
        }
        l->lat[l->nlat++] = lat;
        record(l, out, lat);
    } else {
        record(l, out, 0);
        if (!l->jobs && !l->o->report && l->done - l->ok <= 5)
            fprintf(stderr, "ncmp-bench-data: HTTP %ld (%s)\n", status, curl_easy_strerror(result));
    }
    curl_multi_remove_handle(l->multi, e);
    curl_easy_cleanup(e);
}

static void drain(load *l)
{
    CURLMsg *m;
    int left;

    while ((m = curl_multi_info_read(l->multi, &left)))
        if (m->msg == CURLMSG_DONE)
            finish(l, m->easy_handle, m->data.result);
}

/* The clients started `since` s into the run: all of them, or with
 * --ramp-ms client i from i * ramp / C on. */
static long clients_due(const opts *o, double since)
{
    double ms = since * 1000.0;

    return o->ramp_ms > 0 && ms < (double)o->ramp_ms
               ? (long)(ms * (double)o->concurrency / (double)o->ramp_ms) + 1
               : o->concurrency;
}

/* Run the load for o->seconds (then wait for what is in flight). */
static void run_load(load *l)
{
    const opts *o = l->o;
    double t0 = now_s(), end = t0 + (double)o->seconds;

    l->t0 = t0;

    for (;;) {
        double t = now_s();
        if (t < end) {
            if (o->rate > 0) {
                double since = t - t0 - (double)o->start_ms / 1000.0;
                while (since >= 0 && l->sent < (long)(since * o->rate) + 1 &&
                       l->inflight < MAX_INFLIGHT)
                    start_one(l);
            } else {
                while (l->inflight < clients_due(o, t - t0))
                    start_one(l);
            }
        } else if (l->inflight == 0) {
            break;
        }
        /* the sockets that are ready, not every transfer: this client's
         * cost per answer must not grow with the clients */
        ncmp_curl_loop_run(&l->loop,
                           o->rate > 0 || clients_due(o, t - t0) < o->concurrency ? 2 : 20);
        drain(l);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void load_init(load *l, const opts *o)
{
    ncmp_err err;

    memset(l, 0, sizeof(*l));
    l->o = o;
    l->multi = curl_multi_init();
    if (!l->multi || ncmp_curl_loop_init(&l->loop, l->multi, &err) != 0) {
        fprintf(stderr, "ncmp-bench-data: %s\n", l->multi ? err.msg : "curl_multi_init failed");
        exit(1);
    }
    curl_multi_setopt(l->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1000L);
    l->headers = curl_slist_append(NULL, "Content-Type: application/json");
    l->patch_headers = curl_slist_append(NULL, "Content-Type: application/json-patch+json");
    if (o->mode == MODE_DATAJOB) {
        /* as k6: no "Expect: 100-continue" before a large body */
        l->headers = curl_slist_append(l->headers, "Expect:");
        make_jobs(l);
    }
}

static void load_free(load *l)
{
    curl_slist_free_all(l->headers);
    curl_slist_free_all(l->patch_headers);
    curl_multi_cleanup(l->multi);
    ncmp_curl_loop_close(&l->loop);
    free(l->lat);
    for (int k = 0; k < 4; k++)
        free(l->hops[k]);
    free(l->recs);
    for (size_t i = 0; i < l->njobs; i++)
        ncmp_buf_free(&l->jobs[i]);
    free(l->jobs);
}

static double pct(const double *v, size_t n, double p)
{
    return n ? v[(size_t)((double)n * p) < n ? (size_t)((double)n * p) : n - 1] : 0;
}

/* --report: the run as JSON (see the top of the file). */
static int write_report(const load *l, double secs, const char *extra)
{
    const opts *o = l->o;
    FILE *f = fopen(o->report, "w");
    struct rusage ru;
    long nsec = (long)secs + 1;
    double *lat = NULL;
    double sum = 0;

    if (!f) {
        fprintf(stderr, "ncmp-bench-data: cannot write %s\n", o->report);
        return 1;
    }
    getrusage(RUSAGE_SELF, &ru);
    for (size_t i = 0; i < l->nlat; i++)
        sum += l->lat[i];
    fprintf(f,
            "{\"mode\": \"%s\", \"method\": \"%s\", \"rate\": %.3f, \"seconds\": %.3f, "
            "\"sent\": %ld",
            mode_names[o->mode], o->mode == MODE_SEARCH ? o->kind : o->method, o->rate, secs,
            l->sent);
    for (int k = 0; k < OUT_N; k++)
        fprintf(f, ", \"%s\": %ld", outcome_names[k], l->counts[k]);
    fprintf(f,
            ", \"shed_without_retry_after\": %ld, \"first_error\": \"%s\", \"avg_ms\": %.3f, "
            "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, \"client_cpu_s\": %.3f, "
            "\"timeline\": [",
            l->shed_without_retry_after, l->first_error, l->nlat ? sum / (double)l->nlat : 0,
            pct(l->lat, l->nlat, 0.5), pct(l->lat, l->nlat, 0.99),
            l->nlat ? l->lat[l->nlat - 1] : 0,
            (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6);
    lat = ncmp_xcalloc(l->nrecs + 1, sizeof(*lat));
    for (long sec = 0; sec < nsec; sec++) {
        long c[OUT_N] = {0};
        size_t n = 0;
        double sec_sum = 0;
        for (size_t i = 0; i < l->nrecs; i++) {
            if ((long)l->recs[i].t != sec)
                continue;
            c[l->recs[i].out]++;
            if (l->recs[i].out == OUT_OK) {
                lat[n++] = l->recs[i].lat;
                sec_sum += l->recs[i].lat;
            }
        }
        qsort(lat, n, sizeof(*lat), cmp_double);
        fprintf(f, "%s{\"t\": %ld", sec ? ", " : "", sec);
        for (int k = 0; k < OUT_N; k++)
            fprintf(f, ", \"%s\": %ld", outcome_names[k], c[k]);
        fprintf(f, ", \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"sum_ms\": %.3f}", pct(lat, n, 0.5),
                pct(lat, n, 0.99), sec_sum);
    }
    fprintf(f, "]%s%s}\n", extra ? ", " : "", extra ? extra : "");
    free(lat);
    return fclose(f) == 0 ? 0 : 1;
}

static int cmd_pt(const opts *o)
{
    load l;
    double t0, secs, sum = 0;

    load_init(&l, o);
    t0 = now_s();
    run_load(&l);
    secs = now_s() - t0;
    if (l.nlat) /* no answer at all: no array */
        qsort(l.lat, l.nlat, sizeof(double), cmp_double);
    for (size_t i = 0; i < l.nlat; i++)
        sum += l.lat[i];
    if (l.jobs)
        printf("datajob %ld ok %ld jobs_per_s %.3f ops_per_s %.0f", l.done, l.ok,
               (double)l.ok / secs, (double)l.ok * (double)(o->ops / 2 * 2) / secs);
    else
        printf("%s %ld ok %ld rps %.1f", mode_names[o->mode], l.done, l.ok, (double)l.ok / secs);
    printf(" avg %.3f p50 %.3f p99 %.3f max %.3f", l.nlat ? sum / (double)l.nlat : 0,
           l.nlat ? l.lat[l.nlat / 2] : 0, l.nlat ? l.lat[(size_t)((double)l.nlat * 0.99)] : 0,
           l.nlat ? l.lat[l.nlat - 1] : 0);
    if (l.jobs)
        printf(" body_bytes %.0f", l.job_bytes);
    if (l.nhops) {
        printf(" hops %zu", l.nhops);
        for (int k = 0; k < 4; k++) {
            double hsum = 0;
            for (size_t i = 0; i < l.nhops; i++)
                hsum += l.hops[k][i];
            qsort(l.hops[k], l.nhops, sizeof(double), cmp_double);
            printf(" %s %.3f %.3f", hop_names[k], hsum / (double)l.nhops,
                   pct(l.hops[k], l.nhops, 0.99));
        }
    }
    printf("\n");
    if (o->report) {
        int rc = write_report(&l, secs, NULL);
        load_free(&l);
        return rc;
    }
    load_free(&l);
    return l.ok == l.done && l.done > 0 ? 0 : 1;
}

/* --- the Kafka side of batch --------------------------------------------- */

typedef struct counter {
    const opts *o;
    rd_kafka_t *rk;
    atomic_int stop;
    atomic_int ready;
    atomic_long in_window;
    atomic_long total;
    _Atomic double window_start, window_end;
} counter;

static void *count_events(void *arg)
{
    counter *c = arg;

    while (!atomic_load(&c->stop)) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c->rk, 100);
        double t = now_s();
        if (!m)
            continue;
        if (!m->err) {
            double ws = atomic_load(&c->window_start), we = atomic_load(&c->window_end);
            atomic_fetch_add(&c->total, 1);
            if (ws > 0 && t >= ws && t <= we)
                atomic_fetch_add(&c->in_window, 1);
        }
        rd_kafka_message_destroy(m);
    }
    return NULL;
}

/* Read every partition of the topic from its end now. */
static int counter_start(counter *c, pthread_t *thread)
{
    ncmp_kafka_opts kopts = {0};
    ncmp_err err;

    kopts.bootstrap_servers = c->o->bootstrap;
    if (ncmp_kafka_tail_reader_new(&c->rk, &kopts, "ncmp-bench-data", NULL, c->o->topic, 10000,
                                   &err) != 0) {
        fprintf(stderr, "ncmp-bench-data: %s\n", err.msg);
        return -1;
    }
    return pthread_create(thread, NULL, count_events, c);
}

static int cmd_batch(const opts *o)
{
    counter c;
    pthread_t thread;
    load l;
    double t0;

    memset(&c, 0, sizeof(c));
    c.o = o;
    if (counter_start(&c, &thread) != 0)
        return 1;
    load_init(&l, o);
    t0 = now_s();
    atomic_store(&c.window_end, t0 + (double)o->seconds);
    atomic_store(&c.window_start, t0);
    run_load(&l);
    /* let the window close */
    while (now_s() < t0 + (double)o->seconds + 0.2)
        usleep(50000);
    atomic_store(&c.stop, 1);
    pthread_join(thread, NULL);
    printf("batch %ld ok %ld handles %ld events %ld events_per_s %.0f window %ld\n", l.done, l.ok,
           l.ok * 200, atomic_load(&c.in_window),
           (double)atomic_load(&c.in_window) / (double)o->seconds, o->seconds);
    ncmp_kafka_reader_close(c.rk);
    if (o->report) {
        char extra[128];
        int rc;
        snprintf(extra, sizeof(extra), "\"events\": %ld, \"window_s\": %ld",
                 atomic_load(&c.in_window), o->seconds);
        rc = write_report(&l, now_s() - t0, extra);
        load_free(&l);
        return rc;
    }
    load_free(&l);
    return l.ok > 0 ? 0 : 1;
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){.method = "GET",
                .handles = 1000,
                .concurrency = 1,
                .seconds = 10,
                .ops = 100,
                .variants = 1,
                .first = 1,
                .filter = -1};
    if (argc < 2)
        return -1;
    for (size_t m = 0;; m++) {
        if (m == sizeof(mode_names) / sizeof(mode_names[0]))
            return -1;
        if (strcmp(argv[1], mode_names[m]) == 0) {
            o->mode = (mode)m;
            break;
        }
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--url") == 0)
            o->url = v;
        else if (strcmp(k, "--method") == 0)
            o->method = v;
        else if (strcmp(k, "--bootstrap") == 0)
            o->bootstrap = v;
        else if (strcmp(k, "--topic") == 0)
            o->topic = v;
        else if (strcmp(k, "--handles") == 0)
            o->handles = atol(v);
        else if (strcmp(k, "--concurrency") == 0)
            o->concurrency = atol(v);
        else if (strcmp(k, "--seconds") == 0)
            o->seconds = atol(v);
        else if (strcmp(k, "--delay-ms") == 0)
            o->delay_ms = atol(v);
        else if (strcmp(k, "--rate") == 0)
            o->rate = atof(v);
        else if (strcmp(k, "--every") == 0)
            o->rate = atof(v) > 0 ? 1.0 / atof(v) : -1;
        else if (strcmp(k, "--ops") == 0)
            o->ops = atol(v);
        else if (strcmp(k, "--variants") == 0)
            o->variants = atol(v);
        else if (strcmp(k, "--kind") == 0)
            o->kind = v;
        else if (strcmp(k, "--report") == 0)
            o->report = v;
        else if (strcmp(k, "--first") == 0)
            o->first = atol(v);
        else if (strcmp(k, "--start-ms") == 0)
            o->start_ms = atol(v);
        else if (strcmp(k, "--ramp-ms") == 0)
            o->ramp_ms = atol(v);
        else if (strcmp(k, "--expect") == 0)
            o->expect = atol(v);
        else if (strcmp(k, "--filter") == 0) {
            o->filter = -2;
            for (int f = 0; f < (int)(sizeof(search_filters) / sizeof(search_filters[0])); f++)
                if (strcmp(v, search_filters[f]) == 0)
                    o->filter = f;
            if (o->filter == -2)
                return -1;
        } else if (strcmp(k, "--timeout-s") == 0)
            o->timeout_s = atol(v);
        else
            return -1;
    }
    if (!o->url || o->handles < 1 || o->seconds < 1 || o->concurrency < 1 || o->rate < 0 ||
        o->ops < 2 || o->variants < 1)
        return -1;
    if (o->mode == MODE_PT && strcmp(o->method, "GET") != 0 && strcmp(o->method, "POST") != 0)
        return -1;
    if (o->mode == MODE_PROVMNS && strcmp(o->method, "GET") != 0 && strcmp(o->method, "PATCH") != 0)
        return -1;
    if (o->mode == MODE_SEARCH &&
        (!o->kind || (strcmp(o->kind, "id") != 0 && strcmp(o->kind, "full") != 0)))
        return -1;
    if (o->timeout_s < 0 || o->start_ms < 0 || o->ramp_ms < 0 || o->expect < -1 || o->first < 1)
        return -1;
    return o->mode == MODE_BATCH && (!o->bootstrap || !o->topic) ? -1 : 0;
}

int main(int argc, char **argv)
{
    opts o;
    int rc;

    if (bench_help_asked(argc, argv) || parse(argc, argv, &o) != 0)
        return bench_usage(usage, bench_help_asked(argc, argv));
    curl_global_init(CURL_GLOBAL_ALL);
    rc = o.mode == MODE_BATCH ? cmd_batch(&o) : cmd_pt(&o);
    curl_global_cleanup();
    return rc;
}
