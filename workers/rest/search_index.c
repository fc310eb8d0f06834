#include "search_index.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_db.h"
#include "ncmp_json.h"
#include "ncmp_log.h"
#include "ncmp_metrics.h"
#include "ncmp_pgarray.h"
#include "ncmp_text.h"
#include "ncmp_time.h"
#include "rest_db.h"
#include "rest_json.h"

/* REST_HANDLE_COLUMNS, then what the conditions need besides */
#define SX_COLUMNS                                                                                 \
    REST_HANDLE_COLUMNS ", h.module_set_id::text, h.dmi_service_name, h.dmi_data_service_name,"    \
                        " h.dmi_model_service_name"
/* positions in SX_COLUMNS of the columns after REST_HANDLE_COLUMNS' (whose
 * own are REST_COL_*) */
enum {
    SX_COL_MODULE_SET = REST_COL_COUNT,
    SX_COL_DMI, /* the three services, in this order */
    SX_COL_DMI_DATA,
    SX_COL_DMI_MODEL,
};

#define RETENTION        "15 minutes"
#define RETENTION_MS     (15 * 60 * 1000.0)
#define CLEANUP_EVERY_MS 60000.0
#define STREAM_BLOCK     (64 * 1024)
#define REFRESH_MS       1000.0 /* the loader thread's reads between searches */
/* Load everything again (which packs the rows) when the blocks hold more
 * than twice the rows the handles need, plus this many. */
#define COMPACT_ABOVE 20000
#define MAX_CONDS     16     /* a body has at most 6 (one per condition name) */
#define WAIT_MS       1000.0 /* a search's longest wait for another read */
#define NONE          UINT32_MAX

/* --- rows, shared with the answers being sent ---------------------------- */

/* Rows as the database returned them; freed when no handle and no answer
 * refers to any of them. */
typedef struct block {
    PGresult *res;
    atomic_long refs;
} block;

/* Bytes and rows held in blocks, by the index and the answers being
 * sent: a block lives while one of its rows does, so after many updates
 * the rows held outnumber the handles (see COMPACT_ABOVE). */
static atomic_size_t rows_bytes, rows_held;

static block *block_new(PGresult *res)
{
    block *b = ncmp_xcalloc(1, sizeof(*b));

    b->res = res;
    atomic_fetch_add(&rows_bytes, PQresultMemorySize(res));
    atomic_fetch_add(&rows_held, (size_t)PQntuples(res));
    atomic_init(&b->refs, 1); /* the reader's, dropped once applied */
    return b;
}

static void block_ref(block *b)
{
    atomic_fetch_add(&b->refs, 1);
}

static void block_unref(block *b)
{
    if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
        atomic_fetch_sub(&rows_bytes, PQresultMemorySize(b->res));
        atomic_fetch_sub(&rows_held, (size_t)PQntuples(b->res));
        PQclear(b->res);
        free(b);
    }
}

/* A properties object as pairs: kv[2i] the name, kv[2i+1] its value; in
 * one allocation. Only string values are kept (the conditions compare
 * strings). */
typedef struct pairs {
    int n;
    unsigned size; /* of the allocation */
    const char *kv[];
} pairs;

static pairs *pairs_parse(const char *json)
{
    json_object *o = NULL;
    ncmp_err err;
    size_t bytes = 0;
    int n = 0;
    pairs *p;
    char *at;

    if (!json || ncmp_json_parse(json, strlen(json), &o, &err) != 0)
        return NULL;
    if (!json_object_is_type(o, json_type_object) || json_object_object_length(o) == 0) {
        json_object_put(o);
        return NULL;
    }
    json_object_object_foreach(o, k1, v1)
    {
        if (json_object_is_type(v1, json_type_string)) {
            bytes += strlen(k1) + 1 + (size_t)json_object_get_string_len(v1) + 1;
            n++;
        }
    }
    bytes += sizeof(*p) + 2 * (size_t)n * sizeof(char *);
    p = ncmp_xcalloc(1, bytes);
    p->size = (unsigned)bytes;
    at = (char *)&p->kv[2 * n];
    json_object_object_foreach(o, k2, v2)
    {
        size_t lk = strlen(k2), lv;
        if (!json_object_is_type(v2, json_type_string))
            continue;
        lv = (size_t)json_object_get_string_len(v2);
        memcpy(at, k2, lk + 1);
        p->kv[2 * p->n] = at;
        at += lk + 1;
        memcpy(at, json_object_get_string(v2), lv + 1);
        p->kv[2 * p->n + 1] = at;
        at += lv + 1;
        p->n++;
    }
    json_object_put(o);
    return p;
}

static size_t pairs_size(const pairs *p)
{
    return p ? p->size : 0;
}

static int pairs_have(const pairs *p, const char *key, const char *value)
{
    for (int i = 0; p && i < p->n; i++)
        if (strcmp(p->kv[2 * i], key) == 0)
            return strcmp(p->kv[2 * i + 1], value) == 0;
    return 0;
}

/* --- the content: handles and module sets -------------------------------- */

/* The state and the trust level of a handle as the index of their text
 * in content.words, so that a condition on them reads no row (a scan of
 * 1,000,000 rows costs a cache miss per row read). */
