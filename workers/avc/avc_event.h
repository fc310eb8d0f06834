/*
 * avc_event: the CM AVC event a DMI plugin publishes on dmi-cm-events, read
 * as NCMP's CmAvcEventService reads it, and its edits' targets turned into
 * the CPS xpaths of the handle's operational cache. No I/O: pure functions
 * over the event's JSON and a compiled YANG context.
 *
 * The event (NCMP's avc-event-schema-1.0.0, RFC 8641 push-change-update
 * carrying an RFC 8072 yang-patch):
 *
 *   {"data":{"push-change-update":{"datastore-changes":{
 *     "ietf-yang-patch:yang-patch":{"patch-id":"..","edit":[
 *       {"edit-id":"..","operation":"patch","target":"/m:top/list=k",
 *        "value":{"list":[{"key":"k","leaf":"v"}]}}]}}}}}
 *
 * `value` is the data of the node the target names, as a JSON object keyed
 * by that node's name (the body CPS takes under the target's parent). The
 * schema says object; NCMP's code casts it to a String, so what it really
 * applies is JSON text in a string. Both are taken.
 *
 * `target` is RESTCONF-style (NCMP's RestConfStylePathToCpsPathUtil):
 * steps split on '/', a `module:` prefix dropped, `list=v1,v2` naming an
 * entry by its keys in the schema's order (percent-encoded). NCMP maps only
 * the first key; every key is mapped here. A step already written as CPS
 * path (`list[@k='v']`) is taken as it is.
 */
#ifndef NCMPD_AVC_EVENT_H
#define NCMPD_AVC_EVENT_H

#include <libyang/libyang.h>
#include <stddef.h>

#include "ncmp_buf.h"
#include "ncmp_err.h"

/* What an edit does to the cache, as NCMP maps its operations. */
typedef enum avc_op {
    AVC_OP_CREATE, /* "create": save the value under the target's parent */
    AVC_OP_UPDATE, /* "update" (and RFC 8072 "replace"): replace the node and
                      its subtree under the target's parent */
    AVC_OP_PATCH,  /* "patch" (and RFC 8072 "merge"): merge the leaves of the
                      value's nodes under the target's parent */
    AVC_OP_DELETE, /* "delete" (and RFC 8072 "remove"): delete the target and
                      its subtree; every node without a target */
} avc_op;

/* One edit; every string is owned by the event. */
typedef struct avc_edit {
    avc_op op;
    char *target; /* as sent; "" when there is none */
    char *value;  /* JSON text of the value; NULL when there is none */
} avc_edit;

typedef struct avc_event {
    avc_edit *edits;
    size_t n;
} avc_event;

/* The operation named `name` (case-insensitive, as NCMP upper-cases it).
 * -1 for any other ("read", "insert", "move" have no meaning for a cache). */
int avc_op_parse(const char *name, avc_op *op);

/* "create", "update", "patch", "delete". */
const char *avc_op_name(avc_op op);

/* Parse an event's JSON (`len` bytes, not NUL-terminated). A malformed
 * event, an edit without an operation, with an unknown one, or without a
 * value where it needs one is REJECT naming the edit; nothing is written
 * to *ev then. On success *ev owns copies (avc_event_clear). */
int avc_event_parse(const char *json, size_t len, avc_event *ev, ncmp_err *err);

/* Accepts a zeroed struct. */
void avc_event_clear(avc_event *ev);

/* The CPS xpaths of `target` against the schema of `ctx`: *xpath gets the
 * node's ("/" for the root: an empty target or "/"), *parent its parent's
 * ("/" for a top-level node). A step that names no node of the schema,
 * keys that do not fit the list, or a target naming a leaf or leaf-list
 * (the cache keeps nodes, not single leaves; name their container and
 * patch it) is REJECT; nothing is appended then. The buffers are
 * NUL-terminated on success. */
int avc_target_xpath(const struct ly_ctx *ctx, const char *target, ncmp_buf *xpath,
                     ncmp_buf *parent, ncmp_err *err);

#endif
