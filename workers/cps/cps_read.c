/*
 * The CPS store's reads: a node with its descendants, and CPS-path
 * queries over one anchor or across a dataspace's anchors.
 *
 * Every answer is one range scan (or one join of the matches with their
 * ranges) read through a cursor in key order (0008's comment explains
 * why a subtree's rows arrive as a depth-first walk), and written out as
 * nested JSON or as XML while the rows arrive: memory stays flat with
 * the size of the answer.
 */
#include <libyang/libyang.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cps_internal.h"
#include "cps_path.h"
#include "cps_query.h"
#include "ncmp_buf.h"
#include "ncmp_json.h"
#include "ncmp_log.h"

#define READ_BLOCK 5000

/* --- reads ---------------------------------------------------------------- */

/* How deep below the requested nodes a read goes: -1 all, 0 none, N. */
static int descendants_option(ncmp_http_request *req, int version, int *depth)
{
    const char *d;

    if (version == 1) {
        int all = 0;
        if (ncmp_http_query_bool(req, "include-descendants", 0, &all) != 0)
            return -1;
        *depth = all ? -1 : 0;
        return 0;
    }
    d = ncmp_http_query(req, "descendants");
    if (!d || strcmp(d, "none") == 0 || strcmp(d, "0") == 0) {
        *depth = 0;
    } else if (strcmp(d, "direct") == 0 || strcmp(d, "1") == 0) {
        *depth = 1;
    } else if (strcmp(d, "all") == 0 || strcmp(d, "-1") == 0) {
        *depth = -1;
    } else {
        char *end;
        long n = strtol(d, &end, 10);
        if (*end || end == d || n < -1 || n > 10000)
            return -1;
        *depth = (int)n;
    }
    return 0;
}

/* descendants_option, answering 400 when the value is not one. */
int cps_descendants_asked(ncmp_http_request *req, int version, int *depth)
{
    if (descendants_option(req, version, depth) == 0)
        return 0;
    ncmp_http_respond_error(req, 400, "Invalid request",
                            "descendants must be none, direct, all or a number >= -1");
    return -1;
}

/* One open node of the JSON being written. */
typedef struct frame {
    size_t path_len; /* its stored path: the first path_len bytes of tree_writer.path */
    int members;     /* something is written inside its object */
    char list[256];  /* the list whose entries are open as an array, "" none */
} frame;

#define TW_MAX_DEPTH 128

/* The tree writer: rows (path, depth, attributes) in stored-path order
 * in, nested JSON out. Every open node's path is a prefix of the deepest
 * open node's, so one buffer holds them all. */
typedef struct tree_writer {
    int version;       /* 1: one node; 2: a list of {name: node}; 3: one map */
    int group_entries; /* v3: top list entries go in an array (a list or the root was read) */
    char prefix[128];  /* the module prefix of the top nodes */
    ncmp_buf path;     /* the deepest open node's stored path */
    frame stack[TW_MAX_DEPTH];
    int nstack;
    int tops;           /* top nodes written */
    char top_list[256]; /* v3: the list whose top entries are open as an array */
    int done;           /* v1: the first node is complete */
    int rows;           /* rows seen */
    /* for the answer when there is no row */
    const char *xpath, *anchor, *dataspace;
    int root;
    cps_schema *schema; /* held for the prefix lookup */
    /* queries: column 3 names the match a row belongs to (a new value
     * starts a new top node, even inside the last one's subtree); with
     * by_anchor, column 4 is the anchor's name and the answer is CPS's
     * [{"anchorName", "dataNodes": [...]}] */
    int grouped, by_anchor;
    ncmp_buf group, anchor_now;
    /* by_anchor: the schema of each schema set (column 5 names it); then
     * `schema` is one of these, borrowed */
    cps_schema **schemas;
    char (*schema_ids)[24];
    size_t nschemas;
    char prefix_of[256];             /* the first step cps_top_module was last asked for */
    const struct lys_module *module; /* its module (NULL: none has it) */
    int xml;                         /* cps_tree_writer_new: which writer the rows go to */
    /* closes the innermost open node: JSON's or XML's, set by the head */
    void (*close)(struct tree_writer *w, ncmp_buf *out);
} tree_writer;

/* Is `path` inside the node whose path is p[0..plen)? */
static int inside(const char *path, size_t len, const char *p, size_t plen)
{
    return len > plen && memcmp(path, p, plen) == 0 && path[plen] == CPS_PATH_SEP;
}

static int same_name(const char *list, const char *name, size_t nlen)
{
    return list[0] && strlen(list) == nlen && memcmp(list, name, nlen) == 0;
}

static void set_name(char *dst, size_t size, const char *name, size_t nlen)
{
    if (nlen >= size)
        nlen = size - 1;
    memcpy(dst, name, nlen);
    dst[nlen] = '\0';
}

static void tw_close_frame(tree_writer *w, ncmp_buf *out)
{
    frame *f = &w->stack[--w->nstack];

    if (f->list[0])
        ncmp_buf_append_char(out, ']');
    ncmp_buf_append_char(out, '}');
}

static void tw_head(void *arg, ncmp_buf *out)
{
    tree_writer *w = arg;

    w->close = tw_close_frame;
    ncmp_buf_append_char(out, w->version == 2 ? '[' : '{');
}

/* `"[prefix:]name":` for the last step of `path`. */
static void member_name(ncmp_buf *out, const char *prefix, const char *name, size_t nlen)
{
    ncmp_buf_append_char(out, '"');
    if (prefix && prefix[0]) {
        ncmp_buf_append_str(out, prefix);
        ncmp_buf_append_char(out, ':');
    }
    ncmp_buf_append(out, name, nlen);
    ncmp_buf_append_str(out, "\":");
}

/* The members of a jsonb object's text, braces dropped; whether any. */
static int append_members(ncmp_buf *out, const char *json, size_t len)
{
    if (len <= 2)
        return 0;
    ncmp_buf_append(out, json + 1, len - 2);
    return 1;
}

/* A top node: its member name (and the brackets around it) in the answer. */
static void tw_top(tree_writer *w, ncmp_buf *out, int entry, const char *name, size_t nlen)
{
    if (w->version == 2) {
        if (w->tops)
            ncmp_buf_append_str(out, "},"); /* the previous node's {name: node} */
        ncmp_buf_append_char(out, '{');
        member_name(out, w->prefix, name, nlen);
        return;
    }
    if (w->version == 3 && entry && w->group_entries && same_name(w->top_list, name, nlen)) {
        ncmp_buf_append_char(out, ',');
        return;
    }
    if (w->top_list[0]) {
        ncmp_buf_append_char(out, ']');
        w->top_list[0] = '\0';
    }
    if (w->tops)
        ncmp_buf_append_char(out, ',');
    member_name(out, w->prefix, name, nlen);
    if (w->version == 3 && entry && w->group_entries) {
        ncmp_buf_append_char(out, '[');
        set_name(w->top_list, sizeof(w->top_list), name, nlen);
    }
}

