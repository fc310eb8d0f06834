#include "ncmp_yang.h"

#include "ncmp_log.h"

static void yang_log_cb(LY_LOG_LEVEL level, const char *msg, const char *path)
{
    ncmp_log_level lvl = level == LY_LLERR   ? NCMP_LOG_WARN /* the caller reports errors */
                         : level == LY_LLWRN ? NCMP_LOG_INFO
                                             : NCMP_LOG_DEBUG;
    NCMP_LOG(lvl, "libyang", "%s%s%s", msg, path ? " at " : "", path ? path : "");
}

void ncmp_yang_log_setup(void)
{
    ly_set_log_clb(yang_log_cb, 1);
    ly_log_options(LY_LOLOG | LY_LOSTORE_LAST);
}

int ncmp_yang_ctx_new(struct ly_ctx **ctx, ncmp_err *err)
{
    if (ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY | LY_CTX_DISABLE_SEARCHDIRS, ctx) != LY_SUCCESS)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot create a libyang context");
    return 0;
}
