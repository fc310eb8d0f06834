/*
 * What the CPS API's handler files share: the API's state and the small
 * answers every handler gives the same way (CPS's status codes and error
 * body). Not for use outside workers/cps/.
 */
#ifndef NCMPD_CPS_INTERNAL_H
#define NCMPD_CPS_INTERNAL_H

#include <json-c/json.h>

#include "cps.h"
#include "cps_analyze.h"
#include "cps_schema.h"
#include "cps_store.h"

typedef struct cps_anchor_cache cps_anchor_cache;

struct cps_api {
    const ncmp_config *cfg;
    rest_pool *pool;
    cps_schema_cache *schemas;
    cps_anchor_cache *anchors; /* the anchors reads resolved, by name */
    cps_analyzer *analyzer;    /* fresh statistics after bulk writes */
};

#define CPS_POOL_WAIT_MS 5000

/* The {v} of the path as a number, 1 to `max`; anything else is answered
 * 404 and gives 0. */
int cps_api_version(ncmp_http_request *req, int max);

/* CPS's names (dataspaces, schema sets, anchors): 400 and -1 when
 * missing or with characters other than letters, digits and -_.:@~. */
int cps_name_valid(ncmp_http_request *req, const char *what, const char *name);

/* CPS's error body, details from a format. */
void cps_respond_error(ncmp_http_request *req, int status, const char *message, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));

/* One autocommit statement on a pooled connection; answers the request
 * and returns -1 on failure. *res is the caller's. */
int cps_run_one(ncmp_http_request *req, cps_api *api, const char *sql, int nparams,
                const char *const *params, PGresult **res);

/* 201: v1 answers the name as text, v2 nothing. */
void cps_respond_created(ncmp_http_request *req, int version, const char *name);

/* 1 when dataspace `name` exists; otherwise answers 404 (or the database
 * error) and gives 0. */
int cps_dataspace_exists(ncmp_http_request *req, cps_api *api, const char *name);

void cps_anchor_not_found(ncmp_http_request *req, const char *dataspace, const char *anchor);

/* Answer a store operation's failure: CPS's status for a refusal, the
 * database error's otherwise. */
void cps_respond_refusal(ncmp_http_request *req, const cps_refusal *why, const ncmp_err *err);

/* Resolve the request's anchor and load its schema set, on a connection
 * of the pool given back at once. Answers 404 (or the error) and returns
 * -1 when it cannot. */
int cps_target_resolve_pooled(ncmp_http_request *req, cps_api *api, cps_target *t);

/* The same for the anchor `anchor` of `dataspace` (borrowed: they must
 * outlive *t). */
int cps_target_resolve_named(ncmp_http_request *req, cps_api *api, const char *dataspace,
                             const char *anchor, cps_target *t);

/* The anchors a read or a write resolved, remembered by name, so that the
 * next read of one goes to the database once: its rows and the anchor's
 * check in one round trip, in one snapshot (rest_db_stream_checked); a
 * write's check is its lock of the anchor's row. An anchor deleted, or
 * deleted and made again, fails the check, is forgotten and resolved
 * anew. A fixed number of slots: a name takes its slot's place. */
cps_anchor_cache *cps_anchor_cache_new(void);
void cps_anchor_cache_destroy(cps_anchor_cache *c);

/* A read's or a write's anchor: recalled (*recalled 1, to be checked by
 * cps_read_stream or the write's lock) when `recall` and it is
 * remembered, resolved otherwise (and remembered). Answers 404 (or the
 * error) and returns -1 when it cannot. */
int cps_read_target(ncmp_http_request *req, cps_api *api, const char *dataspace, const char *anchor,
                    int recall, cps_target *t, int *recalled);

/* rest_db_stream of a read of t's anchor (t from cps_read_target, its
 * schema still held), as a small read when `small` says how (NULL: a
 * cursor). When t was recalled, the anchor is checked
 * in the read's own round trip: 1 when it has changed (nothing answered,
 * `state` freed, the anchor forgotten): the caller reads again with
 * recall 0. 0: answered. */
int cps_read_stream(ncmp_http_request *req, cps_api *api, const cps_target *t, int recalled,
                    const rest_db_small *small, const char *sql, int nparams,
                    const char *const *params, int block_rows, const rest_stream_ops *ops,
                    void *state);

