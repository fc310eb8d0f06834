/*
 * The platform's vertical slice end to end: ncmp-publish-style producers
 * -> Kafka -> ncmpd (ingest role, batches) -> PostgreSQL, on real
 * services, including crashes at the worst moments and bad input.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it_util.h"
#include "ncmp_kafka.h"

#define PARTITIONS 3

typedef struct ingest_case {
    char topic[128];
    char group[128];
    char group_role[160];
    char log[512];
    char topic_flag[192];
    char group_flag[192];
    char instance_flag[192];
    ncmp_db *db;
} ingest_case;

static void case_init(ingest_case *c, const char *name)
{
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    it_unique(c->topic, sizeof(c->topic), name);
    snprintf(c->group, sizeof(c->group), "g-%s", c->topic);
    snprintf(c->group_role, sizeof(c->group_role), "%s-ingest", c->group);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir && *dir ? dir : "/tmp", c->topic);
    snprintf(c->topic_flag, sizeof(c->topic_flag), "--ingest.topic=%s", c->topic);
    snprintf(c->group_flag, sizeof(c->group_flag), "--kafka.group.id=%s", c->group);
    /* static membership: a restart after a kill takes over at once */
    snprintf(c->instance_flag, sizeof(c->instance_flag), "--kafka.instance-id=i-%s", c->topic);
    it_create_topic(c->topic, PARTITIONS);
    c->db = it_db();
}

static void case_fini(ingest_case *c)
{
    ncmp_db_close(c->db);
}

static long rows(ingest_case *c)
{
    const char *p[1] = {c->topic};
    return it_query_long(c->db, "SELECT count(*) FROM ingest_event WHERE topic = $1", 1, p);
}

static long distinct_rows(ingest_case *c)
{
    const char *p[1] = {c->topic};
    return it_query_long(c->db,
                         "SELECT count(DISTINCT (partition, \"offset\")) FROM ingest_event "
                         "WHERE topic = $1",
                         1, p);
}

static long wait_rows(ingest_case *c, long expected)
{
    return it_wait_long(c->db, "SELECT count(*) FROM ingest_event WHERE topic = $1", c->topic,
                        expected, 90000);
}

Test(ingest, stores_every_event_once_and_commits_offsets, .timeout = 180)
{
    ingest_case c;
    const long n = 5000;
    pid_t pid;
    int status;

    case_init(&c, "it-ingest-once");
    const char *args[] = {c.topic_flag, c.group_flag, "--roles=ingest", "--ingest.batch-size=250",
                          NULL};
    pid = it_ncmpd_start(c.log, args);
    it_publish_events(c.topic, "evt", 1, n);
    cr_assert_eq(wait_rows(&c, n), n, "rows stored");
    status = it_ncmpd_stop(pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "SIGTERM should stop ncmpd cleanly, status %d", status);
    cr_assert_eq(rows(&c), n);
    cr_assert_eq(distinct_rows(&c), n);
    {
        const char *p[2] = {c.group_role, c.topic};
        cr_assert_eq(it_query_long(c.db,
                                   "SELECT sum(next_offset) FROM consumer_offsets "
                                   "WHERE group_id = $1 AND topic = $2",
                                   2, p),
                     n, "database offsets cover every record");
    }
    cr_assert_eq(it_committed_sum(c.group_role, c.topic, PARTITIONS), n,
                 "Kafka offsets committed after the database");
    {
        /* the body is stored as published */
        const char *p[1] = {c.topic};
        cr_assert_eq(it_query_long(c.db,
                                   "SELECT count(*) FROM ingest_event WHERE topic = $1 "
                                   "AND body->>'id' = 'evt-' || (body->>'seq') "
                                   "AND event_key = body->>'id'",
                                   1, p),
                     n);
    }
    case_fini(&c);
}

Test(ingest, restart_resumes_without_duplicates, .timeout = 180)
{
    ingest_case c;
    pid_t pid;

    case_init(&c, "it-ingest-restart");
    const char *args[] = {c.topic_flag, c.group_flag, "--roles=ingest", NULL};
    it_publish_events(c.topic, "evt", 1, 3000);
    pid = it_ncmpd_start(c.log, args);
    cr_assert_eq(wait_rows(&c, 3000), 3000);
    it_ncmpd_stop(pid);
    it_publish_events(c.topic, "evt", 3001, 2000);
    pid = it_ncmpd_start(c.log, args);
    cr_assert_eq(wait_rows(&c, 5000), 5000);
    it_sleep_ms(500); /* anything extra would show up now */
    it_ncmpd_stop(pid);
    cr_assert_eq(rows(&c), 5000);
    cr_assert_eq(distinct_rows(&c), 5000);
    case_fini(&c);
}

