#include "cps_schema.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_sha256.h"

/* Unpacked size limit of one upload: a zip bomb is refused, not inflated. */
#define MAX_UNPACKED (64u * 1024 * 1024)

/* The lock of module sync's orphan cleanup (workers/modsync.c). */
#define CLEANUP_LOCK "ncmp-module-cleanup"

/* --- sources of an upload ------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Take over `text` (NUL-terminated) as one more source, named from it. */
static int add_source(cps_sources *s, char *text, const char *file, ncmp_err *err)
{
    char *name = NULL, *revision = NULL;
    ncmp_yang_source *src;

    if (strlen(text) == 0 || ncmp_yang_source_name(text, &name, &revision, err) != 0) {
        free(text);
        if (err->cls == NCMP_ERR_NONE)
            ncmp_err_set(err, NCMP_ERR_REJECT, "empty file");
        return ncmp_err_prefix(err, "%s", file);
    }
    s->src = ncmp_xrealloc(s->src, (s->n + 1) * sizeof(*s->src));
    src = &s->src[s->n++];
    memset(src, 0, sizeof(*src));
    src->name = name;
    src->revision = revision;
    src->source = text;
    return 0;
}

static int sources_from_zip(const char *data, size_t len, cps_sources *s, ncmp_err *err)
{
    zip_error_t ze;
    zip_source_t *zs;
    zip_t *za = NULL;
    zip_int64_t entries;
    size_t unpacked = 0;
    int rc = -1;

    zip_error_init(&ze);
    zs = zip_source_buffer_create(data, len, 0, &ze);
    if (zs)
        za = zip_open_from_source(zs, ZIP_RDONLY, &ze);
    if (!za) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "not a valid zip archive: %s", zip_error_strerror(&ze));
        zip_source_free(zs);
        goto cleanup;
    }
    entries = zip_get_num_entries(za, 0);
    for (zip_int64_t i = 0; i < entries; i++) {
        zip_stat_t st;
        zip_file_t *zf;
        char *text;
        zip_int64_t got;

        if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
            !(st.valid & ZIP_STAT_SIZE) || !ends_with(st.name, ".yang"))
            continue;
        if (st.size > MAX_UNPACKED - unpacked) {
            ncmp_err_set(err, NCMP_ERR_REJECT, "the archive unpacks to more than %u bytes",
                         MAX_UNPACKED);
            goto cleanup;
        }
        unpacked += st.size;
        zf = zip_fopen_index(za, (zip_uint64_t)i, 0);
        if (!zf) {
            ncmp_err_set(err, NCMP_ERR_REJECT, "%s: cannot be read from the archive: %s", st.name,
                         zip_strerror(za));
            goto cleanup;
        }
        text = ncmp_xmalloc(st.size + 1);
        got = zip_fread(zf, text, st.size);
        zip_fclose(zf);
        if (got < 0 || (zip_uint64_t)got != st.size) {
            free(text);
            ncmp_err_set(err, NCMP_ERR_REJECT, "%s: cannot be read from the archive", st.name);
            goto cleanup;
        }
        text[st.size] = '\0';
        if (add_source(s, text, st.name, err) != 0)
            goto cleanup;
    }
    if (s->n == 0) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "the archive holds no .yang file");
        goto cleanup;
    }
    rc = 0;
cleanup:
    if (za)
        zip_discard(za);
    return rc;
}

int cps_sources_from_upload(const char *filename, const char *data, size_t len, cps_sources *out,
                            ncmp_err *err)
{
    cps_sources s = {0};
    int zip = filename ? ends_with(filename, ".zip") : len >= 4 && memcmp(data, "PK\3\4", 4) == 0;
    int rc;

    if (filename && !zip && !ends_with(filename, ".yang"))
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "unsupported file type %s: expected a .yang file or a .zip of them",
                            filename);
    if (!zip && memchr(data, '\0', len))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s is not a text file",
                            filename ? filename : "the upload");
    if (zip) {
        rc = sources_from_zip(data, len, &s, err);
    } else {
        char *text = ncmp_xmalloc(len + 1);
        memcpy(text, data, len);
        text[len] = '\0';
        rc = add_source(&s, text, filename ? filename : "file", err);
    }
    if (rc != 0) {
        cps_sources_free(&s);
        return -1;
    }
    *out = s;
    return 0;
}

