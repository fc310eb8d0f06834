#include "datasync.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cps_analyze.h"
#include "datasync_store.h"
#include "ncmp_cloudevent.h"
#include "ncmp_db.h"
#include "ncmp_dmi.h"
#include "ncmp_jscan.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "ncmp_pgarray.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"

#define CHANNEL        "ncmp_data_sync"
#define DATASTORE      "ncmp-datastore:passthrough-operational"
#define MAX_WRITERS    16
#define RETRY_PAUSE_MS 1000

/* --- pure helpers ------------------------------------------------------------ */

long datasync_backoff_ms(int failures, long initial_ms, long max_ms)
{
    long ms = initial_ms;

    for (int i = 1; i < failures && ms < max_ms; i++)
        ms = ms > max_ms / 2 ? max_ms : ms * 2;
    return ms < max_ms ? ms : max_ms;
}

const char *datasync_schema_set_name(const char *module_set_tag, const char *handle_id)
{
    return module_set_tag && *module_set_tag ? module_set_tag : handle_id;
}

void datasync_fields_option(ncmp_buf *out, const char *root)
{
    ncmp_buf_appendf(out, "(fields=%s)", root);
}

/* The first member of the answer's object: where its name starts and
 * its value ends, and how many there are. */
typedef struct first_member {
    size_t members;
    const char *key, *end;
} first_member;

static int note_member(ncmp_jscan *sc, const ncmp_jtok *name, void *ctx)
{
    first_member *f = ctx;
    ncmp_jkind kind;
    ncmp_jtok value;

    if (ncmp_jscan_value(sc, &kind, &value) != 0)
        return -1;
    if (f->members++ == 0) {
        f->key = name->p;
        f->end = value.p + value.n;
    }
    return 0;
}

/* A scan, not a parse: the answer is about 11 KB per root and per handle,
 * and building a json-c tree of it only to find its first member cost
 * more than the member's own parse by libyang, which checks it anyway.
 * The whole body is checked to be one object (ncmp_jscan, as strict as
 * the JSON parser), so that a truncated answer is refused. */
int datasync_first_member(const char *body, size_t len, ncmp_buf *scratch, const char **start,
                          size_t *out_len, ncmp_err *err)
{
    first_member f = {0};
    ncmp_jscan sc;
    ncmp_err why = {0};

    ncmp_jscan_init(&sc, body, len, &why);
    if (ncmp_jscan_peek(&sc) != '{' || ncmp_jscan_members(&sc, note_member, &f) != 0 ||
        ncmp_jscan_end(&sc) != 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "the DMI's answer is not a JSON object%s%s%s",
                            why.msg[0] ? " (" : "", why.msg, why.msg[0] ? ")" : "");
    if (f.members == 0)
        return 0;
    if (f.members == 1) {
        *start = body;
        *out_len = len;
    } else { /* NCMP keeps the first member only */
        ncmp_buf_append_char(scratch, '{');
        ncmp_buf_append(scratch, f.key, (size_t)(f.end - f.key));
        ncmp_buf_append_char(scratch, '}');
        *start = scratch->data;
        *out_len = scratch->len;
    }
    return 1;
}

/* --- the role's state ------------------------------------------------------- */

typedef struct job job;

/* One root's read of a job: the callback's opaque. */
typedef struct root_call {
    job *j;
    size_t i;
} root_call;

/* One handle being synced: claimed by the dispatcher, read from its DMI
 * plugin, written by a writer. */
struct job {
    job *next;
    datasync *ds;
    char *id;
    const datasync_set *set; /* borrowed from the store; NULL: no module set */
    int attempts;
    root_call *calls;
    ncmp_dmi_response **resps; /* per root; NULL until answered */
    atomic_size_t pending;     /* roots still in flight */
    atomic_int failed;
    atomic_int unsent;          /* a read was not sent: the plugin had this process's most (busy) */
    atomic_int broke;           /* a read failed otherwise */
    char why[NCMP_ERR_MSG_MAX]; /* written by whoever set `failed` first */
};