/* Kill at a fault point, restart, and check the totals. */
static void crash_and_recover(const char *point, int expect_rows_after_crash)
{
    ingest_case c;
    char fault[128];
    pid_t pid;
    int status;
    long after_crash;
    const long n = 4000;

    case_init(&c, "it-ingest-crash");
    snprintf(fault, sizeof(fault), "--debug.fault=%s:4", point);
    it_publish_events(c.topic, "evt", 1, n);
    {
        const char *args[] = {c.topic_flag,
                              c.group_flag,
                              c.instance_flag,
                              "--roles=ingest",
                              "--ingest.batch-size=200",
                              fault,
                              NULL};
        pid = it_ncmpd_spawn(c.log, args);
    }
    status = it_wait_exit(pid, 90000);
    cr_assert(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "ncmpd should have been killed at %s (status %d)", point, status);
    after_crash = rows(&c);
    cr_assert_lt(after_crash, n, "the crash came before the end");
    if (expect_rows_after_crash)
        cr_assert_gt(after_crash, 0, "batches committed before the crash are kept");
    {
        const char *args[] = {c.topic_flag,
                              c.group_flag,
                              c.instance_flag,
                              "--roles=ingest",
                              "--ingest.batch-size=200",
                              NULL};
        pid = it_ncmpd_start(c.log, args);
    }
    cr_assert_eq(wait_rows(&c, n), n, "every record stored after the restart");
    it_sleep_ms(500);
    it_ncmpd_stop(pid);
    cr_assert_eq(rows(&c), n, "no duplicates");
    cr_assert_eq(distinct_rows(&c), n);
    case_fini(&c);
}

Test(ingest, crash_before_database_commit_loses_nothing, .timeout = 240)
{
    crash_and_recover("ingest.before-commit", 1);
}

Test(ingest, crash_between_database_and_kafka_commit_duplicates_nothing, .timeout = 240)
{
    crash_and_recover("ingest.after-commit", 1);
}

Test(ingest, kill9_at_random_moments_loses_and_duplicates_nothing, .timeout = 300)
{
    ingest_case c;
    const long n = 20000;
    pid_t pid;

    case_init(&c, "it-ingest-kill9");
    const char *args[] = {
        c.topic_flag, c.group_flag, c.instance_flag, "--roles=ingest", "--ingest.batch-size=100",
        NULL};
    srand((unsigned)getpid());
    it_publish_events(c.topic, "evt", 1, n);
    for (int round = 0; round < 4; round++) {
        pid = it_ncmpd_start(c.log, args);
        it_sleep_ms(100 + rand() % 400);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    pid = it_ncmpd_start(c.log, args);
    cr_assert_eq(wait_rows(&c, n), n);
    it_sleep_ms(500);
    it_ncmpd_stop(pid);
    cr_assert_eq(rows(&c), n, "no duplicates after %d kills", 4);
    cr_assert_eq(distinct_rows(&c), n);
    case_fini(&c);
}

Test(ingest, malformed_events_go_to_the_dead_letter_topic, .timeout = 180)
{
    ingest_case c;
    char dlq[160];
    rd_kafka_message_t **msgs = NULL;
    size_t got;
    pid_t pid;
    static const char bad_utf8[] = "{\"id\":\"\xff\xfe\"}";
    const char *values[] = {"{\"id\":\"a\"}", "not json", "{\"id\":\"b\"}", "[1,2]",
                            bad_utf8,         "{\"id\":", "{\"id\":\"c\"}"};
    size_t lens[7];
    const char *headers[] = {"ce_id", "req-1", "ce_type", "test", NULL};

    for (size_t i = 0; i < 7; i++)
        lens[i] = strlen(values[i]);
    case_init(&c, "it-ingest-dlq");
    snprintf(dlq, sizeof(dlq), "%s-dlq", c.topic);
    const char *args[] = {c.topic_flag, c.group_flag, "--roles=ingest", NULL};
    pid = it_ncmpd_start(c.log, args);
    it_publish_raw(c.topic, values, lens, 7, headers);
    cr_assert_eq(wait_rows(&c, 3), 3, "the good events around the bad ones are stored");

    got = it_consume_all(dlq, 4, 60000, &msgs);
    cr_assert_eq(got, 4, "four bad records dead-lettered, got %zu", got);
    for (size_t i = 0; i < got; i++) {
        char buf[512];
        rd_kafka_message_t *m = msgs[i];
        const char *reason = ncmp_kafka_header(m, "dlq_reason", buf, sizeof(buf));
        cr_assert_not_null(reason, "dead letter carries its reason");
        cr_assert_gt(strlen(reason), 5);
        cr_assert_not_null(ncmp_kafka_header(m, "dlq_offset", buf, sizeof(buf)));
        cr_assert_str_eq(ncmp_kafka_header(m, "dlq_topic", buf, sizeof(buf)), c.topic);
        cr_assert_str_eq(ncmp_kafka_header(m, "ce_id", buf, sizeof(buf)), "req-1",
                         "original headers kept");
    }
    it_consume_release(msgs, got);
    it_ncmpd_stop(pid);
    cr_assert(it_file_contains(c.log, "rejected record topic="), "log names the record");
    cr_assert(it_file_contains(c.log, "offset="));
    cr_assert(it_file_contains(c.log, "invalid JSON"), "log says why");
    cr_assert(it_file_contains(c.log, "not array") || it_file_contains(c.log, "not an array") ||
                  it_file_contains(c.log, "must be a JSON object"),
              "non-object events are explained");
    cr_assert_eq(rows(&c), 3);
    case_fini(&c);
}
