#include "dmistub_models.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tag_names[DMISTUB_TAGS] = {"tagA", "tagB", "tagC",
                                                    "tagD", "tagE", "tagDefault"};
static const char *const tag_revisions[DMISTUB_TAGS] = {"2024-01-01", "2024-02-02", "2024-03-03",
                                                        "2024-04-04", "2024-05-05", "2024-01-01"};

/* The reference stub's template; the description takes the padding. */
static const char yang_head[] = "module %s {\n"
                                "    yang-version 1.1;\n"
                                "    namespace \"org:onap:cps:test:%s\";\n"
                                "    prefix tree;\n"
                                "    revision \"%s\" {\n"
                                "        description \"";
static const char yang_tail[] = "\";\n"
                                "    }\n"
                                "    container tree {\n"
                                "        list branch {\n"
                                "            key \"name\";\n"
                                "            leaf name {\n"
                                "                type string;\n"
                                "            }\n"
                                "        }\n"
                                "    }\n"
                                "}\n";

/* A sample RFC 8345 topology; "#network-id" is replaced per answer. */
static const char topology[] = "{\n"
                               "  \"ietf-network:networks\": {\n"
                               "    \"network\": [\n"
                               "      {\n"
                               "        \"network-types\": {},\n"
                               "        \"network-id\": \"#network-id\",\n"
                               "        \"node\": [\n"
                               "          {\n"
                               "            \"node-id\": \"D1\",\n"
                               "            \"ietf-network-topology:termination-point\": [\n"
                               "              {\n"
                               "                \"tp-id\": \"D1-1-0-1\"\n"
                               "              },\n"
                               "              {\n"
                               "                \"tp-id\": \"D1-2-0-1\"\n"
                               "              }\n"
                               "            ]\n"
                               "          },\n"
                               "          {\n"
                               "            \"node-id\": \"D2\",\n"
                               "            \"ietf-network-topology:termination-point\": [\n"
                               "              {\n"
                               "                \"tp-id\": \"D2-1-0-1\"\n"
                               "              },\n"
                               "              {\n"
                               "                \"tp-id\": \"D2-2-0-1\"\n"
                               "              }\n"
                               "            ]\n"
                               "          },\n"
                               "          {\n"
                               "            \"node-id\": \"D3\",\n"
                               "            \"ietf-network-topology:termination-point\": [\n"
                               "              {\n"
                               "                \"tp-id\": \"D3-1-0-1\"\n"
                               "              },\n"
                               "              {\n"
                               "                \"tp-id\": \"D3-2-0-1\"\n"
                               "              }\n"
                               "            ]\n"
                               "          }\n"
                               "        ],\n"
                               "        \"ietf-network-topology:link\": [\n"
                               "          {\n"
                               "            \"link-id\": \"D1,D1-1-0-1,D2,D2-2-0-1\",\n"
                               "            \"source\": {\n"
                               "              \"source-node\": \"D1\",\n"
                               "              \"source-tp\": \"D1-1-0-1\"\n"
                               "            },\n"
                               "            \"destination\": {\n"
                               "              \"dest-node\": \"D2\",\n"
                               "              \"dest-tp\": \"D2-2-0-1\"\n"
                               "            }\n"
                               "          },\n"
                               "          {\n"
                               "            \"link-id\": \"D2,D2-1-0-1,D3,D3-2-0-1\",\n"
                               "            \"source\": {\n"
                               "              \"source-node\": \"D2\",\n"
                               "              \"source-tp\": \"D2-1-0-1\"\n"
                               "            },\n"
                               "            \"destination\": {\n"
                               "              \"dest-node\": \"D3\",\n"
                               "              \"dest-tp\": \"D3-2-0-1\"\n"
                               "            }\n"
                               "          },\n"
                               "          {\n"
                               "            \"link-id\": \"D3,D3-1-0-1,D1,D1-2-0-1\",\n"
                               "            \"source\": {\n"
                               "              \"source-node\": \"D3\",\n"
                               "              \"source-tp\": \"D3-1-0-1\"\n"
                               "            },\n"
                               "            \"destination\": {\n"
                               "              \"dest-node\": \"D1\",\n"
                               "              \"dest-tp\": \"D1-2-0-1\"\n"
                               "            }\n"
                               "          }\n"
                               "        ]\n"
                               "      }\n"
                               "    ]\n"
                               "  }\n"
                               "}\n";

#define NETWORK_ID_MARK "\"#network-id\""

