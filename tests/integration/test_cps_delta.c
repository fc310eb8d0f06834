/*
 * CPS's delta reports over HTTP against ncmpd running the cps role: the
 * bookstore of CPS's own delta tests (tests/data/bookstore) in two
 * anchors that differ by every kind of change, and Open ROADM devices
 * (tests/data/openroadm) removed, added and changed as CPS's
 * DeltaPerfTest changes them.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_cps.h"
#include "it_util.h"
#include "ncmp_buf.h"

TestSuite(cps_delta, .fini = it_cps_cleanup);

#define DS    "/cps/api/v2/dataspaces/ds"
#define B1    DS "/anchors/b1"
#define CAT1  "/bookstore/categories[@code='1']"
#define DELTA B1 "/delta?target-anchor-name=b2"

static char *read_source_file(const char *rel)
{
    char path[1024];
    FILE *f;
    char *data;
    long n;

    snprintf(path, sizeof(path), "%s/%s", NCMP_SOURCE_DIR, rel);
    f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    data = malloc((size_t)n + 1);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    data[n] = '\0';
    fclose(f);
    return data;
}

static void send_json(cps_case *c, const char *method, const char *path, const char *json,
                      long status)
{
    reply r;

    it_cps_send(c, method, path, NULL, NULL, json, strlen(json), &r);
    cr_assert_eq(r.status, status, "%s %s: %ld, expected %ld: %s", method, path, r.status, status,
                 r.body.data ? r.body.data : "");
    it_cps_reply_free(&r);
}

/* GET (or any call without a body) expecting 200 and a JSON body. */
static json_object *call_json(cps_case *c, const char *method, const char *path)
{
    reply r;
    json_object *o;

    it_cps_call(c, method, path, NULL, &r);
    cr_assert_eq(r.status, 200, "%s %s: %ld %s", method, path, r.status, r.body.data);
    o = json_tokener_parse(r.body.data);
    cr_assert_not_null(o, "%s: not JSON: %.300s", path, r.body.data);
    it_cps_reply_free(&r);
    return o;
}

static json_object *delta_of(cps_case *c, const char *query)
{
    char path[1024];
    json_object *o;

    snprintf(path, sizeof(path), DELTA "%s", query);
    o = call_json(c, "GET", path);
    cr_assert(json_object_is_type(o, json_type_array), "%s: not an array", path);
    return o;
}

static const char *field(json_object *e, const char *key)
{
    json_object *v;

    return json_object_object_get_ex(e, key, &v) ? json_object_get_string(v) : NULL;
}

/* The entry with `action` at `xpath`, or NULL. */
static json_object *entry_at(json_object *report, const char *action, const char *xpath)
{
    for (size_t i = 0; i < json_object_array_length(report); i++) {
        json_object *e = json_object_array_get_idx(report, i);
        const char *a = field(e, "action"), *x = field(e, "xpath");
        if (a && x && strcmp(a, action) == 0 && strcmp(x, xpath) == 0)
            return e;
    }
    return NULL;
}

static json_object *must_entry(json_object *report, const char *action, const char *xpath)
{
    json_object *e = entry_at(report, action, xpath);

    cr_assert_not_null(e, "no %s entry at %s in %s", action, xpath,
                       json_object_to_json_string(report));
    return e;
}

/* The JSON text of e's `side` (sourceData, targetData), "" when absent. */
static const char *side(json_object *e, const char *key)
{
    json_object *v;

    if (!json_object_object_get_ex(e, key, &v))
        return "";
    return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

/* The bookstore of b2: b1's with the store renamed, category 2 (with its
 * book) removed, category 9 added, Matilda's price changed, The
 * Gruffalo's language removed and a second top-level address. */
static char *bookstore_changed(void)
{
    char *text = read_source_file("tests/data/bookstore/bookstoreData.json");
    json_object *o = json_tokener_parse(text), *store, *cats, *addr, *kept;
    char *out;

    cr_assert_not_null(o);
    free(text);
    cr_assert(json_object_object_get_ex(o, "bookstore", &store));
    json_object_object_add(store, "bookstore-name", json_object_new_string("Chapters"));
    cr_assert(json_object_object_get_ex(store, "categories", &cats));
    kept = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(cats); i++) {
        json_object *cat = json_object_array_get_idx(cats, i), *code, *books;
        cr_assert(json_object_object_get_ex(cat, "code", &code));
        if (json_object_get_int(code) == 2)
            continue;
        if (json_object_get_int(code) == 1) {
            cr_assert(json_object_object_get_ex(cat, "books", &books));
            for (size_t j = 0; j < json_object_array_length(books); j++) {
                json_object *book = json_object_array_get_idx(books, j), *title;
                cr_assert(json_object_object_get_ex(book, "title", &title));
                if (strcmp(json_object_get_string(title), "Matilda") == 0)
                    json_object_object_add(book, "price", json_object_new_int(25));
                else
                    json_object_object_del(book, "lang");
            }
        }
        json_object_array_add(kept, json_object_get(cat));
    }
    json_object_array_add(kept, json_tokener_parse("{\"code\":9,\"name\":\"Poetry\",\"books\":"
                                                   "[{\"title\":\"Odes\",\"price\":5}]}"));
    json_object_object_add(store, "categories", kept);
    cr_assert(json_object_object_get_ex(o, "bookstore-address", &addr));
    json_object_array_add(addr, json_tokener_parse("{\"bookstore-name\":\"Chapters\","
                                                   "\"address\":\"Cork\","
                                                   "\"postal-code\":\"T12\"}"));
    out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return out;
}

