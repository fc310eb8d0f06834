#include "datajob.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "handle_cache.h"
#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_dlq.h"
#include "ncmp_dmi.h"
#include "ncmp_jscan.h"
#include "ncmp_json.h"
#include "ncmp_kafka.h"
#include "ncmp_kafka_config.h"
#include "ncmp_log.h"
#include "ncmp_pump.h"
#include "rest_json.h"

#define MAX_DEPTH       64
#define MAX_VALUE_BYTES (1u << 20) /* one operation, or the metadata */
#define MAX_DB_LOOKUPS  100        /* distinct paths the map misses, asked of the database */
#define NOT_FOUND_MSG   "No matching cm handle found using alternate ids"
#define NOT_READY_MSG   "cm handle(s) not ready"
#define RESULT_TYPE     "org.onap.cps.ncmp.events.datajob.DataJobResult"

struct datajob {
    data *d;
    const ncmp_config *cfg;
    ncmp_producer *producer;
    ncmp_pump_role role;
    ncmp_pump *requests; /* datajob.request-topic, or NULL */
};

/* --- the scanner ----------------------------------------------------------- */

enum { T_NONE, T_ROOT, T_WRITE, T_DATA };
enum { X_KEY0, X_KEY, X_COLON, X_VALUE0, X_VALUE, X_COMMA };

typedef struct frame {
    char array;
    char expect;
    char tag;
    char key[24]; /* the current member's key (T_ROOT and T_WRITE only) */
    size_t klen;
} frame;

struct datajob_scan {
    datajob_scan_cb cb;
    size_t max_value;
    frame st[MAX_DEPTH];
    int depth; /* frames in use */
    int in_string, escape, in_literal, in_key;
    int root_done, saw_data, failed;
    /* a value being captured: its first frame's depth, and its text (what
     * earlier chunks held of it; the current chunk's part starts at
     * span_from) */
    int capture, capture_depth, capture_meta;
    ncmp_buf text;
    const char *chunk; /* the bytes being fed, NULL outside a feed */
    size_t pos;        /* the byte of the chunk being scanned */
    size_t span_from;
    size_t index;
    size_t offset;
};

datajob_scan *datajob_scan_new(const datajob_scan_cb *cb, size_t max_value_bytes)
{
    datajob_scan *s = ncmp_xcalloc(1, sizeof(*s));

    s->cb = *cb;
    s->max_value = max_value_bytes ? max_value_bytes : MAX_VALUE_BYTES;
    return s;
}

void datajob_scan_free(datajob_scan *s)
{
    if (!s)
        return;
    ncmp_buf_free(&s->text);
    free(s);
}

static int scan_fail(datajob_scan *s, ncmp_err *err, const char *what)
{
    s->failed = 1;
    return ncmp_err_set(err, NCMP_ERR_REJECT, "malformed data job at byte %zu: %s", s->offset,
                        what);
}

/* The captured value is complete, its last byte before chunk[end]: hand
 * it over (the metadata parsed, an operation as text). */
static int capture_end(datajob_scan *s, size_t end, ncmp_err *err)
{
    json_object *v = NULL;
    ncmp_err perr;
    int rc;

    s->capture = 0;
    if (s->chunk)
        ncmp_buf_append(&s->text, s->chunk + s->span_from, end - s->span_from);
    if (!s->capture_meta) {
        rc = s->cb.operation(s->cb.arg, s->text.data, s->text.len, s->index++, err);
    } else if (ncmp_json_parse(s->text.data, s->text.len, &v, &perr) != 0) {
        rc = ncmp_err_set(err, NCMP_ERR_REJECT, "dataJobMetadata: %s", perr.msg);
    } else {
        rc = s->cb.metadata(s->cb.arg, v, err);
        json_object_put(v);
    }
    ncmp_buf_reset(&s->text);
    if (rc != 0)
        s->failed = 1;
    return rc;
}

/* A value ended at the current depth (a scalar, or a container just
 * closed), its last byte before chunk[end]. */
static int value_end(datajob_scan *s, size_t end, ncmp_err *err)
{
    if (s->capture && s->depth == s->capture_depth && capture_end(s, end, err) != 0)
        return -1;
    if (s->depth == 0)
        s->root_done = 1;
    else
        s->st[s->depth - 1].expect = X_COMMA;
    return 0;
}

/* A value starts at the current depth, at chunk[pos]: capture it when it
 * is the metadata or an operation. */
static void value_start(datajob_scan *s)
{
    const frame *p = s->depth ? &s->st[s->depth - 1] : NULL;

    if (s->capture || !p)
        return;
    if ((p->tag == T_ROOT && strcmp(p->key, "dataJobMetadata") == 0) || p->tag == T_DATA) {
        s->capture = 1;
        s->capture_depth = s->depth;
        s->capture_meta = p->tag == T_ROOT;
        ncmp_buf_reset(&s->text);
        s->span_from = s->pos;
    }
}

static int literal_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '+' || c == '-';
}

static int scan_open(datajob_scan *s, char c, ncmp_err *err)
{
    frame *p = s->depth ? &s->st[s->depth - 1] : NULL;
    frame *f;

    if (s->depth == MAX_DEPTH)
        return scan_fail(s, err, "nested too deep");
    if (!p && c != '{')
        return scan_fail(s, err, "the body is not a JSON object");
    value_start(s);
    f = &s->st[s->depth++];
    memset(f, 0, sizeof(*f));
    f->array = c == '[';
    f->expect = f->array ? X_VALUE0 : X_KEY0;
    if (!p)
        f->tag = T_ROOT;
    else if (p->tag == T_ROOT && !f->array && strcmp(p->key, "dataJobWriteRequest") == 0)
        f->tag = T_WRITE;
    else if (p->tag == T_WRITE && f->array && strcmp(p->key, "data") == 0)
        f->tag = T_DATA, s->saw_data = 1;
    return 0;
}

