#include "ncmp_yang.h"

#include <stdio.h>
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

static int is_submodule(const char *s);

/* libyang's first error (the last says only that parsing failed), with
 * where it is ("Line number 12.") when libyang knows. */
static void ly_reason(const struct ly_ctx *ctx, char *out, size_t size)
{
    const struct ly_err_item *e = ly_err_first(ctx);

    if (!e || !e->msg)
        snprintf(out, size, "invalid YANG");
    else if (e->path)
        snprintf(out, size, "%s (%s)", e->msg, e->path);
    else
        snprintf(out, size, "%s", e->msg);
}

int ncmp_yang_check_set(ncmp_yang_source *src, size_t n, ncmp_err *err)
{
    return ncmp_yang_check_set_with(src, n, NULL, NULL, err);
}

int ncmp_yang_check_set_with(ncmp_yang_source *src, size_t n, ncmp_yang_load_fn load,
                             void *load_arg, ncmp_err *err)
{
    struct ly_ctx *ctx = NULL;

    if (ncmp_yang_ctx_from_set(src, n, load, load_arg, 0, &ctx, err) != 0)
        return -1;
    ly_ctx_destroy(ctx);
    return 0;
}

int ncmp_yang_ctx_from_set(ncmp_yang_source *src, size_t n, ncmp_yang_load_fn load, void *load_arg,
                           int implement_all, struct ly_ctx **out, ncmp_err *err)
{
    struct ly_ctx *ctx;
    set_lookup l = {src, n, load, load_arg};
    char reason[NCMP_ERR_MSG_MAX];
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
            ly_reason(ctx, reason, sizeof(reason));
            ncmp_err_set(err, NCMP_ERR_REJECT, "module %s revision %s is not valid YANG: %s",
                         s->name, *s->revision ? s->revision : "(none)", reason);
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
        /* a module parsed first as another's import is only imported */
        if (implement_all && !mod->implemented && lys_set_implemented(mod, NULL) != LY_SUCCESS) {
            ly_reason(ctx, reason, sizeof(reason));
            ncmp_err_set(err, NCMP_ERR_REJECT, "module %s cannot be implemented: %s", s->name,
                         reason);
            goto done;
        }
        s->namespace_ = ncmp_xstrdup(mod->ns ? mod->ns : "");
    }
    if (ly_ctx_compile(ctx) != LY_SUCCESS) {
        ly_reason(ctx, reason, sizeof(reason));
        ncmp_err_set(err, NCMP_ERR_REJECT, "the module set is not valid YANG: %s", reason);
        goto done;
    }
    /* `l` lives on this stack: nothing may be imported any more */
    ly_ctx_set_module_imp_clb(ctx, NULL, NULL);
    *out = ctx;
    ctx = NULL;
    rc = 0;
done:
    if (rc != 0)
        ncmp_yang_sources_clear(src, n);
    ly_ctx_destroy(ctx);
    return rc;
}

/* --- naming a source ------------------------------------------------------ */

/* The next YANG token of s (after blanks and comments): its start and
 * length; a quoted string is one token without its quotes. NULL at the
 * end. */
static const char *next_token(const char *s, size_t *len)
{
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
            s++;
        if (s[0] == '/' && s[1] == '/') {
            s = strchr(s, '\n');
            if (!s)
                return NULL;
        } else if (s[0] == '/' && s[1] == '*') {
            s = strstr(s + 2, "*/");
            if (!s)
                return NULL;
            s += 2;
        } else {
            break;
        }
    }
    if (!*s)
        return NULL;
    if (*s == '"' || *s == '\'') {
        const char *e = s + 1;
        while (*e && *e != *s)
            e += (*s == '"' && *e == '\\' && e[1]) ? 2 : 1;
        *len = (size_t)(e - s) + (*e ? 1 : 0);
        return s;
    }
    if (*s == '{' || *s == '}' || *s == ';') {
        *len = 1;
        return s;
    }
    *len = strcspn(s, " \t\r\n{};\"'");
    return s;
}

/* Does the source declare a submodule (its first keyword, after blanks
 * and comments)? */
static int is_submodule(const char *s)
{
    size_t len;
    const char *t = next_token(s, &len);

    return t && len == 9 && strncmp(t, "submodule", 9) == 0;
}

static int is_date(const char *t, size_t len)
{
    static const char shape[] = "dddd-dd-dd";

    if (len == 12 && (*t == '"' || *t == '\''))
        t++, len -= 2;
    if (len != 10)
        return 0;
    for (size_t i = 0; i < 10; i++)
        if (shape[i] == 'd' ? (t[i] < '0' || t[i] > '9') : t[i] != '-')
            return 0;
    return 1;
}

int ncmp_yang_source_name(const char *source, char **name, char **revision, ncmp_err *err)
{
    const char *t, *p = source;
    size_t len;
    char found[11] = "";
    char *module = NULL;

    t = next_token(p, &len);
    if (!t || !((len == 6 && strncmp(t, "module", 6) == 0) ||
                (len == 9 && strncmp(t, "submodule", 9) == 0)))
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "not a YANG module: it does not start with 'module' or 'submodule'");
    t = next_token(t + len, &len);
    if (!t || len == 0 || *t == '{' || *t == ';' || *t == '}')
        return ncmp_err_set(err, NCMP_ERR_REJECT, "a YANG module without a name");
    if (*t == '"' || *t == '\'')
        module = ncmp_xstrdup(t + 1), module[len >= 2 ? len - 2 : 0] = '\0';
    else
        module = ncmp_xmalloc(len + 1), memcpy(module, t, len), module[len] = '\0';
    /* every `revision <date>` statement; the newest is the module's, as
     * libyang takes it (revision-date of an import is another keyword) */
    for (p = t + len; (t = next_token(p, &len)) != NULL; p = t + len) {
        size_t dlen;
        const char *d;
        if (len != 8 || strncmp(t, "revision", 8) != 0)
            continue;
        d = next_token(t + len, &dlen);
        if (d && is_date(d, dlen)) {
            const char *v = (*d == '"' || *d == '\'') ? d + 1 : d;
            if (strncmp(v, found, 10) > 0)
                memcpy(found, v, 10), found[10] = '\0';
        }
    }
    *name = module;
    *revision = ncmp_xstrdup(found);
    return 0;
}

void ncmp_yang_sources_clear(ncmp_yang_source *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(src[i].namespace_);
        src[i].namespace_ = NULL;
    }
}
