/*
 * ncmp_metrics: the process's Prometheus metrics.
 *
 * One registry per process (the one exception to "no mutable globals":
 * every module counts into it, and one scrape must see them all). It holds
 * metric families - counters, gauges and histograms - each with a fixed
 * list of label names; a series (one set of label values) is created on
 * first use and lives as long as the process.
 *
 * Hot path: look a series up once (ncmp_counter_get and friends take a
 * lock and hash the label values), keep the pointer, then count with
 * ncmp_counter_add / ncmp_gauge_set / ncmp_histogram_observe, which are a
 * few relaxed atomic operations and never block. All functions are
 * thread-safe.
 *
 *     static const char *const labels[] = {"role", "topic", NULL};
 *     ncmp_metric *m = ncmp_metrics_counter("ncmp_consumed_records_total",
 *                                           "Records consumed.", labels);
 *     const char *values[] = {"registration", "ncmp-dmi-registration"};
 *     ncmp_counter *c = ncmp_counter_get(m, values);   once
 *     ncmp_counter_add(c, n);                          per batch
 *
 * Names, label names and help come from the code, not from input: a bad
 * one, or the same name registered with another type or other labels, is a
 * programming error and aborts with a message (the unit tests register
 * every metric of the library). Label values may come from input: they
 * are stored as valid UTF-8 (bad bytes become '?') and escaped on output.
 * A family holds at most NCMP_METRICS_MAX_SERIES series; further label
 * values all share one series whose labels are "_overflow_", so a flood of
 * distinct values cannot exhaust memory.
 *
 * ncmp_metrics_render() runs the collector callbacks (gauges computed at
 * scrape time, such as rows by state from a query), then writes the
 * Prometheus text exposition format 0.0.4.
 */
#ifndef NCMP_METRICS_H
#define NCMP_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "ncmp_buf.h"

/* Content-Type of ncmp_metrics_render's output. */
#define NCMP_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#define NCMP_METRICS_MAX_LABELS  8
#define NCMP_METRICS_MAX_BUCKETS 40
#define NCMP_METRICS_MAX_SERIES  1000
#define NCMP_METRICS_OVERFLOW    "_overflow_"

typedef enum ncmp_metric_type {
    NCMP_METRIC_COUNTER,
    NCMP_METRIC_GAUGE,
    NCMP_METRIC_HISTOGRAM,
} ncmp_metric_type;

typedef struct ncmp_metric ncmp_metric; /* a family */
typedef struct ncmp_counter ncmp_counter;
typedef struct ncmp_gauge ncmp_gauge;
typedef struct ncmp_histogram ncmp_histogram;

/* --- families ------------------------------------------------------------ */

/* Register a family, or return the one already registered under `name`
 * (same type and labels). `labels` is a NULL-terminated list of label
 * names, or NULL for none. Strings are copied. The family is owned by the
 * registry and lives as long as the process. */
ncmp_metric *ncmp_metrics_counter(const char *name, const char *help, const char *const *labels);
ncmp_metric *ncmp_metrics_gauge(const char *name, const char *help, const char *const *labels);

/* `buckets`: upper bounds, strictly increasing and finite; +Inf is implied.
 * At most NCMP_METRICS_MAX_BUCKETS. */
ncmp_metric *ncmp_metrics_histogram(const char *name, const char *help, const char *const *labels,
                                    const double *buckets, size_t nbuckets);

/* Bucket sets: latencies in seconds (0.5 ms .. 30 s) and sizes in
 * records (1 .. 100,000). */
extern const double ncmp_metrics_buckets_seconds[];
extern const size_t ncmp_metrics_buckets_seconds_len;
extern const double ncmp_metrics_buckets_counts[];
extern const size_t ncmp_metrics_buckets_counts_len;

/* --- series -------------------------------------------------------------- */

/* The series of `m` with label `values` (as many as the family has label
 * names; NULL for a family without labels), created on first use. The
 * pointer stays valid for the life of the process. Aborts if `m` is not of
 * the type asked for. */
