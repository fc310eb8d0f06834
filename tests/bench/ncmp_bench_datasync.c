/*
 * ncmp-bench-datasync: the measuring side of `./run bench data-sync`.
 *
 *   ncmp-bench-datasync --db URL --handles N [--timeout-s S] [--json FILE]
 *       [--kafka BOOTSTRAP --http URL [--avc-events M] [--notify-writes W]]
 *
 * On a database where N handles are READY with data sync off (the script
 * registered them through ncmpd against the DMI stub, which serves an
 * Open ROADM device per handle) and ncmpd's data-sync role runs, the
 * phases run in order, each adding its figures to one JSON object:
 *
 *   sync  every handle's data sync turned on by one UPDATE (the columns
 *         PUT data-sync sets; migrations/0011's trigger queues the
 *         handles and wakes the role), then the time until all N are
 *         SYNCHRONIZED: synced_handles_per_s, nodes_per_s
 *   copy  the raw limit: the same fragment rows (N times the rows of one
 *         synced anchor) by COPY into an empty table like
 *         `fragment_cache`, the partition the cache's rows go to (its
 *         indexes; migrations/0017): copy_rows_per_s, and the sync's
 *         nodes/s against it
 *
 *   avc   (with --kafka) M AVC events from DMI plugins, a leaf of each
 *         handle's device patched, round robin over the synced handles,
 *         timed until the avc-apply role has applied them all
 *         (bench_avc_apply.h): avc_applied_per_s
 *   notify (with --http) the CPS store's writes with data-updated events
 *         on against off (bench_notify.h): notify_on_vs_off
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_avc_apply.h"
#include "bench_notify.h"
#include "bench_usage.h"
#include "ncmp_buf.h"

static const char usage[] =
    "usage: ncmp-bench-datasync --db URL --handles N [--timeout-s S] [--json FILE]\n"
    "                           [--kafka BOOTSTRAP --http URL [--avc-events M]\n"
    "                           [--notify-writes W]]\n"
    "The measuring side of ./run bench data-sync: N READY handles' data sync turned\n"
    "on and timed until SYNCHRONIZED, beside COPY of the same rows; with --kafka, M\n"
    "AVC events applied to the caches; with --http, the store's writes with\n"
    "data-updated events on against off.\n";

typedef struct bench {
    const char *db_url, *json_path;
    const char *kafka, *http; /* NULL: no avc, no notify phase */
    long avc_events, notify_writes;
    long handles;
    long timeout_s;
    PGconn *conn;
    ncmp_buf json; /* "key": value, pairs so far */
    /* from the sync phase, for the others */
    double sync_s;
    long nodes;
} bench;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "ncmp-bench-datasync: %s%s\n", what, detail);
    exit(1);
}

static void exec_ok(bench *b, const char *sql)
{
    PGresult *res = PQexec(b->conn, sql);
    ExecStatusType st = PQresultStatus(res);

    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        die("", PQerrorMessage(b->conn));
    PQclear(res);
}

static long query_long(bench *b, const char *sql)
{
    PGresult *res = PQexec(b->conn, sql);
    long v;

    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
        die("", PQerrorMessage(b->conn));
    v = atol(PQgetvalue(res, 0, 0));
    PQclear(res);
    return v;
}

static void json_add(bench *b, const char *key, double value, int integer)
{
    ncmp_buf_appendf(&b->json, "%s\"%s\": ", b->json.len ? ", " : "", key);
    if (integer)
        ncmp_buf_appendf(&b->json, "%.0f", value);
    else
        ncmp_buf_appendf(&b->json, "%.3f", value);
}

/* --- phases ---------------------------------------------------------------- */

/* Polled every POLL_US while the handles sync: the queue (small, and
 * shrinking) rather than a count over cm_handle, whose scan every few
 * milliseconds would take a good part of the machine from what is
 * measured. */
#define POLL_US 100000

