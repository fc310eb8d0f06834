/* Tests of the validator itself (jschema.c): each keyword accepts a valid
 * document and rejects an invalid one with the right pointer and keyword;
 * $refs within a file and across files; jsonschema2pojo's extends; the
 * patch; load-time errors; ONAP's published schemas. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "conformance_leak.h"
#include "jschema.h"

#ifndef NCMP_CONFORMANCE_DATA_DIR
#error "define NCMP_CONFORMANCE_DATA_DIR (tests/conformance/data)"
#endif

/* Schemas a test loaded; freed after it even when an assertion ends it
 * early, so that a failing test is not reported as a leak as well. */
static jschema *held[8];
static size_t nheld;

static void jschema_suite_fini(void)
{
    for (size_t i = 0; i < nheld; i++)
        jschema_free(held[i]);
    nheld = 0;
    conformance_leak_check();
}

TestSuite(jschema, .fini = jschema_suite_fini);

static jschema *hold(jschema *s)
{
    if (nheld == sizeof(held) / sizeof(held[0])) {
        jschema_free(s);
        cr_assert_fail("test holds too many schemas");
    }
    held[nheld++] = s;
    return s;
}

static jschema *schema_text(const char *text)
{
    char err[1024] = "";
    jschema *s = jschema_parse(text, NCMP_CONFORMANCE_DATA_DIR, 0, err, sizeof(err));

    cr_assert_not_null(s, "schema %s refused: %s", text, err);
    return hold(s);
}

static jschema *schema_file(const char *name)
{
    char path[1024], err[1024] = "";
    jschema *s;

    snprintf(path, sizeof(path), "%s/%s", NCMP_CONFORMANCE_DATA_DIR, name);
    s = jschema_load(path, 0, err, sizeof(err));
    cr_assert_not_null(s, "schema %s refused: %s", path, err);
    return hold(s);
}

/* Validate JSON text `doc`; the message goes to err. */
static int validate(const jschema *s, const char *doc, char *err, size_t errlen)
{
    enum json_tokener_error jerr;
    json_object *obj = json_tokener_parse_verbose(doc, &jerr);
    int rc;

    cr_assert_eq(jerr, json_tokener_success, "test document %s is not JSON", doc);
    rc = jschema_validate(s, obj, err, errlen);
    json_object_put(obj);
    return rc;
}

static void valid(const jschema *s, const char *doc)
{
    char err[1024] = "";

    cr_assert_eq(validate(s, doc, err, sizeof(err)), 0, "%s refused: %s", doc, err);
    cr_assert_str_empty(err);
}

/* `doc` must be refused at JSON pointer `pointer` by `keyword`. */
static void invalid(const jschema *s, const char *doc, const char *pointer, const char *keyword)
{
    char err[1024] = "", want[256];

    cr_assert_eq(validate(s, doc, err, sizeof(err)), -1, "%s accepted", doc);
    snprintf(want, sizeof(want), "instance \"%s\": %s: ", pointer, keyword);
    cr_assert(strstr(err, want) != NULL, "%s: expected \"%s...\" in \"%s\"", doc, want, err);
}

/* Loading `text` must fail with `part` in the message. */
static void refused(const char *text, unsigned flags, const char *part)
{
    char err[1024] = "";
    jschema *s = jschema_parse(text, NCMP_CONFORMANCE_DATA_DIR, flags, err, sizeof(err));

    if (s) {
        jschema_free(s);
        cr_assert_fail("schema %s accepted", text);
    }
    cr_assert(strstr(err, part) != NULL, "%s: expected \"%s\" in \"%s\"", text, part, err);
}

Test(jschema, type_accepts_the_named_type)
{
    const jschema *s = schema_text("{\"type\":\"string\"}");

    valid(s, "\"x\"");
    invalid(s, "1", "", "type");
    invalid(s, "null", "", "type");

    s = schema_text("{\"properties\":{\"b\":{\"type\":\"boolean\"},\"o\":{\"type\":\"object\"},"
                    "\"a\":{\"type\":\"array\"},\"n\":{\"type\":\"null\"}}}");
    valid(s, "{\"b\":false,\"o\":{},\"a\":[],\"n\":null}");
    invalid(s, "{\"b\":0}", "/b", "type");
    invalid(s, "{\"o\":[]}", "/o", "type");
    invalid(s, "{\"a\":{}}", "/a", "type");
    invalid(s, "{\"n\":false}", "/n", "type");
}

