/* Unit tests of lib/ncmp_config.c: the option table, the four sources and
 * their order, validation, the dump, the help and the generated docs.
 *
 * The environment is always an explicit array: the tests never read or
 * change the real one. Config files are the test_ncmp_config_*.conf files
 * next to this one. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_config.h"
#include "unit_leak.h"

TestSuite(ncmp_config, .fini = unit_leak_check);

#define GOOD_CONF     NCMP_UNIT_DATA_DIR "/test_ncmp_config_good.conf"
#define SYNTAX_CONF   NCMP_UNIT_DATA_DIR "/test_ncmp_config_syntax.conf"
#define BADVALUE_CONF NCMP_UNIT_DATA_DIR "/test_ncmp_config_badvalue.conf"
#define MISSING_CONF  NCMP_UNIT_DATA_DIR "/no-such-file.conf"

/* Number of entries of a NULL-terminated argv array. */
#define ARGC(argv) ((int)(sizeof(argv) / sizeof((argv)[0])) - 1)

static char *no_env[] = {NULL};

/* Load argv/envp that must be accepted; the config is the caller's. */
static ncmp_config *load_ok(int argc, char **argv, char **envp, ncmp_cli *cli)
{
    ncmp_config *cfg = NULL;
    ncmp_err err = {0};

    if (ncmp_config_load(&cfg, argc, argv, envp, cli, &err) != 0)
        cr_assert_fail("ncmp_config_load failed: %s", err.msg);
    cr_assert_not_null(cfg);
    return cfg;
}

/* Load argv/envp that must be refused; returns the error. */
static ncmp_err load_fail(int argc, char **argv, char **envp, ncmp_cli *cli)
{
    ncmp_config *cfg = NULL;
    ncmp_err err = {0};

    cr_assert_eq(ncmp_config_load(&cfg, argc, argv, envp, cli, &err), -1, "load was accepted");
    cr_assert_null(cfg, "no config on failure");
    cr_assert_eq(err.cls, NCMP_ERR_FATAL, "class %s: %s", ncmp_err_class_name(err.cls), err.msg);
    return err;
}

static const char *kafka_prop(const ncmp_config *cfg, const char *key)
{
    for (size_t i = 0; i < cfg->kafka_props_len; i++)
        if (strcmp(cfg->kafka_props[i].key, key) == 0)
            return cfg->kafka_props[i].value;
    return NULL;
}

/* Reads a whole text file into a malloc'ed string, or NULL. */
static char *read_text_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0;
    FILE *mem;
    char chunk[4096];
    size_t n;

    if (!f)
        return NULL;
    mem = open_memstream(&text, &len);
    cr_assert_not_null(mem);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fwrite(chunk, 1, n, mem);
    fclose(f);
    fclose(mem);
    return text;
}

/* --- defaults and the table ---------------------------------------------- */

Test(ncmp_config, defaults)
{
    ncmp_config *cfg = ncmp_config_new_defaults();

    cr_assert_str_eq(cfg->db_url, "postgresql://ncmpd@127.0.0.1:5432/ncmpd");
    cr_assert_str_eq(cfg->db_password, "");
    cr_assert_eq(cfg->db_connect_timeout_s, 10);
    cr_assert_eq(cfg->db_migrate_on_start, 1);
    cr_assert_str_eq(cfg->kafka_bootstrap_servers, "127.0.0.1:9092");
    cr_assert_str_eq(cfg->kafka_group_id, "ncmp-group");
    cr_assert_eq(cfg->kafka_topic_partitions, 6);
    cr_assert_eq(cfg->kafka_max_message_bytes, 16777216);
    cr_assert_str_eq(cfg->roles, "all");
    cr_assert_eq(cfg->shutdown_timeout_s, 30);
    cr_assert_str_eq(cfg->log_level, "info");
    cr_assert_str_eq(cfg->log_format, "text");
    cr_assert_str_eq(cfg->ingest_topic, "ncmp-ingest");
    cr_assert_eq(cfg->ingest_workers, 2);
    cr_assert_eq(cfg->ingest_batch_size, 1000);
    cr_assert_eq(cfg->ingest_batch_wait_ms, 50);
    cr_assert_str_eq(cfg->debug_fault, "");
    cr_assert_eq(cfg->kafka_props_len, 0);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, load_without_sources_gives_defaults)
{
    char *argv[] = {"ncmpd", NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, NULL);

    cr_assert_eq(cfg->ingest_batch_size, 1000);
    cr_assert_str_eq(cfg->log_level, "info");
    cr_assert_str_eq(cfg->kafka_bootstrap_servers, "127.0.0.1:9092");
    ncmp_config_destroy(cfg);
}

