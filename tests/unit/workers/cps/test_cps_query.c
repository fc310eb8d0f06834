/*
 * cps_query: CPS paths over any model turned into one SELECT on the
 * fragment table. Here: the SQL and parameters each kind of path becomes,
 * the kind of query, how parameters are numbered, what is refused and
 * where, and that values and names only ever become parameters. The rows
 * each path selects are checked on PostgreSQL in
 * tests/integration/test_cps_query.c.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cps_query.h"
#include "../../unit_leak.h"

TestSuite(cps_query, .fini = unit_leak_check);

#define MAX_PARAMS 8

typedef struct translation {
    const char *path;
    const char *sql;
    const char *params[MAX_PARAMS]; /* NULL-terminated; \x01 is the separator */
} translation;

#define NODES   "SELECT f.anchor_id, f.path, f.depth FROM fragment f WHERE "
#define ORDER   " ORDER BY f.anchor_id, f.path"
#define TARGET  "f.anchor_id = ANY($1::bigint[]) AND f.name = $2"
#define SEG(n)  "split_part(f.path, E'\\x01', " n ")"
#define TYPE(v) "CASE WHEN jsonb_typeof(f.attributes -> " v "::text) = "

static const translation translations[] = {
    /* absolute: the parent's subtree, the depth, the name */
    {"/shops", NODES TARGET " AND f.depth + 0 = 1" ORDER, {"shops"}},
    {"/shops/bookstore/categories[@code='1']/books",
     NODES TARGET " AND f.depth + 0 = 4 AND f.path >= $3 AND f.path < $4" ORDER,
     {"books",
      "\x01shops\x01"
      "bookstore\x01"
      "categories[@code='1']\x01",
      "\x01shops\x01"
      "bookstore\x01"
      "categories[@code='1']\x02"}},
    /* keys sorted by their text, numbers as written, quotes doubled */
    {"/a/b[@y='it''s' and @x=1]/c",
     NODES TARGET " AND f.depth + 0 = 3 AND f.path >= $3 AND f.path < $4" ORDER,
     {"c",
      "\x01"
      "a\x01"
      "b[@x='1' and @y='it''s']\x01",
      "\x01"
      "a\x01"
      "b[@x='1' and @y='it''s']\x02"}},
    /* descendant: the segments just above, from the end */
    {"//bookstore", NODES TARGET ORDER, {"bookstore"}},
    {"//categories[@code='1']/books",
     NODES TARGET " AND f.depth >= 2 AND " SEG("-2") " = $3" ORDER,
     {"books", "categories[@code='1']"}},
    /* the last step's conditions: equalities also as the key's text */
    {"//categories[@name='Kids']",
     NODES TARGET " AND (" SEG("-1") " = $3 OR f.attributes @> $4::jsonb)" ORDER,
     {"categories", "categories[@name='Kids']", "{\"name\":\"Kids\"}"}},
    {"//book[@price>5 or @title<'B' and contains(@title,'A')]",
     NODES TARGET " AND (" TYPE(
         "$3") "'number' THEN (f.attributes -> $3::text)::numeric > "
               "$4::numeric END OR (" TYPE(
                   "$5") "'string' THEN (f.attributes ->> $5::text) "
                         "COLLATE \"C\" < $6::text END AND CASE WHEN jsonb_typeof(f.attributes -> "
                         "$7::text) IN ('string', 'number') THEN strpos(f.attributes ->> $7::text, "
                         "$8::text) > 0 END))" ORDER,
     {"book", "price", "5", "title", "B", "title", "A"}},
    /* text(): the parent, when an entry of the leaf-list holds the value */
    {"//book/label[text()='classic']",
     NODES TARGET " AND EXISTS (SELECT 1 FROM jsonb_array_elements(CASE jsonb_typeof("
                  "f.attributes -> $3::text) WHEN 'array' THEN f.attributes -> $3::text ELSE "
                  "jsonb_build_array(f.attributes -> $3::text) END) e(v) WHERE CASE WHEN "
                  "jsonb_typeof(e.v) IN ('string', 'number') THEN (e.v #>> '{}') COLLATE \"C\" = "
                  "$4::text END)" ORDER,
     {"book", "label", "classic"}},
    /* ancestor::, from each f's path: the last place the segments are */
    {"//book/ancestor::categories",
     "SELECT a.anchor_id, a.path, a.depth FROM (SELECT DISTINCT anchor_id, CASE WHEN ra > 0 AND "
     "(rb = 0 OR ra < rb) THEN left(p, length(p) - ra) WHEN rb > 0 THEN left(p, length(p) - rb + "
     "strpos(substr(p, length(p) - rb + 2), E'\\x01')) END AS path FROM (SELECT anchor_id, p, "
     "strpos(reverse(p), reverse($3::text)) AS ra, strpos(reverse(p), reverse($4::text)) AS rb "
     "FROM (SELECT f.anchor_id, left(f.path, -length(split_part(f.path, E'\\x01', -1))) AS p "
     "FROM fragment f WHERE " TARGET " OFFSET 0) f OFFSET 0) f) m CROSS JOIN LATERAL (SELECT * "
     "FROM fragment a WHERE a.anchor_id = m.anchor_id AND a.path = m.path COLLATE \"C\" LIMIT 1) "
     "a ORDER BY a.anchor_id, a.path",
     {"book",
      "\x01"
      "categories\x01",
      "\x01"
      "categories["}},
    /* the attribute axis: the leaf's name comes first */
    {"//categories/@name",
     "SELECT DISTINCT f.anchor_id, f.attributes -> $2::text AS value FROM fragment f WHERE "
     "f.anchor_id = ANY($1::bigint[]) AND f.name = $3 AND jsonb_typeof(f.attributes -> $2::text) "
     "<> 'null' ORDER BY 1, 2",
     {"name", "categories"}},
    /* '//' in the middle: an ancestor row ending with the group */
    {"/a//b//c",
     NODES TARGET " AND f.depth >= 3 AND f.path >= $3 AND f.path < $4 AND EXISTS (SELECT 1 FROM "
                  "fragment p1 WHERE p1.name = $5 AND split_part(p1.path, E'\\x01', -1) = $6 AND "
                  "p1.depth >= 2 AND f.anchor_id = p1.anchor_id AND f.path >= p1.path || "
                  "E'\\x01' AND f.path < p1.path || E'\\x02' AND f.depth >= p1.depth + 1)" ORDER,
     {"c",
      "\x01"
      "a\x01",
      "\x01"
      "a\x02",
      "b", "b"}},
    /* prefixes are dropped */
    {"//bs:book[@bs:price=5]",
     NODES TARGET
     " AND (" SEG("-1") " = $3 OR " TYPE("$4") "'number' THEN (f.attributes -> "
                                               "$4::text)::numeric = $5::numeric END)" ORDER,
     {"book", "book[@price='5']", "price", "5"}},
};

