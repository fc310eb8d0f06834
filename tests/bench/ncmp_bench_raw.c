/*
 * ncmp-bench-raw: the raw limits a benchmark compares ncmpd with, measured
 * on the same services in the same run.
 *
 *   ncmp-bench-raw consume -b BROKERS -t TOPIC -n N
 *       consume N records from the start of every partition, as fast as possible
 *   ncmp-bench-raw consume -b BROKERS -t TOPIC -n N -p
 *       the same, printing each record's value on a line of its own
 *   ncmp-bench-raw copy -d DBURL -n N
 *       COPY N ingest-shaped rows into an empty copy of ingest_event
 *   ncmp-bench-raw publish-avc -b BROKERS -t TOPIC -f FILE -n N [-R RATE]
 *       publish N copies of FILE (an AVC event) as NCMP's AVC background load
 *       does: calls of 500 records, each call with one key neType-<1..10>
 *       and one set of CloudEvent headers (one ce_id); with -R, at RATE
 *       records per second (each call leaves at its scheduled time, as
 *       k6's constant arrival rate; what the producer cannot send by the
 *       schedule's end is not sent: the count printed says what was),
 *       otherwise as fast as possible; with -s FIRST, each record has
 *       its own ce_id, numbered from FIRST (./run chaos finds every one
 *       on the forwarder's output)
 *   ncmp-bench-raw forward -b BROKERS -t TOPIC -o OUT -n N
 *       consume N records from the start of every partition of TOPIC and
 *       produce each (value, key, headers) to OUT, as fast as librdkafka
 *       allows: the raw limit of a forwarder (no group, no commits)
 *   ncmp-bench-raw committed -b BROKERS -g GROUP -t TOPIC -n N [-w SECS]
 *       wait until GROUP has committed N offsets of TOPIC (summed over the
 *       partitions) and print `committed <n> <unix time, seconds>` at that
 *       moment: the end of a forwarding run that commits after the acks.
 *       -n 0: N is the topic's end offsets, as they are at the start.
 *       Gives up after SECS (900) with exit status 1
 *   ncmp-bench-raw end -b BROKERS -t TOPIC
 *       print `end <n>`: the end offsets of TOPIC's partitions, summed
 *   ncmp-bench-raw copy-handles -d DBURL -n N
 *       COPY the N handles of the reference registration workload (the same
 *       columns and values ncmpd stores) into an empty copy of cm_handle
 *   ncmp-bench-raw datajob-parse -n OPS [-H HANDLES] [-r RUNS]
 *       parse the body of NCMP's write data job of OPS operations on the
 *       first HANDLES alternate ids (50,000 by default; bench_datajob.h,
 *       the same bytes as the load client's first body) with json-c in
 *       one call, RUNS times (5 by default); the median, freeing the
 *       tree not timed. Prints `datajob-parse <ops> <seconds> <ops/s>
 *       bytes <body bytes> cpu <seconds>`, the last the median of the
 *       thread's CPU time (what a busy machine does not add to)
 *   ncmp-bench-raw calibrate [-r RUNS]
 *       the machine's speed at this moment: SHA-256 over 4 MB, RUNS times
 *       (9 by default). Prints `calibrate <MB> <seconds> <MB/s> cpu
 *       <seconds>`, the least of the runs: the CPU time grows when the
 *       core itself is slower (its clock, a sibling thread or another
 *       tenant of the host), the wall time also when other processes
 *       want it; the least of 9 short runs is the least disturbed, so a
 *       slower machine shows rather than a busy moment
 *
 * Each prints one line: `<what> <count> <seconds> <per-second>`.
 */
#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bench_datajob.h"
#include "bench_usage.h"
#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_kafka.h"
#include "ncmp_log.h"
#include "ncmp_sha256.h"
#include "ncmp_time.h"

