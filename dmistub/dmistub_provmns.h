/*
 * dmistub_provmns: what the stub answers to ProvMnS (GET, PUT, PATCH and
 * DELETE /ProvMnS/v1/{fdn}), to ProvMnS actions (POST
 * /prov-mns-extensions/v1alpha1/actions/{dn}/{action}) and to the policy
 * executor's permission requests (POST /operation-permission/v1/permissions),
 * as ONAP's reference DMI stub and policy executor stub answer them; and
 * the last of those requests, kept for the tests of a proxy in front of
 * the stub. dmistub_http routes, counts and delays; this file holds the
 * bodies, the checks and the fault markers.
 *
 * The sample of the GET answer's "attributes" (and of the PATCH answer's
 * first item) is an RFC 8345 topology generated here, pretty-printed and
 * padded to exactly DMISTUB_PROVMNS_SAMPLE_LEN bytes, the size of the
 * reference's sample. The answers are built once, in dmistub_provmns_new.
 *
 * Everything here is thread-safe.
 */
#ifndef DMISTUB_PROVMNS_H
#define DMISTUB_PROVMNS_H

#include <json-c/json.h>
#include <stddef.h>

#include "ncmp_buf.h"
#include "ncmp_err.h"

#define DMISTUB_PROVMNS_SAMPLE_LEN 5696

/* The answers of PUT and of an action (constant). */
#define DMISTUB_PROVMNS_PUT_BODY                                                                   \
    "{\"id\":\"Id set by Stub\",\"objectClass\":\"ObjectClass set by Stub\","                      \
    "\"objectInstance\":\"ObjectInstance set by Stub\",\"attributes\":\"Attribute set by Stub\"}"
#define DMISTUB_PROVMNS_ACTION_BODY                                                                \
    "{\"customProperties\":{\"KeySetByStub\":\"ValueSetByStub\"},\"value\":null}"

typedef struct dmistub_provmns dmistub_provmns;

/* Build the answers. Owned by the caller (dmistub_provmns_free). */
dmistub_provmns *dmistub_provmns_new(void);

void dmistub_provmns_free(dmistub_provmns *p);

/* The sample, the body of a GET ({"id","objectClass","objectInstance",
 * "attributes":<the sample as a string>}) and of a PATCH (a JSON Patch of
 * two items: add of the sample, remove). Borrowed until
 * dmistub_provmns_free. */
const char *dmistub_provmns_sample(const dmistub_provmns *p, size_t *len);
const char *dmistub_provmns_get_body(const dmistub_provmns *p, size_t *len);
const char *dmistub_provmns_patch_body(const dmistub_provmns *p, size_t *len);

/* The dmiSimulation markers of a ProvMnS path: each segment (between '/'
 * or ',') "dmiSimulation=httpError_<3 digits>" sets *http_error (a status
 * from 200 to 599; others are ignored) and "dmiSimulation=slowResponse_<ms>"
 * adds ms to *slow_ms. Both start at 0. */
void dmistub_provmns_simulation(const char *path, unsigned *http_error, long *slow_ms);

/* Is `content_type` (parameters ignored, case-insensitive) one of the
 * NULL-terminated `accepted` media types? */
int dmistub_media_type_in(const char *content_type, const char *const *accepted);

/* A PATCH body: a JSON array of objects, each with "op" (add, replace,
 * remove, copy, move or test) and "path" (a string). Else a REJECT naming
 * the item. */
int dmistub_provmns_check_patch(json_object *doc, ncmp_err *err);

/* --- the policy executor stub --------------------------------------------- */

typedef struct dmistub_policy_sim {
    unsigned http_error; /* 0: none */
    long slow_ms;
    char result[64]; /* "" unless policyResponse_<word> */
} dmistub_policy_sim;

/* A permission request, as the reference checks it: an object with
 * "changeRequestFormat" (a string) and a non-empty "operations" array of
 * objects with "operation" and "targetIdentifier" (strings; the other
 * fields strings or null when present); the first operation, unless a
 * delete, needs a non-null "changeRequest". *first_resource is the first
 * operation's resourceIdentifier ("" when absent), borrowed from doc. A
 * failure is a REJECT saying what is wrong. */
int dmistub_policy_check(json_object *doc, const char **first_resource, ncmp_err *err);

/* The reference's marker in a resourceIdentifier: policySimulation=
 * slowResponse_<1-3 digits: seconds>, httpError_<3 digits: 200..599> or
 * policyResponse_<word>. The first marker counts. */
void dmistub_policy_simulation(const char *resource_identifier, dmistub_policy_sim *sim);

/* --- the last requests, for GET /stub/provmns/last and /stub/policy/last --- */

/* Keep {"method","path","query","contentType","authorization","body"}
 * (NULL strings become ""). */
void dmistub_provmns_keep(dmistub_provmns *p, const char *method, const char *path,
                          const char *query, const char *content_type, const char *authorization,
                          const char *body);

/* Keep {"authorization","body"}: the body as received when it is JSON,
 * else as a string. */
void dmistub_policy_keep(dmistub_provmns *p, const char *authorization, const char *body,
                         size_t len);

/* A copy of what was kept (the caller frees it), or NULL when nothing. */
char *dmistub_provmns_last(dmistub_provmns *p);
char *dmistub_policy_last(dmistub_provmns *p);

/* Forget both. */
void dmistub_provmns_forget(dmistub_provmns *p);

#endif
