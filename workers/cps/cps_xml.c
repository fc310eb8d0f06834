#include "cps_xml.h"

#include <string.h>

#define NETCONF_BASE_NS "urn:ietf:params:xml:ns:netconf:base:1.0"

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int name_char(char c)
{
    return c && !is_ws(c) && !strchr("/<>=\"'&", c);
}

static int starts(const char *t, size_t len, size_t i, const char *lit)
{
    size_t n = strlen(lit);
    return i <= len && len - i >= n && memcmp(t + i, lit, n) == 0;
}

/* Where `lit` next starts in t[i..len), or len when it does not. */
static size_t find(const char *t, size_t len, size_t i, const char *lit)
{
    size_t n = strlen(lit);

    for (; i + n <= len; i++)
        if (t[i] == lit[0] && memcmp(t + i, lit, n) == 0)
            return i;
    return len;
}

/* Pass over the markup at t[*i] that is not an element: a comment, a
 * CDATA section (only where `cdata`), a processing instruction. 1 when
 * there was one, 0 when there is none, -1 when it is not closed or is a
 * declaration XML data does not need (a DTD). */
static int other_markup(const char *t, size_t len, size_t *i, int cdata, ncmp_err *err)
{
    static const struct {
        const char *open, *close, *what;
    } kinds[] = {{"<!--", "-->", "a comment"},
                 {"<![CDATA[", "]]>", "a CDATA section"},
                 {"<?", "?>", "a processing instruction"}};

    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        size_t at;
        if (!starts(t, len, *i, kinds[k].open))
            continue;
        if (k == 1 && !cdata)
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "a CDATA section outside an element at byte %zu", *i);
        at = find(t, len, *i + strlen(kinds[k].open), kinds[k].close);
        if (at == len)
            return ncmp_err_set(err, NCMP_ERR_REJECT, "%s at byte %zu is not closed", kinds[k].what,
                                *i);
        *i = at + strlen(kinds[k].close);
        return 1;
    }
    if (starts(t, len, *i, "<!"))
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "a declaration (<!...) at byte %zu is not accepted", *i);
    return 0;
}

/* White space, comments and processing instructions. */
static int skip_misc(const char *t, size_t len, size_t *i, ncmp_err *err)
{
    for (;;) {
        int r;
        while (*i < len && is_ws(t[*i]))
            (*i)++;
        if (*i >= len || t[*i] != '<')
            return 0;
        if ((r = other_markup(t, len, i, 0, err)) <= 0)
            return r;
    }
}

/* A start tag at t[*i] == '<': its name, its default namespace, whether
 * it closes itself; *i after its '>'. */
static int start_tag(const char *t, size_t len, size_t *i, cps_xml_elem *e, int *empty,
                     ncmp_err *err)
{
    size_t p = *i + 1, at = *i;

    e->name = t + p;
    while (p < len && name_char(t[p]))
        p++;
    e->name_len = (size_t)(t + p - e->name);
    if (!e->name_len)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "a tag without a name at byte %zu", at);
    e->name_end = p;
    e->local = memchr(e->name, ':', e->name_len);
    e->local = e->local ? e->local + 1 : e->name;
    e->local_len = e->name_len - (size_t)(e->local - e->name);
    if (!e->local_len)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "a tag without a name at byte %zu", at);
    e->ns = NULL;
    e->ns_len = 0;
    for (;;) {
        size_t ws = p, an, vs;
        char q;
        while (p < len && is_ws(t[p]))
            p++;
        if (p < len && t[p] == '>') {
            *empty = 0;
            *i = p + 1;
            return 0;
        }
        if (p + 1 < len && t[p] == '/' && t[p + 1] == '>') {
            *empty = 1;
            *i = p + 2;
            return 0;
        }
        if (p >= len)
            break;
        if (p == ws || !name_char(t[p]))
            return ncmp_err_set(err, NCMP_ERR_REJECT, "a malformed attribute at byte %zu", p);
        an = p;
        while (p < len && name_char(t[p]))
            p++;
        while (p < len && is_ws(t[p]))
            p++;
        if (p >= len || t[p] != '=')
            return ncmp_err_set(err, NCMP_ERR_REJECT, "an attribute without a value at byte %zu",
                                an);
        p++;
        while (p < len && is_ws(t[p]))
            p++;
        if (p >= len || (t[p] != '"' && t[p] != '\''))
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "an attribute value without quotes at byte %zu", p);
        q = t[p++];
        vs = p;
        while (p < len && t[p] != q && t[p] != '<')
            p++;
        if (p >= len || t[p] != q)
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "an attribute value at byte %zu is not closed", vs);
        if (starts(t, len, an, "xmlns") && !name_char(t[an + 5])) {
            e->ns = t + vs;
            e->ns_len = p - vs;
        }
        p++;
    }
    return ncmp_err_set(err, NCMP_ERR_REJECT, "the tag at byte %zu is not closed", at);
}

