/* workers/cps/cps_xml.c: the top-level elements of a text, an element's
 * text, and a payload made ready for libyang. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cps_xml.h"

/* The top-level elements of `text` as "name[content]" joined by spaces,
 * or "error: <message>". */
static void tops(const char *text, char *out, size_t size)
{
    cps_xml_elem e;
    size_t pos = 0, n = 0;
    ncmp_err err;
    int r;

    out[0] = '\0';
    while ((r = cps_xml_next(text, strlen(text), &pos, &e, &err)) == 1) {
        cr_assert(e.start < e.end && e.end <= strlen(text));
        cr_assert(e.content >= text + e.start && e.content + e.content_len <= text + e.end);
        n += (size_t)snprintf(out + n, size - n, "%s%.*s[%.*s]", n ? " " : "", (int)e.name_len,
                              e.name, (int)e.content_len, e.content);
    }
    if (r < 0)
        snprintf(out, size, "error: %s", err.msg);
}

Test(cps_xml, top_level_elements)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"", ""},
        {"  \n ", ""},
        {"<a/>", "a[]"},
        {"<a></a>", "a[]"},
        {"<?xml version='1.0'?>\n<a>x</a>", "a[x]"},
        {"<!-- c --><a>1</a> <b x='1' y=\"2\">2</b><?pi?>", "a[1] b[2]"},
        {"<a><a><a/></a></a><b/>", "a[<a><a/></a>] b[]"},
        {"<p:a xmlns:p='u'><p:b/></p:a>", "p:a[<p:b/>]"},
        {"<a><![CDATA[</a>]]></a>", "a[<![CDATA[</a>]]>]"},
        {"<a><!-- </a> --></a>", "a[<!-- </a> -->]"},
        {"<a >t</a >", "a[t]"},
        {"<a>", "error: <a> at byte 0 is not closed"},
        {"<a></b>", "error: the end tag at byte 3 does not close <a>"},
        {"<a><b></a></b>", "error: the end tag at byte 6 does not close <b>"},
        {"x<a/>", "error: text outside an element at byte 0"},
        {"<a/>x", "error: text outside an element at byte 4"},
        {"<!DOCTYPE a><a/>", "error: a declaration (<!...) at byte 0 is not accepted"},
        {"<a><!ENTITY x 'y'></a>", "error: a declaration (<!...) at byte 3 is not accepted"},
        {"<!-- <a/>", "error: a comment at byte 0 is not closed"},
        {"<a><![CDATA[x</a>", "error: a CDATA section at byte 3 is not closed"},
        {"<![CDATA[x]]>", "error: a CDATA section outside an element at byte 0"},
        {"<a b></a>", "error: an attribute without a value at byte 3"},
        {"<a b=1></a>", "error: an attribute value without quotes at byte 5"},
        {"<a b='1></a>", "error: an attribute value at byte 6 is not closed"},
        {"<a b='1'c='2'/>", "error: a malformed attribute at byte 8"},
        {"<>", "error: a tag without a name at byte 0"},
        {"<p:>x</p:>", "error: a tag without a name at byte 0"},
        {"<a", "error: the tag at byte 0 is not closed"},
        {"<a></a", "error: the end tag at byte 3 is not closed"},
    };
    char got[512];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tops(cases[i].in, got, sizeof(got));
        cr_expect_str_eq(got, cases[i].want, "%s", cases[i].in);
    }
}

Test(cps_xml, the_default_namespace_is_read_from_the_start_tag)
{
    cps_xml_elem e;
    size_t pos = 0;
    ncmp_err err;
    const char *t = "<a xmlns:p='x' xmlns = \"urn:y\"/><b xmlns:q='z'/>";

    cr_assert_eq(cps_xml_next(t, strlen(t), &pos, &e, &err), 1);
    cr_assert_not_null(e.ns);
    cr_expect_eq(e.ns_len, 5);
    cr_expect(memcmp(e.ns, "urn:y", 5) == 0);
    cr_assert_eq(cps_xml_next(t, strlen(t), &pos, &e, &err), 1);
    cr_expect_null(e.ns);
    cr_expect_eq(cps_xml_next(t, strlen(t), &pos, &e, &err), 0);
}

