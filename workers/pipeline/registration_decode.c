/*
 * registration_decode: NCMP's DmiPluginRegistration body, decoded and
 * checked before anything touches the database (see registration_decode.h).
 */
#include "registration_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_json.h"

/* --- validation ---------------------------------------------------------- */

int registration_id_valid(const char *id)
{
    static const char bad[] = "=!\" #$%&'()*+,./\\:;<>?@[]^`{|}~";
    if (!id || !*id)
        return 0;
    return strpbrk(id, bad) == NULL;
}

/* --- request decoding ---------------------------------------------------- */

static const char *own(reg_request *r, char *s)
{
    r->owned = ncmp_xrealloc(r->owned, (r->nowned + 1) * sizeof(*r->owned));
    r->owned[r->nowned++] = s;
    return s;
}

/* A trimmed copy, or NULL for NULL. */
static const char *trimmed(reg_request *r, const char *s)
{
    size_t n;
    char *t;
    if (!s)
        return NULL;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    t = ncmp_xmalloc(n + 1);
    memcpy(t, s, n);
    t[n] = '\0';
    return own(r, t);
}

void registration_request_free(reg_request *r)
{
    for (size_t i = 0; i < r->ncreated; i++) {
        free(r->created[i].additional_set);
        free(r->created[i].additional_del);
        free(r->created[i].public_set);
        free(r->created[i].public_del);
    }
    for (size_t i = 0; i < r->nupdated; i++) {
        free(r->updated[i].additional_set);
        free(r->updated[i].additional_del);
        free(r->updated[i].public_set);
        free(r->updated[i].public_del);
    }
    free(r->created);
    free(r->updated);
    free(r->removed);
    free(r->upgraded);
    for (size_t i = 0; i < r->nowned; i++)
        free(r->owned[i]);
    free(r->owned);
    json_object_put(r->root);
    memset(r, 0, sizeof(*r));
}

/* Properties map -> JSON object of string values to set, and JSON array of
 * names whose value is null (to delete). Numbers and booleans are taken as
 * their text, as NCMP's Map<String,String> binding does. */
static int decode_properties(json_object *map, const char *field, char **set, char **del,
                             ncmp_err *err)
{
    ncmp_buf s = NCMP_BUF_INIT, d = NCMP_BUF_INIT;
    int ns = 0, nd = 0;

    ncmp_buf_append_char(&s, '{');
    ncmp_buf_append_char(&d, '[');
    json_object_object_foreach(map, key, val)
    {
        json_type t = json_object_get_type(val);
        if (t == json_type_null) {
            if (nd++)
                ncmp_buf_append_char(&d, ',');
            ncmp_buf_append_json_string(&d, key);
            continue;
        }
        if (t == json_type_object || t == json_type_array) {
            ncmp_buf_free(&s);
            ncmp_buf_free(&d);
            return ncmp_err_set(err, NCMP_ERR_REJECT, "%s.%s must be a string, not %s", field, key,
                                json_type_to_name(t));
        }
        if (ns++)
            ncmp_buf_append_char(&s, ',');
        ncmp_buf_append_json_string(&s, key);
        ncmp_buf_append_char(&s, ':');
        ncmp_buf_append_json_string(&s, json_object_get_string(val));
    }
    ncmp_buf_append_char(&s, '}');
    ncmp_buf_append_char(&d, ']');
    *set = s.data;
    *del = d.data;
    return 0;
}

