/* The CPS schema-set upload (multipart/form-bytes). The first line of the
 * input is the Content-Type, the rest the body. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ncmp_multipart.h"

static const char *const tokens[] = {
    "\r\n",
    "--",
    "--b\r\n",
    "\r\n--b--\r\n",
    "multipart/form-data; boundary=b\n",
    "boundary=\"b\"",
    ";",
    "Content-Disposition: form-data; name=\"file\"; filename=\"m.yang\"\r\n",
    "Content-Type: application/octet-stream\r\n",
    "name=",
    "filename=",
    "\"",
    "\\\"",
    "\r\n\r\n",
};

static int one(const uint8_t *bytes, size_t size)
{
    const uint8_t *nl = memchr(bytes, '\n', size);
    size_t tlen = nl ? (size_t)(nl - bytes) : size;
    char *type = fuzz_text(bytes, tlen);
    const char *body = nl ? (const char *)nl + 1 : "";
    size_t blen = nl ? size - tlen - 1 : 0;
    ncmp_multipart_part *parts = NULL;
    size_t n = 0;
    ncmp_err err = {0};
    int ok = ncmp_multipart_parse(type, body, blen, &parts, &n, &err) == 0;

    if (ok) {
        for (size_t i = 0; i < n; i++)
            if (!parts[i].name || parts[i].data < body ||
                parts[i].data + parts[i].len > body + blen)
                fuzz_fail("a part outside the body", type, "");
        (void)ncmp_multipart_find(parts, n, "file");
    } else {
        fuzz_check_reject(type, &err);
    }
    ncmp_multipart_free(parts, n);
    free(type);
    return ok;
}

FUZZ_TARGET("multipart", one, tokens)
