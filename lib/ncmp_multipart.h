/*
 * ncmp_multipart: the parts of a multipart/form-data body (RFC 7578), as
 * CPS's schema-set upload sends them (field `file`, one .yang or .zip).
 *
 * ncmp_http hands a handler the whole body (bounded by http.max-body-bytes),
 * so the parts are found in place: no copy of their content is made.
 */
#ifndef NCMP_MULTIPART_H
#define NCMP_MULTIPART_H

#include <stddef.h>

#include "ncmp_err.h"

typedef struct ncmp_multipart_part {
    char *name;       /* the form field name (owned by the array) */
    char *filename;   /* the file name, NULL when the part has none (owned) */
    const char *data; /* the content: points into the body (borrowed) */
    size_t len;
} ncmp_multipart_part;

/* Split `body` (len bytes) by the boundary named in `content_type` (the
 * request's Content-Type). On success *parts is a new array of *nparts
 * parts owned by the caller (ncmp_multipart_free); their `data` point into
 * `body`, which must outlive them. A content type that is not multipart,
 * a missing boundary or a body that is not made of parts is REJECT. */
int ncmp_multipart_parse(const char *content_type, const char *body, size_t len,
                         ncmp_multipart_part **parts, size_t *nparts, ncmp_err *err);

/* The first part of field `name`, or NULL. */
const ncmp_multipart_part *ncmp_multipart_find(const ncmp_multipart_part *parts, size_t nparts,
                                               const char *name);

/* Free the array and its names. Accepts NULL. */
void ncmp_multipart_free(ncmp_multipart_part *parts, size_t nparts);

#endif
