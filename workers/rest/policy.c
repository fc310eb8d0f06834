#include "policy.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "ncmp_json.h"

#define PERMISSIONS_PATH "/operation-permission/v1/permissions"

static void append_field(ncmp_buf *b, const char *name, const char *value)
{
    ncmp_buf_appendf(b, ",\"%s\":", name);
    ncmp_buf_append_json_string(b, value ? value : "");
}

int policy_body(ncmp_buf *out, const policy_op *op, ncmp_err *err)
{
    json_object *change = NULL;

    if (op->change_request) {
        ncmp_err perr;
        if (ncmp_json_parse(op->change_request, strlen(op->change_request), &change, &perr) != 0 ||
            !json_object_is_type(change, json_type_object)) {
            json_object_put(change);
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "Cannot convert Change Request data to Object");
        }
    }
    ncmp_buf_append_str(out, "{\"changeRequestFormat\":\"cm-legacy\",\"operations\":[{");
    ncmp_buf_append_str(out, "\"operation\":");
    ncmp_buf_append_json_string(out, op->operation);
    append_field(out, "entityHandleId", op->handle_id);
    append_field(out, "resourceIdentifier", op->resource_identifier);
    append_field(out, "targetIdentifier", op->target_identifier);
    if (change) {
        ncmp_buf_append_str(out, ",\"changeRequest\":");
        ncmp_buf_append_str(out,
                            json_object_to_json_string_ext(
                                change, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(change);
    }
    ncmp_buf_append_str(out, "}]}");
    return 0;
}

void policy_url(ncmp_buf *out, const char *base_url)
{
    ncmp_dmi_url_base(out, base_url);
    ncmp_buf_append_str(out, PERMISSIONS_PATH);
}

int policy_default_valid(const char *decision)
{
    return decision && (strcmp(decision, "allow") == 0 || strcmp(decision, "deny") == 0);
}

static void decide(policy_decision *out, const char *id, const char *result, const char *details)
{
    out->allowed = strcmp(result, "allow") == 0;
    out->title[0] = '\0';
    if (!out->allowed)
        snprintf(out->title, sizeof(out->title),
                 "Operation not allowed. Decision id %.60s : %.100s", id, result);
    snprintf(out->details, sizeof(out->details), "%s", details);
}

/* No decision in the answer: the default one, saying why. */
static void fall_back(policy_decision *out, const char *why, const char *default_decision)
{
    char details[512];

    snprintf(details, sizeof(details), "%.300s Falling back to configured default decision: %s",
             why, default_decision);
    decide(out, "N/A", default_decision, details);
}

void policy_decide(const ncmp_dmi_response *resp, const char *default_decision,
                   policy_decision *out)
{
    json_object *doc = NULL, *v;
    const char *id = "unknown id", *result = NULL, *message = "";
    char why[200];
    ncmp_err err;

    memset(out, 0, sizeof(*out));
    if (resp->status == 0) {
        snprintf(why, sizeof(why), "%s",
                 resp->failure == NCMP_DMI_FAIL_TIMEOUT
                     ? "Policy Executor request timed out."
                     : "Network or I/O error while attempting to contact Policy Executor.");
        fall_back(out, why, default_decision);
        return;
    }
    if (resp->status < 200 || resp->status >= 300) {
        snprintf(why, sizeof(why), "Policy Executor returned HTTP Status code %ld.", resp->status);
        fall_back(out, why, default_decision);
        return;
    }
    if (ncmp_json_parse(resp->body.data ? resp->body.data : "", resp->body.len, &doc, &err) != 0 ||
        !json_object_is_type(doc, json_type_object) ||
        !json_object_object_get_ex(doc, "permissionResult", &v) ||
        !json_object_is_type(v, json_type_string)) {
        json_object_put(doc);
        fall_back(out, "Policy Executor gave no permissionResult.", default_decision);
        return;
    }
    result = json_object_get_string(v);
    if (json_object_object_get_ex(doc, "id", &v) && !json_object_is_type(v, json_type_null))
        id = json_object_get_string(v);
    if (json_object_object_get_ex(doc, "message", &v) && json_object_is_type(v, json_type_string))
        message = json_object_get_string(v);
    decide(out, id, result, message);
    json_object_put(doc);
}
