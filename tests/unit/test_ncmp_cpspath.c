/* Unit tests of lib/ncmp_cpspath.c: the SQL and parameters each path
 * becomes, the errors and their positions, the limits, and values that try
 * to get into the SQL text. The SQL itself runs on PostgreSQL in
 * tests/integration/test_cpspath.c. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_cpspath.h"
#include "unit_leak.h"

TestSuite(ncmp_cpspath, .fini = unit_leak_check);

#define MAX_PARAMS 4

typedef struct translation {
    const char *path;
    const char *sql;
    const char *params[MAX_PARAMS]; /* NULL-terminated */
} translation;

#define NUMERIC(v) "(CASE WHEN " v " ~ '^[-+]?[0-9]+([.][0-9]+)?$' THEN (" v ")::numeric END)"
#define LAST_UPDATE                                                                                \
    "to_char(h.last_update_time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"+0000\"')"
#define EACH_PUBLIC "EXISTS (SELECT 1 FROM jsonb_each_text(h.public_properties) p WHERE "

static const translation translations[] = {
    /* NCMP's examples (its CPS path documentation) */
    {"//state[@cm-handle-state='READY']", "h.state = $1", {"READY"}},
    {"//state[@data-sync-enabled='true']", "h.data_sync_enabled::text = $1", {"true"}},
    {"//cm-handles[@alternate-id='alt-3']", "h.alternate_id = $1", {"alt-3"}},
    {"//lock-reason[@reason='MODULE_SYNC_FAILED']", "h.lock_reason = $1", {"MODULE_SYNC_FAILED"}},
    {"//public-properties[@name='Contact' and @value='newemailforstore@bookstore.com']",
     "h.public_properties @> $1::jsonb",
     {"{\"Contact\":\"newemailforstore@bookstore.com\"}"}},
    /* what hasAllProperties sends */
    {"//public-properties[@name='Color' and @value='yellow']/ancestor::cm-handles/@id",
     "h.public_properties @> $1::jsonb",
     {"{\"Color\":\"yellow\"}"}},
    /* absolute paths, keys and leaves */
    {"/dmi-registry/cm-handles[@id='ch-1']", "h.id = $1", {"ch-1"}},
    {"/dmi-registry/cm-handles[@id='x']/state[@cm-handle-state='LOCKED']",
     "(h.id = $1 AND h.state = $2)",
     {"x", "LOCKED"}},
    {"/dmi-registry/cm-handles", "true", {NULL}},
    {"/dmi-registry/cm-handles/@id", "true", {NULL}},
    {"/dmi-registry", "false", {NULL}},
    {"//cm-handles[@dmi-service-name='http://dmi:8080']",
     "h.dmi_service_name = $1",
     {"http://dmi:8080"}},
    {"//cm-handles[@dmi-data-service-name='d']", "h.dmi_data_service_name = $1", {"d"}},
    {"//cm-handles[@dmi-model-service-name='m']", "h.dmi_model_service_name = $1", {"m"}},
    {"//cm-handles[@dmi-datajobs-read-service='r']", "h.dmi_datajobs_read_service = $1", {"r"}},
    {"//cm-handles[@dmi-datajobs-write-service='w']", "h.dmi_datajobs_write_service = $1", {"w"}},
    {"//cm-handles/dmi-datajobs-write-service[text()!='w']",
     "h.dmi_datajobs_write_service <> $1",
     {"w"}},
    {"//cm-handles[contains(@dmi-datajobs-read-service,'jobs')]",
     "strpos(h.dmi_datajobs_read_service, $1) > 0",
     {"jobs"}},
    {"//cm-handles[@data-producer-identifier='p']", "h.data_producer_identifier = $1", {"p"}},
    {"//cm-handles[@module-set-tag='tagA']", "h.module_set_tag = $1", {"tagA"}},
    {"//cm-handles[@id='a'][@alternate-id='b']", "(h.id = $1 AND h.alternate_id = $2)", {"a", "b"}},
    /* leaf steps and text() */
    {"//cm-handles/module-set-tag[text()='tagA']", "h.module_set_tag = $1", {"tagA"}},
    {"//cm-handle-state[text()!='READY']", "h.state <> $1", {"READY"}},
    {"//cm-handles/alternate-id", "h.alternate_id IS NOT NULL", {NULL}},
    {"//state[text()='x']", "false", {NULL}},
    /* and binds tighter than or */
    {"//state[@cm-handle-state='A' or @cm-handle-state='B' and @data-sync-enabled='true']",
     "(h.state = $1 OR (h.state = $2 AND h.data_sync_enabled::text = $3))",
     {"A", "B", "true"}},
    {"//state[@cm-handle-state='A' and @data-sync-enabled='false' or @cm-handle-state='B']",
     "((h.state = $1 AND h.data_sync_enabled::text = $2) OR h.state = $3)",
     {"A", "false", "B"}},
    /* a condition on a leaf the node does not have is false, not an error */
    {"//state[@no-such-leaf='x' or @cm-handle-state='READY']", "h.state = $1", {"READY"}},
    {"//state[@no-such-leaf='x' and @cm-handle-state='READY']", "false", {NULL}},
    {"//no-such-node[@id='x']", "false", {NULL}},
    /* operators: strings compare as text by code point, numbers as numbers */
    {"//cm-handles[@id>='ch-10']", "h.id COLLATE \"C\" >= $1", {"ch-10"}},
    {"//state[@last-update-time<'2025-06-02']", LAST_UPDATE " COLLATE \"C\" < $1", {"2025-06-02"}},
    {"//public-properties[@name='Size' and @value>10]",
     EACH_PUBLIC "(p.key = $1 AND " NUMERIC("p.value") " > $2::numeric))",
     {"Size", "10"}},
    {"//cm-handles[@id=-1.5]", NUMERIC("h.id") " = $1::numeric", {"-1.5"}},
    {"//cm-handles[@id<=3]", NUMERIC("h.id") " <= $1::numeric", {"3"}},
    /* contains */
    {"//cm-handles[contains(@alternate-id,'Ireland')]",
     "strpos(h.alternate_id, $1) > 0",
     {"Ireland"}},
    {"//cm-handles/alternate-id[contains(text(),'%_')]", "strpos(h.alternate_id, $1) > 0", {"%_"}},
    /* containers that exist only sometimes */
    {"//lock-reason", "h.lock_reason IS NOT NULL", {NULL}},
    {"/dmi-registry/cm-handles/state/lock-reason/reason", "h.lock_reason IS NOT NULL", {NULL}},
    {"//details", "(h.lock_reason IS NOT NULL AND h.lock_details IS NOT NULL)", {NULL}},
    {"//lock-reason[@details='d']", "(h.lock_reason IS NOT NULL AND h.lock_details = $1)", {"d"}},
    {"//operational[@sync-state='UNSYNCHRONIZED']",
     "h.operational_sync_state = $1",
     {"UNSYNCHRONIZED"}},
    {"//datastores", "h.operational_sync_state IS NOT NULL", {NULL}},
    {"//sync-state[text()='NONE_REQUESTED']", "h.operational_sync_state = $1", {"NONE_REQUESTED"}},
    {"//running", "false", {NULL}},
    {"//operational[@last-sync-time='t']", "false", {NULL}},
    /* public properties */
    {"//public-properties", "h.public_properties <> '{}'::jsonb", {NULL}},
    {"//public-properties[@name='Color']", "h.public_properties ? $1", {"Color"}},
    {"//public-properties[@value='yellow']", EACH_PUBLIC "p.value = $1)", {"yellow"}},
    {"//public-properties[@name='a']/value[text()='b']",
     "h.public_properties @> $1::jsonb",
     {"{\"a\":\"b\"}"}},
    {"//public-properties[@name='a' or @name='b']",
     EACH_PUBLIC "(p.key = $1 OR p.key = $2))",
     {"a", "b"}},
    {"//public-properties[contains(@value,'x')]", EACH_PUBLIC "strpos(p.value, $1) > 0)", {"x"}},
    {"//value[text()='x']", EACH_PUBLIC "p.value = $1)", {"x"}},
    {"//name", "h.public_properties <> '{}'::jsonb", {NULL}},
    {"//public-properties[@name='O''Brien' and @value=\"say \"\"hi\"\"\"]",
     "h.public_properties @> $1::jsonb",
     {"{\"O'Brien\":\"say \\\"hi\\\"\"}"}},
    /* private properties: nothing, whatever the rest says */
    {"//additional-properties[@name='k']", "false", {NULL}},
    {"/dmi-registry/cm-handles/additional-properties", "false", {NULL}},
    {"//cm-handles[@id='x']/additional-properties/value[text()='v']", "false", {NULL}},
    /* ancestor:: and the attribute axis */
    {"//state[@cm-handle-state='READY']/ancestor::cm-handles", "h.state = $1", {"READY"}},
    {"//state[@cm-handle-state='READY']/ancestor::cm-handles[@id='z']/@id",
     "(h.id = $1 AND h.state = $2)",
     {"z", "READY"}},
    {"//reason[text()='X']/ancestor::state", "h.lock_reason = $1", {"X"}},
    {"//name/ancestor::public-properties[@value='v']", EACH_PUBLIC "p.value = $1)", {"v"}},
    {"//state/ancestor::dmi-registry", "false", {NULL}},
    {"//cm-handles[@id='x']/ancestor::cm-handles", "false", {NULL}},
    {"//state/ancestor::lock-reason", "false", {NULL}},
    /* descendants anywhere below */
    {"/dmi-registry//sync-state", "h.operational_sync_state IS NOT NULL", {NULL}},
    {"//cm-handles//reason[text()='r']", "h.lock_reason = $1", {"r"}},
    /* white space between tokens, both quotes, doubled quotes */
    {" // state [ @cm-handle-state = \"RE\"\"ADY\" ] ", "h.state = $1", {"RE\"ADY"}},
    {"//cm-handles[@id='it''s']", "h.id = $1", {"it's"}},
    {"//cm-handles[@id='caf\xc3\xa9']", "h.id = $1", {"caf\xc3\xa9"}},
};

