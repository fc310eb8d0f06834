/* Unit tests of lib/ncmp_dlq.c: the dead-letter record of docs/events.md
 * ("Dead-letter topics"), built from records really consumed from
 * librdkafka's mock cluster (a consumed rd_kafka_message_t cannot be made
 * by hand: its headers live in librdkafka's internals). */
#include <criterion/criterion.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <string.h>

#include "ncmp_dlq.h"
#include "ncmp_kafka.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "unit_leak.h"

TestSuite(ncmp_dlq, .fini = unit_leak_check);

#define TOPIC    "ncmp-unit-dlq-in"
#define ROLE     "unit-role"
#define BIG_SIZE 100
#define MAX      (NCMP_DLQ_HEADROOM + 1000) /* a max.message.bytes the records fit */

/* Three records on TOPIC [0], as consumed:
 *   0: key "k0", value "{\"bad\":", headers ce_id=id-0, ce_type=a, ce_type=b
 *   1: no key, value "v", no headers
 *   2: key "k2", BIG_SIZE bytes of 'x', header h=1 */
typedef struct consumed {
    rd_kafka_t *producer; /* owns the mock cluster */
    rd_kafka_t *consumer;
    rd_kafka_message_t *m[3];
} consumed;

static void produce(rd_kafka_t *rk, const char *key, const void *value, size_t len,
                    rd_kafka_headers_t *h)
{
    rd_kafka_resp_err_t e = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(TOPIC), RD_KAFKA_V_PARTITION(0),
        RD_KAFKA_V_KEY(key, key ? strlen(key) : 0), RD_KAFKA_V_VALUE((void *)value, len),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
    cr_assert_eq(e, RD_KAFKA_RESP_ERR_NO_ERROR, "%s", rd_kafka_err2str(e));
}

