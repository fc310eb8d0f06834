/* Conformance of lib/ncmp_lcm.c's LCM v2 events (lcm.event-schema-version
 * =v2) with NCMP: each shape validated against ncmpd's
 * schema/lcm-event-v2.json and, when available, NCMP's published
 * lcm-event-v2.json (patched as conformance.h says), checked against the
 * rules no schema says, with the values NCMP's PayloadFactory gives for
 * the same change; and the same change in v1 unchanged by what v2 adds. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "conformance_leak.h"
#include "jschema.h"
#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_json.h"
#include "ncmp_lcm.h"

/* What a test holds, freed after it even when an assertion ends it early. */
static json_object *held_json[8];
static size_t nheld_json;
static rd_kafka_headers_t *held_headers;
static jschema *held_schema;

static void v2_suite_fini(void)
{
    for (size_t i = 0; i < nheld_json; i++)
        json_object_put(held_json[i]);
    nheld_json = 0;
    if (held_headers)
        rd_kafka_headers_destroy(held_headers);
    held_headers = NULL;
    jschema_free(held_schema);
    held_schema = NULL;
    conformance_leak_check();
}

TestSuite(ncmp_lcm_v2_conformance, .fini = v2_suite_fini);

static json_object *hold(json_object *obj)
{
    if (nheld_json == sizeof(held_json) / sizeof(held_json[0])) {
        json_object_put(obj);
        cr_assert_fail("test holds too many documents");
    }
    held_json[nheld_json++] = obj;
    return obj;
}

typedef struct emitted {
    char id[37];
    char time[32];
    json_object *value; /* held */
} emitted;

/* Encode `ev` in `format`, check it with conformance_check_lcm (which
 * takes the format from its eventSchema) and parse it. */
static emitted emit(const ncmp_lcm_event *ev, ncmp_lcm_format format)
{
    ncmp_buf text = NCMP_BUF_INIT;
    emitted out = {.value = NULL};
    json_object *value = NULL;
    ncmp_err perr = {0};
    char err[1024] = "", msg[4096];
    int rc;

    ncmp_uuid4(out.id);
    ncmp_event_time_now(out.time);
    ncmp_lcm_event_json(&text, ev, format, out.id, out.time);
    rc = conformance_check_lcm(text.data, text.len, err, sizeof(err));
    if (rc == 0 && ncmp_json_parse(text.data, text.len, &value, &perr) != 0)
        snprintf(err, sizeof(err), "not JSON: %s", perr.msg);
    snprintf(msg, sizeof(msg), "%s\n  event: %s", err, text.data ? text.data : "");
    ncmp_buf_free(&text);
    if (rc != 0 || !value)
        cr_assert_fail("%s", msg);
    out.value = hold(value);
    return out;
}

static json_object *at(json_object *doc, const char *ptr)
{
    json_object *v = NULL;

    return json_pointer_get(doc, ptr, &v) == 0 ? v : NULL;
}

static int has(json_object *doc, const char *ptr)
{
    json_object *v;

    return json_pointer_get(doc, ptr, &v) == 0;
}

static void assert_str_at(json_object *doc, const char *ptr, const char *want)
{
    json_object *v = at(doc, ptr);

    cr_assert(json_object_is_type(v, json_type_string), "%s: not a string in %s", ptr,
              json_object_to_json_string(doc));
    cr_assert_str_eq(json_object_get_string(v), want, "%s", ptr);
}

/* The value at `ptr` must equal the JSON text `want` (keys in any order,
 * null as null). */
static void assert_json_at(json_object *doc, const char *ptr, const char *want)
{
    json_object *expected = json_tokener_parse(want);
    json_object *v = at(doc, ptr);
    int same;

    cr_assert(expected || strcmp(want, "null") == 0, "test JSON %s", want);
    same = has(doc, ptr) && json_object_equal(v, expected);
    json_object_put(expected);
    cr_assert(same, "%s: %s, expected %s", ptr,
              has(doc, ptr) ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "absent",
              want);
}

static const char *const type_create = "org.onap.ncmp.cmhandle-lcm-event.create";
static const char *const type_update = "org.onap.ncmp.cmhandle-lcm-event.update";
static const char *const type_delete = "org.onap.ncmp.cmhandle-lcm-event.delete";

/* v2's header fields: v1's but for eventSchema; event holds the ids and
 * the values alone. */