/* One module set's answers. */
typedef struct module_set {
    char *references; /* the whole /modules body */
    size_t references_len;
    char **resources; /* per module: its {"moduleName",...,"yangSource"} element */
    size_t *resources_len;
} module_set;

struct dmistub_models {
    pthread_mutex_t lock;
    module_set sets[DMISTUB_TAGS];
    char *topology_compact; /* one line, still holding NETWORK_ID_MARK */
};

int dmistub_tag_index(const char *tag)
{
    for (int i = 0; tag && i < DMISTUB_TAG_DEFAULT; i++)
        if (strcmp(tag, tag_names[i]) == 0)
            return i;
    return DMISTUB_TAG_DEFAULT;
}

const char *dmistub_tag_name(int index)
{
    return tag_names[index];
}

const char *dmistub_tag_revision(int index)
{
    return tag_revisions[index];
}

int dmistub_tag_module_count(int index)
{
    return index == DMISTUB_TAG_DEFAULT ? 10 : 200;
}

void dmistub_yang_source(ncmp_buf *out, const char *name, const char *revision, int invalid)
{
    size_t start = out->len, fixed, pad;

    ncmp_buf_appendf(out, yang_head, name, name, revision);
    fixed = out->len - start + sizeof(yang_tail) - 1;
    pad = fixed < DMISTUB_YANG_SOURCE_LEN ? DMISTUB_YANG_SOURCE_LEN - fixed : 0;
    ncmp_buf_reserve(out, pad + sizeof(yang_tail));
    memset(out->data + out->len, '*', pad);
    out->len += pad;
    ncmp_buf_append_str(out, yang_tail);
    if (invalid)
        out->data[out->len - 2] = ' '; /* the module's closing brace */
}

static void set_build_references(module_set *s, int tag)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_str(&b, "{\"schemas\":[");
    for (int i = 0; i < dmistub_tag_module_count(tag); i++)
        ncmp_buf_appendf(&b,
                         "%s{\"moduleName\":\"module%d\",\"revision\":\"%s\","
                         "\"namespace\":\"org:onap:cps:test:module%d\"}",
                         i ? "," : "", i, tag_revisions[tag], i);
    ncmp_buf_append_str(&b, "]}");
    s->references = b.data;
    s->references_len = b.len;
}

/* Append {"moduleName":..,"revision":..,"yangSource":..}. */
static void append_resource(ncmp_buf *out, const char *name, const char *revision, int invalid)
{
    ncmp_buf src = NCMP_BUF_INIT;

    dmistub_yang_source(&src, name, revision, invalid);
    ncmp_buf_append_str(out, "{\"moduleName\":");
    ncmp_buf_append_json_string(out, name);
    ncmp_buf_append_str(out, ",\"revision\":");
    ncmp_buf_append_json_string(out, revision);
    ncmp_buf_append_str(out, ",\"yangSource\":");
    ncmp_buf_append_json_string(out, src.data);
    ncmp_buf_append_char(out, '}');
    ncmp_buf_free(&src);
}

static void set_build_resources(module_set *s, int tag)
{
    int n = dmistub_tag_module_count(tag);

    s->resources = ncmp_xcalloc((size_t)n, sizeof(*s->resources));
    s->resources_len = ncmp_xcalloc((size_t)n, sizeof(*s->resources_len));
    for (int i = 0; i < n; i++) {
        ncmp_buf b = NCMP_BUF_INIT;
        char name[32];
        snprintf(name, sizeof(name), "module%d", i);
        append_resource(&b, name, tag_revisions[tag], 0);
        s->resources[i] = b.data;
        s->resources_len[i] = b.len;
    }
}

static char *minify_topology(void)
{
    json_object *doc = json_tokener_parse(topology);
    char *text = ncmp_xstrdup(json_object_to_json_string_ext(
        doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));

    json_object_put(doc);
    return text;
}

dmistub_models *dmistub_models_new(void)
{
    dmistub_models *m = ncmp_xcalloc(1, sizeof(*m));

    pthread_mutex_init(&m->lock, NULL);
    for (int t = 0; t < DMISTUB_TAGS; t++)
        set_build_references(&m->sets[t], t);
    m->topology_compact = minify_topology();
    return m;
}

