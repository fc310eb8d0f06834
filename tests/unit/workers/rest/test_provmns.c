/*
 * provmns and policy: the FDN arithmetic NCMP's ProvMnS uses (longest
 * match candidates, parent FDNs, the DMI path), the policy executor's
 * request body and how its answers become decisions. The HTTP paths run
 * against the DMI stub in the integration suite (test_provmns.c).
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "handle_cache.h"
#include "policy.h"
#include "provmns.h"

static void candidates_are(const char *ref, const char *const *want, size_t nwant)
{
    size_t n;
    char **got = handle_candidates(ref, &n);

    cr_assert_eq(n, nwant, "%s: %zu candidates, not %zu", ref, n, nwant);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(got[i], want[i], "%s: candidate %zu", ref, i);
    handle_candidates_free(got, n);
}

Test(provmns, longest_match_candidates_cut_at_hash_then_at_each_slash)
{
    const char *const a[] = {"/A=1/B=2/C=3", "/A=1/B=2", "/A=1"};
    const char *const b[] = {"/A=1/B=2", "/A=1"};
    const char *const c[] = {"ch-1"};
    const char *const d[] = {"A=1/B=2", "A=1"};

    candidates_are("/A=1/B=2/C=3", a, 3);
    candidates_are("/A=1/B=2#/attributes/x/y", b, 2);
    candidates_are("ch-1", c, 1);
    candidates_are("A=1/B=2", d, 2);
    candidates_are("#/attributes", NULL, 0);
    candidates_are("", NULL, 0);
}

static void prefix_is(const char *path, int nth, const char *want)
{
    char *got = provmns_fdn_prefix(path, nth);
    cr_assert_str_eq(got, want, "%s (%d)", path, nth);
    free(got);
}

Test(provmns, fdn_and_parent_end_at_segments_holding_equals)
{
    prefix_is("/A=1/B=2/C=3", 1, "/A=1/B=2/C=3");
    prefix_is("/A=1/B=2/C=3", 2, "/A=1/B=2");
    prefix_is("/A=1/B=2/C=3#/attributes/plmnId/mcc", 1, "/A=1/B=2/C=3#");
    prefix_is("/A=1/B=2/C=3#/attributes/plmnId/mcc", 2, "/A=1/B=2");
    prefix_is("/A=1", 2, "");
    prefix_is("/nothing/here", 1, "");
}

Test(provmns, dmi_path_keeps_separators_and_encodes_the_rest)
{
    ncmp_buf b = NCMP_BUF_INIT;

    provmns_encode_path(&b, "/SubNetwork=Europe/ManagedElement=My Node#x?y%/é,(1):@");
    cr_assert_str_eq(b.data, "/SubNetwork=Europe/ManagedElement=My%20Node%23x%3Fy%25/%C3%A9,(1):@");
    ncmp_buf_free(&b);
}

Test(policy, body_has_ncmp_fields_and_no_change_request_for_a_delete)
{
    ncmp_buf b = NCMP_BUF_INIT;
    ncmp_err err;
    const policy_op update = {"update", "ch-1", "/child=1", "/A=1", "{\"c\":[{\"id\":\"1\"}]}"};
    const policy_op del = {"delete", "ch-1", "/child=1", "/A=1", NULL};

    cr_assert_eq(policy_body(&b, &update, &err), 0, "%s", err.msg);
    cr_assert_str_eq(b.data, "{\"changeRequestFormat\":\"cm-legacy\",\"operations\":[{"
                             "\"operation\":\"update\",\"entityHandleId\":\"ch-1\","
                             "\"resourceIdentifier\":\"/child=1\",\"targetIdentifier\":\"/A=1\","
                             "\"changeRequest\":{\"c\":[{\"id\":\"1\"}]}}]}");
    ncmp_buf_reset(&b);
    cr_assert_eq(policy_body(&b, &del, &err), 0, "%s", err.msg);
    cr_assert_null(strstr(b.data, "changeRequest\""));
    ncmp_buf_free(&b);
}

Test(policy, change_request_that_is_not_an_object_is_refused)
{
    ncmp_buf b = NCMP_BUF_INIT;
    ncmp_err err;
    const policy_op xml = {"create", "ch-1", "x", "", "<a>1</a>"};
    const policy_op list = {"create", "ch-1", "x", "", "[1]"};

    cr_assert_eq(policy_body(&b, &xml, &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT);
    cr_assert(strstr(err.msg, "Cannot convert Change Request"));
    cr_assert_eq(policy_body(&b, &list, &err), -1);
    ncmp_buf_free(&b);
}

static void decide_on(long status, ncmp_dmi_failure failure, const char *body, const char *dflt,
                      policy_decision *dec)
{
    ncmp_dmi_response r;

    memset(&r, 0, sizeof(r));
    r.status = status;
    r.failure = failure;
    if (body)
        ncmp_buf_append_str(&r.body, body);
    policy_decide(&r, dflt, dec);
    ncmp_buf_free(&r.body);
}

Test(policy, only_allow_allows)
{
    policy_decision d;

    decide_on(200, NCMP_DMI_OK, "{\"id\":\"7\",\"permissionResult\":\"allow\",\"message\":\"ok\"}",
              "deny", &d);
    cr_assert(d.allowed);
    decide_on(200, NCMP_DMI_OK,
              "{\"id\":\"8\",\"permissionResult\":\"deny\",\"message\":\"not today\"}", "allow",
              &d);
    cr_assert_not(d.allowed);
    cr_assert_str_eq(d.title, "Operation not allowed. Decision id 8 : deny");
    cr_assert_str_eq(d.details, "not today");
    decide_on(200, NCMP_DMI_OK, "{\"id\":9,\"permissionResult\":\"Allow\"}", "allow", &d);
    cr_assert_not(d.allowed, "only the exact word allows");
    cr_assert_str_eq(d.title, "Operation not allowed. Decision id 9 : Allow");
}

Test(policy, no_decision_falls_back_to_the_default_with_the_reason)
{
    policy_decision d;

    decide_on(0, NCMP_DMI_FAIL_TIMEOUT, NULL, "deny", &d);
    cr_assert_not(d.allowed);
    cr_assert_str_eq(d.title, "Operation not allowed. Decision id N/A : deny");
    cr_assert(strstr(d.details, "timed out"), "%s", d.details);
    cr_assert(strstr(d.details, "default decision: deny"), "%s", d.details);
    decide_on(0, NCMP_DMI_FAIL_CONNECT, NULL, "allow", &d);
    cr_assert(d.allowed);
    decide_on(500, NCMP_DMI_OK, "{}", "deny", &d);
    cr_assert_not(d.allowed);
    cr_assert(strstr(d.details, "HTTP Status code 500"), "%s", d.details);
    decide_on(200, NCMP_DMI_OK, "", "deny", &d);
    cr_assert_not(d.allowed, "an empty answer is no permission");
    decide_on(200, NCMP_DMI_OK, "{\"permissionResult\":true}", "deny", &d);
    cr_assert_not(d.allowed);
    cr_assert(policy_default_valid("allow") && policy_default_valid("deny"));
    cr_assert_not(policy_default_valid("maybe"));
}

Test(policy, url_appends_the_permissions_path_once)
{
    ncmp_buf b = NCMP_BUF_INIT;

    policy_url(&b, "http://policy:8080//");
    cr_assert_str_eq(b.data, "http://policy:8080/operation-permission/v1/permissions");
    ncmp_buf_free(&b);
}