struct datasync {
    const ncmp_config *cfg;
    ncmp_dmi *dmi; /* borrowed */
    datasync_store *store;
    cps_analyzer *analyzer; /* ANALYZE of fragment after bulk writes */
    datasync_retry retry;
    atomic_int refs; /* the role's, and one per job alive */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    job *done_head, *done_tail; /* answered, waiting for a writer */
    size_t ndone;
    size_t reading; /* claimed, their reads not all answered (data-sync.max-in-flight) */
    size_t held;    /* answered and not yet written: queued (ndone) or in a writer's batch */
    int stopping;   /* stop asked */
    int closed;     /* destroyed: jobs completing now are dropped */
    int wake[2];    /* pipe: a writer freed room; stop */
    pthread_t dispatcher;
    pthread_t writers[MAX_WRITERS];
    int nwriters, dispatcher_started;
    int fatal;
    ncmp_err fatal_err;
};

static void ds_free(datasync *ds)
{
    cps_analyzer_free(ds->analyzer);
    datasync_store_destroy(ds->store);
    pthread_mutex_destroy(&ds->lock);
    pthread_cond_destroy(&ds->cond);
    if (ds->wake[0] >= 0)
        close(ds->wake[0]);
    if (ds->wake[1] >= 0)
        close(ds->wake[1]);
    free(ds);
}

static void ds_release(datasync *ds)
{
    if (atomic_fetch_sub(&ds->refs, 1) == 1)
        ds_free(ds);
}

static void ds_wake(datasync *ds)
{
    char c = 1;
    ssize_t n = write(ds->wake[1], &c, 1);
    (void)n; /* a full pipe is awake enough */
}

static void ds_fatal(datasync *ds, const ncmp_err *err)
{
    pthread_mutex_lock(&ds->lock);
    if (!ds->fatal) {
        ds->fatal = 1;
        ds->fatal_err = *err;
    }
    ds->stopping = 1;
    pthread_cond_broadcast(&ds->cond);
    pthread_mutex_unlock(&ds->lock);
    ds_wake(ds);
    log_error("data-sync", "%s", err->msg);
    ncmp_signal_request_stop(); /* a fatal error of one role stops the process */
}

static int ds_stopping(datasync *ds)
{
    int s;

    pthread_mutex_lock(&ds->lock);
    s = ds->stopping;
    pthread_mutex_unlock(&ds->lock);
    return s || ncmp_stopping;
}

static job *job_new(datasync *ds, const char *id, int attempts)
{
    job *j = ncmp_xcalloc(1, sizeof(*j));

    atomic_fetch_add(&ds->refs, 1);
    j->ds = ds;
    j->id = ncmp_xstrdup(id);
    j->attempts = attempts;
    atomic_init(&j->pending, 0);
    atomic_init(&j->failed, 0);
    atomic_init(&j->unsent, 0);
    atomic_init(&j->broke, 0);
    return j;
}

static size_t job_nroots(const job *j)
{
    return j->set ? j->set->nroots : 0;
}

static void job_free(job *j)
{
    datasync *ds;

    if (!j)
        return;
    ds = j->ds;
    for (size_t i = 0; j->resps && i < job_nroots(j); i++)
        ncmp_dmi_response_destroy(j->resps[i]);
    free(j->resps);
    free(j->calls);
    free(j->id);
    free(j);
    ds_release(ds);
}

/* The job failed: `unsent` says whether this failure is a read the DMI
 * client did not send (busy), which is not counted as an attempt when it
 * is the job's only kind of failure. */
