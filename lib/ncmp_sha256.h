/*
 * ncmp_sha256: SHA-256 (FIPS 180-4), for the checksums that identify YANG
 * sources (stored once per checksum, as NCMP does).
 */
#ifndef NCMP_SHA256_H
#define NCMP_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct ncmp_sha256 {
    uint32_t h[8];
    uint64_t len; /* bytes hashed so far */
    unsigned char block[64];
    size_t used; /* bytes in block */
} ncmp_sha256;

void ncmp_sha256_init(ncmp_sha256 *s);
void ncmp_sha256_update(ncmp_sha256 *s, const void *data, size_t len);
void ncmp_sha256_final(ncmp_sha256 *s, unsigned char digest[32]);

/* The digest of `data` as 64 lower-case hex digits and a NUL. */
void ncmp_sha256_hex(const void *data, size_t len, char out[65]);

#endif
