/*
 * ncmp-bench-search: NCMP's ten reference searches (NCMP's KPI profile) over
 * HTTP against a running ncmpd, each run `-r` times on one kept-alive
 * connection, timed by the client (libcurl's total time, as k6's
 * duration); and, for the raw limit, the same rows read straight from
 * PostgreSQL over one libpq connection, as many times.
 *
 *   ncmp-bench-search -u http://127.0.0.1:8883 -d postgresql://... -n 50000 [-r 11]
 *                     [-U http://127.0.0.1:8884] [-j FILE]
 *
 * -U: a second ncmpd on the same database with rest.search-index=false
 * (PostgreSQL's path), timed in the same runs, one request after the
 * other, so that the index's gain is measured on the same machine at the
 * same moment. The first ncmpd's /metrics then give where its searches
 * were answered and the index's memory per handle.
 *
 * Every answer must hold exactly -n entries (checked on every run), as the
 * reference suite requires. Prints a table of medians; -j writes JSON.
 */
#include <curl/curl.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_usage.h"
#include "ncmp_buf.h"

static const char usage[] =
    "usage: ncmp-bench-search -u BASE-URL -d DBURL -n HANDLES [-r RUNS] [-U DATABASE-PATH-URL]\n"
    "                         [-j FILE]\n"
    "NCMP's ten reference searches against the ncmpd at BASE-URL, RUNS (11) times\n"
    "each, every answer checked to hold HANDLES entries, beside the same rows read\n"
    "from PostgreSQL at DBURL; -U: a second ncmpd answering from PostgreSQL, timed\n"
    "in the same runs; -j FILE writes the medians as JSON.\n";

typedef struct search {
    const char *name;
    const char *body;
    const char *where; /* the same handles, for the raw query */
} search;

/* clang-format off */
static const search searches[] = {
    {"no-filter", "{\"cmHandleQueryParameters\": []}", "true"},
    {"module", "{\"cmHandleQueryParameters\": [{\"conditionName\": \"hasAllModules\", "
               "\"conditionParameters\": [{\"moduleName\": \"module100\"}]}]}",
     "h.module_set_id IN (SELECT m.module_set_id FROM module_set_member m"
     " WHERE m.module_name = 'module100')"},
    {"property", "{\"cmHandleQueryParameters\": [{\"conditionName\": \"hasAllProperties\", "
                 "\"conditionParameters\": [{\"systemName\": \"ncmp\"}]}]}",
     "h.public_properties @> '{\"systemName\":\"ncmp\"}'"},
    {"trust-level", "{\"cmHandleQueryParameters\": [{\"conditionName\": \"cmHandleWithTrustLevel\", "
                    "\"conditionParameters\": [ {\"trustLevel\": \"COMPLETE\"} ]}]}",
     "h.effective_trust_level = 'COMPLETE'"},
    {"cps-path", "{\"cmHandleQueryParameters\": [{\"conditionName\": \"cmHandleWithCpsPath\", "
                 "\"conditionParameters\": [{\"cpsPath\": \"//state[@cm-handle-state='READY']\"}]}]}",
     "h.state = 'READY'"},
};
/* clang-format on */
#define NSEARCH (sizeof(searches) / sizeof(searches[0]))

/* What a full search's handle object is made of, read raw. */
#define FULL_COLUMNS                                                                               \
    "h.id, h.alternate_id, h.module_set_tag, h.data_producer_identifier, h.public_properties,"     \
    " h.state, h.lock_reason, h.lock_details, h.last_update_time, h.data_sync_enabled,"            \
    " h.operational_sync_state, h.effective_trust_level"

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* Entries of a top-level JSON array: commas at depth 1 outside strings. */
static long array_length(const char *s, size_t len)
{
    long n = 0;
    int depth = 0, in_str = 0, any = 0;

    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
            continue;
        }
        if (c == '"') {
            in_str = 1;
            any |= depth == 1;
        } else if (c == '[' || c == '{') {
            any |= depth == 1;
            depth++;
        } else if (c == ']' || c == '}') {
            depth--;
        } else if (c == ',' && depth == 1) {
            n++;
        } else if (depth == 1 && c != ' ' && c != '\n') {
            any = 1;
        }
    }
    return any ? n + 1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* One search over HTTP: returns ms (client total time), or -1. */
