/*
 * The library's metrics on real services: a stage consuming a real topic
 * into a real database counts what it consumed, dead-lettered, retried and
 * timed, shows its consumer lag while it is behind and 0 once caught up;
 * the producer counts acknowledged and refused records; the database
 * counts reconnects. Read through ncmp_metrics_render, as a scrape would.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_util.h"
#include "ncmp_buf.h"
#include "ncmp_kafka.h"
#include "ncmp_kafka_config.h"
#include "ncmp_metrics.h"
#include "ncmp_migrate.h"
#include "ncmp_signal.h"
#include "ncmp_stage.h"

#define PARTITIONS 2
#define GOOD       300
#define BAD        10

/* The value of the sample whose name and labels are exactly `series`
 * (e.g. `x{a="b"}`) in a fresh render; -1 when there is none. */
static double scrape(const char *series)
{
    ncmp_buf out = NCMP_BUF_INIT;
    double v = -1;
    size_t len = strlen(series);

    ncmp_metrics_render(&out);
    for (const char *p = out.data; p && *p;) {
        const char *nl = strchr(p, '\n');
        if (strncmp(p, series, len) == 0 && p[len] == ' ') {
            v = strtod(p + len + 1, NULL);
            break;
        }
        p = nl ? nl + 1 : NULL;
    }
    ncmp_buf_free(&out);
    return v;
}

/* Poll scrape(series) until `ok` holds or timeout_ms passed; returns the
 * last value. */
static double scrape_until(const char *series, int (*ok)(double), int timeout_ms)
{
    double v = scrape(series);
    for (int waited = 0; !ok(v) && waited < timeout_ms; waited += 50) {
        it_sleep_ms(50);
        v = scrape(series);
    }
    return v;
}

static int positive(double v)
{
    return v > 0;
}

static int zero(double v)
{
    return v == 0;
}

static long want_consumed;
static int all_consumed(double v)
{
    return v >= (double)want_consumed;
}

/* --- a role that holds its first batches, fails one with RETRY, and
 * dead-letters records starting with "bad" -------------------------------- */

static atomic_int gate_open;
static atomic_int retries_left;

static int probe_apply(void *state, ncmp_stage_ctx *ctx, rd_kafka_message_t **msgs, size_t n,
                       ncmp_err *err)
{
    while (!atomic_load(&gate_open))
        it_sleep_ms(10);
    if (atomic_fetch_sub(&retries_left, 1) > 0)
        return ncmp_err_set(err, NCMP_ERR_RETRY, "a dependency is away (test)");
    for (size_t i = 0; i < n; i++)
        if (msgs[i]->len >= 3 && memcmp(msgs[i]->payload, "bad", 3) == 0 &&
            ncmp_stage_reject(ctx, msgs[i], "starts with bad", err) != 0)
            return -1;
    return 0;
}

