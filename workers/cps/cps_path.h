/*
 * cps_path: the xpaths of CPS's data API and the form they are stored in.
 *
 * A client names a node with CPS's xpath: steps without module prefixes
 * (a prefix is accepted and dropped), list entries with key predicates
 * `[@k='v' and @k2="w"]` in any order, values quoted either way or bare.
 * The fragment table keys a node by its *stored path*
 * (migrations/0008_cps_fragment_path.sql): the same steps with U+0001 as
 * the step separator, the keys sorted by their `@k='v'` text and joined
 * with " and ", every value in single quotes with a ' doubled, as CPS
 * writes them. Encoding a client's xpath gives the one stored path that
 * names the same node, however the client spelled it.
 */
#ifndef NCMPD_CPS_PATH_H
#define NCMPD_CPS_PATH_H

#include <stddef.h>

#include "ncmp_buf.h"
#include "ncmp_err.h"

#define CPS_PATH_SEP     '\x01'
#define CPS_PATH_MAX     8192 /* bytes of a client's xpath */
#define CPS_PATH_MAX_KEY 16   /* keys in one predicate */

/* Append the stored path of `xpath` to `out` ("/" and "" give nothing:
 * the root). A malformed xpath is REJECT naming the position; nothing is
 * appended then. */
int cps_path_encode(const char *xpath, ncmp_buf *out, ncmp_err *err);

/* Append CPS's xpath of a stored path ("/" for the root). */
void cps_path_decode(const char *path, size_t len, ncmp_buf *out);

/* Append libyang's path of a stored path, with `module:` on the first step
 * (`/m:a/b[k='v'][k2='w']`). A value holding both quote characters cannot
 * be written in libyang's syntax: REJECT. */
int cps_path_to_libyang(const char *path, const char *module, ncmp_buf *out, ncmp_err *err);

/* The node name of the first step of a stored path (len 0 for the root). */
void cps_path_first_name(const char *path, const char **name, size_t *len);

/* The node name of the last step of a stored path, without its
 * predicate (len 0 for the root). */
void cps_path_last_name(const char *path, size_t path_len, const char **name, size_t *len);

/* The number of steps of a stored path (0 for the root). */
int cps_path_depth(const char *path, size_t len);

/* Length of the parent's stored path (0 for a top-level node). */
size_t cps_path_parent_len(const char *path, size_t len);

/* Whether the last step of a stored path has a key predicate. */
int cps_path_is_list_entry(const char *path, size_t len);

/* What an xpath names, as ranges of the key: [lo1, hi1) is the node and
 * its subtree (every node for the root), and, when the last step has no
 * keys (it may name a list), [lo2, hi2) the list's entries and their
 * subtrees; otherwise lo2 = hi2 = hi1, an empty range. hi1 <= lo2: the
 * gap between them holds the node's siblings whose names extend its own
 * (`name-x`), which are not named. NUL-terminated; free with
 * cps_path_ranges_free. */
typedef struct cps_path_ranges {
    ncmp_buf lo1, hi1, lo2, hi2;
} cps_path_ranges;

void cps_path_ranges_of(const char *path, size_t len, cps_path_ranges *r);
void cps_path_ranges_free(cps_path_ranges *r);

#endif
