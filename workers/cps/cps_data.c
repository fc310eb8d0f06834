/*
 * The CPS store's writes: save, update, replace and delete data nodes of
 * an anchor (reads are in cps_read.c).
 *
 * A write is parsed and checked by libyang against the anchor's schema
 * set (types, structure, list keys: what CPS's parser checks), turned into
 * one fragment row per container and list entry, and written in one
 * transaction with set-based SQL and COPY, never a statement per node.
 * Writers of one anchor take turns on a lock of the anchor's row, so that
 * two replacements of the same subtree cannot interleave their delete and
 * insert, and the anchor cannot be deleted under a write.
 */
#include <libyang/libyang.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cps_events.h"
#include "cps_internal.h"
#include "cps_path.h"
#include "cps_split.h"
#include "cps_xml.h"
#include "ncmp_buf.h"
#include "ncmp_json.h"
#include "ncmp_log.h"
#include "ncmp_time.h"
#include "ncmp_text.h"

/* A write locks its anchor's row: writers of one anchor take turns, and a
 * delete of the anchor waits for the write (and then takes its fragments
 * with it, 0008's trigger). No row: the anchor went away meanwhile. */
#define SQL_LOCK_ANCHOR "SELECT 1 FROM anchor WHERE id = $1 FOR NO KEY UPDATE"

#define SQL_COPY "COPY fragment (anchor_id, path, depth, name, attributes) FROM STDIN"

/* --- the anchor and its schema -------------------------------------------- */

int cps_target_resolve_pooled(ncmp_http_request *req, cps_api *api, cps_target *t)
{
    return cps_target_resolve_named(req, api, ncmp_http_param(req, "dataspace"),
                                    ncmp_http_param(req, "anchor"), t);
}

int cps_target_resolve_named(ncmp_http_request *req, cps_api *api, const char *dataspace,
                             const char *anchor, cps_target *t)
{
    ncmp_db *db = NULL;
    cps_refusal why = {0};
    ncmp_err err;
    int rc;

    if (rest_pool_get(api->pool, CPS_POOL_WAIT_MS, &db, &err) != 0) {
        rest_db_answer_error(req, &err);
        return -1;
    }
    rc = cps_store_resolve(db, api->schemas, dataspace, anchor, t, &why, &err);
    rest_pool_put(api->pool, db);
    if (rc != 0)
        cps_respond_refusal(req, &why, &err);
    return rc;
}

/* Every request of the API resolves its anchor: prepared once per
 * connection, the statement is not planned again each time (a third of a
 * small read's time in PostgreSQL). $3, a second anchor of the same
 * dataspace (a delta's target), may be NULL. */
static const char SQL_RESOLVE[] =
    "SELECT d.id, a.id, a.schema_set_id, s.name, b.id, b.schema_set_id, r.name FROM dataspace d"
    " LEFT JOIN anchor a ON a.dataspace_id = d.id AND a.name = $2"
    " LEFT JOIN schema_set s ON s.id = a.schema_set_id"
    " LEFT JOIN anchor b ON b.dataspace_id = d.id AND b.name = $3"
    " LEFT JOIN schema_set r ON r.id = b.schema_set_id WHERE d.name = $1";

/* --- anchors remembered (cps_internal.h) ---------------------------------- */

#define ANCHOR_SLOTS 4096

typedef struct anchor_slot {
    char *key; /* dataspace NUL anchor, klen bytes */
    size_t klen;
    char anchor_id[24];
    char *schema_set;
    cps_schema *schema; /* the slot's reference */
} anchor_slot;

struct cps_anchor_cache {
    pthread_mutex_t lock;
    anchor_slot slot[ANCHOR_SLOTS];
};