static const char usage[] =
    "usage: ncmp-bench-raw COMMAND [-b BROKERS] [-t TOPIC] [-o OUT-TOPIC] [-g GROUP] [-f FILE]\n"
    "                      [-d DBURL] [-H HANDLES] [-r RUNS] [-R RATE] [-s FIRST] [-w SECS]\n"
    "                      [-n N] [-p]\n"
    "The raw limits ./run bench compares ncmpd with. COMMAND is one of:\n"
    "  consume -b -t -n [-p]      consume N records of TOPIC (-p: print each value)\n"
    "  forward -b -t -o -n        consume N records of TOPIC and produce each to OUT-TOPIC\n"
    "  publish-avc -b -t -f -n [-R RATE] [-s FIRST]\n"
    "                             publish N copies of the AVC event in FILE\n"
    "  committed -b -g -t -n [-w SECS]\n"
    "                             wait until GROUP has committed N offsets of TOPIC\n"
    "  end -b -t                  print the end offsets of TOPIC, summed\n"
    "  copy -d -n                 COPY N ingest-shaped rows into a copy of ingest_event\n"
    "  copy-handles -d -n         COPY N reference handles into a copy of cm_handle\n"
    "  datajob-parse -n [-H] [-r] parse NCMP's write data job of N operations\n"
    "  calibrate [-r RUNS]        the machine's speed: SHA-256 over 4 MB\n";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every partition of `topic` from its start, by a reader (no group: no
 * join to wait for). Returns the reader, or NULL. */
static rd_kafka_t *bench_reader(const char *brokers, const char *topic)
{
    ncmp_kafka_opts kopts = {0};
    rd_kafka_t *rk = NULL;
    ncmp_err err;

    kopts.bootstrap_servers = brokers;
    if (ncmp_kafka_reader_new(&rk, &kopts, "ncmp-bench-raw", NULL, &err) != 0 ||
        ncmp_kafka_reader_assign_all(rk, topic, RD_KAFKA_OFFSET_BEGINNING, 60000, NULL, &err) !=
            0) {
        fprintf(stderr, "ncmp-bench-raw: %s\n", err.msg);
        ncmp_kafka_reader_close(rk);
        return NULL;
    }
    return rk;
}

/* Consume from the beginning of every partition until n records have
 * arrived (a batch may bring more: at least n is success). */
static int bench_consume(const char *brokers, const char *topic, long n, int print)
{
    rd_kafka_t *rk = bench_reader(brokers, topic);
    rd_kafka_queue_t *q;
    long got = 0;
    double t0 = 0, deadline = now_s() + 600;

    if (!rk)
        return 1;
    q = rd_kafka_queue_get_consumer(rk);
    while (got < n && now_s() < deadline) {
        rd_kafka_message_t *msgs[1000];
        ssize_t k = rd_kafka_consume_batch_queue(q, 100, msgs, 1000);
        for (ssize_t i = 0; i < k; i++) {
            if (!msgs[i]->err) {
                if (!t0)
                    t0 = now_s(); /* throughput from the first record */
                got++;
                if (print)
                    fprintf(stderr, "%.*s\n", (int)msgs[i]->len, (const char *)msgs[i]->payload);
            }
            rd_kafka_message_destroy(msgs[i]);
        }
    }
    {
        double secs = now_s() - t0;
        printf("consume %ld %.3f %.0f\n", got, secs, got / (secs > 0 ? secs : 1e-9));
    }
    rd_kafka_queue_destroy(q);
    ncmp_kafka_reader_close(rk);
    return got >= n ? 0 : 1;
}

/* Delivery reports: count the acknowledged and the failed. */
typedef struct bench_acks {
    atomic_long acked;
    atomic_long failed;
} bench_acks;

static void bench_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    bench_acks *acks = opaque;
    /* a forwarded record: the consumed one it points into is done now */
    if (m->_private)
        rd_kafka_message_destroy(m->_private);
    if (m->err)
        atomic_fetch_add(&acks->failed, 1);
    else
        atomic_fetch_add(&acks->acked, 1);
}

/* A producer of ncmpd's forwarders' profile (workers/forward/forward.c), so that
 * the raw limit differs from them only by what ncmpd adds. Returns it, or
 * NULL. */
