/* Integration tests of lib/ncmp_kafka.c on the real broker (Apache Kafka
 * 4.x) with the system's librdkafka (Debian's 2.0.2): what the mock
 * cluster cannot show.
 *
 * They pin one answer to "is rd_kafka_query_watermark_offsets usable
 * against Kafka 4?": yes. librdkafka 2.0.2 sends ListOffsets v2, which
 * Kafka 4 serves (it dropped only v0); hundreds of queries in a row all
 * answer. Only the partitions of a topic created a moment ago answer
 * NOT_LEADER or UNKNOWN_PARTITION until their leaders are elected, which
 * the tail reader retries. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "it_util.h"
#include "ncmp_kafka.h"
#include "ncmp_time.h"

#define PARTITIONS 6

/* Publish n_p records to each partition p of `topic` ("<p>-<i>" values). */
static void publish_per_partition(const char *topic, const int *n)
{
    ncmp_kafka_opts opts;
    ncmp_producer *p = NULL;
    ncmp_delivery d;
    ncmp_err err;

    it_kafka_opts(&opts);
    cr_assert_eq(ncmp_producer_new(&p, &opts, NCMP_PRODUCER_DEFAULT, "it-kafka", &err), 0, "%s",
                 err.msg);
    ncmp_delivery_init(&d);
    for (int part = 0; part < PARTITIONS; part++)
        for (int i = 0; i < n[part]; i++) {
            char value[32];
            int len = snprintf(value, sizeof(value), "%d-%d", part, i);
            cr_assert_eq(
                ncmp_producer_send(p, &d, topic, part, NULL, 0, value, (size_t)len, NULL, &err), 0,
                "%s", err.msg);
        }
    cr_assert_eq(ncmp_producer_wait(p, &d, 30000, &err), 0, "%s", err.msg);
    ncmp_producer_destroy(p);
}

Test(kafka, watermark_query_answers_every_time_on_kafka_4, .timeout = 120)
{
    const int n[PARTITIONS] = {0, 1, 2, 3, 5, 8};
    char topic[128];
    rd_kafka_t *rk;
    int failed = 0;
    char first_error[256] = "";

    it_unique(topic, sizeof(topic), "it-watermarks");
    it_create_topic(topic, PARTITIONS);
    publish_per_partition(topic, n);
    rk = it_reader(NULL);
    /* no retry here: in steady state, every query must answer */
    for (int i = 0; i < 50 * PARTITIONS; i++) {
        int part = i % PARTITIONS;
        int64_t lo = -1, hi = -1;
        rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(rk, topic, part, &lo, &hi, 5000);
        if (e) {
            if (!failed++)
                snprintf(first_error, sizeof(first_error), "query %d: %s", i, rd_kafka_err2str(e));
            continue;
        }
        cr_assert_eq(lo, 0, "partition %d low watermark %lld", part, (long long)lo);
        cr_assert_eq(hi, n[part], "partition %d high watermark %lld, published %d", part,
                     (long long)hi, n[part]);
    }
    ncmp_kafka_reader_close(rk);
    cr_assert_eq(failed, 0, "%d of %d watermark queries failed; first %s", failed, 50 * PARTITIONS,
                 first_error);
}

/* Read from rk until `want` records came or timeout_ms passed; their
 * values are appended to seen, one per line. Returns the count. */
static int read_values(rd_kafka_t *rk, int want, int timeout_ms, char *seen, size_t seenlen)
{
    double deadline = ncmp_now_ms() + timeout_ms;
    int got = 0;

    while (got < want && ncmp_now_ms() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (m && !m->err) {
            size_t used = strlen(seen);
            snprintf(seen + used, seenlen - used, "%.*s\n", (int)m->len, (const char *)m->payload);
            got++;
        }
        if (m)
            rd_kafka_message_destroy(m);
    }
    return got;
}

Test(kafka, tail_reader_on_a_topic_just_created_reads_what_comes_after, .timeout = 120)
{
    const int before[PARTITIONS] = {2, 2, 2, 2, 2, 2};
    const int after[PARTITIONS] = {1, 0, 1, 0, 1, 0};
    char topic[128], seen[1024] = "";
    ncmp_kafka_opts opts;
    rd_kafka_t *rk = NULL;
    ncmp_err err;
    int got;

    it_unique(topic, sizeof(topic), "it-tail");
    it_kafka_opts(&opts);
    /* right after its creation: the leaders may not be elected yet */
    it_create_topic(topic, PARTITIONS);
    cr_assert_eq(ncmp_kafka_tail_reader_new(&rk, &opts, "it-tail", NULL, topic, 30000, &err), 0,
                 "%s", err.msg);
    ncmp_kafka_reader_close(rk);
    rk = NULL;
    publish_per_partition(topic, before);
    cr_assert_eq(ncmp_kafka_tail_reader_new(&rk, &opts, "it-tail", NULL, topic, 30000, &err), 0,
                 "%s", err.msg);
    publish_per_partition(topic, after);
    got = read_values(rk, 3, 20000, seen, sizeof(seen));
    /* and nothing else comes */
    got += read_values(rk, 1, 1500, seen + strlen(seen), sizeof(seen) - strlen(seen));
    ncmp_kafka_reader_close(rk);
    cr_assert_eq(got, 3, "read %d records:\n%s", got, seen);
    cr_assert(strstr(seen, "0-0\n") && strstr(seen, "2-0\n") && strstr(seen, "4-0\n"),
              "the records after the reader:\n%s", seen);
}

static int count_record(const rd_kafka_message_t *m, void *arg, ncmp_err *err)
{
    (void)m;
    (void)err;
    (*(int *)arg)++;
    return 0;
}

Test(kafka, scan_reads_from_each_checkpoint_to_the_end, .timeout = 120)
{
    const int n[PARTITIONS] = {4, 0, 3, 1, 2, 6};
    const int64_t from[PARTITIONS] = {1, 0, 3, 0, 2, 6};
    int64_t end[PARTITIONS];
    char topic[128];
    ncmp_kafka_opts opts;
    ncmp_err err;
    int count = 0;

    it_unique(topic, sizeof(topic), "it-scan");
    it_create_topic(topic, PARTITIONS);
    publish_per_partition(topic, n);
    it_kafka_opts(&opts);
    cr_assert_eq(ncmp_kafka_scan(&opts, "it-scan", topic, from, PARTITIONS, 30000, count_record,
                                 &count, end, &err),
                 0, "%s", err.msg);
    /* 3 + 0 + 0 + 1 + 0 + 0 */
    cr_assert_eq(count, 4);
    for (int p = 0; p < PARTITIONS; p++)
        cr_assert_eq(end[p], n[p], "partition %d ends at %lld, has %d", p, (long long)end[p], n[p]);
}
