/*
 * The CPS store's data API over HTTP against ncmpd running the cps role
 * on a scratch database: the Open ROADM model and device of CPS's own
 * performance tests (copies in tests/data/openroadm), and a small model
 * written here for typed leaves, leaf-lists and XML.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it_cps.h"
#include "it_util.h"
#include "ncmp_buf.h"

TestSuite(cps_data, .fini = it_cps_cleanup);

#define DS  "/cps/api/v2/dataspaces/ds"
#define AN  DS "/anchors/a1"
#define DEV "/openroadm-devices/openroadm-device"
#define Q   "/cps/api/v2/dataspaces/ds/anchors/a1/nodes/query?cps-path="

static const char GARDEN[] = "module garden {\n"
                             "  yang-version 1.1;\n"
                             "  namespace \"urn:garden\";\n"
                             "  prefix g;\n"
                             "  revision 2024-03-03;\n"
                             "  container garden {\n"
                             "    leaf name { type string; }\n"
                             "    leaf open { type boolean; }\n"
                             "    leaf-list tags { type string; }\n"
                             "    list bed { key \"row col\";\n"
                             "      leaf row { type uint8; }\n"
                             "      leaf col { type string; }\n"
                             "      leaf area { type decimal64 { fraction-digits 2; } }\n"
                             "      container soil { leaf ph { type int16; } }\n"
                             "    }\n"
                             "  }\n"
                             "}\n";

static char *read_source_file(const char *rel, size_t *len)
{
    char path[1024];
    FILE *f;
    char *data;
    long n;

    snprintf(path, sizeof(path), "%s/%s", NCMP_SOURCE_DIR, rel);
    f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    data = malloc((size_t)n + 1);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    data[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return data;
}

/* `n` Open ROADM devices made from the sample, ids C201-7-1A-<first..>,
 * as the elements of a JSON array (no brackets). */
static void devices(ncmp_buf *out, int first, int n)
{
    char *sample = read_source_file("tests/data/openroadm/device.json", NULL);
    const char *mark = strstr(sample, "NODE_ID_HERE");

    cr_assert_not_null(mark);
    for (int i = 0; i < n; i++) {
        if (i)
            ncmp_buf_append_char(out, ',');
        ncmp_buf_append(out, sample, (size_t)(mark - sample));
        ncmp_buf_appendf(out, "%d", first + i);
        ncmp_buf_append_str(out, mark + strlen("NODE_ID_HERE"));
    }
    free(sample);
}

static void send_json(cps_case *c, const char *method, const char *path, const char *json,
                      long status, const char *needle)
{
    reply r;

    it_cps_send(c, method, path, NULL, NULL, json, strlen(json), &r);
    cr_expect_eq(r.status, status, "%s %s: %ld, expected %ld: %s", method, path, r.status, status,
                 r.body.data ? r.body.data : "");
    if (needle)
        cr_expect(r.body.data && strstr(r.body.data, needle), "%s %s: no '%s' in %s", method, path,
                  needle, r.body.data ? r.body.data : "(empty)");
    it_cps_reply_free(&r);
}

/* The containers and list entries of an answer at most `levels` below
 * its top nodes (levels 0: the top nodes alone). */
static int count_nodes_to(json_object *o, int levels)
{
    int n = 0;

    if (levels < 0)
        return 0;
    if (json_object_is_type(o, json_type_array)) /* a query's answer: one object per match */
        for (size_t i = 0; i < json_object_array_length(o); i++)
            n += count_nodes_to(json_object_array_get_idx(o, i), levels);
    if (!json_object_is_type(o, json_type_object))
        return n;
    json_object_object_foreach(o, k, v)
    {
        (void)k;
        if (json_object_is_type(v, json_type_object))
            n += 1 + count_nodes_to(v, levels - 1);
        else if (json_object_is_type(v, json_type_array))
            for (size_t i = 0; i < json_object_array_length(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                if (json_object_is_type(e, json_type_object))
                    n += 1 + count_nodes_to(e, levels - 1);
            }
    }
    return n;
}

/* The number of containers and list entries in a JSON answer (objects
 * below the top, or the matches of a query and below). */
static int count_nodes(json_object *o)
{
    return count_nodes_to(o, INT_MAX);
}

/* GET `path`; expects 200 and returns the parsed body (caller puts). */
static json_object *get_json(cps_case *c, const char *path)
{
    reply r;
    json_object *o;

    it_cps_call(c, "GET", path, NULL, &r);
    cr_assert_eq(r.status, 200, "GET %s: %ld %s", path, r.status, r.body.data);
    o = json_tokener_parse(r.body.data);
    cr_assert_not_null(o, "GET %s: not JSON: %.300s", path, r.body.data);
    it_cps_reply_free(&r);
    return o;
}

static int count_at(cps_case *c, const char *path)
{
    json_object *o = get_json(c, path);
    int n = count_nodes(o);

    json_object_put(o);
    return n;
}

/* A case with dataspace ds, the Open ROADM schema set and anchor a1. */
static cps_case *openroadm_case(const char *name)
{
    cps_case *c = it_cps_start(name, "cps");
    char zip[1024];

    snprintf(zip, sizeof(zip), "%s/tests/data/openroadm/model.zip", NCMP_SOURCE_DIR);
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/schema-sets?schema-set-name=or", zip, 201, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=or&anchor-name=a1", NULL, 201, NULL);
    return c;
}

static void post_devices(cps_case *c, int first, int n, long status)
{
    ncmp_buf body = NCMP_BUF_INIT;

    ncmp_buf_append_str(&body, "{\"openroadm-devices\":{\"openroadm-device\":[");
    devices(&body, first, n);
    ncmp_buf_append_str(&body, "]}}");
    send_json(c, "POST", AN "/nodes?xpath=/", body.data, status, NULL);
    ncmp_buf_free(&body);
}

/* Rows just stored are known to the planner within seconds, not at
 * autovacuum's next visit (a minute): the API vacuums and analyzes the
 * fragment table once its writes pass autovacuum's threshold. */
Test(cps_data, bulk_writes_are_analyzed, .timeout = 120)
{
    cps_case *c = openroadm_case("analyzed");
    ncmp_db *db = NULL;
    ncmp_err err;
    long analyzed = 0;

    cr_assert_eq(ncmp_db_open(&db, c->dburl, NULL, 5, &err), 0, "%s", err.msg);
    cr_assert_eq(it_query_long(db,
                               "SELECT count(*) FROM pg_stat_user_tables"
                               " WHERE relname = 'fragment_store' AND last_analyze IS NOT NULL",
                               0, NULL),
                 0, "a new database has never analyzed fragment");
    post_devices(c, 1, 20, 201);
    for (int i = 0; i < 150 && !analyzed; i++) {
        it_sleep_ms(100);
        /* the statistics views are read once per transaction: a fresh one */
        analyzed = it_query_long(db,
                                 "SELECT count(*) FROM pg_stat_user_tables WHERE relname = "
                                 "'fragment_store' AND last_analyze IS NOT NULL",
                                 0, NULL);
    }
    cr_expect_eq(analyzed, 1, "20 devices (1,720 nodes) stored, fragment not analyzed in 15 s");
    cr_expect_geq(it_query_long(db,
                                "SELECT reltuples::bigint FROM pg_class WHERE oid = "
                                "'fragment_store'::regclass",
                                0, NULL),
                  20 * 86, "the planner knows the rows stored");
    /* and vacuumed before: every page marked all-visible, so that the
     * rows near the top are read from their index alone (0021) */
    cr_expect_eq(it_query_long(db,
                               "SELECT count(*) FROM pg_stat_user_tables WHERE relname ="
                               " 'fragment_store' AND last_vacuum IS NOT NULL",
                               0, NULL),
                 1, "fragment_store analyzed but not vacuumed");
    cr_expect_eq(it_query_long(db,
                               "SELECT (relpages > 0 AND relallvisible = relpages)::int"
                               " FROM pg_class WHERE oid = 'fragment_store'::regclass",
                               0, NULL),
                 1, "pages of fragment_store not all-visible after the vacuum");
    ncmp_db_close(db);
    it_cps_fini(c);
}

