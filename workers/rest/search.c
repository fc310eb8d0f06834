#include "search.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_cpspath.h"
#include "ncmp_json.h"
#include "ncmp_pgarray.h"

#define INVALID_QUERY "Invalid Query Parameter."

static const char *const northbound_names[] = {"hasAllModules", "hasAllProperties",
                                               "cmHandleWithCpsPath", "cmHandleWithTrustLevel"};
static const char *const southbound_names[] = {"hasAllAdditionalProperties",
                                               "cmHandleWithDmiPlugin"};

#define NB_COUNT (sizeof(northbound_names) / sizeof(northbound_names[0]))
#define SB_COUNT (sizeof(southbound_names) / sizeof(southbound_names[0]))

static int refuse(search_error *e, const char *message, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(search_error *e, const char *message, const char *fmt, ...)
{
    va_list ap;

    snprintf(e->message, sizeof(e->message), "%s", message);
    va_start(ap, fmt);
    vsnprintf(e->details, sizeof(e->details), fmt, ap);
    va_end(ap);
    return -1;
}

void search_query_free(search_query *q)
{
    for (int i = 0; i < q->nparams; i++)
        free(q->params[i]);
    free(q->params);
    for (int i = 0; i < q->nconds; i++) {
        for (int j = 0; j < q->conds[i].n; j++) {
            if (q->conds[i].keys)
                free(q->conds[i].keys[j]);
            free(q->conds[i].values[j]);
        }
        free(q->conds[i].keys);
        free(q->conds[i].values);
    }
    free(q->conds);
    ncmp_buf_free(&q->where);
    memset(q, 0, sizeof(*q));
}

/* Take over `value` as the next parameter; returns its number ($n). */
static int param_add(search_query *q, char *value)
{
    q->params = ncmp_xrealloc(q->params, (size_t)(q->nparams + 1) * sizeof(*q->params));
    q->params[q->nparams++] = value;
    return q->nparams;
}

/* Add a condition for the in-memory evaluation; returns it. */
static search_cond *cond_add(search_query *q, search_cond_kind kind)
{
    search_cond *c;

    q->conds = ncmp_xrealloc(q->conds, (size_t)(q->nconds + 1) * sizeof(*q->conds));
    c = &q->conds[q->nconds++];
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    return c;
}

static void cond_value(search_cond *c, const char *key, const char *value)
{
    c->values = ncmp_xrealloc(c->values, (size_t)(c->n + 1) * sizeof(*c->values));
    c->values[c->n] = ncmp_xstrdup(value);
    if (key) {
        c->keys = ncmp_xrealloc(c->keys, (size_t)(c->n + 1) * sizeof(*c->keys));
        c->keys[c->n] = ncmp_xstrdup(key);
    }
    c->n++;
}

/* --- validation (NCMP's CmHandleQueryParametersValidator) ---------------- */

static int name_known(const char *name, search_side side)
{
    for (size_t i = 0; i < NB_COUNT; i++)
        if (strcmp(name, northbound_names[i]) == 0)
            return 1;
    for (size_t i = 0; side == SEARCH_SOUTHBOUND && i < SB_COUNT; i++)
        if (strcmp(name, southbound_names[i]) == 0)
            return 1;
    return 0;
}

/* One {"key":"value"} of conditionParameters. */
static int check_parameter(json_object *p, const char *name, search_error *e)
{
    if (!json_object_is_type(p, json_type_object))
        return refuse(e, INVALID_QUERY, "conditionParameters of %s must hold objects", name);
    if (json_object_object_length(p) == 0)
        return refuse(e, INVALID_QUERY,
                      "Empty conditionsParameter - please supply a valid condition parameter.");
    if (json_object_object_length(p) > 1)
        return refuse(e, INVALID_QUERY,
                      "Too many conditionsParameters - please supply only one parameter per "
                      "condition.");
    json_object_object_foreach(p, key, val)
    {
        json_type t = json_object_get_type(val);
        if (!*key)
            return refuse(e, INVALID_QUERY,
                          "Missing 'conditionsParameter' - please supply a valid condition "
                          "parameter name.");
        if (t != json_type_string && t != json_type_int && t != json_type_double &&
            t != json_type_boolean)
            return refuse(e, INVALID_QUERY, "the value of '%s' in %s must be a string", key, name);
    }
    return 0;
}

static int check_condition(const char *name, json_object *params, search_side side, search_error *e)
{
    if (!name || !*name)
        return refuse(e, INVALID_QUERY, "Missing 'conditionName' - please supply a valid name.");
    if (!name_known(name, side))
        return refuse(e, INVALID_QUERY, "Wrong 'conditionName': %s - please supply a valid name.",
                      name);
    if (!params || json_object_array_length(params) == 0)
        return refuse(e, INVALID_QUERY,
                      "Empty conditionsParameters - please supply a valid condition parameter.");
    for (size_t i = 0; i < json_object_array_length(params); i++)
        if (check_parameter(json_object_array_get_idx(params, i), name, e) != 0)
            return -1;
    return 0;
}

/* --- one condition to SQL ------------------------------------------------ */

/* The only key and its value (as text) of a parameter object. */
static void parameter_kv(json_object *p, const char **key, const char **value)
{
    *key = "";
    *value = "";
    json_object_object_foreach(p, k, v)
    {
        *key = k;
        *value = json_object_get_string(v);
        return;
    }
}

static void sql_modules(search_query *q, json_object *params)
{
    size_t n = json_object_array_length(params);
    const char **names = ncmp_xcalloc(n, sizeof(*names));
    ncmp_buf arr = NCMP_BUF_INIT;
    int foreign = 0, k;

    for (size_t i = 0; i < n; i++) {
        const char *key, *value;
        parameter_kv(json_object_array_get_idx(params, i), &key, &value);
        foreign |= strcmp(key, "moduleName") != 0;
        names[i] = value;
    }
    if (foreign) {
        /* NCMP reads moduleName only: another key is a module named null */
        ncmp_buf_append_str(&q->where, "false");
        cond_add(q, SEARCH_COND_NONE);
        free(names);
        return;
    }
    {
        search_cond *c = cond_add(q, SEARCH_COND_MODULES);
        for (size_t i = 0; i < n; i++)
            cond_value(c, NULL, names[i]);
    }
    ncmp_pgarray_text(&arr, names, n);
    free(names);
    k = param_add(q, arr.data);
    ncmp_buf_appendf(&q->where,
                     "h.module_set_id IN (SELECT m.module_set_id FROM module_set_member m"
                     " WHERE m.module_name = ANY($%d::text[]) GROUP BY m.module_set_id"
                     " HAVING count(DISTINCT m.module_name) ="
                     " (SELECT count(DISTINCT x) FROM unnest($%d::text[]) x))",
                     k, k);
}

/* hasAllProperties / hasAllAdditionalProperties: containment of the
 * merged {"name":"value"} object, which the GIN index answers. */
static void sql_properties(search_query *q, json_object *params, const char *column,
                           search_cond_kind kind)
{
    json_object *merged = json_object_new_object();
    int conflict = 0, k;

    for (size_t i = 0; i < json_object_array_length(params); i++) {
        const char *key, *value;
        json_object *have;
        parameter_kv(json_object_array_get_idx(params, i), &key, &value);
        if (json_object_object_get_ex(merged, key, &have))
            conflict |= strcmp(json_object_get_string(have), value) != 0;
        else
            json_object_object_add(merged, key, json_object_new_string(value));
    }
    if (conflict) {
        /* one property cannot have two values */
        ncmp_buf_append_str(&q->where, "false");
        cond_add(q, SEARCH_COND_NONE);
    } else {
        search_cond *c = cond_add(q, kind);
        json_object_object_foreach(merged, key, val)
        {
            cond_value(c, key, json_object_get_string(val));
        }
        k = param_add(q,
                      ncmp_xstrdup(json_object_to_json_string_ext(merged, JSON_C_TO_STRING_PLAIN)));
        ncmp_buf_appendf(&q->where, "h.%s @> $%d::jsonb", column, k);
    }
    json_object_put(merged);
}

static int sql_cpspath(search_query *q, json_object *params, search_error *e)
{
    const char *path = NULL;
    ncmp_cpspath_params cp = {NULL, 0};
    ncmp_buf sub = NCMP_BUF_INIT;
    ncmp_cpspath_comparison one;
    ncmp_err err = {NCMP_ERR_NONE, ""};

    /* the parameter maps are merged: the last cpsPath wins */
    for (size_t i = 0; i < json_object_array_length(params); i++) {
        const char *key, *value;
        parameter_kv(json_object_array_get_idx(params, i), &key, &value);
        if (strcmp(key, "cpsPath") == 0)
            path = value;
    }
    if (!path)
        return refuse(e, INVALID_QUERY,
                      "Missing 'cpsPath' - please supply a CPS path in cmHandleWithCpsPath.");
    if (ncmp_cpspath_to_sql(path, q->nparams + 1, &sub, &cp, &one, &err) != 0) {
        ncmp_buf_free(&sub);
        ncmp_cpspath_params_free(&cp);
        return refuse(e, "Invalid CPS path.", "%s", err.msg);
    }
    ncmp_buf_appendf(&q->where, "(%s)", sub.data ? sub.data : "true");
    if (one.column) {
        /* the usual CPS paths come down to one comparison of a column,
         * e.g. //state[@cm-handle-state='READY']: h.state = $k */
        search_cond *c = cond_add(q, SEARCH_COND_COLUMN);
        cond_value(c, one.column, cp.values[0]);
        c->negate = one.negate;
    } else if (sub.data && strcmp(sub.data, "false") == 0) {
        cond_add(q, SEARCH_COND_NONE);
    } else if (sub.data && strcmp(sub.data, "true") != 0) {
        q->needs_db = 1;
    }
    for (size_t i = 0; i < cp.n; i++) {
        param_add(q, cp.values[i]);
        cp.values[i] = NULL;
    }
    ncmp_cpspath_params_free(&cp);
    ncmp_buf_free(&sub);
    return 0;
}

/* The value of the first parameter as the next SQL parameter; returns
 * its number. */
static int first_value_param(search_query *q, json_object *params, search_cond_kind kind)
{
    const char *key, *value;

    parameter_kv(json_object_array_get_idx(params, 0), &key, &value);
    cond_value(cond_add(q, kind), NULL, value);
    return param_add(q, ncmp_xstrdup(value));
}

static void sql_dmi_plugin(search_query *q, int k)
{
    ncmp_buf_appendf(&q->where,
                     "(h.dmi_service_name = $%d OR h.dmi_data_service_name = $%d"
                     " OR h.dmi_model_service_name = $%d)",
                     k, k, k);
}

static int sql_condition(search_query *q, const char *name, json_object *params, search_error *e)
{
    if (q->where.len)
        ncmp_buf_append_str(&q->where, " AND ");
    if (strcmp(name, "hasAllModules") == 0)
        sql_modules(q, params);
    else if (strcmp(name, "hasAllProperties") == 0)
        sql_properties(q, params, "public_properties", SEARCH_COND_PUBLIC);
    else if (strcmp(name, "hasAllAdditionalProperties") == 0)
        sql_properties(q, params, "additional_properties", SEARCH_COND_ADDITIONAL);
    else if (strcmp(name, "cmHandleWithCpsPath") == 0)
        return sql_cpspath(q, params, e);
    else if (strcmp(name, "cmHandleWithTrustLevel") == 0)
        /* the key is not looked at; the first value counts */
        ncmp_buf_appendf(&q->where, "h.effective_trust_level = $%d",
                         first_value_param(q, params, SEARCH_COND_TRUST));
    else
        sql_dmi_plugin(q, first_value_param(q, params, SEARCH_COND_DMI));
    return 0;
}

/* --- the body ------------------------------------------------------------ */

typedef struct condition {
    const char *name;
    json_object *params;
} condition;

/* Collect the conditions of `arr` (entries with `name_key` and
 * conditionParameters), validating each. */
static int collect(json_object *arr, const char *field, const char *name_key, search_side side,
                   condition **conds, size_t *n, search_error *e)
{
    ncmp_err err;

    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *c = json_object_array_get_idx(arr, i), *params = NULL;
        const char *name = NULL;
        if (!json_object_is_type(c, json_type_object))
            return refuse(e, INVALID_QUERY, "%s[%zu] must be an object", field, i);
        if (ncmp_json_string_field(c, name_key, &name, &err) != 0 ||
            ncmp_json_array_field(c, "conditionParameters", &params, &err) != 0)
            return refuse(e, INVALID_QUERY, "%s[%zu]: %s", field, i, err.msg);
        if (check_condition(name, params, side, e) != 0)
            return -1;
        *conds = ncmp_xrealloc(*conds, (*n + 1) * sizeof(**conds));
        (*conds)[*n].name = name;
        (*conds)[(*n)++].params = params;
    }
    return 0;
}

