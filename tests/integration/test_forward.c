/*
 * The Kafka forwarders on a real broker: avc-forward (dmi-cm-events ->
 * cm-events, unchanged) and async-forward (ncmp-async-m2m -> the topic in
 * each DataOperationEvent's ce_destination, keyed by ce_correlationid).
 *
 * Every test has its own input, output and dead-letter topics and its own
 * consumer group, so the tests run in parallel. Records carry a sequence
 * number in their value ({"seq":N,...}) to be recognised on the way out.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "conformance.h"
#include "it_util.h"
#include "ncmp_buf.h"
#include "ncmp_kafka.h"

#define PARTITIONS 3
#define WAIT_MS    90000

#define DOE_TYPE   "org.onap.cps.ncmp.events.async1_0_0.DataOperationEvent"
#define DOE_SCHEMA "urn:cps:org.onap.cps.ncmp.events.async1_0_0.DataOperationEvent:1.0.0"
#define AVC_TYPE   "org.onap.cps.ncmp.events.avc1_0_0.AvcEvent"

typedef struct fwd_case {
    char in[128];
    char out[128];
    char dlq[160];
    char group[160];
    char group_role[200];
    char log[512];
    char flag[8][320];
    int nflags;
} fwd_case;

/* Add the flag `--<name>=<value>`. */
static void case_flag(fwd_case *c, const char *name, const char *value)
{
    cr_assert_lt(c->nflags, 8);
    snprintf(c->flag[c->nflags++], sizeof(c->flag[0]), "--%s=%s", name, value);
}

/* Topics and group of one test; `role` is avc-forward or async-forward. */
static void case_init(fwd_case *c, const char *name, const char *role)
{
    const char *dir = getenv("NCMP_TEST_LOG_DIR");

    memset(c, 0, sizeof(*c));
    it_unique(c->in, sizeof(c->in), name);
    snprintf(c->out, sizeof(c->out), "%s-out", c->in);
    snprintf(c->dlq, sizeof(c->dlq), "%s-dlq", c->in);
    snprintf(c->group, sizeof(c->group), "g-%s", c->in);
    snprintf(c->group_role, sizeof(c->group_role), "%s-%s", c->group, role);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir && *dir ? dir : "/tmp", c->in);
    it_create_topic(c->in, PARTITIONS);
    case_flag(c, "roles", role);
    case_flag(c, "kafka.group.id", c->group);
    /* static membership: a restart after a kill takes over at once */
    case_flag(c, "kafka.instance-id", c->group);
    if (strcmp(role, "avc-forward") == 0) {
        case_flag(c, "avc-forward.input-topic", c->in);
        case_flag(c, "avc-forward.output-topic", c->out);
    } else {
        case_flag(c, "async-forward.input-topic", c->in);
    }
}

/* ncmpd's arguments: the case's flags, then `extra` (NULL-terminated). */
static pid_t case_start(fwd_case *c, const char *const *extra, int wait_running)
{
    const char *args[24];
    int n = 0;

    for (int i = 0; i < c->nflags; i++)
        args[n++] = c->flag[i];
    for (const char *const *e = extra; e && *e && n < 23; e++)
        args[n++] = *e;
    args[n] = NULL;
    return wait_running ? it_ncmpd_start(c->log, args) : it_ncmpd_spawn(c->log, args);
}

static void stop_cleanly(pid_t pid)
{
    int status = it_ncmpd_stop(pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "SIGTERM should stop ncmpd cleanly, status %d", status);
}

/* A topic with one topic-level setting (e.g. max.message.bytes). */
static void create_topic_with(const char *topic, int partitions, const char *key, const char *value)
{
    char errstr[512];
    ncmp_kafka_opts opts;
    ncmp_err err;
    rd_kafka_t *rk = NULL;
    rd_kafka_NewTopic_t *nt;
    rd_kafka_queue_t *q;
    rd_kafka_event_t *ev;
    const rd_kafka_topic_result_t **res;
    size_t cnt;

    it_kafka_opts(&opts);
    cr_assert_eq(ncmp_kafka_admin_new(&rk, &opts, "it-admin", &err), 0, "%s", err.msg);
    nt = rd_kafka_NewTopic_new(topic, partitions, 1, errstr, sizeof(errstr));
    cr_assert_not_null(nt, "%s", errstr);
    cr_assert_eq(rd_kafka_NewTopic_set_config(nt, key, value), 0);
    q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    ev = rd_kafka_queue_poll(q, 30000);
    cr_assert_not_null(ev, "no answer to CreateTopics");
    res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
    cr_assert_eq(cnt, 1);
    cr_assert_eq(rd_kafka_topic_result_error(res[0]), 0, "create %s: %s", topic,
                 rd_kafka_topic_result_error_string(res[0]));
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    rd_kafka_destroy(rk);
}

/* The offsets `group` committed on each partition of `topic` (0 if none). */
static void committed_offsets(const char *group, const char *topic, int64_t *offsets)
{
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(PARTITIONS);
    rd_kafka_t *rk = it_reader(group);
    rd_kafka_resp_err_t e;

    for (int p = 0; p < PARTITIONS; p++)
        rd_kafka_topic_partition_list_add(parts, topic, p);
    e = rd_kafka_committed(rk, parts, 10000);
    cr_assert_eq(e, 0, "committed: %s", rd_kafka_err2str(e));
    for (int p = 0; p < PARTITIONS; p++)
        offsets[p] = parts->elems[p].offset > 0 ? parts->elems[p].offset : 0;
    rd_kafka_topic_partition_list_destroy(parts);
    ncmp_kafka_reader_close(rk);
}

