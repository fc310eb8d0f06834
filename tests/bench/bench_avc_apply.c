#include "bench_avc_apply.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_db.h"
#include "ncmp_dlq.h"
#include "ncmp_kafka.h"
#include "ncmp_time.h"

#define AVC_TYPE "org.onap.cps.ncmp.events.avc1_0_0.AvcEvent"

/* The sum of a topic's end offsets (0 for a topic that does not exist). */
static long end_offsets(rd_kafka_t *rk, const char *topic)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    long sum = 0;

    if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        md->topic_cnt == 1 && !md->topics[0].err)
        for (int p = 0; p < md->topics[0].partition_cnt; p++) {
            int64_t lo, hi;
            if (rd_kafka_query_watermark_offsets(rk, topic, md->topics[0].partitions[p].id, &lo,
                                                 &hi, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR)
                sum += (long)hi;
        }
    if (md)
        rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
    return sum;
}

/* The group's committed offsets summed over the topic's partitions. */
static int applied_sum(ncmp_db *db, const char *group, const char *topic, long *sum, ncmp_err *err)
{
    static const char sql[] = "SELECT coalesce(sum(next_offset), 0) FROM consumer_offsets"
                              " WHERE group_id = $1 AND topic = $2";
    const char *params[2] = {group, topic};
    PGresult *res = NULL;

    if (ncmp_db_query(db, sql, 2, params, &res, err) != 0)
        return -1;
    *sum = atol(PQgetvalue(res, 0, 0));
    PQclear(res);
    return 0;
}

static void event_value(ncmp_buf *b, const char *device, const char *status)
{
    ncmp_buf_reset(b);
    ncmp_buf_appendf(b,
                     "{\"data\":{\"push-change-update\":{\"datastore-changes\":{\"ietf-yang-patch:"
                     "yang-patch\":{\"patch-id\":\"bench\",\"edit\":[{\"edit-id\":\"1\","
                     "\"operation\":\"patch\",\"target\":\"/openroadm-devices-inventory:openroadm-"
                     "devices/openroadm-device=%s\",\"value\":{\"openroadm-device\":[{\"device-"
                     "id\":\"%s\",\"status\":\"%s\"}]}}]}}}}}",
                     device, device, status);
}

/* Produce events first..first+n-1 (event i goes to handle i mod H) and
 * wait for their acknowledgements. */
static int produce(const bench_avc_opts *o, ncmp_producer *p, long first, long n, ncmp_err *err)
{
    ncmp_buf value = NCMP_BUF_INIT;
    ncmp_delivery d;
    char device[512];
    int rc = -1;

    ncmp_delivery_init(&d);
    for (long i = first; i < first + n; i++) {
        const char *h = o->handles[(size_t)i % o->nhandles];
        ncmp_cloudevent ce = {.source = "ONAP-DMI-PLUGIN",
                              .type = AVC_TYPE,
                              .dataschema = "urn:cps:" AVC_TYPE ":1.0.0",
                              .content_type = "application/json"};
        snprintf(device, sizeof(device), "%s",
                 o->device_ids ? o->device_ids[(size_t)i % o->nhandles] : h);
        /* the round over the handles decides the value: every event
         * changes the leaf */
        event_value(&value, device, ((size_t)i / o->nhandles) % 2 ? "success" : "fail");
        if (ncmp_producer_send(p, &d, o->topic, RD_KAFKA_PARTITION_UA, h, strlen(h), value.data,
                               value.len, ncmp_cloudevent_headers(&ce), err) != 0)
            goto cleanup;
    }
    if (ncmp_producer_wait(p, &d, 120000, err) != 0)
        goto cleanup;
    rc = 0;
cleanup:
    ncmp_buf_free(&value);
    return rc;
}

/* Wait until the group's offsets reach `target` (RETRY after timeout_s);
 * *applied: where they are. */
static int wait_applied(const bench_avc_opts *o, ncmp_db *db, long target, int timeout_s,
                        long *applied, ncmp_err *err)
{
    double t0 = ncmp_now_ms();

    while (ncmp_now_ms() - t0 < timeout_s * 1000.0) {
        if (applied_sum(db, o->group, o->topic, applied, err) != 0)
            return -1;
        if (*applied >= target)
            return 0;
        ncmp_sleep_ms(10);
    }
    return ncmp_err_set(err, NCMP_ERR_RETRY, "not applied in time");
}

int bench_avc_apply_run(const bench_avc_opts *o, bench_avc_result *r, ncmp_err *err)
{
    ncmp_kafka_opts kopts = {.bootstrap_servers = o->bootstrap};
    ncmp_producer *p = NULL;
    ncmp_db *db = NULL;
    char dlq[NCMP_DLQ_TOPIC_SIZE];
    long start_applied, start_end, target, dlq_before, applied = 0;
    double t0, t_produced;
    int timeout_s = o->timeout_s > 0 ? o->timeout_s : 600, rc = -1;

    if (!o->nhandles || o->events <= 0)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "bench avc-apply: no handles or no events");
    ncmp_dlq_topic(dlq, sizeof(dlq), o->topic);
    if (ncmp_db_open(&db, o->db_url, NULL, 10, err) != 0 ||
        ncmp_producer_new(&p, &kopts, NCMP_PRODUCER_KEYED, "bench-avc-apply", err) != 0)
        goto cleanup;
    /* what the group had applied before, and where the topic ends: the
     * group is done when it has applied everything up to the new end */
    if (applied_sum(db, o->group, o->topic, &start_applied, err) != 0)
        goto cleanup;
    start_end = end_offsets(ncmp_producer_rk(p), o->topic);
    if (start_applied < start_end) {
        ncmp_err_set(err, NCMP_ERR_FATAL,
                     "bench avc-apply: group %s is behind on %s (%ld of %ld applied) before the "
                     "run; is the avc-apply role running?",
                     o->group, o->topic, start_applied, start_end);
        goto cleanup;
    }
    /* warm-up, not timed: one event per handle, applied, so that the group
     * has its partitions and the schema set is compiled */
    if (produce(o, p, 0, (long)o->nhandles, err) != 0 ||
        wait_applied(o, db, end_offsets(ncmp_producer_rk(p), o->topic), timeout_s, &applied, err) !=
            0)
        goto cleanup;
    start_end = end_offsets(ncmp_producer_rk(p), o->topic);
    dlq_before = end_offsets(ncmp_producer_rk(p), dlq);
    t0 = ncmp_now_ms();
    if (produce(o, p, (long)o->nhandles, o->events, err) != 0)
        goto cleanup;
    t_produced = ncmp_now_ms();
    target = end_offsets(ncmp_producer_rk(p), o->topic);
    if (wait_applied(o, db, target, timeout_s, &applied, err) != 0) {
        ncmp_err_set(err, NCMP_ERR_RETRY, "bench avc-apply: %ld of %ld events applied after %d s",
                     applied - start_end, target - start_end, timeout_s);
        goto cleanup;
    }
    r->events = o->events;
    r->seconds = (ncmp_now_ms() - t0) / 1000.0;
    r->produce_s = (t_produced - t0) / 1000.0;
    r->applied_per_s = r->seconds > 0 ? (double)o->events / r->seconds : 0;
    r->dead_lettered = end_offsets(ncmp_producer_rk(p), dlq) - dlq_before;
    rc = 0;
cleanup:
    ncmp_producer_destroy(p);
    ncmp_db_close(db);
    return rc;
}