static int conditions_read(json_object *root, search_side side, int legacy, condition **conds,
                           size_t *n, search_error *e)
{
    json_object *arr = NULL;
    ncmp_err err;

    if (!json_object_is_type(root, json_type_object))
        return refuse(e, INVALID_QUERY, "the body must be a JSON object (CmHandleQueryParameters)");
    if (ncmp_json_array_field(root, "cmHandleQueryParameters", &arr, &err) != 0)
        return refuse(e, INVALID_QUERY, "%s", err.msg);
    if (arr && collect(arr, "cmHandleQueryParameters", "conditionName", side, conds, n, e) != 0)
        return -1;
    if (!legacy)
        return 0;
    if (ncmp_json_array_field(root, "conditions", &arr, &err) != 0)
        return refuse(e, INVALID_QUERY, "%s", err.msg);
    return arr ? collect(arr, "conditions", "name", side, conds, n, e) : 0;
}

int search_parse(const char *body, size_t len, search_side side, int legacy, search_query *q,
                 search_error *e)
{
    json_object *root = NULL;
    condition *conds = NULL;
    size_t n = 0;
    ncmp_err err;
    int rc = -1;

    memset(q, 0, sizeof(*q));
    if (len == 0) {
        refuse(e, "Required request body is missing", "send CmHandleQueryParameters as JSON");
        goto done;
    }
    if (ncmp_json_parse(body, len, &root, &err) != 0) {
        refuse(e, "Invalid JSON body", "%s", err.msg);
        goto done;
    }
    if (conditions_read(root, side, legacy, &conds, &n, e) != 0)
        goto done;
    for (size_t i = 0; i < n; i++) {
        int first = 1;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(conds[j].name, conds[i].name) != 0;
        if (first && sql_condition(q, conds[i].name, conds[i].params, e) != 0)
            goto done;
    }
    if (!q->where.len)
        ncmp_buf_append_str(&q->where, "true");
    rc = 0;
done:
    if (rc != 0)
        search_query_free(q);
    free(conds);
    json_object_put(root);
    return rc;
}
