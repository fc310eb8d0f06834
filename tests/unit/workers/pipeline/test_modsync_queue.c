/*
 * modsync_queue: the hand-over records to module sync, their decoding, and
 * the hand-over barrier's slots.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "modsync_queue.h"
#include "ncmp_buf.h"

/* Regression: an empty queue was sorted with qsort(NULL, 0, ...), which
 * UBSan reports (the sanitizer build of this suite would fail). Nothing
 * to send must touch neither the producer nor the delivery counter. */
Test(modsync_queue, send_of_an_empty_queue_sends_nothing)
{
    modsync_queue q = {0};
    ncmp_err err;

    cr_assert_eq(modsync_queue_send(&q, NULL, NULL, "topic", &err), 0);
    modsync_queue_free(&q);
}

Test(modsync_queue, decode_reads_tag_ids_and_retry)
{
    static const char rec[] = "{\"moduleSetTag\":\"tagA\",\"cmHandles\":[\"ch-1\",\"ch-6\"],"
                              "\"retry\":true}";
    json_object *root = NULL;
    const char *tag = NULL, **ids = NULL;
    size_t n = 0;
    int retry = 0;
    ncmp_err err;

    cr_assert_eq(modsync_record_decode(rec, strlen(rec), &root, &tag, &ids, &n, &retry, &err), 0,
                 "%s", err.msg);
    cr_assert_str_eq(tag, "tagA");
    cr_assert_eq(n, 2);
    cr_assert_str_eq(ids[0], "ch-1");
    cr_assert_str_eq(ids[1], "ch-6");
    cr_assert_eq(retry, 1);
    free(ids);
    json_object_put(root);
}

Test(modsync_queue, decode_without_tag_is_untagged)
{
    static const char rec[] = "{\"cmHandles\":[\"ch-1\"]}";
    json_object *root = NULL;
    const char *tag = NULL, **ids = NULL;
    size_t n = 0;
    int retry = 1;
    ncmp_err err;

    cr_assert_eq(modsync_record_decode(rec, strlen(rec), &root, &tag, &ids, &n, &retry, &err), 0,
                 "%s", err.msg);
    cr_assert_str_eq(tag, "");
    cr_assert_eq(retry, 0);
    free(ids);
    json_object_put(root);
}

Test(modsync_queue, decode_rejects_what_is_not_a_record)
{
    static const char *const bad[] = {
        "not json",
        "[]",
        "{}",
        "{\"cmHandles\":\"ch-1\"}",
        "{\"cmHandles\":[1]}",
        "{\"cmHandles\":[\"\"]}",
        "{\"moduleSetTag\":7,\"cmHandles\":[\"a\"]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_object *root = (json_object *)1;
        const char *tag, **ids = (const char **)1;
        size_t n = 9;
        int retry;
        ncmp_err err;
        cr_assert_eq(
            modsync_record_decode(bad[i], strlen(bad[i]), &root, &tag, &ids, &n, &retry, &err), -1,
            "%s accepted", bad[i]);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT, "%s", bad[i]);
        cr_expect_null(root, "%s: nothing to release", bad[i]);
        cr_expect_null(ids);
    }
}

Test(modsync_queue, barrier_slot_is_fixed_and_in_range)
{
    /* FNV-1a of the tag: the same in every process and every build, so the
     * values themselves are part of the contract between versions */
    cr_assert_eq(modsync_barrier_slot(""), (int)(2166136261u % MODSYNC_BARRIER_SLOTS));
    for (int i = 0; i < 1000; i++) {
        char tag[16];
        snprintf(tag, sizeof(tag), "tag%d", i);
        int s = modsync_barrier_slot(tag);
        cr_assert(s >= 0 && s < MODSYNC_BARRIER_SLOTS, "%s -> %d", tag, s);
        cr_assert_eq(s, modsync_barrier_slot(tag));
    }
}

Test(modsync_queue, slots_are_distinct_and_sorted)
{
    modsync_queue q = {0};
    ncmp_buf b = NCMP_BUF_INIT;
    int seen[MODSYNC_BARRIER_SLOTS] = {0}, prev = -1, count = 0, want = 0;
    const char *p;

    modsync_queue_slots(&q, &b);
    cr_assert_str_eq(b.data, "{}");
    for (int i = 0; i < 200; i++) {
        char tag[16], id[16];
        snprintf(tag, sizeof(tag), "t%d", i % 40);
        snprintf(id, sizeof(id), "ch-%d", i);
        modsync_queue_add(&q, tag, id);
        if (!seen[modsync_barrier_slot(tag)]++)
            want++;
    }
    modsync_queue_slots(&q, &b);
    cr_assert_eq(b.data[0], '{');
    for (p = b.data + 1; *p && *p != '}';) {
        char *end;
        long v = strtol(p, &end, 10);
        cr_assert(end > p, "a number at %s", p);
        cr_assert_gt(v, prev, "sorted and distinct: %s", b.data);
        cr_assert(seen[v], "slot %ld belongs to a queued tag", v);
        prev = (int)v;
        count++;
        p = *end == ',' ? end + 1 : end;
    }
    cr_assert_eq(count, want, "%s", b.data);
    ncmp_buf_free(&b);
    modsync_queue_free(&q);
}
