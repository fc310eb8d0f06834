#ifndef NCMP_CURL_LOOP_H
#define NCMP_CURL_LOOP_H

/*
 * libcurl's multi socket interface driven by one epoll set: the sockets
 * libcurl names, its timer, and an eventfd other threads wake the loop
 * with. Each round hands libcurl only the sockets that are ready, so its
 * cost follows what happened, not the transfers in flight (as
 * curl_multi_perform and curl_multi_poll, which visit every transfer on
 * every call).
 *
 * One thread runs the loop; ncmp_curl_loop_wake may be called from any.
 * The loop installs the multi handle's SOCKETFUNCTION and TIMERFUNCTION:
 * the caller sets neither.
 */

#include <curl/curl.h>

#include "ncmp_err.h"

typedef struct ncmp_curl_loop {
    CURLM *multi;
    int epfd, wakefd;
    int timer_set;
    double timer_at; /* ncmp_now_ms() when libcurl's timer is due */
} ncmp_curl_loop;

/* Drive MULTI (the caller's, kept) from LP. On failure nothing is left
 * open. */
int ncmp_curl_loop_init(ncmp_curl_loop *lp, CURLM *multi, ncmp_err *err);

/* Wait up to MAX_MS for a ready socket, libcurl's timer or a wakeup, and
 * hand libcurl what happened (completed transfers are then in
 * curl_multi_info_read). Returns 1 when a wakeup came, else 0. */
int ncmp_curl_loop_run(ncmp_curl_loop *lp, int max_ms);

/* End the current or the next ncmp_curl_loop_run's wait (any thread). */
void ncmp_curl_loop_wake(ncmp_curl_loop *lp);

/* Close the loop's descriptors (the multi handle stays the caller's). */
void ncmp_curl_loop_close(ncmp_curl_loop *lp);

#endif