cps_anchor_cache *cps_anchor_cache_new(void)
{
    cps_anchor_cache *c = ncmp_xcalloc(1, sizeof(*c));

    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void slot_clear(anchor_slot *s)
{
    free(s->key);
    free(s->schema_set);
    cps_schema_release(s->schema);
    memset(s, 0, sizeof(*s));
}

void cps_anchor_cache_destroy(cps_anchor_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < ANCHOR_SLOTS; i++)
        slot_clear(&c->slot[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* The key of an anchor and its slot. */
static anchor_slot *slot_of(cps_anchor_cache *c, const char *dataspace, const char *anchor,
                            ncmp_buf *key)
{
    ncmp_buf_append_str(key, dataspace);
    ncmp_buf_append_char(key, '\0');
    ncmp_buf_append_str(key, anchor);
    return &c->slot[ncmp_hash(key->data, key->len) % ANCHOR_SLOTS];
}

static int slot_is(const anchor_slot *s, const ncmp_buf *key)
{
    return s->key && s->klen == key->len && memcmp(s->key, key->data, key->len) == 0;
}

static void anchor_remember(cps_anchor_cache *c, const cps_target *t)
{
    ncmp_buf key = NCMP_BUF_INIT;
    anchor_slot *s;

    pthread_mutex_lock(&c->lock);
    s = slot_of(c, t->dataspace, t->anchor_name, &key);
    slot_clear(s);
    s->key = ncmp_xmalloc(key.len);
    memcpy(s->key, key.data, key.len);
    s->klen = key.len;
    snprintf(s->anchor_id, sizeof(s->anchor_id), "%s", t->anchor_id);
    s->schema_set = ncmp_xstrdup(t->schema_set);
    s->schema = cps_schema_ref(t->schema);
    pthread_mutex_unlock(&c->lock);
    ncmp_buf_free(&key);
}

/* 1 and t filled (references of its own) when remembered. */
static int anchor_recall(cps_anchor_cache *c, const char *dataspace, const char *anchor,
                         cps_target *t)
{
    ncmp_buf key = NCMP_BUF_INIT;
    anchor_slot *s;
    int hit;

    pthread_mutex_lock(&c->lock);
    s = slot_of(c, dataspace, anchor, &key);
    hit = slot_is(s, &key);
    if (hit) {
        t->dataspace = dataspace;
        t->anchor_name = anchor;
        snprintf(t->anchor_id, sizeof(t->anchor_id), "%s", s->anchor_id);
        t->schema_set = ncmp_xstrdup(s->schema_set);
        t->schema = cps_schema_ref(s->schema);
    }
    pthread_mutex_unlock(&c->lock);
    ncmp_buf_free(&key);
    return hit;
}

static void anchor_forget(cps_anchor_cache *c, const char *dataspace, const char *anchor)
{
    ncmp_buf key = NCMP_BUF_INIT;
    anchor_slot *s;

    pthread_mutex_lock(&c->lock);
    s = slot_of(c, dataspace, anchor, &key);
    if (slot_is(s, &key))
        slot_clear(s);
    pthread_mutex_unlock(&c->lock);
    ncmp_buf_free(&key);
}

int cps_read_target(ncmp_http_request *req, cps_api *api, const char *dataspace, const char *anchor,
                    int recall, cps_target *t, int *recalled)
{
    *recalled = recall && anchor_recall(api->anchors, dataspace, anchor, t);
    if (*recalled)
        return 0;
    if (cps_target_resolve_named(req, api, dataspace, anchor, t) != 0)
        return -1;
    anchor_remember(api->anchors, t);
    return 0;
}

/* What a recalled anchor was: the resolution's row must say the same. */
typedef struct anchor_seen {
    const char *anchor_id, *schema_set_id;
} anchor_seen;

static int anchor_holds(void *arg, const PGresult *res)
{
    const anchor_seen *seen = arg;

    return res && PQntuples(res) == 1 && !PQgetisnull(res, 0, 1) && !PQgetisnull(res, 0, 2) &&
           strcmp(PQgetvalue(res, 0, 1), seen->anchor_id) == 0 &&
           strcmp(PQgetvalue(res, 0, 2), seen->schema_set_id) == 0;
}

int cps_read_stream(ncmp_http_request *req, cps_api *api, const cps_target *t, int recalled,
                    const rest_db_small *small, const char *sql, int nparams,
                    const char *const *params, int block_rows, const rest_stream_ops *ops,
                    void *state)
{
    const char *rparams[3] = {t->dataspace, t->anchor_name, NULL};
    anchor_seen seen = {t->anchor_id, cps_schema_set_id(t->schema)};
    rest_db_check check = {"cps_resolve", SQL_RESOLVE, 3, rparams, anchor_holds, &seen};

    if (rest_db_stream_checked(req, api->pool, recalled ? &check : NULL, small, sql, nparams,
                               params, block_rows, ops, state) == 0)
        return 0;
    anchor_forget(api->anchors, t->dataspace, t->anchor_name);
    return 1;
}

void cps_target_clear(cps_target *t)
{
    cps_schema_release(t->schema);
    t->schema = NULL;
    free(t->schema_set);
    t->schema_set = NULL;
}

void cps_store_resolve_step(ncmp_db *db, const char *const params[3], PGresult **out,
                            ncmp_db_step *step)
{
    ncmp_db_statement(db, "cps_resolve", SQL_RESOLVE);
    *step = (ncmp_db_step){NULL, 3, params, out, "cps_resolve"};
}

int cps_store_resolved(ncmp_db *db, cps_schema_cache *cache, const PGresult *res, int second,
                       const char *dataspace, const char *anchor, cps_target *t, cps_refusal *why,
                       ncmp_err *err)
{
    int at = second ? 4 : 1; /* the anchor's columns */

    t->dataspace = dataspace;
    t->anchor_name = anchor;
    if (PQntuples(res) == 0) {
        *why = (cps_refusal){404, "Dataspace not found"};
        return ncmp_err_set(err, NCMP_ERR_REJECT, "Dataspace with name %s does not exist.",
                            dataspace);
    }
    if (PQgetisnull(res, 0, at)) {
        *why = (cps_refusal){404, "Anchor not found"};
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "Anchor with name %s does not exist in dataspace %s.", anchor,
                            dataspace);
    }
    snprintf(t->anchor_id, sizeof(t->anchor_id), "%s", PQgetvalue(res, 0, at));
    if (cps_schema_get(cache, db, PQgetvalue(res, 0, at + 1), &t->schema, err) != 0) {
        if (err->cls == NCMP_ERR_REJECT)
            *why = (cps_refusal){400, "Invalid schema set"};
        return -1;
    }
    t->schema_set = ncmp_xstrdup(PQgetvalue(res, 0, at + 2));
    return 0;
}

int cps_store_resolve(ncmp_db *db, cps_schema_cache *cache, const char *dataspace,
                      const char *anchor, cps_target *t, cps_refusal *why, ncmp_err *err)
{
    const char *params[3] = {dataspace, anchor, NULL};
    PGresult *res = NULL;
    int rc;

    t->dataspace = dataspace;
    t->anchor_name = anchor;
    ncmp_db_statement(db, "cps_resolve", SQL_RESOLVE);
    if (ncmp_db_run(db, "cps_resolve", 3, params, &res, err) != 0)
        return -1;
    rc = cps_store_resolved(db, cache, res, 0, dataspace, anchor, t, why, err);
    PQclear(res);
    return rc;
}

void cps_respond_refusal(ncmp_http_request *req, const cps_refusal *why, const ncmp_err *err)
{
    if (err->cls == NCMP_ERR_REJECT && why->status)
        ncmp_http_respond_error(req, why->status, why->message, err->msg);
    else
        rest_db_answer_error(req, err);
}

/* The implemented module with a top-level data node `name`. */
const struct lys_module *cps_top_module(const struct ly_ctx *ctx, const char *name, size_t len)
{
    const struct lys_module *mod;
    uint32_t idx = 0;

    while ((mod = ly_ctx_get_module_iter(ctx, &idx)))
        if (mod->implemented && mod->compiled && lys_find_child(NULL, mod, name, len, 0, 0))
            return mod;
    return NULL;
}

/* --- the payload ---------------------------------------------------------- */

/* Skip JSON whitespace. */
static size_t ws(const char *s, size_t i, size_t len)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* The end of the JSON string starting at s[i] == '"' (index after it). */
static size_t string_end(const char *s, size_t i, size_t len)
{
    for (i++; i < len; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return len + 1;
}

/* The end of the JSON value starting at s[i]: strings skipped, brackets
 * counted (the text is checked by libyang afterwards; this only needs to
 * find the member boundaries of well-formed input). */
static size_t value_end(const char *s, size_t i, size_t len)
{
    int depth = 0;

    while (i < len) {
        char c = s[i];
        if (c == '"') {
            i = string_end(s, i, len);
            if (depth == 0)
                return i;
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (depth == 0)
                return i;
            if (--depth == 0)
                return i + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t'))
            return i;
        i++;
    }
    return len;
}

/* CPS accepts top-level member names without their module
 * ({"bookstore": ...}); libyang wants them qualified. Copy the document
 * to `out` with each unqualified top-level name prefixed by the module
 * that defines a top-level node of that name (a name no module has is
 * left for libyang to refuse). */
static void qualify_top_names(const struct ly_ctx *ctx, const char *s, size_t len, ncmp_buf *out)
{
    size_t i = ws(s, 0, len), done = 0;

    if (i >= len || s[i] != '{')
        goto rest;
    i++;
    for (;;) {
        size_t k0, k1;
        i = ws(s, i, len);
        if (i >= len || s[i] != '"')
            break;
        k0 = i + 1;
        k1 = string_end(s, i, len);
        if (k1 > len)
            break;
        k1--; /* the closing quote */
        if (!memchr(s + k0, ':', k1 - k0) && !memchr(s + k0, '\\', k1 - k0)) {
            const struct lys_module *mod = cps_top_module(ctx, s + k0, k1 - k0);
            if (mod) {
                ncmp_buf_append(out, s + done, k0 - done);
                ncmp_buf_append_str(out, mod->name);
                ncmp_buf_append_char(out, ':');
                done = k0;
            }
        }
        i = ws(s, k1 + 1, len);
        if (i >= len || s[i] != ':')
            break;
        i = value_end(s, ws(s, i + 1, len), len);
        i = ws(s, i, len);
        if (i >= len || s[i] != ',')
            break;
        i++;
    }
rest:
    ncmp_buf_append(out, s + done, len - done);
}

/* --- CPS's lenient value encodings -------------------------------------- */

/*
 * RFC 7951 encodes 64-bit numbers and decimals as JSON strings and the
 * other numbers as JSON numbers, and libyang insists. CPS's parser takes
 * either, and CPS's own documents use both (the bookstore's string `code`
 * is written 1), as does CPS's output (64-bit numbers come back as
 * numbers). A payload libyang refuses only for such an encoding is
 * rewritten here, each leaf's value in the encoding its type wants, and
 * parsed again; a payload in RFC 7951's encoding never comes here.
 */

static LY_DATA_TYPE leaf_basetype(const struct lysc_node *leaf)
{
    const struct lysc_type *type = ((const struct lysc_node_leaf *)leaf)->type;

    if (type->basetype == LY_TYPE_LEAFREF && ((const struct lysc_type_leafref *)type)->realtype)
        type = ((const struct lysc_type_leafref *)type)->realtype;
    return type->basetype;
}

/* `v` in the encoding `leaf`'s type wants; NULL: keep it. New reference. */
static json_object *relax_value(const struct lysc_node *leaf, json_object *v)
{
    json_type jt = json_object_get_type(v);

    switch (leaf_basetype(leaf)) {
    case LY_TYPE_INT8:
    case LY_TYPE_INT16:
    case LY_TYPE_INT32:
    case LY_TYPE_UINT8:
    case LY_TYPE_UINT16:
    case LY_TYPE_UINT32:
        if (jt == json_type_string) {
            const char *t = json_object_get_string(v);
            char *end;
            long long n = strtoll(t, &end, 10);
            if (*t && !*end)
                return json_object_new_int64(n);
        }
        return NULL;
    case LY_TYPE_INT64:
    case LY_TYPE_UINT64:
    case LY_TYPE_DEC64:
        return jt == json_type_int || jt == json_type_double
                   ? json_object_new_string(json_object_get_string(v))
                   : NULL;
    case LY_TYPE_BOOL:
        if (jt == json_type_string) {
            const char *t = json_object_get_string(v);
            if (strcmp(t, "true") == 0 || strcmp(t, "false") == 0)
                return json_object_new_boolean(t[0] == 't');
        }
        return NULL;
    case LY_TYPE_UNION:
    case LY_TYPE_EMPTY:
        return NULL;
    default: /* strings, enumerations, identities, bits, binary */
        return jt == json_type_int || jt == json_type_double || jt == json_type_boolean
                   ? json_object_new_string(json_object_get_string(v))
                   : NULL;
    }
}

/* The schema node of member `key` under `parent` (NULL: top level). */
static const struct lysc_node *relax_child(const struct ly_ctx *ctx, const struct lysc_node *parent,
                                           const char *key)
{
    const char *colon = strchr(key, ':'), *name = colon ? colon + 1 : key;
    const struct lysc_node *c = NULL;

    if (!parent) {
        const struct lys_module *mod;
        if (colon) {
            char module[256];
            snprintf(module, sizeof(module), "%.*s", (int)(colon - key), key);
            mod = ly_ctx_get_module_implemented(ctx, module);
        } else {
            mod = cps_top_module(ctx, key, strlen(key));
        }
        return mod ? lys_find_child(NULL, mod, name, 0, 0, 0) : NULL;
    }
    while ((c = lys_getnext(c, parent, NULL, 0)))
        if (strcmp(c->name, name) == 0 &&
            (!colon || (strlen(c->module->name) == (size_t)(colon - key) &&
                        strncmp(c->module->name, key, (size_t)(colon - key)) == 0)))
            return c;
    return NULL;
}

static void relax_object(const struct ly_ctx *ctx, const struct lysc_node *parent, json_object *o,
                         int depth);

static void relax_member(const struct ly_ctx *ctx, const struct lysc_node *sn, json_object *o,
                         const char *key, json_object *v, int depth)
{
    json_object *nv;

    if (sn->nodetype == LYS_LEAF) {
        if ((nv = relax_value(sn, v)))
            json_object_object_add(o, key, nv);
    } else if (sn->nodetype == LYS_LEAFLIST && json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if ((nv = relax_value(sn, json_object_array_get_idx(v, i))))
                json_object_array_put_idx(v, i, nv);
    } else if (sn->nodetype == LYS_LIST && json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            relax_object(ctx, sn, json_object_array_get_idx(v, i), depth + 1);
    } else if (sn->nodetype == LYS_CONTAINER) {
        relax_object(ctx, sn, v, depth + 1);
    }
}

static void relax_object(const struct ly_ctx *ctx, const struct lysc_node *parent, json_object *o,
                         int depth)
{
    if (!json_object_is_type(o, json_type_object) || depth > 64)
        return;
    json_object_object_foreach(o, key, v)
    {
        const struct lysc_node *sn = relax_child(ctx, parent, key);
        if (sn)
            relax_member(ctx, sn, o, key, v, depth);
    }
}

/* The payload with every leaf in the encoding its type wants, or NULL
 * when it is not JSON (libyang's first error stands then). */
static char *relax_payload(const struct ly_ctx *ctx, const struct lysc_node *parent,
                           const char *doc, size_t len)
{
    json_object *o = NULL;
    ncmp_err err;
    char *out;

    if (ncmp_json_parse(doc, len, &o, &err) != 0 || !o)
        return NULL;
    relax_object(ctx, parent, o, 0);
    out = ncmp_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return out;
}

/* libyang's last error for this thread as "message (path)". */
static void ly_error(const struct ly_ctx *ctx, const char *what, ncmp_err *err)
{
    const struct ly_err_item *e = ly_err_last(ctx);

    ncmp_err_set(err, NCMP_ERR_REJECT, "%s: %s%s%s%s", what, e && e->msg ? e->msg : "invalid data",
                 e && e->path ? " (" : "", e && e->path ? e->path : "", e && e->path ? ")" : "");
    ly_err_clean((struct ly_ctx *)ctx, NULL);
}

/* The namespace an XML payload's top element `name` is in when it says
 * none, as CPS takes it: the child of the parent node by that name (its
 * module's), or the parent's module's; at the top, the module with a
 * top-level node of that name. */
typedef struct xml_ns {
    const struct ly_ctx *ctx;
    const struct lyd_node *parent;
} xml_ns;

static const char *xml_ns_of(void *arg, const char *name, size_t len)
{
    const xml_ns *x = arg;
    const struct lys_module *mod;
    const struct lysc_node *c = NULL;

    if (x->parent) {
        while ((c = lys_getnext(c, x->parent->schema, NULL, 0)))
            if (strlen(c->name) == len && memcmp(c->name, name, len) == 0)
                return c->module->ns;
        return x->parent->schema->module->ns;
    }
    mod = cps_top_module(x->ctx, name, len);
    return mod ? mod->ns : NULL;
}

/* The payload parsed under the node `path` (stored form, "" for the root):
 * on success *tree owns the whole parsed tree (with the parent's
 * ancestors when there is a parent) and *first is the first parsed node
 * (the parent's first new child, or the first top-level node). */
static int parse_payload(const struct ly_ctx *ctx, const char *path, const char *body, size_t len,
                         int xml, struct lyd_node **tree, struct lyd_node **parent_out,
                         ncmp_err *err)
{
    struct lyd_node *top = NULL, *parent = NULL, *parsed = NULL;
    struct ly_in *in = NULL;
    ncmp_buf doc = NCMP_BUF_INIT;
    int rc = -1;

    if (path[0]) {
        ncmp_buf lypath = NCMP_BUF_INIT;
        const char *name;
        size_t nlen;
        const struct lys_module *mod;

        cps_path_first_name(path, &name, &nlen);
        mod = cps_top_module(ctx, name, nlen);
        if (!mod) {
            ncmp_err_set(err, NCMP_ERR_REJECT,
                         "no module of the anchor's schema set has a node %.*s", (int)nlen, name);
            return -1;
        }
        if (cps_path_to_libyang(path, mod->name, &lypath, err) != 0) {
            ncmp_buf_free(&lypath);
            return -1;
        }
        if (lyd_new_path2(NULL, ctx, lypath.data, NULL, 0, 0, 0, &top, &parent) != LY_SUCCESS) {
            ncmp_buf_free(&lypath);
            ly_error(ctx, "xpath does not match the schema", err);
            return -1;
        }
        ncmp_buf_free(&lypath);
    }
    if (xml) {
        xml_ns x = {ctx, parent};
        if (cps_xml_qualify(body, len, xml_ns_of, &x, &doc, err) != 0) {
            ncmp_err_prefix(err, "invalid data");
            goto cleanup;
        }
    } else if (!parent) {
        qualify_top_names(ctx, body, len, &doc);
    } else {
        ncmp_buf_append(&doc, body, len);
    }
    ncmp_buf_append_char(&doc, '\0');
    if (!xml && !parent &&
        cps_split_parse(ctx, doc.data, doc.len - 1, LYD_PARSE_ONLY | LYD_PARSE_STRICT, &parsed) ==
            0)
        goto parsed;
    if (ly_in_new_memory(doc.data, &in) != LY_SUCCESS) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "libyang input");
        goto cleanup;
    }
    if (lyd_parse_data(ctx, parent, in, xml ? LYD_XML : LYD_JSON, LYD_PARSE_ONLY | LYD_PARSE_STRICT,
                       0, parent ? NULL : &parsed) != LY_SUCCESS) {
        const struct ly_err_item *e = ly_err_last(ctx);
        char *relaxed = NULL;
        if (!xml && e && e->msg && strstr(e->msg, "-encoded"))
            relaxed = relax_payload(ctx, parent ? parent->schema : NULL, doc.data, doc.len - 1);
        if (!relaxed) {
            ly_error(ctx, "invalid data", err);
            goto cleanup;
        }
        ly_err_clean((struct ly_ctx *)ctx, NULL);
        ly_in_free(in, 0);
        in = NULL;
        if (parent)
            while (lyd_child(parent) && !lysc_is_key(lyd_child(parent)->schema))
                lyd_free_tree(lyd_child(parent)); /* what the failed parse left */
        lyd_free_all(parsed);
        parsed = NULL;
        ncmp_buf_reset(&doc);
        ncmp_buf_append_str(&doc, relaxed);
        ncmp_buf_append_char(&doc, '\0');
        free(relaxed);
        if (ly_in_new_memory(doc.data, &in) != LY_SUCCESS ||
            lyd_parse_data(ctx, parent, in, LYD_JSON, LYD_PARSE_ONLY | LYD_PARSE_STRICT, 0,
                           parent ? NULL : &parsed) != LY_SUCCESS) {
            ly_error(ctx, "invalid data", err);
            goto cleanup;
        }
    }
parsed:
    *tree = parent ? top : parsed;
    *parent_out = parent;
    top = NULL;
    parsed = NULL;
    rc = 0;
cleanup:
    ly_in_free(in, 0);
    lyd_free_all(top);
    lyd_free_all(parsed);
    ncmp_buf_free(&doc);
    return rc;
}

/* Merge `one` ({name: value}, as libyang prints one node) into `into`:
 * the entries of a list printed one at a time go into one array. */
static void merge_member(json_object *into, json_object *one)
{
    json_object_object_foreach(one, k, v)
    {
        json_object *have = NULL;
        if (json_object_object_get_ex(into, k, &have) &&
            json_object_is_type(have, json_type_array) && json_object_is_type(v, json_type_array)) {
            for (size_t i = 0; i < json_object_array_length(v); i++)
                json_object_array_add(have, json_object_get(json_object_array_get_idx(v, i)));
        } else {
            json_object_object_add(into, k, json_object_get(v));
        }
    }
}

int cps_store_xml_to_json(const cps_target *t, const char *path, const char *xml, size_t len,
                          json_object **out, ncmp_err *err)
{
    struct lyd_node *tree = NULL, *under = NULL, *n;
    json_object *o;
    int rc = -1;

    if (parse_payload(cps_schema_ctx(t->schema), path, xml, len, 1, &tree, &under, err) != 0)
        return -1;
    o = json_object_new_object();
    for (n = under ? lyd_child(under) : tree; n; n = n->next) {
        char *text = NULL;
        json_object *one = NULL;
        if (under && lysc_is_key(n->schema))
            continue;
        if (lyd_print_mem(&text, n, LYD_JSON, LYD_PRINT_SHRINK) != LY_SUCCESS || !text ||
            ncmp_json_parse(text, strlen(text), &one, err) != 0) {
            free(text);
            ncmp_err_set(err, NCMP_ERR_FATAL, "libyang printed a node that is not JSON");
            goto cleanup;
        }
        merge_member(o, one);
        json_object_put(one);
        free(text);
    }
    *out = o;
    o = NULL;
    rc = 0;
cleanup:
    json_object_put(o);
    lyd_free_all(tree);
    return rc;
}

/* --- payload to fragment rows ------------------------------------------- */

typedef struct rows {
    const char *anchor_id;
    const char *parent; /* the stored path the payload is under */
    size_t ntops;       /* the payload's top nodes: kids[0..ntops), sorted */
    int top_entries;    /* how many of them are list entries */
    ncmp_buf tops;      /* PostgreSQL array literal of the top nodes' paths */
    ncmp_buf top_attrs; /* PostgreSQL array literal of their attributes */
    ncmp_buf lists;     /* the distinct list paths of top list entries */
    ncmp_db *sink;      /* where COPY rows go as they are made; NULL: nowhere */
    ncmp_buf copy;      /* COPY text rows not sent yet */
    ncmp_buf *keep;     /* instead of a sink: every row is appended here */
    cps_row_fn row_fn;  /* instead of COPY text: every row is given here */
    void *row_arg;
    ncmp_buf attrs; /* scratch: one node's attributes */
    size_t nrows;
    /* the top nodes, then the children of the nodes emit_node is inside
     * of, a stack: their steps' text in kid_text, the steps in kids (no
     * allocation per node) */
    ncmp_buf kid_text;
    struct kid *kids;
    size_t nkids, kids_cap;
} rows;

#define COPY_BLOCK (256 * 1024)

static void rows_free(rows *r)
{
    ncmp_buf_free(&r->copy);
    ncmp_buf_free(&r->attrs);
    ncmp_buf_free(&r->kid_text);
    free(r->kids);
    ncmp_buf_free(&r->tops);
    ncmp_buf_free(&r->top_attrs);
    ncmp_buf_free(&r->lists);
}

static LY_DATA_TYPE value_type(const struct lyd_value *v)
{
    while (v->realtype->basetype == LY_TYPE_UNION && v->subvalue)
        v = &v->subvalue->value;
    return v->realtype->basetype;
}

/* One leaf value as JSON: numbers and booleans bare, as CPS answers
 * them; everything else a string. */
static void value_json(const struct lyd_node *leaf, ncmp_buf *out)
{
    const struct lyd_node_term *t = (const struct lyd_node_term *)leaf;
    const char *s = lyd_get_value(leaf);

    switch (value_type(&t->value)) {
    case LY_TYPE_INT8:
    case LY_TYPE_INT16:
    case LY_TYPE_INT32:
    case LY_TYPE_INT64:
    case LY_TYPE_UINT8:
    case LY_TYPE_UINT16:
    case LY_TYPE_UINT32:
    case LY_TYPE_UINT64:
    case LY_TYPE_DEC64:
    case LY_TYPE_BOOL:
        ncmp_buf_append_str(out, s);
        break;
    case LY_TYPE_EMPTY:
        ncmp_buf_append_str(out, "null");
        break;
    default:
        ncmp_buf_append_json_string(out, s ? s : "");
    }
}

/* The node's own leaves and leaf-lists as a JSON object. */
static void attributes_json(const struct lyd_node *node, ncmp_buf *out)
{
    const struct lyd_node *c;
    const struct lysc_node *open_list = NULL;
    int any = 0;

    ncmp_buf_append_char(out, '{');
    LY_LIST_FOR(lyd_child(node), c)
    {
        if (!c->schema || !(c->schema->nodetype & (LYS_LEAF | LYS_LEAFLIST)))
            continue;
        if (open_list && c->schema != open_list) {
            ncmp_buf_append_char(out, ']');
            open_list = NULL;
        }
        if (c->schema->nodetype == LYS_LEAFLIST && c->schema == open_list) {
            ncmp_buf_append_char(out, ',');
        } else {
            if (any)
                ncmp_buf_append_char(out, ',');
            ncmp_buf_append_json_string(out, c->schema->name);
            ncmp_buf_append_char(out, ':');
            if (c->schema->nodetype == LYS_LEAFLIST) {
                ncmp_buf_append_char(out, '[');
                open_list = c->schema;
            }
        }
        value_json(c, out);
        any = 1;
    }
    if (open_list)
        ncmp_buf_append_char(out, ']');
    ncmp_buf_append_char(out, '}');
}

typedef struct keytext {
    ncmp_buf text;
} keytext;

static int keytext_cmp(const void *a, const void *b)
{
    const ncmp_buf *x = &((const keytext *)a)->text, *y = &((const keytext *)b)->text;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->data, y->data, n);

    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Append a key's predicate, @name='value' (a ' doubled). */
static void append_key(ncmp_buf *out, const struct lyd_node *key, const char *v)
{
    const char *q;

    ncmp_buf_append_char(out, '@');
    ncmp_buf_append_str(out, key->schema->name);
    ncmp_buf_append(out, "='", 2);
    while ((q = strchr(v, '\''))) {
        ncmp_buf_append(out, v, (size_t)(q - v) + 1);
        ncmp_buf_append_char(out, '\'');
        v = q + 1;
    }
    ncmp_buf_append_str(out, v);
    ncmp_buf_append_char(out, '\'');
}

/* Append the step of `node` (SEP name [keys]) to `path`. */
static int append_step(const struct lyd_node *node, ncmp_buf *path, ncmp_err *err)
{
    keytext keys[CPS_PATH_MAX_KEY];
    const struct lyd_node *kn[CPS_PATH_MAX_KEY];
    const char *kv[CPS_PATH_MAX_KEY];
    size_t n = 0;
    const struct lyd_node *c;

    ncmp_buf_append_char(path, CPS_PATH_SEP);
    ncmp_buf_append_str(path, node->schema->name);
    if (node->schema->nodetype != LYS_LIST)
        return 0;
    LY_LIST_FOR(lyd_child(node), c)
    {
        const char *v;
        if (!c->schema || !lysc_is_key(c->schema))
            continue;
        if (n == CPS_PATH_MAX_KEY)
            break;
        v = lyd_get_value(c);
        if (strchr(v, CPS_PATH_SEP)) {
            ncmp_err_set(err, NCMP_ERR_REJECT, "a key of %s holds U+0001", node->schema->name);
            return -1;
        }
        kn[n] = c;
        kv[n++] = v;
    }
    if (n == 0) {
        ncmp_err_set(err, NCMP_ERR_REJECT,
                     "list %s has no keys: its entries cannot be told apart in the store",
                     node->schema->name);
        return -1;
    }
    if (n == 1) { /* most lists: nothing to sort */
        ncmp_buf_append_char(path, '[');
        append_key(path, kn[0], kv[0]);
        ncmp_buf_append_char(path, ']');
        return 0;
    }
    memset(keys, 0, sizeof(keys));
    for (size_t i = 0; i < n; i++)
        append_key(&keys[i].text, kn[i], kv[i]);
    qsort(keys, n, sizeof(keys[0]), keytext_cmp);
    ncmp_buf_append_char(path, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            ncmp_buf_append_str(path, " and ");
        ncmp_buf_append(path, keys[i].text.data, keys[i].text.len);
        ncmp_buf_free(&keys[i].text);
    }
    ncmp_buf_append_char(path, ']');
    return 0;
}

/* A container or list entry: its step (SEP name [keys]) in
 * rows.kid_text. */
struct kid {
    const struct lyd_node *node;
    size_t off, len;
};

static int kid_cmp(const void *a, const void *b, void *arg)
{
    const char *t = arg;
    const struct kid *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(t + x->off, t + y->off, n);

    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Push the containers and list entries among `first` and its siblings on
 * r's stack, sorted by their steps: *count of them, from
 * r->kids[r->nkids - *count]. A walk that takes siblings in this order
 * emits the rows in the order of the key (0008), so that the index is
 * filled from left to right instead of at random places (a third faster
 * for a large tree). */
static int kids_push(rows *r, const struct lyd_node *first, size_t *count, ncmp_err *err)
{
    size_t base = r->nkids;
    const struct lyd_node *c;
    int sorted = 1;

    LY_LIST_FOR(first, c)
    {
        struct kid *k;
        if (!c->schema || !(c->schema->nodetype & (LYS_CONTAINER | LYS_LIST)))
            continue;
        if (r->nkids == r->kids_cap) {
            r->kids_cap = r->kids_cap ? r->kids_cap * 2 : 64;
            r->kids = ncmp_xrealloc(r->kids, r->kids_cap * sizeof(*r->kids));
        }
        k = &r->kids[r->nkids];
        k->node = c;
        k->off = r->kid_text.len;
        if (append_step(c, &r->kid_text, err) != 0)
            return -1;
        k->len = r->kid_text.len - k->off;
        if (r->nkids > base && kid_cmp(k - 1, k, r->kid_text.data) > 0)
            sorted = 0;
        r->nkids++;
    }
    *count = r->nkids - base;
    if (!sorted)
        qsort_r(r->kids + base, *count, sizeof(*r->kids), kid_cmp, r->kid_text.data);
    return 0;
}

/* A row's depth in COPY text: a small number, without printf. */
static void append_depth(ncmp_buf *out, int depth)
{
    char digits[12];
    int n = 0;

    do
        digits[sizeof(digits) - 1 - n++] = (char)('0' + depth % 10);
    while ((depth /= 10) > 0 && n < (int)sizeof(digits));
    ncmp_buf_append(out, digits + sizeof(digits) - n, (size_t)n);
}

/* The COPY row of `node`, whose stored path `path` holds, and the rows of
 * its descendants; `path` is restored on return. */
static int emit_node(rows *r, const struct lyd_node *node, ncmp_buf *path, int depth, ncmp_err *err)
{
    size_t mark = path->len, n = 0, base = r->nkids, text_mark = r->kid_text.len;
    int rc = -1;

    ncmp_buf_reset(&r->attrs);
    attributes_json(node, &r->attrs);
    if (r->row_fn) {
        r->row_fn(r->row_arg, path->data, path->len, depth, r->attrs.data, r->attrs.len);
        r->nrows++;
        goto children;
    }
    ncmp_buf_append_copy_field(&r->copy, r->anchor_id, strlen(r->anchor_id));
    ncmp_buf_append_char(&r->copy, '\t');
    ncmp_buf_append_copy_field(&r->copy, path->data, path->len);
    ncmp_buf_append_char(&r->copy, '\t');
    append_depth(&r->copy, depth);
    ncmp_buf_append_char(&r->copy, '\t');
    ncmp_buf_append_str(&r->copy, node->schema->name);
    ncmp_buf_append_char(&r->copy, '\t');
    ncmp_buf_append_copy_field(&r->copy, r->attrs.data, r->attrs.len);
    ncmp_buf_append_char(&r->copy, '\n');
    r->nrows++;
    if (r->copy.len >= COPY_BLOCK || r->keep) {
        if (r->keep)
            ncmp_buf_append(r->keep, r->copy.data, r->copy.len);
        if (r->sink && ncmp_db_copy_put(r->sink, r->copy.data, r->copy.len, err) != 0)
            return -1;
        ncmp_buf_reset(&r->copy);
    }
children:
    if (kids_push(r, lyd_child(node), &n, err) != 0)
        goto cleanup;
    for (size_t i = 0; i < n; i++) {
        struct kid k = r->kids[base + i]; /* the stack moves as it grows */
        ncmp_buf_append(path, r->kid_text.data + k.off, k.len);
        if (emit_node(r, k.node, path, depth + 1, err) != 0)
            goto cleanup;
        path->len = mark;
    }
    rc = 0;
cleanup:
    path->len = mark;
    r->nkids = base;
    r->kid_text.len = text_mark;
    return rc;
}

/* Append one element to a PostgreSQL array literal being built. */
static void array_add(ncmp_buf *a, const char *s, size_t len)
{
    ncmp_buf_append_char(a, a->len ? ',' : '{');
    ncmp_buf_append_char(a, '"');
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"' || s[i] == '\\')
            ncmp_buf_append_char(a, '\\');
        ncmp_buf_append_char(a, s[i]);
    }
    ncmp_buf_append_char(a, '"');
}

static void array_close(ncmp_buf *a)
{
    if (!a->len)
        ncmp_buf_append_char(a, '{');
    ncmp_buf_append_char(a, '}');
}

/* The top nodes of the payload (`first` and its siblings, parsed under
 * `parent_path`) with their paths, leaves and lists as array literals for
 * the set-based statements. Leaves at the top have no row to live in:
 * REJECT. */
static int collect_tops(rows *r, const struct lyd_node *first, const char *parent_path,
                        ncmp_err *err)
{
    ncmp_buf path = NCMP_BUF_INIT, last_list = NCMP_BUF_INIT;
    const struct lyd_node *n;
    size_t base = strlen(parent_path);

    LY_LIST_FOR(first, n)
    {
        if (n->schema && !(n->schema->nodetype & (LYS_CONTAINER | LYS_LIST)) &&
            !lysc_is_key(n->schema)) { /* a parent's keys are made with it */
            ncmp_err_set(err, NCMP_ERR_REJECT,
                         "%s is a leaf: a payload holds containers or list entries under the "
                         "xpath; to change leaves, PATCH their node",
                         n->schema->name);
            return -1;
        }
    }
    if (kids_push(r, first, &r->ntops, err) != 0)
        return -1;
    if (r->ntops == 0) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "the payload holds no data node");
        return -1;
    }
    r->parent = parent_path;
    ncmp_buf_append_str(&path, parent_path);
    for (size_t i = 0; i < r->ntops; i++) {
        const struct lyd_node *t = r->kids[i].node;
        ncmp_buf_append(&path, r->kid_text.data + r->kids[i].off, r->kids[i].len);
        array_add(&r->tops, path.data, path.len);
        ncmp_buf_reset(&r->attrs);
        attributes_json(t, &r->attrs);
        array_add(&r->top_attrs, r->attrs.data, r->attrs.len);
        if (t->schema->nodetype == LYS_LIST) {
            path.len = base;
            ncmp_buf_append_char(&path, CPS_PATH_SEP);
            ncmp_buf_append_str(&path, t->schema->name);
            if (path.len != last_list.len || memcmp(path.data, last_list.data, path.len) != 0) {
                array_add(&r->lists, path.data, path.len); /* each list once */
                ncmp_buf_reset(&last_list);
                ncmp_buf_append(&last_list, path.data, path.len);
            }
            r->top_entries++;
        }
        path.len = base;
    }
    array_close(&r->tops);
    array_close(&r->top_attrs);
    array_close(&r->lists);
    ncmp_buf_free(&path);
    ncmp_buf_free(&last_list);
    return 0;
}

