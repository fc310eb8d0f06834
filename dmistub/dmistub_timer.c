#include "dmistub_timer.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncmp_buf.h"

/* A deadline that never comes by itself (a negative delay). */
#define NEVER INT64_MAX

typedef struct timer_entry {
    int64_t deadline_ns; /* CLOCK_MONOTONIC */
    uint64_t seq;        /* ties run in insertion order */
    dmistub_timer_fn fn;
    void *arg;
} timer_entry;

struct dmistub_timer {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    timer_entry *heap;
    size_t len, cap;
    uint64_t next_seq;
    int stopping;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int entry_before(const timer_entry *a, const timer_entry *b)
{
    return a->deadline_ns < b->deadline_ns || (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

static void heap_swap(timer_entry *h, size_t i, size_t j)
{
    timer_entry tmp = h[i];
    h[i] = h[j];
    h[j] = tmp;
}

static void heap_push(dmistub_timer *t, timer_entry e)
{
    size_t i;

    if (t->len == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->heap = ncmp_xrealloc(t->heap, t->cap * sizeof(*t->heap));
    }
    i = t->len++;
    t->heap[i] = e;
    while (i > 0 && entry_before(&t->heap[i], &t->heap[(i - 1) / 2])) {
        heap_swap(t->heap, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static timer_entry heap_pop(dmistub_timer *t)
{
    timer_entry top = t->heap[0];
    size_t i = 0;

    t->heap[0] = t->heap[--t->len];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < t->len && entry_before(&t->heap[l], &t->heap[m]))
            m = l;
        if (r < t->len && entry_before(&t->heap[r], &t->heap[m]))
            m = r;
        if (m == i)
            break;
        heap_swap(t->heap, i, m);
        i = m;
    }
    return top;
}

/* Run the top entry with the lock released. */
static void run_top(dmistub_timer *t)
{
    timer_entry e = heap_pop(t);

    pthread_mutex_unlock(&t->lock);
    e.fn(e.arg);
    pthread_mutex_lock(&t->lock);
}

static void wait_until(dmistub_timer *t, int64_t deadline_ns)
{
    struct timespec ts;

    if (deadline_ns == NEVER) {
        pthread_cond_wait(&t->wake, &t->lock);
        return;
    }
    ts.tv_sec = deadline_ns / 1000000000;
    ts.tv_nsec = deadline_ns % 1000000000;
    pthread_cond_timedwait(&t->wake, &t->lock, &ts);
}

static void *timer_main(void *arg)
{
    dmistub_timer *t = arg;

    pthread_mutex_lock(&t->lock);
    while (!t->stopping) {
        if (t->len == 0)
            pthread_cond_wait(&t->wake, &t->lock);
        else if (t->heap[0].deadline_ns <= now_ns())
            run_top(t);
        else
            wait_until(t, t->heap[0].deadline_ns);
    }
    /* stopping: nothing is added any more; run what is left, in order */
    while (t->len > 0)
        run_top(t);
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

int dmistub_timer_start(dmistub_timer **out, ncmp_err *err)
{
    dmistub_timer *t = ncmp_xcalloc(1, sizeof(*t));
    pthread_condattr_t attr;
    int rc;

    pthread_mutex_init(&t->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&t->wake, &attr);
    pthread_condattr_destroy(&attr);
    rc = pthread_create(&t->thread, NULL, timer_main, t);
    if (rc != 0) {
        pthread_cond_destroy(&t->wake);
        pthread_mutex_destroy(&t->lock);
        free(t);
        return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot start the timer thread: %s", strerror(rc));
    }
    *out = t;
    return 0;
}

int dmistub_timer_add(dmistub_timer *t, long delay_ms, dmistub_timer_fn fn, void *arg)
{
    timer_entry e;

    e.deadline_ns = delay_ms < 0 ? NEVER : now_ns() + (int64_t)delay_ms * 1000000;
    e.fn = fn;
    e.arg = arg;
    pthread_mutex_lock(&t->lock);
    if (t->stopping) {
        pthread_mutex_unlock(&t->lock);
        return -1;
    }
    e.seq = t->next_seq++;
    heap_push(t, e);
    /* only a new earliest deadline changes how long the thread sleeps */
    if (t->heap[0].seq == e.seq)
        pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    return 0;
}

size_t dmistub_timer_pending(dmistub_timer *t)
{
    size_t n;

    pthread_mutex_lock(&t->lock);
    n = t->len;
    pthread_mutex_unlock(&t->lock);
    return n;
}

void dmistub_timer_stop(dmistub_timer *t)
{
    int joined;

    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    joined = t->stopping;
    t->stopping = 1;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    if (!joined)
        pthread_join(t->thread, NULL);
}

void dmistub_timer_free(dmistub_timer *t)
{
    if (!t)
        return;
    dmistub_timer_stop(t);
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
    free(t->heap);
    free(t);
}
