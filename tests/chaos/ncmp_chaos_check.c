/*
 * ncmp-chaos-check: the invariants of a chaos run (./run chaos), read
 * from what the system left: the database, the whole lifecycle topic and
 * the whole registration-response topic (committed records, as a
 * read_committed consumer sees them).
 *
 *   ncmp-chaos-check -b HOST:PORT -d DB_URL --lcm-topic T --response-topic T
 *                    --requests FILE --expected FILE [--avc-in T --avc-out T]
 *                    [--batch-in T --batch-out T]
 *
 * --requests: "<ce_id> ..." per registration request sent (ncmp-loadgen
 * --print-ids), each of which must have one outcome. --expected: one
 * handle id per line, the handles that must exist at the end
 * (registrations minus deregistrations); every other handle that has
 * events must end deleted.
 *
 * Every handle's lifecycle events are walked in order (one key, one
 * partition) through the state machine: a create from no state, an
 * update whose old state is the current one, a delete from DELETING. An
 * event whose eventId was seen before, or that repeats the transition
 * just made, is a duplicate; an update from a state the handle was not
 * in means an event is missing before it (out of order). At the end each
 * handle's last state must be its state in the database (none when it is
 * not there).
 *
 * With --avc-in and --avc-out (the avc-forward role's input and output),
 * every AVC event on the input (each with its own ce_id) must be on the
 * output: avc_missing counts those that are not, avc_duplicated the
 * copies beyond the input's own (at least once: counted, not judged),
 * avc_unknown those on the output that are not on the input. The same
 * for --batch-in and --batch-out (the async-forward role's input, where
 * DMI plugins put batch-read results, and the client's topic), as
 * batch_*: there, ncmpd's own results (for handles it could not ask a
 * DMI plugin about) are on the output alone, so batch_unknown is only
 * counted.
 *
 * Prints one JSON object of figures (see docs/reliability.md); exits 0
 * when it could read everything, whatever the figures say (the caller
 * judges them), 1 when it could not, 2 on bad usage.
 */
#include <getopt.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_db.h"
#include "ncmp_json.h"
#include "ncmp_kafka.h"
#include "ncmp_lcm.h"
#include "ncmp_log.h"

#define PROG "ncmp-chaos-check"

/* How long a topic may stay silent before its end counts as not found. */
#define SCAN_IDLE_MS 30000

static const char usage[] =
    "Usage: " PROG " -b HOST:PORT -d DB_URL --lcm-topic TOPIC --response-topic TOPIC\n"
    "                        --requests FILE --expected FILE [--avc-in TOPIC --avc-out TOPIC]\n"
    "                        [--batch-in TOPIC --batch-out TOPIC]\n"
    "\n"
    "Check a chaos run's invariants and print its figures as JSON.\n";

/* One lifecycle event, as much as the check needs. */
typedef struct lcm_ev {
    char *handle, *event_id;
    int32_t partition;
    int64_t offset;
    char kind; /* 'c'reate, 'u'pdate, 'd'elete */
    ncmp_handle_state old_state, new_state;
    int repeat; /* its eventId came earlier on the topic: counted, then skipped */
} lcm_ev;

typedef struct strs {
    char **v;
    size_t n, cap;
} strs;

typedef struct events {
    lcm_ev *v;
    size_t n, cap;
} events;

static void strs_add(strs *s, const char *p, size_t len)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->v = ncmp_xrealloc(s->v, s->cap * sizeof(*s->v));
    }
    s->v[s->n] = ncmp_xmalloc(len + 1);
    memcpy(s->v[s->n], p, len);
    s->v[s->n][len] = '\0';
    s->n++;
}

