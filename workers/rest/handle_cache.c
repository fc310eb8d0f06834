#include "handle_cache.h"

#include <json-c/json.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_json.h"
#include "ncmp_kafka.h"
#include "ncmp_kafka_config.h"
#include "ncmp_log.h"
#include "ncmp_text.h"
#include "ncmp_pgarray.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"
#include "rest_json.h"

#define LOAD_BLOCK_ROWS 10000
#define POLL_BATCH      2000
#define INITIAL_BUCKETS 1024

/* What a data request needs, in this order (cache_row reads by position). */
#define CACHE_COLUMNS                                                                              \
    "h.id, COALESCE(h.alternate_id, ''), h.state,"                                                 \
    " CASE WHEN h.dmi_data_service_name <> '' THEN h.dmi_data_service_name"                        \
    " ELSE h.dmi_service_name END, h.module_set_tag, h.additional_properties::text,"               \
    " h.data_producer_identifier,"                                                                 \
    " CASE WHEN h.dmi_datajobs_write_service <> '' THEN h.dmi_datajobs_write_service"              \
    " ELSE h.dmi_service_name END,"                                                                \
    " CASE WHEN h.dmi_datajobs_read_service <> '' THEN h.dmi_datajobs_read_service"                \
    " ELSE h.dmi_service_name END"

static const char SQL_LOAD[] =
    "DECLARE handle_cache_load NO SCROLL CURSOR FOR SELECT " CACHE_COLUMNS " FROM cm_handle h";

static const char SQL_FETCH[] = "SELECT " CACHE_COLUMNS " FROM cm_handle h"
                                " WHERE h.id = ANY($1::text[]) OR h.alternate_id = ANY($1::text[])";

typedef struct entry {
    char *id, *alt, *dmi, *props, *tag, *dpi, *jw, *jr;
    ncmp_handle_state state;
    int complete;       /* dmi and props known (a create event carries neither) */
    size_t h_id, h_alt; /* hash(id), hash(alt) */
    struct entry *next_id, *next_alt;
} entry;

struct handle_cache {
    const ncmp_config *cfg;
    pthread_rwlock_t lock;
    entry **by_id, **by_alt; /* chained, nbuckets each (a power of two) */
    size_t nbuckets, count;
    unsigned long deletes; /* handles removed so far (handle_cache_fetch's guard) */
    ncmp_db *db;           /* the event thread's */
    rd_kafka_t *consumer;
    pthread_t thread;
    int running;
    atomic_int stop; /* set by the stopping thread, read by the reader thread */
};

/* --- the table (callers hold the lock) ----------------------------------- */

static size_t hash_n(const char *s, size_t n)
{
    return (size_t)ncmp_hash(s, n);
}

static size_t hash(const char *s)
{
    return hash_n(s, strlen(s));
}

static int same(const char *key, const char *s, size_t n)
{
    return strncmp(key, s, n) == 0 && key[n] == '\0';
}

/* The entry whose id, else whose alternate id, is s[0..n), whose hash is h. */
static entry *find_n(handle_cache *hc, const char *s, size_t n, size_t h)
{
    entry *e = hc->by_id[h & (hc->nbuckets - 1)];

    while (e && (e->h_id != h || !same(e->id, s, n)))
        e = e->next_id;
    if (e)
        return e;
    e = hc->by_alt[h & (hc->nbuckets - 1)];
    while (e && (e->h_alt != h || !same(e->alt, s, n)))
        e = e->next_alt;
    return e;
}

static entry *find_id(handle_cache *hc, const char *id)
{
    size_t h = hash(id);
    entry *e = hc->by_id[h & (hc->nbuckets - 1)];

    while (e && (e->h_id != h || strcmp(e->id, id) != 0))
        e = e->next_id;
    return e;
}

static void link_alt(handle_cache *hc, entry *e)
{
    size_t b;

    if (!*e->alt)
        return;
    e->h_alt = hash(e->alt);
    b = e->h_alt & (hc->nbuckets - 1);
    e->next_alt = hc->by_alt[b];
    hc->by_alt[b] = e;
}

static void unlink_alt(handle_cache *hc, entry *e)
{
    entry **pp;

    if (!*e->alt)
        return;
    pp = &hc->by_alt[e->h_alt & (hc->nbuckets - 1)];
    while (*pp && *pp != e)
        pp = &(*pp)->next_alt;
    if (*pp)
        *pp = e->next_alt;
}

