/*
 * cps_query: a CPS path over any YANG model, translated to one
 * parameterised SELECT on the CPS store's fragment table
 * (migrations/0008_cps_fragment_path.sql: one row per container or list
 * entry, `path` the node's xpath with U+0001 for each step separator,
 * `name` its last step's node name, `depth` its number of steps,
 * `attributes` its own leaves).
 *
 * What the path means (docs/cps.md, "CPS path"):
 * - /a/b: the nodes at exactly that place; //b: every node named b, at any
 *   depth; /a//b: every b below /a. The last step, when it names a list,
 *   selects all its entries. prefix:name is name.
 * - A step before the last is, as in CPS, a container (a name alone) or a
 *   list entry given by its whole key ([@k='v' and @l='w'], compared as
 *   the text of the stored xpath, so 1 and '1' both match a key 1). Any
 *   other condition there is refused.
 * - The last step's conditions test its own leaves: a quoted value
 *   compares with string leaves (by code point), an unquoted number with
 *   number leaves; a missing leaf, or one of the other type, never
 *   matches; and binds tighter than or; contains(@leaf,'s') is a substring
 *   test of a string or number leaf. A condition made only of equalities
 *   also matches the node whose key it spells, as CPS's xpath would.
 * - /leaf[text()='v'] after the last node step selects that node when its
 *   leaf, or an entry of its leaf-list, satisfies the condition (a quoted
 *   value compares with the text of strings and numbers).
 * - /ancestor::a/b[...]: for each node matched, its nearest proper
 *   ancestor whose path ends with a/b (b any node of that name, a a step
 *   before the last as above; b's conditions then test that ancestor);
 *   each once.
 * - A trailing /@leaf: the distinct values of that leaf among the nodes.
 * - At most 4 '//' after the first step (each is a join); the parser's
 *   limits (ncmp_cpspath_parse.h) hold too.
 *
 * No value or name from the path is ever put in the SQL text: all become
 * parameters. Every selection starts from an equality on `name` (index
 * fragment_store_name; the operational cache's partition has none, its
 * anchors are read through the primary key) and, for absolute paths, a
 * range of `path` (the primary key); no regular expression is used.
 */
#ifndef NCMPD_CPS_QUERY_H
#define NCMPD_CPS_QUERY_H

#include "ncmp_buf.h"
#include "ncmp_cpspath.h"
#include "ncmp_err.h"

typedef enum cps_query_kind {
    CPS_QUERY_NODES, /* rows (anchor_id bigint, path text, depth smallint) */
    CPS_QUERY_LEAF,  /* rows (anchor_id bigint, value jsonb) */
} cps_query_kind;

/* Append to `sql` one SELECT over the anchors whose ids the caller binds as
 * parameter $<anchors_param> (a bigint[]):
 * - CPS_QUERY_NODES: the matched nodes as (anchor_id, path, depth), each
 *   once per anchor, ORDER BY anchor_id, path;
 * - CPS_QUERY_LEAF (the path ends in /@leaf): the distinct values of that
 *   leaf among the matched nodes, as (anchor_id, value), without SQL or
 *   JSON nulls, ORDER BY anchor_id, value. When `leaf` is not NULL, *leaf
 *   gets a copy of the leaf's name (owned by the caller, free()); for a
 *   node query it is set to NULL.
 * The values of the parameters $first_param, $first_param+1, ... are
 * appended to `params` (which may hold the caller's own; free with
 * ncmp_cpspath_params_free); *kind says which SELECT it is.
 *
 * A path that does not parse, or that uses what has no meaning here (see
 * above), is REJECT "Invalid CPS path at position N: ..." (N counts
 * characters from 1). On failure nothing is written to the outputs.
 * anchors_param below 1, or first_param not above it, is FATAL. */
int cps_query_to_sql(const char *cpspath, int anchors_param, int first_param, ncmp_buf *sql,
                     ncmp_cpspath_params *params, cps_query_kind *kind, char **leaf, ncmp_err *err);

/* The same, a node query also selecting each matched node's leaves as a
 * fourth column, `attributes` (jsonb): an answer without descendants is
 * read from it, instead of a second look-up of each match's row. */
int cps_query_to_sql_leaves(const char *cpspath, int anchors_param, int first_param, ncmp_buf *sql,
                            ncmp_cpspath_params *params, cps_query_kind *kind, char **leaf,
                            ncmp_err *err);

#endif
