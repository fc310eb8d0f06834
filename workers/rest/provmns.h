/*
 * provmns: 3GPP ProvMnS (TS 28.532) and NCMP's ProvMnS extensions in the
 * rest role, forwarded to the DMI plugins as NCMP does (docs/rest.md).
 *
 *   GET|PUT|PATCH|DELETE /ProvMnS/v1/<FDN>
 *       GET: ?scopeType=&scopeLevel=&filter=&attributes=&fields=&dataNodeSelector=
 *   POST /prov-mns-extensions/v1alpha1/actions/<DN>/<action>
 *
 * The FDN (a path of any depth, not encoded) resolves to a CM handle by
 * the longest alternate-id match (handle_cache_longest: the in-process
 * map, the database only for what it misses). The handle must have a
 * dataProducerIdentifier (else 422) and be READY (else 406). Writes are
 * checked with the policy executor when it is on (policy.h): PUT as a
 * create, DELETE as a delete, each PATCH item in turn as what it does.
 * Then the request goes to {dmi}/ProvMnS/v1/<FDN> (or
 * {dmi}/prov-mns-extensions/v1alpha1/actions/<DN>/<action>) with the
 * client's Authorization, and the DMI's status, content type and body come
 * back as they are. No server thread waits: the calls go through the DMI
 * client's event loop (data_submit).
 *
 * Errors have 3GPP's body {"status":"404","type":"IE_NOT_FOUND",
 * "title":..} (PATCH errors about one item add "badOp":"/<index>"):
 * 400 VALIDATION_ERROR (malformed body or query, a write on the handle's
 * root object), 404 IE_NOT_FOUND (no handle matches), 406 not READY or an
 * Accept it cannot produce, 409 refused by the policy executor, 413 more
 * than provmns.max-patch-operations items, 415 another content type,
 * 422 SERVER_LIMITATION (no data producer, an FDN whose last segment is
 * not class=id), 500 the DMI could not be reached, 504 the DMI timed out.
 */
#ifndef NCMPD_PROVMNS_H
#define NCMPD_PROVMNS_H

#include <json-c/json.h>

#include "ncmp_err.h"
#include "ncmp_http.h"

typedef struct data data;

/* Add the routes to `srv` (not started yet); `d` is borrowed and must
 * outlive the server. */
void provmns_routes_add(data *d, ncmp_http_server *srv);

/* Why a PATCH body was refused: the status (400 malformed, 413 too many
 * items), the title and detail of the answer, and the index of the bad
 * item (badOp; -1 for the body as a whole). */
typedef struct provmns_patch_error {
    int status, badop;
    char title[256];
    char detail[NCMP_ERR_MSG_MAX];
} provmns_patch_error;

/* The items of a ProvMnS PATCH body (a JSON Patch array of at most `max`
 * items, each with a known op, a path, and the value or from its op
 * needs): 0 with *items owned by the caller, or -1 with *e filled and
 * *items NULL. */
int provmns_patch_parse(const char *body, size_t len, int max, json_object **items,
                        provmns_patch_error *e);

/* --- for tests ------------------------------------------------------------ */

/* The FDN of `path` up to and including its last segment holding '='
 * (`nth` = 1), or its second last (`nth` = 2, the parent); "" when there
 * is none. Owned by the caller. */
char *provmns_fdn_prefix(const char *path, int nth);

/* Append `fdn` to *out percent-encoded as a URL path: '/' and RFC 3986's
 * pchar characters stay, everything else becomes %XX. */
void provmns_encode_path(ncmp_buf *out, const char *fdn);

#endif
