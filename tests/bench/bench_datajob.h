/*
 * bench_datajob: the bodies of NCMP's KPI write data jobs (cps
 * k6-tests/ncmp/common/write-data-job.js), as JSON.stringify writes them:
 * for N operations, N/2 alternate ids of the reference workload drawn at
 * random among the `handles` from number `first` on (1: the first
 * ones), each giving an "add" at
 * <altId>/SomeChild=child-1 and a "merge" at
 * <altId>/SomeChild=child-2/SomeGrandChild=grand-child-2 (operation ids
 * "<i>-1" and "<i>-2", values {"key":"some-value-one-<i>"} and
 * {"key":"some-value-two-<i>"}), with the suite's metadata. 100
 * operations are about 21.5 KB, 100,000 about 22 MB.
 *
 * The draw is a seeded xorshift: the same seed, operations and handles
 * give the same bytes, so that two programs (the load client and the raw
 * parse) work on the same body.
 */
#ifndef NCMP_BENCH_DATAJOB_H
#define NCMP_BENCH_DATAJOB_H

#include "ncmp_buf.h"

/* The seed of the first body of a run (the large job's). */
#define BENCH_DATAJOB_SEED 0x9e3779b97f4a7c15ULL

/* Append the body of a job of `ops` operations (an even number; an odd
 * one is rounded down, as the suite's loop does) to `out`. `*seed` is the
 * generator's state (not 0), advanced by the draw. */
void bench_datajob_body(ncmp_buf *out, long ops, long first, long handles,
                        unsigned long long *seed);

#endif