static void grow(handle_cache *hc)
{
    size_t old = hc->nbuckets;
    entry **ids = hc->by_id;

    hc->nbuckets *= 2;
    hc->by_id = ncmp_xcalloc(hc->nbuckets, sizeof(entry *));
    free(hc->by_alt);
    hc->by_alt = ncmp_xcalloc(hc->nbuckets, sizeof(entry *));
    for (size_t i = 0; i < old; i++) {
        for (entry *e = ids[i], *next; e; e = next) {
            size_t b = e->h_id & (hc->nbuckets - 1);
            next = e->next_id;
            e->next_id = hc->by_id[b];
            hc->by_id[b] = e;
            link_alt(hc, e);
        }
    }
    free(ids);
}

static void entry_free(entry *e)
{
    free(e->id);
    free(e->alt);
    free(e->dmi);
    free(e->props);
    free(e->tag);
    free(e->dpi);
    free(e->jw);
    free(e->jr);
    free(e);
}

static void set_str(char **field, const char *value)
{
    if (*field && strcmp(*field, value) == 0)
        return;
    free(*field);
    *field = ncmp_xstrdup(value);
}

/* The entry of `id`, created (incomplete) when absent. */
static entry *upsert(handle_cache *hc, const char *id)
{
    entry *e = find_id(hc, id);
    size_t b;

    if (e)
        return e;
    if (hc->count >= hc->nbuckets)
        grow(hc);
    e = ncmp_xcalloc(1, sizeof(*e));
    e->id = ncmp_xstrdup(id);
    e->alt = ncmp_xstrdup("");
    e->dmi = ncmp_xstrdup("");
    e->props = ncmp_xstrdup("{}");
    e->tag = ncmp_xstrdup("");
    e->dpi = ncmp_xstrdup("");
    e->jw = ncmp_xstrdup("");
    e->jr = ncmp_xstrdup("");
    e->h_id = hash(id);
    b = e->h_id & (hc->nbuckets - 1);
    e->next_id = hc->by_id[b];
    hc->by_id[b] = e;
    hc->count++;
    return e;
}

static void set_alt(handle_cache *hc, entry *e, const char *alt)
{
    if (strcmp(e->alt, alt) == 0)
        return;
    unlink_alt(hc, e);
    set_str(&e->alt, alt);
    link_alt(hc, e);
}

static void remove_id(handle_cache *hc, const char *id)
{
    entry **pp = &hc->by_id[hash(id) & (hc->nbuckets - 1)];

    while (*pp && strcmp((*pp)->id, id) != 0)
        pp = &(*pp)->next_id;
    if (*pp) {
        entry *e = *pp;
        *pp = e->next_id;
        unlink_alt(hc, e);
        entry_free(e);
        hc->count--;
    }
    hc->deletes++;
}

/* Row `row` of a CACHE_COLUMNS result into the map, complete. */
static entry *apply_row(handle_cache *hc, const PGresult *res, int row)
{
    entry *e = upsert(hc, PQgetvalue(res, row, 0));
    ncmp_buf props = NCMP_BUF_INIT;

    set_alt(hc, e, PQgetvalue(res, row, 1));
    e->state = ncmp_state_parse(PQgetvalue(res, row, 2));
    set_str(&e->dmi, PQgetvalue(res, row, 3));
    set_str(&e->tag, PQgetvalue(res, row, 4));
    rest_json_append_compact(&props, PQgetvalue(res, row, 5));
    set_str(&e->props, props.data ? props.data : "{}");
    ncmp_buf_free(&props);
    set_str(&e->dpi, PQgetvalue(res, row, 6));
    set_str(&e->jw, PQgetvalue(res, row, 7));
    set_str(&e->jr, PQgetvalue(res, row, 8));
    e->complete = 1;
    return e;
}

/* A view of entry e: its strings borrowed (under the lock). */
static handle_info view_of(const entry *e)
{
    handle_info v = {e->id, e->alt, e->dmi, e->props, e->tag, e->dpi, e->jw, e->jr, e->state};
    return v;
}

static void copy_out(const handle_info *h, void *arg)
{
    handle_info *out = arg;

    out->id = ncmp_xstrdup(h->id);
    out->alternate_id = ncmp_xstrdup(h->alternate_id);
    out->dmi = ncmp_xstrdup(h->dmi);
    out->properties = ncmp_xstrdup(h->properties);
    out->module_set_tag = ncmp_xstrdup(h->module_set_tag);
    out->data_producer = ncmp_xstrdup(h->data_producer);
    out->datajobs_write = ncmp_xstrdup(h->datajobs_write);
    out->datajobs_read = ncmp_xstrdup(h->datajobs_read);
    out->state = h->state;
}

