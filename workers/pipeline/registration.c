#include "registration.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_dmi.h"
#include "ncmp_json.h"
#include "ncmp_lcm.h"
#include "ncmp_log.h"
#include "ncmp_pgarray.h"
#include "modsync_queue.h"
#include "outbox.h"
#include "registration_decode.h"
#include "trust.h"
#include "ncmp_time.h"

#define CODE_NOT_FOUND  "100"
#define TEXT_NOT_FOUND  "cm handle reference(s) not found"
#define CODE_NOT_READY  "101"
#define TEXT_NOT_READY  "cm handle(s) not ready"
#define CODE_EXISTS     "109"
#define TEXT_EXISTS     "cm-handle already exists"
#define CODE_INVALID_ID "110"
#define TEXT_INVALID_ID "cm handle reference has an invalid character(s) in id"

/* --- outcome ------------------------------------------------------------- */

typedef struct reg_outcome {
    ncmp_buf created, updated, removed, upgraded; /* JSON array members */
    size_t ncreated, nupdated, nremoved, nupgraded;
} reg_outcome;

static void outcome_fail(ncmp_buf *list, size_t *n, const char *id, const char *code,
                         const char *text)
{
    if ((*n)++)
        ncmp_buf_append_char(list, ',');
    ncmp_buf_append_str(list, "{\"cmHandle\":");
    ncmp_buf_append_json_string(list, id);
    ncmp_buf_appendf(list, ",\"errorCode\":\"%s\",\"errorText\":", code);
    ncmp_buf_append_json_string(list, text);
    ncmp_buf_append_char(list, '}');
}

static void outcome_reset(reg_outcome *o)
{
    ncmp_buf_reset(&o->created);
    ncmp_buf_reset(&o->updated);
    ncmp_buf_reset(&o->removed);
    ncmp_buf_reset(&o->upgraded);
    o->ncreated = o->nupdated = o->nremoved = o->nupgraded = 0;
}

static void outcome_json(ncmp_buf *out, const reg_outcome *o, const char *error_message)
{
    ncmp_buf_appendf(out,
                     "{\"failedCreatedCmHandles\":[%s],\"failedUpdatedCmHandles\":[%s],"
                     "\"failedRemovedCmHandles\":[%s],\"failedUpgradeCmHandles\":[%s]",
                     o->created.data ? o->created.data : "", o->updated.data ? o->updated.data : "",
                     o->removed.data ? o->removed.data : "",
                     o->upgraded.data ? o->upgraded.data : "");
    if (error_message) {
        ncmp_buf_append_str(out, ",\"status\":400,\"message\":");
        ncmp_buf_append_json_string(out, error_message);
    }
    ncmp_buf_append_char(out, '}');
}

/* --- the worker ---------------------------------------------------------- */

typedef struct reg_worker {
    const ncmp_config *cfg;
    reg_outcome outcome;
    ncmp_outbox outbox;
    modsync_queue handoff; /* new ADVISED and upgrading handles, for module sync */
    ncmp_buf slots;        /* their hand-over barrier slots */
    ncmp_buf a[10];        /* array literals, reused */
    ncmp_buf body;
} reg_worker;

static const char SQL_DELETE[] =
    "DELETE FROM cm_handle h USING unnest($1::text[]) AS v(id) WHERE h.id = v.id "
    "RETURNING h.id, h.state, h.alternate_id, h.module_set_tag, h.data_producer_identifier";

/* New handles go by COPY into a per-connection staging table, then into
 * cm_handle in one statement that skips the taken ones. */
static const char SQL_STAGE_TABLE[] =
    "CREATE TEMP TABLE IF NOT EXISTS reg_create_stage (pos int, id text, alt text, tag text,"
    " dpi text, addl jsonb, pub jsonb, trust text)";

static const char SQL_CREATE[] =
    "INSERT INTO cm_handle (id, alternate_id, module_set_tag, data_producer_identifier,"
    " additional_properties, public_properties, registration_trust_level, dmi_service_name,"
    " dmi_data_service_name, dmi_model_service_name, dmi_datajobs_read_service,"
    " dmi_datajobs_write_service, state, last_update_time, trust_level, effective_trust_level) "
    "SELECT s.id, s.alt, s.tag, s.dpi, s.addl, s.pub, s.trust, $1, $2, $3, $4, $5, 'ADVISED',"
    " now(), s.trust, CASE WHEN d.trust_level = 'NONE' THEN 'NONE' ELSE s.trust END "
    /* the trust of a handle's DMI plugin is that of its DATA service */
    "FROM reg_create_stage s LEFT JOIN dmi_plugin d ON d.name = CASE WHEN $2 <> '' THEN $2"
    " ELSE $1 END "
    /* an id and an alternate id share one namespace, as in NCMP. Each
     * test is one index probe per staged row: OFFSET 0 keeps the planner
     * from making it a hash anti-join, which it prefers for the staging
     * table it has no statistics of and which reads the whole of
     * cm_handle for every request (15-25 ms per 2,000 handles at 40,000
     * stored, and growing with the inventory) */
    "WHERE NOT EXISTS (SELECT 1 FROM cm_handle x WHERE x.id = s.alt OFFSET 0)"
    " AND NOT EXISTS (SELECT 1 FROM cm_handle x WHERE x.alternate_id = s.id OFFSET 0) "
    "ORDER BY s.pos "
    "ON CONFLICT DO NOTHING RETURNING id, effective_trust_level";

