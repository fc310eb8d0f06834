/* Conformance of lib/ncmp_lcm.c with NCMP: the LCM events it encodes,
 * validated against ncmpd's schema/lcm-event-v1.json and, when
 * available, NCMP's published lcm-event-v1.json (with its one patch),
 * checked against the rules no schema says, and its Kafka headers, plain
 * and Java-serialised. */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"
#include "conformance_leak.h"
#include "jschema.h"
#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_json.h"
#include "ncmp_lcm.h"

/* What a test holds, freed after it even when an assertion ends it early
 * (so that a failure is not also reported as a leak). */
static json_object *held_json[8];
static size_t nheld_json;
static rd_kafka_headers_t *held_headers;
static jschema *held_schema;

static void lcm_suite_fini(void)
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

TestSuite(ncmp_lcm_conformance, .fini = lcm_suite_fini);

static json_object *hold(json_object *obj)
{
    if (nheld_json == sizeof(held_json) / sizeof(held_json[0])) {
        json_object_put(obj);
        cr_assert_fail("test holds too many documents");
    }
    held_json[nheld_json++] = obj;
    return obj;
}

/* One event as ncmpd would send it. */
typedef struct emitted {
    char id[37];
    char time[32];
    json_object *value; /* held */
} emitted;

/* Encode `ev` with a fresh id and time, check it with
 * conformance_check_lcm (schema and rules) and parse it. */
static emitted emit(const ncmp_lcm_event *ev)
{
    ncmp_buf text = NCMP_BUF_INIT;
    emitted out = {.value = NULL};
    json_object *value = NULL;
    ncmp_err perr = {0};
    char err[1024] = "", *copy;
    int rc;

    ncmp_uuid4(out.id);
    ncmp_event_time_now(out.time);
    ncmp_lcm_event_json(&text, ev, NCMP_LCM_V1, out.id, out.time);
    rc = conformance_check_lcm(text.data, text.len, err, sizeof(err));
    if (rc == 0 && ncmp_json_parse(text.data, text.len, &value, &perr) != 0)
        snprintf(err, sizeof(err), "not JSON: %s", perr.msg);
    copy = strdup(text.data ? text.data : "");
    ncmp_buf_free(&text);
    if (rc != 0 || !value) {
        char msg[4096];

        snprintf(msg, sizeof(msg), "%s\n  event: %s", err, copy);
        free(copy);
        cr_assert_fail("%s", msg);
    }
    free(copy);
    out.value = hold(value);
    return out;
}

/* The value at JSON pointer `ptr`, or NULL when absent. */
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

/* The value at `ptr` must equal the JSON text `want`. */
static void assert_json_at(json_object *doc, const char *ptr, const char *want)
{
    json_object *expected = json_tokener_parse(want);
    json_object *v = at(doc, ptr);
    int same;

    cr_assert_not_null(expected, "test JSON %s", want);
    same = has(doc, ptr) && json_object_equal(v, expected);
    json_object_put(expected);
    cr_assert(same, "%s: %s, expected %s", ptr,
              has(doc, ptr) ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "absent",
              want);
}

static const char *const type_create = "org.onap.ncmp.cmhandle-lcm-event.create";
static const char *const type_update = "org.onap.ncmp.cmhandle-lcm-event.update";
static const char *const type_delete = "org.onap.ncmp.cmhandle-lcm-event.delete";

static ncmp_lcm_values no_values(void)
{
    return (ncmp_lcm_values){NCMP_STATE_NONE, -1, NULL};
}

/* The header fields every event carries. */
static void assert_header_fields(const emitted *e, const char *handle, const char *type)
{
    assert_str_at(e->value, "/eventId", e->id);
    assert_str_at(e->value, "/eventCorrelationId", handle);
    assert_str_at(e->value, "/eventTime", e->time);
    assert_str_at(e->value, "/eventSource", "org.onap.ncmp");
    assert_str_at(e->value, "/eventType", type);
    assert_str_at(e->value, "/eventSchema", "org.onap.ncmp:cmhandle-lcm-event");
    assert_str_at(e->value, "/eventSchemaVersion", "1.0");
    assert_str_at(e->value, "/event/cmHandleId", handle);
}

static const char delete_event[] =
    "{\"eventId\":\"6f1c6a3e-0000-4000-8000-000000000000\",\"eventCorrelationId\":\"c\","
    "\"eventTime\":\"2025-06-01T12:00:05.123+0000\",\"eventSource\":\"org.onap.ncmp\","
    "\"eventType\":\"org.onap.ncmp.cmhandle-lcm-event.delete\","
    "\"eventSchema\":\"org.onap.ncmp:cmhandle-lcm-event\",\"eventSchemaVersion\":\"1.0\","
    "\"event\":{\"cmHandleId\":\"c\",\"alternateId\":\"\",\"moduleSetTag\":\"\","
    "\"dataProducerIdentifier\":\"\"}}";