static long wait_committed(const char *group, const char *topic, long expected, int timeout_ms)
{
    long sum = 0;
    for (int waited = 0; waited <= timeout_ms; waited += 100) {
        sum = it_committed_sum(group, topic, PARTITIONS);
        if (sum >= expected)
            break;
        it_sleep_ms(100);
    }
    return sum;
}

/* {"seq":N,...} -> N, or -1. */
static long record_seq(const it_record *r)
{
    const char *p = strstr(r->value, "\"seq\":");
    return p ? strtol(p + 6, NULL, 10) : -1;
}

/* Same headers, same order, same bytes (a NULL value equal to a NULL). */
static void assert_same_headers(const rd_kafka_headers_t *a, const rd_kafka_headers_t *b, long seq)
{
    size_t na = a ? rd_kafka_header_cnt(a) : 0, nb = b ? rd_kafka_header_cnt(b) : 0;

    cr_assert_eq(na, nb, "record %ld: %zu headers in, %zu out", seq, na, nb);
    for (size_t i = 0; i < na; i++) {
        const char *name_a, *name_b;
        const void *va, *vb;
        size_t sa, sb;
        cr_assert_eq(rd_kafka_header_get_all(a, i, &name_a, &va, &sa), 0);
        cr_assert_eq(rd_kafka_header_get_all(b, i, &name_b, &vb, &sb), 0);
        cr_assert_str_eq(name_a, name_b, "record %ld: header %zu", seq, i);
        cr_assert_eq(va == NULL, vb == NULL, "record %ld: header %s null-ness", seq, name_a);
        cr_assert_eq(sa, sb, "record %ld: header %s size", seq, name_a);
        if (sa)
            cr_assert_eq(memcmp(va, vb, sa), 0, "record %ld: header %s bytes", seq, name_a);
    }
}

static void assert_same_record(const it_record *in, const it_record *out, long seq)
{
    cr_assert_eq(in->key == NULL, out->key == NULL, "record %ld: key presence", seq);
    if (in->key)
        cr_assert_str_eq(in->key, out->key, "record %ld: key", seq);
    cr_assert_eq(in->len, out->len, "record %ld: value length", seq);
    cr_assert_eq(memcmp(in->value, out->value, in->len), 0, "record %ld: value bytes", seq);
    assert_same_headers(in->headers, out->headers, seq);
}

/* Index records by their seq (0..n); asserts each seq is in range. */
static void index_by_seq(it_record *recs, size_t n, long max_seq, it_record **by_seq)
{
    for (size_t i = 0; i < n; i++) {
        long seq = record_seq(&recs[i]);
        cr_assert(seq >= 0 && seq < max_seq, "unexpected record '%.60s'", recs[i].value);
        by_seq[seq] = &recs[i];
    }
}

/* --- avc-forward --------------------------------------------------------- */

/* n AVC-like records: keys k-0..k-(nkeys-1) (and some without a key),
 * NCMP's CloudEvent headers plus a binary one and a NULL one, values
 * {"seq":i,"key":...,"pad":...} of varying length (one is empty of pad). */
static void publish_avc(const char *topic, long first, long n, int nkeys)
{
    it_outgoing *recs = ncmp_xcalloc((size_t)n, sizeof(*recs));
    char(*keys)[32] = ncmp_xcalloc((size_t)n, sizeof(*keys));
    char(*ids)[48] = ncmp_xcalloc((size_t)n, sizeof(*ids));
    char **values = ncmp_xcalloc((size_t)n, sizeof(*values));
    const char ***headers = ncmp_xcalloc((size_t)n, sizeof(*headers));

    for (long i = 0; i < n; i++) {
        long seq = first + i;
        ncmp_buf v = NCMP_BUF_INIT;
        snprintf(keys[i], sizeof(keys[i]), "k-%ld", seq % nkeys);
        snprintf(ids[i], sizeof(ids[i]), "ce-%ld", seq);
        ncmp_buf_appendf(&v, "{\"seq\":%ld,\"key\":\"%s\",\"pad\":\"", seq, keys[i]);
        for (long k = 0; k < (seq * 37) % 400; k++)
            ncmp_buf_append_char(&v, (char)('a' + k % 26));
        ncmp_buf_append_str(&v, "\"}");
        values[i] = v.data;
        {
            const char *h[] = {
                "ce_type", AVC_TYPE,         "ce_source", "DMI",     "ce_id",
                ids[i],    "ce_specversion", "1.0",       "ce_time", "2026-01-01T00:00:00.000Z",
                "bin",     "\x01\x02\xff",   NULL};
            headers[i] = ncmp_xcalloc(sizeof(h) / sizeof(h[0]), sizeof(char *));
            memcpy(headers[i], h, sizeof(h));
        }
        recs[i].key = seq % 97 == 5 ? NULL : keys[i];
        recs[i].value = values[i];
        recs[i].len = strlen(values[i]);
        recs[i].headers = seq % 101 == 7 ? NULL : headers[i];
    }
    it_publish(topic, recs, (size_t)n);
    for (long i = 0; i < n; i++) {
        free(values[i]);
        free(headers[i]);
    }
    free(headers);
    free(values);
    free(ids);
    free(keys);
    free(recs);
}

