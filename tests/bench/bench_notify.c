#include "bench_notify.h"

#include <curl/curl.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncmp_buf.h"

#define DATASPACE "bench-notify"
#define ROUNDS    6 /* alternating off, on, off, ... */
#define IN_FLIGHT 4
#define BEDS      10

static const char GARDEN[] = "module bench-garden {\n"
                             "  yang-version 1.1;\n"
                             "  namespace \"urn:bench-garden\";\n"
                             "  prefix bg;\n"
                             "  revision 2026-12-03;\n"
                             "  container garden {\n"
                             "    leaf name { type string; }\n"
                             "    list bed { key \"row\";\n"
                             "      leaf row { type uint8; }\n"
                             "      leaf area { type uint32; }\n"
                             "      leaf note { type string; }\n"
                             "    }\n"
                             "  }\n"
                             "}\n";

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t sink(char *p, size_t size, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return size * n;
}

/* One request; 0 when it answers one of the statuses wanted (0: none). */
static int call(const char *base, const char *method, const char *path, const char *body,
                const char *file_name, long want1, long want2, char *err, size_t errlen)
{
    CURL *curl = curl_easy_init();
    struct curl_slist *headers = NULL;
    curl_mime *mime = NULL;
    char url[1024];
    long status = 0;
    CURLcode rc;

    snprintf(url, sizeof(url), "%s%s", base, path);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
    if (file_name) {
        curl_mimepart *part;
        mime = curl_mime_init(curl);
        part = curl_mime_addpart(mime);
        curl_mime_name(part, "file");
        curl_mime_filename(part, file_name);
        curl_mime_data(part, body, CURL_ZERO_TERMINATED);
        curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime);
    } else if (body) {
        headers = curl_slist_append(headers, "Content-Type: application/json");
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    }
    rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_mime_free(mime);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    if (rc != CURLE_OK)
        return fail(err, errlen, "%s %s: %s", method, path, curl_easy_strerror(rc));
    if (status != want1 && status != want2)
        return fail(err, errlen, "%s %s answered %ld", method, path, status);
    return 0;
}

static void garden_doc(ncmp_buf *b, long i)
{
    ncmp_buf_reset(b);
    ncmp_buf_appendf(b, "{\"garden\":{\"name\":\"w%ld\",\"bed\":[", i);
    for (int k = 0; k < BEDS; k++)
        ncmp_buf_appendf(b, "%s{\"row\":%d,\"area\":%ld,\"note\":\"bed %d of write %ld\"}",
                         k ? "," : "", k, i + k, k, i);
    ncmp_buf_append_str(b, "]}}");
    ncmp_buf_append_char(b, '\0');
}

/* `n` PUTs of the garden to `anchor`, IN_FLIGHT at a time. */
static int write_round(const char *base, const char *anchor, long first, long n, char *err,
                       size_t errlen)
{
    CURLM *multi = curl_multi_init();
    CURL *easy[IN_FLIGHT] = {0};
    ncmp_buf body[IN_FLIGHT];
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    char url[1024];
    long started = 0, done = 0;
    int rc = 0;

    snprintf(url, sizeof(url), "%s/cps/api/v2/dataspaces/" DATASPACE "/anchors/%s/nodes?xpath=/",
             base, anchor);
    memset(body, 0, sizeof(body));
    for (int i = 0; i < IN_FLIGHT; i++) {
        easy[i] = curl_easy_init();
        curl_easy_setopt(easy[i], CURLOPT_URL, url);
        curl_easy_setopt(easy[i], CURLOPT_CUSTOMREQUEST, "PUT");
        curl_easy_setopt(easy[i], CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, sink);
        curl_easy_setopt(easy[i], CURLOPT_PRIVATE, (char *)&body[i]);
    }
    for (int i = 0; i < IN_FLIGHT && started < n; i++, started++) {
        garden_doc(&body[i], first + started);
        curl_easy_setopt(easy[i], CURLOPT_POSTFIELDS, body[i].data);
        curl_multi_add_handle(multi, easy[i]);
    }
    while (done < n && rc == 0) {
        int running, left;
        CURLMsg *m;
        curl_multi_perform(multi, &running);
        while ((m = curl_multi_info_read(multi, &left))) {
            long status = 0;
            ncmp_buf *b;
            if (m->msg != CURLMSG_DONE)
                continue;
            curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&b);
            curl_multi_remove_handle(multi, m->easy_handle);
            done++;
            if (m->data.result != CURLE_OK || status != 200) {
                rc = fail(err, errlen, "PUT %s: %s, status %ld", url,
                          curl_easy_strerror(m->data.result), status);
                break;
            }
            if (started < n) {
                garden_doc(b, first + started++);
                curl_easy_setopt(m->easy_handle, CURLOPT_POSTFIELDS, b->data);
                curl_multi_add_handle(multi, m->easy_handle);
            }
        }
        if (done < n)
            curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    for (int i = 0; i < IN_FLIGHT; i++) {
        curl_multi_remove_handle(multi, easy[i]);
        curl_easy_cleanup(easy[i]);
        ncmp_buf_free(&body[i]);
    }
    curl_slist_free_all(headers);
    curl_multi_cleanup(multi);
    return rc;
}