static void assert_v2_envelope(const emitted *e, const char *handle, const char *alt,
                               const char *type)
{
    assert_str_at(e->value, "/eventId", e->id);
    assert_str_at(e->value, "/eventCorrelationId", handle);
    assert_str_at(e->value, "/eventTime", e->time);
    assert_str_at(e->value, "/eventSource", "org.onap.ncmp");
    assert_str_at(e->value, "/eventType", type);
    assert_str_at(e->value, "/eventSchema", "org.onap.ncmp:cmhandle-lcm-event.v2");
    assert_str_at(e->value, "/eventSchemaVersion", "1.0");
    assert_str_at(e->value, "/event/cmHandleId", handle);
    assert_str_at(e->value, "/event/alternateId", alt);
    cr_assert(!has(e->value, "/event/moduleSetTag") &&
                  !has(e->value, "/event/dataProducerIdentifier"),
              "v1's fields in a v2 event: %s", json_object_to_json_string(e->value));
}

/* NCMP's CmHandleCreateSpec: every key, dataSyncEnabled null, the
 * properties as a map. */
Test(ncmp_lcm_v2_conformance, create_gives_every_key_with_properties_as_a_map)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .alternate_id = "fdn1",
        .module_set_tag = "tag1",
        .data_producer_identifier = "prod1",
        .old_values = {NCMP_STATE_NONE, -1, NULL},
        .new_values = {NCMP_STATE_ADVISED, -1, "{\"color\":\"green\"}"},
    };
    emitted e = emit(&ev, NCMP_LCM_V2);

    assert_v2_envelope(&e, "ch-1", "fdn1", type_create);
    cr_assert(!has(e.value, "/event/oldValues"));
    assert_json_at(e.value, "/event/newValues",
                   "{\"dataSyncEnabled\":null,\"cmHandleState\":\"ADVISED\",\"alternateId\":"
                   "\"fdn1\",\"moduleSetTag\":\"tag1\",\"dataProducerIdentifier\":\"prod1\","
                   "\"cmHandleProperties\":{\"color\":\"green\"}}");
    /* explicitly null, not absent */
    cr_assert(has(e.value, "/event/newValues/dataSyncEnabled") &&
              at(e.value, "/event/newValues/dataSyncEnabled") == NULL);
}

Test(ncmp_lcm_v2_conformance, create_without_names_or_properties_gives_empty_values)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-2",
        .old_values = {NCMP_STATE_NONE, -1, NULL},
        .new_values = {NCMP_STATE_ADVISED, -1, NULL},
    };
    emitted e = emit(&ev, NCMP_LCM_V2);

    assert_v2_envelope(&e, "ch-2", "", type_create);
    assert_json_at(e.value, "/event/newValues",
                   "{\"dataSyncEnabled\":null,\"cmHandleState\":\"ADVISED\",\"alternateId\":\"\","
                   "\"moduleSetTag\":\"\",\"dataProducerIdentifier\":\"\","
                   "\"cmHandleProperties\":{}}");
}

/* NCMP's CmHandleCreateSpec, the update to READY: dataSyncEnabled from
 * null to false beside the state, nothing else. */
Test(ncmp_lcm_v2_conformance, ready_names_data_sync_from_null_to_false)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .alternate_id = "fdn1",
        .module_set_tag = "tag1",
        .data_producer_identifier = "prod1",
        .old_module_set_tag = "tag1", /* module sync gives it: the same, no change */
        .old_values = {NCMP_STATE_ADVISED, -1, NULL},
        .new_values = {NCMP_STATE_READY, 0, NULL},
    };
    emitted e = emit(&ev, NCMP_LCM_V2);

    assert_v2_envelope(&e, "ch-1", "fdn1", type_update);
    assert_json_at(e.value, "/event/oldValues",
                   "{\"dataSyncEnabled\":null,\"cmHandleState\":\"ADVISED\"}");
    assert_json_at(e.value, "/event/newValues",
                   "{\"dataSyncEnabled\":false,\"cmHandleState\":\"READY\"}");
}