/* Every row of the payload, in key order, to r->sink (NULL: made and
 * dropped, to check what only the rows check). */
static int emit_rows(rows *r, ncmp_err *err)
{
    ncmp_buf path = NCMP_BUF_INIT;
    size_t base = strlen(r->parent);
    int depth = cps_path_depth(r->parent, base) + 1, rc = -1;

    ncmp_buf_append_str(&path, r->parent);
    for (size_t i = 0; i < r->ntops; i++) {
        ncmp_buf_append(&path, r->kid_text.data + r->kids[i].off, r->kids[i].len);
        if (emit_node(r, r->kids[i].node, &path, depth, err) != 0)
            goto cleanup;
        path.len = base;
    }
    if (r->sink && r->copy.len && ncmp_db_copy_put(r->sink, r->copy.data, r->copy.len, err) != 0)
        goto cleanup;
    ncmp_buf_reset(&r->copy);
    rc = 0;
cleanup:
    ncmp_buf_free(&path);
    return rc;
}

/* --- writes --------------------------------------------------------------- */

static int is_unique_violation(const ncmp_err *err)
{
    return strstr(err->msg, "(SQLSTATE 23505)") != NULL;
}

static int refuse(cps_refusal *why, int status, const char *message)
{
    why->status = status;
    why->message = message;
    return -1;
}