/* The element at t[*i] == '<', with every element inside it. */
static int element(const char *t, size_t len, size_t *i, cps_xml_elem *e, ncmp_err *err)
{
    const char *open[CPS_XML_MAX_DEPTH];
    size_t open_len[CPS_XML_MAX_DEPTH];
    int depth = 0, empty;

    e->start = *i;
    if (start_tag(t, len, i, e, &empty, err) != 0)
        return -1;
    e->content = t + *i;
    e->content_len = 0;
    if (empty) {
        e->end = *i;
        return 0;
    }
    open[depth] = e->name;
    open_len[depth++] = e->name_len;
    while (*i < len) {
        size_t lt = find(t, len, *i, "<"), p, n;
        cps_xml_elem child;
        int r;

        if (lt == len)
            break;
        *i = lt;
        if ((r = other_markup(t, len, i, 1, err)) != 0) {
            if (r < 0)
                return -1;
            continue;
        }
        if (!starts(t, len, lt, "</")) {
            if (start_tag(t, len, i, &child, &empty, err) != 0)
                return -1;
            if (!empty) {
                if (depth == CPS_XML_MAX_DEPTH)
                    return ncmp_err_set(err, NCMP_ERR_REJECT,
                                        "elements nested deeper than %d at byte %zu",
                                        CPS_XML_MAX_DEPTH, lt);
                open[depth] = child.name;
                open_len[depth++] = child.name_len;
            }
            continue;
        }
        p = lt + 2;
        n = 0;
        while (p + n < len && name_char(t[p + n]))
            n++;
        if (n != open_len[depth - 1] || memcmp(t + p, open[depth - 1], n) != 0)
            return ncmp_err_set(
                err, NCMP_ERR_REJECT, "the end tag at byte %zu does not close <%.*s>", lt,
                (int)(open_len[depth - 1] < 64 ? open_len[depth - 1] : 64), open[depth - 1]);
        p += n;
        while (p < len && is_ws(t[p]))
            p++;
        if (p >= len || t[p] != '>')
            return ncmp_err_set(err, NCMP_ERR_REJECT, "the end tag at byte %zu is not closed", lt);
        *i = p + 1;
        if (--depth == 0) {
            e->content_len = lt - (size_t)(e->content - t);
            e->end = *i;
            return 0;
        }
    }
    return ncmp_err_set(err, NCMP_ERR_REJECT, "<%.*s> at byte %zu is not closed",
                        (int)(e->name_len < 64 ? e->name_len : 64), e->name, e->start);
}

int cps_xml_next(const char *text, size_t len, size_t *pos, cps_xml_elem *e, ncmp_err *err)
{
    if (skip_misc(text, len, pos, err) != 0)
        return -1;
    if (*pos >= len)
        return 0;
    if (text[*pos] != '<')
        return ncmp_err_set(err, NCMP_ERR_REJECT, "text outside an element at byte %zu", *pos);
    return element(text, len, pos, e, err) == 0 ? 1 : -1;
}

/* Append code point `c` as UTF-8. */
static void utf8(ncmp_buf *out, unsigned long c)
{
    if (c < 0x80) {
        ncmp_buf_append_char(out, (char)c);
    } else if (c < 0x800) {
        ncmp_buf_append_char(out, (char)(0xc0 | (c >> 6)));
        ncmp_buf_append_char(out, (char)(0x80 | (c & 0x3f)));
    } else if (c < 0x10000) {
        ncmp_buf_append_char(out, (char)(0xe0 | (c >> 12)));
        ncmp_buf_append_char(out, (char)(0x80 | ((c >> 6) & 0x3f)));
        ncmp_buf_append_char(out, (char)(0x80 | (c & 0x3f)));
    } else {
        ncmp_buf_append_char(out, (char)(0xf0 | (c >> 18)));
        ncmp_buf_append_char(out, (char)(0x80 | ((c >> 12) & 0x3f)));
        ncmp_buf_append_char(out, (char)(0x80 | ((c >> 6) & 0x3f)));
        ncmp_buf_append_char(out, (char)(0x80 | (c & 0x3f)));
    }
}

