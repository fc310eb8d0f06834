#include "ncmp_signal.h"

#include <string.h>
#include <unistd.h>

#include "ncmp_time.h"

volatile sig_atomic_t ncmp_stopping;

static void on_signal(int sig)
{
    static const char msg[] = "ncmpd: second signal; exiting now\n";

    if (ncmp_stopping) {
        ssize_t ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
        (void)ignored;
        _exit(130);
    }
    ncmp_stopping = sig;
}

void ncmp_signal_install(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
}

void ncmp_signal_request_stop(void)
{
    if (!ncmp_stopping)
        ncmp_stopping = -1;
}

void ncmp_signal_nap_ms(long ms)
{
    for (long slept = 0; slept < ms && !ncmp_stopping; slept += 100)
        ncmp_sleep_ms(ms - slept < 100 ? ms - slept : 100);
}