/* The refusal of a write whose anchor was gone when it came to lock it
 * (the same words as a resolution's, told apart by the pointer). */
static const char ANCHOR_GONE[] = "Anchor not found";

/* The answer of SQL_LOCK_ANCHOR: 0 when it locked the anchor's row, CPS's
 * 404 when the anchor is gone meanwhile. */
static int anchor_locked(const cps_target *t, const PGresult *lock, cps_refusal *why, ncmp_err *err)
{
    if (PQntuples(lock) > 0)
        return 0;
    ncmp_err_set(err, NCMP_ERR_REJECT, "Anchor with name %s does not exist in dataspace %s.",
                 t->anchor_name, t->dataspace);
    return refuse(why, 404, ANCHOR_GONE);
}

/* Lock the anchor's row for the write; gone meanwhile: refused. */
static int lock_anchor(ncmp_db *db, const cps_target *t, cps_refusal *why, ncmp_err *err)
{
    const char *params[1] = {t->anchor_id};
    PGresult *res = NULL;
    int rc;

    ncmp_db_statement(db, "cps_lock_anchor", SQL_LOCK_ANCHOR);
    if (ncmp_db_run(db, "cps_lock_anchor", 1, params, &res, err) != 0)
        return -1;
    rc = anchor_locked(t, res, why, err);
    PQclear(res);
    return rc;
}