/* Without NCMP's schemas the events are still checked, against ncmpd's
 * own; the status line says that NCMP's part was skipped. */
Test(ncmp_lcm_conformance, missing_ncmp_schemas_leave_ncmpds_own_check)
{
    char err[1024] = "", status[1024];
    char *bad = strdup(delete_event);

    cr_assert_not_null(bad);
    setenv("NCMP_ONAP_SCHEMAS", "/nonexistent/onap/schemas", 1);
    cr_assert_eq(conformance_onap_available(), 0);
    conformance_onap_status(status, sizeof(status));
    cr_assert(strstr(status, "not found at /nonexistent/onap/schemas") &&
                  strstr(status, "NCMP_ONAP_SCHEMAS") && strstr(status, "skipped"),
              "%s", status);
    cr_assert_eq(conformance_check_lcm(delete_event, strlen(delete_event), err, sizeof(err)), 0,
                 "%s", err);
    /* still refused: an event type NCMP does not have */
    memcpy(strstr(bad, "delete\""), "remove", 6);
    cr_assert_eq(conformance_check_lcm(bad, strlen(bad), err, sizeof(err)), -1);
    free(bad);
    cr_assert(strstr(err, "schema/lcm-event-v1.json: instance \"/eventType\""), "%s", err);
}

/* When NCMP's schemas are present they are checked in addition: a
 * directory whose lcm-event-v1.json refuses everything fails an event
 * that ncmpd's schema accepts. */
Test(ncmp_lcm_conformance, ncmp_schemas_are_checked_in_addition_when_present)
{
    static const char refuse_all[] =
        "{\"not\":{},\"$defs\":{\"Values\":{\"properties\":{\"cmHandleProperties\":{}}}}}\n";
    char dir[] = "/tmp/ncmp-onap-XXXXXX", path[256], err[1024] = "", status[1024];
    FILE *f;
    int rc;

    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/" CONFORMANCE_LCM_SCHEMA_FILE, dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(refuse_all, f);
    fclose(f);
    setenv("NCMP_ONAP_SCHEMAS", dir, 1);
    cr_assert_eq(conformance_onap_available(), 1);
    conformance_onap_status(status, sizeof(status));
    rc = conformance_check_lcm(delete_event, strlen(delete_event), err, sizeof(err));
    unlink(path);
    rmdir(dir);
    cr_assert(strstr(status, "found at /tmp/ncmp-onap-") && strstr(status, "checked"), "%s",
              status);
    cr_assert_eq(rc, -1, "NCMP's schema was not checked");
    cr_assert(strstr(err, "NCMP's " CONFORMANCE_LCM_SCHEMA_FILE ": instance \"\": not"), "%s", err);
}

/* NCMP's own ADVISED->READY example: its published schema refuses it
 * only for the list form of cmHandleProperties, which the patch allows;
 * the base schema (reached through "extends") still applies. Skipped
 * without NCMP's schemas. */