static void check_translation(const translation *t)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};
    cps_query_kind kind;
    char *leaf = NULL;
    size_t n = 0;

    if (cps_query_to_sql(t->path, 1, 2, &sql, &params, &kind, &leaf, &err) != 0)
        cr_assert_fail("%s: %s", t->path, err.msg);
    cr_expect_str_eq(sql.data, t->sql, "%s", t->path);
    while (n < MAX_PARAMS && t->params[n])
        n++;
    cr_expect_eq(params.n, n, "%s: %zu parameters", t->path, params.n);
    for (size_t i = 0; i < n && i < params.n; i++)
        cr_expect_str_eq(params.values[i], t->params[i], "%s: $%zu", t->path, i + 2);
    cr_expect_eq(kind == CPS_QUERY_LEAF, leaf != NULL, "%s", t->path);
    free(leaf);
    ncmp_cpspath_params_free(&params);
    ncmp_buf_free(&sql);
}

Test(cps_query, translates_paths_to_sql_and_parameters)
{
    for (size_t i = 0; i < sizeof(translations) / sizeof(translations[0]); i++)
        check_translation(&translations[i]);
}

Test(cps_query, says_what_a_query_returns)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};
    cps_query_kind kind = CPS_QUERY_NODES;
    char *leaf = NULL;

    cr_assert_eq(cps_query_to_sql("//books/ancestor::bookstore/@bs:bookstore-name", 1, 2, &sql,
                                  &params, &kind, &leaf, &err),
                 0, "%s", err.msg);
    cr_expect_eq(kind, CPS_QUERY_LEAF);
    cr_assert_not_null(leaf);
    cr_expect_str_eq(leaf, "bookstore-name");
    cr_expect(strncmp(sql.data, "SELECT DISTINCT a.anchor_id, a.attributes -> $2::text AS value",
                      62) == 0,
              "%s", sql.data);
    free(leaf);
    ncmp_cpspath_params_free(&params);
    ncmp_buf_reset(&sql);

    leaf = (char *)"untouched";
    cr_assert_eq(cps_query_to_sql("//books", 1, 2, &sql, &params, &kind, &leaf, &err), 0);
    cr_expect_eq(kind, CPS_QUERY_NODES);
    cr_expect_null(leaf);
    ncmp_cpspath_params_free(&params);
    ncmp_buf_reset(&sql);

    /* the leaf's name is optional */
    cr_assert_eq(cps_query_to_sql("//books/@x", 1, 2, &sql, &params, &kind, NULL, &err), 0);
    cr_expect_eq(kind, CPS_QUERY_LEAF);
    ncmp_cpspath_params_free(&params);
    ncmp_buf_free(&sql);
}

