#include "dmistub_provmns.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ncmp_json.h"

#define SAMPLE_NODES 6
#define SIM_DMI      "dmiSimulation="
#define SIM_POLICY   "policySimulation="

struct dmistub_provmns {
    char *sample, *get_body, *patch_body;
    size_t sample_len, get_len, patch_len;
    pthread_mutex_t lock;
    char *last_provmns, *last_policy;
};

/* --- the sample ------------------------------------------------------------ */

static const char *const tp_kinds[] = {
    "uplink-to-aggregation", "downlink-to-access",  "optical-line-east", "optical-line-west",
    "management-port",       "inter-chassis-stack", "timing-and-sync",   "spare-line-card"};

/* Termination point `tp` of a node with `tps` of them. */
static void sample_tp_id(ncmp_buf *b, int node, int tp)
{
    ncmp_buf_appendf(b, "port-%d-%d-%s", node, tp, tp_kinds[tp]);
}

static void sample_link(ncmp_buf *b, int link, int tps, int last)
{
    int from = link % SAMPLE_NODES + 1, to = (link + 1 + link / SAMPLE_NODES) % SAMPLE_NODES + 1;
    int tp = link % tps;

    ncmp_buf_appendf(b,
                     "      {\n        \"link-id\": \"link-%03d-site-%d-to-site-%d\",\n"
                     "        \"source\": {\"source-node\": \"site-%d-router\", \"source-tp\": \"",
                     link + 1, from, to, from);
    sample_tp_id(b, from, tp);
    ncmp_buf_appendf(b,
                     "\"},\n        \"destination\": {\"dest-node\": \"site-%d-router\", "
                     "\"dest-tp\": \"",
                     to);
    sample_tp_id(b, to, (tp + 1) % tps);
    ncmp_buf_appendf(b, "\"}\n      }%s\n", last ? "" : ",");
}

/* The topology: SAMPLE_NODES nodes of `tps` termination points (the
 * first `extra` nodes one more), `links` links, the network-id padded
 * with `pad` '-'. */
static void sample_build(ncmp_buf *b, int tps, int extra, int links, size_t pad)
{
    ncmp_buf_reset(b);
    ncmp_buf_append_str(b, "{\n  \"network-types\": {},\n  \"network-id\": \"stub-sample-network");
    for (size_t i = 0; i < pad; i++)
        ncmp_buf_append_char(b, '-');
    ncmp_buf_append_str(b, "\",\n  \"node\": [\n");
    for (int n = 1; n <= SAMPLE_NODES; n++) {
        ncmp_buf_appendf(b, "    {\n      \"node-id\": \"site-%d-router\",\n", n);
        ncmp_buf_append_str(b, "      \"termination-point\": [\n");
        int count = tps + (n <= extra);
        for (int t = 0; t < count; t++) {
            ncmp_buf_append_str(b, "        {\"tp-id\": \"");
            sample_tp_id(b, n, t);
            ncmp_buf_append_str(b, t + 1 < count ? "\"},\n" : "\"}\n");
        }
        ncmp_buf_appendf(b,
                         "      ],\n      \"supporting-node\": [\n"
                         "        {\"network-ref\": \"physical-layer\", \"node-ref\": \"pn-%d\"}\n"
                         "      ]\n    }%s\n",
                         n, n < SAMPLE_NODES ? "," : "");
    }
    ncmp_buf_append_str(b, "  ],\n  \"ietf-network-topology:link\": [\n");
    for (int l = 0; l < links; l++)
        sample_link(b, l, tps, l + 1 == links);
    ncmp_buf_append_str(b, "  ]\n}\n");
}

/* The node size and link count that come closest to the size from
 * below, then the network-id padded to make it exact. */
static char *sample_new(size_t *len)
{
    const int max_tps = (int)(sizeof(tp_kinds) / sizeof(tp_kinds[0]));
    ncmp_buf b = NCMP_BUF_INIT;
    size_t best_pad = DMISTUB_PROVMNS_SAMPLE_LEN;
    int best[3] = {4, 0, 1};

    for (int tps = 4; tps < max_tps; tps++)
        for (int extra = 0; extra < SAMPLE_NODES; extra++)
            for (int links = 1; links <= 40; links++) {
                sample_build(&b, tps, extra, links, 0);
                if (b.len <= DMISTUB_PROVMNS_SAMPLE_LEN &&
                    DMISTUB_PROVMNS_SAMPLE_LEN - b.len < best_pad) {
                    best_pad = DMISTUB_PROVMNS_SAMPLE_LEN - b.len;
                    best[0] = tps;
                    best[1] = extra;
                    best[2] = links;
                }
            }
    sample_build(&b, best[0], best[1], best[2], best_pad);
    *len = b.len;
    return b.data;
}

static char *body_take(ncmp_buf *b, size_t *len)
{
    *len = b->len;
    return b->data;
}