void cps_sources_free(cps_sources *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free((char *)s->src[i].name);
        free((char *)s->src[i].revision);
        free((char *)s->src[i].source);
        free(s->src[i].namespace_);
    }
    free(s->src);
    s->src = NULL;
    s->n = 0;
}

/* --- storing a set -------------------------------------------------------- */

static const char SQL_LOCK[] =
    "SELECT pg_advisory_xact_lock_shared(hashtextextended('" CLEANUP_LOCK "', 0))";

static const char SQL_NEW_SET[] = "INSERT INTO schema_set (dataspace_id, name) VALUES ($1, $2)"
                                  " ON CONFLICT DO NOTHING RETURNING id";

/* $1: [{checksum, module_name, revision, namespace, source}] */
static const char SQL_SOURCES[] =
    "WITH x AS (SELECT * FROM jsonb_to_recordset($2::jsonb)"
    " AS x(checksum text, module_name text, revision text, namespace text, source text)),"
    " stored AS (INSERT INTO yang_resource (checksum, module_name, revision, namespace, source)"
    " SELECT DISTINCT ON (checksum) checksum, module_name, revision, namespace, source FROM x"
    " ORDER BY checksum ON CONFLICT (checksum) DO NOTHING)"
    " INSERT INTO schema_set_member (schema_set_id, checksum, module_name, revision)"
    " SELECT DISTINCT $1::bigint, checksum, module_name, revision FROM x ON CONFLICT DO NOTHING";

int cps_schema_store(ncmp_db *db, const char *dataspace_id, const char *name, const cps_sources *s,
                     int *created, ncmp_err *err)
{
    PGresult *res = NULL;
    ncmp_buf json = NCMP_BUF_INIT;
    const char *params[2] = {dataspace_id, name};
    char set_id[32];
    int rc = -1;

    if (ncmp_db_query(db, SQL_LOCK, 0, NULL, NULL, err) != 0 ||
        ncmp_db_query(db, SQL_NEW_SET, 2, params, &res, err) != 0)
        goto cleanup;
    if (PQntuples(res) == 0) {
        *created = 0;
        rc = 0;
        goto cleanup;
    }
    snprintf(set_id, sizeof(set_id), "%s", PQgetvalue(res, 0, 0));
    ncmp_buf_append_char(&json, '[');
    for (size_t i = 0; i < s->n; i++) {
        char checksum[65];
        ncmp_sha256_hex(s->src[i].source, strlen(s->src[i].source), checksum);
        ncmp_buf_appendf(&json, "%s{\"checksum\":\"%s\",\"module_name\":", i ? "," : "", checksum);
        ncmp_buf_append_json_string(&json, s->src[i].name);
        ncmp_buf_append_str(&json, ",\"revision\":");
        ncmp_buf_append_json_string(&json, s->src[i].revision);
        ncmp_buf_append_str(&json, ",\"namespace\":");
        ncmp_buf_append_json_string(&json, s->src[i].namespace_ ? s->src[i].namespace_ : "");
        ncmp_buf_append_str(&json, ",\"source\":");
        ncmp_buf_append_json_string(&json, s->src[i].source);
        ncmp_buf_append_char(&json, '}');
    }
    ncmp_buf_append_char(&json, ']');
    params[0] = set_id;
    params[1] = json.data;
    if (ncmp_db_query(db, SQL_SOURCES, 2, params, NULL, err) != 0)
        goto cleanup;
    *created = 1;
    rc = 0;
cleanup:
    PQclear(res);
    ncmp_buf_free(&json);
    return rc;
}

/* --- the cache of compiled sets ------------------------------------------- */

struct cps_schema {
    char id[32];
    struct ly_ctx *ctx;
    atomic_int refs; /* the cache's (while listed) and the holders' */
    cps_schema *next;
};

