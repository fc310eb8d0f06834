/*
 * ncmpd's own JSON Schemas (schema/): each is well-formed (strict JSON,
 * draft 2019-09, an $id and a description, only keywords the validator
 * knows, so that a misspelt keyword cannot pass unnoticed), each event
 * has one, and none is vacuous: the instances of
 * data/schema/<file> are accepted or refused, for the reason given, as
 * that file says. The AVC sample the benchmark publishes is checked too.
 *
 * The run also says whether NCMP's published schemas are checked in
 * addition (they are optional; see conformance.h).
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <dirent.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conformance.h"
#include "conformance_leak.h"
#include "jschema.h"
#include "ncmp_buf.h"
#include "ncmp_json.h"

#ifndef NCMP_CONFORMANCE_DATA_DIR
#error "define NCMP_CONFORMANCE_DATA_DIR (tests/conformance/data)"
#endif
#ifndef NCMP_SOURCE_DIR
#error "define NCMP_SOURCE_DIR (the source tree)"
#endif

#define DRAFT        "https://json-schema.org/draft/2019-09/schema"
#define ID_PREFIX    "urn:ncmpd:schema:"
#define EXAMPLES_DIR NCMP_CONFORMANCE_DATA_DIR "/schema"
#define AVC_SAMPLE   NCMP_SOURCE_DIR "/tests/bench/data/avc-sample.json"
#define MAX_SCHEMAS  64

/* Printed once per run, before the tests, so that a log says which
 * schemas were checked. */
ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
    char line[1024];

    (void)set;
    fprintf(stderr, "%s\n", conformance_onap_status(line, sizeof(line)));
}

/* What a test holds, freed after it even when an assertion ends it early. */
static json_object *held_json[4];
static jschema *held_schema;

static void schemas_fini(void)
{
    for (size_t i = 0; i < sizeof(held_json) / sizeof(held_json[0]); i++) {
        json_object_put(held_json[i]);
        held_json[i] = NULL;
    }
    jschema_free(held_schema);
    held_schema = NULL;
    conformance_leak_check();
}

TestSuite(schemas, .fini = schemas_fini);

static int name_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The *.json files of `dir`, sorted; returns how many. */
static size_t list_json(const char *dir, char names[][256], size_t max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;

    cr_assert_not_null(d, "cannot read %s", dir);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);

        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        if (n == max) {
            closedir(d);
            cr_assert_fail("more than %zu files in %s", max, dir);
        }
        snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), name_cmp);
    return n;
}

/* A file read as strict JSON (owned by the caller). */
static json_object *read_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    ncmp_buf b = NCMP_BUF_INIT;
    json_object *doc = NULL;
    char chunk[8192];
    ncmp_err err;
    size_t n;
    int rc;

    cr_assert_not_null(f, "cannot read %s", path);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        ncmp_buf_append(&b, chunk, n);
    fclose(f);
    rc = ncmp_json_parse(b.data ? b.data : "", b.len, &doc, &err);
    ncmp_buf_free(&b);
    cr_assert_eq(rc, 0, "%s: not strict JSON: %s", path, err.msg);
    return doc;
}

static int is_one_of(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return 1;
    return 0;
}

/* Every keyword of the schema object `schema` at `where` is one the
 * validator checks or a known annotation; recurse into the subschemas.
 * Returns 0, or -1 with the offending place in err. */