#define WORD_NULL  255 /* SQL NULL */
#define WORD_OTHER 254 /* not in words (more than MAX_WORDS texts): read the row */
#define WORD_NONE  253 /* a condition's value no handle has */
#define MAX_WORDS  253

typedef struct entry {
    block *b; /* NULL: a free slot */
    int row;
    uint32_t mset; /* NONE: no module set */
    uint32_t next; /* the next slot of its bucket */
    uint64_t h;    /* hash of the id */
    pairs *pub, *add;
    uint8_t state, trust; /* WORD_* or an index in words */
} entry;

typedef struct mset {
    char *id;
    char **names; /* sorted */
    int n;
    uint32_t next;
    uint64_t h;
} mset;

typedef struct content {
    entry *slots;
    uint32_t nslots, cap;
    uint32_t *free_slots;
    uint32_t nfree, free_cap;
    uint32_t *buckets; /* nbuckets, a power of two */
    uint32_t nbuckets;
    size_t count;
    mset *msets;
    uint32_t nmsets, mcap;
    uint32_t *mbuckets;
    uint32_t nmbuckets;
    size_t pair_bytes; /* of every handle's pairs */
    char *words[MAX_WORDS];
    int nwords;
} content;

static const char *entry_id(const entry *e)
{
    return PQgetvalue(e->b->res, e->row, REST_COL_ID);
}

static const char *entry_col(const entry *e, int c)
{
    return PQgetisnull(e->b->res, e->row, c) ? NULL : PQgetvalue(e->b->res, e->row, c);
}

static content *content_new(void)
{
    content *c = ncmp_xcalloc(1, sizeof(*c));

    c->nbuckets = 1024;
    c->buckets = ncmp_xmalloc(c->nbuckets * sizeof(*c->buckets));
    memset(c->buckets, 0xff, c->nbuckets * sizeof(*c->buckets));
    c->nmbuckets = 256;
    c->mbuckets = ncmp_xmalloc(c->nmbuckets * sizeof(*c->mbuckets));
    memset(c->mbuckets, 0xff, c->nmbuckets * sizeof(*c->mbuckets));
    return c;
}

static void mset_clear(mset *m)
{
    for (int i = 0; i < m->n; i++)
        free(m->names[i]);
    free(m->names);
    m->names = NULL;
    m->n = 0;
}

static void content_free(content *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->nslots; i++)
        if (c->slots[i].b) {
            block_unref(c->slots[i].b);
            free(c->slots[i].pub);
            free(c->slots[i].add);
        }
    for (uint32_t i = 0; i < c->nmsets; i++) {
        mset_clear(&c->msets[i]);
        free(c->msets[i].id);
    }
    for (int i = 0; i < c->nwords; i++)
        free(c->words[i]);
    free(c->slots);
    free(c->free_slots);
    free(c->buckets);
    free(c->msets);
    free(c->mbuckets);
    free(c);
}

static uint32_t find(const content *c, const char *id, uint64_t h)
{
    uint32_t i = c->buckets[h & (c->nbuckets - 1)];

    while (i != NONE && (c->slots[i].h != h || strcmp(entry_id(&c->slots[i]), id) != 0))
        i = c->slots[i].next;
    return i;
}

static void unlink_slot(content *c, uint32_t s)
{
    uint32_t *pp = &c->buckets[c->slots[s].h & (c->nbuckets - 1)];

    while (*pp != s)
        pp = &c->slots[*pp].next;
    *pp = c->slots[s].next;
}

static void grow_buckets(content *c)
{
    uint32_t n = c->nbuckets * 2;

    free(c->buckets);
    c->buckets = ncmp_xmalloc(n * sizeof(*c->buckets));
    memset(c->buckets, 0xff, n * sizeof(*c->buckets));
    c->nbuckets = n;
    for (uint32_t i = 0; i < c->nslots; i++) {
        entry *e = &c->slots[i];
        if (!e->b)
            continue;
        e->next = c->buckets[e->h & (n - 1)];
        c->buckets[e->h & (n - 1)] = i;
    }
}

/* The module set `id` of `c`, or NONE. */
static uint32_t mset_lookup(const content *c, const char *id, uint64_t h)
{
    uint32_t i = c->mbuckets[h & (c->nmbuckets - 1)];

    while (i != NONE && (c->msets[i].h != h || strcmp(c->msets[i].id, id) != 0))
        i = c->msets[i].next;
    return i;
}

