#include "singleton.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"

struct singleton {
    const ncmp_config *cfg;
    singleton_task task;
    pthread_t thread;
    ncmp_err err;
    int failed;
};

/* Does this process hold the lock? (A session lock: it goes with the
 * connection.) */
static int lead(singleton *s, ncmp_db *db, int *leader, ncmp_err *err)
{
    PGresult *res = NULL;
    const char *params[1] = {s->task.lock};

    if (*leader)
        return 0;
    if (ncmp_db_query(db, "SELECT pg_try_advisory_lock(hashtextextended($1, 0))", 1, params, &res,
                      err) != 0)
        return -1;
    *leader = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    if (*leader)
        log_info(s->task.component, "%s", s->task.leader_msg);
    return 0;
}

static void *singleton_main(void *arg)
{
    singleton *s = arg;
    const singleton_task *t = &s->task;
    ncmp_db *db = NULL;
    int leader = 0;
    ncmp_err err;

    while (!ncmp_stopping) {
        if (!db && ncmp_db_open(&db, s->cfg->db_url, s->cfg->db_password,
                                s->cfg->db_connect_timeout_s, &err) != 0) {
            log_warn(t->component, "%s: %s", t->what, err.msg);
        } else if (lead(s, db, &leader, &err) != 0 || (leader && t->round(t->arg, db, &err) != 0)) {
            if (err.cls == NCMP_ERR_FATAL) {
                s->err = err;
                s->failed = 1;
                ncmp_signal_request_stop();
                break;
            }
            log_warn(t->component, "%s: %s", t->what, err.msg);
            /* a new connection: the session lock went with the old one */
            ncmp_db_close(db);
            db = NULL;
            leader = 0;
        }
        for (int i = 0; i < t->interval_ms && !ncmp_stopping; i += 100)
            ncmp_sleep_ms(100);
    }
    ncmp_db_close(db);
    return NULL;
}

int singleton_start(singleton **out, const ncmp_config *cfg, const singleton_task *task,
                    ncmp_err *err)
{
    singleton *s = ncmp_xcalloc(1, sizeof(*s));

    s->cfg = cfg;
    s->task = *task;
    if (pthread_create(&s->thread, NULL, singleton_main, s) != 0) {
        free(s);
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot start the %s thread of %s", task->what,
                            task->component);
    }
    *out = s;
    return 0;
}

int singleton_join(singleton *s, ncmp_err *err)
{
    pthread_join(s->thread, NULL);
    if (s->failed) {
        *err = s->err;
        return -1;
    }
    return 0;
}

void singleton_destroy(singleton *s)
{
    free(s);
}