/* A node inside the open node `p`. */
static void tw_child(frame *p, ncmp_buf *out, int entry, const char *name, size_t nlen)
{
    if (p->list[0] && !(entry && same_name(p->list, name, nlen))) {
        ncmp_buf_append_char(out, ']');
        p->list[0] = '\0';
    }
    if (entry && p->list[0]) {
        ncmp_buf_append_char(out, ',');
    } else {
        if (p->members)
            ncmp_buf_append_char(out, ',');
        member_name(out, NULL, name, nlen);
        if (entry) {
            ncmp_buf_append_char(out, '[');
            set_name(p->list, sizeof(p->list), name, nlen);
        }
    }
    p->members = 1;
}

/* The prefix of the top node at `path`: its first step's module's, as
 * CPS's prefix resolver gives it. */
static void tw_prefix(tree_writer *w, const char *path)
{
    const char *first;
    size_t flen;
    const struct lys_module *mod;

    cps_path_first_name(path, &first, &flen);
    if (strlen(w->prefix_of) == flen && memcmp(w->prefix_of, first, flen) == 0)
        return;
    set_name(w->prefix_of, sizeof(w->prefix_of), first, flen);
    mod = cps_top_module(cps_schema_ctx(w->schema), first, flen);
    w->module = mod;
    snprintf(w->prefix, sizeof(w->prefix), "%s", mod ? mod->prefix : "");
}

/* Does column `col` of the row differ from `seen` (then remembered)? */
static int column_changed(const PGresult *res, int row, int col, ncmp_buf *seen)
{
    const char *v = PQgetvalue(res, row, col);
    size_t len = (size_t)PQgetlength(res, row, col);

    if (seen->data && seen->len == len && memcmp(seen->data, v, len) == 0)
        return 0;
    ncmp_buf_reset(seen);
    ncmp_buf_append(seen, v, len);
    ncmp_buf_append_char(seen, '\0');
    seen->len--;
    return 1;
}

static void tw_close_all(tree_writer *w, ncmp_buf *out)
{
    while (w->nstack > 0)
        w->close(w, out);
}

/* A row of the next match: whatever is open is complete. */
static void tw_group(tree_writer *w, const PGresult *res, int row, ncmp_buf *out)
{
    if (column_changed(res, row, 3, &w->group))
        tw_close_all(w, out);
}

/* A row of the next anchor: close its predecessor's dataNodes. */
static void tw_anchor(tree_writer *w, const PGresult *res, int row, ncmp_buf *out)
{
    int first = w->anchor_now.data == NULL;

    if (!column_changed(res, row, 4, &w->anchor_now))
        return;
    tw_close_all(w, out);
    if (!first)
        ncmp_buf_append_str(out, w->tops ? "}]}," : "]},");
    ncmp_buf_append_str(out, "{\"anchorName\":");
    ncmp_buf_append_json_string(out, w->anchor_now.data);
    ncmp_buf_append_str(out, ",\"dataNodes\":[");
    w->tops = 0;
    for (size_t i = 0; i < w->nschemas; i++)
        if (strcmp(w->schema_ids[i], PQgetvalue(res, row, 5)) == 0 && w->schema != w->schemas[i]) {
            w->schema = w->schemas[i];
            w->prefix_of[0] = '\0'; /* prefixes come from this schema now */
        }
    ncmp_buf_reset(&w->group); /* the same path in the next anchor is a new match */
}

/* What the JSON and the XML writer do alike for a row: count it, start a
 * new anchor or match, close the open nodes the row is not inside of.
 * Returns 0 when the row is to be written (a top node when nothing is
 * open, its prefix and module then found), -1 when it is not (v1's
 * answer is complete). */
static int tw_enter(tree_writer *w, const char *path, size_t len, const PGresult *res, int row,
                    ncmp_buf *out)
{
    w->rows++;
    if (w->done)
        return -1;
    if (w->by_anchor && res)
        tw_anchor(w, res, row, out);
    if (w->grouped && res)
        tw_group(w, res, row, out);
    while (w->nstack > 0 && !inside(path, len, w->path.data, w->stack[w->nstack - 1].path_len))
        w->close(w, out);
    if (w->nstack == 0) {
        if (w->version == 1 && w->tops > 0) {
            w->done = 1;
            return -1;
        }
        if (w->schema) /* none: names without prefixes (the delta report's data) */
            tw_prefix(w, path);
    }
    return 0;
}

/* Open the node of the row (stored path `path`) as the innermost one. */
static frame *tw_push(tree_writer *w, const char *path, size_t len)
{
    frame *f = &w->stack[w->nstack++];

    ncmp_buf_reset(&w->path);
    ncmp_buf_append(&w->path, path, len);
    f->path_len = len;
    f->list[0] = '\0';
    return f;
}

/* A row (path, attributes) of the answer, from a result's row `row`
 * (res NULL: from the text given). */
static void tw_write(tree_writer *w, const char *path, size_t len, const char *attrs, size_t alen,
                     const PGresult *res, int row, ncmp_buf *out)
{
    int entry = cps_path_is_list_entry(path, len);
    const char *name;
    size_t nlen;

    if (tw_enter(w, path, len, res, row, out) != 0)
        return;
    cps_path_last_name(path, len, &name, &nlen);
    if (w->nstack == 0) {
        tw_top(w, out, entry, name, nlen);
        w->tops++;
    } else {
        tw_child(&w->stack[w->nstack - 1], out, entry, name, nlen);
    }
    ncmp_buf_append_char(out, '{');
    if (w->nstack == TW_MAX_DEPTH) { /* deeper than any model: its subtree is left out */
        ncmp_buf_append_char(out, '}');
        return;
    }
    tw_push(w, path, len)->members = append_members(out, attrs, alen);
}

static void tw_row(void *arg, const PGresult *res, int row, ncmp_buf *out)
{
    tw_write(arg, PQgetvalue(res, row, 0), (size_t)PQgetlength(res, row, 0),
             PQgetvalue(res, row, 2), (size_t)PQgetlength(res, row, 2), res, row, out);
}

