/* The bearer token of the REST API: ncmp_jwt_check on the text after
 * "Bearer ", with an HS256 secret (the seeds are signed with it), an
 * issuer and an audience. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ncmp_jwt.h"

/* 2026-01-01T00:00:00Z: the seeds are valid from before to after it. */
#define FUZZ_JWT_NOW 1767225600

static const char *const tokens[] = {
    ".",
    "..",
    "eyJ",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
    "eyJhbGciOiJub25lIn0",
    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0",
    "e30",
    "W10",
    "bnVsbA",
    "=",
    "-",
    "_",
    "+",
    "/",
    "AAAA",
    "////",
};

static ncmp_jwt *verifier(void)
{
    static ncmp_jwt *v;
    ncmp_jwt_options o = {
        .hs256_secret = "fuzz-secret-of-at-least-32-bytes!!",
        .issuer = "https://issuer.example",
        .audience = "ncmp",
        .clock_skew_s = 30,
    };
    ncmp_err err;

    if (!v && ncmp_jwt_new(&v, &o, &err) != 0)
        fuzz_fail("no verifier", "", err.msg);
    return v;
}

static int one(const uint8_t *bytes, size_t size)
{
    char *token = fuzz_text(bytes, size);
    char why[160];
    int ok;

    why[0] = '\0';
    ok = ncmp_jwt_check(verifier(), token, FUZZ_JWT_NOW, why, sizeof(why)) == 0;
    if (!ok && (!why[0] || !memchr(why, '\0', sizeof(why))))
        fuzz_fail("a refusal without its reason", token, why);
    free(token);
    return ok;
}

FUZZ_TARGET("jwt", one, tokens)
