/*
 * The pump engine (lib/ncmp_pump.c) in-process on a real broker: what a
 * role's handle() says of each record is what happens to it, the offsets
 * are committed past every record handled, dead letters carry the role's
 * dlq_role, and ncmp_pump_stop ends the workers without a process stop.
 * The forwarders' tests (test_forward.c) cover kills, rewinds and
 * outages through ncmpd.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_util.h"
#include "ncmp_buf.h"
#include "ncmp_kafka.h"
#include "ncmp_metrics.h"
#include "ncmp_pump.h"
#include "ncmp_signal.h"

#define PARTITIONS 2
#define RECORDS    40

typedef struct pump_case {
    char in[128], out[160], dlq[160];
    long handled; /* DONE records, counted by handle() */
} pump_case;

/* Record "<i>": i % 4 == 0 goes to `out` keyed "k<i>", 1 is rejected, 2 is
 * done, 3 is not ours. */
static ncmp_pump_verdict handle(void *arg, const rd_kafka_message_t *m,
                                const rd_kafka_headers_t *headers, ncmp_pump_route *r)
{
    pump_case *c = arg;
    long i = strtol(m->payload, NULL, 10);

    switch (i % 4) {
    case 0:
        snprintf(r->topic, sizeof(r->topic), "%s", c->out);
        r->key = m->key;
        r->keylen = m->key_len;
        return NCMP_PUMP_SEND;
    case 1:
        snprintf(r->reason, sizeof(r->reason), "record %ld is refused", i);
        return NCMP_PUMP_REJECT;
    case 2:
        __atomic_add_fetch(&c->handled, 1, __ATOMIC_SEQ_CST);
        return NCMP_PUMP_DONE;
    default:
        return NCMP_PUMP_SKIP;
    }
}

Test(pump, each_verdict_does_what_it_says_and_the_offsets_move_past_all, .timeout = 120)
{
    pump_case c = {0};
    ncmp_config *cfg = it_config();
    ncmp_pump_role role;
    ncmp_pump *pump = NULL;
    ncmp_err err;
    char group[200], values[RECORDS][16], keys[RECORDS][16], buf[256];
    it_outgoing recs[RECORDS];
    it_record *out = NULL, *dlq = NULL;
    size_t nout, ndlq;

    it_unique(c.in, sizeof(c.in), "it-pump");
    snprintf(c.out, sizeof(c.out), "%s-out", c.in);
    snprintf(c.dlq, sizeof(c.dlq), "%s-dlq", c.in);
    it_create_topic(c.in, PARTITIONS);
    it_create_topic(c.out, PARTITIONS);
    it_create_topic(c.dlq, PARTITIONS);
    for (int i = 0; i < RECORDS; i++) {
        snprintf(values[i], sizeof(values[i]), "%d", i);
        snprintf(keys[i], sizeof(keys[i]), "k%d", i);
        recs[i] = (it_outgoing){keys[i], values[i], strlen(values[i]), NULL};
    }
    it_publish(c.in, recs, RECORDS);
    snprintf(buf, sizeof(buf), "g-%s", c.in);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.group.id", buf, &err), 0, "%s", err.msg);
    role = (ncmp_pump_role){.name = "probe",
                            .dlq_role = "probe-dlq-role",
                            .input = c.in,
                            .workers = 2,
                            .batch_size = 7,
                            .batch_wait_ms = 20,
                            .handle = handle,
                            .arg = &c};
    cr_assert_eq(ncmp_pump_start(&pump, cfg, &role, &err), 0, "%s", err.msg);
    snprintf(group, sizeof(group), "g-%s-probe", c.in);
    for (int i = 0; i < 300 && it_committed_sum(group, c.in, PARTITIONS) < RECORDS; i++)
        it_sleep_ms(100);
    cr_assert_eq(it_committed_sum(group, c.in, PARTITIONS), RECORDS,
                 "committed past every record, whatever its verdict");
    ncmp_pump_stop(pump);
    cr_assert_eq(ncmp_pump_join(pump, &err), 0, "%s", err.msg);
    ncmp_pump_destroy(pump);

    cr_assert_eq(__atomic_load_n(&c.handled, __ATOMIC_SEQ_CST), RECORDS / 4);
    nout = it_read_topic(c.out, RECORDS / 4, 30000, &out);
    cr_assert_eq(nout, RECORDS / 4, "the SEND records, once each");
    for (size_t i = 0; i < nout; i++) {
        long v = strtol(out[i].value, NULL, 10);
        cr_assert_eq(v % 4, 0, "%s was sent", out[i].value);
        snprintf(buf, sizeof(buf), "k%ld", v);
        cr_assert_str_eq(out[i].key, buf, "the route's key");
    }
    ndlq = it_read_topic(c.dlq, RECORDS / 4, 30000, &dlq);
    cr_assert_eq(ndlq, RECORDS / 4, "the REJECT records, once each");
    for (size_t i = 0; i < ndlq; i++) {
        long v = strtol(dlq[i].value, NULL, 10);
        char want[64];
        cr_assert_eq(v % 4, 1, "%s was dead-lettered", dlq[i].value);
        snprintf(want, sizeof(want), "record %ld is refused", v);
        cr_assert_str_eq(it_record_header(&dlq[i], "dlq_reason", buf, sizeof(buf)), want);
        cr_assert_str_eq(it_record_header(&dlq[i], "dlq_role", buf, sizeof(buf)), "probe-dlq-role");
        cr_assert_str_eq(it_record_header(&dlq[i], "dlq_topic", buf, sizeof(buf)), c.in);
    }
    it_records_free(out, nout);
    it_records_free(dlq, ndlq);
    ncmp_config_destroy(cfg);
}

