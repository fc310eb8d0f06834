#include "ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_json.h"
#include "ncmp_log.h"

typedef struct ingest_worker {
    ncmp_buf copy; /* COPY text of the batch, reused */
} ingest_worker;

static int ingest_init(void *arg, ncmp_stage_ctx *ctx, void **state, ncmp_err *err)
{
    ingest_worker *w = ncmp_xcalloc(1, sizeof(*w));
    *state = w;
    return 0;
}

static void ingest_fini(void *state)
{
    ingest_worker *w = state;
    if (!w)
        return;
    ncmp_buf_free(&w->copy);
    free(w);
}

/* Every record must be a JSON object; anything else is dead-lettered. The
 * good ones go to the table in one COPY. */
static int ingest_apply(void *state, ncmp_stage_ctx *ctx, rd_kafka_message_t **msgs, size_t n,
                        ncmp_err *err)
{
    ingest_worker *w = state;
    size_t rows = 0;

    ncmp_buf_reset(&w->copy);
    for (size_t i = 0; i < n; i++) {
        rd_kafka_message_t *m = msgs[i];
        json_object *obj = NULL;
        ncmp_err perr = {NCMP_ERR_NONE, ""};
        const char *text;

        if (m->len > (size_t)ctx->cfg->kafka_max_message_bytes) {
            char reason[128];
            snprintf(reason, sizeof(reason), "record of %zu bytes exceeds %d", m->len,
                     ctx->cfg->kafka_max_message_bytes);
            if (ncmp_stage_reject(ctx, m, reason, err) != 0)
                return -1;
            continue;
        }
        if (ncmp_json_parse(m->payload, m->len, &obj, &perr) != 0 ||
            !json_object_is_type(obj, json_type_object)) {
            if (perr.cls == NCMP_ERR_NONE)
                ncmp_err_set(&perr, NCMP_ERR_REJECT, "event must be a JSON object, not %s",
                             json_type_to_name(json_object_get_type(obj)));
            json_object_put(obj);
            if (ncmp_stage_reject(ctx, m, perr.msg, err) != 0)
                return -1;
            continue;
        }
        text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
        ncmp_buf_append_copy_field(&w->copy, rd_kafka_topic_name(m->rkt),
                                   strlen(rd_kafka_topic_name(m->rkt)));
        ncmp_buf_appendf(&w->copy, "\t%d\t%lld\t", m->partition, (long long)m->offset);
        ncmp_buf_append_copy_field(&w->copy, m->key, m->key ? m->key_len : 0);
        ncmp_buf_append_char(&w->copy, '\t');
        ncmp_buf_append_copy_field(&w->copy, text, strlen(text));
        ncmp_buf_append_char(&w->copy, '\n');
        json_object_put(obj);
        rows++;
    }
    if (!rows)
        return 0;
    if (ncmp_db_copy(ctx->db,
                     "COPY ingest_event (topic, partition, \"offset\", event_key, body) FROM STDIN",
                     w->copy.data, w->copy.len, err) != 0)
        return -1;
    log_debug("ingest", "stored %zu of %zu records", rows, n);
    return 0;
}

const ncmp_stage_ops ingest_stage = {NULL, ingest_init, ingest_apply, ingest_fini};