static void info_from(handle_info *out, const entry *e)
{
    handle_info v = view_of(e);
    copy_out(&v, out);
}

void handle_info_free(handle_info *h)
{
    free(h->id);
    free(h->alternate_id);
    free(h->dmi);
    free(h->properties);
    free(h->module_set_tag);
    free(h->data_producer);
    free(h->datajobs_write);
    free(h->datajobs_read);
    memset(h, 0, sizeof(*h));
}

/* --- lookups ------------------------------------------------------------- */

int handle_cache_get(handle_cache *hc, const char *ref, handle_info *out)
{
    entry *e;
    int found = 0;

    pthread_rwlock_rdlock(&hc->lock);
    e = find_n(hc, ref, strlen(ref), hash(ref));
    if (e && e->complete) {
        info_from(out, e);
        found = 1;
    }
    pthread_rwlock_unlock(&hc->lock);
    return found;
}

char **handle_candidates(const char *ref, size_t *n)
{
    size_t len = strcspn(ref, "#"), cap = 4;
    char **out = ncmp_xcalloc(cap, sizeof(*out));

    *n = 0;
    while (len > 0) {
        if (*n == cap) {
            cap *= 2;
            out = ncmp_xrealloc(out, cap * sizeof(*out));
        }
        out[*n] = ncmp_xmalloc(len + 1);
        memcpy(out[*n], ref, len);
        out[(*n)++][len] = '\0';
        while (len > 0 && ref[len - 1] != '/')
            len--;
        if (len > 0)
            len--; /* the parent path, without its trailing '/' */
    }
    return out;
}

void handle_candidates_free(char **c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(c[i]);
    free(c);
}

#define MAX_CUTS 64 /* candidates hashed in one pass; more are hashed alone */

int handle_cache_longest_with(handle_cache *hc, const char *ref, size_t len,
                              void (*fn)(const handle_info *h, void *arg), void *arg)
{
    const char *hash_at = memchr(ref, '#', len);
    size_t cut[MAX_CUTS], cut_hash[MAX_CUTS], ncut = 0;
    uint64_t h = NCMP_FNV_BASIS;
    entry *e = NULL;

    if (hash_at)
        len = (size_t)(hash_at - ref);
    /* every candidate's hash in one pass: the parent paths end before a
     * '/' (handle_candidates), the whole reference at len */
    for (size_t i = 0; i < len; i++) {
        if (ref[i] == '/' && i > 0 && ncut < MAX_CUTS) {
            cut[ncut] = i;
            cut_hash[ncut++] = (size_t)h;
        }
        h = NCMP_FNV_STEP(h, ref[i]);
    }
    pthread_rwlock_rdlock(&hc->lock);
    /* longest first */
    for (int first = 1; len > 0; first = 0) {
        size_t lh = first                          ? (size_t)h
                    : ncut && cut[ncut - 1] == len ? cut_hash[ncut - 1]
                                                   : hash_n(ref, len);
        e = find_n(hc, ref, len, lh);
        if (e && e->complete)
            break;
        e = NULL;
        while (len > 0 && ref[len - 1] != '/')
            len--;
        if (len > 0)
            len--; /* the parent path, without its trailing '/' */
        while (ncut && cut[ncut - 1] > len)
            ncut--;
    }
    if (e) {
        handle_info v = view_of(e);
        fn(&v, arg);
    }
    pthread_rwlock_unlock(&hc->lock);
    return e != NULL;
}

int handle_cache_longest(handle_cache *hc, const char *ref, handle_info *out)
{
    return handle_cache_longest_with(hc, ref, strlen(ref), copy_out, out);
}

size_t handle_cache_containing(handle_cache *hc, const char *term,
                               void (*fn)(const handle_info *h, void *arg), void *arg)
{
    size_t n = 0;

    pthread_rwlock_rdlock(&hc->lock);
    for (size_t b = 0; b < hc->nbuckets; b++)
        for (const entry *e = hc->by_id[b]; e; e = e->next_id) {
            handle_info h;
            if (!e->complete || (!strstr(e->id, term) && !strstr(e->alt, term)))
                continue;
            info_from(&h, e);
            fn(&h, arg);
            handle_info_free(&h);
            n++;
        }
    pthread_rwlock_unlock(&hc->lock);
    return n;
}