Test(pump, an_input_that_is_no_topic_name_is_refused_at_start)
{
    ncmp_config *cfg = it_config();
    ncmp_pump_role role = {.name = "probe", .input = "not a topic!", .handle = handle};
    ncmp_pump *pump = NULL;
    ncmp_err err;

    cr_assert_eq(ncmp_pump_start(&pump, cfg, &role, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_FATAL);
    cr_assert(strstr(err.msg, "not a topic!"), "%s", err.msg);
    cr_assert_null(pump);
    ncmp_config_destroy(cfg);
}

/* --- the lag it shows ------------------------------------------------------ */

static int hold_gate; /* 1: the handler waits */

static ncmp_pump_verdict hold(void *arg, const rd_kafka_message_t *m,
                              const rd_kafka_headers_t *headers, ncmp_pump_route *r)
{
    (void)arg;
    (void)m;
    (void)headers;
    (void)r;
    while (__atomic_load_n(&hold_gate, __ATOMIC_SEQ_CST))
        it_sleep_ms(20);
    return NCMP_PUMP_DONE;
}

/* The value of `series` (name and labels) as scraped; `absent` when there
 * is no such sample. */
static double scraped(const char *series, double absent)
{
    ncmp_buf out = NCMP_BUF_INIT;
    size_t len = strlen(series);
    double v = absent;

    ncmp_metrics_render(&out);
    for (const char *p = out.data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, series, len) == 0 && p[len] == ' ')
            v = strtod(p + len + 1, NULL);
    ncmp_buf_free(&out);
    return v;
}

/* ncmp_consumer_lag_records{role, topic} of the pump, as scraped; -1 when
 * there is no such sample. */
static double pump_lag(const char *topic)
{
    char series[300];

    snprintf(series, sizeof(series), "ncmp_consumer_lag_records{role=\"lagprobe\",topic=\"%s\"}",
             topic);
    return scraped(series, -1);
}

Test(pump, its_lag_grows_while_it_is_held_and_falls_to_zero, .timeout = 120)
{
    ncmp_config *cfg = it_config();
    ncmp_pump_role role;
    ncmp_pump *pump = NULL;
    ncmp_err err;
    char in[128], buf[256], values[RECORDS][16];
    it_outgoing recs[RECORDS];
    double lag = -1;

    it_unique(in, sizeof(in), "it-pump-lag");
    it_create_topic(in, PARTITIONS);
    snprintf(buf, sizeof(buf), "g-%s", in);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.group.id", buf, &err), 0, "%s", err.msg);
    __atomic_store_n(&hold_gate, 1, __ATOMIC_SEQ_CST);
    role = (ncmp_pump_role){.name = "lagprobe",
                            .input = in,
                            .workers = 1,
                            .batch_size = 1,
                            .batch_wait_ms = 20,
                            .handle = hold,
                            .arg = NULL};
    cr_assert_eq(ncmp_pump_start(&pump, cfg, &role, &err), 0, "%s", err.msg);
    for (int i = 0; i < RECORDS; i++) {
        snprintf(values[i], sizeof(values[i]), "%d", i);
        recs[i] = (it_outgoing){"one-key", values[i], strlen(values[i]), NULL};
    }
    it_publish(in, recs, RECORDS);
    /* one partition (one key), whose first record holds the only worker:
     * the rest wait (a partition with no position yet counts 0) */
    for (int i = 0; i < 300 && lag < RECORDS / 2; i++) {
        it_sleep_ms(100);
        lag = pump_lag(in);
    }
    cr_assert_geq(lag, RECORDS / 2, "lag %.0f while the pump is held", lag);
    __atomic_store_n(&hold_gate, 0, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 300 && lag != 0; i++) {
        it_sleep_ms(100);
        lag = pump_lag(in);
    }
    cr_assert_eq(lag, 0, "the pump caught up");
    ncmp_pump_stop(pump);
    cr_assert_eq(ncmp_pump_join(pump, &err), 0, "%s", err.msg);
    ncmp_pump_destroy(pump);
    cr_assert_eq(pump_lag(in), 0, "the series stays, the collector is gone");
    ncmp_config_destroy(cfg);
}

