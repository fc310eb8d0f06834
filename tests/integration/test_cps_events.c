/*
 * CPS's data-updated events on real PostgreSQL and Kafka: which writes
 * announce themselves (subscribed anchors and dataspaces, committed
 * writes only), what the events hold, the subscription API, and the
 * relay's exactly-once publishing across crashes.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "conformance.h"
#include "it_cps.h"
#include "it_util.h"

TestSuite(cps_events, .fini = it_cps_cleanup);

#define DS  "/cps/api/v2/dataspaces/ds"
#define SUB "/cps/api/v2/notification-subscription"

static const char GARDEN[] = "module garden {\n"
                             "  yang-version 1.1;\n"
                             "  namespace \"urn:garden\";\n"
                             "  prefix g;\n"
                             "  revision 2024-03-03;\n"
                             "  container garden {\n"
                             "    leaf name { type string; }\n"
                             "    list bed { key \"row col\";\n"
                             "      leaf row { type uint8; }\n"
                             "      leaf col { type string; }\n"
                             "      leaf area { type decimal64 { fraction-digits 2; } }\n"
                             "    }\n"
                             "  }\n"
                             "}\n";

static void call(cps_case *c, const char *method, const char *path, const char *json, long status)
{
    reply r;

    it_cps_send(c, method, path, NULL, NULL, json, json ? strlen(json) : 0, &r);
    cr_assert_eq(r.status, status, "%s %s: %ld, expected %ld: %s", method, path, r.status, status,
                 r.body.data ? r.body.data : "");
    it_cps_reply_free(&r);
}

/* Dataspace `ds` (and `more`, when not NULL) with the garden model as
 * schema set g and the given anchors. */
static void garden(cps_case *c, const char *ds, const char *const *anchors)
{
    char yang[512], path[512];

    it_cps_temp_path(yang, sizeof(yang), c, "garden.yang");
    it_cps_write_file(yang, GARDEN);
    snprintf(path, sizeof(path), "/cps/api/v2/dataspaces?dataspace-name=%s", ds);
    it_cps_expect(c, "POST", path, NULL, 201, NULL);
    snprintf(path, sizeof(path), "/cps/api/v2/dataspaces/%s/schema-sets?schema-set-name=g", ds);
    it_cps_expect(c, "POST", path, yang, 201, NULL);
    for (; *anchors; anchors++) {
        snprintf(path, sizeof(path),
                 "/cps/api/v2/dataspaces/%s/anchors?schema-set-name=g&anchor-name=%s", ds,
                 *anchors);
        it_cps_expect(c, "POST", path, NULL, 201, NULL);
    }
}

/* The payload's eventPayload member `name` (a string), or "" when absent. */
static const char *payload_field(json_object *ev, const char *name)
{
    json_object *p, *v;

    if (!json_object_object_get_ex(ev, "eventPayload", &p) ||
        !json_object_object_get_ex(p, name, &v))
        return "";
    return json_object_get_string(v);
}

/* Read the case's topic: exactly `n` records (none more within a few
 * seconds). */
static size_t read_events(cps_case *c, size_t n, it_record **out)
{
    size_t got = it_read_topic(c->events_topic, n + 1, n ? 30000 : 3000, out);
    if (got == n && n) {
        /* what arrived late would be a duplicate or a stray event */
        it_records_free(*out, got);
        got = it_read_topic(c->events_topic, n + 1, 3000, out);
    }
    cr_assert_eq(got, n, "%zu data-updated events, expected %zu; log %s", got, n, c->log);
    return got;
}

static void expect_header(const it_record *r, const char *name, const char *value)
{
    char buf[256];
    const char *v = it_record_header(r, name, buf, sizeof(buf));

    cr_expect(v && strcmp(v, value) == 0, "header %s: '%s', expected '%s'", name, v ? v : "(none)",
              value);
}