/* The same, added (empty) when absent and `create`. */
static uint32_t mset_find(content *c, const char *id, int create)
{
    uint64_t h = ncmp_hash(id, strlen(id));
    uint32_t i = mset_lookup(c, id, h);
    mset *m;

    if (i != NONE || !create)
        return i;
    if (c->nmsets == c->mcap) {
        c->mcap = c->mcap ? c->mcap * 2 : 64;
        c->msets = ncmp_xrealloc(c->msets, c->mcap * sizeof(*c->msets));
    }
    if (c->nmsets >= c->nmbuckets) {
        uint32_t n = c->nmbuckets * 2;
        free(c->mbuckets);
        c->mbuckets = ncmp_xmalloc(n * sizeof(*c->mbuckets));
        memset(c->mbuckets, 0xff, n * sizeof(*c->mbuckets));
        c->nmbuckets = n;
        for (uint32_t k = 0; k < c->nmsets; k++) {
            c->msets[k].next = c->mbuckets[c->msets[k].h & (n - 1)];
            c->mbuckets[c->msets[k].h & (n - 1)] = k;
        }
    }
    i = c->nmsets++;
    m = &c->msets[i];
    memset(m, 0, sizeof(*m));
    m->id = ncmp_xstrdup(id);
    m->h = h;
    m->next = c->mbuckets[h & (c->nmbuckets - 1)];
    c->mbuckets[h & (c->nmbuckets - 1)] = i;
    return i;
}

/* The index of `v` in c->words (added when `add` and there is room), or
 * a WORD_* value. */
static uint8_t word_of(content *c, const char *v, int add)
{
    if (!v)
        return WORD_NULL;
    for (int i = 0; i < c->nwords; i++)
        if (strcmp(c->words[i], v) == 0)
            return (uint8_t)i;
    if (!add)
        return WORD_NONE;
    if (c->nwords == MAX_WORDS)
        return WORD_OTHER;
    c->words[c->nwords] = ncmp_xstrdup(v);
    return (uint8_t)c->nwords++;
}

/* Remove handle `id`, if there. */
static void content_remove(content *c, const char *id)
{
    uint32_t s = find(c, id, ncmp_hash(id, strlen(id)));
    entry *e;

    if (s == NONE)
        return;
    e = &c->slots[s];
    unlink_slot(c, s);
    block_unref(e->b);
    c->pair_bytes -= pairs_size(e->pub) + pairs_size(e->add);
    free(e->pub);
    free(e->add);
    memset(e, 0, sizeof(*e));
    if (c->nfree == c->free_cap) {
        c->free_cap = c->free_cap ? c->free_cap * 2 : 64;
        c->free_slots = ncmp_xrealloc(c->free_slots, c->free_cap * sizeof(*c->free_slots));
    }
    c->free_slots[c->nfree++] = s;
    c->count--;
}