/* The READY that ends a module upgrade names the new tag. */
Test(ncmp_lcm_v2_conformance, upgrade_names_the_module_set_tag)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .module_set_tag = "tag2",
        .old_module_set_tag = "tag1",
        .old_values = {NCMP_STATE_LOCKED, -1, NULL},
        .new_values = {NCMP_STATE_READY, 0, NULL},
    };
    emitted e = emit(&ev, NCMP_LCM_V2);
    emitted v1 = emit(&ev, NCMP_LCM_V1);

    assert_json_at(e.value, "/event/oldValues",
                   "{\"dataSyncEnabled\":null,\"cmHandleState\":\"LOCKED\",\"moduleSetTag\":"
                   "\"tag1\"}");
    assert_json_at(e.value, "/event/newValues",
                   "{\"dataSyncEnabled\":false,\"cmHandleState\":\"READY\",\"moduleSetTag\":"
                   "\"tag2\"}");
    /* v1 gives the new tag beside the ids and no tag among the values */
    assert_str_at(v1.value, "/event/moduleSetTag", "tag2");
    assert_json_at(v1.value, "/event/oldValues", "{\"cmHandleState\":\"LOCKED\"}");
}

/* NCMP's CmHandleUpdateSpec: a new data producer alone. */
Test(ncmp_lcm_v2_conformance, data_producer_change_alone)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .alternate_id = "fdn1",
        .module_set_tag = "tag1",
        .data_producer_identifier = "my-data-producer-id",
        .old_data_producer_identifier = "",
        .old_values = {NCMP_STATE_NONE, -1, NULL},
        .new_values = {NCMP_STATE_NONE, -1, NULL},
        .force_update = 1,
    };
    emitted e = emit(&ev, NCMP_LCM_V2);
    emitted v1 = emit(&ev, NCMP_LCM_V1);

    assert_v2_envelope(&e, "ch-1", "fdn1", type_update);
    assert_json_at(e.value, "/event/oldValues", "{\"dataProducerIdentifier\":\"\"}");
    assert_json_at(e.value, "/event/newValues",
                   "{\"dataProducerIdentifier\":\"my-data-producer-id\"}");
    /* v1 as before: both sides empty, the new producer beside the ids */
    assert_json_at(v1.value, "/event/oldValues", "{}");
    assert_json_at(v1.value, "/event/newValues", "{}");
    assert_str_at(v1.value, "/event/dataProducerIdentifier", "my-data-producer-id");
}

Test(ncmp_lcm_v2_conformance, data_sync_toggle)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .old_values = {NCMP_STATE_NONE, 0, NULL},
        .new_values = {NCMP_STATE_NONE, 1, NULL},
        .force_update = 1,
    };
    emitted e = emit(&ev, NCMP_LCM_V2);

    assert_json_at(e.value, "/event/oldValues", "{\"dataSyncEnabled\":false}");
    assert_json_at(e.value, "/event/newValues", "{\"dataSyncEnabled\":true}");
}

/* PayloadFactory: an update in which nothing changed has neither map. */
Test(ncmp_lcm_v2_conformance, update_that_changed_nothing_has_no_maps)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .data_producer_identifier = "p",
        .old_data_producer_identifier = "p",
        .old_values = {NCMP_STATE_NONE, -1, NULL},
        .new_values = {NCMP_STATE_NONE, -1, NULL},
        .force_update = 1,
    };
    emitted e = emit(&ev, NCMP_LCM_V2);

    assert_v2_envelope(&e, "ch-1", "", type_update);
    cr_assert(!has(e.value, "/event/oldValues") && !has(e.value, "/event/newValues"), "%s",
              json_object_to_json_string(e.value));
}

Test(ncmp_lcm_v2_conformance, deletion_is_an_update_then_a_delete_without_values)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .alternate_id = "fdn1",
        .module_set_tag = "tag1",
        .old_values = {NCMP_STATE_READY, -1, NULL},
        .new_values = {NCMP_STATE_DELETING, -1, NULL},
    };
    emitted deleting = emit(&ev, NCMP_LCM_V2), deleted;

    assert_v2_envelope(&deleting, "ch-1", "fdn1", type_update);
    assert_json_at(deleting.value, "/event/oldValues", "{\"cmHandleState\":\"READY\"}");
    assert_json_at(deleting.value, "/event/newValues", "{\"cmHandleState\":\"DELETING\"}");
    ev.old_values.state = NCMP_STATE_DELETING;
    ev.new_values.state = NCMP_STATE_DELETED;
    deleted = emit(&ev, NCMP_LCM_V2);
    assert_v2_envelope(&deleted, "ch-1", "fdn1", type_delete);
    cr_assert(!has(deleted.value, "/event/oldValues") && !has(deleted.value, "/event/newValues"));
}