static void job_fail(job *j, int unsent, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void job_fail(job *j, int unsent, const char *fmt, ...)
{
    va_list ap;

    atomic_store(unsent ? &j->unsent : &j->broke, 1);
    if (atomic_exchange(&j->failed, 1))
        return;
    va_start(ap, fmt);
    vsnprintf(j->why, sizeof(j->why), fmt, ap);
    va_end(ap);
}

/* Hand a job over to the writers; once the role is destroyed, drop it. */
static void job_done(job *j)
{
    datasync *ds = j->ds;

    pthread_mutex_lock(&ds->lock);
    if (ds->closed) {
        pthread_mutex_unlock(&ds->lock);
        job_free(j);
        return;
    }
    j->next = NULL;
    ds->reading--;
    ds->held++;
    if (ds->done_tail)
        ds->done_tail->next = j;
    else
        ds->done_head = j;
    ds->done_tail = j;
    ds->ndone++;
    pthread_cond_signal(&ds->cond);
    pthread_mutex_unlock(&ds->lock);
}

/* --- DMI reads (the callback runs on the DMI client's event thread) -------- */

static void root_done(ncmp_dmi_response *resp, void *opaque)
{
    root_call *c = opaque;
    job *j = c->j;
    ncmp_err err;

    if (ncmp_dmi_response_check(resp, &err) != 0) {
        job_fail(j, resp->failure == NCMP_DMI_FAIL_BUSY, "reading %s: %s", j->set->roots[c->i],
                 err.msg);
        ncmp_dmi_response_destroy(resp);
    } else {
        j->resps[c->i] = resp;
    }
    if (atomic_fetch_sub(&j->pending, 1) == 1)
        job_done(j);
}

/* Submit a read per root; the job reaches the writers when the last one
 * completes (at once when there is none). */
static void job_submit(datasync *ds, job *j, const char *dmi, const char *properties,
                       const char *tag)
{
    size_t n = job_nroots(j);
    ncmp_buf body = NCMP_BUF_INIT;
    char request_id[37];

    if (n == 0) {
        job_done(j);
        return;
    }
    ncmp_uuid4(request_id);
    ncmp_buf_append_str(&body, "{\"operation\":\"read\",\"cmHandleProperties\":");
    ncmp_buf_append_str(&body, properties && *properties ? properties : "{}");
    ncmp_buf_append_str(&body, ",\"requestId\":");
    ncmp_buf_append_json_string(&body, request_id);
    ncmp_buf_append_str(&body, ",\"moduleSetTag\":");
    ncmp_buf_append_json_string(&body, tag ? tag : "");
    ncmp_buf_append_char(&body, '}');
    j->calls = ncmp_xcalloc(n, sizeof(*j->calls));
    j->resps = ncmp_xcalloc(n, sizeof(*j->resps));
    /* one count more than the roots while submitting, so that the job is
     * not handed over before the last submission */
    atomic_store(&j->pending, n + 1);
    for (size_t i = 0; i < n; i++) {
        ncmp_buf url = NCMP_BUF_INIT, options = NCMP_BUF_INIT;
        ncmp_dmi_request req = {0};
        ncmp_err err;
        j->calls[i] = (root_call){j, i};
        datasync_fields_option(&options, j->set->roots[i]);
        ncmp_dmi_url_data(&url, dmi, j->id, DATASTORE, "/", options.data, NULL);
        req.method = "POST";
        req.url = url.data;
        req.body = body.data;
        req.body_len = body.len;
        if (ncmp_dmi_submit(ds->dmi, &req, root_done, &j->calls[i], &err) != 0) {
            job_fail(j, 0, "reading %s: %s", j->set->roots[i], err.msg);
            atomic_fetch_sub(&j->pending, 1);
        }
        ncmp_buf_free(&url);
        ncmp_buf_free(&options);
    }
    if (atomic_fetch_sub(&j->pending, 1) == 1)
        job_done(j);
    ncmp_buf_free(&body);
}

/* --- the dispatcher ------------------------------------------------------- */

static int db_connect(datasync *ds, ncmp_db **db, ncmp_err *err)
{
    long backoff = 200;

    for (;;) {
        if (ncmp_db_open(db, ds->cfg->db_url, ds->cfg->db_password, ds->cfg->db_connect_timeout_s,
                         err) == 0)
            return 0;
        if (err->cls != NCMP_ERR_RETRY || ds_stopping(ds))
            return -1;
        log_warn("data-sync", "%s; retrying in %ld ms", err->msg, backoff);
        ncmp_sleep_ms(backoff);
        backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
    }
}

/* The safety net: queue every eligible handle the queue lacks. */
static int sweep(ncmp_db *db, ncmp_err *err)
{
    static const char sql[] =
        "INSERT INTO data_sync_work (handle_id) SELECT id FROM cm_handle"
        " WHERE state = 'READY' AND data_sync_enabled AND operational_sync_state = 'UNSYNCHRONIZED'"
        " ON CONFLICT (handle_id) DO NOTHING";
    PGresult *res = NULL;
    long added;

    if (ncmp_db_query(db, sql, 0, NULL, &res, err) != 0)
        return -1;
    added = atol(PQcmdTuples(res));
    PQclear(res);
    if (added > 0)
        log_info("data-sync", "sweep: %ld eligible handles were not queued; queued now", added);
    return 0;
}

/* Milliseconds until the earliest queued handle is due (0: now), at most
 * `cap`. */
static long next_due_ms(ncmp_db *db, long cap, ncmp_err *err)
{
    static const char sql[] =
        "SELECT ceil(extract(epoch FROM min(next_at) - clock_timestamp()) * 1000)::bigint"
        " FROM data_sync_work";
    PGresult *res = NULL;
    long ms = cap;

    if (ncmp_db_query(db, sql, 0, NULL, &res, err) != 0)
        return -1;
    if (!PQgetisnull(res, 0, 0))
        ms = atol(PQgetvalue(res, 0, 0));
    PQclear(res);
    return ms < 0 ? 0 : ms > cap ? cap : ms;
}

/* Claim up to `room` due handles (their lease starts) and start their
 * reads; queue rows of handles no longer eligible are dropped. Returns
 * how many rows were claimed, or -1. */
static long claim(datasync *ds, ncmp_db *db, size_t room, ncmp_err *err)
{
    static const char sql_claim[] =
        "WITH c AS (SELECT handle_id FROM data_sync_work WHERE next_at <= now()"
        " ORDER BY next_at LIMIT $1 FOR UPDATE SKIP LOCKED),"
        " u AS (UPDATE data_sync_work w SET next_at = now() + $2::bigint * interval '1 millisecond'"
        " FROM c WHERE w.handle_id = c.handle_id RETURNING w.handle_id, w.attempts)"
        " SELECT u.handle_id, u.attempts, coalesce(h.state = 'READY' AND h.data_sync_enabled"
        " AND h.operational_sync_state = 'UNSYNCHRONIZED', false),"
        " CASE WHEN h.dmi_data_service_name <> '' THEN h.dmi_data_service_name"
        " ELSE h.dmi_service_name END, h.additional_properties::text, h.module_set_tag,"
        " h.module_set_id FROM u LEFT JOIN cm_handle h ON h.id = u.handle_id";
    static const char sql_gone[] =
        "DELETE FROM data_sync_work w WHERE w.handle_id = ANY($1::text[]) AND NOT EXISTS"
        " (SELECT 1 FROM cm_handle h WHERE h.id = w.handle_id AND h.state = 'READY'"
        " AND h.data_sync_enabled AND h.operational_sync_state = 'UNSYNCHRONIZED')";
    char limit[24], lease[24];
    const char *params[2] = {limit, lease};
    PGresult *res = NULL;
    ncmp_buf gone = NCMP_BUF_INIT;
    long rows;
    size_t ngone = 0;

    snprintf(limit, sizeof(limit), "%zu", room);
    snprintf(lease, sizeof(lease), "%d", ds->cfg->data_sync_lease_ms);
    if (ncmp_db_query(db, sql_claim, 2, params, &res, err) != 0)
        return -1;
    rows = PQntuples(res);
    ncmp_pgarray_begin(&gone);
    for (int r = 0; r < rows; r++) {
        const char *id = PQgetvalue(res, r, 0), *tag = PQgetvalue(res, r, 5);
        job *j;
        ncmp_err serr;
        if (PQgetvalue(res, r, 2)[0] != 't') {
            ncmp_pgarray_add_text(&gone, id);
            ngone++;
            continue;
        }
        j = job_new(ds, id, atoi(PQgetvalue(res, r, 1)));
        pthread_mutex_lock(&ds->lock);
        ds->reading++;
        pthread_mutex_unlock(&ds->lock);
        if (!PQgetisnull(res, r, 6) &&
            datasync_store_set(ds->store, db, datasync_schema_set_name(tag, id),
                               PQgetvalue(res, r, 6), &j->set, &serr) != 0) {
            job_fail(j, 0, "schema set %s: %s", datasync_schema_set_name(tag, id), serr.msg);
            if (serr.cls == NCMP_ERR_FATAL) {
                job_done(j);
                *err = serr;
                rows = -1;
                break;
            }
            job_done(j);
            continue;
        }
        job_submit(ds, j, PQgetvalue(res, r, 3), PQgetvalue(res, r, 4), tag);
    }
    ncmp_pgarray_end(&gone);
    PQclear(res);
    params[0] = gone.data;
    if (rows >= 0 && ngone && ncmp_db_query(db, sql_gone, 1, params, NULL, err) != 0)
        rows = -1;
    ncmp_buf_free(&gone);
    return rows;
}

/* Wait for a NOTIFY, a writer's wake-up or the timeout; 1 when notified. */
static int wait_event(datasync *ds, ncmp_db *db, long timeout_ms)
{
    PGconn *conn = ncmp_db_conn(db);
    struct pollfd pfd[2] = {{conn ? PQsocket(conn) : -1, POLLIN, 0}, {ds->wake[0], POLLIN, 0}};
    PGnotify *n;
    int notified = 0;
    char drain[64];

    /* a NOTIFY read along with a query's result is already queued in
     * libpq, and its socket will not wake the poll */
    while (conn && (n = PQnotifies(conn))) {
        notified = 1;
        PQfreemem(n);
    }
    if (notified)
        return 1;
    poll(pfd, 2, (int)(timeout_ms > 60000 ? 60000 : timeout_ms));
    if (pfd[1].revents & POLLIN)
        while (read(ds->wake[0], drain, sizeof(drain)) > 0)
            ;
    if (conn && PQconsumeInput(conn))
        while ((n = PQnotifies(conn))) {
            notified = 1;
            PQfreemem(n);
        }
    return notified;
}

/* How many handles the dispatcher may claim now (ds->lock held): reads
 * up to data-sync.max-in-flight, and beyond the answers of those, up to
 * two batches per writer held in memory (one being written, one ready for
 * when it is done), so that slow writers hold back the reads rather than
 * gather answers. */
static size_t claim_room(const datasync *ds)
{
    size_t max_reading = (size_t)ds->cfg->data_sync_max_in_flight;
    size_t max_total =
        max_reading + 2 * (size_t)ds->nwriters * (size_t)ds->cfg->data_sync_batch_size;
    size_t total = ds->reading + ds->held;
    size_t room = ds->reading < max_reading ? max_reading - ds->reading : 0;

    if (total >= max_total)
        return 0;
    return room < max_total - total ? room : max_total - total;
}

static void *dispatcher_main(void *arg)
{
    datasync *ds = arg;
    ncmp_db *db = NULL;
    PGconn *listening = NULL;
    double next_sweep = 0;
    int more = 1, idle = 0;
    ncmp_err err;

    if (db_connect(ds, &db, &err) != 0) {
        if (!ds_stopping(ds))
            ds_fatal(ds, &err);
        return NULL;
    }
    while (!ds_stopping(ds)) {
        size_t room;
        long wait_ms = 0;
        if (ncmp_db_ensure(db, &err) != 0)
            goto retry;
        if (ncmp_db_conn(db) != listening) {
            if (ncmp_db_exec(db, "LISTEN " CHANNEL, &err) != 0)
                goto retry;
            listening = ncmp_db_conn(db);
            more = 1; /* what arrived while not listening */
        }
        if (ncmp_now_ms() >= next_sweep) {
            if (sweep(db, &err) != 0)
                goto retry;
            next_sweep = ncmp_now_ms() + ds->cfg->data_sync_sweep_interval_ms;
            more = 1;
        }
        pthread_mutex_lock(&ds->lock);
        room = claim_room(ds);
        pthread_mutex_unlock(&ds->lock);
        if (more && room > 0) {
            long got = claim(ds, db, room, &err);
            if (got < 0)
                goto retry;
            more = (size_t)got == room;
            if (more)
                continue;
            idle = got == 0;
        }
        if (room > 0) {
            wait_ms = next_due_ms(db, (long)(next_sweep - ncmp_now_ms()), &err);
            if (wait_ms < 0)
                goto retry;
            if (wait_ms == 0 && !idle) {
                more = 1;
                continue;
            }
            if (wait_ms == 0) /* due, but another process is claiming them */
                wait_ms = 10;
        } else {
            wait_ms = 1000; /* a writer wakes this up when room frees */
        }
        if (wait_event(ds, db, wait_ms))
            more = 1;
        else if (room == 0)
            more = 1; /* room may be free now: look again */
        continue;
    retry:
        if (err.cls == NCMP_ERR_FATAL) {
            ds_fatal(ds, &err);
            break;
        }
        log_warn("data-sync", "%s; retrying in %d ms", err.msg, RETRY_PAUSE_MS);
        wait_event(ds, db, RETRY_PAUSE_MS);
        more = 1;
    }
    ncmp_db_close(db);
    return NULL;
}

/* --- the writers ------------------------------------------------------------ */

/* Up to `max` answered jobs: waits for the first, then up to the batch
 * wait for more. NULL when stopping with nothing left. Another writer may
 * take what was waited for during the batch wait: then wait again (a
 * writer that returned with nothing would end, and the role would write
 * on fewer connections than it has). */
static job *take_batch(datasync *ds, size_t max, size_t *n)
{
    job *head, *last;
    struct timespec deadline;
    size_t k = 0;

    pthread_mutex_lock(&ds->lock);
    for (;;) {
        while (!ds->stopping && ds->ndone == 0)
            pthread_cond_wait(&ds->cond, &ds->lock);
        if (ds->ndone > 0 && ds->ndone < max && !ds->stopping &&
            ds->cfg->data_sync_batch_wait_ms > 0) {
            clock_gettime(CLOCK_REALTIME, &deadline);
            deadline.tv_nsec += (long)ds->cfg->data_sync_batch_wait_ms * 1000000L;
            deadline.tv_sec += deadline.tv_nsec / 1000000000L;
            deadline.tv_nsec %= 1000000000L;
            while (!ds->stopping && ds->ndone < max && ds->reading > 0 &&
                   pthread_cond_timedwait(&ds->cond, &ds->lock, &deadline) == 0)
                ;
        }
        if (ds->ndone > 0 || ds->stopping)
            break;
    }
    head = ds->done_head;
    last = NULL;
    for (job *j = head; j && k < max; j = j->next) {
        last = j;
        k++;
    }
    if (last) {
        ds->done_head = last->next;
        if (!ds->done_head)
            ds->done_tail = NULL;
        last->next = NULL;
        ds->ndone -= k;
    }
    pthread_mutex_unlock(&ds->lock);
    *n = k;
    return k ? head : NULL;
}

/* Write one batch; the jobs are freed. */
static int write_batch(datasync *ds, ncmp_db *db, job *head, size_t n, ncmp_err *err)
{
    datasync_item *items = ncmp_xcalloc(n, sizeof(*items));
    const char **bodies;
    size_t *lens, total = 0, at = 0, synced = 0, failed = 0, busy = 0, nodes = 0;
    const job *first_failed = NULL;
    job *j;
    size_t i = 0;
    double t0 = ncmp_now_ms();
    int rc;

    for (j = head; j; j = j->next)
        total += job_nroots(j);
    bodies = ncmp_xcalloc(total ? total : 1, sizeof(*bodies));
    lens = ncmp_xcalloc(total ? total : 1, sizeof(*lens));
    for (j = head; j; j = j->next, i++) {
        datasync_item *it = &items[i];
        it->id = j->id;
        it->set_id = j->set ? j->set->id : NULL;
        it->attempts = j->attempts;
        it->failed = atomic_load(&j->failed);
        it->busy = it->failed && atomic_load(&j->unsent) && !atomic_load(&j->broke);
        it->bodies = bodies + at;
        it->lens = lens + at;
        it->nbodies = job_nroots(j);
        for (size_t r = 0; !it->failed && r < it->nbodies; r++)
            if (j->resps[r]) {
                bodies[at + r] = j->resps[r]->body.data;
                lens[at + r] = j->resps[r]->body.len;
            }
        at += it->nbodies;
        if (it->failed && !it->busy && !first_failed)
            first_failed = j;
        failed += it->failed && !it->busy;
        busy += it->busy;
    }
    rc = datasync_store_write(ds->store, db, items, n, &ds->retry, err);
    if (rc != 0 && err->cls == NCMP_ERR_REJECT) {
        /* something of one handle failed the transaction: each alone,
         * and one that fails alone backs off as a failed read does */
        rc = 0;
        for (i = 0; i < n && rc == 0; i++) {
            if (datasync_store_write(ds->store, db, &items[i], 1, &ds->retry, err) == 0)
                continue;
            if (err->cls != NCMP_ERR_REJECT) {
                rc = -1;
                break;
            }
            log_warn("data-sync", "%s: not stored, retried later: %s", items[i].id, err->msg);
            items[i].failed = 1;
            rc = datasync_store_write(ds->store, db, &items[i], 1, &ds->retry, err);
        }
    }
    for (i = 0; i < n; i++) {
        synced += items[i].synced;
        nodes += items[i].nodes;
    }
    if (rc == 0) {
        log_debug("data-sync",
                  "%zu handles synchronized (%zu nodes), %zu failed, %zu not sent, of %zu in %.1f"
                  " ms",
                  synced, nodes, failed, busy, n, ncmp_now_ms() - t0);
        /* a first sync writes the whole of a handle's tree: the planner
         * must know of it before the cache is queried */
        cps_analyzer_wrote(ds->analyzer, (long)nodes);
    }
    if (rc == 0 && busy)
        log_debug("data-sync",
                  "%zu handles whose reads were not sent (dmi.max-in-flight-per-plugin): taken"
                  " again in %d ms",
                  busy, DATASYNC_BUSY_PAUSE_MS);
    if (rc == 0 && first_failed)
        log_warn("data-sync", "%zu of %zu handles not synchronized, retried later; %s: %s", failed,
                 n, first_failed->id, first_failed->why);
    while (head) {
        j = head->next;
        job_free(head);
        head = j;
    }
    free(items);
    free(bodies);
    free(lens);
    return rc;
}

static void *writer_main(void *arg)
{
    datasync *ds = arg;
    ncmp_db *db = NULL;
    ncmp_gauge *running = ncmp_gauge_get(ncmp_metrics_lib_get()->data_sync_writers, NULL);
    ncmp_err err;

    ncmp_gauge_add(running, 1);
    if (db_connect(ds, &db, &err) != 0) {
        if (!ds_stopping(ds))
            ds_fatal(ds, &err);
        ncmp_gauge_add(running, -1);
        return NULL;
    }
    for (;;) {
        size_t n;
        double waited = ncmp_now_ms();
        job *batch = take_batch(ds, (size_t)ds->cfg->data_sync_batch_size, &n);
        int rc;
        if (!batch)
            break;
        log_debug("data-sync", "a batch of %zu after %.1f ms waiting", n, ncmp_now_ms() - waited);
        rc = ncmp_db_ensure(db, &err) == 0 ? write_batch(ds, db, batch, n, &err) : -1;
        if (rc != 0) {
            if (err.cls == NCMP_ERR_FATAL) {
                ds_fatal(ds, &err);
            } else {
                log_warn("data-sync",
                         "a batch of %zu handles not written (%s); they come back when "
                         "their lease ends",
                         n, err.msg);
                ncmp_sleep_ms(RETRY_PAUSE_MS);
            }
        }
        pthread_mutex_lock(&ds->lock);
        ds->held -= n;
        pthread_mutex_unlock(&ds->lock);
        ds_wake(ds);
    }
    ncmp_db_close(db);
    ncmp_gauge_add(running, -1);
    return NULL;
}

/* --- the role ------------------------------------------------------------------ */

int datasync_start(datasync **out, const ncmp_services *svc, ncmp_err *err)
{
    datasync *ds = ncmp_xcalloc(1, sizeof(*ds));

    ds->cfg = svc->cfg;
    ds->dmi = svc->dmi;
    ds->store = datasync_store_new();
    ds->analyzer = cps_analyzer_new(svc->cfg, "fragment_cache", NULL);
    ds->retry =
        (datasync_retry){svc->cfg->data_sync_retry_initial_ms, svc->cfg->data_sync_retry_max_ms};
    atomic_init(&ds->refs, 1);
    pthread_mutex_init(&ds->lock, NULL);
    pthread_cond_init(&ds->cond, NULL);
    ds->wake[0] = ds->wake[1] = -1;
    if (pipe(ds->wake) != 0 || fcntl(ds->wake[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(ds->wake[1], F_SETFL, O_NONBLOCK) != 0) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "data-sync: pipe: %s", strerror(errno));
        ds_release(ds);
        return -1;
    }
    if (!ds->dmi) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "data-sync: no DMI client");
        ds_release(ds);
        return -1;
    }
    for (int i = 0; i < svc->cfg->data_sync_workers && i < MAX_WRITERS; i++) {
        if (pthread_create(&ds->writers[i], NULL, writer_main, ds) != 0)
            break;
        ds->nwriters++;
    }
    if (ds->nwriters == 0 || pthread_create(&ds->dispatcher, NULL, dispatcher_main, ds) != 0) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "data-sync: cannot start its threads");
        datasync_stop(ds);
        datasync_join(ds, NULL);
        datasync_destroy(ds);
        return -1;
    }
    ds->dispatcher_started = 1;
    log_info("data-sync", "started: %d writers, up to %d handles in flight", ds->nwriters,
             svc->cfg->data_sync_max_in_flight);
    *out = ds;
    return 0;
}