/* Records with one key keep their order on the way out: seq grows. */
static void assert_order_per_key(it_record *out, size_t n)
{
    struct {
        char key[64];
        long seq;
    } *seen = ncmp_xcalloc(256, sizeof(*seen));
    size_t nseen = 0;

    for (size_t i = 0; i < n; i++) {
        size_t j;
        if (!out[i].key)
            continue;
        for (j = 0; j < nseen && strcmp(seen[j].key, out[i].key) != 0; j++)
            ;
        if (j == nseen) {
            cr_assert_lt(nseen, 256);
            snprintf(seen[nseen].key, sizeof(seen[nseen].key), "%s", out[i].key);
            seen[nseen++].seq = -1;
        }
        cr_assert_gt(record_seq(&out[i]), seen[j].seq, "key %s: record %ld after %ld", out[i].key,
                     record_seq(&out[i]), seen[j].seq);
        seen[j].seq = record_seq(&out[i]);
    }
    free(seen);
}

Test(forward, avc_records_arrive_unchanged_in_order_and_offsets_follow, .timeout = 180)
{
    fwd_case c;
    const long n = 4000;
    it_record *in = NULL, *out = NULL;
    it_record **by_seq;
    size_t nin, nout;
    pid_t pid;

    case_init(&c, "it-fwd-avc", "avc-forward");
    it_create_topic(c.out, 4); /* another partition count: keys decide */
    publish_avc(c.in, 0, n / 2, 20);
    {
        const char *extra[] = {"--avc-forward.batch-size=300", NULL};
        pid = case_start(&c, extra, 1);
    }
    publish_avc(c.in, n / 2, n / 2, 20); /* while it runs */
    cr_assert_eq(wait_committed(c.group_role, c.in, n, WAIT_MS), n, "all input committed");
    stop_cleanly(pid);

    nin = it_read_topic(c.in, (size_t)n, WAIT_MS, &in);
    nout = it_read_topic(c.out, (size_t)n, WAIT_MS, &out);
    cr_assert_eq(nin, (size_t)n);
    cr_assert_eq(nout, (size_t)n, "every record forwarded once, got %zu of %ld", nout, n);
    by_seq = ncmp_xcalloc((size_t)n, sizeof(*by_seq));
    index_by_seq(in, nin, n, by_seq);
    for (size_t i = 0; i < nout; i++) {
        long seq = record_seq(&out[i]);
        cr_assert(seq >= 0 && seq < n && by_seq[seq], "unknown record out: %.60s", out[i].value);
        assert_same_record(by_seq[seq], &out[i], seq);
        by_seq[seq] = NULL; /* a second copy would be unknown */
    }
    assert_order_per_key(out, nout);
    cr_assert_eq(it_committed_sum(c.group_role, c.in, PARTITIONS), n);
    cr_assert(it_file_contains(c.log, "4000 forwarded"), "the stop reports the count");
    free(by_seq);
    it_records_free(in, nin);
    it_records_free(out, nout);
}

/* Kill ncmpd while it forwards, restart it, and count: every record is out
 * at least once, and those out twice are all at or after the offset the
 * group had committed when it died (the tail whose commit was lost). */
