/*
 * ncmp_time: the monotonic clock and sleeping, for timeouts, back-off and
 * the timings in debug logs.
 */
#ifndef NCMP_TIME_H
#define NCMP_TIME_H

#include <time.h>

/* Milliseconds on the monotonic clock (fractional). */
double ncmp_now_ms(void);

/* Sleep `ms` milliseconds (a signal may cut it short). */
void ncmp_sleep_ms(long ms);

/* The time `ms` milliseconds from now on `clock` (CLOCK_REALTIME, or the
 * clock a condition variable was given), for pthread_cond_timedwait. */
struct timespec ncmp_deadline_ts(clockid_t clock, double ms);

#endif
