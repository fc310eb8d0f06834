/*
 * bench_avc_apply: the AVC phase of `bench data-sync`. Given a running
 * ncmpd with the avc-apply role and the operational caches of H handles
 * (anchor <handle> of dataspace NFP-Operational, each holding one Open
 * ROADM device of tests/data/openroadm), produce M AVC events to
 * dmi-cm-events and measure until ncmpd has applied them all:
 * avc_applied_per_s.
 *
 * Each event is a DMI plugin's (ce_source ONAP-DMI-PLUGIN), keyed by its
 * handle (round robin over the handles), with one edit: a patch of the
 * device entry's `status` leaf (success/fail alternately), the change a
 * device reports most. "Applied" is read where ncmpd keeps it: the
 * avc-apply group's offsets in consumer_offsets, committed in the same
 * transaction as the writes; the clock runs from the first produce until
 * they cover every event produced. Dead letters made meanwhile (events
 * ncmpd refused) are counted from `<topic>-dlq`'s end offsets.
 *
 * Owns nothing past the call; links ncmpcore (libpq, librdkafka).
 */
#ifndef NCMP_BENCH_AVC_APPLY_H
#define NCMP_BENCH_AVC_APPLY_H

#include <stddef.h>

#include "ncmp_err.h"

typedef struct bench_avc_opts {
    const char *bootstrap;      /* Kafka */
    const char *topic;          /* ncmpd's avc-forward.input-topic (dmi-cm-events) */
    const char *db_url;         /* ncmpd's database */
    const char *group;          /* "<kafka.group.id>-avc-apply" */
    const char *const *handles; /* the handle ids, each with a cache */
    size_t nhandles;
    /* the device id in each handle's cache, parallel to `handles`; NULL:
     * the handle id itself */
    const char *const *device_ids;
    long events;   /* M */
    int timeout_s; /* give up after this long (0: 600) */
} bench_avc_opts;

typedef struct bench_avc_result {
    long events;          /* produced */
    long dead_lettered;   /* records added to <topic>-dlq meanwhile */
    double produce_s;     /* producing and acknowledging them */
    double seconds;       /* first produce -> all applied */
    double applied_per_s; /* events / seconds (one change each) */
} bench_avc_result;

/* Run the phase. FATAL on a setup failure, RETRY when not every event was
 * applied within the timeout (*r is written either way on return 0 only). */
int bench_avc_apply_run(const bench_avc_opts *o, bench_avc_result *r, ncmp_err *err);

#endif
