/*
 * ncmp_err: one small error type for the whole code base.
 *
 * Fallible functions return 0 on success and -1 on failure, and take a
 * `ncmp_err *err` as their last argument, which they fill on failure only.
 * The class says what the caller should do where the error crosses a
 * module boundary:
 *   RETRY  - something outside is away (broker, database): try again later;
 *   REJECT - this one input is bad (bad JSON, invalid YANG): report it
 *            (outcome or dead-letter record) and move on;
 *   FATAL  - the process cannot go on (bad configuration): exit with the
 *            message.
 */
#ifndef NCMP_ERR_H
#define NCMP_ERR_H

#include <stddef.h>

typedef enum ncmp_err_class {
    NCMP_ERR_NONE = 0,
    NCMP_ERR_RETRY,
    NCMP_ERR_REJECT,
    NCMP_ERR_FATAL,
} ncmp_err_class;

#define NCMP_ERR_MSG_MAX 512

typedef struct ncmp_err {
    ncmp_err_class cls;
    char msg[NCMP_ERR_MSG_MAX];
} ncmp_err;

/* Fill *err (if not NULL) with a class and a printf-style message.
 * Returns -1 so that a failure path can `return ncmp_err_set(...)`. */
int ncmp_err_set(ncmp_err *err, ncmp_err_class cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the message already in *err with more context ("while X: ").
 * Returns -1. */
int ncmp_err_prefix(ncmp_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void ncmp_err_clear(ncmp_err *err);

/* "retry", "reject", "fatal" or "none". */
const char *ncmp_err_class_name(ncmp_err_class cls);

#endif
