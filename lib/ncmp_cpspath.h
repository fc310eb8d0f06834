/*
 * ncmp_cpspath: NCMP's CPS-path subset over the inventory model
 * (dmi-registry YANG: /dmi-registry/cm-handles[@id=..] with its leaves,
 * additional-properties, public-properties, state/lock-reason, ...),
 * translated to a parameterised SQL condition on the cm_handle table.
 *
 * Accepted: absolute (/dmi-registry/cm-handles...) and descendant
 * (//state...) paths; predicates on key and leaf attributes with
 * = != < > <= >= and, or; contains(@leaf,'x'); text()='x' on a
 * leaf-list or leaf step; ancestor::<name> as the last step.
 * Paths into the private (additional) properties match nothing, as in NCMP.
 *
 * The result is a boolean SQL expression on the row alias `h` (the
 * cm_handle table) that uses parameters $first, $first+1, ...; the values
 * of those parameters are returned as text in `params`. No value from the
 * path is ever put into the SQL text.
 *
 * Meaning, in detail:
 * - A path selects the handles that contain a node it matches; `//name`
 *   matches that name anywhere in the model; ancestor:: selects proper
 *   ancestors only (as in XPath); a trailing /@leaf changes nothing.
 *   A path that ends above the handles (/dmi-registry) selects none.
 * - A node or leaf the model does not have, or one that is not stored
 *   (last-sync-time, the running datastore), makes its condition
 *   false; that is not an error. Any step named
 *   additional-properties makes the whole path `false`.
 * - 'quoted' values compare as text (< > ordered by code point, COLLATE
 *   "C"); unquoted numbers compare as numbers, with leaves whose text is
 *   a number. contains() is a substring test (strpos, never LIKE).
 * - Constant results come out as `true` or `false` with no parameters;
 *   an OR is always bracketed, so the result can be AND-ed as it is.
 * - Limits: 4096 bytes of path, 32 steps, 64 conditions; the path must
 *   be UTF-8. Beyond them: REJECT with the position.
 */
#ifndef NCMP_CPSPATH_H
#define NCMP_CPSPATH_H

#include <stddef.h>

#include "ncmp_buf.h"
#include "ncmp_err.h"

typedef struct ncmp_cpspath_params {
    char **values; /* owned */
    size_t n;
} ncmp_cpspath_params;

/* A condition that is one comparison of a column of cm_handle with its one
 * parameter: "h.<column> = $first" or "h.<column> <> $first", as the usual
 * paths are (//state[@cm-handle-state='READY'], //cm-handle-state[text()!=
 * 'READY'], /dmi-registry/cm-handles[@alternate-id='x']). The value
 * compared with is the one parameter the translation appended. */
typedef struct ncmp_cpspath_comparison {
    const char *column; /* static; NULL when the condition is anything else */
    int negate;         /* <> rather than = */
} ncmp_cpspath_comparison;

/* Append to `sql` a condition selecting the handles that `path` matches.
 * On a syntax error returns -1 with a REJECT error whose message names the
 * position (1-based character offset), e.g.
 * "Invalid CPS path at position 12: expected ']'". The parameter values
 * are appended to `params` (empty, or holding the caller's own values;
 * the caller frees them with ncmp_cpspath_params_free); on failure
 * neither `sql` nor `params` is touched. A first_param below 1 is FATAL.
 * On success, `comparison` (may be NULL) says whether the condition
 * appended is exactly one comparison of a column (see above): AND, OR,
 * contains(), ordering and numeric comparisons, expressions (timestamps,
 * data-sync-enabled) and the public properties' jsonb never are. */
int ncmp_cpspath_to_sql(const char *path, int first_param, ncmp_buf *sql,
                        ncmp_cpspath_params *params, ncmp_cpspath_comparison *comparison,
                        ncmp_err *err);

void ncmp_cpspath_params_free(ncmp_cpspath_params *p);

#endif