Test(ncmp_lcm_conformance, published_schema_needs_exactly_the_one_patch)
{
    static const char example[] =
        "{\"eventId\":\"6f1c6a3e-1111-4222-8333-444455556666\",\"eventCorrelationId\":\"ch-1\","
        "\"eventTime\":\"2025-06-01T12:00:05.123+0000\",\"eventSource\":\"org.onap.ncmp\","
        "\"eventType\":\"org.onap.ncmp.cmhandle-lcm-event.update\","
        "\"eventSchema\":\"org.onap.ncmp:cmhandle-lcm-event\",\"eventSchemaVersion\":\"1.0\","
        "\"event\":{\"cmHandleId\":\"ch-1\",\"alternateId\":\"fdn1\",\"moduleSetTag\":\"tag1\","
        "\"dataProducerIdentifier\":\"prod1\",\"oldValues\":{\"cmHandleState\":\"ADVISED\","
        "\"cmHandleProperties\":[{\"Color\":\"green\"}]},"
        "\"newValues\":{\"dataSyncEnabled\":false,\"cmHandleState\":\"READY\","
        "\"cmHandleProperties\":[{\"Color\":\"red\"}]}}}";
    char path[2048], err[1024] = "";
    json_object *doc = hold(json_tokener_parse(example)), *event;

    cr_assert_not_null(doc);
    cr_assert_eq(conformance_check_lcm(example, strlen(example), err, sizeof(err)), 0, "%s", err);

    if (!conformance_onap_available())
        cr_skip_test("NCMP's published schemas not found at %s (set NCMP_ONAP_SCHEMAS)",
                     conformance_onap_dir());
    snprintf(path, sizeof(path), "%s/" CONFORMANCE_LCM_SCHEMA_FILE, conformance_onap_dir());
    held_schema = jschema_load(path, 0, err, sizeof(err));
    cr_assert_not_null(held_schema, "%s", err);
    cr_assert_eq(jschema_validate(held_schema, doc, err, sizeof(err)), -1,
                 "the unpatched schema took the list form");
    cr_assert(strstr(err, "instance \"/event/oldValues/cmHandleProperties\": type: expected "
                          "object, got array"),
              "%s", err);
    cr_assert_eq(jschema_patch(held_schema, CONFORMANCE_LCM_PATCH_POINTER,
                               CONFORMANCE_LCM_PATCH_SCHEMA, err, sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(jschema_validate(held_schema, doc, err, sizeof(err)), 0, "%s", err);

    /* the patched schema still refuses what the published one refuses */
    event = at(doc, "/event");
    json_object_object_add(event, "cmHandleState", json_object_new_string("READY"));
    cr_assert_eq(jschema_validate(held_schema, doc, err, sizeof(err)), -1);
    cr_assert(strstr(err, "instance \"/event/cmHandleState\": additionalProperties"), "%s", err);
    json_object_object_del(event, "cmHandleState");
    json_object_object_add(at(doc, "/event/newValues"), "cmHandleState",
                           json_object_new_string("GONE"));
    cr_assert_eq(jschema_validate(held_schema, doc, err, sizeof(err)), -1);
    cr_assert(strstr(err, "instance \"/event/newValues/cmHandleState\": enum"), "%s", err);
    json_object_object_add(at(doc, "/event/newValues"), "cmHandleState",
                           json_object_new_string("READY"));
    cr_assert_eq(jschema_validate(held_schema, doc, err, sizeof(err)), 0, "%s", err);

    /* lcm-event-base.json, through "extends": required and closed */
    json_object_object_del(doc, "eventId");
    cr_assert_eq(jschema_validate(held_schema, doc, err, sizeof(err)), -1);
    cr_assert(strstr(err, "instance \"\": required: property \"eventId\" is missing (schema "
                          "lcm-event-base.json#/required)"),
              "%s", err);
    json_object_object_add(doc, "eventId", json_object_new_string("x"));
    json_object_object_add(doc, "eventTarget", json_object_new_string("x"));
    cr_assert_eq(jschema_validate(held_schema, doc, err, sizeof(err)), -1);
    cr_assert(strstr(err, "instance \"/eventTarget\": additionalProperties"), "%s", err);
    json_object_object_del(doc, "eventTarget");
    json_object_object_add(doc, "eventSource", json_object_new_int(1));
    cr_assert_eq(jschema_validate(held_schema, doc, err, sizeof(err)), -1);
    cr_assert(strstr(err, "instance \"/eventSource\": type"), "%s", err);
}

Test(ncmp_lcm_conformance, create_with_public_properties)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .alternate_id = "fdn1",
        .module_set_tag = "tag1",
        .data_producer_identifier = "prod1",
        .old_values = no_values(),
        .new_values = {NCMP_STATE_ADVISED, -1, "{\"Color\":\"green\",\"Size\":\"XL\"}"},
    };
    emitted e = emit(&ev);

    assert_header_fields(&e, "ch-1", type_create);
    cr_assert_str_eq(ncmp_lcm_event_type(&ev), type_create);
    assert_str_at(e.value, "/event/alternateId", "fdn1");
    assert_str_at(e.value, "/event/moduleSetTag", "tag1");
    assert_str_at(e.value, "/event/dataProducerIdentifier", "prod1");
    cr_assert(!has(e.value, "/event/oldValues"));
    assert_json_at(e.value, "/event/newValues",
                   "{\"cmHandleState\":\"ADVISED\","
                   "\"cmHandleProperties\":[{\"Color\":\"green\",\"Size\":\"XL\"}]}");
}

Test(ncmp_lcm_conformance, create_without_public_properties_sends_a_list_of_an_empty_map)
{
    /* "no public properties" as the encoder documents it: "{}" or "" */
    const char *const none[] = {"{}", ""};

    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        ncmp_lcm_event ev = {
            .cm_handle_id = "ch-2",
            .old_values = no_values(),
            .new_values = {NCMP_STATE_ADVISED, -1, none[i]},
        };
        emitted e = emit(&ev);

        assert_json_at(e.value, "/event/newValues/cmHandleProperties", "[{}]");
    }
}

