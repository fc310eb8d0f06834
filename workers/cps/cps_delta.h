/*
 * cps_delta: CPS's delta reports. The delta between two anchors (or an
 * anchor and a payload) as [{action, xpath, sourceData, targetData}], and
 * a report applied to an anchor. docs/cps.md ("Delta") describes the
 * endpoints; cps_delta.c's header comment how a report is computed.
 *
 * This header holds the pure parts, for the unit tests; the routes are
 * registered through cps_internal.h.
 */
#ifndef NCMPD_CPS_DELTA_H
#define NCMPD_CPS_DELTA_H

#include <json-c/json.h>
#include <stddef.h>

/* The leaves of one node that differ between its source and its target
 * (both JSON objects of leaves and leaf-lists, as the fragment table's
 * attributes hold them): *src_out gets the source's value of every leaf
 * that the target lacks or holds another value of, *tgt_out the target's
 * value of every leaf the source lacks or holds another value of. Each is
 * NULL when there is none (CPS leaves an empty side out of the report),
 * otherwise a new object owned by the caller. */
void cps_delta_leaves_diff(json_object *src, json_object *tgt, json_object **src_out,
                           json_object **tgt_out);

/* Add the key leaves of the last step of stored path `path` (its
 * predicate `[@k='v' and @k2='w']`, a ' inside a value doubled) to `obj`
 * as strings, as CPS adds a list entry's keys to its side of a replace.
 * Returns how many were added (0: no predicate), -1 when the predicate is
 * malformed (nothing is added then). */
int cps_delta_key_leaves(const char *path, size_t len, json_object *obj);

/* Whether stored paths a and b are ordered as PostgreSQL's "C" collation
 * orders them: <0, 0 or >0. */
int cps_delta_path_cmp(const char *a, size_t alen, const char *b, size_t blen);

#endif