static void check_translation(const translation *t)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_cpspath_comparison one;
    ncmp_err err = {0};
    size_t n = 0;

    if (ncmp_cpspath_to_sql(t->path, 1, &sql, &params, &one, &err) != 0)
        cr_assert_fail("%s: %s", t->path, err.msg);
    cr_expect_str_eq(sql.data, t->sql, "%s", t->path);
    if (one.column) {
        /* a comparison reported is the whole of the SQL */
        char whole[128];
        snprintf(whole, sizeof(whole), "h.%s %s $1", one.column, one.negate ? "<>" : "=");
        cr_expect_str_eq(sql.data, whole, "%s: reported as one comparison", t->path);
    }
    while (n < MAX_PARAMS && t->params[n])
        n++;
    cr_expect_eq(params.n, n, "%s: %zu parameters", t->path, params.n);
    for (size_t i = 0; i < n && i < params.n; i++)
        cr_expect_str_eq(params.values[i], t->params[i], "%s: $%zu", t->path, i + 1);
    ncmp_cpspath_params_free(&params);
    ncmp_buf_free(&sql);
}

Test(ncmp_cpspath, translates_paths_to_sql_and_parameters)
{
    for (size_t i = 0; i < sizeof(translations) / sizeof(translations[0]); i++)
        check_translation(&translations[i]);
}