void dmistub_models_free(dmistub_models *m)
{
    if (!m)
        return;
    for (int t = 0; t < DMISTUB_TAGS; t++) {
        module_set *s = &m->sets[t];
        for (int i = 0; s->resources && i < dmistub_tag_module_count(t); i++)
            free(s->resources[i]);
        free(s->resources);
        free(s->resources_len);
        free(s->references);
    }
    free(m->topology_compact);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

const char *dmistub_models_references(dmistub_models *m, int tag, size_t *len)
{
    *len = m->sets[tag].references_len;
    return m->sets[tag].references;
}

/* The set's resources, built on first use (6.5 MB for a full tag). */
static module_set *set_with_resources(dmistub_models *m, int tag)
{
    module_set *s = &m->sets[tag];

    pthread_mutex_lock(&m->lock);
    if (!s->resources)
        set_build_resources(s, tag);
    pthread_mutex_unlock(&m->lock);
    return s;
}

/* Index of module `name` ("module<N>", N written without leading zeros)
 * in a set of n modules, or -1. */
static int module_index(const char *name, int n)
{
    char *end;
    long i;

    if (strncmp(name, "module", 6) != 0 || name[6] < '0' || name[6] > '9' ||
        (name[6] == '0' && name[7]))
        return -1;
    i = strtol(name + 6, &end, 10);
    return *end || i >= n ? -1 : (int)i;
}

/* Append one requested module, if the set holds it. */
static int append_requested(module_set *s, int tag, json_object *entry, size_t at, int invalid,
                            int *first, ncmp_buf *out, ncmp_err *err)
{
    json_object *name = NULL, *rev = NULL;
    int i;

    if (!json_object_is_type(entry, json_type_object) ||
        !json_object_object_get_ex(entry, "name", &name) ||
        !json_object_is_type(name, json_type_string))
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "data.modules[%zu]: expected an object with a string \"name\"", at);
    if (json_object_object_get_ex(entry, "revision", &rev) && rev &&
        !json_object_is_type(rev, json_type_string))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data.modules[%zu].revision: not a string", at);
    i = module_index(json_object_get_string(name), dmistub_tag_module_count(tag));
    if (i < 0 || (rev && strcmp(json_object_get_string(rev), tag_revisions[tag]) != 0))
        return 0;
    if (!*first)
        ncmp_buf_append_char(out, ',');
    *first = 0;
    if (invalid)
        append_resource(out, json_object_get_string(name), tag_revisions[tag], 1);
    else
        ncmp_buf_append(out, s->resources[i], s->resources_len[i]);
    return 0;
}

static void append_all(module_set *s, int tag, int invalid, ncmp_buf *out)
{
    for (int i = 0; i < dmistub_tag_module_count(tag); i++) {
        char name[32];
        if (i)
            ncmp_buf_append_char(out, ',');
        snprintf(name, sizeof(name), "module%d", i);
        if (invalid)
            append_resource(out, name, tag_revisions[tag], 1);
        else
            ncmp_buf_append(out, s->resources[i], s->resources_len[i]);
    }
}

int dmistub_models_resources(dmistub_models *m, int tag, json_object *modules, int invalid_yang,
                             ncmp_buf *out, ncmp_err *err)
{
    module_set *s = set_with_resources(m, tag);
    int first = 1;

    if (modules && !json_object_is_type(modules, json_type_array))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data.modules: not an array");
    ncmp_buf_append_char(out, '[');
    if (!modules)
        append_all(s, tag, invalid_yang, out);
    for (size_t i = 0; modules && i < json_object_array_length(modules); i++)
        if (append_requested(s, tag, json_object_array_get_idx(modules, i), i, invalid_yang, &first,
                             out, err) != 0)
            return -1;
    ncmp_buf_append_char(out, ']');
    return 0;
}

/* Append `text` with its one NETWORK_ID_MARK replaced by network_id as a
 * JSON string. */
static void append_with_network_id(ncmp_buf *out, const char *text, const char *network_id)
{
    const char *mark = strstr(text, NETWORK_ID_MARK);

    ncmp_buf_append(out, text, (size_t)(mark - text));
    ncmp_buf_append_json_string(out, network_id);
    ncmp_buf_append_str(out, mark + sizeof(NETWORK_ID_MARK) - 1);
}

void dmistub_topology_append(ncmp_buf *out, const char *network_id)
{
    append_with_network_id(out, topology, network_id);
}

void dmistub_topology_append_compact(dmistub_models *m, ncmp_buf *out, const char *network_id)
{
    append_with_network_id(out, m->topology_compact, network_id);
}
