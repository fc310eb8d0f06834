/*
 * ncmp_jscan: a strict JSON scanner that builds nothing.
 *
 * It walks one JSON text in place and hands back spans of it (tokens), so
 * that a large body can be checked and picked apart without a tree: the
 * DMI stub's check of a 100,000-operation sub-job, and the data-job
 * operations ncmpd splits. Its syntax is ncmp_json_parse's (RFC 8259,
 * valid UTF-8, no \u0000, nesting at most NCMP_JSCAN_MAX_DEPTH deep), so
 * what one takes the other takes.
 *
 * Usage: ncmp_jscan_init, then ncmp_jscan_value for any value, or
 * ncmp_jscan_members / ncmp_jscan_items with a callback to look inside an
 * object or array, then ncmp_jscan_end. The first error is kept in the
 * ncmp_err given to init (REJECT, with the reason and the byte offset).
 */
#ifndef NCMP_JSCAN_H
#define NCMP_JSCAN_H

#include <stddef.h>

#include "ncmp_err.h"

#define NCMP_JSCAN_MAX_DEPTH 64

/* A span of the text, borrowed from it: a string with its quotes and its
 * escapes as written, a number, a literal, or a whole object or array. */
typedef struct ncmp_jtok {
    const char *p;
    size_t n;
} ncmp_jtok;

typedef enum ncmp_jkind {
    NCMP_J_STRING,
    NCMP_J_INTEGER, /* a number without fraction or exponent */
    NCMP_J_NUMBER,
    NCMP_J_NULL,
    NCMP_J_BOOL,
    NCMP_J_OBJECT,
    NCMP_J_ARRAY
} ncmp_jkind;

typedef struct ncmp_jscan {
    const char *s;
    size_t len, i; /* the text, and where the scan is */
    int depth;     /* containers open around sc->i */
    ncmp_err *err;
} ncmp_jscan;

/* "string", "integer", "number", "null", "boolean", "object" or "array". */
const char *ncmp_jkind_name(ncmp_jkind kind);

void ncmp_jscan_init(ncmp_jscan *sc, const char *s, size_t len, ncmp_err *err);

/* The next byte after white space (the scan moves past the white space),
 * or '\0' at the end. */
char ncmp_jscan_peek(ncmp_jscan *sc);

/* The next byte after white space must be `c`: 0 past it, else -1 with
 * the error `why`. */
int ncmp_jscan_expect(ncmp_jscan *sc, char c, const char *why);

/* Set the error "malformed JSON at byte <i>: why"; returns -1. */
int ncmp_jscan_malformed(ncmp_jscan *sc, const char *why);

/* Scan one value: *kind is what it is and *tok its whole text. */
int ncmp_jscan_value(ncmp_jscan *sc, ncmp_jkind *kind, ncmp_jtok *tok);

/* The members of the object at the next byte (its '{'): `member` is
 * called with each name (as written, with its quotes) after its ':', and
 * must scan the value (ncmp_jscan_value, or deeper). A non-zero return
 * stops the scan and is returned. */
typedef int (*ncmp_jscan_member_fn)(ncmp_jscan *sc, const ncmp_jtok *name, void *ctx);
int ncmp_jscan_members(ncmp_jscan *sc, ncmp_jscan_member_fn member, void *ctx);

/* The items of the array at the next byte (its '['): `item` scans each. */
typedef int (*ncmp_jscan_item_fn)(ncmp_jscan *sc, void *ctx);
int ncmp_jscan_items(ncmp_jscan *sc, ncmp_jscan_item_fn item, void *ctx);

/* Nothing but white space is left: 0, else -1 ("more after the JSON
 * value"). */
int ncmp_jscan_end(ncmp_jscan *sc);

/* Is `tok` the string `name`, written without escapes? */
int ncmp_jtok_named(const ncmp_jtok *tok, const char *name);

/* Does string token `tok` hold a backslash (an escape)? Without one, its
 * text between the quotes is its value. */
int ncmp_jtok_escaped(const ncmp_jtok *tok);

#endif