static const char SQL_LOCK_FOR_UPDATE[] =
    "SELECT h.id, h.alternate_id, h.data_producer_identifier, h.state, h.module_set_tag "
    "FROM cm_handle h WHERE h.id = ANY($1::text[]) ORDER BY h.id FOR UPDATE";

static const char SQL_TAKEN[] = "SELECT x FROM unnest($1::text[]) AS x "
                                "WHERE EXISTS (SELECT 1 FROM cm_handle h WHERE h.id = x"
                                " OR h.alternate_id = x)";

static const char SQL_UPDATE[] =
    "UPDATE cm_handle h SET"
    " alternate_id = COALESCE(v.alt, h.alternate_id),"
    " data_producer_identifier = COALESCE(v.dpi, h.data_producer_identifier),"
    " additional_properties = (h.additional_properties || v.aset::jsonb)"
    "   - ARRAY(SELECT jsonb_array_elements_text(v.adel::jsonb)),"
    " public_properties = (h.public_properties || v.pset::jsonb)"
    "   - ARRAY(SELECT jsonb_array_elements_text(v.pdel::jsonb)) "
    "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],"
    " $7::text[]) AS v(id, alt, dpi, aset, adel, pset, pdel) "
    "WHERE h.id = v.id";

static const char SQL_LOCK_UPGRADE[] =
    "UPDATE cm_handle h SET state = 'LOCKED', lock_reason = 'MODULE_UPGRADE', lock_details = $2,"
    " upgrade_module_set_tag = $3, last_update_time = now() "
    "WHERE h.id = ANY($1::text[]) "
    "RETURNING h.id, h.alternate_id, h.module_set_tag, h.data_producer_identifier";

static int reg_init(void *arg, ncmp_stage_ctx *ctx, void **state, ncmp_err *err)
{
    reg_worker *w = ncmp_xcalloc(1, sizeof(*w));

    w->cfg = ctx->cfg;
    ncmp_outbox_init(&w->outbox, ctx->db, ctx->cfg);
    *state = w;
    return 0;
}

static void reg_fini(void *state)
{
    reg_worker *w = state;
    if (!w)
        return;
    ncmp_buf_free(&w->outcome.created);
    ncmp_buf_free(&w->outcome.updated);
    ncmp_buf_free(&w->outcome.removed);
    ncmp_buf_free(&w->outcome.upgraded);
    ncmp_outbox_free(&w->outbox);
    modsync_queue_free(&w->handoff);
    ncmp_buf_free(&w->slots);
    for (size_t i = 0; i < sizeof(w->a) / sizeof(w->a[0]); i++)
        ncmp_buf_free(&w->a[i]);
    ncmp_buf_free(&w->body);
    free(w);
}

/* A sorted set of strings for membership tests. */
typedef struct str_index {
    const char **v;
    size_t n, cap;
} str_index;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Build a sorted copy of a set of strings for lookups. */
static void index_build(str_index *ix, const char **v, size_t n)
{
    ix->v = ncmp_xmalloc((n ? n : 1) * sizeof(*ix->v));
    memcpy(ix->v, v, n * sizeof(*v));
    ix->n = n;
    qsort(ix->v, n, sizeof(*ix->v), cmp_str);
}

static int index_has(const str_index *ix, const char *s)
{
    return ix->n && bsearch(&s, ix->v, ix->n, sizeof(*ix->v), cmp_str) != NULL;
}

static void index_free(str_index *ix)
{
    free(ix->v);
    memset(ix, 0, sizeof(*ix));
}