static void consumed_open(consumed *c)
{
    static ncmp_kv mock[] = {{"test.mock.num.brokers", "1"}, {"log_level", "4"}};
    ncmp_kafka_opts popts = {NULL, 0, mock, 2};
    rd_kafka_mock_cluster_t *mcluster;
    rd_kafka_topic_partition_list_t *parts;
    rd_kafka_headers_t *h;
    char big[BIG_SIZE];
    size_t n = 0;
    ncmp_err err;

    memset(c, 0, sizeof(*c));
    /* librdkafka's own logs would go to stderr; only errors matter here */
    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    cr_assert_eq(ncmp_kafka_producer_new(&c->producer, &popts, NCMP_PRODUCER_DEFAULT,
                                         "ncmp-unit-dlq", NULL, &err),
                 0, "%s", err.msg);
    mcluster = rd_kafka_handle_mock_cluster(c->producer);
    cr_assert_not_null(mcluster);
    cr_assert_eq(rd_kafka_mock_topic_create(mcluster, TOPIC, 1, 1), RD_KAFKA_RESP_ERR_NO_ERROR);

    h = rd_kafka_headers_new(3);
    rd_kafka_header_add(h, "ce_id", -1, "id-0", -1);
    rd_kafka_header_add(h, "ce_type", -1, "a", -1);
    rd_kafka_header_add(h, "ce_type", -1, "b", -1);
    produce(c->producer, "k0", "{\"bad\":", 7, h);
    produce(c->producer, NULL, "v", 1, NULL);
    memset(big, 'x', sizeof(big));
    h = rd_kafka_headers_new(1);
    rd_kafka_header_add(h, "h", -1, "1", -1);
    produce(c->producer, "k2", big, sizeof(big), h);
    cr_assert_eq(rd_kafka_flush(c->producer, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);

    {
        static ncmp_kv quiet[] = {{"log_level", "4"}};
        ncmp_kafka_opts copts = {rd_kafka_mock_cluster_bootstraps(mcluster), 0, quiet, 1};
        cr_assert_eq(ncmp_kafka_reader_new(&c->consumer, &copts, "ncmp-unit-dlq", NULL, &err), 0,
                     "%s", err.msg);
    }
    parts = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(parts, TOPIC, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    cr_assert_eq(rd_kafka_assign(c->consumer, parts), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(parts);
    for (int i = 0; i < 200 && n < 3; i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c->consumer, 100);
        if (m && m->err)
            rd_kafka_message_destroy(m);
        else if (m)
            c->m[n++] = m;
    }
    cr_assert_eq(n, 3, "read back %zu of 3 records within 20 s", n);
}

/* The records first: the handle cannot go while a record is out. */
static void consumed_close(consumed *c)
{
    for (size_t i = 0; i < 3; i++)
        if (c->m[i])
            rd_kafka_message_destroy(c->m[i]);
    ncmp_kafka_reader_close(c->consumer);
    rd_kafka_destroy(c->producer);
}

/* Assert that h holds exactly `expect` (name, value pairs, in order). */
static void expect_headers(const rd_kafka_headers_t *h, const char *const (*expect)[2], size_t n)
{
    const char *name;
    const void *value;
    size_t size;

    cr_assert_not_null(h);
    cr_assert_eq(rd_kafka_header_cnt(h), n, "%zu headers, expected %zu", rd_kafka_header_cnt(h), n);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(rd_kafka_header_get_all(h, i, &name, &value, &size),
                     RD_KAFKA_RESP_ERR_NO_ERROR);
        cr_assert_str_eq(name, expect[i][0], "header %zu", i);
        cr_assert(size == strlen(expect[i][1]) && memcmp(value, expect[i][1], size) == 0,
                  "header %s: '%.*s', expected '%s'", name, (int)size, (const char *)value,
                  expect[i][1]);
    }
}

static uint64_t dead_letters_counted(void)
{
    const char *labels[2] = {ROLE, TOPIC};

    return ncmp_counter_value(ncmp_counter_get(ncmp_metrics_lib_get()->dead_letters, labels));
}

Test(ncmp_dlq, topic_name_is_the_topic_and_dlq)
{
    char out[NCMP_DLQ_TOPIC_SIZE];
    char longest[250];

    cr_assert_str_eq(ncmp_dlq_topic(out, sizeof(out), "ncmp-dmi-registration"),
                     "ncmp-dmi-registration-dlq");
    cr_assert_eq(ncmp_dlq_topic(out, sizeof(out), "t"), out, "returns out");
    /* the longest valid topic name still fits */
    memset(longest, 'a', sizeof(longest) - 1);
    longest[sizeof(longest) - 1] = '\0';
    ncmp_dlq_topic(out, sizeof(out), longest);
    cr_assert_eq(strlen(out), 249 + 4);
    cr_assert_str_eq(out + 249, "-dlq");
    /* a short buffer gets a cut, terminated name */
    cr_assert_str_eq(ncmp_dlq_topic(out, 6, "abcdef"), "abcde");
}

Test(ncmp_dlq, value_too_large_keeps_room_for_the_headers)
{
    cr_assert_not(ncmp_dlq_value_too_large(1000, 1000 + NCMP_DLQ_HEADROOM));
    cr_assert(ncmp_dlq_value_too_large(1001, 1000 + NCMP_DLQ_HEADROOM));
    cr_assert(ncmp_dlq_value_too_large(0, NCMP_DLQ_HEADROOM - 1));
}

Test(ncmp_dlq, record_keeps_key_value_and_headers_and_adds_the_dlq_headers)
{
    consumed c;
    ncmp_dlq_record rec;
    uint64_t before;
    const char *const expect[][2] = {
        {"ce_id", "id-0"},    {"ce_type", "a"},
        {"ce_type", "b"},     {"dlq_reason", "invalid JSON at byte 7: end of input"},
        {"dlq_topic", TOPIC}, {"dlq_partition", "0"},
        {"dlq_offset", "0"},  {"dlq_role", ROLE},
    };

    consumed_open(&c);
    before = dead_letters_counted();
    ncmp_dlq_record_init(&rec, c.m[0], ROLE, "invalid JSON at byte 7: end of input", MAX, 0, NULL);
    cr_assert_str_eq(rec.topic, TOPIC "-dlq");
    cr_assert(rec.key_len == 2 && memcmp(rec.key, "k0", 2) == 0);
    cr_assert(rec.len == 7 && memcmp(rec.value, "{\"bad\":", 7) == 0);
    cr_assert_not(rec.truncated);
    expect_headers(rec.headers, expect, sizeof(expect) / sizeof(expect[0]));
    cr_assert_eq(dead_letters_counted(), before + 1, "counted once in dead_letters");
    ncmp_dlq_record_clear(&rec);
    cr_assert_null(rec.headers);
    ncmp_dlq_record_clear(&rec); /* twice is harmless */
    /* the consumed record's own headers are untouched (copied, not taken) */
    {
        rd_kafka_headers_t *orig = NULL;
        cr_assert_eq(rd_kafka_message_headers(c.m[0], &orig), RD_KAFKA_RESP_ERR_NO_ERROR);
        cr_assert_eq(rd_kafka_header_cnt(orig), 3);
    }
    consumed_close(&c);
}

Test(ncmp_dlq, record_without_key_or_headers)
{
    consumed c;
    ncmp_dlq_record rec;
    const char *const expect[][2] = {
        {"dlq_reason", "r"}, {"dlq_topic", TOPIC}, {"dlq_partition", "0"},
        {"dlq_offset", "1"}, {"dlq_role", ROLE},
    };

    consumed_open(&c);
    ncmp_dlq_record_init(&rec, c.m[1], ROLE, "r", MAX, 0, NULL);
    cr_assert_null(rec.key);
    cr_assert_eq(rec.key_len, 0);
    cr_assert(rec.len == 1 && memcmp(rec.value, "v", 1) == 0);
    expect_headers(rec.headers, expect, sizeof(expect) / sizeof(expect[0]));
    ncmp_dlq_record_clear(&rec);
    consumed_close(&c);
}

Test(ncmp_dlq, too_large_a_value_is_left_out_with_its_size)
{
    consumed c;
    ncmp_dlq_record rec;
    const char *const expect[][2] = {
        {"h", "1"},
        {"dlq_reason", "too big"},
        {"dlq_topic", TOPIC},
        {"dlq_partition", "0"},
        {"dlq_offset", "2"},
        {"dlq_role", ROLE},
        {"dlq_original_size", "100"},
        {"dlq_value_truncated", "true"},
    };

    consumed_open(&c);
    /* a max.message.bytes 1 byte short of value + headroom */
    ncmp_dlq_record_init(&rec, c.m[2], ROLE, "too big", BIG_SIZE + NCMP_DLQ_HEADROOM - 1, 0, NULL);
    cr_assert(rec.truncated);
    cr_assert_null(rec.value);
    cr_assert_eq(rec.len, 0);
    cr_assert(rec.key_len == 2 && memcmp(rec.key, "k2", 2) == 0, "the key is kept");
    expect_headers(rec.headers, expect, sizeof(expect) / sizeof(expect[0]));
    ncmp_dlq_record_clear(&rec);
    /* exactly value + headroom still fits */
    ncmp_dlq_record_init(&rec, c.m[2], ROLE, "too big", BIG_SIZE + NCMP_DLQ_HEADROOM, 0, NULL);
    cr_assert_not(rec.truncated);
    cr_assert_eq(rec.len, BIG_SIZE);
    ncmp_dlq_record_clear(&rec);
    consumed_close(&c);
}

Test(ncmp_dlq, truncate_asked_for_leaves_a_small_value_out)
{
    consumed c;
    ncmp_dlq_record rec;
    const char *value;
    size_t size;

    consumed_open(&c);
    ncmp_dlq_record_init(&rec, c.m[1], ROLE, "refused as too large", MAX, 1, NULL);
    cr_assert(rec.truncated);
    cr_assert_null(rec.value);
    cr_assert_eq(
        rd_kafka_header_get_last(rec.headers, "dlq_original_size", (const void **)&value, &size),
        RD_KAFKA_RESP_ERR_NO_ERROR);
    cr_assert(size == 1 && value[0] == '1');
    ncmp_dlq_record_clear(&rec);
    consumed_close(&c);
}

Test(ncmp_dlq, headers_given_are_used_instead_of_the_records)
{
    consumed c;
    ncmp_dlq_record rec;
    rd_kafka_headers_t *mine = rd_kafka_headers_new(1);
    const char *const expect[][2] = {
        {"detached", "yes"},    {"dlq_reason", "r"}, {"dlq_topic", TOPIC},
        {"dlq_partition", "0"}, {"dlq_offset", "0"}, {"dlq_role", ROLE},
    };

    consumed_open(&c);
    rd_kafka_header_add(mine, "detached", -1, "yes", -1);
    /* taken over: ASan reports a leak if the record does not free them */
    ncmp_dlq_record_init(&rec, c.m[0], ROLE, "r", MAX, 0, mine);
    cr_assert_eq(rec.headers, mine);
    expect_headers(rec.headers, expect, sizeof(expect) / sizeof(expect[0]));
    ncmp_dlq_record_clear(&rec);
    consumed_close(&c);
}

Test(ncmp_dlq, clear_accepts_null)
{
    ncmp_dlq_record_clear(NULL);
}
