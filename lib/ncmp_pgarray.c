#include "ncmp_pgarray.h"

/* Every element but the first follows a comma. An element never ends in
 * '{' (text is quoted, numbers are digits), so the last byte tells. */
static void element_start(ncmp_buf *b)
{
    if (b->len > 0 && b->data[b->len - 1] != '{')
        ncmp_buf_append_char(b, ',');
}

void ncmp_pgarray_begin(ncmp_buf *b)
{
    ncmp_buf_reset(b);
    ncmp_buf_append_char(b, '{');
}

void ncmp_pgarray_add_text(ncmp_buf *b, const char *s)
{
    element_start(b);
    if (!s) {
        ncmp_buf_append_str(b, "NULL");
        return;
    }
    ncmp_buf_append_char(b, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            ncmp_buf_append_char(b, '\\');
        ncmp_buf_append_char(b, *p);
    }
    ncmp_buf_append_char(b, '"');
}

void ncmp_pgarray_add_int(ncmp_buf *b, int64_t v)
{
    element_start(b);
    ncmp_buf_appendf(b, "%lld", (long long)v);
}

void ncmp_pgarray_end(ncmp_buf *b)
{
    ncmp_buf_append_char(b, '}');
}

void ncmp_pgarray_text(ncmp_buf *b, const char *const *values, size_t n)
{
    ncmp_pgarray_begin(b);
    for (size_t i = 0; i < n; i++)
        ncmp_pgarray_add_text(b, values[i]);
    ncmp_pgarray_end(b);
}