/* NCMP's create always carries cmHandleProperties ([{}] at least): a
 * handle without public properties must not lose the field because the
 * caller had no JSON text for them. */
Test(ncmp_lcm_conformance, create_with_null_properties_still_sends_a_list_of_an_empty_map)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-3",
        .old_values = no_values(),
        .new_values = {NCMP_STATE_ADVISED, -1, NULL},
    };
    emitted e = emit(&ev);

    assert_json_at(e.value, "/event/newValues/cmHandleProperties", "[{}]");
}

Test(ncmp_lcm_conformance, update_advised_to_ready_with_data_sync_disabled)
{
    /* NCMP's own example of this update */
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .alternate_id = "fdn1",
        .module_set_tag = "tag1",
        .data_producer_identifier = "prod1",
        .old_values = {NCMP_STATE_ADVISED, -1, NULL},
        .new_values = {NCMP_STATE_READY, 0, NULL},
    };
    emitted e = emit(&ev);

    assert_header_fields(&e, "ch-1", type_update);
    assert_str_at(e.value, "/event/alternateId", "fdn1");
    assert_json_at(e.value, "/event/oldValues", "{\"cmHandleState\":\"ADVISED\"}");
    assert_json_at(e.value, "/event/newValues",
                   "{\"dataSyncEnabled\":false,\"cmHandleState\":\"READY\"}");
}

Test(ncmp_lcm_conformance, update_ready_to_locked)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .old_values = {NCMP_STATE_READY, -1, NULL},
        .new_values = {NCMP_STATE_LOCKED, -1, NULL},
    };
    emitted e = emit(&ev);

    assert_header_fields(&e, "ch-1", type_update);
    assert_json_at(e.value, "/event/oldValues", "{\"cmHandleState\":\"READY\"}");
    assert_json_at(e.value, "/event/newValues", "{\"cmHandleState\":\"LOCKED\"}");
}

Test(ncmp_lcm_conformance, update_ready_to_deleting)
{
    /* the first of the two events of a deletion */
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .alternate_id = "fdn1",
        .module_set_tag = "tag1",
        .data_producer_identifier = "prod1",
        .old_values = {NCMP_STATE_READY, -1, NULL},
        .new_values = {NCMP_STATE_DELETING, -1, NULL},
    };
    emitted e = emit(&ev);

    assert_header_fields(&e, "ch-1", type_update);
    assert_json_at(e.value, "/event/oldValues", "{\"cmHandleState\":\"READY\"}");
    assert_json_at(e.value, "/event/newValues", "{\"cmHandleState\":\"DELETING\"}");
}

Test(ncmp_lcm_conformance, delete_has_no_values)
{
    /* values given by the caller must not leak into a delete */
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .alternate_id = "fdn1",
        .module_set_tag = "tag1",
        .data_producer_identifier = "prod1",
        .old_values = {NCMP_STATE_DELETING, 1, "{\"Color\":\"green\"}"},
        .new_values = {NCMP_STATE_DELETED, 0, "{}"},
    };
    emitted e = emit(&ev);

    assert_header_fields(&e, "ch-1", type_delete);
    assert_json_at(e.value, "/event",
                   "{\"cmHandleId\":\"ch-1\",\"alternateId\":\"fdn1\",\"moduleSetTag\":\"tag1\","
                   "\"dataProducerIdentifier\":\"prod1\"}");
}

/* A dataProducerIdentifier update changes no value: the event is an
 * update (force_update, since no state says so) whose values hold nothing,
 * the identifier being a top-level field. NCMP sends
 * "oldValues":{},"newValues":{} (older releases left both out). */
Test(ncmp_lcm_conformance, update_of_data_producer_identifier_only)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .alternate_id = "fdn1",
        .module_set_tag = "tag1",
        .data_producer_identifier = "prod2",
        .old_values = no_values(),
        .new_values = no_values(),
        .force_update = 1,
    };
    emitted e = emit(&ev);

    cr_assert_str_eq(ncmp_lcm_event_type(&ev), type_update);
    assert_header_fields(&e, "ch-1", type_update);
    assert_str_at(e.value, "/event/alternateId", "fdn1");
    assert_str_at(e.value, "/event/moduleSetTag", "tag1");
    assert_str_at(e.value, "/event/dataProducerIdentifier", "prod2");
    assert_json_at(e.value, "/event/oldValues", "{}");
    assert_json_at(e.value, "/event/newValues", "{}");
}

