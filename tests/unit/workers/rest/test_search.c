/*
 * search: NCMP's CmHandleQueryParameters turned into one parameterised SQL
 * condition. The SQL itself runs in the integration suite; here: which
 * conditions are taken, what values become parameters (never SQL text),
 * and what NCMP refuses.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "search.h"

static void parse_ok(const char *body, search_side side, search_query *q)
{
    search_error e;
    cr_assert_eq(search_parse(body, strlen(body), side, 0, q, &e), 0, "%s: %s %s", body, e.message,
                 e.details);
}

static void parse_refused(const char *body, search_side side, const char *details)
{
    search_query q;
    search_error e;
    cr_assert_eq(search_parse(body, strlen(body), side, 0, &q, &e), -1, "%s accepted", body);
    cr_expect(strstr(e.details, details) || strstr(e.message, details),
              "%s: '%s' / '%s' does not say '%s'", body, e.message, e.details, details);
}

Test(search, no_condition_selects_every_handle)
{
    search_query q;

    parse_ok("{}", SEARCH_NORTHBOUND, &q);
    cr_assert_eq(q.nparams, 0);
    search_query_free(&q);
}

Test(search, properties_become_one_jsonb_parameter)
{
    search_query q;

    parse_ok("{\"cmHandleQueryParameters\":[{\"conditionName\":\"hasAllProperties\","
             "\"conditionParameters\":[{\"Color\":\"red\"},{\"Size\":\"x'); DROP TABLE t;--\"}]}]}",
             SEARCH_NORTHBOUND, &q);
    cr_assert_eq(q.nparams, 1);
    cr_assert_str_eq(q.params[0], "{\"Color\":\"red\",\"Size\":\"x'); DROP TABLE t;--\"}");
    cr_assert_null(strstr(q.where.data, "DROP"), "values never enter the SQL: %s", q.where.data);
    cr_assert(strstr(q.where.data, "public_properties @> $1::jsonb"), "%s", q.where.data);
    search_query_free(&q);
}

Test(search, one_property_with_two_values_matches_nothing)
{
    search_query q;

    parse_ok("{\"cmHandleQueryParameters\":[{\"conditionName\":\"hasAllProperties\","
             "\"conditionParameters\":[{\"Color\":\"red\"},{\"Color\":\"blue\"}]}]}",
             SEARCH_NORTHBOUND, &q);
    cr_assert_str_eq(q.where.data, "false");
    search_query_free(&q);
}

Test(search, modules_become_an_array_parameter)
{
    search_query q;

    parse_ok("{\"cmHandleQueryParameters\":[{\"conditionName\":\"hasAllModules\","
             "\"conditionParameters\":[{\"moduleName\":\"m1\"},{\"moduleName\":\"m\\\"2\"}]}]}",
             SEARCH_NORTHBOUND, &q);
    cr_assert_eq(q.nparams, 1);
    cr_assert_str_eq(q.params[0], "{\"m1\",\"m\\\"2\"}");
    search_query_free(&q);
}

Test(search, southbound_conditions_only_southbound)
{
    static const char body[] = "{\"cmHandleQueryParameters\":[{\"conditionName\":"
                               "\"cmHandleWithDmiPlugin\",\"conditionParameters\":"
                               "[{\"dmiPluginName\":\"http://dmi\"}]}]}";
    search_query q;

    parse_refused(body, SEARCH_NORTHBOUND, "cmHandleWithDmiPlugin");
    parse_ok(body, SEARCH_SOUTHBOUND, &q);
    cr_assert_eq(q.nparams, 1);
    search_query_free(&q);
}

Test(search, refuses_what_ncmp_refuses)
{
    parse_refused("{\"cmHandleQueryParameters\":[{\"conditionName\":\"nope\","
                  "\"conditionParameters\":[{\"a\":\"b\"}]}]}",
                  SEARCH_NORTHBOUND, "Wrong 'conditionName'");
    parse_refused("{\"cmHandleQueryParameters\":[{\"conditionName\":\"hasAllProperties\","
                  "\"conditionParameters\":[]}]}",
                  SEARCH_NORTHBOUND, "Empty conditionsParameters");
    parse_refused("{\"cmHandleQueryParameters\":[{\"conditionName\":\"hasAllProperties\","
                  "\"conditionParameters\":[{\"a\":\"b\",\"c\":\"d\"}]}]}",
                  SEARCH_NORTHBOUND, "Too many conditionsParameters");
    parse_refused("{\"cmHandleQueryParameters\":[{\"conditionName\":\"hasAllProperties\","
                  "\"conditionParameters\":[{}]}]}",
                  SEARCH_NORTHBOUND, "Empty conditionsParameter");
}

Test(search, a_bad_cps_path_is_refused_not_run)
{
    search_query q;
    search_error e;
    static const char body[] = "{\"cmHandleQueryParameters\":[{\"conditionName\":"
                               "\"cmHandleWithCpsPath\",\"conditionParameters\":"
                               "[{\"cpsPath\":\"//state[@x='1'\"}]}]}";

    cr_assert_eq(search_parse(body, strlen(body), SEARCH_NORTHBOUND, 0, &q, &e), -1);
    cr_assert(*e.message, "a message for the 400");
}

/* --- the same conditions for the search index ----------------------------- */

