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

/* --- profiles ------------------------------------------------------------ */

/* Setting `name` of client rk as librdkafka holds it: a client setting,
 * or one of the default topic settings (acks, partitioner). */
static const char *setting(rd_kafka_t *rk, const char *name, char *buf, size_t buflen)
{
    rd_kafka_conf_t *conf = (rd_kafka_conf_t *)rd_kafka_conf(rk);
    rd_kafka_topic_conf_t *tconf = rd_kafka_conf_get_default_topic_conf(conf);
    size_t size = buflen;

    if (rd_kafka_conf_get(conf, name, buf, &size) == RD_KAFKA_CONF_OK)
        return buf;
    size = buflen;
    cr_assert_not_null(tconf, "no setting %s", name);
    cr_assert_eq(rd_kafka_topic_conf_get(tconf, name, buf, &size), RD_KAFKA_CONF_OK,
                 "no setting %s", name);
    return buf;
}

typedef struct profile_case {
    ncmp_producer_profile profile;
    const char *name;
    const char *linger;
    const char *partitioner;
    const char *batch;
} profile_case;

Test(ncmp_kafka, producer_profiles_have_their_settings)
{
    static const profile_case cases[] = {
        {NCMP_PRODUCER_DEFAULT, "default", "5", "consistent_random", "10000"},
        {NCMP_PRODUCER_KEYED, "keyed", "5", "murmur2_random", "10000"},
        {NCMP_PRODUCER_BULK, "bulk", "10", "murmur2_random", "10000"},
        {NCMP_PRODUCER_PROMPT, "prompt", "1", "consistent_random", "10000"},
    };
    ncmp_kafka_opts opts = mock_opts(0);
    char buf[64];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const profile_case *c = &cases[i];
        rd_kafka_t *rk = NULL;
        ncmp_err err = {0};
        cr_assert_eq(ncmp_kafka_producer_new(&rk, &opts, c->profile, "ncmp-unit-tests", NULL, &err),
                     0, "%s: %s", c->name, err.msg);
        cr_assert_str_eq(ncmp_producer_profile_name(c->profile), c->name);
        cr_assert_str_eq(setting(rk, "enable.idempotence", buf, sizeof(buf)), "true", "%s",
                         c->name);
        cr_assert_str_eq(setting(rk, "acks", buf, sizeof(buf)), "-1", "%s: acks=all", c->name);
        cr_assert_str_eq(setting(rk, "linger.ms", buf, sizeof(buf)), c->linger, "%s", c->name);
        cr_assert_str_eq(setting(rk, "partitioner", buf, sizeof(buf)), c->partitioner, "%s",
                         c->name);
        cr_assert_str_eq(setting(rk, "message.max.bytes", buf, sizeof(buf)), "16777216", "%s",
                         c->name);
        rd_kafka_destroy(rk);
    }
}

Test(ncmp_kafka, passthrough_overrides_a_profile_setting_but_not_idempotence)
{
    ncmp_kv props[] = {
        {"test.mock.num.brokers", "1"}, {"linger.ms", "50"}, {"enable.idempotence", "false"}};
    ncmp_kafka_opts opts = {NULL, 4096, props, 3};
    rd_kafka_t *rk = NULL;
    ncmp_err err = {0};
    char buf[64];

    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    cr_assert_eq(
        ncmp_kafka_producer_new(&rk, &opts, NCMP_PRODUCER_KEYED, "ncmp-unit-tests", NULL, &err), 0,
        "%s", err.msg);
    cr_assert_str_eq(setting(rk, "linger.ms", buf, sizeof(buf)), "50");
    cr_assert_str_eq(setting(rk, "enable.idempotence", buf, sizeof(buf)), "true");
    cr_assert_str_eq(setting(rk, "message.max.bytes", buf, sizeof(buf)), "4096");
    cr_assert_str_eq(setting(rk, "client.id", buf, sizeof(buf)), "ncmp-unit-tests");
    rd_kafka_destroy(rk);
}