static void tw_tail(void *arg, ncmp_buf *out)
{
    tree_writer *w = arg;

    tw_close_all(w, out);
    if (w->by_anchor && w->anchor_now.data)
        ncmp_buf_append_str(out, w->tops ? "}]}" : "]}");
    if (w->version == 2) {
        if (w->tops && !w->by_anchor)
            ncmp_buf_append_char(out, '}');
        ncmp_buf_append_char(out, ']');
        return;
    }
    if (w->top_list[0])
        ncmp_buf_append_char(out, ']');
    ncmp_buf_append_char(out, '}');
}

/* No row: the root of an empty anchor is an empty answer, anything else
 * is CPS's 404. */
static int tw_empty(void *arg, ncmp_http_request *req)
{
    tree_writer *w = arg;

    if (w->root)
        return 0;
    cps_respond_error(req, 404, "DataNode not found",
                      "DataNode with xpath %s was not found for anchor %s and dataspace %s.",
                      w->xpath, w->anchor, w->dataspace);
    return 1;
}

static void tw_free(void *arg)
{
    tree_writer *w = arg;

    ncmp_buf_free(&w->path);
    ncmp_buf_free(&w->group);
    ncmp_buf_free(&w->anchor_now);
    if (w->nschemas) {
        for (size_t i = 0; i < w->nschemas; i++)
            cps_schema_release(w->schemas[i]);
    } else {
        cps_schema_release(w->schema);
    }
    free(w->schemas);
    free(w->schema_ids);
    free(w);
}

/* in key order: the fragments of an anchor were written by COPY in key
 * order (rest_db.h, REST_DB_KEY_ORDER) */
static const rest_stream_ops tree_ops = {tw_head, tw_row, tw_tail, tw_empty, tw_free, NULL, 1};

/* --- the same tree as XML ------------------------------------------------ */

/*
 * CPS answers XML when asked (Accept or Content-Type application/xml) with
 * the elements of its JSON answer side by side: the top nodes named
 * prefix:name (here with that prefix declared, so the text is namespace
 * well-formed), lists and leaf-lists as repeated elements, leaves as
 * elements holding their value.
 */

void cps_xml_text(ncmp_buf *out, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        switch (s[i]) {
        case '<':
            ncmp_buf_append_str(out, "&lt;");
            break;
        case '>':
            ncmp_buf_append_str(out, "&gt;");
            break;
        case '&':
            ncmp_buf_append_str(out, "&amp;");
            break;
        case '"':
            ncmp_buf_append_str(out, "&quot;");
            break;
        default:
            ncmp_buf_append_char(out, s[i]);
        }
    }
}

static void xml_leaf(ncmp_buf *out, const char *name, json_object *v)
{
    ncmp_buf_appendf(out, "<%s>", name);
    if (v && !json_object_is_type(v, json_type_null)) {
        const char *t = json_object_get_string(v);
        cps_xml_text(out, t, strlen(t));
    }
    ncmp_buf_appendf(out, "</%s>", name);
}

/* The leaves of one row (its attributes' jsonb text) as elements. */
static void xml_leaves(ncmp_buf *out, const char *json, size_t len)
{
    json_object *o = NULL;
    ncmp_err err;

    if (ncmp_json_parse(json, len, &o, &err) != 0 || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return;
    }
    json_object_object_foreach(o, k, v)
    {
        if (json_object_is_type(v, json_type_array))
            for (size_t i = 0; i < json_object_array_length(v); i++)
                xml_leaf(out, k, json_object_array_get_idx(v, i));
        else
            xml_leaf(out, k, v);
    }
    json_object_put(o);
}

/* Close the innermost open element. */
static void xml_close(tree_writer *w, ncmp_buf *out)
{
    frame *f = &w->stack[--w->nstack];
    const char *name;
    size_t nlen;

    cps_path_last_name(w->path.data, f->path_len, &name, &nlen);
    ncmp_buf_append_str(out, "</");
    if (w->nstack == 0 && f->list[0]) /* the top node's qualified name */
        ncmp_buf_append_str(out, f->list);
    ncmp_buf_append(out, name, nlen);
    ncmp_buf_append_char(out, '>');
}

static void xml_head(void *arg, ncmp_buf *out)
{
    tree_writer *w = arg;

    (void)out;
    w->close = xml_close;
}

static void xml_write(tree_writer *w, const char *path, size_t len, const char *attrs, size_t alen,
                      const PGresult *res, int row, ncmp_buf *out)
{
    const char *name;
    size_t nlen;
    char qualified[sizeof(((frame *)0)->list)] = "";

    if (tw_enter(w, path, len, res, row, out) != 0 || w->nstack == TW_MAX_DEPTH)
        return;
    cps_path_last_name(path, len, &name, &nlen);
    ncmp_buf_append_char(out, '<');
    if (w->nstack == 0 && w->module) {
        /* the frame's list holds "prefix:" for the closing tag */
        snprintf(qualified, sizeof(qualified), "%s:", w->module->prefix);
        ncmp_buf_append_str(out, qualified);
        ncmp_buf_append(out, name, nlen);
        ncmp_buf_appendf(out, " xmlns:%s=\"", w->module->prefix);
        cps_xml_text(out, w->module->ns, strlen(w->module->ns));
        ncmp_buf_append_char(out, '"');
    } else {
        ncmp_buf_append(out, name, nlen);
    }
    if (w->nstack == 0)
        w->tops++;
    ncmp_buf_append_char(out, '>');
    memcpy(tw_push(w, path, len)->list, qualified, sizeof(qualified));
    xml_leaves(out, attrs, alen);
}

static void xml_row(void *arg, const PGresult *res, int row, ncmp_buf *out)
{
    xml_write(arg, PQgetvalue(res, row, 0), (size_t)PQgetlength(res, row, 0),
              PQgetvalue(res, row, 2), (size_t)PQgetlength(res, row, 2), res, row, out);
}

static void xml_tail(void *arg, ncmp_buf *out)
{
    tw_close_all(arg, out);
}

static const rest_stream_ops xml_ops = {xml_head, xml_row,           xml_tail, tw_empty,
                                        tw_free,  "application/xml", 1};

/* --- the data of a delta report's entry ------------------------------------ */

cps_tree_writer *cps_tree_writer_new(int xml)
{
    tree_writer *w = ncmp_xcalloc(1, sizeof(*w));

    w->version = 3;
    w->group_entries = 1; /* the entries of a list in one array, CPS's data map */
    w->close = xml ? xml_close : tw_close_frame;
    w->xml = xml;
    return w;
}