static rd_kafka_t *bench_producer(const char *brokers, bench_acks *acks)
{
    const ncmp_kafka_hooks hooks = {.opaque = acks, .dr_msg_cb = bench_dr_cb};
    ncmp_kafka_opts kopts = {0};
    rd_kafka_t *rk = NULL;
    ncmp_err err;

    kopts.bootstrap_servers = brokers;
    if (ncmp_kafka_producer_new(&rk, &kopts, NCMP_PRODUCER_BULK, "ncmp-bench-raw", &hooks, &err) !=
        0) {
        fprintf(stderr, "ncmp-bench-raw: %s\n", err.msg);
        return NULL;
    }
    return rk;
}

static int bench_send(rd_kafka_t *rk, const char *topic, const void *key, size_t keylen,
                      const void *value, size_t len, rd_kafka_headers_t *h, void *opaque)
{
    rd_kafka_resp_err_t e;

    for (;;) {
        e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, keylen),
                              RD_KAFKA_V_VALUE((void *)value, len), RD_KAFKA_V_MSGFLAGS(0),
                              RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            break;
        rd_kafka_poll(rk, 10);
    }
    if (e) {
        if (h)
            rd_kafka_headers_destroy(h);
        fprintf(stderr, "ncmp-bench-raw: produce to %s: %s\n", topic, rd_kafka_err2str(e));
        return -1;
    }
    rd_kafka_poll(rk, 0);
    return 0;
}

static int read_file(const char *path, ncmp_buf *out)
{
    FILE *f = fopen(path, "rb");
    char chunk[4096];
    size_t got;

    if (!f) {
        fprintf(stderr, "ncmp-bench-raw: cannot read %s\n", path);
        return -1;
    }
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
        ncmp_buf_append(out, chunk, got);
    fclose(f);
    return 0;
}

/* The CloudEvent headers of one call of NCMP's AVC background load. */
static rd_kafka_headers_t *avc_headers(long call)
{
    char id[64];
    const ncmp_cloudevent ce = {
        .id = id,
        .source = "DMI",
        .type = "org.onap.cps.ncmp.events.avc1_0_0.AvcEvent",
        .dataschema = "urn:cps:org.onap.cps.ncmp.events.avc1_0_0.AvcEvent:1.0.0",
        .correlation_id = id,
        .destination = "dmi-cm-events",
    };

    snprintf(id, sizeof(id), "00000000-0000-4000-8000-%012ld", call);
    return ncmp_cloudevent_headers(&ce);
}

static int bench_publish_avc(const char *brokers, const char *topic, const char *file, long n,
                             double rate, long first)
{
    bench_acks acks = {0, 0};
    ncmp_buf value = NCMP_BUF_INIT;
    rd_kafka_headers_t *call_headers = NULL;
    rd_kafka_t *rk = NULL;
    char key[32];
    double t0, secs;
    int rc = 1;

    if (read_file(file, &value) != 0)
        return 1;
    rk = bench_producer(brokers, &acks);
    if (!rk)
        goto done;
    srand(42);
    t0 = now_s();
    for (long i = 0; i < n; i++) {
        if (i % 500 == 0) {
            /* the call's scheduled time; past the schedule's end, stop */
            while (rate > 0 && now_s() < t0 + (double)i / rate) {
                rd_kafka_poll(rk, 0);
                usleep(1000);
            }
            if (rate > 0 && now_s() > t0 + (double)n / rate) {
                n = i;
                break;
            }
            if (call_headers)
                rd_kafka_headers_destroy(call_headers);
            call_headers = avc_headers(i / 500);
            snprintf(key, sizeof(key), "neType-%d", 1 + rand() % 10);
        }
        /* the value is one buffer for all: not copied */
        if (bench_send(rk, topic, key, strlen(key), value.data, value.len,
                       first >= 0 ? avc_headers(first + i) : rd_kafka_headers_copy(call_headers),
                       NULL) != 0)
            goto done;
    }
    rd_kafka_flush(rk, 600000);
    secs = now_s() - t0;
    printf("publish-avc %ld %.3f %.0f\n", (long)atomic_load(&acks.acked), secs,
           atomic_load(&acks.acked) / (secs > 0 ? secs : 1e-9));
    rc = atomic_load(&acks.acked) == n ? 0 : 1;
done:
    if (call_headers)
        rd_kafka_headers_destroy(call_headers);
    if (rk)
        rd_kafka_destroy(rk);
    ncmp_buf_free(&value);
    return rc;
}

