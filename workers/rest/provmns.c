#include "provmns.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "data.h"
#include "handle_cache.h"
#include "ncmp_buf.h"
#include "ncmp_dmi.h"
#include "ncmp_json.h"
#include "ncmp_log.h"
#include "policy.h"

#define MEDIA_JSON       "application/json"
#define MEDIA_3GPP_TREE  "application/vnd.3gpp.object-tree-hierarchical+json"
#define MEDIA_PATCH      "application/json-patch+json"
#define MEDIA_3GPP_PATCH "application/3gpp-json-patch+json"
#define NO_PRODUCER      "Registered DMI does not support the ProvMnS interface."
#define DMI_TIMEOUT      "Southbound system did not respond in a timely manner"
#define NO_BADOP         (-1)

/* --- 3GPP's error body ---------------------------------------------------- */

static const char *error_type(int status)
{
    switch (status) {
    case 400:
    case 415:
        return "VALIDATION_ERROR";
    case 404:
        return "IE_NOT_FOUND";
    case 413:
    case 422:
        return "SERVER_LIMITATION";
    default:
        return "APPLICATION_LAYER_ERROR";
    }
}

/* {"status":"<n>","type":..,"title":..[,"detail":..][,"badOp":"/<i>"]} */
static void pm_error(ncmp_http_request *req, int status, const char *title, const char *detail,
                     int badop)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_appendf(&b, "{\"status\":\"%d\",\"type\":\"%s\",\"title\":", status,
                     error_type(status));
    ncmp_buf_append_json_string(&b, title);
    if (detail && *detail) {
        ncmp_buf_append_str(&b, ",\"detail\":");
        ncmp_buf_append_json_string(&b, detail);
    }
    if (badop >= 0)
        ncmp_buf_appendf(&b, ",\"badOp\":\"/%d\"", badop);
    ncmp_buf_append_char(&b, '}');
    ncmp_http_respond_json(req, status, &b);
    ncmp_buf_free(&b);
}

