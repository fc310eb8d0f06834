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
 *   ncmp-bench-raw copy-handles -d DBURL -n N
 *       COPY the N handles of the reference registration workload (the same
 *       columns and values ncmpd stores) into an empty copy of cm_handle
 *
 * Each prints one line: `<what> <count> <seconds> <per-second>`.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncmp_buf.h"
#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_kafka.h"
#include "ncmp_log.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Consume from the beginning of every partition, without a group (no
 * join to wait for), until n records have arrived. */
static int bench_consume(const char *brokers, const char *topic, long n, int print)
{
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_t *rk;
    rd_kafka_topic_t *rkt;
    rd_kafka_queue_t *q;
    ncmp_err err;
    long got = 0;
    int nparts;
    double t0 = 0, deadline = now_s() + 600;

    rd_kafka_conf_set(conf, "bootstrap.servers", brokers, errstr, sizeof(errstr));
    rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
    if (!rk) {
        fprintf(stderr, "ncmp-bench-raw: %s\n", errstr);
        return 1;
    }
    rkt = rd_kafka_topic_new(rk, topic, NULL);
    if (ncmp_kafka_partition_count(rk, topic, 60000, &nparts, &err) != 0) {
        fprintf(stderr, "ncmp-bench-raw: %s\n", err.msg);
        rd_kafka_topic_destroy(rkt);
        rd_kafka_destroy(rk);
        return 1;
    }
    q = rd_kafka_queue_new(rk);
    for (int p = 0; p < nparts; p++)
        rd_kafka_consume_start_queue(rkt, p, RD_KAFKA_OFFSET_BEGINNING, q);
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
    for (int p = 0; p < nparts; p++)
        rd_kafka_consume_stop(rkt, p);
    rd_kafka_queue_destroy(q);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return got == n ? 0 : 1;
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

int main(int argc, char **argv)
{
    const char *brokers = "127.0.0.1:9092", *topic = NULL, *url = NULL;
    long n = 0;
    int c, print = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: ncmp-bench-raw consume|copy|copy-handles [-b BROKERS] [-t TOPIC] "
                        "[-d DBURL] -n N\n");
        return 2;
    }
    ncmp_log_setup(NCMP_LOG_WARN, NCMP_LOG_TEXT, stderr);
    optind = 2;
    while ((c = getopt(argc, argv, "b:t:d:n:p")) != -1) {
        switch (c) {
        case 'b':
            brokers = optarg;
            break;
        case 't':
            topic = optarg;
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
        default:
            return 2;
        }
    }
    if (strcmp(argv[1], "consume") == 0 && topic && n > 0)
        return bench_consume(brokers, topic, n, print);
    if (strcmp(argv[1], "copy") == 0 && url && n > 0)
        return bench_copy(url, n);
    if (strcmp(argv[1], "copy-handles") == 0 && url && n > 0)
        return bench_copy_handles(url, n);
    fprintf(stderr, "ncmp-bench-raw: bad arguments\n");
    return 2;
}
