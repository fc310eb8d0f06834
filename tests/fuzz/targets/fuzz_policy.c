/* The policy executor's answer: always a decision, with a title when it
 * refuses. The input is the body of a 200 answer. */
#include <string.h>

#include "fuzz_common.h"
#include "policy.h"

static const char *const tokens[] = {
    FUZZ_JSON_TOKENS,
    "\"permissionResult\":\"allow\"",
    "\"permissionResult\":\"deny\"",
    "\"id\":\"7\"",
    "\"id\":7",
    "\"id\":null",
    "\"message\":\"why\"",
    "\"message\":",
    "\"permissionResult\":",
};

static int one(const uint8_t *bytes, size_t size)
{
    ncmp_dmi_response r;
    policy_decision d;

    memset(&r, 0, sizeof(r));
    r.status = 200;
    ncmp_buf_append(&r.body, bytes, size);
    memset(&d, 0xa5, sizeof(d));
    policy_decide(&r, (size & 1) ? "allow" : "deny", &d);
    if ((d.allowed != 0 && d.allowed != 1) || !memchr(d.title, '\0', sizeof(d.title)) ||
        !memchr(d.details, '\0', sizeof(d.details)) || (!d.allowed && !d.title[0]))
        fuzz_fail("a malformed decision", r.body.data ? r.body.data : "", d.title);
    ncmp_dmi_response_free(&r);
    return d.allowed;
}

FUZZ_TARGET("policy", one, tokens)
