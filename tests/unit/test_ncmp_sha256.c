#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ncmp_sha256.h"
#include "unit_leak.h"

TestSuite(ncmp_sha256, .fini = unit_leak_check);

/* FIPS 180-4 examples and the empty string. */
Test(ncmp_sha256, known_vectors)
{
    char hex[65];

    ncmp_sha256_hex("", 0, hex);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ncmp_sha256_hex("abc", 3, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ncmp_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
    cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* One million 'a': many blocks; fed in odd-sized pieces to cross block
 * boundaries at every offset. */
Test(ncmp_sha256, million_a_in_pieces)
{
    static char a[1000000];
    unsigned char d[32];
    char hex[65];
    ncmp_sha256 s;
    size_t off = 0, step = 1;

    memset(a, 'a', sizeof(a));
    ncmp_sha256_init(&s);
    while (off < sizeof(a)) {
        size_t take = step < sizeof(a) - off ? step : sizeof(a) - off;
        ncmp_sha256_update(&s, a + off, take);
        off += take;
        step = step % 97 + 1;
    }
    ncmp_sha256_final(&s, d);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    cr_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    ncmp_sha256_hex(a, sizeof(a), hex);
    cr_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