static search_query parsed(const char *body, search_side side)
{
    search_query q;
    parse_ok(body, side, &q);
    return q;
}

Test(search, conditions_for_the_index_carry_the_values)
{
    search_query q = parsed(
        "{\"cmHandleQueryParameters\":["
        "{\"conditionName\":\"hasAllModules\",\"conditionParameters\":[{\"moduleName\":\"m1\"},"
        "{\"moduleName\":\"m2\"}]},"
        "{\"conditionName\":\"hasAllProperties\",\"conditionParameters\":[{\"Color\":\"red\"}]},"
        "{\"conditionName\":\"cmHandleWithTrustLevel\",\"conditionParameters\":[{\"x\":\"NONE\"}]},"
        "{\"conditionName\":\"cmHandleWithDmiPlugin\",\"conditionParameters\":[{\"d\":\"http://"
        "a\"}]},"
        "{\"conditionName\":\"hasAllAdditionalProperties\",\"conditionParameters\":[{\"k\":\"1\"}]}"
        "]}",
        SEARCH_SOUTHBOUND);

    cr_assert_eq(q.nconds, 5);
    cr_assert_not(q.needs_db);
    cr_assert_eq(q.conds[0].kind, SEARCH_COND_MODULES);
    cr_assert_eq(q.conds[0].n, 2);
    cr_assert_str_eq(q.conds[0].values[1], "m2");
    cr_assert_eq(q.conds[1].kind, SEARCH_COND_PUBLIC);
    cr_assert_str_eq(q.conds[1].keys[0], "Color");
    cr_assert_str_eq(q.conds[1].values[0], "red");
    cr_assert_eq(q.conds[2].kind, SEARCH_COND_TRUST);
    cr_assert_str_eq(q.conds[2].values[0], "NONE");
    cr_assert_eq(q.conds[3].kind, SEARCH_COND_DMI);
    cr_assert_eq(q.conds[4].kind, SEARCH_COND_ADDITIONAL);
    search_query_free(&q);
}

Test(search, contradictions_match_nothing_in_the_index_too)
{
    search_query q = parsed("{\"cmHandleQueryParameters\":[{\"conditionName\":"
                            "\"hasAllProperties\",\"conditionParameters\":[{\"C\":\"red\"},"
                            "{\"C\":\"blue\"}]}]}",
                            SEARCH_NORTHBOUND);

    cr_assert_eq(q.nconds, 1);
    cr_assert_eq(q.conds[0].kind, SEARCH_COND_NONE);
    search_query_free(&q);
}

static void cps_path(const char *path, search_query *q)
{
    char body[512];

    snprintf(body, sizeof(body),
             "{\"cmHandleQueryParameters\":[{\"conditionName\":\"cmHandleWithCpsPath\","
             "\"conditionParameters\":[{\"cpsPath\":\"%s\"}]}]}",
             path);
    parse_ok(body, SEARCH_NORTHBOUND, q);
}

Test(search, a_cps_path_of_one_comparison_is_a_column_condition)
{
    search_query q;

    cps_path("//state[@cm-handle-state='READY']", &q);
    cr_assert_not(q.needs_db);
    cr_assert_eq(q.nconds, 1);
    cr_assert_eq(q.conds[0].kind, SEARCH_COND_COLUMN);
    cr_assert_str_eq(q.conds[0].keys[0], "state");
    cr_assert_str_eq(q.conds[0].values[0], "READY");
    cr_assert_not(q.conds[0].negate);
    search_query_free(&q);

    cps_path("//cm-handle-state[text()!='READY']", &q);
    cr_assert_eq(q.conds[0].kind, SEARCH_COND_COLUMN);
    cr_assert(q.conds[0].negate);
    search_query_free(&q);
}

Test(search, other_cps_paths_need_the_database)
{
    search_query q;

    cps_path("//state[@cm-handle-state='A' or @cm-handle-state='B']", &q);
    cr_assert(q.needs_db);
    search_query_free(&q);
    cps_path("//public-properties[@name='x' and @value='y']", &q);
    cr_assert(q.needs_db);
    search_query_free(&q);
    /* a path into the private properties matches nothing: no query needed */
    cps_path("//additional-properties[@name='x']", &q);
    cr_assert_not(q.needs_db);
    cr_assert_eq(q.conds[0].kind, SEARCH_COND_NONE);
    search_query_free(&q);
}