void cps_tree_writer_head(cps_tree_writer *w, ncmp_buf *out)
{
    if (w->xml)
        xml_head(w, out);
    else
        tw_head(w, out);
}

void cps_tree_writer_row(cps_tree_writer *w, const PGresult *res, int row, ncmp_buf *out)
{
    if (w->xml)
        xml_row(w, res, row, out);
    else
        tw_row(w, res, row, out);
}

void cps_tree_writer_text(cps_tree_writer *w, const char *path, size_t len, const char *attrs,
                          size_t alen, ncmp_buf *out)
{
    if (w->xml)
        xml_write(w, path, len, attrs, alen, NULL, 0, out);
    else
        tw_write(w, path, len, attrs, alen, NULL, 0, out);
}

void cps_tree_writer_tail(cps_tree_writer *w, ncmp_buf *out)
{
    if (w->xml)
        xml_tail(w, out);
    else
        tw_tail(w, out);
}

void cps_tree_writer_free(cps_tree_writer *w)
{
    if (w)
        tw_free(w);
}

/* Does the client want XML (CPS reads its Content-Type; Accept is the
 * usual way)? */
static int wants_xml(ncmp_http_request *req)
{
    const char *accept = ncmp_http_header(req, "Accept");
    const char *ctype = ncmp_http_header(req, "Content-Type");

    return (accept && strstr(accept, "xml") && !strstr(accept, "json")) ||
           (ctype && strstr(ctype, "xml"));
}

/* GET /v1|v2|v3/.../anchors/{a}/node?xpath=&descendants= */
/* A read with every descendant: every row of the key's range [$3, $6)
 * but the gap [$4, $5), in key order: one index range scan. The gap is
 * empty unless the xpath may name a list: then [$3, $4) is the node's own
 * subtree and [$5, $6) the list's entries, and between them lie siblings
 * whose names extend the last step's (`name-x`), filtered out. */
const char CPS_SQL_READ_ALL[] =
    "SELECT path, depth, attributes FROM fragment WHERE anchor_id = $1 AND $2::int > 0"
    " AND path >= $3 AND path < $6 AND (path < $4 OR path >= $5) ORDER BY path";

/* A read bounded in depth ($2): a walk of the key that takes the next row
 * after a node above the bound and jumps over the subtree of a node at
 * it, one index probe per row answered. A range scan would read the
 * whole subtree to answer its top (86,001 rows for one node without
 * descendants). */
#define SQL_READ_WALK                                                                              \
    "WITH RECURSIVE r(path, depth, attributes, hi) AS ("                                           \
    " SELECT s.path, s.depth, s.attributes, b.hi FROM (VALUES ($3, $4), ($5, $6)) b(lo, hi),"      \
    " LATERAL (SELECT path, depth, attributes FROM fragment WHERE anchor_id = $1"                  \
    "  AND path >= b.lo AND path < b.hi ORDER BY path LIMIT 1) s"                                  \
    " UNION ALL"                                                                                   \
    " SELECT n.path, n.depth, n.attributes, r.hi FROM r,"                                          \
    " LATERAL (SELECT path, depth, attributes FROM fragment f WHERE f.anchor_id = $1"              \
    "  AND f.path >= r.path || CASE WHEN r.depth < $2::int THEN E'\\x01' ELSE E'\\x02' END"        \
    "  AND f.path < r.hi ORDER BY f.path LIMIT 1) n)"                                              \
    " SELECT path, depth, attributes FROM r ORDER BY path"
const char CPS_SQL_READ_WALK[] = SQL_READ_WALK;

/* The rows near the top are in two partial indexes (migrations/0018,
 * 0021): those whose path and leaves are small with their leaves (an
 * index-only scan reads them), the others without. A read of them is a
 * scan of each, under both predicates word for word as the migration
 * writes them, so that the planner may use the indexes. CPS_DEPTH_INDEXED
 * is written out as 3 here, as the migrations do. */
_Static_assert(CPS_DEPTH_INDEXED == 3, "SQL_READ_SHALLOW and SQL_MATCH_BOUNDED write it as 3");
#define SQL_DEPTH_SMALL(f)                                                                         \
    " AND " f "depth <= 3 AND octet_length(" f "path) <= 512"                                      \
    " AND octet_length(" f "attributes::text) <= 400"
#define SQL_DEPTH_LARGE(f)                                                                         \
    " AND " f "depth <= 3 AND (octet_length(" f "path) > 512"                                      \
    " OR octet_length(" f "attributes::text) > 400)"

/* A read bounded in depth ($2) to CPS_DEPTH_INDEXED or less: the rows of
 * each depth down to the bound, range scans of the two indexes above,
 * sorted together. The planner takes the key instead when the range is
 * small (a node deep in the tree). The range is CPS_SQL_READ_ALL's, with
 * its gap behind IS TRUE: as a bare OR of two ranges, the planner,
 * knowing the values, made it a BitmapOr of two index scans and fetched
 * every row from the heap (2.7 ms for the 1,001 rows of /openroadm-devices
 * with direct descendants, against 0.6 ms as an index-only scan with the
 * gap a filter). As two scans of each index, UNION ALL, the planning of
 * a read of one device took 0.5 ms against 0.2. The depths are an array
 * of three, NULL past the bound (a NULL matches nothing): as a slice of
 * '{1,2,3}' of unknown length, which the planner counts as ten elements,
 * they were a filter on an index-only scan of every row near the top of
 * the anchor from the range's start (2,001 rows for /openroadm-devices
 * without descendants: 1.2 ms, against 0.3 with the depths in the scan's
 * bounds). */
#define SQL_SHALLOW_ROWS(size)                                                                     \
    "SELECT path, depth, attributes FROM fragment WHERE anchor_id = $1"                            \
    " AND depth = ANY(ARRAY[1, CASE WHEN $2::int >= 2 THEN 2 END,"                                 \
    " CASE WHEN $2::int >= 3 THEN 3 END])" size                                                    \
    " AND path >= $3 AND path < $6 AND ((path < $4 OR path >= $5) IS TRUE)"
#define SQL_READ_SHALLOW                                                                           \
    SQL_SHALLOW_ROWS(SQL_DEPTH_SMALL(""))                                                          \
    " UNION ALL " SQL_SHALLOW_ROWS(SQL_DEPTH_LARGE("")) " ORDER BY path"

/* The reads bounded in depth as small reads (rest_db_small): prepared,
 * their plans kept by the connection (planning one took 0.2 ms, most of
 * the database's time for a node without descendants), a block at most. */