static long depth_index_scans(ncmp_db *db)
{
    return it_query_long(db,
                         "SELECT coalesce(sum(idx_scan), 0)::bigint FROM pg_stat_user_indexes"
                         " WHERE indexrelname = 'fragment_store_depth'",
                         0, NULL);
}

/* A read bounded in depth holds exactly the nodes of the read with every
 * descendant down to that depth, whichever way it is read: from the
 * index on the rows of the first three levels (migrations/0018), or by a
 * walk of the key below them; node reads and CPS-path queries, at the
 * top, on a list, on an entry and deeper. (Open ROADM: the devices
 * container at depth 1, a device 2, org-openroadm-device 3, its degrees
 * 4, their ports 5.) */
Test(cps_data, reads_bounded_in_depth_are_the_whole_read_cut_at_that_depth, .timeout = 180)
{
    static const char *const xpaths[] = {
        "/",
        "/openroadm-devices",
        DEV,
        DEV "%5B@device-id='C201-7-1A-7'%5D",
        DEV "%5B@device-id='C201-7-1A-7'%5D/org-openroadm-device",
        DEV "%5B@device-id='C201-7-1A-7'%5D/org-openroadm-device/degree",
    };
    static const char *const queries[] = {
        "//openroadm-device",
        "/openroadm-devices",
        "//org-openroadm-device",
        "//openroadm-device%5B@device-id='C201-7-1A-3'%5D/org-openroadm-device",
        "//degree%5B@degree-number=2%5D",
        "//openroadm-device/ancestor::openroadm-devices",
    };
    cps_case *c = openroadm_case("cps_data_depth");
    char path[512];
    long scans_before;
    ncmp_db *db;
    ncmp_err err;

    /* enough devices that the planner prefers the depth index for the
     * ranges over all of them (the writes analyze the table); a bounded
     * read is tried as a small read of at most a block (5,000 rows), and
     * the deeper ones from / (6,001 rows and more) are read again by a
     * cursor */
    post_devices(c, 0, 200, 201);
    cr_assert_eq(ncmp_db_open(&db, c->dburl, NULL, 5, &err), 0, "%s", err.msg);
    scans_before = depth_index_scans(db);
    for (size_t i = 0; i < sizeof(xpaths) / sizeof(xpaths[0]); i++) {
        json_object *all;

        snprintf(path, sizeof(path),
                 "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=%s"
                 "&descendants=all",
                 xpaths[i]);
        all = get_json(c, path);
        cr_expect_gt(count_nodes_to(all, 99), 0, "%s", path);
        for (int n = 0; n <= 5; n++) {
            snprintf(path, sizeof(path),
                     "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=%s&descendants=%d", xpaths[i],
                     n);
            cr_expect_eq(count_at(c, path), count_nodes_to(all, n), "%s", path);
        }
        snprintf(path, sizeof(path),
                 "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=%s&descendants=direct",
                 xpaths[i]);
        cr_expect_eq(count_at(c, path), count_nodes_to(all, 1), "%s", path);
        json_object_put(all);
    }
    for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
        json_object *all;

        snprintf(path, sizeof(path), Q "%s&descendants=all", queries[i]);
        all = get_json(c, path);
        cr_expect_gt(count_nodes_to(all, 99), 0, "%s", path);
        for (int n = 0; n <= 4; n++) {
            snprintf(path, sizeof(path), Q "%s&descendants=%d", queries[i], n);
            cr_expect_eq(count_at(c, path), count_nodes_to(all, n), "%s", path);
        }
        json_object_put(all);
    }
    /* the statistics of other backends arrive within a second or so */
    for (int i = 0; i < 50 && depth_index_scans(db) == scans_before; i++)
        usleep(100 * 1000);
    cr_expect_gt(depth_index_scans(db), scans_before, "no read used the depth index");
    ncmp_db_close(db);
    it_cps_fini(c);
}

/* The tags of the garden in an answer (v3: {"g:garden": {...}}), or -1. */
static int garden_tags(json_object *o)
{
    json_object *g, *tags;

    if (json_object_is_type(o, json_type_array)) /* a query's answer */
        o = json_object_array_get_idx(o, 0);
    if (!o || !json_object_object_get_ex(o, "g:garden", &g) ||
        !json_object_object_get_ex(g, "tags", &tags))
        return -1;
    return (int)json_object_array_length(tags);
}

/* Rows near the top whose leaves or path are too large for an index
 * entry that carries the leaves (migrations/0021: a B-tree entry holds
 * 2,704 bytes at most) are stored, and read bounded in depth, as the
 * others are: a container of 300 tags (about 9,000 characters that do
 * not compress), and a list entry whose key makes its path and its
 * child's longer than 512 bytes, beside entries of the ordinary size. */