static double http_search(CURL *h, const char *base, int full, const search *s, long expect)
{
    char url[512];
    ncmp_buf body = NCMP_BUF_INIT;
    double secs = 0;
    long status = 0, got;

    snprintf(url, sizeof(url), "%s/ncmp/v1/ch/%s?outputAlternateId=true", base,
             full ? "searches" : "id-searches");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, s->body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    if (curl_easy_perform(h) != CURLE_OK) {
        fprintf(stderr, "ncmp-bench-search: %s: request failed\n", url);
        ncmp_buf_free(&body);
        return -1;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_TOTAL_TIME, &secs);
    got = array_length(body.data ? body.data : "", body.len);
    ncmp_buf_free(&body);
    if (status != 200 || got != expect) {
        fprintf(stderr, "ncmp-bench-search: %s %s: HTTP %ld, %ld entries, expected %ld\n",
                full ? "search" : "id-search", s->name, status, got, expect);
        return -1;
    }
    return secs * 1000.0;
}

/* The value of the metric line `name` (name and labels, as written) of
 * base/metrics, or -1. */
static double metric(CURL *h, const char *base, const char *name)
{
    char url[512];
    ncmp_buf body = NCMP_BUF_INIT;
    double v = -1;
    size_t n = strlen(name);

    snprintf(url, sizeof(url), "%s/metrics", base);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    if (curl_easy_perform(h) == CURLE_OK && body.data)
        for (const char *at = body.data; at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL)
            if (strncmp(at, name, n) == 0 && at[n] == ' ') {
                v = strtod(at + n + 1, NULL);
                break;
            }
    ncmp_buf_free(&body);
    return v;
}

/* The same rows from PostgreSQL: returns ms, or -1. */
static double raw_search(PGconn *db, int full, const search *s, long expect)
{
    char sql[1024];
    double t0 = now_ms(), ms;
    PGresult *res;

    snprintf(sql, sizeof(sql), "SELECT %s FROM cm_handle h WHERE %s",
             full ? FULL_COLUMNS : "h.alternate_id", s->where);
    res = PQexec(db, sql);
    ms = now_ms() - t0;
    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != expect) {
        fprintf(stderr, "ncmp-bench-search: raw %s: %s (%d rows)\n", s->name,
                PQresultErrorMessage(res), PQntuples(res));
        PQclear(res);
        return -1;
    }
    PQclear(res);
    return ms;
}

