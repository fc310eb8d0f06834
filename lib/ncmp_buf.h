/*
 * ncmp_buf: a growable byte buffer (like redis' sds, but a plain struct).
 *
 * The data is always NUL-terminated once anything was appended, so it can
 * be used as a C string. Allocation failure aborts the process: a daemon
 * that cannot allocate a few bytes has nothing sensible left to do.
 */
#ifndef NCMP_BUF_H
#define NCMP_BUF_H

#include <stddef.h>

typedef struct ncmp_buf {
    char *data;
    size_t len;
    size_t cap;
} ncmp_buf;

#define NCMP_BUF_INIT                                                                              \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* Room for `extra` more bytes and the NUL; the growing half out of line. */
void ncmp_buf_grow(ncmp_buf *b, size_t extra);

/* Inline: the writers of large answers call these per character. */
static inline void ncmp_buf_reserve(ncmp_buf *b, size_t extra)
{
    if (b->len + extra + 1 > b->cap)
        ncmp_buf_grow(b, extra);
}

void ncmp_buf_append(ncmp_buf *b, const void *data, size_t len);
void ncmp_buf_append_str(ncmp_buf *b, const char *s);

static inline void ncmp_buf_append_char(ncmp_buf *b, char c)
{
    ncmp_buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

void ncmp_buf_appendf(ncmp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal, quotes included. */
void ncmp_buf_append_json_string(ncmp_buf *b, const char *s);
/* Append one field of PostgreSQL's COPY text format: backslash, tab,
 * newline and carriage return escaped; NULL becomes \N. */
void ncmp_buf_append_copy_field(ncmp_buf *b, const char *s, size_t len);
void ncmp_buf_reset(ncmp_buf *b);
void ncmp_buf_free(ncmp_buf *b);

/* Allocation helpers that abort on failure. */
void *ncmp_xmalloc(size_t n);
void *ncmp_xcalloc(size_t n, size_t size);
void *ncmp_xrealloc(void *p, size_t n);
char *ncmp_xstrdup(const char *s);

#endif