Test(cps_data, large_rows_near_the_top_are_stored_and_read_bounded_in_depth, .timeout = 120)
{
    cps_case *c = it_cps_start("cps_data_large_top", "cps");
    ncmp_buf body = NCMP_BUF_INIT;
    char path[512];
    unsigned seed = 12345;
    json_object *all, *o;

    it_cps_temp_path(path, sizeof(path), c, "garden.yang");
    it_cps_write_file(path, GARDEN);
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/schema-sets?schema-set-name=g", path, 201, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=g&anchor-name=a1", NULL, 201, NULL);
    ncmp_buf_append_str(&body, "{\"garden\":{\"name\":\"large\",\"tags\":[");
    for (int i = 0; i < 300; i++) {
        ncmp_buf_append_str(&body, i ? ",\"" : "\"");
        for (int k = 0; k < 24; k++) {
            seed = seed * 1103515245u + 12345u;
            ncmp_buf_append_char(&body, "0123456789abcdefghijklmnopqrstuv"[(seed >> 16) & 31]);
        }
        ncmp_buf_append_char(&body, '"');
    }
    ncmp_buf_append_str(&body, "],\"bed\":[");
    for (int row = 1; row <= 4; row++) {
        ncmp_buf_appendf(&body, "%s{\"row\":%d,\"col\":\"", row > 1 ? "," : "", row);
        for (int k = 0; k < (row == 4 ? 600 : 1); k++)
            ncmp_buf_append_char(&body, 'c');
        ncmp_buf_appendf(&body, "\",\"soil\":{\"ph\":%d}}", row);
    }
    ncmp_buf_append_str(&body, "]}}");
    send_json(c, "POST", AN "/nodes?xpath=/", body.data, 201, NULL);
    ncmp_buf_free(&body);

    all = get_json(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/garden&descendants=all");
    cr_expect_eq(count_nodes_to(all, 99), 9, "%.300s", json_object_to_json_string(all));
    for (int n = 0; n <= 3; n++) {
        snprintf(path, sizeof(path),
                 "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/garden&descendants=%d", n);
        o = get_json(c, path);
        cr_expect_eq(count_nodes(o), count_nodes_to(all, n), "%s", path);
        cr_expect_eq(garden_tags(o), 300, "%s", path);
        json_object_put(o);
        snprintf(path, sizeof(path), Q "/garden&descendants=%d", n);
        o = get_json(c, path);
        cr_expect_eq(count_nodes(o), count_nodes_to(all, n), "%s", path);
        cr_expect_eq(garden_tags(o), 300, "%s", path);
        json_object_put(o);
    }
    json_object_put(all);
    /* from the root, and a query's matches with their children: the
     * four beds, the long one among them, each with its soil */
    o = get_json(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=1");
    cr_expect_eq(garden_tags(o), 300);
    cr_expect_eq(count_nodes(o), 5, "%.300s", json_object_to_json_string(o));
    json_object_put(o);
    cr_expect_eq(count_at(c, Q "//bed&descendants=direct"), 8);
    cr_expect_eq(count_at(c, Q "//bed%5B@row=4%5D&descendants=1"), 2);
    cr_expect_eq(count_at(c, Q "//soil%5B@ph=4%5D/ancestor::bed&descendants=1"), 2);
    it_cps_fini(c);
}

/* CPS's own data, posted as CPS posts it (no module prefix), read back
 * whole and in parts, then changed by every kind of write. */
Test(cps_data, openroadm_devices_through_every_write, .timeout = 180)
{
    cps_case *c = openroadm_case("cps_data_rw");
    ncmp_buf body = NCMP_BUF_INIT;
    json_object *o, *dev, *v;

    post_devices(c, 0, 3, 201);
    /* 1 + 3 devices of 86 nodes each */
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=all"),
                 1 + 3 * 86);
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/openroadm-devices"
                             "&descendants=direct"),
                 1 + 3);
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/openroadm-devices"),
                 1);

    /* one device by its key (either quote), with the module's prefix on top */
    o = get_json(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=" DEV
                    "%5B@device-id=%22C201-7-1A-1%22%5D&descendants=all");
    cr_assert(json_object_object_get_ex(o, "owbiv2:openroadm-device", &dev), "%s",
              json_object_to_json_string(o));
    cr_expect_eq(count_nodes(o), 86);
    cr_assert(json_object_object_get_ex(dev, "ne-state", &v));
    cr_expect_str_eq(json_object_get_string(v), "inservice");
    json_object_put(o);

    /* PATCH: the device's own leaves only */
    send_json(c, "PATCH", AN "/nodes?xpath=/openroadm-devices",
              "{\"openroadm-device\":[{\"device-id\":\"C201-7-1A-1\",\"status\":\"fail\"}]}", 200,
              NULL);
    o = get_json(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=" DEV
                    "%5B@device-id='C201-7-1A-1'%5D&descendants=all");
    json_object_object_get_ex(o, "owbiv2:openroadm-device", &dev);
    cr_assert(json_object_object_get_ex(dev, "status", &v));
    cr_expect_str_eq(json_object_get_string(v), "fail");
    cr_expect_eq(count_nodes(o), 86, "PATCH must not touch the subtree");
    json_object_put(o);
    /* PATCH of a node that does not exist: 404, nothing changed */
    send_json(c, "PATCH", AN "/nodes?xpath=/openroadm-devices",
              "{\"openroadm-device\":[{\"device-id\":\"nobody\",\"status\":\"fail\"}]}", 404,
              "DataNode not found");

    /* PUT: the device and its subtree replaced by the payload */
    send_json(c, "PUT", AN "/nodes?xpath=/openroadm-devices",
              "{\"openroadm-device\":[{\"device-id\":\"C201-7-1A-1\",\"ne-state\":\"inservice\"}]}",
              200, NULL);
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=" DEV
                             "%5B@device-id='C201-7-1A-1'%5D&descendants=all"),
                 1);
    it_cps_expect(c, "GET",
                  "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=" DEV
                  "%5B@device-id='C201-7-1A-1'%5D/org-openroadm-device",
                  NULL, 404, "DataNode not found");
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=all"),
                 1 + 2 * 86 + 1);

    /* list-nodes: add one, then replace the list's whole content */
    ncmp_buf_append_str(&body, "{\"openroadm-device\":[");
    devices(&body, 7, 1);
    ncmp_buf_append_str(&body, "]}");
    send_json(c, "POST", AN "/list-nodes?xpath=/openroadm-devices", body.data, 201, NULL);
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=" DEV), 4);
    send_json(c, "POST", AN "/list-nodes?xpath=/openroadm-devices", "{\"openroadm-devices\":{}}",
              400, NULL);
    send_json(c, "PUT", AN "/list-nodes?xpath=/openroadm-devices", body.data, 200, NULL);
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=all"),
                 1 + 86);

    /* DELETE: a subtree, a whole list, the root */
    it_cps_expect(c, "DELETE",
                  AN "/nodes?xpath=" DEV "%5B@device-id='C201-7-1A-7'%5D/org-openroadm-device",
                  NULL, 204, NULL);
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=all"),
                 1 + 1);
    it_cps_expect(c, "DELETE", AN "/nodes?xpath=" DEV, NULL, 204, NULL);
    it_cps_expect(c, "DELETE", AN "/nodes?xpath=" DEV, NULL, 404, NULL);
    it_cps_expect(c, "DELETE", AN "/nodes?xpath=/", NULL, 204, NULL);
    o = get_json(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=all");
    cr_expect_eq(json_object_object_length(o), 0);
    json_object_put(o);
    ncmp_buf_free(&body);
    it_cps_fini(c);
}

/* Leaves come back with their YANG types (numbers, booleans, leaf-lists);
 * XML is accepted; v1, v2 and v3 answer in their own shapes. */
