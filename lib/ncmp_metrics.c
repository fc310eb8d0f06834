#include "ncmp_metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_utf8.h"

/* One series. Counters keep an integer, gauges the bits of a double;
 * histograms keep a count per bucket (not cumulative: observe touches one)
 * plus the overflow bucket, and the sum's bits. The count is the sum of
 * the buckets, so _count always equals the +Inf bucket. */
typedef struct series {
    struct series *next;  /* registration order */
    struct series *hnext; /* hash chain */
    const struct ncmp_metric *family;
    uint64_t hash;
    char **values;
    _Atomic uint64_t value;
    _Atomic uint64_t sum_bits;
    _Atomic uint64_t *buckets; /* nbounds + 1 */
} series;

struct ncmp_metric {
    struct ncmp_metric *next;
    ncmp_metric_type type;
    char *name;
    char *help;
    char *labels[NCMP_METRICS_MAX_LABELS];
    size_t nlabels;
    double bounds[NCMP_METRICS_MAX_BUCKETS];
    size_t nbounds;
    series *first, *last;
    size_t nseries;
    series **table;
    size_t tsize;
    series *overflow;
};

typedef struct collector {
    int id;
    ncmp_metrics_collector_fn fn;
    void *arg;
} collector;

/* The registry: families and series are added under the write lock and
 * never removed, so a pointer handed out stays valid without a lock. */
static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static ncmp_metric *reg_first, *reg_last;

/* Held while collectors run, so that removing one waits for its run. */
static pthread_mutex_t coll_lock = PTHREAD_MUTEX_INITIALIZER;
static collector *colls;
static size_t ncolls;
static int coll_next_id = 1;

const double ncmp_metrics_buckets_seconds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                               0.25,   0.5,   1,      2.5,   5,    10,    30};
const size_t ncmp_metrics_buckets_seconds_len =
    sizeof(ncmp_metrics_buckets_seconds) / sizeof(ncmp_metrics_buckets_seconds[0]);
const double ncmp_metrics_buckets_counts[] = {1,   2,    5,    10,   20,    50,    100,   200,
                                              500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
const size_t ncmp_metrics_buckets_counts_len =
    sizeof(ncmp_metrics_buckets_counts) / sizeof(ncmp_metrics_buckets_counts[0]);

/* A programming error: a bad name, or a family used as another type. */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;

    fputs("ncmp_metrics: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n", stderr);
    abort();
}

static uint64_t bits_of(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    return u;
}

static double double_of(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof(v));
    return v;
}

