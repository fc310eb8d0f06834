#include "dmistub_datajob.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_utf8.h"

struct dmistub_datajob {
    pthread_mutex_t lock;
    long next_id;                     /* the last subJobId given */
    char *kept[DMISTUB_DATAJOB_KEPT]; /* a ring of JSON objects */
    size_t first, count;              /* the oldest and how many */
};

dmistub_datajob *dmistub_datajob_new(void)
{
    dmistub_datajob *d = ncmp_xcalloc(1, sizeof(*d));

    pthread_mutex_init(&d->lock, NULL);
    return d;
}

static void forget_locked(dmistub_datajob *d)
{
    for (size_t i = 0; i < DMISTUB_DATAJOB_KEPT; i++) {
        free(d->kept[i]);
        d->kept[i] = NULL;
    }
    d->first = d->count = 0;
}

void dmistub_datajob_free(dmistub_datajob *d)
{
    if (!d)
        return;
    forget_locked(d);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

/* --- the checks ------------------------------------------------------------ */

#define MAX_DEPTH 64

/* A scan of a body: where it is, and the first error. */
typedef struct scan {
    const char *s;
    size_t len, i;
    int depth;
    ncmp_err *err;
} scan;

static int malformed(scan *sc, const char *why)
{
    return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "malformed JSON at byte %zu: %s", sc->i, why);
}

static void skip_ws(scan *sc)
{
    while (sc->i < sc->len && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' ||
                               sc->s[sc->i] == '\n' || sc->s[sc->i] == '\r'))
        sc->i++;
}

/* The next byte after white space, or 0 at the end. */
static char peek(scan *sc)
{
    skip_ws(sc);
    return sc->i < sc->len ? sc->s[sc->i] : '\0';
}

static int expect(scan *sc, char c, const char *why)
{
    if (peek(sc) != c)
        return malformed(sc, why);
    sc->i++;
    return 0;
}

static int hex4(const char *p)
{
    for (int k = 0; k < 4; k++)
        if (!isxdigit((unsigned char)p[k]))
            return 0;
    return 1;
}

/* A string at sc->i (its opening quote): *tok is it with its quotes. */
static int scan_string(scan *sc, dmistub_token *tok)
{
    size_t start = sc->i++;

    while (sc->i < sc->len) {
        unsigned char c = (unsigned char)sc->s[sc->i];
        size_t n;

        if (c == '"') {
            sc->i++;
            tok->p = sc->s + start;
            tok->n = sc->i - start;
            return 0;
        }
        if (c < 0x20)
            return malformed(sc, "control character in a string");
        if (c == '\\') {
            char e = sc->i + 1 < sc->len ? sc->s[sc->i + 1] : '\0';
            if (!e || !strchr("\"\\/bfnrtu", e))
                return malformed(sc, "bad escape in a string");
            if (e == 'u' && (sc->len - sc->i < 6 || !hex4(sc->s + sc->i + 2)))
                return malformed(sc, "bad \\u escape in a string");
            if (e == 'u' && memcmp(sc->s + sc->i + 2, "0000", 4) == 0)
                return malformed(sc, "\\u0000 in a string");
            sc->i += e == 'u' ? 6 : 2;
        } else if (c < 0x80) {
            sc->i++;
        } else if ((n = ncmp_utf8_char_len(sc->s + sc->i, sc->len - sc->i)) == 0) {
            return malformed(sc, "invalid UTF-8 in a string");
        } else {
            sc->i += n;
        }
    }
    return malformed(sc, "unterminated string");
}

static void digits(scan *sc)
{
    while (sc->i < sc->len && isdigit((unsigned char)sc->s[sc->i]))
        sc->i++;
}

/* A number at sc->i (RFC 8259); *integer when it has no fraction or
 * exponent. */
