/*
 * policy: NCMP's policy executor client - the permission request before a
 * write, and the decision read from the answer.
 *
 * When policy-executor.enabled is on, every pass-through write on
 * passthrough-running and every ProvMnS PUT, PATCH item and DELETE is
 * first posted to
 *     POST <policy-executor.url>/operation-permission/v1/permissions
 *     {"changeRequestFormat":"cm-legacy","operations":[{"operation":..,
 *      "entityHandleId":..,"resourceIdentifier":..,"targetIdentifier":..,
 *      "changeRequest":{..}}]}
 * (changeRequest left out for a delete), with the client's Authorization
 * forwarded. The write goes on only when the answer's permissionResult is
 * "allow"; anything else is a 409 with "Operation not allowed. Decision id
 * <id> : <result>" and the policy's message. When the executor cannot be
 * asked (no connection, a timeout, an HTTP error, an answer that is not a
 * decision), policy-executor.default-decision applies, with the reason.
 *
 * The request is sent through the DMI client (ncmp_dmi_submit), so no
 * server thread waits for it; the callers (data.c) chain the write from
 * its completion. This file only builds and reads: it has no state.
 */
#ifndef NCMPD_POLICY_H
#define NCMPD_POLICY_H

#include "ncmp_buf.h"
#include "ncmp_config.h"
#include "ncmp_dmi.h"
#include "ncmp_err.h"

/* One operation to permit. */
typedef struct policy_op {
    const char *operation;           /* "create", "update", "patch", "delete" */
    const char *handle_id;           /* entityHandleId */
    const char *resource_identifier; /* what the write addresses within the handle */
    const char *target_identifier;   /* the handle's alternate id ("" when none) */
    const char *change_request;      /* a JSON object as text; NULL for a delete */
} policy_op;

/* The permission request of `op`, appended to *out. REJECT when
 * change_request is given but is not a JSON object (NCMP: "Cannot convert
 * Change Request data to Object"). */
int policy_body(ncmp_buf *out, const policy_op *op, ncmp_err *err);

/* <url>/operation-permission/v1/permissions, appended to *out. */
void policy_url(ncmp_buf *out, const char *base_url);

typedef struct policy_decision {
    int allowed;
    char title[256];   /* "Operation not allowed. Decision id 7 : deny" when refused */
    char details[512]; /* the policy's message, or why the default decision applied */
} policy_decision;

/* The decision of `resp` (the executor's answer, or a failure to get one),
 * with `default_decision` ("allow" or "deny") when there is none. */
void policy_decide(const ncmp_dmi_response *resp, const char *default_decision,
                   policy_decision *out);

/* Is `decision` a valid policy-executor.default-decision? */
int policy_default_valid(const char *decision);

#endif
