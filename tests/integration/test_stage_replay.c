/*
 * The stage engine's offset rule, for every stage role: the applied
 * offset kept in the database never goes back, and a record below it is
 * never applied again.
 *
 * Each role gets five records it must dead-letter (they are not JSON), so
 * the effect is visible the same way for every role: one dead letter per
 * record. ncmpd takes the five in one batch, commits the database and
 * dies before it commits the offsets to Kafka (fault point
 * <role>.after-commit). Restarted with batches of one record, it gets the
 * five again from Kafka; it must skip all of them. Were the applied offset
 * set to "last of the batch + 1" for a batch whose records were all
 * skipped, it would go back to 1 after the first, and records 1-4 would
 * be dead-lettered a second time.
 *
 * Each case has its own scratch database (the roles' sweeps and watchdogs
 * look at the whole inventory) and its own topics.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it_util.h"

#define RECORDS 5

static char scratch_db[96];

static void replay_cleanup(void)
{
    if (*scratch_db)
        it_scratch_db_drop(scratch_db);
    *scratch_db = '\0';
}

TestSuite(stage_replay, .fini = replay_cleanup);

static long applied_offset(ncmp_db *db, const char *topic)
{
    const char *p[1] = {topic};
    return it_query_long(
        db, "SELECT COALESCE(sum(next_offset), 0) FROM consumer_offsets WHERE topic = $1", 1, p);
}

/* `role` (its --roles name and fault-point prefix), `prefix` its option
 * section ("ingest", "trust", ...), `topic_key` its input topic option. */