Test(cps_events, subscribed_anchor_announces_each_committed_write, .timeout = 180)
{
    static const char *const anchors[] = {"a1", "a2", NULL};
    static const char *const actions[] = {"create", "replace", "replace", "replace", "remove"};
    static const char *const xpaths[] = {"/", "/garden", "/", "/garden",
                                         "/garden/bed[@row='1' and @col='a']"};
    cps_case *c = it_cps_start("cps_events_anchor", "cps,cps-relay");
    it_record *recs = NULL;
    size_t n;

    garden(c, "ds", anchors);
    call(c, "POST", SUB "?xpath=/dataspaces",
         "{\"dataspace\":[{\"name\":\"ds\",\"anchors\":{\"anchor\":[{\"name\":\"a1\"}]}}]}", 201);
    call(c, "POST",
         DS "/anchors/a1/nodes?xpath=/&observed-timestamp=2026-12-03T10:15:30.000%2B0100",
         "{\"garden\":{\"name\":\"g1\"}}", 201);
    call(c, "POST", DS "/anchors/a1/list-nodes?xpath=/garden",
         "{\"bed\":[{\"row\":1,\"col\":\"a\"}]}", 201);
    call(c, "PATCH", DS "/anchors/a1/nodes?xpath=/", "{\"garden\":{\"name\":\"g2\"}}", 200);
    call(c, "PUT", DS "/anchors/a1/nodes?xpath=/garden",
         "{\"bed\":[{\"row\":1,\"col\":\"a\",\"area\":\"1.5\"}]}", 200);
    /* refused or not stored: nothing to announce */
    call(c, "POST", DS "/anchors/a1/nodes?xpath=/", "{\"garden\":{\"name\":\"again\"}}", 409);
    call(c, "POST", DS "/anchors/a1/nodes?xpath=/&dry-run=true", "{\"garden\":{\"name\":\"d\"}}",
         200);
    call(c, "PATCH", DS "/anchors/a1/nodes?xpath=/", "{\"garden\":{\"nope\":\"x\"}}", 400);
    call(c, "POST", DS "/anchors/a1/nodes?xpath=/&observed-timestamp=yesterday",
         "{\"garden\":{\"name\":\"g1\"}}", 400);
    /* not subscribed */
    call(c, "POST", DS "/anchors/a2/nodes?xpath=/", "{\"garden\":{\"name\":\"other\"}}", 201);
    call(c, "DELETE", DS "/anchors/a1/nodes?xpath=/garden/bed%5B@row='1'%20and%20@col='a'%5D", NULL,
         204);

    n = read_events(c, 5, &recs);
    for (size_t i = 0; i < n; i++) {
        json_object *ev = json_tokener_parse(recs[i].value);
        char err[1024];
        cr_assert_not_null(ev, "%s", recs[i].value);
        cr_expect_eq(conformance_check_event(CONFORMANCE_CPS_DATA_UPDATED, ev, err, sizeof(err)), 0,
                     "%s: %s", recs[i].value, err);
        cr_expect_eq(conformance_check_headers(CONFORMANCE_CPS_DATA_UPDATED, recs[i].headers, err,
                                               sizeof(err)),
                     0, "%s", err);
        cr_expect_str_eq(recs[i].key, "ds:a1");
        expect_header(&recs[i], "ce_specversion", "1.0");
        expect_header(&recs[i], "ce_source", "CPS");
        expect_header(&recs[i], "ce_type", "org.onap.cps.events.model.CpsDataUpdatedEvent");
        expect_header(&recs[i], "ce_dataschema",
                      "urn:cps:org.onap.cps.events.model.CpsDataUpdatedEvent:1.0.0");
        expect_header(&recs[i], "ce_correlationid", "ds:a1");
        cr_expect_str_eq(payload_field(ev, "action"), actions[i], "event %zu: %s", i,
                         recs[i].value);
        cr_expect_str_eq(payload_field(ev, "xpath"), xpaths[i], "event %zu: %s", i, recs[i].value);
        cr_expect_str_eq(payload_field(ev, "dataspaceName"), "ds");
        cr_expect_str_eq(payload_field(ev, "anchorName"), "a1");
        cr_expect_str_eq(payload_field(ev, "schemaSetName"), "g");
        cr_expect_str_eq(payload_field(ev, "observedTimestamp"),
                         i == 0 ? "2026-12-03T10:15:30.000+0100" : "", "event %zu: %s", i,
                         recs[i].value);
        json_object_put(ev);
    }
    it_records_free(recs, n);
    it_cps_fini(c);
}

