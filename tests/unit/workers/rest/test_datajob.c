/*
 * datajob: the write job's body scanned as it arrives (any split into
 * chunks gives the same operations), what it refuses, and NCMP's JEX
 * selector handling for read jobs. The HTTP and Kafka paths run against
 * the DMI stub in the integration suite (test_datajob.c).
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "datajob.h"
#include "ncmp_buf.h"
#include "ncmp_json.h"

typedef struct seen {
    ncmp_buf ops; /* "<index>:<path>|" per operation */
    int metas;
    char dest[64];
} seen;

static int on_meta(void *arg, json_object *meta, ncmp_err *err)
{
    seen *s = arg;
    json_object *v;

    (void)err;
    s->metas++;
    if (json_object_object_get_ex(meta, "destination", &v))
        snprintf(s->dest, sizeof(s->dest), "%s", json_object_get_string(v));
    return 0;
}

static int on_op(void *arg, const char *text, size_t len, size_t index, ncmp_err *err)
{
    seen *s = arg;
    json_object *op = NULL, *v;
    int found;

    ncmp_err perr;

    if (ncmp_json_parse(text, len, &op, &perr) != 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "data[%zu]: %s", index, perr.msg);
    found = json_object_object_get_ex(op, "path", &v);
    if (found)
        ncmp_buf_appendf(&s->ops, "%zu:%s|", index, json_object_get_string(v));
    json_object_put(op);
    return found ? 0 : ncmp_err_set(err, NCMP_ERR_REJECT, "no path in %zu", index);
}

/* Scan `body` in chunks of `chunk` bytes: 0 or -1 with *err. */
static int scan(const char *body, size_t chunk, seen *s, ncmp_err *err)
{
    const datajob_scan_cb cb = {on_meta, on_op, s};
    datajob_scan *sc = datajob_scan_new(&cb, 1000);
    size_t len = strlen(body);
    int rc = 0;

    memset(s, 0, sizeof(*s));
    for (size_t at = 0; rc == 0 && at < len; at += chunk)
        rc = datajob_scan_feed(sc, body + at, at + chunk > len ? len - at : chunk, err);
    if (rc == 0)
        rc = datajob_scan_end(sc, err);
    datajob_scan_free(sc);
    return rc;
}

static const char JOB[] =
    "{ \"other\": [1, {\"data\": [\"x\"]}, \"]}\\\"\"],\n"
    "  \"dataJobWriteRequest\": {\"data\": [\n"
    "    "
    "{\"path\":\"/A=1/"
    "B=2\",\"op\":\"add\",\"operationId\":\"1\",\"value\":{\"k\":[1,2,{\"z\":\"}\"}]}},\n"
    "    {\"path\":\"/A=1/B=3\",\"op\":\"merge\",\"operationId\":\"2\",\"value\":-1.5e3}\n"
    "  ], \"ignored\": true},\n"
    "  \"dataJobMetadata\": {\"destination\":\"d/1\",\"dataAcceptType\":\"application/json\"}\n"
    "}";

Test(datajob, any_chunking_gives_the_same_operations_and_metadata)
{
    static const size_t chunks[] = {1, 2, 3, 7, 64, 100000};
    seen s;
    ncmp_err err;

    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        cr_assert_eq(scan(JOB, chunks[i], &s, &err), 0, "chunk %zu: %s", chunks[i], err.msg);
        cr_assert_str_eq(s.ops.data, "0:/A=1/B=2|1:/A=1/B=3|", "chunk %zu", chunks[i]);
        cr_assert_eq(s.metas, 1);
        cr_assert_str_eq(s.dest, "d/1");
        ncmp_buf_free(&s.ops);
    }
}

static void refused(const char *body, const char *says)
{
    seen s;
    ncmp_err err;

    cr_assert_eq(scan(body, 3, &s, &err), -1, "accepted: %s", body);
    cr_assert_eq(err.cls, NCMP_ERR_REJECT);
    cr_assert(strstr(err.msg, says), "%s: '%s' does not say '%s'", body, err.msg, says);
    ncmp_buf_free(&s.ops);
}

Test(datajob, malformed_bodies_are_refused_with_the_reason)
{
    refused("", "ends before");
    refused("[1]", "not a JSON object");
    refused("{\"dataJobWriteRequest\":{\"data\":[{\"path\":\"/a\"}", "ends before");
    refused("{\"dataJobWriteRequest\":{\"data\":[]}} x", "after the JSON object");
    refused("{\"dataJobWriteRequest\":{\"data\":[{\"path\":\"/a\",}]}}", "unexpected closing");
    refused("{\"dataJobWriteRequest\":{\"data\":[{\"path\":\"/a\"},{\"path\":tru}]}}", "data[1]");
    refused("{\"dataJobWriteRequest\":{\"data\":[{\"op\":\"add\"}]}}", "no path in 0");
    refused("{\"a\":1,}", "unexpected closing");
    refused("{\"a\" 1}", "not JSON");
    refused("{\"dataJobWriteRequest\":{}}", "dataJobWriteRequest.data");
    refused("{\"dataJobMetadata\":{\"x\":tru}, \"dataJobWriteRequest\":{\"data\":[]}}",
            "dataJobMetadata");
    /* one operation larger than the limit given (1000 bytes) */
    {
        ncmp_buf b = NCMP_BUF_INIT;
        ncmp_buf_append_str(&b, "{\"dataJobWriteRequest\":{\"data\":[{\"path\":\"");
        for (int i = 0; i < 2000; i++)
            ncmp_buf_append_char(&b, 'x');
        ncmp_buf_append_str(&b, "\"}]}}");
        refused(b.data, "larger than the limit");
        ncmp_buf_free(&b);
    }
}

Test(datajob, selectors_split_like_ncmp_jex)
{
    size_t n;
    char **s =
        datajob_selectors("/SubNetwork[id=\"1\"]/ManagedElement[id=\"me1\"] OR /x\n && a comment\n"
                          "  /SubNetwork[id=\"1\"]/ManagedElement[id=\"me1\"]  \r\n//deep ORACLE",
                          &n);

    cr_assert_eq(n, 3, "%zu selectors", n);
    cr_assert_str_eq(s[0], "/SubNetwork[id=\"1\"]/ManagedElement[id=\"me1\"]");
    cr_assert_str_eq(s[1], "/x");
    cr_assert_str_eq(s[2], "//deep ORACLE");
    datajob_strings_free(s, n);
    s = datajob_selectors(NULL, &n);
    cr_assert_eq(n, 0);
    datajob_strings_free(s, n);
}

Test(datajob, fdn_prefix_takes_the_leading_id_steps)
{
    char *f =
        datajob_fdn_prefix("/SubNetwork[id=\"Europe\"]/ManagedElement[id=\"me 1\"]/attributes");

    cr_assert_str_eq(f, "/SubNetwork=Europe/ManagedElement=me 1");
    free(f);
    f = datajob_fdn_prefix("/ManagedElement[contains(id,\"x\")]");
    cr_assert_str_eq(f, "");
    free(f);
    f = datajob_fdn_prefix("/SubNetwork[id=\"1\"][x]");
    cr_assert_str_eq(f, "");
    free(f);
}