static const rest_db_small READ_SHALLOW_SMALL = {"cps_read_shallow", SQL_READ_SHALLOW " LIMIT $7"};
static const rest_db_small READ_WALK_SMALL = {"cps_read_walk", SQL_READ_WALK " LIMIT $7"};

const char *cps_sql_read_bounded(int maxdepth)
{
    if (maxdepth >= CPS_DEPTH_ALL)
        return CPS_SQL_READ_ALL;
    return maxdepth <= CPS_DEPTH_INDEXED ? SQL_READ_SHALLOW : CPS_SQL_READ_WALK;
}

/* The small read of cps_sql_read_bounded's (NULL for every descendant). */
static const rest_db_small *read_small(int maxdepth)
{
    if (maxdepth >= CPS_DEPTH_ALL)
        return NULL;
    return maxdepth <= CPS_DEPTH_INDEXED ? &READ_SHALLOW_SMALL : &READ_WALK_SMALL;
}

/* GET /v1|v2|v3/.../anchors/{a}/node?xpath=&descendants= : the node at
 * xpath (or the entries of the list it names, or the root's nodes) with
 * its descendants down to the depth asked. */
static void h_get(ncmp_http_request *req, void *arg)
{
    int v = cps_api_version(req, 3), fetch = 0;

    if (!v || cps_descendants_asked(req, v, &fetch) != 0)
        return;
    cps_api_respond_node(arg, req, ncmp_http_param(req, "dataspace"),
                         ncmp_http_param(req, "anchor"), ncmp_http_query(req, "xpath"), fetch, v);
}

void cps_api_respond_node(cps_api *api, ncmp_http_request *req, const char *dataspace,
                          const char *anchor, const char *xpath, int fetch, int v)
{
    int top_depth, recalled;
    ncmp_buf path = NCMP_BUF_INIT;
    cps_path_ranges rg = {0};
    char maxdepth[16];
    const char *params[6];
    cps_target t = {0};
    ncmp_err err;

    if (!xpath)
        xpath = "/";
    if (cps_path_encode(xpath, &path, &err) != 0) {
        rest_db_answer_error(req, &err);
        return;
    }
    ncmp_buf_append_char(&path, '\0');
    path.len--;
    top_depth = path.len ? cps_path_depth(path.data, path.len) : 1;
    snprintf(maxdepth, sizeof(maxdepth), "%d", fetch < 0 ? CPS_DEPTH_ALL : top_depth + fetch);
    cps_path_ranges_of(path.data, path.len, &rg);
    params[1] = maxdepth;
    params[2] = rg.lo1.data;
    params[3] = rg.hi1.data;
    params[4] = rg.lo2.data;
    params[5] = rg.hi2.data;
    /* a remembered anchor first; read again with it resolved when it changed */
    for (int recall = 1;; recall = 0) {
        tree_writer *w;
        if (cps_read_target(req, api, dataspace, anchor, recall, &t, &recalled) != 0)
            break;
        w = ncmp_xcalloc(1, sizeof(*w));
        w->version = v;
        w->root = path.len == 0;
        w->group_entries = w->root || !cps_path_is_list_entry(path.data, path.len);
        w->xpath = xpath;
        w->anchor = t.anchor_name;
        w->dataspace = t.dataspace;
        /* top nodes may come from several modules: the writer looks each
         * one's prefix up in the schema it holds */
        w->schema = cps_schema_ref(t.schema);
        params[0] = t.anchor_id;
        if (cps_read_stream(req, api, &t, recalled, read_small(atoi(maxdepth)),
                            cps_sql_read_bounded(atoi(maxdepth)), 6, params, READ_BLOCK,
                            wants_xml(req) ? &xml_ops : &tree_ops, w) == 0)
            break;
        cps_target_clear(&t);
    }
    cps_target_clear(&t);
    ncmp_buf_free(&path);
    cps_path_ranges_free(&rg);
}

/* --- CPS-path queries ------------------------------------------------------ */

/* The subtree of each match (the rows of m), down to $2 levels below it,
 * in match order: one range scan per match. The LATERAL reference makes
 * it a nested loop over m, which is read in its own order (the
 * translator's ORDER BY anchor_id, path), and each subtree comes in key
 * order: the rows arrive matches first, then paths, with no sort of the
 * whole answer (which cost as much as the rest of a 86,000-node query). */
#define SQL_SUBTREE_ROWS                                                                           \
    "SELECT f.path, f.depth, f.attributes FROM fragment f"                                         \
    " WHERE f.anchor_id = m.anchor_id AND f.path >= m.path AND f.path < m.path || E'\\x02'"        \
    " AND f.depth <= m.depth + $2::int"
#define SQL_MATCH_SUBTREES " JOIN LATERAL (" SQL_SUBTREE_ROWS " ORDER BY f.path) f ON true"

/* The same with a bound asked (descendants N): where a match's bound is
 * CPS_DEPTH_INDEXED or less, its subtree is read by depth from the depth
 * indexes, as SQL_READ_SHALLOW reads it, instead of every row of its
 * range; deeper bounds scan the range. Either the first branch or the
 * two others run for each match. The depths are an array of three, as
 * in SQL_READ_SHALLOW (a match at depth 1 or more reaches no deeper than
 * 3 there): as a slice, the planner read every row near the top of the
 * anchor for each match (800 matches: 120 ms against 13). */
#define SQL_MATCH_SHALLOW(size)                                                                    \
    " UNION ALL SELECT f.path, f.depth, f.attributes FROM fragment f"                              \
    " WHERE m.depth + $2::int <= 3 AND f.anchor_id = m.anchor_id"                                  \
    " AND f.depth = ANY(ARRAY[m.depth, CASE WHEN $2::int >= 1 THEN m.depth + 1 END,"               \
    " CASE WHEN $2::int >= 2 THEN m.depth + 2 END])" size                                          \
    " AND f.path >= m.path AND f.path < m.path || E'\\x02'"
#define SQL_MATCH_BOUNDED                                                                          \
    " JOIN LATERAL (" SQL_SUBTREE_ROWS                                                             \
    " AND m.depth + $2::int > 3" SQL_MATCH_SHALLOW(SQL_DEPTH_SMALL("f."))                          \
        SQL_MATCH_SHALLOW(SQL_DEPTH_LARGE("f.")) " ORDER BY 1) f ON true"

/* The matches alone (no descendants): one probe of the key each, where
 * the subtree join would read every subtree to keep its top. */
#define SQL_MATCH_ONLY                                                                             \
    " JOIN LATERAL (SELECT f.path, f.depth, f.attributes FROM fragment f"                          \
    " WHERE f.anchor_id = m.anchor_id AND f.path = m.path AND $2::int >= 0) f ON true"