typedef struct comparison {
    const char *path;
    const char *column; /* NULL: not one comparison of a column */
    int negate;
} comparison;

static const comparison comparisons[] = {
    /* one column compared with one parameter */
    {"//state[@cm-handle-state='READY']", "state", 0},
    {"//cm-handle-state[text()!='READY']", "state", 1},
    {"/dmi-registry/cm-handles[@alternate-id='x']", "alternate_id", 0},
    {"/dmi-registry/cm-handles[@id='ch-1']", "id", 0},
    {"//cm-handles/dmi-datajobs-write-service[text()!='w']", "dmi_datajobs_write_service", 1},
    {"//lock-reason[@reason='MODULE_SYNC_FAILED']", "lock_reason", 0},
    {"//sync-state[text()='NONE_REQUESTED']", "operational_sync_state", 0},
    {"//state[@cm-handle-state='READY']/ancestor::cm-handles", "state", 0},
    /* what is left once the conditions that are false are dropped */
    {"//state[@no-such-leaf='x' or @cm-handle-state='READY']", "state", 0},
    {"//cm-handles[@id='a' and @no-such-leaf='b' or @alternate-id='c']", "alternate_id", 0},
    /* anything else */
    {"//state[@cm-handle-state='A' or @cm-handle-state='B']", NULL, 0},
    {"/dmi-registry/cm-handles[@id='x']/state[@cm-handle-state='LOCKED']", NULL, 0},
    {"//cm-handles[@id='a'][@alternate-id='b']", NULL, 0},
    {"//cm-handles[@id='a' and @no-such-leaf='b' or contains(@alternate-id,'c')]", NULL, 0},
    {"//cm-handles[contains(@alternate-id,'Ireland')]", NULL, 0},
    {"//cm-handles[@id=-1.5]", NULL, 0},
    {"//cm-handles[@id>='ch-10']", NULL, 0},
    {"//state[@data-sync-enabled='true']", NULL, 0},
    {"//state[@last-update-time='2025-06-02']", NULL, 0},
    {"//lock-reason[@details='d']", NULL, 0},
    {"//public-properties[@name='Color' and @value='yellow']", NULL, 0},
    {"//public-properties[@name='Color']", NULL, 0},
    {"//public-properties[@value='yellow']", NULL, 0},
    {"//cm-handles/alternate-id", NULL, 0},
    {"/dmi-registry/cm-handles", NULL, 0},
    {"//state[text()='x']", NULL, 0},
    {"//additional-properties[@name='k']", NULL, 0},
};