int cps_store_parent_check(ncmp_db *db, const cps_target *t, const char *parent, const char *xpath,
                           cps_refusal *why, ncmp_err *err)
{
    static const char sql[] = "SELECT 1 FROM fragment WHERE anchor_id = $1 AND path = $2";
    const char *params[2] = {t->anchor_id, parent};
    PGresult *res = NULL;
    int found;

    if (!parent[0])
        return 0;
    if (ncmp_db_query(db, sql, 2, params, &res, err) != 0)
        return -1;
    found = PQntuples(res) > 0;
    PQclear(res);
    if (found)
        return 0;
    ncmp_err_set(err, NCMP_ERR_REJECT,
                 "DataNode with xpath %s was not found for anchor %s and dataspace %s.", xpath,
                 t->anchor_name, t->dataspace);
    return refuse(why, 404, "DataNode not found");
}

/* Store the rows in the caller's transaction. */
static int write_apply(ncmp_db *db, const cps_target *t, cps_write_kind kind, const char *parent,
                       const char *xpath, rows *r, cps_notice *notice, cps_refusal *why,
                       ncmp_err *err)
{
    /* The anchor is a column of the paths' rows (OFFSET 0 keeps it there),
     * not a condition of the table's: each path is then one probe of the
     * key. As `f.anchor_id = $1` the planner took the anchor's whole
     * range as the outer side whenever its statistics predated the
     * anchor's rows (one row expected): right after a bulk write, each
     * merge into a node of a new 86,001-node anchor read all its rows
     * (17 ms instead of 0.3). */
    static const char sql_delete_nodes[] =
        "DELETE FROM fragment f"
        " USING (SELECT $1::bigint AS anchor_id, p FROM unnest($2::text[]) p OFFSET 0) u"
        " WHERE f.anchor_id = u.anchor_id AND f.path >= u.p AND f.path < u.p || E'\\x02'";
    static const char sql_delete_lists[] =
        "DELETE FROM fragment f"
        " USING (SELECT $1::bigint AS anchor_id, l FROM unnest($2::text[]) l OFFSET 0) u"
        " WHERE f.anchor_id = u.anchor_id AND f.path >= u.l || '[' AND f.path < u.l || '\\'";
    static const char sql_update[] = "UPDATE fragment f SET attributes = f.attributes || u.a"
                                     " FROM (SELECT $1::bigint AS anchor_id, x.p, x.a"
                                     " FROM unnest($2::text[], $3::jsonb[]) x(p, a) OFFSET 0) u"
                                     " WHERE f.anchor_id = u.anchor_id AND f.path = u.p";
    const char *params[3] = {t->anchor_id, NULL, NULL};
    PGresult *res = NULL;

    if (lock_anchor(db, t, why, err) != 0 ||
        cps_store_parent_check(db, t, parent, xpath, why, err) != 0)
        return -1;
    if (cps_events_begin(db, t, parent, notice, err) != 0)
        return -1;
    if (kind == CPS_WRITE_UPDATE) {
        size_t updated;
        params[1] = r->tops.data;
        params[2] = r->top_attrs.data;
        if (ncmp_db_query(db, sql_update, 3, params, &res, err) != 0)
            return -1;
        updated = (size_t)atol(PQcmdTuples(res));
        PQclear(res);
        if (updated != r->ntops) {
            ncmp_err_set(err, NCMP_ERR_REJECT,
                         "%zu of the %zu data nodes to update under %s do not exist in "
                         "anchor %s.",
                         r->ntops - updated, r->ntops, xpath, t->anchor_name);
            return refuse(why, 404, "DataNode not found");
        }
        return 0;
    }
    if (kind == CPS_WRITE_REPLACE) {
        params[1] = r->tops.data;
        if (ncmp_db_query(db, sql_delete_nodes, 2, params, NULL, err) != 0)
            return -1;
    } else if (kind == CPS_WRITE_REPLACE_LIST) {
        params[1] = r->lists.data;
        if (ncmp_db_query(db, sql_delete_lists, 2, params, NULL, err) != 0)
            return -1;
    }
    if (ncmp_db_copy_start(db, SQL_COPY, err) != 0)
        return -1;
    r->sink = db;
    if (emit_rows(r, err) != 0) {
        r->sink = NULL;
        if (err->cls == NCMP_ERR_REJECT) { /* the payload's, found while sending */
            ncmp_db_copy_abort(db, err->msg);
            return refuse(why, 400, "Data Validation Failed");
        }
        return -1;
    }
    r->sink = NULL;
    if (ncmp_db_copy_end(db, err) != 0) {
        if (is_unique_violation(err)) {
            ncmp_err_set(err, NCMP_ERR_REJECT,
                         "A data node of the payload already exists under %s in anchor %s"
                         " (or the payload names one node twice).",
                         xpath, t->anchor_name);
            return refuse(why, 409, "Already defined exception");
        }
        return -1;
    }
    return 0;
}