/* The implemented module of `ctx` with a top-level data node `name`. */
const struct lys_module *cps_top_module(const struct ly_ctx *ctx, const char *name, size_t len);

/* An XML payload as JSON: parsed with the anchor's schema under the node
 * at `path` (stored form, "" for the top), as a write under it would
 * parse it, and written back as one object of the payload's nodes
 * ({"module:name": ...}, a list's entries in one array, values typed as
 * their leaves are). -1 (NCMP_ERR_REJECT for data the model or XML
 * refuses) otherwise. *out is the caller's. */
int cps_store_xml_to_json(const cps_target *t, const char *path, const char *xml, size_t len,
                          json_object **out, ncmp_err *err);

/* The write routes (cps_data.c), the read routes (cps_read.c) and the
 * delta routes (cps_delta.c). */
void cps_data_routes_add(cps_api *api, ncmp_http_server *server);
void cps_read_routes_add(cps_api *api, ncmp_http_server *server);
void cps_delta_routes_add(cps_api *api, ncmp_http_server *server);

/* A write's delta, for its data-updated events (cps_events.c), in the
 * write's transaction. cps_delta_snapshot copies the subtree at stored
 * path `path` of t (and its ancestors) to a new scratch anchor (*id),
 * which the caller deletes before the commit. cps_delta_each gives every
 * entry of the grouped delta from anchor `src_id` to `tgt_id` under
 * `path`, with all descendants, to `fn` (its data borrowed for the
 * call). */
int cps_delta_snapshot(ncmp_db *db, const cps_target *t, const char *path, char *id, size_t idlen,
                       ncmp_err *err);
typedef int (*cps_delta_entry_fn)(void *arg, const char *action, const char *xpath,
                                  json_object *source, json_object *target, ncmp_err *err);
int cps_delta_each(ncmp_db *db, const char *src_id, const char *tgt_id, const char *path,
                   cps_delta_entry_fn fn, void *arg, ncmp_err *err);

/* cps_read.c's reads of a subtree, shared with the delta: $1 the anchor,
 * $2 the deepest depth, $3..$6 the ranges of cps_path_ranges_of (lo1,
 * hi1, lo2, hi2); rows (path, depth, attributes) in key order. READ_ALL
 * scans the range ($2 must be > 0), READ_WALK jumps over what is deeper
 * than $2. cps_sql_read_bounded gives the read for a deepest depth
 * (CPS_DEPTH_ALL: every descendant): READ_ALL, READ_WALK, or, down to
 * CPS_DEPTH_INDEXED, range scans of the indexes on the rows near the
 * top (migrations/0018_cps_fragment_depth.sql, 0021). */
#define CPS_DEPTH_ALL     32767
#define CPS_DEPTH_INDEXED 3
extern const char CPS_SQL_READ_ALL[];
extern const char CPS_SQL_READ_WALK[];
const char *cps_sql_read_bounded(int maxdepth);

/* The `descendants` (v2, v3) or `include-descendants` (v1) of the
 * request as a depth: -1 all, 0 none, N. Answers 400 and returns -1 when
 * it is not one. */
int cps_descendants_asked(ncmp_http_request *req, int version, int *depth);

/* The read's tree writer as CPS's data map of a delta report entry: rows
 * (path, depth, attributes in columns 0 and 2) in key order in, the nodes
 * as members {name: {..}, list: [{..}, ..]} of one object out (XML: the
 * elements side by side), names without module prefixes. Owned by the
 * caller (cps_tree_writer_free, which accepts NULL). */
typedef struct tree_writer cps_tree_writer;
cps_tree_writer *cps_tree_writer_new(int xml);
void cps_tree_writer_head(cps_tree_writer *w, ncmp_buf *out);
void cps_tree_writer_row(cps_tree_writer *w, const PGresult *res, int row, ncmp_buf *out);
/* The same for a row given as its stored path and its attributes' text. */
void cps_tree_writer_text(cps_tree_writer *w, const char *path, size_t len, const char *attrs,
                          size_t alen, ncmp_buf *out);
void cps_tree_writer_tail(cps_tree_writer *w, ncmp_buf *out);
void cps_tree_writer_free(cps_tree_writer *w);

/* Append `s` with XML's special characters escaped. */
void cps_xml_text(ncmp_buf *out, const char *s, size_t len);

#endif
