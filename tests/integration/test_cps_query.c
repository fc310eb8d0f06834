/*
 * workers/cps/cps_query on the real PostgreSQL: fragment rows written by
 * SQL (as the CPS store lays them out, migrations/0008) for CPS's
 * bookstore (cps-path.rst's sample data plus a few nodes for the edge
 * cases) and two small Open ROADM trees, and the exact rows each path
 * selects, in the order the query promises. Hostile values must stay data,
 * and whatever the translator accepts of mutated paths must run.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cps_query.h"
#include "fuzz_cps_query.h"
#include "it_util.h"
#include "ncmp_migrate.h"

/* Anchor ids: 1 the bookstore, 2 and 3 the Open ROADM trees queried
 * together, 4 one more that no query names (it must never show). */
static const char *const store_sql[] = {
    /* from an empty store: without the CPS-Admin dataspace migration 0010 makes */
    "DELETE FROM dataspace;"
    "INSERT INTO dataspace (id, name) OVERRIDING SYSTEM VALUE VALUES (1, 'ds');"
    "INSERT INTO schema_set (id, dataspace_id, name) OVERRIDING SYSTEM VALUE"
    " VALUES (1, 1, 'set');"
    "INSERT INTO anchor (id, dataspace_id, schema_set_id, name) OVERRIDING SYSTEM VALUE"
    " VALUES (1, 1, 1, 'bookstore'), (2, 1, 1, 'roadm1'), (3, 1, 1, 'roadm2'),"
    " (4, 1, 1, 'roadm3');"
    /* rows as (anchor, path with '/' for the separator, attributes);
     * depth and name follow from the path */
    "CREATE TEMP TABLE node (anchor_id bigint, xpath text, attributes jsonb)",
    "INSERT INTO node VALUES"
    " (1, '/shops', '{}'),"
    " (1, '/shops/bookstore', '{\"bookstore-name\": \"Chapters\", \"name\": \"Chapters\"}'),"
    " (1, '/shops/bookstore/categories[@code=''1'']',"
    "  '{\"code\": 1, \"name\": \"SciFi\", \"numberOfBooks\": 2}'),"
    " (1, '/shops/bookstore/categories[@code=''1'']/books', '{}'),"
    " (1, '/shops/bookstore/categories[@code=''1'']/books/book[@title=''2001: A Space Odyssey'']',"
    "  '{\"title\": \"2001: A Space Odyssey\", \"price\": 5, \"label\": [\"sale\", \"classic\"],"
    "    \"edition\": [\"1968\", \"2018\"]}'),"
    " (1, '/shops/bookstore/categories[@code=''1'']/books/book[@title=''Dune'']',"
    "  '{\"title\": \"Dune\", \"price\": 5, \"label\": [\"classic\"], \"edition\": [\"1965\"]}'),"
    /* a books container inside a book: for the nearest ancestor */
    " (1, '/shops/bookstore/categories[@code=''1'']/books/book[@title=''Dune'']/books', '{}'),"
    " (1, '/shops/bookstore/categories[@code=''1'']/books/book[@title=''Dune'']/books/"
    "book[@title=''Dune Messiah'']',"
    "  '{\"title\": \"Dune Messiah\", \"price\": 7, \"label\": [\"sequel\"], \"edition\": "
    "[1969]}'),"
    /* '10' sorts between '1' and '2' as text */
    " (1, '/shops/bookstore/categories[@code=''10'']',"
    "  '{\"code\": 10, \"name\": \"Comics\", \"numberOfBooks\": 0}'),"
    " (1, '/shops/bookstore/categories[@code=''2'']',"
    "  '{\"code\": 2, \"name\": \"Kids\", \"numberOfBooks\": 1}'),"
    " (1, '/shops/bookstore/categories[@code=''2'']/books', '{}'),"
    /* a '/' and quotes in a key value */
    " (1, '/shops/bookstore/categories[@code=''2'']/books/book[@title=''A/B ''''Quoted'''''']',"
    "  '{\"title\": \"A/B ''Quoted''\", \"price\": 15}'),"
    " (1, '/shops/bookstore/categories[@code=''2'']/books/book[@title=''Matilda'']',"
    "  '{\"title\": \"Matilda\", \"price\": null}'),"
    /* a sibling whose name extends bookstore: outside its ranges */
    " (1, '/shops/bookstore-archive', '{\"name\": \"Old\"}'),"
    " (1, '/shops/bookstore-archive/categories[@code=''1'']',"
    "  '{\"code\": 1, \"name\": \"Archived\"}')",
    "INSERT INTO node VALUES"
    " (2, '/openroadm-devices', '{}'),"
    " (2, '/openroadm-devices/openroadm-device[@device-id=''D1'']',"
    "  '{\"device-id\": \"D1\", \"ne-state\": \"inservice\", \"status\": \"success\"}'),"
    " (2, '/openroadm-devices/openroadm-device[@device-id=''D1'']/org-openroadm-device', '{}'),"
    " (2, '/openroadm-devices/openroadm-device[@device-id=''D1'']/org-openroadm-device/"
    "degree[@degree-number=''1'']', '{\"degree-number\": 1, \"max-wavelengths\": 128}'),"
    " (2, '/openroadm-devices/openroadm-device[@device-id=''D1'']/org-openroadm-device/"
    "degree[@degree-number=''1'']/circuit-packs[@index=''1'']', '{\"index\": 1}'),"
    " (2, '/openroadm-devices/openroadm-device[@device-id=''D1'']/org-openroadm-device/"
    "degree[@degree-number=''1'']/connection-ports[@index=''1'']', '{\"index\": 1}'),"
    " (2, '/openroadm-devices/openroadm-device[@device-id=''D1'']/org-openroadm-device/"
    "degree[@degree-number=''2'']', '{\"degree-number\": 2, \"max-wavelengths\": 96}'),"
    " (2, '/openroadm-devices/openroadm-device[@device-id=''D1'']/org-openroadm-device/"
    "degree[@degree-number=''2'']/circuit-packs[@index=''1'']', '{\"index\": 1}'),"
    " (2, '/openroadm-devices/openroadm-device[@device-id=''D2'']',"
    "  '{\"device-id\": \"D2\", \"ne-state\": \"outofservice\", \"status\": \"success\"}'),"
    " (2, '/openroadm-devices/openroadm-device[@device-id=''D2'']/org-openroadm-device', '{}'),"
    " (2, '/openroadm-devices/openroadm-device[@device-id=''D2'']/org-openroadm-device/"
    "degree[@degree-number=''1'']', '{\"degree-number\": 1, \"max-wavelengths\": 128}'),"
    " (3, '/openroadm-devices', '{}'),"
    " (3, '/openroadm-devices/openroadm-device[@device-id=''D1'']',"
    "  '{\"device-id\": \"D1\", \"ne-state\": \"inservice\", \"status\": \"failed\"}'),"
    " (3, '/openroadm-devices/openroadm-device[@device-id=''D1'']/org-openroadm-device', '{}'),"
    " (3, '/openroadm-devices/openroadm-device[@device-id=''D1'']/org-openroadm-device/"
    "degree[@degree-number=''3'']', '{\"degree-number\": 3, \"max-wavelengths\": 128}'),"
    " (3, '/openroadm-devices/openroadm-device[@device-id=''D3'']',"
    "  '{\"device-id\": \"D3\", \"ne-state\": \"inservice\", \"status\": \"success\"}'),"
    " (4, '/openroadm-devices', '{}'),"
    " (4, '/openroadm-devices/openroadm-device[@device-id=''D9'']',"
    "  '{\"device-id\": \"D9\", \"ne-state\": \"inservice\", \"status\": \"success\"}')",
    /* the stored form: a separator '/' (never one inside [...]) becomes
     * U+0001; the name is the last step without its predicate */
    "INSERT INTO fragment (anchor_id, path, depth, name, attributes)"
    " SELECT anchor_id, p, length(p) - length(replace(p, E'\\x01', '')),"
    "  split_part(split_part(p, E'\\x01', -1), '[', 1), attributes"
    " FROM (SELECT anchor_id, attributes, regexp_replace(xpath, '/(?![^\\[]*\\])', E'\\x01', 'g')"
    "  AS p FROM node) n",
};

