/*
 * ncmp_pgarray: PostgreSQL array literals ('{"a","b"}', '{1,2}') as text
 * parameters, the way the workers pass a batch to one statement
 * (unnest($1::text[], $2::bigint[]), = ANY($1::text[])).
 *
 * Text elements are always double-quoted, with '"' and '\' escaped by a
 * backslash: inside quotes PostgreSQL's array parser takes braces, commas,
 * spaces and the word NULL literally, so no value can change the shape of
 * the array. A NULL pointer is SQL NULL (the unquoted word). The literal is
 * a parameter, never SQL text: this is about the array's structure, not
 * about SQL injection.
 *
 * Build one element by element:
 *     ncmp_pgarray_begin(&b);                  resets b: "{"
 *     ncmp_pgarray_add_text(&b, id);           per element
 *     ncmp_pgarray_end(&b);                    "}"
 * or all at once from a vector with ncmp_pgarray_text().
 */
#ifndef NCMP_PGARRAY_H
#define NCMP_PGARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "ncmp_buf.h"

/* Reset b and open an array literal in it. */
void ncmp_pgarray_begin(ncmp_buf *b);

/* Add a text element; NULL adds SQL NULL. */
void ncmp_pgarray_add_text(ncmp_buf *b, const char *s);

/* Add an integer element (for int[], bigint[]). */
void ncmp_pgarray_add_int(ncmp_buf *b, int64_t v);

/* Close the literal; b->data is then the parameter value. */
void ncmp_pgarray_end(ncmp_buf *b);

/* Reset b to the text[] literal of values[0..n) (NULL entries are SQL
 * NULL); n == 0 gives "{}". */
void ncmp_pgarray_text(ncmp_buf *b, const char *const *values, size_t n);

#endif
