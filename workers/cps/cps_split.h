/*
 * cps_split: a large JSON document parsed by libyang on two threads.
 *
 * A bulk write or a delta payload is mostly one long list: Open ROADM's
 * 1,000 devices are {"m:openroadm-devices": {"openroadm-device": [...]}},
 * 10.7 MB that libyang parses in 130-160 ms on one core while the other
 * waits. Such a document is cut between two entries of the list into two
 * documents with the same enclosing nodes, one parsed here and one on a
 * second thread (libyang's context is shared read-only; each thread's
 * errors are its own), and the second tree is merged into the first: 75-80
 * ms for the same 10.7 MB.
 *
 * The result is the tree the whole document gives, or nothing: a document
 * of another shape, one that either half fails to parse, or one whose
 * halves name one entry twice (the merge would join them, where the whole
 * parse keeps both for the checks that refuse them) is left to the
 * caller's parse of the whole, which says what is wrong as it always did.
 */
#ifndef NCMPD_CPS_SPLIT_H
#define NCMPD_CPS_SPLIT_H

#include <libyang/libyang.h>
#include <stddef.h>

/* Below this size a document is parsed whole (cps.split-parse-bytes, 1
 * MB): a small parse gains little from a second thread, which keeps an
 * allocator arena of its own. 0: always whole. */
void cps_split_configure(size_t min_bytes);

/* Parse the JSON document `doc` (`len` bytes, NUL-terminated) at the top
 * of `ctx`'s data with `parse_options` in two halves at once. 0 and *tree
 * (the caller's) when it did; -1 when the caller is to parse it whole. */
int cps_split_parse(const struct ly_ctx *ctx, const char *doc, size_t len, uint32_t parse_options,
                    struct lyd_node **tree);

#endif