Test(cps_xml, nesting_is_bounded)
{
    char deep[2 * (CPS_XML_MAX_DEPTH + 1) * 4 + 1];
    char got[512];
    size_t n = 0;

    for (int i = 0; i < CPS_XML_MAX_DEPTH; i++)
        n += (size_t)snprintf(deep + n, sizeof(deep) - n, "<a>");
    for (int i = 0; i < CPS_XML_MAX_DEPTH; i++)
        n += (size_t)snprintf(deep + n, sizeof(deep) - n, "</a>");
    tops(deep, got, sizeof(got));
    cr_expect(strncmp(got, "a[", 2) == 0, "%.80s", got);
    n = 0;
    for (int i = 0; i <= CPS_XML_MAX_DEPTH; i++)
        n += (size_t)snprintf(deep + n, sizeof(deep) - n, "<a>");
    tops(deep, got, sizeof(got));
    cr_expect(strstr(got, "nested deeper than 256"), "%s", got);
}

/* text_of of the only element of `t`: the text, or "error: ...". */
static void text_of(const char *t, char *out, size_t size)
{
    cps_xml_elem e;
    size_t pos = 0;
    ncmp_err err;
    ncmp_buf b = NCMP_BUF_INIT;

    cr_assert_eq(cps_xml_next(t, strlen(t), &pos, &e, &err), 1, "%s", t);
    if (cps_xml_text_of(&e, &b, &err) == 0)
        snprintf(out, size, "%.*s", (int)b.len, b.len ? b.data : "");
    else
        snprintf(out, size, "error: %s", err.msg);
    ncmp_buf_free(&b);
}

Test(cps_xml, the_text_of_an_element)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"<x/>", ""},
        {"<x>/a/b[@k='1']</x>", "/a/b[@k='1']"},
        {"<x>&lt;&gt;&amp;&quot;&apos;</x>", "<>&\"'"},
        {"<x>&#65;&#x42;&#x20AC;&#x1F600;</x>", "AB\xe2\x82\xac\xf0\x9f\x98\x80"},
        {"<x>a<!-- b -->c<![CDATA[<d>&amp;]]></x>", "ac<d>&amp;"},
        {"<x>&nbsp;</x>", "error: an unknown entity at byte 0"},
        {"<x>&#0;</x>", "error: a bad character reference at byte 0"},
        {"<x>&#xD800;</x>", "error: a bad character reference at byte 0"},
        {"<x>&#x110000;</x>", "error: a bad character reference at byte 0"},
        {"<x>&#12</x>", "error: a bad character reference at byte 0"},
        {"<x>&#;</x>", "error: a bad character reference at byte 0"},
        {"<x>a<y/></x>", "error: <x> holds an element at byte 1"},
    };
    char got[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        text_of(cases[i].in, got, sizeof(got));
        cr_expect_str_eq(got, cases[i].want, "%s", cases[i].in);
    }
}

static const char *ns_of(void *arg, const char *name, size_t len)
{
    (void)arg;
    return len == 1 && name[0] == 'u' ? NULL : "urn:m\"1";
}

static void qualify(const char *in, char *out, size_t size)
{
    ncmp_buf b = NCMP_BUF_INIT;
    ncmp_err err;

    if (cps_xml_qualify(in, strlen(in), ns_of, NULL, &b, &err) == 0)
        snprintf(out, size, "%.*s", (int)b.len, b.len ? b.data : "");
    else
        snprintf(out, size, "error: %s", err.msg);
    ncmp_buf_free(&b);
}

Test(cps_xml, a_payload_is_made_ready_for_libyang_as_cps_makes_it_ready)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        /* top-level elements without a namespace get one; children inherit it */
        {"<a><b>1</b></a> <c/>",
         "<a xmlns=\"urn:m&#34;1\"><b>1</b></a> <c xmlns=\"urn:m&#34;1\"/>"},
        /* one that says its namespace, or has a prefix, is left as it is */
        {"<a xmlns='urn:x'/><p:a xmlns:p='urn:y'/>", "<a xmlns='urn:x'/><p:a xmlns:p='urn:y'/>"},
        /* a name no module has: left without (libyang says so) */
        {"<u/>", "<u/>"},
        /* the XML declaration and comments stay */
        {"<?xml version='1.0'?><!--c--><a/>",
         "<?xml version='1.0'?><!--c--><a xmlns=\"urn:m&#34;1\"/>"},
        /* CPS's data root in NETCONF's namespace comes off */
        {"<data xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"><a/><b/></data>",
         "<a xmlns=\"urn:m&#34;1\"/><b xmlns=\"urn:m&#34;1\"/>"},
        /* only that one, and only at the top */
        {"<data><a/></data>", "<data xmlns=\"urn:m&#34;1\"><a/></data>"},
        {"<data xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"><data "
         "xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"/></data>",
         "<data xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\"/>"},
        {"<a>", "error: <a> at byte 0 is not closed"},
    };
    char got[512];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        qualify(cases[i].in, got, sizeof(got));
        cr_expect_str_eq(got, cases[i].want, "%s", cases[i].in);
    }
}