/* Dataspace ds, the bookstore schema set, anchors b1 (CPS's data) and b2
 * (bookstore_changed); *b2 gets b2's data. */
static cps_case *bookstore_case(const char *name, char **b2)
{
    cps_case *c = it_cps_start(name, "cps");
    char zip[1024];
    char *data = read_source_file("tests/data/bookstore/bookstoreData.json");

    snprintf(zip, sizeof(zip), "%s/tests/data/bookstore/bookstore.zip", NCMP_SOURCE_DIR);
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/schema-sets?schema-set-name=bs", zip, 201, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=bs&anchor-name=b1", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=bs&anchor-name=b2", NULL, 201, NULL);
    send_json(c, "POST", B1 "/nodes?xpath=/", data, 201);
    free(data);
    *b2 = bookstore_changed();
    send_json(c, "POST", DS "/anchors/b2/nodes?xpath=/", *b2, 201);
    return c;
}

/* Every node its own entry: the leaves that differ, a list entry's keys
 * beside them, removed and added nodes with their leaves. */
Test(cps_delta, entries_without_grouping, .timeout = 120)
{
    char *b2;
    cps_case *c = bookstore_case("cps_delta_plain", &b2);
    json_object *report = delta_of(c, "&descendants=all"), *e;

    cr_expect_eq(json_object_array_length(report), 8, "%s", json_object_to_json_string(report));
    e = must_entry(report, "replace", "/bookstore");
    cr_expect_str_eq(side(e, "sourceData"), "{\"bookstore\":{\"bookstore-name\":\"Easons\"}}");
    cr_expect_str_eq(side(e, "targetData"), "{\"bookstore\":{\"bookstore-name\":\"Chapters\"}}");
    e = must_entry(report, "replace", CAT1 "/books[@title='Matilda']");
    cr_expect(strstr(side(e, "sourceData"), "\"price\":20") &&
              strstr(side(e, "sourceData"), "\"title\":\"Matilda\""));
    cr_expect(strstr(side(e, "targetData"), "\"price\":25"));
    cr_expect(strstr(side(e, "sourceData"), "{\"books\":[{"));
    e = must_entry(report, "replace", CAT1 "/books[@title='The Gruffalo']");
    cr_expect(strstr(side(e, "sourceData"), "\"lang\":\"English\""));
    cr_expect_str_eq(side(e, "targetData"), "", "a side with nothing is left out");
    e = must_entry(report, "remove", "/bookstore/categories[@code='2']");
    cr_expect(strstr(side(e, "sourceData"), "\"Thriller\"") &&
                  !strstr(side(e, "sourceData"), "books"),
              "leaves only: %s", side(e, "sourceData"));
    must_entry(report, "remove", "/bookstore/categories[@code='2']/books[@title='Annihilation']");
    must_entry(report, "create", "/bookstore/categories[@code='9']");
    must_entry(report, "create", "/bookstore/categories[@code='9']/books[@title='Odes']");
    e = must_entry(report, "create", "/bookstore-address[@bookstore-name='Chapters']");
    cr_expect(strstr(side(e, "targetData"), "\"Cork\""));
    json_object_put(report);

    /* the same anchor, or b2 against itself: nothing */
    report = call_json(c, "GET", B1 "/delta?target-anchor-name=b1&descendants=all");
    cr_expect_eq(json_object_array_length(report), 0);
    json_object_put(report);
    free(b2);
    it_cps_fini(c);
}

/* Grouped: the children only on one side of a node in one entry at the
 * node's xpath, with their subtrees, around the entries of the children
 * in both, in CPS's order. */