Test(cps_data, typed_leaves_xml_and_api_versions, .timeout = 120)
{
    cps_case *c = it_cps_start("cps_data_types", "cps");
    char path[512];
    reply r;
    json_object *o, *g, *v;

    it_cps_temp_path(path, sizeof(path), c, "garden.yang");
    it_cps_write_file(path, GARDEN);
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/schema-sets?schema-set-name=g", path, 201, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=g&anchor-name=a1", NULL, 201, NULL);
    send_json(c, "POST", AN "/nodes?xpath=/",
              "{\"garden\":{\"name\":\"it's\",\"open\":true,\"tags\":[\"b\",\"a\"],"
              "\"bed\":[{\"row\":1,\"col\":\"x/y\",\"area\":\"2.5\",\"soil\":{\"ph\":-3}}]}}",
              201, NULL);
    o = get_json(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/garden&descendants=all");
    cr_assert(json_object_object_get_ex(o, "g:garden", &g), "%s", json_object_to_json_string(o));
    cr_assert(json_object_object_get_ex(g, "open", &v));
    cr_expect(json_object_is_type(v, json_type_boolean));
    cr_assert(json_object_object_get_ex(g, "tags", &v));
    cr_expect_eq(json_object_array_length(v), 2);
    cr_assert(json_object_object_get_ex(g, "bed", &v));
    v = json_object_array_get_idx(v, 0);
    cr_assert(json_object_object_get_ex(v, "row", &g));
    cr_expect(json_object_is_type(g, json_type_int));
    cr_assert(json_object_object_get_ex(v, "area", &g));
    cr_expect(json_object_is_type(g, json_type_double));
    json_object_put(o);

    /* the entry by both keys, in the other order, with a '/' in a value */
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/garden/"
                             "bed%5B@col='x/y'%20and%20@row=1%5D/soil"),
                 1);
    /* v2: a list of {name: node}; v1: the node */
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors/a1/node?xpath=/garden", NULL, 200,
                  "[{\"g:garden\":{");
    it_cps_expect(c, "GET", "/cps/api/v1/dataspaces/ds/anchors/a1/node?xpath=/garden", NULL, 200,
                  "{\"g:garden\":{");
    it_cps_expect(c, "GET", "/cps/api/v4/dataspaces/ds/anchors/a1/node?xpath=/garden", NULL, 404,
                  NULL);

    /* XML in */
    {
        static const char xml[] = "<bed xmlns=\"urn:garden\"><row>2</row><col>z</col></bed>";
        it_cps_send(c, "POST", AN "/list-nodes?xpath=/garden", NULL, "application/xml", xml,
                    strlen(xml), &r);
        cr_expect_eq(r.status, 201, "%s", r.body.data);
        it_cps_reply_free(&r);
    }
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/garden/bed"), 2);
    /* XML as CPS takes it: without a namespace (the parent's, or at the
     * top the module's with that node), an XML declaration before it, in
     * CPS's data root; still checked against the model */
    {
        static const struct {
            const char *path, *xml;
            long status;
        } cases[] = {
            {AN "/list-nodes?xpath=/garden",
             "<?xml version='1.0' encoding='UTF-8'?>\n<bed><row>3</row><col>z</col></bed>", 201},
            {AN "/nodes?xpath=/garden/bed%5B@row=3%20and%20@col='z'%5D", "<soil><ph>7</ph></soil>",
             201},
            {AN "/list-nodes?xpath=/garden",
             "<data xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"><bed><row>4</row>"
             "<col>z</col></bed><bed><row>5</row><col>z</col></bed></data>",
             201},
            {AN "/list-nodes?xpath=/garden", "<bed><row>300</row><col>z</col></bed>", 400},
            {AN "/list-nodes?xpath=/garden", "<bed><row>6</row><col>z</col></bed>trailing", 400},
            {AN "/list-nodes?xpath=/garden", "<bed><row>6</row><col>z</col></bad>", 400},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            it_cps_send(c, "POST", cases[i].path, NULL, "application/xml", cases[i].xml,
                        strlen(cases[i].xml), &r);
            cr_expect_eq(r.status, cases[i].status, "%s: %ld %s", cases[i].xml, r.status,
                         r.body.data);
            it_cps_reply_free(&r);
        }
        cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/garden/bed"), 5);
        cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/garden/"
                                 "bed%5B@row=3%20and%20@col='z'%5D/soil"),
                     1);
        it_cps_send(c, "PUT", AN "/nodes?xpath=/garden", NULL, "application/xml",
                    "<bed><row>4</row><col>z</col></bed>", 35, &r);
        cr_expect_eq(r.status, 200, "%ld %s", r.status, r.body.data);
        it_cps_reply_free(&r);
        for (int row = 3; row <= 5; row++) {
            char del[256];
            snprintf(del, sizeof(del),
                     AN "/nodes?xpath=/garden/bed%%5B@row=%d%%20and%%20@col='z'%%5D", row);
            it_cps_call(c, "DELETE", del, NULL, &r);
            cr_expect_eq(r.status, 204, "%s: %ld %s", del, r.status, r.body.data);
            it_cps_reply_free(&r);
        }
    }
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/garden/bed"), 2);
    /* v2 with several nodes: one {name: node} each, valid JSON */
    {
        json_object *list =
            get_json(c, "/cps/api/v2/dataspaces/ds/anchors/a1/node?xpath=/garden/bed"
                        "&descendants=all");
        cr_assert(json_object_is_type(list, json_type_array));
        cr_expect_eq(json_object_array_length(list), 2);
        json_object_put(list);
    }

    /* XML out: CPS's element shapes, the top prefix declared */
    it_cps_send(c, "GET", "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/garden&descendants=all",
                NULL, "application/xml", "", 0, &r);
    cr_expect_eq(r.status, 200);
    cr_expect(strstr(r.body.data, "<g:garden xmlns:g=\"urn:garden\">") == r.body.data, "%s",
              r.body.data);
    cr_expect(strstr(r.body.data, "<tags>b</tags><tags>a</tags>"), "%s", r.body.data);
    cr_expect(strstr(r.body.data, "<name>it's</name>"), "%s", r.body.data);
    cr_expect(strstr(r.body.data, "<soil><ph>-3</ph></soil>"), "%s", r.body.data);
    cr_expect(strstr(r.body.data, "</bed><bed>"), "list entries are repeated elements: %s",
              r.body.data);
    cr_expect(strstr(r.body.data, "</g:garden>"), "%s", r.body.data);
    it_cps_reply_free(&r);

    /* dry-run: validated, not stored */
    send_json(c, "POST", AN "/list-nodes?xpath=/garden&dry-run=true",
              "{\"bed\":[{\"row\":3,\"col\":\"q\"}]}", 200, NULL);
    send_json(c, "POST", AN "/list-nodes?xpath=/garden&dry-run=true",
              "{\"bed\":[{\"row\":300,\"col\":\"q\"}]}", 400, NULL);
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/garden/bed"), 2);
    it_cps_fini(c);
}

/* Data the model refuses is a 400 with libyang's reason, and nothing of
 * the payload is stored. */
Test(cps_data, invalid_data_is_400_and_stores_nothing, .timeout = 120)
{
    cps_case *c = openroadm_case("cps_data_invalid");
    static const struct {
        const char *xpath, *body, *needle;
    } bad[] = {
        {"/",
         "{\"openroadm-devices\":{\"openroadm-device\":[{\"device-id\":\"x\","
         "\"ne-state\":\"sideways\"}]}}",
         "sideways"},
        {"/", "{\"openroadm-devices\":{\"openroadm-device\":[{\"device-id\":\"x\",\"nosuch\":1}]}}",
         "nosuch"},
        {"/", "{\"openroadm-devices\":{\"openroadm-device\":[{\"ne-state\":\"inservice\"}]}}",
         NULL},
        {"/", "{\"no-such-top\":{}}", NULL},
        {"/", "{\"openroadm-devices\":", NULL},
        {"/", "[1,2]", NULL},
        {"/openroadm-devices", "{\"openroadm-device\":[{\"device-id\":\"y\",\"status\":7}]}", NULL},
        {"/no-such-parent", "{\"x\":{}}", NULL},
    };
    char path[512];

    post_devices(c, 0, 1, 201);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(path, sizeof(path), AN "/nodes?xpath=%s", bad[i].xpath);
        send_json(c, "POST", path, bad[i].body, 400, bad[i].needle);
    }
    send_json(c, "POST", AN "/nodes?xpath=/", "", 400, NULL);
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=all"),
                 1 + 86);
    it_cps_fini(c);
}

/* What one payload answers and leaves: the status and body of its POST
 * to anchor `anchor`, then the anchor's whole tree (or its 404). */
typedef struct outcome {
    long status;
    char *answer, *tree;
} outcome;

static outcome post_and_read(cps_case *c, const char *anchor, const char *json)
{
    char path[256];
    outcome o;
    reply r;

    snprintf(path, sizeof(path), DS "/anchors/%s/nodes?xpath=/", anchor);
    it_cps_send(c, "POST", path, NULL, NULL, json, strlen(json), &r);
    o.status = r.status;
    o.answer = strdup(r.body.data ? r.body.data : "");
    it_cps_reply_free(&r);
    snprintf(path, sizeof(path),
             "/cps/api/v3/dataspaces/ds/anchors/%s/node?xpath=/&descendants=all", anchor);
    it_cps_call(c, "GET", path, NULL, &r);
    o.tree = strdup(r.body.data ? r.body.data : "");
    it_cps_reply_free(&r);
    return o;
}

static void outcome_free(outcome *o)
{
    free(o->answer);
    free(o->tree);
}