/* Handles the removal section: DELETING then DELETED, the row gone. */
static int apply_removed(reg_worker *w, ncmp_stage_ctx *ctx, reg_request *r, ncmp_err *err)
{
    PGresult *res = NULL;
    const char *params[1];
    const char **valid = ncmp_xcalloc(r->nremoved ? r->nremoved : 1, sizeof(*valid));
    const char **found;
    str_index ix = {0};
    size_t nvalid = 0;
    int rc = -1;

    for (size_t i = 0; i < r->nremoved; i++) {
        if (!registration_id_valid(r->removed[i]))
            outcome_fail(&w->outcome.removed, &w->outcome.nremoved, r->removed[i], CODE_INVALID_ID,
                         TEXT_INVALID_ID);
        else
            valid[nvalid++] = r->removed[i];
    }
    if (!nvalid) {
        free(valid);
        return 0;
    }
    ncmp_pgarray_begin(&w->a[0]);
    for (size_t i = 0; i < nvalid; i++)
        ncmp_pgarray_add_text(&w->a[0], valid[i]);
    ncmp_pgarray_end(&w->a[0]);
    params[0] = w->a[0].data;
    if (ncmp_db_run(ctx->db, "reg_delete", 1, params, &res, err) != 0)
        goto done;
    found = ncmp_xcalloc((size_t)PQntuples(res) + 1, sizeof(*found));
    for (int i = 0; i < PQntuples(res); i++) {
        ncmp_lcm_event ev = {0};
        found[i] = PQgetvalue(res, i, 0);
        ev.cm_handle_id = found[i];
        ev.alternate_id = PQgetvalue(res, i, 2);
        ev.module_set_tag = PQgetvalue(res, i, 3);
        ev.data_producer_identifier = PQgetvalue(res, i, 4);
        ev.old_values.state = ncmp_state_parse(PQgetvalue(res, i, 1));
        ev.old_values.data_sync_enabled = -1;
        ev.new_values.state = NCMP_STATE_DELETING;
        ev.new_values.data_sync_enabled = -1;
        ncmp_outbox_add(&w->outbox, &ev);
        ev.old_values.state = NCMP_STATE_DELETING;
        ev.new_values.state = NCMP_STATE_DELETED;
        ncmp_outbox_add(&w->outbox, &ev);
    }
    index_build(&ix, found, (size_t)PQntuples(res));
    free(found);
    for (size_t i = 0; i < nvalid; i++)
        if (!index_has(&ix, valid[i]))
            outcome_fail(&w->outcome.removed, &w->outcome.nremoved, valid[i], CODE_NOT_FOUND,
                         TEXT_NOT_FOUND);
    rc = 0;
done:
    index_free(&ix);
    PQclear(res);
    free(valid);
    return rc;
}

/* Ids and alternate ids share one namespace, and within one request the
 * first entry to claim a name wins: every later entry claiming it (as id
 * or alternate id) fails with 109. Sorting (name, position) pairs finds
 * them in O(n log n) for requests of any size. */
typedef struct claim {
    const char *name; /* first member: cmp_str compares it */
    size_t pos;
} claim;

static void drop_claimed_twice(reg_worker *w, reg_handle **todo, size_t *ntodo)
{
    claim *c = ncmp_xcalloc(2 * *ntodo + 1, sizeof(*c));
    unsigned char *bad = ncmp_xcalloc(*ntodo + 1, 1);
    size_t nc = 0, kept = 0;

    for (size_t i = 0; i < *ntodo; i++) {
        c[nc].name = todo[i]->id;
        c[nc++].pos = i;
        if (todo[i]->alternate_id && strcmp(todo[i]->alternate_id, todo[i]->id) != 0) {
            c[nc].name = todo[i]->alternate_id;
            c[nc++].pos = i;
        }
    }
    qsort(c, nc, sizeof(*c), cmp_str);
    for (size_t i = 0; i < nc;) {
        size_t j = i, first = c[i].pos;
        while (j < nc && strcmp(c[j].name, c[i].name) == 0) {
            if (c[j].pos < first)
                first = c[j].pos;
            j++;
        }
        for (size_t k = i; k < j; k++)
            if (c[k].pos != first)
                bad[c[k].pos] = 1;
        i = j;
    }
    for (size_t i = 0; i < *ntodo; i++) {
        if (bad[i])
            outcome_fail(&w->outcome.created, &w->outcome.ncreated, todo[i]->id, CODE_EXISTS,
                         TEXT_EXISTS);
        else
            todo[kept++] = todo[i];
    }
    *ntodo = kept;
    free(c);
    free(bad);
}

/* A handle created with effective trust NONE (its own trustLevel NONE, or
 * its DMI plugin down) gets an inventory event with no old value, as NCMP
 * sends for a registration with trustLevel NONE. `res` is the create's
 * RETURNING id, effective_trust_level. */
static int announce_trust(reg_worker *w, ncmp_stage_ctx *ctx, PGresult *res, ncmp_err *err)
{
    if (!*w->cfg->trust_inventory_events_topic)
        return 0;
    for (int i = 0; i < PQntuples(res); i++)
        if (strcmp(PQgetvalue(res, i, 1), TRUST_NONE) == 0 &&
            trust_avc_send(ctx->producer, &ctx->delivery, w->cfg->trust_inventory_events_topic,
                           PQgetvalue(res, i, 0), NULL, TRUST_NONE, err) != 0)
            return -1;
    return 0;
}

