/*
 * The JSON examples of docs/events.md are what ncmpd really sends and
 * accepts: every ```json block parses as strict JSON, and the examples of
 * a topic with a published NCMP schema validate against it (lifecycle
 * events with the LCM checks, data-operation results, inventory events,
 * device heartbeats, AVC notifications).
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "conformance_leak.h"
#include "jschema.h"
#include "ncmp_buf.h"
#include "ncmp_json.h"

TestSuite(doc_examples, .fini = conformance_leak_check);

static char *read_doc(const char *path)
{
    FILE *f = fopen(path, "rb");
    ncmp_buf b = NCMP_BUF_INIT;
    char chunk[8192];
    size_t n;

    cr_assert_not_null(f, "cannot read %s", path);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        ncmp_buf_append(&b, chunk, n);
    fclose(f);
    return b.data;
}

/* Which schema an example under `heading` is checked against: NULL for
 * JSON only. `lcm` is set for lifecycle events. */
static const char *schema_for(const char *heading, int *lcm, const char **pointer,
                              const char **patch)
{
    *lcm = 0;
    *pointer = *patch = NULL;
    if (strstr(heading, "`ncmp-events`")) {
        *lcm = 1;
        return NULL;
    }
    if (strstr(heading, "`ncmp-inventory-events`")) {
        *pointer = CONFORMANCE_INVENTORY_AVC_PATCH_POINTER;
        *patch = CONFORMANCE_INVENTORY_AVC_PATCH_SCHEMA;
        return CONFORMANCE_INVENTORY_AVC_SCHEMA_FILE;
    }
    if (strstr(heading, "`dmi-device-heartbeat`"))
        return "device-trust-level-event-schema-1.0.0.json";
    if (strstr(heading, "DataOperationEvent") || strstr(heading, "`ncmp-async-m2m`")) {
        *pointer = CONFORMANCE_DATA_OPERATION_PATCH_POINTER;
        *patch = CONFORMANCE_DATA_OPERATION_PATCH_SCHEMA;
        return CONFORMANCE_DATA_OPERATION_SCHEMA_FILE;
    }
    return NULL;
}

static void check_example(const char *heading, const char *text, size_t len, int line)
{
    json_object *doc = NULL;
    ncmp_err err;
    char msg[1024] = "", path[1024];
    const char *file, *pointer, *patch;
    int lcm;

    cr_assert_eq(ncmp_json_parse(text, len, &doc, &err), 0,
                 "docs/events.md line %d (under %s): not JSON: %s", line, heading, err.msg);
    file = schema_for(heading, &lcm, &pointer, &patch);
    if (lcm)
        cr_assert_eq(conformance_check_lcm(text, len, msg, sizeof(msg)), 0,
                     "docs/events.md line %d: %s", line, msg);
    if (file) {
        jschema *s;
        snprintf(path, sizeof(path), "%s/%s", conformance_schema_dir(), file);
        s = jschema_load(path, 0, msg, sizeof(msg));
        cr_assert_not_null(s, "%s: %s", path, msg);
        if (pointer)
            cr_assert_eq(jschema_patch(s, pointer, patch, msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_eq(jschema_validate(s, doc, msg, sizeof(msg)), 0,
                     "docs/events.md line %d (under %s) against %s: %s", line, heading, file, msg);
        jschema_free(s);
    }
    json_object_put(doc);
}

Test(doc_examples, every_json_example_of_events_md_is_valid)
{
    char *doc = read_doc(NCMP_SOURCE_DIR "/docs/events.md");
    char heading[256] = "(top)";
    const char *p = doc;
    int line = 1, examples = 0, lcm_examples = 0;

    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        if (n > 3 && strncmp(p, "## ", 3) == 0) {
            snprintf(heading, sizeof(heading), "%.*s", (int)n, p);
        } else if (n >= 7 && strncmp(p, "```json", 7) == 0) {
            const char *start = eol ? eol + 1 : p + n, *end = strstr(start, "\n```");
            int lines = 0;
            cr_assert_not_null(end, "docs/events.md line %d: unclosed example", line);
            check_example(heading, start, (size_t)(end - start), line + 1);
            examples++;
            lcm_examples += strstr(heading, "`ncmp-events`") != NULL;
            for (const char *q = p; q < end + 1; q++)
                lines += *q == '\n';
            line += lines;
            p = end + 1;
            eol = strchr(p, '\n');
            n = eol ? (size_t)(eol - p) : strlen(p);
        }
        if (!eol)
            break;
        p = eol + 1;
        line++;
    }
    cr_assert_geq(examples, 5, "docs/events.md has %d JSON examples", examples);
    cr_assert_geq(lcm_examples, 1, "the lifecycle event example is checked");
    free(doc);
}