Test(cps_delta, grouped_entries, .timeout = 120)
{
    char *b2;
    cps_case *c = bookstore_case("cps_delta_grouped", &b2);
    json_object *report = delta_of(c, "&descendants=all&grouping-enabled=true"), *e;
    static const char *const order[][2] = {
        {"replace", "/bookstore"},
        {"remove", "/bookstore"},
        {"replace", CAT1 "/books[@title='Matilda']"},
        {"replace", CAT1 "/books[@title='The Gruffalo']"},
        {"create", "/bookstore"},
        {"create", "/bookstore-address[@bookstore-name='Chapters']"},
    };

    cr_assert_eq(json_object_array_length(report), 6, "%s", json_object_to_json_string(report));
    for (size_t i = 0; i < 6; i++) {
        e = json_object_array_get_idx(report, i);
        cr_expect_str_eq(field(e, "action"), order[i][0], "entry %zu", i);
        cr_expect_str_eq(field(e, "xpath"), order[i][1], "entry %zu", i);
    }
    e = json_object_array_get_idx(report, 1);
    cr_expect(strstr(side(e, "sourceData"), "{\"categories\":[{") &&
                  strstr(side(e, "sourceData"), "\"books\":[{") &&
                  strstr(side(e, "sourceData"), "Annihilation"),
              "the removed category with its book: %s", side(e, "sourceData"));
    e = json_object_array_get_idx(report, 4);
    cr_expect(strstr(side(e, "targetData"), "Odes") && strstr(side(e, "targetData"), "Poetry"));
    json_object_put(report);

    /* a removed node named by the xpath: reported at its parent */
    report = delta_of(c, "&xpath=/bookstore/categories[@code='2']&grouping-enabled=true"
                         "&descendants=all");
    cr_assert_eq(json_object_array_length(report), 1);
    must_entry(report, "remove", "/bookstore");
    json_object_put(report);
    free(b2);
    it_cps_fini(c);
}

/* descendants bounds both trees; the xpath scopes them. */
Test(cps_delta, descendants_and_xpath, .timeout = 120)
{
    char *b2;
    cps_case *c = bookstore_case("cps_delta_depth", &b2);
    json_object *report, *e;

    report = delta_of(c, "&xpath=/bookstore"); /* none by default */
    cr_expect_eq(json_object_array_length(report), 1, "%s", json_object_to_json_string(report));
    must_entry(report, "replace", "/bookstore");
    json_object_put(report);

    report = delta_of(c, "&xpath=/bookstore&descendants=direct");
    cr_expect_eq(json_object_array_length(report), 3, "%s", json_object_to_json_string(report));
    must_entry(report, "remove", "/bookstore/categories[@code='2']");
    must_entry(report, "create", "/bookstore/categories[@code='9']");
    json_object_put(report);

    report = delta_of(c, "&xpath=/bookstore&descendants=1&grouping-enabled=true");
    cr_expect_eq(json_object_array_length(report), 3, "%s", json_object_to_json_string(report));
    e = must_entry(report, "remove", "/bookstore");
    cr_expect(strstr(side(e, "sourceData"), "Thriller") && !strstr(side(e, "sourceData"), "books"),
              "the depth bounds the data too: %s", side(e, "sourceData"));
    json_object_put(report);

    report = delta_of(c, "&xpath=" CAT1 "&descendants=all");
    cr_expect_eq(json_object_array_length(report), 2, "%s", json_object_to_json_string(report));
    must_entry(report, "replace", CAT1 "/books[@title='Matilda']");
    json_object_put(report);

    report = delta_of(c, "&xpath=/bookstore/categories[@code='77']&descendants=all");
    cr_expect_eq(json_object_array_length(report), 0, "no such node: an empty report");
    json_object_put(report);
    free(b2);
    it_cps_fini(c);
}