Test(ncmp_cpspath, reports_a_condition_that_is_one_comparison_of_a_column)
{
    for (size_t i = 0; i < sizeof(comparisons) / sizeof(comparisons[0]); i++) {
        const comparison *c = &comparisons[i];
        ncmp_buf sql = NCMP_BUF_INIT;
        ncmp_cpspath_params params = {0};
        ncmp_cpspath_comparison one = {"stale", 1};
        ncmp_err err = {0};

        if (ncmp_cpspath_to_sql(c->path, 1, &sql, &params, &one, &err) != 0)
            cr_assert_fail("%s: %s", c->path, err.msg);
        if (c->column) {
            cr_expect_str_eq(one.column, c->column, "%s", c->path);
            cr_expect_eq(one.negate, c->negate, "%s: negate", c->path);
        } else {
            cr_expect_null(one.column, "%s: reported %s", c->path, one.column);
            cr_expect_not(one.negate, "%s: negate", c->path);
        }
        ncmp_cpspath_params_free(&params);
        ncmp_buf_free(&sql);
    }
}

Test(ncmp_cpspath, reports_one_comparison_after_the_callers_sql)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_cpspath_comparison one;
    ncmp_err err = {0};

    ncmp_buf_append_str(&sql, "h.id = $1 AND ");
    params.values = malloc(sizeof(char *));
    params.values[0] = strdup("a");
    params.n = 1;
    cr_assert_eq(
        ncmp_cpspath_to_sql("//cm-handle-state[text()!='READY']", 2, &sql, &params, &one, &err), 0,
        "%s", err.msg);
    cr_expect_str_eq(sql.data, "h.id = $1 AND h.state <> $2");
    cr_expect_str_eq(one.column, "state");
    cr_expect(one.negate);
    ncmp_cpspath_params_free(&params);
    ncmp_buf_free(&sql);
}