static int scan_number(scan *sc, dmistub_token *tok, int *integer)
{
    size_t start = sc->i;

    *integer = 1;
    if (sc->s[sc->i] == '-')
        sc->i++;
    if (sc->i < sc->len && sc->s[sc->i] == '0')
        sc->i++;
    else if (sc->i < sc->len && sc->s[sc->i] >= '1' && sc->s[sc->i] <= '9')
        digits(sc);
    else
        return malformed(sc, "malformed number");
    if (sc->i < sc->len && sc->s[sc->i] == '.') {
        *integer = 0;
        if (++sc->i >= sc->len || !isdigit((unsigned char)sc->s[sc->i]))
            return malformed(sc, "malformed number");
        digits(sc);
    }
    if (sc->i < sc->len && (sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E')) {
        *integer = 0;
        if (++sc->i < sc->len && (sc->s[sc->i] == '+' || sc->s[sc->i] == '-'))
            sc->i++;
        if (sc->i >= sc->len || !isdigit((unsigned char)sc->s[sc->i]))
            return malformed(sc, "malformed number");
        digits(sc);
    }
    if (sc->i < sc->len && (isalnum((unsigned char)sc->s[sc->i]) || sc->s[sc->i] == '.'))
        return malformed(sc, "malformed number");
    tok->p = sc->s + start;
    tok->n = sc->i - start;
    return 0;
}

typedef enum vkind { V_STRING, V_INTEGER, V_NUMBER, V_NULL, V_BOOL, V_OBJECT, V_ARRAY } vkind;

static const char *const vkind_name[] = {"string",  "integer", "number", "null",
                                         "boolean", "object",  "array"};

/* The members of an object at sc->i (its '{'): `member` is called with
 * each name, after the ':', and scans the value. */
typedef int (*member_fn)(scan *sc, const dmistub_token *name, void *ctx);

static int scan_members(scan *sc, member_fn member, void *ctx)
{
    dmistub_token name;

    sc->i++;
    if (peek(sc) == '}') {
        sc->i++;
        return 0;
    }
    for (;;) {
        if (peek(sc) != '"')
            return malformed(sc, "expected a member name");
        if (scan_string(sc, &name) != 0 || expect(sc, ':', "expected ':' after a member name") ||
            member(sc, &name, ctx) != 0)
            return -1;
        if (peek(sc) == '}')
            break;
        if (expect(sc, ',', "expected ',' or '}'") != 0)
            return -1;
    }
    sc->i++;
    return 0;
}

/* The items of an array at sc->i (its '['): `item` scans each. */
typedef int (*item_fn)(scan *sc, void *ctx);

static int scan_items(scan *sc, item_fn item, void *ctx)
{
    sc->i++;
    if (peek(sc) == ']') {
        sc->i++;
        return 0;
    }
    for (;;) {
        if (item(sc, ctx) != 0)
            return -1;
        if (peek(sc) == ']')
            break;
        if (expect(sc, ',', "expected ',' or ']'") != 0)
            return -1;
    }
    sc->i++;
    return 0;
}

static int scan_value(scan *sc, vkind *kind, dmistub_token *tok);

/* Any value; *kind is what it is. */
static int scan_kind(scan *sc, vkind *kind)
{
    dmistub_token tok;

    return scan_value(sc, kind, &tok);
}

static int any_item(scan *sc, void *ctx)
{
    vkind kind;

    (void)ctx;
    return scan_kind(sc, &kind);
}

static int any_member(scan *sc, const dmistub_token *name, void *ctx)
{
    (void)name;
    return any_item(sc, ctx);
}

static int literal(scan *sc, const char *word, vkind k, vkind *kind)
{
    size_t n = strlen(word);

    if (sc->len - sc->i < n || memcmp(sc->s + sc->i, word, n) != 0 ||
        (sc->i + n < sc->len && isalnum((unsigned char)sc->s[sc->i + n])))
        return malformed(sc, "unexpected word (only true, false and null are JSON)");
    sc->i += n;
    *kind = k;
    return 0;
}

/* Any value; *tok is set for strings and numbers. */
static int scan_value(scan *sc, vkind *kind, dmistub_token *tok)
{
    int integer;

    switch (peek(sc)) {
    case '"':
        *kind = V_STRING;
        return scan_string(sc, tok);
    case '{':
    case '[':
        *kind = sc->s[sc->i] == '{' ? V_OBJECT : V_ARRAY;
        if (++sc->depth > MAX_DEPTH)
            return malformed(sc, "nested more than 64 deep");
        if ((*kind == V_OBJECT ? scan_members(sc, any_member, NULL)
                               : scan_items(sc, any_item, NULL)) != 0)
            return -1;
        sc->depth--;
        return 0;
    case 't':
        return literal(sc, "true", V_BOOL, kind);
    case 'f':
        return literal(sc, "false", V_BOOL, kind);
    case 'n':
        return literal(sc, "null", V_NULL, kind);
    case '\0':
        return malformed(sc, sc->i < sc->len ? "unexpected character" : "unexpected end");
    default:
        if (sc->s[sc->i] != '-' && !isdigit((unsigned char)sc->s[sc->i]))
            return malformed(sc, "unexpected character");
        if (scan_number(sc, tok, &integer) != 0)
            return -1;
        *kind = integer ? V_INTEGER : V_NUMBER;
        return 0;
    }
}

/* Is member name `tok` (with its quotes) `name`? */
static int named(const dmistub_token *tok, const char *name)
{
    size_t n = strlen(name);
    return tok->n == n + 2 && memcmp(tok->p + 1, name, n) == 0;
}

/* One operation of "data". */
typedef struct op_ctx {
    size_t index;
    int has_path, has_op;
    dmistub_token id;
} op_ctx;

static int wrong_type(scan *sc, size_t i, const char *member, const char *want, vkind kind)
{
    return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "data[%zu].%s must be %s, not %s", i, member,
                        want, vkind_name[kind]);
}

