/* workers/cps/cps_path.c: a client's xpath to the stored path and back. */
#include <criterion/criterion.h>
#include <string.h>

#include "cps_path.h"

/* The stored path of `xpath` with U+0001 shown as '|'. */
static void encoded(const char *xpath, char *out, size_t size)
{
    ncmp_buf b = NCMP_BUF_INIT;
    ncmp_err err;

    cr_assert_eq(cps_path_encode(xpath, &b, &err), 0, "%s: %s", xpath, err.msg);
    cr_assert_lt(b.len, size);
    for (size_t i = 0; i < b.len; i++)
        out[i] = b.data[i] == CPS_PATH_SEP ? '|' : b.data[i];
    out[b.len] = '\0';
    ncmp_buf_free(&b);
}

Test(cps_path, steps_are_joined_by_the_separator_and_prefixes_dropped)
{
    char out[256];

    encoded("/bookstore/categories", out, sizeof(out));
    cr_expect_str_eq(out, "|bookstore|categories");
    encoded("/stores:bookstore/categories", out, sizeof(out));
    cr_expect_str_eq(out, "|bookstore|categories");
    encoded("/", out, sizeof(out));
    cr_expect_str_eq(out, "");
    encoded("", out, sizeof(out));
    cr_expect_str_eq(out, "");
}

Test(cps_path, keys_are_sorted_single_quoted_and_doubled)
{
    char out[256];

    encoded("/a/b[@y=\"it's\" and @x=1]/c", out, sizeof(out));
    cr_expect_str_eq(out, "|a|b[@x='1' and @y='it''s']|c");
    encoded("/a/b[ @x = '1'  and  @y='it''s' ]", out, sizeof(out));
    cr_expect_str_eq(out, "|a|b[@x='1' and @y='it''s']");
    /* a '/' inside a value is not a step */
    encoded("/a/b[@k='x/y']/c", out, sizeof(out));
    cr_expect_str_eq(out, "|a|b[@k='x/y']|c");
}

Test(cps_path, malformed_xpaths_are_rejected_with_the_position)
{
    static const char *const bad[] = {"a/b",   "/a/",       "//a",          "/a[",
                                      "/a[@k", "/a[@k=]",   "/a[@k='x",     "/a[@k='1' or @j='2']",
                                      "/1a",   "/a[k='1']", "/a[@k='\x01']"};
    ncmp_buf b = NCMP_BUF_INIT;
    ncmp_err err;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_eq(cps_path_encode(bad[i], &b, &err), -1, "%s was accepted", bad[i]);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT);
        cr_expect(strstr(err.msg, "position"), "%s", err.msg);
        cr_expect_eq(b.len, 0u, "nothing is appended on failure");
    }
    ncmp_buf_free(&b);
}

Test(cps_path, decode_parent_depth_and_names)
{
    ncmp_buf p = NCMP_BUF_INIT, x = NCMP_BUF_INIT;
    const char *name;
    size_t len;
    ncmp_err err;

    cr_assert_eq(cps_path_encode("/a/b[@k='x/y' and @j='q''r']/c", &p, &err), 0);
    cps_path_decode(p.data, p.len, &x);
    ncmp_buf_append_char(&x, '\0');
    cr_expect_str_eq(x.data, "/a/b[@j='q''r' and @k='x/y']/c");
    cr_expect_eq(cps_path_depth(p.data, p.len), 3);
    cps_path_last_name(p.data, p.len, &name, &len);
    cr_expect_eq(len, 1u);
    cr_expect_eq(name[0], 'c');
    cr_expect_eq(cps_path_parent_len(p.data, p.len), p.len - 2);
    cr_expect(cps_path_is_list_entry(p.data, cps_path_parent_len(p.data, p.len)));
    cps_path_last_name(p.data, cps_path_parent_len(p.data, p.len), &name, &len);
    cr_expect_eq(len, 1u);
    cr_expect_eq(name[0], 'b');
    cps_path_first_name(p.data, &name, &len);
    cr_expect_eq(len, 1u);
    cr_expect_eq(name[0], 'a');
    ncmp_buf_free(&p);
    ncmp_buf_free(&x);
}

Test(cps_path, libyang_form_has_the_module_and_one_predicate_per_key)
{
    ncmp_buf p = NCMP_BUF_INIT, y = NCMP_BUF_INIT;
    ncmp_err err;

    cr_assert_eq(cps_path_encode("/a/b[@k='it''s' and @j=2]", &p, &err), 0);
    cr_assert_eq(cps_path_to_libyang(p.data, "m", &y, &err), 0);
    ncmp_buf_append_char(&y, '\0');
    cr_expect_str_eq(y.data, "/m:a/b[j='2'][k=\"it's\"]");
    ncmp_buf_reset(&p);
    ncmp_buf_reset(&y);
    cr_assert_eq(cps_path_encode("/a/b[@k=\"it's \"\"q\"\"\"]", &p, &err), 0);
    cr_expect_eq(cps_path_to_libyang(p.data, "m", &y, &err), -1, "both quotes cannot be written");
    ncmp_buf_free(&p);
    ncmp_buf_free(&y);
}

/* The order the store relies on: a node, then its subtree, then its
 * next sibling, whatever characters the sibling's name has. */
Test(cps_path, stored_order_puts_a_subtree_right_after_its_node)
{
    static const char *const in_order[] = {
        "/a/b",  "/a/b/c",       "/a/b/c/d",       "/a/b-x",        "/a/b.y",
        "/a/bA", "/a/l[@k='1']", "/a/l[@k='1']/z", "/a/l[@k='10']", "/a/l[@k='2']"};
    ncmp_buf prev = NCMP_BUF_INIT, cur = NCMP_BUF_INIT;
    ncmp_err err;

    for (size_t i = 0; i < sizeof(in_order) / sizeof(in_order[0]); i++) {
        ncmp_buf_reset(&cur);
        cr_assert_eq(cps_path_encode(in_order[i], &cur, &err), 0);
        ncmp_buf_append_char(&cur, '\0');
        if (i)
            cr_expect_lt(strcmp(prev.data, cur.data), 0, "%s should sort before %s",
                         in_order[i - 1], in_order[i]);
        ncmp_buf_reset(&prev);
        ncmp_buf_append(&prev, cur.data, cur.len);
    }
    ncmp_buf_free(&prev);
    ncmp_buf_free(&cur);
}
