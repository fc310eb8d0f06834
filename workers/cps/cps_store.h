/*
 * cps_store: the CPS store's operations without HTTP, for the parts of
 * ncmpd that write data trees themselves (the REST handlers of this
 * folder, the delta report, data sync and the AVC events applied to its
 * cache). This header is the cps folder's interface to the others.
 *
 * Every operation runs on the caller's connection, in the caller's
 * transaction (begin, commit or roll back around it): a caller can make
 * several writes one unit.
 *
 * A refusal of the input (no such anchor or node, invalid data, a node
 * that exists) returns -1 with err->cls REJECT and fills *why with the
 * status and message CPS answers it with; err->msg holds the details.
 * Any other failure leaves *why as it was.
 *
 * A write or delete of a subscribed anchor also writes its data-updated
 * event, in the same transaction (cps_events.h).
 */
#ifndef NCMPD_CPS_STORE_H
#define NCMPD_CPS_STORE_H

#include <stddef.h>

#include "cps_schema.h"
#include "ncmp_buf.h"
#include "ncmp_db.h"
#include "ncmp_err.h"

/* The dataspace of NCMP's operational cache (NCMP's
 * NFP_OPERATIONAL_DATASTORE_DATASPACE_NAME): one anchor per CM handle,
 * named by its id, filled by data sync (workers/datasync/), kept current
 * by avc-apply (workers/avc/), read by the operational datastore's routes
 * (workers/rest/operational.c). */
#define CPS_OPERATIONAL_DATASPACE "NFP-Operational"

/* CPS's answer to a refused input. */
typedef struct cps_refusal {
    int status;          /* 400, 404 or 409 */
    const char *message; /* CPS's message, a constant ("DataNode not found") */
} cps_refusal;

/* An anchor of the store, resolved. */
typedef struct cps_target {
    const char *dataspace, *anchor_name; /* borrowed from the caller */
    char anchor_id[24];
    char *schema_set;   /* the anchor's schema set's name, owned */
    cps_schema *schema; /* a reference, released by cps_target_clear */
    /* the time the written data was observed, for its data-updated event
     * (CPS's observed-timestamp, yyyy-MM-dd'T'HH:mm:ss.SSSZ); NULL: none.
     * Borrowed, set by the caller after resolving. */
    const char *observed_timestamp;
} cps_target;

/* Resolve anchor `anchor` of `dataspace` with `db` and load its schema
 * set through `cache`. Unknown names are refused (404). The names are
 * borrowed: they must outlive *t. */
int cps_store_resolve(ncmp_db *db, cps_schema_cache *cache, const char *dataspace,
                      const char *anchor, cps_target *t, cps_refusal *why, ncmp_err *err);

/* The same in parts, so that the query can go in a pipeline with others
 * (ncmp_db_pipeline): the step that resolves params[1] (and params[2],
 * NULL or a second anchor) of dataspace params[0], its result to *out;
 * then each anchor from that result (`second`: params[2]'s). */
void cps_store_resolve_step(ncmp_db *db, const char *const params[3], PGresult **out,
                            ncmp_db_step *step);
int cps_store_resolved(ncmp_db *db, cps_schema_cache *cache, const PGresult *res, int second,
                       const char *dataspace, const char *anchor, cps_target *t, cps_refusal *why,
                       ncmp_err *err);

/* Release what cps_store_resolve took. Accepts a zeroed struct. */
void cps_target_clear(cps_target *t);

typedef enum cps_write_kind {
    CPS_WRITE_SAVE,         /* POST nodes: create; 409 when a node exists */
    CPS_WRITE_SAVE_LIST,    /* POST list-nodes: create list entries */
    CPS_WRITE_UPDATE,       /* PATCH nodes: merge the top nodes' leaves */
    CPS_WRITE_REPLACE,      /* PUT nodes: replace the top nodes and their subtrees */
    CPS_WRITE_REPLACE_LIST, /* PUT list-nodes: replace every entry of the lists */
} cps_write_kind;

