/*
 * The ncmpd program's command line: usage errors exit 2 with a clear
 * message, --dump-config redacts secrets, --help lists every option, and
 * `migrate` reports a database it cannot reach.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it_util.h"
#include "ncmp_buf.h"
#include "ncmp_config.h"

/* Run ncmpd with `args` (a shell-quoted string); return the exit code and
 * the combined output in *out. */
static int run_ncmpd(const char *env, const char *args, ncmp_buf *out)
{
    char cmd[2048];
    char chunk[4096];
    FILE *p;
    size_t got;
    int status;

    snprintf(cmd, sizeof(cmd), "{ env %s '%s' %s; } 2>&1", env ? env : "", NCMPD_PATH, args);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    while ((got = fread(chunk, 1, sizeof(chunk), p)) > 0)
        ncmp_buf_append(out, chunk, got);
    status = pclose(p);
    if (!out->data)
        ncmp_buf_append_str(out, "");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Test(cli, bad_option_value_exits_2_with_the_reason)
{
    ncmp_buf out = NCMP_BUF_INIT;
    cr_assert_eq(run_ncmpd(NULL, "--ingest.batch-size=lots --dump-config", &out), 2);
    cr_assert(strstr(out.data, "ingest.batch-size") && strstr(out.data, "not an integer"), "%s",
              out.data);
    ncmp_buf_reset(&out);
    cr_assert_eq(run_ncmpd(NULL, "--no-such-option=1", &out), 2);
    cr_assert(strstr(out.data, "unknown option 'no-such-option'"), "%s", out.data);
    ncmp_buf_reset(&out);
    cr_assert_eq(run_ncmpd(NULL, "frobnicate", &out), 2);
    cr_assert(strstr(out.data, "unknown command 'frobnicate'"), "%s", out.data);
    ncmp_buf_reset(&out);
    cr_assert_eq(run_ncmpd(NULL, "--roles=ingest,nope", &out), 2);
    cr_assert(strstr(out.data, "unknown role 'nope'"), "%s", out.data);
    ncmp_buf_free(&out);
}

Test(cli, dump_config_redacts_secrets_and_shows_sources)
{
    ncmp_buf out = NCMP_BUF_INIT;
    cr_assert_eq(run_ncmpd("NCMP_DB_PASSWORD=hunter2 NCMP_KAFKA_SASL_PASSWORD=s3cret "
                           "NCMP_INGEST_WORKERS=7",
                           "--ingest.batch-size=33 --dump-config", &out),
                 0);
    cr_assert(strstr(out.data, "db.password = ********"), "%s", out.data);
    cr_assert(strstr(out.data, "kafka.sasl.password = ********"), "%s", out.data);
    cr_assert_null(strstr(out.data, "hunter2"));
    cr_assert_null(strstr(out.data, "s3cret"));
    cr_assert(strstr(out.data, "ingest.workers = 7"), "environment applied: %s", out.data);
    cr_assert(strstr(out.data, "ingest.batch-size = 33"), "flag applied: %s", out.data);
    ncmp_buf_free(&out);
}

Test(cli, help_lists_every_option_and_command)
{
    ncmp_buf out = NCMP_BUF_INIT;
    cr_assert_eq(run_ncmpd(NULL, "--help", &out), 0);
    for (const ncmp_option *o = ncmp_options; o->name; o++) {
        char flag[256];
        snprintf(flag, sizeof(flag), "--%s=", o->name);
        cr_assert(strstr(out.data, flag), "--help lacks %s", o->name);
    }
    cr_assert(strstr(out.data, "migrate") && strstr(out.data, "create-topics"));
    ncmp_buf_free(&out);
}

Test(cli, migrate_without_a_database_fails_clearly, .timeout = 60)
{
    ncmp_buf out = NCMP_BUF_INIT;
    /* nothing listens on port 1; the stop timeout bounds the retries */
    int rc = run_ncmpd("NCMP_DB_URL=postgresql://x@127.0.0.1:1/x NCMP_DB_CONNECT_TIMEOUT_S=1",
                       "migrate & sleep 3; kill -TERM $! 2>/dev/null; wait $!", &out);
    cr_assert_neq(rc, 0, "%s", out.data);
    cr_assert(strstr(out.data, "cannot connect to PostgreSQL"), "%s", out.data);
    ncmp_buf_free(&out);
}