/* Bookstore shorthands: the CPS xpaths of its nodes. */
#define BS  "1:/shops/bookstore"
#define C1  BS "/categories[@code='1']"
#define C2  BS "/categories[@code='2']"
#define C10 BS "/categories[@code='10']"
#define ARC "1:/shops/bookstore-archive/categories[@code='1']"
#define B01 C1 "/books/book[@title='2001: A Space Odyssey']"
#define DUN C1 "/books/book[@title='Dune']"
#define MES DUN "/books/book[@title='Dune Messiah']"
#define QUO C2 "/books/book[@title='A/B ''Quoted''']"
#define MAT C2 "/books/book[@title='Matilda']"

/* Open ROADM shorthands. */
#define DEV(a, d)    a ":/openroadm-devices/openroadm-device[@device-id='" d "']"
#define DEG(a, d, n) DEV(a, d) "/org-openroadm-device/degree[@degree-number='" n "']"

typedef struct query {
    const char *path;
    const char *anchors; /* a bigint[] literal */
    /* rows joined by '|': "anchor:xpath" for nodes, "anchor:json" for a
     * leaf query, in the order of the SELECT */
    const char *rows;
} query;

static const query bookstore[] = {
    /* cps-path.rst: absolute paths */
    {"/shops/bookstore", "{1}", BS},
    {"/shops/bookstore/categories[@code='1']/books", "{1}", C1 "/books"},
    {"/shops/bookstore/categories[@code='1']/books/book[@title='2001: A Space Odyssey']", "{1}",
     B01},
    {"/shops/bookstore/categories[@code=1]/books", "{1}", C1 "/books"},
    /* descendant paths */
    {"//bookstore", "{1}", BS},
    {"//categories[@code='1']/books", "{1}", C1 "/books"},
    {"//bookstore/categories", "{1}", C1 "|" C10 "|" C2},
    /* leaf conditions */
    {"/shops/bookstore/categories[@numberOfBooks=1]", "{1}", C2},
    {"//categories[@name=\"Kids\"]", "{1}", C2},
    {"//categories[@name='Kids']", "{1}", C2},
    {"//categories[@code='1']/books/book[@title='Dune' and @price=5]", "{1}", DUN},
    {"//categories[@code='1']/books/book[@title='xyz' or @price=15]", "{1}", ""},
    {"//categories[@code='1']/books/book[@title='xyz' or @price>20]", "{1}", ""},
    {"//categories[@code='1']/books/book[@title='Dune' and @price<=5]", "{1}", DUN},
    {"//categories[@code=1]", "{1}", C1 "|" ARC},
    /* equalities also find the node whose key they spell (its xpath) */
    {"//categories[@code='1']", "{1}", C1 "|" ARC},
    {"/shops/bookstore/categories[@code='2']/books/book[@title='A/B ''Quoted''']", "{1}", QUO},
    /* operators and types: numbers with numbers, strings with strings */
    {"//book[@price>5]", "{1}", MES "|" QUO},
    {"//book[@price!=5]", "{1}", MES "|" QUO},
    {"//book[@title<'B']", "{1}", B01 "|" QUO},
    {"//categories[@code>=10]", "{1}", C10},
    {"//categories[@code>'10']", "{1}", ""},
    {"//categories[@name>='Kids']", "{1}", C1 "|" C2},
    {"//book[@price='5']", "{1}", ""},
    {"//book[@price=5.0]", "{1}", B01 "|" DUN},
    {"//categories[@missing!='x']", "{1}", ""},
    /* and binds tighter than or; several predicates all hold */
    {"//book[@title='Dune' or @price=15 and @title='nope']", "{1}", DUN},
    {"//book[@price=15 and @title='nope' or @title='Dune']", "{1}", DUN},
    {"//book[@price=5][@title='Dune']", "{1}", DUN},
    /* text() */
    {"//book/label[text()=\"classic\"]", "{1}", B01 "|" DUN},
    {"//book/edition[text()=\"1965\"]", "{1}", DUN},
    {"//book/edition[text()='1969']", "{1}", MES},
    {"//book/edition[text()=1969]", "{1}", MES},
    {"//book/title[text()='Matilda']", "{1}", MAT},
    {"//book/label[contains(text(),'equ')]", "{1}", MES},
    {"//book/label[text()!='classic']", "{1}", B01 "|" MES},
    /* contains() */
    {"//categories[contains(@name,'Sci')]", "{1}", C1},
    {"//books[contains(@title,'Space')]", "{1}", ""},
    {"//book[contains(@title,'Space')]", "{1}", B01},
    {"//book[contains(@title,'%')]", "{1}", ""},
    {"//categories[contains(@code,'1')]", "{1}", C1 "|" C10 "|" ARC},
    /* ancestor:: (the nearest, each once) */
    {"//book/ancestor::categories", "{1}", C1 "|" C2},
    {"//categories[@code='2']/books/ancestor::bookstore", "{1}", BS},
    {"//book/ancestor::categories[@code='1']/books", "{1}", C1 "/books"},
    {"//book/label[text()=\"classic\"]/ancestor::shops", "{1}", "1:/shops"},
    {"//book[@title='Dune Messiah']/ancestor::books", "{1}", DUN "/books"},
    {"//book/ancestor::books", "{1}", C1 "/books|" DUN "/books|" C2 "/books"},
    {"//book/ancestor::categories[@name='Kids']", "{1}", C2},
    {"//book/ancestor::categories[@numberOfBooks>1]", "{1}", C1},
    {"//shops/ancestor::shops", "{1}", ""},
    /* the attribute axis: distinct values, no nulls */
    {"//categories/@name", "{1}", "1:\"Archived\"|1:\"Comics\"|1:\"Kids\"|1:\"SciFi\""},
    {"//categories[@code='1']/books/@price", "{1}", ""},
    {"//categories[@code='1']/books/book/@price", "{1}", "1:5"},
    {"//books/ancestor::bookstore/@bookstore-name", "{1}", "1:\"Chapters\""},
    {"//book/@price", "{1}", "1:5|1:7|1:15"},
    {"//book/@label", "{1}", "1:[\"classic\"]|1:[\"sequel\"]|1:[\"sale\", \"classic\"]"},
    {"/shops/bookstore/@name", "{1}", "1:\"Chapters\""},
    /* prefixes are ignored */
    {"/book-store:shops/book-store:bookstore", "{1}", BS},
    {"//bs:categories[@bs:code=2]", "{1}", C2},
    /* quotes */
    {"//book[@title=\"A/B 'Quoted'\"]", "{1}", QUO},
    {"//book[@title='A/B ''Quoted''']", "{1}", QUO},
    /* ranges stop at the sibling whose name extends the step's */
    {"/shops/bookstore/categories", "{1}", C1 "|" C10 "|" C2},
    {"/shops/bookstore-archive/categories", "{1}", ARC},
    /* '//' in the middle */
    {"/shops//book[@price=5]", "{1}", B01 "|" DUN},
    {"//bookstore//book[@title='Dune Messiah']", "{1}", MES},
    {"//categories[@code='1']//books", "{1}", C1 "/books|" DUN "/books"},
    {"/shops/bookstore//books/book[@price>6]", "{1}", MES "|" QUO},
    /* a step before the last without keys is a container, as in CPS */
    {"//categories//book", "{1}", ""},
    {"/shops/bookstore/categories/books", "{1}", ""},
    {"//no-such-node", "{1}", ""},
    {"/books", "{1}", ""},
};

