#include "ncmp_multipart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ncmp_buf.h"

#define MAX_BOUNDARY 70 /* RFC 2046 §5.1.1 */
#define MAX_PARTS    1024

/* memmem without relying on _GNU_SOURCE. */
static const char *find(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
    if (nlen == 0 || hlen < nlen)
        return NULL;
    for (size_t i = 0; i + nlen <= hlen; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, nlen) == 0)
            return hay + i;
    return NULL;
}

/* The value of parameter `param` (e.g. boundary, name, filename) in a
 * header value such as `multipart/form-data; boundary="x"`: a new string,
 * or NULL when absent. Quoted values may hold ';'. */
static char *header_param(const char *value, size_t len, const char *param)
{
    size_t plen = strlen(param);
    size_t i = 0;

    while (i < len) {
        /* the start of a parameter: after a ';' and blanks */
        while (i < len && value[i] != ';') {
            if (value[i] == '"') { /* skip a quoted string */
                i++;
                while (i < len && value[i] != '"')
                    i += value[i] == '\\' ? 2 : 1;
            }
            i++;
        }
        if (i >= len)
            break;
        i++;
        while (i < len && (value[i] == ' ' || value[i] == '\t'))
            i++;
        if (i + plen < len && strncasecmp(value + i, param, plen) == 0 && value[i + plen] == '=') {
            ncmp_buf out = NCMP_BUF_INIT;
            i += plen + 1;
            if (i < len && value[i] == '"') {
                for (i++; i < len && value[i] != '"'; i++) {
                    if (value[i] == '\\' && i + 1 < len)
                        i++;
                    ncmp_buf_append_char(&out, value[i]);
                }
            } else {
                for (; i < len && value[i] != ';' && value[i] != ' ' && value[i] != '\t'; i++)
                    ncmp_buf_append_char(&out, value[i]);
            }
            ncmp_buf_append_char(&out, '\0');
            return out.data;
        }
    }
    return NULL;
}

/* Parse the headers of one part (hdr[0..len)): its name and file name. */
static int part_headers(const char *hdr, size_t len, ncmp_multipart_part *p, ncmp_err *err)
{
    const char *end = hdr + len;

    while (hdr < end) {
        const char *eol = find(hdr, (size_t)(end - hdr), "\r\n", 2);
        size_t n = eol ? (size_t)(eol - hdr) : (size_t)(end - hdr);
        static const char cd[] = "content-disposition:";
        if (n >= sizeof(cd) - 1 && strncasecmp(hdr, cd, sizeof(cd) - 1) == 0) {
            free(p->name);
            free(p->filename);
            p->name = header_param(hdr, n, "name");
            p->filename = header_param(hdr, n, "filename");
        }
        hdr += n + (eol ? 2 : 0);
    }
    if (!p->name)
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "a multipart part has no Content-Disposition with a name");
    return 0;
}

int ncmp_multipart_parse(const char *content_type, const char *body, size_t len,
                         ncmp_multipart_part **out, size_t *nout, ncmp_err *err)
{
    char *boundary = NULL;
    char delim[MAX_BOUNDARY + 5];
    size_t dlen;
    ncmp_multipart_part *parts = NULL;
    size_t n = 0;
    const char *p, *end = body + len;
    int rc = -1;

    if (!content_type || strncasecmp(content_type, "multipart/", 10) != 0) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "Content-Type is not multipart/form-data");
        goto cleanup;
    }
    boundary = header_param(content_type, strlen(content_type), "boundary");
    if (!boundary || !*boundary || strlen(boundary) > MAX_BOUNDARY) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "the multipart Content-Type has no valid boundary");
        goto cleanup;
    }
    /* every delimiter but the first is preceded by CRLF; so is the first
     * when the body starts with it, which a preamble-free body does not */
    dlen = (size_t)snprintf(delim, sizeof(delim), "\r\n--%s", boundary);
    if (len >= dlen - 2 && memcmp(body, delim + 2, dlen - 2) == 0)
        p = body + dlen - 2;
    else if ((p = find(body, len, delim, dlen)) != NULL)
        p += dlen;
    else {
        ncmp_err_set(err, NCMP_ERR_REJECT, "the multipart body has no part");
        goto cleanup;
    }
    for (;;) {
        const char *hend, *next;
        ncmp_multipart_part *part;

        /* after a delimiter: "--" ends the body, CRLF starts a part */
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            break;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (end - p < 2 || p[0] != '\r' || p[1] != '\n') {
            ncmp_err_set(err, NCMP_ERR_REJECT, "malformed multipart delimiter");
            goto cleanup;
        }
        p += 2;
        hend = find(p, (size_t)(end - p), "\r\n\r\n", 4);
        /* a part without headers starts with the empty line at once */
        if (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
            hend = p - 2;
        if (!hend) {
            ncmp_err_set(err, NCMP_ERR_REJECT, "a multipart part has no end of headers");
            goto cleanup;
        }
        next = find(hend + 4, (size_t)(end - (hend + 4)), delim, dlen);
        if (!next) {
            ncmp_err_set(err, NCMP_ERR_REJECT, "the multipart body has no closing delimiter");
            goto cleanup;
        }
        if (n == MAX_PARTS) {
            ncmp_err_set(err, NCMP_ERR_REJECT, "more than %d multipart parts", MAX_PARTS);
            goto cleanup;
        }
        parts = ncmp_xrealloc(parts, (n + 1) * sizeof(*parts));
        part = &parts[n++];
        memset(part, 0, sizeof(*part));
        if (hend > p && part_headers(p, (size_t)(hend - p), part, err) != 0)
            goto cleanup;
        if (!part->name) {
            ncmp_err_set(err, NCMP_ERR_REJECT, "a multipart part has no name");
            goto cleanup;
        }
        part->data = hend + 4;
        part->len = (size_t)(next - (hend + 4));
        p = next + dlen;
    }
    *out = parts;
    *nout = n;
    parts = NULL;
    n = 0;
    rc = 0;
cleanup:
    ncmp_multipart_free(parts, n);
    free(boundary);
    return rc;
}

const ncmp_multipart_part *ncmp_multipart_find(const ncmp_multipart_part *parts, size_t nparts,
                                               const char *name)
{
    for (size_t i = 0; i < nparts; i++)
        if (strcmp(parts[i].name, name) == 0)
            return &parts[i];
    return NULL;
}

void ncmp_multipart_free(ncmp_multipart_part *parts, size_t nparts)
{
    if (!parts)
        return;
    for (size_t i = 0; i < nparts; i++) {
        free(parts[i].name);
        free(parts[i].filename);
    }
    free(parts);
}