Test(jschema, type_list_accepts_any_listed_type)
{
    const jschema *s = schema_text("{\"type\":[\"string\",\"null\"]}");

    valid(s, "\"a\"");
    valid(s, "null");
    invalid(s, "true", "", "type");
    invalid(s, "[]", "", "type");
}

Test(jschema, integer_is_a_number_without_fraction)
{
    const jschema *integer = schema_text("{\"type\":\"integer\"}");
    const jschema *number = schema_text("{\"type\":\"number\"}");

    valid(integer, "1");
    valid(integer, "-5");
    valid(integer, "2.0");
    invalid(integer, "1.5", "", "type");
    invalid(integer, "\"1\"", "", "type");
    valid(number, "1");
    valid(number, "1.5");
    invalid(number, "\"1.5\"", "", "type");
    invalid(number, "true", "", "type");
}

Test(jschema, properties_apply_to_present_members)
{
    const jschema *s = schema_text("{\"properties\":{\"a\":{\"type\":\"string\"}}}");

    valid(s, "{\"a\":\"x\"}");
    valid(s, "{}");
    valid(s, "{\"b\":1}");
    valid(s, "7"); /* properties say nothing about non-objects */
    invalid(s, "{\"a\":1}", "/a", "type");
}

Test(jschema, required_names_missing_members)
{
    const jschema *s = schema_text("{\"required\":[\"a\",\"b\"]}");
    char err[1024] = "";

    valid(s, "{\"a\":1,\"b\":null}");
    valid(s, "[]");
    invalid(s, "{\"a\":1}", "", "required");
    cr_assert_eq(validate(s, "{\"a\":1}", err, sizeof(err)), -1);
    cr_assert(strstr(err, "\"b\" is missing"), "%s", err);
}

Test(jschema, additional_properties_false_refuses_unknown_members)
{
    const jschema *s = schema_text("{\"properties\":{\"a\":{}},\"additionalProperties\":false}");

    valid(s, "{\"a\":1}");
    valid(s, "{}");
    invalid(s, "{\"a\":1,\"x\":2}", "/x", "additionalProperties");
}

Test(jschema, additional_properties_schema_checks_unknown_members)
{
    const jschema *s =
        schema_text("{\"properties\":{\"a\":{}},\"additionalProperties\":{\"type\":\"string\"}}");

    valid(s, "{\"a\":1,\"x\":\"s\"}");
    invalid(s, "{\"a\":1,\"x\":3}", "/x", "type");
}

Test(jschema, enum_compares_json_values)
{
    const jschema *s = schema_text("{\"enum\":[\"A\",1,null,{\"k\":[1,\"z\"]}]}");

    valid(s, "\"A\"");
    valid(s, "1.0");
    valid(s, "null");
    valid(s, "{\"k\":[1,\"z\"]}");
    invalid(s, "\"a\"", "", "enum");
    invalid(s, "{\"k\":[1,\"y\"]}", "", "enum");
    invalid(s, "{\"k\":[1,\"z\"],\"l\":0}", "", "enum");
}

Test(jschema, const_compares_json_values)
{
    const jschema *s = schema_text("{\"const\":{\"a\":[1,\"x\"],\"b\":true}}");

    valid(s, "{\"b\":true,\"a\":[1,\"x\"]}");
    invalid(s, "{\"a\":[1,\"y\"],\"b\":true}", "", "const");
    invalid(s, "{\"a\":[1,\"x\"]}", "", "const");
}

Test(jschema, items_apply_to_every_element)
{
    const jschema *s = schema_text("{\"items\":{\"type\":\"integer\"}}");

    valid(s, "[1,2]");
    valid(s, "[]");
    invalid(s, "[1,\"x\"]", "/1", "type");
}

Test(jschema, min_items_and_max_items_count_elements)
{
    const jschema *s = schema_text("{\"minItems\":2,\"maxItems\":3}");

    valid(s, "[1,2]");
    valid(s, "[1,2,3]");
    invalid(s, "[1]", "", "minItems");
    invalid(s, "[1,2,3,4]", "", "maxItems");
}

Test(jschema, min_length_and_max_length_count_code_points)
{
    const jschema *s = schema_text("{\"minLength\":2,\"maxLength\":3}");

    valid(s, "\"ab\"");
    valid(s, "\"abc\"");
    valid(s, "\"\xc3\xa9\xe6\x97\xa5\""); /* 2 code points, 5 bytes */
    invalid(s, "\"a\"", "", "minLength");
    invalid(s, "\"\xc3\xa9\"", "", "minLength"); /* 1 code point, 2 bytes */
    invalid(s, "\"abcd\"", "", "maxLength");
    invalid(s, "\"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9ex\"", "", "maxLength");
}

