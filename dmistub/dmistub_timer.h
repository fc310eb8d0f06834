/*
 * dmistub_timer: run callbacks at deadlines, all on one thread.
 *
 * This is how the stub waits without holding a thread per request: the
 * HTTP handler suspends its connection and adds a deadline whose callback
 * resumes it. The deadlines live in a min-heap; the timer thread sleeps on
 * a condition variable (monotonic clock) until the earliest one, then runs
 * every callback that is due. Callbacks run on the timer thread, outside
 * the timer's lock, and must be quick (resume a connection, hand a job to
 * another thread).
 *
 *     dmistub_timer *t;
 *     dmistub_timer_start(&t, &err);
 *     dmistub_timer_add(t, 300, resume, conn);   // from any thread
 *     ...
 *     dmistub_timer_stop(t);   // runs what is still pending
 *     dmistub_timer_free(t);   // once nobody calls dmistub_timer_add any more
 */
#ifndef DMISTUB_TIMER_H
#define DMISTUB_TIMER_H

#include <stddef.h>

#include "ncmp_err.h"

typedef struct dmistub_timer dmistub_timer;

typedef void (*dmistub_timer_fn)(void *arg);

/* Start the timer thread. On success *t is owned by the caller
 * (dmistub_timer_free). */
int dmistub_timer_start(dmistub_timer **t, ncmp_err *err);

/* Run fn(arg) on the timer thread once delay_ms have passed; a negative
 * delay means "only when the timer stops". Callbacks with equal deadlines
 * run in the order they were added. Thread-safe. Returns 0, or -1 once
 * the timer is stopping: then fn will never run and the caller keeps arg. */
int dmistub_timer_add(dmistub_timer *t, long delay_ms, dmistub_timer_fn fn, void *arg);

/* Callbacks waiting to run. Thread-safe. */
size_t dmistub_timer_pending(dmistub_timer *t);

/* Refuse new deadlines, run every pending callback now (earliest first)
 * and join the thread. Other threads may still call dmistub_timer_add
 * (it fails) until dmistub_timer_free. Accepts NULL; idempotent. */
void dmistub_timer_stop(dmistub_timer *t);

/* Stop if needed, then free. Accepts NULL. */
void dmistub_timer_free(dmistub_timer *t);

#endif