Test(ncmp_kafka, group_consumer_commits_only_when_told)
{
    ncmp_kafka_opts opts = mock_opts(0);
    const char *topics[1] = {TOPIC};
    rd_kafka_t *rk = NULL;
    ncmp_err err = {0};
    char buf[64];

    cr_assert_eq(
        ncmp_kafka_consumer_new(&rk, &opts, "unit-group", "unit-instance-1", topics, 1, NULL, &err),
        0, "%s", err.msg);
    cr_assert_str_eq(setting(rk, "group.id", buf, sizeof(buf)), "unit-group");
    cr_assert_str_eq(setting(rk, "group.instance.id", buf, sizeof(buf)), "unit-instance-1");
    cr_assert_str_eq(setting(rk, "client.id", buf, sizeof(buf)), "ncmpd-unit-group");
    cr_assert_str_eq(setting(rk, "enable.auto.commit", buf, sizeof(buf)), "false");
    cr_assert_str_eq(setting(rk, "enable.auto.offset.store", buf, sizeof(buf)), "false");
    cr_assert_str_eq(setting(rk, "session.timeout.ms", buf, sizeof(buf)), "10000");
    cr_assert_str_eq(setting(rk, "auto.offset.reset", buf, sizeof(buf)), "smallest");
    /* a full fetch (50 MiB) plus one record of the largest size plus 64 KiB */
    cr_assert_str_eq(setting(rk, "receive.message.max.bytes", buf, sizeof(buf)), "69271552");
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
}

Test(ncmp_kafka, reader_never_commits_and_reports_the_end)
{
    ncmp_kafka_opts opts = mock_opts(0);
    rd_kafka_t *rk = NULL;
    ncmp_err err = {0};
    char buf[64];

    cr_assert_eq(ncmp_kafka_reader_new(&rk, &opts, "unit-reader", NULL, &err), 0, "%s", err.msg);
    cr_assert_str_eq(setting(rk, "group.id", buf, sizeof(buf)), "unit-reader",
                     "named after its client id");
    cr_assert_str_eq(setting(rk, "enable.auto.commit", buf, sizeof(buf)), "false");
    cr_assert_str_eq(setting(rk, "enable.partition.eof", buf, sizeof(buf)), "true");
    ncmp_kafka_reader_close(rk);
    ncmp_kafka_reader_close(NULL);
}

/* --- fatal errors -------------------------------------------------------- */

/* Log errors to a temporary file, which the caller reads with log_text. */
static FILE *log_capture(void)
{
    FILE *f = tmpfile();

    cr_assert_not_null(f);
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, f);
    return f;
}

/* What was logged to f so far, in buf. */
static const char *log_text(FILE *f, char *buf, size_t buflen)
{
    size_t n;

    fflush(f);
    rewind(f);
    n = fread(buf, 1, buflen - 1, f);
    buf[n] = '\0';
    return buf;
}