static void kill_and_count(const char *name, const char *fault)
{
    fwd_case c;
    /* it_read_topic grows its array one record at a time, which ASan makes
     * quadratic: a size it reads in seconds there too */
    const long n = 12000;
    int64_t committed[PARTITIONS];
    it_record *in = NULL, *out = NULL;
    it_record **by_seq;
    int *copies;
    size_t nin, nout;
    long dups = 0, tail = 0;
    pid_t pid;
    int status;

    case_init(&c, name, "avc-forward");
    it_create_topic(c.out, PARTITIONS);
    publish_avc(c.in, 0, n, 50);
    {
        const char *extra[] = {"--avc-forward.batch-size=100", fault, NULL};
        pid = case_start(&c, extra, 0);
    }
    if (fault) {
        status = it_wait_exit(pid, WAIT_MS);
        cr_assert(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "ncmpd should have died at %s (status %d)", fault, status);
    } else {
        long sum = wait_committed(c.group_role, c.in, n / 4, WAIT_MS);
        cr_assert_geq(sum, n / 4);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    committed_offsets(c.group_role, c.in, committed);
    {
        long sum = committed[0] + committed[1] + committed[2];
        cr_assert_lt(sum, n, "killed before the end (committed %ld)", sum);
    }
    pid = case_start(&c, NULL, 1);
    cr_assert_eq(wait_committed(c.group_role, c.in, n, WAIT_MS), n);
    stop_cleanly(pid);

    nin = it_read_topic(c.in, (size_t)n, WAIT_MS, &in);
    nout = it_read_topic(c.out, (size_t)n, WAIT_MS, &out);
    cr_assert_eq(nin, (size_t)n);
    by_seq = ncmp_xcalloc((size_t)n, sizeof(*by_seq));
    copies = ncmp_xcalloc((size_t)n, sizeof(*copies));
    index_by_seq(in, nin, n, by_seq);
    for (size_t i = 0; i < nout; i++) {
        long seq = record_seq(&out[i]);
        cr_assert(seq >= 0 && seq < n, "unknown record out: %.60s", out[i].value);
        assert_same_record(by_seq[seq], &out[i], seq);
        copies[seq]++;
    }
    for (long seq = 0; seq < n; seq++) {
        const it_record *r = by_seq[seq];
        int committed_before = r->offset < committed[r->partition];
        cr_assert_geq(copies[seq], 1, "record %ld (partition %d offset %lld) lost", seq,
                      r->partition, (long long)r->offset);
        if (committed_before)
            cr_assert_eq(copies[seq], 1, "record %ld was committed, yet forwarded %d times", seq,
                         copies[seq]);
        else
            tail++;
        dups += copies[seq] - 1;
    }
    cr_log_info("%s: %ld records, %ld in the uncommitted tail, %ld duplicates", name, n, tail,
                dups);
    cr_assert_eq((long)nout, n + dups);
    cr_assert_leq(dups, tail, "duplicates only from the uncommitted tail");
    free(copies);
    free(by_seq);
    it_records_free(in, nin);
    it_records_free(out, nout);
}

Test(forward, avc_kill9_loses_nothing_and_duplicates_only_the_uncommitted_tail, .timeout = 240)
{
    kill_and_count("it-fwd-kill9", NULL);
}

Test(forward, avc_crash_between_acks_and_commit_forwards_the_batch_again, .timeout = 240)
{
    kill_and_count("it-fwd-crash", "--debug.fault=avc-forward.before-commit:20");
}

Test(forward, avc_record_too_large_for_the_output_is_dead_lettered, .timeout = 180)
{
    fwd_case c;
    it_record *out = NULL, *dlq = NULL;
    size_t nout, ndlq;
    pid_t pid;
    char big[30000], buf[512];
    const char *h[] = {"ce_id", "big-one", NULL};
    it_outgoing recs[5] = {
        {"k", "{\"seq\":0}", 9, NULL},  {"k", "{\"seq\":1}", 9, NULL},
        {"k", big, sizeof(big) - 1, h}, {"k", "{\"seq\":3}", 9, NULL},
        {"k", "{\"seq\":4}", 9, NULL},
    };

    memset(big, 'x', sizeof(big) - 1);
    memcpy(big, "{\"seq\":2,\"x\":\"", 14);
    memcpy(big + sizeof(big) - 3, "\"}", 2);
    big[sizeof(big) - 1] = '\0';
    case_init(&c, "it-fwd-big", "avc-forward");
    create_topic_with(c.out, PARTITIONS, "max.message.bytes", "20000");
    it_publish(c.in, recs, 5);
    {
        /* batches smaller than the output topic's limit, as Kafka asks */
        const char *extra[] = {"--kafka.batch.size=10000", NULL};
        pid = case_start(&c, extra, 1);
    }
    cr_assert_eq(wait_committed(c.group_role, c.in, 5, WAIT_MS), 5, "the partition moved on");
    stop_cleanly(pid);
    nout = it_read_topic(c.out, 4, WAIT_MS, &out);
    cr_assert_eq(nout, 4, "the four that fit are forwarded");
    for (size_t i = 0; i < nout; i++)
        cr_assert_neq(record_seq(&out[i]), 2);
    ndlq = it_read_topic(c.dlq, 1, WAIT_MS, &dlq);
    cr_assert_eq(ndlq, 1);
    cr_assert_not_null(it_record_header(&dlq[0], "dlq_reason", buf, sizeof(buf)));
    cr_assert(strstr(buf, c.out) && strstr(buf, "too large"), "reason: %s", buf);
    cr_assert_str_eq(it_record_header(&dlq[0], "dlq_topic", buf, sizeof(buf)), c.in);
    cr_assert_str_eq(it_record_header(&dlq[0], "dlq_role", buf, sizeof(buf)), "avc-forward");
    cr_assert_not_null(it_record_header(&dlq[0], "dlq_partition", buf, sizeof(buf)));
    cr_assert_not_null(it_record_header(&dlq[0], "dlq_offset", buf, sizeof(buf)));
    cr_assert_str_eq(it_record_header(&dlq[0], "ce_id", buf, sizeof(buf)), "big-one",
                     "original headers kept");
    cr_assert_str_eq(it_record_header(&dlq[0], "dlq_value_truncated", buf, sizeof(buf)), "true");
    cr_assert_str_eq(it_record_header(&dlq[0], "dlq_original_size", buf, sizeof(buf)), "29999");
    cr_assert_str_eq(dlq[0].key, "k");
    cr_assert(it_file_contains(c.log, "rejected record topic="), "log names the record");
    it_records_free(out, nout);
    it_records_free(dlq, ndlq);
}

/* --- async-forward ------------------------------------------------------- */

/* A DataOperationEvent as NCMP's DMI plugins send it: a failure entry,
 * and a success with an (empty) result. */
static char *doe_value(long seq)
{
    ncmp_buf v = NCMP_BUF_INIT;
    ncmp_buf_appendf(
        &v,
        "{\"data\":{\"responses\":[{\"operationId\":\"%ld\",\"ids\":[\"not-ready-ch\"],"
        "\"resourceIdentifier\":\"ManagedElement=NRNode1/GNBDUFunction=1\","
        "\"options\":\"(fields=NRCellDU/attributes/cellLocalId)\","
        "\"statusCode\":\"101\",\"statusMessage\":\"cm handle(s) not ready\"},"
        "{\"operationId\":\"%ld\",\"ids\":[\"ch-1\",\"ch-2\"],\"statusCode\":\"0\","
        "\"statusMessage\":\"Successfully applied changes\",\"result\":{}}]},"
        "\"seq\":%ld}",
        seq, seq, seq);
    return v.data;
}

/* The body without our "seq" marker, which the schema would refuse. */
static json_object *doe_body(const it_record *r)
{
    json_object *obj = json_tokener_parse(r->value);
    cr_assert_not_null(obj, "forwarded value is JSON");
    json_object_object_del(obj, "seq");
    return obj;
}

typedef struct async_rec {
    const char *destination; /* NULL: no ce_destination header */
    int legacy;              /* 1: no ce_type (a legacy result); 2: a CloudEvent of
                              * another type */
    const char *expect;      /* "A", "B", "dlq" or "none" */
} async_rec;

Test(forward, async_events_go_to_their_destination_keyed_by_correlation_id, .timeout = 180)
{
    fwd_case c;
    char a[160], b[160], too_long[300], longest_name[300];
    char corr[32][48], ids[32][48];
    char *values[32];
    const char *hdrs[32][17];
    it_outgoing recs[32];
    it_record *out_a = NULL, *out_b = NULL, *dlq = NULL, *in = NULL;
    size_t na, nb, ndlq, nin, want_a = 0, want_b = 0, want_dlq = 0;
    char err[1024], buf[512];
    pid_t pid;
    size_t n = 0;

    case_init(&c, "it-fwd-async", "async-forward");
    snprintf(a, sizeof(a), "%s-client-a", c.in);
    snprintf(b, sizeof(b), "%s-client-b", c.in);
    it_create_topic(a, 2);
    it_create_topic(b, 2);
    /* 250 and 249 bytes, unique to this run */
    snprintf(too_long, sizeof(too_long), "%s-%0*d", c.in, (int)(249 - strlen(c.in)), 0);
    snprintf(longest_name, sizeof(longest_name), "%.249s", too_long);
    cr_assert_eq(strlen(too_long), 250);
    {
        const async_rec plan[] = {
            {a, 0, "A"},
            {b, 0, "B"},
            {NULL, 0, "dlq"},
            {a, 0, "A"},
            {"bad topic!", 0, "dlq"},
            {b, 0, "B"},
            {"..", 0, "dlq"},
            {".", 0, "dlq"},
            {too_long, 0, "dlq"},
            {c.in, 0, "dlq"},
            {"", 0, "dlq"},
            {a, 1, "dlq"},  /* no ce_type: a legacy result, and not a good one */
            {a, 2, "none"}, /* another CloudEvent type: not ours */
            {b, 0, "B"},
            {a, 0, "A"},
            {longest_name, 0, "249"},
        };
        for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); i++, n++) {
            size_t k = 0;
            snprintf(corr[n], sizeof(corr[n]), "req-%zu", n);
            snprintf(ids[n], sizeof(ids[n]), "ev-%zu", n);
            values[n] = doe_value((long)n);
            if (plan[i].legacy != 1) {
                hdrs[n][k++] = "ce_type";
                hdrs[n][k++] = plan[i].legacy ? "org.onap.cps.ncmp.events.OtherEvent" : DOE_TYPE;
            }
            hdrs[n][k++] = "ce_specversion";
            hdrs[n][k++] = "1.0";
            hdrs[n][k++] = "ce_id";
            hdrs[n][k++] = ids[n];
            hdrs[n][k++] = "ce_source";
            hdrs[n][k++] = "DMI";
            hdrs[n][k++] = "ce_dataschema";
            hdrs[n][k++] = DOE_SCHEMA;
            hdrs[n][k++] = "ce_correlationid";
            hdrs[n][k++] = corr[n];
            if (plan[i].destination) {
                hdrs[n][k++] = "ce_destination";
                hdrs[n][k++] = plan[i].destination;
            }
            hdrs[n][k] = NULL;
            recs[n].key = "dmi-key"; /* replaced by the correlation id */
            recs[n].value = values[n];
            recs[n].len = strlen(values[n]);
            recs[n].headers = hdrs[n];
            want_a += strcmp(plan[i].expect, "A") == 0;
            want_b += strcmp(plan[i].expect, "B") == 0;
            want_dlq += strcmp(plan[i].expect, "dlq") == 0;
        }
    }
    it_create_topic(longest_name, 1); /* a 249-byte name is valid */
    it_publish(c.in, recs, n);
    pid = case_start(&c, NULL, 1);
    cr_assert_eq(wait_committed(c.group_role, c.in, (long)n, WAIT_MS), (long)n);
    stop_cleanly(pid);

    na = it_read_topic(a, want_a, WAIT_MS, &out_a);
    nb = it_read_topic(b, want_b, WAIT_MS, &out_b);
    ndlq = it_read_topic(c.dlq, want_dlq, WAIT_MS, &dlq);
    nin = it_read_topic(c.in, n, WAIT_MS, &in);
    cr_assert_eq(na, want_a, "client topic A: %zu of %zu", na, want_a);
    cr_assert_eq(nb, want_b, "client topic B: %zu of %zu", nb, want_b);
    cr_assert_eq(ndlq, want_dlq, "dead letters: %zu of %zu", ndlq, want_dlq);
    cr_assert_eq(nin, n);
    {
        it_record *longest = NULL;
        size_t nlong = it_read_topic(longest_name, 1, WAIT_MS, &longest);
        cr_assert_eq(nlong, 1, "a 249-byte destination is valid");
        it_records_free(longest, nlong);
    }

    for (int t = 0; t < 2; t++) {
        it_record *out = t ? out_b : out_a;
        size_t nout = t ? nb : na;
        const char *dest = t ? b : a;
        for (size_t i = 0; i < nout; i++) {
            long seq = record_seq(&out[i]);
            const it_record *orig = NULL;
            json_object *body;
            for (size_t j = 0; j < nin; j++)
                if (record_seq(&in[j]) == seq)
                    orig = &in[j];
            cr_assert_not_null(orig);
            cr_assert_str_eq(out[i].key, corr[seq], "keyed by ce_correlationid");
            cr_assert_eq(out[i].len, orig->len);
            cr_assert_eq(memcmp(out[i].value, orig->value, orig->len), 0, "value unchanged");
            assert_same_headers(orig->headers, out[i].headers, seq);
            cr_assert_str_eq(it_record_header(&out[i], "ce_destination", buf, sizeof(buf)), dest);
            body = doe_body(&out[i]);
            cr_assert_eq(
                conformance_check_event(CONFORMANCE_DATA_OPERATION, body, err, sizeof(err)), 0,
                "forwarded event %ld: %s", seq, err);
            json_object_put(body);
        }
    }
    for (size_t i = 0; i < ndlq; i++) {
        cr_assert_not_null(it_record_header(&dlq[i], "dlq_reason", buf, sizeof(buf)));
        cr_assert(strstr(buf, "ce_destination") || strstr(buf, "no eventTarget"),
                  "reason names the header (or the legacy field): %s", buf);
        cr_assert_str_eq(it_record_header(&dlq[i], "dlq_role", buf, sizeof(buf)), "async-forward");
        cr_assert_str_eq(it_record_header(&dlq[i], "dlq_topic", buf, sizeof(buf)), c.in);
        cr_assert_not_null(it_record_header(&dlq[i], "ce_id", buf, sizeof(buf)),
                           "original headers kept");
        cr_assert_str_eq(dlq[i].key, "dmi-key", "a dead letter keeps the original key");
        cr_assert_eq(
            conformance_check_headers(CONFORMANCE_DEAD_LETTER, dlq[i].headers, err, sizeof(err)), 0,
            "%s", err);
    }
    cr_assert(it_file_contains(c.log, "no ce_destination header"));
    cr_assert(it_file_contains(c.log, "'bad topic!' (10 bytes) is not a valid topic name"));
    cr_assert(it_file_contains(c.log, "is a topic of the forwarder itself"));
    cr_assert(it_file_contains(c.log, "1 not ours"), "the other CloudEvent is left alone");
    for (size_t i = 0; i < n; i++)
        free(values[i]);
    it_records_free(out_a, na);
    it_records_free(out_b, nb);
    it_records_free(dlq, ndlq);
    it_records_free(in, nin);
}

