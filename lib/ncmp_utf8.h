/*
 * ncmp_utf8: the one UTF-8 check of the code base.
 *
 * Strict RFC 3629: no overlong forms, no UTF-16 surrogates (U+D800 to
 * U+DFFF), nothing above U+10FFFF, no truncated sequences. PostgreSQL
 * refuses text that breaks any of these, and json-c's own check lets some
 * of them through, so input is checked here, where a position can still be
 * reported, before it reaches the database, a JSON answer or a metric label.
 */
#ifndef NCMP_UTF8_H
#define NCMP_UTF8_H

#include <stddef.h>

/* The length (1 to 4) of the valid UTF-8 character at the start of
 * s[0..len), or 0 when those bytes do not start one (len 0 included).
 * Never reads beyond s[len - 1]. */
size_t ncmp_utf8_char_len(const void *s, size_t len);

/* The offset of the first byte of s[0..len) that does not start a valid
 * UTF-8 character, or `len` when all of it is valid. */
size_t ncmp_utf8_invalid_at(const void *s, size_t len);

/* 1 when s[0..len) is valid UTF-8 (an empty string is), else 0. */
int ncmp_utf8_valid(const void *s, size_t len);

#endif
