/*
 * ncmp-bench-cps: CPS's own performance suite (the Write, Get, Query,
 * Update, Delete and Delta tests of onap/cps integration-test, performance/cps)
 * replayed over CPS's REST API against a running ncmpd, each scenario timed
 * by this client on one kept-alive connection and printed beside CPS's
 * expected seconds; in the same run the raw limits on the same rows and
 * documents (COPY of an anchor's fragment rows, PostgreSQL returning them,
 * libyang parsing the same document), seed-sized anchors, and two streams
 * of 269 KB documents with ncmpd's RSS, each followed by the same rows
 * written again by COPY, one transaction per document.
 *
 *   ncmp-bench-cps -u BASE-URL -d DBURL -D DATA-DIR [-p NCMPD-PID] [-j FILE]
 *       [--devices N] [--delete-devices N] [--seed-devices N] [--seed-anchors N]
 *       [--docs A,B] [--runs R] [--delta-only]
 *
 * DATA-DIR is the repository's tests/data (openroadm/model.zip,
 * openroadm/device.json, bookstore/bookstore.zip). The data is CPS's: a
 * dataspace, the Open ROADM schema set, 3 anchors of N devices (1,000:
 * 86,001 nodes each) made from the one sample device by changing its
 * device-id, posted as {"openroadm-devices": {"openroadm-device": [...]}}
 * at xpath / (the top-level name without its module, as CPS posts it).
 *
 * A scenario whose request fails is reported with the status and the
 * start of the body (an endpoint ncmpd does not serve yet: "endpoint not
 * available (HTTP 404)") and the others go on. Reads are idempotent and
 * cheap: their figure is the median of R runs; a write or a delete is
 * timed once, as CPS times it. Exit status: 0 when every scenario passed,
 * 3 when some failed (the JSON is written either way), 1 when the setup
 * failed, 2 for bad arguments.
 */
#include <curl/curl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <libyang/libyang.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zip.h>

#include "bench_usage.h"
#include "ncmp_buf.h"
#include "ncmp_err.h"
#include "ncmp_yang.h"

#define DS               "cpsPerformanceDataspace"
#define LARGE            "largeSchemaSet"
#define BOOKS            "bookstoreSchemaSet"
#define NODES_PER_DEVICE 86
#define DOC_DEVICES      25 /* devices per 269 KB document */
#define MAX_RESULTS      128
#define MAX_RUNS         101

static const char usage[] =
    "usage: ncmp-bench-cps -u BASE-URL -d DBURL -D DATA-DIR [-p NCMPD-PID] [-j FILE]\n"
    "                      [--devices N<=1000] [--delete-devices N>=100] [--seed-devices N]\n"
    "                      [--seed-anchors N] [--docs A,B] [--runs R] [--delta-only]\n"
    "CPS's performance suite over CPS's REST API against the ncmpd at BASE-URL (role\n"
    "cps), with the raw limits on the same rows (PostgreSQL at DBURL) and documents\n"
    "(libyang); DATA-DIR holds openroadm/ and bookstore/; -p: ncmpd's pid, for its\n"
    "RSS; -j FILE writes the figures as JSON. ./run bench cps runs it.\n";

typedef struct opts {
    const char *base, *dburl, *datadir, *json;
    long pid;
    long devices, delete_devices, seed_devices, seed_anchors;
    long docs[2];
    int runs;
    int delta_only; /* --delta-only: the setup and the Delta scenarios */
} opts;

typedef struct result {
    char name[160];
    const char *test; /* Write, Get, Query, Update, Delete, Delta, Setup */
    double expected;  /* CPS's expected seconds */
    double secs;      /* < 0: failed */
    long nodes;
    char error[256];
} result;

/* One run of a stream of 269 KB documents. */
typedef struct docs_run {
    long docs, nodes;
    double secs;
    double rss_start_mb, rss_end_mb, hwm_start_mb, hwm_end_mb;
    double tenth_rate[10]; /* nodes/s of each tenth of the documents */
    /* the raw limit: the same rows by COPY, one transaction per document */
    double copy_secs;
    double copy_tenth_rate[10];
    char error[256];
} docs_run;

/* One seed anchor. */
typedef struct seed_run {
    long nodes, db_nodes;
    double secs;
} seed_run;

typedef struct bench {
    opts o;
    CURL *h;
    struct curl_slist *hdr;
    ncmp_buf resp;
    long status;
    double t;        /* seconds spent in requests since the scenario began */
    char why[256];   /* why the last call failed */
    char url[65536]; /* the last request's URL */
    PGconn *pg;
    ncmp_buf device; /* tests/data/openroadm/device.json */
    size_t id_at, status_at;
    result res[MAX_RESULTS];
    int nres;
    /* raw limits and summary figures; < 0 when not measured */
    double copy_rows_per_s, read_all_ms, read_all_pg_ms, leaf_ms, leaf_pg_ms;
    double read_all_pg_default_ms; /* PostgreSQL's own plan (read_all_pg_ms: the faster) */
    double libyang_ms, replace_ms, store_secs;
    long copy_rows, libyang_nodes, replace_nodes, store_nodes, read_all_nodes, leaf_nodes;
    double delete_rates[3];
    int ndelete_rates;
    docs_run docs[2];
    seed_run *seed;
    double seed_read_ms, seed_read_pg_ms;
    double delta_rss_start_mb, delta_rss_end_mb, delta_hwm_start_mb, delta_hwm_end_mb;
    double delta_hwm_setup_mb;   /* the peak once the two anchors are written */
    double delta_hwm_anchors_mb; /* the peak after the two-anchor scenarios */
} bench;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

static int read_file(const char *path, ncmp_buf *out)
{
    FILE *f = fopen(path, "rb");
    char chunk[65536];
    size_t got;

    if (!f) {
        fprintf(stderr, "ncmp-bench-cps: cannot read %s\n", path);
        return -1;
    }
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
        ncmp_buf_append(out, chunk, got);
    fclose(f);
    ncmp_buf_append_char(out, '\0');
    out->len--;
    return 0;
}

