/*
 * ncmp_yang: libyang helpers. For now: libyang's log routed into ncmp_log
 * and a context with no search directories (modules come from the DMI
 * plugins, never from the local disk).
 */
#ifndef NCMP_YANG_H
#define NCMP_YANG_H

#include <libyang/libyang.h>

#include "ncmp_err.h"

/* Route libyang's messages into ncmp_log (component "libyang"); call once
 * at start-up. libyang stores its own errors per context as well. */
void ncmp_yang_log_setup(void);

/* A fresh context. On success *ctx is owned by the caller (ly_ctx_destroy). */
int ncmp_yang_ctx_new(struct ly_ctx **ctx, ncmp_err *err);

#endif
