/*
 * unit_leak: makes a memory leak fail the unit tests under ASan.
 *
 * Criterion 2.4 ignores the exit status LeakSanitizer gives a test's
 * process, and an assertion in a .fini function does not fail the test
 * either; a crash in .fini does (the runner then exits non-zero and names
 * the test). Every suite therefore declares
 *     TestSuite(<module>, .fini = unit_leak_check);
 */
#ifndef UNIT_LEAK_H
#define UNIT_LEAK_H

/* Without ASan: nothing. With ASan: a leak check now, abort() on a leak
 * (LeakSanitizer has printed where the memory came from). */
void unit_leak_check(void);

#endif