Test(forward, async_destination_refusing_the_record_is_dead_lettered, .timeout = 180)
{
    fwd_case c;
    char small[160], big[4000], buf[512];
    it_record *out = NULL, *dlq = NULL;
    size_t nout, ndlq;
    pid_t pid;

    case_init(&c, "it-fwd-async-refused", "async-forward");
    snprintf(small, sizeof(small), "%s-small", c.in);
    create_topic_with(small, 1, "max.message.bytes", "2000");
    memset(big, ' ', sizeof(big));
    memcpy(big, "{\"seq\":1}", 9);
    {
        const char *h[] = {"ce_type", DOE_TYPE, "ce_correlationid", "r", "ce_destination",
                           small,     NULL};
        it_outgoing recs[3] = {
            {"x", "{\"seq\":0}", 9, h},
            {"x", big, sizeof(big), h},
            {"x", "{\"seq\":2}", 9, h},
        };
        it_publish(c.in, recs, 3);
    }
    {
        const char *extra[] = {"--kafka.batch.size=1000", NULL};
        pid = case_start(&c, extra, 1);
    }
    cr_assert_eq(wait_committed(c.group_role, c.in, 3, WAIT_MS), 3, "the partition moved on");
    stop_cleanly(pid);
    nout = it_read_topic(small, 2, WAIT_MS, &out);
    cr_assert_eq(nout, 2, "the records around the refused one are forwarded");
    cr_assert_eq(record_seq(&out[0]), 0);
    cr_assert_eq(record_seq(&out[1]), 2);
    ndlq = it_read_topic(c.dlq, 1, WAIT_MS, &dlq);
    cr_assert_eq(ndlq, 1);
    cr_assert(strstr(it_record_header(&dlq[0], "dlq_reason", buf, sizeof(buf)), "too large"),
              "reason: %s", buf);
    it_records_free(out, nout);
    it_records_free(dlq, ndlq);
}