/* What every write from a payload begins with: the xpath in its stored
 * form (`parent`), the body parsed under it with the anchor's schema
 * (*tree, the caller's to free) and its top nodes collected into `r`. A
 * refusal is CPS's 400 in *why. */
static int payload_tops(const cps_target *t, const char *xpath, const char *body, size_t len,
                        int xml, ncmp_buf *parent, struct lyd_node **tree, rows *r,
                        cps_refusal *why, ncmp_err *err)
{
    struct lyd_node *under = NULL;

    if (cps_path_encode(xpath ? xpath : "/", parent, err) != 0)
        return refuse(why, 400, "Invalid request");
    ncmp_buf_append_char(parent, '\0');
    parent->len--;
    if (!body || len == 0) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "the request has no data");
        return refuse(why, 400, "Invalid request");
    }
    if (parse_payload(cps_schema_ctx(t->schema), parent->data, body, len, xml, tree, &under, err) !=
            0 ||
        collect_tops(r, under ? lyd_child(under) : *tree, parent->data, err) != 0) {
        if (err->cls == NCMP_ERR_REJECT)
            refuse(why, 400, "Data Validation Failed");
        return -1;
    }
    return 0;
}

int cps_store_write(ncmp_db *db, const cps_target *t, cps_write_kind kind, const char *xpath,
                    const char *body, size_t len, int xml, int dry_run, size_t *nodes,
                    cps_refusal *why, ncmp_err *err)
{
    ncmp_buf parent = NCMP_BUF_INIT;
    rows r = {0};
    struct lyd_node *tree = NULL;
    cps_notice notice = {0};
    double started = ncmp_now_ms(), built;
    int rc = -1;

    if (!xpath)
        xpath = "/";
    r.anchor_id = t->anchor_id;
    if (payload_tops(t, xpath, body, len, xml, &parent, &tree, &r, why, err) != 0)
        goto cleanup;
    if ((kind == CPS_WRITE_SAVE_LIST || kind == CPS_WRITE_REPLACE_LIST) &&
        (size_t)r.top_entries != r.ntops) {
        ncmp_err_set(err, NCMP_ERR_REJECT,
                     "list-nodes takes list entries only; the payload has %zu other "
                     "node(s) under %s",
                     r.ntops - (size_t)r.top_entries, xpath);
        refuse(why, 400, "Data Validation Failed");
        goto cleanup;
    }
    built = ncmp_now_ms();
    if (dry_run) {
        if (emit_rows(&r, err) != 0) {
            if (err->cls == NCMP_ERR_REJECT)
                refuse(why, 400, "Data Validation Failed");
            goto cleanup;
        }
    } else if (write_apply(db, t, kind, parent.data, xpath, &r, &notice, why, err) != 0 ||
               cps_events_end(db, t, &notice, kind == CPS_WRITE_SAVE ? "create" : "replace", xpath,
                              err) != 0) {
        goto cleanup;
    }
    log_debug("cps", "%s: %zu nodes under %s (parse and tops %.1f ms, store %.1f ms)",
              t->anchor_name, r.nrows, xpath, built - started, ncmp_now_ms() - built);
    if (nodes)
        *nodes = r.nrows;
    rc = 0;
cleanup:
    cps_notice_clear(&notice);
    lyd_free_all(tree);
    rows_free(&r);
    ncmp_buf_free(&parent);
    return rc;
}

