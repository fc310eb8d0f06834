/*
 * role: the table of ncmpd's roles, and the services a process shares.
 *
 * A role is one row of one table. Every row has the same contract:
 *
 *   start    start the role's threads with the process's shared services;
 *            returns once it runs (or failed: then nothing is left running,
 *            and the process starts it again after a RETRY error, stops
 *            after any other)
 *   stop     ask it to stop; does not block (NULL: ncmp_stopping is enough)
 *   join     wait until its threads ended; -1 with the fatal error that
 *            ended it, if one did
 *   destroy  free it (accepts NULL)
 *
 * The process starts the selected rows in table order and stops them in
 * the reverse order, so the order of the table is the order of shutdown
 * read backwards: the REST API is last in the table, so it stops taking
 * requests first; the lifecycle relay is first, so it stops last and
 * publishes what the stages committed before them.
 *
 * Kinds of rows, each built on an engine of lib/:
 *   stage rows (ingest, registration, module-sync, trust): a consumer
 *     group applying batches in PostgreSQL exactly once (ncmp_stage); the
 *     row names the module's ncmp_stage_ops (apply() and a worker's state)
 *     and where its settings are;
 *   singleton rows (lcm-relay, module-sync-sweep, trust-watchdog): one
 *     process at a time, elected by an advisory lock (ncmp_singleton); the
 *     row names the function that fills the task;
 *   pump rows (avc-forward, async-forward): a consumer group moving
 *     records on to other topics at least once, no database
 *     (ncmp_pump); the row names the function that fills the pump's role
 *     (where each record goes);
 *   the others (rest, cps) with their own start; rest and cps share one
 *     HTTP server when both are selected (rest owns it and adds cps's
 *     routes; cps alone starts its own).
 * A row may be selected by another row's --roles name (`part_of`): the
 * module-sync sweep runs wherever module-sync does.
 *
 * Adding a role: write its apply() (or its handler), add one row.
 */
#ifndef NCMPD_ROLE_H
#define NCMPD_ROLE_H

#include <stddef.h>

#include "ncmp_config.h"
#include "ncmp_dmi.h"
#include "ncmp_err.h"
#include "ncmp_kafka.h"
#include "ncmp_pump.h"
#include "ncmp_singleton.h"
#include "ncmp_stage.h"

/* What the roles of one process share, built once by ncmp_services_new:
 * one producer (idempotent, acks=all; keyed records land on the partition
 * NCMP's Java clients pick, as the lifecycle events do) and one DMI
 * client, so that dmi.max-connections holds per process. Everything here
 * outlives every role; the roles borrow it. When no selected row uses
 * them (the CPS store alone), neither is made: producer and dmi are NULL
 * and the process needs no Kafka. */
typedef struct ncmp_services {
    const ncmp_config *cfg;
    ncmp_producer *producer;
    ncmp_dmi *dmi;
} ncmp_services;

int ncmp_services_new(ncmp_services *svc, const ncmp_config *cfg, ncmp_err *err);

/* Flushes the producer, stops the DMI client. Call after every role was
 * joined. Accepts a zeroed struct. */
void ncmp_services_free(ncmp_services *svc);

/* The longest list of topics one row reports. */
#define NCMP_ROLE_MAX_TOPICS 8

typedef struct ncmp_role ncmp_role;

struct ncmp_role {
    const char *name;    /* as in --roles, in logs */
    const char *part_of; /* NULL, or the --roles name that selects this row */
    int needs_db;
    int no_services; /* uses neither the shared producer nor the DMI client */
    /* stage rows: the module's functions, and where the row's settings
     * are in ncmp_config (offsetof: its topic, workers, batch-size,
     * batch-wait-ms); the workers' `arg` is the process's ncmp_services */
    const ncmp_stage_ops *stage;
    size_t topic_at, workers_at, batch_size_at, batch_wait_at;
    /* singleton rows: fill the task (allocating its arg), and free that
     * arg once the task ended */
    int (*task)(const ncmp_services *svc, ncmp_singleton_task *task, ncmp_err *err);
    void (*task_free)(void *arg);
    /* pump rows: fill the pump's role */
    int (*pump)(const ncmp_services *svc, ncmp_pump_role *role, ncmp_err *err);
    /* the topics besides a stage's input (and its dead-letter topic) that
     * `create-topics` makes: outputs, and the inputs of other rows; may be
     * NULL */
    size_t (*topics)(const ncmp_role *self, const ncmp_config *cfg, char (*names)[256], size_t max);
    /* the contract; stage and singleton rows get the engines' own */
    int (*start)(const ncmp_role *self, const ncmp_services *svc, void **handle, ncmp_err *err);
    void (*stop)(void *handle);
    int (*join)(void *handle, ncmp_err *err);
    void (*destroy)(void *handle);
};

/* A stage row's input topic, from the configuration. */
const char *ncmp_role_stage_topic(const ncmp_role *r, const ncmp_config *cfg);

/* The table, in start order. */
extern const ncmp_role ncmp_roles[];
extern const size_t ncmp_nroles;

/* Is row `r` selected by `roles` (comma-separated --roles names, or
 * "all")? */
int ncmp_role_selected(const ncmp_role *r, const char *roles);

/* Is the row named `name` selected by `roles`? (For rows that share
 * something with another: rest and cps share the HTTP server.) */
int ncmp_role_name_selected(const char *name, const char *roles);

/* Fails (FATAL) on a name in `roles` that is no row's. */
int ncmp_roles_check(const char *roles, ncmp_err *err);

/* Does any selected row use the database? */
int ncmp_roles_need_db(const char *roles);

/* Does any selected row use the shared producer and DMI client? (The CPS
 * store alone needs no Kafka at all.) */
int ncmp_roles_need_services(const char *roles);

/* The topics of every row (selected or not), without duplicates, into
 * names[0..max); returns how many. */
size_t ncmp_roles_topics(const ncmp_config *cfg, char (*names)[256], size_t max);

/* The --roles names, comma-separated, for help texts. */
const char *ncmp_roles_names(void);

#endif