/* The join that gives each match its descendants for `fetch` (-1 all, 0
 * none, N). */
static const char *match_join(int fetch)
{
    return fetch == 0 ? SQL_MATCH_ONLY : fetch < 0 ? SQL_MATCH_SUBTREES : SQL_MATCH_BOUNDED;
}

#define QUERY_MAX_CONDITIONS 64
#define QUERY_MAX_NESTING    8

/* A leaf query's answer: [{"leaf": value}, ...], the distinct values. */
typedef struct leaf_writer {
    char name[256];
    int emitted;
} leaf_writer;

static void lw_head(void *arg, ncmp_buf *out)
{
    (void)arg;
    ncmp_buf_append_char(out, '[');
}

static void lw_row(void *arg, const PGresult *res, int row, ncmp_buf *out)
{
    leaf_writer *w = arg;

    if (w->emitted++)
        ncmp_buf_append_char(out, ',');
    ncmp_buf_append_char(out, '{');
    ncmp_buf_append_json_string(out, w->name);
    ncmp_buf_append_char(out, ':');
    ncmp_buf_append(out, PQgetvalue(res, row, 0), (size_t)PQgetlength(res, row, 0));
    ncmp_buf_append_char(out, '}');
}

static void lw_tail(void *arg, ncmp_buf *out)
{
    (void)arg;
    ncmp_buf_append_char(out, ']');
}

static const rest_stream_ops leaf_ops = {lw_head, lw_row, lw_tail, NULL, free, NULL, 0};

/* The parameters of a query: $1 the anchors, $2 the depth, then the
 * path's own values. */
typedef struct query_params {
    char anchors[64];
    char depth[16];
    ncmp_cpspath_params path; /* the translator's */
    const char **all;         /* $1, $2, then path.values */
} query_params;

/* $1 the one anchor, $2 the depth below each match (-1: all). */
static void query_params_set(query_params *q, const char *anchor_id, int fetch)
{
    snprintf(q->anchors, sizeof(q->anchors), "{%s}", anchor_id);
    snprintf(q->depth, sizeof(q->depth), "%d", fetch < 0 ? CPS_DEPTH_ALL : fetch);
}

static void query_params_free(query_params *q)
{
    ncmp_cpspath_params_free(&q->path);
    free(q->all);
}

static const char *const *query_params_all(query_params *q)
{
    q->all = ncmp_xcalloc(2 + q->path.n, sizeof(*q->all));
    q->all[0] = q->anchors;
    q->all[1] = q->depth;
    for (size_t i = 0; i < q->path.n; i++)
        q->all[2 + i] = q->path.values[i];
    return q->all;
}

/* The query of the matches of `msql` (over anchor $1, the depth $2, the
 * path's values from $3) with their subtrees, for matches_writer. An msql
 * with the matches' leaves (cps_query_to_sql_leaves, fetch 0) is the
 * answer itself, in its own order. */
static void matches_sql(ncmp_buf *sql, const ncmp_buf *msql, int fetch, int with_leaves)
{
    if (with_leaves && fetch == 0)
        ncmp_buf_appendf(sql,
                         "SELECT m.path, m.depth, m.attributes, m.path FROM (%s) m"
                         " WHERE $2::int >= 0 ORDER BY m.anchor_id, m.path",
                         msql->data);
    else
        ncmp_buf_appendf(sql,
                         "WITH m AS MATERIALIZED (%s) SELECT f.path, f.depth, f.attributes, m.path "
                         "FROM m%s",
                         msql->data, match_join(fetch));
}

/* The writer of matches_sql's rows as a list of {prefix:name: node} (or
 * XML); `schema` is taken over. No match is an empty list. */
static tree_writer *matches_writer(cps_schema *schema)
{
    tree_writer *w = ncmp_xcalloc(1, sizeof(*w));

    w->version = 2;
    w->root = 1;
    w->grouped = 1;
    w->schema = schema;
    return w;
}

/* Answer `sql` over the request's anchor ($1, set here), the depth $2 and
 * the path's values in q: the values of leaf `leaf`, or (NULL) the
 * matches of matches_sql. A remembered anchor first; asked again with it
 * resolved when it changed. */
static void query_anchor(ncmp_http_request *req, cps_api *api, const ncmp_buf *sql, query_params *q,
                         int fetch, const char *leaf)
{
    cps_target t = {0};

    for (int recall = 1;; recall = 0) {
        int recalled, rc;
        const rest_stream_ops *ops = &leaf_ops;
        void *state;
        if (cps_read_target(req, api, ncmp_http_param(req, "dataspace"),
                            ncmp_http_param(req, "anchor"), recall, &t, &recalled) != 0)
            break;
        query_params_set(q, t.anchor_id, fetch);
        if (leaf) {
            leaf_writer *lw = ncmp_xcalloc(1, sizeof(*lw));
            snprintf(lw->name, sizeof(lw->name), "%s", leaf);
            state = lw;
        } else {
            state = matches_writer(cps_schema_ref(t.schema));
            ops = wants_xml(req) ? &xml_ops : &tree_ops;
        }
        free(q->all);
        rc = cps_read_stream(req, api, &t, recalled, NULL, sql->data, (int)(2 + q->path.n),
                             query_params_all(q), READ_BLOCK, ops, state);
        if (rc == 0)
            break;
        cps_target_clear(&t);
    }
    cps_target_clear(&t);
}

/* GET /v1|v2/dataspaces/{ds}/anchors/{anchor}/nodes/query?cps-path=&descendants=
 * (v1: include-descendants): the matched nodes, each with its
 * descendants, as a list of {prefix:name: node}; or, for a path ending in
 * /@leaf, the leaf's distinct values as [{leaf: value}]. */