int cps_store_update_tops(const cps_target *t, const char *xpath, const char *body, size_t len,
                          cps_top_fn fn, void *arg, cps_refusal *why, ncmp_err *err)
{
    ncmp_buf parent = NCMP_BUF_INIT, path = NCMP_BUF_INIT;
    rows r = {0};
    struct lyd_node *tree = NULL;
    int rc = -1;

    if (payload_tops(t, xpath, body, len, 0, &parent, &tree, &r, why, err) != 0)
        goto cleanup;
    for (size_t i = 0; i < r.ntops; i++) {
        ncmp_buf_reset(&path);
        ncmp_buf_append(&path, parent.data, parent.len);
        ncmp_buf_append(&path, r.kid_text.data + r.kids[i].off, r.kids[i].len);
        ncmp_buf_reset(&r.attrs);
        attributes_json(r.kids[i].node, &r.attrs);
        fn(arg, path.data, path.len, r.attrs.data, r.attrs.len);
    }
    rc = 0;
cleanup:
    lyd_free_all(tree);
    rows_free(&r);
    ncmp_buf_free(&parent);
    ncmp_buf_free(&path);
    return rc;
}

/* Parse `body` under `xpath` and make its rows, as r (its sink, keep or
 * row_fn set by the caller) says. */
static int payload_emit(rows *r, const cps_target *t, const char *xpath, const char *body,
                        size_t len, int xml, size_t *nodes, cps_refusal *why, ncmp_err *err)
{
    ncmp_buf parent = NCMP_BUF_INIT;
    struct lyd_node *tree = NULL;
    int rc = -1;

    r->anchor_id = t->anchor_id;
    if (payload_tops(t, xpath, body, len, xml, &parent, &tree, r, why, err) != 0)
        goto cleanup;
    if (emit_rows(r, err) != 0) {
        if (err->cls == NCMP_ERR_REJECT)
            refuse(why, 400, "Data Validation Failed");
        goto cleanup;
    }
    if (nodes)
        *nodes = r->nrows;
    rc = 0;
cleanup:
    lyd_free_all(tree);
    rows_free(r);
    ncmp_buf_free(&parent);
    return rc;
}

int cps_store_rows(const cps_target *t, const char *body, size_t len, ncmp_buf *copy, size_t *nodes,
                   cps_refusal *why, ncmp_err *err)
{
    rows r = {0};
    size_t mark = copy->len;

    r.keep = copy;
    if (payload_emit(&r, t, "/", body, len, 0, nodes, why, err) == 0)
        return 0;
    copy->len = mark; /* nothing of a refused payload */
    return -1;
}

int cps_store_payload_rows(const cps_target *t, const char *xpath, const char *body, size_t len,
                           int xml, cps_row_fn fn, void *arg, size_t *nodes, cps_refusal *why,
                           ncmp_err *err)
{
    rows r = {0};

    r.row_fn = fn;
    r.row_arg = arg;
    return payload_emit(&r, t, xpath, body, len, xml, nodes, why, err);
}

/* cps_store_delete; with `begin`, the transaction is opened here, in the
 * round trip that locks the anchor and deletes (when the events need no
 * snapshot of the node first). */
static int delete_nodes(ncmp_db *db, const cps_target *t, const char *xpath, int begin,
                        cps_refusal *why, ncmp_err *err)
{
    static const char sql[] = "DELETE FROM fragment WHERE anchor_id = $1"
                              " AND path >= $2 AND path < $5 AND (path < $3 OR path >= $4)";
    ncmp_buf path = NCMP_BUF_INIT;
    cps_path_ranges rg = {0};
    cps_notice notice = {0};
    cps_note note = {0};
    const char *params[5];
    PGresult *res = NULL, *lock = NULL;
    ncmp_db_step steps[4];
    size_t n = 0;
    int rc = -1, noted = 0;

    if (!xpath)
        xpath = "/";
    if (cps_path_encode(xpath, &path, err) != 0) {
        refuse(why, 400, "Invalid request");
        goto cleanup;
    }
    ncmp_buf_append_char(&path, '\0');
    path.len--;
    cps_path_ranges_of(path.data, path.len, &rg);
    params[0] = t->anchor_id;
    params[1] = rg.lo1.data;
    params[2] = rg.hi1.data;
    params[3] = rg.lo2.data;
    params[4] = rg.hi2.data;
    if (cps_events_begin_reads()) { /* lock, snapshot, delete: in that order */
        if ((begin && ncmp_db_begin(db, err) != 0) || lock_anchor(db, t, why, err) != 0 ||
            cps_events_begin(db, t, path.data, &notice, err) != 0 ||
            ncmp_db_query(db, sql, 5, params, &res, err) != 0)
            goto cleanup;
    } else {
        /* Lock, delete and the event in one round trip: a refusal below
         * rolls the event back with the rest. */
        if (begin)
            steps[n++] = (ncmp_db_step){"BEGIN", 0, NULL, NULL, NULL};
        ncmp_db_statement(db, "cps_lock_anchor", SQL_LOCK_ANCHOR);
        ncmp_db_statement(db, "cps_delete_nodes", sql);
        steps[n++] = (ncmp_db_step){SQL_LOCK_ANCHOR, 1, params, &lock, "cps_lock_anchor"};
        steps[n++] = (ncmp_db_step){sql, 5, params, &res, "cps_delete_nodes"};
        noted = cps_events_note_step(db, t, "remove", xpath, &note, &steps[n], err);
        if (noted < 0)
            goto cleanup;
        n += (size_t)noted;
        /* an anchor gone meanwhile deleted nothing */
        if (ncmp_db_pipeline(db, steps, n, NULL, err) != 0 || anchor_locked(t, lock, why, err) != 0)
            goto cleanup;
    }
    if (path.len && strcmp(PQcmdTuples(res), "0") == 0) {
        ncmp_err_set(err, NCMP_ERR_REJECT,
                     "DataNode with xpath %s was not found for anchor %s and dataspace %s.", xpath,
                     t->anchor_name, t->dataspace);
        refuse(why, 404, "DataNode not found");
        goto cleanup;
    }
    if (!noted && cps_events_end(db, t, &notice, "remove", xpath, err) != 0)
        goto cleanup;
    rc = 0;
cleanup:
    cps_note_clear(&note);
    cps_notice_clear(&notice);
    PQclear(res);
    PQclear(lock);
    cps_path_ranges_free(&rg);
    ncmp_buf_free(&path);
    return rc;
}

int cps_store_delete(ncmp_db *db, const cps_target *t, const char *xpath, cps_refusal *why,
                     ncmp_err *err)
{
    return delete_nodes(db, t, xpath, 0, why, err);
}

/* --- the routes ----------------------------------------------------------- */

/* CPS's observed-timestamp, yyyy-MM-dd'T'HH:mm:ss.SSSZ (Java's Z: a
 * sign and four digits): *out the request's, NULL when absent. A value of
 * another form is answered 400 and gives -1. */