static int apply_created(reg_worker *w, ncmp_stage_ctx *ctx, reg_request *r, ncmp_err *err)
{
    PGresult *res = NULL;
    const char *params[5];
    reg_handle **todo = ncmp_xcalloc(r->ncreated + 1, sizeof(*todo));
    size_t ntodo = 0;
    str_index inserted = {0};
    int rc = -1;

    for (size_t i = 0; i < r->ncreated; i++) {
        if (registration_id_valid(r->created[i].id))
            todo[ntodo++] = &r->created[i];
        else
            outcome_fail(&w->outcome.created, &w->outcome.ncreated, r->created[i].id,
                         CODE_INVALID_ID, TEXT_INVALID_ID);
    }
    drop_claimed_twice(w, todo, &ntodo);
    if (!ntodo) {
        rc = 0;
        goto done;
    }
    ncmp_buf_reset(&w->body);
    for (size_t i = 0; i < ntodo; i++) {
        reg_handle *h = todo[i];
        const char *addl = h->additional_set ? h->additional_set : "{}";
        const char *pub = h->public_set ? h->public_set : "{}";
        ncmp_buf_appendf(&w->body, "%zu\t", i);
        ncmp_buf_append_copy_field(&w->body, h->id, strlen(h->id));
        ncmp_buf_append_char(&w->body, '\t');
        ncmp_buf_append_copy_field(&w->body, h->alternate_id,
                                   h->alternate_id ? strlen(h->alternate_id) : 0);
        ncmp_buf_append_char(&w->body, '\t');
        ncmp_buf_append_copy_field(&w->body, h->module_set_tag, strlen(h->module_set_tag));
        ncmp_buf_append_char(&w->body, '\t');
        ncmp_buf_append_copy_field(&w->body, h->data_producer_identifier,
                                   strlen(h->data_producer_identifier));
        ncmp_buf_append_char(&w->body, '\t');
        ncmp_buf_append_copy_field(&w->body, addl, strlen(addl));
        ncmp_buf_append_char(&w->body, '\t');
        ncmp_buf_append_copy_field(&w->body, pub, strlen(pub));
        ncmp_buf_append_str(&w->body, h->trust_level && strcmp(h->trust_level, "NONE") == 0
                                          ? "\tNONE\n"
                                          : "\tCOMPLETE\n");
    }
    params[0] = r->dmi_plugin;
    params[1] = r->dmi_data_plugin;
    params[2] = r->dmi_model_plugin;
    params[3] = r->dmi_datajobs_read_plugin;
    params[4] = r->dmi_datajobs_write_plugin;
    if (ncmp_db_exec(ctx->db, "TRUNCATE reg_create_stage", err) != 0 ||
        ncmp_db_copy(ctx->db,
                     "COPY reg_create_stage (pos, id, alt, tag, dpi, addl, pub, trust) FROM STDIN",
                     w->body.data, w->body.len, err) != 0 ||
        ncmp_db_run(ctx->db, "reg_create", 5, params, &res, err) != 0)
        goto done;
    {
        const char **ids = ncmp_xcalloc((size_t)PQntuples(res) + 1, sizeof(*ids));
        for (int i = 0; i < PQntuples(res); i++)
            ids[i] = PQgetvalue(res, i, 0);
        index_build(&inserted, ids, (size_t)PQntuples(res));
        free(ids);
    }
    if (announce_trust(w, ctx, res, err) != 0)
        goto done;
    for (size_t i = 0; i < ntodo; i++) {
        reg_handle *h = todo[i];
        ncmp_lcm_event ev = {0};
        if (!index_has(&inserted, h->id)) {
            outcome_fail(&w->outcome.created, &w->outcome.ncreated, h->id, CODE_EXISTS,
                         TEXT_EXISTS);
            continue;
        }
        ev.cm_handle_id = h->id;
        ev.alternate_id = h->alternate_id;
        ev.module_set_tag = h->module_set_tag;
        ev.data_producer_identifier = h->data_producer_identifier;
        ev.old_values.data_sync_enabled = -1;
        ev.new_values.state = NCMP_STATE_ADVISED;
        ev.new_values.data_sync_enabled = -1;
        ev.new_values.public_properties_json = h->public_set ? h->public_set : "{}";
        ncmp_outbox_add(&w->outbox, &ev);
        modsync_queue_add(&w->handoff, h->module_set_tag, h->id);
    }
    rc = 0;
done:
    index_free(&inserted);
    PQclear(res);
    free(todo);
    return rc;
}

/* As in NCMP, an update changes the handle's own fields only: the
 * request's DMI services (dmiPlugin ... dmiDatajobsWritePlugin) are those
 * of its creates and leave updated handles as they are. */