static const query roadm[] = {
    /* CPS's QueryPerfTest */
    {"/openroadm-devices", "{2,3}", "2:/openroadm-devices|3:/openroadm-devices"},
    {"//openroadm-device[@ne-state=\"inservice\"]", "{2,3}",
     DEV("2", "D1") "|" DEV("3", "D1") "|" DEV("3", "D3")},
    {"//openroadm-device/ancestor::openroadm-devices", "{2,3}",
     "2:/openroadm-devices|3:/openroadm-devices"},
    {"//openroadm-device[@status=\"success\"]/ancestor::openroadm-devices", "{2,3}",
     "2:/openroadm-devices|3:/openroadm-devices"},
    {"//openroadm-device[@status=\"failed\"]/ancestor::openroadm-devices", "{2,3}",
     "3:/openroadm-devices"},
    {"//path/to/non-existing/node[@id='1']", "{2,3}", ""},
    {"//openroadm-device/@device-id", "{2,3}", "2:\"D1\"|2:\"D2\"|3:\"D1\"|3:\"D3\""},
    {"//openroadm-device/@ne-state", "{2,3}", "2:\"inservice\"|2:\"outofservice\"|3:\"inservice\""},
    {"//openroadm-device/@non-existing", "{2,3}", ""},
    /* more of the Open ROADM tree */
    {"//openroadm-device[@ne-state=\"outofservice\"]", "{2,3}", DEV("2", "D2")},
    {"/openroadm-devices/openroadm-device[@device-id='none']", "{2,3}", ""},
    {"/openroadm-devices/openroadm-device[@device-id='D1']/org-openroadm-device/degree", "{2,3}",
     DEG("2", "D1", "1") "|" DEG("2", "D1", "2") "|" DEG("3", "D1", "3")},
    {"//degree[@degree-number=1]", "{2,3}", DEG("2", "D1", "1") "|" DEG("2", "D2", "1")},
    {"//degree[@degree-number='2']/circuit-packs", "{2,3}",
     DEG("2", "D1", "2") "/circuit-packs[@index='1']"},
    {"//circuit-packs/ancestor::openroadm-device", "{2,3}", DEV("2", "D1")},
    {"//degree[@degree-number=1]/ancestor::openroadm-device[@ne-state='inservice']/@device-id",
     "{2,3}", "2:\"D1\""},
    {"//openroadm-device[@device-id='D1']//circuit-packs", "{2,3}",
     DEG("2", "D1", "1") "/circuit-packs[@index='1']|" DEG("2", "D1",
                                                           "2") "/circuit-packs[@index='1']"},
    {"//org-openroadm-device/degree/@max-wavelengths", "{2,3}", "2:96|2:128|3:128"},
    /* a list without its key before the last step: none, as in CPS */
    {"//openroadm-device/org-openroadm-device/degree/@max-wavelengths", "{2,3}", ""},
    /* only the anchors asked for */
    {"//openroadm-device", "{4}", DEV("4", "D9")},
    {"//openroadm-device[@device-id='D9']", "{2,3}", ""},
    {"//openroadm-device", "{}", ""},
};

