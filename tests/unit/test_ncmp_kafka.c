/* Unit tests of lib/ncmp_kafka.c against librdkafka's mock cluster: the
 * pass-through property test.mock.num.brokers makes the producer start an
 * in-process broker (bootstrap.servers is then ignored). Consumer groups
 * are not used: they stall on the mock cluster. To read records back, a
 * plain consumer is assigned the partition and pointed at the mock
 * cluster's address. */
#include <criterion/criterion.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <string.h>

#include "ncmp_config.h"
#include "ncmp_kafka.h"
#include "ncmp_log.h"
#include "unit_leak.h"

TestSuite(ncmp_kafka, .fini = unit_leak_check);

#define TOPIC "ncmp-unit"

/* A config for the mock cluster; `max_bytes` (if not NULL) sets
 * kafka.max-message-bytes. The caller destroys it. */
static ncmp_config *mock_config(const char *max_bytes)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_err err = {0};

    /* librdkafka's own logs would go to stderr; only errors matter here */
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    if (ncmp_config_set(cfg, "kafka.test.mock.num.brokers", "1", &err) != 0 ||
        (max_bytes && ncmp_config_set(cfg, "kafka.max-message-bytes", max_bytes, &err) != 0))
        cr_assert_fail("config: %s", err.msg);
    return cfg;
}

/* A producer on its own mock cluster, with TOPIC (one partition). */
static ncmp_producer *mock_producer(const ncmp_config *cfg)
{
    ncmp_producer *p = NULL;
    ncmp_err err = {0};
    rd_kafka_mock_cluster_t *mcluster;

    if (ncmp_producer_new(&p, cfg, "ncmp-unit-tests", &err) != 0)
        cr_assert_fail("producer: %s", err.msg);
    mcluster = rd_kafka_handle_mock_cluster(ncmp_producer_rk(p));
    cr_assert_not_null(mcluster, "no mock cluster: is test.mock.num.brokers passed through?");
    cr_assert_eq(rd_kafka_mock_topic_create(mcluster, TOPIC, 1, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
    return p;
}

Test(ncmp_kafka, producer_delivers_n_records)
{
    ncmp_config *cfg = mock_config(NULL);
    ncmp_producer *p = mock_producer(cfg);
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
    ncmp_config_destroy(cfg);
}

Test(ncmp_kafka, wait_with_nothing_pending_returns_at_once)
{
    ncmp_config *cfg = mock_config(NULL);
    ncmp_producer *p = mock_producer(cfg);
    ncmp_delivery d;
    ncmp_err err = {0};

    ncmp_delivery_init(&d);
    cr_assert_eq(ncmp_producer_wait(p, &d, 0, &err), 0, "%s", err.msg);
    ncmp_producer_destroy(p);
    ncmp_config_destroy(cfg);
}

Test(ncmp_kafka, wait_times_out_while_the_broker_is_down)
{
    ncmp_config *cfg = mock_config(NULL);
    ncmp_producer *p = mock_producer(cfg);
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
    ncmp_config_destroy(cfg);
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    fclose(quiet);
}

Test(ncmp_kafka, record_bigger_than_max_message_bytes_is_rejected)
{
    ncmp_config *cfg = mock_config("2048");
    ncmp_producer *p = mock_producer(cfg);
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
    ncmp_config_destroy(cfg);
}

Test(ncmp_kafka, bad_passthrough_property_is_fatal)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_producer *p = NULL;
    ncmp_err err = {0};

    cr_assert_eq(ncmp_config_set(cfg, "kafka.no.such.property", "1", &err), 0);
    cr_assert_eq(ncmp_producer_new(&p, cfg, "ncmp-unit-tests", &err), -1);
    cr_assert_null(p);
    cr_assert_eq(err.cls, NCMP_ERR_FATAL);
    cr_assert(strstr(err.msg, "kafka.no.such.property"), "%s", err.msg);
    ncmp_config_destroy(cfg);
}

Test(ncmp_kafka, destroy_and_close_accept_null)
{
    ncmp_producer_destroy(NULL);
    ncmp_consumer_close(NULL);
}

/* A plain consumer reading TOPIC [0] from the producer's mock cluster. It
 * has a group.id, which rd_kafka_assign needs, but never joins the group
 * (no subscribe). */
typedef struct reader {
    rd_kafka_t *rk;
    rd_kafka_message_t *m; /* the first record */
} reader;

static void reader_open(reader *r, ncmp_producer *p)
{
    rd_kafka_mock_cluster_t *mcluster = rd_kafka_handle_mock_cluster(ncmp_producer_rk(p));
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_topic_partition_list_t *parts;
    char errstr[512];
    const char *const settings[][2] = {
        {"bootstrap.servers", rd_kafka_mock_cluster_bootstraps(mcluster)},
        {"group.id", "ncmp-unit-reader"},
        {"enable.auto.commit", "false"},
        {"fetch.wait.max.ms", "10"},
    };

    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
        cr_assert_eq(
            rd_kafka_conf_set(conf, settings[i][0], settings[i][1], errstr, sizeof(errstr)),
            RD_KAFKA_CONF_OK, "%s", errstr);
    r->m = NULL;
    r->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
    cr_assert_not_null(r->rk, "%s", errstr);
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
    rd_kafka_assign(r->rk, NULL);
    rd_kafka_consumer_close(r->rk);
    rd_kafka_destroy(r->rk);
}

Test(ncmp_kafka, header_value_of_a_consumed_record)
{
    ncmp_config *cfg = mock_config(NULL);
    ncmp_producer *p = mock_producer(cfg);
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
    ncmp_config_destroy(cfg);
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