int handle_cache_serves_datajobs(handle_cache *hc, const char *dmi)
{
    int found = 0;

    pthread_rwlock_rdlock(&hc->lock);
    for (size_t b = 0; b < hc->nbuckets && !found; b++)
        for (const entry *e = hc->by_id[b]; e && !found; e = e->next_id)
            found = e->complete && (strcmp(e->jw, dmi) == 0 || strcmp(e->jr, dmi) == 0);
    pthread_rwlock_unlock(&hc->lock);
    return found;
}

/* Which input reference does row `row` answer? Ids first. */
static void fetch_match(const PGresult *res, int row, const char *const *refs, size_t n,
                        handle_info *out, int *found, const entry *e)
{
    const char *id = PQgetvalue(res, row, 0), *alt = PQgetvalue(res, row, 1);

    for (size_t i = 0; i < n; i++) {
        int by_id = strcmp(refs[i], id) == 0;
        if (!by_id && (!*alt || strcmp(refs[i], alt) != 0))
            continue;
        if (found[i] == 1 || (found[i] == 2 && !by_id))
            continue;
        if (found[i])
            handle_info_free(&out[i]);
        info_from(&out[i], e);
        found[i] = by_id ? 1 : 2; /* 2: by alternate id, an id may still win */
    }
}

int handle_cache_fetch(handle_cache *hc, ncmp_db *db, const char *const *refs, size_t n,
                       handle_info *out, int *found, ncmp_err *err)
{
    ncmp_buf arr = NCMP_BUF_INIT;
    const char *params[1];
    PGresult *res = NULL;
    unsigned long deletes;
    int rc;

    memset(found, 0, n * sizeof(*found));
    if (n == 0)
        return 0;
    pthread_rwlock_rdlock(&hc->lock);
    deletes = hc->deletes;
    pthread_rwlock_unlock(&hc->lock);
    ncmp_pgarray_text(&arr, refs, n);
    params[0] = arr.data;
    rc = ncmp_db_query(db, SQL_FETCH, 1, params, &res, err);
    ncmp_buf_free(&arr);
    if (rc != 0)
        return ncmp_err_prefix(err, "handle lookup");
    pthread_rwlock_wrlock(&hc->lock);
    for (int row = 0; row < PQntuples(res); row++) {
        /* a delete applied since the query started may concern this row:
         * then answer from it but leave the map alone */
        entry tmp, *e = find_id(hc, PQgetvalue(res, row, 0));
        if (hc->deletes == deletes && (!e || !e->complete))
            e = apply_row(hc, res, row);
        else if (e && !e->complete)
            e = NULL;
        if (!e) {
            memset(&tmp, 0, sizeof(tmp));
            tmp.id = PQgetvalue(res, row, 0);
            tmp.alt = PQgetvalue(res, row, 1);
            tmp.state = ncmp_state_parse(PQgetvalue(res, row, 2));
            tmp.dmi = PQgetvalue(res, row, 3);
            tmp.tag = PQgetvalue(res, row, 4);
            tmp.props = PQgetvalue(res, row, 5);
            tmp.dpi = PQgetvalue(res, row, 6);
            tmp.jw = PQgetvalue(res, row, 7);
            tmp.jr = PQgetvalue(res, row, 8);
            e = &tmp;
        }
        fetch_match(res, row, refs, n, out, found, e);
    }
    pthread_rwlock_unlock(&hc->lock);
    PQclear(res);
    for (size_t i = 0; i < n; i++)
        found[i] = found[i] != 0;
    return 0;
}

/* --- loading ------------------------------------------------------------- */

static int load_table(handle_cache *hc, ncmp_err *err)
{
    PGresult *res = NULL;
    char fetch[64];
    int rows;

    snprintf(fetch, sizeof(fetch), "FETCH %d FROM handle_cache_load", LOAD_BLOCK_ROWS);
    if (ncmp_db_exec(hc->db, "BEGIN READ ONLY", err) != 0 || ncmp_db_exec(hc->db, SQL_LOAD, err))
        goto fail;
    do {
        if (ncmp_db_query(hc->db, fetch, 0, NULL, &res, err) != 0)
            goto fail;
        rows = PQntuples(res);
        pthread_rwlock_wrlock(&hc->lock);
        for (int row = 0; row < rows; row++)
            apply_row(hc, res, row);
        pthread_rwlock_unlock(&hc->lock);
        PQclear(res);
    } while (rows == LOAD_BLOCK_ROWS);
    return ncmp_db_commit(hc->db, err);
fail:
    ncmp_db_rollback(hc->db);
    return ncmp_err_prefix(err, "handle cache: loading cm_handle");
}