static void atomic_double_add(_Atomic uint64_t *cell, double delta)
{
    uint64_t old = atomic_load_explicit(cell, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(cell, &old, bits_of(double_of(old) + delta),
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

/* --- names --------------------------------------------------------------- */

static int name_ok(const char *s, int colon)
{
    if (!s || !*s)
        return 0;
    for (const char *p = s; *p; p++) {
        char c = *p;
        int alpha =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
        if (!alpha && !(p > s && c >= '0' && c <= '9'))
            return 0;
    }
    return 1;
}

/* A copy of a label value that is valid UTF-8. */
static char *value_dup(const char *s)
{
    char *out = ncmp_xstrdup(s ? s : "");
    size_t len = strlen(out), i = 0;

    while (i < len) {
        size_t n = ncmp_utf8_char_len(out + i, len - i);
        if (n == 0) {
            out[i++] = '?';
        } else {
            i += n;
        }
    }
    return out;
}

/* --- families ------------------------------------------------------------ */

static ncmp_metric *family_find(const char *name)
{
    for (ncmp_metric *m = reg_first; m; m = m->next)
        if (strcmp(m->name, name) == 0)
            return m;
    return NULL;
}

static int family_same(const ncmp_metric *m, ncmp_metric_type type, const char *const *labels,
                       const double *buckets, size_t nbuckets)
{
    size_t n = 0;

    if (m->type != type)
        return 0;
    for (; labels && labels[n]; n++)
        if (n >= m->nlabels || strcmp(labels[n], m->labels[n]) != 0)
            return 0;
    if (n != m->nlabels)
        return 0;
    if (type != NCMP_METRIC_HISTOGRAM)
        return 1;
    if (nbuckets != m->nbounds)
        return 0;
    for (size_t i = 0; i < nbuckets; i++)
        if (buckets[i] != m->bounds[i])
            return 0;
    return 1;
}

static void family_check(const char *name, const char *const *labels, ncmp_metric_type type,
                         const double *buckets, size_t nbuckets)
{
    size_t n = 0;

    if (!name_ok(name, 1) || strncmp(name, "__", 2) == 0)
        die("bad metric name '%s'", name ? name : "(null)");
    for (; labels && labels[n]; n++) {
        if (!name_ok(labels[n], 0) || strncmp(labels[n], "__", 2) == 0)
            die("metric %s: bad label name '%s'", name, labels[n]);
        if (type == NCMP_METRIC_HISTOGRAM && strcmp(labels[n], "le") == 0)
            die("metric %s: a histogram cannot have label '%s'", name, labels[n]);
        for (size_t j = 0; j < n; j++)
            if (strcmp(labels[j], labels[n]) == 0)
                die("metric %s: label '%s' twice", name, labels[n]);
    }
    if (n > NCMP_METRICS_MAX_LABELS)
        die("metric %s: too many labels", name);
    if (type != NCMP_METRIC_HISTOGRAM)
        return;
    if (nbuckets < 1 || nbuckets > NCMP_METRICS_MAX_BUCKETS)
        die("metric %s: bad number of buckets", name);
    for (size_t i = 0; i < nbuckets; i++)
        if (!isfinite(buckets[i]) || (i && buckets[i] <= buckets[i - 1]))
            die("metric %s: buckets must be finite and increasing", name);
}

static series *series_new(const ncmp_metric *m, const char *const *values, uint64_t hash);

static ncmp_metric *family_register(ncmp_metric_type type, const char *name, const char *help,
                                    const char *const *labels, const double *buckets,
                                    size_t nbuckets)
{
    ncmp_metric *m;

    family_check(name, labels, type, buckets, nbuckets);
    pthread_rwlock_wrlock(&reg_lock);
    m = family_find(name);
    if (m) {
        pthread_rwlock_unlock(&reg_lock);
        if (!family_same(m, type, labels, buckets, nbuckets))
            die("metric %s registered twice with different types, labels or buckets", name);
        return m;
    }
    m = ncmp_xcalloc(1, sizeof(*m));
    m->type = type;
    m->name = ncmp_xstrdup(name);
    m->help = ncmp_xstrdup(help ? help : "");
    for (; labels && labels[m->nlabels]; m->nlabels++)
        m->labels[m->nlabels] = ncmp_xstrdup(labels[m->nlabels]);
    if (type == NCMP_METRIC_HISTOGRAM) {
        memcpy(m->bounds, buckets, nbuckets * sizeof(*buckets));
        m->nbounds = nbuckets;
    }
    m->tsize = 16;
    m->table = ncmp_xcalloc(m->tsize, sizeof(*m->table));
    if (m->nlabels == 0) {
        /* the one series exists from the start, so it is scraped as 0 */
        m->first = m->last = series_new(m, NULL, 0);
        m->table[0] = m->first;
        m->nseries = 1;
    }
    if (reg_last)
        reg_last->next = m;
    else
        reg_first = m;
    reg_last = m;
    pthread_rwlock_unlock(&reg_lock);
    return m;
}

ncmp_metric *ncmp_metrics_counter(const char *name, const char *help, const char *const *labels)
{
    return family_register(NCMP_METRIC_COUNTER, name, help, labels, NULL, 0);
}

ncmp_metric *ncmp_metrics_gauge(const char *name, const char *help, const char *const *labels)
{
    return family_register(NCMP_METRIC_GAUGE, name, help, labels, NULL, 0);
}

ncmp_metric *ncmp_metrics_histogram(const char *name, const char *help, const char *const *labels,
                                    const double *buckets, size_t nbuckets)
{
    return family_register(NCMP_METRIC_HISTOGRAM, name, help, labels, buckets, nbuckets);
}

/* --- series -------------------------------------------------------------- */

static uint64_t values_hash(const ncmp_metric *m, const char *const *values)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */

    for (size_t i = 0; i < m->nlabels; i++) {
        for (const unsigned char *p = (const unsigned char *)(values[i] ? values[i] : ""); *p; p++)
            h = (h ^ *p) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL; /* separator: ("ab","") != ("a","b") */
    }
    return h;
}

static int values_equal(const ncmp_metric *m, const series *s, const char *const *values)
{
    for (size_t i = 0; i < m->nlabels; i++)
        if (strcmp(s->values[i], values[i] ? values[i] : "") != 0)
            return 0;
    return 1;
}

static series *series_new(const ncmp_metric *m, const char *const *values, uint64_t hash)
{
    series *s = ncmp_xcalloc(1, sizeof(*s));

    s->family = m;
    s->hash = hash;
    if (m->nlabels) {
        s->values = ncmp_xcalloc(m->nlabels, sizeof(*s->values));
        for (size_t i = 0; i < m->nlabels; i++)
            s->values[i] = values ? value_dup(values[i]) : ncmp_xstrdup(NCMP_METRICS_OVERFLOW);
    }
    atomic_init(&s->value, m->type == NCMP_METRIC_GAUGE ? bits_of(0.0) : 0);
    atomic_init(&s->sum_bits, bits_of(0.0));
    if (m->type == NCMP_METRIC_HISTOGRAM) {
        s->buckets = ncmp_xcalloc(m->nbounds + 1, sizeof(*s->buckets));
        for (size_t i = 0; i <= m->nbounds; i++)
            atomic_init(&s->buckets[i], 0);
    }
    return s;
}

/* Under the read or write lock. */
static series *series_find(const ncmp_metric *m, const char *const *values, uint64_t hash)
{
    for (series *s = m->table[hash % m->tsize]; s; s = s->hnext)
        if (s->hash == hash && values_equal(m, s, values))
            return s;
    return NULL;
}

static void table_grow(ncmp_metric *m)
{
    size_t tsize = m->tsize * 2;
    series **table = ncmp_xcalloc(tsize, sizeof(*table));

    for (series *s = m->first; s; s = s->next) {
        if (s == m->overflow)
            continue;
        s->hnext = table[s->hash % tsize];
        table[s->hash % tsize] = s;
    }
    free(m->table);
    m->table = table;
    m->tsize = tsize;
}

static void series_link(ncmp_metric *m, series *s)
{
    if (m->last)
        m->last->next = s;
    else
        m->first = s;
    m->last = s;
    m->nseries++;
}

/* Label values as stored: NULL becomes "" and bad UTF-8 is replaced, so a
 * bad value finds the series made for it the first time. Copies (rare) go
 * to `copies`, to be freed by the caller. */
static const char *const *values_clean(const ncmp_metric *m, const char *const *values,
                                       const char **clean, char **copies)
{
    int dirty = 0;

    for (size_t i = 0; i < m->nlabels; i++) {
        copies[i] = NULL;
        clean[i] = values[i] ? values[i] : "";
        if (!ncmp_utf8_valid(clean[i], strlen(clean[i]))) {
            copies[i] = value_dup(clean[i]);
            clean[i] = copies[i];
            dirty = 1;
        }
    }
    return dirty ? clean : values;
}

static series *series_lookup(ncmp_metric *m, const char *const *values)
{
    uint64_t hash = values_hash(m, values);
    series *s;

    pthread_rwlock_rdlock(&reg_lock);
    s = series_find(m, values, hash);
    pthread_rwlock_unlock(&reg_lock);
    if (s)
        return s;
    pthread_rwlock_wrlock(&reg_lock);
    s = series_find(m, values, hash);
    if (!s && m->nseries >= NCMP_METRICS_MAX_SERIES) {
        if (!m->overflow) {
            m->overflow = series_new(m, NULL, 0);
            series_link(m, m->overflow);
        }
        s = m->overflow;
    } else if (!s) {
        s = series_new(m, values, hash);
        series_link(m, s);
        if (m->nseries > m->tsize)
            table_grow(m);
        else {
            s->hnext = m->table[hash % m->tsize];
            m->table[hash % m->tsize] = s;
        }
    }
    pthread_rwlock_unlock(&reg_lock);
    return s;
}

static series *series_get(ncmp_metric *m, ncmp_metric_type type, const char *const *values)
{
    const char *clean[NCMP_METRICS_MAX_LABELS];
    char *copies[NCMP_METRICS_MAX_LABELS];
    series *s;

    if (!m || m->type != type)
        die("metric %s used as another type", m ? m->name : "(null)");
    if (m->nlabels == 0)
        return m->first;
    if (!values)
        die("metric %s: label values missing", m->name);
    s = series_lookup(m, values_clean(m, values, clean, copies));
    for (size_t i = 0; i < m->nlabels; i++)
        free(copies[i]);
    return s;
}

ncmp_counter *ncmp_counter_get(ncmp_metric *m, const char *const *values)
{
    return (ncmp_counter *)series_get(m, NCMP_METRIC_COUNTER, values);
}

ncmp_gauge *ncmp_gauge_get(ncmp_metric *m, const char *const *values)
{
    return (ncmp_gauge *)series_get(m, NCMP_METRIC_GAUGE, values);
}

ncmp_histogram *ncmp_histogram_get(ncmp_metric *m, const char *const *values)
{
    return (ncmp_histogram *)series_get(m, NCMP_METRIC_HISTOGRAM, values);
}

void ncmp_counter_add(ncmp_counter *c, uint64_t n)
{
    atomic_fetch_add_explicit(&((series *)c)->value, n, memory_order_relaxed);
}

uint64_t ncmp_counter_value(const ncmp_counter *c)
{
    return atomic_load_explicit(&((series *)c)->value, memory_order_relaxed);
}

void ncmp_gauge_set(ncmp_gauge *g, double v)
{
    atomic_store_explicit(&((series *)g)->value, bits_of(v), memory_order_relaxed);
}

void ncmp_gauge_add(ncmp_gauge *g, double delta)
{
    atomic_double_add(&((series *)g)->value, delta);
}

double ncmp_gauge_value(const ncmp_gauge *g)
{
    return double_of(atomic_load_explicit(&((series *)g)->value, memory_order_relaxed));
}

void ncmp_histogram_observe(ncmp_histogram *h, double v)
{
    series *s = (series *)h;
    const ncmp_metric *m = s->family; /* bounds never change after registration */
    size_t i = 0;

    if (isnan(v))
        return;
    while (i < m->nbounds && v > m->bounds[i])
        i++;
    atomic_fetch_add_explicit(&s->buckets[i], 1, memory_order_relaxed);
    atomic_double_add(&s->sum_bits, v);
}

/* --- collectors ---------------------------------------------------------- */

int ncmp_metrics_collector_add(ncmp_metrics_collector_fn fn, void *arg)
{
    int id;

    pthread_mutex_lock(&coll_lock);
    colls = ncmp_xrealloc(colls, (ncolls + 1) * sizeof(*colls));
    id = coll_next_id++;
    colls[ncolls].id = id;
    colls[ncolls].fn = fn;
    colls[ncolls].arg = arg;
    ncolls++;
    pthread_mutex_unlock(&coll_lock);
    return id;
}

void ncmp_metrics_collector_remove(int id)
{
    pthread_mutex_lock(&coll_lock);
    for (size_t i = 0; i < ncolls; i++) {
        if (colls[i].id == id) {
            memmove(&colls[i], &colls[i + 1], (ncolls - i - 1) * sizeof(*colls));
            ncolls--;
            break;
        }
    }
    pthread_mutex_unlock(&coll_lock);
}

static void collectors_run(void)
{
    pthread_mutex_lock(&coll_lock);
    for (size_t i = 0; i < ncolls; i++)
        colls[i].fn(colls[i].arg);
    pthread_mutex_unlock(&coll_lock);
}

/* --- text format --------------------------------------------------------- */

/* The shortest decimal that reads back as v; Prometheus' spellings of
 * infinities and NaN. */
static void append_double(ncmp_buf *out, double v)
{
    char num[40];

    if (isnan(v)) {
        ncmp_buf_append_str(out, "NaN");
        return;
    }
    if (isinf(v)) {
        ncmp_buf_append_str(out, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(num, sizeof(num), "%.*g", prec, v);
        if (strtod(num, NULL) == v)
            break;
    }
    ncmp_buf_append_str(out, num);
}

/* HELP text: backslash and newline escaped. Label values: also the double
 * quote. */
static void append_escaped(ncmp_buf *out, const char *s, int quote)
{
    for (const char *p = s; *p; p++) {
        if (*p == '\\')
            ncmp_buf_append_str(out, "\\\\");
        else if (*p == '\n')
            ncmp_buf_append_str(out, "\\n");
        else if (quote && *p == '"')
            ncmp_buf_append_str(out, "\\\"");
        else
            ncmp_buf_append_char(out, *p);
    }
}

/* name{l1="v1",...[,le="x"]} with the sample name's suffix. */
static void append_sample_name(ncmp_buf *out, const ncmp_metric *m, const series *s,
                               const char *suffix, const double *le)
{
    ncmp_buf_append_str(out, m->name);
    ncmp_buf_append_str(out, suffix);
    if (m->nlabels == 0 && !le)
        return;
    ncmp_buf_append_char(out, '{');
    for (size_t i = 0; i < m->nlabels; i++) {
        if (i)
            ncmp_buf_append_char(out, ',');
        ncmp_buf_appendf(out, "%s=\"", m->labels[i]);
        append_escaped(out, s->values[i], 1);
        ncmp_buf_append_char(out, '"');
    }
    if (le) {
        ncmp_buf_append_str(out, m->nlabels ? ",le=\"" : "le=\"");
        append_double(out, *le);
        ncmp_buf_append_char(out, '"');
    }
    ncmp_buf_append_char(out, '}');
}

static void render_histogram(ncmp_buf *out, const ncmp_metric *m, const series *s)
{
    uint64_t cumulative = 0;
    double inf = INFINITY;

    for (size_t i = 0; i <= m->nbounds; i++) {
        cumulative += atomic_load_explicit(&s->buckets[i], memory_order_relaxed);
        append_sample_name(out, m, s, "_bucket", i < m->nbounds ? &m->bounds[i] : &inf);
        ncmp_buf_appendf(out, " %llu\n", (unsigned long long)cumulative);
    }
    append_sample_name(out, m, s, "_sum", NULL);
    ncmp_buf_append_char(out, ' ');
    append_double(out, double_of(atomic_load_explicit(&s->sum_bits, memory_order_relaxed)));
    ncmp_buf_append_char(out, '\n');
    append_sample_name(out, m, s, "_count", NULL);
    ncmp_buf_appendf(out, " %llu\n", (unsigned long long)cumulative);
}

static void render_family(ncmp_buf *out, const ncmp_metric *m)
{
    static const char *const type_names[] = {"counter", "gauge", "histogram"};

    ncmp_buf_appendf(out, "# HELP %s ", m->name);
    append_escaped(out, m->help, 0);
    ncmp_buf_appendf(out, "\n# TYPE %s %s\n", m->name, type_names[m->type]);
    for (const series *s = m->first; s; s = s->next) {
        if (m->type == NCMP_METRIC_HISTOGRAM) {
            render_histogram(out, m, s);
            continue;
        }
        append_sample_name(out, m, s, "", NULL);
        ncmp_buf_append_char(out, ' ');
        if (m->type == NCMP_METRIC_COUNTER)
            ncmp_buf_appendf(
                out, "%llu",
                (unsigned long long)atomic_load_explicit(&s->value, memory_order_relaxed));
        else
            append_double(out, double_of(atomic_load_explicit(&s->value, memory_order_relaxed)));
        ncmp_buf_append_char(out, '\n');
    }
}

void ncmp_metrics_render(ncmp_buf *out)
{
    collectors_run();
    /* the read lock keeps the lists still; the values move on meanwhile */
    pthread_rwlock_rdlock(&reg_lock);
    for (const ncmp_metric *m = reg_first; m; m = m->next)
        render_family(out, m);
    pthread_rwlock_unlock(&reg_lock);
}

/* --- the library's metrics ----------------------------------------------- */

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static ncmp_metrics_lib lib;

static void lib_register(void)
{
    static const char *const role[] = {"role", NULL};
    static const char *const role_topic[] = {"role", "topic", NULL};
    static const char *const topic[] = {"topic", NULL};
    static const char *const statement[] = {"statement", NULL};
    static const char *const http_status[] = {"method", "route", "status", NULL};
    static const char *const http_route[] = {"method", "route", NULL};
    const double *secs = ncmp_metrics_buckets_seconds;
    size_t nsecs = ncmp_metrics_buckets_seconds_len;

    lib.consumed_records = ncmp_metrics_counter(
        "ncmp_consumed_records_total",
        "Records a worker role consumed from a topic (redeliveries included).", role_topic);
    lib.batch_records =
        ncmp_metrics_histogram("ncmp_batch_records", "Records per batch a worker role consumed.",
                               role, ncmp_metrics_buckets_counts, ncmp_metrics_buckets_counts_len);
    lib.batch_seconds = ncmp_metrics_histogram(
        "ncmp_batch_duration_seconds",
        "Time from a batch's arrival until it was committed (retries included).", role, secs,
        nsecs);
    lib.batch_retries = ncmp_metrics_counter(
        "ncmp_batch_retries_total",
        "Batch transactions rolled back for a RETRY error and tried again after a back-off.", role);
    lib.dead_letters = ncmp_metrics_counter(
        "ncmp_dead_lettered_records_total",
        "Records a worker role sent to <topic>-dlq instead of applying them.", role_topic);
    lib.consumer_lag = ncmp_metrics_gauge(
        "ncmp_consumer_lag_records",
        "Records on the partitions this process consumes that it has not consumed yet "
        "(high watermark minus position, as last fetched), computed at each scrape.",
        role_topic);
    lib.produced_records = ncmp_metrics_counter(
        "ncmp_produced_records_total", "Records the broker acknowledged, per topic.", topic);
    lib.produce_failures = ncmp_metrics_counter(
        "ncmp_produce_failures_total",
        "Records refused by the local producer or whose delivery failed, per topic.", topic);
    {
        static const char *const group[] = {"group", NULL};
        lib.consumer_renewals = ncmp_metrics_counter(
            "ncmp_kafka_consumer_renewals_total",
            "Group members made again after a fatal consumer error (a fenced static member).",
            group);
    }
    lib.db_statement_seconds = ncmp_metrics_histogram(
        "ncmp_db_statement_duration_seconds",
        "PostgreSQL round trips by statement name (or adhoc, begin, commit, copy).", statement,
        secs, nsecs);
    lib.db_reconnects =
        ncmp_metrics_counter("ncmp_db_reconnects_total",
                             "Reconnection attempts after a lost PostgreSQL connection.", NULL);
    lib.http_requests =
        ncmp_metrics_counter("ncmp_http_requests_total",
                             "HTTP requests answered, by route pattern and status.", http_status);
    lib.http_request_seconds = ncmp_metrics_histogram(
        "ncmp_http_request_duration_seconds",
        "Time from an HTTP request's arrival until its answer, by route pattern.", http_route, secs,
        nsecs);
    {
        static const char *const state[] = {"state", NULL};
        lib.inventory_handles = ncmp_metrics_gauge("ncmp_inventory_handles",
                                                   "CM handles in the inventory by state.", state);
    }
    {
        static const char *const reason[] = {"reason", NULL};
        lib.http_in_flight = ncmp_metrics_gauge(
            "ncmp_http_requests_in_flight",
            "HTTP requests being served: from their headers until their answer was sent "
            "(http.max-in-flight bounds it).",
            NULL);
        lib.http_queued = ncmp_metrics_gauge(
            "ncmp_http_requests_queued",
            "HTTP requests read and waiting for a worker thread to run their handler "
            "(http.max-queued bounds it).",
            NULL);
        lib.shed_requests = ncmp_metrics_counter(
            "ncmp_shed_requests_total",
            "Requests refused at once for load (503 with Retry-After, or a DMI call not sent), by "
            "the bound they met: http-in-flight, http-queue, db, dmi-in-flight.",
            reason);
        lib.dmi_in_flight =
            ncmp_metrics_gauge("ncmp_dmi_requests_in_flight",
                               "DMI plugin requests sent and not answered yet, over all plugins "
                               "(dmi.max-in-flight-per-plugin bounds each plugin's share).",
                               NULL);
    }
    {
        static const char *const path[] = {"path", NULL};
        lib.searches = ncmp_metrics_counter(
            "ncmp_searches_total",
            "CM-handle searches answered, by where: memory (the search index) or database.", path);
        lib.search_index_reads = ncmp_metrics_counter(
            "ncmp_search_index_reads_total",
            "Reads of the inventory's committed changes by the search index.", NULL);
        lib.search_index_loads = ncmp_metrics_counter("ncmp_search_index_loads_total",
                                                      "Whole loads of the search index.", NULL);
        lib.search_index_handles =
            ncmp_metrics_gauge("ncmp_search_index_handles", "Handles in the search index.", NULL);
        lib.search_index_bytes = ncmp_metrics_gauge(
            "ncmp_search_index_bytes",
            "Memory of the search index: its rows (with those of answers being sent), tables and "
            "parsed properties.",
            NULL);
    }
    lib.data_sync_writers = ncmp_metrics_gauge(
        "ncmp_data_sync_writers", "Writer threads of the data-sync role that are running.", NULL);
}

const ncmp_metrics_lib *ncmp_metrics_lib_get(void)
{
    pthread_once(&lib_once, lib_register);
    return &lib;
}

void ncmp_metrics_http_observe(const char *method, const char *route, int status, double seconds)
{
    const ncmp_metrics_lib *l = ncmp_metrics_lib_get();
    char code[16];
    const char *with_status[3];
    const char *without[2];

    snprintf(code, sizeof(code), "%d", status);
    with_status[0] = without[0] = method ? method : "";
    with_status[1] = without[1] = route ? route : "unmatched";
    with_status[2] = code;
    ncmp_counter_add(ncmp_counter_get(l->http_requests, with_status), 1);
    ncmp_histogram_observe(ncmp_histogram_get(l->http_request_seconds, without), seconds);
}
