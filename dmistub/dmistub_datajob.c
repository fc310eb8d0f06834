#include "dmistub_datajob.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

/* One operation of "data". */
typedef struct op_ctx {
    size_t index;
    int has_path, has_op;
    ncmp_jtok id;
} op_ctx;

static int wrong_type(ncmp_jscan *sc, size_t i, const char *member, const char *want,
                      ncmp_jkind kind)
{
    return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "data[%zu].%s must be %s, not %s", i, member,
                        want, ncmp_jkind_name(kind));
}

static int op_member(ncmp_jscan *sc, const ncmp_jtok *name, void *ctx)
{
    op_ctx *op = ctx;
    ncmp_jtok tok = {NULL, 0};
    ncmp_jkind kind;

    if (ncmp_jscan_value(sc, &kind, &tok) != 0)
        return -1;
    if (ncmp_jtok_named(name, "path") || ncmp_jtok_named(name, "op")) {
        if (kind != NCMP_J_STRING)
            return wrong_type(sc, op->index, name->p[1] == 'p' ? "path" : "op", "a string", kind);
        *(name->p[1] == 'p' ? &op->has_path : &op->has_op) = 1;
    } else if (ncmp_jtok_named(name, "operationId")) {
        if (kind != NCMP_J_STRING && kind != NCMP_J_INTEGER && kind != NCMP_J_NULL)
            return wrong_type(sc, op->index, "operationId", "a string, an integer or null", kind);
        op->id = kind == NCMP_J_NULL ? (ncmp_jtok){NULL, 0} : tok;
    } else if (ncmp_jtok_named(name, "moduleSetTag") && kind != NCMP_J_STRING &&
               kind != NCMP_J_NULL) {
        return wrong_type(sc, op->index, "moduleSetTag", "a string or null", kind);
    }
    return 0;
}

static int scan_operation(ncmp_jscan *sc, void *ctx)
{
    dmistub_subjob *out = ctx;
    op_ctx op = {out->operations, 0, 0, {NULL, 0}};
    const char *start;

    if (ncmp_jscan_peek(sc) != '{') {
        ncmp_jkind kind;
        ncmp_jtok tok;
        if (ncmp_jscan_value(sc, &kind, &tok) != 0)
            return -1;
        return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "data[%zu] must be an object, not %s",
                            out->operations, ncmp_jkind_name(kind));
    }
    ncmp_jscan_peek(sc);
    start = sc->s + sc->i;
    if (ncmp_jscan_members(sc, op_member, &op) != 0)
        return -1;
    if (out->operations == 0)
        out->first_operation = (ncmp_jtok){start, (size_t)(sc->s + sc->i - start)};
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

static int job_member(ncmp_jscan *sc, const ncmp_jtok *name, void *ctx)
{
    static const char *const strings[] = {"dataProducerId", "dataJobId", "dataAcceptType",
                                          "dataContentType", "destination"};
    job_ctx *job = ctx;
    ncmp_jtok tok = {NULL, 0};
    ncmp_jkind kind;

    if (ncmp_jtok_named(name, "data")) {
        if (ncmp_jscan_peek(sc) != '[')
            return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "data must be an array of operations");
        job->has_data = 1;
        job->out->operations = 0;
        return ncmp_jscan_items(sc, scan_operation, job->out);
    }
    if (ncmp_jscan_value(sc, &kind, &tok) != 0)
        return -1;
    for (size_t k = 0; k < sizeof(strings) / sizeof(strings[0]); k++) {
        if (!ncmp_jtok_named(name, strings[k]))
            continue;
        if (kind != NCMP_J_STRING && kind != NCMP_J_NULL)
            return ncmp_err_set(sc->err, NCMP_ERR_REJECT, "%s must be a string, not %s", strings[k],
                                ncmp_jkind_name(kind));
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
    ncmp_jscan sc;
    job_ctx job = {out, 0};

    ncmp_jscan_init(&sc, body, len, err);
    sc.depth = 3;
    memset(out, 0, sizeof(*out));
    if (ncmp_jscan_peek(&sc) != '{') {
        ncmp_jkind kind;
        ncmp_jtok tok;
        if (ncmp_jscan_value(&sc, &kind, &tok) != 0)
            return -1;
        return ncmp_err_set(err, NCMP_ERR_REJECT, "a sub-job request must be a JSON object, not %s",
                            ncmp_jkind_name(kind));
    }
    if (ncmp_jscan_members(&sc, job_member, &job) != 0)
        return -1;
    if (ncmp_jscan_end(&sc) != 0)
        return -1;
    if (!job.has_data)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data (an array of operations) is required");
    return 0;
}

int dmistub_datajob_failing(const dmistub_subjob *job)
{
    static const char marker[] = "\"" DMISTUB_DATAJOB_FAILING "\"";
    const ncmp_jtok *t = &job->data_producer_id;

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
static void append_token(ncmp_buf *b, const ncmp_jtok *t)
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
    ncmp_buf_append_str(&b, "],\"firstOperation\":");
    if (job->first_operation.p)
        ncmp_buf_append(&b, job->first_operation.p, job->first_operation.n);
    else
        ncmp_buf_append_str(&b, "null");
    ncmp_buf_append_str(&b, ",\"authorization\":");
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