static void h_query(ncmp_http_request *req, void *arg)
{
    cps_api *api = arg;
    const char *cpspath = ncmp_http_query(req, "cps-path");
    int v = cps_api_version(req, 2), fetch = 0;
    ncmp_buf msql = NCMP_BUF_INIT, sql = NCMP_BUF_INIT;
    query_params q = {0};
    cps_query_kind kind;
    char *leaf = NULL;
    ncmp_err err;

    if (!v)
        return;
    if (!cpspath) {
        ncmp_http_respond_error(req, 400, "Missing request parameter",
                                "Required parameter 'cps-path' is not present.");
        return;
    }
    if (cps_descendants_asked(req, v, &fetch) != 0)
        return;
    /* without descendants, the matches' own rows are the answer */
    if ((fetch == 0 ? cps_query_to_sql_leaves : cps_query_to_sql)(cpspath, 1, 3, &msql, &q.path,
                                                                  &kind, &leaf, &err) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid CPS path", err.msg);
        goto cleanup;
    }
    if (kind ==
        CPS_QUERY_LEAF) /* $2 (the depth) has no use here; typed so that PostgreSQL takes it */
        ncmp_buf_appendf(&sql, "SELECT q.value FROM (%s) q WHERE $2::int IS NOT NULL", msql.data);
    else
        matches_sql(&sql, &msql, fetch, fetch == 0);
    query_anchor(req, api, &sql, &q, fetch, kind == CPS_QUERY_LEAF ? (leaf ? leaf : "") : NULL);
cleanup:
    free(leaf);
    query_params_free(&q);
    ncmp_buf_free(&msql);
    ncmp_buf_free(&sql);
}

/* A positive integer query parameter; 0 when absent, -1 when invalid. */
static int positive_param(ncmp_http_request *req, const char *name)
{
    const char *s = ncmp_http_query(req, name);
    char *end;
    long n;

    if (!s)
        return 0;
    n = strtol(s, &end, 10);
    return *s && !*end && n > 0 && n <= 1000000000 ? (int)n : -1;
}

/* The dataspace's anchors as an array literal, and the compiled schema
 * of each of their schema sets, held by the writer. */
static int dataspace_anchors(ncmp_http_request *req, cps_api *api, ncmp_db *db,
                             const char *dataspace, ncmp_buf *anchors, tree_writer *w)
{
    static const char sql[] =
        "SELECT COALESCE('{' || string_agg(a.id::text, ',') || '}', '{}'),"
        " (SELECT array_agg(DISTINCT b.schema_set_id)::text FROM anchor b"
        "  WHERE b.dataspace_id = d.id)"
        " FROM dataspace d LEFT JOIN anchor a ON a.dataspace_id = d.id WHERE d.name = $1"
        " GROUP BY d.id";
    PGresult *res = NULL;
    ncmp_err err;
    char *ids, *tok, *save = NULL;

    if (ncmp_db_query(db, sql, 1, &dataspace, &res, &err) != 0) {
        rest_db_answer_error(req, &err);
        return -1;
    }
    if (PQntuples(res) == 0) {
        PQclear(res);
        cps_respond_error(req, 404, "Dataspace not found", "Dataspace with name %s does not exist.",
                          dataspace);
        return -1;
    }
    ncmp_buf_append_str(anchors, PQgetvalue(res, 0, 0));
    ids = ncmp_xstrdup(PQgetisnull(res, 0, 1) ? "" : PQgetvalue(res, 0, 1));
    PQclear(res);
    for (tok = strtok_r(ids, "{},", &save); tok; tok = strtok_r(NULL, "{},", &save)) {
        cps_schema *s;
        if (cps_schema_get(api->schemas, db, tok, &s, &err) != 0) {
            free(ids);
            rest_db_answer_error(req, &err);
            return -1;
        }
        w->schemas = ncmp_xrealloc(w->schemas, (w->nschemas + 1) * sizeof(*w->schemas));
        w->schema_ids = ncmp_xrealloc(w->schema_ids, (w->nschemas + 1) * sizeof(*w->schema_ids));
        w->schemas[w->nschemas] = s;
        snprintf(w->schema_ids[w->nschemas++], sizeof(w->schema_ids[0]), "%s", tok);
    }
    free(ids);
    return 0;
}

/* GET /v2/dataspaces/{ds}/nodes/query?cps-path=&descendants=&pageIndex=&pageSize=:
 * the matches of every anchor, as CPS's [{"anchorName", "dataNodes"}],
 * anchors in name order; a page is pageSize anchors (that have matches),
 * and the header total-pages says how many pages there are. */
static void h_query_dataspace(ncmp_http_request *req, void *arg)
{
    cps_api *api = arg;
    const char *cpspath = ncmp_http_query(req, "cps-path");
    const char *dataspace = ncmp_http_param(req, "dataspace");
    int fetch = 0, page = positive_param(req, "pageIndex"), size = positive_param(req, "pageSize");
    ncmp_buf msql = NCMP_BUF_INIT, sql = NCMP_BUF_INIT, anchors = NCMP_BUF_INIT;
    query_params q = {0};
    cps_query_kind kind;
    tree_writer *w = NULL;
    ncmp_db *db = NULL;
    PGresult *res = NULL;
    ncmp_err err;
    char pages[24] = "1", limit[24] = "ALL", offset[24] = "0";

    if (!cps_api_version(req, 2))
        return;
    if (!cpspath) {
        ncmp_http_respond_error(req, 400, "Missing request parameter",
                                "Required parameter 'cps-path' is not present.");
        return;
    }
    if (page < 0 || size < 0 || (page == 0) != (size == 0)) {
        ncmp_http_respond_error(req, 400, "Invalid request",
                                "pageIndex and pageSize go together and must be greater than 0");
        return;
    }
    if (cps_descendants_asked(req, 2, &fetch) != 0)
        return;
    if (cps_query_to_sql(cpspath, 1, 3, &msql, &q.path, &kind, NULL, &err) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid CPS path", err.msg);
        goto cleanup;
    }
    if (kind == CPS_QUERY_LEAF) {
        ncmp_http_respond_error(req, 400, "Invalid CPS path",
                                "a leaf query (/@leaf) is answered for one anchor only");
        goto cleanup;
    }
    w = ncmp_xcalloc(1, sizeof(*w));
    if (rest_pool_get(api->pool, CPS_POOL_WAIT_MS, &db, &err) != 0) {
        rest_db_answer_error(req, &err);
        goto cleanup;
    }
    if (dataspace_anchors(req, api, db, dataspace, &anchors, w) != 0)
        goto cleanup;
    snprintf(q.anchors, sizeof(q.anchors), "%s", ""); /* the array is too long for it */
    snprintf(q.depth, sizeof(q.depth), "%d", fetch < 0 ? CPS_DEPTH_ALL : fetch);
    query_params_all(&q);
    q.all[0] = anchors.data;
    if (page) {
        /* CPS's count: the anchors with a match, pageSize to a page */
        ncmp_buf count = NCMP_BUF_INIT;
        long n;
        ncmp_buf_appendf(&count, "SELECT count(DISTINCT m.anchor_id) FROM (%s) m", msql.data);
        /* $2 is not used by the count; typed so that PostgreSQL accepts it */
        ncmp_buf_append_str(&count, " WHERE $2::int IS NOT NULL");
        if (ncmp_db_query(db, count.data, (int)(2 + q.path.n), q.all, &res, &err) != 0) {
            ncmp_buf_free(&count);
            rest_db_answer_error(req, &err);
            goto cleanup;
        }
        ncmp_buf_free(&count);
        n = atol(PQgetvalue(res, 0, 0));
        snprintf(pages, sizeof(pages), "%ld", n <= size ? 1 : (n + size - 1) / size);
        snprintf(limit, sizeof(limit), "%d", size);
        snprintf(offset, sizeof(offset), "%lld", (long long)(page - 1) * size);
    }
    rest_pool_put(api->pool, db);
    db = NULL;
    ncmp_http_add_header(req, "total-pages", pages);
    w->version = 2;
    w->root = 1;
    w->grouped = 1;
    w->by_anchor = 1;
    ncmp_buf_appendf(&sql,
                     "WITH m AS (%s), pa AS (SELECT a.id, a.name, a.schema_set_id FROM anchor a"
                     " WHERE a.id IN (SELECT anchor_id FROM m) ORDER BY a.name LIMIT %s OFFSET %s)"
                     " SELECT f.path, f.depth, f.attributes, m.path, pa.name, pa.schema_set_id"
                     " FROM pa JOIN m ON m.anchor_id = pa.id%s ORDER BY pa.name, m.path, f.path",
                     msql.data, limit, offset, match_join(fetch));
    rest_db_stream(req, api->pool, sql.data, (int)(2 + q.path.n), q.all, READ_BLOCK, &tree_ops, w);
    w = NULL;
cleanup:
    PQclear(res);
    if (db)
        rest_pool_put(api->pool, db);
    if (w)
        tw_free(w);
    query_params_free(&q);
    ncmp_buf_free(&msql);
    ncmp_buf_free(&sql);
    ncmp_buf_free(&anchors);
}