static int observed_asked(ncmp_http_request *req, const char **out)
{
    static const char form[] = "dddd-dd-ddTdd:dd:dd.ddd+dddd";
    const char *v = ncmp_http_query(req, "observed-timestamp");
    size_t i;

    *out = NULL;
    if (!v || !*v)
        return 0;
    for (i = 0; form[i] && v[i]; i++) {
        char f = form[i];
        if (f == 'd'   ? (v[i] < '0' || v[i] > '9')
            : f == '+' ? (v[i] != '+' && v[i] != '-')
                       : v[i] != f)
            break;
    }
    if (form[i] || v[i]) {
        ncmp_http_respond_error(req, 400, "Invalid request",
                                "observed-timestamp must be yyyy-MM-dd'T'HH:mm:ss.SSSZ, e.g. "
                                "2026-12-03T10:15:30.000+0000");
        return -1;
    }
    *out = v;
    return 0;
}

/* A write's anchor is the one remembered when there is one
 * (cps_read_target): an anchor's id is never given again and its name,
 * dataspace and schema set never change, so the write's lock of its row
 * (SQL_LOCK_ANCHOR) is the check, and a refusal before it (the payload
 * checked against the anchor's schema) is checked after it. After a
 * refused write (its transaction rolled back): 1 when the anchor
 * remembered is gone, forgotten and t cleared, so that the write runs
 * again with the anchor resolved anew (one made again under the name may
 * be there); 0 when the refusal stands. */
static int write_again(cps_api *api, ncmp_db *db, cps_target *t, int recalled,
                       const cps_refusal *why, const ncmp_err *err)
{
    cps_target now = {0};
    cps_refusal nwhy = {0};
    ncmp_err nerr;
    int same;

    if (!recalled || err->cls != NCMP_ERR_REJECT || !why->status)
        return 0;
    same = why->message != ANCHOR_GONE &&
           cps_store_resolve(db, api->schemas, t->dataspace, t->anchor_name, &now, &nwhy, &nerr) ==
               0 &&
           strcmp(now.anchor_id, t->anchor_id) == 0;
    cps_target_clear(&now);
    if (same)
        return 0;
    anchor_forget(api->anchors, t->dataspace, t->anchor_name);
    cps_target_clear(t);
    return 1;
}

/* A write's anchor (cps_read_target: remembered when `recall`) and, the
 * first time, its connection. Answers and returns -1 when it cannot. */
static int write_target(ncmp_http_request *req, cps_api *api, int recall, const char *observed,
                        cps_target *t, int *recalled, ncmp_db **db)
{
    ncmp_err err;

    if (cps_read_target(req, api, ncmp_http_param(req, "dataspace"), ncmp_http_param(req, "anchor"),
                        recall, t, recalled) != 0)
        return -1;
    if (!*db && rest_pool_get(api->pool, CPS_POOL_WAIT_MS, db, &err) != 0) {
        rest_db_answer_error(req, &err);
        return -1;
    }
    t->observed_timestamp = observed;
    return 0;
}

/* A write of the request's body, in a transaction of its own. */
static void data_write(ncmp_http_request *req, cps_api *api, cps_write_kind kind)
{
    const char *xpath = ncmp_http_query(req, "xpath");
    const char *ctype = ncmp_http_header(req, "Content-Type");
    int v = cps_api_version(req, 2), dry_run = 0, xml = ctype && strstr(ctype, "xml");
    size_t len = 0;
    const char *body = ncmp_http_body(req, &len);
    const char *observed = NULL;
    cps_target t = {0};
    cps_refusal why = {0};
    ncmp_db *db = NULL;
    ncmp_err err;
    size_t nodes = 0;
    int in_tx = 0, recalled = 0;

    if (!v)
        return;
    if (ncmp_http_query_bool(req, "dry-run", 0, &dry_run) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid request", "dry-run must be true or false");
        return;
    }
    if (!body || len == 0) {
        ncmp_http_respond_error(req, 400, "Invalid request", "the request has no data");
        return;
    }
    if (observed_asked(req, &observed) != 0)
        return;
    /* a dry run locks nothing, so its anchor is looked up */
    for (int recall = !dry_run;; recall = 0) {
        if (write_target(req, api, recall, observed, &t, &recalled, &db) != 0)
            goto cleanup;
        if (!dry_run) {
            if (ncmp_db_begin(db, &err) != 0) {
                rest_db_answer_error(req, &err);
                goto cleanup;
            }
            in_tx = 1;
        }
        if (cps_store_write(db, &t, kind, xpath, body, len, xml, dry_run, &nodes, &why, &err) == 0)
            break;
        if (in_tx) {
            in_tx = 0;
            ncmp_db_rollback(db);
        }
        if (!write_again(api, db, &t, recalled, &why, &err)) {
            cps_respond_refusal(req, &why, &err);
            goto cleanup;
        }
    }
    if (in_tx) {
        in_tx = 0;
        if (ncmp_db_commit(db, &err) != 0) {
            rest_db_answer_error(req, &err);
            goto cleanup;
        }
        cps_analyzer_wrote(api->analyzer, (long)nodes);
    }
    if (dry_run)
        ncmp_http_respond(req, 200, NULL, "", 0);
    else if (kind == CPS_WRITE_SAVE || kind == CPS_WRITE_SAVE_LIST)
        ncmp_http_respond(req, 201, NULL, "", 0);
    else
        ncmp_http_respond(req, 200, NULL, "", 0);
cleanup:
    if (in_tx)
        ncmp_db_rollback(db);
    if (db)
        rest_pool_put(api->pool, db);
    cps_target_clear(&t);
}

static void h_save(ncmp_http_request *req, void *arg)
{
    data_write(req, arg, CPS_WRITE_SAVE);
}

static void h_save_list(ncmp_http_request *req, void *arg)
{
    data_write(req, arg, CPS_WRITE_SAVE_LIST);
}

static void h_update(ncmp_http_request *req, void *arg)
{
    data_write(req, arg, CPS_WRITE_UPDATE);
}

static void h_replace(ncmp_http_request *req, void *arg)
{
    data_write(req, arg, CPS_WRITE_REPLACE);
}

static void h_replace_list(ncmp_http_request *req, void *arg)
{
    data_write(req, arg, CPS_WRITE_REPLACE_LIST);
}

/* DELETE .../nodes?xpath= (and v1's list-nodes): the node and its
 * subtree, every entry of a list when the xpath names a list, the whole
 * tree for "/"; in a transaction of its own. */
static void h_delete(ncmp_http_request *req, void *arg)
{
    cps_api *api = arg;
    const char *observed = NULL;
    cps_target t = {0};
    cps_refusal why = {0};
    ncmp_db *db = NULL;
    ncmp_err err;
    int recalled = 0;

    if (!cps_api_version(req, 2) || observed_asked(req, &observed) != 0)
        return;
    for (int recall = 1;; recall = 0) {
        if (write_target(req, api, recall, observed, &t, &recalled, &db) != 0)
            goto cleanup;
        if (delete_nodes(db, &t, ncmp_http_query(req, "xpath"), 1, &why, &err) == 0)
            break;
        ncmp_db_rollback(db);
        if (!write_again(api, db, &t, recalled, &why, &err)) {
            cps_respond_refusal(req, &why, &err);
            goto cleanup;
        }
    }
    if (ncmp_db_commit(db, &err) != 0) {
        rest_db_answer_error(req, &err);
        goto cleanup;
    }
    ncmp_http_respond(req, 204, NULL, "", 0);
cleanup:
    if (db)
        rest_pool_put(api->pool, db);
    cps_target_clear(&t);
}

void cps_data_routes_add(cps_api *api, ncmp_http_server *s)
{
#define A "/cps/api/{v}/dataspaces/{dataspace}/anchors/{anchor}"
    ncmp_http_route(s, "POST", A "/nodes", h_save, api);
    ncmp_http_route(s, "PATCH", A "/nodes", h_update, api);
    ncmp_http_route(s, "PUT", A "/nodes", h_replace, api);
    ncmp_http_route(s, "DELETE", A "/nodes", h_delete, api);
    ncmp_http_route(s, "POST", A "/list-nodes", h_save_list, api);
    ncmp_http_route(s, "PUT", A "/list-nodes", h_replace_list, api);
    ncmp_http_route(s, "DELETE", A "/list-nodes", h_delete, api);
#undef A
}