Test(ncmp_kafka, fatal_producer_error_fails_send_and_stops_the_process)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = mock_producer(&opts);
    FILE *logged = log_capture();
    ncmp_delivery d;
    ncmp_err err = {0};
    char text[4096];

    ncmp_delivery_init(&d);
    cr_assert_eq(ncmp_producer_send(p, &d, TOPIC, 0, "k", 1, "v", 1, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_producer_wait(p, &d, 10000, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_stopping, 0);
    cr_assert_eq(rd_kafka_test_fatal_error(ncmp_producer_rk(p),
                                           RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
                                           "unit test"),
                 RD_KAFKA_RESP_ERR_NO_ERROR);
    cr_assert_eq(ncmp_producer_send(p, &d, TOPIC, 0, "k", 1, "v", 1, NULL, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_FATAL, "class %s: %s", ncmp_err_class_name(err.cls), err.msg);
    cr_assert(strstr(err.msg, "OUT_OF_ORDER_SEQUENCE_NUMBER"), "%s", err.msg);
    cr_assert_eq(atomic_load(&d.pending), 0, "a refused record is not pending");
    cr_assert_neq(ncmp_stopping, 0, "a fatal error stops the process");
    log_text(logged, text, sizeof(text));
    cr_assert(strstr(text, "fatal error OUT_OF_ORDER_SEQUENCE_NUMBER"), "logged: %s", text);
    ncmp_producer_destroy(p);
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    fclose(logged);
}

Test(ncmp_kafka, fatal_producer_error_ends_a_wait_at_once)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = mock_producer(&opts);
    rd_kafka_t *rk = ncmp_producer_rk(p);
    FILE *logged = log_capture();
    ncmp_delivery d;
    ncmp_err err = {0};
    double t0;

    /* the broker away: the record stays pending */
    cr_assert_eq(rd_kafka_mock_broker_set_down(rd_kafka_handle_mock_cluster(rk), 1),
                 RD_KAFKA_RESP_ERR_NO_ERROR);
    ncmp_delivery_init(&d);
    cr_assert_eq(ncmp_producer_send(p, &d, TOPIC, 0, NULL, 0, "v", 1, NULL, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(rd_kafka_test_fatal_error(rk, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, "unit"),
                 RD_KAFKA_RESP_ERR_NO_ERROR);
    t0 = ncmp_now_ms();
    cr_assert_eq(ncmp_producer_wait(p, &d, 20000, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_FATAL, "class %s: %s", ncmp_err_class_name(err.cls), err.msg);
    cr_assert_lt(ncmp_now_ms() - t0, 5000, "waited for records that will not come");
    cr_assert_neq(ncmp_stopping, 0);
    rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    ncmp_producer_destroy(p);
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    fclose(logged);
}

Test(ncmp_kafka, fatal_error_of_a_raw_producer_stops_the_process_when_polled)
{
    ncmp_kafka_opts opts = mock_opts(0);
    rd_kafka_t *rk = NULL;
    FILE *logged = log_capture();
    ncmp_err err = {0};
    char text[4096];

    cr_assert_eq(
        ncmp_kafka_producer_new(&rk, &opts, NCMP_PRODUCER_BULK, "ncmp-unit-raw", NULL, &err), 0,
        "%s", err.msg);
    cr_assert_eq(
        rd_kafka_test_fatal_error(rk, RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, "unit test"),
        RD_KAFKA_RESP_ERR_NO_ERROR);
    cr_assert_eq(ncmp_stopping, 0, "only served when polled");
    for (int i = 0; i < 50 && !ncmp_stopping; i++)
        rd_kafka_poll(rk, 20);
    cr_assert_neq(ncmp_stopping, 0, "the error callback stops the process");
    log_text(logged, text, sizeof(text));
    cr_assert(strstr(text, "ncmp-unit-raw"), "the client is named: %s", text);
    rd_kafka_destroy(rk);
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    fclose(logged);
}

Test(ncmp_kafka, a_passing_error_is_logged_and_does_not_stop)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = mock_producer(&opts);
    rd_kafka_t *rk = ncmp_producer_rk(p);
    FILE *logged = tmpfile();
    char text[8192];

    cr_assert_not_null(logged);
    ncmp_log_setup(NCMP_LOG_WARN, NCMP_LOG_TEXT, logged);
    /* every broker down: librdkafka reports it, and reconnects later */
    cr_assert_eq(rd_kafka_mock_broker_set_down(rd_kafka_handle_mock_cluster(rk), 1),
                 RD_KAFKA_RESP_ERR_NO_ERROR);
    for (int i = 0; i < 100 && !strstr(log_text(logged, text, sizeof(text)), "ALL_BROKERS_DOWN");
         i++)
        rd_kafka_poll(rk, 50);
    cr_assert(strstr(text, "ALL_BROKERS_DOWN"), "logged: %s", text);
    cr_assert_eq(ncmp_stopping, 0);
    ncmp_producer_destroy(p);
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    fclose(logged);
}

/* --- readers ------------------------------------------------------------- */

#define TOPIC2 "ncmp-unit-2p"

/* Produce values "<prefix>-<i>" for i in [0, n) to partition `partition`
 * of TOPIC2 and wait for them. */
static void produce_to(ncmp_producer *p, int32_t partition, const char *prefix, int n)
{
    ncmp_delivery d;
    ncmp_err err = {0};

    ncmp_delivery_init(&d);
    for (int i = 0; i < n; i++) {
        char value[64];
        int len = snprintf(value, sizeof(value), "%s-%d", prefix, i);
        cr_assert_eq(
            ncmp_producer_send(p, &d, TOPIC2, partition, NULL, 0, value, (size_t)len, NULL, &err),
            0, "%s", err.msg);
    }
    cr_assert_eq(ncmp_producer_wait(p, &d, 10000, &err), 0, "%s", err.msg);
}

/* A producer on a mock cluster with TOPIC2 (two partitions). */
static ncmp_producer *two_partitions(const ncmp_kafka_opts *opts)
{
    ncmp_producer *p = mock_producer(opts);

    cr_assert_eq(
        rd_kafka_mock_topic_create(rd_kafka_handle_mock_cluster(ncmp_producer_rk(p)), TOPIC2, 2, 1),
        RD_KAFKA_RESP_ERR_NO_ERROR);
    return p;
}

Test(ncmp_kafka, tail_reader_reads_only_what_comes_after_it)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = two_partitions(&opts);
    ncmp_kafka_opts at_cluster = cluster_opts(p);
    rd_kafka_t *rk = NULL;
    ncmp_err err = {0};
    char seen[8][64];
    int n = 0;
    double deadline;

    produce_to(p, 0, "before", 3);
    produce_to(p, 1, "before", 2);
    cr_assert_eq(
        ncmp_kafka_tail_reader_new(&rk, &at_cluster, "unit-tail", NULL, TOPIC2, 10000, &err), 0,
        "%s", err.msg);
    produce_to(p, 0, "after0", 1);
    produce_to(p, 1, "after1", 2);
    deadline = ncmp_now_ms() + 10000;
    while (n < 3 && ncmp_now_ms() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (m && !m->err && n < 8)
            snprintf(seen[n++], sizeof(seen[0]), "%d:%.*s", (int)m->partition, (int)m->len,
                     (const char *)m->payload);
        if (m)
            rd_kafka_message_destroy(m);
    }
    /* and nothing more comes */
    for (int i = 0; i < 5; i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 50);
        if (m && !m->err && n < 8)
            snprintf(seen[n++], sizeof(seen[0]), "%d:%.*s", (int)m->partition, (int)m->len,
                     (const char *)m->payload);
        if (m)
            rd_kafka_message_destroy(m);
    }
    ncmp_kafka_reader_close(rk);
    cr_assert_eq(n, 3, "read %d records, the first %s", n, n ? seen[0] : "-");
    for (int i = 0; i < n; i++)
        cr_assert(strstr(seen[i], ":after"), "read a record from before the reader: %s", seen[i]);
    ncmp_producer_destroy(p);
}

Test(ncmp_kafka, tail_reader_fails_on_a_topic_that_is_not_there)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = mock_producer(&opts);
    ncmp_kafka_opts at_cluster = cluster_opts(p);
    rd_kafka_t *rk = NULL;
    ncmp_err err = {0};

    /* the mock cluster makes every topic asked for: say this one is not */
    rd_kafka_mock_topic_set_error(rd_kafka_handle_mock_cluster(ncmp_producer_rk(p)),
                                  "no-such-topic", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
    cr_assert_eq(
        ncmp_kafka_tail_reader_new(&rk, &at_cluster, "unit-tail", NULL, "no-such-topic", 300, &err),
        -1);
    cr_assert_null(rk);
    cr_assert_eq(err.cls, NCMP_ERR_RETRY, "class %s: %s", ncmp_err_class_name(err.cls), err.msg);
    cr_assert(strstr(err.msg, "no-such-topic"), "%s", err.msg);
    ncmp_producer_destroy(p);
}

/* The scan's records, as "<partition>:<offset>:<value>" lines. */
typedef struct scan_seen {
    char text[1024];
    int count;
    int fail_at; /* fail on this record (-1: never) */
} scan_seen;

static int scan_collect(const rd_kafka_message_t *m, void *arg, ncmp_err *err)
{
    scan_seen *s = arg;
    size_t used = strlen(s->text);

    if (s->count++ == s->fail_at)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "record %d refused", s->fail_at);
    snprintf(s->text + used, sizeof(s->text) - used, "%d:%lld:%.*s\n", (int)m->partition,
             (long long)m->offset, (int)m->len, (const char *)m->payload);
    return 0;
}