/* A dataspace's subscription covers its anchors while it names none
 * (CPS's rule); the subscription API's answers. */
Test(cps_events, dataspace_subscriptions_and_their_api, .timeout = 180)
{
    static const char *const anchors[] = {"a1", "a2", NULL};
    static const char *const others[] = {"b1", NULL};
    static const char *const keys[] = {"ds:a1", "ds:a2", "ds:a2"};
    cps_case *c = it_cps_start("cps_events_dataspace", "cps,cps-relay");
    it_record *recs = NULL;
    reply r;
    size_t n;

    garden(c, "ds", anchors);
    garden(c, "other", others);
    call(c, "POST", SUB "?xpath=/dataspaces", "{\"dataspace\":[{\"name\":\"ds\"}]}", 201);
    call(c, "POST", SUB "?xpath=/dataspaces", "{\"dataspace\":[{\"name\":\"ds\"}]}", 409);
    call(c, "POST", SUB "?xpath=/dataspaces", "{\"dataspace\":[{\"nom\":\"x\"}]}", 400);
    call(c, "POST", SUB "?xpath=/dataspaces", "{", 400);
    it_cps_call(c, "GET", SUB "?xpath=/dataspaces", NULL, &r);
    cr_expect_eq(r.status, 200);
    cr_expect(strstr(r.body.data, "cps-notification-subscriptions:dataspaces") &&
                  strstr(r.body.data, "\"ds\""),
              "%s", r.body.data);
    it_cps_reply_free(&r);

    call(c, "POST", DS "/anchors/a1/nodes?xpath=/", "{\"garden\":{\"name\":\"1\"}}", 201);
    call(c, "POST", DS "/anchors/a2/nodes?xpath=/", "{\"garden\":{\"name\":\"2\"}}", 201);
    call(c, "POST", "/cps/api/v2/dataspaces/other/anchors/b1/nodes?xpath=/",
         "{\"garden\":{\"name\":\"3\"}}", 201);
    call(c, "DELETE", SUB "?xpath=/dataspaces/dataspace%5B@name='ds'%5D", NULL, 204);
    call(c, "DELETE", SUB "?xpath=/dataspaces/dataspace%5B@name='ds'%5D", NULL, 404);
    call(c, "PATCH", DS "/anchors/a1/nodes?xpath=/", "{\"garden\":{\"name\":\"4\"}}", 200);
    /* the dataspace again, naming a2: a1 is no longer covered */
    call(c, "POST", SUB "?xpath=/dataspaces",
         "{\"dataspace\":[{\"name\":\"ds\",\"anchors\":{\"anchor\":[{\"name\":\"a2\"}]}}]}", 201);
    call(c, "PATCH", DS "/anchors/a1/nodes?xpath=/", "{\"garden\":{\"name\":\"5\"}}", 200);
    call(c, "PATCH", DS "/anchors/a2/nodes?xpath=/", "{\"garden\":{\"name\":\"6\"}}", 200);

    n = read_events(c, 3, &recs);
    /* one key per partition: order across keys is not kept, so sort by
     * key (stable within a key) before comparing */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(recs[j - 1].key, recs[j].key) > 0; j--) {
            it_record t = recs[j];
            recs[j] = recs[j - 1];
            recs[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++)
        cr_expect_str_eq(recs[i].key, keys[i], "event %zu: %s", i, recs[i].value);
    cr_expect(strstr(recs[1].value, "\"action\":\"create\""), "%s", recs[1].value);
    cr_expect(strstr(recs[2].value, "\"action\":\"replace\""), "%s", recs[2].value);
    it_records_free(recs, n);
    it_cps_fini(c);
}

