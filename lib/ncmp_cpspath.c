#include "ncmp_cpspath.h"

#include <stdlib.h>
#include <string.h>

#include "ncmp_cpspath_parse.h"

/*
 * Two parts: the shared parser (ncmp_cpspath_parse) builds the syntax
 * tree, with a check that refuses what the grammar allows for other models
 * but the inventory never had (prefixes, an ancestor path of several
 * steps); then a translator matches the steps against a static table of
 * the dmi-registry model and writes SQL for every way the path can match.
 */

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */
/* ------------------------------------------------------------------------ */

/* The first prefix ':' of the tree, or 0. */
static size_t cp_first_colon(const ncmp_cpspath_ast *path)
{
    size_t first = 0;

#define CP_COLON(c)                                                                                \
    do {                                                                                           \
        if ((c) && (!first || (c) < first))                                                        \
            first = (c);                                                                           \
    } while (0)
    for (size_t i = 0; i < path->nsteps; i++)
        CP_COLON(path->steps[i].colon);
    for (size_t i = 0; i < path->nancestor; i++)
        CP_COLON(path->ancestor[i].colon);
    for (size_t i = 0; i < path->natoms; i++)
        CP_COLON(path->atoms[i].leaf_colon);
    if (path->has_attribute)
        CP_COLON(path->attribute_colon);
#undef CP_COLON
    return first;
}

/* Parse `src` into *out (owned by the caller, ncmp_cpspath_ast_free). The
 * inventory's names have no module prefix and its ancestor axis names one
 * node: both are refused as they always were. */
static int cp_parse(const char *src, ncmp_cpspath_ast **out, ncmp_err *err)
{
    ncmp_cpspath_ast *path = NULL;
    size_t colon;
    int rc = -1;

    if (ncmp_cpspath_parse(src, &path, err) < 0)
        return -1;
    colon = cp_first_colon(path);
    if (path->nancestor > 1 && (!colon || path->ancestor[1].at < colon)) {
        ncmp_cpspath_reject(src, path->ancestor[1].at, err,
                            "the ancestor axis must be the last step");
        goto cleanup;
    }
    if (colon) {
        ncmp_cpspath_reject(src, colon, err, "unexpected character ':'");
        goto cleanup;
    }
    *out = path;
    path = NULL;
    rc = 0;
cleanup:
    ncmp_cpspath_ast_free(path);
    return rc;
}
/* ------------------------------------------------------------------------ */
/* The model: dmi-registry as stored in cm_handle                           */
/* ------------------------------------------------------------------------ */

typedef enum cp_scope {
    CP_SCOPE_TOP,     /* dmi-registry: above the handles */
    CP_SCOPE_HANDLE,  /* one row of cm_handle */
    CP_SCOPE_PUBLIC,  /* one entry of public_properties */
    CP_SCOPE_PRIVATE, /* additional-properties: never matches */
} cp_scope;

typedef enum cp_exists {
    CP_EXISTS_IMPLIED, /* whenever its parent exists */
    CP_EXISTS_SQL,     /* when `exists_sql` holds */
    CP_EXISTS_NEVER,   /* not stored (no column), or private */
} cp_exists;

typedef struct cp_node {
    const char *name;
    int parent; /* -1 for the top */
    int is_leaf;
    cp_scope scope;
    cp_exists exists;
    const char *exists_sql;
    /* leaves: a text expression that is NULL when the leaf is absent;
     * NULL when the leaf is not stored (conditions on it are false) */
    const char *value;
    /* the value being non-NULL proves the leaf and its parents exist */
    int proves_parents;
    /* the column of cm_handle the value is (the value is "h.<column>"),
     * or NULL when the value is an expression or not on cm_handle */
    const char *column;
} cp_node;