/* The scratch database of the running test. */
static char scratch_name[96];
static ncmp_db *scratch_db;

static void scratch_drop(void)
{
    ncmp_db_close(scratch_db);
    scratch_db = NULL;
    if (scratch_name[0])
        it_scratch_db_drop(scratch_name);
    scratch_name[0] = '\0';
}

TestSuite(cps_query_sql, .fini = scratch_drop);

/* A scratch database with the schema and the trees above. */
static ncmp_db *store_open(void)
{
    char url[512];
    ncmp_err err;

    it_scratch_db_create("it_cpsq", scratch_name, sizeof(scratch_name), url, sizeof(url));
    cr_assert_eq(ncmp_db_open(&scratch_db, url, NULL, 10, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_migrate_run(scratch_db, ncmp_migrations, NULL, &err), 0, "%s", err.msg);
    for (size_t i = 0; i < sizeof(store_sql) / sizeof(store_sql[0]); i++)
        cr_assert_eq(ncmp_db_exec(scratch_db, store_sql[i], &err), 0, "%s", err.msg);
    return scratch_db;
}

/* Run the translation of `path` (parameters: the caller's own $1 when
 * `own`, then the anchors, then the path's), and write its rows to *rows.
 * Returns the kind. */
static cps_query_kind run_query(ncmp_db *db, const char *path, const char *anchors, int own,
                                ncmp_buf *rows)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};
    PGresult *res = NULL;
    cps_query_kind kind;
    char *leaf = NULL;
    int anchors_param = own ? 2 : 1;

    if (own) {
        /* a caller's parameter before ours, used in a condition of its own */
        ncmp_buf_append_str(&sql, "SELECT * FROM (");
        params.values = malloc(2 * sizeof(char *));
        params.values[0] = strdup("no-such-anchor");
        params.values[1] = strdup(anchors);
        params.n = 2;
    } else {
        params.values = malloc(sizeof(char *));
        params.values[0] = strdup(anchors);
        params.n = 1;
    }
    if (cps_query_to_sql(path, anchors_param, anchors_param + 1, &sql, &params, &kind, &leaf,
                         &err) != 0)
        cr_assert_fail("%s: %s", path, err.msg);
    if (own)
        ncmp_buf_append_str(&sql, ") q WHERE $1::text <> 'x'");
    if (ncmp_db_query(db, sql.data, (int)params.n, (const char *const *)params.values, &res,
                      &err) != 0)
        cr_assert_fail("%s\n  %s\n  %s", path, sql.data, err.msg);
    ncmp_buf_reset(rows);
    ncmp_buf_append_str(rows, "");
    for (int i = 0; i < PQntuples(res); i++) {
        ncmp_buf_appendf(rows, "%s%s:", i ? "|" : "", PQgetvalue(res, i, 0));
        /* a node's path with '/' for the separator: its CPS xpath */
        for (const char *c = PQgetvalue(res, i, 1); *c; c++)
            ncmp_buf_append_char(rows, *c == '\x01' ? '/' : *c);
        if (kind == CPS_QUERY_NODES) {
            const char *path_value = PQgetvalue(res, i, 1);
            long steps = 0;
            for (const char *c = path_value; *c; c++)
                steps += *c == '\x01';
            cr_expect_eq(atol(PQgetvalue(res, i, 2)), steps, "%s: depth of %s", path, rows->data);
        }
    }
    cr_expect_eq(kind == CPS_QUERY_LEAF, leaf != NULL, "%s", path);
    PQclear(res);
    free(leaf);
    ncmp_cpspath_params_free(&params);
    ncmp_buf_free(&sql);
    return kind;
}

