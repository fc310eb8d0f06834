/*
 * dmistub_opts: the command line and environment of ncmp-dmi-stub.
 *
 * One table drives parsing, validation and `--help` (which shows every
 * default and environment variable). Sources, later ones winning:
 *     defaults < environment < command-line flags.
 * Environment variables use the reference stub's names where it has one
 * (MODULE_REFERENCES_DELAY_MS, ..., MODULE_INITIAL_PROCESSING_DELAY_MS,
 * PROVMNS_READ_DELAY_MS, PROVMNS_WRITE_DELAY_MS, NCMP_ASYNC_M2M_TOPIC, KAFKA_BOOTSTRAP_SERVER,
 * SERVER_PORT) and DMI_STUB_* otherwise.
 *
 * After loading, the options are read-only and shared by every thread.
 */
#ifndef DMISTUB_OPTS_H
#define DMISTUB_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "ncmp_err.h"

typedef struct dmistub_opts {
    /* HTTP */
    char *host;
    long port;
    char *port_file;
    long threads;
    long max_body_bytes;
    char *auth; /* "user:password" or "" for none */
    /* delays, milliseconds */
    long module_references_delay_ms;
    long module_resources_delay_ms;
    long read_delay_ms;
    long write_delay_ms;
    long provmns_read_delay_ms;
    long provmns_write_delay_ms;
    long datajob_delay_ms;
    long busy_ms;
    long extra_delay_ms;
    int hang;
    /* the policy executor stub */
    char *policy_decision; /* "allow" or "deny" */
    long policy_delay_ms;
    /* health */
    int health_down;
    /* Kafka, for batch reads and async pass-through */
    char *kafka;
    char *async_topic;
    int async_legacy;  /* pass-through results as DmiAsyncRequestResponseEvents */
    char *kafka_props; /* "key=value" entries separated by '\n' */
    /* fault modes: tags separated by ',' */
    char *bad_yang_tags;
    char *garbage_tags;
    char *error_tags;
    /* a data model and a data tree served per handle (data sync) */
    char *data_model;      /* .zip or directory of .yang files; "" none */
    char *data_tree;       /* JSON file: the tree under data_root */
    char *data_root;       /* "module:container[/list]" */
    char *data_tags;       /* module set tags that get the data model; "" every tag */
    char *data_id_marker;  /* replaced by the handle id in the tree */
    long data_error_reads; /* the first N reads of a data root answer 500 */
    /* logging */
    char *log_level;
    /* AVC events published once at start (dmistub_events.h) */
    char *avc_topic;
    long avc_events;
    char *avc_handles; /* comma-separated handle ids */
    /* not options: what the command line asked for */
    int help;
} dmistub_opts;

/* Build the options from the defaults, `envp` (NULL-terminated "K=V"
 * strings) and argv. On success *out is owned by the caller
 * (dmistub_opts_free). A bad value or unknown flag is FATAL with a
 * message naming it. */
int dmistub_opts_load(dmistub_opts **out, int argc, char **argv, char **envp, ncmp_err *err);

void dmistub_opts_free(dmistub_opts *o);

/* The `--help` text: every flag, its default and its environment name. */
void dmistub_opts_help(FILE *out);

/* Is `tag` one of the entries of the comma-separated `list`? NULL or
 * empty tags are never in a list. */
int dmistub_opts_tag_in(const char *list, const char *tag);

#endif
