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

/* Append to `sql` a condition selecting the handles that `path` matches.
 * On a syntax error returns -1 with a REJECT error whose message names the
 * position (1-based character offset), e.g.
 * "Invalid CPS path at position 12: expected ']'". */
int ncmp_cpspath_to_sql(const char *path, int first_param, ncmp_buf *sql,
                        ncmp_cpspath_params *params, ncmp_err *err);

void ncmp_cpspath_params_free(ncmp_cpspath_params *p);

#endif