static void migrate(const char *url)
{
    ncmp_db *db = NULL;
    ncmp_err err;
    int applied = 0;

    cr_assert_eq(ncmp_db_open(&db, url, NULL, 10, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_migrate_run(db, ncmp_migrations, &applied, &err), 0, "%s", err.msg);
    ncmp_db_close(db);
}

static void publish(const char *topic)
{
    const char **values = calloc(GOOD + BAD, sizeof(*values));
    size_t *lens = calloc(GOOD + BAD, sizeof(*lens));

    for (size_t i = 0; i < GOOD + BAD; i++) {
        values[i] = i % (GOOD / BAD + 1) == 0 ? "bad record" : "{\"good\":true}";
        lens[i] = strlen(values[i]);
    }
    it_publish_raw(topic, values, lens, GOOD + BAD, NULL);
    free(values);
    free(lens);
}

Test(metrics, stage_counts_consumed_dead_letters_retries_lag_and_statements, .timeout = 180)
{
    char topic[128], dbname[128], url[512], group[160], series[512];
    const char *topics[1] = {topic};
    ncmp_config *cfg = it_config();
    ncmp_producer *producer = NULL;
    ncmp_kafka_opts kopts;
    ncmp_stage *st = NULL;
    ncmp_stage_role role;
    ncmp_err err;
    double lag;

    it_unique(topic, sizeof(topic), "metrics");
    it_create_topic(topic, PARTITIONS);
    it_scratch_db_create("metrics", dbname, sizeof(dbname), url, sizeof(url));
    migrate(url);
    snprintf(group, sizeof(group), "g-%s", topic);
    cr_assert_eq(ncmp_config_set(cfg, "db.url", url, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.group.id", group, &err), 0, "%s", err.msg);
    publish(topic);

    memset(&role, 0, sizeof(role));
    role.name = "probe";
    role.topics = topics;
    role.ntopics = 1;
    role.workers = 2;
    role.batch_size = 20;
    role.batch_wait_ms = 20;
    role.ops.apply = probe_apply;
    atomic_store(&gate_open, 0);
    atomic_store(&retries_left, 1);
    ncmp_kafka_opts_from_config(&kopts, cfg);
    cr_assert_eq(ncmp_producer_new(&producer, &kopts, NCMP_PRODUCER_DEFAULT, "metrics-test", &err),
                 0, "%s", err.msg);
    cr_assert_eq(ncmp_stage_start(&st, cfg, &role, producer, &err), 0, "%s", err.msg);

    /* held in the first batch: consumed a little, the rest is lag */
    snprintf(series, sizeof(series), "ncmp_consumed_records_total{role=\"probe\",topic=\"%s\"}",
             topic);
    cr_assert_gt(scrape_until(series, positive, 60000), 0, "nothing consumed");
    snprintf(series, sizeof(series), "ncmp_consumer_lag_records{role=\"probe\",topic=\"%s\"}",
             topic);
    lag = scrape_until(series, positive, 10000);
    cr_assert_gt(lag, 0, "no lag shown while the stage is held");
    cr_assert_lt(lag, GOOD + BAD);

    atomic_store(&gate_open, 1);
    want_consumed = GOOD + BAD;
    snprintf(series, sizeof(series), "ncmp_consumed_records_total{role=\"probe\",topic=\"%s\"}",
             topic);
    cr_assert_geq(scrape_until(series, all_consumed, 60000), GOOD + BAD);
    /* dead letters are counted at rejection; they are in the DLQ once
     * acknowledged, which is before the batch commits */
    snprintf(series, sizeof(series),
             "ncmp_dead_lettered_records_total{role=\"probe\",topic=\"%s\"}", topic);
    cr_assert_geq(scrape_until(series, positive, 30000), BAD);
    snprintf(series, sizeof(series), "ncmp_produced_records_total{topic=\"%s-dlq\"}", topic);
    want_consumed = BAD;
    cr_assert_geq(scrape_until(series, all_consumed, 30000), BAD);
    snprintf(series, sizeof(series), "ncmp_consumer_lag_records{role=\"probe\",topic=\"%s\"}",
             topic);
    cr_assert_eq(scrape_until(series, zero, 10000), 0, "lag stays after catching up");

    cr_assert_geq(scrape("ncmp_batch_retries_total{role=\"probe\"}"), 1);
    cr_assert_gt(scrape("ncmp_batch_records_count{role=\"probe\"}"), 0);
    snprintf(series, sizeof(series), "ncmp_consumed_records_total{role=\"probe\",topic=\"%s\"}",
             topic);
    cr_assert_eq(scrape("ncmp_batch_records_sum{role=\"probe\"}"), scrape(series),
                 "every consumed record is in one batch");
    cr_assert_gt(scrape("ncmp_batch_duration_seconds_count{role=\"probe\"}"), 0);
    cr_assert_gt(
        scrape("ncmp_db_statement_duration_seconds_count{statement=\"stage_lock_offsets\"}"), 0);
    cr_assert_gt(scrape("ncmp_db_statement_duration_seconds_count{statement=\"begin\"}"), 0);
    cr_assert_gt(scrape("ncmp_db_statement_duration_seconds_count{statement=\"commit\"}"), 0);

    ncmp_signal_request_stop();
    cr_assert_eq(ncmp_stage_join(st, &err), 0, "%s", err.msg);
    ncmp_stage_destroy(st);
    snprintf(series, sizeof(series), "ncmp_consumer_lag_records{role=\"probe\",topic=\"%s\"}",
             topic);
    cr_assert_eq(scrape(series), 0, "a stopped stage withdraws its lag");
    ncmp_producer_destroy(producer);
    ncmp_config_destroy(cfg);
    it_scratch_db_drop(dbname);
}

Test(metrics, producer_counts_acknowledged_and_refused_records, .timeout = 60)
{
    char topic[128], series[512];
    ncmp_config *cfg = it_config();
    ncmp_producer *producer = NULL;
    ncmp_kafka_opts kopts;
    ncmp_delivery d;
    ncmp_err err;
    char *big = calloc(1, 8192);

    it_unique(topic, sizeof(topic), "metrics-produce");
    it_create_topic(topic, 1);
    /* the smallest limit: a record of 8 KiB is refused locally */
    cr_assert_eq(ncmp_config_set(cfg, "kafka.max-message-bytes", "1024", &err), 0, "%s", err.msg);
    ncmp_kafka_opts_from_config(&kopts, cfg);
    cr_assert_eq(
        ncmp_producer_new(&producer, &kopts, NCMP_PRODUCER_DEFAULT, "metrics-produce", &err), 0,
        "%s", err.msg);
    ncmp_delivery_init(&d);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(ncmp_producer_send(producer, &d, topic, 0, "k", 1, "v", 1, NULL, &err), 0,
                     "%s", err.msg);
    cr_assert_eq(ncmp_producer_wait(producer, &d, 30000, &err), 0, "%s", err.msg);
    memset(big, 'x', 8191);
    cr_assert_eq(ncmp_producer_send(producer, &d, topic, 0, "k", 1, big, 8191, NULL, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT, "%s", err.msg);

    snprintf(series, sizeof(series), "ncmp_produced_records_total{topic=\"%s\"}", topic);
    cr_assert_eq(scrape(series), 5);
    snprintf(series, sizeof(series), "ncmp_produce_failures_total{topic=\"%s\"}", topic);
    cr_assert_eq(scrape(series), 1);
    free(big);
    ncmp_producer_destroy(producer);
    ncmp_config_destroy(cfg);
}

Test(metrics, database_counts_reconnects_and_times_statements, .timeout = 60)
{
    ncmp_db *db = it_db();
    ncmp_err err;
    const char *params[1] = {"1"};
    double before = scrape("ncmp_db_reconnects_total");

    ncmp_db_statement(db, "metrics_probe", "SELECT $1::int");
    cr_assert_eq(ncmp_db_run(db, "metrics_probe", 1, params, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(scrape("ncmp_db_statement_duration_seconds_count{statement=\"metrics_probe\"}"),
                 1);
    it_db_kill_backend(db);
    if (ncmp_db_run(db, "metrics_probe", 1, params, NULL, &err) != 0)
        cr_assert_eq(ncmp_db_run(db, "metrics_probe", 1, params, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(scrape("ncmp_db_reconnects_total"), before + 1);
    cr_assert_gt(scrape("ncmp_db_statement_duration_seconds_count{statement=\"adhoc\"}"), 0,
                 "it_query_long's queries are adhoc");
    ncmp_db_close(db);
}
