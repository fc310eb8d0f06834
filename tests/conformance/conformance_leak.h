/*
 * conformance_leak: makes a memory leak fail the conformance tests under
 * ASan (the approach of tests/unit/unit_leak.c, kept here so that this
 * folder does not depend on the unit tests).
 *
 * Criterion 2.4 ignores the exit status LeakSanitizer gives a test's
 * process, and an assertion in a .fini function does not fail the test
 * either; a crash in .fini does (the runner then exits non-zero and names
 * the test). Every suite therefore declares
 *     TestSuite(<name>, .fini = conformance_leak_check);
 */
#ifndef CONFORMANCE_LEAK_H
#define CONFORMANCE_LEAK_H

/* Without ASan: nothing. With ASan: free the cached LCM schema, run a leak
 * check, abort() on a leak (LeakSanitizer has printed where the memory
 * came from). */
void conformance_leak_check(void);

#endif
