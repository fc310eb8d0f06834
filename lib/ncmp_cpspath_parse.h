/*
 * ncmp_cpspath_parse: the CPS-path grammar, parsed into a small fixed-size
 * syntax tree that the translators share (ncmp_cpspath for the inventory,
 * workers/cps/cps_query for the CPS data store). Meaning is theirs: this
 * module only says what was written and where.
 *
 *   path      := ('/' | '//') step (('/' | '//') step)*
 *                ['/' 'ancestor' '::' step ('/' step)*] ['/' '@' name]
 *   step      := name pred*            name := [prefix ':'] NAME
 *   pred      := '[' atom (('and' | 'or') atom)* ']'
 *   atom      := operand op literal | 'contains' '(' operand ',' literal ')'
 *   operand   := '@' name | 'text' '(' ')'
 *   op        := '=' | '!=' | '<' | '>' | '<=' | '>='
 *   literal   := 'string' | "string" | -?digits[.digits]
 *
 * A quote inside a string is doubled. Whitespace between tokens is
 * ignored. NAME is [A-Za-z_][A-Za-z0-9_.-]*, so names are ASCII; a string
 * may hold any UTF-8.
 *
 * Hostile input: the parser is a loop, not a recursion (nothing nests), the
 * text is checked to be UTF-8, and the limits below bound the tree; beyond
 * them, and on any syntax error, it returns a REJECT
 * "Invalid CPS path at position N: ..." where N is the 1-based character
 * position of the offending token.
 */
#ifndef NCMP_CPSPATH_PARSE_H
#define NCMP_CPSPATH_PARSE_H

#include <stddef.h>

#include "ncmp_err.h"

#define NCMP_CPSPATH_MAX_LEN   4096 /* bytes of path text */
#define NCMP_CPSPATH_MAX_STEPS 32   /* steps, ancestor path included */
#define NCMP_CPSPATH_MAX_CONDS 64   /* atoms (and predicates) in all */

typedef enum ncmp_cpspath_op {
    NCMP_CPSPATH_EQ,
    NCMP_CPSPATH_NE,
    NCMP_CPSPATH_LT,
    NCMP_CPSPATH_GT,
    NCMP_CPSPATH_LE,
    NCMP_CPSPATH_GE,
} ncmp_cpspath_op;

typedef enum ncmp_cpspath_lit_kind {
    NCMP_CPSPATH_LIT_STRING,
    NCMP_CPSPATH_LIT_NUMBER,
} ncmp_cpspath_lit_kind;

/* Offsets below are bytes into the path text (ncmp_cpspath_ast.src). A
 * name's `colon` is the offset of the ':' of its prefix, 0 when it has
 * none (offset 0 always holds the leading '/'); the name itself never
 * includes the prefix. */

/* One condition: `@leaf op literal`, `text() op literal`,
 * `contains(@leaf, literal)` or `contains(text(), literal)`. */
typedef struct ncmp_cpspath_atom {
    size_t at; /* where the atom starts */
    int is_contains;
    int on_text;           /* text() rather than @leaf */
    size_t leaf, leaf_len; /* @leaf only */
    size_t leaf_colon;
    ncmp_cpspath_op op; /* comparisons only */
    ncmp_cpspath_lit_kind lit_kind;
    char *lit;     /* the decoded value (quotes undoubled), owned */
    int or_before; /* joined to the previous atom of its predicate by `or` */
} ncmp_cpspath_atom;

/* One [...]: atoms[first .. first+n), `and` binding tighter than `or`. */
typedef struct ncmp_cpspath_pred {
    size_t at; /* the '[' */
    size_t first, n;
} ncmp_cpspath_pred;

typedef struct ncmp_cpspath_step {
    size_t at; /* the '/' or '//' before it; for the first ancestor step,
                * the '/' before `ancestor::` */
    size_t name, name_len, colon;
    int descendant;            /* reached through '//' */
    size_t first_pred, npreds; /* preds[first_pred .. +npreds) */
} ncmp_cpspath_step;

typedef struct ncmp_cpspath_ast {
    const char *src; /* the parsed text, borrowed: it must outlive the tree */
    ncmp_cpspath_step steps[NCMP_CPSPATH_MAX_STEPS];
    size_t nsteps; /* at least 1 */
    /* ancestor::a/b: the steps of the ancestor path (never descendant) */
    ncmp_cpspath_step ancestor[NCMP_CPSPATH_MAX_STEPS];
    size_t nancestor;
    /* a trailing /@leaf */
    int has_attribute;
    size_t attribute_at; /* the '/' */
    size_t attribute, attribute_len, attribute_colon;
    ncmp_cpspath_pred preds[NCMP_CPSPATH_MAX_CONDS];
    size_t npreds;
    ncmp_cpspath_atom atoms[NCMP_CPSPATH_MAX_CONDS];
    size_t natoms;
} ncmp_cpspath_ast;

/* Parse `src` (NUL-terminated; NULL counts as empty). On success *out is a
 * new tree owned by the caller (ncmp_cpspath_ast_free) that points into
 * `src`. On failure returns -1 with a REJECT naming the position and
 * leaves *out alone. */
int ncmp_cpspath_parse(const char *src, ncmp_cpspath_ast **out, ncmp_err *err);

void ncmp_cpspath_ast_free(ncmp_cpspath_ast *ast);

/* Set a REJECT "Invalid CPS path at position N: <fmt...>" for byte offset
 * `at` of the UTF-8 text `src` (N counts characters from 1); returns -1.
 * For translators that refuse what parses but means nothing to them. */
int ncmp_cpspath_reject(const char *src, size_t at, ncmp_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Is the name at [at, at+len) of the tree's text exactly `name`? */
int ncmp_cpspath_name_is(const ncmp_cpspath_ast *ast, size_t at, size_t len, const char *name);

#endif
