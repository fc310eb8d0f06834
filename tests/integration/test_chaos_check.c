/* ncmp-chaos-check, the judge of ./run chaos, on a history made to break
 * every invariant it checks once: it must count each breach, and only
 * those (a judge that cannot fail proves nothing). Real Kafka topics, a
 * scratch database with the two tables it reads. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it_util.h"
#include "ncmp_buf.h"
#include "ncmp_db.h"
#include "ncmp_json.h"
#include "ncmp_lcm.h"

static char the_db[96];
static char the_files[2][256];

static void check_cleanup(void)
{
    if (the_db[0])
        it_scratch_db_drop(the_db);
    for (int i = 0; i < 2; i++)
        if (the_files[i][0])
            unlink(the_files[i]);
}

TestSuite(chaos_check, .fini = check_cleanup);

/* One event of `handle` from `old` to `new` (NONE/NONE: a create or a
 * delete by the states' rule) with event id `id`. */
static void add_event(it_outgoing *recs, ncmp_buf *texts, size_t *n, const char *handle,
                      ncmp_handle_state old_state, ncmp_handle_state new_state, const char *id)
{
    ncmp_lcm_event ev = {.cm_handle_id = handle,
                         .old_values = {old_state, -1, NULL},
                         .new_values = {new_state, -1, NULL}};

    ncmp_buf_reset(&texts[*n]);
    ncmp_lcm_event_json(&texts[*n], &ev, NCMP_LCM_V1, id, "2026-12-04T10:00:00.000+0000");
    recs[*n] = (it_outgoing){.key = handle, .value = texts[*n].data, .len = texts[*n].len};
    (*n)++;
}

static long figure(json_object *doc, const char *key)
{
    json_object *v;

    cr_assert(json_object_object_get_ex(doc, key, &v), "no %s in %s", key,
              json_object_to_json_string(doc));
    return json_object_get_int64(v);
}

static void write_lines(const char *path, const char *const *lines)
{
    FILE *f = fopen(path, "w");

    cr_assert_not_null(f);
    for (; *lines; lines++)
        fprintf(f, "%s\n", *lines);
    fclose(f);
}

/* n records on `topic`, the i-th with ce_id ids[i]. */
static void publish_avc(const char *topic, const char *const *ids, size_t n)
{
    const char *headers[8][3];
    it_outgoing recs[8];

    cr_assert_leq(n, 8);
    for (size_t i = 0; i < n; i++) {
        headers[i][0] = "ce_id";
        headers[i][1] = ids[i];
        headers[i][2] = NULL;
        recs[i] = (it_outgoing){.key = "neType-1", .value = "{}", .len = 2, .headers = headers[i]};
    }
    it_publish(topic, recs, n);
}

