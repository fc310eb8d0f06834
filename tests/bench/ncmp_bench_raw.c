/*
 * ncmp-bench-raw: the raw limits a benchmark compares ncmpd with, measured
 * on the same services in the same run.
 *
 *   ncmp-bench-raw consume -b BROKERS -t TOPIC -n N
 *       consume N records in a fresh consumer group, as fast as possible
 *   ncmp-bench-raw copy -d DBURL -n N
 *       COPY N ingest-shaped rows into an empty copy of ingest_event
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

static int bench_consume(const char *brokers, const char *topic, long n)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_consumer *c = NULL;
    ncmp_err err;
    char group[128];
    const char *topics[1] = {topic};
    rd_kafka_message_t *msgs[1000];
    long got = 0;
    double t0 = 0, deadline;

    snprintf(group, sizeof(group), "bench-raw-%d-%ld", (int)getpid(), (long)time(NULL));
    if (ncmp_config_set(cfg, "kafka.bootstrap.servers", brokers, &err) != 0 ||
        ncmp_consumer_new(&c, cfg, group, NULL, topics, 1, &err) != 0) {
        fprintf(stderr, "ncmp-bench-raw: %s\n", err.msg);
        ncmp_config_destroy(cfg);
        return 1;
    }
    deadline = now_s() + 300;
    while (got < n && now_s() < deadline) {
        size_t k = 0;
        if (ncmp_consumer_poll(c, msgs, 1000, 100, &k, &err) != 0)
            continue;
        if (k && !t0)
            t0 = now_s(); /* from the first record: group join is not throughput */
        got += (long)k;
        for (size_t i = 0; i < k; i++)
            rd_kafka_message_destroy(msgs[i]);
    }
    {
        double secs = now_s() - t0;
        printf("consume %ld %.3f %.0f\n", got, secs, got / (secs > 0 ? secs : 1e-9));
    }
    ncmp_consumer_close(c);
    ncmp_config_destroy(cfg);
    return got == n ? 0 : 1;
}

static int bench_copy(const char *url, long n)
{
    ncmp_db *db = NULL;
    ncmp_err err;
    ncmp_buf rows = NCMP_BUF_INIT;
    double t0, secs;
    int rc = 1;

    if (ncmp_db_open(&db, url, NULL, 10, &err) != 0)
        goto done;
    if (ncmp_db_exec(db,
                     "DROP TABLE IF EXISTS bench_ingest_copy;"
                     /* committed before the COPY, which so writes WAL like the
                      * pipeline does (wal_level=minimal skips it for a table
                      * created in the same transaction) */
                     "CREATE TABLE bench_ingest_copy (LIKE ingest_event INCLUDING ALL)",
                     &err) != 0)
        goto done;
    /* the same rows the pipeline stores: topic, partition, offset, key, body */
    for (long i = 1; i <= n; i++) {
        char line[256];
        int len = snprintf(line, sizeof(line),
                           "ncmp-ingest\t%ld\t%ld\tevt-%ld\t{\"id\": \"evt-%ld\", \"seq\": %ld, "
                           "\"source\": \"ncmp-publish\"}\n",
                           i % 6, i / 6, i, i, i);
        ncmp_buf_append(&rows, line, (size_t)len);
    }
    t0 = now_s();
    if (ncmp_db_copy(db,
                     "COPY bench_ingest_copy (topic, partition, \"offset\", event_key, body) "
                     "FROM STDIN",
                     rows.data, rows.len, &err) != 0)
        goto done;
    secs = now_s() - t0;
    printf("copy %ld %.3f %.0f\n", n, secs, n / (secs > 0 ? secs : 1e-9));
    ncmp_db_exec(db, "DROP TABLE bench_ingest_copy", &err);
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "ncmp-bench-raw: %s\n", err.msg);
    ncmp_buf_free(&rows);
    ncmp_db_close(db);
    return rc;
}

int main(int argc, char **argv)
{
    const char *brokers = "127.0.0.1:9092", *topic = NULL, *url = NULL;
    long n = 0;
    int c;

    if (argc < 2) {
        fprintf(stderr, "usage: ncmp-bench-raw consume|copy [-b BROKERS] [-t TOPIC] [-d DBURL] "
                        "-n N\n");
        return 2;
    }
    ncmp_log_setup(NCMP_LOG_WARN, NCMP_LOG_TEXT, stderr);
    optind = 2;
    while ((c = getopt(argc, argv, "b:t:d:n:")) != -1) {
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
        default:
            return 2;
        }
    }
    if (strcmp(argv[1], "consume") == 0 && topic && n > 0)
        return bench_consume(brokers, topic, n);
    if (strcmp(argv[1], "copy") == 0 && url && n > 0)
        return bench_copy(url, n);
    fprintf(stderr, "ncmp-bench-raw: bad arguments\n");
    return 2;
}
