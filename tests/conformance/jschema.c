#include "jschema.h"

#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Subschemas entered at once while validating: deep enough for any real
 * document, small enough to stop a $ref cycle that consumes no input. */
#define JSCHEMA_MAX_DEPTH 256
/* Links followed along one "extends" chain. */
#define JSCHEMA_MAX_EXTENDS 16

typedef struct jschema_doc {
    char *path; /* the real path of the file, or "<text>" */
    char *dir;  /* where relative file $refs start from */
    char *name; /* for messages: the file name without its directory */
    json_object *root;
    struct jschema_doc *next;
} jschema_doc;

/* A resolved $ref: the schema object that holds it and its target. */
typedef struct jschema_ref {
    json_object *node;
    jschema_doc *doc;
    json_object *target;
    char *pointer; /* the target's JSON pointer in doc, for messages */
} jschema_ref;

typedef struct jschema_regex {
    char *pattern;
    regex_t re;
    struct jschema_regex *next;
} jschema_regex;

struct jschema {
    unsigned flags;
    jschema_doc *docs; /* the main file first, then in load order */
    jschema_ref *refs;
    size_t nrefs, caprefs;
    json_object **seen; /* schema objects already checked (during a check only) */
    size_t nseen, capseen;
    jschema_regex *regexes;
};

/* Validation keywords this validator does not implement: a schema using
 * one is refused rather than half-checked. */
static const char *const unsupported_keywords[] = {
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "additionalItems",
    "prefixItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "$recursiveRef",
    "$recursiveAnchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$anchor",
};

/* ---- small helpers ---------------------------------------------------- */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (!q) {
        fprintf(stderr, "jschema: out of memory\n");
        abort();
    }
    return q;
}

static char *xstrndup(const char *s, size_t n)
{
    char *p = xrealloc(NULL, n + 1);

    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* A growable string, always NUL-terminated. */
typedef struct jstr {
    char *p;
    size_t len, cap;
} jstr;

static void jstr_add(jstr *s, const char *data, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 64;

        while (cap < s->len + n + 1)
            cap *= 2;
        s->p = xrealloc(s->p, cap);
        s->cap = cap;
    }
    memcpy(s->p + s->len, data, n);
    s->len += n;
    s->p[s->len] = '\0';
}

static void jstr_set(jstr *s, const char *text)
{
    s->len = 0;
    jstr_add(s, text, strlen(text));
}

static void jstr_truncate(jstr *s, size_t len)
{
    s->len = len;
    if (s->p)
        s->p[len] = '\0';
}

static const char *jstr_str(const jstr *s)
{
    return s->p ? s->p : "";
}

/* Append "/" and `token` escaped as RFC 6901 says (~ as ~0, / as ~1). */
static void jstr_push(jstr *s, const char *token)
{
    jstr_add(s, "/", 1);
    for (const char *c = token; *c; c++) {
        if (*c == '~')
            jstr_add(s, "~0", 2);
        else if (*c == '/')
            jstr_add(s, "~1", 2);
        else
            jstr_add(s, c, 1);
    }
}

static void jstr_push_index(jstr *s, size_t i)
{
    char num[32];

    snprintf(num, sizeof(num), "%zu", i);
    jstr_push(s, num);
}

/* ---- JSON pointers ---------------------------------------------------- */

/* Split JSON pointer `ptr` into unescaped tokens (*ntoks of them, the
 * array and strings owned by the caller: tokens_free). With `uri`, the
 * pointer is a URI fragment and its %XX escapes are decoded first.
 * Returns 0, or -1 when it is not a pointer. */
static int pointer_tokens(const char *ptr, int uri, char ***toks, size_t *ntoks)
{
    jstr decoded = {0};
    char **out = NULL;
    size_t n = 0;
    const char *p;
    int rc = -1;

    for (p = ptr; *p; p++) {
        if (uri && *p == '%') {
            unsigned v;
            char hex[3] = {0};

            if (!p[1] || !p[2])
                goto cleanup;
            hex[0] = p[1];
            hex[1] = p[2];
            if (sscanf(hex, "%2x", &v) != 1)
                goto cleanup;
            char c = (char)v;
            jstr_add(&decoded, &c, 1);
            p += 2;
        } else {
            jstr_add(&decoded, p, 1);
        }
    }
    p = jstr_str(&decoded);
    if (*p && *p != '/')
        goto cleanup;
    while (*p == '/') {
        const char *end = strchr(p + 1, '/');
        size_t len = end ? (size_t)(end - (p + 1)) : strlen(p + 1);
        jstr tok = {0};

        jstr_add(&tok, "", 0);
        for (size_t i = 0; i < len; i++) {
            char c = p[1 + i];

            if (c == '~') {
                if (i + 1 < len && p[2 + i] == '0')
                    c = '~';
                else if (i + 1 < len && p[2 + i] == '1')
                    c = '/';
                else {
                    free(tok.p);
                    goto cleanup;
                }
                i++;
            }
            jstr_add(&tok, &c, 1);
        }
        out = xrealloc(out, (n + 1) * sizeof(*out));
        out[n++] = tok.p;
        p += 1 + len;
    }
    *toks = out;
    *ntoks = n;
    out = NULL;
    n = 0;
    rc = 0;
cleanup:
    for (size_t i = 0; i < n; i++)
        free(out[i]);
    free(out);
    free(decoded.p);
    return rc;
}

static void tokens_free(char **toks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(toks[i]);
    free(toks);
}

