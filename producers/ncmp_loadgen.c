/*
 * ncmp-loadgen: replay NCMP's reference registration workload as Kafka
 * events (the CPS k6 tests' k6-tests/ncmp/common/utils.js and
 * cmhandle-crud.js: 50,000 handles in 25 requests of 2,000).
 *
 *   ncmp-loadgen register      N handles ch-K..ch-(K+N-1) in requests of B
 *   ncmp-loadgen deregister    the matching removals
 *
 * Each request is one record on the registration topic: a CloudEvent in
 * binary mode (ce_* headers), keyed by the DMI plugin URL so that all
 * requests of one DMI land on one partition and keep their order, whose
 * value is NCMP's DmiPluginRegistration body, compact JSON.
 *
 * The bodies are reproducible (a seeded PRNG draws the network segment);
 * the ce_id of each request is a fresh UUID, and --print-ids writes
 * "<ce_id> <handles>" per request so that the outcome events (keyed by the
 * request's ce_id) can be matched. Exit status 0 only when the broker
 * acknowledged every record.
 *
 * With --rest URL the same bodies go to ncmpd's REST door instead, as
 * NCMP's k6 setup and teardown send them: POST URL/ncmpInventory/v1/ch,
 * one request at a time, each answered before the next. A line on stdout
 * says what came of them:
 *   rest <requests> ok <ok> handles <n> seconds <s>
 * ok: answered 200 (registration, as k6 checks it) or with any status
 * below 400 (deregistration: k6's error_code 0); handles: those of the ok
 * requests; seconds: from the first request to the last answer. Exit
 * status 0 only when every request was ok.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncmp_buf.h"
#include "ncmp_kafka.h"
#include "ncmp_cloudevent.h"
#include "ncmp_log.h"

#define PROG "ncmp-loadgen"

/* How long to wait for the broker to acknowledge the last record. */
#define LOADGEN_ACK_TIMEOUT_S 60

/* How long to wait for the broker before the first record. */
#define LOADGEN_CONNECT_TIMEOUT_MS 10000

/* How long to wait for a missing topic to be created. */
#define LOADGEN_TOPIC_WAIT_S 3

#define LOADGEN_MAX_PROPS 32

static const char usage[] =
    "Usage: " PROG " register|deregister [options]\n"
    "\n"
    "Publish NCMP's reference registration workload (or the matching\n"
    "deregistration) as CloudEvents, one record per request.\n"
    "\n"
    "  -b, --bootstrap HOST:PORT  Kafka brokers (default: $NCMP_KAFKA_BOOTSTRAP_SERVERS\n"
    "                             or 127.0.0.1:9092)\n"
    "  -t, --topic TOPIC          topic (default: ncmp-dmi-registration)\n"
    "      --handles N            number of CM handles (default: 50000)\n"
    "      --batch B              CM handles per request (default: 2000)\n"
    "      --first K              number of the first handle, ch-K (default: 1)\n"
    "      --dmi URL              DMI plugin URL, also the record key\n"
    "                             (default: http://ncmp-dmi-plugin-demo-and-csit-stub:8092)\n"
    "      --seed S               seed of the random network segments (default: 1)\n"
    "      --print-ids FILE       write \"<ce_id> <handles>\" per request to FILE (- = stdout)\n"
    "      --rest URL             POST the requests to URL/ncmpInventory/v1/ch one at a\n"
    "                             time instead (NCMP's k6 setup); prints\n"
    "                             \"rest <requests> ok <ok> handles <n> seconds <s>\"\n"
    "  -X NAME=VALUE              set a librdkafka property (a kafka. prefix is dropped)\n"
    "                             or log.level (repeatable), e.g. -X debug=msg\n"
    "                             -X log.level=debug\n"
    "  -q, --quiet                no progress line, no summary\n"
    "  -h, --help                 this text\n";

typedef enum loadgen_mode {
    LOADGEN_REGISTER,
    LOADGEN_DEREGISTER,
} loadgen_mode;

/* What the command line asked for. Strings are borrowed from argv or the
 * environment. */
typedef struct loadgen_opts {
    loadgen_mode mode;
    const char *bootstrap;
    const char *topic;
    const char *dmi;
    const char *ids_path;
    const char *rest; /* --rest URL: POST instead of publishing */
    long handles;
    long batch;
    long first;
    uint64_t seed;
    int quiet;
    const char *props[LOADGEN_MAX_PROPS]; /* -X NAME=VALUE */
    int nprops;
} loadgen_opts;

/* splitmix64: small, fast and good enough for picking a segment; the
 * state lives here, not in a global, so a run is a function of its seed. */