/* --log-format=json means log.format, --http-port 80 http.port. */
Test(ncmp_config, flags_may_write_the_section_dot_as_a_dash)
{
    char *argv[] = {"ncmpd", "--log-format=json",       "--http-port",
                    "8080",  "--module-sync-workers=3", NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, NULL);

    cr_assert_str_eq(cfg->log_format, "json");
    cr_assert_eq(cfg->http_port, 8080);
    cr_assert_eq(cfg->module_sync_workers, 3);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, load_accepts_null_envp)
{
    char *argv[] = {"ncmpd", "--ingest.workers=5", NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, NULL, NULL);

    cr_assert_eq(cfg->ingest_workers, 5);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, every_option_is_documented_and_its_default_valid)
{
    ncmp_config *cfg;
    size_t count = 0;

    /* aborts (and so fails this test) on a default that does not validate */
    cfg = ncmp_config_new_defaults();
    for (const ncmp_option *o = ncmp_options; o->name; o++, count++) {
        ncmp_err err = {0};
        cr_expect_neq(o->name[0], '\0', "option %zu has an empty name", count);
        cr_expect(o->help && o->help[0], "option %s has no help text", o->name);
        cr_assert_not_null(o->def, "option %s has no default", o->name);
        cr_expect_eq(ncmp_config_set(cfg, o->name, o->def, &err), 0,
                     "default of %s does not validate: %s", o->name, err.msg);
        if (o->type == NCMP_OPT_INT)
            cr_expect_leq(o->min, o->max, "option %s: empty range", o->name);
        if (o->secret)
            cr_expect_eq(o->type, NCMP_OPT_STRING, "secret %s is not a string", o->name);
    }
    cr_assert_gt(count, 10, "the option table looks truncated");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, option_names_and_env_names_are_unique)
{
    for (const ncmp_option *a = ncmp_options; a->name; a++) {
        char env_a[256];
        ncmp_config_env_name(a->name, env_a, sizeof(env_a));
        for (const ncmp_option *b = a + 1; b->name; b++) {
            char env_b[256];
            ncmp_config_env_name(b->name, env_b, sizeof(env_b));
            cr_expect_str_neq(a->name, b->name, "option %s twice", a->name);
            cr_expect_str_neq(env_a, env_b, "%s and %s share %s", a->name, b->name, env_a);
        }
    }
}

/* --- environment names --------------------------------------------------- */

Test(ncmp_config, env_name_mapping)
{
    char env[64];

    ncmp_config_env_name("db.connect-timeout-s", env, sizeof(env));
    cr_assert_str_eq(env, "NCMP_DB_CONNECT_TIMEOUT_S");
    ncmp_config_env_name("kafka.bootstrap.servers", env, sizeof(env));
    cr_assert_str_eq(env, "NCMP_KAFKA_BOOTSTRAP_SERVERS");
    ncmp_config_env_name("roles", env, sizeof(env));
    cr_assert_str_eq(env, "NCMP_ROLES");
}

Test(ncmp_config, env_name_is_cut_to_the_buffer)
{
    char env[8];

    ncmp_config_env_name("db.connect-timeout-s", env, sizeof(env));
    cr_assert_str_eq(env, "NCMP_DB");
}

/* --- the four sources ---------------------------------------------------- */