/* Forward n records from `topic` to `out`: each record produced with its
 * key, value (not copied: the consumed record lives until its delivery
 * report) and headers (handed over), timed from the first record read to
 * the last ack. */
static int bench_forward(const char *brokers, const char *topic, const char *out, long n)
{
    bench_acks acks = {0, 0};
    rd_kafka_t *consumer, *producer;
    rd_kafka_queue_t *q = NULL;
    long got = 0;
    int rc = 1;
    double t0 = 0, secs, deadline = now_s() + 600;

    producer = bench_producer(brokers, &acks);
    consumer = producer ? bench_reader(brokers, topic) : NULL;
    if (!consumer)
        goto done;
    q = rd_kafka_queue_get_consumer(consumer);
    while (got < n && now_s() < deadline) {
        rd_kafka_message_t *msgs[1000];
        ssize_t k = rd_kafka_consume_batch_queue(q, 100, msgs, 1000);
        for (ssize_t i = 0; i < k; i++) {
            rd_kafka_message_t *m = msgs[i];
            rd_kafka_headers_t *h = NULL;
            if (m->err || got >= n) {
                rd_kafka_message_destroy(m);
                continue;
            }
            if (!t0)
                t0 = now_s();
            if (rd_kafka_message_detach_headers(m, &h) != RD_KAFKA_RESP_ERR_NO_ERROR)
                h = NULL;
            got++;
            if (bench_send(producer, out, m->key, m->key ? m->key_len : 0, m->payload, m->len, h,
                           m) != 0) {
                rd_kafka_message_destroy(m);
                goto done;
            }
        }
        rd_kafka_poll(producer, 0);
    }
    rd_kafka_flush(producer, 600000);
    secs = now_s() - t0;
    printf("forward %ld %.3f %.0f\n", (long)atomic_load(&acks.acked), secs,
           atomic_load(&acks.acked) / (secs > 0 ? secs : 1e-9));
    rc = atomic_load(&acks.acked) == n ? 0 : 1;
done:
    if (producer) {
        rd_kafka_flush(producer, 60000);
        rd_kafka_destroy(producer);
    }
    if (q)
        rd_kafka_queue_destroy(q);
    ncmp_kafka_reader_close(consumer);
    return rc;
}

/* Poll the group's committed offsets every 20 ms until they sum to n. */
/* The end offsets of the nparts partitions of `topic`, summed into *sum. */
static int end_offsets(rd_kafka_t *rk, const char *topic, int nparts, long *sum)
{
    *sum = 0;
    for (int p = 0; p < nparts; p++) {
        int64_t lo = 0, hi = 0;
        if (rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 10000) != 0) {
            fprintf(stderr, "ncmp-bench-raw: no end offset of %s [%d]\n", topic, p);
            return 1;
        }
        *sum += (long)hi;
    }
    return 0;
}

/* A reader (named `group`, NULL: none) and the number of partitions of
 * `topic`; -1 (printed) when either fails. */
static int topic_reader(const char *brokers, const char *group, const char *topic, rd_kafka_t **rk,
                        int *nparts)
{
    ncmp_kafka_opts kopts = {0};
    ncmp_err err;

    *rk = NULL;
    kopts.bootstrap_servers = brokers;
    if (ncmp_kafka_reader_new(rk, &kopts, "ncmp-bench-raw", group, &err) != 0 ||
        ncmp_kafka_partition_count(*rk, topic, 60000, nparts, &err) != 0) {
        fprintf(stderr, "ncmp-bench-raw: %s\n", err.msg);
        ncmp_kafka_reader_close(*rk);
        *rk = NULL;
        return -1;
    }
    return 0;
}

