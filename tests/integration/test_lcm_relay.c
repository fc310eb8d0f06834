/*
 * The lifecycle relay's recovery on real services: a recovery that fails
 * half-way (after it read the checkpoints and freed their result) ends
 * the way its error says - here a schema error, FATAL: an orderly stop
 * with exit status 1 and the reason in the log - and never in a crash.
 *
 * Regression: the recovery freed the checkpoint query's result and, when
 * a later step failed, freed it again on the way out (a double free that
 * aborted the process). Renaming lcm_outbox makes the step after the scan
 * fail.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it_util.h"
#include "ncmp_migrate.h"

static char scratch_db[96];

static void relay_cleanup(void)
{
    if (*scratch_db)
        it_scratch_db_drop(scratch_db);
    *scratch_db = '\0';
}

TestSuite(lcm_relay, .fini = relay_cleanup);

Test(lcm_relay, a_failing_recovery_is_retried_without_a_crash, .timeout = 120)
{
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    char topic[128], log[512], url[512], f_db[600], f_topic[200], f_group[200];
    ncmp_db *db = NULL;
    ncmp_err err;
    int applied = 0, status;
    pid_t pid;

    it_unique(topic, sizeof(topic), "it-relay");
    snprintf(log, sizeof(log), "%s/%s.log", dir && *dir ? dir : "/tmp", topic);
    it_create_topic(topic, 2);
    it_scratch_db_create("it_relay", scratch_db, sizeof(scratch_db), url, sizeof(url));
    cr_assert_eq(ncmp_db_open(&db, url, NULL, 10, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_migrate_run(db, ncmp_migrations, &applied, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_db_exec(db, "ALTER TABLE lcm_outbox RENAME TO lcm_outbox_gone", &err), 0,
                 "%s", err.msg);

    snprintf(f_db, sizeof(f_db), "--db.url=%s", url);
    snprintf(f_topic, sizeof(f_topic), "--lcm.topic=%s", topic);
    snprintf(f_group, sizeof(f_group), "--kafka.group.id=g-%s", topic);
    {
        const char *args[] = {f_db, f_topic, f_group, "--roles=lcm-relay", NULL};
        pid = it_ncmpd_start(log, args);
    }
    status = it_wait_exit(pid, 60000);
    if (status == -1) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 1,
              "an orderly stop on the schema error, not a crash (status %d); log %s", status, log);
    cr_assert(it_file_contains(log, "relation \"lcm_outbox\" does not exist"),
              "the reason is logged; log %s", log);
    ncmp_db_close(db);
    cr_assert_eq(it_scratch_db_drop(scratch_db), 0);
    *scratch_db = '\0';
}