/* A payload of at least cps.split-parse-bytes that is one list is parsed
 * on two threads, half of its entries each (the log says so), and stores
 * and answers exactly what the same payload parsed on one thread does:
 * the same tree; with an entry named in both halves, the same refusal;
 * with a bad value in the second half, the same 400 naming it; nothing
 * stored of either. */
Test(cps_data, a_large_list_parsed_in_two_halves_is_one_parse, .timeout = 240)
{
    cps_case *c;
    ncmp_buf big = NCMP_BUF_INIT, dup = NCMP_BUF_INIT, bad = NCMP_BUF_INIT;
    const char *payloads[3];
    outcome one[3], two[3];
    char zip[1024], path[256];
    const char *mark;

    setenv("NCMP_LOG_LEVEL", "debug", 1); /* both runs log how they parsed */
    c = it_cps_start_with("cps_data_split", "cps", "--cps.split-parse-bytes=262144");
    snprintf(zip, sizeof(zip), "%s/tests/data/openroadm/model.zip", NCMP_SOURCE_DIR);
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/schema-sets?schema-set-name=or", zip, 201, NULL);
    for (int i = 1; i <= 3; i++) {
        snprintf(path, sizeof(path), DS "/anchors?schema-set-name=or&anchor-name=s%d", i);
        it_cps_expect(c, "POST", path, NULL, 201, NULL);
    }
    /* 30 devices, 330 KB: above the case's 256 KB */
    ncmp_buf_append_str(&big, "{\"openroadm-devices\":{\"openroadm-device\":[");
    devices(&big, 1, 30);
    ncmp_buf_append_str(&big, "]}}");
    cr_assert_gt(big.len, 262144);
    /* device 2 again at the end: in the first half and in the second */
    ncmp_buf_append_str(&dup, "{\"openroadm-devices\":{\"openroadm-device\":[");
    devices(&dup, 1, 30);
    ncmp_buf_append_char(&dup, ',');
    devices(&dup, 2, 1);
    ncmp_buf_append_str(&dup, "]}}");
    /* the last device's ne-state is not one of the model's */
    ncmp_buf_append(&bad, big.data, big.len);
    mark = strstr(bad.data + bad.len / 2, "\"ne-state\": \"inservice\"");
    cr_assert_not_null(mark, "the sample's ne-state is where the test expects it");
    memcpy(bad.data + (mark - bad.data) + strlen("\"ne-state\": \""), "sideways!", 9);
    payloads[0] = big.data;
    payloads[1] = dup.data;
    payloads[2] = bad.data;

    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "s%d", i + 1);
        two[i] = post_and_read(c, path, payloads[i]);
    }
    cr_expect_eq(two[0].status, 201, "%s", two[0].answer);
    cr_expect(it_file_contains(c->log, "30 entries parsed in two halves"),
              "the large payload was parsed in two halves (%s)", c->log);
    cr_expect(it_file_contains(c->log, "31 entries not parsed in two halves"),
              "the payload with an entry in both halves was parsed whole (%s)", c->log);
    it_cps_stop(c);
    it_cps_restart(c, "--cps.split-parse-bytes=0");
    for (int i = 0; i < 3; i++) { /* the same anchors again, empty: the answers name them */
        snprintf(path, sizeof(path), DS "/anchors/s%d", i + 1);
        it_cps_expect(c, "DELETE", path, NULL, 204, NULL);
        snprintf(path, sizeof(path), DS "/anchors?schema-set-name=or&anchor-name=s%d", i + 1);
        it_cps_expect(c, "POST", path, NULL, 201, NULL);
        snprintf(path, sizeof(path), "s%d", i + 1);
        one[i] = post_and_read(c, path, payloads[i]);
    }
    cr_expect(it_file_contains(c->log, " debug "), "the restarted ncmpd logs at debug level (%s)",
              c->log);
    cr_expect(!it_file_contains(c->log, "two halves"), "0: every payload parsed whole (%s)",
              c->log);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(two[i].status, one[i].status, "payload %d: %ld in two halves, %ld whole", i,
                     two[i].status, one[i].status);
        cr_expect_str_eq(two[i].answer, one[i].answer, "payload %d answered alike: %s / %s", i,
                         two[i].answer, one[i].answer);
        cr_expect_str_eq(two[i].tree, one[i].tree, "payload %d left the same tree", i);
        outcome_free(&one[i]);
        outcome_free(&two[i]);
    }
    ncmp_buf_free(&big);
    ncmp_buf_free(&dup);
    ncmp_buf_free(&bad);
    it_cps_fini(c);
}

/* Names that do not exist are CPS's 404s; a node that exists is a 409,
 * and a payload with one is refused whole. */
Test(cps_data, unknown_names_404_and_duplicates_409, .timeout = 120)
{
    cps_case *c = openroadm_case("cps_data_404");
    ncmp_buf body = NCMP_BUF_INIT;

    it_cps_expect(c, "GET", "/cps/api/v3/dataspaces/nods/anchors/a1/node?xpath=/", NULL, 404,
                  "Dataspace not found");
    it_cps_expect(c, "GET", "/cps/api/v3/dataspaces/ds/anchors/noan/node?xpath=/", NULL, 404,
                  "Anchor not found");
    it_cps_expect(c, "GET", "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/openroadm-devices",
                  NULL, 404, "DataNode not found");
    it_cps_expect(c, "DELETE", AN "/nodes?xpath=/openroadm-devices", NULL, 404, NULL);
    send_json(c, "POST", AN "/list-nodes?xpath=/openroadm-devices",
              "{\"openroadm-device\":[{\"device-id\":\"x\"}]}", 404, "DataNode not found");
    send_json(c, "POST", "/cps/api/v2/dataspaces/ds/anchors/noan/nodes?xpath=/", "{}", 404,
              "Anchor not found");

    post_devices(c, 0, 2, 201);
    post_devices(c, 0, 1, 409);
    /* one new device and one that exists: neither is stored */
    ncmp_buf_append_str(&body, "{\"openroadm-device\":[");
    devices(&body, 5, 1);
    ncmp_buf_append_char(&body, ',');
    devices(&body, 1, 1);
    ncmp_buf_append_str(&body, "]}");
    send_json(c, "POST", AN "/list-nodes?xpath=/openroadm-devices", body.data, 409,
              "already exists");
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=all"),
                 1 + 2 * 86);
    ncmp_buf_free(&body);
    it_cps_fini(c);
}

/* Hostile xpaths and descendants options: 4xx, never 5xx, never a crash;
 * a body beyond http.max-body-bytes is 413 without being held. */