Test(jschema, pattern_is_an_unanchored_extended_regex)
{
    const jschema *anchored = schema_text("{\"pattern\":\"^[a-z]+-[0-9]{2}$\"}");
    const jschema *loose = schema_text("{\"pattern\":\"[0-9]\"}");

    valid(anchored, "\"ab-12\"");
    invalid(anchored, "\"ab-1\"", "", "pattern");
    invalid(anchored, "\"xab-12x\"", "", "pattern");
    valid(loose, "\"a1b\"");
    invalid(loose, "\"ab\"", "", "pattern");
    valid(loose, "5"); /* only strings are matched */
}

Test(jschema, all_of_reports_the_inner_violation)
{
    const jschema *s = schema_text("{\"allOf\":[{\"type\":\"string\"},{\"minLength\":2}]}");
    char err[1024] = "";

    valid(s, "\"ab\"");
    invalid(s, "\"a\"", "", "minLength");
    invalid(s, "1", "", "type");
    validate(s, "\"a\"", err, sizeof(err));
    cr_assert(strstr(err, "#/allOf/1/minLength)"), "%s", err);
}

Test(jschema, any_of_needs_one_match)
{
    const jschema *s = schema_text("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}");

    valid(s, "\"a\"");
    valid(s, "1");
    invalid(s, "true", "", "anyOf");
}

Test(jschema, one_of_needs_exactly_one_match)
{
    const jschema *s = schema_text("{\"oneOf\":[{\"type\":\"integer\"},{\"type\":\"number\"}]}");

    valid(s, "1.5");
    invalid(s, "1", "", "oneOf");
    invalid(s, "\"x\"", "", "oneOf");
}

Test(jschema, not_refuses_what_matches)
{
    const jschema *s = schema_text("{\"not\":{\"type\":\"string\"}}");

    valid(s, "1");
    invalid(s, "\"s\"", "", "not");
}

Test(jschema, boolean_schemas_allow_all_or_nothing)
{
    const jschema *s = schema_text("{\"properties\":{\"a\":true,\"b\":false}}");

    valid(s, "{\"a\":[1]}");
    valid(s, "{}");
    invalid(s, "{\"b\":1}", "/b", "false");
}

Test(jschema, error_pointer_escapes_tilde_and_slash)
{
    const jschema *s = schema_text("{\"additionalProperties\":{\"type\":\"string\"}}");

    invalid(s, "{\"a/b\":1}", "/a~1b", "type");
    invalid(s, "{\"c~d\":1}", "/c~0d", "type");
    invalid(s, "{\"x\":\"s\",\"list\":[1]}", "/list", "type");
}

Test(jschema, ref_to_defs_in_the_same_file)
{
    const jschema *s =
        schema_text("{\"$ref\":\"#/$defs/T\",\"$defs\":{\"T\":{\"type\":\"integer\"}}}");
    char err[1024] = "";

    valid(s, "1");
    invalid(s, "\"x\"", "", "type");
    validate(s, "\"x\"", err, sizeof(err));
    cr_assert(strstr(err, "(schema <text>#/$defs/T/type)"), "%s", err);
}

Test(jschema, ref_to_definitions_in_the_same_file)
{
    const jschema *s = schema_text("{\"properties\":{\"x\":{\"$ref\":\"#/definitions/T\"}},"
                                   "\"definitions\":{\"T\":{\"enum\":[\"a\"]}}}");

    valid(s, "{\"x\":\"a\"}");
    invalid(s, "{\"x\":\"b\"}", "/x", "enum");
}

Test(jschema, ref_pointer_unescapes_tilde_slash_and_percent)
{
    const jschema *s = schema_text(
        "{\"properties\":{\"p\":{\"$ref\":\"#/$defs/a~1b\"},\"q\":{\"$ref\":\"#/$defs/c~0d\"},"
        "\"r\":{\"$ref\":\"#/$defs/e%20f\"}},"
        "\"$defs\":{\"a/b\":{\"type\":\"string\"},\"c~d\":{\"type\":\"integer\"},"
        "\"e f\":{\"type\":\"boolean\"}}}");

    valid(s, "{\"p\":\"s\",\"q\":1,\"r\":true}");
    invalid(s, "{\"p\":1}", "/p", "type");
    invalid(s, "{\"q\":\"s\"}", "/q", "type");
    invalid(s, "{\"r\":1}", "/r", "type");
}