/* A reader of every partition of the lifecycle topic from its end now:
 * the events after that are fetched while the table loads. */
static int consumer_new(handle_cache *hc, ncmp_err *err)
{
    char group[300];
    ncmp_kafka_opts kopts;

    snprintf(group, sizeof(group), "%s-handle-cache", hc->cfg->kafka_group_id);
    ncmp_kafka_opts_from_config(&kopts, hc->cfg);
    if (ncmp_kafka_tail_reader_new(&hc->consumer, &kopts, "ncmpd-handle-cache", group,
                                   hc->cfg->lcm_topic, 30000, err) != 0)
        return ncmp_err_prefix(err, "handle cache: lifecycle topic %s", hc->cfg->lcm_topic);
    return 0;
}

/* --- applying lifecycle events (the event thread) ------------------------ */

typedef struct lcm_change {
    const char *id, *alt, *tag, *dpi, *state; /* borrowed from the parsed event */
    char kind;                                /* 'c'reate, 'u'pdate, 'd'elete */
} lcm_change;

static const char *json_str(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

/* Parse one event into *c (strings borrowed from *doc, owned by the
 * caller). -1 when it is not an LCM event. Either format: v1 repeats
 * moduleSetTag and dataProducerIdentifier in `event`, v2 gives them in
 * newValues on a create and where they changed. */
static int lcm_parse(const rd_kafka_message_t *m, json_object **doc, lcm_change *c)
{
    json_object *ev, *nv;
    const char *type;
    ncmp_err err;

    *doc = NULL;
    if (!m->payload || ncmp_json_parse(m->payload, m->len, doc, &err) != 0 || !*doc)
        return -1;
    type = json_str(*doc, "eventType");
    if (!type || !json_object_object_get_ex(*doc, "event", &ev) ||
        !(c->id = json_str(ev, "cmHandleId")))
        return -1;
    c->kind = strstr(type, ".create") ? 'c' : strstr(type, ".delete") ? 'd' : 'u';
    if (!json_object_object_get_ex(ev, "newValues", &nv))
        nv = NULL;
    c->alt = json_str(ev, "alternateId");
    if (!(c->tag = json_str(ev, "moduleSetTag")))
        c->tag = json_str(nv, "moduleSetTag");
    if (!(c->dpi = json_str(ev, "dataProducerIdentifier")))
        c->dpi = json_str(nv, "dataProducerIdentifier");
    c->state = json_str(nv, "cmHandleState");
    return 0;
}

/* Apply one change; returns 1 when the handle must be completed from the
 * database. Caller holds the write lock. */
static int apply_change(handle_cache *hc, const lcm_change *c)
{
    entry *e;
    int needs;

    if (c->kind == 'd') {
        remove_id(hc, c->id);
        return 0;
    }
    e = find_id(hc, c->id);
    needs = !e || !e->complete || c->kind == 'c';
    if (c->kind == 'c' && e)
        e->complete = 0; /* registered again: DMI and properties may differ */
    e = upsert(hc, c->id);
    if (c->alt)
        set_alt(hc, e, c->alt);
    if (c->tag)
        set_str(&e->tag, c->tag);
    if (c->dpi)
        set_str(&e->dpi, c->dpi);
    if (c->state && ncmp_state_parse(c->state) != NCMP_STATE_NONE)
        e->state = ncmp_state_parse(c->state);
    return needs;
}

/* Complete the incomplete handles of ids[0..n) from the database; those
 * it no longer has are gone (their delete event follows). */
static void complete_from_db(handle_cache *hc, char **ids, size_t n)
{
    ncmp_buf arr = NCMP_BUF_INIT;
    const char *params[1];
    PGresult *res = NULL;
    ncmp_err err;

    ncmp_pgarray_text(&arr, (const char *const *)ids, n);
    params[0] = arr.data;
    if (ncmp_db_query(hc->db, SQL_FETCH, 1, params, &res, &err) != 0) {
        /* left incomplete: requests for them fall back to the database */
        log_warn("handle-cache", "completing %zu handles: %s", n, err.msg);
        ncmp_buf_free(&arr);
        return;
    }
    pthread_rwlock_wrlock(&hc->lock);
    for (int row = 0; row < PQntuples(res); row++)
        if (find_id(hc, PQgetvalue(res, row, 0)))
            apply_row(hc, res, row);
    for (size_t i = 0; i < n; i++) {
        entry *e = find_id(hc, ids[i]);
        if (e && !e->complete)
            remove_id(hc, ids[i]);
    }
    pthread_rwlock_unlock(&hc->lock);
    PQclear(res);
    ncmp_buf_free(&arr);
}

static void apply_batch(handle_cache *hc, rd_kafka_message_t **msgs, size_t n)
{
    char **ids = ncmp_xcalloc(n ? n : 1, sizeof(char *));
    size_t nids = 0;

    pthread_rwlock_wrlock(&hc->lock);
    for (size_t i = 0; i < n; i++) {
        json_object *doc = NULL;
        lcm_change c = {0};
        if (lcm_parse(msgs[i], &doc, &c) != 0) {
            log_debug("handle-cache", "not a lifecycle event: partition=%d offset=%lld",
                      (int)msgs[i]->partition, (long long)msgs[i]->offset);
        } else if (apply_change(hc, &c)) {
            ids[nids++] = ncmp_xstrdup(c.id);
        }
        json_object_put(doc);
    }
    pthread_rwlock_unlock(&hc->lock);
    if (nids)
        complete_from_db(hc, ids, nids);
    for (size_t i = 0; i < nids; i++)
        free(ids[i]);
    free(ids);
}

static void *event_thread(void *arg)
{
    handle_cache *hc = arg;
    rd_kafka_message_t **msgs = ncmp_xcalloc(POLL_BATCH, sizeof(*msgs));

    while (!atomic_load(&hc->stop)) {
        size_t n = 0;
        rd_kafka_message_t *m = rd_kafka_consumer_poll(hc->consumer, 100);
        /* take what is already there too: one database query per batch */
        while (m) {
            if (!m->err)
                msgs[n++] = m;
            else {
                if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                    log_warn("handle-cache", "%s", rd_kafka_message_errstr(m));
                rd_kafka_message_destroy(m);
            }
            m = n < POLL_BATCH ? rd_kafka_consumer_poll(hc->consumer, 0) : NULL;
        }
        apply_batch(hc, msgs, n);
        for (size_t i = 0; i < n; i++)
            rd_kafka_message_destroy(msgs[i]);
    }
    free(msgs);
    return NULL;
}

/* --- start and stop ------------------------------------------------------ */

int handle_cache_start(handle_cache **out, const ncmp_config *cfg, ncmp_err *err)
{
    handle_cache *hc = ncmp_xcalloc(1, sizeof(*hc));
    double t0 = ncmp_now_ms();

    hc->cfg = cfg;
    pthread_rwlock_init(&hc->lock, NULL);
    hc->nbuckets = INITIAL_BUCKETS;
    hc->by_id = ncmp_xcalloc(hc->nbuckets, sizeof(entry *));
    hc->by_alt = ncmp_xcalloc(hc->nbuckets, sizeof(entry *));
    /* the order matters: end offsets, then the table, then the events */
    if (ncmp_db_open(&hc->db, cfg->db_url, cfg->db_password, cfg->db_connect_timeout_s, err) != 0 ||
        consumer_new(hc, err) != 0 || load_table(hc, err) != 0)
        goto fail;
    if (pthread_create(&hc->thread, NULL, event_thread, hc) != 0) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "handle cache: cannot start its thread");
        goto fail;
    }
    hc->running = 1;
    log_info("handle-cache", "%zu handles loaded in %.0f ms; following %s", hc->count,
             ncmp_now_ms() - t0, cfg->lcm_topic);
    *out = hc;
    return 0;
fail:
    handle_cache_stop(hc);
    return -1;
}

void handle_cache_stop(handle_cache *hc)
{
    if (!hc)
        return;
    atomic_store(&hc->stop, 1);
    if (hc->running)
        pthread_join(hc->thread, NULL);
    ncmp_kafka_reader_close(hc->consumer);
    ncmp_db_close(hc->db);
    for (size_t i = 0; hc->by_id && i < hc->nbuckets; i++)
        for (entry *e = hc->by_id[i], *next; e; e = next) {
            next = e->next_id;
            entry_free(e);
        }
    free(hc->by_id);
    free(hc->by_alt);
    pthread_rwlock_destroy(&hc->lock);
    free(hc);
}