/* An anchor against a payload gives the report the two anchors give. */
Test(cps_delta, anchor_against_payload, .timeout = 120)
{
    char *b2;
    cps_case *c = bookstore_case("cps_delta_payload", &b2);
    char file[512], xml[512];
    reply r;
    json_object *want, *got;

    it_cps_temp_path(file, sizeof(file), c, "b2.json");
    it_cps_write_file(file, b2);
    for (int grouped = 0; grouped < 2; grouped++) {
        char path[256];
        want = delta_of(c, grouped ? "&descendants=all&grouping-enabled=true" : "&descendants=all");
        snprintf(path, sizeof(path), B1 "/delta?grouping-enabled=%s", grouped ? "true" : "false");
        it_cps_request(c, "POST", path, NULL, "targetData", file, NULL, NULL, &r);
        cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
        got = json_tokener_parse(r.body.data);
        cr_expect(json_object_equal(want, got), "payload:\n%s\nanchors:\n%s", r.body.data,
                  json_object_to_json_string(want));
        json_object_put(want);
        json_object_put(got);
        it_cps_reply_free(&r);
    }

    /* parsed with an uploaded model instead of the anchor's: the same
     * report, and the model is not kept */
    {
        char zip[1024];
        snprintf(zip, sizeof(zip), "%s/tests/data/bookstore/bookstore.zip", NCMP_SOURCE_DIR);
        want = delta_of(c, "&descendants=all");
        it_cps_request(c, "POST", B1 "/delta", NULL, "targetData", file, "yangResourceFile", zip,
                       &r);
        cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
        got = json_tokener_parse(r.body.data);
        cr_expect(json_object_equal(want, got), "with the model:\n%s", r.body.data);
        json_object_put(want);
        json_object_put(got);
        it_cps_reply_free(&r);
        want = call_json(c, "GET", DS "/schema-sets");
        cr_expect_eq(json_object_array_length(want), 1, "%s", json_object_to_json_string(want));
        json_object_put(want);
    }

    /* XML: b2's category 1 */
    it_cps_temp_path(xml, sizeof(xml), c, "cat1.xml");
    it_cps_write_file(xml, "<categories xmlns=\"org:onap:cps:sample\"><code>1</code>"
                           "<name>Children</name>"
                           "<books><title>Matilda</title><lang>English</lang>"
                           "<authors>Roald Dahl</authors><editions>1988</editions>"
                           "<editions>2000</editions><price>25</price></books>"
                           "<books><title>The Gruffalo</title><authors>Julia Donaldson</authors>"
                           "<editions>1999</editions><price>15</price></books></categories>");
    want = delta_of(c, "&xpath=" CAT1 "&descendants=all");
    cr_expect_eq(json_object_array_length(want), 2);
    it_cps_request(c, "POST", B1 "/delta?xpath=" CAT1, NULL, "targetData", xml, NULL, NULL, &r);
    cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
    got = json_tokener_parse(r.body.data);
    cr_expect(json_object_equal(want, got), "XML payload:\n%s\nanchors:\n%s", r.body.data,
              json_object_to_json_string(want));
    json_object_put(want);
    json_object_put(got);
    it_cps_reply_free(&r);

    /* the answer in XML */
    it_cps_request(c, "POST", B1 "/delta?xpath=" CAT1, "application/xml", "targetData", xml, NULL,
                   NULL, &r);
    cr_expect_eq(r.status, 200);
    cr_expect(strstr(r.body.data, "<deltaReports><deltaReport><action>replace</action>") &&
                  strstr(r.body.data, "<sourceData><books>") &&
                  strstr(r.body.data, "<price>20</price>"),
              "%s", r.body.data);
    it_cps_reply_free(&r);

    /* nothing of the payloads was stored, and b1 is as it was */
    want = call_json(c, "GET", DS "/anchors");
    cr_expect_eq(json_object_array_length(want), 2, "%s", json_object_to_json_string(want));
    json_object_put(want);

    /* a payload that does not fit the model */
    it_cps_write_file(file, "{\"bookstore\":{\"no-such-leaf\":1}}");
    it_cps_request(c, "POST", B1 "/delta", NULL, "targetData", file, NULL, NULL, &r);
    cr_expect_eq(r.status, 400, "%ld %s", r.status, r.body.data);
    it_cps_reply_free(&r);
    it_cps_request(c, "POST", B1 "/delta", NULL, "other", file, NULL, NULL, &r);
    cr_expect_eq(r.status, 400, "no targetData: %ld %s", r.status, r.body.data);
    it_cps_reply_free(&r);
    free(b2);
    it_cps_fini(c);
}

/* A grouped report applied to its source makes it the target; a report
 * with a refused entry changes nothing. */
Test(cps_delta, apply_report, .timeout = 120)
{
    char *b2;
    cps_case *c = bookstore_case("cps_delta_apply", &b2);
    json_object *report = delta_of(c, "&descendants=all&grouping-enabled=true"), *bad, *after;
    const char *text = json_object_to_json_string_ext(report, JSON_C_TO_STRING_PLAIN);
    size_t before = json_object_array_length(report);

    cr_assert_gt(before, 0);
    /* every entry, then one with an unknown action: all rolled back */
    bad = json_tokener_parse(text);
    json_object_array_add(bad,
                          json_tokener_parse("{\"action\":\"rename\",\"xpath\":\"/bookstore\"}"));
    send_json(c, "POST", B1 "/applyChangesInDeltaReport",
              json_object_to_json_string_ext(bad, JSON_C_TO_STRING_PLAIN), 400);
    json_object_put(bad);
    after = delta_of(c, "&descendants=all&grouping-enabled=true");
    cr_expect_eq(json_object_array_length(after), before, "a refused report changed the anchor");
    json_object_put(after);

    send_json(c, "POST", B1 "/applyChangesInDeltaReport", text, 201);
    after = delta_of(c, "&descendants=all");
    cr_expect_eq(json_object_array_length(after), 0, "left after applying: %s",
                 json_object_to_json_string(after));
    json_object_put(after);
    json_object_put(report);

    /* the reverse report takes b1 back (create of nodes that exist: 409) */
    report = call_json(c, "GET",
                       DS "/anchors/b2/delta?target-anchor-name=b1&descendants=all"
                          "&grouping-enabled=true");
    cr_expect_eq(json_object_array_length(report), 0);
    json_object_put(report);
    send_json(c, "POST", B1 "/applyChangesInDeltaReport",
              "[{\"action\":\"create\",\"xpath\":\"/bookstore\",\"targetData\":"
              "{\"categories\":[{\"code\":\"9\",\"name\":\"again\"}]}}]",
              409);
    free(b2);
    it_cps_fini(c);
}