/* --- an output that is not there ---------------------------------------- */

/* With topic auto-creation off, a missing output topic is an outage for
 * avc-forward (records wait and are forwarded, in order, once it exists)
 * and a bad destination for async-forward (dead-lettered). */
static const char *const no_auto_create[] = {
    "--kafka.allow.auto.create.topics=false", "--kafka.topic.metadata.propagation.max.ms=500",
    "--kafka.topic.metadata.refresh.interval.ms=1000", NULL};

Test(forward, avc_waits_for_a_missing_output_topic_and_loses_nothing, .timeout = 180)
{
    fwd_case c;
    const long n = 2000;
    it_record *out = NULL;
    size_t nout;
    pid_t pid;
    int64_t committed[PARTITIONS];

    case_init(&c, "it-fwd-missing", "avc-forward");
    it_create_topic(c.dlq, PARTITIONS);
    publish_avc(c.in, 0, n, 10);
    pid = case_start(&c, no_auto_create, 1);
    for (int i = 0; i < 50 && !it_file_contains(c.log, "to forward again"); i++)
        it_sleep_ms(100);
    cr_assert(it_file_contains(c.log, "to forward again"), "the missing topic is retried");
    committed_offsets(c.group_role, c.in, committed);
    cr_assert_eq(committed[0] + committed[1] + committed[2], 0, "nothing committed meanwhile");
    it_create_topic(c.out, PARTITIONS);
    cr_assert_eq(wait_committed(c.group_role, c.in, n, WAIT_MS), n);
    stop_cleanly(pid);
    nout = it_read_topic(c.out, (size_t)n, WAIT_MS, &out);
    cr_assert_eq(nout, (size_t)n, "every record once the topic exists, got %zu", nout);
    assert_order_per_key(out, nout);
    {
        it_record *dlq = NULL;
        size_t ndlq = it_read_topic(c.dlq, 0, 5000, &dlq);
        cr_assert_eq(ndlq, 0, "an outage is not the records' fault");
        it_records_free(dlq, ndlq);
    }
    it_records_free(out, nout);
}