typedef struct loadgen_rng {
    uint64_t state;
} loadgen_rng;

static uint64_t loadgen_rng_next(loadgen_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Parse a whole decimal number within [min, max]; prints the error. */
static int loadgen_parse_long(const char *name, const char *text, long min, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max) {
        fprintf(stderr, PROG ": %s: '%s' is not a number from %ld to %ld\n", name, text, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

/* Fill *o from argv. Returns 0 to run, 1 after --help, 2 on a bad argument
 * (the error is printed). */
static int loadgen_opts_parse(loadgen_opts *o, int argc, char **argv)
{
    enum { OPT_HANDLES = 256, OPT_BATCH, OPT_FIRST, OPT_DMI, OPT_SEED, OPT_PRINT_IDS, OPT_REST };
    static const struct option longopts[] = {{"bootstrap", required_argument, 0, 'b'},
                                             {"topic", required_argument, 0, 't'},
                                             {"handles", required_argument, 0, OPT_HANDLES},
                                             {"batch", required_argument, 0, OPT_BATCH},
                                             {"first", required_argument, 0, OPT_FIRST},
                                             {"dmi", required_argument, 0, OPT_DMI},
                                             {"seed", required_argument, 0, OPT_SEED},
                                             {"print-ids", required_argument, 0, OPT_PRINT_IDS},
                                             {"rest", required_argument, 0, OPT_REST},
                                             {"quiet", no_argument, 0, 'q'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    const char *mode;
    char *end;
    int c;

    o->bootstrap = getenv("NCMP_KAFKA_BOOTSTRAP_SERVERS");
    o->topic = "ncmp-dmi-registration";
    o->dmi = "http://ncmp-dmi-plugin-demo-and-csit-stub:8092";
    o->ids_path = NULL;
    o->rest = NULL;
    o->handles = 50000;
    o->batch = 2000;
    o->first = 1;
    o->seed = 1;
    o->quiet = 0;
    o->nprops = 0;

    /* our own one-line messages instead of getopt's */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":b:t:X:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            o->bootstrap = optarg;
            break;
        case 't':
            o->topic = optarg;
            break;
        case OPT_HANDLES:
            if (loadgen_parse_long("--handles", optarg, 1, 100000000L, &o->handles) != 0)
                return 2;
            break;
        case OPT_BATCH:
            if (loadgen_parse_long("--batch", optarg, 1, 1000000L, &o->batch) != 0)
                return 2;
            break;
        case OPT_FIRST:
            if (loadgen_parse_long("--first", optarg, 1, 1000000000000L, &o->first) != 0)
                return 2;
            break;
        case OPT_DMI:
            o->dmi = optarg;
            break;
        case OPT_SEED:
            errno = 0;
            o->seed = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-') {
                fprintf(stderr, PROG ": --seed: '%s' is not a non-negative number\n", optarg);
                return 2;
            }
            break;
        case OPT_PRINT_IDS:
            o->ids_path = optarg;
            break;
        case OPT_REST:
            o->rest = optarg;
            break;
        case 'X':
            if (o->nprops == LOADGEN_MAX_PROPS || !strchr(optarg, '=') || optarg[0] == '=') {
                fprintf(stderr, PROG ": -X: bad or too many '%s' (NAME=VALUE)\n", optarg);
                return 2;
            }
            o->props[o->nprops++] = optarg;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            return 1;
        case ':':
            fprintf(stderr, PROG ": option '%s' needs a value (try --help)\n", argv[optind - 1]);
            return 2;
        default:
            /* a long option is always argv[optind - 1]; a short one may sit
             * inside a group such as -qx */
            if (strncmp(argv[optind - 1], "--", 2) == 0)
                fprintf(stderr, PROG ": bad option '%s' (try --help)\n", argv[optind - 1]);
            else
                fprintf(stderr, PROG ": unknown option '-%c' (try --help)\n", optopt);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, PROG ": missing mode: register or deregister (try --help)\n");
        return 2;
    }
    mode = argv[optind];
    if (strcmp(mode, "register") == 0) {
        o->mode = LOADGEN_REGISTER;
    } else if (strcmp(mode, "deregister") == 0) {
        o->mode = LOADGEN_DEREGISTER;
    } else {
        fprintf(stderr, PROG ": unknown mode '%s': use register or deregister\n", mode);
        return 2;
    }
    if (optind + 1 < argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind + 1]);
        return 2;
    }
    if (!o->bootstrap || !*o->bootstrap)
        o->bootstrap = "127.0.0.1:9092";
    if (!*o->topic || !*o->dmi || (o->ids_path && !*o->ids_path) || (o->rest && !*o->rest)) {
        fprintf(stderr, PROG ": --topic, --dmi, --print-ids and --rest must not be empty\n");
        return 2;
    }
    return 0;
}

