/* Unit tests of lib/ncmp_kafka.c against librdkafka's mock cluster: the
 * pass-through property test.mock.num.brokers makes a client start an
 * in-process broker (bootstrap.servers is then ignored). Consumer groups
 * are not used: they stall on the mock cluster. To read records back, a
 * reader (assigned partitions, no group) is pointed at the producer's mock
 * cluster's address. */
#include <criterion/criterion.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_kafka.h"
#include "ncmp_log.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"
#include "unit_leak.h"

TestSuite(ncmp_kafka, .fini = unit_leak_check);

#define TOPIC "ncmp-unit"

/* Options for a client with a mock cluster of its own. `max_bytes` (0 for
 * the default) is the largest record. The properties are static: the
 * options stay valid for the whole test. */
static ncmp_kafka_opts mock_opts(int max_bytes)
{
    static ncmp_kv mock[] = {{"test.mock.num.brokers", "1"}};
    ncmp_kafka_opts opts = {NULL, max_bytes, mock, 1};

    /* librdkafka's own logs would go to stderr; only errors matter here */
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    return opts;
}

/* A producer on its own mock cluster, with TOPIC (one partition). */
static ncmp_producer *mock_producer(const ncmp_kafka_opts *opts)
{
    ncmp_producer *p = NULL;
    ncmp_err err = {0};
    rd_kafka_mock_cluster_t *mcluster;

    if (ncmp_producer_new(&p, opts, NCMP_PRODUCER_DEFAULT, "ncmp-unit-tests", &err) != 0)
        cr_assert_fail("producer: %s", err.msg);
    mcluster = rd_kafka_handle_mock_cluster(ncmp_producer_rk(p));
    cr_assert_not_null(mcluster, "no mock cluster: is test.mock.num.brokers passed through?");
    cr_assert_eq(rd_kafka_mock_topic_create(mcluster, TOPIC, 1, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
    return p;
}

Test(ncmp_kafka, producer_delivers_n_records)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = mock_producer(&opts);
    ncmp_delivery d;
    ncmp_err err = {0};
    const int n = 200;

    ncmp_delivery_init(&d);
    for (int i = 0; i < n; i++) {
        char key[16], value[64];
        int keylen = snprintf(key, sizeof(key), "k%d", i);
        int len = snprintf(value, sizeof(value), "{\"n\":%d}", i);
        cr_assert_eq(ncmp_producer_send(p, &d, TOPIC, RD_KAFKA_PARTITION_UA, key, (size_t)keylen,
                                        value, (size_t)len, NULL, &err),
                     0, "record %d: %s", i, err.msg);
    }
    cr_assert_eq(ncmp_producer_wait(p, &d, 10000, &err), 0, "%s", err.msg);
    cr_assert_eq(atomic_load(&d.pending), 0);
    cr_assert_eq(atomic_load(&d.failed), 0);
    cr_assert_str_eq(d.first_error, "");
    ncmp_producer_destroy(p);
}

Test(ncmp_kafka, wait_with_nothing_pending_returns_at_once)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = mock_producer(&opts);
    ncmp_delivery d;
    ncmp_err err = {0};

    ncmp_delivery_init(&d);
    cr_assert_eq(ncmp_producer_wait(p, &d, 0, &err), 0, "%s", err.msg);
    ncmp_producer_destroy(p);
}