/* The headers say v2's eventSchema when the row says so; the check reads
 * them against the value. */
Test(ncmp_lcm_v2_conformance, headers_carry_the_v2_schema)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .old_values = {NCMP_STATE_ADVISED, -1, NULL},
        .new_values = {NCMP_STATE_READY, 0, NULL},
    };
    emitted e = emit(&ev, NCMP_LCM_V2);
    char err[1024] = "";

    cr_assert_str_eq(ncmp_lcm_format_schema(NCMP_LCM_V2), "org.onap.ncmp:cmhandle-lcm-event.v2");
    cr_assert_str_eq(ncmp_lcm_format_schema(NCMP_LCM_V1), "org.onap.ncmp:cmhandle-lcm-event");
    for (int java = 0; java <= 1; java++) {
        held_headers = ncmp_lcm_headers("ch-1", type_update, ncmp_lcm_format_schema(NCMP_LCM_V2),
                                        e.id, e.time, java);
        cr_assert_eq(conformance_check_lcm_headers(held_headers, e.value, java, err, sizeof(err)),
                     0, "%s", err);
        rd_kafka_headers_destroy(held_headers);
        /* a v1 header on a v2 value is caught */
        held_headers = ncmp_lcm_headers("ch-1", type_update, ncmp_lcm_format_schema(NCMP_LCM_V1),
                                        e.id, e.time, java);
        cr_assert_eq(conformance_check_lcm_headers(held_headers, e.value, java, err, sizeof(err)),
                     -1);
        cr_assert(strstr(err, "header eventSchema"), "%s", err);
        rd_kafka_headers_destroy(held_headers);
        held_headers = NULL;
    }
}

Test(ncmp_lcm_v2_conformance, the_setting_names_the_format)
{
    cr_assert_eq(ncmp_lcm_format_parse("v2"), NCMP_LCM_V2);
    cr_assert_eq(ncmp_lcm_format_parse("v1"), NCMP_LCM_V1);
    cr_assert_eq(ncmp_lcm_format_parse(NULL), NCMP_LCM_V1);
}