static const char *const loadgen_tags[] = {"tagA", "tagB", "tagC", "tagD", "tagE"};

/* Body of a registration request of `count` handles numbered from `first`,
 * exactly as the k6 workload builds it (index = position in the request). */
static void loadgen_body_register(ncmp_buf *body, const char *dmi, long first, long count,
                                  loadgen_rng *rng)
{
    ncmp_buf_reset(body);
    ncmp_buf_append_str(body, "{\"dmiPlugin\":");
    ncmp_buf_append_json_string(body, dmi);
    ncmp_buf_append_str(body, ",\"createdCmHandles\":[");
    for (long i = 0; i < count; i++) {
        long n = first + i;
        const char *tag = loadgen_tags[i % 5];
        int segment = (int)(loadgen_rng_next(rng) % 10) + 1;

        ncmp_buf_appendf(body,
                         "%s{\"cmHandle\":\"ch-%ld\","
                         "\"alternateId\":\"/SubNetwork=Europe/SubNetwork=Ireland/"
                         "MeContext=MyRadioNode%ld/ManagedElement=MyManagedElement%ld\","
                         "\"moduleSetTag\":\"%s\","
                         "\"dataProducerIdentifier\":\"some-data-producer-id\","
                         "\"cmHandleProperties\":{\"segmentId\":%ld,"
                         "\"networkSegment\":\"Region=NorthAmerica,Segment=%d\","
                         "\"deviceIdentifier\":\"Element=RadioBaseStation_5G_%ld\","
                         "\"hardwareVersion\":\"HW-%s\",\"softwareVersion\":\"Firmware_%s\","
                         "\"syncStatus\":\"ACTIVE\",\"nodeCategory\":\"VirtualNode\"},"
                         "\"publicCmHandleProperties\":{\"systemId\":%ld,\"systemName\":\"ncmp\"}}",
                         i ? "," : "", n, n, n, tag, i + 1, segment, i + 1000, tag, tag, i + 1);
    }
    ncmp_buf_append_str(body, "]}");
}

/* Body of a deregistration request of `count` handles numbered from `first`. */
static void loadgen_body_deregister(ncmp_buf *body, const char *dmi, long first, long count)
{
    ncmp_buf_reset(body);
    ncmp_buf_append_str(body, "{\"dmiPlugin\":");
    ncmp_buf_append_json_string(body, dmi);
    ncmp_buf_append_str(body, ",\"removedCmHandles\":[");
    for (long i = 0; i < count; i++)
        ncmp_buf_appendf(body, "%s\"ch-%ld\"", i ? "," : "", first + i);
    ncmp_buf_append_str(body, "]}");
}

/* CloudEvent binary-mode headers of one request. The caller owns the
 * result (ncmp_producer_send takes it over). */
static rd_kafka_headers_t *loadgen_headers_new(const char *ce_id)
{
    const ncmp_cloudevent ce = {.id = ce_id,
                                .source = PROG,
                                .type = "org.onap.ncmp.dmi-plugin-registration",
                                .content_type = "application/json"};

    return ncmp_cloudevent_headers(&ce);
}

/* Handles of the requests acknowledged so far. All records share one key,
 * hence one partition, and are acknowledged in order: the acknowledged
 * ones are a prefix of the requests. */
static long loadgen_handles_done(const loadgen_opts *o, long sent, const ncmp_delivery *delivery)
{
    long acked = sent - atomic_load(&delivery->pending);

    return acked * o->batch > o->handles ? o->handles : acked * o->batch;
}

/* Fetch the topic's metadata before the first record. Without it
 * librdkafka learns about a new topic only on its next 1 s timer tick, which
 * adds up to a second to a run that otherwise takes a fraction of one; it
 * also makes an unreachable broker an error now rather than after the
 * acknowledgement timeout. A topic that does not exist is waited for a
 * little (the metadata request makes the broker create it when
 * auto.create.topics.enable is on), then left to the first record. */
