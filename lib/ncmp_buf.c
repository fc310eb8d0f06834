#include "ncmp_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
    fprintf(stderr, "ncmpd: out of memory allocating %zu bytes\n", n);
    abort();
}

void *ncmp_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *ncmp_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *ncmp_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *ncmp_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = ncmp_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

void ncmp_buf_grow(ncmp_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    size_t cap;

    if (need <= b->cap)
        return;
    cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    b->data = ncmp_xrealloc(b->data, cap);
    b->cap = cap;
}

void ncmp_buf_append(ncmp_buf *b, const void *data, size_t len)
{
    ncmp_buf_reserve(b, len);
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void ncmp_buf_append_str(ncmp_buf *b, const char *s)
{
    ncmp_buf_append(b, s, strlen(s));
}

void ncmp_buf_appendf(ncmp_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    size_t room;

    /* format once into the room there is; again only if it did not fit */
    ncmp_buf_reserve(b, 64);
    room = b->cap - b->len;
    va_start(ap, fmt);
    n = vsnprintf(b->data + b->len, room, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->data[b->len] = '\0';
        return;
    }
    if ((size_t)n >= room) {
        ncmp_buf_reserve(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void ncmp_buf_append_json_string(ncmp_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *run = p;

    ncmp_buf_append_char(b, '"');
    /* copy runs of plain bytes at once; escape what JSON requires */
    for (; *p; p++) {
        char esc[6];
        size_t n = 2;
        if (*p >= 0x20 && *p != '"' && *p != '\\')
            continue;
        ncmp_buf_append(b, run, (size_t)(p - run));
        run = p + 1;
        esc[0] = '\\';
        switch (*p) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[*p >> 4];
            esc[5] = hex[*p & 0xf];
            n = 6;
        }
        ncmp_buf_append(b, esc, n);
    }
    ncmp_buf_append(b, run, (size_t)(p - run));
    ncmp_buf_append_char(b, '"');
}

void ncmp_buf_append_copy_field(ncmp_buf *b, const char *s, size_t len)
{
    size_t run = 0;

    if (!s) {
        ncmp_buf_append(b, "\\N", 2);
        return;
    }
    ncmp_buf_reserve(b, len);
    b->data[b->len] = '\0';
    /* copy runs of plain bytes at once; escape the four that need it */
    for (size_t i = 0; i < len; i++) {
        const char *esc;
        switch (s[i]) {
        case '\\':
            esc = "\\\\";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        default:
            continue;
        }
        ncmp_buf_append(b, s + run, i - run);
        ncmp_buf_append(b, esc, 2);
        run = i + 1;
    }
    ncmp_buf_append(b, s + run, len - run);
}

void ncmp_buf_reset(ncmp_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void ncmp_buf_free(ncmp_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
