/*
 * bench_notify: what CPS's data-updated events cost the store's writes.
 *
 * The same stream of writes (PUT of a garden with 10 beds: 11 data nodes
 * each, 4 in flight over HTTP) goes to two anchors of one dataspace, one
 * subscribed and one not, in alternating rounds. A round of the
 * subscribed anchor ends when its last event has left the outbox (the
 * cps-relay role published it), so both the write and its event are paid
 * for. The result is the median rate of each and their ratio.
 *
 * Needs an ncmpd serving /cps/api with the cps-relay role running, and
 * its database (to see the outbox drain).
 */
#ifndef NCMP_BENCH_NOTIFY_H
#define NCMP_BENCH_NOTIFY_H

#include <stddef.h>

typedef struct bench_notify_result {
    long writes;          /* per anchor, over all rounds */
    long nodes_per_write; /* data nodes each write replaces */
    double off_nodes_per_s;
    double on_nodes_per_s;
    double on_vs_off; /* on_nodes_per_s / off_nodes_per_s */
} bench_notify_result;

/* Run it against `http_base` ("http://127.0.0.1:8883") and `db_url`, with
 * `writes` writes per anchor (at least 60). Returns 0, or -1 with a
 * message in err. */
int bench_notify_run(const char *http_base, const char *db_url, long writes,
                     bench_notify_result *out, char *err, size_t errlen);

#endif
