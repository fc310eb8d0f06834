#include "ncmp_curl_loop.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ncmp_log.h"
#include "ncmp_time.h"

#define LOG_COMP "curl"
#define BATCH    64 /* socket events taken per epoll_wait */

/* libcurl's socket callback: keep the epoll set what libcurl waits for. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    ncmp_curl_loop *lp = userp;
    struct epoll_event ev;

    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(lp->epfd, EPOLL_CTL_DEL, fd, NULL);
        return 0;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    ev.data.fd = fd;
    /* a socket libcurl has told of is modified, a new one added; either
     * may find the other state (a number reused after a close) */
    if (socketp ? epoll_ctl(lp->epfd, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT &&
                      epoll_ctl(lp->epfd, EPOLL_CTL_ADD, fd, &ev) != 0
                : epoll_ctl(lp->epfd, EPOLL_CTL_ADD, fd, &ev) != 0 && errno == EEXIST &&
                      epoll_ctl(lp->epfd, EPOLL_CTL_MOD, fd, &ev) != 0)
        log_warn(LOG_COMP, "epoll_ctl on socket %d: %s", (int)fd, strerror(errno));
    if (!socketp)
        curl_multi_assign(lp->multi, fd, lp);
    return 0;
}

/* libcurl's timer callback: when to call it back with CURL_SOCKET_TIMEOUT
 * (-1: no timer). */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    ncmp_curl_loop *lp = userp;

    (void)multi;
    lp->timer_set = timeout_ms >= 0;
    if (lp->timer_set)
        lp->timer_at = ncmp_now_ms() + (double)timeout_ms;
    return 0;
}

/* Milliseconds until libcurl's timer is due (0 when it is), at most
 * MAX_MS. */
static int timer_wait_ms(const ncmp_curl_loop *lp, int max_ms)
{
    double ms;

    if (!lp->timer_set)
        return max_ms;
    ms = lp->timer_at - ncmp_now_ms();
    /* rounded up to the millisecond, as epoll_wait takes it */
    return ms <= 0 ? 0 : ms > max_ms ? max_ms : (int)(ms + 0.999999);
}

int ncmp_curl_loop_init(ncmp_curl_loop *lp, CURLM *multi, ncmp_err *err)
{
    struct epoll_event ev;
    int rc = 0;

    memset(lp, 0, sizeof(*lp));
    lp->multi = multi;
    lp->epfd = epoll_create1(EPOLL_CLOEXEC);
    lp->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (lp->epfd < 0 || lp->wakefd < 0) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "epoll or eventfd: %s", strerror(errno));
        ncmp_curl_loop_close(lp);
        return -1;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.fd = lp->wakefd;
    if (epoll_ctl(lp->epfd, EPOLL_CTL_ADD, lp->wakefd, &ev) != 0) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "epoll_ctl: %s", strerror(errno));
        ncmp_curl_loop_close(lp);
        return -1;
    }
    rc |= curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    rc |= curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, lp);
    rc |= curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    rc |= curl_multi_setopt(multi, CURLMOPT_TIMERDATA, lp);
    if (rc != CURLM_OK) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "libcurl refused the socket and timer callbacks");
        ncmp_curl_loop_close(lp);
        return -1;
    }
    return 0;
}

int ncmp_curl_loop_run(ncmp_curl_loop *lp, int max_ms)
{
    struct epoll_event evs[BATCH];
    int n, running = 0, woken = 0;

    n = epoll_wait(lp->epfd, evs, BATCH, timer_wait_ms(lp, max_ms));
    for (int i = 0; i < n; i++) {
        int flags = 0;
        if (evs[i].data.fd == lp->wakefd) {
            uint64_t v;
            if (read(lp->wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
                log_warn(LOG_COMP, "wakeup read: %s", strerror(errno));
            woken = 1;
            continue;
        }
        if (evs[i].events & EPOLLIN)
            flags |= CURL_CSELECT_IN;
        if (evs[i].events & EPOLLOUT)
            flags |= CURL_CSELECT_OUT;
        if (evs[i].events & (EPOLLERR | EPOLLHUP))
            flags |= CURL_CSELECT_ERR;
        curl_multi_socket_action(lp->multi, evs[i].data.fd, flags, &running);
    }
    if (lp->timer_set && timer_wait_ms(lp, 0) == 0) {
        lp->timer_set = 0;
        curl_multi_socket_action(lp->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    return woken;
}

void ncmp_curl_loop_wake(ncmp_curl_loop *lp)
{
    uint64_t one = 1;

    if (write(lp->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        log_warn(LOG_COMP, "cannot wake the event loop: %s", strerror(errno));
}

void ncmp_curl_loop_close(ncmp_curl_loop *lp)
{
    if (lp->epfd >= 0)
        close(lp->epfd);
    if (lp->wakefd >= 0)
        close(lp->wakefd);
    lp->epfd = lp->wakefd = -1;
}