/* --- a fenced member ------------------------------------------------------- */

static long fence_handled;

static ncmp_pump_verdict count_done(void *arg, const rd_kafka_message_t *m,
                                    const rd_kafka_headers_t *headers, ncmp_pump_route *r)
{
    (void)arg;
    (void)m;
    (void)headers;
    (void)r;
    __atomic_add_fetch(&fence_handled, 1, __ATOMIC_SEQ_CST);
    return NCMP_PUMP_DONE;
}

/* ncmp_kafka_consumer_renewals_total{group} as scraped; 0 when absent. */
static double renewals(const char *group)
{
    char series[300];

    snprintf(series, sizeof(series), "ncmp_kafka_consumer_renewals_total{group=\"%s\"}", group);
    return scraped(series, 0);
}

static void publish_numbers(const char *topic, int first, int n)
{
    char values[RECORDS][16];
    it_outgoing recs[RECORDS];

    cr_assert_leq(n, RECORDS);
    for (int i = 0; i < n; i++) {
        snprintf(values[i], sizeof(values[i]), "%d", first + i);
        recs[i] = (it_outgoing){NULL, values[i], strlen(values[i]), NULL};
    }
    it_publish(topic, recs, (size_t)n);
}

/* Another member joins with the pump's static instance id: the broker
 * fences the pump's member (FENCED_INSTANCE_ID, fatal for librdkafka).
 * The pump makes its member again and reads on; the process is not asked
 * to stop. */
Test(pump, a_fenced_member_is_made_again_and_reads_on, .timeout = 180)
{
    ncmp_config *cfg = it_config();
    ncmp_pump_role role;
    ncmp_pump *pump = NULL;
    ncmp_consumer *intruder;
    ncmp_err err;
    char in[128], buf[256], group[256], instance[300];

    it_unique(in, sizeof(in), "it-pump-fence");
    it_create_topic(in, 1);
    snprintf(buf, sizeof(buf), "g-%s", in);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.group.id", buf, &err), 0, "%s", err.msg);
    snprintf(buf, sizeof(buf), "i-%s", in);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.instance-id", buf, &err), 0, "%s", err.msg);
    snprintf(group, sizeof(group), "g-%s-fenceprobe", in);
    snprintf(instance, sizeof(instance), "i-%s-fenceprobe-0", in);
    role = (ncmp_pump_role){.name = "fenceprobe",
                            .input = in,
                            .workers = 1,
                            .batch_size = 10,
                            .batch_wait_ms = 20,
                            .handle = count_done};
    cr_assert_eq(ncmp_pump_start(&pump, cfg, &role, &err), 0, "%s", err.msg);
    publish_numbers(in, 0, 10);
    for (int i = 0; i < 300 && it_committed_sum(group, in, 1) < 10; i++)
        it_sleep_ms(100);
    cr_assert_eq(it_committed_sum(group, in, 1), 10, "the first ten were consumed");

    intruder = it_intruder(group, instance, in);
    for (int i = 0; i < 600 && renewals(group) < 1; i++)
        it_intruder_poll(intruder, 50);
    ncmp_consumer_close(intruder);
    cr_assert_geq(renewals(group), 1, "the pump's member was fenced and made again");
    cr_assert_eq(ncmp_stopping, 0, "the process was not asked to stop");

    publish_numbers(in, 10, 10);
    for (int i = 0; i < 600 && it_committed_sum(group, in, 1) < 20; i++)
        it_sleep_ms(100);
    cr_assert_eq(it_committed_sum(group, in, 1), 20, "the new member read on");
    cr_assert_geq(__atomic_load_n(&fence_handled, __ATOMIC_SEQ_CST), 20);
    ncmp_pump_stop(pump);
    cr_assert_eq(ncmp_pump_join(pump, &err), 0, "%s", err.msg);
    ncmp_pump_destroy(pump);
    cr_assert_eq(ncmp_stopping, 0);
    ncmp_config_destroy(cfg);
}