/* A caller that passes the unchanged state on both sides gets an event
 * NCMP would not send: the check must say so. */
Test(ncmp_lcm_conformance, unchanged_state_on_both_sides_is_refused)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .data_producer_identifier = "prod2",
        .old_values = {NCMP_STATE_READY, -1, NULL},
        .new_values = {NCMP_STATE_READY, -1, NULL},
    };
    ncmp_buf text = NCMP_BUF_INIT;
    char err[1024] = "";
    int rc;

    ncmp_lcm_event_json(&text, &ev, NCMP_LCM_V1, "6f1c6a3e-1111-4222-8333-444455556666",
                        "2025-06-01T12:00:05.123+0000");
    rc = conformance_check_lcm(text.data, text.len, err, sizeof(err));
    ncmp_buf_free(&text);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(err, "cmHandleState is \"READY\" in both oldValues and newValues"), "%s", err);
}

Test(ncmp_lcm_conformance, absent_identifiers_are_sent_as_empty_strings)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-4",
        .old_values = {NCMP_STATE_ADVISED, -1, NULL},
        .new_values = {NCMP_STATE_READY, 1, NULL},
    };
    emitted e = emit(&ev);

    assert_str_at(e.value, "/event/alternateId", "");
    assert_str_at(e.value, "/event/moduleSetTag", "");
    assert_str_at(e.value, "/event/dataProducerIdentifier", "");
    assert_json_at(e.value, "/event/newValues",
                   "{\"dataSyncEnabled\":true,\"cmHandleState\":"
                   "\"READY\"}");
}

/* Quotes, backslashes, control characters and UTF-8 of 2, 3 and 4 bytes
 * survive the JSON encoding. */
static const char special_id[] =
    "ch-\"q\"-\\b\\-\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac-\xf0\x9f\x98\x80";
static const char special_alt[] = "MeContext=\"1\",ManagedElement=\xc3\x96\\/\t\n\x01";

Test(ncmp_lcm_conformance, ids_with_quotes_backslashes_and_utf8_round_trip)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = special_id,
        .alternate_id = special_alt,
        .module_set_tag = "tag \"\xe2\x82\xac\"",
        .data_producer_identifier = "\\\\prod\\",
        .old_values = no_values(),
        .new_values = {NCMP_STATE_ADVISED, -1, "{\"na\\\"me\":\"v\\u00e9\xe2\x82\xac\"}"},
    };
    emitted e = emit(&ev);

    assert_header_fields(&e, special_id, type_create);
    assert_str_at(e.value, "/event/alternateId", special_alt);
    assert_str_at(e.value, "/event/moduleSetTag", "tag \"\xe2\x82\xac\"");
    assert_str_at(e.value, "/event/dataProducerIdentifier", "\\\\prod\\");
    assert_str_at(e.value, "/event/newValues/cmHandleProperties/0/na\"me", "v\xc3\xa9\xe2\x82\xac");
}

Test(ncmp_lcm_conformance, event_type_follows_the_states)
{
    static const struct {
        ncmp_handle_state old_state, new_state;
        const char *const *type;
    } cases[] = {
        {NCMP_STATE_NONE, NCMP_STATE_ADVISED, &type_create},
        {NCMP_STATE_NONE, NCMP_STATE_READY, &type_create},
        {NCMP_STATE_ADVISED, NCMP_STATE_READY, &type_update},
        {NCMP_STATE_ADVISED, NCMP_STATE_LOCKED, &type_update},
        {NCMP_STATE_LOCKED, NCMP_STATE_ADVISED, &type_update},
        {NCMP_STATE_READY, NCMP_STATE_DELETING, &type_update},
        {NCMP_STATE_DELETING, NCMP_STATE_DELETED, &type_delete},
        {NCMP_STATE_READY, NCMP_STATE_DELETED, &type_delete},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ncmp_lcm_event ev = {
            .cm_handle_id = "ch-5",
            .old_values = {cases[i].old_state, -1, NULL},
            .new_values = {cases[i].new_state, -1,
                           cases[i].old_state == NCMP_STATE_NONE ? "{}" : NULL},
        };
        emitted e;

        cr_assert_str_eq(ncmp_lcm_event_type(&ev), *cases[i].type, "%s -> %s",
                         ncmp_state_name(cases[i].old_state), ncmp_state_name(cases[i].new_state));
        e = emit(&ev);
        assert_str_at(e.value, "/eventType", *cases[i].type);
        json_object_put(e.value);
        nheld_json--;
    }
}