static int loadgen_connect(ncmp_producer *producer, const char *topic, ncmp_err *err)
{
    rd_kafka_t *rk = ncmp_producer_rk(producer);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    double give_up = now_s() + LOADGEN_TOPIC_WAIT_S;
    rd_kafka_resp_err_t e;

    if (!rkt)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "topic %s: %s", topic,
                            rd_kafka_err2str(rd_kafka_last_error()));
    for (;;) {
        const struct rd_kafka_metadata *md = NULL;
        int exists;

        e = rd_kafka_metadata(rk, 0, rkt, &md, LOADGEN_CONNECT_TIMEOUT_MS);
        if (e)
            break;
        exists = md->topic_cnt == 1 && !md->topics[0].err && md->topics[0].partition_cnt > 0;
        rd_kafka_metadata_destroy(md);
        if (exists || now_s() >= give_up)
            break;
        rd_kafka_poll(rk, 50);
    }
    rd_kafka_topic_destroy(rkt);
    if (e)
        return ncmp_err_set(err, NCMP_ERR_RETRY, "cannot reach the broker within %d s: %s",
                            LOADGEN_CONNECT_TIMEOUT_MS / 1000, rd_kafka_err2str(e));
    return 0;
}

static void loadgen_progress(const loadgen_opts *o, long done, double t0)
{
    fprintf(stderr, "\r%ld/%ld handles, %.0f handles/s   ", done, o->handles,
            (double)done / (now_s() - t0 + 1e-9));
}

static size_t loadgen_keep(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* --rest: each body POSTed in turn, as NCMP's k6 setup and teardown do. */
static int loadgen_rest(const loadgen_opts *o, loadgen_rng *rng)
{
    ncmp_buf body = NCMP_BUF_INIT, answer = NCMP_BUF_INIT;
    char url[2048];
    long requests = (o->handles + o->batch - 1) / o->batch, ok = 0, handles = 0;
    struct curl_slist *headers;
    CURL *e;
    double t0;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    e = curl_easy_init();
    headers = curl_slist_append(NULL, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    snprintf(url, sizeof(url), "%s/ncmpInventory/v1/ch", o->rest);
    t0 = now_s();
    for (long r = 0; r < requests; r++) {
        long first = o->first + r * o->batch;
        long count = o->handles - r * o->batch < o->batch ? o->handles - r * o->batch : o->batch;
        long status = 0;
        CURLcode res;

        if (o->mode == LOADGEN_REGISTER)
            loadgen_body_register(&body, o->dmi, first, count, rng);
        else
            loadgen_body_deregister(&body, o->dmi, first, count);
        curl_easy_reset(e);
        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body.data);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
        curl_easy_setopt(e, CURLOPT_TIMEOUT, 600L);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, loadgen_keep);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &answer);
        ncmp_buf_reset(&answer);
        res = curl_easy_perform(e);
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
        if (res == CURLE_OK &&
            (o->mode == LOADGEN_REGISTER ? status == 200 : status > 0 && status < 400)) {
            ok++;
            handles += count;
        } else {
            fprintf(stderr, PROG ": request %ld: %s, HTTP %ld: %.300s\n", r + 1,
                    curl_easy_strerror(res), status, answer.data ? answer.data : "");
        }
    }
    printf("rest %ld ok %ld handles %ld seconds %.3f\n", requests, ok, handles, now_s() - t0);
    curl_slist_free_all(headers);
    curl_easy_cleanup(e);
    curl_global_cleanup();
    ncmp_buf_free(&body);
    ncmp_buf_free(&answer);
    return ok == requests ? 0 : 1;
}