Test(ncmp_config, file_overrides_defaults)
{
    char *argv[] = {"ncmpd", "--config", GOOD_CONF, NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, NULL);

    cr_assert_eq(cfg->ingest_batch_size, 10);
    cr_assert_eq(cfg->ingest_workers, 3);
    cr_assert_str_eq(cfg->log_level, "debug");
    cr_assert_str_eq(cfg->ingest_topic, "from-file", "keys and values are trimmed");
    cr_assert_eq(cfg->db_migrate_on_start, 0);
    cr_assert_eq(cfg->shutdown_timeout_s, 30, "untouched options keep their default");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, file_named_by_every_spelling)
{
    char *with_eq[] = {"ncmpd", "--config=" GOOD_CONF, NULL};
    char *with_space[] = {"ncmpd", "--config", GOOD_CONF, NULL};
    char *short_flag[] = {"ncmpd", "-c", GOOD_CONF, NULL};
    char *plain[] = {"ncmpd", NULL};
    char *env[] = {"NCMP_CONFIG=" GOOD_CONF, NULL};
    ncmp_config *cfg;

    cfg = load_ok(ARGC(with_eq), with_eq, no_env, NULL);
    cr_expect_eq(cfg->ingest_batch_size, 10, "--config=FILE");
    ncmp_config_destroy(cfg);
    cfg = load_ok(ARGC(with_space), with_space, no_env, NULL);
    cr_expect_eq(cfg->ingest_batch_size, 10, "--config FILE");
    ncmp_config_destroy(cfg);
    cfg = load_ok(ARGC(short_flag), short_flag, no_env, NULL);
    cr_expect_eq(cfg->ingest_batch_size, 10, "-c FILE");
    ncmp_config_destroy(cfg);
    cfg = load_ok(ARGC(plain), plain, env, NULL);
    cr_expect_eq(cfg->ingest_batch_size, 10, "NCMP_CONFIG");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, config_flag_wins_over_config_env)
{
    /* the file in the environment does not exist: it must not be read */
    char *argv[] = {"ncmpd", "-c", GOOD_CONF, NULL};
    char *env[] = {"NCMP_CONFIG=" MISSING_CONF, NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, env, NULL);

    cr_assert_eq(cfg->ingest_batch_size, 10);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, missing_file_is_fatal)
{
    char *argv[] = {"ncmpd", "--config", MISSING_CONF, NULL};
    ncmp_err err = load_fail(ARGC(argv), argv, no_env, NULL);

    cr_assert(strstr(err.msg, "cannot read config file"), "%s", err.msg);
    cr_assert(strstr(err.msg, MISSING_CONF), "%s", err.msg);
}

Test(ncmp_config, file_syntax_error_names_file_and_line)
{
    char *argv[] = {"ncmpd", "--config", SYNTAX_CONF, NULL};
    ncmp_err err = load_fail(ARGC(argv), argv, no_env, NULL);

    cr_assert(strstr(err.msg, SYNTAX_CONF ":3:"), "%s", err.msg);
    cr_assert(strstr(err.msg, "key = value"), "%s", err.msg);
}

Test(ncmp_config, file_bad_value_names_file_line_and_option)
{
    char *argv[] = {"ncmpd", "--config", BADVALUE_CONF, NULL};
    ncmp_err err = load_fail(ARGC(argv), argv, no_env, NULL);

    cr_assert(strstr(err.msg, BADVALUE_CONF ":2"), "%s", err.msg);
    cr_assert(strstr(err.msg, "ingest.workers"), "%s", err.msg);
    cr_assert(strstr(err.msg, "not an integer"), "%s", err.msg);
}

Test(ncmp_config, environment_overrides_file)
{
    char *argv[] = {"ncmpd", "--config", GOOD_CONF, NULL};
    char *env[] = {"PATH=/usr/bin", "NCMP_INGEST_WORKERS=4", "NCMP_INGEST_TOPIC=from-env",
                   "NCMP_DB_MIGRATE_ON_START=yes", NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, env, NULL);

    cr_assert_eq(cfg->ingest_batch_size, 10, "from the file");
    cr_assert_eq(cfg->ingest_workers, 4, "environment over file");
    cr_assert_str_eq(cfg->ingest_topic, "from-env");
    cr_assert_eq(cfg->db_migrate_on_start, 1);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, flags_override_environment_and_file)
{
    char *argv[] = {"ncmpd",     "--config",           GOOD_CONF, "--ingest.topic",
                    "from-flag", "--ingest.workers=7", NULL};
    char *env[] = {"NCMP_INGEST_WORKERS=4", "NCMP_INGEST_TOPIC=from-env", "NCMP_LOG_FORMAT=json",
                   NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, env, NULL);

    cr_assert_str_eq(cfg->ingest_topic, "from-flag", "--key value");
    cr_assert_eq(cfg->ingest_workers, 7, "--key=value");
    cr_assert_str_eq(cfg->log_format, "json", "environment kept where no flag");
    cr_assert_str_eq(cfg->log_level, "debug", "file kept where nothing later");
    cr_assert_eq(cfg->ingest_batch_size, 10);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, env_name_must_match_exactly)
{
    char *argv[] = {"ncmpd", NULL};
    char *env[] = {"NCMP_DB_URLX=postgresql://wrong", "XNCMP_DB_URL=postgresql://wrong",
                   "NCMP_DB_URL", NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, env, NULL);

    cr_assert_str_eq(cfg->db_url, "postgresql://ncmpd@127.0.0.1:5432/ncmpd");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, bad_environment_value_names_the_variable)
{
    char *argv[] = {"ncmpd", NULL};
    char *env[] = {"NCMP_INGEST_WORKERS=abc", NULL};
    ncmp_err err = load_fail(ARGC(argv), argv, env, NULL);

    cr_assert(strstr(err.msg, "NCMP_INGEST_WORKERS"), "%s", err.msg);
    cr_assert(strstr(err.msg, "not an integer"), "%s", err.msg);
}