/* The variant with the leaves selects them as a fourth column, the rest
 * unchanged; a leaf query is the same either way. */
Test(cps_query, the_leaves_variant_adds_the_attributes_column)
{
    ncmp_buf sql = NCMP_BUF_INIT, plain = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    cps_query_kind kind;
    ncmp_err err;

    cr_assert_eq(
        cps_query_to_sql("//books[@lang='English']", 1, 2, &plain, &params, &kind, NULL, &err), 0,
        "%s", err.msg);
    ncmp_cpspath_params_free(&params);
    cr_assert_eq(
        cps_query_to_sql_leaves("//books[@lang='English']", 1, 2, &sql, &params, &kind, NULL, &err),
        0, "%s", err.msg);
    ncmp_cpspath_params_free(&params);
    cr_expect(strncmp(sql.data, "SELECT f.anchor_id, f.path, f.depth, f.attributes FROM ",
                      strlen("SELECT f.anchor_id, f.path, f.depth, f.attributes FROM ")) == 0,
              "%s", sql.data);
    cr_expect_str_eq(sql.data + strlen("SELECT f.anchor_id, f.path, f.depth, f.attributes"),
                     plain.data + strlen("SELECT f.anchor_id, f.path, f.depth"));
    ncmp_buf_reset(&sql);
    ncmp_buf_reset(&plain);
    cr_assert_eq(cps_query_to_sql_leaves("//books/ancestor::bookstore", 1, 2, &sql, &params, &kind,
                                         NULL, &err),
                 0, "%s", err.msg);
    ncmp_cpspath_params_free(&params);
    cr_expect(strncmp(sql.data, "SELECT a.anchor_id, a.path, a.depth, a.attributes FROM ",
                      strlen("SELECT a.anchor_id, a.path, a.depth, a.attributes FROM ")) == 0,
              "%s", sql.data);
    ncmp_buf_reset(&sql);
    cr_assert_eq(cps_query_to_sql_leaves("//books/@title", 1, 2, &sql, &params, &kind, NULL, &err),
                 0, "%s", err.msg);
    ncmp_cpspath_params_free(&params);
    cr_assert_eq(cps_query_to_sql("//books/@title", 1, 2, &plain, &params, &kind, NULL, &err), 0);
    ncmp_cpspath_params_free(&params);
    cr_expect_eq(kind, CPS_QUERY_LEAF);
    cr_expect_str_eq(sql.data, plain.data);
    ncmp_buf_free(&sql);
    ncmp_buf_free(&plain);
}

Test(cps_query, numbers_parameters_after_the_callers_and_appends)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};
    cps_query_kind kind;

    ncmp_buf_append_str(&sql, "WITH x AS (SELECT $1::text) ");
    params.values = malloc(2 * sizeof(char *));
    params.values[0] = strdup("mine");
    params.values[1] = strdup("{1,2}");
    params.n = 2;
    cr_assert_eq(cps_query_to_sql("//book[@title='Dune']", 2, 3, &sql, &params, &kind, NULL, &err),
                 0, "%s", err.msg);
    cr_expect_str_eq(sql.data, "WITH x AS (SELECT $1::text) SELECT f.anchor_id, f.path, f.depth "
                               "FROM fragment f WHERE f.anchor_id = ANY($2::bigint[]) AND f.name "
                               "= $3 AND (split_part(f.path, E'\\x01', -1) = $4 OR f.attributes "
                               "@> $5::jsonb) ORDER BY f.anchor_id, f.path");
    cr_assert_eq(params.n, 5);
    cr_expect_str_eq(params.values[0], "mine");
    cr_expect_str_eq(params.values[1], "{1,2}");
    cr_expect_str_eq(params.values[2], "book");
    cr_expect_str_eq(params.values[3], "book[@title='Dune']");
    cr_expect_str_eq(params.values[4], "{\"title\":\"Dune\"}");
    ncmp_cpspath_params_free(&params);
    ncmp_buf_free(&sql);
}

