#include <criterion/criterion.h>
#include <libyang/libyang.h>
#include <string.h>

#include "avc_event.h"

/* --- events ---------------------------------------------------------------- */

#define WRAP(edits)                                                                                \
    "{\"data\":{\"push-change-update\":{\"datastore-changes\":{\"ietf-yang-patch:yang-patch\":{"   \
    "\"patch-id\":\"p1\",\"edit\":[" edits "]}}}}}"

static int parse(const char *json, avc_event *ev, ncmp_err *err)
{
    return avc_event_parse(json, strlen(json), ev, err);
}

Test(avc_event, reads_every_edit_in_order)
{
    static const char json[] =
        WRAP("{\"edit-id\":\"1\",\"operation\":\"patch\",\"target\":\"/g:garden\","
             "\"value\":{\"garden\":{\"name\":\"x\"}}},"
             "{\"edit-id\":\"2\",\"operation\":\"DELETE\",\"target\":\"/garden/bed=1,a\"},"
             "{\"edit-id\":\"3\",\"operation\":\"replace\",\"target\":\"/garden\","
             "\"value\":\"{\\\"garden\\\":{}}\"}");
    avc_event ev = {0};
    ncmp_err err;

    cr_assert_eq(parse(json, &ev, &err), 0, "%s", err.msg);
    cr_assert_eq(ev.n, 3);
    cr_expect_eq(ev.edits[0].op, AVC_OP_PATCH);
    cr_expect_str_eq(ev.edits[0].target, "/g:garden");
    cr_expect_str_eq(ev.edits[0].value, "{\"garden\":{\"name\":\"x\"}}");
    cr_expect_eq(ev.edits[1].op, AVC_OP_DELETE);
    cr_expect_null(ev.edits[1].value);
    /* RFC 8072's replace is NCMP's update; a value in a string is taken
     * as the JSON it holds (NCMP casts the value to a String) */
    cr_expect_eq(ev.edits[2].op, AVC_OP_UPDATE);
    cr_expect_str_eq(ev.edits[2].value, "{\"garden\":{}}");
    avc_event_clear(&ev);
    avc_event_clear(&ev);
}

Test(avc_event, a_delete_without_target_is_the_whole_tree)
{
    avc_event ev = {0};
    ncmp_err err;

    cr_assert_eq(parse(WRAP("{\"edit-id\":\"1\",\"operation\":\"delete\"}"), &ev, &err), 0);
    cr_expect_str_eq(ev.edits[0].target, "");
    avc_event_clear(&ev);
}

Test(avc_event, refuses_what_cannot_be_applied)
{
    static const struct {
        const char *json, *needle;
    } bad[] = {
        {"not json", ""},
        {"{\"data\":{}}", "push-change-update"},
        {WRAP("") "x", ""},
        {"{\"data\":{\"push-change-update\":{\"datastore-changes\":{\"ietf-yang-patch:yang-patch\":"
         "{\"edit\":{}}}}}}",
         "edit array"},
        {WRAP("{\"target\":\"/garden\"}"), "no operation"},
        {WRAP("{\"operation\":\"read\",\"target\":\"/garden\"}"), "unsupported operation 'read'"},
        {WRAP("{\"operation\":\"patch\",\"target\":\"/garden\"}"), "needs a value"},
        {WRAP("{\"operation\":\"create\",\"target\":\"/garden\",\"value\":[1]}"), "needs a value"},
        {WRAP("{\"operation\":\"create\",\"target\":\"/garden\",\"value\":\"[1]\"}"),
         "holds no JSON object"},
        {WRAP("{\"operation\":\"delete\",\"target\":7}"), "target is not a string"},
        {WRAP("{\"operation\":\"delete\"},7"), "edit[1] is not an object"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        avc_event ev = {0};
        ncmp_err err = {0};
        cr_expect_eq(parse(bad[i].json, &ev, &err), -1, "case %zu accepted", i);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT, "case %zu: class %d", i, err.cls);
        cr_expect(strstr(err.msg, bad[i].needle), "case %zu: '%s' not in '%s'", i, bad[i].needle,
                  err.msg);
        cr_expect_eq(ev.n, 0, "case %zu wrote the event", i);
        cr_expect_null(ev.edits);
    }
}

Test(avc_event, operation_names)
{
    static const struct {
        const char *name;
        avc_op op;
    } names[] = {{"create", AVC_OP_CREATE}, {"Update", AVC_OP_UPDATE}, {"REPLACE", AVC_OP_UPDATE},
                 {"patch", AVC_OP_PATCH},   {"merge", AVC_OP_PATCH},   {"delete", AVC_OP_DELETE},
                 {"remove", AVC_OP_DELETE}};
    avc_op op;

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        cr_expect_eq(avc_op_parse(names[i].name, &op), 0, "%s", names[i].name);
        cr_expect_eq(op, names[i].op, "%s", names[i].name);
    }
    cr_expect_eq(avc_op_parse("read", &op), -1);
    cr_expect_eq(avc_op_parse("", &op), -1);
    cr_expect_str_eq(avc_op_name(AVC_OP_PATCH), "patch");
}