Test(ncmp_lcm_conformance, event_time_is_now_in_ncmp_format)
{
    regex_t re;
    char t[32];
    struct tm tm = {0};
    struct timespec ts;
    time_t before, at_time, after;
    int ms;

    /* the clock the event time is read from: time() is the kernel's
     * coarse clock, up to a tick behind it at a second's turn */
    clock_gettime(CLOCK_REALTIME, &ts);
    before = ts.tv_sec;

    cr_assert_eq(regcomp(&re,
                         "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}"
                         "\\+0000$",
                         REG_EXTENDED | REG_NOSUB),
                 0);
    ncmp_event_time_now(t);
    clock_gettime(CLOCK_REALTIME, &ts);
    after = ts.tv_sec;
    ms = regexec(&re, t, 0, NULL, 0);
    regfree(&re);
    cr_assert_eq(ms, 0, "\"%s\" does not match", t);
    cr_assert_eq(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d.%3d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                        &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms),
                 7);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    at_time = timegm(&tm);
    /* UTC, as +0000 says */
    cr_assert(at_time >= before && at_time <= after, "%s is not now (%lld..%lld)", t,
              (long long)before, (long long)after);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(a, b);
}

Test(ncmp_lcm_conformance, event_ids_are_random_version_4_uuids)
{
    enum { N = 1000 };
    static char ids[N][37];

    for (int i = 0; i < N; i++) {
        ncmp_uuid4(ids[i]);
        cr_assert_eq(strlen(ids[i]), 36);
        for (int k = 0; k < 36; k++) {
            if (k == 8 || k == 13 || k == 18 || k == 23)
                cr_assert_eq(ids[i][k], '-', "%s", ids[i]);
            else
                cr_assert(strchr("0123456789abcdef", ids[i][k]), "%s", ids[i]);
        }
        cr_assert_eq(ids[i][14], '4', "%s: version", ids[i]);
        cr_assert(strchr("89ab", ids[i][19]), "%s: variant", ids[i]);
    }
    qsort(ids, N, sizeof(ids[0]), cmp_str);
    for (int i = 1; i < N; i++)
        cr_assert_str_neq(ids[i - 1], ids[i], "the same id twice");
}

static const char *const header_names[7] = {
    "eventId",   "eventCorrelationId", "eventTime",         "eventSource",
    "eventType", "eventSchema",        "eventSchemaVersion"};

/* The seven headers for `ev` with the value's id and time. */
static rd_kafka_headers_t *headers_for(const ncmp_lcm_event *ev, const emitted *e, int java)
{
    held_headers = ncmp_lcm_headers(ev->cm_handle_id, ncmp_lcm_event_type(ev),
                                    NCMP_LCM_EVENT_SCHEMA, e->id, e->time, java);
    cr_assert_not_null(held_headers);
    return held_headers;
}

Test(ncmp_lcm_conformance, headers_carry_plain_values)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-1",
        .old_values = {NCMP_STATE_ADVISED, -1, NULL},
        .new_values = {NCMP_STATE_READY, 0, NULL},
    };
    emitted e = emit(&ev);
    rd_kafka_headers_t *h = headers_for(&ev, &e, 0);
    const char *want[7] = {
        e.id, "ch-1", e.time, "org.onap.ncmp", type_update, "org.onap.ncmp:cmhandle-lcm-event",
        "1.0"};
    char err[1024] = "";

    cr_assert_eq(rd_kafka_header_cnt(h), 7);
    for (size_t i = 0; i < 7; i++) {
        const char *name;
        const void *value;
        size_t size;

        cr_assert_eq(rd_kafka_header_get_all(h, i, &name, &value, &size),
                     RD_KAFKA_RESP_ERR_NO_ERROR);
        cr_assert_str_eq(name, header_names[i]);
        cr_assert_eq(size, strlen(want[i]), "%s", name);
        cr_assert(memcmp(value, want[i], size) == 0, "%s: %.*s", name, (int)size,
                  (const char *)value);
    }
    cr_assert_eq(conformance_check_lcm_headers(h, e.value, 0, err, sizeof(err)), 0, "%s", err);
    /* and the check notices a wrong one */
    cr_assert_eq(conformance_check_lcm_headers(h, e.value, 1, err, sizeof(err)), -1);
}

