#include "dmistub_models.h"

#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "ncmp_yang.h"

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

void dmistub_yang_source(ncmp_buf *out, const char *name, const char *revision, int invalid,
                         int generation)
{
    size_t start = out->len, fixed, pad;

    ncmp_buf_appendf(out, yang_head, name, name, revision);
    if (generation > 0) /* other content, same name, revision and length */
        ncmp_buf_appendf(out, "generation %d ", generation);
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
static void append_resource(ncmp_buf *out, const char *name, const char *revision, int invalid,
                            int generation)
{
    ncmp_buf src = NCMP_BUF_INIT;

    dmistub_yang_source(&src, name, revision, invalid, generation);
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
        append_resource(&b, name, tag_revisions[tag], 0, 0);
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
                            int generation, int *first, ncmp_buf *out, ncmp_err *err)
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
    if (invalid || generation)
        append_resource(out, json_object_get_string(name), tag_revisions[tag], invalid, generation);
    else
        ncmp_buf_append(out, s->resources[i], s->resources_len[i]);
    return 0;
}

static void append_all(module_set *s, int tag, int invalid, int generation, ncmp_buf *out)
{
    for (int i = 0; i < dmistub_tag_module_count(tag); i++) {
        char name[32];
        if (i)
            ncmp_buf_append_char(out, ',');
        snprintf(name, sizeof(name), "module%d", i);
        if (invalid || generation)
            append_resource(out, name, tag_revisions[tag], invalid, generation);
        else
            ncmp_buf_append(out, s->resources[i], s->resources_len[i]);
    }
}

int dmistub_models_resources(dmistub_models *m, int tag, json_object *modules, int invalid_yang,
                             int generation, ncmp_buf *out, ncmp_err *err)
{
    module_set *s = set_with_resources(m, tag);
    int first = 1;

    if (modules && !json_object_is_type(modules, json_type_array))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data.modules: not an array");
    ncmp_buf_append_char(out, '[');
    if (!modules)
        append_all(s, tag, invalid_yang, generation, out);
    for (size_t i = 0; modules && i < json_object_array_length(modules); i++)
        if (append_requested(s, tag, json_object_array_get_idx(modules, i), i, invalid_yang,
                             generation, &first, out, err) != 0)
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

/* --- a data model and a tree per handle ------------------------------------ */

typedef struct data_module {
    char *name, *revision, *source;
    int needed; /* the root's module imports it (or is it) */
} data_module;

struct dmistub_data {
    data_module *mods;
    size_t nmods;
    char *root;       /* "module:container" */
    char *references; /* {"schemas":[...]} of the needed modules */
    size_t references_len;
    /* the answer around the tree, and the tree cut at each id marker */
    char *head, *tail;
    char **pieces;
    size_t npieces;
};

static char *dup_n(const char *s, size_t n)
{
    char *c = ncmp_xmalloc(n + 1);
    memcpy(c, s, n);
    c[n] = '\0';
    return c;
}

static void data_module_add(dmistub_data *d, const char *source, ncmp_err *err, int *rc)
{
    char *name = NULL, *revision = NULL;

    if (ncmp_yang_source_name(source, &name, &revision, err) != 0) {
        *rc = -1;
        return;
    }
    d->mods = ncmp_xrealloc(d->mods, (d->nmods + 1) * sizeof(*d->mods));
    d->mods[d->nmods++] =
        (data_module){name, revision ? revision : ncmp_xstrdup(""), ncmp_xstrdup(source), 0};
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int data_read_zip(dmistub_data *d, const char *path, ncmp_err *err)
{
    int zerr = 0, rc = 0;
    zip_t *za = zip_open(path, ZIP_RDONLY, &zerr);

    if (!za)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "--data-model %s: not a readable zip", path);
    for (zip_int64_t i = 0; rc == 0 && i < zip_get_num_entries(za, 0); i++) {
        const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
        zip_stat_t st;
        zip_file_t *f;
        char *text;
        if (!name || !ends_with(name, ".yang") ||
            zip_stat_index(za, (zip_uint64_t)i, 0, &st) != 0 ||
            !(f = zip_fopen_index(za, (zip_uint64_t)i, 0)))
            continue;
        text = ncmp_xmalloc(st.size + 1);
        if (zip_fread(f, text, st.size) == (zip_int64_t)st.size) {
            text[st.size] = '\0';
            data_module_add(d, text, err, &rc);
        }
        zip_fclose(f);
        free(text);
    }
    zip_close(za);
    return rc;
}

static int file_read(const char *path, ncmp_buf *out)
{
    FILE *f = fopen(path, "rb");
    char block[65536];
    size_t n;

    if (!f)
        return -1;
    while ((n = fread(block, 1, sizeof(block), f)) > 0)
        ncmp_buf_append(out, block, n);
    fclose(f);
    ncmp_buf_append_char(out, '\0');
    out->len--;
    return 0;
}

static int data_read_dir(dmistub_data *d, const char *path, ncmp_err *err)
{
    DIR *dir = opendir(path);
    struct dirent *e;
    int rc = 0;

    if (!dir)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "--data-model %s: neither a zip nor a directory",
                            path);
    while (rc == 0 && (e = readdir(dir))) {
        ncmp_buf file = NCMP_BUF_INIT, text = NCMP_BUF_INIT;
        if (ends_with(e->d_name, ".yang")) {
            ncmp_buf_appendf(&file, "%s/%s", path, e->d_name);
            if (file_read(file.data, &text) == 0 && text.data)
                data_module_add(d, text.data, err, &rc);
        }
        ncmp_buf_free(&file);
        ncmp_buf_free(&text);
    }
    closedir(dir);
    return rc;
}