struct cps_schema_cache {
    pthread_mutex_t lock;
    cps_schema *head;
};

cps_schema_cache *cps_schema_cache_new(void)
{
    cps_schema_cache *c = ncmp_xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void schema_free(cps_schema *s)
{
    ly_ctx_destroy(s->ctx);
    free(s);
}

void cps_schema_cache_destroy(cps_schema_cache *c)
{
    if (!c)
        return;
    while (c->head) {
        cps_schema *s = c->head;
        c->head = s->next;
        cps_schema_release(s);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static const char SQL_SET_SOURCES[] =
    "SELECT m.module_name, m.revision, y.source FROM schema_set_member m"
    " JOIN yang_resource y ON y.checksum = m.checksum WHERE m.schema_set_id = $1::bigint"
    " ORDER BY m.module_name, m.revision";

static int schema_load(ncmp_db *db, const char *id, struct ly_ctx **ctx, ncmp_err *err)
{
    PGresult *res = NULL;
    ncmp_yang_source *src = NULL;
    const char *params[1] = {id};
    int n, rc = -1;

    if (ncmp_db_query(db, SQL_SET_SOURCES, 1, params, &res, err) != 0)
        return -1;
    n = PQntuples(res);
    src = ncmp_xcalloc((size_t)n + 1, sizeof(*src));
    for (int i = 0; i < n; i++) {
        src[i].name = PQgetvalue(res, i, 0);
        src[i].revision = PQgetvalue(res, i, 1);
        src[i].source = PQgetvalue(res, i, 2);
    }
    if (ncmp_yang_ctx_from_set(src, (size_t)n, NULL, NULL, 1, ctx, err) != 0) {
        ncmp_err_prefix(err, "schema set %s", id);
        goto cleanup;
    }
    rc = 0;
cleanup:
    ncmp_yang_sources_clear(src, (size_t)n);
    free(src);
    PQclear(res);
    return rc;
}

int cps_schema_get(cps_schema_cache *c, ncmp_db *db, const char *id, cps_schema **out,
                   ncmp_err *err)
{
    cps_schema *s;
    struct ly_ctx *ctx = NULL;

    pthread_mutex_lock(&c->lock);
    for (s = c->head; s; s = s->next)
        if (strcmp(s->id, id) == 0) {
            atomic_fetch_add(&s->refs, 1);
            pthread_mutex_unlock(&c->lock);
            *out = s;
            return 0;
        }
    pthread_mutex_unlock(&c->lock);
    /* compiled outside the lock (a large set takes a while); two threads
     * may compile the same set at once, the second one's is dropped */
    if (schema_load(db, id, &ctx, err) != 0)
        return -1;
    pthread_mutex_lock(&c->lock);
    for (s = c->head; s; s = s->next)
        if (strcmp(s->id, id) == 0)
            break;
    if (s) {
        ly_ctx_destroy(ctx);
    } else {
        s = ncmp_xcalloc(1, sizeof(*s));
        snprintf(s->id, sizeof(s->id), "%s", id);
        s->ctx = ctx;
        atomic_init(&s->refs, 1); /* the cache's */
        s->next = c->head;
        c->head = s;
    }
    atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&c->lock);
    *out = s;
    return 0;
}

const char *cps_schema_set_id(const cps_schema *s)
{
    return s->id;
}

const struct ly_ctx *cps_schema_ctx(const cps_schema *s)
{
    return s->ctx;
}

cps_schema *cps_schema_ref(cps_schema *s)
{
    if (s)
        atomic_fetch_add(&s->refs, 1);
    return s;
}

void cps_schema_release(cps_schema *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1)
        schema_free(s);
}

void cps_schema_forget(cps_schema_cache *c, const char *id)
{
    cps_schema **p, *gone = NULL;

    pthread_mutex_lock(&c->lock);
    for (p = &c->head; *p; p = &(*p)->next)
        if (strcmp((*p)->id, id) == 0) {
            gone = *p;
            *p = gone->next;
            break;
        }
    pthread_mutex_unlock(&c->lock);
    cps_schema_release(gone); /* the cache's reference; holders keep theirs */
}