static void phase_sync(bench *b)
{
    long ready, left, synced;
    double t0, t1, last_print = 0;
    PGresult *res;

    ready = query_long(b, "SELECT count(*) FROM cm_handle WHERE state = 'READY'");
    if (ready < b->handles)
        die("fewer READY handles than --handles", "");
    t0 = now_s();
    /* what PUT data-sync sets, for every handle at once; the trigger of
     * migrations/0011 queues them and wakes the data-sync role */
    res = PQexec(b->conn, "UPDATE cm_handle SET data_sync_enabled = true,"
                          " operational_sync_state = 'UNSYNCHRONIZED', last_update_time = now()"
                          " WHERE state = 'READY' AND NOT data_sync_enabled");
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        die("", PQerrorMessage(b->conn));
    if (atol(PQcmdTuples(res)) < b->handles)
        die("fewer handles with data sync off than --handles: ", PQcmdTuples(res));
    PQclear(res);
    /* done when the queue is empty: asked every POLL_US of its index's
     * first row (a count of the queue, whose rows the role keeps
     * updating and deleting, read the whole table each time: CPU taken
     * from the run it measures), counted only for the progress line */
    for (;;) {
        if (query_long(b, "SELECT count(*) FROM (SELECT 1 FROM data_sync_work"
                          " ORDER BY next_at LIMIT 1) q") == 0)
            break;
        if (now_s() - t0 > (double)b->timeout_s) {
            fprintf(stderr, "ncmp-bench-datasync: %ld handles still queued after %ld s\n",
                    query_long(b, "SELECT count(*) FROM data_sync_work"), b->timeout_s);
            exit(1);
        }
        if (now_s() - last_print >= 5) {
            left = query_long(b, "SELECT count(*) FROM data_sync_work");
            fprintf(stderr, "  %ld of %ld queued after %.0f s\n", left, b->handles, now_s() - t0);
            last_print = now_s();
        }
        usleep(POLL_US);
    }
    t1 = now_s();
    synced = query_long(b, "SELECT count(*) FROM cm_handle WHERE operational_sync_state ="
                           " 'SYNCHRONIZED'");
    if (synced < b->handles) {
        fprintf(stderr, "ncmp-bench-datasync: the queue is empty but %ld of %ld are SYNCHRONIZED\n",
                synced, b->handles);
        exit(1);
    }
    b->sync_s = t1 - t0;
    b->nodes = query_long(b, "SELECT count(*) FROM fragment f JOIN anchor a ON a.id = f.anchor_id"
                             " JOIN dataspace d ON d.id = a.dataspace_id"
                             " WHERE d.name = 'NFP-Operational'");
    printf("%-44s %12s %12s\n", "data sync", "handles/s", "nodes/s");
    printf("%-44s %12.0f %12.0f\n", "enable -> all SYNCHRONIZED", (double)b->handles / b->sync_s,
           (double)b->nodes / b->sync_s);
    printf("  %ld handles, %ld nodes in %.2f s\n", b->handles, b->nodes, b->sync_s);
    json_add(b, "handles", (double)b->handles, 1);
    json_add(b, "sync_seconds", b->sync_s, 0);
    json_add(b, "nodes", (double)b->nodes, 1);
    json_add(b, "synced_handles_per_s", (double)b->handles / b->sync_s, 1);
    json_add(b, "nodes_per_s", (double)b->nodes / b->sync_s, 1);
}

/* COPY text of one anchor's rows for anchor id `id`. */
static void copy_rows(ncmp_buf *out, const PGresult *rows, long id)
{
    for (int r = 0; r < PQntuples(rows); r++) {
        ncmp_buf_appendf(out, "%ld\t", id);
        for (int c = 0; c < 4; c++) {
            ncmp_buf_append_copy_field(out, PQgetvalue(rows, r, c),
                                       (size_t)PQgetlength(rows, r, c));
            ncmp_buf_append_char(out, c == 3 ? '\n' : '\t');
        }
    }
}