dmistub_provmns *dmistub_provmns_new(void)
{
    dmistub_provmns *p = ncmp_xcalloc(1, sizeof(*p));
    ncmp_buf b = NCMP_BUF_INIT;

    p->sample = sample_new(&p->sample_len);
    ncmp_buf_append_str(&b, "{\"id\":\"some id\",\"objectClass\":\"dummyClass\","
                            "\"objectInstance\":\"dummyInstance\",\"attributes\":");
    ncmp_buf_append_json_string(&b, p->sample);
    ncmp_buf_append_char(&b, '}');
    p->get_body = body_take(&b, &p->get_len);
    b = (ncmp_buf)NCMP_BUF_INIT;
    ncmp_buf_append_str(&b,
                        "[{\"op\":\"add\",\"from\":null,\"path\":\"/path=setByStub\",\"value\":");
    ncmp_buf_append_json_string(&b, p->sample);
    ncmp_buf_append_str(&b, "},{\"op\":\"remove\",\"from\":null,\"path\":\"/path=alsoSetByStub\","
                            "\"value\":null}]");
    p->patch_body = body_take(&b, &p->patch_len);
    pthread_mutex_init(&p->lock, NULL);
    return p;
}

void dmistub_provmns_free(dmistub_provmns *p)
{
    if (!p)
        return;
    free(p->sample);
    free(p->get_body);
    free(p->patch_body);
    free(p->last_provmns);
    free(p->last_policy);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

const char *dmistub_provmns_sample(const dmistub_provmns *p, size_t *len)
{
    *len = p->sample_len;
    return p->sample;
}

const char *dmistub_provmns_get_body(const dmistub_provmns *p, size_t *len)
{
    *len = p->get_len;
    return p->get_body;
}

const char *dmistub_provmns_patch_body(const dmistub_provmns *p, size_t *len)
{
    *len = p->patch_len;
    return p->patch_body;
}

/* --- checks and markers ---------------------------------------------------- */

/* s[0..n) is all digits, 1 to max of them. */
static int digits(const char *s, size_t n, size_t max)
{
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static long number(const char *s, size_t n)
{
    long v = 0;

    for (size_t i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* v[0..n) is prefix + digits (1 to max): their value, else -1. */
static long marker_value(const char *v, size_t n, const char *prefix, size_t max)
{
    size_t k = strlen(prefix);

    if (n <= k || strncmp(v, prefix, k) != 0 || !digits(v + k, n - k, max))
        return -1;
    return number(v + k, n - k);
}

void dmistub_provmns_simulation(const char *path, unsigned *http_error, long *slow_ms)
{
    const size_t k = sizeof(SIM_DMI) - 1;

    *http_error = 0;
    *slow_ms = 0;
    for (const char *p = strstr(path, SIM_DMI); p; p = strstr(p + k, SIM_DMI)) {
        const char *v = p + k;
        size_t n = strcspn(v, "/,");
        long code, ms;
        if (p != path && p[-1] != '/' && p[-1] != ',')
            continue;
        if ((code = marker_value(v, n, "httpError_", 3)) >= 0 && n == 13 && code >= 200 &&
            code <= 599)
            *http_error = (unsigned)code;
        else if ((ms = marker_value(v, n, "slowResponse_", 9)) >= 0)
            *slow_ms += ms;
    }
}

int dmistub_media_type_in(const char *content_type, const char *const *accepted)
{
    size_t n;

    if (!content_type)
        return 0;
    while (*content_type == ' ')
        content_type++;
    n = strcspn(content_type, "; ");
    for (; *accepted; accepted++)
        if (strlen(*accepted) == n && strncasecmp(content_type, *accepted, n) == 0)
            return 1;
    return 0;
}

int dmistub_provmns_check_patch(json_object *doc, ncmp_err *err)
{
    static const char *const ops[] = {"add", "replace", "remove", "copy", "move", "test"};

    if (!json_object_is_type(doc, json_type_array))
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "a PATCH body must be a JSON array of patch items");
    for (size_t i = 0; i < json_object_array_length(doc); i++) {
        json_object *item = json_object_array_get_idx(doc, i);
        const char *op = NULL, *path = NULL;
        size_t k;
        if (!json_object_is_type(item, json_type_object) ||
            ncmp_json_string_field(item, "op", &op, err) != 0 ||
            ncmp_json_string_field(item, "path", &path, err) != 0 || !op || !path)
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "patch item %zu: an object with \"op\" and \"path\" (strings)", i);
        for (k = 0; k < sizeof(ops) / sizeof(ops[0]) && strcmp(op, ops[k]) != 0; k++)
            ;
        if (k == sizeof(ops) / sizeof(ops[0]))
            return ncmp_err_set(err, NCMP_ERR_REJECT,
                                "patch item %zu: op \"%s\" is not add, replace, remove, copy, "
                                "move or test",
                                i, op);
    }
    return 0;
}

/* --- the policy executor stub ---------------------------------------------- */

static int operation_check(json_object *op, size_t i, ncmp_err *err)
{
    static const char *const strings[] = {"operation", "entityHandleId", "resourceIdentifier",
                                          "targetIdentifier"};
    const char *v;

    if (!json_object_is_type(op, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "operations[%zu] must be an object", i);
    for (size_t k = 0; k < sizeof(strings) / sizeof(strings[0]); k++) {
        if (ncmp_json_string_field(op, strings[k], &v, err) != 0)
            return ncmp_err_set(err, NCMP_ERR_REJECT, "operations[%zu].%s must be a string", i,
                                strings[k]);
        if (!v && (k == 0 || k == 3))
            return ncmp_err_set(err, NCMP_ERR_REJECT, "operations[%zu].%s is required", i,
                                strings[k]);
    }
    return 0;
}

int dmistub_policy_check(json_object *doc, const char **first_resource, ncmp_err *err)
{
    json_object *ops = NULL, *first, *change = NULL;
    const char *format = NULL, *operation = NULL;

    if (!json_object_is_type(doc, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "a permission request must be a JSON object");
    if (ncmp_json_string_field(doc, "changeRequestFormat", &format, err) != 0 || !format)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "changeRequestFormat (a string) is required");
    if (ncmp_json_array_field(doc, "operations", &ops, err) != 0 || !ops)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "operations (an array) is required");
    if (json_object_array_length(ops) == 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "operations must not be empty");
    for (size_t i = 0; i < json_object_array_length(ops); i++)
        if (operation_check(json_object_array_get_idx(ops, i), i, err) != 0)
            return -1;
    first = json_object_array_get_idx(ops, 0);
    ncmp_json_string_field(first, "operation", &operation, err);
    json_object_object_get_ex(first, "changeRequest", &change);
    if (strcmp(operation, "delete") != 0 && !change)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "a changeRequest is required for %s operations",
                            operation);
    ncmp_json_string_field(first, "resourceIdentifier", first_resource, err);
    if (!*first_resource)
        *first_resource = "";
    return 0;
}

static int word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

void dmistub_policy_simulation(const char *resource_identifier, dmistub_policy_sim *sim)
{
    const char *p = strstr(resource_identifier, SIM_POLICY), *v;
    size_t n = 0;
    long value;

    memset(sim, 0, sizeof(*sim));
    if (!p)
        return;
    for (v = p + sizeof(SIM_POLICY) - 1; word_char(v[n]); n++)
        ;
    if ((value = marker_value(v, n, "slowResponse_", 3)) >= 0) {
        sim->slow_ms = value * 1000;
    } else if ((value = marker_value(v, n, "httpError_", 3)) >= 0 && n == 13) {
        if (value >= 200 && value <= 599)
            sim->http_error = (unsigned)value;
    } else if (n > 15 && strncmp(v, "policyResponse_", 15) == 0) {
        n -= 15;
        if (n >= sizeof(sim->result))
            n = sizeof(sim->result) - 1;
        memcpy(sim->result, v + 15, n);
        sim->result[n] = '\0';
    }
}

/* --- the last requests ----------------------------------------------------- */

static void keep(dmistub_provmns *p, char **slot, char *json)
{
    pthread_mutex_lock(&p->lock);
    free(*slot);
    *slot = json;
    pthread_mutex_unlock(&p->lock);
}

static char *kept(dmistub_provmns *p, char *const *slot)
{
    char *copy;

    pthread_mutex_lock(&p->lock);
    copy = *slot ? ncmp_xstrdup(*slot) : NULL;
    pthread_mutex_unlock(&p->lock);
    return copy;
}

static void field(ncmp_buf *b, const char *name, const char *value, int last)
{
    ncmp_buf_appendf(b, "\"%s\":", name);
    ncmp_buf_append_json_string(b, value ? value : "");
    ncmp_buf_append_char(b, last ? '}' : ',');
}

void dmistub_provmns_keep(dmistub_provmns *p, const char *method, const char *path,
                          const char *query, const char *content_type, const char *authorization,
                          const char *body)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_char(&b, '{');
    field(&b, "method", method, 0);
    field(&b, "path", path, 0);
    field(&b, "query", query, 0);
    field(&b, "contentType", content_type, 0);
    field(&b, "authorization", authorization, 0);
    field(&b, "body", body, 1);
    keep(p, &p->last_provmns, b.data);
}

void dmistub_policy_keep(dmistub_provmns *p, const char *authorization, const char *body,
                         size_t len)
{
    ncmp_buf b = NCMP_BUF_INIT;
    json_object *doc = NULL;
    ncmp_err err;
    int is_json = body && ncmp_json_parse(body, len, &doc, &err) == 0;

    json_object_put(doc);
    ncmp_buf_append_char(&b, '{');
    field(&b, "authorization", authorization, 0);
    ncmp_buf_append_str(&b, "\"body\":");
    if (is_json)
        ncmp_buf_append(&b, body, len);
    else
        ncmp_buf_append_json_string(&b, body ? body : "");
    ncmp_buf_append_char(&b, '}');
    keep(p, &p->last_policy, b.data);
}

char *dmistub_provmns_last(dmistub_provmns *p)
{
    return kept(p, &p->last_provmns);
}

char *dmistub_policy_last(dmistub_provmns *p)
{
    return kept(p, &p->last_policy);
}

void dmistub_provmns_forget(dmistub_provmns *p)
{
    keep(p, &p->last_provmns, NULL);
    keep(p, &p->last_policy, NULL);
}
