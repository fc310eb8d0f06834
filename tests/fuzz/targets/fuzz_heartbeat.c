/* The device heartbeat's value: COMPLETE or NONE, or a REJECT. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "trust.h"

static const char *const tokens[] = {
    FUZZ_JSON_TOKENS, "{\"data\":{\"trustLevel\":",
    "\"COMPLETE\"",   "\"NONE\"",
    "\"data\":",      "\"trustLevel\":",
    "\"complete\"",   "}}",
};

static int one(const uint8_t *bytes, size_t size)
{
    const char *level = NULL;
    ncmp_err err = {0};
    int ok = trust_heartbeat_decode(bytes, size, &level, &err) == 0;
    char *in = fuzz_text(bytes, size);

    if (ok && (!level || (strcmp(level, "COMPLETE") != 0 && strcmp(level, "NONE") != 0)))
        fuzz_fail("a level that is neither COMPLETE nor NONE", in, level ? level : "(null)");
    if (!ok)
        fuzz_check_reject(in, &err);
    free(in);
    return ok;
}

FUZZ_TARGET("heartbeat", one, tokens)