Test(ncmp_config, bool_flag_alone_is_true)
{
    char *argv[] = {"ncmpd", "--config", GOOD_CONF, "--db.migrate-on-start", NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, NULL);

    cr_assert_eq(cfg->db_migrate_on_start, 1, "the file said off, the flag alone says on");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, bool_flag_with_value)
{
    char *argv[] = {"ncmpd", "--db.migrate-on-start=false", NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, NULL);

    cr_assert_eq(cfg->db_migrate_on_start, 0);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, flag_without_value_is_fatal)
{
    char *argv[] = {"ncmpd", "--ingest.topic", NULL};
    ncmp_err err = load_fail(ARGC(argv), argv, no_env, NULL);

    cr_assert(strstr(err.msg, "--ingest.topic needs a value"), "%s", err.msg);
}

/* Regression: `-c` as the last argument is skipped
 * silently, so the service starts without the file it was asked to read
 * (`--config` alone is refused; lib/ncmp_config.c, load_flags). */
Test(ncmp_config, short_config_flag_without_value_is_fatal)
{
    char *argv[] = {"ncmpd", "-c", NULL};
    ncmp_err err = load_fail(ARGC(argv), argv, no_env, NULL);

    cr_assert(strstr(err.msg, "needs a value"), "%s", err.msg);
}

Test(ncmp_config, long_config_flag_without_value_is_fatal)
{
    char *argv[] = {"ncmpd", "--config", NULL};
    ncmp_err err = load_fail(ARGC(argv), argv, no_env, NULL);

    cr_assert(strstr(err.msg, "--config needs a value"), "%s", err.msg);
}

/* --- validation ---------------------------------------------------------- */