static long outbox_rows(PGconn *pg)
{
    PGresult *res = PQexec(pg, "SELECT count(*) FROM cps_event_outbox");
    long n = PQresultStatus(res) == PGRES_TUPLES_OK ? atol(PQgetvalue(res, 0, 0)) : -1;

    PQclear(res);
    return n;
}

/* Wait until the outbox is empty (at most 120 s). */
static int drained(PGconn *pg, char *err, size_t errlen)
{
    double deadline = now_s() + 120;
    long n;

    while ((n = outbox_rows(pg)) != 0) {
        if (n < 0)
            return fail(err, errlen, "reading cps_event_outbox: %s", PQerrorMessage(pg));
        if (now_s() > deadline)
            return fail(err, errlen,
                        "%ld data-updated events still unpublished after 120 s (is "
                        "the cps-relay role running?)",
                        n);
        usleep(5000);
    }
    return 0;
}

/* How many data-updated events were ever written. */
static long events_written(PGconn *pg)
{
    PGresult *res =
        PQexec(pg, "SELECT coalesce(pg_sequence_last_value('cps_event_outbox_seq_seq'), 0)");
    long n = PQresultStatus(res) == PGRES_TUPLES_OK ? atol(PQgetvalue(res, 0, 0)) : -1;

    PQclear(res);
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int bench_notify_run(const char *base, const char *db_url, long writes, bench_notify_result *out,
                     char *err, size_t errlen)
{
    PGconn *pg = PQconnectdb(db_url);
    double off[ROUNDS], on[ROUNDS];
    int noff = 0, non = 0, rc = -1;
    long per_round = writes / (ROUNDS / 2), next = 0;
    ncmp_buf doc = NCMP_BUF_INIT;

    if (PQstatus(pg) != CONNECTION_OK) {
        fail(err, errlen, "database: %s", PQerrorMessage(pg));
        goto cleanup;
    }
    if (per_round < 20) {
        fail(err, errlen, "at least 60 writes");
        goto cleanup;
    }
    if (call(base, "POST", "/cps/api/v2/dataspaces?dataspace-name=" DATASPACE, NULL, NULL, 201, 409,
             err, errlen) != 0 ||
        call(base, "POST",
             "/cps/api/v2/dataspaces/" DATASPACE "/schema-sets?schema-set-name=garden", GARDEN,
             "bench-garden.yang", 201, 409, err, errlen) != 0 ||
        call(base, "POST",
             "/cps/api/v2/dataspaces/" DATASPACE "/anchors?schema-set-name=garden&anchor-name=off",
             NULL, NULL, 201, 409, err, errlen) != 0 ||
        call(base, "POST",
             "/cps/api/v2/dataspaces/" DATASPACE "/anchors?schema-set-name=garden&anchor-name=on",
             NULL, NULL, 201, 409, err, errlen) != 0 ||
        call(base, "POST", "/cps/api/v2/notification-subscription?xpath=/dataspaces",
             "{\"dataspace\":[{\"name\":\"" DATASPACE
             "\",\"anchors\":{\"anchor\":[{\"name\":\"on\"}]}}]}",
             NULL, 201, 409, err, errlen) != 0)
        goto cleanup;
    /* each anchor's tree exists before the timed rounds: every timed
     * write replaces the same number of nodes */
    garden_doc(&doc, 0);
    if (call(base, "PUT", "/cps/api/v2/dataspaces/" DATASPACE "/anchors/off/nodes?xpath=/",
             doc.data, NULL, 200, 200, err, errlen) != 0 ||
        call(base, "PUT", "/cps/api/v2/dataspaces/" DATASPACE "/anchors/on/nodes?xpath=/", doc.data,
             NULL, 200, 200, err, errlen) != 0 ||
        drained(pg, err, errlen) != 0)
        goto cleanup;
    for (int r = 0; r < ROUNDS; r++) {
        int subscribed = r % 2;
        long before = events_written(pg);
        double t0 = now_s(), secs;
        if (write_round(base, subscribed ? "on" : "off", next, per_round, err, errlen) != 0)
            goto cleanup;
        next += per_round;
        if (subscribed && drained(pg, err, errlen) != 0)
            goto cleanup;
        secs = now_s() - t0;
        if (events_written(pg) - before != (subscribed ? per_round : 0)) {
            fail(err, errlen, "%ld data-updated events for %ld writes to the %s anchor",
                 events_written(pg) - before, per_round, subscribed ? "subscribed" : "other");
            goto cleanup;
        }
        if (subscribed)
            on[non++] = (double)(per_round * (BEDS + 1)) / secs;
        else
            off[noff++] = (double)(per_round * (BEDS + 1)) / secs;
    }
    qsort(off, (size_t)noff, sizeof(double), cmp_double);
    qsort(on, (size_t)non, sizeof(double), cmp_double);
    out->writes = per_round * (ROUNDS / 2);
    out->nodes_per_write = BEDS + 1;
    out->off_nodes_per_s = off[noff / 2];
    out->on_nodes_per_s = on[non / 2];
    out->on_vs_off = out->on_nodes_per_s / out->off_nodes_per_s;
    rc = 0;
cleanup:
    ncmp_buf_free(&doc);
    PQfinish(pg);
    return rc;
}