/* The XML of a report (GET with Accept: application/xml) applied as XML,
 * grouped and not, makes the source the target, as its JSON does; a
 * report in XML that is not well formed, has no place for an element or
 * whose data breaks the model is a 400 and changes nothing. */
Test(cps_delta, apply_report_in_xml, .timeout = 120)
{
    char *b2;
    cps_case *c = bookstore_case("cps_delta_apply_xml", &b2);
    static const char *const queries[] = {"&descendants=all&grouping-enabled=true",
                                          "&descendants=direct&grouping-enabled=true"};
    static const struct {
        const char *body, *needle;
    } bad[] = {
        {"<deltaReports><deltaReport><action>create</action>", "is not closed"},
        {"<reports/>", "<deltaReports>"},
        {"<deltaReports/><deltaReports><deltaReport><action>create</action>"
         "<xpath>/bookstore</xpath><targetData><categories><code>72</code></categories>"
         "</targetData></deltaReport></deltaReports>",
         "<deltaReports>"},
        {"<deltaReports><deltaReport><action>create</action><xpath>/bookstore</xpath>"
         "<comment/></deltaReport></deltaReports>",
         "<comment> has no place"},
        {"<deltaReports><deltaReport><action>create</action><xpath>/bookstore</xpath>"
         "<targetData><categories><code>70</code><no-such-leaf>1</no-such-leaf></categories>"
         "</targetData></deltaReport></deltaReports>",
         "no-such-leaf"},
        {"<deltaReports><deltaReport><action>create</action><xpath>/bookstore</xpath>"
         "<targetData><categories><code>71</code><books><title>t</title><price>many</price>"
         "</books></categories></targetData></deltaReport></deltaReports>",
         "many"},
        {"<!DOCTYPE d [<!ENTITY e 'x'>]><deltaReports/>", "declaration"},
        {"<deltaReports><deltaReport><action>m&amp;ve</action><xpath>/bookstore</xpath>"
         "</deltaReport></deltaReports>",
         "Unsupported action 'm&ve'"},
    };
    json_object *after;
    reply r;

    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        char path[512];
        char *xml;
        snprintf(path, sizeof(path), DELTA "%s", queries[q]);
        it_cps_request(c, "GET", path, "application/xml", NULL, NULL, NULL, NULL, &r);
        cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
        cr_assert(strstr(r.body.data, "<deltaReports><deltaReport>"), "%s", r.body.data);
        xml = strdup(r.body.data);
        it_cps_reply_free(&r);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            it_cps_send(c, "POST", B1 "/applyChangesInDeltaReport", NULL, "application/xml",
                        bad[i].body, strlen(bad[i].body), &r);
            cr_expect_eq(r.status, 400, "%s: %ld %s", bad[i].body, r.status, r.body.data);
            cr_expect(r.body.data && strstr(r.body.data, bad[i].needle), "%s: no '%s' in %s",
                      bad[i].body, bad[i].needle, r.body.data);
            it_cps_reply_free(&r);
        }
        after = delta_of(c, "&descendants=all");
        cr_expect_gt(json_object_array_length(after), 0, "a refused report changed the anchor");
        json_object_put(after);
        it_cps_send(c, "POST", B1 "/applyChangesInDeltaReport", NULL, "application/xml", xml,
                    strlen(xml), &r);
        cr_expect_eq(r.status, 201, "%ld %s\n%s", r.status, r.body.data, xml);
        it_cps_reply_free(&r);
        free(xml);
        /* direct descendants: what lies deeper is not in the report */
        after = delta_of(c, q == 0 ? "&descendants=all" : "&descendants=direct");
        cr_expect_eq(json_object_array_length(after), 0, "%s: left after applying: %s", queries[q],
                     json_object_to_json_string(after));
        json_object_put(after);
        /* b1 again, for the next report */
        send_json(c, "DELETE", B1 "/nodes?xpath=/", "", 204);
        xml = read_source_file("tests/data/bookstore/bookstoreData.json");
        send_json(c, "POST", B1 "/nodes?xpath=/", xml, 201);
        free(xml);
    }
    free(b2);
    it_cps_fini(c);
}