ncmp_counter *ncmp_counter_get(ncmp_metric *m, const char *const *values);
ncmp_gauge *ncmp_gauge_get(ncmp_metric *m, const char *const *values);
ncmp_histogram *ncmp_histogram_get(ncmp_metric *m, const char *const *values);

void ncmp_counter_add(ncmp_counter *c, uint64_t n);
uint64_t ncmp_counter_value(const ncmp_counter *c);

void ncmp_gauge_set(ncmp_gauge *g, double v);
void ncmp_gauge_add(ncmp_gauge *g, double delta);
double ncmp_gauge_value(const ncmp_gauge *g);

/* Count one observation (NaN is ignored). */
void ncmp_histogram_observe(ncmp_histogram *h, double v);

/* --- collectors and output ----------------------------------------------- */

/* Called at the start of every render, on the rendering thread, to set
 * gauges computed when scraped. It may get series and set them; it must
 * not render or add/remove collectors. */
typedef void (*ncmp_metrics_collector_fn)(void *arg);

/* Register a collector; returns its id (> 0) for removal. `arg` stays
 * owned by the caller and must live until the collector is removed. */
int ncmp_metrics_collector_add(ncmp_metrics_collector_fn fn, void *arg);

/* Remove a collector. When this returns, the collector is not running and
 * will not run again, so its `arg` may be freed. Unknown ids are ignored. */
void ncmp_metrics_collector_remove(int id);

/* Append every family in the text exposition format 0.0.4 to `out`, in
 * the order the families were registered. */
void ncmp_metrics_render(ncmp_buf *out);

/* --- the library's metrics ----------------------------------------------- */

/* Every family the library itself counts into (see docs/operations.md,
 * "Metrics"). Registered on the first call; the pointers never change. */
typedef struct ncmp_metrics_lib {
    /* lib/ncmp_stage.c */
    ncmp_metric *consumed_records; /* counter {role, topic} */
    ncmp_metric *batch_records;    /* histogram {role} */
    ncmp_metric *batch_seconds;    /* histogram {role} */
    ncmp_metric *batch_retries;    /* counter {role} */
    ncmp_metric *dead_letters;     /* counter {role, topic} */
    ncmp_metric *consumer_lag;     /* gauge {role, topic} */
    /* lib/ncmp_kafka.c */
    ncmp_metric *produced_records;  /* counter {topic} */
    ncmp_metric *produce_failures;  /* counter {topic} */
    ncmp_metric *consumer_renewals; /* counter {group} */
    /* lib/ncmp_db.c */
    ncmp_metric *db_statement_seconds; /* histogram {statement} */
    ncmp_metric *db_reconnects;        /* counter */
    /* ncmp_metrics_http_observe */
    ncmp_metric *http_requests;        /* counter {method, route, status} */
    ncmp_metric *http_request_seconds; /* histogram {method, route} */
    ncmp_metric *inventory_handles;    /* gauge {state}, set by the rest role at scrape */
    /* lib/ncmp_http.c and lib/ncmp_dmi.c: the bounded queues */
    ncmp_metric *http_in_flight; /* gauge */
    ncmp_metric *http_queued;    /* gauge */
    ncmp_metric *shed_requests;  /* counter {reason} */
    ncmp_metric *dmi_in_flight;  /* gauge */
    /* workers/rest/search_index.c */
    ncmp_metric *searches;             /* counter {path} */
    ncmp_metric *search_index_reads;   /* counter */
    ncmp_metric *search_index_loads;   /* counter */
    ncmp_metric *search_index_handles; /* gauge */
    ncmp_metric *search_index_bytes;   /* gauge */
    /* workers/datasync/datasync.c */
    ncmp_metric *data_sync_writers; /* gauge */
} ncmp_metrics_lib;

const ncmp_metrics_lib *ncmp_metrics_lib_get(void);

/* Count one answered HTTP request: `route` is the route pattern (e.g.
 * "/ncmp/v1/ch/{ref}"), not the request path, so the number of series
 * stays bounded; "unmatched" for requests that matched no route. */
void ncmp_metrics_http_observe(const char *method, const char *route, int status, double seconds);

#endif
