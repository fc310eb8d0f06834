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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "forward.h"
#include "ingest.h"
#include "lcm_relay.h"
#include "modsync.h"
#include "registration.h"
#include "rest.h"
#include "trust.h"
#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_fault.h"
#include "ncmp_kafka.h"
#include "ncmp_kafka_config.h"
#include "ncmp_log.h"
#include "ncmp_migrate.h"
#include "ncmp_signal.h"
#include "ncmp_stage.h"
#include "ncmp_time.h"
#include "ncmp_yang.h"

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
    "  run            run the worker roles named by --roles (the default)\n"
    "                 (ingest, registration, module-sync, trust, lcm-relay, rest,\n"
    "                 avc-forward, async-forward; trust also runs the DMI health watchdog)\n"
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

typedef struct role_entry {
    const char *name;
    void (*init)(ncmp_stage_role *role, const ncmp_config *cfg, const char **topics);
} role_entry;

static const role_entry all_roles[] = {
    {"ingest", ingest_role_init},
    {"registration", registration_role_init},
    {"module-sync", modsync_role_init},
    {"trust", trust_role_init},
};
/* Not stages: the lifecycle relay (one active across all processes) and
 * the REST API. */
#define RELAY_ROLE "lcm-relay"
#define REST_ROLE  "rest"
#define NROLES     (sizeof(all_roles) / sizeof(all_roles[0]))
/* Not stages either, and without a database: the Kafka forwarders. */
static const char *const forward_roles[] = {FORWARD_AVC_ROLE, FORWARD_ASYNC_ROLE};
#define NFORWARD (sizeof(forward_roles) / sizeof(forward_roles[0]))

/* Is `name` in the comma-separated `roles` (or is it "all")? */
static int role_wanted(const char *roles, const char *name)
{
    size_t n = strlen(name);
    const char *p = roles;

    if (strcmp(roles, "all") == 0)
        return 1;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && *p == ' ')
            p++, len--;
        while (len && p[len - 1] == ' ')
            len--;
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