/* --- targets -------------------------------------------------------------- */

static const char GARDEN[] = "module garden {\n"
                             "  yang-version 1.1;\n"
                             "  namespace \"urn:garden\";\n"
                             "  prefix g;\n"
                             "  container garden {\n"
                             "    leaf name { type string; }\n"
                             "    list bed { key \"row col\";\n"
                             "      leaf row { type uint8; }\n"
                             "      leaf col { type string; }\n"
                             "      container soil { leaf ph { type int16; } }\n"
                             "    }\n"
                             "    choice season { case warm { container sun { leaf h { type "
                             "uint8; } } } }\n"
                             "  }\n"
                             "}\n";

static struct ly_ctx *garden_ctx(void)
{
    struct ly_ctx *ctx = NULL;

    cr_assert_eq(ly_ctx_new(NULL, 0, &ctx), LY_SUCCESS);
    cr_assert_eq(lys_parse_mem(ctx, GARDEN, LYS_IN_YANG, NULL), LY_SUCCESS);
    return ctx;
}

Test(avc_event, targets_become_cps_xpaths)
{
    static const struct {
        const char *target, *xpath, *parent;
    } ok[] = {
        {"", "/", "/"},
        {"/", "/", "/"},
        {"/garden:garden", "/garden", "/"},
        {"garden", "/garden", "/"},
        {"/garden/bed=1,east", "/garden/bed[@row='1'][@col='east']", "/garden"},
        {"/garden:garden/bed=2,a%2Fb/soil", "/garden/bed[@row='2'][@col='a/b']/soil",
         "/garden/bed[@row='2'][@col='a/b']"},
        {"/garden/bed=2,it's", "/garden/bed[@row='2'][@col=\"it's\"]", "/garden"},
        /* a step already in CPS path form is taken as it is, '/' in quotes too */
        {"/garden/bed[@row='3' and @col='x/y']/soil", "/garden/bed[@row='3' and @col='x/y']/soil",
         "/garden/bed[@row='3' and @col='x/y']"},
        /* choices and cases are not steps */
        {"/garden/sun", "/garden/sun", "/garden"},
        /* a whole list */
        {"/garden/bed", "/garden/bed", "/garden"},
    };
    struct ly_ctx *ctx = garden_ctx();

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ncmp_buf xpath = NCMP_BUF_INIT, parent = NCMP_BUF_INIT;
        ncmp_err err;
        cr_expect_eq(avc_target_xpath(ctx, ok[i].target, &xpath, &parent, &err), 0, "%s: %s",
                     ok[i].target, err.msg);
        cr_expect_str_eq(xpath.data, ok[i].xpath, "%s", ok[i].target);
        cr_expect_str_eq(parent.data, ok[i].parent, "%s", ok[i].target);
        ncmp_buf_free(&xpath);
        ncmp_buf_free(&parent);
    }
    ly_ctx_destroy(ctx);
}

Test(avc_event, targets_outside_the_schema_are_refused)
{
    static const struct {
        const char *target, *needle;
    } bad[] = {
        {"/orchard", "no node orchard"},
        {"/garden/shed", "no node shed"},
        {"/garden/bed=1", "no value for key col"},
        {"/garden/bed=1,a,b", "more key values than keys"},
        {"/garden/name", "names a leaf"},
        {"/garden/bed=1,a/soil/ph", "names a leaf"},
        {"/garden=1", "not a list with keys"},
        {"/garden[@x='1']", "not a list"},
        {"/garden/:", "a step without a name"},
    };
    struct ly_ctx *ctx = garden_ctx();

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ncmp_buf xpath = NCMP_BUF_INIT, parent = NCMP_BUF_INIT;
        ncmp_err err = {0};
        cr_expect_eq(avc_target_xpath(ctx, bad[i].target, &xpath, &parent, &err), -1, "%s accepted",
                     bad[i].target);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT, "%s", bad[i].target);
        cr_expect(strstr(err.msg, bad[i].needle), "%s: '%s' not in '%s'", bad[i].target,
                  bad[i].needle, err.msg);
        cr_expect_eq(xpath.len, 0, "%s wrote an xpath", bad[i].target);
        cr_expect_eq(parent.len, 0);
        ncmp_buf_free(&xpath);
        ncmp_buf_free(&parent);
    }
    ly_ctx_destroy(ctx);
}