static void replay_is_skipped(const char *role, const char *prefix, const char *topic_key)
{
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    char topic[128], dlq[160], group[160], stage_group[224], log[512], url[512];
    char f_db[600], f_topic[256], f_group[224], f_instance[224], f_roles[64], f_batch[96],
        f_wait[96], f_fault[128], f_batch1[96];
    const char *values[RECORDS];
    size_t lens[RECORDS];
    char bodies[RECORDS][32];
    it_record *recs = NULL;
    size_t n;
    ncmp_db *db = NULL;
    ncmp_err err;
    pid_t pid;
    int status;

    it_unique(topic, sizeof(topic), "it-replay");
    snprintf(dlq, sizeof(dlq), "%s-dlq", topic);
    snprintf(group, sizeof(group), "g-%s", topic);
    snprintf(stage_group, sizeof(stage_group), "%s-%s", group, role);
    snprintf(log, sizeof(log), "%s/%s.log", dir && *dir ? dir : "/tmp", topic);
    it_scratch_db_create("it_replay", scratch_db, sizeof(scratch_db), url, sizeof(url));
    cr_assert_eq(ncmp_db_open(&db, url, NULL, 10, &err), 0, "%s", err.msg);
    /* one partition: the five records are one ordered run of offsets */
    it_create_topic(topic, 1);
    it_create_topic(dlq, 1);
    for (int i = 0; i < RECORDS; i++) {
        snprintf(bodies[i], sizeof(bodies[i]), "not json %d", i);
        values[i] = bodies[i];
        lens[i] = strlen(bodies[i]);
    }
    it_publish_raw(topic, values, lens, RECORDS, NULL);

    snprintf(f_db, sizeof(f_db), "--db.url=%s", url);
    snprintf(f_topic, sizeof(f_topic), "--%s.%s=%s", prefix, topic_key, topic);
    snprintf(f_group, sizeof(f_group), "--kafka.group.id=%s", group);
    snprintf(f_instance, sizeof(f_instance), "--kafka.instance-id=i-%s", topic);
    snprintf(f_roles, sizeof(f_roles), "--roles=%s", role);
    snprintf(f_batch, sizeof(f_batch), "--%s.batch-size=100", prefix);
    snprintf(f_wait, sizeof(f_wait), "--%s.batch-wait-ms=3000", prefix);
    snprintf(f_fault, sizeof(f_fault), "--debug.fault=%s.after-commit:1", role);
    snprintf(f_batch1, sizeof(f_batch1), "--%s.batch-size=1", prefix);
    {
        const char *args[] = {f_db,    f_topic, f_group, f_instance, f_roles,
                              f_batch, f_wait,  f_fault, NULL};
        pid = it_ncmpd_spawn(log, args);
    }
    status = it_wait_exit(pid, 90000);
    if (status == -1) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    cr_assert(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "%s: ncmpd should have died after its first commit (status %d); log %s", role, status,
              log);
    cr_assert_eq(applied_offset(db, topic), RECORDS,
                 "%s: the five records were applied in one batch; log %s", role, log);
    cr_assert_eq(it_committed_sum(stage_group, topic, 1), 0, "%s: Kafka has no commit yet", role);

    {
        const char *args[] = {f_db, f_topic, f_group, f_instance, f_roles, f_batch1, NULL};
        pid = it_ncmpd_start(log, args);
    }
    /* each skipped record is committed to Kafka after its (empty) batch */
    for (int i = 0; i < 600 && it_committed_sum(stage_group, topic, 1) < RECORDS; i++)
        it_sleep_ms(100);
    cr_assert_eq(it_committed_sum(stage_group, topic, 1), RECORDS,
                 "%s: the replay was consumed; log %s", role, log);
    status = it_ncmpd_stop(pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: clean stop; log %s", role, log);
    cr_assert_eq(applied_offset(db, topic), RECORDS, "%s: the applied offset did not go back",
                 role);
    /* dead letters are acknowledged before the commit they belong to, so
     * every one the replay could have made is on the topic by now */
    n = it_read_topic(dlq, RECORDS + 1, 5000, &recs);
    cr_assert_eq(n, RECORDS, "%s: one dead letter per record, none twice; got %zu", role, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(recs[i].value, bodies[i], "%s: dead letter %zu", role, i);
    it_records_free(recs, n);
    ncmp_db_close(db);
    cr_assert_eq(it_scratch_db_drop(scratch_db), 0);
    *scratch_db = '\0';
}

Test(stage_replay, ingest, .timeout = 240)
{
    replay_is_skipped("ingest", "ingest", "topic");
}

Test(stage_replay, registration, .timeout = 240)
{
    replay_is_skipped("registration", "registration", "topic");
}

Test(stage_replay, module_sync, .timeout = 240)
{
    replay_is_skipped("module-sync", "module-sync", "topic");
}

Test(stage_replay, trust, .timeout = 240)
{
    replay_is_skipped("trust", "trust", "heartbeat-topic");
}

/* --- a fenced member --------------------------------------------------------- */

static void publish_bad(const char *topic, int first, int n, char bodies[][32])
{
    const char *values[RECORDS];
    size_t lens[RECORDS];

    for (int i = 0; i < n; i++) {
        snprintf(bodies[first + i], 32, "not json %d", first + i);
        values[i] = bodies[first + i];
        lens[i] = strlen(bodies[first + i]);
    }
    it_publish_raw(topic, values, lens, (size_t)n, NULL);
}

/* Another member joins ncmpd's stage group with the worker's static
 * instance id: the broker fences ncmpd's member (FENCED_INSTANCE_ID,
 * fatal for librdkafka). ncmpd used to stop then, and stayed down until
 * something started it again; now the worker makes its member again and
 * reads on, and nothing is applied twice. */
Test(stage_replay, a_fenced_member_is_made_again_and_reads_on, .timeout = 240)
{
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    char topic[128], dlq[160], group[160], stage_group[224], log[512], url[512], instance[300];
    char f_db[600], f_topic[256], f_group[224], f_instance[224];
    char bodies[2 * RECORDS][32];
    ncmp_consumer *intruder;
    it_record *recs = NULL;
    size_t n;
    pid_t pid;
    int status;

    it_unique(topic, sizeof(topic), "it-fence");
    snprintf(dlq, sizeof(dlq), "%s-dlq", topic);
    snprintf(group, sizeof(group), "g-%s", topic);
    snprintf(stage_group, sizeof(stage_group), "%s-ingest", group);
    snprintf(instance, sizeof(instance), "i-%s-ingest-0", topic);
    snprintf(log, sizeof(log), "%s/%s.log", dir && *dir ? dir : "/tmp", topic);
    it_scratch_db_create("it_fence", scratch_db, sizeof(scratch_db), url, sizeof(url));
    it_create_topic(topic, 1);
    it_create_topic(dlq, 1);
    snprintf(f_db, sizeof(f_db), "--db.url=%s", url);
    snprintf(f_topic, sizeof(f_topic), "--ingest.topic=%s", topic);
    snprintf(f_group, sizeof(f_group), "--kafka.group.id=%s", group);
    snprintf(f_instance, sizeof(f_instance), "--kafka.instance-id=i-%s", topic);
    {
        const char *args[] = {
            f_db, f_topic, f_group, f_instance, "--roles=ingest", "--ingest.workers=1", NULL};
        pid = it_ncmpd_start(log, args);
    }
    publish_bad(topic, 0, RECORDS, bodies);
    for (int i = 0; i < 600 && it_committed_sum(stage_group, topic, 1) < RECORDS; i++)
        it_sleep_ms(100);
    cr_assert_eq(it_committed_sum(stage_group, topic, 1), RECORDS, "first records; log %s", log);

    intruder = it_intruder(stage_group, instance, topic);
    for (int i = 0; i < 600 && !it_file_contains(log, "member of " /* again */); i++)
        it_intruder_poll(intruder, 50);
    ncmp_consumer_close(intruder);
    cr_assert(it_file_contains(log, "making the member again"), "ncmpd's member was fenced; log %s",
              log);
    cr_assert(it_file_contains(log, "member of "), "and made again; log %s", log);
    cr_assert_eq(waitpid(pid, &status, WNOHANG), 0, "ncmpd is still running; log %s", log);

    publish_bad(topic, RECORDS, RECORDS, bodies);
    for (int i = 0; i < 600 && it_committed_sum(stage_group, topic, 1) < 2 * RECORDS; i++)
        it_sleep_ms(100);
    cr_assert_eq(it_committed_sum(stage_group, topic, 1), 2 * RECORDS, "read on; log %s", log);
    status = it_ncmpd_stop(pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "clean stop; log %s", log);
    n = it_read_topic(dlq, 2 * RECORDS + 1, 5000, &recs);
    cr_assert_eq(n, 2 * RECORDS, "one dead letter per record, none twice; got %zu", n);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(recs[i].value, bodies[i], "dead letter %zu", i);
    it_records_free(recs, n);
    cr_assert_eq(it_scratch_db_drop(scratch_db), 0);
    *scratch_db = '\0';
}