enum {
    M_REGISTRY,
    M_HANDLES,
    M_ID,
    M_DMI,
    M_DMI_DATA,
    M_DMI_MODEL,
    M_DMI_JOBS_READ,
    M_DMI_JOBS_WRITE,
    M_TAG,
    M_ALTERNATE_ID,
    M_PRODUCER,
    M_PRIVATE,
    M_PRIVATE_NAME,
    M_PRIVATE_VALUE,
    M_PUBLIC,
    M_PUBLIC_NAME,
    M_PUBLIC_VALUE,
    M_STATE,
    M_STATE_NAME,
    M_LOCK,
    M_LOCK_REASON,
    M_LOCK_DETAILS,
    M_LAST_UPDATE,
    M_SYNC_ENABLED,
    M_DATASTORES,
    M_OPERATIONAL,
    M_OPERATIONAL_STATE,
    M_OPERATIONAL_TIME,
    M_RUNNING,
    M_RUNNING_STATE,
    M_RUNNING_TIME,
    M_COUNT
};

#define INNER(name, parent, scope, exists, exists_sql)                                             \
    {                                                                                              \
        name, parent, 0, scope, exists, exists_sql, NULL, 0, NULL                                  \
    }
/* a leaf whose value is an expression */
#define LEAF(name, parent, scope, value)                                                           \
    {                                                                                              \
        name, parent, 1, scope, CP_EXISTS_IMPLIED, NULL, value, 1, NULL                            \
    }
/* a leaf of the handle that is a column of cm_handle */
#define COLUMN(name, parent, column)                                                               \
    {                                                                                              \
        name, parent, 1, CP_SCOPE_HANDLE, CP_EXISTS_IMPLIED, NULL, "h." column, 1, column          \
    }
/* a leaf with no column: conditions on it are false */
#define UNSTORED(name, parent, scope)                                                              \
    {                                                                                              \
        name, parent, 1, scope, CP_EXISTS_NEVER, NULL, NULL, 1, NULL                               \
    }

/* Timestamps as NCMP writes them, so that text comparisons order them. */
#define CP_LAST_UPDATE_SQL                                                                         \
    "to_char(h.last_update_time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"+0000\"')"