Test(ncmp_cpspath, numbers_parameters_from_first_and_appends)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};

    ncmp_buf_append_str(&sql, "SELECT id FROM cm_handle h WHERE h.state = $1 AND ");
    params.values = malloc(sizeof(char *));
    params.values[0] = strdup("READY");
    params.n = 1;
    cr_assert_eq(ncmp_cpspath_to_sql("//cm-handles[@id='a' or @alternate-id='b']", 2, &sql, &params,
                                     NULL, &err),
                 0, "%s", err.msg);
    cr_expect_str_eq(sql.data, "SELECT id FROM cm_handle h WHERE h.state = $1 AND "
                               "(h.id = $2 OR h.alternate_id = $3)");
    cr_assert_eq(params.n, 3);
    cr_expect_str_eq(params.values[0], "READY");
    cr_expect_str_eq(params.values[1], "a");
    cr_expect_str_eq(params.values[2], "b");
    ncmp_cpspath_params_free(&params);
    cr_expect_eq(params.n, 0);
    cr_expect_null(params.values);
    ncmp_cpspath_params_free(&params);
    ncmp_cpspath_params_free(NULL);
    ncmp_buf_free(&sql);
}

typedef struct refusal {
    const char *path;
    const char *msg;
} refusal;

static const refusal refusals[] = {
    {"", "Invalid CPS path at position 1: empty path"},
    {"   ", "Invalid CPS path at position 1: empty path"},
    {"state", "Invalid CPS path at position 1: a path starts with '/' or '//'"},
    {"/", "Invalid CPS path at position 2: expected a node name"},
    {"//", "Invalid CPS path at position 3: expected a node name"},
    {"///cm-handles", "Invalid CPS path at position 3: expected a node name"},
    {"//state/", "Invalid CPS path at position 9: expected a node name"},
    {"//state[@cm-handle-state='READY'", "Invalid CPS path at position 33: expected ']'"},
    {"//state[@cm-handle-state='READY]",
     "Invalid CPS path at position 26: missing closing quote '"},
    {"//state[@cm-handle-state=\"READY]",
     "Invalid CPS path at position 26: missing closing quote \""},
    {"//state[@cm-handle-state=='READY']",
     "Invalid CPS path at position 25: unknown operator '=='"},
    {"//state[@cm-handle-state<>'READY']",
     "Invalid CPS path at position 25: unknown operator '<>'"},
    {"//state[@cm-handle-state!'READY']", "Invalid CPS path at position 25: unknown operator '!'"},
    {"//state[@cm-handle-state 'READY']",
     "Invalid CPS path at position 26: expected an operator (= != < > <= >=)"},
    {"//state[@cm-handle-state=]",
     "Invalid CPS path at position 26: expected a quoted string or a number"},
    {"//state[@cm-handle-state=READY]",
     "Invalid CPS path at position 26: expected a quoted string or a number"},
    {"//state]", "Invalid CPS path at position 8: unexpected ']' after the step"},
    {"//state[@a='b']]", "Invalid CPS path at position 16: unexpected ']' after the step"},
    {"//state[@a='b'] x", "Invalid CPS path at position 17: unexpected 'x' after the step"},
    {"//state[]", "Invalid CPS path at position 9: expected '@leaf', 'text()' or 'contains(...)'"},
    {"//state[@a='b' and]",
     "Invalid CPS path at position 19: expected '@leaf', 'text()' or 'contains(...)'"},
    {"//state[@a='b' xor @c='d']", "Invalid CPS path at position 16: expected 'and', 'or' or ']'"},
    {"//state[(@a='b')]",
     "Invalid CPS path at position 9: expected '@leaf', 'text()' or 'contains(...)'"},
    {"//state[@]", "Invalid CPS path at position 10: expected a leaf name after '@'"},
    {"//state[@a=1e5]", "Invalid CPS path at position 13: expected 'and', 'or' or ']'"},
    {"//x[text(='b']", "Invalid CPS path at position 10: expected ')' after text("},
    {"//x[contains(@a 'b')]", "Invalid CPS path at position 17: expected ',' in contains(...)"},
    {"//x[contains(@a,'b']",
     "Invalid CPS path at position 20: expected ')' to close contains(...)"},
    {"//x[contains @a,'b')]", "Invalid CPS path at position 14: expected '(' after contains"},
    {"//state/ancestor::cm-handles/state",
     "Invalid CPS path at position 29: the ancestor axis must be the last step"},
    {"//state/ancestor::cm-handles[@id='a']/ancestor::dmi-registry",
     "Invalid CPS path at position 38: the ancestor axis must be the last step"},
    {"//state/ancestor:cm-handles", "Invalid CPS path at position 17: unexpected character ':'"},
    {"//state/ancestor::", "Invalid CPS path at position 19: expected a node name after "
                           "'ancestor::'"},
    {"/ancestor::cm-handles",
     "Invalid CPS path at position 2: the ancestor axis needs a step before it"},
    {"//ancestor::cm-handles",
     "Invalid CPS path at position 3: the ancestor axis follows '/', not '//'"},
    {"//cm-handles/@id/state",
     "Invalid CPS path at position 17: the attribute axis '/@leaf' must come last"},
    {"//cm-handles/@", "Invalid CPS path at position 15: expected a leaf name after '@'"},
    {"/@id", "Invalid CPS path at position 2: expected a node name"},
    {"//state/..", "Invalid CPS path at position 9: unexpected character '.'"},
    {"//st\xc3\xa4te", "Invalid CPS path at position 5: unexpected non-ASCII character"},
    {"//state\t[@a=\x01]", "Invalid CPS path at position 13: unexpected control character 0x01"},
    /* positions count characters, not bytes */
    {"//x[@a='\xc3\xa9\xc3\xa9' and @b=='c']",
     "Invalid CPS path at position 19: unknown operator '=='"},
    {"//x[@a='\xc3\xa9\xff']", "Invalid CPS path at position 10: invalid UTF-8"},
    {"//x[@a='\xed\xa0\x80']", "Invalid CPS path at position 9: invalid UTF-8"},
    {"//x[@a='\xc0\xaf']", "Invalid CPS path at position 9: invalid UTF-8"},
};