static int apply_updated(reg_worker *w, ncmp_stage_ctx *ctx, reg_request *r, ncmp_err *err)
{
    PGresult *cur = NULL, *taken = NULL;
    const char *params[7];
    str_index found = {0}, taken_ix = {0};
    const char **ids;
    const char **claimed_alts = NULL;
    size_t nclaimed = 0;
    int rc = -1, nupd = 0;

    if (!r->nupdated)
        return 0;
    ncmp_pgarray_begin(&w->a[0]);
    for (size_t i = 0; i < r->nupdated; i++)
        if (registration_id_valid(r->updated[i].id))
            ncmp_pgarray_add_text(&w->a[0], r->updated[i].id);
    ncmp_pgarray_end(&w->a[0]);
    params[0] = w->a[0].data;
    if (ncmp_db_run(ctx->db, "reg_lock_for_update", 1, params, &cur, err) != 0)
        goto done;
    ids = ncmp_xcalloc((size_t)PQntuples(cur) + 1, sizeof(*ids));
    for (int i = 0; i < PQntuples(cur); i++)
        ids[i] = PQgetvalue(cur, i, 0);
    index_build(&found, ids, (size_t)PQntuples(cur));
    free(ids);
    /* alternate ids that would be newly set: are they taken? */
    ncmp_pgarray_begin(&w->a[1]);
    for (size_t i = 0; i < r->nupdated; i++)
        if (r->updated[i].alternate_id)
            ncmp_pgarray_add_text(&w->a[1], r->updated[i].alternate_id);
    ncmp_pgarray_end(&w->a[1]);
    params[0] = w->a[1].data;
    if (ncmp_db_run(ctx->db, "reg_taken", 1, params, &taken, err) != 0)
        goto done;
    ids = ncmp_xcalloc((size_t)PQntuples(taken) + 1, sizeof(*ids));
    for (int i = 0; i < PQntuples(taken); i++)
        ids[i] = PQgetvalue(taken, i, 0);
    index_build(&taken_ix, ids, (size_t)PQntuples(taken));
    free(ids);

    claimed_alts = ncmp_xcalloc(r->nupdated, sizeof(*claimed_alts));
    for (int k = 0; k < 7; k++)
        ncmp_pgarray_begin(&w->a[k]);
    for (size_t i = 0; i < r->nupdated; i++) {
        reg_handle *h = &r->updated[i];
        int row = -1;
        const char *cur_alt, *cur_dpi, *set_alt = NULL, *set_dpi = NULL;
        if (!registration_id_valid(h->id)) {
            outcome_fail(&w->outcome.updated, &w->outcome.nupdated, h->id, CODE_INVALID_ID,
                         TEXT_INVALID_ID);
            continue;
        }
        if (!index_has(&found, h->id)) {
            outcome_fail(&w->outcome.updated, &w->outcome.nupdated, h->id, CODE_NOT_FOUND,
                         TEXT_NOT_FOUND);
            continue;
        }
        for (int k = 0; k < PQntuples(cur); k++)
            if (strcmp(PQgetvalue(cur, k, 0), h->id) == 0)
                row = k;
        cur_alt = PQgetisnull(cur, row, 1) ? NULL : PQgetvalue(cur, row, 1);
        cur_dpi = PQgetvalue(cur, row, 2);
        if (h->alternate_id) {
            if (cur_alt && strcmp(cur_alt, h->alternate_id) != 0) {
                /* immutable once set */
                outcome_fail(&w->outcome.updated, &w->outcome.nupdated, h->id, CODE_EXISTS,
                             TEXT_EXISTS);
                continue;
            }
            if (!cur_alt) {
                int claimed = 0;
                /* an earlier entry of this request may have claimed it: first wins */
                for (size_t k = 0; k < nclaimed && !claimed; k++)
                    claimed = strcmp(claimed_alts[k], h->alternate_id) == 0;
                if (claimed || index_has(&taken_ix, h->alternate_id)) {
                    outcome_fail(&w->outcome.updated, &w->outcome.nupdated, h->id, CODE_EXISTS,
                                 TEXT_EXISTS);
                    continue;
                }
                set_alt = h->alternate_id;
                claimed_alts[nclaimed++] = set_alt;
            }
        }
        if (h->has_data_producer_identifier && *h->data_producer_identifier &&
            strcmp(h->data_producer_identifier, cur_dpi) != 0) {
            ncmp_lcm_event ev = {0};
            set_dpi = h->data_producer_identifier;
            ev.cm_handle_id = h->id;
            ev.alternate_id = set_alt ? set_alt : cur_alt;
            ev.module_set_tag = PQgetvalue(cur, row, 4);
            ev.data_producer_identifier = set_dpi;
            ev.old_data_producer_identifier = cur_dpi; /* v2 names the change */
            ev.old_values.data_sync_enabled = -1;
            ev.new_values.data_sync_enabled = -1;
            ev.force_update = 1;
            ncmp_outbox_add(&w->outbox, &ev);
        }
        ncmp_pgarray_add_text(&w->a[0], h->id);
        ncmp_pgarray_add_text(&w->a[1], set_alt);
        ncmp_pgarray_add_text(&w->a[2], set_dpi);
        ncmp_pgarray_add_text(&w->a[3], h->additional_set ? h->additional_set : "{}");
        ncmp_pgarray_add_text(&w->a[4], h->additional_del ? h->additional_del : "[]");
        ncmp_pgarray_add_text(&w->a[5], h->public_set ? h->public_set : "{}");
        ncmp_pgarray_add_text(&w->a[6], h->public_del ? h->public_del : "[]");
        nupd++;
    }
    if (nupd) {
        for (int k = 0; k < 7; k++) {
            ncmp_pgarray_end(&w->a[k]);
            params[k] = w->a[k].data;
        }
        if (ncmp_db_run(ctx->db, "reg_update", 7, params, NULL, err) != 0)
            goto done;
    }
    rc = 0;
done:
    free(claimed_alts);
    index_free(&found);
    index_free(&taken_ix);
    PQclear(cur);
    PQclear(taken);
    return rc;
}

