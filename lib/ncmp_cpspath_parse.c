#include "ncmp_cpspath_parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_utf8.h"

/*
 * A tokenizer over the path text and a parser that fills the fixed arrays
 * of ncmp_cpspath_ast. The grammar has no brackets inside conditions, so
 * nothing nests: the parser is a few loops and hostile input cannot deepen
 * the stack.
 */

void ncmp_cpspath_ast_free(ncmp_cpspath_ast *ast)
{
    if (!ast)
        return;
    for (size_t i = 0; i < ast->natoms; i++)
        free(ast->atoms[i].lit);
    free(ast);
}

int ncmp_cpspath_name_is(const ncmp_cpspath_ast *ast, size_t at, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(ast->src + at, name, len) == 0;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

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

int ncmp_cpspath_reject(const char *src, size_t at, ncmp_err *err, const char *fmt, ...)
{
    char what[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return ncmp_err_set(err, NCMP_ERR_REJECT, "Invalid CPS path at position %zu: %s",
                        cp_char_pos(src, at), what);
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
    size_t start, len; /* bytes of the path text, quotes and prefix included */
    size_t colon;      /* T_NAME: the prefix's ':', or 0 */
    ncmp_cpspath_op op;
} cp_tok;

typedef struct cp_parser {
    const char *src;
    size_t len;
    cp_tok tok; /* the current token */
    ncmp_cpspath_ast *ast;
    ncmp_err *err;
} cp_parser;

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
        ncmp_cpspath_op op;
    } ops[] = {{"=", NCMP_CPSPATH_EQ}, {"!=", NCMP_CPSPATH_NE}, {"<", NCMP_CPSPATH_LT},
               {">", NCMP_CPSPATH_GT}, {"<=", NCMP_CPSPATH_LE}, {">=", NCMP_CPSPATH_GE}};
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
    return ncmp_cpspath_reject(p->src, at, p->err, "unknown operator '%.*s'", (int)(end - at),
                               p->src + at);
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
    return ncmp_cpspath_reject(p->src, at, p->err, "missing closing quote %c", quote);
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

/* NAME, or prefix ':' NAME (one colon: '::' is the axis). */
static void cp_lex_name(cp_parser *p, size_t at, cp_tok *tok)
{
    const char *s = p->src;
    size_t end = at + 1;

    while (end < p->len && cp_is_name_char(s[end]))
        end++;
    if (end + 1 < p->len && s[end] == ':' && cp_is_name_start(s[end + 1])) {
        tok->colon = end;
        end += 2;
        while (end < p->len && cp_is_name_char(s[end]))
            end++;
    }
    tok->kind = T_NAME;
    tok->len = end - at;
}

static int cp_lex_unexpected(cp_parser *p, size_t at)
{
    unsigned char c = (unsigned char)p->src[at];

    if (c >= 0x80)
        return ncmp_cpspath_reject(p->src, at, p->err, "unexpected non-ASCII character");
    if (c < 0x20 || c == 0x7f)
        return ncmp_cpspath_reject(p->src, at, p->err, "unexpected control character 0x%02x", c);
    return ncmp_cpspath_reject(p->src, at, p->err, "unexpected character '%c'", c);
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
        cp_lex_name(p, at, tok);
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

/* The name of the current T_NAME token, without its prefix. */
static void cp_tok_name(const cp_parser *p, size_t *name, size_t *len, size_t *colon)
{
    size_t end = p->tok.start + p->tok.len;

    *colon = p->tok.colon;
    *name = p->tok.colon ? p->tok.colon + 1 : p->tok.start;
    *len = end - *name;
}

/* ------------------------------------------------------------------------ */
/* Parser                                                                   */
/* ------------------------------------------------------------------------ */

static int cp_fail_here(cp_parser *p, const char *what)
{
    return ncmp_cpspath_reject(p->src, p->tok.start, p->err, "%s", what);
}

static int cp_expect(cp_parser *p, cp_tok_kind kind, const char *what)
{
    if (p->tok.kind != kind)
        return ncmp_cpspath_reject(p->src, p->tok.start, p->err, "expected %s", what);
    return cp_next(p);
}

/* literal := STRING | NUMBER; the decoded value goes to the atom. */
static int cp_parse_literal(cp_parser *p, ncmp_cpspath_atom *atom)
{
    const char *text = p->src + p->tok.start;

    if (p->tok.kind == T_NUMBER) {
        atom->lit_kind = NCMP_CPSPATH_LIT_NUMBER;
        atom->lit = ncmp_xmalloc(p->tok.len + 1);
        memcpy(atom->lit, text, p->tok.len);
        atom->lit[p->tok.len] = '\0';
    } else if (p->tok.kind == T_STRING) {
        char quote = text[0];
        size_t n = 0;
        atom->lit_kind = NCMP_CPSPATH_LIT_STRING;
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
static int cp_parse_operand(cp_parser *p, ncmp_cpspath_atom *atom)
{
    if (p->tok.kind == T_AT) {
        if (cp_next(p) < 0)
            return -1;
        if (p->tok.kind != T_NAME)
            return cp_fail_here(p, "expected a leaf name after '@'");
        cp_tok_name(p, &atom->leaf, &atom->leaf_len, &atom->leaf_colon);
        return cp_next(p);
    }
    if (cp_tok_is(p, "text")) {
        atom->on_text = 1;
        return cp_parse_text_call(p);
    }
    return cp_fail_here(p, "expected '@leaf', 'text()' or 'contains(...)'");
}

/* contains '(' operand ',' literal ')' */
static int cp_parse_contains(cp_parser *p, ncmp_cpspath_atom *atom)
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

/* atom := operand op literal | contains(...) */
static int cp_parse_atom(cp_parser *p, int or_before)
{
    ncmp_cpspath_ast *ast = p->ast;
    ncmp_cpspath_atom *atom;

    if (ast->natoms == NCMP_CPSPATH_MAX_CONDS)
        return ncmp_cpspath_reject(p->src, p->tok.start, p->err, "too many conditions (at most %d)",
                                   NCMP_CPSPATH_MAX_CONDS);
    atom = &ast->atoms[ast->natoms++];
    atom->at = p->tok.start;
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

/* '[' atom (('and'|'or') atom)* ']'; the current token is '['. */
static int cp_parse_pred(cp_parser *p, ncmp_cpspath_step *step)
{
    ncmp_cpspath_ast *ast = p->ast;
    ncmp_cpspath_pred *pred;
    int or_before = 0;

    if (ast->npreds == NCMP_CPSPATH_MAX_CONDS)
        return ncmp_cpspath_reject(p->src, p->tok.start, p->err, "too many conditions (at most %d)",
                                   NCMP_CPSPATH_MAX_CONDS);
    pred = &ast->preds[ast->npreds++];
    pred->at = p->tok.start;
    pred->first = ast->natoms;
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

/* name pred* ; the current token is the name, `at` the '/' before it. */
static int cp_parse_step(cp_parser *p, ncmp_cpspath_step *step, size_t at, int descendant)
{
    step->at = at;
    cp_tok_name(p, &step->name, &step->name_len, &step->colon);
    step->descendant = descendant;
    step->first_pred = p->ast->npreds;
    if (cp_next(p) < 0)
        return -1;
    while (p->tok.kind == T_LBRACK)
        if (cp_parse_pred(p, step) < 0)
            return -1;
    return 0;
}

/* A step may be added (the ancestor path counts too). */
static int cp_room_for_a_step(cp_parser *p)
{
    if (p->ast->nsteps + p->ast->nancestor < NCMP_CPSPATH_MAX_STEPS)
        return 0;
    return ncmp_cpspath_reject(p->src, p->tok.start, p->err, "too many steps (at most %d)",
                               NCMP_CPSPATH_MAX_STEPS);
}

/* '/' '@' leaf EOF; the current token is the '/'. */
static int cp_parse_attribute_axis(cp_parser *p)
{
    ncmp_cpspath_ast *ast = p->ast;

    ast->attribute_at = p->tok.start;
    if (cp_next(p) < 0 || cp_expect(p, T_AT, "'@'") < 0)
        return -1;
    if (p->tok.kind != T_NAME)
        return cp_fail_here(p, "expected a leaf name after '@'");
    ast->has_attribute = 1;
    cp_tok_name(p, &ast->attribute, &ast->attribute_len, &ast->attribute_colon);
    if (cp_next(p) < 0)
        return -1;
    if (p->tok.kind != T_EOF)
        return cp_fail_here(p, "the attribute axis '/@leaf' must come last");
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

/* ancestor '::' step ('/' step)* ['/' '@' leaf] EOF; the current token is
 * `ancestor`, `at` the '/' before it. */
static int cp_parse_ancestor(cp_parser *p, size_t at)
{
    ncmp_cpspath_ast *ast = p->ast;
    cp_tok after;
    int again;

    if (ast->nsteps == 0)
        return cp_fail_here(p, "the ancestor axis needs a step before it");
    if (cp_next(p) < 0 || cp_expect(p, T_AXIS, "'::'") < 0)
        return -1;
    if (p->tok.kind != T_NAME)
        return cp_fail_here(p, "expected a node name after 'ancestor::'");
    for (;;) {
        if (cp_room_for_a_step(p) < 0)
            return -1;
        if (cp_parse_step(p, &ast->ancestor[ast->nancestor++], at, 0) < 0)
            return -1;
        if (p->tok.kind == T_EOF)
            return 0;
        if (p->tok.kind != T_SLASH)
            break;
        at = p->tok.start;
        if (cp_peek(p, &after) < 0)
            return -1;
        if (after.kind == T_AT)
            return cp_parse_attribute_axis(p);
        if (cp_next(p) < 0 || cp_at_ancestor(p, &again) < 0)
            return -1;
        if (again)
            return ncmp_cpspath_reject(p->src, at, p->err,
                                       "the ancestor axis must be the last step");
        if (p->tok.kind != T_NAME)
            return cp_fail_here(p, "expected a node name");
    }
    if (p->tok.kind == T_DSLASH)
        return cp_fail_here(p, "the ancestor path takes '/' steps only");
    return cp_fail_here(p, "the ancestor axis must be the last step");
}

/* One '/' or '//' and what follows it; *done is set at the end. */
static int cp_parse_segment(cp_parser *p, int *done)
{
    int descendant = p->tok.kind == T_DSLASH;
    size_t at = p->tok.start;
    int ancestor;
    cp_tok after;

    if (!descendant && p->ast->nsteps > 0) {
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
        return cp_parse_ancestor(p, at);
    }
    if (p->tok.kind != T_NAME)
        return cp_fail_here(p, "expected a node name");
    if (cp_room_for_a_step(p) < 0)
        return -1;
    return cp_parse_step(p, &p->ast->steps[p->ast->nsteps++], at, descendant);
}

static int cp_parse_path(cp_parser *p)
{
    const char *what;
    int done = 0;

    if (cp_lex(p, 0, &p->tok) < 0)
        return -1;
    if (p->tok.kind == T_EOF)
        return ncmp_cpspath_reject(p->src, 0, p->err, "empty path");
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
        return ncmp_cpspath_reject(p->src, p->tok.start, p->err, "unexpected '%.*s' after the step",
                                   (int)(p->tok.len > 20 ? 20 : p->tok.len), what);
    }
    return 0;
}

int ncmp_cpspath_parse(const char *src, ncmp_cpspath_ast **out, ncmp_err *err)
{
    cp_parser p;
    size_t len = src ? strlen(src) : 0;
    size_t bad;

    if (len > NCMP_CPSPATH_MAX_LEN)
        return ncmp_cpspath_reject(src, NCMP_CPSPATH_MAX_LEN, err, "path longer than %d bytes",
                                   NCMP_CPSPATH_MAX_LEN);
    if (len == 0)
        return ncmp_cpspath_reject("", 0, err, "empty path");
    bad = ncmp_utf8_invalid_at(src, len);
    if (bad < len)
        return ncmp_cpspath_reject(src, bad, err, "invalid UTF-8");
    memset(&p, 0, sizeof(p));
    p.src = src;
    p.len = len;
    p.err = err;
    p.ast = ncmp_xcalloc(1, sizeof(*p.ast));
    p.ast->src = src;
    if (cp_parse_path(&p) < 0) {
        ncmp_cpspath_ast_free(p.ast);
        return -1;
    }
    *out = p.ast;
    return 0;
}
