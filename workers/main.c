/*
 * ncmpd: the service. Parses the configuration, then runs a command:
 *
 *   run            (default) the worker roles named by `roles`
 *   migrate        apply pending database migrations and exit
 *   create-topics  create the Kafka topics the roles use and exit
 *   config-doc     print docs/configuration.md from the option table
 *
 * Exit status: 0 stopped cleanly; 1 a fatal error at run time (database
 * schema wrong, a migration failed, Kafka refused the configuration);
 * 2 bad usage or configuration; 130 a second stop signal.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_fault.h"
#include "ncmp_kafka.h"
#include "ncmp_kafka_config.h"
#include "ncmp_log.h"
#include "ncmp_migrate.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"
#include "ncmp_yang.h"
#include "role.h"

extern char **environ;

#define EXIT_FATAL 1
#define EXIT_USAGE 2

static const char usage[] =
    "Usage: ncmpd [options] [command]\n"
    "\n"
    "A network CM proxy: keeps the inventory of CM handles registered by DMI\n"
    "plugins, announces their lifecycle on Kafka, and proxies data operations.\n"
    "\n"
    "Commands:\n"
    "  run            run the worker roles named by --roles (the default; the roles\n"
    "                 are listed under --roles below; module-sync also runs its sweep,\n"
    "                 trust the DMI health watchdog)\n"
    "  migrate        apply pending database migrations, then exit\n"
    "  create-topics  create the Kafka topics the roles use, then exit\n"
    "  config-doc     print the configuration reference (Markdown)\n"
    "\n"
    "General flags:\n"
    "  -h, --help        this text\n"
    "  -V, --version     print the version\n"
    "  -c, --config FILE read options from FILE\n"
    "  --dump-config     print the effective configuration (secrets redacted) and exit\n"
    "\n"
    "Exit status: 0 clean stop, 1 fatal error, 2 bad usage or configuration,\n"
    "130 stopped by a second signal.\n"
    "\n";

/* Connect, waiting for the database to come up (as in a fresh deployment
 * where ncmpd starts first), until a stop is requested. */
static int db_connect_wait(const ncmp_config *cfg, ncmp_db **db, ncmp_err *err)
{
    long backoff = 200;

    for (;;) {
        if (ncmp_db_open(db, cfg->db_url, cfg->db_password, cfg->db_connect_timeout_s, err) == 0)
            return 0;
        if (err->cls != NCMP_ERR_RETRY || ncmp_stopping)
            return -1;
        log_warn("db", "%s; retrying in %ld ms", err->msg, backoff);
        ncmp_sleep_ms(backoff);
        backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
    }
}

static int cmd_migrate(const ncmp_config *cfg)
{
    ncmp_db *db = NULL;
    ncmp_err err;
    int applied = 0;

    if (db_connect_wait(cfg, &db, &err) != 0) {
        log_error("migrate", "%s", err.msg);
        return EXIT_FATAL;
    }
    if (ncmp_migrate_run(db, ncmp_migrations, &applied, &err) != 0) {
        log_error("migrate", "%s", err.msg);
        ncmp_db_close(db);
        return EXIT_FATAL;
    }
    log_info("migrate", "database schema up to date (%d migrations applied now)", applied);
    ncmp_db_close(db);
    return 0;
}

static int cmd_create_topics(const ncmp_config *cfg)
{
    char names[64][256];
    const char *topics[64];
    size_t n = ncmp_roles_topics(cfg, names, 64);
    ncmp_kafka_opts kopts;
    ncmp_err err;

    for (size_t i = 0; i < n; i++)
        topics[i] = names[i];
    ncmp_kafka_opts_from_config(&kopts, cfg);
    if (ncmp_kafka_create_topics(&kopts, topics, n, cfg->kafka_topic_partitions, 30000, &err) !=
        0) {
        log_error("kafka", "%s", err.msg);
        return EXIT_FATAL;
    }
    log_info("kafka", "%zu topics present with %d partitions each (new ones)", n,
             cfg->kafka_topic_partitions);
    return 0;
}

/* The main thread while the roles run: wait for the stop, and every
 * memory-trim-interval-s give the allocator's free memory back. glibc
 * keeps what a thread freed in that thread's arena; with a hundred threads
 * (librdkafka's, the workers', the server's), the batches of a large
 * registration leave hundreds of MB resident that no one uses (measured:
 * 1,020 MB after 200,000 handles, 341 MB after a restart with the same
 * inventory). malloc_trim releases the free pages of every arena. */
static void idle(const ncmp_config *cfg)
{
    long since = 0, every = cfg->memory_trim_interval_s * 1000L;

    while (!ncmp_stopping) {
        ncmp_sleep_ms(100);
        since += 100;
        if (every > 0 && since >= every) {
            since = 0;
#ifdef __GLIBC__
            malloc_trim(0);
#endif
        }
    }
}

/* arg: the seconds, by value. Not the configuration: main may return and
 * free it before this thread first runs (a start that failed at once
 * stops in microseconds; ASan caught the read after the free). */
static void *shutdown_watchdog(void *arg)
{
    int secs = (int)(intptr_t)arg;

    ncmp_sleep_ms(secs * 1000L);
    log_error("main", "graceful stop took longer than %d s; exiting", secs);
    _exit(EXIT_FATAL);
    return NULL;
}

/* The prefix "NAME: " for a message of role `r`, or "" when the message
 * names the role already (as the role's own errors often do). */
static const char *role_prefix(const ncmp_role *r, const ncmp_err *err, char *buf, size_t size)
{
    size_t n = strlen(r->name);

    if (strncmp(err->msg, r->name, n) == 0 && err->msg[n] == ':')
        return "";
    snprintf(buf, size, "%s: ", r->name);
    return buf;
}

