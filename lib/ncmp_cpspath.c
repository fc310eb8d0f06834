#include "ncmp_cpspath.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_utf8.h"

/*
 * Three parts: a tokenizer over the path text, a recursive-descent parser
 * that builds a small fixed-size AST (the grammar has no brackets inside
 * conditions, so nothing nests and hostile input cannot deepen the stack),
 * and a translator that matches the steps against a static table of the
 * dmi-registry model and writes SQL for every way the path can match.
 */

/* Hostile input stops here, with a clear error. */
#define CP_MAX_LEN   4096 /* bytes of path text */
#define CP_MAX_STEPS 32   /* steps (the model is six levels deep) */
#define CP_MAX_CONDS 64   /* conditions in all predicates together */

/* ------------------------------------------------------------------------ */
/* AST                                                                      */
/* ------------------------------------------------------------------------ */

typedef enum cp_op { CP_EQ, CP_NE, CP_LT, CP_GT, CP_LE, CP_GE } cp_op;

typedef enum cp_lit_kind { CP_LIT_STRING, CP_LIT_NUMBER } cp_lit_kind;

/* One condition: `@leaf op literal`, `text() op literal`,
 * `contains(@leaf, literal)` or `contains(text(), literal)`. */
typedef struct cp_atom {
    int is_contains;
    int on_text;           /* text() rather than @leaf */
    size_t leaf, leaf_len; /* the leaf name in the path text */
    cp_op op;              /* comparisons only */
    cp_lit_kind lit_kind;
    char *lit;     /* decoded value, owned */
    int or_before; /* joined to the previous atom by `or` */
} cp_atom;

/* One [...] predicate: atoms[first .. first+n), `and` binding tighter. */
typedef struct cp_pred {
    size_t first, n;
} cp_pred;

typedef struct cp_step {
    size_t name, name_len; /* in the path text */
    int descendant;        /* reached through // */
    size_t first_pred, npreds;
} cp_step;

typedef struct cp_path {
    const char *src;
    cp_step steps[CP_MAX_STEPS];
    size_t nsteps;
    cp_step ancestor; /* ancestor::name[...], when has_ancestor */
    int has_ancestor;
    cp_pred preds[CP_MAX_CONDS];
    size_t npreds;
    cp_atom atoms[CP_MAX_CONDS];
    size_t natoms;
} cp_path;

static void cp_path_free(cp_path *path)
{
    if (!path)
        return;
    for (size_t i = 0; i < path->natoms; i++)
        free(path->atoms[i].lit);
    free(path);
}

/* ------------------------------------------------------------------------ */
/* Tokenizer                                                                */
/* ------------------------------------------------------------------------ */

typedef enum cp_tok_kind {
    T_EOF,
    T_SLASH,
    T_DSLASH,
    T_LBRACK,
    T_RBRACK,
    T_LPAREN,
    T_RPAREN,
    T_AT,
    T_COMMA,
    T_AXIS, /* :: */
    T_OP,
    T_NAME,
    T_STRING,
    T_NUMBER,
} cp_tok_kind;

typedef struct cp_tok {
    cp_tok_kind kind;
    size_t start, len; /* bytes of the path text, quotes included */
    cp_op op;
} cp_tok;

typedef struct cp_parser {
    const char *src;
    size_t len;
    cp_tok tok; /* the current token */
    cp_path *path;
    ncmp_err *err;
} cp_parser;

/* 1-based character (not byte) position of byte offset `at`: the text
 * was checked to be UTF-8, so characters are the non-continuation bytes. */
static size_t cp_char_pos(const char *src, size_t at)
{
    size_t chars = 0;

    for (size_t i = 0; i < at; i++)
        if (((unsigned char)src[i] & 0xc0) != 0x80)
            chars++;
    return chars + 1;
}