static int roles_check(const char *roles, ncmp_err *err)
{
    const char *p = roles;

    if (strcmp(roles, "all") == 0)
        return 0;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[64];
        int known = 0;
        snprintf(name, sizeof(name), "%.*s", (int)len, p);
        for (size_t i = 0; i < NROLES; i++)
            known |= role_wanted(name, all_roles[i].name);
        known |= role_wanted(name, RELAY_ROLE);
        known |= role_wanted(name, REST_ROLE);
        for (size_t i = 0; i < NFORWARD; i++)
            known |= role_wanted(name, forward_roles[i]);
        if (!known)
            return ncmp_err_set(err, NCMP_ERR_FATAL, "roles: unknown role '%s'", name);
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

/* Does any role of `roles` use the database (the forwarders do not)? */
static int roles_need_db(const char *roles)
{
    for (size_t i = 0; i < NROLES; i++)
        if (role_wanted(roles, all_roles[i].name))
            return 1;
    return role_wanted(roles, RELAY_ROLE) || role_wanted(roles, REST_ROLE);
}

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
    const char *topics[2 * NROLES + 6 + 3 * NFORWARD];
    char dlq[NROLES][256], data_dlq[256];
    char fwd[3 * NFORWARD][256];
    size_t nfwd = 0;
    size_t n = 0;
    ncmp_kafka_opts kopts;
    ncmp_err err;

    topics[n++] = cfg->registration_response_topic;
    topics[n++] = cfg->lcm_topic;
    topics[n++] = cfg->trust_inventory_events_topic;
    if (*cfg->data_request_topic) {
        topics[n++] = cfg->data_request_topic;
        snprintf(data_dlq, sizeof(data_dlq), "%s-dlq", cfg->data_request_topic);
        topics[n++] = data_dlq;
    }
    for (size_t i = 0; i < NROLES; i++) {
        ncmp_stage_role role;
        const char *role_topics[4];
        all_roles[i].init(&role, cfg, role_topics);
        for (size_t t = 0; t < role.ntopics && t < 1; t++) {
            topics[n++] = role.topics[t];
            snprintf(dlq[i], sizeof(dlq[i]), "%s-dlq", role.topics[t]);
            topics[n++] = dlq[i];
        }
    }
    for (size_t i = 0; i < NFORWARD; i++)
        nfwd += forward_topics(cfg, forward_roles[i], fwd + nfwd, 3 * NFORWARD - nfwd);
    for (size_t i = 0; i < nfwd; i++)
        topics[n++] = fwd[i];
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

static void *shutdown_watchdog(void *arg)
{
    const ncmp_config *cfg = arg;
    ncmp_sleep_ms(cfg->shutdown_timeout_s * 1000L);
    log_error("main", "graceful stop took longer than %d s; exiting", cfg->shutdown_timeout_s);
    _exit(EXIT_FATAL);
    return NULL;
}

static int cmd_run(const ncmp_config *cfg)
{
    ncmp_producer *producer = NULL;
    ncmp_kafka_opts kopts;
    ncmp_stage *stages[NROLES] = {0};
    ncmp_stage_role roles[NROLES];
    const char *role_topics[NROLES][4];
    lcm_relay *relay = NULL;
    void *modsync_shared = NULL;
    modsync_sweep *sweep = NULL;
    rest *api = NULL;
    trust_watchdog *trust_wd = NULL;
    forward *forwarders[NFORWARD] = {0};
    ncmp_err err;
    int rc = 0;
    int nstarted = 0;
    pthread_t watchdog;

    memset(roles, 0, sizeof(roles));
    if (cfg->db_migrate_on_start && roles_need_db(cfg->roles)) {
        rc = cmd_migrate(cfg);
        if (rc != 0 || ncmp_stopping)
            return rc;
    }
    ncmp_kafka_opts_from_config(&kopts, cfg);
    if (ncmp_producer_new(&producer, &kopts, NCMP_PRODUCER_DEFAULT, "ncmpd", &err) != 0) {
        log_error("main", "%s", err.msg);
        return EXIT_FATAL;
    }
    for (size_t i = 0; i < NROLES; i++) {
        if (!role_wanted(cfg->roles, all_roles[i].name))
            continue;
        all_roles[i].init(&roles[i], cfg, role_topics[i]);
        if (strcmp(all_roles[i].name, "module-sync") == 0) {
            if (modsync_shared_new(&modsync_shared, cfg, &err) != 0 ||
                modsync_sweep_start(&sweep, cfg, &err) != 0) {
                log_error("main", "%s", err.msg);
                rc = EXIT_FATAL;
                ncmp_signal_request_stop();
                break;
            }
            roles[i].arg = modsync_shared;
        }
        if (strcmp(all_roles[i].name, "trust") == 0 &&
            trust_watchdog_start(&trust_wd, cfg, &err) != 0) {
            log_error("main", "%s", err.msg);
            rc = EXIT_FATAL;
            ncmp_signal_request_stop();
            break;
        }
        if (ncmp_stage_start(&stages[i], cfg, &roles[i], producer, &err) != 0) {
            log_error("main", "%s", err.msg);
            rc = EXIT_FATAL;
            ncmp_signal_request_stop();
            break;
        }
        nstarted++;
    }
    if (!ncmp_stopping && role_wanted(cfg->roles, RELAY_ROLE)) {
        if (lcm_relay_start(&relay, cfg, &err) != 0) {
            log_error("main", "%s", err.msg);
            rc = EXIT_FATAL;
            ncmp_signal_request_stop();
        } else {
            nstarted++;
        }
    }
    if (!ncmp_stopping && role_wanted(cfg->roles, REST_ROLE)) {
        if (rest_start(&api, cfg, &err) != 0) {
            log_error("main", "%s", err.msg);
            rc = EXIT_FATAL;
            ncmp_signal_request_stop();
        } else {
            nstarted++;
        }
    }
    for (size_t i = 0; i < NFORWARD && !ncmp_stopping; i++) {
        if (!role_wanted(cfg->roles, forward_roles[i]))
            continue;
        if (forward_start(&forwarders[i], cfg, forward_roles[i], &err) != 0) {
            log_error("main", "%s", err.msg);
            rc = EXIT_FATAL;
            ncmp_signal_request_stop();
            break;
        }
        nstarted++;
    }
    log_info("main", "ncmpd %s running (%d roles); stop with SIGTERM", NCMPD_VERSION, nstarted);

    while (!ncmp_stopping)
        ncmp_sleep_ms(100);
    log_info("main", "stopping: finishing the batches in flight");
    pthread_create(&watchdog, NULL, shutdown_watchdog, (void *)cfg);
    pthread_detach(watchdog);

    /* the REST API first: no new requests while the workers finish */
    rest_stop(api);

    for (size_t i = 0; i < NROLES; i++) {
        if (!stages[i])
            continue;
        if (ncmp_stage_join(stages[i], &err) != 0) {
            log_error("main", "role %s failed: %s", all_roles[i].name, err.msg);
            rc = EXIT_FATAL;
        }
        ncmp_stage_destroy(stages[i]);
    }
    if (sweep) {
        if (modsync_sweep_join(sweep, &err) != 0) {
            log_error("main", "module-sync sweep failed: %s", err.msg);
            rc = EXIT_FATAL;
        }
        modsync_sweep_destroy(sweep);
    }
    modsync_shared_destroy(modsync_shared);
    if (trust_wd) {
        if (trust_watchdog_join(trust_wd, &err) != 0) {
            log_error("main", "trust watchdog failed: %s", err.msg);
            rc = EXIT_FATAL;
        }
        trust_watchdog_destroy(trust_wd);
    }
    for (size_t i = 0; i < NFORWARD; i++) {
        if (!forwarders[i])
            continue;
        if (forward_join(forwarders[i], &err) != 0) {
            log_error("main", "role %s failed: %s", forward_roles[i], err.msg);
            rc = EXIT_FATAL;
        }
        forward_destroy(forwarders[i]);
    }
    /* the relay last: it publishes what the stages committed */
    if (relay) {
        if (lcm_relay_join(relay, &err) != 0) {
            log_error("main", "lifecycle relay failed: %s", err.msg);
            rc = EXIT_FATAL;
        }
        lcm_relay_destroy(relay);
    }
    ncmp_producer_destroy(producer);
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
    if (ncmp_fault_setup(cfg->debug_fault, &err) != 0 || roles_check(cfg->roles, &err) != 0) {
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