static int scan_byte(datajob_scan *s, char c, ncmp_err *err)
{
    frame *f = s->depth ? &s->st[s->depth - 1] : NULL;

    if (s->in_string) {
        if (s->escape) {
            s->escape = 0;
        } else if (c == '\\') {
            s->escape = 1;
        } else if (c == '"') {
            s->in_string = 0;
            if (s->in_key) {
                s->in_key = 0;
                f->expect = X_COLON;
                return 0;
            }
            return value_end(s, s->pos + 1, err);
        } else if ((unsigned char)c < 0x20) {
            return scan_fail(s, err, "a control character in a string");
        }
        if (s->in_key && f->klen + 1 < sizeof(f->key))
            f->key[f->klen++] = c;
        return 0;
    }
    if (s->in_literal) {
        if (literal_char(c))
            return 0;
        s->in_literal = 0;
        if (value_end(s, s->pos, err) != 0) /* `c` ends the literal, is not in it */
            return -1;
        f = s->depth ? &s->st[s->depth - 1] : NULL;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        return 0;
    if (s->root_done)
        return scan_fail(s, err, "text after the JSON object");
    if (!f) /* the very first value */
        return scan_open(s, c, err);
    switch (c) {
    case '{':
    case '[':
        if (f->expect != X_VALUE0 && f->expect != X_VALUE)
            return scan_fail(s, err, "a value where none may be");
        return scan_open(s, c, err);
    case '}':
    case ']':
        if ((c == '}') != !f->array ||
            (f->expect != X_COMMA && f->expect != (f->array ? X_VALUE0 : X_KEY0)))
            return scan_fail(s, err, "an unexpected closing bracket");
        s->depth--;
        return value_end(s, s->pos + 1, err);
    case ':':
        if (f->expect != X_COLON)
            return scan_fail(s, err, "an unexpected ':'");
        f->expect = X_VALUE;
        return 0;
    case ',':
        if (f->expect != X_COMMA)
            return scan_fail(s, err, "an unexpected ','");
        f->expect = f->array ? X_VALUE : X_KEY;
        return 0;
    case '"':
        if (f->expect == X_KEY0 || f->expect == X_KEY) {
            s->in_string = s->in_key = 1;
            f->klen = 0;
            memset(f->key, 0, sizeof(f->key));
            return 0;
        }
        if (f->expect != X_VALUE0 && f->expect != X_VALUE)
            return scan_fail(s, err, "a string where none may be");
        value_start(s);
        s->in_string = 1;
        return 0;
    default:
        if ((f->expect != X_VALUE0 && f->expect != X_VALUE) ||
            !(c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n'))
            return scan_fail(s, err, "not JSON");
        value_start(s);
        s->in_literal = 1;
        return 0;
    }
}

int datajob_scan_feed(datajob_scan *s, const char *bytes, size_t len, ncmp_err *err)
{
    if (s->failed)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "malformed data job");
    s->chunk = bytes;
    s->span_from = 0;
    for (size_t i = 0; i < len; i++, s->offset++) {
        if (s->in_string && !s->escape && !s->in_key) {
            /* inside a string value: on to its next quote, backslash or
             * control character (most of a body is string values) */
            size_t j = i;
            while (j < len && (unsigned char)bytes[j] >= 0x20 && bytes[j] != '"' &&
                   bytes[j] != '\\')
                j++;
            s->offset += j - i;
            i = j;
            if (i == len)
                break;
        }
        /* a value being captured is taken from the chunk when it ends, or
         * when the chunk does */
        if (s->capture && s->text.len + (i - s->span_from) >= s->max_value)
            return scan_fail(s, err, "an operation larger than the limit");
        s->pos = i;
        if (scan_byte(s, bytes[i], err) != 0)
            return -1;
    }
    if (s->capture) {
        if (s->text.len + (len - s->span_from) > s->max_value)
            return scan_fail(s, err, "an operation larger than the limit");
        ncmp_buf_append(&s->text, bytes + s->span_from, len - s->span_from);
    }
    s->chunk = NULL;
    return 0;
}

int datajob_scan_end(datajob_scan *s, ncmp_err *err)
{
    if (s->failed)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "malformed data job");
    if (s->in_literal) {
        s->in_literal = 0;
        if (value_end(s, 0, err) != 0)
            return -1;
    }
    if (!s->root_done)
        return scan_fail(s, err, "the body ends before its JSON object does");
    if (!s->saw_data)
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "dataJobWriteRequest.data (an array of operations) is required");
    return 0;
}

/* --- JEX selectors (NCMP's JexParser) ---------------------------------------- */

void datajob_strings_free(char **s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i]);
    free(s);
}

static int is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char **datajob_selectors(const char *text, size_t *n)
{
    size_t cap = 8, len = text ? strlen(text) : 0, start = 0;
    char **out = ncmp_xcalloc(cap, sizeof(*out));

    *n = 0;
    for (size_t i = 0; i <= len; i++) {
        /* a line break, or the word OR, ends a selector */
        size_t sep = 0;
        if (i == len || text[i] == '\n' || text[i] == '\r')
            sep = i < len ? 1 : 0;
        else if (strncmp(text + i, "OR", 2) == 0 && (i == 0 || !is_word_char(text[i - 1])) &&
                 !is_word_char(text[i + 2]))
            sep = 2;
        else
            continue;
        {
            size_t a = start, b = i;
            int dup = 0;
            while (a < b && (text[a] == ' ' || text[a] == '\t'))
                a++;
            while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t'))
                b--;
            if (b > a && !(b - a >= 2 && text[a] == '&' && text[a + 1] == '&')) {
                char *sel = ncmp_xmalloc(b - a + 1);
                memcpy(sel, text + a, b - a);
                sel[b - a] = '\0';
                for (size_t k = 0; k < *n && !dup; k++)
                    dup = strcmp(out[k], sel) == 0;
                if (dup) {
                    free(sel);
                } else {
                    if (*n == cap)
                        out = ncmp_xrealloc(out, (cap *= 2) * sizeof(*out));
                    out[(*n)++] = sel;
                }
            }
        }
        start = i + (sep ? sep : 1);
        if (sep)
            i += sep - 1;
    }
    return out;
}