int main(int argc, char **argv)
{
    const char *base = NULL, *dburl = NULL, *json = NULL, *dbpath = NULL;
    long expect = 0;
    int runs = 11, c, rc = 0;
    double med[2][NSEARCH], raw[2][NSEARCH], viadb[2][NSEARCH];
    double from_memory = -1, from_db = -1, index_bytes = -1, index_handles = -1;
    struct curl_slist *hdr;
    CURL *h;
    PGconn *db;
    FILE *out;

    if (bench_help_asked(argc, argv))
        return bench_usage(usage, 1);
    while ((c = getopt(argc, argv, "u:d:n:r:j:U:")) != -1) {
        switch (c) {
        case 'U':
            dbpath = optarg;
            break;
        case 'u':
            base = optarg;
            break;
        case 'd':
            dburl = optarg;
            break;
        case 'n':
            expect = strtol(optarg, NULL, 10);
            break;
        case 'r':
            runs = atoi(optarg);
            break;
        case 'j':
            json = optarg;
            break;
        default:
            return bench_usage(usage, 0);
        }
    }
    if (!base || !dburl || expect <= 0 || runs < 1 || runs > 1000)
        return bench_usage(usage, 0);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    h = curl_easy_init();
    hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
    db = PQconnectdb(dburl);
    if (PQstatus(db) != CONNECTION_OK) {
        fprintf(stderr, "ncmp-bench-search: %s", PQerrorMessage(db));
        return 1;
    }
    for (int full = 0; full < 2 && rc == 0; full++) {
        for (size_t s = 0; s < NSEARCH && rc == 0; s++) {
            double *t = calloc((size_t)runs, sizeof(*t)), *r = calloc((size_t)runs, sizeof(*r));
            double *d = calloc((size_t)runs, sizeof(*d));
            /* one warm-up of each, as the connection and caches would be */
            if (http_search(h, base, full, &searches[s], expect) < 0 ||
                raw_search(db, full, &searches[s], expect) < 0 ||
                (dbpath && http_search(h, dbpath, full, &searches[s], expect) < 0))
                rc = 1;
            for (int i = 0; i < runs && rc == 0; i++) {
                t[i] = http_search(h, base, full, &searches[s], expect);
                r[i] = raw_search(db, full, &searches[s], expect);
                d[i] = dbpath ? http_search(h, dbpath, full, &searches[s], expect) : 0;
                if (t[i] < 0 || r[i] < 0 || d[i] < 0)
                    rc = 1;
            }
            if (rc == 0) {
                med[full][s] = median(t, runs);
                raw[full][s] = median(r, runs);
                viadb[full][s] = dbpath ? median(d, runs) : -1;
            }
            free(t);
            free(r);
            free(d);
        }
    }
    if (rc == 0) {
        from_memory = metric(h, base, "ncmp_searches_total{path=\"memory\"}");
        from_db = metric(h, base, "ncmp_searches_total{path=\"database\"}");
        index_bytes = metric(h, base, "ncmp_search_index_bytes");
        index_handles = metric(h, base, "ncmp_search_index_handles");
        printf("\n%-24s %12s %14s %8s %16s\n", "search (median of runs)", "ncmpd ms",
               "PostgreSQL ms", "ratio", "without index ms");
        for (int full = 0; full < 2; full++)
            for (size_t s = 0; s < NSEARCH; s++)
                printf("%-10s %-13s %12.1f %14.1f %8.2f %16.1f\n", full ? "search" : "id-search",
                       searches[s].name, med[full][s], raw[full][s],
                       raw[full][s] > 0 ? med[full][s] / raw[full][s] : 0, viadb[full][s]);
        printf("%ld handles in every answer, %d runs each, one kept-alive connection\n", expect,
               runs);
        if (from_memory >= 0)
            printf("searches answered from the index %.0f, by PostgreSQL %.0f; the index holds "
                   "%.0f handles in %.1f MB (%.0f bytes per handle)\n",
                   from_memory, from_db, index_handles, index_bytes / 1048576.0,
                   index_handles > 0 ? index_bytes / index_handles : 0);
    }
    if (rc == 0 && json && (out = fopen(json, "w"))) {
        fprintf(out,
                "{\"scenario\": \"search\", \"handles\": %ld, \"runs\": %d,"
                " \"searches_from_index\": %.0f, \"searches_from_database\": %.0f,"
                " \"index_handles\": %.0f, \"index_bytes\": %.0f,"
                " \"index_bytes_per_handle\": %.0f, \"searches\": [",
                expect, runs, from_memory, from_db, index_handles, index_bytes,
                index_handles > 0 ? index_bytes / index_handles : -1);
        for (int full = 0; full < 2; full++)
            for (size_t s = 0; s < NSEARCH; s++)
                fprintf(out,
                        "%s\n {\"kind\": \"%s\", \"filter\": \"%s\", \"median_ms\": %.2f, "
                        "\"postgres_median_ms\": %.2f, \"without_index_median_ms\": %.2f}",
                        full || s ? "," : "", full ? "search" : "id-search", searches[s].name,
                        med[full][s], raw[full][s], viadb[full][s]);
        fprintf(out, "]}\n");
        fclose(out);
    }
    PQfinish(db);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    curl_global_cleanup();
    return rc;
}
