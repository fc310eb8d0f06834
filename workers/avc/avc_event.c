#include "avc_event.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ncmp_http.h"
#include "ncmp_json.h"

/* --- operations ----------------------------------------------------------- */

static const struct {
    const char *name;
    avc_op op;
} op_names[] = {
    {"create", AVC_OP_CREATE}, {"update", AVC_OP_UPDATE}, {"replace", AVC_OP_UPDATE},
    {"patch", AVC_OP_PATCH},   {"merge", AVC_OP_PATCH},   {"delete", AVC_OP_DELETE},
    {"remove", AVC_OP_DELETE},
};

int avc_op_parse(const char *name, avc_op *op)
{
    for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
        if (strcasecmp(name, op_names[i].name) == 0) {
            *op = op_names[i].op;
            return 0;
        }
    return -1;
}

const char *avc_op_name(avc_op op)
{
    switch (op) {
    case AVC_OP_CREATE:
        return "create";
    case AVC_OP_UPDATE:
        return "update";
    case AVC_OP_PATCH:
        return "patch";
    case AVC_OP_DELETE:
        return "delete";
    }
    return "?";
}

/* --- the event ------------------------------------------------------------ */

void avc_event_clear(avc_event *ev)
{
    for (size_t i = 0; i < ev->n; i++) {
        free(ev->edits[i].target);
        free(ev->edits[i].value);
    }
    free(ev->edits);
    ev->edits = NULL;
    ev->n = 0;
}

static json_object *member(json_object *o, const char *name)
{
    json_object *v = NULL;

    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, name, &v))
        return NULL;
    return v;
}

/* One edit into *e (zeroed); REJECT names edit `i`. */
static int edit_parse(json_object *o, size_t i, avc_edit *e, ncmp_err *err)
{
    json_object *op = member(o, "operation"), *target = member(o, "target"),
                *value = member(o, "value");

    if (!json_object_is_type(o, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "edit[%zu] is not an object", i);
    if (!json_object_is_type(op, json_type_string))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "edit[%zu] has no operation", i);
    if (avc_op_parse(json_object_get_string(op), &e->op) != 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "edit[%zu]: unsupported operation '%.40s' (create, update, replace, "
                            "patch, merge, delete, remove)",
                            i, json_object_get_string(op));
    if (target && !json_object_is_type(target, json_type_null) &&
        !json_object_is_type(target, json_type_string))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "edit[%zu]: target is not a string", i);
    if (e->op != AVC_OP_DELETE) {
        if (json_object_is_type(value, json_type_object)) {
            e->value = ncmp_xstrdup(json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN));
        } else if (json_object_is_type(value, json_type_string)) {
            json_object *parsed = json_tokener_parse(json_object_get_string(value));
            int ok = json_object_is_type(parsed, json_type_object);
            json_object_put(parsed);
            if (!ok)
                return ncmp_err_set(err, NCMP_ERR_REJECT,
                                    "edit[%zu]: value is a string that holds no JSON object", i);
            e->value = ncmp_xstrdup(json_object_get_string(value));
        } else {
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "edit[%zu]: a %s needs a value (a JSON object, or one in a string)",
                                i, avc_op_name(e->op));
        }
    }
    e->target = ncmp_xstrdup(
        json_object_is_type(target, json_type_string) ? json_object_get_string(target) : "");
    return 0;
}

int avc_event_parse(const char *json, size_t len, avc_event *ev, ncmp_err *err)
{
    json_object *root = NULL, *patch, *edits;
    avc_event out = {0};
    int rc = -1;

    if (ncmp_json_parse(json, len, &root, err) != 0) {
        err->cls = NCMP_ERR_REJECT;
        goto cleanup;
    }
    patch = member(member(member(member(root, "data"), "push-change-update"), "datastore-changes"),
                   "ietf-yang-patch:yang-patch");
    if (!patch) {
        ncmp_err_set(err, NCMP_ERR_REJECT,
                     "no data.push-change-update.datastore-changes.ietf-yang-patch:yang-patch");
        goto cleanup;
    }
    edits = member(patch, "edit");
    if (!json_object_is_type(edits, json_type_array)) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "the yang-patch has no edit array");
        goto cleanup;
    }
    out.n = json_object_array_length(edits);
    out.edits = ncmp_xcalloc(out.n ? out.n : 1, sizeof(*out.edits));
    for (size_t i = 0; i < out.n; i++)
        if (edit_parse(json_object_array_get_idx(edits, i), i, &out.edits[i], err) != 0)
            goto cleanup;
    *ev = out;
    out = (avc_event){0};
    rc = 0;
cleanup:
    avc_event_clear(&out);
    json_object_put(root);
    return rc;
}

/* --- targets -------------------------------------------------------------- */

/* The end of the step starting at s[i]: the next '/' outside a predicate
 * and its quotes. */
static size_t step_end(const char *s, size_t i)
{
    char quote = 0;
    int depth = 0;

    for (; s[i]; i++) {
        if (quote) {
            if (s[i] == quote)
                quote = 0;
        } else if (depth && (s[i] == '\'' || s[i] == '"')) {
            quote = s[i];
        } else if (s[i] == '[') {
            depth++;
        } else if (s[i] == ']') {
            depth--;
        } else if (s[i] == '/' && depth == 0) {
            break;
        }
    }
    return i;
}

/* The child of `parent` (a top-level node of any implemented module when
 * NULL) named name[0..len), through choices and cases. */
