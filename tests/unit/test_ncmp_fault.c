/* Unit tests of lib/ncmp_fault.c. The crash itself is tested with
 * Criterion's .signal: the test passes only if its process dies of
 * SIGKILL. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "ncmp_fault.h"
#include "unit_leak.h"

TestSuite(ncmp_fault, .fini = unit_leak_check);

Test(ncmp_fault, setup_accepts_point_and_count)
{
    ncmp_err err = {0};

    cr_assert_eq(ncmp_fault_setup("point:3", &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_fault_setup("after-commit:1", &err), 0, "%s", err.msg);
    /* the count follows the last colon: points may contain colons */
    cr_assert_eq(ncmp_fault_setup("a:b:2", &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_fault_setup("", &err), 0, "an empty spec disarms");
    cr_assert_eq(ncmp_fault_setup(NULL, &err), 0, "NULL disarms");
}

Test(ncmp_fault, setup_rejects_bad_specs)
{
    static const char *const bad[] = {"point", ":3", "p:0", "p:x", "p:", "p:-1", "p:3x"};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ncmp_err err = {0};
        cr_expect_eq(ncmp_fault_setup(bad[i], &err), -1, "'%s' accepted", bad[i]);
        cr_expect_eq(err.cls, NCMP_ERR_FATAL, "'%s'", bad[i]);
        cr_expect(strstr(err.msg, "debug.fault"), "'%s': %s", bad[i], err.msg);
    }
}

Test(ncmp_fault, rejects_too_long_point_name)
{
    char spec[300];
    ncmp_err err = {0};

    memset(spec, 'p', sizeof(spec));
    strcpy(spec + sizeof(spec) - 3, ":1");
    cr_assert_eq(ncmp_fault_setup(spec, &err), -1);
}

Test(ncmp_fault, other_points_never_fire)
{
    ncmp_err err = {0};

    cr_assert_eq(ncmp_fault_setup("armed:1", &err), 0, "%s", err.msg);
    for (int i = 0; i < 100; i++) {
        ncmp_fault_point("other");
        ncmp_fault_point("arme");
        ncmp_fault_point("armed2");
        ncmp_fault_point("");
    }
    /* still alive */
}

Test(ncmp_fault, point_does_not_fire_before_the_nth_hit)
{
    ncmp_err err = {0};

    cr_assert_eq(ncmp_fault_setup("p:3", &err), 0, "%s", err.msg);
    ncmp_fault_point("p");
    ncmp_fault_point("p");
    /* still alive after n - 1 hits */
}

Test(ncmp_fault, point_kills_on_the_nth_hit, .signal = SIGKILL)
{
    ncmp_err err = {0};

    cr_assert_eq(ncmp_fault_setup("p:3", &err), 0, "%s", err.msg);
    for (int i = 0; i < 3; i++)
        ncmp_fault_point("p");
    cr_assert_fail("still alive after the third hit");
}

Test(ncmp_fault, disarmed_point_does_not_fire)
{
    ncmp_err err = {0};

    cr_assert_eq(ncmp_fault_setup("p:1", &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_fault_setup("", &err), 0);
    for (int i = 0; i < 10; i++)
        ncmp_fault_point("p");
}

Test(ncmp_fault, setup_restarts_the_count)
{
    ncmp_err err = {0};

    cr_assert_eq(ncmp_fault_setup("p:2", &err), 0, "%s", err.msg);
    ncmp_fault_point("p");
    cr_assert_eq(ncmp_fault_setup("p:2", &err), 0, "%s", err.msg);
    ncmp_fault_point("p");
    /* one hit since the second setup: still alive */
}

Test(ncmp_fault, failed_setup_leaves_it_disarmed)
{
    ncmp_err err = {0};

    cr_assert_eq(ncmp_fault_setup("p:1", &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_fault_setup("p:0", &err), -1);
    ncmp_fault_point("p");
}