Test(ncmp_config, int_range)
{
    static const struct {
        const char *value;
        int ok;
        int expect;
    } cases[] = {{"1", 1, 1},       {"1000000", 1, 1000000},        {"0", 0, 0},     {"-5", 0, 0},
                 {"1000001", 0, 0}, {"99999999999999999999", 0, 0}, {"+250", 1, 250}};
    ncmp_config *cfg = ncmp_config_new_defaults();

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ncmp_err err = {0};
        int rc = ncmp_config_set(cfg, "ingest.batch-size", cases[i].value, &err);
        if (cases[i].ok) {
            cr_expect_eq(rc, 0, "'%s' refused: %s", cases[i].value, err.msg);
            cr_expect_eq(cfg->ingest_batch_size, cases[i].expect, "'%s'", cases[i].value);
        } else {
            cr_expect_eq(rc, -1, "'%s' accepted", cases[i].value);
            cr_expect_eq(err.cls, NCMP_ERR_FATAL);
            cr_expect(strstr(err.msg, "ingest.batch-size"), "%s", err.msg);
        }
    }
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, int_out_of_range_message_gives_bounds)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_err err = {0};

    cr_assert_eq(ncmp_config_set(cfg, "ingest.batch-size", "0", &err), -1);
    cr_assert(strstr(err.msg, "out of range [1, 1000000]"), "%s", err.msg);
    cr_assert_eq(cfg->ingest_batch_size, 1000, "a refused value changes nothing");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, int_not_an_integer)
{
    static const char *const bad[] = {"", "abc", "12x", "1.5", "0x10", "10 "};
    ncmp_config *cfg = ncmp_config_new_defaults();

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ncmp_err err = {0};
        cr_expect_eq(ncmp_config_set(cfg, "db.connect-timeout-s", bad[i], &err), -1, "'%s'",
                     bad[i]);
        cr_expect(strstr(err.msg, "is not an integer"), "'%s': %s", bad[i], err.msg);
        cr_expect_eq(err.cls, NCMP_ERR_FATAL);
    }
    cr_assert_eq(cfg->db_connect_timeout_s, 10);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, enum_choices)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_err err = {0};

    cr_assert_eq(ncmp_config_set(cfg, "log.format", "json", &err), 0, "%s", err.msg);
    cr_assert_str_eq(cfg->log_format, "json");
    cr_assert_eq(ncmp_config_set(cfg, "log.format", "text", &err), 0, "%s", err.msg);
    cr_assert_str_eq(cfg->log_format, "text");
    /* neither another word, nor a prefix, nor an extension of a choice */
    static const char *const bad[] = {"xml", "tex", "texts", "JSON", "", "text|json"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_eq(ncmp_config_set(cfg, "log.format", bad[i], &err), -1, "'%s' accepted", bad[i]);
        cr_expect(strstr(err.msg, "text|json"), "%s", err.msg);
    }
    cr_assert_str_eq(cfg->log_format, "text");
    cr_assert_eq(ncmp_config_set(cfg, "log.level", "trace", &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_config_set(cfg, "log.level", "verbose", &err), -1);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, bool_parsing)
{
    static const struct {
        const char *value;
        int expect;
    } cases[] = {{"true", 1},  {"TRUE", 1},  {"yes", 1}, {"on", 1},  {"1", 1},
                 {"false", 0}, {"False", 0}, {"no", 0},  {"off", 0}, {"0", 0}};
    static const char *const bad[] = {"", "maybe", "2", "y", "truee"};
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_err err = {0};

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cfg->db_migrate_on_start = !cases[i].expect;
        cr_expect_eq(ncmp_config_set(cfg, "db.migrate-on-start", cases[i].value, &err), 0,
                     "'%s': %s", cases[i].value, err.msg);
        cr_expect_eq(cfg->db_migrate_on_start, cases[i].expect, "'%s'", cases[i].value);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_eq(ncmp_config_set(cfg, "db.migrate-on-start", bad[i], &err), -1, "'%s'", bad[i]);
        cr_expect(strstr(err.msg, "not a boolean"), "%s", err.msg);
    }
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, unknown_option)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_err err = {0};

    cr_assert_eq(ncmp_config_set(cfg, "no.such-option", "1", &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_FATAL);
    cr_assert_str_eq(err.msg, "unknown option 'no.such-option' (see --help)");
    /* `kafka.` alone names no property */
    cr_assert_eq(ncmp_config_set(cfg, "kafka.", "1", &err), -1);
    cr_assert(strstr(err.msg, "unknown option 'kafka.'"), "%s", err.msg);
    cr_assert_eq(cfg->kafka_props_len, 0);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, unknown_flag)
{
    char *long_flag[] = {"ncmpd", "--no.such-option=1", NULL};
    char *short_flag[] = {"ncmpd", "-x", NULL};
    ncmp_err err;

    err = load_fail(ARGC(long_flag), long_flag, no_env, NULL);
    cr_assert(strstr(err.msg, "unknown option 'no.such-option'"), "%s", err.msg);
    err = load_fail(ARGC(short_flag), short_flag, no_env, NULL);
    cr_assert(strstr(err.msg, "unknown flag '-x'"), "%s", err.msg);
}

/* --- kafka.* pass-through ------------------------------------------------ */

