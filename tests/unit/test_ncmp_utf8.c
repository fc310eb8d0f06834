/* Unit tests of lib/ncmp_utf8.c: RFC 3629's table, byte by byte at its
 * edges (overlongs, surrogates, beyond U+10FFFF, truncated sequences). */
#include <criterion/criterion.h>
#include <string.h>

#include "ncmp_utf8.h"
#include "unit_leak.h"

TestSuite(ncmp_utf8, .fini = unit_leak_check);

typedef struct utf8_case {
    const char *bytes;
    size_t len;
    size_t invalid_at; /* == len when valid */
} utf8_case;

#define CASE(s, at)                                                                                \
    {                                                                                              \
        s, sizeof(s) - 1, at                                                                       \
    }
#define VALID(s) CASE(s, sizeof(s) - 1)

static const utf8_case cases[] = {
    VALID(""),
    VALID("plain ASCII, with a \x7f"),
    /* the smallest and largest of each length */
    VALID("\xc2\x80"),
    VALID("\xdf\xbf"),
    VALID("\xe0\xa0\x80"),
    VALID("\xef\xbf\xbf"),
    VALID("\xf0\x90\x80\x80"),
    VALID("\xf4\x8f\xbf\xbf"),
    /* just around the surrogates */
    VALID("\xed\x9f\xbf"),
    VALID("\xee\x80\x80"),
    VALID("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
    /* overlong forms of '/', of U+07FF and of U+FFFF */
    CASE("\xc0\xaf", 0),
    CASE("\xc1\xbf", 0),
    CASE("a\xe0\x80\xaf", 1),
    CASE("\xe0\x9f\xbf", 0),
    CASE("\xf0\x80\x80\xaf", 0),
    CASE("\xf0\x8f\xbf\xbf", 0),
    /* surrogates U+D800 and U+DFFF, and a CESU-8 pair */
    CASE("\xed\xa0\x80", 0),
    CASE("ab\xed\xbf\xbf", 2),
    CASE("\xed\xa0\xbd\xed\xb8\x80", 0),
    /* above U+10FFFF, and lead bytes that never occur */
    CASE("\xf4\x90\x80\x80", 0),
    CASE("\xf5\x80\x80\x80", 0),
    CASE("\xf8\x88\x80\x80\x80", 0),
    CASE("x\xff", 1),
    CASE("\xfe", 0),
    /* continuation bytes without a lead */
    CASE("\x80", 0),
    CASE("ok\xbf", 2),
    /* truncated at the end of the input, and interrupted by ASCII */
    CASE("\xc3", 0),
    CASE("\xe2\x82", 0),
    CASE("abc\xf0\x9f\x98", 3),
    CASE("\xe2\x82x", 0),
    CASE("\xf0\x9f\x98x", 0),
    CASE("\xc3\xa9\xc3", 2),
};

Test(ncmp_utf8, invalid_at_finds_the_first_bad_byte_of_every_case)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const utf8_case *c = &cases[i];
        cr_expect_eq(ncmp_utf8_invalid_at(c->bytes, c->len), c->invalid_at,
                     "case %zu: invalid at %zu, expected %zu", i,
                     ncmp_utf8_invalid_at(c->bytes, c->len), c->invalid_at);
        cr_expect_eq(ncmp_utf8_valid(c->bytes, c->len), c->invalid_at == c->len, "case %zu", i);
    }
}

Test(ncmp_utf8, char_len_is_the_length_of_the_encoding)
{
    cr_assert_eq(ncmp_utf8_char_len("A", 1), 1);
    cr_assert_eq(ncmp_utf8_char_len("\xc3\xa9", 2), 2);
    cr_assert_eq(ncmp_utf8_char_len("\xe2\x82\xac", 3), 3);
    cr_assert_eq(ncmp_utf8_char_len("\xf0\x9f\x98\x80", 4), 4);
    /* only the first character counts */
    cr_assert_eq(ncmp_utf8_char_len("\xc3\xa9\xff", 3), 2);
    cr_assert_eq(ncmp_utf8_char_len("", 0), 0);
}

Test(ncmp_utf8, never_reads_beyond_len)
{
    /* a valid 4-byte sequence cut short by `len`: bytes beyond it must not
     * complete it */
    const char full[] = "\xf0\x9f\x98\x80";

    for (size_t len = 1; len < 4; len++) {
        cr_assert_eq(ncmp_utf8_char_len(full, len), 0, "len %zu", len);
        cr_assert_eq(ncmp_utf8_invalid_at(full, len), 0, "len %zu", len);
    }
}

Test(ncmp_utf8, a_nul_byte_is_a_valid_character)
{
    /* U+0000 is valid UTF-8; callers that need C strings check for it */
    cr_assert(ncmp_utf8_valid("a\0b", 3));
}

/* Every code point, encoded by hand, is valid exactly when it is neither a
 * surrogate nor beyond U+10FFFF; and every shorter (overlong) encoding of
 * it is refused. */
static size_t encode(unsigned long cp, unsigned char *out, size_t len)
{
    if (len == 1) {
        out[0] = (unsigned char)cp;
    } else if (len == 2) {
        out[0] = (unsigned char)(0xc0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3f));
    } else if (len == 3) {
        out[0] = (unsigned char)(0xe0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (unsigned char)(0x80 | (cp & 0x3f));
    } else {
        out[0] = (unsigned char)(0xf0 | (cp >> 18));
        out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
        out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        out[3] = (unsigned char)(0x80 | (cp & 0x3f));
    }
    return len;
}

Test(ncmp_utf8, agrees_with_the_code_point_rules_over_the_whole_range)
{
    unsigned char b[4];

    for (unsigned long cp = 0; cp <= 0x1fffff; cp++) {
        size_t shortest = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        int allowed = cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
        size_t n = encode(cp, b, shortest);
        if (ncmp_utf8_valid(b, n) != allowed)
            cr_assert_fail("U+%04lX: valid=%d", cp, ncmp_utf8_valid(b, n));
        /* the overlong forms of it, one byte longer, up to 4 */
        for (size_t len = shortest + 1; len <= 4 && cp < 0x10000; len++)
            if (ncmp_utf8_valid(b, encode(cp, b, len)))
                cr_assert_fail("U+%04lX in %zu bytes was accepted", cp, len);
    }
}
