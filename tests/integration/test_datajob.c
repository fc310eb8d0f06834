/*
 * Data jobs end to end on real services: ncmpd in front of two DMI stubs
 * (it_front.h). Handles are registered over REST with data producers on
 * both stubs, made READY by module sync; a row inserted straight into
 * cm_handle plays a handle that is not READY. What the stubs received is
 * read back from /stub/datajob/last and /stub/stats.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "it_front.h"
#include "it_util.h"
#include "ncmp_buf.h"

#define ALT(n) "/SubNetwork=Europe/ManagedElement=me" #n
#define META                                                                                       \
    "'dataJobMetadata':{'destination':'d/1','dataAcceptType':'application/json',"                  \
    "'dataContentType':'application/merge-patch+json'}"
#define WRITE(j) "/do-not-use/dataJobs/" j "/write"

TestSuite(datajob, .fini = it_front_cleanup);

static const char *const ct_json[] = {"Content-Type: application/json", NULL};

static void post_registration(front_case *c, const char *body_sq)
{
    front_reply r;

    it_front_call(c, "POST", "/ncmpInventory/v1/ch", body_sq, ct_json, &r);
    cr_assert_eq(r.status, 200, "registration: %ld %s", r.status, r.body.data);
    it_front_reply_free(&r);
}

/* ch-1, ch-2 (producer p1) and ch-3 (p2) on stub 0; ch-4 (p1) with its
 * data-job services on stub 1; ch-5 (failing-producer) on stub 0.
 * Alternate ids ALT(n). */
static void handles_ready(front_case *c)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_appendf(&b,
                     "{'dmiPlugin':'%s','createdCmHandles':["
                     "{'cmHandle':'ch-1','alternateId':'" ALT(
                         1) "','moduleSetTag':'tagA',"
                            "'dataProducerIdentifier':'p1'},"
                            "{'cmHandle':'ch-2','alternateId':'" ALT(
                                2) "','moduleSetTag':'tagA',"
                                   "'dataProducerIdentifier':'p1'},"
                                   "{'cmHandle':'ch-3','alternateId':'" ALT(
                                       3) "','moduleSetTag':'tagB',"
                                          "'dataProducerIdentifier':'p2'},"
                                          "{'cmHandle':'ch-5','alternateId':'" ALT(
                                              5) "','moduleSetTag':'tagA',"
                                                 "'dataProducerIdentifier':'failing-producer'}]}",
                     c->dmi[0]);
    post_registration(c, b.data);
    ncmp_buf_reset(&b);
    /* ch-4's data jobs go to the second stub, its modules come from the
     * first */
    ncmp_buf_appendf(&b,
                     "{'dmiPlugin':'%s','dmiDatajobsWritePlugin':'%s',"
                     "'dmiDatajobsReadPlugin':'%s','createdCmHandles':[{'cmHandle':'ch-4',"
                     "'alternateId':'" ALT(4) "','moduleSetTag':'tagA',"
                                              "'dataProducerIdentifier':'p1'}]}",
                     c->dmi[0], c->dmi[1], c->dmi[1]);
    post_registration(c, b.data);
    ncmp_buf_free(&b);
    it_front_wait_ready(c, 1, 5);
}

/* ch-6 (ALT(6), p1), known to the database only and being deleted:
 * nothing else touches it, it is never READY. */
static void insert_deleting(front_case *c)
{
    char row[512];
    ncmp_err err;

    snprintf(row, sizeof(row),
             "INSERT INTO cm_handle (id, alternate_id, state, dmi_service_name, module_set_tag,"
             " data_producer_identifier) VALUES ('ch-6', '%s', 'DELETING', '%s', 'tagA', 'p1')",
             ALT(6), c->dmi[0]);
    cr_assert_eq(ncmp_db_exec(c->db, row, &err), 0, "%s", err.msg);
}

/* The sub-jobs stub n received, in order: "<producer>:<ops>:<dataJobId>;" */
static char *received(front_case *c, int n)
{
    json_object *last = it_front_stub_get(c, n, "/stub/datajob/last");
    ncmp_buf out = NCMP_BUF_INIT;

    for (size_t i = 0; i < json_object_array_length(last); i++) {
        json_object *s = json_object_array_get_idx(last, i);
        ncmp_buf_appendf(&out, "%s:%s:%s;", it_front_field(s, "dataProducerId"),
                         it_front_field(s, "operations"), it_front_field(s, "dataJobId"));
    }
    json_object_put(last);
    if (!out.data)
        ncmp_buf_append_str(&out, "");
    return out.data;
}