/* --- HTTP ------------------------------------------------------------------ */

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* b->url = base + the formatted rest. */
static const char *url(bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *url(bench *b, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(b->url, sizeof(b->url), "%s", b->o.base);

    va_start(ap, fmt);
    vsnprintf(b->url + n, sizeof(b->url) - (size_t)n, fmt, ap);
    va_end(ap);
    return b->url;
}

/* A query value, percent-encoded, in one of 4 rotating buffers. */
static const char *esc(bench *b, const char *s)
{
    static char bufs[4][4096];
    static int next;
    char *e = curl_easy_escape(b->h, s, 0);
    char *out = bufs[next++ % 4];

    snprintf(out, sizeof(bufs[0]), "%s", e ? e : "");
    curl_free(e);
    return out;
}

/* One request to b->url. Returns 0 when the status is `want`, else -1
 * with b->why set. The request's time is added to b->t. */
static int call(bench *b, const char *method, const char *body, size_t len, long want)
{
    double t0;
    CURLcode rc;

    ncmp_buf_reset(&b->resp);
    curl_easy_setopt(b->h, CURLOPT_URL, b->url);
    if (body) {
        curl_easy_setopt(b->h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(b->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(b->h, CURLOPT_CUSTOMREQUEST, method);
    } else {
        curl_easy_setopt(b->h, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(b->h, CURLOPT_CUSTOMREQUEST, strcmp(method, "GET") ? method : NULL);
    }
    t0 = now_s();
    rc = curl_easy_perform(b->h);
    b->t += now_s() - t0;
    b->status = 0;
    if (rc != CURLE_OK) {
        snprintf(b->why, sizeof(b->why), "%s: %s", method, curl_easy_strerror(rc));
        return -1;
    }
    curl_easy_getinfo(b->h, CURLINFO_RESPONSE_CODE, &b->status);
    ncmp_buf_append_char(&b->resp, '\0');
    b->resp.len--;
    if (b->status == want)
        return 0;
    /* ncmpd's answer for a path it has no route for */
    if ((b->status == 404 && strstr(b->resp.data, "\"Not found\"")) || b->status == 405)
        snprintf(b->why, sizeof(b->why), "endpoint not available (HTTP %ld)", b->status);
    else
        snprintf(b->why, sizeof(b->why), "%s: HTTP %ld, expected %ld: %.160s", method, b->status,
                 want, b->resp.data);
    return -1;
}

/* POST a schema set from a zip (multipart `file`, as CPS's clients send). */
static int upload_schema_set(bench *b, const char *name, const char *zip)
{
    curl_mime *mime = curl_mime_init(b->h);
    curl_mimepart *part = curl_mime_addpart(mime);
    int rc;

    curl_mime_name(part, "file");
    curl_mime_filedata(part, zip);
    url(b, "/cps/api/v2/dataspaces/" DS "/schema-sets?schema-set-name=%s", name);
    curl_easy_setopt(b->h, CURLOPT_URL, b->url);
    curl_easy_setopt(b->h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(b->h, CURLOPT_MIMEPOST, mime);
    ncmp_buf_reset(&b->resp);
    rc = curl_easy_perform(b->h) == CURLE_OK ? 0 : -1;
    curl_easy_getinfo(b->h, CURLINFO_RESPONSE_CODE, &b->status);
    curl_easy_setopt(b->h, CURLOPT_MIMEPOST, NULL);
    curl_easy_setopt(b->h, CURLOPT_HTTPHEADER, b->hdr);
    curl_mime_free(mime);
    if (rc != 0 || b->status != 201) {
        ncmp_buf_append_char(&b->resp, '\0');
        fprintf(stderr, "ncmp-bench-cps: schema set %s: HTTP %ld: %.300s\n", name, b->status,
                b->resp.data ? b->resp.data : "");
        return -1;
    }
    return 0;
}

/* --- documents --------------------------------------------------------------- */

/* Devices first .. first+n-1, comma-separated, from the sample with its
 * device-id changed (and its status "fail" with `fail`), as CPS makes them. */
static void append_devices(bench *b, ncmp_buf *out, long first, long n, int fail)
{
    const char *d = b->device.data;
    size_t id_end = b->id_at + strlen("NODE_ID_HERE"), st_end = b->status_at + strlen("success");

    for (long i = 0; i < n; i++) {
        if (i)
            ncmp_buf_append_char(out, ',');
        ncmp_buf_append(out, d, b->id_at);
        ncmp_buf_appendf(out, "%ld", first + i);
        ncmp_buf_append(out, d + id_end, b->status_at - id_end);
        ncmp_buf_append_str(out, fail ? "fail" : "success");
        ncmp_buf_append(out, d + st_end, b->device.len - st_end);
    }
}

/* {"openroadm-devices": {"openroadm-device": [...]}} (at xpath /). */
static void tree_doc(bench *b, ncmp_buf *out, long first, long n, int fail)
{
    ncmp_buf_reset(out);
    ncmp_buf_append_str(out, "{\"openroadm-devices\": {\"openroadm-device\": [");
    append_devices(b, out, first, n, fail);
    ncmp_buf_append_str(out, "]}}");
}

/* {"openroadm-device": [...]} (at xpath /openroadm-devices). */
static void list_doc(bench *b, ncmp_buf *out, long first, long n, int fail)
{
    ncmp_buf_reset(out);
    ncmp_buf_append_str(out, "{\"openroadm-device\": [");
    append_devices(b, out, first, n, fail);
    ncmp_buf_append_str(out, "]}");
}

/* --- counting the nodes of an answer ------------------------------------------ */

/* A data node's object: itself and every object below it (a container's
 * object, or a list's array of entry objects). */
static long node_count(json_object *node)
{
    long n = 1;

    json_object_object_foreach(node, key, val)
    {
        (void)key;
        if (json_object_is_type(val, json_type_object)) {
            n += node_count(val);
        } else if (json_object_is_type(val, json_type_array)) {
            size_t len = json_object_array_length(val);
            for (size_t i = 0; i < len; i++) {
                json_object *e = json_object_array_get_idx(val, i);
                if (json_object_is_type(e, json_type_object))
                    n += node_count(e);
            }
        }
    }
    return n;
}

/* The nodes of a {name: node, name: [entries]} map (not itself a node). */
static long map_count(json_object *map)
{
    return json_object_is_type(map, json_type_object) ? node_count(map) - 1 : -1;
}

typedef enum shape {
    SHAPE_MAP,    /* GET v3 node: one map of the top nodes */
    SHAPE_LIST,   /* query of one anchor: a list of maps */
    SHAPE_ACROSS, /* query across anchors: [{anchorName, dataNodes: [maps]}] */
    SHAPE_LEAVES, /* query of a leaf: a list of {leaf: value} */
} shape;

/* The data nodes in the last answer, or -1 when it is not of `s`. */
static long answer_nodes(bench *b, shape s)
{
    json_tokener *tok = json_tokener_new_ex(1000);
    json_object *root = json_tokener_parse_ex(tok, b->resp.data, (int)b->resp.len);
    long n = -1;

    if (!root) {
        json_tokener_free(tok);
        return -1;
    }
    if (s == SHAPE_MAP) {
        n = map_count(root);
    } else if (json_object_is_type(root, json_type_array)) {
        size_t len = json_object_array_length(root);
        n = 0;
        for (size_t i = 0; i < len && n >= 0; i++) {
            json_object *e = json_object_array_get_idx(root, i), *nodes;
            if (s == SHAPE_LEAVES) {
                n++;
            } else if (s == SHAPE_LIST) {
                long k = map_count(e);
                n = k < 0 ? -1 : n + k;
            } else if (json_object_object_get_ex(e, "dataNodes", &nodes) &&
                       json_object_is_type(nodes, json_type_array)) {
                for (size_t j = 0; j < json_object_array_length(nodes) && n >= 0; j++) {
                    long k = map_count(json_object_array_get_idx(nodes, j));
                    n = k < 0 ? -1 : n + k;
                }
            } else {
                n = -1;
            }
        }
    }
    json_object_put(root);
    json_tokener_free(tok);
    return n;
}

/* --- results --------------------------------------------------------------------- */

static result *record(bench *b, const char *test, const char *name, double expected)
{
    result *r = &b->res[b->nres < MAX_RESULTS ? b->nres++ : MAX_RESULTS - 1];

    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->test = test;
    r->expected = expected;
    r->secs = -1;
    return r;
}

static void passed(result *r, double secs, long nodes)
{
    r->secs = secs;
    r->nodes = nodes;
    fprintf(stderr, "  %-62s %9.3f s  (CPS %6.2f s)  %8ld nodes\n", r->name, secs, r->expected,
            nodes);
}

static void failed(result *r, const char *why)
{
    r->secs = -1;
    snprintf(r->error, sizeof(r->error), "%s", why);
    fprintf(stderr, "  %-62s FAILED: %s\n", r->name, why);
}

/* --- PostgreSQL ---------------------------------------------------------------- */

/* One value of a one-row query, or -1. */
static long pg_long(bench *b, const char *sql, int nparams, const char *const *params)
{
    PGresult *res = PQexecParams(b->pg, sql, nparams, NULL, params, NULL, NULL, 0);
    long v = -1;

    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
        v = strtol(PQgetvalue(res, 0, 0), NULL, 10);
    else if (PQresultStatus(res) != PGRES_TUPLES_OK)
        fprintf(stderr, "ncmp-bench-cps: %s", PQresultErrorMessage(res));
    PQclear(res);
    return v;
}

static long anchor_id(bench *b, const char *anchor)
{
    const char *p[2] = {DS, anchor};
    return pg_long(b,
                   "SELECT a.id FROM anchor a JOIN dataspace d ON d.id = a.dataspace_id"
                   " WHERE d.name = $1 AND a.name = $2",
                   2, p);
}

static long fragment_rows(bench *b, const char *anchor)
{
    char id[24];
    const char *p[1] = {id};

    snprintf(id, sizeof(id), "%ld", anchor_id(b, anchor));
    return pg_long(b, "SELECT count(*) FROM fragment WHERE anchor_id = $1", 1, p);
}

/* ms for PostgreSQL to return the rows of `sql` ($1 = the anchor id) to
 * this client, the median of runs; *rows gets their number. */
static double pg_read_ms_once(bench *b, long anchor, const char *sql, long *rows);

/* The same, planned as PostgreSQL plans it by default and as ncmpd plans
 * its reads of the store (random_page_cost 1.1: workers/rest/rest_db.h,
 * REST_DB_KEY_ORDER): the faster of the two, and the default's in
 * *default_ms (may be NULL), so that the limit is PostgreSQL's best. */
static double pg_read_ms(bench *b, long anchor, const char *sql, long *rows, double *default_ms)
{
    double plain = pg_read_ms_once(b, anchor, sql, rows), keyed = -1;
    PGresult *res = PQexec(b->pg, "SET random_page_cost = 1.1");

    if (PQresultStatus(res) == PGRES_COMMAND_OK)
        keyed = pg_read_ms_once(b, anchor, sql, rows);
    PQclear(res);
    PQclear(PQexec(b->pg, "RESET random_page_cost"));
    if (default_ms)
        *default_ms = plain;
    return keyed > 0 && (plain < 0 || keyed < plain) ? keyed : plain;
}

static double pg_read_ms_once(bench *b, long anchor, const char *sql, long *rows)
{
    double t[MAX_RUNS];
    char id[24];
    const char *p[1] = {id};
    int runs = b->o.runs;

    snprintf(id, sizeof(id), "%ld", anchor);
    for (int i = 0; i <= runs; i++) { /* one warm-up */
        double t0 = now_s();
        PGresult *res = PQexecParams(b->pg, sql, 1, NULL, p, NULL, NULL, 0);
        double ms = (now_s() - t0) * 1000.0;
        if (PQresultStatus(res) != PGRES_TUPLES_OK) {
            fprintf(stderr, "ncmp-bench-cps: %s", PQresultErrorMessage(res));
            PQclear(res);
            return -1;
        }
        *rows = PQntuples(res);
        PQclear(res);
        if (i)
            t[i - 1] = ms;
    }
    return median(t, runs);
}

/* The rows of `copy_to` ("COPY (...) TO STDOUT") appended to *rows, in
 * COPY's text format; their count, or -1. */
static long copy_out(PGconn *pg, const char *copy_to, ncmp_buf *rows)
{
    PGresult *res = PQexec(pg, copy_to);
    long n = PQresultStatus(res) == PGRES_COPY_OUT ? 0 : -1;
    char *line;
    int len;

    PQclear(res);
    while (n >= 0 && (len = PQgetCopyData(pg, &line, 0)) > 0) {
        ncmp_buf_append(rows, line, (size_t)len);
        PQfreemem(line);
        n++;
    }
    while ((res = PQgetResult(pg))) {
        if (PQresultStatus(res) != PGRES_COMMAND_OK)
            n = -1;
        PQclear(res);
    }
    return n;
}

/* rows (COPY's text format) through `copy_from` ("COPY t (...) FROM
 * STDIN"), sent in blocks of 256 KB; 0, or -1. */
static int copy_in(PGconn *pg, const char *copy_from, const ncmp_buf *rows)
{
    PGresult *res = PQexec(pg, copy_from);
    int ok = PQresultStatus(res) == PGRES_COPY_IN;

    PQclear(res);
    if (!ok)
        return -1;
    for (size_t off = 0; off < rows->len; off += 256 * 1024) {
        size_t n = rows->len - off < 256 * 1024 ? rows->len - off : 256 * 1024;
        PQputCopyData(pg, rows->data + off, (int)n);
    }
    PQputCopyEnd(pg, NULL);
    while ((res = PQgetResult(pg))) {
        ok = ok && PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
    }
    return ok ? 0 : -1;
}

/* COPY the fragment rows of `anchor` out, then time COPY of the same rows
 * into an empty table like fragment_store, the partition the store's
 * anchors write to (same key and indexes), the median of runs. */
static void raw_copy(bench *b, long anchor)
{
    ncmp_buf rows = NCMP_BUF_INIT;
    char sql[256];
    double t[MAX_RUNS];
    PGresult *res;
    int runs = b->o.runs < 3 ? b->o.runs : 3, ok;

    snprintf(sql, sizeof(sql),
             "COPY (SELECT anchor_id, path, depth, name, attributes FROM fragment"
             " WHERE anchor_id = %ld ORDER BY path) TO STDOUT",
             anchor);
    b->copy_rows = copy_out(b->pg, sql, &rows);
    ok = b->copy_rows >= 0;
    if (!ok)
        b->copy_rows = 0;
    for (int i = 0; ok && i < runs; i++) {
        double t0;
        res =
            PQexec(b->pg, "DROP TABLE IF EXISTS bench_copy_fragment;"
                          " CREATE TABLE bench_copy_fragment (LIKE fragment_store INCLUDING ALL)");
        ok = PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
        t0 = now_s();
        ok = ok && copy_in(b->pg,
                           "COPY bench_copy_fragment (anchor_id, path, depth, name, attributes)"
                           " FROM STDIN",
                           &rows) == 0;
        t[i] = now_s() - t0;
    }
    if (ok)
        b->copy_rows_per_s = (double)b->copy_rows / median(t, runs);
    else
        fprintf(stderr, "ncmp-bench-cps: raw COPY: %s", PQerrorMessage(b->pg));
    PQclear(PQexec(b->pg, "DROP TABLE IF EXISTS bench_copy_fragment"));
    ncmp_buf_free(&rows);
}

/* --- libyang --------------------------------------------------------------------- */

/* The compiled Open ROADM set from model.zip, every module implemented
 * (as ncmpd compiles a schema set), or NULL. */
static struct ly_ctx *openroadm_ctx(const char *zippath)
{
    ncmp_yang_source src[128];
    size_t n = 0;
    struct ly_ctx *ctx = NULL;
    ncmp_err err;
    int zerr;
    zip_t *za = zip_open(zippath, ZIP_RDONLY, &zerr);

    if (!za)
        return NULL;
    for (zip_int64_t i = 0; i < zip_get_num_entries(za, 0) && n < 128; i++) {
        const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
        zip_stat_t st;
        zip_file_t *f;
        char *text, *mod = NULL, *rev = NULL;
        size_t nl = name ? strlen(name) : 0;

        if (nl < 5 || strcmp(name + nl - 5, ".yang") != 0 ||
            zip_stat_index(za, (zip_uint64_t)i, 0, &st) != 0 ||
            !(f = zip_fopen_index(za, (zip_uint64_t)i, 0)))
            continue;
        text = ncmp_xcalloc(1, st.size + 1);
        if (zip_fread(f, text, st.size) != (zip_int64_t)st.size ||
            ncmp_yang_source_name(text, &mod, &rev, &err) != 0) {
            free(text);
            zip_fclose(f);
            continue;
        }
        zip_fclose(f);
        src[n++] = (ncmp_yang_source){.name = mod, .revision = rev, .source = text};
    }
    zip_close(za);
    if (ncmp_yang_ctx_from_set(src, n, NULL, NULL, 1, &ctx, &err) != 0) {
        fprintf(stderr, "ncmp-bench-cps: the Open ROADM model: %s\n", err.msg);
        ctx = NULL;
    }
    ncmp_yang_sources_clear(src, n);
    for (size_t i = 0; i < n; i++) {
        free((char *)src[i].name);
        free((char *)src[i].revision);
        free((char *)src[i].source);
    }
    return ctx;
}

/* Containers and list entries of a parsed tree: what ncmpd stores as rows. */
static long ly_nodes(const struct lyd_node *tree)
{
    long n = 0;
    const struct lyd_node *top, *elem;

    LY_LIST_FOR(tree, top)
    {
        LYD_TREE_DFS_BEGIN(top, elem)
        {
            if (elem->schema && (elem->schema->nodetype & (LYS_CONTAINER | LYS_LIST)))
                n++;
            LYD_TREE_DFS_END(top, elem);
        }
    }
    return n;
}

/* libyang parsing the anchors' document (devices, the module's name on
 * the top node as libyang needs it), with ncmpd's flags; median of runs. */
static void raw_libyang(bench *b)
{
    char zip[4096];
    struct ly_ctx *ctx;
    const struct lys_module *mod = NULL;
    ncmp_buf doc = NCMP_BUF_INIT;
    double t[MAX_RUNS];
    uint32_t it = 0;
    int runs = b->o.runs;

    snprintf(zip, sizeof(zip), "%s/openroadm/model.zip", b->o.datadir);
    /* the model's warnings (unprefixed leafref paths) are not this run's */
    ly_log_options(LY_LOSTORE_LAST);
    ctx = openroadm_ctx(zip);
    if (!ctx)
        return;
    while ((mod = ly_ctx_get_module_iter(ctx, &it)))
        if (mod->implemented && lys_find_child(NULL, mod, "openroadm-devices", 0, LYS_CONTAINER, 0))
            break;
    if (!mod) {
        fprintf(stderr, "ncmp-bench-cps: no module of the model has openroadm-devices\n");
        ly_ctx_destroy(ctx);
        return;
    }
    tree_doc(b, &doc, 1, b->o.devices, 0);
    {
        ncmp_buf q = NCMP_BUF_INIT; /* the top name qualified */
        ncmp_buf_appendf(&q, "{\"%s:openroadm-devices\"", mod->name);
        ncmp_buf_append_str(&q, doc.data + strlen("{\"openroadm-devices\""));
        ncmp_buf_free(&doc);
        doc = q;
    }
    for (int i = 0; i < runs; i++) {
        struct lyd_node *tree = NULL;
        double t0 = now_s();
        if (lyd_parse_data_mem(ctx, doc.data, LYD_JSON, LYD_PARSE_ONLY | LYD_PARSE_STRICT, 0,
                               &tree) != LY_SUCCESS) {
            const struct ly_err_item *e = ly_err_last(ctx);
            fprintf(stderr, "ncmp-bench-cps: libyang: %s\n", e && e->msg ? e->msg : "?");
            ly_ctx_destroy(ctx);
            ncmp_buf_free(&doc);
            return;
        }
        t[i] = now_s() - t0;
        b->libyang_nodes = ly_nodes(tree);
        lyd_free_all(tree);
    }
    b->libyang_ms = median(t, runs) * 1000.0;
    ly_ctx_destroy(ctx);
    ncmp_buf_free(&doc);
}

/* --- the scenarios ---------------------------------------------------------------- */

#define NODES_URL(ver, anchor, what, xpath)                                                        \
    url(b, "/cps/api/" ver "/dataspaces/" DS "/anchors/%s/" what "?xpath=%s", anchor, esc(b, xpath))

static int anchor_create(bench *b, const char *set, const char *anchor)
{
    url(b, "/cps/api/v2/dataspaces/" DS "/anchors?schema-set-name=%s&anchor-name=%s", set, anchor);
    return call(b, "POST", "", 0, 201);
}

static int anchor_delete(bench *b, const char *anchor)
{
    url(b, "/cps/api/v2/dataspaces/" DS "/anchors/%s", anchor);
    return call(b, "DELETE", NULL, 0, 204);
}

/* POST (save) or PUT (replace) `doc` under `xpath` of nodes or list-nodes. */
static int write_doc(bench *b, const char *method, const char *anchor, const char *what,
                     const char *xpath, const ncmp_buf *doc, long want)
{
    url(b, "/cps/api/v2/dataspaces/" DS "/anchors/%s/%s?xpath=%s", anchor, what, esc(b, xpath));
    return call(b, method, doc->data, doc->len, want);
}

/* The setup: anchors of N devices each, timed as CPS's setup is. */
static int setup(bench *b)
{
    char zip[4096], name[32];
    ncmp_buf doc = NCMP_BUF_INIT;
    result *r;
    long want = b->o.devices * NODES_PER_DEVICE + 1, got;

    url(b, "/cps/api/v2/dataspaces?dataspace-name=" DS);
    if (call(b, "POST", "", 0, 201) != 0) {
        fprintf(stderr, "ncmp-bench-cps: creating the dataspace: %s\n", b->why);
        return -1;
    }
    snprintf(zip, sizeof(zip), "%s/openroadm/model.zip", b->o.datadir);
    if (upload_schema_set(b, LARGE, zip) != 0)
        return -1;
    snprintf(zip, sizeof(zip), "%s/bookstore/bookstore.zip", b->o.datadir);
    if (upload_schema_set(b, BOOKS, zip) != 0)
        return -1;
    tree_doc(b, &doc, 1, b->o.devices, 0);
    r = record(b, "Setup", "CPS:Creating openroadm anchors with large data tree", 100);
    b->t = 0;
    for (int a = 1; a <= 3; a++) {
        snprintf(name, sizeof(name), "openroadm%d", a);
        if (anchor_create(b, LARGE, name) != 0 ||
            write_doc(b, "POST", name, "nodes", "/", &doc, 201) != 0) {
            failed(r, b->why);
            ncmp_buf_free(&doc);
            return -1;
        }
    }
    passed(r, b->t, 3 * want);
    b->store_nodes = 3 * want;
    b->store_secs = b->t;
    ncmp_buf_free(&doc);
    got = fragment_rows(b, "openroadm1");
    if (got != want) {
        fprintf(stderr, "ncmp-bench-cps: openroadm1 holds %ld rows, expected %ld\n", got, want);
        return -1;
    }
    return 0;
}

static void write_tests(bench *b)
{
    static const long devices[] = {50, 100, 200, 400}, books[] = {800, 1600, 3200, 6400};
    static const double dev_s[] = {1.45, 2.9, 6.2, 13.0}, list_s[] = {1.5, 3.0, 6.4, 10.0},
                        book_s[] = {0.31, 0.8, 2.2, 6.9};
    ncmp_buf doc = NCMP_BUF_INIT;
    char name[160];

    for (int i = 0; i < 4; i++) {
        result *r;
        snprintf(name, sizeof(name), "CPS:Writing %ld devices", devices[i]);
        r = record(b, "Write", name, dev_s[i]);
        tree_doc(b, &doc, 1, devices[i], 0);
        if (anchor_create(b, LARGE, "writeTestAnchor") != 0) {
            failed(r, b->why);
            continue;
        }
        b->t = 0;
        if (write_doc(b, "POST", "writeTestAnchor", "nodes", "/", &doc, 201) == 0)
            passed(r, b->t, devices[i] * NODES_PER_DEVICE + 1);
        else
            failed(r, b->why);
        anchor_delete(b, "writeTestAnchor");
    }
    for (int i = 0; i < 4; i++) {
        result *r;
        snprintf(name, sizeof(name), "CPS:Writing %ld books", books[i]);
        r = record(b, "Write", name, book_s[i]);
        ncmp_buf_reset(&doc);
        ncmp_buf_append_str(&doc, "{\"bookstore\": {\"categories\": [{\"code\": 1, \"name\": "
                                  "\"Test\", \"books\": []}]}}");
        if (anchor_create(b, BOOKS, "writeTestAnchor") != 0 ||
            write_doc(b, "POST", "writeTestAnchor", "nodes", "/", &doc, 201) != 0) {
            failed(r, b->why);
            anchor_delete(b, "writeTestAnchor");
            continue;
        }
        ncmp_buf_reset(&doc);
        ncmp_buf_append_str(&doc, "{\"books\":[");
        for (long k = 1; k <= books[i]; k++)
            ncmp_buf_appendf(&doc, "%s{ \"title\": \"%ld\" }", k > 1 ? "," : "", k);
        ncmp_buf_append_str(&doc, "]}");
        b->t = 0;
        if (write_doc(b, "POST", "writeTestAnchor", "nodes", "/bookstore/categories[@code='1']",
                      &doc, 201) == 0)
            passed(r, b->t, books[i]);
        else
            failed(r, b->why);
        anchor_delete(b, "writeTestAnchor");
    }
    for (int i = 0; i < 4; i++) {
        result *r;
        snprintf(name, sizeof(name), "CPS:Saving list of %ld devices", devices[i]);
        r = record(b, "Write", name, list_s[i]);
        ncmp_buf_reset(&doc);
        ncmp_buf_append_str(&doc, "{ \"openroadm-devices\": { \"openroadm-device\": []}}");
        if (anchor_create(b, LARGE, "writeTestAnchor") != 0 ||
            write_doc(b, "POST", "writeTestAnchor", "nodes", "/", &doc, 201) != 0) {
            failed(r, b->why);
            anchor_delete(b, "writeTestAnchor");
            continue;
        }
        list_doc(b, &doc, 1, devices[i], 0);
        b->t = 0;
        if (write_doc(b, "POST", "writeTestAnchor", "list-nodes", "/openroadm-devices", &doc,
                      201) == 0)
            passed(r, b->t, devices[i] * NODES_PER_DEVICE);
        else
            failed(r, b->why);
        anchor_delete(b, "writeTestAnchor");
    }
    ncmp_buf_free(&doc);
}

/* --- Delta (DeltaPerfTest) --------------------------------------------------------- */

static void rss_mb(long pid, double *rss, double *hwm);

/* The entries of a delta report answer (its "action" members). */
static long report_entries(const bench *b)
{
    long n = 0;

    for (const char *p = b->resp.data; p && (p = strstr(p, "\"action\":")); p++)
        n++;
    return n;
}

/* DeltaPerfTest's target: devices rm+1..N, then N+1..N+add, the first
 * `chg` of them with status fail (generateModifiedOpenRoadData). */
static void delta_target_doc(bench *b, ncmp_buf *out, long n, long rm, long add, long chg)
{
    ncmp_buf_reset(out);
    ncmp_buf_append_str(out, "{\"openroadm-devices\": {\"openroadm-device\": [");
    append_devices(b, out, rm + 1, chg, 1);
    ncmp_buf_append_char(out, ',');
    append_devices(b, out, rm + 1 + chg, n - rm - chg, 0);
    ncmp_buf_append_char(out, ',');
    append_devices(b, out, n + 1, add, 0);
    ncmp_buf_append_str(out, "]}}");
}

/* POST .../delta with `doc` as the multipart part targetData, timed. */
static int delta_payload_call(bench *b, const ncmp_buf *doc, int grouped)
{
    curl_mime *mime = curl_mime_init(b->h);
    curl_mimepart *part = curl_mime_addpart(mime);
    double t0;
    int rc;

    curl_mime_name(part, "targetData");
    curl_mime_filename(part, "target.json");
    curl_mime_type(part, "application/json");
    curl_mime_data(part, doc->data, doc->len);
    url(b,
        "/cps/api/v2/dataspaces/" DS "/anchors/delta-source/delta?xpath=/openroadm-devices"
        "&grouping-enabled=%s",
        grouped ? "true" : "false");
    curl_easy_setopt(b->h, CURLOPT_URL, b->url);
    curl_easy_setopt(b->h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(b->h, CURLOPT_MIMEPOST, mime);
    ncmp_buf_reset(&b->resp);
    t0 = now_s();
    rc = curl_easy_perform(b->h) == CURLE_OK ? 0 : -1;
    b->t += now_s() - t0;
    curl_easy_getinfo(b->h, CURLINFO_RESPONSE_CODE, &b->status);
    curl_easy_setopt(b->h, CURLOPT_MIMEPOST, NULL);
    curl_easy_setopt(b->h, CURLOPT_HTTPHEADER, b->hdr);
    curl_mime_free(mime);
    ncmp_buf_append_char(&b->resp, '\0');
    b->resp.len--;
    if (rc != 0 || b->status != 200) {
        snprintf(b->why, sizeof(b->why), "POST delta: HTTP %ld: %.160s", b->status,
                 b->resp.data ? b->resp.data : "");
        return -1;
    }
    return 0;
}

/* GET the delta of the two anchors `calls` times; the entries of the
 * last answer. */
static int delta_get(bench *b, const char *from, const char *to, const char *xpath,
                     const char *descendants, int grouped, int calls, long *entries)
{
    for (int i = 0; i < calls; i++) {
        url(b,
            "/cps/api/v2/dataspaces/" DS "/anchors/%s/delta?target-anchor-name=%s&xpath=%s"
            "&descendants=%s&grouping-enabled=%s",
            from, to, esc(b, xpath), descendants, grouped ? "true" : "false");
        if (call(b, "GET", NULL, 0, 200) != 0)
            return -1;
    }
    *entries = report_entries(b);
    return 0;
}

/* CPS's DeltaPerfTest: a source anchor of 3N/10 devices against a target
 * of N devices with N/5 removed, N/5 added and N/5 changed (N = 1,000:
 * 300 against 1,000 with 200 each, as CPS); the anchors' delta 10 calls
 * per scenario, the payload's one call, then the grouped report of
 * target against source applied to the target. Nodes: report entries. */
static void delta_tests(bench *b)
{
    static const struct {
        const char *scenario, *descendants;
        int device; /* xpath: one device, else / (grouped) or /openroadm-devices */
        double grouped_s, plain_s;
    } anchors[] = {{"no descendants", "none", 1, 0.4, 0.15},
                   {"direct descendants", "direct", 0, 1.0, 0.5},
                   {"all descendants", "all", 0, 32.0, 35.0}};
    static const double payload_grouped_s[] = {6.0, 5.0, 5.0}, payload_plain_s[] = {5.5, 5.0, 5.5};
    long n = b->o.devices, src = n * 3 / 10, part = n / 5, entries = 0;
    ncmp_buf doc = NCMP_BUF_INIT, report = NCMP_BUF_INIT;
    char name[160], device[160];
    double rss;
    result *r;

    rss_mb(b->o.pid, &b->delta_rss_start_mb, &b->delta_hwm_start_mb);
    r = record(b, "Delta", "CPS: Delta test setup", 10);
    tree_doc(b, &doc, 1, src, 0);
    b->t = 0;
    if (anchor_create(b, LARGE, "delta-source") != 0 ||
        write_doc(b, "POST", "delta-source", "nodes", "/", &doc, 201) != 0) {
        failed(r, b->why);
        goto cleanup;
    }
    passed(r, b->t, src * NODES_PER_DEVICE + 1);
    r = record(b, "Delta", "CPS: Creating modified openroadm anchor", 33);
    delta_target_doc(b, &doc, n, part, part, part);
    b->t = 0;
    if (anchor_create(b, LARGE, "delta-target") != 0 ||
        write_doc(b, "POST", "delta-target", "nodes", "/", &doc, 201) != 0) {
        failed(r, b->why);
        goto cleanup;
    }
    passed(r, b->t, n * NODES_PER_DEVICE + 1);
    rss_mb(b->o.pid, &rss, &b->delta_hwm_setup_mb);
    snprintf(device, sizeof(device),
             "/openroadm-devices/openroadm-device[@device-id='C201-7-1A-1']");
    for (int grouped = 1; grouped >= 0; grouped--)
        for (int i = 0; i < 3; i++) {
            snprintf(name, sizeof(name), "CPS:Delta of 2 anchors %s%s",
                     grouped ? "" : "no grouping ", anchors[i].scenario);
            r = record(b, "Delta", name, grouped ? anchors[i].grouped_s : anchors[i].plain_s);
            b->t = 0;
            if (delta_get(b, "delta-source", "delta-target",
                          anchors[i].device ? device
                          : grouped         ? "/"
                                            : "/openroadm-devices",
                          anchors[i].descendants, grouped, 10, &entries) != 0)
                failed(r, b->why);
            else
                passed(r, b->t, entries);
        }
    /* the anchors' deltas hold no tree: ncmpd's peak must not have moved
     * (the payload's scenarios parse the 10 MB payload, as CPS does) */
    rss_mb(b->o.pid, &rss, &b->delta_hwm_anchors_mb);
    fprintf(stderr, "  delta of 2 anchors: ncmpd RSS %.0f MB, peak %.0f -> %.0f MB\n", rss,
            b->delta_hwm_setup_mb, b->delta_hwm_anchors_mb);
    for (int grouped = 1; grouped >= 0; grouped--)
        for (int i = 0; i < 3; i++) {
            snprintf(name, sizeof(name), "CPS:Delta of anchor-JSON %s%s",
                     grouped ? "grouping " : "no grouping ", anchors[i].scenario);
            r = record(b, "Delta", name, grouped ? payload_grouped_s[i] : payload_plain_s[i]);
            b->t = 0;
            if (delta_payload_call(b, &doc, grouped) != 0)
                failed(r, b->why);
            else
                passed(r, b->t, report_entries(b));
        }
    r = record(b, "Delta", "CPS:Apply delta report to an anchor", 20.0);
    if (delta_get(b, "delta-target", "delta-source", "/openroadm-devices", "all", 1, 1, &entries) !=
        0) {
        failed(r, b->why);
        goto cleanup;
    }
    ncmp_buf_append(&report, b->resp.data, b->resp.len);
    url(b, "/cps/api/v2/dataspaces/" DS "/anchors/delta-target/applyChangesInDeltaReport");
    b->t = 0;
    if (call(b, "POST", report.data, report.len, 201) != 0) {
        failed(r, b->why);
        goto cleanup;
    }
    passed(r, b->t, entries);
    /* the target is the source now */
    if (delta_get(b, "delta-target", "delta-source", "/", "all", 0, 1, &entries) != 0 ||
        entries != 0) {
        snprintf(name, sizeof(name), "%ld entries left after applying the report", entries);
        failed(r, entries ? name : b->why);
    }
cleanup:
    rss_mb(b->o.pid, &b->delta_rss_end_mb, &b->delta_hwm_end_mb);
    fprintf(stderr, "  delta: ncmpd RSS %.0f -> %.0f MB (peak %.0f -> %.0f MB)\n",
            b->delta_rss_start_mb, b->delta_rss_end_mb, b->delta_hwm_start_mb, b->delta_hwm_end_mb);
    anchor_delete(b, "delta-source");
    anchor_delete(b, "delta-target");
    ncmp_buf_free(&doc);
    ncmp_buf_free(&report);
}

/* A read scenario: the median of runs of one GET (b->url set by `set`),
 * each answer holding `want` nodes of shape `s`. Returns the median in
 * seconds, or -1 (r failed). */
static double read_median(bench *b, result *r, shape s, long want)
{
    double t[MAX_RUNS];
    char saved[sizeof(b->url)];
    int runs = b->o.runs;

    memcpy(saved, b->url, sizeof(saved));
    for (int i = 0; i < runs; i++) {
        long n;
        memcpy(b->url, saved, sizeof(saved));
        b->t = 0;
        if (call(b, "GET", NULL, 0, 200) != 0) {
            failed(r, b->why);
            return -1;
        }
        t[i] = b->t;
        n = answer_nodes(b, s);
        if (n != want) {
            char why[128];
            snprintf(why, sizeof(why), "the answer holds %ld nodes, expected %ld", n, want);
            failed(r, why);
            return -1;
        }
    }
    passed(r, median(t, runs), want);
    return r->secs;
}

/* A scenario of many requests: the median of runs of all of them. Each
 * request i (0-based) is made by mk(b, i), answers `status`, and its
 * answer (200) holds nodes counted with `s`. */
static void many_median(bench *b, result *r, int n, void (*mk)(bench *, int), long status, shape s,
                        long want)
{
    double t[MAX_RUNS];
    int runs = b->o.runs < 3 ? b->o.runs : 3;
    long total = 0;

    for (int k = 0; k < runs; k++) {
        b->t = 0;
        total = 0;
        for (int i = 0; i < n; i++) {
            mk(b, i);
            if (call(b, "GET", NULL, 0, status) != 0) {
                failed(r, b->why);
                return;
            }
            if (status == 200) {
                long got = answer_nodes(b, s);
                total += got > 0 ? got : 0;
            }
        }
        t[k] = b->t;
    }
    if (total != want) {
        char why[128];
        snprintf(why, sizeof(why), "the answers hold %ld nodes, expected %ld", total, want);
        failed(r, why);
        return;
    }
    passed(r, median(t, runs), want);
}

static void mk_device_get(bench *b, int i)
{
    char xpath[128];
    snprintf(xpath, sizeof(xpath), "/openroadm-devices/openroadm-device[@device-id='C201-7-1A-%d']",
             i + 1);
    url(b, "/cps/api/v3/dataspaces/" DS "/anchors/openroadm2/node?xpath=%s&descendants=all",
        esc(b, xpath));
}

static void mk_missing_get(bench *b, int i)
{
    char xpath[128];
    snprintf(xpath, sizeof(xpath), "/path/to/non-existing/node[@id='%d']", i + 1);
    url(b, "/cps/api/v3/dataspaces/" DS "/anchors/openroadm2/node?xpath=%s&descendants=all",
        esc(b, xpath));
}

static void get_tests(bench *b)
{
    static const struct {
        const char *name, *descendants;
        double expected;
        int which; /* 0: the node, 1: + direct children, 2: all */
    } top[] = {{"CPS:Read datatree with no descendants", "none", 0.01, 0},
               {"CPS:Read datatree with direct descendants", "direct", 0.03, 1},
               {"CPS:Read datatree with all descendants", "all", 1.0, 2}};
    static const struct {
        const char *name, *xpath;
        double expected;
        int root;
    } whole[] = {{"CPS:Read datatrees using openroadm root", "/", 1.0, 1},
                 {"CPS:Read datatrees using openroadm top element", "/openroadm-devices", 0.95, 1},
                 {"CPS:Read datatrees using openroadm whole list",
                  "/openroadm-devices/openroadm-device", 3.0, 0}};
    long d = b->o.devices, all = d * NODES_PER_DEVICE;
    char name[200];

    for (int i = 0; i < 3; i++) {
        result *r = record(b, "Get", top[i].name, top[i].expected);
        long want = top[i].which == 0 ? 1 : top[i].which == 1 ? 1 + d : 1 + all;
        url(b, "/cps/api/v3/dataspaces/" DS "/anchors/openroadm1/node?xpath=%s&descendants=%s",
            esc(b, "/openroadm-devices"), top[i].descendants);
        read_median(b, r, SHAPE_MAP, want);
    }
    snprintf(name, sizeof(name), "CPS:Read datatrees for multiple xpaths (REST: %ld GETs)", d);
    many_median(b, record(b, "Get", name, 2.0), (int)d, mk_device_get, 200, SHAPE_MAP, all);
    many_median(b, record(b, "Get", "CPS:Read non-existing xpaths (REST: 500 GETs, 404)", 0.06),
                500, mk_missing_get, 404, SHAPE_MAP, 0);
    for (int i = 0; i < 3; i++) {
        result *r = record(b, "Get", whole[i].name, whole[i].expected);
        url(b, "/cps/api/v3/dataspaces/" DS "/anchors/openroadm3/node?xpath=%s&descendants=all",
            esc(b, whole[i].xpath));
        read_median(b, r, SHAPE_MAP, all + whole[i].root);
    }
}

#define Q_TOP      "/openroadm-devices"
#define Q_LEAF     "//openroadm-device[@ne-state=\"inservice\"]"
#define Q_ANC      "//openroadm-device/ancestor::openroadm-devices"
#define Q_LEAF_ANC "//openroadm-device[@status=\"success\"]/ancestor::openroadm-devices"

static void query_tests(bench *b)
{
    static const struct {
        const char *scenario, *path;
        double one, across;
        int top; /* the answer holds openroadm-devices itself */
    } q[] = {{"top element", Q_TOP, 0.89, 3.0, 1},
             {"leaf condition", Q_LEAF, 1.1, 3.1, 0},
             {"ancestors", Q_ANC, 1.3, 3.2, 1},
             {"leaf condition + ancestors", Q_LEAF_ANC, 0.93, 3.0, 1}};
    static const struct {
        const char *scenario, *descendants;
        double status_s, anc_s;
    } depth[] = {{"no descendants", "none", 0.10, 0.08},
                 {"direct descendants", "direct", 0.15, 0.09},
                 {"all descendants", "all", 1.10, 1.0}};
    static const struct {
        const char *scenario, *path;
        double expected;
    } leaf[] = {
        {"unique leaf value", "/openroadm-devices/openroadm-device/@device-id", 0.05},
        {"common leaf value", "/openroadm-devices/openroadm-device/@ne-state", 0.013},
        {"non-existing data leaf", "/openroadm-devices/openroadm-device/@non-existing", 0.01}};
    long d = b->o.devices, all = d * NODES_PER_DEVICE;
    char name[200];

    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "CPS:Query 1 anchor %s", q[i].scenario);
        url(b,
            "/cps/api/v2/dataspaces/" DS "/anchors/openroadm1/nodes/query?cps-path=%s"
            "&descendants=all",
            esc(b, q[i].path));
        read_median(b, record(b, "Query", name, q[i].one), SHAPE_LIST, all + q[i].top);
    }
    url(b,
        "/cps/api/v2/dataspaces/" DS "/anchors/openroadm1/nodes/query?cps-path=%s&descendants=all",
        esc(b, "/path/to/non-existing/node[@id=\"1\"]"));
    read_median(b, record(b, "Query", "CPS:Query 1 anchor non-existing data", 0.01), SHAPE_LIST, 0);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "CPS:Query across anchors %s", q[i].scenario);
        url(b, "/cps/api/v2/dataspaces/" DS "/nodes/query?cps-path=%s&descendants=all",
            esc(b, q[i].path));
        read_median(b, record(b, "Query", name, q[i].across), SHAPE_ACROSS, 3 * (all + q[i].top));
    }
    for (int i = 0; i < 3; i++) {
        long per = i == 0 ? 1 : i == 1 ? 2 : NODES_PER_DEVICE;
        snprintf(name, sizeof(name), "CPS:Query with %s", depth[i].scenario);
        url(b,
            "/cps/api/v2/dataspaces/" DS "/anchors/openroadm2/nodes/query?cps-path=%s"
            "&descendants=%s",
            esc(b, "//openroadm-device[@status=\"success\"]"), depth[i].descendants);
        read_median(b, record(b, "Query", name, depth[i].status_s), SHAPE_LIST, d * per);
    }
    for (int i = 0; i < 3; i++) {
        long want = i == 0 ? 1 : i == 1 ? 1 + d : 1 + all;
        snprintf(name, sizeof(name), "CPS:Query ancestors with %s", depth[i].scenario);
        url(b,
            "/cps/api/v2/dataspaces/" DS "/anchors/openroadm3/nodes/query?cps-path=%s"
            "&descendants=%s",
            esc(b, Q_LEAF "/ancestor::openroadm-devices"), depth[i].descendants);
        read_median(b, record(b, "Query", name, depth[i].anc_s), SHAPE_LIST, want);
    }
    for (int i = 0; i < 3; i++) {
        long want = i == 0 ? d : i == 1 ? 1 : 0;
        snprintf(name, sizeof(name), "CPS:Query data leaf %s", leaf[i].scenario);
        url(b, "/cps/api/v2/dataspaces/" DS "/anchors/openroadm1/nodes/query?cps-path=%s",
            esc(b, leaf[i].path));
        read_median(b, record(b, "Query", name, leaf[i].expected), SHAPE_LEAVES, want);
    }
}

/* The devices of the update anchor, counted by a read of its list. */
static long device_count(bench *b)
{
    url(b,
        "/cps/api/v3/dataspaces/" DS "/anchors/updateTestAnchor/node?xpath=%s&descendants=direct",
        esc(b, "/openroadm-devices"));
    if (call(b, "GET", NULL, 0, 200) != 0)
        return -1;
    return answer_nodes(b, SHAPE_MAP) - 1;
}

static void update_tests(bench *b)
{
    static const struct {
        const char *name;
        long total, start;
        int fail;
        double tree_s, list_s;
        const char *list_name;
    } u[] = {
        {"CPS:Replace 0 nodes with 100", 100, 1, 0, 3.0, 3.0, "CPS:Replace list of 0 with 100"},
        {"CPS:Replace 100 using same data", 100, 1, 0, 5.0, 5.0,
         "CPS:Replace list of 100 using same data"},
        {"CPS:Replace 100 with new leaf values", 100, 1, 1, 5.4, 5.4,
         "CPS:Replace list of 100 with new leaf values"},
        {"CPS:Replace 100 with 100 new nodes", 100, 101, 0, 9.3, 9.0,
         "CPS:Replace list with 100 new nodes"},
        {"CPS:Replace 50 existing and 50 new", 100, 151, 1, 7.3, 7.0,
         "CPS:Replace list with 50 existing and 50 new"},
        {"CPS:Replace 100 nodes with 0", 0, 1, 0, 6.0, 5.9, "CPS:Replace list of 100 nodes with 1"},
    };
    ncmp_buf doc = NCMP_BUF_INIT;
    result *r;
    long n;

    ncmp_buf_append_str(&doc, "{ \"openroadm-devices\": { \"openroadm-device\": []}}");
    if (anchor_create(b, LARGE, "updateTestAnchor") != 0 ||
        write_doc(b, "POST", "updateTestAnchor", "nodes", "/", &doc, 201) != 0) {
        failed(record(b, "Update", "CPS:Update test setup", 0), b->why);
        anchor_delete(b, "updateTestAnchor");
        ncmp_buf_free(&doc);
        return;
    }
    for (int i = 0; i < 6; i++) {
        r = record(b, "Update", u[i].name, u[i].tree_s);
        tree_doc(b, &doc, u[i].start, u[i].total, u[i].fail);
        b->t = 0;
        if (write_doc(b, "PUT", "updateTestAnchor", "nodes", "/", &doc, 200) != 0) {
            failed(r, b->why);
            continue;
        }
        passed(r, b->t, u[i].total * NODES_PER_DEVICE + 1);
        if ((n = device_count(b)) != u[i].total) {
            char why[96];
            snprintf(why, sizeof(why), "%ld devices after the replace, expected %ld", n,
                     u[i].total);
            failed(r, why);
        }
    }
    for (int i = 0; i < 6; i++) {
        long total = i == 5 ? 1 : u[i].total;
        r = record(b, "Update", u[i].list_name, u[i].list_s);
        list_doc(b, &doc, u[i].start, total, u[i].fail);
        b->t = 0;
        if (write_doc(b, "PUT", "updateTestAnchor", "list-nodes", "/openroadm-devices", &doc,
                      200) != 0) {
            failed(r, b->why);
            continue;
        }
        passed(r, b->t, total * NODES_PER_DEVICE);
        if ((n = device_count(b)) != total) {
            char why[96];
            snprintf(why, sizeof(why), "%ld devices after the replace, expected %ld", n, total);
            failed(r, why);
        }
    }
    r = record(b, "Update", "CPS:Update leaves for 100 data nodes", 0.22);
    list_doc(b, &doc, 1, 200, 0);
    if (write_doc(b, "PUT", "updateTestAnchor", "list-nodes", "/openroadm-devices", &doc, 200) !=
        0) {
        failed(r, b->why);
    } else {
        ncmp_buf_reset(&doc);
        ncmp_buf_append_str(&doc, "{\"openroadm-device\":[");
        for (int i = 1; i <= 100; i++)
            ncmp_buf_appendf(&doc,
                             "%s{\"device-id\":\"C201-7-1A-%d\",\"status\":\"fail\","
                             "\"ne-state\":\"jeopardy\"}",
                             i > 1 ? "," : "", i);
        ncmp_buf_append_str(&doc, "]}");
        b->t = 0;
        if (write_doc(b, "PATCH", "updateTestAnchor", "nodes", "/openroadm-devices", &doc, 200) ==
            0)
            passed(r, b->t, 100);
        else
            failed(r, b->why);
    }
    /* Not CPS's: the whole tree of an anchor of N devices replaced by one
     * with new leaf values (every node rewritten), for replace_nodes_per_s. */
    tree_doc(b, &doc, 1, b->o.devices, 0);
    if (write_doc(b, "PUT", "updateTestAnchor", "nodes", "/", &doc, 200) == 0) {
        tree_doc(b, &doc, 1, b->o.devices, 1);
        b->t = 0;
        if (write_doc(b, "PUT", "updateTestAnchor", "nodes", "/", &doc, 200) == 0) {
            b->replace_ms = b->t * 1000.0;
            b->replace_nodes = b->o.devices * NODES_PER_DEVICE + 1;
        } else {
            fprintf(stderr, "ncmp-bench-cps: replacing %ld devices: %s\n", b->o.devices, b->why);
        }
    }
    anchor_delete(b, "updateTestAnchor");
    ncmp_buf_free(&doc);
}

/* A delete scenario: DELETE each of `xpaths` (n) on `anchor`; every
 * answer 204 (or 404 when `missing`). Nodes: the rows that went. */
static void delete_run(bench *b, const char *name, double expected, const char *anchor,
                       char xpaths[][160], int n, int missing)
{
    result *r = record(b, "Delete", name, expected);
    long before = fragment_rows(b, anchor);

    b->t = 0;
    for (int i = 0; i < n; i++) {
        url(b, "/cps/api/v2/dataspaces/" DS "/anchors/%s/nodes?xpath=%s", anchor,
            esc(b, xpaths[i]));
        if (call(b, "DELETE", NULL, 0, missing ? 404 : 204) != 0) {
            failed(r, b->why);
            return;
        }
    }
    passed(r, b->t, before - fragment_rows(b, anchor));
    if (!missing && r->nodes > 0 && n == 1 && b->ndelete_rates < 3)
        b->delete_rates[b->ndelete_rates++] = (double)r->nodes / r->secs;
}

static void delete_tests(bench *b)
{
    static char x[100][160];
    ncmp_buf doc = NCMP_BUF_INIT;
    result *r = record(b, "Delete", "CPS:Delete test setup", 85);
    long dd = b->o.delete_devices;
    char anchor[32];
    int ok = 1;

    tree_doc(b, &doc, 1, dd, 0);
    b->t = 0;
    for (int a = 1; a <= 10 && ok; a++) {
        snprintf(anchor, sizeof(anchor), "delete%d", a);
        ok = anchor_create(b, LARGE, anchor) == 0 &&
             write_doc(b, "POST", anchor, "nodes", "/", &doc, 201) == 0;
    }
    ncmp_buf_free(&doc);
    if (!ok) {
        failed(r, b->why);
        return;
    }
    passed(r, b->t, 10 * (dd * NODES_PER_DEVICE + 1));
#define DEV "/openroadm-devices/openroadm-device[@device-id='C201-7-1A-%d']"
    for (int i = 0; i < 100; i++)
        snprintf(x[i], sizeof(x[i]), DEV "/org-openroadm-device", i + 1);
    delete_run(b, "CPS:Delete 100 containers", 2.1, "delete1", x, 100, 0);
    delete_run(b, "CPS:Batch delete 100 containers (REST: 100 DELETEs)", 0.65, "delete2", x, 100,
               0);
    for (int i = 0; i < 100; i++)
        snprintf(x[i], sizeof(x[i]), DEV, i + 1);
    delete_run(b, "CPS:Delete 100 lists elements", 2.3, "delete3", x, 100, 0);
    delete_run(b, "CPS:Batch delete 100 lists elements (REST: 100 DELETEs)", 0.7, "delete4", x, 100,
               0);
    for (int i = 0; i < 100; i++)
        snprintf(x[i], sizeof(x[i]), DEV "/org-openroadm-device/degree", i + 1);
    delete_run(b, "CPS:Delete 100 whole lists", 3.2, "delete5", x, 100, 0);
    delete_run(b, "CPS:Batch delete 100 whole lists (REST: 100 DELETEs)", 2.2, "delete6", x, 100,
               0);
#undef DEV
    snprintf(x[0], sizeof(x[0]), "/openroadm-devices");
    delete_run(b, "CPS:Delete one large node", 1.9, "delete7", x, 1, 0);
    snprintf(x[0], sizeof(x[0]), "/");
    delete_run(b, "CPS:Delete root node", 1.9, "delete8", x, 1, 0);
    delete_run(b, "CPS:Delete data nodes for anchor (REST: DELETE xpath=/)", 1.9, "delete9", x, 1,
               0);
    for (int i = 0; i < 100; i++)
        snprintf(x[i], sizeof(x[i]), "/path/to/non-existing/node[@id='%d']", i + 1);
    delete_run(b, "CPS:Batch delete 100 non-existing data nodes (REST: 100 DELETEs, 404)", 2,
               "delete10", x, 100, 1);
    r = record(b, "Delete", "CPS:Delete test cleanup (10 anchors)", 9);
    {
        long rows = 0;
        for (int a = 1; a <= 10; a++) {
            snprintf(anchor, sizeof(anchor), "delete%d", a);
            rows += fragment_rows(b, anchor);
        }
        b->t = 0;
        for (int a = 1; a <= 10 && ok; a++) {
            snprintf(anchor, sizeof(anchor), "delete%d", a);
            ok = anchor_delete(b, anchor) == 0;
        }
        if (ok)
            passed(r, b->t, rows);
        else
            failed(r, b->why);
    }
}

/* The two reads compared with PostgreSQL returning the same rows. */
static void reads_vs_postgres(bench *b)
{
    long id = anchor_id(b, "openroadm1"), rows = 0, all = b->o.devices * NODES_PER_DEVICE;
    result scratch;

    memset(&scratch, 0, sizeof(scratch));
    snprintf(scratch.name, sizeof(scratch.name), "read all nodes of an anchor (median)");
    url(b, "/cps/api/v3/dataspaces/" DS "/anchors/openroadm1/node?xpath=%s&descendants=all",
        esc(b, "/"));
    if (read_median(b, &scratch, SHAPE_MAP, all + 1) >= 0) {
        b->read_all_ms = scratch.secs * 1000.0;
        b->read_all_nodes = all + 1;
    }
    b->read_all_pg_ms = pg_read_ms(
        b, id, "SELECT path, depth, attributes FROM fragment WHERE anchor_id = $1 ORDER BY path",
        &rows, &b->read_all_pg_default_ms);
    if (rows != all + 1)
        fprintf(stderr, "ncmp-bench-cps: PostgreSQL returned %ld rows, expected %ld\n", rows,
                all + 1);
    snprintf(scratch.name, sizeof(scratch.name), "leaf-condition query, all devices (median)");
    url(b,
        "/cps/api/v2/dataspaces/" DS "/anchors/openroadm1/nodes/query?cps-path=%s&descendants=all",
        esc(b, Q_LEAF));
    if (read_median(b, &scratch, SHAPE_LIST, all) >= 0) {
        b->leaf_ms = scratch.secs * 1000.0;
        b->leaf_nodes = all;
    }
    b->leaf_pg_ms = pg_read_ms(b, id,
                               "SELECT path, depth, attributes FROM fragment WHERE anchor_id = $1 "
                               "AND depth >= 2 ORDER BY path",
                               &rows, NULL);
}

/* --- seed-sized runs -------------------------------------------------------------------- */

/* VmRSS and VmHWM of the ncmpd process, MB (0 when unknown). */
static void rss_mb(long pid, double *rss, double *hwm)
{
    char path[64], line[256];
    FILE *f;

    *rss = *hwm = 0;
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    if (pid <= 0 || !(f = fopen(path, "r")))
        return;
    while (fgets(line, sizeof(line), f)) {
        long kb;
        if (sscanf(line, "VmRSS: %ld", &kb) == 1)
            *rss = (double)kb / 1024.0;
        else if (sscanf(line, "VmHWM: %ld", &kb) == 1)
            *hwm = (double)kb / 1024.0;
    }
    fclose(f);
}

/* `count` documents of 25 devices each, POSTed one after another as list
 * elements of one anchor's /openroadm-devices. */
/* Start a timed stream from a quiet database: the deletes before it leave
 * hundreds of thousands of dead rows, and the autovacuum and checkpoint
 * they trigger would otherwise run during the stream and be counted in
 * it (the first half of a 500-document stream ran at a quarter of the
 * second's rate). CPS's own tests start each from a new database. */
static void quiesce(bench *b)
{
    PGresult *res = PQexec(b->pg, "VACUUM (ANALYZE) fragment");

    PQclear(res);
    res = PQexec(b->pg, "CHECKPOINT");
    PQclear(res);
}

/* After `done` documents of a stream, at `t` seconds: when they end a
 * tenth (of `tenth` documents), its nodes/s into rate[] and *mark = t. */
static void tenth_note(double rate[10], long done, long tenth, double t, double *mark)
{
    if (done % tenth == 0 && done / tenth <= 10) {
        rate[done / tenth - 1] = (double)(tenth * DOC_DEVICES * NODES_PER_DEVICE) / (t - *mark);
        *mark = t;
    }
}

/* The raw limit of a stream: the rows ncmpd stored for each document,
 * read back from its anchor (not timed) and written by COPY into an empty
 * table like fragment_store (its key and indexes), in the documents'
 * order, one transaction per document as ncmpd commits each. The rates
 * of its tenths beside ncmpd's show what the database and the machine
 * make of a table that grows to the stream's size, whoever writes it. */
static int docs_raw_stream(bench *b, docs_run *run, long anchor)
{
    long tenth = run->docs >= 10 ? run->docs / 10 : 1;
    double mark = 0, spent = 0;
    ncmp_buf sql = NCMP_BUF_INIT;
    PGresult *res;
    int ok = 1;

    res = PQexec(b->pg, "DROP TABLE IF EXISTS bench_stream_fragment;"
                        " CREATE TABLE bench_stream_fragment (LIKE fragment_store INCLUDING ALL)");
    ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    PQclear(res);
    quiesce(b);
    for (long i = 0; ok && i < run->docs; i++) {
        ncmp_buf rows = NCMP_BUF_INIT;
        double t0;

        /* each device's subtree a range of the key, written out: the
         * statistics predate the anchor's rows, and a range computed in
         * the query was planned as a scan of the whole table */
        ncmp_buf_reset(&sql);
        ncmp_buf_append_str(&sql, "COPY (");
        for (long k = i * DOC_DEVICES + 1; k <= (i + 1) * DOC_DEVICES; k++) {
            char dev[160];
            snprintf(dev, sizeof(dev),
                     "E'\\x01openroadm-devices\\x01openroadm-device[@device-id=''C201-7-1A-%ld'']'",
                     k);
            ncmp_buf_appendf(&sql,
                             "%sSELECT anchor_id, path, depth, name, attributes FROM fragment"
                             " WHERE anchor_id = %ld AND path >= %s AND path < %s || E'\\x02'",
                             k > i * DOC_DEVICES + 1 ? " UNION ALL " : "", anchor, dev, dev);
        }
        ncmp_buf_append_str(&sql, " ORDER BY path) TO STDOUT");
        if (copy_out(b->pg, sql.data, &rows) <= 0) {
            ok = 0;
            ncmp_buf_free(&rows);
            break;
        }
        t0 = now_s();
        PQclear(PQexec(b->pg, "BEGIN"));
        ok = copy_in(b->pg,
                     "COPY bench_stream_fragment (anchor_id, path, depth, name, attributes)"
                     " FROM STDIN",
                     &rows) == 0;
        res = PQexec(b->pg, ok ? "COMMIT" : "ROLLBACK");
        ok = ok && PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
        spent += now_s() - t0;
        ncmp_buf_free(&rows);
        tenth_note(run->copy_tenth_rate, i + 1, tenth, spent, &mark);
    }
    if (!ok)
        fprintf(stderr, "ncmp-bench-cps: raw COPY stream: %s", PQerrorMessage(b->pg));
    PQclear(PQexec(b->pg, "DROP TABLE IF EXISTS bench_stream_fragment"));
    ncmp_buf_free(&sql);
    run->copy_secs = ok ? spent : 0;
    return ok ? 0 : -1;
}

static void docs_stream(bench *b, docs_run *run, long count)
{
    ncmp_buf doc = NCMP_BUF_INIT;
    char anchor[32];
    long tenth = count >= 10 ? count / 10 : 1;
    double mark = 0;

    memset(run, 0, sizeof(*run));
    run->docs = count;
    snprintf(anchor, sizeof(anchor), "docs%ld", count);
    ncmp_buf_append_str(&doc, "{ \"openroadm-devices\": { \"openroadm-device\": []}}");
    if (anchor_create(b, LARGE, anchor) != 0 ||
        write_doc(b, "POST", anchor, "nodes", "/", &doc, 201) != 0) {
        snprintf(run->error, sizeof(run->error), "%s", b->why);
        ncmp_buf_free(&doc);
        return;
    }
    quiesce(b);
    rss_mb(b->o.pid, &run->rss_start_mb, &run->hwm_start_mb);
    b->t = 0;
    for (long i = 0; i < count; i++) {
        list_doc(b, &doc, i * DOC_DEVICES + 1, DOC_DEVICES, 0);
        if (write_doc(b, "POST", anchor, "list-nodes", "/openroadm-devices", &doc, 201) != 0) {
            snprintf(run->error, sizeof(run->error), "document %ld: %s", i + 1, b->why);
            break;
        }
        tenth_note(run->tenth_rate, i + 1, tenth, b->t, &mark);
    }
    run->secs = b->t;
    run->nodes = count * DOC_DEVICES * NODES_PER_DEVICE;
    rss_mb(b->o.pid, &run->rss_end_mb, &run->hwm_end_mb);
    fprintf(stderr,
            "  %ld documents of %zu bytes: %.2f s, %.0f nodes/s, RSS %.0f -> %.0f MB (peak %.0f -> "
            "%.0f)%s%s\n",
            count, doc.len, run->secs, (double)run->nodes / run->secs, run->rss_start_mb,
            run->rss_end_mb, run->hwm_start_mb, run->hwm_end_mb, run->error[0] ? ": " : "",
            run->error);
    if (!run->error[0] && docs_raw_stream(b, run, anchor_id(b, anchor)) == 0)
        fprintf(stderr,
                "  the same rows by COPY, a transaction per document: %.2f s, %.0f rows/s\n",
                run->copy_secs, (double)run->nodes / run->copy_secs);
    anchor_delete(b, anchor);
    ncmp_buf_free(&doc);
}

/* Seed anchors of seed_devices devices each, one after another: the cost
 * per node as the database grows; then a read of the last one against
 * PostgreSQL returning its rows. */
static void seed_runs(bench *b)
{
    ncmp_buf doc = NCMP_BUF_INIT;
    char anchor[32];
    long want = b->o.seed_devices * NODES_PER_DEVICE + 1, rows = 0;
    result scratch;

    b->seed = ncmp_xcalloc((size_t)b->o.seed_anchors, sizeof(*b->seed));
    quiesce(b);
    tree_doc(b, &doc, 1, b->o.seed_devices, 0);
    for (long a = 1; a <= b->o.seed_anchors; a++) {
        snprintf(anchor, sizeof(anchor), "seed%ld", a);
        if (anchor_create(b, LARGE, anchor) != 0)
            break;
        b->t = 0;
        if (write_doc(b, "POST", anchor, "nodes", "/", &doc, 201) != 0) {
            fprintf(stderr, "ncmp-bench-cps: seed anchor %ld: %s\n", a, b->why);
            break;
        }
        b->seed[a - 1].secs = b->t;
        b->seed[a - 1].nodes = want;
        b->seed[a - 1].db_nodes = pg_long(b, "SELECT count(*) FROM fragment", 0, NULL);
        fprintf(stderr,
                "  seed anchor %ld: %ld nodes in %.2f s, %.0f nodes/s, %ld nodes in the database\n",
                a, want, b->t, (double)want / b->t, b->seed[a - 1].db_nodes);
    }
    ncmp_buf_free(&doc);
    memset(&scratch, 0, sizeof(scratch));
    snprintf(anchor, sizeof(anchor), "seed%ld", b->o.seed_anchors);
    url(b, "/cps/api/v3/dataspaces/" DS "/anchors/%s/node?xpath=%s&descendants=all", anchor,
        esc(b, "/"));
    snprintf(scratch.name, sizeof(scratch.name), "read all nodes of a seed anchor (median)");
    if (b->seed[b->o.seed_anchors - 1].nodes && read_median(b, &scratch, SHAPE_MAP, want) >= 0) {
        b->seed_read_ms = scratch.secs * 1000.0;
        b->seed_read_pg_ms = pg_read_ms(
            b, anchor_id(b, anchor),
            "SELECT path, depth, attributes FROM fragment WHERE anchor_id = $1 ORDER BY path",
            &rows, NULL);
    }
}

/* --- output --------------------------------------------------------------------------- */

static void print_table(const bench *b)
{
    const char *test = "";

    printf("\n%-66s %10s %9s %9s %12s\n", "CPS scenario (ncmpd, timed by the client)", "seconds",
           "CPS exp.", "x faster", "nodes/s");
    for (int i = 0; i < b->nres; i++) {
        const result *r = &b->res[i];
        if (strcmp(test, r->test) != 0) {
            test = r->test;
            printf("-- %s\n", test);
        }
        if (r->secs < 0) {
            printf("%-66s %10s %9.3f   %s\n", r->name, "FAILED", r->expected, r->error);
            continue;
        }
        printf("%-66s %10.4f %9.3f %9.0f %12.0f\n", r->name, r->secs, r->expected,
               r->secs > 0 ? r->expected / r->secs : 0,
               r->secs > 0 && r->nodes > 0 ? (double)r->nodes / r->secs : 0);
    }
    printf("\n%-52s %14s\n", "limit (same run)", "value");
    if (b->store_secs > 0)
        printf("%-52s %14.0f\n", "store, validated nodes/s (setup anchors)",
               (double)b->store_nodes / b->store_secs);
    if (b->copy_rows_per_s > 0)
        printf("%-52s %14.0f\n", "raw COPY of one anchor's rows, rows/s", b->copy_rows_per_s);
    if (b->libyang_ms > 0)
        printf("%-52s %14.0f\n", "raw libyang parse of the same document, nodes/s",
               (double)b->libyang_nodes / (b->libyang_ms / 1000.0));
    if (b->replace_ms > 0)
        printf("%-52s %14.0f\n", "replace node and descendants, nodes/s",
               (double)b->replace_nodes / (b->replace_ms / 1000.0));
    if (b->read_all_ms > 0)
        printf("%-52s %9.1f ms (PostgreSQL %.1f ms, x%.2f; %.1f ms as it plans by default)\n",
               "read all nodes of an anchor", b->read_all_ms, b->read_all_pg_ms,
               b->read_all_pg_ms > 0 ? b->read_all_ms / b->read_all_pg_ms : 0,
               b->read_all_pg_default_ms);
    if (b->leaf_ms > 0)
        printf("%-52s %9.1f ms (PostgreSQL %.1f ms, x%.2f)\n", "leaf-condition query, all devices",
               b->leaf_ms, b->leaf_pg_ms, b->leaf_pg_ms > 0 ? b->leaf_ms / b->leaf_pg_ms : 0);
}

static void json_num(FILE *f, const char *key, double v, int last)
{
    if (v > 0)
        fprintf(f, "\"%s\": %.6g%s", key, v, last ? "" : ", ");
    else
        fprintf(f, "\"%s\": null%s", key, last ? "" : ", ");
}

static int write_json(const bench *b, const char *path)
{
    FILE *f = fopen(path, "w");
    ncmp_buf s = NCMP_BUF_INIT;
    double del = 0;

    if (!f)
        return -1;
    fprintf(f,
            "{\"scenario\": \"cps\", \"devices_per_anchor\": %ld, \"anchors\": 3, "
            "\"runs\": %d,\n \"scenarios\": [",
            b->o.devices, b->o.runs);
    for (int i = 0; i < b->nres; i++) {
        const result *r = &b->res[i];
        ncmp_buf_reset(&s);
        ncmp_buf_append_json_string(&s, r->name);
        fprintf(f, "%s\n  {\"name\": %s, \"test\": \"%s\", ", i ? "," : "", s.data, r->test);
        json_num(f, "seconds", r->secs, 0);
        fprintf(f, "\"cps_expected_seconds\": %g, \"nodes\": %ld", r->expected, r->nodes);
        if (r->secs < 0) {
            ncmp_buf_reset(&s);
            ncmp_buf_append_json_string(&s, r->error);
            fprintf(f, ", \"error\": %s", s.data);
        }
        fprintf(f, "}");
    }
    fprintf(f, "],\n ");
    if (b->ndelete_rates > 0) {
        double v[3];
        memcpy(v, b->delete_rates, sizeof(v));
        del = median(v, b->ndelete_rates);
    }
    json_num(f, "store_nodes_per_s", b->store_secs > 0 ? (double)b->store_nodes / b->store_secs : 0,
             0);
    fprintf(f, "\"store_nodes\": %ld, ", b->store_nodes);
    json_num(f, "replace_nodes_per_s",
             b->replace_ms > 0 ? (double)b->replace_nodes / (b->replace_ms / 1000.0) : 0, 0);
    fprintf(f, "\"replace_nodes\": %ld, ", b->replace_nodes);
    json_num(f, "delete_nodes_per_s", del, 0);
    fprintf(f, "\n ");
    json_num(f, "delta_rss_start_mb", b->delta_rss_start_mb, 0);
    json_num(f, "delta_rss_end_mb", b->delta_rss_end_mb, 0);
    json_num(f, "delta_peak_rss_start_mb", b->delta_hwm_start_mb, 0);
    json_num(f, "delta_anchors_peak_rss_before_mb", b->delta_hwm_setup_mb, 0);
    json_num(f, "delta_anchors_peak_rss_after_mb", b->delta_hwm_anchors_mb, 0);
    json_num(f, "delta_peak_rss_end_mb", b->delta_hwm_end_mb, 0);
    fprintf(f, "\n ");
    json_num(f, "read_all_ms", b->read_all_ms, 0);
    json_num(f, "read_all_postgres_ms", b->read_all_pg_ms, 0);
    json_num(f, "read_all_postgres_default_plan_ms", b->read_all_pg_default_ms, 0);
    fprintf(f, "\"read_all_nodes\": %ld, ", b->read_all_nodes);
    json_num(f, "query_leaf_condition_ms", b->leaf_ms, 0);
    json_num(f, "query_leaf_condition_postgres_ms", b->leaf_pg_ms, 0);
    fprintf(f, "\n ");
    json_num(f, "copy_rows_per_s", b->copy_rows_per_s, 0);
    fprintf(f, "\"copy_rows\": %ld, ", b->copy_rows);
    json_num(f, "libyang_parse_ms", b->libyang_ms, 0);
    fprintf(f, "\"libyang_nodes\": %ld, ", b->libyang_nodes);
    json_num(f, "libyang_nodes_per_s",
             b->libyang_ms > 0 ? (double)b->libyang_nodes / (b->libyang_ms / 1000.0) : 0, 0);
    fprintf(f, "\n ");
    /* the streams as run; the keys only for its sizes (500, 3,000) */
    fprintf(f, "\"docs269\": [");
    for (int k = 0; k < 2; k++) {
        const docs_run *d = &b->docs[k];
        fprintf(f, "%s\n  {\"documents\": %ld, \"nodes\": %ld, ", k ? "," : "", d->docs, d->nodes);
        json_num(f, "seconds", d->error[0] ? 0 : d->secs, 0);
        json_num(f, "rss_start_mb", d->rss_start_mb, 0);
        json_num(f, "rss_end_mb", d->rss_end_mb, 0);
        json_num(f, "peak_rss_start_mb", d->hwm_start_mb, 0);
        json_num(f, "peak_rss_end_mb", d->hwm_end_mb, 0);
        fprintf(f, "\"tenths_nodes_per_s\": [");
        for (int t = 0; t < 10; t++)
            fprintf(f, "%s%.0f", t ? ", " : "", d->tenth_rate[t]);
        fprintf(f, "], ");
        json_num(f, "copy_seconds", d->copy_secs, 0);
        fprintf(f, "\"copy_tenths_rows_per_s\": [");
        for (int t = 0; t < 10; t++)
            fprintf(f, "%s%.0f", t ? ", " : "", d->copy_tenth_rate[t]);
        fprintf(f, "]");
        if (d->error[0]) {
            ncmp_buf_reset(&s);
            ncmp_buf_append_json_string(&s, d->error);
            fprintf(f, ", \"error\": %s", s.data);
        }
        fprintf(f, "}");
    }
    fprintf(f, "],\n ");
    {
        const docs_run *d500 = b->docs[0].docs == 500 ? &b->docs[0] : NULL;
        const docs_run *d3000 = b->docs[1].docs == 3000 ? &b->docs[1] : NULL;
        json_num(f, "docs269_500_seconds", d500 && !d500->error[0] ? d500->secs : 0, 0);
        json_num(f, "docs269_3000_seconds", d3000 && !d3000->error[0] ? d3000->secs : 0, 0);
        json_num(f, "docs269_copy_500_seconds", d500 ? d500->copy_secs : 0, 0);
        json_num(f, "docs269_copy_3000_seconds", d3000 ? d3000->copy_secs : 0, 0);
        json_num(f, "docs269_rss_start_mb", d500 && d3000 ? d500->rss_start_mb : 0, 0);
        json_num(f, "docs269_rss_end_mb", d500 && d3000 ? d3000->rss_end_mb : 0, 0);
    }
    fprintf(f, "\n \"seed\": {\"devices\": %ld, \"anchors\": %ld, ", b->o.seed_devices,
            b->o.seed_anchors);
    json_num(f, "read_all_ms", b->seed_read_ms, 0);
    json_num(f, "read_all_postgres_ms", b->seed_read_pg_ms, 0);
    fprintf(f, "\"runs\": [");
    for (long a = 0; b->seed && a < b->o.seed_anchors; a++) {
        const seed_run *r = &b->seed[a];
        fprintf(f, "%s{\"nodes\": %ld, \"database_nodes\": %ld, ", a ? ", " : "", r->nodes,
                r->db_nodes);
        json_num(f, "seconds", r->secs, 0);
        json_num(f, "nodes_per_s", r->secs > 0 ? (double)r->nodes / r->secs : 0, 1);
        fprintf(f, "}");
    }
    fprintf(f, "]}}\n");
    ncmp_buf_free(&s);
    return fclose(f) == 0 ? 0 : -1;
}

/* --- main ------------------------------------------------------------------------------ */

static int parse(int argc, char **argv, opts *o)
{
    static const struct option longs[] = {{"devices", required_argument, NULL, 'n'},
                                          {"delete-devices", required_argument, NULL, 'x'},
                                          {"seed-devices", required_argument, NULL, 's'},
                                          {"seed-anchors", required_argument, NULL, 'a'},
                                          {"docs", required_argument, NULL, 'c'},
                                          {"runs", required_argument, NULL, 'r'},
                                          {"delta-only", no_argument, NULL, 'o'},
                                          {NULL, 0, NULL, 0}};
    int c;

    *o = (opts){.devices = 1000,
                .delete_devices = 300,
                .seed_devices = 3000,
                .seed_anchors = 4,
                .docs = {500, 3000},
                .runs = 5};
    while ((c = getopt_long(argc, argv, "u:d:D:p:j:", longs, NULL)) != -1) {
        switch (c) {
        case 'u':
            o->base = optarg;
            break;
        case 'd':
            o->dburl = optarg;
            break;
        case 'D':
            o->datadir = optarg;
            break;
        case 'p':
            o->pid = strtol(optarg, NULL, 10);
            break;
        case 'j':
            o->json = optarg;
            break;
        case 'n':
            o->devices = strtol(optarg, NULL, 10);
            break;
        case 'x':
            o->delete_devices = strtol(optarg, NULL, 10);
            break;
        case 's':
            o->seed_devices = strtol(optarg, NULL, 10);
            break;
        case 'a':
            o->seed_anchors = strtol(optarg, NULL, 10);
            break;
        case 'c':
            if (sscanf(optarg, "%ld,%ld", &o->docs[0], &o->docs[1]) != 2)
                return -1;
            break;
        case 'r':
            o->runs = atoi(optarg);
            break;
        case 'o':
            o->delta_only = 1;
            break;
        default:
            return -1;
        }
    }
    /* the scenarios address devices 1..1,000 and delete 100 of them */
    if (!o->base || !o->dburl || !o->datadir || o->devices < 1 || o->devices > 1000 ||
        o->delete_devices < 100 || o->seed_devices < 1 || o->seed_anchors < 1 || o->docs[0] < 1 ||
        o->docs[1] < 1 || o->runs < 1 || o->runs > MAX_RUNS)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    bench *b = ncmp_xcalloc(1, sizeof(*b));
    char path[4096];
    const char *at;
    int rc = 1, nfailed = 0;

    if (bench_help_asked(argc, argv) || parse(argc, argv, &b->o) != 0) {
        free(b);
        return bench_usage(usage, bench_help_asked(argc, argv));
    }
    snprintf(path, sizeof(path), "%s/openroadm/device.json", b->o.datadir);
    if (read_file(path, &b->device) != 0)
        goto out;
    if (!(at = strstr(b->device.data, "NODE_ID_HERE")) ||
        !strstr(b->device.data, "\"status\": \"success\"")) {
        fprintf(stderr, "ncmp-bench-cps: %s is not CPS's sample device\n", path);
        goto out;
    }
    b->id_at = (size_t)(at - b->device.data);
    b->status_at = (size_t)(strstr(b->device.data, "\"status\": \"success\"") - b->device.data) +
                   strlen("\"status\": \"");
    while (b->device.len &&
           (b->device.data[b->device.len - 1] == '\n' || b->device.data[b->device.len - 1] == ' '))
        b->device.len--;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    b->h = curl_easy_init();
    b->hdr = curl_slist_append(NULL, "Content-Type: application/json");
    b->hdr = curl_slist_append(b->hdr, "Expect:");
    curl_easy_setopt(b->h, CURLOPT_HTTPHEADER, b->hdr);
    curl_easy_setopt(b->h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(b->h, CURLOPT_WRITEDATA, &b->resp);
    curl_easy_setopt(b->h, CURLOPT_TIMEOUT, 600L);
    b->pg = PQconnectdb(b->o.dburl);
    if (PQstatus(b->pg) != CONNECTION_OK) {
        fprintf(stderr, "ncmp-bench-cps: %s", PQerrorMessage(b->pg));
        goto out;
    }
    PQclear(PQexec(b->pg, "SET client_min_messages = warning"));
    fprintf(stderr, "setup: dataspace, schema sets, 3 anchors of %ld devices\n", b->o.devices);
    if (setup(b) != 0)
        goto out;
    if (b->o.delta_only) {
        fprintf(stderr, "Delta\n");
        delta_tests(b);
        goto done;
    }
    fprintf(stderr, "raw limits: COPY, PostgreSQL reads, libyang parse\n");
    raw_copy(b, anchor_id(b, "openroadm1"));
    raw_libyang(b);
    fprintf(stderr, "Write\n");
    write_tests(b);
    fprintf(stderr, "Get\n");
    get_tests(b);
    fprintf(stderr, "Query\n");
    query_tests(b);
    fprintf(stderr, "reads against PostgreSQL\n");
    reads_vs_postgres(b);
    fprintf(stderr, "Update\n");
    update_tests(b);
    fprintf(stderr, "Delete\n");
    delete_tests(b);
    fprintf(stderr, "Delta\n");
    delta_tests(b);
    fprintf(stderr, "269 KB documents\n");
    docs_stream(b, &b->docs[0], b->o.docs[0]);
    docs_stream(b, &b->docs[1], b->o.docs[1]);
    fprintf(stderr, "seed: %ld anchors of %ld devices\n", b->o.seed_anchors, b->o.seed_devices);
    seed_runs(b);
done:
    print_table(b);
    for (int i = 0; i < b->nres; i++)
        nfailed += b->res[i].secs < 0;
    nfailed += b->docs[0].error[0] != 0;
    nfailed += b->docs[1].error[0] != 0;
    printf("%d of %d scenarios failed; %ld devices per anchor, reads the median of %d runs, one "
           "kept-alive connection\n",
           nfailed, b->nres, b->o.devices, b->o.runs);
    if (b->o.json && write_json(b, b->o.json) != 0) {
        fprintf(stderr, "ncmp-bench-cps: cannot write %s\n", b->o.json);
        goto out;
    }
    rc = nfailed ? 3 : 0;
out:
    if (b->pg)
        PQfinish(b->pg);
    curl_slist_free_all(b->hdr);
    if (b->h)
        curl_easy_cleanup(b->h);
    curl_global_cleanup();
    ncmp_buf_free(&b->device);
    ncmp_buf_free(&b->resp);
    free(b->seed);
    free(b);
    return rc;
}
