#include <criterion/criterion.h>
#include <string.h>

#include "ncmp_multipart.h"
#include "unit_leak.h"

TestSuite(ncmp_multipart, .fini = unit_leak_check);

#define CT "multipart/form-data; boundary=XyZ"

/* Two parts as curl -F sends them: a file and a plain field. */
Test(ncmp_multipart, two_parts_with_names_and_file_name)
{
    static const char body[] =
        "--XyZ\r\n"
        "Content-Disposition: form-data; name=\"file\"; filename=\"a.yang\"\r\n"
        "Content-Type: application/octet-stream\r\n"
        "\r\n"
        "module a {\r\n}\r\n"
        "--XyZ\r\n"
        "Content-Disposition: form-data; name=\"other\"\r\n"
        "\r\n"
        "x\r\n"
        "--XyZ--\r\n";
    ncmp_multipart_part *parts = NULL;
    size_t n = 0;
    ncmp_err err;
    const ncmp_multipart_part *f;

    cr_assert_eq(ncmp_multipart_parse(CT, body, sizeof(body) - 1, &parts, &n, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(n, 2);
    f = ncmp_multipart_find(parts, n, "file");
    cr_assert_not_null(f);
    cr_assert_str_eq(f->filename, "a.yang");
    cr_assert_eq(f->len, strlen("module a {\r\n}"));
    cr_assert_eq(memcmp(f->data, "module a {\r\n}", f->len), 0);
    cr_assert_null(ncmp_multipart_find(parts, n, "other")->filename);
    cr_assert_eq(ncmp_multipart_find(parts, n, "other")->len, 1);
    cr_assert_null(ncmp_multipart_find(parts, n, "missing"));
    ncmp_multipart_free(parts, n);
}

/* A quoted boundary with a ';' in it, and a preamble before the first. */
Test(ncmp_multipart, quoted_boundary_and_preamble)
{
    static const char body[] = "preamble\r\n--a;b\r\n"
                               "content-disposition: form-data; name=\"file\"\r\n\r\n"
                               "data--a;\r\n"
                               "--a;b--";
    ncmp_multipart_part *parts = NULL;
    size_t n = 0;
    ncmp_err err;

    cr_assert_eq(ncmp_multipart_parse("multipart/form-data; boundary=\"a;b\"", body,
                                      sizeof(body) - 1, &parts, &n, &err),
                 0, "%s", err.msg);
    cr_assert_eq(n, 1);
    cr_assert_eq(parts[0].len, strlen("data--a;"));
    ncmp_multipart_free(parts, n);
}

/* Every malformed input is a REJECT, never a crash or a part past the end. */
Test(ncmp_multipart, malformed_bodies_are_rejected)
{
    static const struct {
        const char *ct, *body;
    } cases[] = {
        {"application/json", "{}"},
        {"multipart/form-data", "--x\r\n\r\n\r\n--x--"},
        {CT, ""},
        {CT, "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nno closing"},
        {CT, "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\nno blank line"},
        {CT, "--XyZ\r\nContent-Type: text/plain\r\n\r\nnameless\r\n--XyZ--"},
        {CT, "--XyZjunk"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ncmp_multipart_part *parts = NULL;
        size_t n = 0;
        ncmp_err err;
        cr_expect_eq(ncmp_multipart_parse(cases[i].ct, cases[i].body, strlen(cases[i].body), &parts,
                                          &n, &err),
                     -1, "case %zu", i);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT, "case %zu", i);
        cr_expect_null(parts, "case %zu", i);
    }
}
