#include "modsync_queue.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_json.h"
#include "ncmp_pgarray.h"

void modsync_queue_add(modsync_queue *q, const char *tag, const char *id)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 256;
        q->pairs = ncmp_xrealloc(q->pairs, q->cap * sizeof(*q->pairs));
    }
    q->pairs[q->n].tag = ncmp_xstrdup(tag ? tag : "");
    q->pairs[q->n].id = ncmp_xstrdup(id);
    q->n++;
}

void modsync_queue_reset(modsync_queue *q)
{
    for (size_t i = 0; i < q->n; i++) {
        free(q->pairs[i].tag);
        free(q->pairs[i].id);
    }
    q->n = 0;
}

void modsync_queue_free(modsync_queue *q)
{
    modsync_queue_reset(q);
    free(q->pairs);
    q->pairs = NULL;
    q->cap = 0;
}

int modsync_barrier_slot(const char *tag)
{
    /* FNV-1a: fixed, unlike a hash of the C library or of PostgreSQL's
     * version */
    uint32_t h = 2166136261u;

    for (const unsigned char *c = (const unsigned char *)tag; *c; c++)
        h = (h ^ *c) * 16777619u;
    return (int)(h % MODSYNC_BARRIER_SLOTS);
}

void modsync_queue_slots(const modsync_queue *q, ncmp_buf *out)
{
    unsigned char seen[MODSYNC_BARRIER_SLOTS] = {0};

    for (size_t i = 0; i < q->n; i++)
        seen[modsync_barrier_slot(q->pairs[i].tag)] = 1;
    ncmp_pgarray_begin(out);
    for (int s = 0; s < MODSYNC_BARRIER_SLOTS; s++)
        if (seen[s])
            ncmp_pgarray_add_int(out, s);
    ncmp_pgarray_end(out);
}

static int pair_cmp(const void *a, const void *b)
{
    const modsync_pair *x = a, *y = b;
    return strcmp(x->tag, y->tag);
}

static int send_one(ncmp_producer *p, ncmp_delivery *d, const char *topic, const char *key,
                    const char *tag, modsync_pair *ids, size_t n, int retry, ncmp_buf *b,
                    ncmp_err *err)
{
    ncmp_buf_reset(b);
    ncmp_buf_append_str(b, "{\"moduleSetTag\":");
    ncmp_buf_append_json_string(b, tag);
    ncmp_buf_append_str(b, ",\"cmHandles\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            ncmp_buf_append_char(b, ',');
        ncmp_buf_append_json_string(b, ids[i].id);
    }
    ncmp_buf_append_str(b, retry ? "],\"retry\":true}" : "]}");
    return ncmp_producer_send(p, d, topic, RD_KAFKA_PARTITION_UA, key, strlen(key), b->data, b->len,
                              NULL, err);
}

int modsync_queue_send(modsync_queue *q, ncmp_producer *p, ncmp_delivery *d, const char *topic,
                       ncmp_err *err)
{
    ncmp_buf b = NCMP_BUF_INIT;
    size_t i = 0;
    int rc = 0;

    if (!q->n)
        return 0;
    /* stable enough: ids of one tag keep no particular order */
    qsort(q->pairs, q->n, sizeof(*q->pairs), pair_cmp);
    while (i < q->n && rc == 0) {
        const char *tag = q->pairs[i].tag;
        size_t j = i;
        if (!*tag) { /* untagged: its own set, its own key */
            rc = send_one(p, d, topic, q->pairs[i].id, "", &q->pairs[i], 1, q->retry, &b, err);
            i++;
            continue;
        }
        while (j < q->n && j - i < MODSYNC_QUEUE_CHUNK && strcmp(q->pairs[j].tag, tag) == 0)
            j++;
        rc = send_one(p, d, topic, tag, tag, &q->pairs[i], j - i, q->retry, &b, err);
        i = j;
    }
    ncmp_buf_free(&b);
    modsync_queue_reset(q);
    return rc;
}

int modsync_record_decode(const void *payload, size_t len, json_object **root, const char **tag,
                          const char ***ids, size_t *nids, int *retry, ncmp_err *err)
{
    json_object *arr, *r;
    size_t n;

    *root = NULL;
    *ids = NULL;
    *nids = 0;
    if (ncmp_json_parse((const char *)payload, len, root, err) != 0)
        return -1;
    if (!*root || !json_object_is_type(*root, json_type_object)) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "module-sync record: not a JSON object");
        goto bad;
    }
    *tag = NULL;
    if (ncmp_json_string_field(*root, "moduleSetTag", tag, err) != 0 ||
        ncmp_json_array_field(*root, "cmHandles", &arr, err) != 0)
        goto bad;
    if (!arr) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "module-sync record: no cmHandles");
        goto bad;
    }
    if (!*tag)
        *tag = "";
    *retry = json_object_object_get_ex(*root, "retry", &r) && json_object_get_boolean(r);
    n = json_object_array_length(arr);
    *ids = ncmp_xcalloc(n + 1, sizeof(**ids));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(e, json_type_string) || !json_object_get_string_len(e)) {
            ncmp_err_set(err, NCMP_ERR_REJECT,
                         "module-sync record: cmHandles[%zu] is not a non-empty string", i);
            goto bad;
        }
        (*ids)[i] = json_object_get_string(e);
    }
    *nids = n;
    return 0;
bad:
    free(*ids);
    *ids = NULL;
    json_object_put(*root);
    *root = NULL;
    return -1;
}