static int apply_upgraded(reg_worker *w, ncmp_stage_ctx *ctx, reg_request *r, ncmp_err *err)
{
    PGresult *cur = NULL, *res = NULL;
    const char *params[3];
    int rc = -1, nlock = 0;
    char details[1024];

    if (!r->nupgraded)
        return 0;
    ncmp_pgarray_begin(&w->a[0]);
    for (size_t i = 0; i < r->nupgraded; i++)
        if (registration_id_valid(r->upgraded[i]))
            ncmp_pgarray_add_text(&w->a[0], r->upgraded[i]);
    ncmp_pgarray_end(&w->a[0]);
    params[0] = w->a[0].data;
    if (ncmp_db_run(ctx->db, "reg_lock_for_update", 1, params, &cur, err) != 0)
        goto done;
    ncmp_pgarray_begin(&w->a[1]);
    for (size_t i = 0; i < r->nupgraded; i++) {
        const char *id = r->upgraded[i];
        int row = -1;
        if (!registration_id_valid(id)) {
            outcome_fail(&w->outcome.upgraded, &w->outcome.nupgraded, id, CODE_INVALID_ID,
                         TEXT_INVALID_ID);
            continue;
        }
        for (int k = 0; k < PQntuples(cur); k++)
            if (strcmp(PQgetvalue(cur, k, 0), id) == 0)
                row = k;
        if (row < 0) {
            outcome_fail(&w->outcome.upgraded, &w->outcome.nupgraded, id, CODE_NOT_FOUND,
                         TEXT_NOT_FOUND);
            continue;
        }
        if (strcmp(PQgetvalue(cur, row, 3), "READY") != 0) {
            outcome_fail(&w->outcome.upgraded, &w->outcome.nupgraded, id, CODE_NOT_READY,
                         TEXT_NOT_READY);
            continue;
        }
        if (*r->upgrade_tag && strcmp(PQgetvalue(cur, row, 4), r->upgrade_tag) == 0)
            continue; /* already on that tag: success, nothing to do */
        ncmp_pgarray_add_text(&w->a[1], id);
        nlock++;
    }
    ncmp_pgarray_end(&w->a[1]);
    if (nlock) {
        snprintf(details, sizeof(details), "Upgrade to ModuleSetTag: %s", r->upgrade_tag);
        params[0] = w->a[1].data;
        params[1] = details;
        params[2] = r->upgrade_tag;
        if (ncmp_db_run(ctx->db, "reg_lock_upgrade", 3, params, &res, err) != 0)
            goto done;
        for (int i = 0; i < PQntuples(res); i++) {
            ncmp_outbox_add_state(&w->outbox, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
                                  PQgetvalue(res, i, 2), PQgetvalue(res, i, 3), NCMP_STATE_READY,
                                  NCMP_STATE_LOCKED);
            modsync_queue_add(&w->handoff, r->upgrade_tag, PQgetvalue(res, i, 0));
        }
    }
    rc = 0;
done:
    PQclear(cur);
    PQclear(res);
    return rc;
}

static int send_outcome(reg_worker *w, ncmp_stage_ctx *ctx, const char *request_id,
                        const char *error_message, ncmp_err *err)
{
    const ncmp_cloudevent ce = {.source = "NCMP",
                                .type = "org.onap.ncmp.dmi-plugin-registration-response",
                                .correlation_id = request_id,
                                .content_type = "application/json"};
    rd_kafka_headers_t *h = ncmp_cloudevent_headers(&ce);

    ncmp_buf_reset(&w->body);
    outcome_json(&w->body, &w->outcome, error_message);
    return ncmp_producer_send(ctx->producer, &ctx->delivery, w->cfg->registration_response_topic,
                              RD_KAFKA_PARTITION_UA, request_id, strlen(request_id), w->body.data,
                              w->body.len, h, err);
}

