/*
 * ncmp_yang: libyang helpers: libyang's log routed into ncmp_log, a
 * context with no search directories (modules come from the DMI plugins,
 * never from the local disk), and the check of a module set's sources.
 */
#ifndef NCMP_YANG_H
#define NCMP_YANG_H

#include <libyang/libyang.h>

#include "ncmp_err.h"

/* Route libyang's messages into ncmp_log (component "libyang"); call once
 * at start-up. libyang stores its own errors per context as well. */
void ncmp_yang_log_setup(void);

/* One YANG source of a module set. */
typedef struct ncmp_yang_source {
    const char *name;     /* as the DMI named it in its module references */
    const char *revision; /* "" when none */
    const char *source;
    int submodule;    /* set by the check: the source is a submodule */
    char *namespace_; /* set by the check (owned, free()); "" for a submodule */
} ncmp_yang_source;

/* Parse the sources of one module set together, imports and includes among
 * them resolved from the set itself, and check that each source is the
 * module it is said to be (name and revision). Fills namespace_ and
 * submodule. A source that does not parse, or is another module, is a
 * REJECT error naming it and giving libyang's reason. */
int ncmp_yang_check_set(ncmp_yang_source *src, size_t n, ncmp_err *err);

/* Where imports and includes that are not in the set come from (modules
 * stored earlier): the source as a malloc'd string, or NULL when unknown.
 * `revision` is NULL when any revision will do. */
typedef char *(*ncmp_yang_load_fn)(const char *name, const char *revision, void *arg);

/* ncmp_yang_check_set, with `load` asked for what the set lacks. */
int ncmp_yang_check_set_with(ncmp_yang_source *src, size_t n, ncmp_yang_load_fn load,
                             void *load_arg, ncmp_err *err);

/* The same check, keeping the compiled context: on success *ctx is
 * owned by the caller (ly_ctx_destroy) and holds every module of the set;
 * with `implement_all`, every module of the set is implemented (data of
 * any of them can be parsed), not only imported. Import and include
 * callbacks are removed from the context before it is returned, so it
 * never loads anything more. */
int ncmp_yang_ctx_from_set(ncmp_yang_source *src, size_t n, ncmp_yang_load_fn load, void *load_arg,
                           int implement_all, struct ly_ctx **ctx, ncmp_err *err);

/* The name and the newest revision ("" when none) that a YANG source
 * declares, read from its text without parsing it (a schema-set upload
 * gives files, not module references). On success *name and *revision
 * are new strings owned by the caller. A source that does not start with
 * `module NAME` or `submodule NAME` is REJECT. */
int ncmp_yang_source_name(const char *source, char **name, char **revision, ncmp_err *err);

/* Free what the check set in `src`. */
void ncmp_yang_sources_clear(ncmp_yang_source *src, size_t n);

#endif