static data_module *data_module_find(dmistub_data *d, const char *name, size_t len)
{
    for (size_t i = 0; i < d->nmods; i++)
        if (strlen(d->mods[i].name) == len && memcmp(d->mods[i].name, name, len) == 0)
            return &d->mods[i];
    return NULL;
}

/* Mark `m` and what it imports or includes (a scan of the text for the
 * two keywords: enough for the models a stub serves). */
static void data_mark_needed(dmistub_data *d, data_module *m)
{
    static const char *const words[] = {"import", "include"};

    if (m->needed)
        return;
    m->needed = 1;
    for (size_t w = 0; w < 2; w++)
        for (const char *p = strstr(m->source, words[w]); p; p = strstr(p + 1, words[w])) {
            const char *q = p + strlen(words[w]), *name;
            data_module *dep;
            if (p > m->source && !isspace((unsigned char)p[-1]) && p[-1] != ';' && p[-1] != '{')
                continue;
            if (!isspace((unsigned char)*q))
                continue;
            while (isspace((unsigned char)*q))
                q++;
            name = q;
            while (*q && (isalnum((unsigned char)*q) || *q == '-' || *q == '_' || *q == '.'))
                q++;
            if ((dep = data_module_find(d, name, (size_t)(q - name))))
                data_mark_needed(d, dep);
        }
}

static void data_build_references(dmistub_data *d)
{
    ncmp_buf b = NCMP_BUF_INIT;
    int first = 1;

    ncmp_buf_append_str(&b, "{\"schemas\":[");
    for (size_t i = 0; i < d->nmods; i++) {
        if (!d->mods[i].needed)
            continue;
        ncmp_buf_append_str(&b, first ? "{\"moduleName\":" : ",{\"moduleName\":");
        ncmp_buf_append_json_string(&b, d->mods[i].name);
        ncmp_buf_append_str(&b, ",\"revision\":");
        ncmp_buf_append_json_string(&b, d->mods[i].revision);
        ncmp_buf_append_str(&b, ",\"namespace\":\"\"}");
        first = 0;
    }
    ncmp_buf_append_str(&b, "]}");
    d->references = b.data;
    d->references_len = b.len;
}

/* The answer around the tree, and the tree (compact) cut at each marker. */
static int data_build_tree(dmistub_data *d, const char *tree_path, const char *root,
                           const char *marker, ncmp_err *err)
{
    ncmp_buf text = NCMP_BUF_INIT, head = NCMP_BUF_INIT, tail = NCMP_BUF_INIT;
    json_object *doc = NULL;
    const char *slash = strchr(root, '/'), *compact, *p;
    int rc = -1;

    if (file_read(tree_path, &text) != 0 || !text.data) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "--data-tree %s: cannot read it", tree_path);
        goto cleanup;
    }
    doc = json_tokener_parse(text.data);
    if (!doc || !json_object_is_type(doc, json_type_object)) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "--data-tree %s: not a JSON object", tree_path);
        goto cleanup;
    }
    d->root = slash ? dup_n(root, (size_t)(slash - root)) : ncmp_xstrdup(root);
    ncmp_buf_append_str(&head, "{");
    ncmp_buf_append_json_string(&head, d->root);
    ncmp_buf_append_char(&head, ':');
    if (slash) {
        ncmp_buf_append_char(&head, '{');
        ncmp_buf_append_json_string(&head, slash + 1);
        ncmp_buf_append_str(&head, ":[");
        ncmp_buf_append_str(&tail, "]}");
    }
    ncmp_buf_append_char(&tail, '}');
    d->head = head.data;
    d->tail = tail.data;
    head = (ncmp_buf)NCMP_BUF_INIT;
    tail = (ncmp_buf)NCMP_BUF_INIT;
    compact = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE);
    for (p = compact;;) {
        const char *m = *marker ? strstr(p, marker) : NULL;
        size_t n = m ? (size_t)(m - p) : strlen(p);
        d->pieces = ncmp_xrealloc(d->pieces, (d->npieces + 1) * sizeof(*d->pieces));
        d->pieces[d->npieces++] = dup_n(p, n);
        if (!m)
            break;
        p = m + strlen(marker);
    }
    rc = 0;