static void check_queries(const query *queries, size_t n)
{
    ncmp_db *db = store_open();
    ncmp_buf rows = NCMP_BUF_INIT;

    for (size_t i = 0; i < n; i++)
        for (int own = 0; own <= 1; own++) {
            run_query(db, queries[i].path, queries[i].anchors, own, &rows);
            cr_expect_str_eq(rows.data, queries[i].rows, "%s on %s%s: got %s", queries[i].path,
                             queries[i].anchors, own ? " (after a parameter of the caller)" : "",
                             rows.data);
        }
    ncmp_buf_free(&rows);
}

Test(cps_query_sql, selects_the_bookstore_nodes_of_every_construct, .timeout = 120)
{
    check_queries(bookstore, sizeof(bookstore) / sizeof(bookstore[0]));
}

Test(cps_query_sql, selects_the_open_roadm_nodes_across_anchors, .timeout = 120)
{
    check_queries(roadm, sizeof(roadm) / sizeof(roadm[0]));
}

Test(cps_query_sql, says_which_leaf_a_leaf_query_returns, .timeout = 60)
{
    ncmp_db *db = store_open();
    ncmp_buf rows = NCMP_BUF_INIT;

    cr_expect_eq(run_query(db, "//openroadm-device/@device-id", "{2}", 0, &rows), CPS_QUERY_LEAF);
    cr_expect_eq(run_query(db, "//openroadm-device", "{2}", 0, &rows), CPS_QUERY_NODES);
    ncmp_buf_free(&rows);
}