static int op_member(scan *sc, const dmistub_token *name, void *ctx)
{
    op_ctx *op = ctx;
    dmistub_token tok = {NULL, 0};
    vkind kind;

    if (scan_value(sc, &kind, &tok) != 0)
        return -1;
    if (named(name, "path") || named(name, "op")) {
        if (kind != V_STRING)
            return wrong_type(sc, op->index, name->p[1] == 'p' ? "path" : "op", "a string", kind);
        *(name->p[1] == 'p' ? &op->has_path : &op->has_op) = 1;
    } else if (named(name, "operationId")) {
        if (kind != V_STRING && kind != V_INTEGER && kind != V_NULL)
            return wrong_type(sc, op->index, "operationId", "a string, an integer or null", kind);
        op->id = kind == V_NULL ? (dmistub_token){NULL, 0} : tok;
    } else if (named(name, "moduleSetTag") && kind != V_STRING && kind != V_NULL) {
        return wrong_type(sc, op->index, "moduleSetTag", "a string or null", kind);
    }
    return 0;
}

static int scan_operation(scan *sc, void *ctx)
{
    dmistub_subjob *out = ctx;
    op_ctx op = {out->operations, 0, 0, {NULL, 0}};

    if (peek(sc) != '{') {
        vkind kind;
        if (scan_kind(sc, &kind) != 0)
            return -1;
        return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "data[%zu] must be an object, not %s",
                            out->operations, vkind_name[kind]);
    }
    if (scan_members(sc, op_member, &op) != 0)
        return -1;
    if (!op.has_path || !op.has_op)
        return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "data[%zu].%s (a string) is required",
                            op.index, op.has_path ? "op" : "path");
    if (out->operations < DMISTUB_DATAJOB_KEPT_IDS)
        out->operation_ids[out->operations] = op.id;
    out->operations++;
    return 0;
}

typedef struct job_ctx {
    dmistub_subjob *out;
    int has_data;
} job_ctx;

static int job_member(scan *sc, const dmistub_token *name, void *ctx)
{
    static const char *const strings[] = {"dataProducerId", "dataJobId", "dataAcceptType",
                                          "dataContentType", "destination"};
    job_ctx *job = ctx;
    dmistub_token tok = {NULL, 0};
    vkind kind;

    if (named(name, "data")) {
        if (peek(sc) != '[')
            return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "data must be an array of operations");
        job->has_data = 1;
        job->out->operations = 0;
        return scan_items(sc, scan_operation, job->out);
    }
    if (scan_value(sc, &kind, &tok) != 0)
        return -1;
    for (size_t k = 0; k < sizeof(strings) / sizeof(strings[0]); k++) {
        if (!named(name, strings[k]))
            continue;
        if (kind != V_STRING && kind != V_NULL)
            return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "%s must be a string, not %s", strings[k],
                                vkind_name[kind]);
        if (k == 0)
            job->out->data_producer_id = tok;
        else if (k == 1)
            job->out->data_job_id = tok;
    }
    return 0;
}

int dmistub_datajob_check(const char *body, size_t len, dmistub_subjob *out, ncmp_err *err)
{
    /* the depth of a value in an operation: the body, data, the operation */
    scan sc = {body ? body : "", body ? len : 0, 0, 3, err};
    job_ctx job = {out, 0};

    memset(out, 0, sizeof(*out));
    if (peek(&sc) != '{') {
        vkind kind;
        if (scan_kind(&sc, &kind) != 0)
            return -1;
        return ncmp_err_set(err, NCMP_ERR_REJECT, "a sub-job request must be a JSON object, not %s",
                            vkind_name[kind]);
    }
    if (scan_members(&sc, job_member, &job) != 0)
        return -1;
    if (peek(&sc) != '\0' || sc.i < sc.len)
        return malformed(&sc, "more after the JSON value");
    if (!job.has_data)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data (an array of operations) is required");
    return 0;
}