/* Add or replace the handle of row `row` of `b` (which gains a reference). */
static void content_put(content *c, block *b, int row)
{
    const char *id = PQgetvalue(b->res, row, REST_COL_ID);
    uint64_t h = ncmp_hash(id, strlen(id));
    uint32_t s = find(c, id, h);
    entry *e;

    if (s != NONE) {
        e = &c->slots[s];
        block_unref(e->b);
        c->pair_bytes -= pairs_size(e->pub) + pairs_size(e->add);
        free(e->pub);
        free(e->add);
    } else {
        if (c->nfree) {
            s = c->free_slots[--c->nfree];
        } else {
            if (c->nslots == c->cap) {
                c->cap = c->cap ? c->cap * 2 : 1024;
                c->slots = ncmp_xrealloc(c->slots, c->cap * sizeof(*c->slots));
            }
            s = c->nslots++;
        }
        e = &c->slots[s];
        memset(e, 0, sizeof(*e));
        e->h = h;
        e->b = b; /* live from here: grow_buckets moves only live slots */
        e->next = c->buckets[h & (c->nbuckets - 1)];
        c->buckets[h & (c->nbuckets - 1)] = s;
        if (++c->count > c->nbuckets)
            grow_buckets(c);
    }
    block_ref(b);
    e->b = b;
    e->row = row;
    e->pub = pairs_parse(entry_col(e, REST_COL_PUBLIC));
    e->add = pairs_parse(entry_col(e, REST_COL_ADDITIONAL));
    c->pair_bytes += pairs_size(e->pub) + pairs_size(e->add);
    e->state = word_of(c, entry_col(e, REST_COL_STATE), 1);
    e->trust = word_of(c, entry_col(e, REST_COL_TRUST), 1);
    e->mset = PQgetisnull(b->res, row, SX_COL_MODULE_SET)
                  ? NONE
                  : mset_find(c, PQgetvalue(b->res, row, SX_COL_MODULE_SET), 1);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Module sets from rows (id, module name) ordered by id: each id's names
 * replace what the set had. */
static void content_put_modules(content *c, const PGresult *res)
{
    int n = PQntuples(res);

    for (int i = 0; i < n;) {
        const char *id = PQgetvalue(res, i, 0);
        int j = i;
        uint32_t k = mset_find(c, id, 1); /* may move c->msets */
        mset *m = &c->msets[k];

        while (j < n && strcmp(PQgetvalue(res, j, 0), id) == 0)
            j++;
        mset_clear(m);
        m->names = ncmp_xcalloc((size_t)(j - i), sizeof(*m->names));
        for (int r = i; r < j; r++)
            m->names[m->n++] = ncmp_xstrdup(PQgetvalue(res, r, 1));
        qsort(m->names, (size_t)m->n, sizeof(*m->names), name_cmp);
        i = j;
    }
}

static int mset_has(const mset *m, const char *name)
{
    return bsearch(&name, m->names, (size_t)m->n, sizeof(*m->names), name_cmp) != NULL;
}

/* The series this index counts into (ncmp_metrics_lib). */
typedef struct sx_metrics {
    ncmp_counter *reads, *loads, *memory, *database;
    ncmp_gauge *handles, *bytes;
} sx_metrics;

static sx_metrics metrics_get(void)
{
    const ncmp_metrics_lib *lib = ncmp_metrics_lib_get();
    sx_metrics m = {
        .reads = ncmp_counter_get(lib->search_index_reads, NULL),
        .loads = ncmp_counter_get(lib->search_index_loads, NULL),
        .memory = ncmp_counter_get(lib->searches, (const char *const[]){"memory"}),
        .database = ncmp_counter_get(lib->searches, (const char *const[]){"database"}),
        .handles = ncmp_gauge_get(lib->search_index_handles, NULL),
        .bytes = ncmp_gauge_get(lib->search_index_bytes, NULL),
    };
    return m;
}

/* --- the index ----------------------------------------------------------- */

struct search_index {
    const ncmp_config *cfg;
    ncmp_db *db;             /* used under sync_mu only */
    pthread_mutex_t sync_mu; /* one read of the database at a time */
    pthread_rwlock_t lock;   /* cur */
    content *cur;            /* NULL until loaded */
    char *snapshot;          /* of the last read (sync_mu) */
    double last_read_ms;     /* when it was taken */
    double last_read_begun;  /* when the last successful read began */
    double last_cleanup_ms;
    double last_warn_ms; /* sync_mu */
    pthread_t loader;
    int loader_running;
    atomic_size_t count;
    atomic_int stop;
    sx_metrics m;
    char begin[256]; /* SQL_BEGIN_FMT */
};

/* Every read is one repeatable-read transaction: its snapshot is the one
 * pg_current_snapshot() reports, and every statement sees the same. The
 * statements are bounded by rest.query-timeout-ms (search_index.begin). */
#define SQL_BEGIN_FMT                                                                              \
    "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY;"                                            \
    " SET LOCAL TimeZone = 'UTC'; SET LOCAL DateStyle = 'ISO, YMD';"                               \
    " SET LOCAL statement_timeout = %d"
static const char SQL_SNAPSHOT[] = "SELECT pg_current_snapshot()::text";
static const char SQL_LOAD[] =
    "DECLARE sx_load NO SCROLL CURSOR FOR SELECT " SX_COLUMNS " FROM cm_handle h";
static const char SQL_FETCH[] = "FETCH 10000 FROM sx_load";
static const char SQL_ALL_MODULES[] =
    "SELECT module_set_id::text, module_name FROM module_set_member ORDER BY 1, 2";
/* what was committed since the snapshot $1: a row per statement, its
 * keys in an array (a row written before migration 0019: its one key) */
const char search_index_changes_sql[] =
    "SELECT c.kind, k.v FROM inventory_change c, unnest(COALESCE(c.keys, ARRAY[c.key])) AS k(v)"
    " WHERE c.xid >= pg_snapshot_xmin($1::pg_snapshot)"
    " AND NOT pg_visible_in_snapshot(c.xid, $1::pg_snapshot) GROUP BY c.kind, k.v";
static const char SQL_HANDLES[] =
    "SELECT " SX_COLUMNS " FROM cm_handle h WHERE h.id = ANY($1::text[])";
static const char SQL_MODULES[] = "SELECT module_set_id::text, module_name FROM module_set_member"
                                  " WHERE module_set_id = ANY($1::bigint[]) ORDER BY 1, 2";
/* statement_timestamp(), not the volatile clock_timestamp(), so that the
 * index on `at` (migration 0015) serves the condition */
const char search_index_cleanup_sql[] =
    "DELETE FROM inventory_change WHERE at < statement_timestamp() - interval '" RETENTION "'";

/* The gauges, after a change of `c` (the thread that changes it). */
static void gauges_set(search_index *sx, const content *c)
{
    size_t bytes = atomic_load(&rows_bytes) + c->cap * sizeof(entry) +
                   c->free_cap * sizeof(uint32_t) + c->nbuckets * sizeof(uint32_t) + c->pair_bytes +
                   c->mcap * sizeof(mset) + c->nmbuckets * sizeof(uint32_t);

    atomic_store(&sx->count, c->count);
    ncmp_gauge_set(sx->m.handles, (double)c->count);
    ncmp_gauge_set(sx->m.bytes, (double)bytes);
}

/* Publish `c` as the index (the old content is freed). */
static void swap_in(search_index *sx, content *c)
{
    content *old;

    pthread_rwlock_wrlock(&sx->lock);
    old = sx->cur;
    sx->cur = c;
    pthread_rwlock_unlock(&sx->lock);
    content_free(old);
    gauges_set(sx, c);
}

/* Everything, into a new content (sync_mu held). */
static int load_all(search_index *sx, ncmp_err *err)
{
    content *c = content_new();
    PGresult *res = NULL;
    char *snap = NULL;
    double t0 = ncmp_now_ms();

    if (ncmp_db_ensure(sx->db, err) != 0 || ncmp_db_exec(sx->db, sx->begin, err) != 0)
        goto fail;
    if (ncmp_db_query(sx->db, SQL_SNAPSHOT, 0, NULL, &res, err) != 0)
        goto fail;
    snap = ncmp_xstrdup(PQgetvalue(res, 0, 0));
    PQclear(res);
    res = NULL;
    if (ncmp_db_exec(sx->db, SQL_LOAD, err) != 0)
        goto fail;
    for (;;) {
        block *b;
        int n;
        if (atomic_load(&sx->stop)) {
            ncmp_err_set(err, NCMP_ERR_RETRY, "search index: stopping");
            goto fail;
        }
        if (ncmp_db_query(sx->db, SQL_FETCH, 0, NULL, &res, err) != 0)
            goto fail;
        n = PQntuples(res);
        if (n == 0)
            break;
        b = block_new(res);
        res = NULL;
        for (int i = 0; i < n; i++)
            content_put(c, b, i);
        block_unref(b);
    }
    PQclear(res);
    res = NULL;
    if (ncmp_db_query(sx->db, SQL_ALL_MODULES, 0, NULL, &res, err) != 0)
        goto fail;
    content_put_modules(c, res);
    PQclear(res);
    res = NULL;
    if (ncmp_db_commit(sx->db, err) != 0)
        goto fail;
    free(sx->snapshot);
    sx->snapshot = snap;
    sx->last_read_ms = t0;
    swap_in(sx, c);
    ncmp_counter_add(sx->m.loads, 1);
    log_info("search-index", "%zu handles and %u module sets loaded in %.0f ms", c->count,
             c->nmsets, ncmp_now_ms() - t0);
    return 0;
fail:
    PQclear(res);
    ncmp_db_rollback(sx->db);
    free(snap);
    content_free(c);
    return -1;
}

/* The module sets of `rows` that `c` does not know yet, appended to `ids`
 * (a comma-separated list; a set repeated far apart may be listed twice,
 * which the query does not mind). Reads `c` only: it is changed under the
 * write lock, when the rows are applied. */
static void unknown_module_sets(const content *c, const PGresult *rows, ncmp_buf *ids, size_t *nids)
{
    const char *last = NULL;

    for (int i = 0; i < PQntuples(rows); i++) {
        const char *id;
        if (PQgetisnull(rows, i, SX_COL_MODULE_SET))
            continue;
        id = PQgetvalue(rows, i, SX_COL_MODULE_SET);
        if ((last && strcmp(last, id) == 0) ||
            mset_lookup(c, id, ncmp_hash(id, strlen(id))) != NONE)
            continue;
        last = id;
        ncmp_buf_append_str(ids, *nids ? "," : "");
        ncmp_buf_append_str(ids, id);
        (*nids)++;
    }
}

/* What was committed since the last read (sync_mu held). */
static int read_changes(search_index *sx, ncmp_err *err)
{
    PGresult *changes = NULL, *rows = NULL, *mods = NULL, *res = NULL;
    const char *params[1];
    char *snap = NULL;
    const char **keys = NULL;
    size_t nkeys = 0, nmods = 0;
    ncmp_buf arr = NCMP_BUF_INIT, mids = NCMP_BUF_INIT;
    double t0 = ncmp_now_ms();
    int reload = 0, rc = -1;

    if (ncmp_db_ensure(sx->db, err) != 0 || ncmp_db_exec(sx->db, sx->begin, err) != 0)
        goto done;
    if (ncmp_db_query(sx->db, SQL_SNAPSHOT, 0, NULL, &res, err) != 0)
        goto done;
    snap = ncmp_xstrdup(PQgetvalue(res, 0, 0));
    params[0] = sx->snapshot;
    if (ncmp_db_query(sx->db, search_index_changes_sql, 1, params, &changes, err) != 0)
        goto done;
    keys = ncmp_xcalloc((size_t)PQntuples(changes) + 1, sizeof(*keys));
    ncmp_buf_append_char(&mids, '{');
    for (int i = 0; i < PQntuples(changes); i++) {
        char kind = PQgetvalue(changes, i, 0)[0];
        const char *key = PQgetvalue(changes, i, 1);
        if (kind == 'h') {
            keys[nkeys++] = key;
        } else if (kind == 'm') {
            ncmp_buf_append_str(&mids, nmods++ ? "," : "");
            ncmp_buf_append_str(&mids, key);
        } else {
            reload = 1;
        }
    }
    if (reload)
        goto done;
    if (nkeys) {
        ncmp_pgarray_text(&arr, keys, nkeys);
        params[0] = arr.data;
        if (ncmp_db_query(sx->db, SQL_HANDLES, 1, params, &rows, err) != 0)
            goto done;
        unknown_module_sets(sx->cur, rows, &mids, &nmods);
    }
    if (nmods) {
        ncmp_buf_append_char(&mids, '}');
        params[0] = mids.data;
        if (ncmp_db_query(sx->db, SQL_MODULES, 1, params, &mods, err) != 0)
            goto done;
    }
    if (ncmp_db_commit(sx->db, err) != 0)
        goto done;
    if (nkeys || nmods) {
        block *b = rows ? block_new(rows) : NULL;
        content *c = sx->cur;

        rows = NULL;
        pthread_rwlock_wrlock(&sx->lock);
        if (mods) {
            /* a set that lost every member has no row left: empty it */
            for (int i = 0; i < PQntuples(changes); i++)
                if (PQgetvalue(changes, i, 0)[0] == 'm') {
                    uint32_t k = mset_find(c, PQgetvalue(changes, i, 1), 0);
                    if (k != NONE)
                        mset_clear(&c->msets[k]);
                }
            content_put_modules(c, mods);
        }
        for (int i = 0; b && i < PQntuples(b->res); i++)
            content_put(c, b, i);
        /* a key without a row now is a handle deleted */
        for (size_t i = 0; i < nkeys; i++) {
            uint32_t s = find(c, keys[i], ncmp_hash(keys[i], strlen(keys[i])));
            if (s != NONE && c->slots[s].b != b)
                content_remove(c, keys[i]);
        }
        pthread_rwlock_unlock(&sx->lock);
        block_unref(b);
        gauges_set(sx, c);
    }
    free(sx->snapshot);
    sx->snapshot = snap;
    snap = NULL;
    sx->last_read_ms = t0;
    ncmp_counter_add(sx->m.reads, 1);
    rc = 0;
done:
    if (rc != 0)
        ncmp_db_rollback(sx->db);
    PQclear(res);
    PQclear(changes);
    PQclear(rows);
    PQclear(mods);
    free(keys);
    free(snap);
    ncmp_buf_free(&arr);
    ncmp_buf_free(&mids);
    if (reload) {
        log_info("search-index", "the inventory was truncated: loading it again");
        return load_all(sx, err);
    }
    return rc;
}

/* Bring the index up to what is committed now (sync_mu held); `loader`:
 * the loader thread, which also packs the rows (a whole load) and deletes
 * the old change rows, work no search should wait for. */
static int read_db(search_index *sx, int loader, ncmp_err *err)
{
    double now = ncmp_now_ms();
    int rc;

    if (!sx->snapshot) {
        rc = load_all(sx, err);
    } else if (loader && atomic_load(&rows_held) > 2 * atomic_load(&sx->count) + COMPACT_ABOVE) {
        log_info("search-index", "%zu rows held for %zu handles: loading everything again",
                 atomic_load(&rows_held), atomic_load(&sx->count));
        rc = load_all(sx, err);
    } else if (now - sx->last_read_ms > RETENTION_MS / 2) {
        log_info("search-index", "no read for %.0f s: loading everything again",
                 (now - sx->last_read_ms) / 1000.0);
        rc = load_all(sx, err);
    } else {
        rc = read_changes(sx, err);
    }
    if (loader && rc == 0 && now - sx->last_cleanup_ms > CLEANUP_EVERY_MS) {
        ncmp_err ignored;
        sx->last_cleanup_ms = now;
        if (ncmp_db_exec(sx->db, search_index_cleanup_sql, &ignored) != 0)
            log_warn("search-index", "deleting old inventory changes: %s", ignored.msg);
    }
    return rc;
}

/* One read, under sync_mu: the time it began serves the searches that
 * arrived before it (make_current). A failure is logged once a minute. */
static int read_now(search_index *sx, int loader)
{
    double begun = ncmp_now_ms();
    ncmp_err err;

    if (read_db(sx, loader, &err) == 0) {
        if (begun > sx->last_read_begun)
            sx->last_read_begun = begun;
        return 0;
    }
    if (ncmp_now_ms() - sx->last_warn_ms > 60000) {
        sx->last_warn_ms = ncmp_now_ms();
        log_warn("search-index", "reading the inventory: %s; searches read PostgreSQL meanwhile",
                 err.msg);
    }
    return -1;
}

/* Load, then read the changes every REFRESH_MS, so that a search finds
 * little to read and an idle index never falls past the retention. */
static void *loader_thread(void *arg)
{
    search_index *sx = arg;
    double pause = REFRESH_MS;

    while (!atomic_load(&sx->stop)) {
        int rc;
        pthread_mutex_lock(&sx->sync_mu);
        rc = read_now(sx, 1);
        pthread_mutex_unlock(&sx->sync_mu);
        /* after a failure: 1 s, doubling up to 30 s */
        pause = rc == 0 ? REFRESH_MS : pause < 30000 ? pause * 2 : 30000;
        for (double t = 0; t < pause && !atomic_load(&sx->stop); t += 100)
            ncmp_sleep_ms(100);
    }
    return NULL;
}

int search_index_start(search_index **out, const ncmp_config *cfg, ncmp_err *err)
{
    search_index *sx = ncmp_xcalloc(1, sizeof(*sx));

    sx->cfg = cfg;
    sx->m = metrics_get();
    snprintf(sx->begin, sizeof(sx->begin), SQL_BEGIN_FMT, cfg->rest_query_timeout_ms);
    pthread_mutex_init(&sx->sync_mu, NULL);
    pthread_rwlock_init(&sx->lock, NULL);
    if (ncmp_db_open(&sx->db, cfg->db_url, cfg->db_password, cfg->db_connect_timeout_s, err) != 0)
        goto fail;
    if (pthread_create(&sx->loader, NULL, loader_thread, sx) != 0) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "search index: cannot start its thread");
        goto fail;
    }
    sx->loader_running = 1;
    *out = sx;
    return 0;
