/*
 * ncmp_config: the one option table of ncmpd.
 *
 * The table drives parsing, validation, `--help`, `--dump-config` (secrets
 * redacted) and docs/configuration.md (`ncmpd config-doc` prints it; a test
 * compares). Sources, later ones winning:
 *     defaults < config file < NCMP_* environment < command-line flags.
 * An option `a.b-c` is `a.b-c = v` in the file, NCMP_A_B_C in the
 * environment and `--a.b-c=v` on the command line.
 *
 * Keys under `kafka.` that are not options of ours go straight to
 * librdkafka (like kcat's -X): `kafka.security.protocol=SSL` in the file,
 * NCMP_KAFKA_SECURITY_PROTOCOL in the environment (underscores become
 * dots), or `--kafka.security.protocol=SSL`.
 *
 * After loading, the config is read-only and may be shared by threads.
 */
#ifndef NCMP_CONFIG_H
#define NCMP_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "ncmp_err.h"
#include "ncmp_kv.h"

typedef struct ncmp_config {
    /* database */
    char *db_url;
    char *db_password;
    int db_connect_timeout_s;
    int db_migrate_on_start;
    /* kafka */
    char *kafka_bootstrap_servers;
    char *kafka_group_id;
    char *kafka_instance_id;
    int kafka_topic_partitions;
    int kafka_max_message_bytes;
    /* the service */
    char *roles;
    int shutdown_timeout_s;
    int memory_trim_interval_s;
    /* logging */
    char *log_level;
    char *log_format;
    /* ingest role: the platform's first vertical slice */
    char *ingest_topic;
    int ingest_workers;
    int ingest_batch_size;
    int ingest_batch_wait_ms;
    /* registration role */
    char *registration_topic;
    char *registration_response_topic;
    int registration_workers;
    int registration_batch_size;
    int registration_batch_wait_ms;
    char *dmi_allowed_url_pattern;
    /* DMI HTTP client */
    char *dmi_auth_username;
    char *dmi_auth_password;
    int dmi_connect_timeout_ms;
    int dmi_response_timeout_ms;
    int dmi_max_connections_per_host;
    int dmi_max_connections;
    int dmi_max_in_flight_per_plugin;
    int dmi_data_threads;
    int dmi_max_response_bytes;
    /* module-sync role */
    char *module_sync_topic;
    int module_sync_workers;
    int module_sync_batch_size;
    int module_sync_batch_wait_ms;
    int module_sync_retry_initial_ms;
    int module_sync_retry_max_ms;
    int module_sync_sweep_interval_ms;
    int module_sync_advised_grace_ms;
    int module_sync_cleanup_interval_s;
    /* lifecycle events */
    char *lcm_topic;
    int lcm_java_serialized_headers;
    char *lcm_event_schema_version;
    int lcm_relay_batch_size;
    int cps_data_updated_events;
    int cps_delta_notification;
    char *cps_data_updated_topic;
    int cps_relay_batch_size;
    int cps_relay_linger_ms;
    int cps_split_parse_bytes;
    int cps_delta_memory_rows;
    /* HTTP server and the rest role */
    char *http_host;
    int http_port;
    int http_threads;
    int http_max_in_flight;
    int http_worker_threads;
    int http_max_queued;
    int http_max_queue_wait_ms;
    int http_retry_after_s;
    int http_max_body_bytes;
    char *http_auth_username;
    char *http_auth_password;
    char *http_auth_mode;
    char *http_jwt_jwks_file;
    char *http_jwt_jwks_url;
    int http_jwt_jwks_refresh_s;
    char *http_jwt_hs256_secret;
    char *http_jwt_issuer;
    char *http_jwt_audience;
    int http_jwt_clock_skew_s;
    int rest_db_connections;
    int rest_registration_timeout_ms;
    int rest_query_timeout_ms;
    int rest_search_index;
    /* data access (workers/rest/data.h), in the rest role */
    char *data_request_topic;
    int data_async_enabled;
    /* ProvMnS and the policy executor (workers/rest/provmns.h, policy.h) */
    int provmns_max_patch_operations;
    /* data jobs (workers/rest/datajob.h) */
    int datajob_max_body_bytes;
    char *datajob_request_topic;
    char *datajob_response_topic;
    int policy_executor_enabled;
    char *policy_executor_url;
    char *policy_executor_default_decision;
    int policy_executor_timeout_ms;
    /* trust levels */
    char *trust_heartbeat_topic;
    char *trust_inventory_events_topic;
    int trust_workers;
    int trust_batch_size;
    int trust_batch_wait_ms;
    int trust_dmi_check_interval_ms;
    int trust_dmi_check_timeout_ms;
    /* forwarders (workers/forward/forward.h) */
    char *avc_forward_input_topic;
    char *avc_forward_output_topic;
    int avc_forward_workers;
    int avc_forward_batch_size;
    int avc_forward_batch_wait_ms;
    char *async_forward_input_topic;
    int async_forward_workers;
    int async_forward_batch_size;
    int async_forward_batch_wait_ms;
    /* the AVC events applied to the operational cache (workers/avc/) */
    int avc_apply_workers;
    int avc_apply_batch_size;
    int avc_apply_batch_wait_ms;
    /* data sync (workers/datasync/datasync.h) */
    int data_sync_max_in_flight;
    int data_sync_workers;
    int data_sync_batch_size;
    int data_sync_batch_wait_ms;
    int data_sync_retry_initial_ms;
    int data_sync_retry_max_ms;
    int data_sync_sweep_interval_ms;
    int data_sync_lease_ms;
    /* testing */
    char *debug_fault;

    /* kafka.* pass-through properties, in the order they were set */
    ncmp_kv *kafka_props;
    size_t kafka_props_len;
} ncmp_config;

