/*
 * ncmp_jwt: checks bearer tokens (JWT, RFC 7519) as an OAuth2 resource
 * server does.
 *
 * Signatures are checked by libjwt (OpenSSL underneath) against the keys
 * configured: the public keys of a JWK set (RFC 7517; RSA keys for
 * RS256/RS384/RS512, EC keys on P-256/P-384/P-521 for ES256/ES384/ES512)
 * read from a file and/or fetched from a URL, and a shared secret for
 * HS256. The key is chosen by the token's `alg` (and `kid` when it has
 * one) before the signature is checked, so a token can never make a public
 * key serve as an HMAC secret; `alg: none` is refused.
 *
 * Then the claims: `exp` must be there and not past, `nbf` (when there)
 * not ahead - both give `clock_skew_s` of slack -, `iss` equal to the
 * issuer and `aud` (a string or an array) holding the audience when these
 * are configured.
 *
 * A URL's key set is fetched when the verifier is made, then again every
 * `jwks_refresh_s` and soon after a token names a `kid` it does not know
 * (at most once every 10 seconds), by a thread of the verifier; a failed
 * fetch keeps the keys it had. Checking is safe from any thread.
 */
#ifndef NCMP_JWT_H
#define NCMP_JWT_H

#include <stddef.h>
#include <time.h>

#include "ncmp_err.h"

typedef struct ncmp_jwt ncmp_jwt;

typedef struct ncmp_jwt_options {
    const char *jwks_file;    /* NULL or "": none */
    const char *jwks_url;     /* NULL or "": none */
    int jwks_refresh_s;       /* <= 0: 300 */
    const char *hs256_secret; /* NULL or "": HS256 tokens are refused */
    const char *issuer;       /* NULL or "": any */
    const char *audience;     /* NULL or "": any */
    int clock_skew_s;         /* slack on exp and nbf */
} ncmp_jwt_options;

/* A verifier. FATAL when no key source is configured, the file is not a
 * JWK set with a usable key, or the URL is not http(s); a URL that cannot
 * be fetched yet is only a warning (its keys come with the next fetch).
 * The option strings are copied. */
int ncmp_jwt_new(ncmp_jwt **out, const ncmp_jwt_options *opts, ncmp_err *err);

/* Check a compact JWS (the text after "Bearer "). 0 when valid; -1 with a
 * short reason in why[] (it never quotes the token), as RFC 6750's
 * error_description. */
int ncmp_jwt_check(ncmp_jwt *v, const char *token, time_t now, char *why, size_t whylen);

/* Stops the refresh thread. Accepts NULL. */
void ncmp_jwt_free(ncmp_jwt *v);

#endif