typedef struct refusal {
    const char *path;
    const char *msg;
} refusal;

static const refusal refusals[] = {
    /* the grammar's */
    {"", "Invalid CPS path at position 1: empty path"},
    {"books", "Invalid CPS path at position 1: a path starts with '/' or '//'"},
    {"//book[@price==5]", "Invalid CPS path at position 14: unknown operator '=='"},
    {"//book[@title='Dune'", "Invalid CPS path at position 21: expected ']'"},
    {"//book/ancestor::shops//bookstore",
     "Invalid CPS path at position 23: the ancestor path takes '/' steps only"},
    /* what has no meaning on the fragment table */
    {"//categories[@code>1]/books", "Invalid CPS path at position 14: a step before the last is "
                                    "located by its keys only ([@key='value' and ...])"},
    {"/shops/bookstore[@a='1' or @b='2']/categories",
     "Invalid CPS path at position 28: a step before the last is located by its keys only "
     "([@key='value' and ...])"},
    {"//a[contains(@b,'c')]/d", "Invalid CPS path at position 5: a step before the last is "
                                "located by its keys only ([@key='value' and ...])"},
    {"//book/ancestor::categories[@code!='1']/books",
     "Invalid CPS path at position 29: a step before the last is located by its keys only "
     "([@key='value' and ...])"},
    {"//book/label[text()='x']/title",
     "Invalid CPS path at position 14: text() tests the leaf of the last step only"},
    {"//label[text()='x']", "Invalid CPS path at position 1: text() needs the node above the leaf: "
                            "/node/leaf[text()=...]"},
    {"//book//label[text()='x']",
     "Invalid CPS path at position 7: the leaf of text() follows '/', not '//'"},
    {"//book/label[text()='x' and @y='z']",
     "Invalid CPS path at position 29: a leaf step is tested with text() only"},
    {"/a//b//c//d//e//f", "Invalid CPS path at position 15: at most 4 '//' after the first step"},
    {"//book/ancestor::books[text()='x']",
     "Invalid CPS path at position 24: text() has no place in the ancestor path"},
};

Test(cps_query, refuses_with_the_position_and_writes_nothing)
{
    for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
        const refusal *r = &refusals[i];
        ncmp_buf sql = NCMP_BUF_INIT;
        ncmp_cpspath_params params = {0};
        ncmp_err err = {0};
        cps_query_kind kind = (cps_query_kind)42;
        char *leaf = (char *)"untouched";

        ncmp_buf_append_str(&sql, "kept");
        cr_expect_eq(cps_query_to_sql(r->path, 1, 2, &sql, &params, &kind, &leaf, &err), -1,
                     "accepted '%s'", r->path);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT, "%s", r->path);
        cr_expect_str_eq(err.msg, r->msg, "for '%s'", r->path);
        cr_expect_str_eq(sql.data, "kept", "%s: SQL written", r->path);
        cr_expect_eq(params.n, 0);
        cr_expect_eq((int)kind, 42);
        cr_expect_str_eq(leaf, "untouched");
        ncmp_buf_free(&sql);
    }
}

Test(cps_query, refuses_parameters_out_of_order_as_fatal)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};
    cps_query_kind kind;

    cr_expect_eq(cps_query_to_sql("//a", 0, 1, &sql, &params, &kind, NULL, &err), -1);
    cr_expect_eq(err.cls, NCMP_ERR_FATAL);
    cr_expect_eq(cps_query_to_sql("//a", 2, 2, &sql, &params, &kind, NULL, &err), -1);
    cr_expect_eq(err.cls, NCMP_ERR_FATAL);
    cr_expect_eq(cps_query_to_sql("//a", 3, 1, &sql, &params, &kind, NULL, &err), -1);
    cr_expect_eq(sql.len, 0);
    cr_expect_eq(params.n, 0);
}

/* --- values and names never reach the SQL text --------------------------- */

