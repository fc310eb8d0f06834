/*
 * ncmp_text: small text helpers that option parsing in several programs
 * needs (ncmpd's option table, the DMI stub's options, the role list).
 */
#ifndef NCMP_TEXT_H
#define NCMP_TEXT_H

#include <stddef.h>

/* The value of NAME in `envp` (NAME=value entries, NULL-terminated; may be
 * NULL), or NULL when absent. Borrowed from envp. */
const char *ncmp_env_get(char **envp, const char *name);

/* Is `item` (len bytes) one of the `sep`-separated items of `list`? Blanks
 * around each item of the list are ignored; an empty item never matches. */
int ncmp_list_has(const char *list, char sep, const char *item, size_t len);

#endif
