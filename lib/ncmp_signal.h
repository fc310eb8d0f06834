/*
 * ncmp_signal: the process's one stop flag.
 *
 * The first SIGTERM or SIGINT asks for a graceful stop: workers stop
 * fetching, finish the batch in flight, commit the database, then the
 * offsets. A second signal exits at once (status 130).
 */
#ifndef NCMP_SIGNAL_H
#define NCMP_SIGNAL_H

#include <signal.h>

extern volatile sig_atomic_t ncmp_stopping;

void ncmp_signal_install(void);

/* Ask for a stop from inside the process (e.g. a fatal worker error). */
void ncmp_signal_request_stop(void);

/* Sleep `ms` in steps of at most 100 ms, returning once a stop is asked. */
void ncmp_signal_nap_ms(long ms);

#endif