fail:
    search_index_stop(sx);
    return -1;
}

void search_index_stop(search_index *sx)
{
    if (!sx)
        return;
    atomic_store(&sx->stop, 1);
    if (sx->loader_running)
        pthread_join(sx->loader, NULL);
    ncmp_db_close(sx->db);
    content_free(sx->cur);
    free(sx->snapshot);
    pthread_rwlock_destroy(&sx->lock);
    pthread_mutex_destroy(&sx->sync_mu);
    free(sx);
}

/* --- answers ------------------------------------------------------------- */

typedef struct match {
    block *b;
    int row;
} match;

typedef struct answer {
    match *m;
    size_t n, next;
    rest_row_fn fmt;
    ncmp_buf out;
    size_t sent; /* of out */
    int closed;
} answer;

static ssize_t answer_fill(void *arg, char *buf, size_t max)
{
    answer *a = arg;
    size_t k;

    if (a->sent == a->out.len) {
        ncmp_buf_reset(&a->out);
        a->sent = 0;
        while (a->out.len < max && a->next < a->n) {
            ncmp_buf_append_char(&a->out, a->next ? ',' : '[');
            a->fmt(a->m[a->next].b->res, a->m[a->next].row, &a->out);
            a->next++;
        }
        if (a->next == a->n && !a->closed) {
            ncmp_buf_append_str(&a->out, a->n ? "]" : "[]");
            a->closed = 1;
        }
    }
    k = a->out.len - a->sent;
    if (k > max)
        k = max;
    memcpy(buf, a->out.data + a->sent, k);
    a->sent += k;
    return (ssize_t)k;
}

