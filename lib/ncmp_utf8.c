#include "ncmp_utf8.h"

size_t ncmp_utf8_char_len(const void *s, size_t len)
{
    const unsigned char *p = s;
    unsigned char c, lo = 0x80, hi = 0xbf;
    size_t n;

    if (len == 0)
        return 0;
    c = p[0];
    if (c < 0x80)
        return 1;
    /* The ranges of RFC 3629's table: bounding the second byte per lead
     * byte is what excludes overlongs (E0, F0), surrogates (ED) and code
     * points above U+10FFFF (F4); C0, C1 and F5..FF never lead. */
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c == 0xe0) {
        n = 3;
        lo = 0xa0;
    } else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) {
        n = 3;
    } else if (c == 0xed) {
        n = 3;
        hi = 0x9f;
    } else if (c == 0xf0) {
        n = 4;
        lo = 0x90;
    } else if (c >= 0xf1 && c <= 0xf3) {
        n = 4;
    } else if (c == 0xf4) {
        n = 4;
        hi = 0x8f;
    } else {
        return 0;
    }
    if (len < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t k = 2; k < n; k++)
        if ((p[k] & 0xc0) != 0x80)
            return 0;
    return n;
}

size_t ncmp_utf8_invalid_at(const void *s, size_t len)
{
    const unsigned char *p = s;
    size_t i = 0;

    while (i < len) {
        size_t n = ncmp_utf8_char_len(p + i, len - i);
        if (n == 0)
            return i;
        i += n;
    }
    return len;
}

int ncmp_utf8_valid(const void *s, size_t len)
{
    return ncmp_utf8_invalid_at(s, len) == len;
}