/* Every identifier in the generated SQL comes from this table. */
static const cp_node cp_model[M_COUNT] = {
    [M_REGISTRY] = INNER("dmi-registry", -1, CP_SCOPE_TOP, CP_EXISTS_IMPLIED, NULL),
    [M_HANDLES] = INNER("cm-handles", M_REGISTRY, CP_SCOPE_HANDLE, CP_EXISTS_IMPLIED, NULL),
    [M_ID] = COLUMN("id", M_HANDLES, "id"),
    [M_DMI] = COLUMN("dmi-service-name", M_HANDLES, "dmi_service_name"),
    [M_DMI_DATA] = COLUMN("dmi-data-service-name", M_HANDLES, "dmi_data_service_name"),
    [M_DMI_MODEL] = COLUMN("dmi-model-service-name", M_HANDLES, "dmi_model_service_name"),
    [M_DMI_JOBS_READ] = COLUMN("dmi-datajobs-read-service", M_HANDLES, "dmi_datajobs_read_service"),
    [M_DMI_JOBS_WRITE] =
        COLUMN("dmi-datajobs-write-service", M_HANDLES, "dmi_datajobs_write_service"),
    [M_TAG] = COLUMN("module-set-tag", M_HANDLES, "module_set_tag"),
    [M_ALTERNATE_ID] = {"alternate-id", M_HANDLES, 1, CP_SCOPE_HANDLE, CP_EXISTS_SQL,
                        "h.alternate_id IS NOT NULL", "h.alternate_id", 1, "alternate_id"},
    [M_PRODUCER] = COLUMN("data-producer-identifier", M_HANDLES, "data_producer_identifier"),
    [M_PRIVATE] =
        INNER("additional-properties", M_HANDLES, CP_SCOPE_PRIVATE, CP_EXISTS_NEVER, NULL),
    [M_PRIVATE_NAME] = UNSTORED("name", M_PRIVATE, CP_SCOPE_PRIVATE),
    [M_PRIVATE_VALUE] = UNSTORED("value", M_PRIVATE, CP_SCOPE_PRIVATE),
    /* existence and conditions of the three public nodes are written
     * together, for one entry (see cp_emit_public) */
    [M_PUBLIC] = INNER("public-properties", M_HANDLES, CP_SCOPE_PUBLIC, CP_EXISTS_IMPLIED, NULL),
    [M_PUBLIC_NAME] = LEAF("name", M_PUBLIC, CP_SCOPE_PUBLIC, "p.key"),
    [M_PUBLIC_VALUE] = LEAF("value", M_PUBLIC, CP_SCOPE_PUBLIC, "p.value"),
    [M_STATE] = INNER("state", M_HANDLES, CP_SCOPE_HANDLE, CP_EXISTS_IMPLIED, NULL),
    [M_STATE_NAME] = COLUMN("cm-handle-state", M_STATE, "state"),
    [M_LOCK] =
        INNER("lock-reason", M_STATE, CP_SCOPE_HANDLE, CP_EXISTS_SQL, "h.lock_reason IS NOT NULL"),
    [M_LOCK_REASON] = COLUMN("reason", M_LOCK, "lock_reason"),
    /* details are written with the reason, but nothing enforces that they
     * go together, so a value of theirs does not prove the lock-reason */
    [M_LOCK_DETAILS] = {"details", M_LOCK, 1, CP_SCOPE_HANDLE, CP_EXISTS_SQL,
                        "h.lock_details IS NOT NULL", "h.lock_details", 0, "lock_details"},
    [M_LAST_UPDATE] = LEAF("last-update-time", M_STATE, CP_SCOPE_HANDLE, CP_LAST_UPDATE_SQL),
    [M_SYNC_ENABLED] =
        LEAF("data-sync-enabled", M_STATE, CP_SCOPE_HANDLE, "h.data_sync_enabled::text"),
    /* NCMP writes the datastores with the first sync state */
    [M_DATASTORES] = INNER("datastores", M_STATE, CP_SCOPE_HANDLE, CP_EXISTS_SQL,
                           "h.operational_sync_state IS NOT NULL"),
    [M_OPERATIONAL] = INNER("operational", M_DATASTORES, CP_SCOPE_HANDLE, CP_EXISTS_IMPLIED, NULL),
    [M_OPERATIONAL_STATE] = COLUMN("sync-state", M_OPERATIONAL, "operational_sync_state"),
    [M_OPERATIONAL_TIME] = UNSTORED("last-sync-time", M_OPERATIONAL, CP_SCOPE_HANDLE),
    /* NCMP never sets the running datastore */
    [M_RUNNING] = INNER("running", M_DATASTORES, CP_SCOPE_HANDLE, CP_EXISTS_NEVER, NULL),
    [M_RUNNING_STATE] = UNSTORED("sync-state", M_RUNNING, CP_SCOPE_HANDLE),
    [M_RUNNING_TIME] = UNSTORED("last-sync-time", M_RUNNING, CP_SCOPE_HANDLE),
};

#define CP_MODEL_N     M_COUNT
#define CP_MODEL_DEPTH 6 /* dmi-registry/cm-handles/state/datastores/operational/sync-state */

/* dmi-registry is at depth 0. */
static int cp_depth(int node)
{
    int depth = 0;

    while ((node = cp_model[node].parent) >= 0)
        depth++;
    return depth;
}

/* Is `node` below `above` (-1: the document root, above everything)? */
static int cp_is_below(int node, int above)
{
    for (int n = cp_model[node].parent; n >= 0; n = cp_model[n].parent)
        if (n == above)
            return 1;
    return above < 0;
}

/* The leaf an atom in a predicate of `context` is about, or -1. */
static int cp_atom_leaf(const ncmp_cpspath_ast *path, const ncmp_cpspath_atom *atom, int context)
{
    if (atom->on_text)
        return cp_model[context].is_leaf ? context : -1;
    for (int n = 0; n < CP_MODEL_N; n++)
        if (cp_model[n].parent == context && cp_model[n].is_leaf &&
            ncmp_cpspath_name_is(path, atom->leaf, atom->leaf_len, cp_model[n].name))
            return n;
    return -1;
}

/* ------------------------------------------------------------------------ */
/* SQL output with roll-back                                                */
/* ------------------------------------------------------------------------ */

/* What a piece of output turned out to be. A constant leaves no text and
 * no parameters behind, so that every parameter left is used in the text
 * (PostgreSQL refuses a parameter whose type it cannot infer). */