char *datajob_fdn_prefix(const char *xpath)
{
    ncmp_buf fdn = NCMP_BUF_INIT;
    const char *p = strchr(xpath, '/'); /* the first segment (the root) is ignored */
    char *out;

    while (p) {
        const char *seg = p + 1, *end = strchr(seg, '/');
        size_t n = end ? (size_t)(end - seg) : strlen(seg);
        const char *br = memchr(seg, '[', n);
        /* Name[id="value"] and nothing after it */
        if (!br || br == seg || memchr(seg, ']', (size_t)(br - seg)) ||
            strncmp(br, "[id=\"", 5) != 0 || n < (size_t)(br - seg) + 7 || seg[n - 1] != ']' ||
            seg[n - 2] != '"' || memchr(br + 5, '"', (size_t)(seg + n - 2 - (br + 5))))
            break;
        ncmp_buf_append_char(&fdn, '/');
        ncmp_buf_append(&fdn, seg, (size_t)(br - seg));
        ncmp_buf_append_char(&fdn, '=');
        ncmp_buf_append(&fdn, br + 5, (size_t)(seg + n - 2 - (br + 5)));
        p = end;
    }
    out = ncmp_xstrdup(fdn.data ? fdn.data : "");
    ncmp_buf_free(&fdn);
    return out;
}

/* --- write jobs ---------------------------------------------------------------- */

typedef struct dj_group {
    char *dmi, *producer;
    ncmp_buf body; /* {"data":[... until the job is complete */
    size_t ops;
    /* the DMI's answer */
    long status;
    char *sub_job_id;
    char *error;
} dj_group;

typedef struct dj_write dj_write;

/* The job's outcome: an HTTP status and a JSON body (taken over). */
typedef void (*dj_done_fn)(dj_write *w, int status, ncmp_buf *body, void *opaque);

struct dj_write {
    data *d;
    char *job_id;
    char *auth;
    json_object *meta;
    datajob_scan *scan;
    dj_group *groups;
    size_t ngroups, last_group;
    size_t ops;
    size_t unknown, not_ready;
    char *first_unknown, *first_not_ready;
    json_object **pending; /* operations whose path the map did not know */
    size_t npending, cappending;
    atomic_size_t remaining; /* sub-jobs not answered yet */
    dj_done_fn done;
    void *opaque;
};

static void dj_free(dj_write *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->ngroups; i++) {
        free(w->groups[i].dmi);
        free(w->groups[i].producer);
        ncmp_buf_free(&w->groups[i].body);
        free(w->groups[i].sub_job_id);
        free(w->groups[i].error);
    }
    free(w->groups);
    for (size_t i = 0; i < w->npending; i++)
        json_object_put(w->pending[i]);
    free(w->pending);
    json_object_put(w->meta);
    datajob_scan_free(w->scan);
    free(w->first_unknown);
    free(w->first_not_ready);
    free(w->job_id);
    free(w->auth);
    free(w);
}