Test(jschema, ref_siblings_apply_as_well)
{
    const jschema *s = schema_text(
        "{\"$ref\":\"#/$defs/S\",\"minLength\":3,\"$defs\":{\"S\":{\"type\":\"string\"}}}");

    valid(s, "\"abc\"");
    invalid(s, "\"ab\"", "", "minLength");
    invalid(s, "1", "", "type");
}

Test(jschema, ref_to_another_file_resolves_against_the_referring_file)
{
    /* main.json -> sub/mid.json -> leaf.json, which is in sub/ only */
    const jschema *s = schema_file("main.json");
    char err[1024] = "";

    valid(s, "{\"leaf\":{\"color\":\"red\"}}");
    invalid(s, "{\"leaf\":{\"color\":\"blue\"}}", "/leaf/color", "enum");
    invalid(s, "{\"leaf\":{}}", "/leaf", "required");
    validate(s, "{\"leaf\":{\"color\":\"blue\"}}", err, sizeof(err));
    cr_assert(strstr(err, "(schema leaf.json#/enum)"), "%s", err);
}

Test(jschema, ref_to_another_file_with_a_fragment)
{
    const jschema *s = schema_text("{\"items\":{\"$ref\":\"base.json#/$defs/Pos\"}}");

    valid(s, "[1,2]");
    invalid(s, "[1,\"x\"]", "/1", "type");
    invalid(s, "[3,0]", "/1", "not");
}

Test(jschema, ref_recursion_follows_the_document)
{
    const jschema *s = schema_file("node.json");

    valid(s, "{\"name\":\"r\",\"children\":[{\"name\":\"a\",\"children\":[{\"name\":\"b\"}]}]}");
    invalid(s,
            "{\"name\":\"r\",\"children\":[{\"name\":\"a\",\"children\":[{\"name\":\"b\"},{}]}]}",
            "/children/0/children/1", "required");
    invalid(s, "{\"name\":\"r\",\"children\":[{\"name\":\"a\",\"x\":1}]}", "/children/0/x",
            "additionalProperties");
}

Test(jschema, ref_cycle_without_input_fails_cleanly)
{
    const jschema *s = schema_text("{\"$ref\":\"#\"}");
    char err[1024] = "";

    cr_assert_eq(validate(s, "1", err, sizeof(err)), -1);
    cr_assert(strstr(err, "cycle"), "%s", err);
}

Test(jschema, extends_adds_the_base_class)
{
    /* base.json says additionalProperties false and knows only "a";
     * derived.json adds "b": both must be allowed, nothing else */
    const jschema *s = schema_file("derived.json");

    valid(s, "{\"a\":\"x\",\"b\":1}");
    invalid(s, "{\"a\":\"x\",\"b\":1,\"c\":0}", "/c", "additionalProperties");
    invalid(s, "{\"b\":1}", "", "required");
    invalid(s, "{\"a\":\"x\"}", "", "required");
    invalid(s, "{\"a\":1,\"b\":1}", "/a", "type");
    invalid(s, "{\"a\":\"x\",\"b\":0}", "/b", "not");
}

Test(jschema, extends_chains_through_several_classes)
{
    const jschema *s = schema_file("grand.json");

    valid(s, "{\"a\":\"x\",\"b\":1,\"c\":true}");
    invalid(s, "{\"a\":\"x\",\"b\":1,\"c\":1}", "/c", "type");
    invalid(s, "{\"a\":\"x\",\"b\":1,\"d\":1}", "/d", "additionalProperties");
    invalid(s, "{\"a\":\"x\",\"c\":true}", "", "required");
}

Test(jschema, extends_inline_is_checked_like_all_of)
{
    const jschema *s = schema_text("{\"extends\":{\"type\":\"object\",\"required\":[\"z\"]},"
                                   "\"properties\":{\"y\":{\"type\":\"string\"}}}");

    valid(s, "{\"z\":1,\"y\":\"s\"}");
    invalid(s, "{\"y\":\"s\"}", "", "required");
    invalid(s, "[]", "", "type");
}

Test(jschema, annotations_are_ignored)
{
    const jschema *s = schema_text(
        "{\"$schema\":\"https://json-schema.org/draft/2019-09/schema\",\"$id\":\"urn:x\","
        "\"title\":\"t\",\"description\":\"d\",\"javaType\":\"a.B\",\"existingJavaType\":\"C\","
        "\"javaInterfaces\":[\"I\"],\"default\":null,\"format\":\"date-time\",\"examples\":[1],"
        "\"$comment\":\"c\",\"type\":\"string\"}");

    valid(s, "\"not a date\"");
    invalid(s, "1", "", "type");
}