Test(cps_query_sql, hostile_values_stay_data, .timeout = 60)
{
    static const query hostile[] = {
        {"//book[@title='''); DROP TABLE fragment; --']", "{1}", ""},
        {"//book[@title='x'' OR ''1''=''1']", "{1}", ""},
        {"//book[@title='\\'' or @price=5 --']", "{1}", ""},
        {"//book[@title='\"}' or @title='{\"a\":\"b\"}']", "{1}", ""},
        {"//book[contains(@title,'_')]", "{1}", ""},
        {"//book[contains(@title,'''')]", "{1}", QUO},
        {"/shops/bookstore/categories[@code='1'']/x']/books", "{1}", ""},
        {"//categories[@code='$1']/books/book", "{1}", ""},
        {"//book[@price<'$$; DROP TABLE fragment; $$']/ancestor::shops", "{1}", ""},
        {"//categories[@code='\x01']/books", "{1}", ""},
        {"/shops/bookstore/categories[@code='1\x01books']/books", "{1}", ""},
        {"//book/label[text()=''');--']", "{1}", ""},
        {"//book[@title=\"Dune\"]/ancestor::categories[@code='1'')--']/books", "{1}", ""},
    };
    ncmp_db *db = store_open();
    ncmp_buf rows = NCMP_BUF_INIT;
    long before = it_query_long(db, "SELECT count(*) FROM fragment", 0, NULL);

    for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
        run_query(db, hostile[i].path, hostile[i].anchors, 0, &rows);
        cr_expect_str_eq(rows.data, hostile[i].rows, "%s selected %s", hostile[i].path, rows.data);
    }
    cr_expect_eq(it_query_long(db, "SELECT count(*) FROM fragment", 0, NULL), before);
    cr_expect_gt(before, 0);
    ncmp_buf_free(&rows);
}

