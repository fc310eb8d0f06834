#include <criterion/criterion.h>
#include <time.h>

#include "ncmp_time.h"

static double ts_ms(struct timespec ts)
{
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A deadline is `ms` after now on the clock asked for, its nanoseconds
 * normalised, whole seconds and fractions alike. */
Test(ncmp_time, deadline_is_ms_from_now_on_its_clock)
{
    const double cases[] = {0, 1, 999.5, 1000, 1500, 86400000.25};
    const clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC};

    for (size_t c = 0; c < 2; c++)
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            struct timespec before, after, d;
            clock_gettime(clocks[c], &before);
            d = ncmp_deadline_ts(clocks[c], cases[i]);
            clock_gettime(clocks[c], &after);
            cr_assert(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L, "%ld", d.tv_nsec);
            cr_assert_geq(ts_ms(d) - ts_ms(before), cases[i] - 0.001, "%g", cases[i]);
            cr_assert_leq(ts_ms(d) - ts_ms(after), cases[i] + 0.001, "%g", cases[i]);
        }
}