typedef enum cp_sql { CP_SQL_FALSE, CP_SQL_TRUE, CP_SQL_EXPR } cp_sql;

/* The last comparison of a column with a parameter (`h.<column> = $k` or
 * `<>`) written, while its text is still in the output: sql[start, end). */
typedef struct cp_comparison {
    const char *column; /* NULL: none */
    int negate;
    size_t start, end;
} cp_comparison;

typedef struct cp_out {
    ncmp_buf sql;
    ncmp_cpspath_params params;
    int first_param;
    cp_comparison last;
} cp_out;

typedef struct cp_mark {
    size_t len, nparams;
} cp_mark;

static cp_mark cp_out_mark(const cp_out *o)
{
    cp_mark m = {o->sql.len, o->params.n};
    return m;
}

static void cp_out_rollback(cp_out *o, cp_mark m)
{
    if (m.len < o->last.end)
        o->last.column = NULL; /* its text goes */
    o->sql.len = m.len;
    if (o->sql.data)
        o->sql.data[m.len] = '\0';
    while (o->params.n > m.nparams)
        free(o->params.values[--o->params.n]);
}

/* Write the next parameter's placeholder with `cast` after it. */
static void cp_out_param(cp_out *o, const char *value, const char *cast)
{
    o->params.values = ncmp_xrealloc(o->params.values, (o->params.n + 1) * sizeof(char *));
    o->params.values[o->params.n] = ncmp_xstrdup(value);
    ncmp_buf_appendf(&o->sql, "$%d%s", o->first_param + (int)o->params.n, cast);
    o->params.n++;
}

/* AND / OR of items written one after the other. An item that decides the
 * whole (false in an AND, true in an OR) rolls everything back; a neutral
 * item is dropped; two or more items get brackets. */
typedef struct cp_join {
    const char *op;
    cp_sql absorbing;
    cp_mark start, item;
    int n;
    int decided;
} cp_join;

static void cp_join_begin(cp_out *o, cp_join *j, int is_and)
{
    memset(j, 0, sizeof(*j));
    j->op = is_and ? " AND " : " OR ";
    j->absorbing = is_and ? CP_SQL_FALSE : CP_SQL_TRUE;
    j->start = cp_out_mark(o);
}

static void cp_join_item(cp_out *o, cp_join *j)
{
    j->item = cp_out_mark(o);
    if (j->n > 0)
        ncmp_buf_append_str(&o->sql, j->op);
}

/* Record what the item written since cp_join_item was; returns 1 when the
 * join is decided and the caller can stop. */
static int cp_join_item_done(cp_out *o, cp_join *j, cp_sql r)
{
    if (r == j->absorbing) {
        cp_out_rollback(o, j->start);
        j->decided = 1;
        return 1;
    }
    if (r == CP_SQL_EXPR)
        j->n++;
    else
        cp_out_rollback(o, j->item);
    return 0;
}

static cp_sql cp_join_end(cp_out *o, cp_join *j)
{
    size_t at = j->start.len;

    if (j->decided)
        return j->absorbing;
    if (j->n == 0)
        return j->absorbing == CP_SQL_FALSE ? CP_SQL_TRUE : CP_SQL_FALSE;
    if (j->n > 1) {
        ncmp_buf_reserve(&o->sql, 2);
        memmove(o->sql.data + at + 1, o->sql.data + at, o->sql.len - at + 1);
        o->sql.data[at] = '(';
        o->sql.len++;
        ncmp_buf_append_char(&o->sql, ')');
        if (o->last.column && o->last.start >= at) {
            o->last.start++;
            o->last.end++;
        }
    }
    return CP_SQL_EXPR;
}

/* ------------------------------------------------------------------------ */
/* Conditions                                                               */
/* ------------------------------------------------------------------------ */

static const char *cp_op_sql(ncmp_cpspath_op op)
{
    static const char *const sql[] = {"=", "<>", "<", ">", "<=", ">="};
    return sql[op];
}

/* An unquoted number compares as a number, with the leaves whose text is
 * a number (any other leaf does not match). A quoted string compares as
 * text, ordered by code point whatever the database's collation, so that
 * timestamps and versions order the same everywhere. */
