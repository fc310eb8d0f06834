/* The bytes-job bodies: a write job scanned as it arrives (in pieces cut
 * where the input says), and the read job's dataNodeSelector split into
 * selectors and their FDN prefixes. */
#include <stdlib.h>
#include <string.h>

#include "datajob.h"
#include "fuzz_common.h"
#include "ncmp_jscan.h"
#include "ncmp_json.h"

static const char *const tokens[] = {
    FUZZ_JSON_TOKENS,
    "\"dataJobMetadata\":{\"destination\":\"d\",\"dataAcceptType\":\"a\",\"dataContentType\":"
    "\"c\"}",
    "\"dataJobWriteRequest\":{\"data\":[",
    "{\"path\":\"/SubNetwork=1/"
    "ManagedElement=1\",\"op\":\"add\",\"operationId\":\"1\",\"value\":{}}",
    "\"data\":[",
    "\"path\":",
    "\"readProperties\":{\"dataNodeSelector\":\"",
    "/SubNetwork[id=\\\"1\\\"]/ManagedElement[id=\\\"2\\\"]",
    "\\n",
    " OR ",
    "&&",
    "[id=\"",
    "\"]",
    "//",
};

typedef struct seen {
    size_t metadata, operations;
    const char *input; /* for the report of a broken invariant */
} seen;

static int on_metadata(void *arg, json_object *meta, ncmp_err *err)
{
    (void)meta;
    (void)err;
    ((seen *)arg)->metadata++;
    return 0;
}

/* An operation's text: the in-place scanner (ncmpd's fast path) and the
 * strict parser (its slow path) must agree on whether it is JSON. */
static int on_operation(void *arg, const char *text, size_t len, size_t index, ncmp_err *err)
{
    seen *s = arg;
    json_object *o = NULL;
    ncmp_jscan sc;
    ncmp_jkind kind;
    ncmp_jtok tok;
    ncmp_err perr, serr;
    int parsed, scanned;
    size_t lead = 0;

    (void)err;
    if (index != s->operations)
        fuzz_fail("an operation out of order", s->input, "");
    s->operations++;
    parsed = ncmp_json_parse(text, len, &o, &perr) == 0;
    json_object_put(o);
    ncmp_jscan_init(&sc, text, len, &serr);
    scanned = ncmp_jscan_value(&sc, &kind, &tok) == 0 && ncmp_jscan_end(&sc) == 0;
    if (parsed != scanned)
        fuzz_fail(parsed ? "ncmp_jscan refuses what ncmp_json_parse takes"
                         : "ncmp_jscan takes what ncmp_json_parse refuses",
                  s->input, parsed ? serr.msg : perr.msg);
    while (lead < len && strchr(" \t\r\n", text[lead]) && text[lead])
        lead++;
    if (scanned && (tok.p != text + lead || tok.p + tok.n > text + len))
        fuzz_fail("ncmp_jscan's token is not the value's text", s->input, "");
    return 0;
}

static int write_job(const uint8_t *bytes, size_t size)
{
    char *in = fuzz_text(bytes, size);
    seen s = {0, 0, in};
    datajob_scan_cb cb = {on_metadata, on_operation, &s};
    datajob_scan *scan = datajob_scan_new(&cb, 1024);
    size_t step = 1 + (size % 7) * (size % 5), at = 0;
    ncmp_err err = {0};
    int rc = 0;

    while (rc == 0 && at < size) {
        size_t n = size - at < step ? size - at : step;
        rc = datajob_scan_feed(scan, (const char *)bytes + at, n, &err);
        at += n;
    }
    if (rc == 0)
        rc = datajob_scan_end(scan, &err);
    datajob_scan_free(scan);
    if (rc != 0)
        fuzz_check_reject(in, &err);
    free(in);
    return rc == 0;
}

static void read_job(const uint8_t *bytes, size_t size)
{
    char *in = fuzz_text(bytes, size);
    size_t n = 0;
    char **sels = datajob_selectors(in, &n);

    for (size_t i = 0; i < n; i++) {
        char *fdn;
        if (!sels[i] || !sels[i][0])
            fuzz_fail("an empty selector", in, "");
        fdn = datajob_fdn_prefix(sels[i]);
        if (!fdn)
            fuzz_fail("no FDN prefix", in, sels[i]);
        free(fdn);
    }
    datajob_strings_free(sels, n);
    free(in);
}

static int one(const uint8_t *bytes, size_t size)
{
    read_job(bytes, size);
    return write_job(bytes, size);
}

FUZZ_TARGET("datajob", one, tokens)