/* The rules catch what v2's schema lets through. */
Test(ncmp_lcm_v2_conformance, rules_refuse_what_ncmp_would_not_send)
{
    static const struct {
        const char *path;
        const char *value; /* NULL: remove it */
        const char *message;
    } cases[] = {
        {"/event/newValues", "{\"dataSyncEnabled\":false,\"cmHandleState\":\"ADVISED\"}",
         "in both oldValues and newValues"},
        {"/event/newValues", "{\"cmHandleState\":\"READY\"}", "dataSyncEnabled in oldValues only"},
        {"/event/newValues", "{\"dataSyncEnabled\":false,\"cmHandleState\":\"DELETED\"}",
         "DELETED on an update"},
        {"/event/newValues",
         "{\"dataSyncEnabled\":false,\"cmHandleState\":\"READY\",\"cmHandleProperties\":[{}]}",
         "cmHandleProperties in newValues only"},
        {"/event/oldValues", NULL, "newValues without oldValues"},
        {"/event/alternateId", NULL, "/event/alternateId: missing"},
        {"/eventCorrelationId", "\"ch-2\"", "is not the cmHandleId"},
    };
    static const char base[] =
        "{\"eventId\":\"6f1c6a3e-1111-4222-8333-444455556666\",\"eventCorrelationId\":\"ch-1\","
        "\"eventTime\":\"2025-06-01T12:00:05.123+0000\",\"eventSource\":\"org.onap.ncmp\","
        "\"eventType\":\"org.onap.ncmp.cmhandle-lcm-event.update\","
        "\"eventSchema\":\"org.onap.ncmp:cmhandle-lcm-event.v2\",\"eventSchemaVersion\":\"1.0\","
        "\"event\":{\"cmHandleId\":\"ch-1\",\"alternateId\":\"\","
        "\"oldValues\":{\"dataSyncEnabled\":null,\"cmHandleState\":\"ADVISED\"},"
        "\"newValues\":{\"dataSyncEnabled\":false,\"cmHandleState\":\"READY\"}}}";
    static const char create[] =
        "{\"eventId\":\"6f1c6a3e-1111-4222-8333-444455556666\",\"eventCorrelationId\":\"ch-1\","
        "\"eventTime\":\"2025-06-01T12:00:05.123+0000\",\"eventSource\":\"org.onap.ncmp\","
        "\"eventType\":\"org.onap.ncmp.cmhandle-lcm-event.create\","
        "\"eventSchema\":\"org.onap.ncmp:cmhandle-lcm-event.v2\",\"eventSchemaVersion\":\"1.0\","
        "\"event\":{\"cmHandleId\":\"ch-1\",\"alternateId\":\"\",\"newValues\":{"
        "\"cmHandleState\":\"ADVISED\",\"alternateId\":\"\",\"moduleSetTag\":\"\","
        "\"dataProducerIdentifier\":\"\",\"cmHandleProperties\":{\"a\":1}}}}";
    char err[1024] = "";
    json_object *doc = hold(json_tokener_parse(base)),
                *bad_create = hold(json_tokener_parse(create));

    cr_assert_eq(conformance_check_lcm_rules(doc, err, sizeof(err)), 0, "%s", err);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *copy = NULL;
        int rc;

        json_object_deep_copy(doc, &copy, NULL);
        if (cases[i].value) {
            json_pointer_set(&copy, cases[i].path, json_tokener_parse(cases[i].value));
        } else {
            const char *slash = strrchr(cases[i].path, '/');
            char parent[64];

            snprintf(parent, sizeof(parent), "%.*s", (int)(slash - cases[i].path), cases[i].path);
            json_object_object_del(at(copy, parent), slash + 1);
        }
        rc = conformance_check_lcm_rules(copy, err, sizeof(err));
        json_object_put(copy);
        cr_assert_eq(rc, -1, "%s = %s accepted", cases[i].path,
                     cases[i].value ? cases[i].value : "(removed)");
        cr_assert(strstr(err, cases[i].message), "%s: \"%s\" not in \"%s\"", cases[i].path,
                  cases[i].message, err);
    }
    cr_assert_eq(conformance_check_lcm_rules(bad_create, err, sizeof(err)), -1);
    cr_assert(strstr(err, "/event/newValues/dataSyncEnabled: missing on a create"), "%s", err);
    json_object_object_add(at(bad_create, "/event/newValues"), "dataSyncEnabled", NULL);
    cr_assert_eq(conformance_check_lcm_rules(bad_create, err, sizeof(err)), -1);
    cr_assert(strstr(err, "cmHandleProperties/a: not a string"), "%s", err);
}

/* NCMP's published v2 schema closes oldValues and newValues to every key;
 * the patch opens them and leaves the rest as published. Skipped without
 * NCMP's schemas. */
Test(ncmp_lcm_v2_conformance, published_schema_needs_exactly_the_one_patch)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .alternate_id = "fdn1",
        .old_values = {NCMP_STATE_ADVISED, -1, NULL},
        .new_values = {NCMP_STATE_READY, 0, NULL},
    };
    emitted e = emit(&ev, NCMP_LCM_V2);
    char path[2048], err[1024] = "";

    if (!conformance_onap_available())
        cr_skip_test("NCMP's published schemas not found at %s (set NCMP_ONAP_SCHEMAS)",
                     conformance_onap_dir());
    snprintf(path, sizeof(path), "%s/" CONFORMANCE_LCM_V2_SCHEMA_FILE, conformance_onap_dir());
    held_schema = jschema_load(path, 0, err, sizeof(err));
    cr_assert_not_null(held_schema, "%s", err);
    cr_assert_eq(jschema_validate(held_schema, e.value, err, sizeof(err)), -1,
                 "the unpatched schema took a filled oldValues");
    cr_assert(strstr(err, "/event/oldValues"), "%s", err);
    cr_assert_eq(jschema_patch(held_schema, CONFORMANCE_LCM_V2_PATCH_POINTER,
                               CONFORMANCE_LCM_V2_PATCH_SCHEMA, err, sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(jschema_validate(held_schema, e.value, err, sizeof(err)), 0, "%s", err);
    /* still closed where it was: a v1 field beside the ids */
    json_object_object_add(at(e.value, "/event"), "moduleSetTag", json_object_new_string(""));
    cr_assert_eq(jschema_validate(held_schema, e.value, err, sizeof(err)), -1);
    cr_assert(strstr(err, "instance \"/event/moduleSetTag\": additionalProperties"), "%s", err);
}