/* Write `body` (JSON, or XML when `xml`) under `xpath` ("/" or NULL for
 * the root) of anchor `t`: parsed and checked against the anchor's schema
 * set, then stored. With `dry_run` nothing is stored and `db` is not used.
 * *nodes (may be NULL): how many data nodes the payload made. */
int cps_store_write(ncmp_db *db, const cps_target *t, cps_write_kind kind, const char *xpath,
                    const char *body, size_t len, int xml, int dry_run, size_t *nodes,
                    cps_refusal *why, ncmp_err *err);

/* The top nodes a CPS_WRITE_UPDATE of `body` (JSON) under `xpath` would
 * merge leaves into, parsed and checked as cps_store_write does, each
 * given to `fn` with its stored path and its leaves (a JSON object's
 * text), in key order; nothing is read or written. For a caller that
 * merges many updates with one statement (the avc-apply role): it locks
 * the anchors and checks that each node exists itself. */
typedef void (*cps_top_fn)(void *arg, const char *path, size_t path_len, const char *attributes,
                           size_t attributes_len);
int cps_store_update_tops(const cps_target *t, const char *xpath, const char *body, size_t len,
                          cps_top_fn fn, void *arg, cps_refusal *why, ncmp_err *err);

/* *watched: whether an anchor of `dataspace` may be subscribed to
 * data-updated events (the dataspace is named in the subscriptions, and
 * the events are on), read in the caller's transaction. A caller that
 * writes without cps_store_write or cps_store_delete (whose events it
 * would skip) must use them instead when this says 1. */
int cps_store_dataspace_watched(ncmp_db *db, const char *dataspace, int *watched, ncmp_err *err);

/* The data-updated event of a write made without cps_store_write (one
 * event with `action` and `xpath`, whatever cps.delta-notification says),
 * when anchor t is subscribed, in the write's transaction. */
int cps_store_announce(ncmp_db *db, const cps_target *t, const char *action, const char *xpath,
                       ncmp_err *err);

/* A write under the node at stored path `parent` ("" the root; `xpath`
 * its CPS xpath, for the message) needs it in anchor t: CPS's 404 in
 * *why (REJECT) when it is not there, read in the caller's transaction. */
int cps_store_parent_check(ncmp_db *db, const cps_target *t, const char *parent, const char *xpath,
                           cps_refusal *why, ncmp_err *err);

/* The rows a CPS_WRITE_SAVE of `body` (JSON, or XML when `xml`) under
 * `xpath` of anchor `t` would store, parsed and checked as
 * cps_store_write does, each given to `fn` in key order with its stored
 * path, depth and leaves (a JSON object's text, valid for the call);
 * nothing is read or written. For the delta of an anchor against a
 * payload, which compares the rows without storing them. *nodes (may be
 * NULL): how many rows. */
typedef void (*cps_row_fn)(void *arg, const char *path, size_t path_len, int depth,
                           const char *attributes, size_t attributes_len);
int cps_store_payload_rows(const cps_target *t, const char *xpath, const char *body, size_t len,
                           int xml, cps_row_fn fn, void *arg, size_t *nodes, cps_refusal *why,
                           ncmp_err *err);

/* The rows a CPS_WRITE_SAVE of `body` (JSON) at the root of anchor `t`
 * would store, parsed and checked as cps_store_write does, appended to
 * `copy` in the COPY text of fragment (anchor_id, path, depth, name,
 * attributes); nothing is written to the database. For a caller that
 * fills many empty anchors with one COPY (data sync): it locks and
 * empties the anchors itself. A refused payload appends nothing. *nodes
 * (may be NULL): how many rows. */
int cps_store_rows(const cps_target *t, const char *body, size_t len, ncmp_buf *copy, size_t *nodes,
                   cps_refusal *why, ncmp_err *err);

/* Delete the node `xpath` names and its subtree (every entry of a list
 * when it names a list, the whole tree for "/" or NULL). A missing node
 * is refused (404); the root of an empty anchor is not. */
int cps_store_delete(ncmp_db *db, const cps_target *t, const char *xpath, cps_refusal *why,
                     ncmp_err *err);

#endif
