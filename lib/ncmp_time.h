/*
 * ncmp_time: the monotonic clock and sleeping, for timeouts, back-off and
 * the timings in debug logs.
 */
#ifndef NCMP_TIME_H
#define NCMP_TIME_H

/* Milliseconds on the monotonic clock (fractional). */
double ncmp_now_ms(void);

/* Sleep `ms` milliseconds (a signal may cut it short). */
void ncmp_sleep_ms(long ms);

#endif
