/*
 * ncmp_singleton: a task that one ncmpd process at a time runs - the
 * holder of a PostgreSQL session advisory lock - on a thread of its own
 * with its own connection: the lifecycle relay, the module-sync sweep,
 * the DMI health watchdog.
 *
 * The thread (re)connects when it has no connection, tries to take the
 * lock when it does not hold it (every `idle_ms` while another process
 * holds it), calls `lead` once when it takes it, then runs `round` while
 * it holds it. Between rounds it calls `wait` (when set; e.g. to LISTEN
 * for a notification) or sleeps `idle_ms`; a round that says there is
 * more to do is followed by the next one at once.
 *
 * An error drops the connection, and with it the lock, so another process
 * may take over (and runs `lead` again before its first round: a task
 * recovers there from whatever the last holder left); the thread tries
 * again after a back-off (200 ms doubling to 5 s). A FATAL error stops the
 * process. Resources the task needs belong to the caller, which frees them
 * after ncmp_singleton_join.
 */
#ifndef NCMP_SINGLETON_H
#define NCMP_SINGLETON_H

#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_err.h"

/* What `round` returns besides -1 (error). */
#define NCMP_SINGLETON_IDLE 0 /* nothing left: wait before the next round */
#define NCMP_SINGLETON_MORE 1 /* more to do: run again at once */

typedef struct ncmp_singleton_task {
    const char *component;  /* log component, e.g. "module-sync" */
    const char *what;       /* what runs, in warnings, e.g. "sweep" */
    const char *lock;       /* name of the advisory lock, or NULL: */
    long long lock_key;     /* its number (kept by tasks that had one) */
    const char *leader_msg; /* logged when this process takes over */
    int idle_ms;            /* between rounds, and between tries to lead */
    /* optional: once after the lock was taken, before the first round */
    int (*lead)(void *arg, ncmp_db *db, ncmp_err *err);
    /* NCMP_SINGLETON_IDLE, NCMP_SINGLETON_MORE, or -1 with err set */
    int (*round)(void *arg, ncmp_db *db, ncmp_err *err);
    /* optional: wait up to `ms` for work instead of sleeping */
    void (*wait)(void *arg, ncmp_db *db, int ms);
    void *arg;
} ncmp_singleton_task;

typedef struct ncmp_singleton ncmp_singleton;

/* Start the thread; `task` is copied, `cfg` (the database settings) must
 * outlive it. On success *s is owned by the caller. */
int ncmp_singleton_start(ncmp_singleton **s, const ncmp_config *cfg,
                         const ncmp_singleton_task *task, ncmp_err *err);

/* Wait for the thread (it ends when ncmp_stopping is set). Returns -1 with
 * the FATAL error that ended it, if one did. */
int ncmp_singleton_join(ncmp_singleton *s, ncmp_err *err);

/* Accepts NULL. Call after ncmp_singleton_join. */
void ncmp_singleton_destroy(ncmp_singleton *s);

#endif