int dmistub_datajob_failing(const dmistub_subjob *job)
{
    static const char marker[] = "\"" DMISTUB_DATAJOB_FAILING "\"";
    const dmistub_token *t = &job->data_producer_id;

    return t->n == sizeof(marker) - 1 && memcmp(t->p, marker, t->n) == 0;
}

/* --- the answer ------------------------------------------------------------ */

void dmistub_datajob_answer(dmistub_datajob *d, ncmp_buf *out)
{
    long id;

    pthread_mutex_lock(&d->lock);
    id = ++d->next_id;
    pthread_mutex_unlock(&d->lock);
    ncmp_buf_appendf(out,
                     "{\"subJobId\":\"%ld\",\"dmiServiceName\":\"some-dmi-service-name\","
                     "\"dataProducerId\":\"my-data-producer-id\"}",
                     id);
}

/* --- the kept requests ----------------------------------------------------- */

/* A token as a JSON string (an integer in quotes), or null. */
static void append_token(ncmp_buf *b, const dmistub_token *t)
{
    if (!t->p) {
        ncmp_buf_append_str(b, "null");
    } else if (*t->p == '"') {
        ncmp_buf_append(b, t->p, t->n);
    } else {
        ncmp_buf_append_char(b, '"');
        ncmp_buf_append(b, t->p, t->n);
        ncmp_buf_append_char(b, '"');
    }
}

void dmistub_datajob_keep(dmistub_datajob *d, const dmistub_subjob *job, const char *path,
                          const char *query, const char *authorization)
{
    ncmp_buf b = NCMP_BUF_INIT;
    size_t ids =
        job->operations < DMISTUB_DATAJOB_KEPT_IDS ? job->operations : DMISTUB_DATAJOB_KEPT_IDS;
    size_t slot;

    ncmp_buf_append_str(&b, "{\"path\":");
    ncmp_buf_append_json_string(&b, path ? path : "");
    ncmp_buf_append_str(&b, ",\"query\":");
    ncmp_buf_append_json_string(&b, query ? query : "");
    ncmp_buf_append_str(&b, ",\"dataProducerId\":");
    append_token(&b, &job->data_producer_id);
    ncmp_buf_append_str(&b, ",\"dataJobId\":");
    append_token(&b, &job->data_job_id);
    ncmp_buf_appendf(&b, ",\"operations\":%zu,\"operationIds\":[", job->operations);
    for (size_t i = 0; i < ids; i++) {
        if (i)
            ncmp_buf_append_char(&b, ',');
        append_token(&b, &job->operation_ids[i]);
    }
    ncmp_buf_append_str(&b, "],\"authorization\":");
    ncmp_buf_append_json_string(&b, authorization ? authorization : "");
    ncmp_buf_append_char(&b, '}');

    pthread_mutex_lock(&d->lock);
    if (d->count == DMISTUB_DATAJOB_KEPT) {
        slot = d->first;
        d->first = (d->first + 1) % DMISTUB_DATAJOB_KEPT;
    } else {
        slot = (d->first + d->count++) % DMISTUB_DATAJOB_KEPT;
    }
    free(d->kept[slot]);
    d->kept[slot] = b.data;
    pthread_mutex_unlock(&d->lock);
}

char *dmistub_datajob_last(dmistub_datajob *d)
{
    ncmp_buf b = NCMP_BUF_INIT;

    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < d->count; i++) {
        ncmp_buf_append_char(&b, i ? ',' : '[');
        ncmp_buf_append_str(&b, d->kept[(d->first + i) % DMISTUB_DATAJOB_KEPT]);
    }
    pthread_mutex_unlock(&d->lock);
    if (b.data)
        ncmp_buf_append_char(&b, ']');
    return b.data;
}

void dmistub_datajob_forget(dmistub_datajob *d)
{
    pthread_mutex_lock(&d->lock);
    forget_locked(d);
    d->next_id = 0;
    pthread_mutex_unlock(&d->lock);
}
