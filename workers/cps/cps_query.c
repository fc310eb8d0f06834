#include "cps_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_cpspath_parse.h"

/*
 * The path's main steps split into groups, each starting at a '//' (or at
 * the first step): /a/b//c/d//e is [a b] [c d] [e]. The last group ends at
 * the selected row f: `f.name` is its last step, and the steps before it
 * are the segments just above f, read with split_part from the end of
 * f.path. A first group after '/' starts at the top: it makes a literal
 * prefix, so f is in one range of the primary key. A group in the middle
 * is an ancestor row of f whose path ends with the group (a semi-join).
 * Segment n of a path is split_part(path, E'\x01', n + 1), as the path
 * starts with the separator; the last is field -1.
 */

/* The step separator, as SQL text (a constant, never input). */
#define CQ_SEP "E'\\x01'"

typedef struct cq_out {
    ncmp_cpspath_params params;
    int first_param;
    int anchors_param;
} cq_out;

/* What the path holds, once checked. */
typedef struct cq_plan {
    const ncmp_cpspath_ast *ast;
    size_t nnodes;                      /* node steps of the main path: the last is the target */
    const ncmp_cpspath_step *leaf_step; /* the /leaf[text()...] after them */
    /* the segment each step above a tested one must be in the stored
     * path (cq_key_segment); NULL for the tested ones */
    char *segs[NCMP_CPSPATH_MAX_STEPS];
    char *ancestor_segs[NCMP_CPSPATH_MAX_STEPS];
} cq_plan;

static void cq_plan_clear(cq_plan *plan)
{
    for (size_t i = 0; i < NCMP_CPSPATH_MAX_STEPS; i++) {
        free(plan->segs[i]);
        free(plan->ancestor_segs[i]);
    }
}

/* ------------------------------------------------------------------------ */
/* Parameters                                                               */
/* ------------------------------------------------------------------------ */

/* The next parameter, holding `value` (copied); returns its number. */
static int cq_param(cq_out *o, const char *value)
{
    o->params.values = ncmp_xrealloc(o->params.values, (o->params.n + 1) * sizeof(char *));
    o->params.values[o->params.n] = ncmp_xstrdup(value);
    return o->first_param + (int)o->params.n++;
}

/* The next parameter, holding the text [at, at+len) of the path. */
static int cq_param_text(cq_out *o, const ncmp_cpspath_ast *ast, size_t at, size_t len)
{
    char *value = ncmp_xmalloc(len + 1);
    int n;

    memcpy(value, ast->src + at, len);
    value[len] = '\0';
    n = cq_param(o, value);
    free(value);
    return n;
}

/* ------------------------------------------------------------------------ */
/* Checking what the path asks                                              */
/* ------------------------------------------------------------------------ */

static const ncmp_cpspath_atom *cq_atom(const ncmp_cpspath_ast *ast, const ncmp_cpspath_step *step,
                                        size_t pred, size_t i)
{
    return &ast->atoms[ast->preds[step->first_pred + pred].first + i];
}

/* The first text() atom of the step, or NULL. */
static const ncmp_cpspath_atom *cq_text_atom(const ncmp_cpspath_ast *ast,
                                             const ncmp_cpspath_step *step)
{
    for (size_t p = 0; p < step->npreds; p++)
        for (size_t i = 0; i < ast->preds[step->first_pred + p].n; i++)
            if (cq_atom(ast, step, p, i)->on_text)
                return cq_atom(ast, step, p, i);
    return NULL;
}

/* The first atom that is not `@leaf = literal` joined by `and`, or NULL
 * when the step has only such atoms (or none). */
static const ncmp_cpspath_atom *cq_not_a_key(const ncmp_cpspath_ast *ast,
                                             const ncmp_cpspath_step *step)
{
    for (size_t p = 0; p < step->npreds; p++)
        for (size_t i = 0; i < ast->preds[step->first_pred + p].n; i++) {
            const ncmp_cpspath_atom *atom = cq_atom(ast, step, p, i);
            if (atom->is_contains || atom->on_text || atom->op != NCMP_CPSPATH_EQ ||
                atom->or_before)
                return atom;
        }
    return NULL;
}