Test(ncmp_config, kafka_passthrough_from_file)
{
    char *argv[] = {"ncmpd", "-c", GOOD_CONF, NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, NULL);

    cr_assert_eq(cfg->kafka_props_len, 2);
    /* in the order they were set */
    cr_assert_str_eq(cfg->kafka_props[0].key, "security.protocol");
    cr_assert_str_eq(cfg->kafka_props[0].value, "SSL");
    cr_assert_str_eq(cfg->kafka_props[1].key, "client.id");
    cr_assert_str_eq(cfg->kafka_props[1].value, "from-file");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, kafka_passthrough_from_env)
{
    char *argv[] = {"ncmpd", NULL};
    char *env[] = {"NCMP_KAFKA_SECURITY_PROTOCOL=SASL_SSL", "NCMP_KAFKA_SASL_MECHANISMS=PLAIN",
                   NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, env, NULL);

    cr_assert_eq(cfg->kafka_props_len, 2);
    cr_assert_str_eq(kafka_prop(cfg, "security.protocol"), "SASL_SSL");
    cr_assert_str_eq(kafka_prop(cfg, "sasl.mechanisms"), "PLAIN");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, kafka_env_of_own_options_is_no_passthrough)
{
    char *argv[] = {"ncmpd", NULL};
    char *env[] = {"NCMP_KAFKA_BOOTSTRAP_SERVERS=broker:9093", "NCMP_KAFKA_MAX_MESSAGE_BYTES=2048",
                   "NCMP_KAFKA_GROUP_ID=g", NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, env, NULL);

    cr_assert_str_eq(cfg->kafka_bootstrap_servers, "broker:9093");
    cr_assert_eq(cfg->kafka_max_message_bytes, 2048);
    cr_assert_str_eq(cfg->kafka_group_id, "g");
    cr_assert_eq(cfg->kafka_props_len, 0, "first pass-through key: %s",
                 cfg->kafka_props_len ? cfg->kafka_props[0].key : "");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, kafka_passthrough_precedence)
{
    char *argv[] = {"ncmpd",        "-c",  GOOD_CONF, "--kafka.client.id=from-flag",
                    "--kafka.acks", "all", NULL};
    char *env[] = {"NCMP_KAFKA_SECURITY_PROTOCOL=SASL_SSL", "NCMP_KAFKA_CLIENT_ID=from-env", NULL};
    ncmp_config *cfg = load_ok(ARGC(argv), argv, env, NULL);

    /* each key once, the last source winning */
    cr_assert_eq(cfg->kafka_props_len, 3);
    cr_assert_str_eq(kafka_prop(cfg, "security.protocol"), "SASL_SSL");
    cr_assert_str_eq(kafka_prop(cfg, "client.id"), "from-flag");
    cr_assert_str_eq(kafka_prop(cfg, "acks"), "all");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, kafka_own_option_is_no_passthrough)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_err err = {0};

    cr_assert_eq(ncmp_config_set(cfg, "kafka.bootstrap.servers", "b:1", &err), 0);
    cr_assert_str_eq(cfg->kafka_bootstrap_servers, "b:1");
    cr_assert_eq(ncmp_config_set(cfg, "kafka.max-message-bytes", "10", &err), -1,
                 "own options are validated, not passed through");
    cr_assert_eq(cfg->kafka_props_len, 0);
    ncmp_config_destroy(cfg);
}

/* --- dump, help, docs ---------------------------------------------------- */

static char *dump_text(const ncmp_config *cfg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    cr_assert_not_null(out);
    ncmp_config_dump(cfg, out);
    fclose(out);
    return text;
}