/* `end`: print "end <sum of the end offsets>" of `topic`. */
static int bench_end(const char *brokers, const char *topic)
{
    rd_kafka_t *rk;
    long sum = 0;
    int nparts = 0, rc;

    if (topic_reader(brokers, NULL, topic, &rk, &nparts) != 0)
        return 1;
    rc = end_offsets(rk, topic, nparts, &sum);
    if (rc == 0)
        printf("end %ld\n", sum);
    ncmp_kafka_reader_close(rk);
    return rc;
}

static int bench_committed(const char *brokers, const char *group, const char *topic, long n,
                           int wait_s)
{
    rd_kafka_topic_partition_list_t *parts;
    rd_kafka_t *rk;
    struct timespec ts;
    long sum = 0, end = 0;
    int nparts = 0, from_end = n <= 0;
    double deadline = now_s() + (wait_s > 0 ? wait_s : 900);

    /* a reader named after the group: it can ask for the group's offsets */
    if (topic_reader(brokers, group, topic, &rk, &nparts) != 0)
        return 1;
    if (from_end && end_offsets(rk, topic, nparts, &end) != 0) {
        ncmp_kafka_reader_close(rk);
        return 1;
    }
    parts = rd_kafka_topic_partition_list_new(nparts);
    for (int p = 0; p < nparts; p++)
        rd_kafka_topic_partition_list_add(parts, topic, p);
    if (from_end)
        n = end;
    while (sum < n && now_s() < deadline) {
        sum = 0;
        if (rd_kafka_committed(rk, parts, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR)
            for (int p = 0; p < nparts; p++)
                sum += parts->elems[p].offset > 0 ? (long)parts->elems[p].offset : 0;
        if (sum < n)
            ncmp_sleep_ms(20);
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    printf("committed %ld %.3f\n", sum, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
    rd_kafka_topic_partition_list_destroy(parts);
    ncmp_kafka_reader_close(rk);
    return sum >= n ? 0 : 1;
}

/* Time a COPY of `rows` into an empty copy of `table` and print
 * `<label> <n> <seconds> <per-second>`. The copy is created, and
 * committed, before the COPY, which so writes WAL as the pipeline does
 * (wal_level=minimal skips it for a table created in the same
 * transaction). */
static int copy_timed(const char *url, const char *table, const char *columns, const ncmp_buf *rows,
                      const char *label, long n)
{
    ncmp_db *db = NULL;
    ncmp_err err;
    ncmp_buf sql = NCMP_BUF_INIT;
    double t0, secs;
    int rc = 1;

    if (ncmp_db_open(&db, url, NULL, 10, &err) != 0)
        goto done;
    ncmp_buf_appendf(&sql,
                     "DROP TABLE IF EXISTS bench_copy_%s;"
                     "CREATE TABLE bench_copy_%s (LIKE %s INCLUDING ALL)",
                     table, table, table);
    if (ncmp_db_exec(db, sql.data, &err) != 0)
        goto done;
    ncmp_buf_reset(&sql);
    ncmp_buf_appendf(&sql, "COPY bench_copy_%s (%s) FROM STDIN", table, columns);
    t0 = now_s();
    if (ncmp_db_copy(db, sql.data, rows->data, rows->len, &err) != 0)
        goto done;
    secs = now_s() - t0;
    printf("%s %ld %.3f %.0f\n", label, n, secs, n / (secs > 0 ? secs : 1e-9));
    ncmp_buf_reset(&sql);
    ncmp_buf_appendf(&sql, "DROP TABLE bench_copy_%s", table);
    ncmp_db_exec(db, sql.data, &err);
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "ncmp-bench-raw: %s\n", err.msg);
    ncmp_buf_free(&sql);
    ncmp_db_close(db);
    return rc;
}

/* The same rows the ingest pipeline stores: topic, partition, offset, key,
 * body. */
static int bench_copy(const char *url, long n)
{
    ncmp_buf rows = NCMP_BUF_INIT;
    int rc;

    for (long i = 1; i <= n; i++)
        ncmp_buf_appendf(&rows,
                         "ncmp-ingest\t%ld\t%ld\tevt-%ld\t{\"id\": \"evt-%ld\", \"seq\": %ld, "
                         "\"source\": \"ncmp-publish\"}\n",
                         i % 6, i / 6, i, i, i);
    rc = copy_timed(url, "ingest_event", "topic, partition, \"offset\", event_key, body", &rows,
                    "copy", n);
    ncmp_buf_free(&rows);
    return rc;
}

/* The reference registration workload's handles, as ncmpd stores them. */
static int bench_copy_handles(const char *url, long n)
{
    static const char *const tags[] = {"tagA", "tagB", "tagC", "tagD", "tagE"};
    ncmp_buf rows = NCMP_BUF_INIT;
    int rc;

    for (long i = 1; i <= n; i++) {
        long index = (i - 1) % 2000; /* position in its 2,000-handle request */
        const char *tag = tags[index % 5];
        ncmp_buf_appendf(
            &rows,
            "ch-%ld\t/SubNetwork=Europe/SubNetwork=Ireland/MeContext=MyRadioNode%ld/"
            "ManagedElement=MyManagedElement%ld\t%s\tsome-data-producer-id\t"
            "{\"segmentId\":\"%ld\",\"networkSegment\":\"Region=NorthAmerica,Segment=%ld\","
            "\"deviceIdentifier\":\"Element=RadioBaseStation_5G_%ld\",\"hardwareVersion\":"
            "\"HW-%s\",\"softwareVersion\":\"Firmware_%s\",\"syncStatus\":\"ACTIVE\","
            "\"nodeCategory\":\"VirtualNode\"}\t{\"systemId\":\"%ld\",\"systemName\":\"ncmp\"}\t"
            "COMPLETE\thttp://ncmp-dmi-plugin-demo-and-csit-stub:8092\tADVISED\n",
            i, i, i, tag, index + 1, 1 + i % 10, index + 1000, tag, tag, index + 1);
    }
    rc = copy_timed(url, "cm_handle",
                    "id, alternate_id, module_set_tag, data_producer_identifier,"
                    " additional_properties, public_properties, registration_trust_level,"
                    " dmi_service_name, state",
                    &rows, "copy-handles", n);
    ncmp_buf_free(&rows);
    return rc;
}

/* The calling thread's CPU time, seconds. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The raw limit of reading a data job: json-c over the whole body. */
static int bench_datajob_parse(long ops, long handles, int runs)
{
    unsigned long long seed = BENCH_DATAJOB_SEED;
    ncmp_buf body = NCMP_BUF_INIT;
    double *secs = ncmp_xcalloc((size_t)runs, sizeof(*secs));
    double *cpu = ncmp_xcalloc((size_t)runs, sizeof(*cpu));
    int rc = 0;

    bench_datajob_body(&body, ops, 1, handles, &seed);
    for (int i = 0; i < runs && rc == 0; i++) {
        json_tokener *tok = json_tokener_new();
        json_object *doc;
        double t0 = now_s(), c0 = cpu_s();
        doc = json_tokener_parse_ex(tok, body.data, (int)body.len);
        secs[i] = now_s() - t0;
        cpu[i] = cpu_s() - c0;
        if (!doc || json_tokener_get_error(tok) != json_tokener_success) {
            fprintf(stderr, "ncmp-bench-raw: json-c refused the body: %s\n",
                    json_tokener_error_desc(json_tokener_get_error(tok)));
            rc = 1;
        }
        json_object_put(doc);
        json_tokener_free(tok);
    }
    if (rc == 0) {
        qsort(secs, (size_t)runs, sizeof(*secs), cmp_double);
        qsort(cpu, (size_t)runs, sizeof(*cpu), cmp_double);
        printf("datajob-parse %ld %.4f %.0f bytes %zu cpu %.4f\n", ops / 2 * 2, secs[runs / 2],
               (double)(ops / 2 * 2) / secs[runs / 2], body.len, cpu[runs / 2]);
    }
    free(secs);
    free(cpu);
    ncmp_buf_free(&body);
    return rc;
}

/* SHA-256 over 4 MB, `runs` times: the least wall and the least thread
 * CPU time of the runs. */
static int bench_calibrate(int runs)
{
    enum { MB = 4 };
    size_t len = (size_t)MB << 20;
    unsigned char *data = ncmp_xmalloc(len), digest[32];
    double secs = 0, cpu = 0;

    for (size_t i = 0; i < len; i++)
        data[i] = (unsigned char)(i * 2654435761u >> 24);
    for (int i = 0; i < runs; i++) {
        ncmp_sha256 h;
        double t0 = now_s(), c0 = cpu_s(), t, c;
        ncmp_sha256_init(&h);
        ncmp_sha256_update(&h, data, len);
        ncmp_sha256_final(&h, digest);
        t = now_s() - t0;
        c = cpu_s() - c0;
        if (i == 0 || t < secs)
            secs = t;
        if (i == 0 || c < cpu)
            cpu = c;
        data[i % len] ^= digest[0]; /* the next run hashes other bytes */
    }
    printf("calibrate %d %.4f %.0f cpu %.4f\n", MB, secs, MB / secs, cpu);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    const char *brokers = "127.0.0.1:9092", *topic = NULL, *group = NULL, *url = NULL, *out = NULL,
               *file = NULL;
    long n = 0, handles = 50000;
    long first = -1;
    double rate = 0;
    int c, print = 0, runs = 0, wait_s = 0; /* runs: 0 the command's default */

    if (bench_help_asked(argc, argv))
        return bench_usage(usage, 1);
    if (argc < 2)
        return bench_usage(usage, 0);
    ncmp_log_setup(NCMP_LOG_WARN, NCMP_LOG_TEXT, stderr);
    optind = 2;
    while ((c = getopt(argc, argv, "b:t:o:f:g:d:n:H:r:R:s:w:p")) != -1) {
        switch (c) {
        case 'b':
            brokers = optarg;
            break;
        case 't':
            topic = optarg;
            break;
        case 'g':
            group = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'f':
            file = optarg;
            break;
        case 'd':
            url = optarg;
            break;
        case 'n':
            n = strtol(optarg, NULL, 10);
            break;
        case 'p':
            print = 1;
            break;
        case 'H':
            handles = strtol(optarg, NULL, 10);
            break;
        case 'r':
            runs = (int)strtol(optarg, NULL, 10);
            break;
        case 'R':
            rate = strtod(optarg, NULL);
            break;
        case 's':
            first = strtol(optarg, NULL, 10);
            break;
        case 'w':
            wait_s = (int)strtol(optarg, NULL, 10);
            break;
        default:
            return bench_usage(usage, 0);
        }
    }
    if (strcmp(argv[1], "consume") == 0 && topic && n > 0)
        return bench_consume(brokers, topic, n, print);
    if (strcmp(argv[1], "committed") == 0 && group && topic && n >= 0)
        return bench_committed(brokers, group, topic, n, wait_s);
    if (strcmp(argv[1], "end") == 0 && topic)
        return bench_end(brokers, topic);
    if (strcmp(argv[1], "forward") == 0 && topic && out && n > 0)
        return bench_forward(brokers, topic, out, n);
    if (strcmp(argv[1], "publish-avc") == 0 && topic && file && n > 0)
        return bench_publish_avc(brokers, topic, file, n, rate, first);
    if (strcmp(argv[1], "copy") == 0 && url && n > 0)
        return bench_copy(url, n);
    if (strcmp(argv[1], "copy-handles") == 0 && url && n > 0)
        return bench_copy_handles(url, n);
    if (strcmp(argv[1], "calibrate") == 0 && runs >= 0)
        return bench_calibrate(runs ? runs : 9);
    if (strcmp(argv[1], "datajob-parse") == 0 && n > 1 && handles > 0 && runs >= 0)
        return bench_datajob_parse(n, handles, runs ? runs : 5);
    fprintf(stderr, "ncmp-bench-raw: bad arguments for '%s'\n", argv[1]);
    return bench_usage(usage, 0);
}