/* A header's whole value as a new string (NULL when absent). */
static char *header_dup(const rd_kafka_message_t *m, const char *name)
{
    rd_kafka_headers_t *hdrs = NULL;
    const void *val = NULL;
    size_t size = 0;
    char *s;

    if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR ||
        rd_kafka_header_get_last(hdrs, name, &val, &size) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return NULL;
    s = ncmp_xmalloc(size + 1);
    if (size)
        memcpy(s, val, size);
    s[size] = '\0';
    return s;
}

/* A request decoded ahead of its turn (see reg_apply). */
typedef struct reg_prepared {
    char *ce_id;                   /* NULL: rejected before decoding */
    reg_request r;                 /* valid when reject[0] is 0 */
    char reject[NCMP_ERR_MSG_MAX]; /* why it goes to the dead-letter topic; "" when it does not */
    double decode_ms;
} reg_prepared;

static void prepare_request(const ncmp_config *cfg, const rd_kafka_message_t *m, reg_prepared *p)
{
    ncmp_err perr = {NCMP_ERR_NONE, ""};
    double t0 = ncmp_now_ms();

    memset(p, 0, sizeof(*p));
    if (m->len > (size_t)cfg->kafka_max_message_bytes) {
        snprintf(p->reject, sizeof(p->reject),
                 "record of %zu bytes exceeds kafka.max-message-bytes %d", m->len,
                 cfg->kafka_max_message_bytes);
        return;
    }
    p->ce_id = header_dup(m, "ce_id");
    if (!p->ce_id || !*p->ce_id) {
        snprintf(p->reject, sizeof(p->reject),
                 "missing ce_id header: a registration is a CloudEvent in binary mode");
        return;
    }
    if (registration_request_decode(&p->r, m->payload, m->len, &perr) != 0)
        snprintf(p->reject, sizeof(p->reject), "%s", perr.msg);
    p->decode_ms = ncmp_now_ms() - t0;
}

static void prepared_free(reg_prepared *p)
{
    registration_request_free(&p->r);
    free(p->ce_id);
    p->ce_id = NULL;
}

/* The refusal of the first non-blank DMI service of the request that is
 * not a valid URL (dmi.allowed-url-pattern), NULL when none. */
static const char *invalid_dmi_url(const reg_worker *w, const reg_request *r)
{
    const struct {
        const char *url, *refusal;
    } urls[] = {
        {r->dmi_plugin, "Invalid DMI plugin URL for dmiPlugin"},
        {r->dmi_data_plugin, "Invalid DMI plugin URL for dmiDataPlugin"},
        {r->dmi_model_plugin, "Invalid DMI plugin URL for dmiModelPlugin"},
        {r->dmi_datajobs_read_plugin, "Invalid DMI plugin URL for dmiDatajobsReadPlugin"},
        {r->dmi_datajobs_write_plugin, "Invalid DMI plugin URL for dmiDatajobsWritePlugin"},
    };

    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++)
        if (*urls[i].url && !ncmp_dmi_url_valid(urls[i].url, w->cfg->dmi_allowed_url_pattern))
            return urls[i].refusal;
    return NULL;
}

static int apply_request(reg_worker *w, ncmp_stage_ctx *ctx, const rd_kafka_message_t *m,
                         reg_prepared *p, ncmp_err *err)
{
    reg_request *r = &p->r;
    const char *bad_url;
    double t0 = ncmp_now_ms();

    if (*p->reject)
        return ncmp_stage_reject(ctx, m, p->reject, err);
    outcome_reset(&w->outcome);
    bad_url = invalid_dmi_url(w, r);
    if (bad_url) {
        log_warn("registration", "request %s rejected: %s", p->ce_id, bad_url);
        return send_outcome(w, ctx, p->ce_id, bad_url, err);
    }
    if (apply_removed(w, ctx, r, err) != 0 || apply_created(w, ctx, r, err) != 0 ||
        apply_updated(w, ctx, r, err) != 0 || apply_upgraded(w, ctx, r, err) != 0)
        return -1;
    log_debug("registration",
              "request %s partition=%d offset=%lld: %zu created, %zu updated, %zu removed, %zu "
              "upgraded, failed %zu/%zu/%zu/%zu; decode %.0f ms, apply %.0f ms",
              p->ce_id, m->partition, (long long)m->offset, r->ncreated, r->nupdated, r->nremoved,
              r->nupgraded, w->outcome.ncreated, w->outcome.nupdated, w->outcome.nremoved,
              w->outcome.nupgraded, p->decode_ms, ncmp_now_ms() - t0);
    return send_outcome(w, ctx, p->ce_id, NULL, err);
}