static cp_sql cp_emit_compare(cp_out *o, const ncmp_cpspath_atom *atom, const cp_node *leaf)
{
    const char *value = leaf->value;
    size_t start = o->sql.len;

    if (atom->lit_kind == NCMP_CPSPATH_LIT_NUMBER) {
        ncmp_buf_appendf(&o->sql,
                         "(CASE WHEN %s ~ '^[-+]?[0-9]+([.][0-9]+)?$' THEN (%s)::numeric END) %s ",
                         value, value, cp_op_sql(atom->op));
        cp_out_param(o, atom->lit, "::numeric");
    } else if (atom->op == NCMP_CPSPATH_EQ || atom->op == NCMP_CPSPATH_NE) {
        ncmp_buf_appendf(&o->sql, "%s %s ", value, cp_op_sql(atom->op));
        cp_out_param(o, atom->lit, "");
        if (leaf->column) {
            cp_comparison c = {leaf->column, atom->op == NCMP_CPSPATH_NE, start, o->sql.len};
            o->last = c;
        }
    } else {
        ncmp_buf_appendf(&o->sql, "%s COLLATE \"C\" %s ", value, cp_op_sql(atom->op));
        cp_out_param(o, atom->lit, "");
    }
    return CP_SQL_EXPR;
}

static cp_sql cp_emit_atom(cp_out *o, const ncmp_cpspath_ast *path, const ncmp_cpspath_atom *atom,
                           int context)
{
    int leaf = cp_atom_leaf(path, atom, context);
    const char *value = leaf >= 0 ? cp_model[leaf].value : NULL;

    if (!value)
        return CP_SQL_FALSE; /* no such leaf here, or not stored: no match */
    if (atom->is_contains) {
        /* strpos: a value is never a LIKE pattern */
        ncmp_buf_appendf(&o->sql, "strpos(%s, ", value);
        cp_out_param(o, atom->lit, ") > 0");
        return CP_SQL_EXPR;
    }
    return cp_emit_compare(o, atom, &cp_model[leaf]);
}

/* Atoms [first, first+n) joined by `and`. */
static cp_sql cp_emit_all(cp_out *o, const ncmp_cpspath_ast *path, size_t first, size_t n,
                          int context)
{
    cp_join all;

    cp_join_begin(o, &all, 1);
    for (size_t i = 0; i < n; i++) {
        cp_join_item(o, &all);
        if (cp_join_item_done(o, &all, cp_emit_atom(o, path, &path->atoms[first + i], context)))
            break;
    }
    return cp_join_end(o, &all);
}

/* One [...]: `or` of `and`-groups of atoms (`and` binds tighter). */
static cp_sql cp_emit_pred(cp_out *o, const ncmp_cpspath_ast *path, const ncmp_cpspath_pred *pred,
                           int context)
{
    cp_join any;
    size_t i = 0;

    cp_join_begin(o, &any, 0);
    while (i < pred->n) {
        size_t end = i + 1;
        cp_sql r;

        while (end < pred->n && !path->atoms[pred->first + end].or_before)
            end++;
        cp_join_item(o, &any);
        r = cp_emit_all(o, path, pred->first + i, end - i, context);
        i = end;
        if (cp_join_item_done(o, &any, r))
            break;
    }
    return cp_join_end(o, &any);
}

/* Does a true `pred` prove that its node exists? It does when each atom
 * is about a stored leaf whose value proves its parents (any atom that is
 * true then proves it), or is about nothing (and is false). */
