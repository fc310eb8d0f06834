/*
 * singleton: a periodic task that one ncmpd process at a time runs - the
 * holder of a PostgreSQL session advisory lock - on a thread of its own
 * with its own connection (the module-sync sweep, the DMI health
 * watchdog).
 *
 * Every `interval_ms` the thread (re)connects if needed, tries to take the
 * lock if it does not hold it, and runs `round` while it does. An error
 * drops the connection, and with it the lock, so another process may take
 * over; a FATAL error stops the process. Resources the round needs belong
 * to the caller, which frees them after singleton_join.
 */
#ifndef NCMPD_SINGLETON_H
#define NCMPD_SINGLETON_H

#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_err.h"

typedef struct singleton_task {
    const char *component;  /* log component, e.g. "module-sync" */
    const char *what;       /* what runs, in warnings, e.g. "sweep" */
    const char *lock;       /* name of the advisory lock */
    const char *leader_msg; /* logged when this process takes over */
    int interval_ms;
    int (*round)(void *arg, ncmp_db *db, ncmp_err *err);
    void *arg;
} singleton_task;

typedef struct singleton singleton;

/* Start the thread; `task` is copied. */
int singleton_start(singleton **s, const ncmp_config *cfg, const singleton_task *task,
                    ncmp_err *err);

/* Wait for the thread (it ends when ncmp_stopping is set). Returns -1 with
 * the FATAL error that ended it, if one did. */
int singleton_join(singleton *s, ncmp_err *err);

void singleton_destroy(singleton *s);

#endif