static void answer_free(void *arg)
{
    answer *a = arg;

    for (size_t i = 0; i < a->n; i++)
        block_unref(a->m[i].b);
    free(a->m);
    ncmp_buf_free(&a->out);
    free(a);
}

/* The columns of SX_COLUMNS a SEARCH_COND_COLUMN may name (the others
 * leave the search to PostgreSQL). */
static const struct {
    const char *name;
    int col;
} COLUMNS[] = {
    {"id", REST_COL_ID},
    {"alternate_id", REST_COL_ALTERNATE_ID},
    {"state", REST_COL_STATE},
    {"lock_reason", REST_COL_LOCK_REASON},
    {"lock_details", REST_COL_LOCK_DETAILS},
    {"operational_sync_state", REST_COL_OPERATIONAL_SYNC},
    {"effective_trust_level", REST_COL_TRUST},
    {"module_set_tag", REST_COL_TAG},
    {"data_producer_identifier", REST_COL_PRODUCER},
    {"dmi_service_name", SX_COL_DMI},
    {"dmi_data_service_name", SX_COL_DMI_DATA},
    {"dmi_model_service_name", SX_COL_DMI_MODEL},
};

static int column_of(const char *name)
{
    for (size_t i = 0; i < sizeof(COLUMNS) / sizeof(COLUMNS[0]); i++)
        if (strcmp(COLUMNS[i].name, name) == 0)
            return COLUMNS[i].col;
    return -1;
}