static const char *const hostile[] = {
    "'",
    "''",
    "\"",
    "\\",
    "'); DROP TABLE fragment; --",
    "x' OR '1'='1",
    "$1",
    "%s%n",
    "a%b_c",
    "]/ancestor::x",
    "\x01",
    "\x02\x1f\x7f\t\n",
    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
    "{\"a\":\"b\"}",
    "$$; DROP TABLE x; $$",
    "E'\\x01'",
};

/* Templates where %s is a quoted literal. */
static const char *const templates[] = {
    "//book[@title=%s]",
    "/shops/bookstore/categories[@code=%s]/books/book[@title!=%s or @title<%s]",
    "//categories[@code=%s]/books",
    "//book[contains(@title,%s)]",
    "//book/label[text()=%s]",
    "//book/ancestor::categories[@code=%s]/books[@x>%s]",
    "/a//b[@k=%s]//c[@l=%s]/@d",
};

/* `value` as a literal in `quote`, the quote doubled inside. */
static void quoted(ncmp_buf *b, const char *value, char quote)
{
    ncmp_buf_append_char(b, quote);
    for (const char *p = value; *p; p++) {
        ncmp_buf_append_char(b, *p);
        if (*p == quote)
            ncmp_buf_append_char(b, quote);
    }
    ncmp_buf_append_char(b, quote);
}

static char *fill(const char *tmpl, const char *value, char quote)
{
    ncmp_buf b = NCMP_BUF_INIT;

    for (const char *p = tmpl; *p; p++) {
        if (p[0] == '%' && p[1] == 's') {
            quoted(&b, value, quote);
            p++;
        } else {
            ncmp_buf_append_char(&b, *p);
        }
    }
    return b.data;
}

/* The SQL is the same text as for a harmless value, and the parameters as
 * many. */
static void check_hostile(const char *tmpl, const char *value, char quote)
{
    char *path = fill(tmpl, value, quote), *plain = fill(tmpl, "v", quote);
    ncmp_buf sql = NCMP_BUF_INIT, plain_sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0}, plain_params = {0};
    ncmp_err err = {0};
    cps_query_kind kind;

    if (cps_query_to_sql(path, 1, 2, &sql, &params, &kind, NULL, &err) != 0)
        cr_assert_fail("%s: %s", path, err.msg);
    cr_assert_eq(cps_query_to_sql(plain, 1, 2, &plain_sql, &plain_params, &kind, NULL, &err), 0,
                 "%s", err.msg);
    cr_expect_str_eq(sql.data, plain_sql.data, "for %s", path);
    cr_expect_eq(params.n, plain_params.n, "for %s", path);
    ncmp_cpspath_params_free(&params);
    ncmp_cpspath_params_free(&plain_params);
    ncmp_buf_free(&sql);
    ncmp_buf_free(&plain_sql);
    free(path);
    free(plain);
}

Test(cps_query, values_only_ever_become_parameters)
{
    for (size_t t = 0; t < sizeof(templates) / sizeof(templates[0]); t++)
        for (size_t v = 0; v < sizeof(hostile) / sizeof(hostile[0]); v++) {
            check_hostile(templates[t], hostile[v], '\'');
            check_hostile(templates[t], hostile[v], '"');
        }
}

Test(cps_query, names_only_ever_become_parameters)
{
    static const char *const names[] = {"DROP", "fragment", "h.id", "pg_sleep", "x--y", "_a.b-c"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        ncmp_buf path = NCMP_BUF_INIT, sql = NCMP_BUF_INIT;
        ncmp_cpspath_params params = {0};
        ncmp_err err = {0};
        cps_query_kind kind;
        int found = 0;

        ncmp_buf_appendf(&path, "/%s//%s[@%s=1]/%s[text()='v']/ancestor::%s/@%s", names[i],
                         names[i], names[i], names[i], names[i], names[i]);
        cr_assert_eq(cps_query_to_sql(path.data, 1, 2, &sql, &params, &kind, NULL, &err), 0,
                     "%s: %s", path.data, err.msg);
        /* "fragment" is the table's own name: look for the others only */
        if (strcmp(names[i], "fragment") != 0)
            cr_expect_null(strstr(sql.data, names[i]), "%s in %s", names[i], sql.data);
        for (size_t k = 0; k < params.n; k++)
            found += strcmp(params.values[k], names[i]) == 0;
        cr_expect_geq(found, 4, "%s: %d parameters hold the name", path.data, found);
        ncmp_cpspath_params_free(&params);
        ncmp_buf_free(&path);
        ncmp_buf_free(&sql);
    }
}