/* Bad input is answered 4xx with a message, never 5xx. */
Test(cps_delta, bad_input, .timeout = 120)
{
    char *b2;
    cps_case *c = bookstore_case("cps_delta_bad", &b2);
    static const struct {
        const char *method, *path, *body;
        long status;
        const char *needle;
    } cases[] = {
        /* the anchor named is the one missing: both are resolved by one query */
        {"GET", B1 "/delta?target-anchor-name=nope", NULL, 404,
         "\"Anchor not found\",\"details\":\"Anchor with name nope does not exist"},
        {"GET", DS "/anchors/nope/delta?target-anchor-name=b2", NULL, 404,
         "\"Anchor not found\",\"details\":\"Anchor with name nope does not exist"},
        {"GET", DS "/anchors/nope/delta?target-anchor-name=nada", NULL, 404,
         "Anchor with name nope does not exist"},
        {"GET", "/cps/api/v2/dataspaces/nope/anchors/b1/delta?target-anchor-name=b2", NULL, 404,
         "Dataspace not found"},
        {"GET", B1 "/delta", NULL, 400, "target-anchor-name"},
        {"GET", DELTA "&descendants=some", NULL, 400, "descendants"},
        {"GET", DELTA "&grouping-enabled=maybe", NULL, 400, "grouping-enabled"},
        {"GET", DELTA "&xpath=/bookstore[", NULL, 400, NULL},
        {"POST", B1 "/applyChangesInDeltaReport", "{not json", 400, "Data Validation Failed"},
        {"POST", B1 "/applyChangesInDeltaReport", "{\"action\":\"create\"}", 400, NULL},
        {"POST", B1 "/applyChangesInDeltaReport", "[{\"action\":\"create\"}]", 400, "xpath"},
        {"POST", B1 "/applyChangesInDeltaReport",
         "[{\"action\":\"move\",\"xpath\":\"/bookstore\"}]", 400, "Invalid 'action'"},
        {"POST", B1 "/applyChangesInDeltaReport", "[{\"action\":\"create\",\"xpath\":\"/a[\"}]",
         400, NULL},
        {"POST", B1 "/applyChangesInDeltaReport",
         "[{\"action\":\"replace\",\"xpath\":\"/bookstore/categories[@code='77']\","
         "\"sourceData\":{\"categories\":[{\"code\":\"77\",\"name\":\"x\"}]}}]",
         404, "DataNode not found"},
        {"POST", B1 "/applyChangesInDeltaReport",
         "[{\"action\":\"remove\",\"xpath\":\"/bookstore/categories[@code='77']\","
         "\"sourceData\":{\"books\":[{\"title\":\"x\"}]}}]",
         404, "DataNode not found"},
        {"POST", DS "/anchors/nope/applyChangesInDeltaReport", "[]", 404, "Anchor not found"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        reply r;
        if (cases[i].body)
            it_cps_send(c, cases[i].method, cases[i].path, NULL, NULL, cases[i].body,
                        strlen(cases[i].body), &r);
        else
            it_cps_call(c, cases[i].method, cases[i].path, NULL, &r);
        cr_expect_eq(r.status, cases[i].status, "%s %s: %ld %s", cases[i].method, cases[i].path,
                     r.status, r.body.data);
        if (cases[i].needle)
            cr_expect(strstr(r.body.data, cases[i].needle), "%s: no '%s' in %s", cases[i].path,
                      cases[i].needle, r.body.data);
        it_cps_reply_free(&r);
    }
    free(b2);
    it_cps_fini(c);
}

/* `n` devices from the sample, ids first.., the first `changed` of them
 * with status fail (DeltaPerfTest's change). */
static void devices(ncmp_buf *out, int first, int n, int changed)
{
    char *sample = read_source_file("tests/data/openroadm/device.json");
    const char *mark = strstr(sample, "NODE_ID_HERE");

    cr_assert_not_null(mark);
    ncmp_buf_append_str(out, "{\"openroadm-devices\":{\"openroadm-device\":[");
    for (int i = 0; i < n; i++) {
        const char *rest = mark + strlen("NODE_ID_HERE"), *status = strstr(rest, "\"success\"");
        if (i)
            ncmp_buf_append_char(out, ',');
        ncmp_buf_append(out, sample, (size_t)(mark - sample));
        ncmp_buf_appendf(out, "%d", first + i);
        if (i < changed && status) {
            ncmp_buf_append(out, rest, (size_t)(status - rest));
            ncmp_buf_append_str(out, "\"fail\"");
            ncmp_buf_append_str(out, status + strlen("\"success\""));
        } else {
            ncmp_buf_append_str(out, rest);
        }
    }
    ncmp_buf_append_str(out, "]}}");
    free(sample);
}

/* DeltaPerfTest's change in small: devices 1..3 against 2..4 with 2
 * changed; the grouped report applied leaves no delta. */
Test(cps_delta, openroadm_devices, .timeout = 180)
{
    cps_case *c = it_cps_start("cps_delta_openroadm", "cps");
    char zip[1024];
    ncmp_buf body = NCMP_BUF_INIT;
    json_object *report, *e;

    snprintf(zip, sizeof(zip), "%s/tests/data/openroadm/model.zip", NCMP_SOURCE_DIR);
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/schema-sets?schema-set-name=or", zip, 201, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=or&anchor-name=s", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/anchors?schema-set-name=or&anchor-name=t", NULL, 201, NULL);
    devices(&body, 1, 3, 0);
    send_json(c, "POST", DS "/anchors/s/nodes?xpath=/", body.data, 201);
    ncmp_buf_reset(&body);
    devices(&body, 2, 3, 1);
    send_json(c, "POST", DS "/anchors/t/nodes?xpath=/", body.data, 201);

    report = call_json(c, "GET",
                       DS "/anchors/s/delta?target-anchor-name=t&descendants=all"
                          "&grouping-enabled=true");
    cr_expect_eq(json_object_array_length(report), 3, "%s", json_object_to_json_string(report));
    e = must_entry(report, "replace",
                   "/openroadm-devices/openroadm-device[@device-id='C201-7-1A-2']");
    cr_expect_str_eq(
        side(e, "sourceData"),
        "{\"openroadm-device\":[{\"status\":\"success\",\"device-id\":\"C201-7-1A-2\"}]}");
    e = must_entry(report, "remove", "/openroadm-devices");
    cr_expect(strstr(side(e, "sourceData"), "C201-7-1A-1") &&
              !strstr(side(e, "sourceData"), "C201-7-1A-4"));
    e = must_entry(report, "create", "/openroadm-devices");
    cr_expect(strstr(side(e, "targetData"), "C201-7-1A-4"));

    /* the roots found ahead (every descendant) and the probes of the walk
     * bounded in depth (deeper than the tree) give one report */
    for (int x = 0; x < 2; x++) {
        char path[256];
        json_object *all, *deep;
        const char *xp = x ? "&xpath=/openroadm-devices" : "";
        snprintf(path, sizeof(path),
                 DS "/anchors/s/delta?target-anchor-name=t&descendants=all&grouping-enabled=true%s",
                 xp);
        all = call_json(c, "GET", path);
        snprintf(path, sizeof(path),
                 DS "/anchors/s/delta?target-anchor-name=t&descendants=40&grouping-enabled=true%s",
                 xp);
        deep = call_json(c, "GET", path);
        cr_expect(json_object_equal(all, deep), "%s all:\n%s\n40 levels:\n%s", xp,
                  json_object_to_json_string(all), json_object_to_json_string(deep));
        json_object_put(all);
        json_object_put(deep);
    }

    /* t's devices as a payload against s: the report the two anchors give,
     * grouped and not (the payload's rows are compared in memory) */
    {
        char file[512], path[256];
        reply r;
        it_cps_temp_path(file, sizeof(file), c, "t.json");
        it_cps_write_file(file, body.data);
        for (int grouped = 0; grouped < 2; grouped++) {
            json_object *want, *got;
            snprintf(path, sizeof(path),
                     DS "/anchors/s/delta?target-anchor-name=t&xpath=/openroadm-devices"
                        "&descendants=all&grouping-enabled=%s",
                     grouped ? "true" : "false");
            want = call_json(c, "GET", path);
            cr_expect_gt(json_object_array_length(want), 2);
            snprintf(path, sizeof(path),
                     DS "/anchors/s/delta?xpath=/openroadm-devices&grouping-enabled=%s",
                     grouped ? "true" : "false");
            it_cps_request(c, "POST", path, NULL, "targetData", file, NULL, NULL, &r);
            cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body.data);
            got = json_tokener_parse(r.body.data);
            cr_expect(json_object_equal(want, got), "grouped %d, payload:\n%s\nanchors:\n%s",
                      grouped, r.body.data, json_object_to_json_string(want));
            json_object_put(want);
            json_object_put(got);
            it_cps_reply_free(&r);
        }
        /* under a node the source does not have: CPS's 404, as a write */
        it_cps_request(c, "POST",
                       DS "/anchors/s/delta?xpath=/openroadm-devices/openroadm-device"
                          "[@device-id='nope']/info",
                       NULL, "targetData", file, NULL, NULL, &r);
        cr_expect_eq(r.status, 404, "%ld %s", r.status, r.body.data);
        it_cps_reply_free(&r);
    }

    send_json(c, "POST", DS "/anchors/s/applyChangesInDeltaReport",
              json_object_to_json_string_ext(report, JSON_C_TO_STRING_PLAIN), 201);
    json_object_put(report);

    report = call_json(c, "GET", DS "/anchors/s/delta?target-anchor-name=t&descendants=all");
    cr_expect_eq(json_object_array_length(report), 0, "%s", json_object_to_json_string(report));
    json_object_put(report);
    ncmp_buf_free(&body);
    it_cps_fini(c);
}