/* Start role `r`. A failure that may pass (RETRY: PostgreSQL or the
 * broker away for a moment, as when PostgreSQL crashes while the rest
 * role loads its handle map) is tried again with a growing pause, as the
 * first connection is, until the role starts or a stop is asked; a start
 * that failed left nothing running (role.h). Anything else stops the
 * process. */
static int role_start(const ncmp_role *r, ncmp_services *svc, void **handle, ncmp_err *err)
{
    char prefix[64];
    long backoff = 200;

    for (;;) {
        *handle = NULL;
        if (r->start(r, svc, handle, err) == 0)
            return 0;
        if (err->cls != NCMP_ERR_RETRY || ncmp_stopping)
            return -1;
        log_warn("main", "%s%s; starting it again in %ld ms",
                 role_prefix(r, err, prefix, sizeof(prefix)), err->msg, backoff);
        ncmp_signal_nap_ms(backoff);
        backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
    }
}

/* Start the selected rows in table order; on a stop request, stop and
 * join them in the reverse order (role.h says why that order). */
static int cmd_run(const ncmp_config *cfg)
{
    ncmp_services svc;
    void *handles[32] = {0};
    int started[32] = {0};
    ncmp_err err;
    int rc = 0, nstarted = 0;
    pthread_t watchdog;

    if (cfg->db_migrate_on_start && ncmp_roles_need_db(cfg->roles)) {
        rc = cmd_migrate(cfg);
        if (rc != 0 || ncmp_stopping)
            return rc;
    }
    if (ncmp_services_new(&svc, cfg, &err) != 0) {
        log_error("main", "%s", err.msg);
        return EXIT_FATAL;
    }
    for (size_t i = 0; i < ncmp_nroles && !ncmp_stopping; i++) {
        const ncmp_role *r = &ncmp_roles[i];
        if (!ncmp_role_selected(r, cfg->roles))
            continue;
        if (role_start(r, &svc, &handles[i], &err) != 0) {
            if (ncmp_stopping && err.cls == NCMP_ERR_RETRY)
                break; /* stopped while waiting: a clean stop */
            char prefix[64];
            log_error("main", "%s%s", role_prefix(r, &err, prefix, sizeof(prefix)), err.msg);
            rc = EXIT_FATAL;
            ncmp_signal_request_stop();
            break;
        }
        started[i] = 1;
        nstarted++;
    }
    /* only when every role started: a supervisor or a script that waits
     * for this line must not take a process that is stopping for started */
    if (rc == 0 && !ncmp_stopping)
        log_info("main", "ncmpd %s running (%d roles); stop with SIGTERM", NCMPD_VERSION, nstarted);

    idle(cfg);
    log_info("main", "stopping: finishing the batches in flight");
    pthread_create(&watchdog, NULL, shutdown_watchdog, (void *)(intptr_t)cfg->shutdown_timeout_s);
    pthread_detach(watchdog);

    for (size_t i = ncmp_nroles; i-- > 0;) {
        const ncmp_role *r = &ncmp_roles[i];
        if (!started[i])
            continue;
        if (r->stop)
            r->stop(handles[i]);
        if (r->join && r->join(handles[i], &err) != 0) {
            log_error("main", "role %s failed: %s", r->name, err.msg);
            rc = EXIT_FATAL;
        }
        r->destroy(handles[i]);
    }
    ncmp_services_free(&svc);
    log_info("main", "stopped");
    return rc;
}

int main(int argc, char **argv)
{
    ncmp_config *cfg = NULL;
    ncmp_cli cli;
    ncmp_err err;
    int rc;
    int level, format;

    if (ncmp_config_load(&cfg, argc, argv, environ, &cli, &err) != 0) {
        fprintf(stderr, "ncmpd: %s\n", err.msg);
        return EXIT_USAGE;
    }
    if (cli.help) {
        fputs(usage, stdout);
        ncmp_config_help(stdout);
        rc = 0;
        goto out;
    }
    if (cli.version) {
        printf("ncmpd %s (librdkafka %s, libpq %d)\n", NCMPD_VERSION, rd_kafka_version_str(),
               PQlibVersion());
        rc = 0;
        goto out;
    }
    if (cli.dump_config) {
        ncmp_config_dump(cfg, stdout);
        rc = 0;
        goto out;
    }
    level = ncmp_log_level_parse(cfg->log_level);
    format = ncmp_log_format_parse(cfg->log_format);
    ncmp_log_setup((ncmp_log_level)level, (ncmp_log_format)format, stderr);
    ncmp_yang_log_setup();
    if (ncmp_fault_setup(cfg->debug_fault, &err) != 0 || ncmp_roles_check(cfg->roles, &err) != 0) {
        fprintf(stderr, "ncmpd: %s\n", err.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    if (cli.nargs > 0) {
        fprintf(stderr, "ncmpd: unexpected argument '%s'\n", cli.args[0]);
        rc = EXIT_USAGE;
        goto out;
    }
    ncmp_signal_install();

    if (!cli.command || strcmp(cli.command, "run") == 0) {
        rc = cmd_run(cfg);
    } else if (strcmp(cli.command, "migrate") == 0) {
        rc = cmd_migrate(cfg);
    } else if (strcmp(cli.command, "create-topics") == 0) {
        rc = cmd_create_topics(cfg);
    } else if (strcmp(cli.command, "config-doc") == 0) {
        ncmp_config_doc_markdown(stdout);
        rc = 0;
    } else {
        fprintf(stderr, "ncmpd: unknown command '%s' (see --help)\n", cli.command);
        rc = EXIT_USAGE;
    }
out:
    ncmp_config_destroy(cfg);
    return rc;
}