/* Decoding a request (about 40 ms for 2,000 handles) and applying the one
 * before it (mostly PostgreSQL's work) overlap: a second thread decodes
 * the batch's requests in order while this one applies them. */
typedef struct reg_decoder {
    const ncmp_config *cfg;
    rd_kafka_message_t **msgs;
    reg_prepared *prep;
    size_t n;
    size_t done; /* requests decoded so far (under mu) */
    int stop;    /* the applier gave up: decode no more */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} reg_decoder;

static void *decoder_main(void *arg)
{
    reg_decoder *d = arg;

    for (size_t i = 0; i < d->n; i++) {
        int stop;
        pthread_mutex_lock(&d->mu);
        stop = d->stop;
        pthread_mutex_unlock(&d->mu);
        if (stop)
            break;
        prepare_request(d->cfg, d->msgs[i], &d->prep[i]);
        pthread_mutex_lock(&d->mu);
        d->done = i + 1;
        pthread_cond_signal(&d->cv);
        pthread_mutex_unlock(&d->mu);
    }
    return NULL;
}

/* Hand new ADVISED and upgrading handles to module sync: inside the
 * transaction, behind the hand-over barrier (modsync_queue.h), so that
 * module sync starts at once and a crash after the commit loses nothing. */
static int reg_hand_over(reg_worker *w, ncmp_stage_ctx *ctx, ncmp_err *err)
{
    const char *params[1];

    if (!w->handoff.n)
        return 0;
    if (!*w->cfg->module_sync_topic) {
        modsync_queue_reset(&w->handoff);
        return 0;
    }
    modsync_queue_slots(&w->handoff, &w->slots);
    params[0] = w->slots.data;
    if (ncmp_db_run(ctx->db, "reg_handover_lock", 1, params, NULL, err) != 0)
        return -1;
    return modsync_queue_send(&w->handoff, ctx->producer, &ctx->delivery, w->cfg->module_sync_topic,
                              err);
}

static int reg_apply(void *state, ncmp_stage_ctx *ctx, rd_kafka_message_t **msgs, size_t n,
                     ncmp_err *err)
{
    reg_worker *w = state;
    double t0 = ncmp_now_ms(), t1;
    reg_decoder d;
    pthread_t thread;
    int threaded, rc = 0;

    ncmp_outbox_reset(&w->outbox);
    modsync_queue_reset(&w->handoff);
    /* per connection, so again after a reconnect */
    if (ncmp_db_exec(ctx->db, SQL_STAGE_TABLE, err) != 0)
        return -1;
    memset(&d, 0, sizeof(d));
    d.cfg = w->cfg;
    d.msgs = msgs;
    d.n = n;
    d.prep = ncmp_xcalloc(n, sizeof(*d.prep));
    pthread_mutex_init(&d.mu, NULL);
    pthread_cond_init(&d.cv, NULL);
    /* one request: nothing to overlap */
    threaded = n > 1 && pthread_create(&thread, NULL, decoder_main, &d) == 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (threaded) {
            pthread_mutex_lock(&d.mu);
            while (d.done <= i)
                pthread_cond_wait(&d.cv, &d.mu);
            pthread_mutex_unlock(&d.mu);
        } else {
            prepare_request(w->cfg, msgs[i], &d.prep[i]);
        }
        rc = apply_request(w, ctx, msgs[i], &d.prep[i], err);
        prepared_free(&d.prep[i]);
    }
    if (threaded) {
        pthread_mutex_lock(&d.mu);
        d.stop = 1;
        pthread_mutex_unlock(&d.mu);
        pthread_join(thread, NULL);
    }
    for (size_t i = 0; i < n; i++)
        prepared_free(&d.prep[i]);
    free(d.prep);
    pthread_mutex_destroy(&d.mu);
    pthread_cond_destroy(&d.cv);
    if (rc != 0)
        return -1;
    t1 = ncmp_now_ms();
    rc = ncmp_outbox_flush(&w->outbox, err);
    if (rc == 0)
        rc = reg_hand_over(w, ctx, err);
    log_debug("registration", "batch of %zu requests: %.0f ms, outbox and hand-over %.0f ms", n,
              t1 - t0, ncmp_now_ms() - t1);
    return rc;
}

static const ncmp_db_stmt reg_statements[] = {{"reg_delete", SQL_DELETE},
                                              {"reg_create", SQL_CREATE},
                                              {"reg_lock_for_update", SQL_LOCK_FOR_UPDATE},
                                              {"reg_taken", SQL_TAKEN},
                                              {"reg_update", SQL_UPDATE},
                                              {"reg_lock_upgrade", SQL_LOCK_UPGRADE},
                                              {"reg_handover_lock", MODSYNC_SQL_HANDOVER_LOCK},
                                              {NULL, NULL}};

const ncmp_stage_ops registration_stage = {reg_statements, reg_init, reg_apply, reg_fini};