void datasync_stop(datasync *ds)
{
    if (!ds)
        return;
    pthread_mutex_lock(&ds->lock);
    ds->stopping = 1;
    pthread_cond_broadcast(&ds->cond);
    pthread_mutex_unlock(&ds->lock);
    ds_wake(ds);
}

int datasync_join(datasync *ds, ncmp_err *err)
{
    if (ds->dispatcher_started) {
        pthread_join(ds->dispatcher, NULL);
        ds->dispatcher_started = 0;
    }
    /* writers leave once stopping with nothing answered; make sure they
     * are told (the dispatcher may have ended first on a fatal error) */
    datasync_stop(ds);
    for (int i = 0; i < ds->nwriters; i++)
        pthread_join(ds->writers[i], NULL);
    ds->nwriters = 0;
    if (ds->fatal) {
        if (err)
            *err = ds->fatal_err;
        return -1;
    }
    return 0;
}

void datasync_destroy(datasync *ds)
{
    job *left;

    if (!ds)
        return;
    pthread_mutex_lock(&ds->lock);
    ds->closed = 1;
    left = ds->done_head;
    ds->done_head = ds->done_tail = NULL;
    ds->ndone = 0;
    pthread_mutex_unlock(&ds->lock);
    while (left) {
        job *next = left->next;
        job_free(left);
        left = next;
    }
    ds_release(ds);
}