static void pm_errorf(ncmp_http_request *req, int status, int badop, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void pm_errorf(ncmp_http_request *req, int status, int badop, const char *fmt, ...)
{
    char title[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(title, sizeof(title), fmt, ap);
    va_end(ap);
    pm_error(req, status, title, NULL, badop);
}

/* --- FDNs ----------------------------------------------------------------- */

char *provmns_fdn_prefix(const char *path, int nth)
{
    size_t len = strlen(path);
    int count = 0;

    /* segments from the end: [start, end) */
    for (size_t end = len;;) {
        size_t start = end;
        while (start > 0 && path[start - 1] != '/')
            start--;
        if (memchr(path + start, '=', end - start) && ++count == nth) {
            char *out = ncmp_xmalloc(end + 1);
            memcpy(out, path, end);
            out[end] = '\0';
            return out;
        }
        if (start == 0)
            break;
        end = start - 1;
    }
    return ncmp_xstrdup("");
}

void provmns_encode_path(ncmp_buf *out, const char *fdn)
{
    static const char keep[] = "-._~!$&'()*+,;=:@/";

    for (const unsigned char *p = (const unsigned char *)fdn; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            strchr(keep, *p))
            ncmp_buf_append_char(out, (char)*p);
        else
            ncmp_buf_appendf(out, "%%%02X", *p);
    }
}

static void drop_trailing_hash(char *s)
{
    size_t n = strlen(s);
    if (n && s[n - 1] == '#')
        s[n - 1] = '\0';
}

/* The class and id of the last segment of `fdn` ("class=id"): 0, or -1
 * when that segment holds no '='. Owned by the caller. */
static int class_and_id(const char *fdn, char **cls, char **id)
{
    const char *last = strrchr(fdn, '/');
    const char *seg = last ? last + 1 : fdn, *eq = strchr(seg, '=');

    if (!eq)
        return -1;
    *cls = ncmp_xmalloc((size_t)(eq - seg) + 1);
    memcpy(*cls, seg, (size_t)(eq - seg));
    (*cls)[eq - seg] = '\0';
    *id = ncmp_xstrdup(eq + 1);
    drop_trailing_hash(*id);
    return 0;
}

/* --- one request ---------------------------------------------------------- */

typedef struct pm_op {
    const char *operation; /* policy_op.operation */
    char *resource;        /* resourceIdentifier */
    char *change;          /* changeRequest JSON, NULL for a delete */
} pm_op;

typedef struct pm_call {
    data *d;
    ncmp_http_request *req;
    int patch; /* a PATCH: policy refusals name the item */
    handle_info h;
    /* the DMI call */
    char *method;
    ncmp_buf url, body, hdr;
    char *content_type;
    /* the policy checks still to make, in order */
    pm_op *ops;
    size_t nops, next;
    char *auth;
} pm_call;

static void pm_free(pm_call *c)
{
    handle_info_free(&c->h);
    free(c->method);
    ncmp_buf_free(&c->url);
    ncmp_buf_free(&c->body);
    ncmp_buf_free(&c->hdr);
    free(c->content_type);
    for (size_t i = 0; i < c->nops; i++) {
        free(c->ops[i].resource);
        free(c->ops[i].change);
    }
    free(c->ops);
    free(c->auth);
    free(c);
}

static void pm_add_op(pm_call *c, const char *operation, const char *resource, char *change)
{
    c->ops = ncmp_xrealloc(c->ops, (c->nops + 1) * sizeof(*c->ops));
    c->ops[c->nops++] = (pm_op){operation, ncmp_xstrdup(resource), change};
}

/* The DMI's answer (DMI client's thread): passed through as it is. */
static void pm_done(ncmp_dmi_response *r, void *opaque)
{
    pm_call *c = opaque;

    data_server_timing(c->req, r);
    if (r->failure == NCMP_DMI_FAIL_CANCELLED)
        pm_error(c->req, 503, "Service stopping", NULL, NO_BADOP);
    else if (r->failure == NCMP_DMI_FAIL_BUSY)
        ncmp_http_respond_busy(c->req, NULL, "DMI plugin busy", r->error);
    else if (r->failure == NCMP_DMI_FAIL_TIMEOUT)
        pm_error(c->req, 504, DMI_TIMEOUT, NULL, NO_BADOP);
    else if (r->status == 0)
        pm_error(c->req, 500, r->error, NULL, NO_BADOP);
    else
        ncmp_http_respond(c->req, (int)r->status, r->content_type, r->body.data ? r->body.data : "",
                          r->body.len);
    ncmp_dmi_response_destroy(r);
    pm_free(c);
}

static void pm_forward(pm_call *c)
{
    const char *headers[3] = {NULL, NULL, NULL};
    ncmp_dmi_request dr = {0};
    ncmp_err err;
    int n = 0;

    if (c->hdr.len)
        headers[n++] = c->hdr.data;
    dr.method = c->method;
    dr.url = c->url.data;
    if (strcmp(c->method, "GET") != 0 && strcmp(c->method, "DELETE") != 0) {
        dr.body = c->body.data ? c->body.data : "";
        dr.body_len = c->body.len;
        dr.content_type = c->content_type;
    }
    dr.headers = headers;
    if (data_submit(c->d, &dr, pm_done, c, &err) != 0) {
        pm_error(c->req, 503, "DMI call not started", err.msg, NO_BADOP);
        pm_free(c);
    }
}

static void pm_next_check(pm_call *c);

/* The policy's decision on ops[next] (DMI client's thread). */
static void pm_permitted(const policy_decision *dec, void *opaque)
{
    pm_call *c = opaque;

    if (!dec->allowed) {
        pm_error(c->req, 409, dec->title, dec->details, c->patch ? (int)c->next : NO_BADOP);
        pm_free(c);
        return;
    }
    c->next++;
    pm_next_check(c);
}

/* Ask about the next operation, or make the DMI call when none is left. */
static void pm_next_check(pm_call *c)
{
    const pm_op *op;
    policy_op pop;
    ncmp_err err;

    if (c->next == c->nops) {
        pm_forward(c);
        return;
    }
    op = &c->ops[c->next];
    pop = (policy_op){.operation = op->operation,
                      .handle_id = c->h.id,
                      .resource_identifier = op->resource,
                      .target_identifier = c->h.alternate_id,
                      .change_request = op->change};
    if (data_policy_ask(c->d, &pop, c->auth, pm_permitted, c, &err) != 0) {
        if (err.cls == NCMP_ERR_REJECT)
            pm_error(c->req, 400, err.msg, NULL, c->patch ? (int)c->next : NO_BADOP);
        else
            pm_error(c->req, 503, "Policy executor not asked", err.msg, NO_BADOP);
        pm_free(c);
    }
}

/* --- policy operations, as NCMP builds them -------------------------------- */

/* {"<class>":[{"id":"<id>","attributes":<attributes>}]} (attributes taken
 * over; NULL is JSON null). */
static char *change_request(const char *cls, const char *id, json_object *attributes)
{
    json_object *root = json_object_new_object(), *list = json_object_new_array(),
                *inst = json_object_new_object();
    char *out;

    json_object_object_add(inst, "id", json_object_new_string(id));
    json_object_object_add(inst, "attributes", attributes);
    json_object_array_add(list, inst);
    json_object_object_add(root, cls, list);
    out = ncmp_xstrdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
    return out;
}

/* Is the write on `target` (the parent of what it creates or changes, or
 * what it deletes) at or above the handle's root object? NCMP refuses
 * those with 400. */
static int on_root(const char *alt, const char *target, int is_delete)
{
    size_t a = strlen(alt), t = strlen(target);
    return is_delete ? t <= a : t < a;
}

/* Add the check of one write to c->ops: `fdn` is what it addresses,
 * `attributes` (taken over) what it sets. 0, or -1 with the request
 * answered (400 for the root object, 422 for an FDN without class=id). */
static int pm_plan(pm_call *c, const char *operation, const char *fdn, json_object *attributes,
                   int badop)
{
    const char *alt = c->h.alternate_id;
    int is_delete = strcmp(operation, "delete") == 0;
    char *parent = is_delete ? ncmp_xstrdup(fdn) : provmns_fdn_prefix(fdn, 2);
    char *cls = NULL, *id = NULL, *change = NULL;
    int rc = -1;

    if (!is_delete && class_and_id(fdn, &cls, &id) != 0) {
        pm_errorf(c->req, 422, badop, "%.900s not a valid path", fdn);
        json_object_put(attributes);
    } else if (on_root(alt, parent, is_delete)) {
        pm_errorf(c->req, 400, badop, "Data manipulation operations are not supported on %.900s",
                  fdn);
        json_object_put(attributes);
    } else {
        if (!is_delete)
            change = change_request(cls, id, attributes);
        pm_add_op(c, operation, parent + strlen(alt), change);
        rc = 0;
    }
    free(parent);
    free(cls);
    free(id);
    return rc;
}

/* {"a":{"b":value}} for "#/attributes/a/b" (value taken over). */
static json_object *nested_attributes(const char *names, json_object *value)
{
    json_object *root = json_object_new_object(), *level = root;
    char *copy, *save = NULL, *name, *next;

    while (*names == '/')
        names++;
    copy = ncmp_xstrdup(names);
    if (*copy && copy[strlen(copy) - 1] == '/')
        copy[strlen(copy) - 1] = '\0';
    name = strtok_r(copy, "/", &save);
    if (!name) {
        json_object_put(root);
        free(copy);
        return value;
    }
    while ((next = strtok_r(NULL, "/", &save)) != NULL) {
        json_object *child = json_object_new_object();
        json_object_object_add(level, name, child);
        level = child;
        name = next;
    }
    json_object_object_add(level, name, value);
    free(copy);
    return root;
}

/* The check of PATCH item `i` (already validated). */
static int pm_plan_item(pm_call *c, const char *base_fdn, json_object *item, int i)
{
    json_object *v;
    const char *op = NULL, *path = NULL;
    json_object *value = NULL;
    ncmp_buf ext = NCMP_BUF_INIT;
    char *fdn;
    int rc;

    json_object_object_get_ex(item, "op", &v);
    op = json_object_get_string(v);
    json_object_object_get_ex(item, "path", &v);
    path = json_object_get_string(v);
    if (json_object_object_get_ex(item, "value", &v))
        value = v;
    ncmp_buf_append_str(&ext, base_fdn);
    ncmp_buf_append_str(&ext, path);
    fdn = provmns_fdn_prefix(ext.data, 1);
    drop_trailing_hash(fdn);
    if (strcmp(op, "add") == 0) {
        json_object *attrs = NULL;
        if (value && json_object_is_type(value, json_type_object))
            json_object_object_get_ex(value, "attributes", &attrs);
        rc = pm_plan(c, "create", fdn, json_object_get(attrs), i);
    } else if (strcmp(op, "replace") == 0) {
        const char *hash = strstr(path, "#/attributes");
        json_object *attrs =
            hash ? nested_attributes(hash + strlen("#/attributes"), json_object_get(value))
                 : json_object_get(value);
        rc = pm_plan(c, "update", fdn, attrs, i);
    } else if (strcmp(op, "remove") == 0) {
        rc = pm_plan(c, "delete", fdn, NULL, i);
    } else {
        pm_errorf(c->req, 422, i, "Unsupported Patch Operation Type: %s", op);
        rc = -1;
    }
    free(fdn);
    ncmp_buf_free(&ext);
    return rc;
}

/* --- validation ------------------------------------------------------------ */

/* Does the media type `value` (parameters ignored) equal `want`? */
static int media_is(const char *value, const char *want)
{
    size_t n = strcspn(value, ";");

    while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
        n--;
    return n == strlen(want) && strncasecmp(value, want, n) == 0;
}

/* Can the answer (JSON, or 3GPP's object tree, itself JSON) satisfy the
 * Accept header? Absent means anything. */
static int accept_ok(const char *accept)
{
    static const char *const ok[] = {MEDIA_JSON,      MEDIA_3GPP_TREE, "*/*",
                                     "application/*", MEDIA_PATCH,     MEDIA_3GPP_PATCH};
    const char *p = accept;

    if (!accept || !*accept)
        return 1;
    while (*p) {
        size_t n = strcspn(p, ",");
        char item[256];
        size_t k = 0;
        while (n > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        if (n < sizeof(item)) {
            memcpy(item, p, n);
            item[n] = '\0';
            for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
                k |= media_is(item, ok[i]);
            if (k)
                return 1;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* The query of a read, checked and encoded for the DMI ("?a=..&b=.." or
 * ""): 0, or -1 answered 400. NCMP's order; attributes and fields are
 * sent even when blank, the others only when they have a value. */
static int read_query(ncmp_http_request *req, ncmp_buf *out)
{
    static const char *const types[] = {"BASE_ONLY", "BASE_NTH_LEVEL", "BASE_SUBTREE", "BASE_ALL"};
    static const struct {
        const char *name;
        int blank_too;
    } params[] = {{"scopeType", 0},  {"scopeLevel", 0}, {"filter", 0},
                  {"attributes", 1}, {"fields", 1},     {"dataNodeSelector", 0}};
    const char *type = ncmp_http_query(req, "scopeType");
    const char *level = ncmp_http_query(req, "scopeLevel");
    char sep = '?';

    if (type && *type) {
        size_t i = 0;
        while (i < sizeof(types) / sizeof(types[0]) && strcmp(type, types[i]) != 0)
            i++;
        if (i == sizeof(types) / sizeof(types[0])) {
            pm_errorf(req, 400, NO_BADOP,
                      "Invalid scopeType '%.200s': one of BASE_ONLY, BASE_NTH_LEVEL, "
                      "BASE_SUBTREE, BASE_ALL",
                      type);
            return -1;
        }
    }
    if (level && *level) {
        char *end;
        long v = strtol(level, &end, 10);
        if (*end || v < 0 || level[0] == '-' || level[0] == '+') {
            pm_errorf(req, 400, NO_BADOP, "Invalid scopeLevel '%.200s': a number, 0 or more",
                      level);
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        const char *v = ncmp_http_query(req, params[i].name);
        if (!v || (!*v && !params[i].blank_too))
            continue;
        ncmp_buf_appendf(out, "%c%s=", sep, params[i].name);
        ncmp_dmi_url_encode(out, v);
        sep = '&';
    }
    return 0;
}

/* Refuse a patch body: -1 with *e filled. */
static int patch_refuse(provmns_patch_error *e, int status, int badop, const char *detail,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int patch_refuse(provmns_patch_error *e, int status, int badop, const char *detail,
                        const char *fmt, ...)
{
    va_list ap;

    e->status = status;
    e->badop = badop;
    va_start(ap, fmt);
    vsnprintf(e->title, sizeof(e->title), fmt, ap);
    va_end(ap);
    snprintf(e->detail, sizeof(e->detail), "%s", detail ? detail : "");
    return -1;
}

int provmns_patch_parse(const char *body, size_t len, int max, json_object **items,
                        provmns_patch_error *e)
{
    static const char *const ops[] = {"add", "remove", "replace", "move", "copy", "test"};
    ncmp_err err;
    size_t n;
    int rc = 0;

    *items = NULL;
    if (ncmp_json_parse(body, len, items, &err) != 0 ||
        !json_object_is_type(*items, json_type_array)) {
        rc = patch_refuse(e, 400, NO_BADOP, *items ? NULL : err.msg,
                          "Malformed patch: a JSON array of patch items is expected");
        goto out;
    }
    n = json_object_array_length(*items);
    if ((long)n > max) {
        rc = patch_refuse(e, 413, NO_BADOP, NULL,
                          "%zu operations in request, this exceeds the maximum of %d", n, max);
        goto out;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        json_object *item = json_object_array_get_idx(*items, i), *v;
        const char *op = NULL;
        size_t k = 0;
        if (!json_object_is_type(item, json_type_object) ||
            !json_object_object_get_ex(item, "op", &v) ||
            !json_object_is_type(v, json_type_string)) {
            rc = patch_refuse(e, 400, (int)i, NULL, "Malformed patch item: no op");
            break;
        }
        op = json_object_get_string(v);
        while (k < sizeof(ops) / sizeof(ops[0]) && strcmp(op, ops[k]) != 0)
            k++;
        if (k == sizeof(ops) / sizeof(ops[0]))
            rc =
                patch_refuse(e, 400, (int)i, NULL, "Malformed patch item: unknown op '%.100s'", op);
        else if (!json_object_object_get_ex(item, "path", &v) ||
                 !json_object_is_type(v, json_type_string))
            rc = patch_refuse(e, 400, (int)i, NULL, "Malformed patch item: no path");
        else if ((k == 0 || k == 2 || k == 5) && !json_object_object_get_ex(item, "value", &v))
            rc = patch_refuse(e, 400, (int)i, NULL, "Malformed patch item: '%s' needs a value", op);
        else if ((k == 3 || k == 4) && (!json_object_object_get_ex(item, "from", &v) ||
                                        !json_object_is_type(v, json_type_string)))
            rc = patch_refuse(e, 400, (int)i, NULL, "Malformed patch item: '%s' needs from", op);
    }
out:
    if (rc != 0) {
        json_object_put(*items);
        *items = NULL;
    }
    return rc;
}

/* The items of a PATCH body: 0 with *items (owned by the caller), or -1
 * answered (400 malformed, 413 too many). */
static int patch_items(ncmp_http_request *req, int max, json_object **items)
{
    size_t len;
    const char *body = ncmp_http_body(req, &len);
    provmns_patch_error e;

    if (provmns_patch_parse(body, len, max, items, &e) == 0)
        return 0;
    pm_error(req, e.status, e.title, e.detail, e.badop);
    return -1;
}

static void h_provmns(ncmp_http_request *req, void *arg);

/* The handle of `fdn`, checked as NCMP does: 0 with c->h filled, -1
 * answered (404, 422, 406, or the database's error), or 1 when the
 * handle map does not know it: the request goes on on a worker thread,
 * where the database has the last word (the map may lag a registration),
 * never on a server thread. */
static int pm_handle(pm_call *c, const char *fdn)
{
    int found = 0;
    ncmp_err err;

    if (!ncmp_http_on_worker(c->req) &&
        !(found = handle_cache_longest(data_cache(c->d), fdn, &c->h))) {
        ncmp_http_to_worker(c->req, h_provmns, c->d);
        return 1;
    }
    if (!found && data_resolve_longest(c->d, fdn, &c->h, &found, &err) != 0) {
        pm_error(c->req, err.cls == NCMP_ERR_RETRY ? 503 : 500, "Handle lookup failed", err.msg,
                 NO_BADOP);
        return -1;
    }
    if (!found) {
        pm_errorf(c->req, 404, NO_BADOP, "%.900s not found", fdn);
        return -1;
    }
    if (!*c->h.data_producer) {
        pm_error(c->req, 422, NO_PRODUCER, NULL, NO_BADOP);
        return -1;
    }
    if (c->h.state != NCMP_STATE_READY) {
        pm_errorf(c->req, 406, NO_BADOP, "%.700s is not in READY state. Current state: %s",
                  *c->h.alternate_id ? c->h.alternate_id : c->h.id, ncmp_state_name(c->h.state));
        return -1;
    }
    return 0;
}

static pm_call *pm_new(data *d, ncmp_http_request *req, const char *method)
{
    pm_call *c = ncmp_xcalloc(1, sizeof(*c));
    const char *auth = ncmp_http_header(req, "Authorization");

    c->d = d;
    c->req = req;
    c->method = ncmp_xstrdup(method);
    if (auth) {
        c->auth = ncmp_xstrdup(auth);
        ncmp_buf_appendf(&c->hdr, "Authorization: %s", auth);
    }
    return c;
}

/* Suspend, then check with the policy executor (when on) and call the
 * DMI. */
static void pm_start(pm_call *c)
{
    ncmp_http_suspend(c->req);
    pm_next_check(c);
}

/* --- handlers --------------------------------------------------------------- */

/* The request's FDN ("/" and the path after /ProvMnS/v1/), owned by the
 * caller; NULL answered 422 when its last segment is not class=id. */
static char *request_fdn(ncmp_http_request *req)
{
    const char *rest = ncmp_http_param(req, "fdn");
    ncmp_buf b = NCMP_BUF_INIT;
    char *cls = NULL, *id = NULL;

    ncmp_buf_append_char(&b, '/');
    ncmp_buf_append_str(&b, rest ? rest : "");
    if (class_and_id(b.data, &cls, &id) != 0) {
        pm_errorf(req, 422, NO_BADOP, "%.900s not a valid path", b.data);
        ncmp_buf_free(&b);
        return NULL;
    }
    free(cls);
    free(id);
    return b.data;
}

static void h_provmns(ncmp_http_request *req, void *arg)
{
    data *d = arg;
    const ncmp_config *cfg = data_config(d);
    const char *method = ncmp_http_method(req);
    const char *type = ncmp_http_header(req, "Content-Type");
    int is_get = strcmp(method, "GET") == 0, is_patch = strcmp(method, "PATCH") == 0,
        is_put = strcmp(method, "PUT") == 0, is_delete = strcmp(method, "DELETE") == 0;
    int policy = cfg->policy_executor_enabled && !is_get;
    json_object *items = NULL, *resource = NULL;
    ncmp_buf query = NCMP_BUF_INIT;
    pm_call *c = NULL;
    char *fdn;

    if (!accept_ok(ncmp_http_header(req, "Accept"))) {
        pm_error(req, 406, "Not acceptable: the answer is application/json", NULL, NO_BADOP);
        return;
    }
    if (is_patch &&
        (!type || (!media_is(type, MEDIA_PATCH) && !media_is(type, MEDIA_3GPP_PATCH)))) {
        pm_error(req, 415, "Unsupported media type: " MEDIA_PATCH " or " MEDIA_3GPP_PATCH, NULL,
                 NO_BADOP);
        return;
    }
    if (is_put && (!type || !media_is(type, MEDIA_JSON))) {
        pm_error(req, 415, "Unsupported media type: " MEDIA_JSON, NULL, NO_BADOP);
        return;
    }
    if (is_patch && patch_items(req, cfg->provmns_max_patch_operations, &items) != 0)
        return;
    if (is_put) {
        size_t len;
        const char *body = ncmp_http_body(req, &len);
        ncmp_err err;
        if (ncmp_json_parse(body, len, &resource, &err) != 0 ||
            !json_object_is_type(resource, json_type_object)) {
            pm_error(req, 400, "Malformed resource: a JSON object is expected",
                     resource ? NULL : err.msg, NO_BADOP);
            json_object_put(resource);
            return;
        }
    }
    if (is_get && read_query(req, &query) != 0)
        goto out;
    if (!(fdn = request_fdn(req)))
        goto out;
    c = pm_new(d, req, method);
    c->patch = is_patch;
    if (pm_handle(c, fdn) != 0)
        goto fail;
    if (is_delete && on_root(c->h.alternate_id, fdn, 1)) {
        /* the whole managed element: never through ProvMnS */
        pm_errorf(req, 400, NO_BADOP, "Data manipulation operations are not supported on %.900s",
                  fdn);
        goto fail;
    }
    if (policy && is_put) {
        json_object *attrs = NULL;
        json_object_object_get_ex(resource, "attributes", &attrs);
        if (pm_plan(c, "create", fdn, json_object_get(attrs), NO_BADOP) != 0)
            goto fail;
    } else if (policy && is_delete) {
        if (pm_plan(c, "delete", fdn, NULL, NO_BADOP) != 0)
            goto fail;
    } else if (policy && is_patch) {
        for (size_t i = 0; i < json_object_array_length(items); i++)
            if (pm_plan_item(c, fdn, json_object_array_get_idx(items, i), (int)i) != 0)
                goto fail;
    }
    ncmp_dmi_url_base(&c->url, c->h.dmi);
    ncmp_buf_append_str(&c->url, "/ProvMnS/v1");
    provmns_encode_path(&c->url, fdn);
    if (query.len)
        ncmp_buf_append(&c->url, query.data, query.len);
    if (is_put || is_patch) {
        size_t len;
        const char *body = ncmp_http_body(req, &len);
        ncmp_buf_append(&c->body, body, len);
        c->content_type = ncmp_xstrdup(type);
    }
    free(fdn);
    pm_start(c);
    goto out;
fail:
    free(fdn);
    pm_free(c);
out:
    json_object_put(items);
    json_object_put(resource);
    ncmp_buf_free(&query);
}

/* POST /prov-mns-extensions/v1alpha1/actions/<DN>/<action> */
static void h_action(ncmp_http_request *req, void *arg)
{
    data *d = arg;
    const char *rest = ncmp_http_param(req, "path");
    const char *type = ncmp_http_header(req, "Content-Type");
    json_object *doc = NULL;
    ncmp_buf path = NCMP_BUF_INIT;
    const char *slash;
    char *dn = NULL;
    size_t len;
    const char *body = ncmp_http_body(req, &len);
    ncmp_err err;
    pm_call *c;
    int slashes = 0;

    ncmp_buf_append_char(&path, '/');
    ncmp_buf_append_str(&path, rest ? rest : "");
    for (const char *p = path.data; *p; p++)
        slashes += *p == '/';
    slash = strrchr(path.data, '/');
    if (slashes < 2 || !slash[1] || slash == path.data) {
        pm_errorf(req, 422, NO_BADOP, "%.900s not a valid path", path.data);
        goto out;
    }
    if (!accept_ok(ncmp_http_header(req, "Accept"))) {
        pm_error(req, 406, "Not acceptable: the answer is application/json", NULL, NO_BADOP);
        goto out;
    }
    if (!type || !media_is(type, MEDIA_JSON)) {
        pm_error(req, 415, "Unsupported media type: " MEDIA_JSON, NULL, NO_BADOP);
        goto out;
    }
    if (ncmp_json_parse(body, len, &doc, &err) != 0 ||
        !json_object_is_type(doc, json_type_object)) {
        pm_error(req, 400, "Malformed action request: a JSON object is expected",
                 doc ? NULL : err.msg, NO_BADOP);
        goto out;
    }
    dn = ncmp_xmalloc((size_t)(slash - path.data) + 1);
    memcpy(dn, path.data, (size_t)(slash - path.data));
    dn[slash - path.data] = '\0';
    c = pm_new(d, req, "POST");
    if (pm_handle(c, dn) != 0) {
        pm_free(c);
        goto out;
    }
    ncmp_dmi_url_base(&c->url, c->h.dmi);
    ncmp_buf_append_str(&c->url, "/prov-mns-extensions/v1alpha1/actions");
    provmns_encode_path(&c->url, dn);
    ncmp_buf_append_char(&c->url, '/');
    provmns_encode_path(&c->url, slash + 1);
    ncmp_buf_append(&c->body, body, len);
    c->content_type = ncmp_xstrdup(type);
    pm_start(c);
out:
    json_object_put(doc);
    free(dn);
    ncmp_buf_free(&path);
}

void provmns_routes_add(data *d, ncmp_http_server *srv)
{
    static const char *const methods[] = {"GET", "PUT", "PATCH", "DELETE"};

    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        ncmp_http_route_inline(srv, methods[i], "/ProvMnS/v1/{fdn...}", h_provmns, d);
    ncmp_http_route_inline(srv, "POST", "/prov-mns-extensions/v1alpha1/actions/{path...}", h_action,
                           d);
}
