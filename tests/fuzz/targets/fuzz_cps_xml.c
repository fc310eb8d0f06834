/* The CPS API's XML scanner (workers/cps/cps_xml.c): the elements of a
 * payload or a delta report, walked to the bottom; the text of each
 * element that holds no element; the payload made ready for libyang. What
 * it must promise: every element lies inside its text, in order, its
 * content inside it; what it refuses is a REJECT with a message; qualify
 * refuses what the scanner refuses at the top (and beyond it only inside a
 * data root), and what it writes is again well formed. */
#include <stdlib.h>
#include <string.h>

#include "cps_xml.h"
#include "fuzz_common.h"

static const char *const tokens[] = {
    "<a>",
    "</a>",
    "<a/>",
    "<p:a xmlns:p='u'>",
    "</p:a>",
    "xmlns=\"urn:x\"",
    " b='1'",
    "<!-- c -->",
    "<![CDATA[<]]>",
    "<?xml version='1.0'?>",
    "<!DOCTYPE a>",
    "&lt;",
    "&amp;",
    "&#65;",
    "&#x1F600;",
    "&#0;",
    "&bad;",
    "<data xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">",
    "</data>",
    "<deltaReports>",
    "<deltaReport>",
    "<action>create</action>",
    "<xpath>/a[@k='1']</xpath>",
    "<sourceData>",
    "</sourceData>",
};

static const char *ns_of(void *arg, const char *name, size_t len)
{
    (void)arg;
    return len && name[0] == 'n' ? NULL : "urn:n";
}

/* Walk `t` down to `depth` levels; returns the elements seen at the top. */
static size_t walk(const char *input, const char *t, size_t len, int depth)
{
    cps_xml_elem e;
    size_t pos = 0, n = 0, last_end = 0;
    ncmp_err err = {0};
    int r;

    while ((r = cps_xml_next(t, len, &pos, &e, &err)) == 1) {
        ncmp_buf text = NCMP_BUF_INIT;
        if (e.start < last_end || e.end > len || e.start >= e.end || pos != e.end ||
            e.content < t + e.start || e.content + e.content_len > t + e.end ||
            e.name != t + e.start + 1 || e.local < e.name || e.local_len == 0)
            fuzz_fail("an element outside its text", input, "");
        if (e.ns && (e.ns < t + e.start || e.ns + e.ns_len > e.content))
            fuzz_fail("a namespace outside its tag", input, "");
        last_end = e.end;
        n++;
        if (cps_xml_text_of(&e, &text, &err) != 0)
            fuzz_check_reject(input, &err);
        ncmp_buf_free(&text);
        if (depth < 8)
            walk(input, e.content, e.content_len, depth + 1);
    }
    if (r < 0)
        fuzz_check_reject(input, &err);
    return r < 0 ? (size_t)-1 : n;
}

static int one(const uint8_t *bytes, size_t size)
{
    char *t = fuzz_text(bytes, size);
    size_t len = strlen(t), n = walk(t, t, len, 0);
    ncmp_buf out = NCMP_BUF_INIT;
    ncmp_err err = {0};
    int ok = cps_xml_qualify(t, len, ns_of, NULL, &out, &err) == 0;

    /* qualify reads the same top level; it may refuse beyond it only
     * inside a data root it takes off */
    if ((ok && n == (size_t)-1) ||
        (!ok && n != (size_t)-1 && !strstr(t, "urn:ietf:params:xml:ns:netconf:base:1.0")))
        fuzz_fail("qualify and the scanner disagree", t, err.msg);
    if (!ok)
        fuzz_check_reject(t, &err);
    if (ok) {
        size_t m = walk(t, out.data ? out.data : "", out.len, 8);
        if (m == (size_t)-1)
            fuzz_fail("qualify wrote what the scanner refuses", t, out.data ? out.data : "");
    }
    ncmp_buf_free(&out);
    free(t);
    return ok;
}

FUZZ_TARGET("cps_xml", one, tokens)