/* Can every condition of `q` be evaluated here? */
static int evaluable(const search_query *q)
{
    if (q->needs_db || q->nconds > MAX_CONDS)
        return 0;
    for (int i = 0; i < q->nconds; i++)
        if (q->conds[i].kind == SEARCH_COND_COLUMN && column_of(q->conds[i].keys[0]) < 0)
            return 0;
    return 1;
}

/* A comparison of a column with a text, SQL's way: NULL matches neither
 * = nor <>. `word`: the entry's word for the column (state, trust level)
 * or WORD_OTHER to read the row; `want`: the text's word. */
static int column_is(const entry *e, int col, uint8_t word, uint8_t want, const char *text,
                     int negate)
{
    const char *v;

    if (word == WORD_NULL)
        return 0;
    if (word != WORD_OTHER)
        return (word == want) != negate;
    v = entry_col(e, col);
    return v && (strcmp(v, text) == 0) != negate;
}

static uint8_t entry_word(const entry *e, int col)
{
    return col == REST_COL_STATE ? e->state : col == REST_COL_TRUST ? e->trust : WORD_OTHER;
}

/* cols[i]: the column of condition i when it is SEARCH_COND_COLUMN or
 * SEARCH_COND_TRUST; want[i]: the word of its value */
static int entry_matches(const entry *e, const search_query *q, const uint8_t *mset_ok,
                         const int *cols, const uint8_t *want)
{
    for (int i = 0; i < q->nconds; i++) {
        const search_cond *c = &q->conds[i];
        const char *v;
        int ok = 0;
        switch (c->kind) {
        case SEARCH_COND_MODULES:
            ok = e->mset != NONE && mset_ok[e->mset];
            break;
        case SEARCH_COND_PUBLIC:
        case SEARCH_COND_ADDITIONAL:
            ok = 1;
            for (int k = 0; k < c->n && ok; k++)
                ok = pairs_have(c->kind == SEARCH_COND_PUBLIC ? e->pub : e->add, c->keys[k],
                                c->values[k]);
            break;
        case SEARCH_COND_TRUST:
            ok = column_is(e, REST_COL_TRUST, e->trust, want[i], c->values[0], 0);
            break;
        case SEARCH_COND_DMI:
            for (int col = SX_COL_DMI; col <= SX_COL_DMI_MODEL && !ok; col++) {
                v = entry_col(e, col);
                ok = v && strcmp(v, c->values[0]) == 0;
            }
            break;
        case SEARCH_COND_NONE:
            ok = 0;
            break;
        case SEARCH_COND_COLUMN:
            ok = column_is(e, cols[i], entry_word(e, cols[i]), want[i], c->values[0], c->negate);
            break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/* Which module sets hold every module of the conditions (NULL when no
 * condition is on modules). */
static uint8_t *module_sets_ok(const content *c, const search_query *q)
{
    uint8_t *ok = NULL;

    for (int i = 0; i < q->nconds; i++) {
        const search_cond *cd = &q->conds[i];
        if (cd->kind != SEARCH_COND_MODULES)
            continue;
        if (!ok) {
            ok = ncmp_xmalloc(c->nmsets + 1);
            memset(ok, 1, c->nmsets + 1);
        }
        for (uint32_t k = 0; k < c->nmsets; k++)
            for (int j = 0; j < cd->n && ok[k]; j++)
                ok[k] = (uint8_t)mset_has(&c->msets[k], cd->values[j]);
    }
    return ok;
}

static rest_row_fn formatter(search_output out)
{
    switch (out) {
    case SEARCH_OUT_ID:
        return rest_json_string_row; /* the id is the first column */
    case SEARCH_OUT_ALTERNATE_ID:
        return rest_json_alternate_id_of_handle_row;
    case SEARCH_OUT_HANDLE:
        return rest_json_handle_row;
    case SEARCH_OUT_HANDLE_DMI:
        return rest_json_handle_dmi_row;
    case SEARCH_OUT_LIGHT:
        return rest_json_light_of_handle_row;
    case SEARCH_OUT_LIGHT_DMI:
        return rest_json_light_dmi_of_handle_row;
    }
    return rest_json_string_row;
}

/* Make the index current for a search that arrived at `arrival`: a read
 * begun after it serves; otherwise read now. Waits at most `wait_ms` for
 * another read to end. */
static int make_current(search_index *sx, double arrival, double wait_ms)
{
    struct timespec until = ncmp_deadline_ts(CLOCK_REALTIME, wait_ms);
    int rc = 0;

    if (pthread_mutex_timedlock(&sx->sync_mu, &until) != 0)
        return -1;
    if (sx->last_read_begun <= arrival)
        rc = read_now(sx, 0);
    pthread_mutex_unlock(&sx->sync_mu);
    return rc;
}

int search_index_answer(search_index *sx, ncmp_http_request *req, const search_query *q,
                        search_output out)
{
    double arrival = ncmp_now_ms() - ncmp_http_age_ms(req);
    answer *a;
    uint8_t *mset_ok;
    content *c;
    size_t cap = 0;
    int cols[MAX_CONDS];
    uint8_t want[MAX_CONDS];

    if (!sx || !evaluable(q))
        goto database;
    pthread_rwlock_rdlock(&sx->lock);
    c = sx->cur;
    pthread_rwlock_unlock(&sx->lock);
    if (!c || make_current(sx, arrival, WAIT_MS) != 0)
        goto database;
    a = ncmp_xcalloc(1, sizeof(*a));
    a->fmt = formatter(out);
    pthread_rwlock_rdlock(&sx->lock);
    c = sx->cur;
    mset_ok = module_sets_ok(c, q);
    for (int i = 0; i < q->nconds && i < MAX_CONDS; i++) {
        const search_cond *cd = &q->conds[i];
        cols[i] = cd->kind == SEARCH_COND_COLUMN  ? column_of(cd->keys[0])
                  : cd->kind == SEARCH_COND_TRUST ? REST_COL_TRUST
                                                  : -1;
        want[i] = cols[i] == REST_COL_STATE || cols[i] == REST_COL_TRUST
                      ? word_of(c, cd->values[0], 0)
                      : WORD_NONE;
    }
    for (uint32_t i = 0; i < c->nslots; i++) {
        entry *e = &c->slots[i];
        if (!e->b || !entry_matches(e, q, mset_ok, cols, want))
            continue;
        if (a->n == cap) {
            cap = cap ? cap * 2 : 1024;
            a->m = ncmp_xrealloc(a->m, cap * sizeof(*a->m));
        }
        block_ref(e->b);
        a->m[a->n].b = e->b;
        a->m[a->n++].row = e->row;
    }
    pthread_rwlock_unlock(&sx->lock);
    free(mset_ok);
    ncmp_counter_add(sx->m.memory, 1);
    ncmp_http_respond_stream(req, 200, "application/json", STREAM_BLOCK, answer_fill, a,
                             answer_free);
    return 0;
database:
    if (sx)
        ncmp_counter_add(sx->m.database, 1);
    return -1;
}
