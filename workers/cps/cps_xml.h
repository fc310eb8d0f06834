/*
 * cps_xml: the little of XML the CPS API reads itself, before libyang
 * parses the data: the elements at the top of a text (a payload's nodes,
 * a delta report's entries), the text of a leaf-like element, and a
 * payload made ready for libyang as CPS makes it ready for its parser.
 *
 * The scanner walks the text in place and builds nothing. It is strict:
 * the elements at the top of a text, and every element in them, must be
 * well formed (start and end tags that match, quoted attributes,
 * comments, CDATA sections and processing instructions closed), text
 * other than white space between top-level elements is refused, and so is
 * a document type declaration (no entities but XML's five and character
 * references). What it does not check (names' characters, attribute
 * names twice, namespaces) libyang checks when it parses the data.
 */
#ifndef NCMPD_CPS_XML_H
#define NCMPD_CPS_XML_H

#include <stddef.h>

#include "ncmp_buf.h"
#include "ncmp_err.h"

/* Elements nested deeper than this are refused. */
#define CPS_XML_MAX_DEPTH 256

/* One element, pointing into the text. */
typedef struct cps_xml_elem {
    const char *name; /* as written, with its prefix */
    size_t name_len;
    const char *local; /* the name without its prefix */
    size_t local_len;
    const char *content; /* between the start and the end tag ("" for <x/>) */
    size_t content_len;
    size_t start, end; /* the element's bytes: text[start..end) */
    size_t name_end;   /* where the name ends in the start tag */
    const char *ns;    /* the value of its xmlns="..." as written, NULL if none */
    size_t ns_len;
} cps_xml_elem;

/* The next element at the top of text[*pos..len): white space, comments
 * and processing instructions (an XML declaration) before it are passed
 * over. 1 and *e when there is one, *pos after it; 0 at the end of the
 * text; -1 (NCMP_ERR_REJECT, saying what and where) when the text is not
 * well formed. */
int cps_xml_next(const char *text, size_t len, size_t *pos, cps_xml_elem *e, ncmp_err *err);

/* The text of an element that holds no element: its characters with the
 * five entities and character references decoded and CDATA sections taken
 * as they are, comments left out, appended to `out`. -1 when it holds an
 * element or an entity that is not one. */
int cps_xml_text_of(const cps_xml_elem *e, ncmp_buf *out, ncmp_err *err);

/* The namespace to give a top-level element `name` (local name, len
 * bytes) that has none: NULL to leave it without. */
typedef const char *(*cps_xml_ns_fn)(void *arg, const char *name, size_t len);

/* A payload made ready for libyang, as CPS prepares one for its parser:
 * a `data` root in NETCONF's base namespace (the data root of CPS's
 * parser) is taken off, and each top-level element written without a
 * prefix or a default namespace gets xmlns="ns(name)" (its children
 * inherit it, as XML's default namespace is inherited). Appended to
 * `out`; -1 when the payload is not well formed. */
int cps_xml_qualify(const char *text, size_t len, cps_xml_ns_fn ns, void *arg, ncmp_buf *out,
                    ncmp_err *err);

#endif