/* A grouped delta bounded in depth whose anchors are both small enough
 * (cps.delta-memory-rows) is compared in memory (the log says so), a
 * larger one by the database's probes: every report, JSON and XML, is
 * the one the probes alone give (cps.delta-memory-rows=0). */
Test(cps_delta, bounded_grouped_in_memory_is_the_probes_report, .timeout = 240)
{
    static const char *const xpaths[] = {
        "/", "/openroadm-devices", "/openroadm-devices/openroadm-device[@device-id='C201-7-1A-2']",
        "/openroadm-devices/openroadm-device[@device-id='C201-7-1A-2']/org-openroadm-device"};
    static const char *const depths[] = {"none", "direct", "1", "2", "3", "5", "40"};
    static const char *const pairs[][2] = {{"s", "t"}, {"t", "s"}, {"s", "e"}, {"e", "t"}};
    enum { NX = 4, ND = 7, NP = 4, N = NX * ND * NP * 2 };
    char *first[N];
    char zip[1024], path[512];
    ncmp_buf body = NCMP_BUF_INIT;
    cps_case *c;
    int k;

    setenv("NCMP_LOG_LEVEL", "debug", 1); /* the log says which way each was compared */
    /* 3 devices of 86 nodes: in memory down to the devices' children
     * (depth 3: 7 rows), the deeper bounds by the probes */
    c = it_cps_start_with("cps_delta_memory", "cps", "--cps.delta-memory-rows=40");
    snprintf(zip, sizeof(zip), "%s/tests/data/openroadm/model.zip", NCMP_SOURCE_DIR);
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", DS "/schema-sets?schema-set-name=or", zip, 201, NULL);
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), DS "/anchors?schema-set-name=or&anchor-name=%s",
                 i == 0   ? "s"
                 : i == 1 ? "t"
                          : "e");
        it_cps_expect(c, "POST", path, NULL, 201, NULL);
    }
    devices(&body, 1, 3, 0);
    send_json(c, "POST", DS "/anchors/s/nodes?xpath=/", body.data, 201);
    ncmp_buf_reset(&body);
    devices(&body, 2, 3, 1);
    send_json(c, "POST", DS "/anchors/t/nodes?xpath=/", body.data, 201);
    /* e stays empty: every node on one side */

    for (int run = 0; run < 2; run++) {
        k = 0;
        for (int p = 0; p < NP; p++)
            for (int x = 0; x < NX; x++)
                for (int d = 0; d < ND; d++)
                    for (int xml = 0; xml < 2; xml++, k++) {
                        reply r;
                        snprintf(path, sizeof(path),
                                 DS "/anchors/%s/delta?target-anchor-name=%s&xpath=%s"
                                    "&descendants=%s&grouping-enabled=true",
                                 pairs[p][0], pairs[p][1], xpaths[x], depths[d]);
                        it_cps_request(c, "GET", path, xml ? "application/xml" : NULL, NULL, NULL,
                                       NULL, NULL, &r);
                        cr_assert_eq(r.status, 200, "%s: %ld %s", path, r.status, r.body.data);
                        if (run == 0) {
                            first[k] = strdup(r.body.data ? r.body.data : "");
                        } else {
                            cr_expect_str_eq(first[k], r.body.data ? r.body.data : "",
                                             "%s (%s): in memory or not, one report", path,
                                             xml ? "XML" : "JSON");
                            free(first[k]);
                        }
                        it_cps_reply_free(&r);
                    }
        if (run == 0) {
            cr_expect(it_file_contains(c->log, "compared in memory (1 and 1 rows)"),
                      "a delta of one node each was compared in memory (%s)", c->log);
            cr_expect(it_file_contains(c->log, "compared in memory (7 and 7 rows)"),
                      "the devices with their children, in memory (%s)", c->log);
            cr_expect(it_file_contains(c->log, "compared in memory (7 and 0 rows)"),
                      "against the empty anchor, in memory (%s)", c->log);
            it_cps_stop(c);
            it_cps_restart(c, "--cps.delta-memory-rows=0");
        }
    }
    cr_expect(it_file_contains(c->log, " debug "), "the restarted ncmpd logs at debug level (%s)",
              c->log);
    cr_expect(!it_file_contains(c->log, "compared in memory"), "0: never in memory (%s)", c->log);
    ncmp_buf_free(&body);
    it_cps_fini(c);
}