static void strs_free(strs *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Events with one eventId together, the first on the topic first. */
static int cmp_ev_id(const void *a, const void *b)
{
    const lcm_ev *x = *(const lcm_ev *const *)a, *y = *(const lcm_ev *const *)b;
    int c = strcmp(x->event_id, y->event_id);

    if (c)
        return c;
    if (x->partition != y->partition)
        return x->partition < y->partition ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Events of one handle together, in their order on the topic. */
static int cmp_ev(const void *a, const void *b)
{
    const lcm_ev *x = a, *y = b;
    int c = strcmp(x->handle, y->handle);

    if (c)
        return c;
    if (x->partition != y->partition)
        return x->partition < y->partition ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The first word of each line of `path`. */
static int read_words(const char *path, strs *out)
{
    FILE *f = fopen(path, "r");
    char line[4096];

    if (!f) {
        fprintf(stderr, PROG ": cannot read %s\n", path);
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        size_t n = strcspn(line, " \t\r\n");
        if (n)
            strs_add(out, line, n);
    }
    fclose(f);
    return 0;
}

static const char *str_member(json_object *o, const char *key)
{
    json_object *v;

    return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static ncmp_handle_state values_state(json_object *ev, const char *which)
{
    json_object *values;

    if (!json_object_object_get_ex(ev, which, &values))
        return NCMP_STATE_NONE;
    return ncmp_state_parse(str_member(values, "cmHandleState"));
}

static int scan_lcm(const rd_kafka_message_t *m, void *arg, ncmp_err *err)
{
    events *evs = arg;
    json_object *doc = NULL, *ev;
    const char *type, *id, *handle;
    ncmp_err perr;
    lcm_ev *e;

    (void)err;
    if (!m->payload || ncmp_json_parse(m->payload, m->len, &doc, &perr) != 0 || !doc ||
        !json_object_object_get_ex(doc, "event", &ev) || !(type = str_member(doc, "eventType")) ||
        !(id = str_member(doc, "eventId")) || !(handle = str_member(ev, "cmHandleId"))) {
        json_object_put(doc);
        fprintf(stderr, PROG ": not a lifecycle event at partition %d offset %lld\n",
                (int)m->partition, (long long)m->offset);
        return 0;
    }
    if (evs->n == evs->cap) {
        evs->cap = evs->cap ? 2 * evs->cap : 4096;
        evs->v = ncmp_xrealloc(evs->v, evs->cap * sizeof(*evs->v));
    }
    e = &evs->v[evs->n++];
    memset(e, 0, sizeof(*e)); /* realloc'd memory: `repeat` must start at 0 */
    e->handle = ncmp_xstrdup(handle);
    e->event_id = ncmp_xstrdup(id);
    e->partition = m->partition;
    e->offset = m->offset;
    e->kind = strstr(type, ".create") ? 'c' : strstr(type, ".delete") ? 'd' : 'u';
    e->old_state = values_state(ev, "oldValues");
    e->new_state = values_state(ev, "newValues");
    json_object_put(doc);
    return 0;
}

static int scan_keys(const rd_kafka_message_t *m, void *arg, ncmp_err *err)
{
    (void)err;
    if (m->key)
        strs_add(arg, m->key, m->key_len);
    return 0;
}

static int scan_ce_ids(const rd_kafka_message_t *m, void *arg, ncmp_err *err)
{
    rd_kafka_headers_t *h = NULL;
    const void *v = NULL;
    size_t len = 0;

    (void)err;
    if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        rd_kafka_header_get_last(h, "ce_id", &v, &len) == RD_KAFKA_RESP_ERR_NO_ERROR && v)
        strs_add(arg, v, len);
    else
        strs_add(arg, "", 0); /* no id: can match nothing */
    return 0;
}

/* Every committed record of `topic` through fn. */
static int read_topic(const char *bootstrap, const char *topic, ncmp_kafka_scan_fn fn, void *arg)
{
    ncmp_kafka_opts kopts = {0};
    rd_kafka_t *rk = NULL;
    int64_t *from = NULL, *end = NULL;
    int nparts = 0, rc = -1;
    ncmp_err err;

    kopts.bootstrap_servers = bootstrap;
    if (ncmp_kafka_admin_new(&rk, &kopts, PROG, &err) != 0 ||
        ncmp_kafka_partition_count(rk, topic, 30000, &nparts, &err) != 0)
        goto done;
    from = ncmp_xcalloc((size_t)nparts, sizeof(*from));
    end = ncmp_xcalloc((size_t)nparts, sizeof(*end));
    for (int p = 0; p < nparts; p++)
        from[p] = RD_KAFKA_OFFSET_BEGINNING;
    rc = ncmp_kafka_scan(&kopts, PROG, topic, from, nparts, SCAN_IDLE_MS, fn, arg, end, &err);
done:
    if (rc != 0)
        fprintf(stderr, PROG ": reading %s: %s\n", topic, err.msg);
    if (rk)
        rd_kafka_destroy(rk);
    free(from);
    free(end);
    return rc;
}

/* How many of the sorted `want` the sorted `got` lacks (an entry wanted
 * twice is one), and how many entries of `got` are repeats. */
static void merge_count(const strs *want, const strs *got, long *missing, long *repeated)
{
    size_t i = 0, j = 0;

    *missing = *repeated = 0;
    for (size_t k = 1; k < got->n; k++)
        *repeated += strcmp(got->v[k - 1], got->v[k]) == 0;
    while (i < want->n) {
        int c = j < got->n ? strcmp(want->v[i], got->v[j]) : -1;
        if (c == 0) {
            const char *w = want->v[i];
            while (i < want->n && strcmp(want->v[i], w) == 0) /* wanted twice: one will do */
                i++;
            while (j < got->n && strcmp(got->v[j], w) == 0)
                j++;
        } else if (c < 0) {
            const char *w = want->v[i];
            (*missing)++;
            while (i < want->n && strcmp(want->v[i], w) == 0)
                i++;
        } else {
            j++;
        }
    }
}

/* Compare a forwarder's input and output by ce_id and append the figures
 * `<what>_published`, `_delivered`, `_missing`, `_duplicated` and
 * `_unknown` to `out` (",..." JSON members). */
static int forwarded(const char *bootstrap, const char *in, const char *out_topic, const char *what,
                     ncmp_buf *out)
{
    strs sent = {0}, got = {0};
    long missing = 0, dup_in = 0, dup_out = 0, unknown = 0;
    int rc = -1;

    if (read_topic(bootstrap, in, scan_ce_ids, &sent) != 0 ||
        read_topic(bootstrap, out_topic, scan_ce_ids, &got) != 0)
        goto done;
    qsort(sent.v, sent.n, sizeof(char *), cmp_str);
    qsort(got.v, got.n, sizeof(char *), cmp_str);
    merge_count(&sent, &got, &missing, &dup_out);
    merge_count(&got, &sent, &unknown, &dup_in);
    ncmp_buf_appendf(out,
                     ",\"%s_published\":%zu,\"%s_delivered\":%zu,\"%s_missing\":%ld,"
                     "\"%s_duplicated\":%ld,\"%s_unknown\":%ld",
                     what, sent.n, what, got.n, what, missing, what,
                     dup_out > dup_in ? dup_out - dup_in : 0, what, unknown);
    rc = 0;
done:
    strs_free(&sent);
    strs_free(&got);
    return rc;
}

static long query_long(ncmp_db *db, const char *sql)
{
    PGresult *res = NULL;
    ncmp_err err;
    long v = -1;

    if (ncmp_db_query(db, sql, 0, NULL, &res, &err) != 0) {
        fprintf(stderr, PROG ": %s: %s\n", sql, err.msg);
        return -1;
    }
    if (PQntuples(res) == 1)
        v = strtol(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    return v;
}

typedef struct figures {
    long events_total, events_duplicated, events_out_of_order, events_missing;
    long handles_with_events;
} figures;

/* Walk each handle's events (sorted by cmp_ev) and compare its last state
 * with the database's (rows of id, state in "C" order). */
static void walk_events(events *evs, PGresult *rows, figures *f)
{
    lcm_ev **by_id = ncmp_xcalloc(evs->n + 1, sizeof(*by_id));
    int nrows = PQntuples(rows), r = 0;
    size_t i = 0;

    /* the same eventId twice: the same outbox row published again */
    for (size_t k = 0; k < evs->n; k++)
        by_id[k] = &evs->v[k];
    qsort(by_id, evs->n, sizeof(*by_id), cmp_ev_id);
    f->events_total = (long)evs->n;
    for (size_t k = 1; k < evs->n; k++)
        if (strcmp(by_id[k - 1]->event_id, by_id[k]->event_id) == 0) {
            by_id[k]->repeat = 1;
            f->events_duplicated++;
        }
    free(by_id);

    qsort(evs->v, evs->n, sizeof(*evs->v), cmp_ev);
    while (i < evs->n || r < nrows) {
        const char *handle;
        ncmp_handle_state cur = NCMP_STATE_NONE, db_state = NCMP_STATE_NONE;
        int c;

        if (i >= evs->n)
            c = 1;
        else if (r >= nrows)
            c = -1;
        else
            c = strcmp(evs->v[i].handle, PQgetvalue(rows, r, 0));
        if (c > 0) { /* in the database, no event at all */
            f->events_missing++;
            r++;
            continue;
        }
        if (c == 0)
            db_state = ncmp_state_parse(PQgetvalue(rows, r++, 1));
        handle = evs->v[i].handle;
        f->handles_with_events++;
        for (; i < evs->n && strcmp(evs->v[i].handle, handle) == 0; i++) {
            const lcm_ev *e = &evs->v[i];
            if (e->repeat)
                continue;
            if (e->kind == 'c') {
                if (cur != NCMP_STATE_NONE)
                    f->events_duplicated++; /* a create of a handle that is there */
                cur = e->new_state;
            } else if (e->kind == 'd') {
                if (cur == NCMP_STATE_NONE)
                    f->events_duplicated++;
                else if (cur != NCMP_STATE_DELETING)
                    f->events_out_of_order++;
                cur = NCMP_STATE_NONE;
            } else if (e->new_state != NCMP_STATE_NONE) { /* not a producer change */
                if (e->old_state != cur) {
                    if (e->new_state == cur)
                        f->events_duplicated++;
                    else
                        f->events_out_of_order++;
                }
                cur = e->new_state;
            }
        }
        if (cur != db_state)
            f->events_missing++;
    }
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"bootstrap", required_argument, NULL, 'b'},
                                             {"db", required_argument, NULL, 'd'},
                                             {"lcm-topic", required_argument, NULL, 'l'},
                                             {"response-topic", required_argument, NULL, 'r'},
                                             {"requests", required_argument, NULL, 'q'},
                                             {"expected", required_argument, NULL, 'e'},
                                             {"avc-in", required_argument, NULL, 'i'},
                                             {"avc-out", required_argument, NULL, 'o'},
                                             {"batch-in", required_argument, NULL, 'I'},
                                             {"batch-out", required_argument, NULL, 'O'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *bootstrap = NULL, *url = NULL, *lcm_topic = NULL, *response_topic = NULL;
    const char *requests_file = NULL, *expected_file = NULL, *avc_in = NULL, *avc_out = NULL;
    const char *batch_in = NULL, *batch_out = NULL;
    strs requests = {0}, outcomes = {0}, expected = {0}, stored = {0};
    ncmp_buf fwd = NCMP_BUF_INIT;
    events evs = {0};
    figures f = {0};
    ncmp_db *db = NULL;
    PGresult *rows = NULL;
    ncmp_err err;
    long outcomes_missing, outcomes_duplicated, handles_missing, handles_unexpected, dup;
    int opt, rc = 1;

    while ((opt = getopt_long(argc, argv, "b:d:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b':
            bootstrap = optarg;
            break;
        case 'd':
            url = optarg;
            break;
        case 'l':
            lcm_topic = optarg;
            break;
        case 'r':
            response_topic = optarg;
            break;
        case 'q':
            requests_file = optarg;
            break;
        case 'e':
            expected_file = optarg;
            break;
        case 'i':
            avc_in = optarg;
            break;
        case 'o':
            avc_out = optarg;
            break;
        case 'I':
            batch_in = optarg;
            break;
        case 'O':
            batch_out = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (!bootstrap || !url || !lcm_topic || !response_topic || !requests_file || !expected_file ||
        !avc_in != !avc_out || !batch_in != !batch_out) {
        fputs(usage, stderr);
        return 2;
    }
    ncmp_log_setup(NCMP_LOG_WARN, NCMP_LOG_TEXT, stderr);
    if (read_words(requests_file, &requests) != 0 || read_words(expected_file, &expected) != 0)
        goto done;
    if (ncmp_db_open(&db, url, NULL, 10, &err) != 0) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        goto done;
    }
    if (read_topic(bootstrap, lcm_topic, scan_lcm, &evs) != 0 ||
        read_topic(bootstrap, response_topic, scan_keys, &outcomes) != 0)
        goto done;
    if ((avc_in && forwarded(bootstrap, avc_in, avc_out, "avc", &fwd) != 0) ||
        (batch_in && forwarded(bootstrap, batch_in, batch_out, "batch", &fwd) != 0))
        goto done;
    if (ncmp_db_query(db, "SELECT id, state FROM cm_handle ORDER BY id COLLATE \"C\"", 0, NULL,
                      &rows, &err) != 0) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        goto done;
    }
    for (int r = 0; r < PQntuples(rows); r++)
        strs_add(&stored, PQgetvalue(rows, r, 0), strlen(PQgetvalue(rows, r, 0)));
    walk_events(&evs, rows, &f);

    qsort(requests.v, requests.n, sizeof(char *), cmp_str);
    qsort(outcomes.v, outcomes.n, sizeof(char *), cmp_str);
    qsort(expected.v, expected.n, sizeof(char *), cmp_str);
    merge_count(&requests, &outcomes, &outcomes_missing, &outcomes_duplicated);
    merge_count(&expected, &stored, &handles_missing, &dup);
    merge_count(&stored, &expected, &handles_unexpected, &dup);
    printf("{\"handles_expected\":%zu,\"handles_stored\":%zu,\"handles_missing\":%ld,"
           "\"handles_unexpected\":%ld,\"duplicate_alternate_ids\":%ld,"
           "\"events_total\":%ld,\"events_missing\":%ld,\"events_duplicated\":%ld,"
           "\"events_out_of_order\":%ld,\"handles_with_events\":%ld,"
           "\"outcomes_expected\":%zu,\"outcomes_received\":%zu,\"outcomes_missing\":%ld,"
           "\"outcomes_duplicated\":%ld,\"stuck\":%ld,\"outbox_left\":%ld%s}\n",
           expected.n, stored.n, handles_missing, handles_unexpected,
           query_long(db, "SELECT count(alternate_id) - count(DISTINCT alternate_id) FROM "
                          "cm_handle"),
           f.events_total, f.events_missing, f.events_duplicated, f.events_out_of_order,
           f.handles_with_events, requests.n, outcomes.n, outcomes_missing, outcomes_duplicated,
           query_long(db, "SELECT count(*) FROM cm_handle WHERE state <> 'READY' AND NOT (state "
                          "= 'LOCKED' AND lock_reason IS NOT NULL)"),
           query_long(db, "SELECT count(*) FROM lcm_outbox"), fwd.len ? fwd.data : "");
    rc = 0;
done:
    PQclear(rows);
    ncmp_db_close(db);
    for (size_t i = 0; i < evs.n; i++) {
        free(evs.v[i].handle);
        free(evs.v[i].event_id);
    }
    free(evs.v);
    strs_free(&requests);
    strs_free(&outcomes);
    strs_free(&expected);
    strs_free(&stored);
    ncmp_buf_free(&fwd);
    return rc;
}