Test(jschema, unsupported_keywords_fail_the_load)
{
    refused("{\"minimum\":1}", 0, "#/minimum: keyword not supported");
    refused("{\"properties\":{\"a\":{\"uniqueItems\":true}}}", 0,
            "#/properties/a/uniqueItems: keyword not supported");
    refused("{\"items\":[{},{}]}", 0, "#/items: a list of item schemas is not supported");
    refused("{\"$ref\":\"https://example.com/s.json\"}", 0, "only relative file references");
}

Test(jschema, malformed_schemas_fail_the_load)
{
    refused("{\"type\":", 0, "schema text:");
    refused("{} x", 0, "bad JSON");
    refused("{\"type\":\"strin\"}", 0, "unknown type \"strin\"");
    refused("{\"type\":[]}", 0, "#/type: must be a type name or a list");
    refused("{\"required\":\"a\"}", 0, "#/required: must be a list of names");
    refused("{\"minLength\":-1}", 0, "#/minLength: must be a non-negative integer");
    refused("{\"pattern\":\"(\"}", 0, "#/pattern: pattern \"(\"");
    refused("{\"anyOf\":[]}", 0, "#/anyOf: must be a non-empty list");
    refused("{\"properties\":{\"a\":[]}}", 0,
            "#/properties/a: a schema must be an object or a boolean");
    refused("{\"$ref\":\"#/$defs/nope\"}", 0, "no such location");
    refused("{\"$ref\":\"no-such-file.json\"}", 0, "cannot open");
    refused("{\"$ref\":\"#/$defs/A\",\"$defs\":{\"A\":{\"$ref\":\"base.json#/nope\"}}}", 0,
            "schema <text>#/$defs/A/$ref: $ref \"base.json#/nope\": no such location in base.json");
}

Test(jschema, lenient_load_takes_malformed_subschemas_as_true)
{
    char err[1024] = "";
    jschema *s = jschema_parse("{\"properties\":{\"a\":[\"x\"],\"b\":{\"type\":\"string\"}}}", NULL,
                               JSCHEMA_LENIENT, err, sizeof(err));

    cr_assert_not_null(s, "%s", err);
    hold(s);
    valid(s, "{\"a\":{\"anything\":1},\"b\":\"s\"}");
    invalid(s, "{\"b\":1}", "/b", "type");
}

Test(jschema, load_names_a_missing_file)
{
    char err[1024] = "";
    jschema *s = jschema_load(NCMP_CONFORMANCE_DATA_DIR "/nope.json", 0, err, sizeof(err));

    cr_assert_null(s);
    cr_assert(strstr(err, "nope.json") && strstr(err, "cannot open"), "%s", err);
}

Test(jschema, patch_replaces_a_subschema)
{
    jschema *s = schema_text("{\"$ref\":\"#/$defs/V\",\"$defs\":{\"V\":{\"properties\":"
                             "{\"p\":{\"type\":\"object\",\"additionalProperties\":false}}}}}");
    char err[1024] = "";

    valid(s, "{\"p\":{}}");
    invalid(s, "{\"p\":[{\"k\":\"v\"}]}", "/p", "type");
    cr_assert_eq(jschema_patch(s, "/$defs/V/properties/p",
                               "{\"type\":\"array\",\"items\":{\"type\":\"object\"}}", err,
                               sizeof(err)),
                 0, "%s", err);
    valid(s, "{\"p\":[{\"k\":\"v\"}]}");
    invalid(s, "{\"p\":{}}", "/p", "type");
    invalid(s, "{\"p\":[1]}", "/p/0", "type");
}

Test(jschema, patch_may_bring_in_new_refs)
{
    jschema *s = schema_text("{\"properties\":{\"p\":{}}}");
    char err[1024] = "";

    cr_assert_eq(
        jschema_patch(s, "/properties/p", "{\"$ref\":\"sub/leaf.json\"}", err, sizeof(err)), 0,
        "%s", err);
    valid(s, "{\"p\":\"green\"}");
    invalid(s, "{\"p\":\"blue\"}", "/p", "enum");
}

Test(jschema, patch_of_the_root_replaces_everything)
{
    jschema *s = schema_text("{\"type\":\"string\"}");
    char err[1024] = "";

    cr_assert_eq(jschema_patch(s, "", "{\"type\":\"integer\"}", err, sizeof(err)), 0, "%s", err);
    valid(s, "1");
    invalid(s, "\"s\"", "", "type");
}