Test(forward, async_unknown_destination_is_dead_lettered_when_auto_create_is_off, .timeout = 180)
{
    fwd_case c;
    char known[160], unknown[160], buf[512];
    it_record *out = NULL, *dlq = NULL;
    size_t nout, ndlq;
    pid_t pid;

    case_init(&c, "it-fwd-unknown", "async-forward");
    snprintf(known, sizeof(known), "%s-known", c.in);
    snprintf(unknown, sizeof(unknown), "%s-unknown", c.in);
    it_create_topic(known, 1);
    it_create_topic(c.dlq, 1);
    {
        const char *to_known[] = {"ce_type", DOE_TYPE, "ce_destination", known, NULL};
        const char *to_unknown[] = {"ce_type", DOE_TYPE, "ce_destination", unknown, NULL};
        it_outgoing recs[3] = {
            {"x", "{\"seq\":0}", 9, to_known},
            {"x", "{\"seq\":1}", 9, to_unknown},
            {"x", "{\"seq\":2}", 9, to_known},
        };
        it_publish(c.in, recs, 3);
    }
    pid = case_start(&c, no_auto_create, 1);
    cr_assert_eq(wait_committed(c.group_role, c.in, 3, WAIT_MS), 3, "the partition moved on");
    stop_cleanly(pid);
    nout = it_read_topic(known, 2, WAIT_MS, &out);
    cr_assert_eq(nout, 2);
    ndlq = it_read_topic(c.dlq, 1, WAIT_MS, &dlq);
    cr_assert_eq(ndlq, 1);
    cr_assert_eq(record_seq(&dlq[0]), 1);
    cr_assert(strstr(it_record_header(&dlq[0], "dlq_reason", buf, sizeof(buf)), unknown),
              "reason names the topic: %s", buf);
    it_records_free(out, nout);
    it_records_free(dlq, ndlq);
}

/* --- async-forward: legacy results (DmiAsyncRequestResponseEvent) -------- */

#define DMI_ASYNC_TYPE  "org.onap.cps.ncmp.event.model.DmiAsyncRequestResponseEvent"
#define NCMP_ASYNC_TYPE "org.onap.cps.ncmp.event.model.NcmpAsyncRequestResponseEvent"

/* A DmiAsyncRequestResponseEvent as ONAP's DMI plugin writes it, with a
 * marker "seq" in its response data. */
static char *dmi_async_value(long seq, const char *target)
{
    ncmp_buf v = NCMP_BUF_INIT;
    ncmp_buf_appendf(&v,
                     "{\"eventId\":\"dmi-ev-%ld\",\"eventCorrelationId\":\"req-%ld\","
                     "\"eventTime\":\"2026-12-03T10:59:59.123+0000\",\"eventTarget\":\"%s\","
                     "\"eventType\":\"" DMI_ASYNC_TYPE
                     "\",\"eventSchema\":\"urn:cps:" DMI_ASYNC_TYPE
                     "\",\"eventSchemaVersion\":\"v1\",\"eventSource\":\"org.onap.cps.ncmp.dmi\","
                     "\"eventContent\":{\"response-data-schema\":\"urn:cps:" DMI_ASYNC_TYPE ":v1\","
                     "\"response-status\":\"OK\",\"response-code\":\"200\","
                     "\"response-data\":{\"seq\":%ld}}}",
                     seq, seq, target, seq);
    return v.data;
}

/* Records without ce_type on one partition (one key): the good ones are
 * mapped to NcmpAsyncRequestResponseEvents on their eventTarget, the bad
 * ones between them dead-lettered with the reason, and none blocks the
 * ones behind it. */
