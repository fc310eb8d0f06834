#include "conformance_leak.h"

#include <stdio.h>
#include <stdlib.h>

#include "conformance.h"

#if defined(__SANITIZE_ADDRESS__)
#define CONFORMANCE_LEAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CONFORMANCE_LEAK_ASAN 1
#endif
#endif

#ifdef CONFORMANCE_LEAK_ASAN
#include <sanitizer/lsan_interface.h>

void conformance_leak_check(void)
{
    /* the cached schema is reachable, not a leak, but freeing it here
     * proves that conformance_reset frees everything it loaded */
    conformance_reset();
    /* runs after the test body: its locals are gone, so whatever it
     * allocated and still holds is unreachable now */
    if (__lsan_do_recoverable_leak_check()) {
        fprintf(stderr, "conformance tests: the test above leaked memory\n");
        abort();
    }
}
#else
void conformance_leak_check(void)
{
    conformance_reset();
}
#endif