typedef enum ncmp_opt_type {
    NCMP_OPT_STRING,
    NCMP_OPT_INT,
    NCMP_OPT_BOOL,
} ncmp_opt_type;

typedef struct ncmp_option {
    const char *name;
    ncmp_opt_type type;
    const char *def;     /* default, as text */
    const char *choices; /* "a|b|c" for an enumeration, or NULL */
    long min, max;       /* bounds of an INT */
    int secret;          /* redacted in dumps, never logged */
    size_t offset;       /* field in ncmp_config */
    const char *help;
} ncmp_option;

/* The table, terminated by an entry with name NULL. */
extern const ncmp_option ncmp_options[];

/* What the command line asked for besides options. */
typedef struct ncmp_cli {
    const char *command; /* first positional argument, or NULL */
    char **args;         /* further positional arguments (borrowed from argv) */
    int nargs;
    int help;
    int version;
    int dump_config;
} ncmp_cli;

/* Build a config from defaults, the file named by --config / NCMP_CONFIG,
 * the environment `envp` (NULL-terminated "K=V" strings; pass `environ`)
 * and argv. On success *cfg is owned by the caller (ncmp_config_destroy).
 * `cli` may be NULL when no positional arguments are expected. */
int ncmp_config_load(ncmp_config **cfg, int argc, char **argv, char **envp, ncmp_cli *cli,
                     ncmp_err *err);

/* Set one option by name from text (validated). */
int ncmp_config_set(ncmp_config *cfg, const char *name, const char *value, ncmp_err *err);

/* A config holding only the defaults. */
ncmp_config *ncmp_config_new_defaults(void);

void ncmp_config_destroy(ncmp_config *cfg);

/* Environment variable name of an option, e.g. NCMP_DB_URL. */
void ncmp_config_env_name(const char *name, char *out, size_t outlen);

/* Effective configuration, one `name = value` per line, secrets redacted. */
void ncmp_config_dump(const ncmp_config *cfg, FILE *out);

/* `--help` text of the options. */
void ncmp_config_help(FILE *out);

/* docs/configuration.md. */
void ncmp_config_doc_markdown(FILE *out);

/* True for pass-through keys that carry secrets (passwords, keys). */
int ncmp_config_key_is_secret(const char *key);

#endif