static int keywords_known(json_object *schema, const char *where, char *err, size_t errlen)
{
    static const char *const known[] = {
        /* checked by jschema */
        "type", "enum", "const", "properties", "required", "additionalProperties", "items",
        "minItems", "maxItems", "minLength", "maxLength", "pattern", "allOf", "anyOf", "oneOf",
        "not", "$ref",
        /* annotations */
        "$schema", "$id", "$comment", "title", "description", "default", "examples", "$defs"};
    static const char *const maps[] = {"properties", "$defs"};
    static const char *const lists[] = {"allOf", "anyOf", "oneOf"};
    static const char *const single[] = {"items", "additionalProperties", "not"};
    char at[1024];

    if (json_object_is_type(schema, json_type_boolean))
        return 0;
    if (!json_object_is_type(schema, json_type_object)) {
        snprintf(err, errlen, "%s: a schema must be an object or a boolean", where);
        return -1;
    }
    json_object_object_foreach(schema, key, val)
    {
        if (!is_one_of(key, known, sizeof(known) / sizeof(known[0]))) {
            snprintf(err, errlen, "%s: unknown keyword \"%s\"", where, key);
            return -1;
        }
        snprintf(at, sizeof(at), "%s/%s", where, key);
        if (is_one_of(key, maps, sizeof(maps) / sizeof(maps[0]))) {
            if (!json_object_is_type(val, json_type_object)) {
                snprintf(err, errlen, "%s: not an object", at);
                return -1;
            }
            json_object_object_foreach(val, name, sub)
            {
                char sub_at[1300];

                snprintf(sub_at, sizeof(sub_at), "%s/%s", at, name);
                if (keywords_known(sub, sub_at, err, errlen) != 0)
                    return -1;
            }
        } else if (is_one_of(key, lists, sizeof(lists) / sizeof(lists[0]))) {
            if (!json_object_is_type(val, json_type_array) || json_object_array_length(val) == 0) {
                snprintf(err, errlen, "%s: not a non-empty list", at);
                return -1;
            }
            for (size_t i = 0; i < json_object_array_length(val); i++) {
                char sub_at[1100];

                snprintf(sub_at, sizeof(sub_at), "%s/%zu", at, i);
                if (keywords_known(json_object_array_get_idx(val, i), sub_at, err, errlen) != 0)
                    return -1;
            }
        } else if (is_one_of(key, single, sizeof(single) / sizeof(single[0]))) {
            if (keywords_known(val, at, err, errlen) != 0)
                return -1;
        }
    }
    return 0;
}

