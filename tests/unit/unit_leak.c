#include "unit_leak.h"

#include <stdio.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNIT_LEAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNIT_LEAK_ASAN 1
#endif
#endif

#ifdef UNIT_LEAK_ASAN
#include <sanitizer/lsan_interface.h>

void unit_leak_check(void)
{
    /* runs after the test body: its locals are gone, so whatever it
     * allocated and still holds is unreachable now */
    if (__lsan_do_recoverable_leak_check()) {
        fprintf(stderr, "unit tests: the test above leaked memory\n");
        abort();
    }
}
#else
void unit_leak_check(void)
{
}
#endif
