/*
 * search: NCMP's CmHandleQueryParameters turned into one parameterised SQL
 * condition. The SQL itself runs in the integration suite; here: which
 * conditions are taken, what values become parameters (never SQL text),
 * and what NCMP refuses.
 */
#include <criterion/criterion.h>
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