static void check_refusal(const refusal *r)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};

    ncmp_buf_append_str(&sql, "kept");
    cr_assert_eq(ncmp_cpspath_to_sql(r->path, 1, &sql, &params, NULL, &err), -1, "accepted '%s'",
                 r->path);
    cr_expect_eq(err.cls, NCMP_ERR_REJECT, "%s: class %s", r->path, ncmp_err_class_name(err.cls));
    cr_expect_str_eq(err.msg, r->msg, "for '%s'", r->path);
    cr_expect_str_eq(sql.data, "kept", "output written on failure");
    cr_expect_eq(params.n, 0);
    cr_expect_null(params.values);
    ncmp_buf_free(&sql);
}

Test(ncmp_cpspath, refuses_bad_syntax_with_the_position)
{
    for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
        check_refusal(&refusals[i]);
}

Test(ncmp_cpspath, refuses_a_null_path_and_a_bad_first_parameter)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};

    cr_expect_eq(ncmp_cpspath_to_sql(NULL, 1, &sql, &params, NULL, &err), -1);
    cr_expect_str_eq(err.msg, "Invalid CPS path at position 1: empty path");
    cr_expect_eq(ncmp_cpspath_to_sql("//state", 0, &sql, &params, NULL, &err), -1);
    cr_expect_eq(err.cls, NCMP_ERR_FATAL);
    cr_expect_eq(sql.len, 0);
}