Test(forward, async_legacy_results_are_mapped_to_their_event_target, .timeout = 180)
{
    fwd_case c;
    char a[160], buf[512], err[1024];
    char *good[3];
    const char *type_header[] = {"__TypeId__", DMI_ASYNC_TYPE, NULL};
    it_record *out = NULL, *dlq = NULL;
    size_t nout, ndlq;
    pid_t pid;

    case_init(&c, "it-fwd-legacy", "async-forward");
    snprintf(a, sizeof(a), "%s-client", c.in);
    /* one partition: the keys are random (new event ids), and the order
     * of one input partition is kept on the way out */
    it_create_topic(a, 1);
    for (long i = 0; i < 3; i++)
        good[i] = dmi_async_value(i, a);
    {
        static const char no_target[] = "{\"eventId\":\"x\",\"eventContent\":"
                                        "{\"response-data\":{}}}";
        static const char no_data[] = "{\"eventTarget\":\"t\",\"eventContent\":{}}";
        char *self = dmi_async_value(99, c.in);
        const it_outgoing recs[] = {
            {"req", good[0], strlen(good[0]), type_header},
            {"req", "not json", 8, NULL},
            {"req", no_target, sizeof(no_target) - 1, type_header},
            {"req", good[1], strlen(good[1]), type_header},
            {"req", no_data, sizeof(no_data) - 1, NULL},
            {"req", self, strlen(self), NULL},
            {"req", good[2], strlen(good[2]), NULL},
        };
        it_publish(c.in, recs, sizeof(recs) / sizeof(recs[0]));
        free(self);
    }
    pid = case_start(&c, NULL, 1);
    cr_assert_eq(wait_committed(c.group_role, c.in, 7, WAIT_MS), 7, "the partition moved on");
    stop_cleanly(pid);

    nout = it_read_topic(a, 3, WAIT_MS, &out);
    cr_assert_eq(nout, 3, "the good results reach the client topic: %zu", nout);
    for (size_t i = 0; i < nout; i++) {
        json_object *doc = json_tokener_parse(out[i].value), *fwd, *data, *v;
        const char *value, *type;
        size_t size, ntype = 0;
        cr_assert_not_null(doc, "%s", out[i].value);
        cr_assert(json_object_object_get_ex(doc, "forwardedEvent", &fwd), "%s", out[i].value);
        cr_assert(json_object_object_get_ex(fwd, "response-data", &data));
        cr_assert(json_object_object_get_ex(data, "seq", &v));
        cr_assert_eq(json_object_get_int(v), (int)i, "in order: %s", out[i].value);
        /* keyed by the new eventId, which is not the DMI's */
        cr_assert(json_object_object_get_ex(doc, "eventId", &v));
        cr_assert_str_eq(out[i].key, json_object_get_string(v));
        cr_assert_neq(strncmp(out[i].key, "dmi-ev-", 7), 0);
        snprintf(buf, sizeof(buf), "dmi-ev-%zu", i);
        cr_assert(json_object_object_get_ex(fwd, "eventId", &v));
        cr_assert_str_eq(json_object_get_string(v), buf);
        snprintf(buf, sizeof(buf), "req-%zu", i);
        cr_assert(json_object_object_get_ex(doc, "eventCorrelationId", &v));
        cr_assert_str_eq(json_object_get_string(v), buf);
        cr_assert_eq(conformance_check_event(CONFORMANCE_NCMP_ASYNC, doc, err, sizeof(err)), 0,
                     "%s: %s", err, out[i].value);
        json_object_put(doc);
        /* one header, Spring's type header as NCMP's consumers read it
         * (plain UTF-8: their JSON deserialiser maps it to a class) */
        cr_assert_eq(rd_kafka_header_cnt(out[i].headers), 1);
        cr_assert_eq(
            rd_kafka_header_get_all(out[i].headers, 0, &type, (const void **)&value, &size), 0);
        ntype = size;
        cr_assert_str_eq(type, "__TypeId__");
        cr_assert_eq(ntype, strlen(NCMP_ASYNC_TYPE));
        cr_assert_eq(memcmp(value, NCMP_ASYNC_TYPE, ntype), 0);
        cr_assert_eq(
            conformance_check_headers(CONFORMANCE_NCMP_ASYNC, out[i].headers, err, sizeof(err)), 0,
            "%s", err);
    }

    ndlq = it_read_topic(c.dlq, 4, WAIT_MS, &dlq);
    cr_assert_eq(ndlq, 4, "the bad ones are dead-lettered: %zu", ndlq);
    {
        static const char *const reasons[] = {
            "not a DmiAsyncRequestResponseEvent: ",
            "no eventTarget (the client topic)",
            "no eventContent.response-data object",
            "is a topic of the forwarder itself",
        };
        for (size_t i = 0; i < ndlq; i++) {
            cr_assert(strstr(it_record_header(&dlq[i], "dlq_reason", buf, sizeof(buf)), reasons[i]),
                      "dead letter %zu: %s", i, buf);
            cr_assert_str_eq(it_record_header(&dlq[i], "dlq_role", buf, sizeof(buf)),
                             "async-forward");
            cr_assert_str_eq(dlq[i].key, "req", "the original key");
            cr_assert_eq(conformance_check_headers(CONFORMANCE_DEAD_LETTER, dlq[i].headers, err,
                                                   sizeof(err)),
                         0, "%s", err);
        }
        cr_assert_str_eq(dlq[0].value, "not json", "the original value");
        cr_assert_str_eq(it_record_header(&dlq[1], "__TypeId__", buf, sizeof(buf)), DMI_ASYNC_TYPE,
                         "the original headers");
    }
    for (int i = 0; i < 3; i++)
        free(good[i]);
    it_records_free(out, nout);
    it_records_free(dlq, ndlq);
}