static void phase_copy(bench *b)
{
    PGresult *rows, *res;
    ncmp_buf data = NCMP_BUF_INIT;
    double t0, t1;
    long nrows;

    rows = PQexec(b->conn, "SELECT f.path, f.depth, f.name, f.attributes FROM fragment f"
                           " WHERE f.anchor_id = (SELECT min(a.id) FROM anchor a"
                           "  JOIN dataspace d ON d.id = a.dataspace_id"
                           "  WHERE d.name = 'NFP-Operational') ORDER BY f.path");
    if (PQresultStatus(rows) != PGRES_TUPLES_OK || PQntuples(rows) == 0)
        die("no synced anchor to copy: ", PQerrorMessage(b->conn));
    exec_ok(b, "DROP TABLE IF EXISTS bench_fragment_copy");
    exec_ok(b, "CREATE TABLE bench_fragment_copy (LIKE fragment_cache INCLUDING ALL)");
    nrows = (long)PQntuples(rows) * b->handles;
    t0 = now_s();
    res = PQexec(b->conn,
                 "COPY bench_fragment_copy (anchor_id, path, depth, name, attributes) FROM STDIN");
    if (PQresultStatus(res) != PGRES_COPY_IN)
        die("", PQerrorMessage(b->conn));
    PQclear(res);
    for (long h = 0; h < b->handles; h++) {
        copy_rows(&data, rows, h + 1);
        if (data.len > (1 << 20) || h == b->handles - 1) {
            if (PQputCopyData(b->conn, data.data, (int)data.len) != 1)
                die("", PQerrorMessage(b->conn));
            ncmp_buf_reset(&data);
        }
    }
    if (PQputCopyEnd(b->conn, NULL) != 1)
        die("", PQerrorMessage(b->conn));
    res = PQgetResult(b->conn);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        die("", PQerrorMessage(b->conn));
    PQclear(res);
    t1 = now_s();
    exec_ok(b, "DROP TABLE bench_fragment_copy");
    PQclear(rows);
    ncmp_buf_free(&data);
    printf("%-44s %12.0f %12.0f\n", "raw COPY of the same rows", (double)b->handles / (t1 - t0),
           (double)nrows / (t1 - t0));
    printf("  sync nodes/s against COPY rows/s: %.2f\n",
           ((double)b->nodes / b->sync_s) / ((double)nrows / (t1 - t0)));
    json_add(b, "copy_rows", (double)nrows, 1);
    json_add(b, "copy_seconds", t1 - t0, 0);
    json_add(b, "copy_rows_per_s", (double)nrows / (t1 - t0), 1);
    json_add(b, "sync_vs_copy", ((double)b->nodes / b->sync_s) / ((double)nrows / (t1 - t0)), 0);
}

/* The synced handles' caches hold the stub's device, its id the
 * template's with NODE_ID_HERE replaced by the handle id. */
#define DEVICE_PREFIX "C201-7-1A-"

static void phase_avc(bench *b)
{
    PGresult *res;
    const char **ids, **devices;
    bench_avc_opts o = {0};
    bench_avc_result r;
    ncmp_err err;
    long n;

    if (!b->kafka) {
        fprintf(stderr, "  skipped: no --kafka\n");
        return;
    }
    res = PQexec(b->conn, "SELECT id, '" DEVICE_PREFIX "' || id FROM cm_handle"
                          " WHERE operational_sync_state = 'SYNCHRONIZED' ORDER BY id");
    if (PQresultStatus(res) != PGRES_TUPLES_OK)
        die("", PQerrorMessage(b->conn));
    n = PQntuples(res);
    ids = calloc((size_t)n + 1, sizeof(*ids));
    devices = calloc((size_t)n + 1, sizeof(*devices));
    for (long i = 0; i < n; i++) {
        ids[i] = PQgetvalue(res, (int)i, 0);
        devices[i] = PQgetvalue(res, (int)i, 1);
    }
    o.bootstrap = b->kafka;
    o.topic = "dmi-cm-events";
    o.db_url = b->db_url;
    o.group = "ncmp-group-avc-apply";
    o.handles = ids;
    o.device_ids = devices;
    o.nhandles = (size_t)n;
    o.events = b->avc_events;
    if (bench_avc_apply_run(&o, &r, &err) != 0)
        die("avc phase: ", err.msg);
    printf("%-44s %12s\n", "AVC events", "changes/s");
    printf("%-44s %12.0f\n", "applied to the caches", r.applied_per_s);
    printf("  %ld events over %ld handles in %.2f s, dead-lettered %ld\n", r.events, n, r.seconds,
           r.dead_lettered);
    json_add(b, "avc_events", (double)r.events, 1);
    json_add(b, "avc_seconds", r.seconds, 0);
    json_add(b, "avc_applied_per_s", r.applied_per_s, 1);
    json_add(b, "avc_dead_lettered", (double)r.dead_lettered, 1);
    free(ids);
    free(devices);
    PQclear(res);
}

