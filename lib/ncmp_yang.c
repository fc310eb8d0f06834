#include "ncmp_yang.h"

#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
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
    ly_log_options(LY_LOLOG | LY_LOSTORE);
}

int ncmp_yang_ctx_new(struct ly_ctx **ctx, ncmp_err *err)
{
    if (ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY | LY_CTX_DISABLE_SEARCHDIRS, ctx) != LY_SUCCESS)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot create a libyang context");
    return 0;
}

typedef struct set_lookup {
    const ncmp_yang_source *src;
    size_t n;
    ncmp_yang_load_fn load;
    void *load_arg;
} set_lookup;

static void free_loaded(void *data, void *user_data)
{
    (void)user_data;
    free(data);
}

/* Imports and includes come from the set being checked, never from disk. */
static LY_ERR set_import_cb(const char *mod_name, const char *mod_rev, const char *submod_name,
                            const char *submod_rev, void *user_data, LYS_INFORMAT *format,
                            const char **module_data, ly_module_imp_data_free_clb *free_module_data)
{
    const set_lookup *l = user_data;
    const char *name = submod_name ? submod_name : mod_name;
    const char *rev = submod_name ? submod_rev : mod_rev;

    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->src[i].name, name) != 0)
            continue;
        if (rev && *rev && strcmp(l->src[i].revision, rev) != 0)
            continue;
        *format = LYS_IN_YANG;
        *module_data = l->src[i].source;
        *free_module_data = NULL;
        return LY_SUCCESS;
    }
    if (l->load) {
        char *loaded = l->load(name, rev && *rev ? rev : NULL, l->load_arg);
        if (loaded) {
            *format = LYS_IN_YANG;
            *module_data = loaded;
            *free_module_data = free_loaded;
            return LY_SUCCESS;
        }
    }
    return LY_ENOTFOUND;
}

/* Does the source declare a submodule (first keyword after comments)? */
static int is_submodule(const char *s)
{
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
            s++;
        if (s[0] == '/' && s[1] == '/') {
            s = strchr(s, '\n');
            if (!s)
                return 0;
        } else if (s[0] == '/' && s[1] == '*') {
            s = strstr(s + 2, "*/");
            if (!s)
                return 0;
            s += 2;
        } else {
            return strncmp(s, "submodule", 9) == 0;
        }
    }
}

static const char *ly_reason(const struct ly_ctx *ctx)
{
    /* the first error says why; the last only that parsing failed */
    const struct ly_err_item *e = ly_err_first(ctx);
    return e && e->msg ? e->msg : "invalid YANG";
}

int ncmp_yang_check_set(ncmp_yang_source *src, size_t n, ncmp_err *err)
{
    return ncmp_yang_check_set_with(src, n, NULL, NULL, err);
}

int ncmp_yang_check_set_with(ncmp_yang_source *src, size_t n, ncmp_yang_load_fn load,
                             void *load_arg, ncmp_err *err)
{
    struct ly_ctx *ctx;
    set_lookup l = {src, n, load, load_arg};
    int rc = -1;

    /* Compiled once, after every source is parsed: libyang would
     * otherwise recompile the context for each module added, which is
     * quadratic in the size of the set. */
    if (ly_ctx_new(NULL,
                   LY_CTX_NO_YANGLIBRARY | LY_CTX_DISABLE_SEARCHDIRS | LY_CTX_EXPLICIT_COMPILE,
                   &ctx) != LY_SUCCESS)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot create a libyang context");
    ly_ctx_set_module_imp_clb(ctx, set_import_cb, &l);
    for (size_t i = 0; i < n; i++) {
        src[i].submodule = is_submodule(src[i].source);
        src[i].namespace_ = NULL;
    }
    for (size_t i = 0; i < n; i++) {
        ncmp_yang_source *s = &src[i];
        struct lys_module *mod = ly_ctx_get_module(ctx, s->name, *s->revision ? s->revision : NULL);
        const char *rev;

        if (s->submodule) {
            s->namespace_ = ncmp_xstrdup("");
            continue;
        }
        if (!mod && lys_parse_mem(ctx, s->source, LYS_IN_YANG, &mod) != LY_SUCCESS) {
            ncmp_err_set(err, NCMP_ERR_REJECT, "module %s revision %s is not valid YANG: %s",
                         s->name, *s->revision ? s->revision : "(none)", ly_reason(ctx));
            goto done;
        }
        rev = mod->revision ? mod->revision : "";
        if (strcmp(mod->name, s->name) != 0 || strcmp(rev, s->revision) != 0) {
            ncmp_err_set(err, NCMP_ERR_REJECT,
                         "the source given for module %s revision %s is module %s revision %s",
                         s->name, *s->revision ? s->revision : "(none)", mod->name,
                         *rev ? rev : "(none)");
            goto done;
        }
        s->namespace_ = ncmp_xstrdup(mod->ns ? mod->ns : "");
    }
    if (ly_ctx_compile(ctx) != LY_SUCCESS) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "the module set is not valid YANG: %s", ly_reason(ctx));
        goto done;
    }
    rc = 0;
done:
    ly_ctx_destroy(ctx);
    return rc;
}

void ncmp_yang_sources_clear(ncmp_yang_source *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(src[i].namespace_);
        src[i].namespace_ = NULL;
    }
}