Test(ncmp_kafka, scan_reads_each_partition_from_its_checkpoint_to_its_end)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = two_partitions(&opts);
    ncmp_kafka_opts at_cluster = cluster_opts(p);
    const int64_t from[2] = {3, 0};
    int64_t end[2] = {-1, -1};
    scan_seen seen = {"", 0, -1};
    ncmp_err err = {0};

    produce_to(p, 0, "p0", 5);
    produce_to(p, 1, "p1", 2);
    cr_assert_eq(ncmp_kafka_scan(&at_cluster, "unit-scan", TOPIC2, from, 2, 10000, scan_collect,
                                 &seen, end, &err),
                 0, "%s", err.msg);
    cr_assert_eq(end[0], 5);
    cr_assert_eq(end[1], 2);
    cr_assert_eq(seen.count, 4, "%s", seen.text);
    cr_assert(strstr(seen.text, "0:3:p0-3\n0:4:p0-4\n"), "partition 0 from 3, in order: %s",
              seen.text);
    cr_assert(strstr(seen.text, "1:0:p1-0\n1:1:p1-1\n"), "partition 1 from 0: %s", seen.text);
    cr_assert_null(strstr(seen.text, "p0-2"), "before the checkpoint: %s", seen.text);
    ncmp_producer_destroy(p);
}

