/*
 * ncmp-bench-avc-apply: the AVC phase of bench_avc_apply.h on its own
 * (`./run bench avc-apply`), until `bench data-sync` calls it after its
 * sync phase. It makes what data sync would have made, through ncmpd's CPS
 * API: dataspace NFP-Operational, the Open ROADM schema set, and per handle
 * `bench-avc-<i>` an anchor holding the sample device with device-id = the
 * handle id; and the handles' rows with data sync on (SQL). Then it runs
 * the phase and prints the figures (and JSON with -j).
 *
 *   ncmp-bench-avc-apply -u URL -d DB_URL -b BOOTSTRAP -D DATA_DIR
 *       [-t dmi-cm-events] [-g ncmp-group-avc-apply] [-H 1000] [-M 100000]
 *       [-j FILE]
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_avc_apply.h"
#include "bench_usage.h"
#include "ncmp_buf.h"
#include "ncmp_db.h"
#include "ncmp_time.h"

static const char usage[] =
    "usage: ncmp-bench-avc-apply -u URL -d DB_URL -b BOOTSTRAP -D DATA_DIR [-t TOPIC] [-g GROUP]\n"
    "                            [-H HANDLES] [-M EVENTS] [-j FILE]\n"
    "The AVC phase of ./run bench data-sync on caches of its own: HANDLES (1000)\n"
    "anchors of the Open ROADM device through ncmpd's CPS API at URL, then EVENTS\n"
    "(100000) AVC events on TOPIC (dmi-cm-events), timed until applied; -j FILE\n"
    "writes the figures as JSON.\n";

static size_t sink(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* One request; 0 when it answered one of the `ok` statuses. */
static int call(CURL *curl, const char *base, const char *method, const char *path,
                const char *file, const char *body, long ok1, long ok2)
{
    char url[2048];
    ncmp_buf answer = NCMP_BUF_INIT;
    struct curl_slist *headers = NULL;
    curl_mime *mime = NULL;
    long status = 0;
    CURLcode rc;

    curl_easy_reset(curl);
    snprintf(url, sizeof(url), "%s%s", base, path);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 120L);
    if (file) {
        curl_mimepart *part;
        mime = curl_mime_init(curl);
        part = curl_mime_addpart(mime);
        curl_mime_name(part, "file");
        curl_mime_filedata(part, file);
        curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime);
    } else if (body) {
        headers = curl_slist_append(headers, "Content-Type: application/json");
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    }
    rc = curl_easy_perform(curl);
    if (rc == CURLE_OK)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_mime_free(mime);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK || (status != ok1 && status != ok2)) {
        ncmp_buf_append_char(&answer, '\0');
        fprintf(stderr, "%s %s: %s %ld %.300s\n", method, path,
                rc == CURLE_OK ? "status" : curl_easy_strerror(rc), status,
                answer.data ? answer.data : "");
        ncmp_buf_free(&answer);
        return -1;
    }
    ncmp_buf_free(&answer);
    return 0;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long n;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    data = calloc(1, (size_t)n + 1);
    if (fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    return data;
}

#define OPS "/cps/api/v2/dataspaces/NFP-Operational"

/* The caches of `n` handles, as data sync leaves them. */
static int caches_make(const char *base, const char *data_dir, char **ids, long n)
{
    CURL *curl = curl_easy_init();
    char path[1024], *sample;
    const char *mark;
    int rc = -1;

    snprintf(path, sizeof(path), "%s/openroadm/device.json", data_dir);
    sample = read_file(path);
    mark = sample ? strstr(sample, "C201-7-1A-NODE_ID_HERE") : NULL;
    if (!mark) {
        fprintf(stderr, "no sample device at %s\n", path);
        goto cleanup;
    }
    snprintf(path, sizeof(path), "%s/openroadm/model.zip", data_dir);
    if (call(curl, base, "POST", "/cps/api/v2/dataspaces?dataspace-name=NFP-Operational", NULL,
             NULL, 201, 409) != 0 ||
        call(curl, base, "POST", OPS "/schema-sets?schema-set-name=openroadm", path, NULL, 201,
             409) != 0)
        goto cleanup;
    for (long i = 0; i < n; i++) {
        ncmp_buf body = NCMP_BUF_INIT;
        int ok;
        ncmp_buf_append_str(&body, "{\"openroadm-devices\":{\"openroadm-device\":[");
        ncmp_buf_append(&body, sample, (size_t)(mark - sample));
        ncmp_buf_append_str(&body, ids[i]);
        ncmp_buf_append_str(&body, mark + strlen("C201-7-1A-NODE_ID_HERE"));
        ncmp_buf_append_str(&body, "]}}");
        ncmp_buf_append_char(&body, '\0');
        snprintf(path, sizeof(path), OPS "/anchors?schema-set-name=openroadm&anchor-name=%s",
                 ids[i]);
        ok = call(curl, base, "POST", path, NULL, NULL, 201, 409) == 0;
        snprintf(path, sizeof(path), OPS "/anchors/%s/nodes?xpath=/", ids[i]);
        ok = ok && call(curl, base, "POST", path, NULL, body.data, 201, 409) == 0;
        ncmp_buf_free(&body);
        if (!ok)
            goto cleanup;
    }
    rc = 0;
cleanup:
    free(sample);
    curl_easy_cleanup(curl);
    return rc;
}