Test(jschema, failed_patch_leaves_the_schema_unchanged)
{
    jschema *s = schema_text("{\"properties\":{\"p\":{\"type\":\"string\"}},\"items\":{}}");
    char err[1024] = "";

    cr_assert_eq(jschema_patch(s, "/properties/q", "{}", err, sizeof(err)), -1);
    cr_assert(strstr(err, "no such location"), "%s", err);
    cr_assert_eq(jschema_patch(s, "properties", "{}", err, sizeof(err)), -1);
    cr_assert(strstr(err, "not a JSON pointer"), "%s", err);
    cr_assert_eq(jschema_patch(s, "/properties/p", "{\"type\":", err, sizeof(err)), -1);
    cr_assert(strstr(err, "replacement"), "%s", err);
    cr_assert_eq(jschema_patch(s, "/properties/p", "{\"$ref\":\"#/nope\"}", err, sizeof(err)), -1);
    cr_assert(strstr(err, "no such location"), "%s", err);
    cr_assert_eq(jschema_patch(s, "", "{\"minimum\":0}", err, sizeof(err)), -1);
    cr_assert(strstr(err, "not supported"), "%s", err);
    valid(s, "{\"p\":\"s\"}");
    invalid(s, "{\"p\":1}", "/p", "type");
}

/* Every schema ONAP publishes for NCMP loads; the only ones the strict
 * load refuses are those with "required" slipped into "properties"
 * (the two async request/response schemas), and the lenient load takes
 * those too. Skipped without NCMP's schemas. */
Test(jschema, published_ncmp_schemas_load)
{
    const char *dir = conformance_onap_dir();
    DIR *d;
    struct dirent *e;
    int files = 0;

    if (!conformance_onap_available())
        cr_skip_test("NCMP's published schemas not found at %s (set NCMP_ONAP_SCHEMAS)", dir);
    d = opendir(dir);
    cr_assert_not_null(d, "cannot read %s", dir);
    while ((e = readdir(d)) != NULL) {
        char path[2048], err[1024] = "";
        size_t n = strlen(e->d_name);
        jschema *s;

        if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        files++;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        s = jschema_load(path, 0, err, sizeof(err));
        if (!s && !strstr(err, "/properties/required: a schema must be an object")) {
            closedir(d);
            cr_assert_fail("%s: %s", e->d_name, err);
        }
        jschema_free(s);
        s = jschema_load(path, JSCHEMA_LENIENT, err, sizeof(err));
        if (!s) {
            closedir(d);
            cr_assert_fail("%s (lenient): %s", e->d_name, err);
        }
        jschema_free(s);
    }
    closedir(d);
    cr_assert_geq(files, 11, "only %d schemas in %s", files, dir);
}

/* NCMP's sample AVC event, beside its schemas, against NCMP's schema.
 * Skipped without them. */
Test(jschema, onap_sample_avc_event_is_valid)
{
    char path[2048], err[1024] = "";
    json_object *sample, *edit, *edits;
    jschema *s;
    int rc;

    if (!conformance_onap_available())
        cr_skip_test("NCMP's published schemas not found at %s (set NCMP_ONAP_SCHEMAS)",
                     conformance_onap_dir());
    snprintf(path, sizeof(path), "%s/dmi-cm-avc-event-schema-1.0.0.json", conformance_onap_dir());
    s = jschema_load(path, 0, err, sizeof(err));
    cr_assert_not_null(s, "%s", err);
    hold(s);
    snprintf(path, sizeof(path), "%s/../sampleAvcInputEvent.json", conformance_onap_dir());
    sample = json_object_from_file(path);
    cr_assert_not_null(sample, "%s: %s", path, json_util_get_last_err());
    rc = jschema_validate(s, sample, err, sizeof(err));
    if (rc != 0) {
        json_object_put(sample);
        cr_assert_fail("sample refused: %s", err);
    }
    /* without the edit's target it is not */
    json_pointer_get(sample,
                     "/data/push-change-update/datastore-changes/ietf-yang-patch:yang-patch/edit",
                     &edits);
    edit = json_object_array_get_idx(edits, 2);
    json_object_object_del(edit, "target");
    rc = jschema_validate(s, sample, err, sizeof(err));
    json_object_put(sample);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(err, "instance \"/data/push-change-update/datastore-changes/"
                          "ietf-yang-patch:yang-patch/edit/2\": required: property \"target\""),
              "%s", err);
}