#define CRASH_WRITES 30

/* 30 writes over three anchors wait in the outbox (no relay yet); a relay
 * publishing 7 at a time is killed at `point` of its second round, and a
 * new one takes over: each event is on the topic once, in write order per
 * anchor. */
static void crash_and_recover(const char *name, const char *point)
{
    static const char *const anchors[] = {"a0", "a1", "a2", NULL};
    cps_case *c = it_cps_start(name, "cps");
    char roles[64], topic_flag[300], fault[128], log[600];
    int next[3] = {0, 0, 0}, status;
    it_record *recs = NULL;
    pid_t pid;
    size_t n;

    garden(c, "ds", anchors);
    call(c, "POST", SUB "?xpath=/dataspaces", "{\"dataspace\":[{\"name\":\"ds\"}]}", 201);
    for (int i = 0; i < CRASH_WRITES; i++) {
        char path[256], body[128];
        /* the observed time tells the writes apart: second i */
        snprintf(path, sizeof(path),
                 DS
                 "/anchors/a%d/nodes?xpath=/&observed-timestamp=2026-12-03T10:00:%02d.000%%2B0000",
                 i % 3, i);
        snprintf(body, sizeof(body), "{\"garden\":{\"name\":\"w%d\"}}", i);
        if (i < 3)
            call(c, "POST", path, body, 201);
        else
            call(c, "PATCH", path, body, 200);
    }
    it_cps_stop(c);

    snprintf(c->events_topic, sizeof(c->events_topic), "%s-events", c->name);
    it_create_topic(c->events_topic, 3);
    snprintf(roles, sizeof(roles), "--roles=cps,cps-relay");
    snprintf(topic_flag, sizeof(topic_flag), "--cps.data-updated-topic=%s", c->events_topic);
    snprintf(fault, sizeof(fault), "--debug.fault=%s:2", point);
    snprintf(log, sizeof(log), "%s.crash", c->log);
    {
        const char *args[] = {c->flags[0], roles,       c->flags[2], c->flags[3],
                              c->flags[4], c->flags[5], topic_flag,  "--cps.relay-batch-size=7",
                              fault,       NULL};
        pid = it_ncmpd_spawn(log, args);
    }
    status = it_wait_exit(pid, 60000);
    if (status == -1) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    cr_assert(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "ncmpd should have been killed at %s (status %d); log %s", point, status, log);
    cr_assert(it_file_contains(log, "debug.fault point reached"), "log %s", log);

    snprintf(c->flags[1], sizeof(c->flags[1]), "%s", roles);
    snprintf(c->flags[c->nflags++], sizeof(c->flags[0]), "%s", topic_flag);
    it_cps_restart(c, NULL);
    n = read_events(c, CRASH_WRITES, &recs);
    for (size_t i = 0; i < n; i++) {
        json_object *ev = json_tokener_parse(recs[i].value);
        const char *a, *ts;
        int k;
        cr_assert_not_null(ev);
        a = payload_field(ev, "anchorName");
        cr_assert(a[0] == 'a' && a[1] >= '0' && a[1] <= '2', "%s", recs[i].value);
        k = a[1] - '0';
        cr_assert_str_eq(recs[i].key, k == 0 ? "ds:a0" : k == 1 ? "ds:a1" : "ds:a2");
        /* the k-th anchor's writes were k, k+3, k+6, ...: its events in
         * that order, none missing, none twice */
        cr_expect_str_eq(payload_field(ev, "action"), next[k] == 0 ? "create" : "replace");
        ts = payload_field(ev, "observedTimestamp");
        cr_expect_eq(strlen(ts) > 19 ? atoi(ts + 17) : -1, k + 3 * next[k], "anchor a%d: %s", k,
                     recs[i].value);
        next[k]++;
        json_object_put(ev);
    }
    for (int k = 0; k < 3; k++)
        cr_expect_eq(next[k], CRASH_WRITES / 3, "anchor a%d: %d events", k, next[k]);
    it_records_free(recs, n);
    it_cps_fini(c);
}