Test(ncmp_config, dump_redacts_secrets)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_err err = {0};
    char *text;

    cr_assert_eq(ncmp_config_set(cfg, "db.password", "hunter2", &err), 0);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.sasl.password", "s3cret-sasl", &err), 0);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.ssl.key.password", "s3cret-key", &err), 0);
    cr_assert_eq(ncmp_config_set(cfg, "kafka.sasl.username", "alice", &err), 0);
    cr_assert_eq(ncmp_config_set(cfg, "http.jwt-hs256-secret", "s3cret-hmac", &err), 0);
    text = dump_text(cfg);
    cr_assert_null(strstr(text, "hunter2"), "%s", text);
    cr_assert_null(strstr(text, "s3cret"), "%s", text);
    cr_assert(strstr(text, "db.password = ********\n"), "%s", text);
    cr_assert(strstr(text, "kafka.sasl.password = ********\n"), "%s", text);
    cr_assert(strstr(text, "kafka.ssl.key.password = ********\n"), "%s", text);
    cr_assert(strstr(text, "http.jwt-hs256-secret = ********\n"), "%s", text);
    cr_assert(strstr(text, "kafka.sasl.username = alice\n"), "%s", text);
    free(text);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, dump_lists_every_option_with_its_value)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    char *text = dump_text(cfg);

    cr_assert(strstr(text, "db.url = postgresql://ncmpd@127.0.0.1:5432/ncmpd\n"), "%s", text);
    cr_assert(strstr(text, "ingest.batch-size = 1000\n"), "%s", text);
    cr_assert(strstr(text, "db.migrate-on-start = true\n"), "%s", text);
    cr_assert(strstr(text, "log.level = info\n"), "%s", text);
    /* an empty secret shows that it is empty */
    cr_assert(strstr(text, "db.password = \n"), "%s", text);
    for (const ncmp_option *o = ncmp_options; o->name; o++) {
        char key[128];
        if (strcmp(o->name, "config") == 0)
            continue; /* where the config came from, not part of it */
        snprintf(key, sizeof(key), "\n%s = ", o->name);
        cr_expect(strstr(text, key) || strncmp(text, key + 1, strlen(key + 1)) == 0,
                  "%s missing from the dump", o->name);
    }
    free(text);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, secret_keys)
{
    cr_assert(ncmp_config_key_is_secret("sasl.password"));
    cr_assert(ncmp_config_key_is_secret("ssl.key.password"));
    cr_assert(ncmp_config_key_is_secret("ssl.keystore.password"));
    cr_assert(ncmp_config_key_is_secret("sasl.oauthbearer.client.secret"));
    cr_assert(ncmp_config_key_is_secret("ssl.key.pem"));
    cr_assert_not(ncmp_config_key_is_secret("sasl.username"));
    cr_assert_not(ncmp_config_key_is_secret("security.protocol"));
    cr_assert_not(ncmp_config_key_is_secret("ssl.certificate.pem"));
}

Test(ncmp_config, help_lists_every_option)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    cr_assert_not_null(out);
    ncmp_config_help(out);
    fclose(out);
    for (const ncmp_option *o = ncmp_options; o->name; o++) {
        char flag[128], env[128];
        snprintf(flag, sizeof(flag), "--%s=", o->name);
        ncmp_config_env_name(o->name, env, sizeof(env));
        cr_expect(strstr(text, flag), "%s missing from --help", flag);
        cr_expect(strstr(text, env), "%s missing from --help", env);
        cr_expect(strstr(text, o->help), "help text of %s missing", o->name);
    }
    cr_assert(strstr(text, "--kafka.<property>"), "%s", text);
    free(text);
}

Test(ncmp_config, docs_match_the_option_table)
{
    const char *path = NCMP_SOURCE_DIR "/docs/configuration.md";
    char *expect = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&expect, &len);
    char *actual;

    cr_assert_not_null(out);
    ncmp_config_doc_markdown(out);
    fclose(out);
    actual = read_text_file(path);
    if (!actual) {
        free(expect);
        cr_assert_fail("cannot read %s; create it with `ncmpd config-doc > docs/configuration.md`",
                       path);
    }
    cr_expect_str_eq(actual, expect,
                     "docs/configuration.md is out of date; regenerate it with "
                     "`ncmpd config-doc > docs/configuration.md`");
    free(actual);
    free(expect);
}

Test(ncmp_config, docs_name_every_option)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    cr_assert_not_null(out);
    ncmp_config_doc_markdown(out);
    fclose(out);
    for (const ncmp_option *o = ncmp_options; o->name; o++) {
        char row[128];
        snprintf(row, sizeof(row), "\n| `%s` |", o->name);
        cr_expect(strstr(text, row), "no table row for %s", o->name);
    }
    free(text);
}

/* Regression: a BOOL option's type is printed as
 * `true|false`, and the bar splits the Markdown table cell, so the row of
 * db.migrate-on-start has one column too many (lib/ncmp_config.c,
 * ncmp_config_doc_markdown). */
Test(ncmp_config, docs_rows_have_five_columns)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    char *save = NULL;

    cr_assert_not_null(out);
    ncmp_config_doc_markdown(out);
    fclose(out);
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int bars = 0;
        if (line[0] != '|')
            continue;
        for (const char *p = line; *p; p++)
            bars += *p == '|' && (p == line || p[-1] != '\\');
        cr_expect_eq(bars, 6, "row with %d cells: %s", bars - 1, line);
    }
    free(text);
}

