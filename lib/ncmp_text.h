/*
 * ncmp_text: small text helpers that option parsing in several programs
 * needs (ncmpd's option table, the DMI stub's options, the role list),
 * and the string hash of the in-memory maps.
 */
#ifndef NCMP_TEXT_H
#define NCMP_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* The value of NAME in `envp` (NAME=value entries, NULL-terminated; may be
 * NULL), or NULL when absent. Borrowed from envp. */
const char *ncmp_env_get(char **envp, const char *name);

/* Is `item` (len bytes) one of the `sep`-separated items of `list`? Blanks
 * around each item of the list are ignored; an empty item never matches. */
int ncmp_list_has(const char *list, char sep, const char *item, size_t len);

/* FNV-1a over s[0..n), for the in-memory maps; NCMP_FNV_STEP lets a
 * caller hash the prefixes of one string in one pass. */
#define NCMP_FNV_BASIS      1469598103934665603ULL
#define NCMP_FNV_STEP(h, c) (((h) ^ (unsigned char)(c)) * 1099511628211ULL)
uint64_t ncmp_hash(const char *s, size_t n);

#endif
