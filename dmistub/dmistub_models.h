/*
 * dmistub_models: what the stub answers, built once and kept.
 *
 * Module sets as in ONAP's reference stub (NCMP's reference workload): tags tagA..tagE
 * hold 200 modules each, module0..module199, all with the tag's revision
 * (tagA 2024-01-01, tagB 2024-02-02, ... tagE 2024-05-05); any other or
 * absent tag selects tagDefault, 10 modules of revision 2024-01-01. The
 * namespace of module M is "org:onap:cps:test:M".
 *
 * Each YANG source is the reference template padded with '*' in the
 * revision's description to exactly DMISTUB_YANG_SOURCE_LEN characters;
 * it parses with libyang. A module set's JSON is built on first use and
 * kept until dmistub_models_free, so a request only copies bytes.
 *
 * The pass-through answer is a sample RFC 8345 topology of about 1.9 KB
 * whose "network-id" is `<scheme://host:port>-<cmHandleId>`.
 *
 * Everything here is thread-safe.
 */
#ifndef DMISTUB_MODELS_H
#define DMISTUB_MODELS_H

#include <json-c/json.h>
#include <stddef.h>

#include "ncmp_buf.h"
#include "ncmp_err.h"

#define DMISTUB_TAGS            6 /* tagA..tagE, tagDefault */
#define DMISTUB_TAG_DEFAULT     5
#define DMISTUB_YANG_SOURCE_LEN 32768

/* The module set a request's moduleSetTag selects: 0..4 for tagA..tagE,
 * DMISTUB_TAG_DEFAULT for anything else (NULL and "" included). */
int dmistub_tag_index(const char *tag);

/* "tagA".."tagE", "tagDefault". */
const char *dmistub_tag_name(int index);

/* "2024-01-01" for tagA and tagDefault, ... "2024-05-05" for tagE. */
const char *dmistub_tag_revision(int index);

/* 200, or 10 for tagDefault. */
int dmistub_tag_module_count(int index);

/* Append the YANG source of module `name` at `revision`: exactly
 * DMISTUB_YANG_SOURCE_LEN characters. With `invalid`, the same text with
 * its last closing brace missing: the length stays, libyang rejects it.
 * A `generation` > 0 writes "generation <n>" into the description: other
 * content (and checksum) under the same name and revision, as a DMI
 * plugin that regenerated its models answers. */
void dmistub_yang_source(ncmp_buf *out, const char *name, const char *revision, int invalid,
                         int generation);

typedef struct dmistub_models dmistub_models;

/* Owned by the caller (dmistub_models_free). */
dmistub_models *dmistub_models_new(void);

void dmistub_models_free(dmistub_models *m);

/* The body of POST /modules for a module set:
 * {"schemas":[{"moduleName","revision","namespace"}...]}. Borrowed from m. */
const char *dmistub_models_references(dmistub_models *m, int tag, size_t *len);

/* Append the body of POST /moduleResources to out: a JSON array of
 * {"moduleName","revision","yangSource"} for each entry of `modules` (a
 * JSON array of {"name","revision"} objects, borrowed; NULL means every
 * module of the set). Requested modules that the set does not hold (other
 * name, other revision) are left out; a request without a revision takes
 * the set's. With `invalid_yang` every source is invalid YANG; with a
 * `generation` > 0 every source is of that generation. A malformed
 * `modules` is a REJECT naming the entry (out is then unspecified). */
int dmistub_models_resources(dmistub_models *m, int tag, json_object *modules, int invalid_yang,
                             int generation, ncmp_buf *out, ncmp_err *err);

/* Append the pass-through sample with `network_id` as its network-id,
 * pretty-printed (about 1.9 KB). */
void dmistub_topology_append(ncmp_buf *out, const char *network_id);

/* The same sample on one line, for event bodies. */
void dmistub_topology_append_compact(dmistub_models *m, ncmp_buf *out, const char *network_id);

/* --- a data model and a tree per handle (--data-model, data sync) ---------- */

/*
 * A real model and one data tree, for NCMP's data sync: handles whose
 * module set tag is a --data-tag get the modules of --data-model that the
 * --data-root module needs (itself and what it imports, directly or
 * not) as their module set, and a read with options=(fields=<root>) is
 * answered with the tree of --data-tree placed under --data-root, its
 * --data-id-marker replaced by the handle id (one device per handle). A
 * read of another root of the model answers {}.
 */
typedef struct dmistub_data dmistub_data;

/* Load the model (a .zip or a directory of .yang files), the tree (JSON)
 * and the root ("module:container" or "module:container/list": the tree
 * is then one entry of the list). A missing file, a model without the
 * root's module or a tree that is not a JSON object is FATAL. On success
 * *out is owned by the caller (dmistub_data_free). */
int dmistub_data_load(dmistub_data **out, const char *model, const char *tree, const char *root,
                      const char *id_marker, ncmp_err *err);

void dmistub_data_free(dmistub_data *d);

/* The module references answer of the model's modules. Borrowed. */
const char *dmistub_data_references(const dmistub_data *d, size_t *len);

/* As dmistub_models_resources, for the model's modules. */
int dmistub_data_resources(const dmistub_data *d, json_object *modules, ncmp_buf *out,
                           ncmp_err *err);

/* What a read with `options` selects: 1 the tree's root, 0 another root
 * of the model ({}), -1 no root (options without fields=<module:name>,
 * or none): the read is not about this model. */
int dmistub_data_selects(const dmistub_data *d, const char *options);

/* Append the tree's answer for handle `id`: {"module:container": ...}. */
void dmistub_data_append(const dmistub_data *d, const char *id, ncmp_buf *out);

#endif