int main(int argc, char **argv)
{
    loadgen_opts o;
    loadgen_rng rng;
    ncmp_kafka_opts kopts = {0};
    ncmp_kv props[LOADGEN_MAX_PROPS];
    char *prop_text[LOADGEN_MAX_PROPS] = {0}; /* copies of the -X arguments, split in place */
    ncmp_producer *producer = NULL;
    ncmp_delivery delivery;
    ncmp_buf body = NCMP_BUF_INIT;
    ncmp_err err;
    FILE *ids = NULL;
    long requests, sent = 0;
    double t0, last = 0, deadline;
    int progress;
    int rc;

    rc = loadgen_opts_parse(&o, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    rc = 1;
    ncmp_err_clear(&err);
    progress = !o.quiet && isatty(STDERR_FILENO);
    requests = (o.handles + o.batch - 1) / o.batch;
    rng.state = o.seed;
    if (o.rest)
        return loadgen_rest(&o, &rng);

    ncmp_log_setup(NCMP_LOG_WARN, NCMP_LOG_TEXT, stderr);
    kopts.bootstrap_servers = o.bootstrap;
    kopts.props = props;
    for (int i = 0; i < o.nprops; i++) {
        char *name = prop_text[i] = ncmp_xstrdup(o.props[i]);
        char *value = strchr(name, '=');

        *value++ = '\0';
        if (strcmp(name, "log.level") == 0) {
            int level = ncmp_log_level_parse(value);
            if (level < 0) {
                ncmp_err_set(&err, NCMP_ERR_FATAL, "-X %s: not a log level", o.props[i]);
                rc = 2; /* a bad argument, like those rejected while parsing */
                goto cleanup;
            }
            /* warnings only, unless asked (-X log.level=debug with -X debug=msg) */
            ncmp_log_setup((ncmp_log_level)level, NCMP_LOG_TEXT, stderr);
            continue;
        }
        if (strncmp(name, "kafka.", 6) == 0)
            name += 6;
        props[kopts.nprops].key = name;
        props[kopts.nprops].value = value;
        kopts.nprops++;
    }
    if (o.ids_path) {
        ids = strcmp(o.ids_path, "-") == 0 ? stdout : fopen(o.ids_path, "w");
        if (!ids) {
            ncmp_err_set(&err, NCMP_ERR_FATAL, "cannot open %s: %s", o.ids_path, strerror(errno));
            goto cleanup;
        }
    }
    if (ncmp_producer_new(&producer, &kopts, NCMP_PRODUCER_DEFAULT, PROG, &err) != 0) {
        rc = 2; /* only a bad setting (-b, -X) makes this fail */
        goto cleanup;
    }
    if (loadgen_connect(producer, o.topic, &err) != 0)
        goto cleanup;

    ncmp_delivery_init(&delivery);
    t0 = now_s();
    for (long r = 0; r < requests; r++) {
        long first = o.first + r * o.batch;
        long count = o.handles - r * o.batch < o.batch ? o.handles - r * o.batch : o.batch;
        char ce_id[37];

        if (o.mode == LOADGEN_REGISTER)
            loadgen_body_register(&body, o.dmi, first, count, &rng);
        else
            loadgen_body_deregister(&body, o.dmi, first, count);
        ncmp_uuid4(ce_id);
        if (ncmp_producer_send(producer, &delivery, o.topic, RD_KAFKA_PARTITION_UA, o.dmi,
                               strlen(o.dmi), body.data, body.len, loadgen_headers_new(ce_id),
                               &err) != 0) {
            if (err.cls == NCMP_ERR_REJECT)
                ncmp_err_prefix(&err,
                                "request of %ld handles is %zu bytes (use a smaller "
                                "--batch or raise kafka.max-message-bytes)",
                                count, body.len);
            goto cleanup;
        }
        sent++;
        if (ids)
            fprintf(ids, "%s %ld\n", ce_id, count);
        if (progress && now_s() - last > 0.2) {
            last = now_s();
            loadgen_progress(&o, loadgen_handles_done(&o, sent, &delivery), t0);
        }
    }

    /* Wait for the acknowledgements here rather than in one call, so that
     * the progress line follows them; ncmp_producer_wait then only collects
     * the verdict. The delivery reports run on this thread (rd_kafka_poll). */
    deadline = now_s() + LOADGEN_ACK_TIMEOUT_S;
    while (atomic_load(&delivery.pending) > 0) {
        if (now_s() >= deadline) {
            ncmp_err_set(&err, NCMP_ERR_RETRY, "%ld of %ld requests not acknowledged within %d s",
                         (long)atomic_load(&delivery.pending), sent, LOADGEN_ACK_TIMEOUT_S);
            goto cleanup;
        }
        rd_kafka_poll(ncmp_producer_rk(producer), 100);
        if (progress && now_s() - last > 0.2) {
            last = now_s();
            loadgen_progress(&o, loadgen_handles_done(&o, sent, &delivery), t0);
        }
    }
    if (ncmp_producer_wait(producer, &delivery, 0, &err) != 0)
        goto cleanup;
    if (progress) {
        loadgen_progress(&o, o.handles, t0);
        fputc('\n', stderr);
    }
    if (ids && (fflush(ids) != 0 || ferror(ids))) {
        ncmp_err_set(&err, NCMP_ERR_FATAL, "cannot write %s: %s", o.ids_path, strerror(errno));
        goto cleanup;
    }
    if (!o.quiet)
        fprintf(stderr, "published %ld handles in %ld requests to %s in %.3f s\n", o.handles, sent,
                o.topic, now_s() - t0);
    rc = 0;
cleanup:
    if (rc) {
        if (progress && sent)
            fputc('\n', stderr);
        fprintf(stderr, PROG ": %s\n", err.msg);
    }
    if (ids && ids != stdout && fclose(ids) != 0 && rc == 0) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", o.ids_path, strerror(errno));
        rc = 1;
    }
    ncmp_buf_free(&body);
    ncmp_producer_destroy(producer);
    for (int i = 0; i < o.nprops; i++)
        free(prop_text[i]);
    return rc;
}