Test(ncmp_kafka, scan_at_the_end_reads_nothing_and_keeps_the_end)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = two_partitions(&opts);
    ncmp_kafka_opts at_cluster = cluster_opts(p);
    const int64_t from[2] = {2, 0};
    int64_t end[2] = {-1, -1};
    scan_seen seen = {"", 0, -1};
    ncmp_err err = {0};

    produce_to(p, 0, "p0", 2);
    cr_assert_eq(ncmp_kafka_scan(&at_cluster, "unit-scan", TOPIC2, from, 2, 10000, scan_collect,
                                 &seen, end, &err),
                 0, "%s", err.msg);
    cr_assert_eq(seen.count, 0, "%s", seen.text);
    cr_assert_eq(end[0], 2);
    cr_assert_eq(end[1], 0, "an empty partition ends at 0");
    ncmp_producer_destroy(p);
}

Test(ncmp_kafka, scan_stops_with_the_callback_error)
{
    ncmp_kafka_opts opts = mock_opts(0);
    ncmp_producer *p = two_partitions(&opts);
    ncmp_kafka_opts at_cluster = cluster_opts(p);
    const int64_t from[2] = {0, 0};
    int64_t end[2] = {-1, -1};
    scan_seen seen = {"", 0, 1};
    ncmp_err err = {0};

    produce_to(p, 0, "p0", 3);
    cr_assert_eq(ncmp_kafka_scan(&at_cluster, "unit-scan", TOPIC2, from, 2, 10000, scan_collect,
                                 &seen, end, &err),
                 -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT);
    cr_assert_str_eq(err.msg, "record 1 refused");
    cr_assert_eq(end[0], -1, "no end on failure");
    ncmp_producer_destroy(p);
}

Test(ncmp_kafka, topic_name_rule)
{
    char longest[NCMP_KAFKA_TOPIC_NAME_MAX + 1];
    static const char *const valid[] = {"a", "cm-events", "ncmp.async_m2m-1", "...", ".a", "Z9"};
    static const char *const invalid[] = {".",   "..",  "a b", "a/b", "caf\xc3\xa9",
                                          "a\n", "a,b", "a:b", "{}"};

    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
        cr_assert(ncmp_kafka_topic_name_valid(valid[i], strlen(valid[i])), "'%s'", valid[i]);
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
        cr_assert_not(ncmp_kafka_topic_name_valid(invalid[i], strlen(invalid[i])), "'%s'",
                      invalid[i]);
    cr_assert_not(ncmp_kafka_topic_name_valid("", 0));
    cr_assert_not(ncmp_kafka_topic_name_valid(NULL, 3));
    /* a header value is not NUL-terminated: only len bytes count */
    cr_assert(ncmp_kafka_topic_name_valid("ab cd", 2));
    cr_assert_not(ncmp_kafka_topic_name_valid("a\0b", 3));
    memset(longest, 'x', sizeof(longest));
    cr_assert(ncmp_kafka_topic_name_valid(longest, NCMP_KAFKA_TOPIC_NAME_MAX));
    cr_assert_not(ncmp_kafka_topic_name_valid(longest, NCMP_KAFKA_TOPIC_NAME_MAX + 1));
}

Test(ncmp_kafka, group_name_is_the_prefix_and_the_role)
{
    char out[64];

    cr_assert_str_eq(ncmp_kafka_group_name(out, sizeof(out), "ncmpd", "registration"),
                     "ncmpd-registration");
    cr_assert_eq(ncmp_kafka_group_name(out, sizeof(out), "g", "r"), out, "returns out");
    cr_assert_str_eq(ncmp_kafka_group_name(out, 8, "ncmpd", "registration"), "ncmpd-r",
                     "cut to fit");
}