static void phase_notify(bench *b)
{
    bench_notify_result r;
    char err[512];

    if (!b->http) {
        fprintf(stderr, "  skipped: no --http\n");
        return;
    }
    if (bench_notify_run(b->http, b->db_url, b->notify_writes, &r, err, sizeof(err)) != 0)
        die("notify phase: ", err);
    printf("%-44s %12s\n", "CPS writes, data-updated events", "nodes/s");
    printf("%-44s %12.0f\n", "off (anchor not subscribed)", r.off_nodes_per_s);
    printf("%-44s %12.0f\n", "on (subscribed, until published)", r.on_nodes_per_s);
    printf("  on/off %.2f; %ld writes of %ld nodes each way, alternating rounds\n", r.on_vs_off,
           r.writes, r.nodes_per_write);
    json_add(b, "notify_writes", (double)r.writes, 1);
    json_add(b, "notify_off_nodes_per_s", r.off_nodes_per_s, 1);
    json_add(b, "notify_on_nodes_per_s", r.on_nodes_per_s, 1);
    json_add(b, "notify_on_vs_off", r.on_vs_off, 0);
}

typedef struct phase {
    const char *name;
    void (*run)(bench *b);
} phase;

/* In order; each may use what the ones before it measured. */
static const phase phases[] = {
    {"sync", phase_sync}, {"copy", phase_copy}, {"avc", phase_avc}, {"notify", phase_notify}};

int main(int argc, char **argv)
{
    bench b = {0};
    FILE *f;

    b.handles = 50000;
    b.timeout_s = 1800;
    b.avc_events = 100000;
    b.notify_writes = 1500;
    if (bench_help_asked(argc, argv))
        return bench_usage(usage, 1);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
            b.db_url = argv[++i];
        else if (strcmp(argv[i], "--handles") == 0 && i + 1 < argc)
            b.handles = atol(argv[++i]);
        else if (strcmp(argv[i], "--timeout-s") == 0 && i + 1 < argc)
            b.timeout_s = atol(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            b.json_path = argv[++i];
        else if (strcmp(argv[i], "--kafka") == 0 && i + 1 < argc)
            b.kafka = argv[++i];
        else if (strcmp(argv[i], "--http") == 0 && i + 1 < argc)
            b.http = argv[++i];
        else if (strcmp(argv[i], "--avc-events") == 0 && i + 1 < argc)
            b.avc_events = atol(argv[++i]);
        else if (strcmp(argv[i], "--notify-writes") == 0 && i + 1 < argc)
            b.notify_writes = atol(argv[++i]);
        else {
            fprintf(stderr, "ncmp-bench-datasync: unknown argument '%s'\n", argv[i]);
            return bench_usage(usage, 0);
        }
    }
    if (!b.db_url || b.handles <= 0)
        die("--db and a positive --handles are required", "");
    b.conn = PQconnectdb(b.db_url);
    if (PQstatus(b.conn) != CONNECTION_OK)
        die("", PQerrorMessage(b.conn));
    ncmp_buf_append_str(&b.json, "\"scenario\": \"data-sync\"");
    for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
        fprintf(stderr, "phase %s\n", phases[i].name);
        phases[i].run(&b);
    }
    if (b.json_path) {
        if (!(f = fopen(b.json_path, "w")))
            die("cannot write ", b.json_path);
        fprintf(f, "{%s}\n", b.json.data);
        fclose(f);
    }
    PQfinish(b.conn);
    ncmp_buf_free(&b.json);
    return 0;
}