static const char *str_member(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static dj_group *dj_group_of(dj_write *w, const char *dmi, const char *producer)
{
    dj_group *g;

    if (w->ngroups && strcmp(w->groups[w->last_group].dmi, dmi) == 0 &&
        strcmp(w->groups[w->last_group].producer, producer) == 0)
        return &w->groups[w->last_group];
    for (size_t i = 0; i < w->ngroups; i++)
        if (strcmp(w->groups[i].dmi, dmi) == 0 && strcmp(w->groups[i].producer, producer) == 0) {
            w->last_group = i;
            return &w->groups[i];
        }
    w->groups = ncmp_xrealloc(w->groups, (w->ngroups + 1) * sizeof(*w->groups));
    g = &w->groups[w->ngroups];
    memset(g, 0, sizeof(*g));
    g->dmi = ncmp_xstrdup(dmi);
    g->producer = ncmp_xstrdup(producer);
    ncmp_buf_append_str(&g->body, "{\"data\":[");
    w->last_group = w->ngroups++;
    return g;
}

/* An operation to write: each member as JSON text (a string with its
 * quotes), p NULL when absent; and the path's value, for messages. */
typedef struct dj_op {
    ncmp_jtok path, op, value, id;
    const char *path_text;
    size_t path_len;
} dj_op;

/* NCMP's DmiWriteOperation {path, op, moduleSetTag, value, operationId},
 * appended to the sub-job of the operation's handle. */
static void dj_add(dj_write *w, const dj_op *op, const handle_info *h)
{
    dj_group *g;

    if (h->state != NCMP_STATE_READY) {
        if (w->not_ready++ == 0) {
            w->first_not_ready = ncmp_xmalloc(op->path_len + 1);
            memcpy(w->first_not_ready, op->path_text, op->path_len);
            w->first_not_ready[op->path_len] = '\0';
        }
        return;
    }
    g = dj_group_of(w, h->datajobs_write, h->data_producer);
    if (g->ops++)
        ncmp_buf_append_char(&g->body, ',');
    ncmp_buf_append_str(&g->body, "{\"path\":");
    ncmp_buf_append(&g->body, op->path.p, op->path.n);
    ncmp_buf_append_str(&g->body, ",\"op\":");
    ncmp_buf_append(&g->body, op->op.p, op->op.n);
    ncmp_buf_append_str(&g->body, ",\"moduleSetTag\":");
    ncmp_buf_append_json_string(&g->body, h->module_set_tag);
    if (op->value.p) {
        ncmp_buf_append_str(&g->body, ",\"value\":");
        rest_json_append_compact_n(&g->body, op->value.p, op->value.n);
    }
    if (op->id.p) {
        ncmp_buf_append_str(&g->body, ",\"operationId\":");
        ncmp_buf_append(&g->body, op->id.p, op->id.n);
    }
    ncmp_buf_append_char(&g->body, '}');
}

typedef struct dj_add_ctx {
    dj_write *w;
    const dj_op *op;
} dj_add_ctx;

static void dj_add_found(const handle_info *h, void *arg)
{
    const dj_add_ctx *c = arg;

    dj_add(c->w, c->op, h);
}

static ncmp_jtok json_text(json_object *v)
{
    const char *t =
        json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    return (ncmp_jtok){t, strlen(t)};
}

/* The operation `o` (checked by dj_on_op_parsed) as a dj_op; its text is
 * held by `o`. */
static dj_op dj_op_of(json_object *o)
{
    dj_op op = {{NULL, 0}, {NULL, 0}, {NULL, 0}, {NULL, 0}, NULL, 0};
    json_object *v;

    json_object_object_get_ex(o, "path", &v);
    op.path = json_text(v);
    op.path_text = json_object_get_string(v);
    op.path_len = strlen(op.path_text);
    json_object_object_get_ex(o, "op", &v);
    op.op = json_text(v);
    if (json_object_object_get_ex(o, "value", &v))
        op.value = v ? json_text(v) : (ncmp_jtok){"null", 4};
    if (json_object_object_get_ex(o, "operationId", &v) && v)
        op.id = json_text(v);
    return op;
}

static int dj_add_if_known(dj_write *w, const dj_op *op)
{
    const dj_add_ctx c = {w, op};

    return handle_cache_longest_with(data_cache(w->d), op->path_text, op->path_len, dj_add_found,
                                     (void *)&c);
}

/* An operation the fast path did not take: parsed and checked whole (the
 * errors come from here), added when the map knows its path, else kept
 * for the database. */
static int dj_on_op_parsed(dj_write *w, const char *text, size_t len, size_t index, ncmp_err *err)
{
    json_object *o = NULL, *v;
    const char *path, *verb;
    ncmp_err perr;
    dj_op op;

    if (ncmp_json_parse(text, len, &o, &perr) != 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data[%zu]: %s", index, perr.msg);
    if (!json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data[%zu] must be an object", index);
    }
    path = str_member(o, "path");
    verb = str_member(o, "op");
    if (!path || !*path || !verb || !*verb) {
        const char *missing = !path || !*path ? "path" : "op";
        json_object_put(o);
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data[%zu]: %s (a string) is required", index,
                            missing);
    }
    if (json_object_object_get_ex(o, "operationId", &v) && v &&
        !json_object_is_type(v, json_type_string)) {
        json_object_put(o);
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data[%zu]: operationId must be a string", index);
    }
    w->ops++;
    op = dj_op_of(o);
    if (!dj_add_if_known(w, &op)) {
        /* later, from the database (the map may lag a registration) */
        if (w->npending == w->cappending) {
            w->cappending = w->cappending ? 2 * w->cappending : 16;
            w->pending = ncmp_xrealloc(w->pending, w->cappending * sizeof(*w->pending));
        }
        w->pending[w->npending++] = json_object_get(o);
    }
    json_object_put(o);
    return 0;
}

static int dj_on_meta(void *arg, json_object *meta, ncmp_err *err)
{
    dj_write *w = arg;
    static const char *const keys[] = {"destination", "dataAcceptType", "dataContentType"};

    if (!json_object_is_type(meta, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "dataJobMetadata must be an object");
    for (size_t i = 0; i < 3; i++) {
        json_object *v;
        if (json_object_object_get_ex(meta, keys[i], &v) && v &&
            !json_object_is_type(v, json_type_string))
            return ncmp_err_set(err, NCMP_ERR_REJECT, "dataJobMetadata.%s must be a string",
                                keys[i]);
    }
    json_object_put(w->meta);
    w->meta = json_object_get(meta);
    return 0;
}

/* The fast path's view of an operation's members. */
typedef struct op_scan {
    dj_op op;
    int slow; /* something only the parsed path handles (escapes, types) */
} op_scan;

static int op_member(ncmp_jscan *sc, const ncmp_jtok *name, void *ctx)
{
    op_scan *f = ctx;
    ncmp_jkind kind;
    ncmp_jtok tok;

    if (ncmp_jscan_value(sc, &kind, &tok) != 0)
        return -1;
    if (ncmp_jtok_escaped(name)) {
        f->slow = 1;
    } else if (ncmp_jtok_named(name, "path") || ncmp_jtok_named(name, "op")) {
        if (kind != NCMP_J_STRING || tok.n == 2 || ncmp_jtok_escaped(&tok))
            f->slow = 1;
        *(name->p[1] == 'p' ? &f->op.path : &f->op.op) = tok;
    } else if (ncmp_jtok_named(name, "operationId")) {
        if (kind != NCMP_J_NULL && (kind != NCMP_J_STRING || ncmp_jtok_escaped(&tok)))
            f->slow = 1;
        f->op.id = kind == NCMP_J_NULL ? (ncmp_jtok){NULL, 0} : tok;
    } else if (ncmp_jtok_named(name, "value")) {
        f->op.value = tok;
    }
    return 0;
}

/* One operation: checked and picked apart in place when it is plain (no
 * escapes in its names, path, op and operationId) and its path is in the
 * map, the common case; else dj_on_op_parsed. */
static int dj_on_op(void *arg, const char *text, size_t len, size_t index, ncmp_err *err)
{
    dj_write *w = arg;
    op_scan f;
    ncmp_jscan sc;
    ncmp_err serr;

    memset(&f, 0, sizeof(f));
    ncmp_jscan_init(&sc, text, len, &serr);
    if (ncmp_jscan_peek(&sc) == '{' && ncmp_jscan_members(&sc, op_member, &f) == 0 &&
        ncmp_jscan_end(&sc) == 0 && !f.slow && f.op.path.p && f.op.op.p) {
        f.op.path_text = f.op.path.p + 1;
        f.op.path_len = f.op.path.n - 2;
        if (dj_add_if_known(w, &f.op)) {
            w->ops++;
            return 0;
        }
    }
    return dj_on_op_parsed(w, text, len, index, err);
}

/* The operations the map did not know: one database look-up per distinct
 * path (at most MAX_DB_LOOKUPS; the others are unknown). */
static int dj_resolve_pending(dj_write *w, ncmp_err *err)
{
    size_t lookups = 0;

    for (size_t i = 0; i < w->npending; i++) {
        dj_op op = dj_op_of(w->pending[i]);
        handle_info h = {0};
        int found = 0, seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(str_member(w->pending[k], "path"), op.path_text) == 0;
        if (seen) {
            /* looked up already: in the map now when it was found */
            found = dj_add_if_known(w, &op);
        } else if (lookups++ < MAX_DB_LOOKUPS &&
                   data_resolve_longest(w->d, op.path_text, &h, &found, err) != 0) {
            return -1;
        } else if (found) {
            dj_add(w, &op, &h);
            handle_info_free(&h);
        }
        if (!found && w->unknown++ == 0)
            w->first_unknown = ncmp_xstrdup(op.path_text);
    }
    return 0;
}

static void dj_error(ncmp_buf *out, int status, const char *message, const char *details)
{
    ncmp_http_error_json(out, status, message, details);
}

/* Every sub-job answered: the list, 200 when all were accepted, else 502
 * with the failed ones' errors. */
static void dj_answer(dj_write *w)
{
    ncmp_buf out = NCMP_BUF_INIT;
    int failed = 0;

    ncmp_buf_append_char(&out, '[');
    for (size_t i = 0; i < w->ngroups; i++) {
        dj_group *g = &w->groups[i];
        if (i)
            ncmp_buf_append_char(&out, ',');
        ncmp_buf_append_str(&out, "{\"subJobId\":");
        if (g->sub_job_id)
            ncmp_buf_append_json_string(&out, g->sub_job_id);
        else
            ncmp_buf_append_str(&out, "null");
        ncmp_buf_append_str(&out, ",\"dmiServiceName\":");
        ncmp_buf_append_json_string(&out, g->dmi);
        ncmp_buf_append_str(&out, ",\"dataProducerId\":");
        ncmp_buf_append_json_string(&out, g->producer);
        if (g->error) {
            failed = 1;
            ncmp_buf_appendf(&out, ",\"error\":{\"status\":%ld,\"message\":", g->status);
            ncmp_buf_append_json_string(&out, g->error);
            ncmp_buf_append_char(&out, '}');
        }
        ncmp_buf_append_char(&out, '}');
    }
    ncmp_buf_append_char(&out, ']');
    log_info("datajob", "job %s: %zu operations in %zu sub-jobs%s", w->job_id, w->ops, w->ngroups,
             failed ? ", some failed" : "");
    w->done(w, failed ? 502 : 200, &out, w->opaque);
    ncmp_buf_free(&out);
}

typedef struct dj_call {
    dj_write *w;
    dj_group *g;
} dj_call;

static void dj_sub_done(ncmp_dmi_response *r, void *opaque)
{
    dj_call *c = opaque;
    dj_group *g = c->g;
    dj_write *w = c->w;
    json_object *doc = NULL, *v;
    ncmp_err err;

    g->status = r->status;
    if (r->status >= 200 && r->status < 300 &&
        ncmp_json_parse(r->body.data ? r->body.data : "", r->body.len, &doc, &err) == 0 &&
        json_object_object_get_ex(doc, "subJobId", &v) && v) {
        g->sub_job_id = ncmp_xstrdup(json_object_get_string(v));
    } else {
        ncmp_err e;
        if (ncmp_dmi_response_check(r, &e) == 0)
            ncmp_err_set(&e, NCMP_ERR_REJECT, "the DMI's answer has no subJobId");
        g->error = ncmp_xstrdup(e.msg);
        log_warn("datajob", "job %s: sub-job for %s at %s failed: %s", w->job_id, g->producer,
                 g->dmi, e.msg);
    }
    json_object_put(doc);
    ncmp_dmi_response_destroy(r);
    free(c);
    if (atomic_fetch_sub(&w->remaining, 1) == 1)
        dj_answer(w);
}

static void meta_field(ncmp_buf *b, json_object *meta, const char *key)
{
    const char *v = meta ? str_member(meta, key) : NULL;

    ncmp_buf_appendf(b, ",\"%s\":", key);
    if (v)
        ncmp_buf_append_json_string(b, v);
    else
        ncmp_buf_append_str(b, "null");
}

/* Send every sub-job at once: POST {dmi}/dmi/v1/cmwriteJob?destination=
 * with NCMP's SubJobWriteRequest, the body handed over to the client. */
static void dj_send(dj_write *w)
{
    const char *dest = w->meta ? str_member(w->meta, "destination") : NULL;
    ncmp_buf hdr = NCMP_BUF_INIT;
    const char *headers[2] = {NULL, NULL};

    if (w->auth) {
        ncmp_buf_appendf(&hdr, "Authorization: %s", w->auth);
        headers[0] = hdr.data;
    }
    atomic_store(&w->remaining, w->ngroups + 1);
    for (size_t i = 0; i < w->ngroups; i++) {
        dj_group *g = &w->groups[i];
        dj_call *c = ncmp_xcalloc(1, sizeof(*c));
        ncmp_buf url = NCMP_BUF_INIT;
        ncmp_dmi_request dr = {0};
        ncmp_err err;

        ncmp_buf_append_str(&g->body, "]");
        meta_field(&g->body, w->meta, "destination");
        meta_field(&g->body, w->meta, "dataAcceptType");
        meta_field(&g->body, w->meta, "dataContentType");
        ncmp_buf_append_str(&g->body, ",\"dataProducerId\":");
        ncmp_buf_append_json_string(&g->body, g->producer);
        ncmp_buf_append_str(&g->body, ",\"dataJobId\":");
        ncmp_buf_append_json_string(&g->body, w->job_id);
        ncmp_buf_append_char(&g->body, '}');
        ncmp_dmi_url_base(&url, g->dmi);
        ncmp_buf_append_str(&url, "/dmi/v1/cmwriteJob");
        if (dest && *dest) {
            ncmp_buf_append_str(&url, "?destination=");
            ncmp_dmi_url_encode(&url, dest);
        }
        dr.method = "POST";
        dr.url = url.data;
        dr.body = g->body.data;
        dr.body_len = g->body.len;
        dr.take_body = 1;
        dr.headers = headers;
        g->body = (ncmp_buf)NCMP_BUF_INIT; /* the client's now */
        *c = (dj_call){w, g};
        if (data_submit(w->d, &dr, dj_sub_done, c, &err) != 0) {
            g->error = ncmp_xstrdup(err.msg);
            free(c);
            atomic_fetch_sub(&w->remaining, 1);
        }
        ncmp_buf_free(&url);
    }
    ncmp_buf_free(&hdr);
    /* the extra count keeps the answer from racing the loop */
    if (atomic_fetch_sub(&w->remaining, 1) == 1)
        dj_answer(w);
}

/* The body is in: refuse, or send the sub-jobs (the answer follows from
 * the last completion, possibly on another thread). */
static void dj_finish(dj_write *w, int too_large, ncmp_err *scan_err, int scan_failed)
{
    ncmp_buf out = NCMP_BUF_INIT;
    char details[700];
    ncmp_err err;

    if (too_large) {
        snprintf(details, sizeof(details), "the limit is %d bytes (datajob.max-body-bytes)",
                 data_config(w->d)->datajob_max_body_bytes);
        dj_error(&out, 413, "Data job too large", details);
        w->done(w, 413, &out, w->opaque);
    } else if (scan_failed) {
        dj_error(&out, 400, "Invalid data job", scan_err->msg);
        w->done(w, 400, &out, w->opaque);
    } else if (dj_resolve_pending(w, &err) != 0) {
        dj_error(&out, 503, "Handle lookup failed", err.msg);
        w->done(w, 503, &out, w->opaque);
    } else if (w->unknown) {
        snprintf(details, sizeof(details),
                 "cannot find a datanode with alternate id %.500s (%zu "
                 "operations)",
                 w->first_unknown, w->unknown);
        dj_error(&out, 404, NOT_FOUND_MSG, details);
        w->done(w, 404, &out, w->opaque);
    } else if (w->not_ready) {
        snprintf(details, sizeof(details), "%.500s and %zu operations in all", w->first_not_ready,
                 w->not_ready);
        dj_error(&out, 409, NOT_READY_MSG, details);
        w->done(w, 409, &out, w->opaque);
    } else {
        ncmp_buf_free(&out);
        dj_send(w);
        return;
    }
    ncmp_buf_free(&out);
}

static dj_write *dj_new(data *d, const char *job_id, const char *auth, dj_done_fn done,
                        void *opaque)
{
    dj_write *w = ncmp_xcalloc(1, sizeof(*w));
    const datajob_scan_cb cb = {dj_on_meta, dj_on_op, w};

    w->d = d;
    w->job_id = ncmp_xstrdup(job_id);
    w->auth = auth ? ncmp_xstrdup(auth) : NULL;
    w->done = done;
    w->opaque = opaque;
    w->scan = datajob_scan_new(&cb, MAX_VALUE_BYTES);
    return w;
}

/* --- write jobs over HTTP --------------------------------------------------- */

typedef struct dj_http {
    dj_write *w;
    int failed;
    ncmp_err err;
} dj_http;

static void http_done(dj_write *w, int status, ncmp_buf *body, void *opaque)
{
    ncmp_http_request *req = opaque;

    ncmp_http_respond_json(req, status, body);
    dj_free(w);
}

static void *http_open(ncmp_http_request *req, void *arg)
{
    data *d = arg;
    dj_http *h;

    h = ncmp_xcalloc(1, sizeof(*h));
    h->w = dj_new(d, ncmp_http_param(req, "dataJobId"), ncmp_http_header(req, "Authorization"),
                  http_done, req);
    return h;
}

static int http_chunk(void *state, const char *bytes, size_t len)
{
    dj_http *h = state;

    if (datajob_scan_feed(h->w->scan, bytes, len, &h->err) != 0) {
        h->failed = 1;
        return -1;
    }
    return 0;
}

static void http_finish(void *state, ncmp_http_request *req, int too_large)
{
    dj_http *h = state;
    dj_write *w = h->w;
    ncmp_err err = h->err;
    int failed = h->failed;

    if (!too_large && !failed && datajob_scan_end(w->scan, &err) != 0)
        failed = 1;
    free(h);
    ncmp_http_suspend(req);
    dj_finish(w, too_large, &err, failed);
}

static void http_discard(void *state)
{
    dj_http *h = state;
    dj_free(h->w);
    free(h);
}

static const ncmp_http_sink write_sink = {http_open, http_chunk, http_finish, http_discard};

/* --- read jobs: NCMP's classification of selectors ------------------------- */

typedef struct dj_read {
    json_object *broadcast, *dmi, *not_ready, *errors;
    const char *selector;
    int added;
} dj_read;

static void read_add_handle(const handle_info *h, void *arg)
{
    dj_read *r = arg;
    json_object *per_dmi, *list;

    r->added = 1;
    if (h->state != NCMP_STATE_READY) {
        json_object_array_add(r->not_ready, json_object_new_string(r->selector));
        return;
    }
    if (!json_object_object_get_ex(r->dmi, h->datajobs_read, &per_dmi)) {
        per_dmi = json_object_new_object();
        json_object_object_add(r->dmi, h->datajobs_read, per_dmi);
    }
    if (!json_object_object_get_ex(per_dmi, h->data_producer, &list)) {
        list = json_object_new_array();
        json_object_object_add(per_dmi, h->data_producer, list);
    }
    json_object_array_add(list, json_object_new_string(r->selector));
}

/* ManagedElement[contains(id,"x")] or MeContext[...]: "ManagedElement=x". */
static char *contains_term(const char *sel)
{
    static const char *const names[] = {"ManagedElement", "MeContext"};

    for (const char *p = sel; *p; p++)
        for (size_t k = 0; k < 2; k++) {
            size_t n = strlen(names[k]);
            const char *q = p + n, *v, *e;
            if (strncmp(p, names[k], n) != 0 || strncmp(q, "[contains(id,", 13) != 0)
                continue;
            v = q + 13;
            while (*v == ' ' || *v == '\t')
                v++;
            if (*v != '"' || !(e = strchr(v + 1, '"')) || strncmp(e, "\")]", 3) != 0)
                continue;
            {
                ncmp_buf t = NCMP_BUF_INIT;
                ncmp_buf_appendf(&t, "%s=%.*s", names[k], (int)(e - v - 1), v + 1);
                return t.data;
            }
        }
    return NULL;
}

static int is_broadcast(const char *sel)
{
    static const char *const specific[] = {"ManagedElement[id=", "ManagedElement[contains(id,",
                                           "MeContext[id=", "MeContext[contains(id,"};

    if (strstr(sel, "//"))
        return 1;
    for (size_t i = 0; i < 4; i++)
        if (strstr(sel, specific[i]))
            return 0;
    return 1;
}

static void read_classify(data *d, dj_read *r, const char *sel)
{
    char *term, *fdn;

    r->selector = sel;
    r->added = 0;
    if (is_broadcast(sel)) {
        json_object_array_add(r->broadcast, json_object_new_string(sel));
        return;
    }
    if ((term = contains_term(sel)) != NULL) {
        handle_cache_containing(data_cache(d), term, read_add_handle, r);
        free(term);
        if (!r->added)
            json_object_array_add(r->errors, json_object_new_string(sel));
        return;
    }
    fdn = datajob_fdn_prefix(sel);
    if (*fdn) {
        handle_info h = {0};
        int found = 0;
        ncmp_err err;
        if (data_resolve_longest(d, fdn, &h, &found, &err) == 0 && found) {
            read_add_handle(&h, r);
            handle_info_free(&h);
        }
    }
    if (!r->added)
        json_object_array_add(r->errors, json_object_new_string(sel));
    free(fdn);
}

/* POST /do-not-use/dataJobs/read */
static void h_read(ncmp_http_request *req, void *arg)
{
    data *d = arg;
    size_t len, n;
    const char *body = ncmp_http_body(req, &len);
    json_object *doc = NULL, *props, *out;
    const char *selector;
    char **sels;
    dj_read r;
    ncmp_err err;
    ncmp_buf b = NCMP_BUF_INIT;

    if (ncmp_json_parse(body, len, &doc, &err) != 0 ||
        !json_object_is_type(doc, json_type_object)) {
        ncmp_http_respond_error(req, 400, "Invalid data job",
                                doc ? "a JSON object is expected" : err.msg);
        json_object_put(doc);
        return;
    }
    if (!json_object_object_get_ex(doc, "readProperties", &props) ||
        !json_object_is_type(props, json_type_object) ||
        ncmp_json_string_field(props, "dataNodeSelector", &selector, &err) != 0 || !selector) {
        ncmp_http_respond_error(req, 400, "Invalid data job",
                                "readProperties.dataNodeSelector (a string) is required");
        json_object_put(doc);
        return;
    }
    r.broadcast = json_object_new_array();
    r.dmi = json_object_new_object();
    r.not_ready = json_object_new_array();
    r.errors = json_object_new_array();
    sels = datajob_selectors(selector, &n);
    for (size_t i = 0; i < n; i++)
        read_classify(d, &r, sels[i]);
    out = json_object_new_object();
    json_object_object_add(out, "broadcastSelectors", r.broadcast);
    json_object_object_add(out, "dmiSelectors", r.dmi);
    json_object_object_add(out, "notReadySelectors", r.not_ready);
    json_object_object_add(out, "errorSelectors", r.errors);
    ncmp_buf_append_str(&b, json_object_to_json_string_ext(
                                out, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    ncmp_http_respond_json(req, 200, &b);
    ncmp_buf_free(&b);
    json_object_put(out);
    json_object_put(doc);
    datajob_strings_free(sels, n);
}

/* --- status and result, forwarded ---------------------------------------------- */

static void fwd_done(ncmp_dmi_response *r, void *opaque)
{
    ncmp_http_request *req = opaque;

    if (r->status >= 200 && r->status < 300) {
        ncmp_http_respond(req, 200, r->content_type ? r->content_type : "application/json",
                          r->body.data ? r->body.data : "", r->body.len);
    } else {
        data_answer_dmi_error(req, r);
    }
    ncmp_dmi_response_destroy(r);
}

/* GET .../{dataJobId}/status and .../result */
static void h_status_or_result(ncmp_http_request *req, int result, data *d)
{
    const char *dmi = ncmp_http_query(req, "dmiServiceName");
    const char *producer = ncmp_http_query(req, "dataProducerId");
    const char *job = ncmp_http_query(req, "dataProducerJobId");
    const char *dest = ncmp_http_query(req, "destination");
    const char *auth = ncmp_http_header(req, "Authorization");
    ncmp_buf url = NCMP_BUF_INIT, hdr = NCMP_BUF_INIT;
    const char *headers[2] = {NULL, NULL};
    ncmp_dmi_request dr = {0};
    ncmp_err err;

    if (!dmi || !*dmi || !producer || !*producer || !job || !*job) {
        ncmp_http_respond_error(req, 400, "Required parameters missing",
                                "dmiServiceName, dataProducerId and dataProducerJobId");
        return;
    }
    if (!handle_cache_serves_datajobs(data_cache(d), dmi)) {
        ncmp_http_respond_error(req, 404, "Unknown DMI service",
                                "no handle has this data-job service");
        return;
    }
    ncmp_dmi_url_base(&url, dmi);
    ncmp_buf_append_str(&url, "/dmi/v1/cmwriteJob/dataProducer/");
    ncmp_dmi_url_encode(&url, producer);
    ncmp_buf_append_str(&url, "/dataProducerJob/");
    ncmp_dmi_url_encode(&url, job);
    ncmp_buf_append_str(&url, result ? "/result" : "/status");
    if (result && dest && *dest) {
        ncmp_buf_append_str(&url, "?destination=");
        ncmp_dmi_url_encode(&url, dest);
    }
    if (auth) {
        ncmp_buf_appendf(&hdr, "Authorization: %s", auth);
        headers[0] = hdr.data;
    }
    dr.method = "GET";
    dr.url = url.data;
    dr.headers = headers;
    ncmp_http_suspend(req);
    if (data_submit(d, &dr, fwd_done, req, &err) != 0)
        ncmp_http_respond_error(req, 503, "DMI call not started", err.msg);
    ncmp_buf_free(&url);
    ncmp_buf_free(&hdr);
}

static void h_status(ncmp_http_request *req, void *arg)
{
    h_status_or_result(req, 0, arg);
}

static void h_result(ncmp_http_request *req, void *arg)
{
    h_status_or_result(req, 1, arg);
}

/* --- write jobs from Kafka ------------------------------------------------------- */

typedef struct dj_kafka {
    datajob *j;
} dj_kafka;

/* The outcome on datajob.response-topic, keyed by the job id:
 * {"dataJobId":..,"status":<http status>,"subJobs":[..]} or, refused,
 * {"dataJobId":..,"status":..,"error":<NCMP's error body>}. */
static void kafka_done(dj_write *w, int status, ncmp_buf *body, void *opaque)
{
    datajob *j = opaque;
    ncmp_buf v = NCMP_BUF_INIT;
    const ncmp_cloudevent ce = {.source = "NCMP",
                                .type = RESULT_TYPE,
                                .correlation_id = w->job_id,
                                .destination = j->cfg->datajob_response_topic,
                                .content_type = "application/json"};
    rd_kafka_headers_t *h = ncmp_cloudevent_headers(&ce);
    ncmp_err err;

    ncmp_buf_append_str(&v, "{\"dataJobId\":");
    ncmp_buf_append_json_string(&v, w->job_id);
    ncmp_buf_appendf(&v, ",\"status\":%d,\"%s\":", status,
                     status == 200 || status == 502 ? "subJobs" : "error");
    ncmp_buf_append(&v, body->data, body->len);
    ncmp_buf_append_char(&v, '}');
    if (ncmp_producer_send(j->producer, NULL, j->cfg->datajob_response_topic, RD_KAFKA_PARTITION_UA,
                           w->job_id, strlen(w->job_id), v.data, v.len, h, &err) != 0)
        log_error("datajob", "job %s: result to %s lost: %s", w->job_id,
                  j->cfg->datajob_response_topic, err.msg);
    rd_kafka_poll(ncmp_producer_rk(j->producer), 0);
    ncmp_buf_free(&v);
    dj_free(w);
}

/* One record of the request topic (a pump worker's thread): a job to
 * split and send, or a dead letter with the reason. */
static ncmp_pump_verdict request_record(void *arg, const rd_kafka_message_t *m,
                                        const rd_kafka_headers_t *headers, ncmp_pump_route *r)
{
    datajob *j = arg;
    char job_id[256];
    dj_write *w;
    ncmp_err err;

    (void)headers;
    if (!ncmp_kafka_header(m, "ce_id", job_id, sizeof(job_id)) || !*job_id) {
        snprintf(r->reason, sizeof(r->reason), "no ce_id header (the data job id)");
        return NCMP_PUMP_REJECT;
    }
    w = dj_new(j->d, job_id, NULL, kafka_done, j);
    if (datajob_scan_feed(w->scan, m->payload ? m->payload : "", m->payload ? m->len : 0, &err) !=
            0 ||
        datajob_scan_end(w->scan, &err) != 0) {
        snprintf(r->reason, sizeof(r->reason), "%s", err.msg);
        dj_free(w);
        return NCMP_PUMP_REJECT;
    }
    dj_finish(w, 0, &err, 0);
    return NCMP_PUMP_DONE;
}

static int requests_start(datajob *j, ncmp_err *err)
{
    const char *topics[3] = {j->cfg->datajob_request_topic, NULL, j->cfg->datajob_response_topic};
    char dlq[300];
    ncmp_kafka_opts kopts;

    if (!*j->cfg->datajob_request_topic)
        return 0;
    ncmp_dlq_topic(dlq, sizeof(dlq), topics[0]);
    topics[1] = dlq;
    ncmp_kafka_opts_from_config(&kopts, j->cfg);
    if (ncmp_kafka_create_topics(&kopts, topics, 3, j->cfg->kafka_topic_partitions, 30000, err) !=
        0)
        return ncmp_err_prefix(err, "data jobs: request topic %s", topics[0]);
    j->role = (ncmp_pump_role){.name = "datajob-requests",
                               .dlq_role = "rest",
                               .input = j->cfg->datajob_request_topic,
                               .workers = 1,
                               .batch_size = 10,
                               .batch_wait_ms = 20,
                               .handle = request_record,
                               .arg = j};
    if (ncmp_pump_start(&j->requests, j->cfg, &j->role, err) != 0)
        return ncmp_err_prefix(err, "data jobs: request topic %s", topics[0]);
    return 0;
}

/* --- start and stop --------------------------------------------------------------- */

int datajob_start(datajob **out, data *d, const ncmp_services *svc, ncmp_http_server *srv,
                  ncmp_err *err)
{
    datajob *j = ncmp_xcalloc(1, sizeof(*j));

    j->d = d;
    j->cfg = svc->cfg;
    j->producer = svc->producer;
    if (requests_start(j, err) != 0) {
        free(j);
        return -1;
    }
    ncmp_http_route_sink(srv, "POST", "/do-not-use/dataJobs/{dataJobId}/write",
                         (size_t)j->cfg->datajob_max_body_bytes, &write_sink, d);
    ncmp_http_route(srv, "POST", "/do-not-use/dataJobs/read", h_read, d);
    ncmp_http_route(srv, "GET", "/do-not-use/dataJobs/{dataJobId}/status", h_status, d);
    ncmp_http_route(srv, "GET", "/do-not-use/dataJobs/{dataJobId}/result", h_result, d);
    *out = j;
    return 0;
}

void datajob_stop(datajob *j)
{
    if (!j)
        return;
    if (j->requests) {
        ncmp_err ignore;
        ncmp_pump_stop(j->requests);
        ncmp_pump_join(j->requests, &ignore);
        ncmp_pump_destroy(j->requests);
    }
    free(j);
}