Test(cps_events, crash_after_relay_publish_publishes_every_event_once, .timeout = 240)
{
    crash_and_recover("cps_events_crash_pub", "cps-relay.after-publish");
}

Test(cps_events, crash_after_relay_commit_publishes_every_event_once, .timeout = 240)
{
    crash_and_recover("cps_events_crash_commit", "cps-relay.after-commit");
}

/* With cps.delta-notification, one event per entry of the grouped delta
 * of what the write changed, each with its source and target data; a
 * write that changes nothing sends one event without them. */
Test(cps_events, delta_notification_sends_an_event_per_delta_entry, .timeout = 180)
{
    static const char *const anchors[] = {"a1", NULL};
    cps_case *c =
        it_cps_start_with("cps_events_delta", "cps,cps-relay", "--cps.delta-notification=true");
    it_record *recs = NULL;
    size_t n;
    struct {
        const char *action, *xpath, *source, *target;
    } want[] = {
        {"create", "/garden", NULL, "\"name\":\"g1\""},
        {"replace", "/garden", "\"name\":\"g1\"", "\"name\":\"g2\""},
        {"remove", "/garden", "\"row\":2", NULL},
        {"replace", "/", NULL, NULL},
    };

    garden(c, "ds", anchors);
    call(c, "POST", SUB "?xpath=/dataspaces", "{\"dataspace\":[{\"name\":\"ds\"}]}", 201);
    call(c, "POST", DS "/anchors/a1/nodes?xpath=/",
         "{\"garden\":{\"name\":\"g1\",\"bed\":[{\"row\":1,\"col\":\"a\"},{\"row\":2,\"col\":\"b\"}"
         "]}}",
         201);
    call(c, "PATCH", DS "/anchors/a1/nodes?xpath=/", "{\"garden\":{\"name\":\"g2\"}}", 200);
    call(c, "DELETE", DS "/anchors/a1/nodes?xpath=/garden/bed%5B@row='2'%20and%20@col='b'%5D", NULL,
         204);
    call(c, "PATCH", DS "/anchors/a1/nodes?xpath=/", "{\"garden\":{\"name\":\"g2\"}}", 200);

    n = read_events(c, 4, &recs);
    for (size_t i = 0; i < n; i++) {
        json_object *ev = json_tokener_parse(recs[i].value), *p, *d, *v;
        char err[1024];
        const char *src = NULL, *tgt = NULL;
        cr_assert_not_null(ev, "%s", recs[i].value);
        cr_expect_eq(conformance_check_event(CONFORMANCE_CPS_DATA_UPDATED, ev, err, sizeof(err)), 0,
                     "%s: %s", recs[i].value, err);
        cr_expect_eq(conformance_check_headers(CONFORMANCE_CPS_DATA_UPDATED, recs[i].headers, err,
                                               sizeof(err)),
                     0, "%s", err);
        cr_expect_str_eq(payload_field(ev, "action"), want[i].action, "event %zu: %s", i,
                         recs[i].value);
        cr_expect_str_eq(payload_field(ev, "xpath"), want[i].xpath, "event %zu: %s", i,
                         recs[i].value);
        if (json_object_object_get_ex(ev, "eventPayload", &p) &&
            json_object_object_get_ex(p, "cloudEventData", &d)) {
            if (json_object_object_get_ex(d, "sourceData", &v))
                src = json_object_get_string(v);
            if (json_object_object_get_ex(d, "targetData", &v))
                tgt = json_object_get_string(v);
        }
        cr_expect(want[i].source ? src && strstr(src, want[i].source) : !src,
                  "event %zu sourceData %s: %s", i, src ? src : "(none)", recs[i].value);
        cr_expect(want[i].target ? tgt && strstr(tgt, want[i].target) : !tgt,
                  "event %zu targetData %s: %s", i, tgt ? tgt : "(none)", recs[i].value);
        json_object_put(ev);
    }
    it_records_free(recs, n);
    it_cps_fini(c);
}