static int cq_strcmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The step as the stored path writes it: "name" for a container,
 * "name[@a='1' and @b='x''y']" for a list entry (its equalities sorted by
 * their text, a ' doubled, a number as written). Owned by the caller. */
static char *cq_key_segment(const ncmp_cpspath_ast *ast, const ncmp_cpspath_step *step)
{
    char *parts[NCMP_CPSPATH_MAX_CONDS];
    ncmp_buf seg = NCMP_BUF_INIT;
    size_t n = 0;

    for (size_t p = 0; p < step->npreds; p++)
        for (size_t i = 0; i < ast->preds[step->first_pred + p].n; i++) {
            const ncmp_cpspath_atom *atom = cq_atom(ast, step, p, i);
            ncmp_buf part = NCMP_BUF_INIT;

            ncmp_buf_append_char(&part, '@');
            ncmp_buf_append(&part, ast->src + atom->leaf, atom->leaf_len);
            ncmp_buf_append_str(&part, "='");
            for (const char *c = atom->lit; *c; c++) {
                ncmp_buf_append_char(&part, *c);
                if (*c == '\'')
                    ncmp_buf_append_char(&part, '\'');
            }
            ncmp_buf_append_char(&part, '\'');
            parts[n++] = part.data;
        }
    ncmp_buf_append(&seg, ast->src + step->name, step->name_len);
    if (n == 0)
        return seg.data;
    qsort(parts, n, sizeof(parts[0]), cq_strcmp);
    ncmp_buf_append_char(&seg, '[');
    for (size_t i = 0; i < n; i++) {
        ncmp_buf_append_str(&seg, i ? " and " : "");
        ncmp_buf_append_str(&seg, parts[i]);
        free(parts[i]);
    }
    ncmp_buf_append_char(&seg, ']');
    return seg.data;
}

/* A step above the one the conditions test is a container, or a list
 * entry given by its keys, as in CPS: its segment of the stored path is
 * then known. */
static int cq_check_keys(const ncmp_cpspath_ast *ast, const ncmp_cpspath_step *step, char **seg,
                         ncmp_err *err)
{
    const ncmp_cpspath_atom *bad = cq_not_a_key(ast, step);

    if (bad)
        return ncmp_cpspath_reject(ast->src, bad->at, err,
                                   "a step before the last is located by its keys only "
                                   "([@key='value' and ...])");
    *seg = cq_key_segment(ast, step);
    return 0;
}

/* A text() condition makes its step a leaf (or leaf-list) of the node
 * step before it: the last main step, after '/'. */
static int cq_check_leaf_step(const ncmp_cpspath_ast *ast, size_t i, ncmp_err *err)
{
    const ncmp_cpspath_step *step = &ast->steps[i];

    if (i + 1 < ast->nsteps)
        return ncmp_cpspath_reject(ast->src, cq_text_atom(ast, step)->at, err,
                                   "text() tests the leaf of the last step only");
    if (i == 0)
        return ncmp_cpspath_reject(ast->src, step->at, err,
                                   "text() needs the node above the leaf: /node/leaf[text()=...]");
    if (step->descendant)
        return ncmp_cpspath_reject(ast->src, step->at, err,
                                   "the leaf of text() follows '/', not '//'");
    for (size_t p = 0; p < step->npreds; p++)
        for (size_t k = 0; k < ast->preds[step->first_pred + p].n; k++)
            if (!cq_atom(ast, step, p, k)->on_text)
                return ncmp_cpspath_reject(ast->src, cq_atom(ast, step, p, k)->at, err,
                                           "a leaf step is tested with text() only");
    return 0;
}

/* Each '//' after the first step adds a join to the query; hostile paths
 * must not make PostgreSQL plan dozens of them. */
#define CQ_MAX_INNER_DESCENDANTS 4

static int cq_check_inner_descendants(const ncmp_cpspath_ast *ast, ncmp_err *err)
{
    int n = 0;

    for (size_t i = 1; i < ast->nsteps; i++)
        if (ast->steps[i].descendant && ++n > CQ_MAX_INNER_DESCENDANTS)
            return ncmp_cpspath_reject(ast->src, ast->steps[i].at, err,
                                       "at most %d '//' after the first step",
                                       CQ_MAX_INNER_DESCENDANTS);
    return 0;
}

static int cq_plan_make(const ncmp_cpspath_ast *ast, cq_plan *plan, ncmp_err *err)
{
    memset(plan, 0, sizeof(*plan));
    if (cq_check_inner_descendants(ast, err) < 0)
        return -1;
    plan->ast = ast;
    plan->nnodes = ast->nsteps;
    for (size_t i = 0; i < ast->nsteps; i++) {
        if (!cq_text_atom(ast, &ast->steps[i]))
            continue;
        if (cq_check_leaf_step(ast, i, err) < 0)
            return -1;
        plan->leaf_step = &ast->steps[i];
        plan->nnodes = i;
    }
    for (size_t i = 0; i + 1 < plan->nnodes; i++)
        if (cq_check_keys(ast, &ast->steps[i], &plan->segs[i], err) < 0)
            return -1;
    for (size_t i = 0; i < ast->nancestor; i++) {
        const ncmp_cpspath_atom *text = cq_text_atom(ast, &ast->ancestor[i]);
        if (text)
            return ncmp_cpspath_reject(ast->src, text->at, err,
                                       "text() has no place in the ancestor path");
        if (i + 1 < ast->nancestor &&
            cq_check_keys(ast, &ast->ancestor[i], &plan->ancestor_segs[i], err) < 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Conditions                                                               */
/* ------------------------------------------------------------------------ */

static const char *cq_op_sql(ncmp_cpspath_op op)
{
    static const char *const sql[] = {"=", "<>", "<", ">", "<=", ">="};
    return sql[op];
}

/* " AND " between the conditions of `b`. */
static void cq_and(ncmp_buf *b)
{
    if (b->len > 0)
        ncmp_buf_append_str(b, " AND ");
}

/* Segment number `off` of the path (negative: from the end), as the
 * split_part field: the path starts with the separator, so segment n is
 * field n + 1, and the last segment field -1. */
static long cq_field(long off)
{
    return off > 0 ? off + 1 : off;
}

/* Segment `off` of alias.path is `seg`. */
static void cq_emit_segment(cq_out *o, ncmp_buf *b, const char *alias, long off, const char *seg)
{
    cq_and(b);
    ncmp_buf_appendf(b, "split_part(%s.path, " CQ_SEP ", %ld) = $%d", alias, cq_field(off),
                     cq_param(o, seg));
}

/* Row `inner` is in the subtree of row `outer`: one range of the key. */
static void cq_emit_below(ncmp_buf *b, const char *inner, const char *outer)
{
    cq_and(b);
    ncmp_buf_appendf(b,
                     "%s.anchor_id = %s.anchor_id AND %s.path >= %s.path || " CQ_SEP
                     " AND %s.path < %s.path || E'\\x02'",
                     inner, outer, inner, outer, inner, outer);
}

/* A condition on a leaf of row `alias`: typed as the header says. */
static void cq_emit_leaf_atom(cq_out *o, ncmp_buf *b, const ncmp_cpspath_ast *ast,
                              const ncmp_cpspath_atom *atom, const char *alias)
{
    int k, v;

    if (!atom->is_contains && atom->lit_kind == NCMP_CPSPATH_LIT_STRING &&
        atom->op == NCMP_CPSPATH_EQ) {
        /* one JSON parameter, built here: {"leaf":"value"} */
        ncmp_buf json = NCMP_BUF_INIT;
        char *leaf = ncmp_xmalloc(atom->leaf_len + 1);

        memcpy(leaf, ast->src + atom->leaf, atom->leaf_len);
        leaf[atom->leaf_len] = '\0';
        ncmp_buf_append_char(&json, '{');
        ncmp_buf_append_json_string(&json, leaf);
        ncmp_buf_append_char(&json, ':');
        ncmp_buf_append_json_string(&json, atom->lit);
        ncmp_buf_append_char(&json, '}');
        ncmp_buf_appendf(b, "%s.attributes @> $%d::jsonb", alias, cq_param(o, json.data));
        ncmp_buf_free(&json);
        free(leaf);
        return;
    }
    k = cq_param_text(o, ast, atom->leaf, atom->leaf_len);
    v = cq_param(o, atom->lit);
    if (atom->is_contains)
        ncmp_buf_appendf(b,
                         "CASE WHEN jsonb_typeof(%s.attributes -> $%d::text) IN ('string', "
                         "'number') THEN strpos(%s.attributes ->> $%d::text, $%d::text) > 0 END",
                         alias, k, alias, k, v);
    else if (atom->lit_kind == NCMP_CPSPATH_LIT_NUMBER)
        ncmp_buf_appendf(b,
                         "CASE WHEN jsonb_typeof(%s.attributes -> $%d::text) = 'number' THEN "
                         "(%s.attributes -> $%d::text)::numeric %s $%d::numeric END",
                         alias, k, alias, k, cq_op_sql(atom->op), v);
    else
        ncmp_buf_appendf(b,
                         "CASE WHEN jsonb_typeof(%s.attributes -> $%d::text) = 'string' THEN "
                         "(%s.attributes ->> $%d::text) COLLATE \"C\" %s $%d::text END",
                         alias, k, alias, k, cq_op_sql(atom->op), v);
}

/* A text() condition on one entry e.v of a leaf-list (or the leaf). */
static void cq_emit_entry_atom(cq_out *o, ncmp_buf *b, const ncmp_cpspath_atom *atom)
{
    int v = cq_param(o, atom->lit);

    if (atom->is_contains)
        ncmp_buf_appendf(b,
                         "CASE WHEN jsonb_typeof(e.v) IN ('string', 'number') THEN "
                         "strpos(e.v #>> '{}', $%d::text) > 0 END",
                         v);
    else if (atom->lit_kind == NCMP_CPSPATH_LIT_NUMBER)
        ncmp_buf_appendf(b,
                         "CASE WHEN jsonb_typeof(e.v) = 'number' THEN e.v::numeric %s $%d::numeric "
                         "END",
                         cq_op_sql(atom->op), v);
    else
        ncmp_buf_appendf(b,
                         "CASE WHEN jsonb_typeof(e.v) IN ('string', 'number') THEN "
                         "(e.v #>> '{}') COLLATE \"C\" %s $%d::text END",
                         cq_op_sql(atom->op), v);
}

/* One [...]: `or` of `and`-groups (`and` binds tighter); on row `alias`,
 * or on the leaf-list entry e.v when alias is NULL. */
static void cq_emit_pred(cq_out *o, ncmp_buf *b, const ncmp_cpspath_ast *ast,
                         const ncmp_cpspath_pred *pred, const char *alias)
{
    size_t ngroups = 0;

    for (size_t i = 0; i < pred->n; i++)
        ngroups += i == 0 || ast->atoms[pred->first + i].or_before;
    if (ngroups > 1)
        ncmp_buf_append_char(b, '(');
    for (size_t i = 0; i < pred->n;) {
        size_t end = i + 1;

        while (end < pred->n && !ast->atoms[pred->first + end].or_before)
            end++;
        if (i > 0)
            ncmp_buf_append_str(b, " OR ");
        if (ngroups > 1 && end - i > 1)
            ncmp_buf_append_char(b, '(');
        for (size_t k = i; k < end; k++) {
            if (k > i)
                ncmp_buf_append_str(b, " AND ");
            if (alias)
                cq_emit_leaf_atom(o, b, ast, &ast->atoms[pred->first + k], alias);
            else
                cq_emit_entry_atom(o, b, &ast->atoms[pred->first + k]);
        }
        if (ngroups > 1 && end - i > 1)
            ncmp_buf_append_char(b, ')');
        i = end;
    }
    if (ngroups > 1)
        ncmp_buf_append_char(b, ')');
}

/* The conditions of the step that selects row `alias`. Equalities alone
 * also match the node whose key they spell, whatever the key's type, as
 * CPS's xpath of the node would: [@code='1'] finds categories[@code='1']
 * whose code is the number 1. */
static void cq_emit_node_preds(cq_out *o, ncmp_buf *b, const ncmp_cpspath_ast *ast,
                               const ncmp_cpspath_step *step, const char *alias)
{
    char *key;
    int many;

    if (step->npreds == 0)
        return;
    cq_and(b);
    if (cq_not_a_key(ast, step)) {
        for (size_t p = 0; p < step->npreds; p++) {
            if (p > 0)
                ncmp_buf_append_str(b, " AND ");
            cq_emit_pred(o, b, ast, &ast->preds[step->first_pred + p], alias);
        }
        return;
    }
    key = cq_key_segment(ast, step);
    ncmp_buf_appendf(b, "(split_part(%s.path, " CQ_SEP ", -1) = $%d OR ", alias, cq_param(o, key));
    free(key);
    many = step->npreds > 1 || ast->preds[step->first_pred].n > 1;
    if (many)
        ncmp_buf_append_char(b, '(');
    for (size_t p = 0; p < step->npreds; p++)
        for (size_t i = 0; i < ast->preds[step->first_pred + p].n; i++) {
            if (p > 0 || i > 0)
                ncmp_buf_append_str(b, " AND ");
            cq_emit_leaf_atom(o, b, ast, cq_atom(ast, step, p, i), alias);
        }
    ncmp_buf_append_str(b, many ? "))" : ")");
}

/* The node has the leaf (or a leaf-list entry) that the text() step asks. */
static void cq_emit_leaf_step(cq_out *o, ncmp_buf *b, const ncmp_cpspath_ast *ast,
                              const ncmp_cpspath_step *step)
{
    int leaf = cq_param_text(o, ast, step->name, step->name_len);

    cq_and(b);
    ncmp_buf_appendf(b,
                     "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE jsonb_typeof(f.attributes -> "
                     "$%d::text) WHEN 'array' THEN f.attributes -> $%d::text ELSE "
                     "jsonb_build_array(f.attributes -> $%d::text) END) e(v) WHERE ",
                     leaf, leaf, leaf);
    for (size_t p = 0; p < step->npreds; p++) {
        if (p > 0)
            ncmp_buf_append_str(b, " AND ");
        cq_emit_pred(o, b, ast, &ast->preds[step->first_pred + p], NULL);
    }
    ncmp_buf_append_char(b, ')');
}

/* ------------------------------------------------------------------------ */
/* Where the target row is                                                  */
/* ------------------------------------------------------------------------ */

/* The first group, after '/', fills segments 1..n of the path: f is in
 * the subtree of their literal prefix L, the range [L \x01, L \x02) of
 * the primary key. (A value holding the separator makes a range no stored
 * path is in: the store refuses it in keys.) */
static void cq_emit_top(cq_out *o, ncmp_buf *where, const cq_plan *plan, size_t n)
{
    ncmp_buf lit = NCMP_BUF_INIT;
    int lo, hi;

    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        ncmp_buf_append_char(&lit, '\x01');
        ncmp_buf_append_str(&lit, plan->segs[i]);
    }
    ncmp_buf_append_char(&lit, '\x01');
    lo = cq_param(o, lit.data);
    lit.data[lit.len - 1] = '\x02';
    hi = cq_param(o, lit.data);
    cq_and(where);
    ncmp_buf_appendf(where, "f.path >= $%d AND f.path < $%d", lo, hi);
    ncmp_buf_free(&lit);
}

/* Row `alias` is main step `last`, reached by steps [first, last]: its
 * name, and the segments of all of them. */
static void cq_emit_group_row(cq_out *o, ncmp_buf *b, const char *alias, const cq_plan *plan,
                              size_t first, size_t last)
{
    const ncmp_cpspath_step *step = &plan->ast->steps[last];

    cq_and(b);
    ncmp_buf_appendf(b, "%s.name = $%d", alias,
                     cq_param_text(o, plan->ast, step->name, step->name_len));
    for (size_t i = first; i <= last; i++)
        cq_emit_segment(o, b, alias, (long)i - (long)last - 1, plan->segs[i]);
}

/* The groups between the first and the last float: each is an ancestor
 * row pK of f (its last step) whose path ends with the group's segments,
 * below the group before it. A semi-join rather than a scan of f's
 * segments, so that PostgreSQL can start from the rarer side. */
static void cq_emit_middle(cq_out *o, ncmp_buf *where, const cq_plan *plan, const size_t *starts,
                           size_t ngroups, int anchored)
{
    size_t first = anchored ? 1 : 0, last_len = plan->nnodes - starts[ngroups - 1];
    ncmp_buf from = NCMP_BUF_INIT, cond = NCMP_BUF_INIT;
    char alias[16], prev[16];

    if (first + 1 >= ngroups)
        return;
    for (size_t g = first; g + 1 < ngroups; g++) {
        size_t len = starts[g + 1] - starts[g];

        snprintf(alias, sizeof(alias), "p%zu", g);
        ncmp_buf_appendf(&from, "%sfragment %s", g > first ? ", " : "", alias);
        cq_emit_group_row(o, &cond, alias, plan, starts[g], starts[g + 1] - 1);
        if (g > first) {
            cq_emit_below(&cond, alias, prev);
            ncmp_buf_appendf(&cond, " AND %s.depth >= %s.depth + %zu", alias, prev, len);
        } else {
            /* the same anchor as f follows from f being below the last */
            cq_and(&cond);
            ncmp_buf_appendf(&cond, "%s.depth >= %zu", alias, anchored ? starts[1] + len : len);
        }
        memcpy(prev, alias, sizeof(prev));
    }
    cq_emit_below(&cond, "f", prev);
    ncmp_buf_appendf(&cond, " AND f.depth >= %s.depth + %zu", prev, last_len);
    cq_and(where);
    ncmp_buf_appendf(where, "EXISTS (SELECT 1 FROM %s WHERE %s)", from.data, cond.data);
    ncmp_buf_free(&from);
    ncmp_buf_free(&cond);
}

/* Every condition on the target row f. */
static void cq_emit_target(cq_out *o, ncmp_buf *where, const cq_plan *plan)
{
    const ncmp_cpspath_ast *ast = plan->ast;
    size_t t = plan->nnodes, starts[NCMP_CPSPATH_MAX_STEPS], ngroups = 0;
    const ncmp_cpspath_step *target = &ast->steps[t - 1];
    int anchored = !ast->steps[0].descendant;

    for (size_t i = 0; i < t; i++)
        if (i == 0 || ast->steps[i].descendant)
            starts[ngroups++] = i;
    cq_and(where);
    ncmp_buf_appendf(where, "f.anchor_id = ANY($%d::bigint[]) AND f.name = $%d", o->anchors_param,
                     cq_param_text(o, ast, target->name, target->name_len));
    /* the exact depth as an expression, not an index condition: the name
     * index finds these rows, and `depth = N` would make the planner
     * consider the partial index on the rows near the top (migration
     * 0018) too, and AND the two bitmaps for nothing (a leaf query of
     * 1,000 devices: 1.4-2 ms became 2.1-4.7) */
    if (anchored && ngroups == 1)
        ncmp_buf_appendf(where, " AND f.depth + 0 = %zu", t);
    else if (t > 1)
        ncmp_buf_appendf(where, " AND f.depth >= %zu", t);
    if (anchored)
        cq_emit_top(o, where, plan, ngroups == 1 ? t - 1 : starts[1]);
    cq_emit_middle(o, where, plan, starts, ngroups, anchored);
    if (!anchored || ngroups > 1)
        for (size_t i = starts[ngroups - 1]; i + 1 < t; i++)
            cq_emit_segment(o, where, "f", (long)i - (long)t, plan->segs[i]);
    cq_emit_node_preds(o, where, ast, target, "f");
    if (plan->leaf_step)
        cq_emit_leaf_step(o, where, ast, plan->leaf_step);
}

/* ------------------------------------------------------------------------ */
/* The SELECT                                                               */
/* ------------------------------------------------------------------------ */

/* ancestor::a/b, for each matched f: the path of its nearest proper
 * ancestor whose path ends with the segments a, b (b a container or any
 * entry of list b), or NULL. That is the last place where the text
 * T = \x01 a \x01 b, followed by \x01 (b a container) or by [ (b a list
 * entry, up to the next \x01), occurs in p, f's parent's path with a
 * separator after it. Found from the end with strpos on the reversed
 * strings (ra, rb: 0 when T is not there); T starts with the separator,
 * which a key never holds, so it only ever matches whole segments. String
 * work on f's row: no join per candidate, no regular expression. OFFSET 0
 * keeps PostgreSQL from copying p, ra and rb into every place they are
 * used (it would compute them many times per row). */
static void cq_emit_ancestor_path(cq_out *o, ncmp_buf *out, const cq_plan *plan, const char *where)
{
    const ncmp_cpspath_ast *ast = plan->ast;
    size_t m = ast->nancestor;
    const ncmp_cpspath_step *last = &ast->ancestor[m - 1];
    ncmp_buf text = NCMP_BUF_INIT;
    int ta, tb;

    for (size_t j = 0; j + 1 < m; j++) {
        ncmp_buf_append_char(&text, '\x01');
        ncmp_buf_append_str(&text, plan->ancestor_segs[j]);
    }
    ncmp_buf_append_char(&text, '\x01');
    ncmp_buf_append(&text, ast->src + last->name, last->name_len);
    ncmp_buf_append_char(&text, '\x01');
    ta = cq_param(o, text.data);
    text.data[text.len - 1] = '[';
    tb = cq_param(o, text.data);
    ncmp_buf_free(&text);
    ncmp_buf_appendf(out,
                     "SELECT DISTINCT anchor_id, CASE WHEN ra > 0 AND (rb = 0 OR ra < rb) THEN "
                     "left(p, length(p) - ra) WHEN rb > 0 THEN left(p, length(p) - rb + "
                     "strpos(substr(p, length(p) - rb + 2), " CQ_SEP
                     ")) END AS path FROM (SELECT anchor_id, p, strpos(reverse(p), "
                     "reverse($%d::text)) AS ra, strpos(reverse(p), reverse($%d::text)) AS rb "
                     "FROM (SELECT f.anchor_id, left(f.path, -length(split_part(f.path, " CQ_SEP
                     ", -1))) AS p FROM fragment f WHERE %s OFFSET 0) f OFFSET 0) f",
                     ta, tb, where);
}

static void cq_emit_select(cq_out *o, ncmp_buf *out, const cq_plan *plan, int leaf, int with_leaves)
{
    const ncmp_cpspath_ast *ast = plan->ast;
    const char *alias = ast->nancestor ? "a" : "f";
    ncmp_buf where = NCMP_BUF_INIT, outer = NCMP_BUF_INIT;

    if (leaf)
        ncmp_buf_appendf(out, "SELECT DISTINCT %s.anchor_id, %s.attributes -> $%d::text AS value",
                         alias, alias, leaf);
    else
        ncmp_buf_appendf(out, "SELECT %s.anchor_id, %s.path, %s.depth%s%s%s", alias, alias, alias,
                         with_leaves ? ", " : "", with_leaves ? alias : "",
                         with_leaves ? ".attributes" : "");
    cq_emit_target(o, &where, plan);
    if (ast->nancestor) {
        ncmp_buf_append_str(out, " FROM (");
        cq_emit_ancestor_path(o, out, plan, where.data);
        /* one look-up of the key per ancestor: PostgreSQL expects about
         * as many ancestors as matches, and would scan the table */
        ncmp_buf_append_str(out, ") m CROSS JOIN LATERAL (SELECT * FROM fragment a WHERE "
                                 "a.anchor_id = m.anchor_id AND a.path = m.path COLLATE \"C\" "
                                 "LIMIT 1) a");
        cq_emit_node_preds(o, &outer, ast, &ast->ancestor[ast->nancestor - 1], "a");
    } else {
        ncmp_buf_append_str(out, " FROM fragment f");
        ncmp_buf_append(&outer, where.data, where.len);
    }
    if (leaf) {
        cq_and(&outer);
        ncmp_buf_appendf(&outer, "jsonb_typeof(%s.attributes -> $%d::text) <> 'null'", alias, leaf);
    }
    if (outer.len)
        ncmp_buf_appendf(out, " WHERE %s", outer.data);
    if (leaf)
        ncmp_buf_append_str(out, " ORDER BY 1, 2");
    else
        ncmp_buf_appendf(out, " ORDER BY %s.anchor_id, %s.path", alias, alias);
    ncmp_buf_free(&where);
    ncmp_buf_free(&outer);
}

/* ------------------------------------------------------------------------ */
/* Public API                                                               */
/* ------------------------------------------------------------------------ */

static int query_to_sql(const char *cpspath, int anchors_param, int first_param, ncmp_buf *sql,
                        ncmp_cpspath_params *params, cps_query_kind *kind, char **leaf,
                        int with_leaves, ncmp_err *err)
{
    ncmp_cpspath_ast *ast = NULL;
    ncmp_buf out = NCMP_BUF_INIT;
    cq_out o = {{NULL, 0}, first_param, anchors_param};
    cq_plan plan;
    int leaf_param = 0, rc = -1;

    memset(&plan, 0, sizeof(plan));
    if (anchors_param < 1 || first_param <= anchors_param)
        return ncmp_err_set(
            err, NCMP_ERR_FATAL,
            "CPS query: parameters $%d (anchors) and $%d (first value) out of order", anchors_param,
            first_param);
    if (ncmp_cpspath_parse(cpspath, &ast, err) < 0)
        return -1;
    if (cq_plan_make(ast, &plan, err) < 0)
        goto cleanup;
    if (ast->has_attribute)
        leaf_param = cq_param_text(&o, ast, ast->attribute, ast->attribute_len);
    cq_emit_select(&o, &out, &plan, leaf_param, with_leaves);

    if (leaf)
        *leaf = leaf_param ? ncmp_xstrdup(o.params.values[0]) : NULL;
    ncmp_buf_append(sql, out.data, out.len);
    if (o.params.n > 0) {
        params->values = ncmp_xrealloc(params->values, (params->n + o.params.n) * sizeof(char *));
        memcpy(params->values + params->n, o.params.values, o.params.n * sizeof(char *));
        params->n += o.params.n;
        o.params.n = 0;
    }
    *kind = leaf_param ? CPS_QUERY_LEAF : CPS_QUERY_NODES;
    rc = 0;
cleanup:
    ncmp_cpspath_params_free(&o.params);
    ncmp_buf_free(&out);
    cq_plan_clear(&plan);
    ncmp_cpspath_ast_free(ast);
    return rc;
}

int cps_query_to_sql(const char *cpspath, int anchors_param, int first_param, ncmp_buf *sql,
                     ncmp_cpspath_params *params, cps_query_kind *kind, char **leaf, ncmp_err *err)
{
    return query_to_sql(cpspath, anchors_param, first_param, sql, params, kind, leaf, 0, err);
}

int cps_query_to_sql_leaves(const char *cpspath, int anchors_param, int first_param, ncmp_buf *sql,
                            ncmp_cpspath_params *params, cps_query_kind *kind, char **leaf,
                            ncmp_err *err)
{
    return query_to_sql(cpspath, anchors_param, first_param, sql, params, kind, leaf, 1, err);
}