/* An array index token: digits without a leading zero. */
static int index_parse(const char *tok, size_t *out)
{
    size_t v = 0;

    if (!*tok || (tok[0] == '0' && tok[1]))
        return -1;
    for (const char *c = tok; *c; c++) {
        if (*c < '0' || *c > '9' || v > (SIZE_MAX - 9) / 10)
            return -1;
        v = v * 10 + (size_t)(*c - '0');
    }
    *out = v;
    return 0;
}

/* Follow the first n tokens from root. 0 and *out (which may be NULL,
 * JSON null) when the location exists. */
static int pointer_follow(json_object *root, char **toks, size_t n, json_object **out)
{
    json_object *cur = root;

    for (size_t i = 0; i < n; i++) {
        size_t idx;

        if (json_object_is_type(cur, json_type_object)) {
            if (!json_object_object_get_ex(cur, toks[i], &cur))
                return -1;
        } else if (json_object_is_type(cur, json_type_array)) {
            if (index_parse(toks[i], &idx) != 0 || idx >= json_object_array_length(cur))
                return -1;
            cur = json_object_array_get_idx(cur, idx);
        } else {
            return -1;
        }
    }
    *out = cur;
    return 0;
}

/* ---- loading ---------------------------------------------------------- */

/* Parse all of `text` as one JSON value (json-c's strict mode). The
 * value (which is NULL for `null`) is owned by the caller. */