/* The entity at t[*i] == '&'; *i after its ';'. */
static int entity(const char *t, size_t len, size_t *i, ncmp_buf *out, ncmp_err *err)
{
    static const struct {
        const char *name;
        char c;
    } named[] = {{"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}};
    unsigned long c = 0;
    size_t p = *i + 2, digits = 0;
    int hex;

    for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++)
        if (starts(t, len, *i, named[k].name)) {
            ncmp_buf_append_char(out, named[k].c);
            *i += strlen(named[k].name);
            return 0;
        }
    if (!starts(t, len, *i, "&#"))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "an unknown entity at byte %zu", *i);
    hex = p < len && t[p] == 'x';
    p += (size_t)hex;
    for (; p < len && t[p] != ';' && digits < 8; p++, digits++) {
        char d = t[p];
        if (d >= '0' && d <= '9')
            c = c * (hex ? 16 : 10) + (unsigned long)(d - '0');
        else if (hex && ((d | 0x20) >= 'a' && (d | 0x20) <= 'f'))
            c = c * 16 + (unsigned long)((d | 0x20) - 'a' + 10);
        else
            break;
    }
    if (p >= len || t[p] != ';' || !digits || c == 0 || c > 0x10ffff ||
        (c >= 0xd800 && c <= 0xdfff))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "a bad character reference at byte %zu", *i);
    utf8(out, c);
    *i = p + 1;
    return 0;
}

int cps_xml_text_of(const cps_xml_elem *e, ncmp_buf *out, ncmp_err *err)
{
    const char *t = e->content;
    size_t len = e->content_len, i = 0;

    while (i < len) {
        if (t[i] == '&') {
            if (entity(t, len, &i, out, err) != 0)
                return -1;
        } else if (t[i] == '<') {
            size_t at = i;
            if (starts(t, len, i, "<![CDATA[")) {
                size_t end = find(t, len, i + 9, "]]>");
                ncmp_buf_append(out, t + i + 9, end - i - 9);
                i = end + 3;
            } else if (other_markup(t, len, &i, 0, err) <= 0) {
                return ncmp_err_set(err, NCMP_ERR_REJECT, "<%.*s> holds an element at byte %zu",
                                    (int)(e->name_len < 64 ? e->name_len : 64), e->name, at);
            }
        } else {
            ncmp_buf_append_char(out, t[i++]);
        }
    }
    return 0;
}

static int data_root(const cps_xml_elem *e)
{
    return e->name_len == 4 && memcmp(e->name, "data", 4) == 0 && e->ns &&
           e->ns_len == strlen(NETCONF_BASE_NS) && memcmp(e->ns, NETCONF_BASE_NS, e->ns_len) == 0;
}

/* qualify's work at one level, in one pass: `unwrap` allows taking off a
 * data root (the text's only element). */
static int qualify(const char *t, size_t len, cps_xml_ns_fn ns, void *arg, ncmp_buf *out,
                   int unwrap, ncmp_err *err)
{
    cps_xml_elem e, more;
    size_t pos = 0, prev = 0;
    int r;

    while ((r = cps_xml_next(t, len, &pos, &e, err)) == 1) {
        const char *v = NULL;
        if (unwrap && prev == 0 && data_root(&e)) {
            size_t after = pos;
            int next = cps_xml_next(t, len, &after, &more, err);
            if (next < 0)
                return -1;
            if (next == 0)
                return qualify(e.content, e.content_len, ns, arg, out, 0, err);
        }
        ncmp_buf_append(out, t + prev, e.start - prev);
        if (e.name_len == e.local_len && !e.ns)
            v = ns(arg, e.local, e.local_len);
        if (v) {
            ncmp_buf_append(out, t + e.start, e.name_end - e.start);
            ncmp_buf_append_str(out, " xmlns=\"");
            for (const char *c = v; *c; c++) {
                if (*c == '"' || *c == '&' || *c == '<')
                    ncmp_buf_appendf(out, "&#%d;", *c);
                else
                    ncmp_buf_append_char(out, *c);
            }
            ncmp_buf_append_char(out, '"');
            ncmp_buf_append(out, t + e.name_end, e.end - e.name_end);
        } else {
            ncmp_buf_append(out, t + e.start, e.end - e.start);
        }
        prev = e.end;
    }
    if (r < 0)
        return -1;
    ncmp_buf_append(out, t + prev, len - prev);
    return 0;
}

int cps_xml_qualify(const char *text, size_t len, cps_xml_ns_fn ns, void *arg, ncmp_buf *out,
                    ncmp_err *err)
{
    return qualify(text, len, ns, arg, out, 1, err);
}