Test(cps_data, hostile_requests_are_4xx, .timeout = 180)
{
    cps_case *c = openroadm_case("cps_data_hostile");
    static const char *const xpaths[] = {
        "%5B",
        "/openroadm-devices%5B",
        "/a%5B@",
        "/a%5B@k='x",
        "//",
        "/a/",
        "/a%5B@k=%5D",
        "/a%5B@k='1'%20or%20@j='2'%5D",
        "/a%5B@k='%01'%5D",
        "/a%5B@k=\"'%22'\"%5D",
        "/1abc",
        "/a:b:c",
        "/a%5B@k='v'%5D%5B@j='w'%5D",
        "a/b",
        "/%C3%A9",
    };
    ncmp_buf big = NCMP_BUF_INIT;
    char path[1024];
    reply r;

    post_devices(c, 0, 1, 201);
    for (size_t i = 0; i < sizeof(xpaths) / sizeof(xpaths[0]); i++) {
        static const char *const methods[] = {"GET", "DELETE", "POST", "PUT", "PATCH"};
        for (size_t m = 0; m < 5; m++) {
            snprintf(path, sizeof(path), "%s?xpath=%s",
                     m == 0 ? "/cps/api/v3/dataspaces/ds/anchors/a1/node" : AN "/nodes", xpaths[i]);
            it_cps_send(c, methods[m], path, NULL, NULL, m >= 2 ? "{\"x\":{}}" : NULL,
                        m >= 2 ? 8 : 0, &r);
            cr_expect(r.status >= 400 && r.status < 500, "%s %s: %ld %s", methods[m], path,
                      r.status, r.body.data);
            it_cps_reply_free(&r);
        }
    }
    /* a very long xpath, a bad descendants value */
    ncmp_buf_append_str(&big, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=");
    for (int i = 0; i < 3000; i++)
        ncmp_buf_append_str(&big, "/abc");
    it_cps_call(c, "GET", big.data, NULL, &r);
    cr_expect(r.status >= 400 && r.status < 500, "long xpath: %ld", r.status);
    it_cps_reply_free(&r);
    it_cps_expect(c, "GET", "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=some",
                  NULL, 400, NULL);
    it_cps_expect(c, "GET", "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=-2",
                  NULL, 400, NULL);
    /* 50 MB */
    ncmp_buf_reset(&big);
    ncmp_buf_reserve(&big, 50u << 20);
    memset(big.data, ' ', 50u << 20);
    big.len = 50u << 20;
    it_cps_send(c, "POST", AN "/nodes?xpath=/", NULL, NULL, big.data, big.len, &r);
    cr_expect_eq(r.status, 413, "50 MB body: %ld", r.status);
    it_cps_reply_free(&r);
    ncmp_buf_free(&big);
    /* still serving, data intact */
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=all"),
                 1 + 86);
    it_cps_fini(c);
}

typedef struct writer_arg {
    cps_case *c;
    int id;
    int failures;
} writer_arg;

/* Each writer adds its own devices, replaces a device every writer
 * replaces, and patches it, 10 times. */
static void *writer(void *p)
{
    writer_arg *a = p;
    char body[256];
    reply r;

    for (int i = 0; i < 10; i++) {
        ncmp_buf dev = NCMP_BUF_INIT;
        ncmp_buf_append_str(&dev, "{\"openroadm-device\":[");
        devices(&dev, 1000 + a->id * 100 + i, 1);
        ncmp_buf_append_str(&dev, "]}");
        it_cps_send(a->c, "POST", AN "/list-nodes?xpath=/openroadm-devices", NULL, NULL, dev.data,
                    dev.len, &r);
        a->failures += r.status != 201;
        it_cps_reply_free(&r);
        ncmp_buf_free(&dev);
        snprintf(body, sizeof(body),
                 "{\"openroadm-device\":[{\"device-id\":\"shared\",\"ne-state\":\"%s\"}]}",
                 i % 2 ? "inservice" : "jeopardy");
        it_cps_send(a->c, "PUT", AN "/nodes?xpath=/openroadm-devices", NULL, NULL, body,
                    strlen(body), &r);
        a->failures += r.status != 200;
        it_cps_reply_free(&r);
        snprintf(body, sizeof(body),
                 "{\"openroadm-device\":[{\"device-id\":\"shared\",\"status\":\"success\"}]}");
        it_cps_send(a->c, "PATCH", AN "/nodes?xpath=/openroadm-devices", NULL, NULL, body,
                    strlen(body), &r);
        a->failures += r.status != 200;
        it_cps_reply_free(&r);
    }
    return NULL;
}

/* Concurrent writers to one anchor: every write answered 2xx, nothing
 * lost, no node twice. */
Test(cps_data, concurrent_writers_lose_nothing, .timeout = 240)
{
    cps_case *c = openroadm_case("cps_data_concurrent");
    pthread_t t[6];
    writer_arg a[6];

    post_devices(c, 0, 1, 201);
    for (int i = 0; i < 6; i++) {
        a[i] = (writer_arg){c, i, 0};
        cr_assert_eq(pthread_create(&t[i], NULL, writer, &a[i]), 0);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(t[i], NULL);
        cr_expect_eq(a[i].failures, 0, "writer %d: %d failed requests; log %s", i, a[i].failures,
                     c->log);
    }
    /* 1 + 60 new devices + "shared" (one node) */
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/openroadm-devices"
                             "/openroadm-device"),
                 62);
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/&descendants=all"),
                 1 + 61 * 86 + 1);
    it_cps_fini(c);
}

/* CPS's bookstore model and data as CPS's own tests post them: a string
 * key written as a JSON number, 64-bit and decimal leaves in either
 * encoding; the answer carries the module's prefix as CPS's does. */
Test(cps_data, bookstore_documents_as_cps_writes_them, .timeout = 120)
{
    cps_case *c = it_cps_start("cps_data_bookstore", "cps");
    char zip[1024];
    size_t len;
    char *data = read_source_file("tests/data/bookstore/bookstoreData.json", &len);
    json_object *o, *b, *v;
    reply r;

    snprintf(zip, sizeof(zip), "%s/tests/data/bookstore/bookstore.zip", NCMP_SOURCE_DIR);
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/schema-sets?schema-set-name=bs", zip, 201, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=bs&anchor-name=a1", NULL, 201, NULL);
    it_cps_send(c, "POST", AN "/nodes?xpath=/", NULL, NULL, data, len, &r);
    cr_expect_eq(r.status, 201, "%s", r.body.data);
    it_cps_reply_free(&r);
    free(data);
    o = get_json(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/bookstore/"
                    "categories%5B@code='1'%5D/books%5B@title='Matilda'%5D");
    cr_assert(json_object_object_get_ex(o, "book-store:books", &b), "%s",
              json_object_to_json_string(o));
    cr_assert(json_object_object_get_ex(b, "editions", &v));
    cr_expect_eq(json_object_array_length(v), 2);
    json_object_put(o);
    /* under a parent, with the key as a number */
    send_json(c, "POST", AN "/list-nodes?xpath=/bookstore",
              "{\"categories\":[{\"code\":42,\"name\":\"Poetry\"}]}", 201, NULL);
    cr_expect_eq(count_at(c, "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/bookstore/"
                             "categories%5B@code='42'%5D"),
                 1);
    /* a value no encoding makes valid is still refused */
    send_json(c, "POST", AN "/list-nodes?xpath=/bookstore",
              "{\"categories\":[{\"code\":43,\"books\":[{\"title\":\"t\",\"price\":\"cheap\"}]}]}",
              400, "cheap");
    it_cps_fini(c);
}

/* A dataspace with the bookstore in anchors a1, a2, a3. */
static cps_case *bookstore_case(const char *name)
{
    cps_case *c = it_cps_start(name, "cps");
    char zip[1024];
    size_t len;
    char *data = read_source_file("tests/data/bookstore/bookstoreData.json", &len);
    reply r;

    snprintf(zip, sizeof(zip), "%s/tests/data/bookstore/bookstore.zip", NCMP_SOURCE_DIR);
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/schema-sets?schema-set-name=bs", zip, 201, NULL);
    for (int i = 1; i <= 3; i++) {
        char path[256];
        snprintf(path, sizeof(path), DS "/anchors?schema-set-name=bs&anchor-name=a%d", i);
        it_cps_expect(c, "POST", path, NULL, 201, NULL);
        snprintf(path, sizeof(path), DS "/anchors/a%d/nodes?xpath=/", i);
        it_cps_send(c, "POST", path, NULL, NULL, data, len, &r);
        cr_assert_eq(r.status, 201, "%s", r.body.data);
        it_cps_reply_free(&r);
    }
    free(data);
    return c;
}