/* Mutated paths: whatever the translator accepts, PostgreSQL runs. */
Test(cps_query_sql, accepted_fuzz_outputs_run_on_postgresql, .timeout = 180)
{
    enum { RUNS = 3000 };
    static uint8_t buf[4200];
    ncmp_db *db = store_open();
    const char *anchors = "{1,2,3}";
    fuzz_corpus corpus;
    fuzz_rng rng;
    size_t accepted = 0;

    cr_assert_eq(fuzz_corpus_load(NCMP_SOURCE_DIR "/tests/fuzz/corpus/cps_query", &corpus), 0);
    cr_assert_gt(corpus.n, 0);
    fuzz_rng_seed(&rng, 20261203);
    for (int r = 0; r < RUNS; r++) {
        size_t len = fuzz_mutate(&rng, &corpus, &fuzz_cpspath_dict, buf, sizeof(buf));
        ncmp_buf sql = NCMP_BUF_INIT;
        ncmp_cpspath_params params = {0};
        ncmp_err err = {0};
        PGresult *res = NULL;
        cps_query_kind kind;

        params.values = malloc(sizeof(char *));
        params.values[0] = strdup(anchors);
        params.n = 1;
        if (fuzz_cps_query_check(buf, len, 1, 2, &sql, &params, &kind)) {
            accepted++;
            if (ncmp_db_query(db, sql.data, (int)params.n, (const char *const *)params.values, &res,
                              &err) != 0)
                cr_assert_fail("path '%.*s'\n  %s\n  %s", (int)len, (const char *)buf, sql.data,
                               err.msg);
            PQclear(res);
        }
        ncmp_cpspath_params_free(&params);
        ncmp_buf_free(&sql);
    }
    fuzz_corpus_free(&corpus);
    cr_expect_gt(accepted, RUNS / 20, "only %zu of %d mutations were accepted", accepted, RUNS);
}
