#include "ncmp_singleton.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"

#define BACKOFF_FIRST_MS 200
#define BACKOFF_MAX_MS   5000

struct ncmp_singleton {
    const ncmp_config *cfg;
    ncmp_singleton_task task;
    pthread_t thread;
    ncmp_err err;
    int failed;
};

/* Try to take the lock (a session lock: it goes with the connection). */
static int try_lead(ncmp_singleton *s, ncmp_db *db, int *leader, ncmp_err *err)
{
    PGresult *res = NULL;
    char key[32];
    const char *params[1] = {s->task.lock};
    int rc;

    if (s->task.lock) {
        rc = ncmp_db_query(db, "SELECT pg_try_advisory_lock(hashtextextended($1, 0))", 1, params,
                           &res, err);
    } else {
        snprintf(key, sizeof(key), "%lld", s->task.lock_key);
        params[0] = key;
        rc = ncmp_db_query(db, "SELECT pg_try_advisory_lock($1::bigint)", 1, params, &res, err);
    }
    if (rc != 0)
        return -1;
    *leader = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    if (*leader) {
        log_info(s->task.component, "%s", s->task.leader_msg);
        if (s->task.lead && s->task.lead(s->task.arg, db, err) != 0)
            return -1;
    }
    return 0;
}

static void *singleton_main(void *arg)
{
    ncmp_singleton *s = arg;
    const ncmp_singleton_task *t = &s->task;
    ncmp_db *db = NULL;
    int leader = 0, rc = 0;
    long backoff = BACKOFF_FIRST_MS;
    ncmp_err err;

    while (!ncmp_stopping) {
        if (!db && ncmp_db_open(&db, s->cfg->db_url, s->cfg->db_password,
                                s->cfg->db_connect_timeout_s, &err) != 0)
            goto failed;
        if (!leader) {
            if (try_lead(s, db, &leader, &err) != 0)
                goto failed;
            if (!leader) { /* another process runs it; take over if it goes */
                ncmp_signal_nap_ms(t->idle_ms);
                continue;
            }
        }
        rc = t->round(t->arg, db, &err);
        if (rc < 0)
            goto failed;
        backoff = BACKOFF_FIRST_MS;
        if (rc == NCMP_SINGLETON_MORE)
            continue;
        if (t->wait)
            t->wait(t->arg, db, t->idle_ms);
        else
            ncmp_signal_nap_ms(t->idle_ms);
        continue;
    failed:
        if (err.cls == NCMP_ERR_FATAL) {
            s->err = err;
            s->failed = 1;
            ncmp_signal_request_stop();
            break;
        }
        log_warn(t->component, "%s: %s; starting over in %ld ms", t->what, err.msg, backoff);
        /* a new connection: the session lock went with the old one, and
         * whoever runs the task next starts with `lead` */
        ncmp_db_close(db);
        db = NULL;
        leader = 0;
        ncmp_signal_nap_ms(backoff);
        backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
    }
    ncmp_db_close(db);
    return NULL;
}

int ncmp_singleton_start(ncmp_singleton **out, const ncmp_config *cfg,
                         const ncmp_singleton_task *task, ncmp_err *err)
{
    ncmp_singleton *s = ncmp_xcalloc(1, sizeof(*s));

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

int ncmp_singleton_join(ncmp_singleton *s, ncmp_err *err)
{
    pthread_join(s->thread, NULL);
    if (s->failed) {
        *err = s->err;
        return -1;
    }
    return 0;
}

void ncmp_singleton_destroy(ncmp_singleton *s)
{
    free(s);
}