Test(ncmp_lcm_conformance, headers_are_java_serialised_strings)
{
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-\xc3\xa9-\"1\"",
        .old_values = {NCMP_STATE_READY, -1, NULL},
        .new_values = {NCMP_STATE_DELETED, -1, NULL},
    };
    emitted e = emit(&ev);
    rd_kafka_headers_t *h = headers_for(&ev, &e, 1);
    const char *want[7] = {e.id,        ev.cm_handle_id,
                           e.time,      "org.onap.ncmp",
                           type_delete, "org.onap.ncmp:cmhandle-lcm-event",
                           "1.0"};
    static const unsigned char magic[5] = {0xac, 0xed, 0x00, 0x05, 0x74};
    char err[1024] = "";

    cr_assert_eq(rd_kafka_header_cnt(h), 7);
    for (size_t i = 0; i < 7; i++) {
        const char *name;
        const unsigned char *value;
        const void *raw;
        size_t size, n = strlen(want[i]);

        cr_assert_eq(rd_kafka_header_get_all(h, i, &name, &raw, &size), RD_KAFKA_RESP_ERR_NO_ERROR);
        value = raw;
        cr_assert_str_eq(name, header_names[i]);
        cr_assert_eq(size, 7 + n, "%s: %zu bytes", name, size);
        cr_assert(memcmp(value, magic, 5) == 0, "%s: no Java String prefix", name);
        cr_assert_eq(((size_t)value[5] << 8) | value[6], n, "%s: length", name);
        cr_assert(memcmp(value + 7, want[i], n) == 0, "%s", name);
    }
    cr_assert_eq(conformance_check_lcm_headers(h, e.value, 1, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(conformance_check_lcm_headers(h, e.value, 0, err, sizeof(err)), -1);
}

/* Java writes a String as modified UTF-8: a character outside the BMP is
 * a surrogate pair, 3 bytes each (U+1F600 is ED A0 BD ED B8 80), and
 * readUTF throws on the 4-byte UTF-8 form. */
Test(ncmp_lcm_conformance, java_headers_write_supplementary_characters_as_modified_utf8)
{
    static const unsigned char want[] = {'c', 'h', '-', 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80};
    ncmp_lcm_event ev = {
        .cm_handle_id = "ch-\xf0\x9f\x98\x80",
        .old_values = {NCMP_STATE_READY, -1, NULL},
        .new_values = {NCMP_STATE_LOCKED, -1, NULL},
    };
    emitted e = emit(&ev);
    rd_kafka_headers_t *h = headers_for(&ev, &e, 1);
    const void *raw;
    const unsigned char *value;
    size_t size;
    char err[1024] = "";

    cr_assert_eq(rd_kafka_header_get_last(h, "eventCorrelationId", &raw, &size),
                 RD_KAFKA_RESP_ERR_NO_ERROR);
    value = raw;
    cr_assert_eq(size, 7 + sizeof(want), "eventCorrelationId: %zu bytes", size);
    cr_assert_eq(((size_t)value[5] << 8) | value[6], sizeof(want));
    cr_assert(memcmp(value + 7, want, sizeof(want)) == 0,
              "eventCorrelationId is not modified UTF-8");
    cr_assert_eq(conformance_check_lcm_headers(h, e.value, 1, err, sizeof(err)), 0, "%s", err);
}

/* A Java String header holds up to 65535 bytes; a consumer that strips 7
 * bytes (or deserialises) breaks if a long value comes plain. */
Test(ncmp_lcm_conformance, java_headers_stay_serialised_for_long_values)
{
    char id[601];
    ncmp_lcm_event ev = {
        .cm_handle_id = id,
        .old_values = {NCMP_STATE_READY, -1, NULL},
        .new_values = {NCMP_STATE_LOCKED, -1, NULL},
    };
    emitted e;
    rd_kafka_headers_t *h;
    char err[1024] = "";

    memset(id, 'x', sizeof(id) - 1);
    id[sizeof(id) - 1] = '\0';
    e = emit(&ev);
    h = headers_for(&ev, &e, 1);
    cr_assert_eq(conformance_check_lcm_headers(h, e.value, 1, err, sizeof(err)), 0, "%s", err);
}

Test(ncmp_lcm_conformance, java_string_decoding_follows_read_utf)
{
    static const unsigned char pair[] = {0xac, 0xed, 0x00, 0x05, 0x74, 0x00, 0x07, 'a',
                                         0xc3, 0xa9, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80};
    static const unsigned char four[] = {0xac, 0xed, 0x00, 0x05, 0x74, 0x00,
                                         0x04, 0xf0, 0x9f, 0x98, 0x80};
    static const unsigned char bad_len[] = {0xac, 0xed, 0x00, 0x05, 0x74, 0x00, 0x02, 'a'};
    static const unsigned char lone[] = {0xac, 0xed, 0x00, 0x05, 0x74,
                                         0x00, 0x03, 0xed, 0xa0, 0xbd};
    char out[64], err[256];

    /* 'a', U+00E9, U+1F600 as a surrogate pair */
    cr_assert_eq(
        conformance_java_string_decode(pair, sizeof(pair) - 6, out, sizeof(out), err, sizeof(err)),
        -1);
    cr_assert_eq(
        conformance_java_string_decode(pair, sizeof(pair), out, sizeof(out), err, sizeof(err)), -1,
        "length 7 but 9 bytes follow");
    {
        unsigned char fixed[sizeof(pair)];

        memcpy(fixed, pair, sizeof(pair));
        fixed[6] = (unsigned char)(sizeof(pair) - 7);
        cr_assert_eq(conformance_java_string_decode(fixed, sizeof(fixed), out, sizeof(out), err,
                                                    sizeof(err)),
                     7, "%s", err);
        cr_assert_str_eq(out, "a\xc3\xa9\xf0\x9f\x98\x80");
    }
    cr_assert_eq(
        conformance_java_string_decode(four, sizeof(four), out, sizeof(out), err, sizeof(err)), -1);
    cr_assert(strstr(err, "not modified UTF-8"), "%s", err);
    cr_assert_eq(conformance_java_string_decode(bad_len, sizeof(bad_len), out, sizeof(out), err,
                                                sizeof(err)),
                 -1);
    cr_assert_eq(
        conformance_java_string_decode(lone, sizeof(lone), out, sizeof(out), err, sizeof(err)), -1);
    cr_assert(strstr(err, "surrogate"), "%s", err);
}

/* The rules beyond the schema catch what the schema lets through. */
Test(ncmp_lcm_conformance, rules_refuse_what_ncmp_would_not_send)
{
    static const struct {
        const char *path;  /* member of the base event to replace */
        const char *value; /* NULL: remove it */
        const char *message;
    } cases[] = {
        {"/eventSource", "\"org.onap.cps\"", "/eventSource"},
        {"/eventSchema", "\"org.onap.ncmp:cmhandle-lcm-event.v3\"", "/eventSchema"},
        {"/eventSchemaVersion", "\"2.0\"", "/eventSchemaVersion"},
        {"/eventId", "\"6f1c6a3e-1111-1222-8333-444455556666\"", "version 4 UUID"},
        {"/eventId", "\"6F1C6A3E-1111-4222-8333-444455556666\"", "version 4 UUID"},
        {"/eventId", "\"6f1c6a3e-1111-4222-c333-444455556666\"", "version 4 UUID"},
        {"/eventTime", "\"2025-06-01T12:00:05.123Z\"", "/eventTime"},
        {"/eventTime", "\"2025-06-01T12:00:05+0000\"", "/eventTime"},
        {"/eventCorrelationId", "\"ch-2\"", "is not the cmHandleId"},
        {"/eventType", "\"org.onap.ncmp.cmhandle-lcm-event.upsert\"", "/eventType"},
        {"/event/newValues", "{\"cmHandleState\":\"ADVISED\"}", "in both oldValues and newValues"},
        {"/event/newValues", "{\"cmHandleState\":\"DELETED\"}", "DELETED on an update"},
        {"/event/oldValues", NULL, "newValues without oldValues"},
        {"/event/alternateId", NULL, "/event/alternateId: missing"},
        {"/event/newValues", "{\"cmHandleProperties\":[{\"a\":\"1\"},{}]}", "exactly one map"},
        {"/event/newValues", "{\"cmHandleProperties\":[{\"a\":1}]}", "not a string"},
    };
    static const char base[] =
        "{\"eventId\":\"6f1c6a3e-1111-4222-8333-444455556666\",\"eventCorrelationId\":\"ch-1\","
        "\"eventTime\":\"2025-06-01T12:00:05.123+0000\",\"eventSource\":\"org.onap.ncmp\","
        "\"eventType\":\"org.onap.ncmp.cmhandle-lcm-event.update\","
        "\"eventSchema\":\"org.onap.ncmp:cmhandle-lcm-event\",\"eventSchemaVersion\":\"1.0\","
        "\"event\":{\"cmHandleId\":\"ch-1\",\"alternateId\":\"\",\"moduleSetTag\":\"\","
        "\"dataProducerIdentifier\":\"\",\"oldValues\":{\"cmHandleState\":\"ADVISED\"},"
        "\"newValues\":{\"cmHandleState\":\"READY\"}}}";
    char err[1024] = "";
    json_object *doc = hold(json_tokener_parse(base));

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
}
