/* workers/cps/cps_delta.c: the leaves that differ, a list entry's keys,
 * and the order of stored paths. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cps_delta.h"

static const char *text(json_object *o)
{
    return o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                     JSON_C_TO_STRING_NOSLASHESCAPE)
             : "(none)";
}

/* diff of two JSON texts, the sides as text ("(none)" when absent). */
static void diff(const char *src, const char *tgt, char *s_out, char *t_out, size_t size)
{
    json_object *s = json_tokener_parse(src), *t = json_tokener_parse(tgt), *so, *to;

    cps_delta_leaves_diff(s, t, &so, &to);
    snprintf(s_out, size, "%s", text(so));
    snprintf(t_out, size, "%s", text(to));
    json_object_put(s);
    json_object_put(t);
    json_object_put(so);
    json_object_put(to);
}

Test(cps_delta, leaves_diff_changed_removed_added)
{
    char s[256], t[256];

    diff("{\"a\":1,\"b\":\"x\",\"c\":[1,2]}", "{\"a\":2,\"b\":\"x\",\"d\":true}", s, t, sizeof(s));
    cr_expect_str_eq(s, "{\"a\":1,\"c\":[1,2]}");
    cr_expect_str_eq(t, "{\"a\":2,\"d\":true}");
}

Test(cps_delta, leaves_diff_equal_gives_no_side)
{
    char s[256], t[256];

    diff("{\"a\":[1,2],\"b\":{\"x\":1}}", "{\"b\":{\"x\":1},\"a\":[1,2]}", s, t, sizeof(s));
    cr_expect_str_eq(s, "(none)");
    cr_expect_str_eq(t, "(none)");
    diff("{\"a\":[1,2]}", "{\"a\":[2,1]}", s, t, sizeof(s));
    cr_expect_str_eq(s, "{\"a\":[1,2]}", "a leaf-list's order counts");
    diff("{}", "{\"n\":null}", s, t, sizeof(s));
    cr_expect_str_eq(s, "(none)");
    cr_expect_str_eq(t, "{\"n\":null}");
}

static const char *keys_of(const char *path, int *n)
{
    static char out[512];
    json_object *o = json_object_new_object();

    *n = cps_delta_key_leaves(path, strlen(path), o);
    snprintf(out, sizeof(out), "%s", text(o));
    json_object_put(o);
    return out;
}

Test(cps_delta, key_leaves_of_the_last_step)
{
    int n;

    cr_expect_str_eq(keys_of("\x01"
                             "a[@x='1']\x01"
                             "b[@k='v' and @k2='it''s']",
                             &n),
                     "{\"k\":\"v\",\"k2\":\"it's\"}");
    cr_expect_eq(n, 2);
    cr_expect_str_eq(keys_of("\x01"
                             "a[@x='1']\x01"
                             "c",
                             &n),
                     "{}");
    cr_expect_eq(n, 0, "a container: no keys");
    cr_expect_str_eq(keys_of("\x01"
                             "b[@k='a/b]c']",
                             &n),
                     "{\"k\":\"a/b]c\"}");
    cr_expect_eq(n, 1);
    cr_expect_str_eq(keys_of("\x01"
                             "b[@k='']",
                             &n),
                     "{\"k\":\"\"}");
}

Test(cps_delta, key_leaves_malformed_add_nothing)
{
    static const char *const bad[] = {"\x01"
                                      "b[@k='v'",
                                      "\x01"
                                      "b[@k=v]",
                                      "\x01"
                                      "b[k='v']",
                                      "\x01"
                                      "b[@k='v' or @j='w']",
                                      "\x01"
                                      "b[@='v']"};
    int n;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_str_eq(keys_of(bad[i], &n), "{}", "%zu", i);
        cr_expect_eq(n, -1, "%zu", i);
    }
}

Test(cps_delta, path_order_is_the_c_collation)
{
    cr_expect_lt(cps_delta_path_cmp("\x01"
                                    "a",
                                    2,
                                    "\x01"
                                    "a\x01"
                                    "b",
                                    4),
                 0);
    cr_expect_lt(cps_delta_path_cmp("\x01"
                                    "a\x01"
                                    "z",
                                    4,
                                    "\x01"
                                    "a-x",
                                    4),
                 0, "a node's subtree before its siblings that extend its name");
    cr_expect_eq(cps_delta_path_cmp("\x01"
                                    "a",
                                    2,
                                    "\x01"
                                    "a",
                                    2),
                 0);
    cr_expect_gt(cps_delta_path_cmp("\x01"
                                    "b",
                                    2,
                                    "\x01"
                                    "a\x01"
                                    "c",
                                    4),
                 0);
}