/* The length of the JSON array a query answers (expects 200). */
static int query_count(cps_case *c, const char *path)
{
    json_object *o = get_json(c, path);
    int n;

    cr_assert(json_object_is_type(o, json_type_array), "%s: %s", path,
              json_object_to_json_string(o));
    n = (int)json_object_array_length(o);
    json_object_put(o);
    return n;
}

/* CPS-path queries over one anchor: nodes with their descendants, leaf
 * values, ancestors; bad paths are 400, no match an empty list. */
Test(cps_data, queries_over_one_anchor, .timeout = 120)
{
    cps_case *c = bookstore_case("cps_data_query");
    json_object *o, *cat, *v;
    reply r;

    /* one category with its books */
    o = get_json(c, Q "//categories%5B@code='1'%5D&descendants=all");
    cr_assert_eq(json_object_array_length(o), 1, "%s", json_object_to_json_string(o));
    cr_assert(
        json_object_object_get_ex(json_object_array_get_idx(o, 0), "book-store:categories", &cat));
    cr_assert(json_object_object_get_ex(cat, "books", &v));
    cr_expect_eq(json_object_array_length(v), 2);
    json_object_put(o);
    /* without descendants: the category's leaves only */
    o = get_json(c, Q "//categories%5B@code='1'%5D");
    json_object_object_get_ex(json_object_array_get_idx(o, 0), "book-store:categories", &cat);
    cr_expect(!json_object_object_get_ex(cat, "books", &v));
    json_object_put(o);
    /* without descendants, each match with its own leaves, in the order
     * of the answer with descendants */
    {
        json_object *none = get_json(c, Q "//books"),
                    *all = get_json(c, Q "//books&descendants=all");
        size_t n = json_object_array_length(none);

        cr_assert_gt(n, 1);
        cr_assert_eq(n, json_object_array_length(all));
        for (size_t i = 0; i < n; i++) {
            json_object *a, *b, *ta, *tb;
            cr_assert(json_object_object_get_ex(json_object_array_get_idx(none, i),
                                                "book-store:books", &a));
            cr_assert(json_object_object_get_ex(json_object_array_get_idx(all, i),
                                                "book-store:books", &b));
            cr_assert(json_object_object_get_ex(a, "title", &ta), "book %zu without its title", i);
            cr_assert(json_object_object_get_ex(b, "title", &tb));
            cr_expect_str_eq(json_object_get_string(ta), json_object_get_string(tb));
        }
        json_object_put(none);
        json_object_put(all);
    }
    /* leaf conditions, and/or, contains */
    cr_expect_eq(query_count(c, Q "//books%5B@price>15%5D"), 3);
    cr_expect_eq(query_count(c, Q "//books%5B@lang='English'%20and%20@price=15%5D"), 2);
    cr_expect_eq(query_count(c, Q "//books%5Bcontains(@title,'Gruffalo')%5D"), 1);
    cr_expect_eq(query_count(c, Q "//books%5B@title='nothing'%5D"), 0);
    /* ancestor */
    o = get_json(c, Q "//books%5B@title='Matilda'%5D/ancestor::categories");
    cr_assert_eq(json_object_array_length(o), 1);
    json_object_object_get_ex(json_object_array_get_idx(o, 0), "book-store:categories", &cat);
    cr_assert(json_object_object_get_ex(cat, "code", &v));
    cr_expect_str_eq(json_object_get_string(v), "1");
    json_object_put(o);
    /* a leaf's distinct values */
    o = get_json(c, Q "//categories/@name");
    cr_expect_eq(json_object_array_length(o), 5, "%s", json_object_to_json_string(o));
    cr_expect(json_object_object_get_ex(json_object_array_get_idx(o, 0), "name", &v));
    json_object_put(o);
    /* v1's include-descendants */
    o = get_json(c, "/cps/api/v1/dataspaces/ds/anchors/a1/nodes/query?cps-path="
                    "//categories%5B@code='1'%5D&include-descendants=true");
    cr_expect_eq(count_nodes(json_object_array_get_idx(o, 0)), 3);
    json_object_put(o);
    /* XML */
    it_cps_send(c, "GET", Q "//categories%5B@code='2'%5D", NULL, "application/xml", "", 0, &r);
    cr_expect_eq(r.status, 200);
    cr_expect(strstr(r.body.data, "<book-store:categories xmlns:book-store="), "%s", r.body.data);
    it_cps_reply_free(&r);
    /* errors */
    it_cps_expect(c, "GET", Q "//books%5B", NULL, 400, "Invalid CPS path at position");
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors/a1/nodes/query", NULL, 400,
                  "cps-path");
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors/zz/nodes/query?cps-path=//x", NULL,
                  404, "Anchor not found");
    it_cps_fini(c);
}

/* Across anchors: CPS's [{anchorName, dataNodes}], anchors in name order,
 * pages of anchors with the total-pages header. */
Test(cps_data, queries_across_anchors_with_pages, .timeout = 120)
{
    cps_case *c = bookstore_case("cps_data_query_ds");
    json_object *o, *e, *v;
    reply r;

    o = get_json(c, "/cps/api/v2/dataspaces/ds/nodes/query?cps-path=//categories%5B@code='1'%5D");
    cr_assert_eq(json_object_array_length(o), 3, "%s", json_object_to_json_string(o));
    e = json_object_array_get_idx(o, 2);
    cr_assert(json_object_object_get_ex(e, "anchorName", &v));
    cr_expect_str_eq(json_object_get_string(v), "a3");
    cr_assert(json_object_object_get_ex(e, "dataNodes", &v));
    cr_expect_eq(json_object_array_length(v), 1);
    json_object_put(o);

    it_cps_call(c, "GET",
                "/cps/api/v2/dataspaces/ds/nodes/query?cps-path=//books&pageIndex=2&pageSize=2",
                NULL, &r);
    cr_assert_eq(r.status, 200, "%s", r.body.data);
    cr_expect(strstr(r.headers.data, "total-pages: 2\r\n"), "%s", r.headers.data);
    o = json_tokener_parse(r.body.data);
    cr_assert_eq(json_object_array_length(o), 1, "the second page holds the third anchor: %s",
                 r.body.data);
    json_object_object_get_ex(json_object_array_get_idx(o, 0), "anchorName", &v);
    cr_expect_str_eq(json_object_get_string(v), "a3");
    json_object_put(o);
    it_cps_reply_free(&r);

    it_cps_expect(c, "GET",
                  "/cps/api/v2/dataspaces/ds/nodes/query?cps-path=//books&pageIndex=0&pageSize=2",
                  NULL, 400, NULL);
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/nodes/query?cps-path=//books&pageIndex=1",
                  NULL, 400, NULL);
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/nods/nodes/query?cps-path=//books", NULL, 404,
                  "Dataspace not found");
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/nodes/query?cps-path=//nothing", NULL, 200,
                  "[]");
    it_cps_fini(c);
}

static int composite_count(cps_case *c, const char *body, long status)
{
    reply r;
    json_object *o;
    int n = -1;

    it_cps_send(c, "POST", "/cps/api/v2/dataspaces/ds/anchors/a1/nodes/query", NULL, NULL, body,
                strlen(body), &r);
    cr_expect_eq(r.status, status, "%s: %s", body, r.body.data);
    if (r.status == 200) {
        o = json_tokener_parse(r.body.data);
        n = (int)json_object_array_length(o);
        json_object_put(o);
    }
    it_cps_reply_free(&r);
    return n;
}

/* The composite query: the nodes of a tree of CPS paths joined by and
 * (all of them) or or (any of them). */