Test(ncmp_kafka, wait_times_out_while_the_broker_is_down)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = mock_producer(&opts);
    rd_kafka_t *rk = ncmp_producer_rk(p);
    FILE *quiet = fopen("/dev/null", "w");
    ncmp_delivery d;
    ncmp_err err = {0};

    /* the broker going down is the point here: keep its errors out */
    cr_assert_not_null(quiet);
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, quiet);
    cr_assert_eq(rd_kafka_mock_broker_set_down(rd_kafka_handle_mock_cluster(rk), 1),
                 RD_KAFKA_RESP_ERR_NO_ERROR);
    ncmp_delivery_init(&d);
    cr_assert_eq(ncmp_producer_send(p, &d, TOPIC, 0, NULL, 0, "v", 1, NULL, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(atomic_load(&d.pending), 1);
    cr_assert_eq(ncmp_producer_wait(p, &d, 200, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_RETRY);
    cr_assert(strstr(err.msg, "not acknowledged within 200 ms"), "%s", err.msg);
    /* drop the record so that destroy does not wait for the broker; its
     * delivery report still counts it */
    rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    cr_assert_eq(ncmp_producer_wait(p, &d, 5000, &err), -1, "a purged record is a failure");
    cr_assert_eq(err.cls, NCMP_ERR_RETRY);
    cr_assert(strstr(err.msg, "1 records failed"), "%s", err.msg);
    cr_assert(strstr(err.msg, TOPIC), "%s", err.msg);
    cr_assert_eq(atomic_load(&d.pending), 0);
    cr_assert_eq(atomic_load(&d.failed), 0, "the tracker is ready for reuse");
    ncmp_producer_destroy(p);
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    fclose(quiet);
}

Test(ncmp_kafka, record_bigger_than_max_message_bytes_is_rejected)
{
    ncmp_kafka_opts opts = mock_opts(2048);
    ncmp_producer *p = mock_producer(&opts);
    static char big[8192];
    rd_kafka_headers_t *headers = rd_kafka_headers_new(1);
    ncmp_delivery d;
    ncmp_err err = {0};

    memset(big, 'x', sizeof(big));
    rd_kafka_header_add(headers, "type", -1, "big", -1);
    ncmp_delivery_init(&d);
    /* the headers are taken over even on failure (a leak shows under ASan) */
    cr_assert_eq(ncmp_producer_send(p, &d, TOPIC, 0, NULL, 0, big, sizeof(big), headers, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT, "class %s: %s", ncmp_err_class_name(err.cls), err.msg);
    cr_assert(strstr(err.msg, TOPIC), "%s", err.msg);
    cr_assert_eq(atomic_load(&d.pending), 0, "a refused record is not pending");
    /* a record that fits still goes through */
    cr_assert_eq(ncmp_producer_send(p, &d, TOPIC, 0, NULL, 0, big, 1000, NULL, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(ncmp_producer_wait(p, &d, 10000, &err), 0, "%s", err.msg);
    ncmp_producer_destroy(p);
}

Test(ncmp_kafka, bad_passthrough_property_is_fatal)
{
    ncmp_kv props[] = {{"no.such.property", "1"}};
    ncmp_kafka_opts opts = {"127.0.0.1:9092", 0, props, 1};
    ncmp_producer *p = NULL;
    ncmp_err err = {0};

    cr_assert_eq(ncmp_producer_new(&p, &opts, NCMP_PRODUCER_DEFAULT, "ncmp-unit-tests", &err), -1);
    cr_assert_null(p);
    cr_assert_eq(err.cls, NCMP_ERR_FATAL);
    cr_assert(strstr(err.msg, "kafka.no.such.property"), "%s", err.msg);
}

Test(ncmp_kafka, destroy_and_close_accept_null)
{
    ncmp_producer_destroy(NULL);
    ncmp_consumer_close(NULL);
}

/* A reader of TOPIC [0] from its start, on the producer's mock cluster. */
typedef struct reader {
    rd_kafka_t *rk;
    rd_kafka_message_t *m; /* the first record */
} reader;

/* The options of a client of `p`'s mock cluster (its address is static
 * in the cluster, which lives as long as p). */
static ncmp_kafka_opts cluster_opts(ncmp_producer *p)
{
    ncmp_kafka_opts opts = {NULL, 0, NULL, 0};

    opts.bootstrap_servers =
        rd_kafka_mock_cluster_bootstraps(rd_kafka_handle_mock_cluster(ncmp_producer_rk(p)));
    return opts;
}

static void reader_open(reader *r, ncmp_producer *p)
{
    ncmp_kafka_opts opts = cluster_opts(p);
    rd_kafka_topic_partition_list_t *parts;
    ncmp_err err = {0};

    r->m = NULL;
    r->rk = NULL;
    cr_assert_eq(ncmp_kafka_reader_new(&r->rk, &opts, "ncmp-unit-reader", NULL, &err), 0, "%s",
                 err.msg);
    parts = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(parts, TOPIC, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    cr_assert_eq(rd_kafka_assign(r->rk, parts), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(parts);
    for (int i = 0; i < 100 && !r->m; i++) {
        r->m = rd_kafka_consumer_poll(r->rk, 100);
        if (r->m && r->m->err) {
            rd_kafka_message_destroy(r->m);
            r->m = NULL;
        }
    }
}

/* The record first: the handle cannot go while a record is out. */
static void reader_close(reader *r)
{
    if (r->m)
        rd_kafka_message_destroy(r->m);
    ncmp_kafka_reader_close(r->rk);
}

Test(ncmp_kafka, header_value_of_a_consumed_record)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = mock_producer(&opts);
    rd_kafka_headers_t *headers = rd_kafka_headers_new(4);
    const rd_kafka_message_t *m;
    reader r;
    ncmp_delivery d;
    ncmp_err err = {0};
    char buf[64];
    char small[4];

    rd_kafka_header_add(headers, "type", -1, "first", -1);
    rd_kafka_header_add(headers, "type", -1, "last", -1);
    rd_kafka_header_add(headers, "trace-id", -1, "abcdef", -1);
    rd_kafka_header_add(headers, "empty", -1, NULL, 0);
    ncmp_delivery_init(&d);
    cr_assert_eq(ncmp_producer_send(p, &d, TOPIC, 0, "k", 1, "v", 1, headers, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(ncmp_producer_wait(p, &d, 10000, &err), 0, "%s", err.msg);

    reader_open(&r, p);
    m = r.m;
    if (!m) {
        reader_close(&r);
        cr_assert_fail("the record was not read back within 10 s");
    }
    cr_assert_eq(m->len, 1);
    cr_assert_str_eq(ncmp_kafka_header(m, "trace-id", buf, sizeof(buf)), "abcdef");
    cr_assert_eq(ncmp_kafka_header(m, "trace-id", buf, sizeof(buf)), buf, "returns buf");
    cr_assert_str_eq(ncmp_kafka_header(m, "type", buf, sizeof(buf)), "last",
                     "the last header of a name wins");
    cr_assert_null(ncmp_kafka_header(m, "absent", buf, sizeof(buf)));
    cr_assert_str_eq(ncmp_kafka_header(m, "empty", buf, sizeof(buf)), "");
    cr_assert_str_eq(ncmp_kafka_header(m, "trace-id", small, sizeof(small)), "abc",
                     "cut to the buffer");
    reader_close(&r);
    ncmp_producer_destroy(p);
}
