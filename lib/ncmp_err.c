#include "ncmp_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ncmp_err_set(ncmp_err *err, ncmp_err_class cls, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return -1;
    err->cls = cls;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

int ncmp_err_prefix(ncmp_err *err, const char *fmt, ...)
{
    char prefix[NCMP_ERR_MSG_MAX];
    char old[NCMP_ERR_MSG_MAX];
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
    return -1;
}

void ncmp_err_clear(ncmp_err *err)
{
    if (!err)
        return;
    err->cls = NCMP_ERR_NONE;
    err->msg[0] = '\0';
}

const char *ncmp_err_class_name(ncmp_err_class cls)
{
    switch (cls) {
    case NCMP_ERR_NONE:
        return "none";
    case NCMP_ERR_RETRY:
        return "retry";
    case NCMP_ERR_REJECT:
        return "reject";
    case NCMP_ERR_FATAL:
        return "fatal";
    }
    return "unknown";
}