static int decode_handle(reg_request *r, json_object *o, const char *where, reg_handle *h,
                         ncmp_err *err)
{
    json_object *props;
    const char *s;

    memset(h, 0, sizeof(*h));
    if (!json_object_is_type(o, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: each handle must be an object", where);
    if (ncmp_json_string_field(o, "cmHandle", &h->id, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    if (!h->id)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: a handle without cmHandle", where);
    if (ncmp_json_string_field(o, "alternateId", &s, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    h->has_alternate_id = s != NULL;
    h->alternate_id = trimmed(r, s);
    if (h->alternate_id && !*h->alternate_id)
        h->alternate_id = NULL; /* blank means none */
    if (ncmp_json_string_field(o, "moduleSetTag", &s, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    h->module_set_tag = s ? trimmed(r, s) : "";
    if (ncmp_json_string_field(o, "dataProducerIdentifier", &s, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    h->has_data_producer_identifier = s != NULL;
    h->data_producer_identifier = s ? trimmed(r, s) : "";
    if (ncmp_json_string_field(o, "trustLevel", &h->trust_level, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    if (h->trust_level && strcmp(h->trust_level, "COMPLETE") != 0 &&
        strcmp(h->trust_level, "NONE") != 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: trustLevel must be COMPLETE or NONE, not %s",
                            where, h->trust_level);
    if (ncmp_json_object_field(o, "cmHandleProperties", &props, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    if (props) {
        h->has_additional = 1;
        if (decode_properties(props, "cmHandleProperties", &h->additional_set, &h->additional_del,
                              err) != 0)
            return ncmp_err_prefix(err, "%s", where);
    }
    if (ncmp_json_object_field(o, "publicCmHandleProperties", &props, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    if (props) {
        h->has_public = 1;
        if (decode_properties(props, "publicCmHandleProperties", &h->public_set, &h->public_del,
                              err) != 0)
            return ncmp_err_prefix(err, "%s", where);
    }
    return 0;
}

static int decode_handles(reg_request *r, json_object *root, const char *field, reg_handle **out,
                          size_t *n, ncmp_err *err)
{
    json_object *arr;
    size_t len;

    if (ncmp_json_array_field(root, field, &arr, err) != 0)
        return -1;
    if (!arr)
        return 0;
    len = json_object_array_length(arr);
    *out = ncmp_xcalloc(len ? len : 1, sizeof(**out));
    for (size_t i = 0; i < len; i++) {
        char where[96];
        snprintf(where, sizeof(where), "%s[%zu]", field, i);
        (*n)++;
        if (decode_handle(r, json_object_array_get_idx(arr, i), where, &(*out)[i], err) != 0)
            return -1;
    }
    return 0;
}

static int decode_ids(json_object *arr, const char *field, const char ***out, size_t *n,
                      ncmp_err *err)
{
    size_t len = json_object_array_length(arr);

    *out = ncmp_xcalloc(len ? len : 1, sizeof(**out));
    for (size_t i = 0; i < len; i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(v, json_type_string))
            return ncmp_err_set(err, NCMP_ERR_REJECT, "%s[%zu] must be a string", field, i);
        (*out)[(*n)++] = json_object_get_string(v);
    }
    return 0;
}

int registration_request_decode(reg_request *r, const void *payload, size_t len, ncmp_err *err)
{
    json_object *arr, *up;

    memset(r, 0, sizeof(*r));
    if (ncmp_json_parse(payload, len, &r->root, err) != 0)
        return -1;
    if (!json_object_is_type(r->root, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "a registration must be a JSON object (DmiPluginRegistration)");
    if (ncmp_json_string_field(r->root, "dmiPlugin", &r->dmi_plugin, err) != 0 ||
        ncmp_json_string_field(r->root, "dmiDataPlugin", &r->dmi_data_plugin, err) != 0 ||
        ncmp_json_string_field(r->root, "dmiModelPlugin", &r->dmi_model_plugin, err) != 0 ||
        ncmp_json_string_field(r->root, "dmiDatajobsReadPlugin", &r->dmi_datajobs_read_plugin,
                               err) != 0 ||
        ncmp_json_string_field(r->root, "dmiDatajobsWritePlugin", &r->dmi_datajobs_write_plugin,
                               err) != 0)
        return -1;
    r->dmi_plugin = r->dmi_plugin ? trimmed(r, r->dmi_plugin) : "";
    r->dmi_data_plugin = r->dmi_data_plugin ? trimmed(r, r->dmi_data_plugin) : "";
    r->dmi_model_plugin = r->dmi_model_plugin ? trimmed(r, r->dmi_model_plugin) : "";
    r->dmi_datajobs_read_plugin =
        r->dmi_datajobs_read_plugin ? trimmed(r, r->dmi_datajobs_read_plugin) : "";
    r->dmi_datajobs_write_plugin =
        r->dmi_datajobs_write_plugin ? trimmed(r, r->dmi_datajobs_write_plugin) : "";
    if (decode_handles(r, r->root, "createdCmHandles", &r->created, &r->ncreated, err) != 0 ||
        decode_handles(r, r->root, "updatedCmHandles", &r->updated, &r->nupdated, err) != 0)
        return -1;
    if (ncmp_json_array_field(r->root, "removedCmHandles", &arr, err) != 0)
        return -1;
    if (arr && decode_ids(arr, "removedCmHandles", &r->removed, &r->nremoved, err) != 0)
        return -1;
    if (ncmp_json_object_field(r->root, "upgradedCmHandles", &up, err) != 0)
        return -1;
    if (up) {
        if (ncmp_json_array_field(up, "cmHandles", &arr, err) != 0)
            return ncmp_err_prefix(err, "upgradedCmHandles");
        if (!arr)
            return ncmp_err_set(err, NCMP_ERR_REJECT, "upgradedCmHandles.cmHandles is required");
        if (decode_ids(arr, "upgradedCmHandles.cmHandles", &r->upgraded, &r->nupgraded, err) != 0)
            return -1;
        if (ncmp_json_string_field(up, "moduleSetTag", &r->upgrade_tag, err) != 0)
            return ncmp_err_prefix(err, "upgradedCmHandles");
        r->upgrade_tag = r->upgrade_tag ? trimmed(r, r->upgrade_tag) : "";
    }
    return 0;
}