static int cp_pred_proves(const ncmp_cpspath_ast *path, const ncmp_cpspath_pred *pred, int context)
{
    for (size_t i = 0; i < pred->n; i++) {
        int leaf = cp_atom_leaf(path, &path->atoms[pred->first + i], context);
        if (leaf >= 0 && cp_model[leaf].value && !cp_model[leaf].proves_parents)
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* One way the path matches the model                                       */
/* ------------------------------------------------------------------------ */

typedef struct cp_chain {
    int target; /* the node the last step matched */
    int result; /* the node selected: the target or its ancestor:: */
    /* at each depth of the target's model path: the step that matched
     * there ([0]) and the ancestor step ([1]), or NULL */
    const ncmp_cpspath_step *at[CP_MODEL_DEPTH][2];
    int nodes[CP_MODEL_DEPTH]; /* the target's model path, by depth */
} cp_chain;

/* The predicates attached at depth d (of the step and of ancestor::);
 * `out` holds NCMP_CPSPATH_MAX_CONDS. Returns how many. */
static size_t cp_chain_preds(const ncmp_cpspath_ast *path, const cp_chain *c, int d,
                             const ncmp_cpspath_pred **out)
{
    size_t n = 0;

    for (int k = 0; k < 2; k++)
        for (size_t i = 0; c->at[d][k] && i < c->at[d][k]->npreds; i++)
            out[n++] = &path->preds[c->at[d][k]->first_pred + i];
    return n;
}

/* If the predicates on the public-properties nodes are exactly
 * `@name='N'` and at most one `@value='V'` (anded), set *name and *value
 * (NULL when there is none) and return 1. */
static int cp_public_equalities(const ncmp_cpspath_ast *path, const cp_chain *c, int depth,
                                const char **name, const char **value)
{
    const ncmp_cpspath_pred *preds[NCMP_CPSPATH_MAX_CONDS];

    *name = *value = NULL;
    for (int d = cp_depth(M_PUBLIC); d <= depth; d++) {
        size_t npreds = cp_chain_preds(path, c, d, preds);
        for (size_t j = 0; j < npreds; j++) {
            const ncmp_cpspath_pred *pred = preds[j];
            for (size_t i = 0; i < pred->n; i++) {
                const ncmp_cpspath_atom *atom = &path->atoms[pred->first + i];
                int leaf = cp_atom_leaf(path, atom, c->nodes[d]);
                const char **slot = leaf == M_PUBLIC_NAME    ? name
                                    : leaf == M_PUBLIC_VALUE ? value
                                                             : NULL;
                if (atom->or_before || atom->is_contains || atom->op != NCMP_CPSPATH_EQ ||
                    atom->lit_kind != NCMP_CPSPATH_LIT_STRING || !slot || *slot)
                    return 0;
                *slot = atom->lit;
            }
        }
    }
    return *name != NULL;
}

/* The public-properties entry the chain goes through: one entry must
 * satisfy every predicate on it and its leaves. A name and value pair
 * becomes `@>` with a JSON object, which the jsonb_path_ops index serves;
 * anything else looks at each entry. */
static cp_sql cp_emit_public(cp_out *o, const ncmp_cpspath_ast *path, const cp_chain *c, int depth)
{
    const ncmp_cpspath_pred *preds[NCMP_CPSPATH_MAX_CONDS];
    const char *name, *value;
    cp_mark start = cp_out_mark(o);
    cp_join all;
    int any = 0;

    if (cp_public_equalities(path, c, depth, &name, &value)) {
        if (!value) {
            ncmp_buf_append_str(&o->sql, "h.public_properties ? ");
            cp_out_param(o, name, "");
        } else {
            ncmp_buf json = NCMP_BUF_INIT;
            ncmp_buf_append_char(&json, '{');
            ncmp_buf_append_json_string(&json, name);
            ncmp_buf_append_char(&json, ':');
            ncmp_buf_append_json_string(&json, value);
            ncmp_buf_append_char(&json, '}');
            ncmp_buf_append_str(&o->sql, "h.public_properties @> ");
            cp_out_param(o, json.data, "::jsonb");
            ncmp_buf_free(&json);
        }
        return CP_SQL_EXPR;
    }
    ncmp_buf_append_str(&o->sql,
                        "EXISTS (SELECT 1 FROM jsonb_each_text(h.public_properties) p WHERE ");
    cp_join_begin(o, &all, 1);
    for (int d = cp_depth(M_PUBLIC); d <= depth; d++) {
        size_t npreds = cp_chain_preds(path, c, d, preds);
        for (size_t j = 0; j < npreds && !all.decided; j++) {
            any = 1;
            cp_join_item(o, &all);
            cp_join_item_done(o, &all, cp_emit_pred(o, path, preds[j], c->nodes[d]));
        }
    }
    if (cp_join_end(o, &all) == CP_SQL_FALSE) {
        cp_out_rollback(o, start);
        return CP_SQL_FALSE;
    }
    if (!any) {
        /* no conditions: any entry will do */
        cp_out_rollback(o, start);
        ncmp_buf_append_str(&o->sql, "h.public_properties <> '{}'::jsonb");
        return CP_SQL_EXPR;
    }
    ncmp_buf_append_char(&o->sql, ')');
    return CP_SQL_EXPR;
}

/* Deepest depth whose node a predicate proves to exist (-1: none); the
 * existence of that node and of its parents need not be written. */
static int cp_chain_proven(const ncmp_cpspath_ast *path, const cp_chain *c, int depth)
{
    const ncmp_cpspath_pred *preds[NCMP_CPSPATH_MAX_CONDS];
    int proven = -1;

    for (int d = 0; d <= depth; d++) {
        size_t npreds = cp_chain_preds(path, c, d, preds);
        for (size_t j = 0; j < npreds; j++)
            if (cp_pred_proves(path, preds[j], c->nodes[d]))
                proven = d;
    }
    return proven;
}

/* The condition on a handle for one chain: the target exists and every
 * predicate holds. */
static cp_sql cp_emit_chain(cp_out *o, const ncmp_cpspath_ast *path, cp_chain *c)
{
    const ncmp_cpspath_pred *preds[NCMP_CPSPATH_MAX_CONDS];
    int depth = cp_depth(c->target);
    int proven;
    size_t npreds;
    cp_join all;

    for (int n = c->target; n >= 0; n = cp_model[n].parent) {
        c->nodes[cp_depth(n)] = n;
        if (cp_model[n].scope == CP_SCOPE_PRIVATE)
            return CP_SQL_FALSE;
    }
    if (cp_model[c->result].scope == CP_SCOPE_TOP)
        return CP_SQL_FALSE; /* no handle holds dmi-registry */
    proven = cp_chain_proven(path, c, depth);
    cp_join_begin(o, &all, 1);
    for (int d = 0; d <= depth && !all.decided; d++) {
        const cp_node *node = &cp_model[c->nodes[d]];

        if (node->scope == CP_SCOPE_PUBLIC) {
            if (c->nodes[d] == M_PUBLIC) {
                cp_join_item(o, &all);
                cp_join_item_done(o, &all, cp_emit_public(o, path, c, depth));
            }
            continue;
        }
        if (d > proven && node->exists != CP_EXISTS_IMPLIED) {
            cp_join_item(o, &all);
            if (node->exists == CP_EXISTS_SQL)
                ncmp_buf_append_str(&o->sql, node->exists_sql);
            cp_join_item_done(o, &all, node->exists == CP_EXISTS_SQL ? CP_SQL_EXPR : CP_SQL_FALSE);
            if (all.decided)
                break;
        }
        npreds = cp_chain_preds(path, c, d, preds);
        for (size_t j = 0; j < npreds && !all.decided; j++) {
            cp_join_item(o, &all);
            cp_join_item_done(o, &all, cp_emit_pred(o, path, preds[j], c->nodes[d]));
        }
    }
    return cp_join_end(o, &all);
}

/* ------------------------------------------------------------------------ */
/* Matching the steps against the model                                     */
/* ------------------------------------------------------------------------ */

typedef struct cp_match {
    cp_out *o;
    const ncmp_cpspath_ast *path;
    cp_join any; /* the chains, or-ed */
    cp_chain chain;
} cp_match;

/* Add the current chain; returns 1 once the whole is decided. */
static int cp_match_emit(cp_match *m)
{
    cp_join_item(m->o, &m->any);
    return cp_join_item_done(m->o, &m->any, cp_emit_chain(m->o, m->path, &m->chain));
}

static int cp_match_ancestor(cp_match *m, int target)
{
    const ncmp_cpspath_step *anc = &m->path->ancestor[0];

    m->chain.target = target;
    if (m->path->nancestor == 0) {
        m->chain.result = target;
        return cp_match_emit(m);
    }
    for (int a = cp_model[target].parent; a >= 0; a = cp_model[a].parent) {
        int d = cp_depth(a), decided;

        if (!ncmp_cpspath_name_is(m->path, anc->name, anc->name_len, cp_model[a].name))
            continue;
        m->chain.result = a;
        m->chain.at[d][1] = anc;
        decided = cp_match_emit(m);
        m->chain.at[d][1] = NULL;
        if (decided)
            return 1;
    }
    return 0;
}

/* Match steps i.. below model node `parent` (-1: the document root). Each
 * step matches a deeper node than the one before, so this recurses at
 * most CP_MODEL_DEPTH + 1 times. */
static int cp_match_steps(cp_match *m, size_t i, int parent)
{
    const ncmp_cpspath_step *step;

    if (i == m->path->nsteps)
        return cp_match_ancestor(m, parent);
    step = &m->path->steps[i];
    for (int n = 0; n < CP_MODEL_N; n++) {
        int d = cp_depth(n), decided;

        if (!ncmp_cpspath_name_is(m->path, step->name, step->name_len, cp_model[n].name))
            continue;
        if (step->descendant ? !cp_is_below(n, parent) : cp_model[n].parent != parent)
            continue;
        m->chain.at[d][0] = step;
        decided = cp_match_steps(m, i + 1, n);
        m->chain.at[d][0] = NULL;
        if (decided)
            return 1;
    }
    return 0;
}

/* NCMP answers nothing for a path into the private properties. */
static int cp_mentions_private(const ncmp_cpspath_ast *path)
{
    static const char private_name[] = "additional-properties";

    for (size_t i = 0; i < path->nsteps; i++)
        if (ncmp_cpspath_name_is(path, path->steps[i].name, path->steps[i].name_len, private_name))
            return 1;
    return path->nancestor > 0 && ncmp_cpspath_name_is(path, path->ancestor[0].name,
                                                       path->ancestor[0].name_len, private_name);
}

static cp_sql cp_translate(cp_out *o, const ncmp_cpspath_ast *path)
{
    cp_match m;

    if (cp_mentions_private(path))
        return CP_SQL_FALSE;
    memset(&m, 0, sizeof(m));
    m.o = o;
    m.path = path;
    cp_join_begin(o, &m.any, 0);
    cp_match_steps(&m, 0, -1);
    return cp_join_end(o, &m.any);
}

/* ------------------------------------------------------------------------ */
/* Public API                                                               */
/* ------------------------------------------------------------------------ */

int ncmp_cpspath_to_sql(const char *path_text, int first_param, ncmp_buf *sql,
                        ncmp_cpspath_params *params, ncmp_cpspath_comparison *comparison,
                        ncmp_err *err)
{
    ncmp_cpspath_ast *path = NULL;
    cp_out o;
    cp_sql r;

    if (first_param < 1)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "CPS path: first parameter number %d is below 1",
                            first_param);
    if (cp_parse(path_text, &path, err) < 0)
        return -1;
    memset(&o, 0, sizeof(o));
    o.first_param = first_param;
    r = cp_translate(&o, path);
    ncmp_cpspath_ast_free(path);
    if (comparison) {
        /* the comparison is all there is when its text is the whole */
        int whole = r == CP_SQL_EXPR && o.last.column && o.last.start == 0 &&
                    o.last.end == o.sql.len && o.params.n == 1;
        comparison->column = whole ? o.last.column : NULL;
        comparison->negate = whole && o.last.negate;
    }
    if (r == CP_SQL_EXPR)
        ncmp_buf_append(sql, o.sql.data, o.sql.len);
    else
        ncmp_buf_append_str(sql, r == CP_SQL_TRUE ? "true" : "false");
    if (o.params.n > 0) {
        params->values = ncmp_xrealloc(params->values, (params->n + o.params.n) * sizeof(char *));
        memcpy(params->values + params->n, o.params.values, o.params.n * sizeof(char *));
        params->n += o.params.n;
    }
    free(o.params.values);
    ncmp_buf_free(&o.sql);
    return 0;
}

void ncmp_cpspath_params_free(ncmp_cpspath_params *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->values[i]);
    free(p->values);
    p->values = NULL;
    p->n = 0;
}