/* The matches of one composite query node into `sql`: its cpsPath's and
 * its conditions', joined by its operator (and: the nodes all of them
 * match, or: the nodes any matches). Values are parameters from $3 on,
 * appended to `params`. */
static int composite_sql(json_object *q, int depth, ncmp_buf *sql, ncmp_cpspath_params *params,
                         int *count, ncmp_err *err)
{
    const char *cpspath = NULL, *op = NULL;
    json_object *conds = NULL;
    size_t nparts = 0, nconds;
    const char *join;

    if (depth > QUERY_MAX_NESTING)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "composite query nested deeper than %d",
                            QUERY_MAX_NESTING);
    if (!json_object_is_type(q, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "a composite query is a JSON object");
    if (ncmp_json_string_field(q, "cpsPath", &cpspath, err) != 0 ||
        ncmp_json_string_field(q, "operator", &op, err) != 0 ||
        ncmp_json_array_field(q, "conditions", &conds, err) != 0)
        return -1;
    if (op && strcmp(op, "and") != 0 && strcmp(op, "or") != 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "operator '%.40s' is neither 'and' nor 'or'", op);
    join = op && strcmp(op, "or") == 0 ? " UNION " : " INTERSECT ";
    nconds = conds ? json_object_array_length(conds) : 0;
    if (!cpspath && nconds == 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "a composite query needs a cpsPath or conditions");
    ncmp_buf_append_str(sql, "SELECT anchor_id, path, depth FROM (");
    if (cpspath) {
        cps_query_kind kind;
        ncmp_buf part = NCMP_BUF_INIT;
        if (++*count > QUERY_MAX_CONDITIONS) {
            ncmp_buf_free(&part);
            return ncmp_err_set(err, NCMP_ERR_REJECT, "more than %d CPS paths",
                                QUERY_MAX_CONDITIONS);
        }
        if (cps_query_to_sql(cpspath, 1, (int)(3 + params->n), &part, params, &kind, NULL, err) !=
            0) {
            ncmp_buf_free(&part);
            return -1;
        }
        if (kind == CPS_QUERY_LEAF) {
            ncmp_buf_free(&part);
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "a composite query selects nodes: '%.100s' is a leaf query",
                                cpspath);
        }
        ncmp_buf_appendf(sql, "(%s)", part.data);
        ncmp_buf_free(&part);
        nparts++;
    }
    for (size_t i = 0; i < nconds; i++) {
        if (nparts++)
            ncmp_buf_append_str(sql, join);
        ncmp_buf_append_char(sql, '(');
        if (composite_sql(json_object_array_get_idx(conds, i), depth + 1, sql, params, count,
                          err) != 0)
            return -1;
        ncmp_buf_append_char(sql, ')');
    }
    ncmp_buf_append_str(sql, ") c");
    return 0;
}

/* POST /v2/dataspaces/{ds}/anchors/{anchor}/nodes/query?descendants=, body
 * CPS's CompositeQuery {"cpsPath", "operator": "and"|"or", "conditions":
 * [CompositeQuery...]}: the nodes the tree of conditions selects, as the
 * GET query answers them. */
static void h_query_composite(ncmp_http_request *req, void *arg)
{
    cps_api *api = arg;
    int fetch = 0, count = 0;
    size_t len = 0;
    const char *body = ncmp_http_body(req, &len);
    ncmp_buf msql = NCMP_BUF_INIT, sql = NCMP_BUF_INIT;
    query_params q = {0};
    json_object *doc = NULL;
    ncmp_err err;

    if (!cps_api_version(req, 2))
        return;
    if (cps_descendants_asked(req, 2, &fetch) != 0)
        return;
    if (ncmp_json_parse(body ? body : "", len, &doc, &err) != 0 ||
        composite_sql(doc, 0, &msql, &q.path, &count, &err) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid composite query", err.msg);
        goto cleanup;
    }
    matches_sql(&sql, &msql, fetch, 0);
    query_anchor(req, api, &sql, &q, fetch, NULL);
cleanup:
    json_object_put(doc);
    query_params_free(&q);
    ncmp_buf_free(&msql);
    ncmp_buf_free(&sql);
}

void cps_read_routes_add(cps_api *api, ncmp_http_server *s)
{
#define D "/cps/api/{v}/dataspaces/{dataspace}"
    ncmp_http_route(s, "GET", D "/anchors/{anchor}/node", h_get, api);
    ncmp_http_route(s, "GET", D "/anchors/{anchor}/nodes/query", h_query, api);
    ncmp_http_route(s, "POST", D "/anchors/{anchor}/nodes/query", h_query_composite, api);
    ncmp_http_route(s, "GET", D "/nodes/query", h_query_dataspace, api);
#undef D
}