/* --- limits ------------------------------------------------------------- */

Test(ncmp_cpspath, limits_the_length)
{
    ncmp_buf path = NCMP_BUF_INIT;
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};

    ncmp_buf_append_str(&path, "//cm-handles[@id='");
    while (path.len < 4096 - 2)
        ncmp_buf_append_char(&path, 'x');
    ncmp_buf_append_str(&path, "']");
    cr_assert_eq(path.len, 4096);
    cr_expect_eq(ncmp_cpspath_to_sql(path.data, 1, &sql, &params, NULL, &err), 0, "%s", err.msg);
    ncmp_cpspath_params_free(&params);
    ncmp_buf_append_char(&path, ' ');
    cr_expect_eq(ncmp_cpspath_to_sql(path.data, 1, &sql, &params, NULL, &err), -1);
    cr_expect_str_eq(err.msg, "Invalid CPS path at position 4097: path longer than 4096 bytes");
    ncmp_buf_free(&path);
    ncmp_buf_free(&sql);
}

/* `//state[` + n conditions + `]` */
static char *many_conditions(int n)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_str(&b, "//state[");
    for (int i = 0; i < n; i++)
        ncmp_buf_appendf(&b, "%s@cm-handle-state='s%d'", i ? " or " : "", i);
    ncmp_buf_append_char(&b, ']');
    return b.data;
}

Test(ncmp_cpspath, limits_the_conditions)
{
    char *ok = many_conditions(64), *bad = many_conditions(65);
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};
    char want[128];

    cr_expect_eq(ncmp_cpspath_to_sql(ok, 1, &sql, &params, NULL, &err), 0, "%s", err.msg);
    cr_expect_eq(params.n, 64);
    ncmp_cpspath_params_free(&params);
    cr_expect_eq(ncmp_cpspath_to_sql(bad, 1, &sql, &params, NULL, &err), -1);
    snprintf(want, sizeof(want),
             "Invalid CPS path at position %zu: too many conditions (at most 64)",
             strrchr(bad, '@') - bad + 1);
    cr_expect_str_eq(err.msg, want);
    free(ok);
    free(bad);
    ncmp_buf_free(&sql);
}

Test(ncmp_cpspath, limits_the_steps)
{
    ncmp_buf path = NCMP_BUF_INIT;
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};

    for (int i = 0; i < 32; i++)
        ncmp_buf_append_str(&path, "/a");
    cr_expect_eq(ncmp_cpspath_to_sql(path.data, 1, &sql, &params, NULL, &err), 0, "%s", err.msg);
    cr_expect_str_eq(sql.data, "false");
    ncmp_buf_append_str(&path, "/a");
    cr_expect_eq(ncmp_cpspath_to_sql(path.data, 1, &sql, &params, NULL, &err), -1);
    cr_expect_str_eq(err.msg, "Invalid CPS path at position 66: too many steps (at most 32)");
    ncmp_buf_free(&path);
    ncmp_buf_free(&sql);
}

/* --- values never reach the SQL text ------------------------------------- */

static const char *const hostile[] = {
    "'",
    "''",
    "\"",
    "\\",
    "\\'",
    "'); DROP TABLE cm_handle; --",
    "x' OR '1'='1",
    "\" OR \"\"=\"",
    "$1",
    "%s%n%x",
    "a%b_c",
    "]/ancestor::x",
    "' or @id='",
    "*/ SELECT pg_sleep(10) /*",
    "E'\\x00'",
    "\x01\x02\x1f\x7f\t\r\n",
    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
    "{\"a\":\"b\"}",
    "$$; DROP TABLE x; $$",
};