/* The answer's sub-jobs as "<dmi index>:<producer>:<ok|error>;" sorted by
 * producer then DMI. */
static char *sub_jobs(front_case *c, json_object *list)
{
    char *lines[16];
    size_t n = 0;
    ncmp_buf out = NCMP_BUF_INIT;

    cr_assert(json_object_is_type(list, json_type_array));
    for (size_t i = 0; i < json_object_array_length(list) && n < 16; i++) {
        json_object *s = json_object_array_get_idx(list, i), *e;
        const char *dmi = it_front_field(s, "dmiServiceName");
        ncmp_buf l = NCMP_BUF_INIT;
        ncmp_buf_appendf(&l, "%s:%d:%s;", it_front_field(s, "dataProducerId"),
                         strcmp(dmi, c->dmi[0]) == 0   ? 0
                         : strcmp(dmi, c->dmi[1]) == 0 ? 1
                                                       : -1,
                         json_object_object_get_ex(s, "error", &e) ? "error"
                         : it_front_field(s, "subJobId")           ? "ok"
                                                                   : "none");
        lines[n++] = l.data;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
            char *t = lines[j];
            lines[j] = lines[j - 1];
            lines[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        ncmp_buf_append_str(&out, lines[i]);
        free(lines[i]);
    }
    if (!out.data)
        ncmp_buf_append_str(&out, "");
    return out.data;
}

/* A write job of the paths (single-quoted JSON strings, comma-separated). */
static void job_body(ncmp_buf *b, const char *const *paths, size_t n)
{
    ncmp_buf_append_str(b, "{" META ",'dataJobWriteRequest':{'data':[");
    for (size_t i = 0; i < n; i++)
        ncmp_buf_appendf(b, "%s{'path':'%s','op':'add','operationId':'%zu','value':{'k':%zu}}",
                         i ? "," : "", paths[i], i, i);
    ncmp_buf_append_str(b, "]}}");
}

Test(datajob, write_job_is_split_per_dmi_and_producer, .timeout = 180)
{
    front_case *c = it_front_start("dj-split", 2, NULL);
    const char *const paths[] = {ALT(1) "/A=1", ALT(2) "/A=2/B=3#/attributes/x", ALT(3) "/A=1",
                                 ALT(4), ALT(1) "/A=9"};
    const char *const auth[] = {"Content-Type: application/json", "Authorization: Bearer t1", NULL};
    ncmp_buf b = NCMP_BUF_INIT;
    json_object *last;
    front_reply r;
    char *got;

    handles_ready(c);
    job_body(&b, paths, 5);
    it_front_call(c, "POST", WRITE("job-1"), b.data, auth, &r);
    cr_assert_eq(r.status, 200, "%s; log %s", r.body.data, c->log);
    got = sub_jobs(c, r.json);
    cr_assert_str_eq(got, "p1:0:ok;p1:1:ok;p2:0:ok;");
    free(got);
    it_front_reply_free(&r);
    /* stub 0: p1's 3 operations and p2's 1; stub 1: p1's 1 */
    got = received(c, 0);
    cr_assert(strstr(got, "p1:3:job-1;") && strstr(got, "p2:1:job-1;"), "%s", got);
    free(got);
    got = received(c, 1);
    cr_assert_str_eq(got, "p1:1:job-1;");
    free(got);
    last = it_front_stub_get(c, 1, "/stub/datajob/last");
    cr_assert_str_eq(it_front_field(json_object_array_get_idx(last, 0), "query"),
                     "destination=d%2F1");
    cr_assert_str_eq(it_front_field(json_object_array_get_idx(last, 0), "authorization"),
                     "Bearer t1");
    json_object_put(last);
    cr_assert_eq(it_front_stub_count(c, 0, "datajobOperations"), 4);

    /* one sub-job the DMI refuses: the others still go, the answer is 502 */
    {
        const char *const mixed[] = {ALT(5) "/A=1", ALT(1) "/A=1"};
        ncmp_buf_reset(&b);
        job_body(&b, mixed, 2);
        it_front_call(c, "POST", WRITE("job-2"), b.data, ct_json, &r);
        cr_assert_eq(r.status, 502, "%s", r.body.data);
        got = sub_jobs(c, r.json);
        cr_assert_str_eq(got, "failing-producer:0:error;p1:0:ok;");
        free(got);
        it_front_reply_free(&r);
    }

    /* status and result go to the DMI that has the sub-job */
    {
        char path[512];
        snprintf(path, sizeof(path),
                 "/do-not-use/dataJobs/job-1/status?dmiServiceName=%s&dataProducerId=p1"
                 "&dataProducerJobId=1",
                 c->dmi[1]);
        it_front_call(c, "GET", path, NULL, NULL, &r);
        cr_assert_eq(r.status, 200, "%s", r.body.data);
        cr_assert_str_eq(it_front_field(r.json, "status"), "FINISHED");
        it_front_reply_free(&r);
        snprintf(path, sizeof(path),
                 "/do-not-use/dataJobs/job-1/result?dmiServiceName=%s&dataProducerId=p1"
                 "&dataProducerJobId=1&destination=d",
                 c->dmi[1]);
        it_front_call(c, "GET", path, NULL, NULL, &r);
        cr_assert_eq(r.status, 200, "%s", r.body.data);
        it_front_reply_free(&r);
        cr_assert_eq(it_front_stub_count(c, 1, "datajobStatus"), 1);
        cr_assert_eq(it_front_stub_count(c, 1, "datajobResult"), 1);
        /* a DMI no handle has is never called */
        it_front_call(c, "GET",
                      "/do-not-use/dataJobs/job-1/status?dmiServiceName=http://169.254.169.254"
                      "&dataProducerId=p1&dataProducerJobId=1",
                      NULL, NULL, &r);
        cr_assert_eq(r.status, 404, "%s", r.body.data);
        it_front_reply_free(&r);
    }

    /* what the DMI gets of an operation: its value as written (blanks
     * between tokens aside), from the in-place path and from the parsed
     * one (an escaped path) alike */
    {
        static const char *const ops[] = {
            "{'path':'" ALT(4) "/X=1', 'op' : 'merge','operationId':'7','value': { 'a' : [1, "
                               "-2.5e1, true, null] ,\n 's':'x y\\\"z\\u00e9' } }",
            "{'path':'" ALT(4) "\\/X=2','op':'add','value':[ {} ]}",
        };
        static const char *const want[] = {
            "{'path':'" ALT(4) "/X=1','op':'merge','moduleSetTag':'tagA','value':{'a':[1,-2.5e1,"
                               "true,null],'s':'x y\\\"z\\u00e9'},'operationId':'7'}",
            "{'path':'" ALT(4) "/X=2','op':'add','moduleSetTag':'tagA','value':[{}]}",
        };
        for (size_t i = 0; i < 2; i++) {
            json_object *first, *expected;
            ncmp_buf_reset(&b);
            ncmp_buf_appendf(&b, "{" META ",'dataJobWriteRequest':{'data':[%s]}}", ops[i]);
            it_front_call(c, "POST", WRITE("job-asis"), b.data, ct_json, &r);
            cr_assert_eq(r.status, 200, "%s: %s", ops[i], r.body.data);
            it_front_reply_free(&r);
            last = it_front_stub_get(c, 1, "/stub/datajob/last");
            first = json_object_object_get(
                json_object_array_get_idx(last, json_object_array_length(last) - 1),
                "firstOperation");
            ncmp_buf_reset(&b);
            for (const char *p = want[i]; *p; p++)
                ncmp_buf_append_char(&b, *p == '\'' ? '"' : *p);
            expected = json_tokener_parse(b.data);
            cr_assert(expected, "%s", b.data);
            cr_assert(json_object_equal(first, expected), "sent %s, want %s",
                      json_object_to_json_string(first), b.data);
            json_object_put(expected);
            json_object_put(last);
        }
    }
    ncmp_buf_free(&b);
    it_front_fini(c);
}

Test(datajob, refused_jobs_send_nothing, .timeout = 180)
{
    front_case *c = it_front_start("dj-refuse", 2, NULL);
    const char *const unknown[] = {ALT(1) "/A=1", "/SubNetwork=Asia/ManagedElement=x/A=1"};
    const char *const not_ready[] = {ALT(1) "/A=1", ALT(6) "/A=1"};
    ncmp_buf b = NCMP_BUF_INIT;
    front_reply r;

    handles_ready(c);
    insert_deleting(c);

    job_body(&b, unknown, 2);
    it_front_call(c, "POST", WRITE("j-unknown"), b.data, ct_json, &r);
    cr_assert_eq(r.status, 404, "%s", r.body.data);
    cr_assert_str_eq(it_front_field(r.json, "message"),
                     "No matching cm handle found using alternate ids");
    cr_assert(strstr(it_front_field(r.json, "details"), "/SubNetwork=Asia/ManagedElement=x/A=1"),
              "%s", r.body.data);
    it_front_reply_free(&r);
    ncmp_buf_reset(&b);
    job_body(&b, not_ready, 2);
    it_front_call(c, "POST", WRITE("j-not-ready"), b.data, ct_json, &r);
    cr_assert_eq(r.status, 409, "%s", r.body.data);
    cr_assert(strstr(it_front_field(r.json, "details"), ALT(6)), "%s", r.body.data);
    it_front_reply_free(&r);

    /* malformed bodies and operations */
    {
        static const char *const bad[] = {
            "{malformed",
            "[]",
            "{" META "}",
            "{'dataJobWriteRequest':{'data':[{'op':'add'}]}}",
            "{'dataJobWriteRequest':{'data':[{'path':'/x','op':7}]}}",
            "{'dataJobWriteRequest':{'data':[{'path':'/x','op':'add','operationId':1}]}}",
            "{'dataJobWriteRequest':{'data':[1]}}",
            "{'dataJobMetadata':{'destination':5},'dataJobWriteRequest':{'data':[]}}",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            it_front_call(c, "POST", WRITE("j-bad"), bad[i], ct_json, &r);
            cr_assert_eq(r.status, 400, "%s: %ld %s", bad[i], r.status, r.body.data);
            cr_assert_str_eq(it_front_field(r.json, "message"), "Invalid data job", "%s",
                             r.body.data);
            it_front_reply_free(&r);
        }
    }
    cr_assert_eq(it_front_stub_count(c, 0, "datajobWrites") +
                     it_front_stub_count(c, 1, "datajobWrites"),
                 0, "a refused job reached a DMI");
    ncmp_buf_free(&b);
    it_front_fini(c);
}

/* A chunked body of `left` bytes: {"padding":"xxxx...."} */
typedef struct big_body {
    size_t left, sent;
} big_body;

static size_t big_read(char *buf, size_t size, size_t n, void *arg)
{
    big_body *bb = arg;
    size_t max = size * n, k = 0;
    static const char head[] = "{\"padding\":\"";

    while (k < max && bb->left > 0) {
        if (bb->sent < sizeof(head) - 1)
            buf[k] = head[bb->sent];
        else if (bb->left <= 2)
            buf[k] = bb->left == 2 ? '"' : '}';
        else
            buf[k] = 'x';
        k++;
        bb->sent++;
        bb->left--;
    }
    return k;
}

static size_t discard(char *p, size_t size, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return size * n;
}

static long peak_rss_kib(pid_t pid)
{
    char path[64], line[256];
    long kib = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = atol(line + 6);
    fclose(f);
    return kib;
}

Test(datajob, body_over_the_limit_is_413_without_being_held, .timeout = 180)
{
    const char *const extra[] = {"--datajob.max-body-bytes=100000000", NULL};
    front_case *c = it_front_start("dj-big", 1, extra);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    big_body bb = {300u * 1000 * 1000, 0};
    ncmp_buf url = NCMP_BUF_INIT, out = NCMP_BUF_INIT;
    long before = peak_rss_kib(c->pid), after, status = 0;
    CURL *curl = curl_easy_init();

    /* chunked, so the size is only known at the end */
    h = curl_slist_append(h, "Transfer-Encoding: chunked");
    ncmp_buf_appendf(&url, "http://127.0.0.1:%d" WRITE("big"), c->port);
    curl_easy_setopt(curl, CURLOPT_URL, url.data);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, big_read);
    curl_easy_setopt(curl, CURLOPT_READDATA, &bb);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 120L);
    cr_assert_eq(curl_easy_perform(curl), CURLE_OK);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    cr_assert_eq(status, 413);
    after = peak_rss_kib(c->pid);
    cr_assert_lt(after - before, 64 * 1024, "peak RSS grew by %ld KiB for a 300 MB body",
                 after - before);
    curl_easy_cleanup(curl);
    curl_slist_free_all(h);
    ncmp_buf_free(&url);
    ncmp_buf_free(&out);
    it_front_fini(c);
}