static const char *string_member(json_object *obj, const char *key)
{
    json_object *v;

    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

Test(schemas, every_schema_is_well_formed)
{
    static char names[MAX_SCHEMAS][256];
    char ids[MAX_SCHEMAS][256];
    size_t n = list_json(conformance_own_dir(), names, MAX_SCHEMAS);

    cr_assert_geq(n, 10, "only %zu schemas in %s", n, conformance_own_dir());
    for (size_t i = 0; i < n; i++) {
        char path[2048], err[1024] = "";
        const char *s;

        snprintf(path, sizeof(path), "%s/%s", conformance_own_dir(), names[i]);
        held_json[0] = read_json(path);
        cr_assert(json_object_is_type(held_json[0], json_type_object), "%s: not an object",
                  names[i]);
        s = string_member(held_json[0], "$schema");
        cr_assert(s && strcmp(s, DRAFT) == 0, "%s: $schema is not " DRAFT, names[i]);
        s = string_member(held_json[0], "$id");
        cr_assert(s && strncmp(s, ID_PREFIX, strlen(ID_PREFIX)) == 0,
                  "%s: no $id starting " ID_PREFIX, names[i]);
        snprintf(ids[i], sizeof(ids[i]), "%s", s);
        for (size_t k = 0; k < i; k++)
            cr_assert_str_neq(ids[k], ids[i], "%s and %s have the same $id", names[k], names[i]);
        s = string_member(held_json[0], "description");
        cr_assert(s && strlen(s) > 20, "%s: no description", names[i]);
        cr_assert_eq(keywords_known(held_json[0], names[i], err, sizeof(err)), 0, "%s", err);
        json_object_put(held_json[0]);
        held_json[0] = NULL;

        /* strictly: no lenient reading of our own files */
        held_schema = jschema_load(path, 0, err, sizeof(err));
        cr_assert_not_null(held_schema, "%s", err);
        jschema_free(held_schema);
        held_schema = NULL;
    }
}

/* Each event has its schemas, and each file of schema/ is one of them
 * (or referred to by one: cloudevent-headers.json). */
Test(schemas, every_event_has_a_schema_and_every_schema_an_event)
{
    static char names[MAX_SCHEMAS][256];
    size_t n = list_json(conformance_own_dir(), names, MAX_SCHEMAS);
    struct stat st;

    for (int e = 0; e < CONFORMANCE_EVENT_COUNT; e++) {
        const char *own = conformance_own_schema((conformance_event)e);
        const char *headers = conformance_own_headers_schema((conformance_event)e);
        char path[2048];

        cr_assert(own || headers, "event %d has no schema at all", e);
        if (own) {
            snprintf(path, sizeof(path), "%s/%s", conformance_own_dir(), own);
            cr_assert_eq(stat(path, &st), 0, "%s not found", path);
        }
        if (headers) {
            snprintf(path, sizeof(path), "%s/%.*s", conformance_own_dir(),
                     (int)strcspn(headers, "#"), headers);
            cr_assert_eq(stat(path, &st), 0, "%s not found", path);
        }
    }
    for (size_t i = 0; i < n; i++) {
        int used = 0;

        for (int e = 0; e < CONFORMANCE_EVENT_COUNT && !used; e++) {
            const char *own = conformance_own_schema((conformance_event)e);
            const char *headers = conformance_own_headers_schema((conformance_event)e);

            used = (own && strcmp(own, names[i]) == 0) ||
                   (headers && strncmp(headers, names[i], strlen(names[i])) == 0 &&
                    (headers[strlen(names[i])] == '\0' || headers[strlen(names[i])] == '#'));
        }
        cr_assert(used, "schema/%s is the schema of no event in conformance.c", names[i]);
    }
}

/* The schema an example is checked against: the file, or a place in it. */
static jschema *example_schema(const char *file, json_object *example)
{
    const char *at = string_member(example, "schema");
    char text[512], err[1024] = "", path[2048];
    jschema *s;

    if (at) {
        snprintf(text, sizeof(text), "{\"$ref\":\"%s%s\"}", file, at);
        s = jschema_parse(text, conformance_own_dir(), 0, err, sizeof(err));
    } else {
        snprintf(path, sizeof(path), "%s/%s", conformance_own_dir(), file);
        s = jschema_load(path, 0, err, sizeof(err));
    }
    cr_assert_not_null(s, "%s%s: %s", file, at ? at : "", err);
    return s;
}

/* data/schema/<file>: {"valid": [case...], "invalid": [case...]}, a case
 * being {"why": text, "instance": any, "schema": "#/$defs/..." (optional),
 * and for an invalid one "error": a part of the message it must get}. */
static void check_examples(const char *file)
{
    char path[2048];
    json_object *valid, *invalid;
    size_t nvalid, ninvalid;

    snprintf(path, sizeof(path), "%s/%s", EXAMPLES_DIR, file);
    held_json[1] = read_json(path);
    cr_assert(json_object_object_get_ex(held_json[1], "valid", &valid) &&
                  json_object_is_type(valid, json_type_array),
              "%s: no \"valid\" list", path);
    cr_assert(json_object_object_get_ex(held_json[1], "invalid", &invalid) &&
                  json_object_is_type(invalid, json_type_array),
              "%s: no \"invalid\" list", path);
    nvalid = json_object_array_length(valid);
    ninvalid = json_object_array_length(invalid);
    cr_assert_geq(nvalid, 1, "%s: no valid instance", path);
    cr_assert_geq(ninvalid, 1, "%s: no invalid instance: the schema could accept anything", path);

    for (size_t i = 0; i < nvalid + ninvalid; i++) {
        int good = i < nvalid;
        json_object *c = json_object_array_get_idx(good ? valid : invalid, good ? i : i - nvalid);
        json_object *instance;
        const char *why = string_member(c, "why"), *want = string_member(c, "error");
        char err[1024] = "";
        int rc;

        cr_assert(why && json_object_object_get_ex(c, "instance", &instance),
                  "%s: %s case %zu needs \"why\" and \"instance\"", path,
                  good ? "valid" : "invalid", good ? i : i - nvalid);
        held_schema = example_schema(file, c);
        rc = jschema_validate(held_schema, instance, err, sizeof(err));
        if (good) {
            cr_assert_eq(rc, 0, "%s: valid case \"%s\" refused: %s", file, why, err);
        } else {
            cr_assert_neq(rc, 0, "%s: invalid case \"%s\" accepted", file, why);
            cr_assert(want, "%s: invalid case \"%s\" needs \"error\"", path, why);
            cr_assert(strstr(err, want), "%s: invalid case \"%s\" refused for another reason: %s",
                      file, why, err);
        }
        jschema_free(held_schema);
        held_schema = NULL;
    }
    json_object_put(held_json[1]);
    held_json[1] = NULL;
}

Test(schemas, every_schema_accepts_its_examples_and_refuses_its_counterexamples)
{
    static char names[MAX_SCHEMAS][256], examples[MAX_SCHEMAS][256];
    size_t n = list_json(conformance_own_dir(), names, MAX_SCHEMAS);
    size_t nexamples = list_json(EXAMPLES_DIR, examples, MAX_SCHEMAS);

    for (size_t i = 0; i < nexamples; i++) {
        int found = 0;

        for (size_t k = 0; k < n && !found; k++)
            found = strcmp(names[k], examples[i]) == 0;
        cr_assert(found, "%s/%s is about schema/%s, which does not exist", EXAMPLES_DIR,
                  examples[i], examples[i]);
    }
    for (size_t i = 0; i < n; i++) {
        char path[2048];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", EXAMPLES_DIR, names[i]);
        cr_assert_eq(stat(path, &st), 0, "schema/%s has no examples in %s", names[i], path);
        check_examples(names[i]);
    }
}

/* A validator that accepted everything would pass every test above that
 * expects a pass: this one must fail for each event's schema. */
Test(schemas, check_event_refuses_what_no_event_is)
{
    json_object *number = json_object_new_int(7);
    char err[1024] = "";

    held_json[2] = number;
    for (int e = 0; e < CONFORMANCE_EVENT_COUNT; e++) {
        if (!conformance_own_schema((conformance_event)e))
            continue;
        cr_assert_eq(conformance_check_event((conformance_event)e, number, err, sizeof(err)), -1,
                     "event %d took 7", e);
        cr_assert(strstr(err, conformance_own_schema((conformance_event)e)) && strstr(err, "type"),
                  "%s", err);
    }
}

Test(schemas, check_event_text_parses_strictly_then_validates)
{
    char err[1024] = "";

    cr_assert_eq(conformance_check_event_text(CONFORMANCE_INGEST, "{\"a\":1}", 7, err, sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(conformance_check_event_text(CONFORMANCE_INGEST, "[1]", 3, err, sizeof(err)), -1);
    cr_assert(strstr(err, "schema/ingest-event.json: instance \"\": type"), "%s", err);
    cr_assert_eq(
        conformance_check_event_text(CONFORMANCE_INGEST, "{\"a\":01}", 8, err, sizeof(err)), -1,
        "a leading zero is not JSON");
    cr_assert(strstr(err, "not JSON"), "%s", err);
    cr_assert_eq(conformance_check_event_text(CONFORMANCE_DEAD_LETTER, "{}", 2, err, sizeof(err)),
                 -1, "a dead letter's value is the original record's: no schema");
}

Test(schemas, headers_are_checked_as_a_map_of_their_last_values)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(8);
    char err[1024] = "";
    int first, second, third;

    rd_kafka_header_add(h, "ce_destination", -1, "..", -1);
    first = conformance_check_headers(CONFORMANCE_DATA_OPERATION_REQUEST, h, err, sizeof(err));
    rd_kafka_header_add(h, "ce_destination", -1, "client-topic", -1);
    second = conformance_check_headers(CONFORMANCE_DATA_OPERATION_REQUEST, h, err, sizeof(err));
    third = conformance_check_headers(CONFORMANCE_DEAD_LETTER, h, err, sizeof(err));
    rd_kafka_headers_destroy(h);
    cr_assert_eq(first, -1, "\"..\" is not a topic");
    cr_assert_eq(second, 0, "%s", err);
    cr_assert_eq(third, -1, "no dlq_* headers: not a dead letter");
    cr_assert(strstr(err, "required: property \"dlq_reason\""), "%s", err);
    cr_assert_eq(conformance_check_headers(CONFORMANCE_LCM, NULL, err, sizeof(err)), -1,
                 "LCM headers are checked by conformance_check_lcm_headers");
}

/* The AVC event the benchmark publishes (scripts/bench.sh bench_avc) is
 * a realistic one: valid against ncmpd's schema (and NCMP's, when
 * available), of the size of NCMP's own sample (about 1.2 kB), and not
 * accepted once an edit loses its target. */
Test(schemas, bench_avc_sample_is_a_valid_avc_event)
{
    json_object *edits;
    char err[1024] = "";
    struct stat st;

    cr_assert_eq(stat(AVC_SAMPLE, &st), 0, "%s not found", AVC_SAMPLE);
    cr_assert(st.st_size >= 800 && st.st_size <= 4096, "%s: %lld bytes", AVC_SAMPLE,
              (long long)st.st_size);
    held_json[3] = read_json(AVC_SAMPLE);
    cr_assert_eq(conformance_check_event(CONFORMANCE_DMI_CM_AVC, held_json[3], err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_eq(json_pointer_get(held_json[3],
                                  "/data/push-change-update/datastore-changes/"
                                  "ietf-yang-patch:yang-patch/edit",
                                  &edits),
                 0);
    cr_assert_geq(json_object_array_length(edits), 3, "a patch of several edits");
    json_object_object_del(json_object_array_get_idx(edits, 2), "target");
    cr_assert_eq(conformance_check_event(CONFORMANCE_DMI_CM_AVC, held_json[3], err, sizeof(err)),
                 -1);
    cr_assert(strstr(err, "instance \"/data/push-change-update/datastore-changes/"
                          "ietf-yang-patch:yang-patch/edit/2\": required: property \"target\""),
              "%s", err);
}