static int cp_fail(const char *src, size_t at, ncmp_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int cp_fail(const char *src, size_t at, ncmp_err *err, const char *fmt, ...)
{
    char what[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return ncmp_err_set(err, NCMP_ERR_REJECT, "Invalid CPS path at position %zu: %s",
                        cp_char_pos(src, at), what);
}

static int cp_is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int cp_is_name_char(char c)
{
    return cp_is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

static int cp_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int cp_is_op_char(char c)
{
    return c == '=' || c == '!' || c == '<' || c == '>';
}

/* An operator: the whole run of = ! < > characters must be one of ours,
 * so that `==` or `<>` is named as an unknown operator. */
static int cp_lex_op(cp_parser *p, size_t at, cp_tok *tok)
{
    static const struct {
        const char *text;
        cp_op op;
    } ops[] = {{"=", CP_EQ}, {"!=", CP_NE}, {"<", CP_LT},
               {">", CP_GT}, {"<=", CP_LE}, {">=", CP_GE}};
    size_t end = at;

    while (end < p->len && cp_is_op_char(p->src[end]))
        end++;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (strlen(ops[i].text) == end - at && memcmp(ops[i].text, p->src + at, end - at) == 0) {
            tok->kind = T_OP;
            tok->op = ops[i].op;
            tok->len = end - at;
            return 0;
        }
    }
    return cp_fail(p->src, at, p->err, "unknown operator '%.*s'", (int)(end - at), p->src + at);
}

static int cp_lex_string(cp_parser *p, size_t at, cp_tok *tok)
{
    char quote = p->src[at];

    for (size_t i = at + 1; i < p->len; i++) {
        if (p->src[i] != quote)
            continue;
        if (i + 1 < p->len && p->src[i + 1] == quote) {
            i++; /* a doubled quote stands for one */
            continue;
        }
        tok->kind = T_STRING;
        tok->len = i + 1 - at;
        return 0;
    }
    return cp_fail(p->src, at, p->err, "missing closing quote %c", quote);
}

/* -?digits(.digits)? */
static void cp_lex_number(cp_parser *p, size_t at, cp_tok *tok)
{
    size_t i = at;

    if (p->src[i] == '-')
        i++;
    while (i < p->len && cp_is_digit(p->src[i]))
        i++;
    if (i + 1 < p->len && p->src[i] == '.' && cp_is_digit(p->src[i + 1])) {
        i++;
        while (i < p->len && cp_is_digit(p->src[i]))
            i++;
    }
    tok->kind = T_NUMBER;
    tok->len = i - at;
}

static int cp_lex_unexpected(cp_parser *p, size_t at)
{
    unsigned char c = (unsigned char)p->src[at];

    if (c >= 0x80)
        return cp_fail(p->src, at, p->err, "unexpected non-ASCII character");
    if (c < 0x20 || c == 0x7f)
        return cp_fail(p->src, at, p->err, "unexpected control character 0x%02x", c);
    return cp_fail(p->src, at, p->err, "unexpected character '%c'", c);
}

/* The token that starts at or after byte `at` (whitespace skipped). */
static int cp_lex(cp_parser *p, size_t at, cp_tok *tok)
{
    static const char singles[] = "[]()@,";
    static const cp_tok_kind single_kinds[] = {T_LBRACK, T_RBRACK, T_LPAREN,
                                               T_RPAREN, T_AT,     T_COMMA};
    const char *s = p->src;
    const char *single;

    while (at < p->len && (s[at] == ' ' || s[at] == '\t' || s[at] == '\n' || s[at] == '\r'))
        at++;
    memset(tok, 0, sizeof(*tok));
    tok->start = at;
    tok->len = 1;
    if (at == p->len) {
        tok->kind = T_EOF;
        tok->len = 0;
        return 0;
    }
    if (s[at] == '/') {
        tok->kind = (at + 1 < p->len && s[at + 1] == '/') ? T_DSLASH : T_SLASH;
        tok->len = tok->kind == T_DSLASH ? 2 : 1;
        return 0;
    }
    /* at < len: s[at] is never the NUL that strchr would also find */
    if ((single = strchr(singles, s[at])) != NULL) {
        tok->kind = single_kinds[single - singles];
        return 0;
    }
    if (s[at] == ':' && at + 1 < p->len && s[at + 1] == ':') {
        tok->kind = T_AXIS;
        tok->len = 2;
        return 0;
    }
    if (cp_is_op_char(s[at]))
        return cp_lex_op(p, at, tok);
    if (s[at] == '\'' || s[at] == '"')
        return cp_lex_string(p, at, tok);
    if (cp_is_digit(s[at]) || (s[at] == '-' && at + 1 < p->len && cp_is_digit(s[at + 1]))) {
        cp_lex_number(p, at, tok);
        return 0;
    }
    if (cp_is_name_start(s[at])) {
        size_t end = at + 1;
        while (end < p->len && cp_is_name_char(s[end]))
            end++;
        tok->kind = T_NAME;
        tok->len = end - at;
        return 0;
    }
    return cp_lex_unexpected(p, at);
}

static int cp_next(cp_parser *p)
{
    return cp_lex(p, p->tok.start + p->tok.len, &p->tok);
}

/* The token after the current one, without moving. */
static int cp_peek(cp_parser *p, cp_tok *tok)
{
    return cp_lex(p, p->tok.start + p->tok.len, tok);
}

static int cp_tok_is(const cp_parser *p, const char *name)
{
    return p->tok.kind == T_NAME && p->tok.len == strlen(name) &&
           memcmp(p->src + p->tok.start, name, p->tok.len) == 0;
}

/* ------------------------------------------------------------------------ */
/* Parser                                                                   */
/* ------------------------------------------------------------------------ */

static int cp_fail_here(cp_parser *p, const char *what)
{
    return cp_fail(p->src, p->tok.start, p->err, "%s", what);
}

static int cp_expect(cp_parser *p, cp_tok_kind kind, const char *what)
{
    if (p->tok.kind != kind)
        return cp_fail(p->src, p->tok.start, p->err, "expected %s", what);
    return cp_next(p);
}

/* literal := STRING | NUMBER; the decoded value goes to the atom. */
static int cp_parse_literal(cp_parser *p, cp_atom *atom)
{
    const char *text = p->src + p->tok.start;

    if (p->tok.kind == T_NUMBER) {
        atom->lit_kind = CP_LIT_NUMBER;
        atom->lit = ncmp_xmalloc(p->tok.len + 1);
        memcpy(atom->lit, text, p->tok.len);
        atom->lit[p->tok.len] = '\0';
    } else if (p->tok.kind == T_STRING) {
        char quote = text[0];
        size_t n = 0;
        atom->lit_kind = CP_LIT_STRING;
        atom->lit = ncmp_xmalloc(p->tok.len);
        for (size_t i = 1; i + 1 < p->tok.len; i++) {
            atom->lit[n++] = text[i];
            if (text[i] == quote)
                i++; /* skip the second of a doubled quote */
        }
        atom->lit[n] = '\0';
    } else {
        return cp_fail_here(p, "expected a quoted string or a number");
    }
    return cp_next(p);
}

/* `text()`: the current token is the name `text`. */
static int cp_parse_text_call(cp_parser *p)
{
    if (cp_next(p) < 0 || cp_expect(p, T_LPAREN, "'(' after text") < 0)
        return -1;
    return cp_expect(p, T_RPAREN, "')' after text(");
}

/* `@leaf` or `text()`: what a condition is about. */
static int cp_parse_operand(cp_parser *p, cp_atom *atom)
{
    if (p->tok.kind == T_AT) {
        if (cp_next(p) < 0)
            return -1;
        if (p->tok.kind != T_NAME)
            return cp_fail_here(p, "expected a leaf name after '@'");
        atom->leaf = p->tok.start;
        atom->leaf_len = p->tok.len;
        return cp_next(p);
    }
    if (cp_tok_is(p, "text")) {
        atom->on_text = 1;
        return cp_parse_text_call(p);
    }
    return cp_fail_here(p, "expected '@leaf', 'text()' or 'contains(...)'");
}

/* contains '(' operand ',' literal ')' */
static int cp_parse_contains(cp_parser *p, cp_atom *atom)
{
    atom->is_contains = 1;
    if (cp_next(p) < 0 || cp_expect(p, T_LPAREN, "'(' after contains") < 0)
        return -1;
    if (cp_parse_operand(p, atom) < 0 || cp_expect(p, T_COMMA, "',' in contains(...)") < 0)
        return -1;
    if (cp_parse_literal(p, atom) < 0)
        return -1;
    return cp_expect(p, T_RPAREN, "')' to close contains(...)");
}

/* term := operand op literal | contains(...) */
static int cp_parse_atom(cp_parser *p, int or_before)
{
    cp_path *path = p->path;
    cp_atom *atom;

    if (path->natoms == CP_MAX_CONDS)
        return cp_fail(p->src, p->tok.start, p->err, "too many conditions (at most %d)",
                       CP_MAX_CONDS);
    atom = &path->atoms[path->natoms++];
    atom->or_before = or_before;
    if (cp_tok_is(p, "contains"))
        return cp_parse_contains(p, atom);
    if (cp_parse_operand(p, atom) < 0)
        return -1;
    if (p->tok.kind != T_OP)
        return cp_fail_here(p, "expected an operator (= != < > <= >=)");
    atom->op = p->tok.op;
    if (cp_next(p) < 0)
        return -1;
    return cp_parse_literal(p, atom);
}

/* '[' term (('and'|'or') term)* ']'; the current token is '['. */
static int cp_parse_pred(cp_parser *p, cp_step *step)
{
    cp_path *path = p->path;
    cp_pred *pred;
    int or_before = 0;

    if (path->npreds == CP_MAX_CONDS)
        return cp_fail(p->src, p->tok.start, p->err, "too many conditions (at most %d)",
                       CP_MAX_CONDS);
    pred = &path->preds[path->npreds++];
    pred->first = path->natoms;
    step->npreds++;
    if (cp_next(p) < 0)
        return -1;
    for (;;) {
        if (cp_parse_atom(p, or_before) < 0)
            return -1;
        pred->n++;
        if (p->tok.kind == T_RBRACK)
            return cp_next(p);
        if (p->tok.kind == T_EOF)
            return cp_fail_here(p, "expected ']'");
        if (!cp_tok_is(p, "and") && !cp_tok_is(p, "or"))
            return cp_fail_here(p, "expected 'and', 'or' or ']'");
        or_before = cp_tok_is(p, "or");
        if (cp_next(p) < 0)
            return -1;
    }
}

/* name pred* ; the current token is the name. */
static int cp_parse_step(cp_parser *p, cp_step *step, int descendant)
{
    step->name = p->tok.start;
    step->name_len = p->tok.len;
    step->descendant = descendant;
    step->first_pred = p->path->npreds;
    if (cp_next(p) < 0)
        return -1;
    while (p->tok.kind == T_LBRACK)
        if (cp_parse_pred(p, step) < 0)
            return -1;
    return 0;
}

/* '/' '@' leaf EOF; the current token is the '/'. The leaf names what to
 * return of the selected nodes; the handles selected stay the same. */
static int cp_parse_attribute_axis(cp_parser *p)
{
    if (cp_next(p) < 0 || cp_expect(p, T_AT, "'@'") < 0)
        return -1;
    if (p->tok.kind != T_NAME)
        return cp_fail_here(p, "expected a leaf name after '@'");
    if (cp_next(p) < 0)
        return -1;
    if (p->tok.kind != T_EOF)
        return cp_fail_here(p, "the attribute axis '/@leaf' must come last");
    return 0;
}

/* ancestor '::' step [attribute axis] EOF; the current token is `ancestor`. */
static int cp_parse_ancestor(cp_parser *p)
{
    cp_tok after;

    if (p->path->nsteps == 0)
        return cp_fail_here(p, "the ancestor axis needs a step before it");
    if (cp_next(p) < 0 || cp_expect(p, T_AXIS, "'::'") < 0)
        return -1;
    if (p->tok.kind != T_NAME)
        return cp_fail_here(p, "expected a node name after 'ancestor::'");
    p->path->has_ancestor = 1;
    if (cp_parse_step(p, &p->path->ancestor, 0) < 0)
        return -1;
    if (p->tok.kind == T_SLASH) {
        if (cp_peek(p, &after) < 0)
            return -1;
        if (after.kind == T_AT)
            return cp_parse_attribute_axis(p);
    }
    if (p->tok.kind != T_EOF)
        return cp_fail_here(p, "the ancestor axis must be the last step");
    return 0;
}

/* Is the current token the name `ancestor` followed by '::'? */
static int cp_at_ancestor(cp_parser *p, int *yes)
{
    cp_tok after;

    *yes = 0;
    if (!cp_tok_is(p, "ancestor"))
        return 0;
    if (cp_peek(p, &after) < 0)
        return -1;
    *yes = after.kind == T_AXIS;
    return 0;
}

/* One '/' or '//' and what follows it; *done is set at the end. */
static int cp_parse_segment(cp_parser *p, int *done)
{
    int descendant = p->tok.kind == T_DSLASH;
    int ancestor;
    cp_tok after;

    if (!descendant && p->path->nsteps > 0) {
        if (cp_peek(p, &after) < 0)
            return -1;
        if (after.kind == T_AT) {
            *done = 1;
            return cp_parse_attribute_axis(p);
        }
    }
    if (cp_next(p) < 0 || cp_at_ancestor(p, &ancestor) < 0)
        return -1;
    if (ancestor) {
        if (descendant)
            return cp_fail_here(p, "the ancestor axis follows '/', not '//'");
        *done = 1;
        return cp_parse_ancestor(p);
    }
    if (p->tok.kind != T_NAME)
        return cp_fail_here(p, "expected a node name");
    if (p->path->nsteps == CP_MAX_STEPS)
        return cp_fail(p->src, p->tok.start, p->err, "too many steps (at most %d)", CP_MAX_STEPS);
    return cp_parse_step(p, &p->path->steps[p->path->nsteps++], descendant);
}

static int cp_parse_path(cp_parser *p)
{
    const char *what;
    int done = 0;

    if (cp_lex(p, 0, &p->tok) < 0)
        return -1;
    if (p->tok.kind == T_EOF)
        return cp_fail(p->src, 0, p->err, "empty path");
    if (p->tok.kind != T_SLASH && p->tok.kind != T_DSLASH)
        return cp_fail_here(p, "a path starts with '/' or '//'");
    while (!done) {
        if (cp_parse_segment(p, &done) < 0)
            return -1;
        if (done || p->tok.kind == T_EOF)
            break;
        if (p->tok.kind == T_SLASH || p->tok.kind == T_DSLASH)
            continue;
        what = p->src + p->tok.start;
        return cp_fail(p->src, p->tok.start, p->err, "unexpected '%.*s' after the step",
                       (int)(p->tok.len > 20 ? 20 : p->tok.len), what);
    }
    return 0;
}

/* Parse `src` into *out (owned by the caller, cp_path_free). */
static int cp_parse(const char *src, cp_path **out, ncmp_err *err)
{
    cp_parser p;
    size_t len = src ? strlen(src) : 0;
    size_t bad;

    if (len > CP_MAX_LEN)
        return cp_fail(src, CP_MAX_LEN, err, "path longer than %d bytes", CP_MAX_LEN);
    if (len == 0)
        return cp_fail("", 0, err, "empty path");
    bad = ncmp_utf8_invalid_at(src, len);
    if (bad < len)
        return cp_fail(src, bad, err, "invalid UTF-8");
    memset(&p, 0, sizeof(p));
    p.src = src;
    p.len = len;
    p.err = err;
    p.path = ncmp_xcalloc(1, sizeof(*p.path));
    p.path->src = src;
    if (cp_parse_path(&p) < 0) {
        cp_path_free(p.path);
        return -1;
    }
    *out = p.path;
    return 0;
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
        name, parent, 0, scope, exists, exists_sql, NULL, 0                                        \
    }
#define LEAF(name, parent, scope, value)                                                           \
    {                                                                                              \
        name, parent, 1, scope, CP_EXISTS_IMPLIED, NULL, value, 1                                  \
    }
/* a leaf with no column: conditions on it are false */
#define UNSTORED(name, parent, scope)                                                              \
    {                                                                                              \
        name, parent, 1, scope, CP_EXISTS_NEVER, NULL, NULL, 1                                     \
    }

/* Timestamps as NCMP writes them, so that text comparisons order them. */
#define CP_LAST_UPDATE_SQL                                                                         \
    "to_char(h.last_update_time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"+0000\"')"

/* Every identifier in the generated SQL comes from this table. */
static const cp_node cp_model[M_COUNT] = {
    [M_REGISTRY] = INNER("dmi-registry", -1, CP_SCOPE_TOP, CP_EXISTS_IMPLIED, NULL),
    [M_HANDLES] = INNER("cm-handles", M_REGISTRY, CP_SCOPE_HANDLE, CP_EXISTS_IMPLIED, NULL),
    [M_ID] = LEAF("id", M_HANDLES, CP_SCOPE_HANDLE, "h.id"),
    [M_DMI] = LEAF("dmi-service-name", M_HANDLES, CP_SCOPE_HANDLE, "h.dmi_service_name"),
    [M_DMI_DATA] =
        LEAF("dmi-data-service-name", M_HANDLES, CP_SCOPE_HANDLE, "h.dmi_data_service_name"),
    [M_DMI_MODEL] =
        LEAF("dmi-model-service-name", M_HANDLES, CP_SCOPE_HANDLE, "h.dmi_model_service_name"),
    [M_DMI_JOBS_READ] = UNSTORED("dmi-datajobs-read-service", M_HANDLES, CP_SCOPE_HANDLE),
    [M_DMI_JOBS_WRITE] = UNSTORED("dmi-datajobs-write-service", M_HANDLES, CP_SCOPE_HANDLE),
    [M_TAG] = LEAF("module-set-tag", M_HANDLES, CP_SCOPE_HANDLE, "h.module_set_tag"),
    [M_ALTERNATE_ID] = {"alternate-id", M_HANDLES, 1, CP_SCOPE_HANDLE, CP_EXISTS_SQL,
                        "h.alternate_id IS NOT NULL", "h.alternate_id", 1},
    [M_PRODUCER] =
        LEAF("data-producer-identifier", M_HANDLES, CP_SCOPE_HANDLE, "h.data_producer_identifier"),
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
    [M_STATE_NAME] = LEAF("cm-handle-state", M_STATE, CP_SCOPE_HANDLE, "h.state"),
    [M_LOCK] =
        INNER("lock-reason", M_STATE, CP_SCOPE_HANDLE, CP_EXISTS_SQL, "h.lock_reason IS NOT NULL"),
    [M_LOCK_REASON] = LEAF("reason", M_LOCK, CP_SCOPE_HANDLE, "h.lock_reason"),
    /* details are written with the reason, but nothing enforces that they
     * go together, so a value of theirs does not prove the lock-reason */
    [M_LOCK_DETAILS] = {"details", M_LOCK, 1, CP_SCOPE_HANDLE, CP_EXISTS_SQL,
                        "h.lock_details IS NOT NULL", "h.lock_details", 0},
    [M_LAST_UPDATE] = LEAF("last-update-time", M_STATE, CP_SCOPE_HANDLE, CP_LAST_UPDATE_SQL),
    [M_SYNC_ENABLED] =
        LEAF("data-sync-enabled", M_STATE, CP_SCOPE_HANDLE, "h.data_sync_enabled::text"),
    /* NCMP writes the datastores with the first sync state */
    [M_DATASTORES] = INNER("datastores", M_STATE, CP_SCOPE_HANDLE, CP_EXISTS_SQL,
                           "h.operational_sync_state IS NOT NULL"),
    [M_OPERATIONAL] = INNER("operational", M_DATASTORES, CP_SCOPE_HANDLE, CP_EXISTS_IMPLIED, NULL),
    [M_OPERATIONAL_STATE] =
        LEAF("sync-state", M_OPERATIONAL, CP_SCOPE_HANDLE, "h.operational_sync_state"),
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

static int cp_name_is(const cp_path *path, size_t name, size_t len, const char *model_name)
{
    return strlen(model_name) == len && memcmp(path->src + name, model_name, len) == 0;
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
static int cp_atom_leaf(const cp_path *path, const cp_atom *atom, int context)
{
    if (atom->on_text)
        return cp_model[context].is_leaf ? context : -1;
    for (int n = 0; n < CP_MODEL_N; n++)
        if (cp_model[n].parent == context && cp_model[n].is_leaf &&
            cp_name_is(path, atom->leaf, atom->leaf_len, cp_model[n].name))
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

typedef struct cp_out {
    ncmp_buf sql;
    ncmp_cpspath_params params;
    int first_param;
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
    }
    return CP_SQL_EXPR;
}

/* ------------------------------------------------------------------------ */
/* Conditions                                                               */
/* ------------------------------------------------------------------------ */

static const char *cp_op_sql(cp_op op)
{
    static const char *const sql[] = {"=", "<>", "<", ">", "<=", ">="};
    return sql[op];
}

/* An unquoted number compares as a number, with the leaves whose text is
 * a number (any other leaf does not match). A quoted string compares as
 * text, ordered by code point whatever the database's collation, so that
 * timestamps and versions order the same everywhere. */
static cp_sql cp_emit_compare(cp_out *o, const cp_atom *atom, const char *value)
{
    if (atom->lit_kind == CP_LIT_NUMBER) {
        ncmp_buf_appendf(&o->sql,
                         "(CASE WHEN %s ~ '^[-+]?[0-9]+([.][0-9]+)?$' THEN (%s)::numeric END) %s ",
                         value, value, cp_op_sql(atom->op));
        cp_out_param(o, atom->lit, "::numeric");
    } else if (atom->op == CP_EQ || atom->op == CP_NE) {
        ncmp_buf_appendf(&o->sql, "%s %s ", value, cp_op_sql(atom->op));
        cp_out_param(o, atom->lit, "");
    } else {
        ncmp_buf_appendf(&o->sql, "%s COLLATE \"C\" %s ", value, cp_op_sql(atom->op));
        cp_out_param(o, atom->lit, "");
    }
    return CP_SQL_EXPR;
}

static cp_sql cp_emit_atom(cp_out *o, const cp_path *path, const cp_atom *atom, int context)
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
    return cp_emit_compare(o, atom, value);
}

/* Atoms [first, first+n) joined by `and`. */
static cp_sql cp_emit_all(cp_out *o, const cp_path *path, size_t first, size_t n, int context)
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
static cp_sql cp_emit_pred(cp_out *o, const cp_path *path, const cp_pred *pred, int context)
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
static int cp_pred_proves(const cp_path *path, const cp_pred *pred, int context)
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
    const cp_step *at[CP_MODEL_DEPTH][2];
    int nodes[CP_MODEL_DEPTH]; /* the target's model path, by depth */
} cp_chain;

/* The predicates attached at depth d (of the step and of ancestor::);
 * `out` holds CP_MAX_CONDS. Returns how many. */
static size_t cp_chain_preds(const cp_path *path, const cp_chain *c, int d, const cp_pred **out)
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
static int cp_public_equalities(const cp_path *path, const cp_chain *c, int depth,
                                const char **name, const char **value)
{
    const cp_pred *preds[CP_MAX_CONDS];

    *name = *value = NULL;
    for (int d = cp_depth(M_PUBLIC); d <= depth; d++) {
        size_t npreds = cp_chain_preds(path, c, d, preds);
        for (size_t j = 0; j < npreds; j++) {
            const cp_pred *pred = preds[j];
            for (size_t i = 0; i < pred->n; i++) {
                const cp_atom *atom = &path->atoms[pred->first + i];
                int leaf = cp_atom_leaf(path, atom, c->nodes[d]);
                const char **slot = leaf == M_PUBLIC_NAME    ? name
                                    : leaf == M_PUBLIC_VALUE ? value
                                                             : NULL;
                if (atom->or_before || atom->is_contains || atom->op != CP_EQ ||
                    atom->lit_kind != CP_LIT_STRING || !slot || *slot)
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
static cp_sql cp_emit_public(cp_out *o, const cp_path *path, const cp_chain *c, int depth)
{
    const cp_pred *preds[CP_MAX_CONDS];
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
static int cp_chain_proven(const cp_path *path, const cp_chain *c, int depth)
{
    const cp_pred *preds[CP_MAX_CONDS];
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
static cp_sql cp_emit_chain(cp_out *o, const cp_path *path, cp_chain *c)
{
    const cp_pred *preds[CP_MAX_CONDS];
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
    const cp_path *path;
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
    const cp_step *anc = &m->path->ancestor;

    m->chain.target = target;
    if (!m->path->has_ancestor) {
        m->chain.result = target;
        return cp_match_emit(m);
    }
    for (int a = cp_model[target].parent; a >= 0; a = cp_model[a].parent) {
        int d = cp_depth(a), decided;

        if (!cp_name_is(m->path, anc->name, anc->name_len, cp_model[a].name))
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
    const cp_step *step;

    if (i == m->path->nsteps)
        return cp_match_ancestor(m, parent);
    step = &m->path->steps[i];
    for (int n = 0; n < CP_MODEL_N; n++) {
        int d = cp_depth(n), decided;

        if (!cp_name_is(m->path, step->name, step->name_len, cp_model[n].name))
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
static int cp_mentions_private(const cp_path *path)
{
    static const char private_name[] = "additional-properties";

    for (size_t i = 0; i < path->nsteps; i++)
        if (cp_name_is(path, path->steps[i].name, path->steps[i].name_len, private_name))
            return 1;
    return path->has_ancestor &&
           cp_name_is(path, path->ancestor.name, path->ancestor.name_len, private_name);
}

static cp_sql cp_translate(cp_out *o, const cp_path *path)
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
                        ncmp_cpspath_params *params, ncmp_err *err)
{
    cp_path *path = NULL;
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
    cp_path_free(path);
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