Test(datajob, read_job_classifies_selectors, .timeout = 180)
{
    front_case *c = it_front_start("dj-read", 2, NULL);
    json_object *dmi, *per;
    front_reply r;

    handles_ready(c);
    insert_deleting(c);
    it_front_call(c, "POST", "/do-not-use/dataJobs/read",
                  "{'jobId':'r1','readProperties':{'dataNodeSelector':"
                  "'//NRCellDU\\n"
                  "/SubNetwork[id=\\'Europe\\']/ManagedElement[id=\\'me1\\']/attributes OR "
                  "/SubNetwork[id=\\'Europe\\']/ManagedElement[contains(id,\\'me4\\')]\\n"
                  "/SubNetwork[id=\\'Europe\\']/ManagedElement[id=\\'me6\\']\\n"
                  "/SubNetwork[id=\\'Asia\\']/ManagedElement[id=\\'x\\']'}}",
                  ct_json, &r);
    cr_assert_eq(r.status, 200, "%s; log %s", r.body.data, c->log);
    cr_assert_str_eq(
        json_object_to_json_string_ext(json_object_object_get(r.json, "broadcastSelectors"),
                                       JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        "[\"//NRCellDU\"]");
    dmi = json_object_object_get(r.json, "dmiSelectors");
    per = json_object_object_get(json_object_object_get(dmi, c->dmi[0]), "p1");
    cr_assert_eq(json_object_array_length(per), 1, "%s", r.body.data);
    per = json_object_object_get(json_object_object_get(dmi, c->dmi[1]), "p1");
    cr_assert_eq(json_object_array_length(per), 1, "%s", r.body.data);
    cr_assert_eq(json_object_array_length(json_object_object_get(r.json, "notReadySelectors")), 1,
                 "%s", r.body.data);
    cr_assert_eq(json_object_array_length(json_object_object_get(r.json, "errorSelectors")), 1,
                 "%s", r.body.data);
    it_front_reply_free(&r);
    it_front_call(c, "POST", "/do-not-use/dataJobs/read", "{'readProperties':{}}", ct_json, &r);
    cr_assert_eq(r.status, 400, "%s", r.body.data);
    it_front_reply_free(&r);
    it_front_fini(c);
}

Test(datajob, write_job_from_kafka_answers_on_the_response_topic, .timeout = 180)
{
    char req_topic[200], resp_topic[200], dlq[220], f1[260], f2[260];
    const char *extra[] = {f1, f2, NULL};
    const char *const ce[] = {"ce_id", "kjob-1", "ce_type", "DataJob", "ce_source", "test", NULL};
    const char *const no_id[] = {"ce_type", "DataJob", NULL};
    const char *const paths[] = {ALT(1) "/A=1", ALT(4) "/A=1"};
    ncmp_buf b = NCMP_BUF_INIT;
    it_outgoing recs[2];
    it_record *got = NULL;
    front_case *c;
    json_object *doc;
    size_t n;

    it_unique(req_topic, sizeof(req_topic), "dj-kreq");
    snprintf(resp_topic, sizeof(resp_topic), "%s-resp", req_topic);
    snprintf(dlq, sizeof(dlq), "%s-dlq", req_topic);
    snprintf(f1, sizeof(f1), "--datajob.request-topic=%s", req_topic);
    snprintf(f2, sizeof(f2), "--datajob.response-topic=%s", resp_topic);
    c = it_front_start("dj-kafka", 2, extra);
    handles_ready(c);
    job_body(&b, paths, 2);
    for (char *p = b.data; *p; p++)
        if (*p == '\'')
            *p = '"';
    recs[0] = (it_outgoing){"kjob-1", b.data, b.len, ce};
    recs[1] = (it_outgoing){"bad", "{}", 2, no_id};
    it_publish(req_topic, recs, 2);
    n = it_read_topic(resp_topic, 1, 30000, &got);
    cr_assert_eq(n, 1, "%zu results on %s; log %s", n, resp_topic, c->log);
    cr_assert_str_eq(got[0].key, "kjob-1");
    {
        char err[1024] = "", corr[64];
        cr_assert_eq(
            conformance_check_headers(CONFORMANCE_DATAJOB_RESULT, got[0].headers, err, sizeof(err)),
            0, "%s", err);
        cr_assert_str_eq(it_record_header(&got[0], "ce_correlationid", corr, sizeof(corr)),
                         "kjob-1");
    }
    doc = json_tokener_parse(got[0].value);
    cr_assert_str_eq(it_front_field(doc, "dataJobId"), "kjob-1");
    cr_assert_str_eq(it_front_field(doc, "status"), "200", "%s", got[0].value);
    cr_assert_eq(json_object_array_length(json_object_object_get(doc, "subJobs")), 2, "%s",
                 got[0].value);
    json_object_put(doc);
    it_records_free(got, n);
    n = it_read_topic(dlq, 1, 30000, &got);
    cr_assert_eq(n, 1, "the record without ce_id was not dead-lettered");
    {
        char reason[256];
        cr_assert_not_null(it_record_header(&got[0], "dlq_reason", reason, sizeof(reason)));
        cr_assert(strstr(reason, "ce_id"), "%s", reason);
    }
    it_records_free(got, n);
    ncmp_buf_free(&b);
    it_front_fini(c);
}