static int parse_text(const char *text, size_t len, json_object **out, char *err, size_t errlen)
{
    json_tokener *tok = json_tokener_new();
    json_object *obj;
    enum json_tokener_error jerr;
    size_t end;
    int rc = -1;

    if (!tok) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    if (len > INT32_MAX) {
        seterr(err, errlen, "document too large");
        goto cleanup;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    obj = json_tokener_parse_ex(tok, text, (int)len);
    jerr = json_tokener_get_error(tok);
    if (jerr == json_tokener_continue) {
        seterr(err, errlen, "JSON ends too early");
        goto cleanup;
    }
    if (jerr != json_tokener_success) {
        seterr(err, errlen, "bad JSON at byte %zu: %s", json_tokener_get_parse_end(tok),
               json_tokener_error_desc(jerr));
        goto cleanup;
    }
    for (end = json_tokener_get_parse_end(tok); end < len; end++) {
        if (!strchr(" \t\r\n", text[end])) {
            json_object_put(obj);
            seterr(err, errlen, "bad JSON: more after the value at byte %zu", end);
            goto cleanup;
        }
    }
    *out = obj;
    rc = 0;
cleanup:
    json_tokener_free(tok);
    return rc;
}

static int read_file(const char *path, jstr *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char chunk[8192];
    size_t n;
    int rc = 0;

    if (!f) {
        seterr(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        jstr_add(out, chunk, n);
    if (ferror(f)) {
        seterr(err, errlen, "cannot read %s", path);
        rc = -1;
    }
    fclose(f);
    if (rc == 0)
        jstr_add(out, "", 0);
    return rc;
}

static jschema_doc *doc_add(jschema *s, const char *path, const char *dir, json_object *root)
{
    jschema_doc *doc = xrealloc(NULL, sizeof(*doc));
    jschema_doc **tail = &s->docs;
    const char *slash = strrchr(path, '/');

    doc->path = xstrdup(path);
    doc->dir = xstrdup(dir);
    doc->name = xstrdup(slash ? slash + 1 : path);
    doc->root = root;
    doc->next = NULL;
    while (*tail)
        tail = &(*tail)->next;
    *tail = doc;
    return doc;
}

/* The document in file `path`, read now unless it was read before. */
static jschema_doc *doc_get(jschema *s, const char *path, char *err, size_t errlen)
{
    char *real = realpath(path, NULL);
    jschema_doc *doc = NULL;
    jstr text = {0};
    json_object *root = NULL;
    char msg[512], *dir, *slash;

    if (!real) {
        seterr(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    for (doc = s->docs; doc; doc = doc->next)
        if (strcmp(doc->path, real) == 0)
            goto cleanup;
    if (read_file(real, &text, err, errlen) != 0)
        goto cleanup;
    if (parse_text(jstr_str(&text), text.len, &root, msg, sizeof(msg)) != 0) {
        seterr(err, errlen, "%s: %s", real, msg);
        goto cleanup;
    }
    dir = xstrdup(real);
    slash = strrchr(dir, '/'); /* realpath's answer is absolute */
    slash[slash == dir ? 1 : 0] = '\0';
    doc = doc_add(s, real, dir, root);
    free(dir);
cleanup:
    free(real);
    free(text.p);
    return doc;
}

static void refs_clear(jschema *s)
{
    for (size_t i = 0; i < s->nrefs; i++)
        free(s->refs[i].pointer);
    s->nrefs = 0;
}

static const jschema_ref *ref_find(const jschema *s, json_object *node)
{
    for (size_t i = 0; i < s->nrefs; i++)
        if (s->refs[i].node == node)
            return &s->refs[i];
    return NULL;
}

static int has_uri_scheme(const char *ref, size_t len)
{
    size_t i = 0;

    if (len == 0 || !((ref[0] >= 'a' && ref[0] <= 'z') || (ref[0] >= 'A' && ref[0] <= 'Z')))
        return 0;
    while (i < len && ref[i] != ':' && ref[i] != '/')
        i++;
    return i < len && ref[i] == ':';
}

/* Resolve $ref `ref` written in `from`: the target document and node. */
static int ref_resolve(jschema *s, jschema_doc *from, const char *ref, jschema_ref *out, char *err,
                       size_t errlen)
{
    const char *hash = strchr(ref, '#');
    size_t file_len = hash ? (size_t)(hash - ref) : strlen(ref);
    const char *frag = hash ? hash + 1 : "";
    jschema_doc *doc = from;
    char **toks = NULL;
    size_t ntoks = 0;
    json_object *target;
    int rc = -1;

    if (has_uri_scheme(ref, file_len)) {
        seterr(err, errlen, "$ref \"%s\": only relative file references are supported", ref);
        return -1;
    }
    if (file_len > 0) {
        jstr path = {0};
        char msg[512];

        if (ref[0] != '/') {
            jstr_add(&path, from->dir, strlen(from->dir));
            jstr_add(&path, "/", 1);
        }
        jstr_add(&path, ref, file_len);
        doc = doc_get(s, path.p, msg, sizeof(msg));
        free(path.p);
        if (!doc) {
            seterr(err, errlen, "$ref \"%s\": %s", ref, msg);
            return -1;
        }
    }
    if (pointer_tokens(frag, 1, &toks, &ntoks) != 0) {
        seterr(err, errlen, "$ref \"%s\": the fragment is not a JSON pointer", ref);
        return -1;
    }
    if (pointer_follow(doc->root, toks, ntoks, &target) != 0) {
        seterr(err, errlen, "$ref \"%s\": no such location in %s", ref, doc->name);
        goto cleanup;
    }
    out->doc = doc;
    out->target = target;
    out->pointer = xstrdup(frag);
    rc = 0;
cleanup:
    tokens_free(toks, ntoks);
    return rc;
}

static regex_t *regex_find(const jschema *s, const char *pattern)
{
    for (jschema_regex *r = s->regexes; r; r = r->next)
        if (strcmp(r->pattern, pattern) == 0)
            return &r->re;
    return NULL;
}

static int regex_add(jschema *s, const char *pattern, char *err, size_t errlen)
{
    jschema_regex *r;
    int rc;

    if (regex_find(s, pattern))
        return 0;
    r = xrealloc(NULL, sizeof(*r));
    rc = regcomp(&r->re, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char msg[256];

        regerror(rc, &r->re, msg, sizeof(msg));
        free(r);
        seterr(err, errlen, "pattern \"%s\": %s", pattern, msg);
        return -1;
    }
    r->pattern = xstrdup(pattern);
    r->next = s->regexes;
    s->regexes = r;
    return 0;
}

/* ---- checking a schema when it is loaded ------------------------------ */

typedef struct checker {
    jschema *s;
    jstr sp; /* where in the current document */
    char *err;
    size_t errlen;
} checker;

static int check_schema(checker *k, jschema_doc *doc, json_object *node);

/* A failure at the current location plus `keyword`. */
static int check_fail(checker *k, const jschema_doc *doc, const char *keyword, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int check_fail(checker *k, const jschema_doc *doc, const char *keyword, const char *fmt, ...)
{
    char detail[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    seterr(k->err, k->errlen, "schema %s#%s%s%s: %s", doc->name, jstr_str(&k->sp),
           keyword ? "/" : "", keyword ? keyword : "", detail);
    return -1;
}

static int is_nonneg_int(json_object *v)
{
    return json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0;
}

static int type_name_known(const char *name)
{
    static const char *const names[] = {"null",   "boolean", "object", "array",
                                        "number", "string",  "integer"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* The subschema `sub` found at sp + "/" + keyword (+ "/" + member). */
static int check_sub(checker *k, jschema_doc *doc, const char *keyword, const char *member,
                     json_object *sub)
{
    size_t mark = k->sp.len;
    int rc;

    jstr_push(&k->sp, keyword);
    if (member)
        jstr_push(&k->sp, member);
    rc = check_schema(k, doc, sub);
    jstr_truncate(&k->sp, mark);
    return rc;
}

static int check_sub_index(checker *k, jschema_doc *doc, const char *keyword, size_t i,
                           json_object *sub)
{
    char num[32];

    snprintf(num, sizeof(num), "%zu", i);
    return check_sub(k, doc, keyword, num, sub);
}

static int check_keyword(checker *k, jschema_doc *doc, json_object *node, const char *key,
                         json_object *val)
{
    json_type t = json_object_get_type(val);

    for (size_t i = 0; i < sizeof(unsupported_keywords) / sizeof(unsupported_keywords[0]); i++)
        if (strcmp(key, unsupported_keywords[i]) == 0)
            return check_fail(k, doc, key, "keyword not supported by jschema");

    if (strcmp(key, "type") == 0) {
        if (t == json_type_string) {
            if (!type_name_known(json_object_get_string(val)))
                return check_fail(k, doc, key, "unknown type \"%s\"", json_object_get_string(val));
            return 0;
        }
        if (t != json_type_array || json_object_array_length(val) == 0)
            return check_fail(k, doc, key, "must be a type name or a list of them");
        for (size_t i = 0; i < json_object_array_length(val); i++) {
            json_object *name = json_object_array_get_idx(val, i);

            if (!json_object_is_type(name, json_type_string) ||
                !type_name_known(json_object_get_string(name)))
                return check_fail(k, doc, key, "entry %zu is not a type name", i);
        }
        return 0;
    }
    if (strcmp(key, "properties") == 0 || strcmp(key, "$defs") == 0 ||
        strcmp(key, "definitions") == 0) {
        struct json_object_iterator it, end;

        if (t != json_type_object)
            return check_fail(k, doc, key, "must be an object");
        end = json_object_iter_end(val);
        for (it = json_object_iter_begin(val); !json_object_iter_equal(&it, &end);
             json_object_iter_next(&it))
            if (check_sub(k, doc, key, json_object_iter_peek_name(&it),
                          json_object_iter_peek_value(&it)) != 0)
                return -1;
        return 0;
    }
    if (strcmp(key, "required") == 0) {
        if (t != json_type_array)
            return check_fail(k, doc, key, "must be a list of names");
        for (size_t i = 0; i < json_object_array_length(val); i++)
            if (!json_object_is_type(json_object_array_get_idx(val, i), json_type_string))
                return check_fail(k, doc, key, "entry %zu is not a string", i);
        return 0;
    }
    if (strcmp(key, "items") == 0 && t == json_type_array)
        return check_fail(k, doc, key, "a list of item schemas is not supported");
    if (strcmp(key, "additionalProperties") == 0 || strcmp(key, "items") == 0 ||
        strcmp(key, "not") == 0 || strcmp(key, "extends") == 0)
        return check_sub(k, doc, key, NULL, val);
    if (strcmp(key, "allOf") == 0 || strcmp(key, "anyOf") == 0 || strcmp(key, "oneOf") == 0) {
        if (t != json_type_array || json_object_array_length(val) == 0)
            return check_fail(k, doc, key, "must be a non-empty list of schemas");
        for (size_t i = 0; i < json_object_array_length(val); i++)
            if (check_sub_index(k, doc, key, i, json_object_array_get_idx(val, i)) != 0)
                return -1;
        return 0;
    }
    if (strcmp(key, "enum") == 0) {
        if (t != json_type_array)
            return check_fail(k, doc, key, "must be a list");
        return 0;
    }
    if (strcmp(key, "minItems") == 0 || strcmp(key, "maxItems") == 0 ||
        strcmp(key, "minLength") == 0 || strcmp(key, "maxLength") == 0) {
        if (!is_nonneg_int(val))
            return check_fail(k, doc, key, "must be a non-negative integer");
        return 0;
    }
    if (strcmp(key, "pattern") == 0) {
        char msg[384];

        if (t != json_type_string)
            return check_fail(k, doc, key, "must be a string");
        if (regex_add(k->s, json_object_get_string(val), msg, sizeof(msg)) != 0)
            return check_fail(k, doc, key, "%s", msg);
        return 0;
    }
    if (strcmp(key, "$ref") == 0) {
        jschema_ref ref = {0};
        jschema *s = k->s;
        char msg[768];
        jstr saved;
        int rc;

        if (t != json_type_string)
            return check_fail(k, doc, key, "must be a string");
        if (ref_resolve(s, doc, json_object_get_string(val), &ref, msg, sizeof(msg)) != 0)
            return check_fail(k, doc, key, "%s", msg);
        ref.node = node;
        if (s->nrefs == s->caprefs) {
            s->caprefs = s->caprefs ? 2 * s->caprefs : 16;
            s->refs = xrealloc(s->refs, s->caprefs * sizeof(*s->refs));
        }
        s->refs[s->nrefs++] = ref;
        /* the target is checked where it is, in its own document */
        saved = k->sp;
        k->sp = (jstr){0};
        jstr_set(&k->sp, ref.pointer);
        rc = check_schema(k, ref.doc, ref.target);
        free(k->sp.p);
        k->sp = saved;
        return rc;
    }
    /* const takes any value; everything else is an annotation */
    return 0;
}

static int check_schema(checker *k, jschema_doc *doc, json_object *node)
{
    jschema *s = k->s;
    struct json_object_iterator it, end;

    if (json_object_is_type(node, json_type_boolean))
        return 0;
    if (!json_object_is_type(node, json_type_object)) {
        if (s->flags & JSCHEMA_LENIENT)
            return 0;
        return check_fail(k, doc, NULL, "a schema must be an object or a boolean, not %s",
                          json_type_to_name(json_object_get_type(node)));
    }
    for (size_t i = 0; i < s->nseen; i++)
        if (s->seen[i] == node)
            return 0;
    if (s->nseen == s->capseen) {
        s->capseen = s->capseen ? 2 * s->capseen : 64;
        s->seen = xrealloc(s->seen, s->capseen * sizeof(*s->seen));
    }
    s->seen[s->nseen++] = node;

    end = json_object_iter_end(node);
    for (it = json_object_iter_begin(node); !json_object_iter_equal(&it, &end);
         json_object_iter_next(&it))
        if (check_keyword(k, doc, node, json_object_iter_peek_name(&it),
                          json_object_iter_peek_value(&it)) != 0)
            return -1;
    return 0;
}

/* Check the whole schema from the main file's root and resolve all refs
 * anew (after a patch the old table may point into freed objects). */
static int check_all(jschema *s, char *err, size_t errlen)
{
    checker k = {.s = s, .err = err, .errlen = errlen};
    int rc;

    refs_clear(s);
    s->nseen = 0;
    jstr_set(&k.sp, "");
    rc = check_schema(&k, s->docs, s->docs->root);
    free(k.sp.p);
    free(s->seen);
    s->seen = NULL;
    s->nseen = s->capseen = 0;
    return rc;
}

static jschema *schema_new(unsigned flags)
{
    jschema *s = xrealloc(NULL, sizeof(*s));

    memset(s, 0, sizeof(*s));
    s->flags = flags;
    return s;
}

jschema *jschema_load(const char *path, unsigned flags, char *err, size_t errlen)
{
    jschema *s = schema_new(flags);

    if (!doc_get(s, path, err, errlen) || check_all(s, err, errlen) != 0) {
        jschema_free(s);
        return NULL;
    }
    return s;
}

jschema *jschema_parse(const char *text, const char *base_dir, unsigned flags, char *err,
                       size_t errlen)
{
    jschema *s = schema_new(flags);
    json_object *root = NULL;
    char msg[512];

    if (parse_text(text, strlen(text), &root, msg, sizeof(msg)) != 0) {
        seterr(err, errlen, "schema text: %s", msg);
        jschema_free(s);
        return NULL;
    }
    doc_add(s, "<text>", base_dir ? base_dir : ".", root);
    if (check_all(s, err, errlen) != 0) {
        jschema_free(s);
        return NULL;
    }
    return s;
}

void jschema_free(jschema *s)
{
    jschema_doc *doc, *next_doc;
    jschema_regex *r, *next_r;

    if (!s)
        return;
    for (doc = s->docs; doc; doc = next_doc) {
        next_doc = doc->next;
        json_object_put(doc->root);
        free(doc->path);
        free(doc->dir);
        free(doc->name);
        free(doc);
    }
    for (r = s->regexes; r; r = next_r) {
        next_r = r->next;
        regfree(&r->re);
        free(r->pattern);
        free(r);
    }
    refs_clear(s);
    free(s->refs);
    free(s->seen);
    free(s);
}

/* ---- patching --------------------------------------------------------- */

/* Put `value` at the location (parent, token); takes value's reference. */
static void location_set(jschema *s, json_object *parent, const char *token, json_object *value)
{
    size_t idx = 0;

    if (!parent) {
        json_object_put(s->docs->root);
        s->docs->root = value;
    } else if (json_object_is_type(parent, json_type_object)) {
        json_object_object_add(parent, token, value);
    } else {
        index_parse(token, &idx);
        json_object_array_put_idx(parent, idx, value);
    }
}

int jschema_patch(jschema *s, const char *pointer, const char *replacement_json, char *err,
                  size_t errlen)
{
    json_object *repl = NULL, *parent = NULL, *old = NULL;
    char **toks = NULL;
    size_t ntoks = 0;
    const char *last = NULL;
    char msg[512];
    int rc = -1;

    if (parse_text(replacement_json, strlen(replacement_json), &repl, msg, sizeof(msg)) != 0) {
        seterr(err, errlen, "patch \"%s\": replacement: %s", pointer, msg);
        return -1;
    }
    if (pointer_tokens(pointer, 0, &toks, &ntoks) != 0) {
        seterr(err, errlen, "patch \"%s\": not a JSON pointer", pointer);
        goto cleanup;
    }
    if (ntoks == 0) {
        old = s->docs->root;
    } else {
        last = toks[ntoks - 1];
        if (pointer_follow(s->docs->root, toks, ntoks - 1, &parent) != 0 ||
            pointer_follow(parent, toks + ntoks - 1, 1, &old) != 0) {
            seterr(err, errlen, "patch \"%s\": no such location in %s", pointer, s->docs->name);
            goto cleanup;
        }
    }
    json_object_get(old); /* kept until the patched schema has checked out */
    location_set(s, parent, last, repl);
    repl = NULL;
    if (check_all(s, msg, sizeof(msg)) != 0) {
        seterr(err, errlen, "patch \"%s\": %s", pointer, msg);
        location_set(s, parent, last, old);
        old = NULL;
        /* it checked out before the patch, so it does again */
        check_all(s, NULL, 0);
        goto cleanup;
    }
    rc = 0;
cleanup:
    json_object_put(old);
    json_object_put(repl);
    tokens_free(toks, ntoks);
    return rc;
}

/* ---- validation ------------------------------------------------------- */

/* Property names that an additionalProperties may not count as extra: the
 * ones a class further down an "extends" chain declares. */
typedef struct prop_scope {
    json_object *properties;
    const struct prop_scope *next;
} prop_scope;

typedef struct vctx {
    const jschema *s;
    const jschema_doc *doc; /* the document the current schema is in */
    jstr ip;                /* the instance's JSON pointer */
    jstr sp;                /* the current schema's JSON pointer in doc */
    char *err;              /* NULL: no message wanted (inside anyOf, ...) */
    size_t errlen;
    int depth;
} vctx;

static int v_node(vctx *c, json_object *sch, json_object *inst, const prop_scope *extras);

/* A violation of `keyword` (NULL: of the schema itself, a `false`). */
static int v_fail(vctx *c, const char *keyword, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int v_fail(vctx *c, const char *keyword, const char *fmt, ...)
{
    char detail[768];
    va_list ap;

    if (!c->err || !c->errlen)
        return -1;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    seterr(c->err, c->errlen, "instance \"%s\": %s: %s (schema %s#%s%s%s)", jstr_str(&c->ip),
           keyword ? keyword : "false", detail, c->doc->name, jstr_str(&c->sp), keyword ? "/" : "",
           keyword ? keyword : "");
    return -1;
}

/* A short text of a value for messages. */
static const char *v_show(json_object *v, char *buf, size_t len)
{
    const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    size_t n = strlen(text);

    if (n < len)
        return text;
    snprintf(buf, len, "%.*s...", (int)(len - 4), text);
    return buf;
}

static const char *instance_type(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "boolean";
    case json_type_double:
        return "number";
    case json_type_int:
        return "integer";
    case json_type_object:
        return "object";
    case json_type_array:
        return "array";
    case json_type_string:
        return "string";
    }
    return "?";
}

static int type_matches(const char *name, json_object *v)
{
    json_type t = json_object_get_type(v);

    if (strcmp(name, "integer") == 0) {
        double d;

        if (t == json_type_int)
            return 1;
        if (t != json_type_double)
            return 0;
        /* 2.0 is an integer too (draft 6 and later) */
        d = json_object_get_double(v);
        return d > -9.2e18 && d < 9.2e18 && (double)(long long)d == d;
    }
    if (strcmp(name, "number") == 0)
        return t == json_type_int || t == json_type_double;
    return strcmp(name, instance_type(v)) == 0;
}

static int is_number(json_object *v)
{
    return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* JSON equality as enum and const mean it: 1 equals 1.0, key order does
 * not matter. */
static int json_equal(json_object *a, json_object *b)
{
    json_type t = json_object_get_type(a);

    if (is_number(a) && is_number(b)) {
        if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int))
            return json_object_get_int64(a) == json_object_get_int64(b);
        return json_object_get_double(a) == json_object_get_double(b);
    }
    if (t != json_object_get_type(b))
        return 0;
    switch (t) {
    case json_type_null:
        return 1;
    case json_type_boolean:
        return json_object_get_boolean(a) == json_object_get_boolean(b);
    case json_type_string:
        return json_object_get_string_len(a) == json_object_get_string_len(b) &&
               memcmp(json_object_get_string(a), json_object_get_string(b),
                      (size_t)json_object_get_string_len(a)) == 0;
    case json_type_array:
        if (json_object_array_length(a) != json_object_array_length(b))
            return 0;
        for (size_t i = 0; i < json_object_array_length(a); i++)
            if (!json_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
                return 0;
        return 1;
    case json_type_object: {
        struct json_object_iterator it, end;

        if (json_object_object_length(a) != json_object_object_length(b))
            return 0;
        end = json_object_iter_end(a);
        for (it = json_object_iter_begin(a); !json_object_iter_equal(&it, &end);
             json_object_iter_next(&it)) {
            json_object *bv;

            if (!json_object_object_get_ex(b, json_object_iter_peek_name(&it), &bv) ||
                !json_equal(json_object_iter_peek_value(&it), bv))
                return 0;
        }
        return 1;
    }
    default:
        return 0;
    }
}

/* Length in code points, as minLength and maxLength count. */
static size_t utf8_length(const char *s, size_t n)
{
    size_t count = 0;

    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            count++;
    return count;
}

/* The schema a $ref, extends or similar leads to from `sch`, for reading
 * its "properties" (no validation). */
static json_object *follow_ref(const jschema *s, json_object *sch)
{
    const jschema_ref *ref = ref_find(s, sch);

    return ref ? ref->target : NULL;
}

/* The "properties" declared along sch's extends chain (sch's own
 * excluded), up to `max`; each link may be inline or a $ref. */
static size_t extends_chain(const jschema *s, json_object *sch, json_object **props, size_t max)
{
    json_object *ext, *p;
    size_t n = 0;
    int links = 0;

    while (json_object_is_type(sch, json_type_object) &&
           json_object_object_get_ex(sch, "extends", &ext) && links++ < JSCHEMA_MAX_EXTENDS) {
        /* {"$ref": ...} and its target, which may again be a $ref */
        for (int hops = 0; json_object_is_type(ext, json_type_object) && hops < 8; hops++) {
            if (json_object_object_get_ex(ext, "properties", &p) && n < max)
                props[n++] = p;
            if (!json_object_object_get_ex(ext, "$ref", NULL))
                break;
            ext = follow_ref(s, ext);
        }
        sch = ext;
    }
    return n;
}

static int v_type(vctx *c, json_object *type, json_object *inst)
{
    if (json_object_is_type(type, json_type_string)) {
        if (type_matches(json_object_get_string(type), inst))
            return 0;
        return v_fail(c, "type", "expected %s, got %s", json_object_get_string(type),
                      instance_type(inst));
    }
    for (size_t i = 0; i < json_object_array_length(type); i++)
        if (type_matches(json_object_get_string(json_object_array_get_idx(type, i)), inst))
            return 0;
    return v_fail(c, "type", "expected one of %s, got %s",
                  json_object_to_json_string_ext(type, JSON_C_TO_STRING_PLAIN),
                  instance_type(inst));
}

static int v_string(vctx *c, json_object *sch, json_object *inst)
{
    const char *str = json_object_get_string(inst);
    size_t len = utf8_length(str, (size_t)json_object_get_string_len(inst));
    json_object *kw;
    char shown[96];

    if (json_object_object_get_ex(sch, "minLength", &kw) && len < (size_t)json_object_get_int64(kw))
        return v_fail(c, "minLength", "%s has %zu characters, fewer than %lld",
                      v_show(inst, shown, sizeof(shown)), len,
                      (long long)json_object_get_int64(kw));
    if (json_object_object_get_ex(sch, "maxLength", &kw) && len > (size_t)json_object_get_int64(kw))
        return v_fail(c, "maxLength", "%s has %zu characters, more than %lld",
                      v_show(inst, shown, sizeof(shown)), len,
                      (long long)json_object_get_int64(kw));
    if (json_object_object_get_ex(sch, "pattern", &kw)) {
        const regex_t *re = regex_find(c->s, json_object_get_string(kw));

        if (!re || regexec(re, str, 0, NULL, 0) != 0)
            return v_fail(c, "pattern", "%s does not match %s", v_show(inst, shown, sizeof(shown)),
                          json_object_get_string(kw));
    }
    return 0;
}

static int v_array(vctx *c, json_object *sch, json_object *inst)
{
    size_t n = json_object_array_length(inst);
    json_object *kw;

    if (json_object_object_get_ex(sch, "minItems", &kw) && n < (size_t)json_object_get_int64(kw))
        return v_fail(c, "minItems", "%zu items, fewer than %lld", n,
                      (long long)json_object_get_int64(kw));
    if (json_object_object_get_ex(sch, "maxItems", &kw) && n > (size_t)json_object_get_int64(kw))
        return v_fail(c, "maxItems", "%zu items, more than %lld", n,
                      (long long)json_object_get_int64(kw));
    if (json_object_object_get_ex(sch, "items", &kw)) {
        size_t imark = c->ip.len, smark = c->sp.len;
        int rc = 0;

        jstr_push(&c->sp, "items");
        for (size_t i = 0; i < n && rc == 0; i++) {
            jstr_push_index(&c->ip, i);
            rc = v_node(c, kw, json_object_array_get_idx(inst, i), NULL);
            jstr_truncate(&c->ip, imark);
        }
        jstr_truncate(&c->sp, smark);
        return rc;
    }
    return 0;
}

static int scope_has(const prop_scope *scope, const char *name)
{
    for (; scope; scope = scope->next)
        if (json_object_object_get_ex(scope->properties, name, NULL))
            return 1;
    return 0;
}

static int v_object(vctx *c, json_object *sch, json_object *inst, const prop_scope *allowed)
{
    json_object *kw, *sub, *additional;
    struct json_object_iterator it, end;
    size_t imark = c->ip.len, smark = c->sp.len;
    int rc = 0;

    if (json_object_object_get_ex(sch, "required", &kw)) {
        for (size_t i = 0; i < json_object_array_length(kw); i++) {
            const char *name = json_object_get_string(json_object_array_get_idx(kw, i));

            if (!json_object_object_get_ex(inst, name, NULL))
                return v_fail(c, "required", "property \"%s\" is missing", name);
        }
    }
    if (json_object_object_get_ex(sch, "properties", &kw)) {
        end = json_object_iter_end(kw);
        for (it = json_object_iter_begin(kw); rc == 0 && !json_object_iter_equal(&it, &end);
             json_object_iter_next(&it)) {
            const char *name = json_object_iter_peek_name(&it);

            if (!json_object_object_get_ex(inst, name, &sub))
                continue;
            jstr_push(&c->ip, name);
            jstr_push(&c->sp, "properties");
            jstr_push(&c->sp, name);
            rc = v_node(c, json_object_iter_peek_value(&it), sub, NULL);
            jstr_truncate(&c->ip, imark);
            jstr_truncate(&c->sp, smark);
        }
        if (rc != 0)
            return rc;
    }
    if (!json_object_object_get_ex(sch, "additionalProperties", &additional))
        return 0;
    end = json_object_iter_end(inst);
    for (it = json_object_iter_begin(inst); rc == 0 && !json_object_iter_equal(&it, &end);
         json_object_iter_next(&it)) {
        const char *name = json_object_iter_peek_name(&it);

        if (scope_has(allowed, name))
            continue;
        jstr_push(&c->ip, name);
        if (json_object_is_type(additional, json_type_boolean) &&
            !json_object_get_boolean(additional)) {
            rc = v_fail(c, "additionalProperties", "property \"%s\" is not allowed", name);
        } else {
            jstr_push(&c->sp, "additionalProperties");
            rc = v_node(c, additional, json_object_iter_peek_value(&it), NULL);
        }
        jstr_truncate(&c->ip, imark);
        jstr_truncate(&c->sp, smark);
    }
    return rc;
}

/* Validate against a subschema at sp + "/" + keyword [+ "/" + index]. */
static int v_sub(vctx *c, const char *keyword, long index, json_object *sch, json_object *inst,
                 const prop_scope *extras)
{
    size_t smark = c->sp.len;
    int rc;

    jstr_push(&c->sp, keyword);
    if (index >= 0)
        jstr_push_index(&c->sp, (size_t)index);
    rc = v_node(c, sch, inst, extras);
    jstr_truncate(&c->sp, smark);
    return rc;
}

/* The same without a message: 0 when inst is valid. `first` (if not NULL)
 * receives the message the failure would have given. */
static int v_sub_quiet(vctx *c, const char *keyword, long index, json_object *sch,
                       json_object *inst, char *first, size_t firstlen)
{
    char *err = c->err;
    size_t errlen = c->errlen;
    int rc;

    c->err = first;
    c->errlen = first ? firstlen : 0;
    rc = v_sub(c, keyword, index, sch, inst, NULL);
    c->err = err;
    c->errlen = errlen;
    return rc;
}

static int v_ref(vctx *c, json_object *sch, json_object *inst, const prop_scope *extras)
{
    const jschema_ref *ref = ref_find(c->s, sch);
    const jschema_doc *doc = c->doc;
    jstr sp = c->sp;
    int rc;

    if (!ref) /* cannot happen: check_all resolved every $ref */
        return v_fail(c, "$ref", "unresolved");
    c->doc = ref->doc;
    c->sp = (jstr){0};
    jstr_set(&c->sp, ref->pointer);
    rc = v_node(c, ref->target, inst, extras);
    free(c->sp.p);
    c->sp = sp;
    c->doc = doc;
    return rc;
}

static int v_combinators(vctx *c, json_object *sch, json_object *inst, const prop_scope *extras)
{
    json_object *kw;
    char first[1024];

    if (json_object_object_get_ex(sch, "allOf", &kw))
        for (size_t i = 0; i < json_object_array_length(kw); i++)
            if (v_sub(c, "allOf", (long)i, json_object_array_get_idx(kw, i), inst, extras) != 0)
                return -1;
    if (json_object_object_get_ex(sch, "anyOf", &kw)) {
        size_t i, n = json_object_array_length(kw);

        first[0] = '\0';
        for (i = 0; i < n; i++)
            if (v_sub_quiet(c, "anyOf", (long)i, json_object_array_get_idx(kw, i), inst,
                            i == 0 ? first : NULL, sizeof(first)) == 0)
                break;
        if (i == n)
            return v_fail(c, "anyOf", "no subschema matched; subschema 0 says: %s", first);
    }
    if (json_object_object_get_ex(sch, "oneOf", &kw)) {
        size_t n = json_object_array_length(kw);
        long matched = -1;

        first[0] = '\0';
        for (size_t i = 0; i < n; i++) {
            if (v_sub_quiet(c, "oneOf", (long)i, json_object_array_get_idx(kw, i), inst,
                            i == 0 ? first : NULL, sizeof(first)) != 0)
                continue;
            if (matched >= 0)
                return v_fail(c, "oneOf", "subschemas %ld and %zu both matched", matched, i);
            matched = (long)i;
        }
        if (matched < 0)
            return v_fail(c, "oneOf", "no subschema matched; subschema 0 says: %s", first);
    }
    if (json_object_object_get_ex(sch, "not", &kw) &&
        v_sub_quiet(c, "not", -1, kw, inst, NULL, 0) == 0)
        return v_fail(c, "not", "the value matches the schema it must not match");
    return 0;
}

static int v_keywords(vctx *c, json_object *sch, json_object *inst, const prop_scope *extras)
{
    json_object *kw, *chain[JSCHEMA_MAX_EXTENDS];
    prop_scope scopes[2 + sizeof(chain) / sizeof(chain[0])];
    const prop_scope *allowed = extras, *below = extras;
    size_t nchain, nscopes = 0;
    char shown[96];

    /* what additionalProperties here lets through: this schema's
     * properties, its base classes' and its derived classes' */
    nchain = extends_chain(c->s, sch, chain, sizeof(chain) / sizeof(chain[0]));
    for (size_t i = 0; i < nchain; i++) {
        scopes[nscopes] = (prop_scope){chain[i], allowed};
        allowed = &scopes[nscopes++];
    }
    if (json_object_object_get_ex(sch, "properties", &kw)) {
        scopes[nscopes] = (prop_scope){kw, allowed};
        allowed = &scopes[nscopes++];
        /* what a base class reached through "extends" must let through */
        scopes[nscopes] = (prop_scope){kw, extras};
        below = &scopes[nscopes++];
    }

    if (json_object_object_get_ex(sch, "type", &kw) && v_type(c, kw, inst) != 0)
        return -1;
    if (json_object_object_get_ex(sch, "const", &kw) && !json_equal(kw, inst))
        return v_fail(c, "const", "%s is not %s", v_show(inst, shown, sizeof(shown)),
                      json_object_to_json_string_ext(kw, JSON_C_TO_STRING_PLAIN));
    if (json_object_object_get_ex(sch, "enum", &kw)) {
        size_t i, n = json_object_array_length(kw);

        for (i = 0; i < n; i++)
            if (json_equal(json_object_array_get_idx(kw, i), inst))
                break;
        if (i == n)
            return v_fail(c, "enum", "%s is not one of %s", v_show(inst, shown, sizeof(shown)),
                          json_object_to_json_string_ext(kw, JSON_C_TO_STRING_PLAIN));
    }
    if (json_object_is_type(inst, json_type_string) && v_string(c, sch, inst) != 0)
        return -1;
    if (json_object_is_type(inst, json_type_array) && v_array(c, sch, inst) != 0)
        return -1;
    if (json_object_is_type(inst, json_type_object) && v_object(c, sch, inst, allowed) != 0)
        return -1;
    if (json_object_object_get_ex(sch, "$ref", NULL) && v_ref(c, sch, inst, extras) != 0)
        return -1;
    if (json_object_object_get_ex(sch, "extends", &kw) &&
        v_sub(c, "extends", -1, kw, inst, below) != 0)
        return -1;
    return v_combinators(c, sch, inst, extras);
}

static int v_node(vctx *c, json_object *sch, json_object *inst, const prop_scope *extras)
{
    int rc = 0;

    if (++c->depth > JSCHEMA_MAX_DEPTH) {
        rc = v_fail(c, "$ref", "more than %d nested subschemas: a $ref cycle?", JSCHEMA_MAX_DEPTH);
    } else if (json_object_is_type(sch, json_type_boolean)) {
        if (!json_object_get_boolean(sch))
            rc = v_fail(c, NULL, "no value is allowed here");
    } else if (json_object_is_type(sch, json_type_object)) {
        rc = v_keywords(c, sch, inst, extras);
    }
    /* anything else is a malformed subschema let through by
     * JSCHEMA_LENIENT: it allows everything */
    c->depth--;
    return rc;
}

int jschema_validate(const jschema *s, json_object *doc, char *err, size_t errlen)
{
    vctx c = {.s = s, .doc = s->docs, .err = err, .errlen = errlen};
    int rc;

    jstr_set(&c.ip, "");
    jstr_set(&c.sp, "");
    rc = v_node(&c, s->docs->root, doc, NULL);
    free(c.ip.p);
    free(c.sp.p);
    return rc;
}