static int handles_register(const char *db_url, long n)
{
    ncmp_db *db = NULL;
    ncmp_err err;
    char sql[512];
    int rc;

    snprintf(sql, sizeof(sql),
             "INSERT INTO cm_handle (id, state, data_sync_enabled, operational_sync_state)"
             " SELECT 'bench-avc-' || g, 'READY', true, 'SYNCHRONIZED'"
             " FROM generate_series(0, %ld) g"
             " ON CONFLICT (id) DO UPDATE SET data_sync_enabled = true",
             n - 1);
    rc =
        ncmp_db_open(&db, db_url, NULL, 10, &err) == 0 && ncmp_db_exec(db, sql, &err) == 0 ? 0 : -1;
    if (rc != 0)
        fprintf(stderr, "registering the handles: %s\n", err.msg);
    ncmp_db_close(db);
    return rc;
}

int main(int argc, char **argv)
{
    const char *url = NULL, *db_url = NULL, *bootstrap = NULL, *data_dir = NULL, *json = NULL;
    const char *topic = "dmi-cm-events", *group = "ncmp-group-avc-apply";
    long handles = 1000, events = 100000;
    bench_avc_opts o = {0};
    bench_avc_result r = {0};
    char **ids;
    ncmp_err err;
    double t0;
    int c, rc = 1;

    if (bench_help_asked(argc, argv))
        return bench_usage(usage, 1);
    while ((c = getopt(argc, argv, "u:d:b:D:t:g:H:M:j:")) != -1) {
        switch (c) {
        case 'u':
            url = optarg;
            break;
        case 'd':
            db_url = optarg;
            break;
        case 'b':
            bootstrap = optarg;
            break;
        case 'D':
            data_dir = optarg;
            break;
        case 't':
            topic = optarg;
            break;
        case 'g':
            group = optarg;
            break;
        case 'H':
            handles = atol(optarg);
            break;
        case 'M':
            events = atol(optarg);
            break;
        case 'j':
            json = optarg;
            break;
        default:
            return bench_usage(usage, 0);
        }
    }
    if (!url || !db_url || !bootstrap || !data_dir || handles <= 0 || events <= 0)
        return bench_usage(usage, 0);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ids = calloc((size_t)handles, sizeof(*ids));
    for (long i = 0; i < handles; i++) {
        ids[i] = malloc(32);
        snprintf(ids[i], 32, "bench-avc-%ld", i);
    }
    t0 = ncmp_now_ms();
    if (caches_make(url, data_dir, ids, handles) != 0 || handles_register(db_url, handles) != 0)
        goto cleanup;
    printf("setup: %ld caches of one Open ROADM device in %.1f s\n", handles,
           (ncmp_now_ms() - t0) / 1000.0);
    o = (bench_avc_opts){.bootstrap = bootstrap,
                         .topic = topic,
                         .db_url = db_url,
                         .group = group,
                         .handles = (const char *const *)ids,
                         .nhandles = (size_t)handles,
                         .events = events};
    if (bench_avc_apply_run(&o, &r, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        goto cleanup;
    }
    printf("\n%-44s %12s\n", "avc-apply", "changes/s");
    printf("%-44s %12.0f\n", "AVC events applied to the caches", r.applied_per_s);
    printf("%ld events (1 change each) over %ld handles in %.2f s (producing them: %.2f s), "
           "dead-lettered %ld\n",
           r.events, handles, r.seconds, r.produce_s, r.dead_lettered);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            fprintf(stderr, "cannot write %s\n", json);
            goto cleanup;
        }
        fprintf(f,
                "{\"scenario\": \"avc-apply\", \"handles\": %ld, \"events\": %ld, "
                "\"avc_applied_per_s\": %.0f, \"seconds\": %.3f, \"produce_seconds\": %.3f, "
                "\"dead_lettered\": %ld}\n",
                handles, r.events, r.applied_per_s, r.seconds, r.produce_s, r.dead_lettered);
        fclose(f);
    }
    rc = r.dead_lettered == 0 ? 0 : 3;
cleanup:
    for (long i = 0; i < handles; i++)
        free(ids[i]);
    free(ids);
    curl_global_cleanup();
    return rc;
}
