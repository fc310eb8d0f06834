/*
 * The JSON examples of docs/events.md are what ncmpd really sends and
 * accepts: every ```json block parses as strict JSON, and validates
 * against ncmpd's schema of the topic it is under (schema/), and against
 * NCMP's published one when that is available; lifecycle events get the
 * LCM checks as well. Every event with a schema has an example.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "conformance_leak.h"
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

/* The event an example under `heading` is, or -1 for JSON only. The
 * backquoted topic names keep ncmp-dmi-registration apart from
 * ncmp-dmi-registration-response. The ncmp-async-m2m example is a DMI
 * plugin's failure entry, which has the shape of ncmpd's own. */
static int event_for(const char *heading)
{
    static const struct {
        const char *topic;
        conformance_event event;
    } topics[] = {
        {"`ncmp-dmi-registration`", CONFORMANCE_REGISTRATION},
        {"`ncmp-dmi-registration-response`", CONFORMANCE_REGISTRATION_RESPONSE},
        {"`ncmp-events`", CONFORMANCE_LCM},
        {"`dmi-device-heartbeat`", CONFORMANCE_DEVICE_HEARTBEAT},
        {"`ncmp-inventory-events`", CONFORMANCE_INVENTORY},
        {"`ncmp-module-sync`", CONFORMANCE_MODULE_SYNC},
        {"`ncmp-ingest`", CONFORMANCE_INGEST},
        {"`dmi-cm-events`", CONFORMANCE_DMI_CM_AVC},
        /* before `ncmp-async-m2m`: the legacy results' headings */
        {"DmiAsyncRequestResponseEvent", CONFORMANCE_DMI_ASYNC},
        {"NcmpAsyncRequestResponseEvent", CONFORMANCE_NCMP_ASYNC},
        {"`ncmp-async-m2m`", CONFORMANCE_DATA_OPERATION},
        {"DataOperationEvents from ncmpd", CONFORMANCE_DATA_OPERATION},
        {"`ncmp-data-operation-requests`", CONFORMANCE_DATA_OPERATION_REQUEST},
        {"`cps-data-updated-events`", CONFORMANCE_CPS_DATA_UPDATED},
    };

    for (size_t i = 0; i < sizeof(topics) / sizeof(topics[0]); i++)
        if (strstr(heading, topics[i].topic))
            return (int)topics[i].event;
    return -1;
}

static void check_example(const char *heading, const char *text, size_t len, int line,
                          int checked[CONFORMANCE_EVENT_COUNT])
{
    json_object *doc = NULL;
    ncmp_err err;
    char msg[1024] = "";
    int event;

    cr_assert_eq(ncmp_json_parse(text, len, &doc, &err), 0,
                 "docs/events.md line %d (under %s): not JSON: %s", line, heading, err.msg);
    event = event_for(heading);
    if (event == CONFORMANCE_LCM) {
        json_object *schema = NULL;
        /* either format, by its eventSchema */
        if (json_object_object_get_ex(doc, "eventSchema", &schema) &&
            strcmp(json_object_get_string(schema), "org.onap.ncmp:cmhandle-lcm-event.v2") == 0)
            event = CONFORMANCE_LCM_V2;
        json_object_put(doc);
        cr_assert_eq(conformance_check_lcm(text, len, msg, sizeof(msg)), 0,
                     "docs/events.md line %d: %s", line, msg);
    } else if (event >= 0) {
        int rc = conformance_check_event((conformance_event)event, doc, msg, sizeof(msg));
        json_object_put(doc);
        cr_assert_eq(rc, 0, "docs/events.md line %d (under %s): %s", line, heading, msg);
    } else {
        json_object_put(doc);
    }
    if (event >= 0)
        checked[event]++;
}

Test(doc_examples, every_json_example_of_events_md_is_valid)
{
    char *doc = read_doc(NCMP_SOURCE_DIR "/docs/events.md");
    char heading[256] = "(top)";
    const char *p = doc;
    int line = 1, examples = 0, checked[CONFORMANCE_EVENT_COUNT] = {0};

    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        if (n > 3 && strncmp(p, "## ", 3) == 0) {
            snprintf(heading, sizeof(heading), "%.*s", (int)n, p);
        } else if (n >= 7 && strncmp(p, "```json", 7) == 0) {
            const char *start = eol ? eol + 1 : p + n, *end = strstr(start, "\n```");
            int lines = 0;
            cr_assert_not_null(end, "docs/events.md line %d: unclosed example", line);
            check_example(heading, start, (size_t)(end - start), line + 1, checked);
            examples++;
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
    free(doc);
    cr_assert_geq(examples, 10, "docs/events.md has %d JSON examples", examples);
    /* per schema: a registration request is one, whoever writes it */
    for (int e = 0; e < CONFORMANCE_EVENT_COUNT; e++) {
        const char *own = conformance_own_schema((conformance_event)e);
        int found = !own;
        for (int k = 0; k < CONFORMANCE_EVENT_COUNT && !found; k++)
            found = checked[k] > 0 && conformance_own_schema((conformance_event)k) &&
                    strcmp(conformance_own_schema((conformance_event)k), own) == 0;
        cr_assert(found, "docs/events.md has no example of the event of schema/%s", own);
    }
}