static const struct lysc_node *child_named(const struct ly_ctx *ctx, const struct lysc_node *parent,
                                           const char *name, size_t len)
{
    const struct lysc_node *n = NULL;

    if (!parent) {
        const struct lys_module *mod;
        uint32_t idx = 0;
        while ((mod = ly_ctx_get_module_iter(ctx, &idx)))
            if (mod->implemented && mod->compiled &&
                (n = lys_find_child(NULL, mod, name, len, 0, 0)))
                return n;
        return NULL;
    }
    while ((n = lys_getnext(n, parent, NULL, 0)))
        if (strlen(n->name) == len && strncmp(n->name, name, len) == 0)
            return n;
    return NULL;
}

/* Append `[@key='value']` for a RESTCONF key value s[0..len),
 * percent-decoded and quoted as CPS path quotes it. */
static int append_key(ncmp_buf *out, const char *key, const char *s, size_t len, ncmp_err *err)
{
    char *v = ncmp_http_decode(s, len, 0), quote;

    if (!v) {
        ncmp_err_set(err, NCMP_ERR_REJECT,
                     "key %s: a bad %%-escape, a NUL or invalid UTF-8 in its value", key);
        return -1;
    }
    if (!strchr(v, '\''))
        quote = '\'';
    else if (!strchr(v, '"'))
        quote = '"';
    else {
        ncmp_err_set(err, NCMP_ERR_REJECT, "key %s: a value with both quote characters", key);
        free(v);
        return -1;
    }
    ncmp_buf_appendf(out, "[@%s=%c%s%c]", key, quote, v, quote);
    free(v);
    return 0;
}

/* Append the predicate of RESTCONF keys s[0..len) ("v1,v2") of `list`. */
static int append_keys(ncmp_buf *out, const struct lysc_node *list, const char *s, size_t len,
                       ncmp_err *err)
{
    const struct lysc_node *key = lysc_node_child(list);
    size_t i = 0;

    if (list->nodetype != LYS_LIST || !lysc_is_key(key))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s is not a list with keys", list->name);
    for (;;) {
        size_t j = i;
        while (j < len && s[j] != ',')
            j++;
        if (!lysc_is_key(key))
            return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: more key values than keys", list->name);
        if (append_key(out, key->name, s + i, j - i, err) != 0)
            return -1;
        key = key->next;
        if (j >= len)
            break;
        i = j + 1;
    }
    if (lysc_is_key(key))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: no value for key %s", list->name, key->name);
    return 0;
}

int avc_target_xpath(const struct ly_ctx *ctx, const char *target, ncmp_buf *xpath,
                     ncmp_buf *parent, ncmp_err *err)
{
    ncmp_buf out = NCMP_BUF_INIT;
    const struct lysc_node *node = NULL;
    size_t parent_len = 0, i = 0;
    int rc = -1;

    while (target[i]) {
        size_t end, name_end, colon, j;
        const char *step;
        if (target[i] == '/') {
            i++;
            continue;
        }
        end = step_end(target, i);
        step = target + i;
        /* name: up to a predicate or a RESTCONF key list */
        name_end = 0;
        while (i + name_end < end && step[name_end] != '[' && step[name_end] != '=')
            name_end++;
        colon = 0;
        for (j = 0; j < name_end; j++)
            if (step[j] == ':')
                colon = j + 1;
        if (name_end == colon) {
            ncmp_err_set(err, NCMP_ERR_REJECT, "target %.200s: a step without a name", target);
            goto cleanup;
        }
        node = child_named(ctx, node, step + colon, name_end - colon);
        if (!node) {
            ncmp_err_set(err, NCMP_ERR_REJECT, "target %.200s: no node %.*s in the schema", target,
                         (int)(name_end - colon), step + colon);
            goto cleanup;
        }
        parent_len = out.len;
        ncmp_buf_append_char(&out, '/');
        ncmp_buf_append(&out, step + colon, name_end - colon);
        if (i + name_end < end && step[name_end] == '=') {
            if (append_keys(&out, node, step + name_end + 1, end - i - name_end - 1, err) != 0) {
                char why[NCMP_ERR_MSG_MAX];
                snprintf(why, sizeof(why), "%s", err->msg);
                ncmp_err_set(err, NCMP_ERR_REJECT, "target %.200s: %s", target, why);
                goto cleanup;
            }
        } else if (i + name_end < end) { /* a CPS path predicate, as it is */
            if (node->nodetype != LYS_LIST) {
                ncmp_err_set(err, NCMP_ERR_REJECT, "target %.200s: %s is not a list", target,
                             node->name);
                goto cleanup;
            }
            ncmp_buf_append(&out, step + name_end, end - i - name_end);
        }
        i = end;
    }
    if (node && (node->nodetype & (LYS_LEAF | LYS_LEAFLIST))) {
        ncmp_err_set(err, NCMP_ERR_REJECT,
                     "target %.200s names a leaf; the cache changes nodes: target the node "
                     "holding it",
                     target);
        goto cleanup;
    }
    if (out.len == 0)
        ncmp_buf_append_char(&out, '/');
    ncmp_buf_append(xpath, out.data, out.len);
    ncmp_buf_append_char(xpath, '\0');
    xpath->len--;
    if (parent_len == 0)
        ncmp_buf_append_char(parent, '/');
    else
        ncmp_buf_append(parent, out.data, parent_len);
    ncmp_buf_append_char(parent, '\0');
    parent->len--;
    rc = 0;
cleanup:
    ncmp_buf_free(&out);
    return rc;
}