/* Templates where %s is a quoted literal. */
static const char *const templates[] = {
    "//cm-handles[@id=%s]",
    "//cm-handles[@alternate-id!=%s or @module-set-tag<%s]",
    "//cm-handles[contains(@alternate-id,%s)]",
    "//cm-handles/module-set-tag[text()=%s]",
    "//state[@last-update-time>=%s]/ancestor::cm-handles[@id=%s]",
    "//public-properties[@value=%s]",
    "//public-properties[@name=%s]",
    "//public-properties[@name=%s and @value=%s]",
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

/* The template with every %s replaced by `value` quoted. */
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

/* Is `want` a parameter, as itself or inside the JSON object of `@>`? */
static int is_parameter(const ncmp_cpspath_params *params, const char *want)
{
    for (size_t i = 0; i < params->n; i++) {
        json_object *obj;
        int found = 0;

        if (strcmp(params->values[i], want) == 0)
            return 1;
        if (params->values[i][0] != '{' || !(obj = json_tokener_parse(params->values[i])))
            continue;
        json_object_object_foreach(obj, key, val)
        {
            if (strcmp(key, want) == 0 || strcmp(json_object_get_string(val), want) == 0)
                found = 1;
        }
        json_object_put(obj);
        if (found)
            return 1;
    }
    return 0;
}

/* The SQL is the same text as for a harmless value: nothing of the value
 * is in it, and the value comes back whole as a parameter. */
static void check_hostile(const char *tmpl, const char *value, char quote)
{
    char *path = fill(tmpl, value, quote), *plain = fill(tmpl, "v", quote);
    ncmp_buf sql = NCMP_BUF_INIT, plain_sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0}, plain_params = {0};
    ncmp_err err = {0};

    if (ncmp_cpspath_to_sql(path, 1, &sql, &params, NULL, &err) != 0)
        cr_assert_fail("%s: %s", path, err.msg);
    cr_assert_eq(ncmp_cpspath_to_sql(plain, 1, &plain_sql, &plain_params, NULL, &err), 0, "%s",
                 err.msg);
    cr_expect_str_eq(sql.data, plain_sql.data, "for %s", path);
    cr_expect_eq(params.n, plain_params.n, "for %s", path);
    cr_expect(is_parameter(&params, value), "%s: the value is not a parameter", path);
    ncmp_cpspath_params_free(&params);
    ncmp_cpspath_params_free(&plain_params);
    ncmp_buf_free(&sql);
    ncmp_buf_free(&plain_sql);
    free(path);
    free(plain);
}

Test(ncmp_cpspath, values_only_ever_become_parameters)
{
    for (size_t t = 0; t < sizeof(templates) / sizeof(templates[0]); t++)
        for (size_t v = 0; v < sizeof(hostile) / sizeof(hostile[0]); v++) {
            check_hostile(templates[t], hostile[v], '\'');
            check_hostile(templates[t], hostile[v], '"');
        }
}

Test(ncmp_cpspath, leaf_and_node_names_never_reach_the_sql)
{
    static const char *const paths[] = {
        "//cm-handles[@id_OR_1=1='x']",
        "//h.id[@x='y']",
        "//state[@cm-handle-state.x='y']",
        "//DROP[@TABLE='x']/ancestor::cm_handle",
    };

    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        ncmp_buf sql = NCMP_BUF_INIT;
        ncmp_cpspath_params params = {0};
        ncmp_err err = {0};
        int rc = ncmp_cpspath_to_sql(paths[i], 1, &sql, &params, NULL, &err);

        if (rc == 0)
            cr_expect_str_eq(sql.data, "false", "%s", paths[i]);
        else
            cr_expect_eq(err.cls, NCMP_ERR_REJECT, "%s", paths[i]);
        ncmp_cpspath_params_free(&params);
        ncmp_buf_free(&sql);
    }
}