cleanup:
    json_object_put(doc);
    ncmp_buf_free(&text);
    ncmp_buf_free(&head);
    ncmp_buf_free(&tail);
    return rc;
}

int dmistub_data_load(dmistub_data **out, const char *model, const char *tree, const char *root,
                      const char *id_marker, ncmp_err *err)
{
    dmistub_data *d = ncmp_xcalloc(1, sizeof(*d));
    const char *colon = strchr(root, ':');
    data_module *m;
    int rc;

    if (!colon || colon == root)
        rc = ncmp_err_set(err, NCMP_ERR_FATAL, "--data-root '%s': expected module:container[/list]",
                          root);
    else
        rc = ends_with(model, ".zip") ? data_read_zip(d, model, err) : data_read_dir(d, model, err);
    if (rc == 0 && !(m = data_module_find(d, root, (size_t)(colon - root))))
        rc = ncmp_err_set(err, NCMP_ERR_FATAL, "--data-model %s has no module %.*s", model,
                          (int)(colon - root), root);
    if (rc == 0) {
        data_mark_needed(d, m);
        data_build_references(d);
        rc = data_build_tree(d, tree, root, id_marker, err);
    }
    if (rc != 0) {
        dmistub_data_free(d);
        return -1;
    }
    *out = d;
    return 0;
}

void dmistub_data_free(dmistub_data *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nmods; i++) {
        free(d->mods[i].name);
        free(d->mods[i].revision);
        free(d->mods[i].source);
    }
    for (size_t i = 0; i < d->npieces; i++)
        free(d->pieces[i]);
    free(d->pieces);
    free(d->mods);
    free(d->root);
    free(d->references);
    free(d->head);
    free(d->tail);
    free(d);
}

const char *dmistub_data_references(const dmistub_data *d, size_t *len)
{
    *len = d->references_len;
    return d->references;
}

static void data_append_resource(ncmp_buf *out, const data_module *m)
{
    ncmp_buf_append_str(out, "{\"moduleName\":");
    ncmp_buf_append_json_string(out, m->name);
    ncmp_buf_append_str(out, ",\"revision\":");
    ncmp_buf_append_json_string(out, m->revision);
    ncmp_buf_append_str(out, ",\"yangSource\":");
    ncmp_buf_append_json_string(out, m->source);
    ncmp_buf_append_char(out, '}');
}

int dmistub_data_resources(const dmistub_data *d, json_object *modules, ncmp_buf *out,
                           ncmp_err *err)
{
    int first = 1;

    if (modules && !json_object_is_type(modules, json_type_array))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data.modules: not an array");
    ncmp_buf_append_char(out, '[');
    for (size_t i = 0; i < d->nmods; i++) {
        const data_module *m = &d->mods[i];
        int wanted = !modules && m->needed;
        for (size_t k = 0; modules && !wanted && k < json_object_array_length(modules); k++) {
            json_object *e = json_object_array_get_idx(modules, k), *name = NULL, *rev = NULL;
            if (!json_object_is_type(e, json_type_object) ||
                !json_object_object_get_ex(e, "name", &name) ||
                !json_object_is_type(name, json_type_string))
                return ncmp_err_set(err, NCMP_ERR_REJECT,
                                    "data.modules[%zu]: expected an object with a string \"name\"",
                                    k);
            json_object_object_get_ex(e, "revision", &rev);
            wanted = strcmp(json_object_get_string(name), m->name) == 0 &&
                     (!rev || !json_object_is_type(rev, json_type_string) ||
                      strcmp(json_object_get_string(rev), m->revision) == 0);
        }
        if (!wanted)
            continue;
        if (!first)
            ncmp_buf_append_char(out, ',');
        first = 0;
        data_append_resource(out, m);
    }
    ncmp_buf_append_char(out, ']');
    return 0;
}

int dmistub_data_selects(const dmistub_data *d, const char *options)
{
    const char *f = options ? strstr(options, "fields=") : NULL;
    size_t n;

    if (!f)
        return -1;
    f += strlen("fields=");
    n = strcspn(f, ");,");
    return strlen(d->root) == n && memcmp(f, d->root, n) == 0;
}

void dmistub_data_append(const dmistub_data *d, const char *id, ncmp_buf *out)
{
    ncmp_buf_append_str(out, d->head);
    for (size_t i = 0; i < d->npieces; i++) {
        if (i) { /* the id inside a JSON string: escaped as one */
            ncmp_buf esc = NCMP_BUF_INIT;
            ncmp_buf_append_json_string(&esc, id);
            ncmp_buf_append(out, esc.data + 1, esc.len - 2);
            ncmp_buf_free(&esc);
        }
        ncmp_buf_append_str(out, d->pieces[i]);
    }
    ncmp_buf_append_str(out, d->tail);
}