/* --- the command line besides options ------------------------------------ */

Test(ncmp_config, cli_command_and_args)
{
    char *argv[] = {"ncmpd", "--log.level=debug", "migrate", "a", "b", NULL};
    ncmp_cli cli;
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, &cli);

    cr_assert_str_eq(cli.command, "migrate");
    cr_assert_eq(cli.nargs, 2);
    cr_assert_str_eq(cli.args[0], "a");
    cr_assert_str_eq(cli.args[1], "b");
    cr_assert_eq(cli.help + cli.version + cli.dump_config, 0);
    cr_assert_str_eq(cfg->log_level, "debug");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, cli_without_command)
{
    char *argv[] = {"ncmpd", "--ingest.workers=3", NULL};
    ncmp_cli cli;
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, &cli);

    cr_assert_null(cli.command);
    cr_assert_eq(cli.nargs, 0);
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, cli_option_after_command)
{
    char *argv[] = {"ncmpd", "run", "--ingest.workers=3", NULL};
    ncmp_cli cli;
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, &cli);

    cr_assert_str_eq(cli.command, "run");
    cr_assert_eq(cli.nargs, 0);
    cr_assert_eq(cfg->ingest_workers, 3);
    ncmp_config_destroy(cfg);
}

/* Regression: cli.args is set right after the
 * command, so an option between the command and its first argument
 * becomes args[0] (lib/ncmp_config.c, load_flags). */
Test(ncmp_config, cli_option_between_command_and_args)
{
    char *argv[] = {"ncmpd", "cmd", "--ingest.workers=3", "arg", NULL};
    ncmp_cli cli;
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, &cli);

    cr_assert_str_eq(cli.command, "cmd");
    cr_assert_eq(cli.nargs, 1);
    cr_assert_str_eq(cli.args[0], "arg");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, cli_options_after_arguments_are_refused)
{
    char *argv[] = {"ncmpd", "cmd", "arg", "--ingest.workers=3", NULL};
    ncmp_cli cli;
    ncmp_err err = load_fail(ARGC(argv), argv, no_env, &cli);

    cr_assert(strstr(err.msg, "put options before the arguments of 'cmd'"), "%s", err.msg);
}

Test(ncmp_config, cli_double_dash_ends_options)
{
    char *argv[] = {"ncmpd", "--", "--not-a-flag", NULL};
    ncmp_cli cli;
    ncmp_config *cfg = load_ok(ARGC(argv), argv, no_env, &cli);

    cr_assert_str_eq(cli.command, "--not-a-flag");
    ncmp_config_destroy(cfg);
}

Test(ncmp_config, cli_positional_without_cli_is_refused)
{
    char *argv[] = {"ncmpd", "stray", NULL};
    ncmp_err err = load_fail(ARGC(argv), argv, no_env, NULL);

    cr_assert(strstr(err.msg, "unexpected argument 'stray'"), "%s", err.msg);
}

Test(ncmp_config, cli_flags)
{
    static const struct {
        const char *flag;
        int help, version, dump_config;
    } cases[] = {{"--help", 1, 0, 0},
                 {"-h", 1, 0, 0},
                 {"--version", 0, 1, 0},
                 {"-V", 0, 1, 0},
                 {"--dump-config", 0, 0, 1}};

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *argv[] = {"ncmpd", (char *)cases[i].flag, NULL};
        ncmp_cli cli;
        ncmp_config *cfg;

        /* load clears what a previous use left in cli */
        memset(&cli, 0xff, sizeof(cli));
        cfg = load_ok(ARGC(argv), argv, no_env, &cli);
        cr_expect_eq(cli.help, cases[i].help, "%s", cases[i].flag);
        cr_expect_eq(cli.version, cases[i].version, "%s", cases[i].flag);
        cr_expect_eq(cli.dump_config, cases[i].dump_config, "%s", cases[i].flag);
        cr_expect_null(cli.command, "%s", cases[i].flag);
        ncmp_config_destroy(cfg);
    }
}

Test(ncmp_config, destroy_accepts_null)
{
    ncmp_config_destroy(NULL);
}