Test(chaos_check, counts_each_breach_once, .timeout = 120)
{
    const ncmp_handle_state A = NCMP_STATE_ADVISED, R = NCMP_STATE_READY, L = NCMP_STATE_LOCKED;
    const ncmp_handle_state D = NCMP_STATE_DELETING, X = NCMP_STATE_DELETED, N = NCMP_STATE_NONE;
    static const char *const expected[] = {
        "h-ok",        "h-missing-ready", "h-out-of-order", "h-dup-id",
        "h-dup-again", "h-no-events",     "h-absent",       NULL};
    static const char *const requests[] = {"r1 h-ok", "r2 h-gone", "r3 h-dup-id", NULL};
    it_outgoing recs[32], outs[3];
    ncmp_buf texts[32];
    static const char *const avc_ids_in[] = {"a1", "a2", "a3", "a4", "a4"};
    static const char *const avc_ids_out[] = {"a1", "a1", "a2", "a4", "a4", "zz"};
    static const char *const batch_ids_in[] = {"b1", "b2"};
    static const char *const batch_ids_out[] = {"b1", "b3"};
    char topic[128], lcm_topic[160], resp_topic[160], avc_in_topic[160], avc_out_topic[160];
    char batch_in_topic[160], batch_out_topic[160];
    char url[512], cmd[2048], out[4096] = "";
    ncmp_db *db;
    ncmp_err err;
    json_object *doc = NULL;
    size_t n = 0, got;
    FILE *p;
    int status;

    for (size_t i = 0; i < 32; i++)
        texts[i] = (ncmp_buf)NCMP_BUF_INIT;
    it_unique(topic, sizeof(topic), "it-chaos-check");
    snprintf(lcm_topic, sizeof(lcm_topic), "%s-lcm", topic);
    snprintf(resp_topic, sizeof(resp_topic), "%s-resp", topic);
    it_create_topic(lcm_topic, 3);
    it_create_topic(resp_topic, 3);
    snprintf(avc_in_topic, sizeof(avc_in_topic), "%s-avc-in", topic);
    snprintf(avc_out_topic, sizeof(avc_out_topic), "%s-avc-out", topic);
    it_create_topic(avc_in_topic, 2);
    it_create_topic(avc_out_topic, 2);
    snprintf(batch_in_topic, sizeof(batch_in_topic), "%s-batch-in", topic);
    snprintf(batch_out_topic, sizeof(batch_out_topic), "%s-batch-out", topic);
    it_create_topic(batch_in_topic, 2);
    it_create_topic(batch_out_topic, 2);

    /* as they should be */
    add_event(recs, texts, &n, "h-ok", N, A, "e-ok-1");
    add_event(recs, texts, &n, "h-ok", A, R, "e-ok-2");
    add_event(recs, texts, &n, "h-gone", N, A, "e-gone-1");
    add_event(recs, texts, &n, "h-gone", A, D, "e-gone-2");
    add_event(recs, texts, &n, "h-gone", D, X, "e-gone-3");
    /* READY in the database, no event says so: missing */
    add_event(recs, texts, &n, "h-missing-ready", N, A, "e-mr-1");
    /* READY -> LOCKED while ADVISED: one before it is missing */
    add_event(recs, texts, &n, "h-out-of-order", N, A, "e-oo-1");
    add_event(recs, texts, &n, "h-out-of-order", R, L, "e-oo-2");
    /* one outbox row published twice: the same eventId */
    add_event(recs, texts, &n, "h-dup-id", N, A, "e-di-1");
    add_event(recs, texts, &n, "h-dup-id", A, R, "e-di-2");
    add_event(recs, texts, &n, "h-dup-id", A, R, "e-di-2");
    /* one change announced twice: a new eventId, the same transition */
    add_event(recs, texts, &n, "h-dup-again", N, A, "e-da-1");
    add_event(recs, texts, &n, "h-dup-again", A, R, "e-da-2");
    add_event(recs, texts, &n, "h-dup-again", A, R, "e-da-3");
    /* gone from the database, its delete never sent: missing */
    add_event(recs, texts, &n, "h-no-delete", N, A, "e-nd-1");
    add_event(recs, texts, &n, "h-no-delete", A, D, "e-nd-2");
    it_publish(lcm_topic, recs, n);
    /* r2 has no outcome, r1 two */
    outs[0] = (it_outgoing){.key = "r1", .value = "{}", .len = 2};
    outs[1] = (it_outgoing){.key = "r1", .value = "{}", .len = 2};
    outs[2] = (it_outgoing){.key = "r3", .value = "{}", .len = 2};
    it_publish(resp_topic, outs, 3);
    /* AVC events by ce_id: a3 never forwarded, a1 forwarded twice, a4
     * published twice and forwarded twice (no duplicate), zz from nowhere */
    publish_avc(avc_in_topic, avc_ids_in, 5);
    publish_avc(avc_out_topic, avc_ids_out, 6);
    /* batch-read results: b2 never forwarded, b3 ncmpd's own */
    publish_avc(batch_in_topic, batch_ids_in, 2);
    publish_avc(batch_out_topic, batch_ids_out, 2);

    it_scratch_db_create("it_chaos", the_db, sizeof(the_db), url, sizeof(url));
    cr_assert_eq(ncmp_db_open(&db, url, NULL, 10, &err), 0, "%s", err.msg);
    cr_assert_eq(
        ncmp_db_exec(db,
                     "CREATE TABLE cm_handle (id text PRIMARY KEY, state text NOT NULL,"
                     " alternate_id text, lock_reason text);"
                     "CREATE TABLE lcm_outbox (seq bigint);"
                     "INSERT INTO lcm_outbox VALUES (1);"
                     "INSERT INTO cm_handle VALUES"
                     " ('h-ok', 'READY', 'a1', NULL), ('h-missing-ready', 'READY', 'a2', NULL),"
                     " ('h-out-of-order', 'LOCKED', 'a3', NULL),"
                     " ('h-dup-id', 'READY', NULL, NULL), ('h-dup-again', 'READY', NULL, NULL),"
                     " ('h-no-events', 'READY', NULL, NULL), ('h-extra', 'ADVISED', NULL, NULL)",
                     &err),
        0, "%s", err.msg);
    ncmp_db_close(db);

    snprintf(the_files[0], sizeof(the_files[0]), "/tmp/%s-expected", topic);
    snprintf(the_files[1], sizeof(the_files[1]), "/tmp/%s-requests", topic);
    write_lines(the_files[0], expected);
    write_lines(the_files[1], requests);
    snprintf(cmd, sizeof(cmd),
             "%s -b %s -d '%s' --lcm-topic %s --response-topic %s --expected %s --requests %s"
             " --avc-in %s --avc-out %s --batch-in %s --batch-out %s",
             NCMP_CHAOS_CHECK_PATH, it_kafka(), url, lcm_topic, resp_topic, the_files[0],
             the_files[1], avc_in_topic, avc_out_topic, batch_in_topic, batch_out_topic);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    got = fread(out, 1, sizeof(out) - 1, p);
    status = pclose(p);
    out[got] = '\0';
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %d", cmd, status);
    cr_assert_eq(ncmp_json_parse(out, strlen(out), &doc, &err), 0, "%s: %s", err.msg, out);

    cr_assert_eq(figure(doc, "events_total"), (long)n);
    cr_assert_eq(figure(doc, "events_duplicated"), 2, "%s", out);
    cr_assert_eq(figure(doc, "events_out_of_order"), 1, "%s", out);
    /* h-missing-ready, h-no-events, h-no-delete, h-extra */
    cr_assert_eq(figure(doc, "events_missing"), 4, "%s", out);
    cr_assert_eq(figure(doc, "handles_expected"), 7);
    cr_assert_eq(figure(doc, "handles_stored"), 7);
    cr_assert_eq(figure(doc, "handles_missing"), 1, "h-absent: %s", out);
    cr_assert_eq(figure(doc, "handles_unexpected"), 1, "h-extra: %s", out);
    cr_assert_eq(figure(doc, "outcomes_expected"), 3);
    cr_assert_eq(figure(doc, "outcomes_missing"), 1, "r2: %s", out);
    cr_assert_eq(figure(doc, "outcomes_duplicated"), 1, "r1: %s", out);
    /* h-out-of-order LOCKED without a reason, h-extra ADVISED */
    cr_assert_eq(figure(doc, "stuck"), 2, "%s", out);
    cr_assert_eq(figure(doc, "outbox_left"), 1);
    cr_assert_eq(figure(doc, "duplicate_alternate_ids"), 0);
    cr_assert_eq(figure(doc, "avc_published"), 5, "%s", out);
    cr_assert_eq(figure(doc, "avc_delivered"), 6, "%s", out);
    cr_assert_eq(figure(doc, "avc_missing"), 1, "a3: %s", out);
    cr_assert_eq(figure(doc, "avc_duplicated"), 1, "a1: %s", out);
    cr_assert_eq(figure(doc, "avc_unknown"), 1, "zz: %s", out);
    cr_assert_eq(figure(doc, "batch_published"), 2, "%s", out);
    cr_assert_eq(figure(doc, "batch_missing"), 1, "b2: %s", out);
    cr_assert_eq(figure(doc, "batch_duplicated"), 0, "%s", out);
    cr_assert_eq(figure(doc, "batch_unknown"), 1, "b3: %s", out);
    json_object_put(doc);
    for (size_t i = 0; i < 32; i++)
        ncmp_buf_free(&texts[i]);
}