Test(cps_data, composite_queries_combine_paths, .timeout = 120)
{
    cps_case *c = bookstore_case("cps_data_composite");

    cr_expect_eq(composite_count(c, "{\"cpsPath\":\"//books[@price>15]\"}", 200), 3);
    cr_expect_eq(composite_count(c,
                                 "{\"cpsPath\":\"//books[@price>15]\",\"operator\":\"and\","
                                 "\"conditions\":[{\"cpsPath\":\"//books[@lang='English']\"}]}",
                                 200),
                 1);
    cr_expect_eq(composite_count(c,
                                 "{\"operator\":\"or\",\"conditions\":["
                                 "{\"cpsPath\":\"//books[@price=15]\"},"
                                 "{\"cpsPath\":\"//books[@price=20]\"}]}",
                                 200),
                 4);
    composite_count(c, "{\"operator\":\"xor\",\"cpsPath\":\"//books\"}", 400);
    composite_count(c, "{}", 400);
    composite_count(c, "{\"cpsPath\":\"//books/@title\"}", 400);
    composite_count(c, "not json", 400);
    it_cps_fini(c);
}

/* Reads remember an anchor by name and check it in their own round trip:
 * an anchor deleted is 404 at once, and one made again under the same
 * name (a new anchor, on the same schema set or another) is read as the
 * new anchor, by the node read, the query and the composite query. */
/* Writes go by the anchor remembered too, their lock of its row the
 * check: one made again under the same name, with nothing between to
 * tell this process, is the one written. */
Test(cps_data, a_write_after_its_anchor_is_made_again_writes_the_new_one, .timeout = 120)
{
    cps_case *c = bookstore_case("cps_data_write_again");
    const char *node = "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/bookstore";
    const char *cat2 = AN "/nodes?xpath=/bookstore/categories%5B@code='2'%5D";
    const char *cat3 = AN "/nodes?xpath=/bookstore/categories%5B@code='3'%5D";
    const char *name = "{\"bookstore\":{\"bookstore-name\":\"Chapters\"}}";
    const char *data =
        "{\"bookstore\":{\"bookstore-name\":\"Odeon\",\"categories\":"
        "[{\"code\":\"2\",\"name\":\"Poetry\"},{\"code\":\"3\",\"name\":\"Odes\"}]}}";

    /* remembered by the setup's write; written twice through it */
    send_json(c, "PATCH", AN "/nodes?xpath=/", name, 200, NULL);
    it_cps_expect(c, "GET", node, NULL, 200, "Chapters");
    it_cps_expect(c, "DELETE", cat2, NULL, 204, NULL);
    it_cps_expect(c, "DELETE", cat2, NULL, 404, "DataNode with xpath");

    /* gone and made again, no request of it between */
    it_cps_expect(c, "DELETE", AN, NULL, 204, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=bs&anchor-name=a1", NULL, 201, NULL);
    send_json(c, "POST", AN "/nodes?xpath=/", data, 201, NULL);
    it_cps_expect(c, "GET", node, NULL, 200, "Odeon");
    cr_expect_eq(query_count(c, Q "//categories"), 2);
    it_cps_expect(c, "DELETE", AN, NULL, 204, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=bs&anchor-name=a1", NULL, 201, NULL);
    send_json(c, "POST", AN "/nodes?xpath=/", data, 201, NULL);
    it_cps_expect(c, "DELETE", cat3, NULL, 204, NULL);
    cr_expect_eq(query_count(c, Q "//categories"), 1);
    /* a delete in the new, empty anchor: its node is not found (not the
     * anchor) */
    it_cps_expect(c, "DELETE", AN, NULL, 204, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=bs&anchor-name=a1", NULL, 201, NULL);
    it_cps_expect(c, "DELETE", cat2, NULL, 404, "DataNode with xpath");
    it_cps_expect(c, "DELETE", AN, NULL, 204, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=bs&anchor-name=a1", NULL, 201, NULL);
    send_json(c, "POST", AN "/nodes?xpath=/", data, 201, NULL);
    send_json(c, "PATCH", AN "/nodes?xpath=/", name, 200, NULL);
    it_cps_expect(c, "GET", node, NULL, 200, "Chapters");
    cr_expect_eq(query_count(c, Q "//categories"), 2);

    /* gone for good: each write is CPS's 404, dry run or not */
    it_cps_expect(c, "DELETE", AN, NULL, 204, NULL);
    send_json(c, "PATCH", AN "/nodes?xpath=/", name, 404, "Anchor with name a1 does not exist");
    send_json(c, "PATCH", AN "/nodes?xpath=/&dry-run=true", name, 404,
              "Anchor with name a1 does not exist");
    it_cps_expect(c, "DELETE", cat3, NULL, 404, "Anchor with name a1 does not exist");
    it_cps_fini(c);
}

Test(cps_data, a_read_after_its_anchor_is_made_again_reads_the_new_one, .timeout = 120)
{
    cps_case *c = bookstore_case("cps_data_anchor_again");
    const char *node = "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/bookstore";
    const char *cat1 = Q "//categories[@code='1']";
    const char *composite = "{\"cpsPath\":\"//categories[@code='1']\"}";
    char zip[1024];
    ncmp_buf body = NCMP_BUF_INIT;

    /* twice each: the second read goes by the anchor remembered */
    for (int i = 0; i < 2; i++) {
        it_cps_expect(c, "GET", node, NULL, 200, "Easons");
        cr_expect_eq(query_count(c, cat1), 1);
        cr_expect_eq(composite_count(c, composite, 200), 1);
    }
    it_cps_expect(c, "DELETE", AN, NULL, 204, NULL);
    it_cps_expect(c, "GET", node, NULL, 404, "Anchor with name a1 does not exist");
    it_cps_expect(c, "GET", cat1, NULL, 404, "Anchor with name a1 does not exist");
    composite_count(c, composite, 404);

    /* the same name, the same schema set, other data */
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=bs&anchor-name=a1", NULL, 201, NULL);
    send_json(c, "POST", AN "/nodes?xpath=/",
              "{\"bookstore\":{\"bookstore-name\":\"Chapters\",\"categories\":"
              "[{\"code\":\"1\",\"name\":\"Poetry\"},{\"code\":\"2\",\"name\":\"Odes\"}]}}",
              201, NULL);
    for (int i = 0; i < 2; i++) {
        it_cps_expect(c, "GET", node, NULL, 200, "Chapters");
        cr_expect_eq(query_count(c, Q "//categories"), 2);
        cr_expect_eq(composite_count(c, "{\"cpsPath\":\"//categories[@name='Odes']\"}", 200), 1);
    }

    /* the same name on another schema set: its data, named by its modules */
    it_cps_expect(c, "DELETE", AN, NULL, 204, NULL);
    snprintf(zip, sizeof(zip), "%s/tests/data/openroadm/model.zip", NCMP_SOURCE_DIR);
    it_cps_expect(c, "POST", DS "/schema-sets?schema-set-name=or", zip, 201, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=or&anchor-name=a1", NULL, 201, NULL);
    ncmp_buf_append_str(&body, "{\"openroadm-devices\":{\"openroadm-device\":[");
    devices(&body, 1, 2);
    ncmp_buf_append_str(&body, "]}}");
    send_json(c, "POST", AN "/nodes?xpath=/", body.data, 201, NULL);
    it_cps_expect(c, "GET", "/cps/api/v3/dataspaces/ds/anchors/a1/node?xpath=/openroadm-devices",
                  NULL, 200, "\"owbiv2:openroadm-devices\"");
    it_cps_expect(c, "GET", node, NULL, 404, NULL);
    cr_expect_eq(query_count(c, Q DEV), 2);
    cr_expect_eq(query_count(c, cat1), 0);
    ncmp_buf_free(&body);
    it_cps_fini(c);
}
