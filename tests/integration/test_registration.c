/*
 * The registration pipeline end to end on real services: DMI plugin
 * registrations (CloudEvents whose data is NCMP's DmiPluginRegistration)
 * on the registration topic -> ncmpd (registration role and lifecycle
 * relay) -> the cm_handle inventory, one outcome per request on the
 * response topic, NCMP LCM v1 events on the lifecycle topic, bad input on
 * the dead-letter topic; and kill -9 at the worst moments.
 *
 * Each test runs its own ncmpd on its own scratch database: the relay is
 * elected per database and publishes the whole lcm_outbox table, so two
 * tests sharing a database would publish each other's events. Topics and
 * consumer groups are the test's own too, so the tests run in parallel.
 *
 * Request bodies are written with single quotes (they read better in C)
 * and sent with double quotes; see json_text().
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "conformance.h"
#include "it_util.h"
#include "ncmp_buf.h"

#define PARTITIONS 3
#define WAIT_MS    90000
#define DMI        "http://dmi-1:8080"

/* Said once per run of the integration tests: whether the events are
 * checked against NCMP's published schemas as well as schema/. */
ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
    char line[1024];

    (void)set;
    fprintf(stderr, "%s\n", conformance_onap_status(line, sizeof(line)));
}

/* NCMP's codes and texts (its registration error response), written out here on purpose
 * rather than taken from the worker. */
#define CODE_NOT_FOUND  "100"
#define TEXT_NOT_FOUND  "cm handle reference(s) not found"
#define CODE_NOT_READY  "101"
#define TEXT_NOT_READY  "cm handle(s) not ready"
#define CODE_EXISTS     "109"
#define TEXT_EXISTS     "cm-handle already exists"
#define CODE_INVALID_ID "110"
#define TEXT_INVALID_ID "cm handle reference has an invalid character(s) in id"

#define REQUEST_TYPE "org.onap.ncmp.dmi-plugin-registration"
#define LCM_PREFIX   "org.onap.ncmp.cmhandle-lcm-event."

/* --- one test's world: database, topics, ncmpd --------------------------- */

#define NFLAGS 8

typedef struct reg_case {
    char topic[128];
    char response_topic[160];
    char lcm_topic[160];
    char dlq_topic[160];
    char dbname[96];
    char dburl[512];
    char log[512];
    char flag[NFLAGS][640];
    int java_headers; /* lcm.java-serialized-headers: 1 (the default) or 0 */
    ncmp_db *db;      /* the scratch database */
    pid_t pid;        /* the running ncmpd, or 0 */
    long published;   /* records on the registration topic */
} reg_case;

/* Static, not on the test's stack: the suite's fini cleans up after a
 * failed assertion, when the test's frame is gone. Criterion runs every
 * test in a process of its own, so one is enough. */
static reg_case the_case;
static int the_case_live;

static void reg_cleanup(void)
{
    reg_case *c = &the_case;

    if (!the_case_live)
        return;
    the_case_live = 0;
    if (c->pid > 0) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
        c->pid = 0;
    }
    ncmp_db_close(c->db);
    c->db = NULL;
    it_scratch_db_drop(c->dbname);
}

TestSuite(registration, .fini = reg_cleanup);

static reg_case *case_init(const char *name)
{
    reg_case *c = &the_case;
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    ncmp_err err;

    memset(c, 0, sizeof(*c));
    c->java_headers = 1;
    it_unique(c->topic, sizeof(c->topic), name);
    snprintf(c->response_topic, sizeof(c->response_topic), "%s-response", c->topic);
    snprintf(c->lcm_topic, sizeof(c->lcm_topic), "%s-lcm", c->topic);
    /* where ncmpd dead-letters: <registration topic>-dlq */
    snprintf(c->dlq_topic, sizeof(c->dlq_topic), "%s-dlq", c->topic);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir && *dir ? dir : "/tmp", c->topic);
    it_scratch_db_create("it_reg", c->dbname, sizeof(c->dbname), c->dburl, sizeof(c->dburl));
    the_case_live = 1;
    snprintf(c->flag[0], sizeof(c->flag[0]), "--db.url=%s", c->dburl);
    snprintf(c->flag[1], sizeof(c->flag[1]), "--registration.topic=%s", c->topic);
    snprintf(c->flag[2], sizeof(c->flag[2]), "--registration.response-topic=%s", c->response_topic);
    snprintf(c->flag[3], sizeof(c->flag[3]), "--lcm.topic=%s", c->lcm_topic);
    snprintf(c->flag[4], sizeof(c->flag[4]), "--kafka.group.id=g-%s", c->topic);
    /* static membership: a restart after a kill takes over at once */
    snprintf(c->flag[5], sizeof(c->flag[5]), "--kafka.instance-id=i-%s", c->topic);
    snprintf(c->flag[6], sizeof(c->flag[6]), "--roles=registration,lcm-relay");
    /* handed to module sync: no module-sync role runs here */
    snprintf(c->flag[7], sizeof(c->flag[7]), "--module-sync.topic=%s-ms", c->topic);
    it_create_topic(c->topic, PARTITIONS);
    it_create_topic(c->response_topic, PARTITIONS);
    it_create_topic(c->lcm_topic, PARTITIONS);
    it_create_topic(c->dlq_topic, PARTITIONS);
    cr_assert_eq(ncmp_db_open(&c->db, c->dburl, NULL, 10, &err), 0, "%s", err.msg);
    return c;
}

/* Run ncmpd with the case's flags and `extra` (NULL-terminated, may be
 * NULL); with `wait_running`, return once it runs. */
static void case_spawn(reg_case *c, const char *const *extra, int wait_running)
{
    const char *args[NFLAGS + 16];
    size_t n = 0;

    for (size_t i = 0; i < NFLAGS; i++)
        args[n++] = c->flag[i];
    for (const char *const *e = extra; e && *e && n < NFLAGS + 15; e++)
        args[n++] = *e;
    args[n] = NULL;
    c->pid = wait_running ? it_ncmpd_start(c->log, args) : it_ncmpd_spawn(c->log, args);
}

static void case_start(reg_case *c, const char *const *extra)
{
    case_spawn(c, extra, 1);
}

static void case_stop(reg_case *c)
{
    int status = it_ncmpd_stop(c->pid);
    c->pid = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "SIGTERM should stop ncmpd cleanly, status %d; log %s", status, c->log);
}

static void case_fini(reg_case *c)
{
    if (c->pid > 0)
        case_stop(c);
    ncmp_db_close(c->db);
    c->db = NULL;
    the_case_live = 0;
    cr_assert_eq(it_scratch_db_drop(c->dbname), 0, "drop %s", c->dbname);
}

/* --- requests ------------------------------------------------------------ */

/* Append single-quoted JSON as JSON. */
static void json_text(ncmp_buf *b, const char *single_quoted)
{
    for (const char *p = single_quoted; *p; p++)
        ncmp_buf_append_char(b, *p == '\'' ? '"' : *p);
}

/* Publish one registration request (single-quoted JSON) as a binary-mode
 * CloudEvent with id `ce_id`, keyed by `key` (the DMI URL). */
static void send_request(reg_case *c, const char *ce_id, const char *key, const char *body_sq)
{
    ncmp_buf body = NCMP_BUF_INIT;
    /* clang-format off */
    const char *headers[] = {"ce_specversion", "1.0",
                             "ce_id", ce_id,
                             "ce_source", "it-dmi",
                             "ce_type", REQUEST_TYPE,
                             "content-type", "application/json",
                             NULL};
    /* clang-format on */
    it_outgoing rec;

    json_text(&body, body_sq);
    rec.key = key;
    rec.value = body.data;
    rec.len = body.len;
    rec.headers = headers;
    it_publish(c->topic, &rec, 1);
    c->published++;
    ncmp_buf_free(&body);
}

/* Wait until every published request is applied or dead-lettered (the
 * database's offsets, committed with the effects) and every lifecycle
 * event they caused is on Kafka (the relay deletes an outbox row once
 * Kafka acknowledged it). The outcome is acknowledged before the commit,
 * so it is on the response topic by then too. */
static void settle(reg_case *c)
{
    long applied = it_wait_long(
        c->db, "SELECT COALESCE(sum(next_offset), 0) FROM consumer_offsets WHERE topic = $1",
        c->topic, c->published, WAIT_MS);
    cr_assert_eq(applied, c->published, "%ld of %ld requests applied; log %s", applied,
                 c->published, c->log);
    cr_assert_eq(it_wait_long(c->db, "SELECT count(*) FROM lcm_outbox", NULL, 0, WAIT_MS), 0,
                 "lifecycle events left in the outbox; log %s", c->log);
}

/* --- JSON ---------------------------------------------------------------- */

/* The value at a dotted path of object keys, or NULL. Borrowed. */
static json_object *jpath(json_object *o, const char *path)
{
    const char *p = path;

    while (o && *p) {
        char key[64];
        size_t n = strcspn(p, ".");
        snprintf(key, sizeof(key), "%.*s", (int)n, p);
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &o))
            return NULL;
        p += n;
        if (*p == '.')
            p++;
    }
    return o;
}

static const char *jstr(json_object *o, const char *path)
{
    json_object *v = jpath(o, path);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void expect_str(const char *got, const char *want, const char *what)
{
    cr_assert_not_null(got, "%s: missing, expected '%s'", what, want);
    cr_assert_str_eq(got, want, "%s: '%s', expected '%s'", what, got, want);
}

/* `got` equals the single-quoted JSON `want_sq` (key order aside). */
static void expect_json(json_object *got, const char *want_sq, const char *what)
{
    ncmp_buf text = NCMP_BUF_INIT;
    json_object *want;
    int equal;

    json_text(&text, want_sq);
    want = json_tokener_parse(text.data);
    cr_assert_not_null(want, "bad expectation %s", text.data);
    equal = got && json_object_equal(got, want);
    cr_assert(equal, "%s: %s, expected %s", what,
              got ? json_object_to_json_string(got) : "(missing)", text.data);
    json_object_put(want);
    ncmp_buf_free(&text);
}

/* --- outcomes ------------------------------------------------------------ */

static const char *const outcome_lists[] = {"failedCreatedCmHandles", "failedUpdatedCmHandles",
                                            "failedRemovedCmHandles", "failedUpgradeCmHandles"};

typedef struct failure {
    const char *id, *code, *text;
} failure;

static const failure no_failures[] = {{NULL, NULL, NULL}};

/* Every outcome on the response topic (after settle(): all of them). */
static size_t read_outcomes(reg_case *c, size_t at_least, it_record **out)
{
    return it_read_topic(c->response_topic, at_least, WAIT_MS, out);
}

/* The request id an outcome answers (its ce_correlationid), in buf. */
static const char *outcome_request(const it_record *r, char *buf, size_t len)
{
    return it_record_header(r, "ce_correlationid", buf, len);
}

/* The one outcome of request `ce_id`, parsed (owned by the caller); checks
 * that it is keyed by the request id and is a CloudEvent of its own. */
static json_object *outcome_of(const it_record *recs, size_t n, const char *ce_id)
{
    json_object *found = NULL;
    int count = 0;

    for (size_t i = 0; i < n; i++) {
        char buf[1024];
        const char *corr = outcome_request(&recs[i], buf, sizeof(buf));
        if (!corr || strcmp(corr, ce_id) != 0)
            continue;
        if (count++)
            continue;
        expect_str(recs[i].key, ce_id, "outcome key");
        cr_assert_not_null(it_record_header(&recs[i], "ce_id", buf, sizeof(buf)),
                           "the outcome is a CloudEvent with its own ce_id");
        cr_assert_str_neq(buf, ce_id, "the outcome's ce_id is its own, not the request's");
        expect_str(it_record_header(&recs[i], "ce_specversion", buf, sizeof(buf)), "1.0",
                   "outcome ce_specversion");
        cr_assert_not_null(it_record_header(&recs[i], "ce_type", buf, sizeof(buf)));
        cr_assert_not_null(it_record_header(&recs[i], "ce_source", buf, sizeof(buf)));
        found = json_tokener_parse(recs[i].value);
        cr_assert_not_null(found, "outcome of %s is JSON: %s", ce_id, recs[i].value);
        cr_assert_eq(
            conformance_check_event(CONFORMANCE_REGISTRATION_RESPONSE, found, buf, sizeof(buf)), 0,
            "%s: %s", buf, recs[i].value);
        /* with ce_time read by the strict RFC 3339 checker (regression: it
         * was NCMP's legacy "+0000" time, which CloudEvents refuse) */
        cr_assert_eq(conformance_check_headers(CONFORMANCE_REGISTRATION_RESPONSE, recs[i].headers,
                                               buf, sizeof(buf)),
                     0, "%s", buf);
    }
    cr_assert_eq(count, 1, "one outcome of request %s, got %d", ce_id, count);
    return found;
}

/* `list` of the outcome holds exactly the failures `want` (terminated by
 * an entry with a NULL id), in any order, each entry exactly
 * {cmHandle, errorCode, errorText}. */
static void expect_failed(json_object *outcome, const char *list, const failure *want)
{
    json_object *arr = jpath(outcome, list);
    size_t nwant = 0, n;
    unsigned char used[64] = {0};

    while (want[nwant].id)
        nwant++;
    cr_assert(arr && json_object_is_type(arr, json_type_array), "outcome has the list %s: %s", list,
              json_object_to_json_string(outcome));
    n = json_object_array_length(arr);
    cr_assert_eq(n, nwant, "%s has %zu entries, expected %zu: %s", list, n, nwant,
                 json_object_to_json_string(arr));
    cr_assert_leq(n, sizeof(used));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        cr_assert(json_object_is_type(e, json_type_object) && json_object_object_length(e) == 3,
                  "%s entry is {cmHandle, errorCode, errorText}: %s", list,
                  json_object_to_json_string(e));
    }
    for (size_t k = 0; k < nwant; k++) {
        int matched = 0;
        for (size_t i = 0; i < n && !matched; i++) {
            json_object *e = json_object_array_get_idx(arr, i);
            const char *id = jstr(e, "cmHandle"), *code = jstr(e, "errorCode"),
                       *text = jstr(e, "errorText");
            if (used[i] || !id || !code || !text || strcmp(id, want[k].id) != 0 ||
                strcmp(code, want[k].code) != 0 || strcmp(text, want[k].text) != 0)
                continue;
            used[i] = 1;
            matched = 1;
        }
        cr_assert(matched, "%s lacks {cmHandle:%s, errorCode:%s, errorText:%s}: %s", list,
                  want[k].id, want[k].code, want[k].text, json_object_to_json_string(arr));
    }
}

/* Every list empty, and nothing else in the outcome (no status). */
static void expect_all_applied(json_object *outcome)
{
    for (size_t i = 0; i < 4; i++)
        expect_failed(outcome, outcome_lists[i], no_failures);
    cr_assert_eq(json_object_object_length(outcome), 4, "only the four lists: %s",
                 json_object_to_json_string(outcome));
}

/* --- inventory ----------------------------------------------------------- */

static long handle_count(reg_case *c)
{
    return it_query_long(c->db, "SELECT count(*) FROM cm_handle", 0, NULL);
}

static int handle_exists(reg_case *c, const char *id)
{
    const char *p[1] = {id};
    return it_query_long(c->db, "SELECT count(*) FROM cm_handle WHERE id = $1", 1, p) == 1;
}

/* Column (or SQL expression) `expr` of handle `id` as text is `want`
 * ("<null>" for SQL NULL). */
static void expect_field(reg_case *c, const char *id, const char *expr, const char *want)
{
    char sql[512];
    const char *p[1] = {id};
    PGresult *res = NULL;
    ncmp_err err;
    const char *got;

    snprintf(sql, sizeof(sql), "SELECT (%s)::text FROM cm_handle WHERE id = $1", expr);
    cr_assert_eq(ncmp_db_query(c->db, sql, 1, p, &res, &err), 0, "%s: %s", sql, err.msg);
    cr_assert_eq(PQntuples(res), 1, "handle %s is stored", id);
    got = PQgetisnull(res, 0, 0) ? "<null>" : PQgetvalue(res, 0, 0);
    cr_assert_str_eq(got, want, "handle %s: %s is '%s', expected '%s'", id, expr, got, want);
    PQclear(res);
}

/* jsonb column `column` of handle `id` equals the single-quoted JSON. */
static void expect_jsonb(reg_case *c, const char *id, const char *column, const char *want_sq)
{
    char sql[512];
    ncmp_buf want = NCMP_BUF_INIT;
    const char *p[2];
    PGresult *res = NULL;
    ncmp_err err;

    json_text(&want, want_sq);
    p[0] = id;
    p[1] = want.data;
    snprintf(sql, sizeof(sql), "SELECT %s = $2::jsonb, %s::text FROM cm_handle WHERE id = $1",
             column, column);
    cr_assert_eq(ncmp_db_query(c->db, sql, 2, p, &res, &err), 0, "%s: %s", sql, err.msg);
    cr_assert_eq(PQntuples(res), 1, "handle %s is stored", id);
    cr_assert_str_eq(PQgetvalue(res, 0, 0), "t", "handle %s: %s is %s, expected %s", id, column,
                     PQgetvalue(res, 0, 1), want.data);
    PQclear(res);
    ncmp_buf_free(&want);
}

/* --- lifecycle events ---------------------------------------------------- */

static size_t read_lcm(reg_case *c, size_t at_least, it_record **out)
{
    return it_read_topic(c->lcm_topic, at_least, WAIT_MS, out);
}

/* One LCM record against NCMP's schema and rules, its headers against its
 * value, its key against cmHandleId. Returns the parsed value (owned). */
static json_object *lcm_checked(reg_case *c, const it_record *r)
{
    char err[1024], buf[64];
    json_object *ev;

    cr_assert_not_null(r->key, "an LCM record is keyed by the handle id");
    cr_assert_eq(conformance_check_lcm(r->value, r->len, err, sizeof(err)), 0,
                 "LCM event of %s: %s\n%s", r->key, err, r->value);
    ev = json_tokener_parse(r->value);
    cr_assert_not_null(ev);
    cr_assert_eq(conformance_check_lcm_headers(r->headers, ev, c->java_headers, err, sizeof(err)),
                 0, "headers of the LCM event of %s: %s", r->key, err);
    expect_str(jstr(ev, "event.cmHandleId"), r->key, "key = event.cmHandleId");
    cr_assert_not_null(it_record_header(r, "ncmp_outbox_seq", buf, sizeof(buf)),
                       "the relay marks its records with ncmp_outbox_seq");
    return ev;
}

/* The events of handle `id` in the order they were published (one key,
 * one partition), checked; up to `max` into evs (owned by the caller,
 * release with events_free). Returns how many there are. */
static size_t events_of(reg_case *c, const it_record *recs, size_t n, const char *id,
                        json_object **evs, size_t max)
{
    size_t count = 0;

    for (size_t i = 0; i < n; i++) {
        if (!recs[i].key || strcmp(recs[i].key, id) != 0)
            continue;
        if (count < max)
            evs[count] = lcm_checked(c, &recs[i]);
        count++;
    }
    return count;
}

static void events_free(json_object **evs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_object_put(evs[i]);
}

/* "create", "update" or "delete". */
static const char *lcm_kind(json_object *ev)
{
    const char *t = jstr(ev, "eventType");
    cr_assert_not_null(t);
    cr_assert_eq(strncmp(t, LCM_PREFIX, strlen(LCM_PREFIX)), 0, "eventType %s", t);
    return t + strlen(LCM_PREFIX);
}

/* Handle `id` has exactly the events of the given kinds, in that order
 * (NULL-terminated); they stay in evs (up to 8). */
static size_t expect_events(reg_case *c, const it_record *recs, size_t n, const char *id,
                            const char *const *kinds, json_object **evs)
{
    size_t want = 0, got;

    while (kinds[want])
        want++;
    got = events_of(c, recs, n, id, evs, 8);
    cr_assert_eq(got, want, "handle %s: %zu lifecycle events, expected %zu", id, got, want);
    for (size_t i = 0; i < got; i++)
        cr_assert_str_eq(lcm_kind(evs[i]), kinds[i], "handle %s: event %zu is %s, expected %s", id,
                         i + 1, lcm_kind(evs[i]), kinds[i]);
    return got;
}

static const char *const just_create[] = {"create", NULL};

/* --- the tests ----------------------------------------------------------- */

Test(registration, create_stores_every_field_and_announces_advised, .timeout = 120)
{
    reg_case *c = case_init("it-reg-create");
    it_record *outs = NULL, *lcm = NULL;
    size_t nouts, nlcm;
    json_object *outcome, *evs[8];

    case_start(c, NULL);
    send_request(
        c, "req-create-1", DMI,
        "{'dmiPlugin':'" DMI "','dmiDataPlugin':'http://dmi-data-1:8080',"
        "'createdCmHandles':["
        "{'cmHandle':'ch-1','cmHandleProperties':{'dmiKey':'secret','port':830,'tls':true},"
        "'publicCmHandleProperties':{'Color':'green','Size':1},"
        "'moduleSetTag':' tag-1 ','alternateId':' Subnetwork=Europe,ManagedElement=X1 ',"
        "'dataProducerIdentifier':' prod-1 ','trustLevel':'NONE'},"
        "{'cmHandle':'ch-2'},"
        "{'cmHandle':'ch-3','publicCmHandleProperties':{},'moduleSetTag':'tag-3',"
        "'alternateId':'  ','trustLevel':'COMPLETE'}]}");
    settle(c);

    cr_assert_eq(handle_count(c), 3);
    expect_field(c, "ch-1", "state", "ADVISED");
    expect_field(c, "ch-1", "dmi_service_name", DMI);
    expect_field(c, "ch-1", "dmi_data_service_name", "http://dmi-data-1:8080");
    expect_field(c, "ch-1", "dmi_model_service_name", "");
    expect_field(c, "ch-1", "module_set_tag", "tag-1");
    expect_field(c, "ch-1", "alternate_id", "Subnetwork=Europe,ManagedElement=X1");
    expect_field(c, "ch-1", "data_producer_identifier", "prod-1");
    expect_field(c, "ch-1", "registration_trust_level", "NONE");
    expect_field(c, "ch-1", "lock_reason", "<null>");
    expect_field(c, "ch-1", "data_sync_enabled", "false");
    /* NCMP binds the maps as Map<String,String>: numbers and booleans
     * become their text */
    expect_jsonb(c, "ch-1", "additional_properties",
                 "{'dmiKey':'secret','port':'830','tls':'true'}");
    expect_jsonb(c, "ch-1", "public_properties", "{'Color':'green','Size':'1'}");

    expect_field(c, "ch-2", "state", "ADVISED");
    expect_field(c, "ch-2", "dmi_service_name", DMI);
    expect_field(c, "ch-2", "alternate_id", "<null>");
    expect_field(c, "ch-2", "module_set_tag", "");
    expect_field(c, "ch-2", "data_producer_identifier", "");
    expect_field(c, "ch-2", "registration_trust_level", "COMPLETE");
    expect_jsonb(c, "ch-2", "additional_properties", "{}");
    expect_jsonb(c, "ch-2", "public_properties", "{}");

    expect_field(c, "ch-3", "state", "ADVISED");
    expect_field(c, "ch-3", "module_set_tag", "tag-3");
    expect_field(c, "ch-3", "registration_trust_level", "COMPLETE");
    expect_field(c, "ch-3", "alternate_id", "<null>"); /* blank means none */

    nouts = read_outcomes(c, 1, &outs);
    cr_assert_eq(nouts, 1, "one outcome, got %zu", nouts);
    outcome = outcome_of(outs, nouts, "req-create-1");
    expect_all_applied(outcome);
    json_object_put(outcome);
    it_records_free(outs, nouts);

    nlcm = read_lcm(c, 3, &lcm);
    cr_assert_eq(nlcm, 3, "one event per created handle, got %zu", nlcm);
    expect_events(c, lcm, nlcm, "ch-1", just_create, evs);
    expect_str(jstr(evs[0], "event.alternateId"), "Subnetwork=Europe,ManagedElement=X1",
               "ch-1 alternateId");
    expect_str(jstr(evs[0], "event.moduleSetTag"), "tag-1", "ch-1 moduleSetTag");
    expect_str(jstr(evs[0], "event.dataProducerIdentifier"), "prod-1", "ch-1 producer");
    cr_assert_null(jpath(evs[0], "event.oldValues"), "a create has no old values");
    /* public properties only, as a list of one map */
    expect_json(jpath(evs[0], "event.newValues"),
                "{'cmHandleState':'ADVISED','cmHandleProperties':[{'Color':'green','Size':'1'}]}",
                "ch-1 newValues");
    events_free(evs, 1);
    expect_events(c, lcm, nlcm, "ch-2", just_create, evs);
    expect_str(jstr(evs[0], "event.alternateId"), "", "ch-2 alternateId");
    expect_str(jstr(evs[0], "event.moduleSetTag"), "", "ch-2 moduleSetTag");
    expect_json(jpath(evs[0], "event.newValues"),
                "{'cmHandleState':'ADVISED','cmHandleProperties':[{}]}", "ch-2 newValues");
    events_free(evs, 1);
    expect_events(c, lcm, nlcm, "ch-3", just_create, evs);
    expect_json(jpath(evs[0], "event.newValues"),
                "{'cmHandleState':'ADVISED','cmHandleProperties':[{}]}", "ch-3 newValues");
    events_free(evs, 1);
    it_records_free(lcm, nlcm);
    case_fini(c);
}

Test(registration, create_rejects_invalid_and_taken_ids_first_claim_wins, .timeout = 120)
{
    reg_case *c = case_init("it-reg-reject");
    it_record *outs = NULL, *lcm = NULL;
    size_t nouts, nlcm;
    json_object *outcome, *evs[8];
    const failure created[] = {
        {"bad id", CODE_INVALID_ID, TEXT_INVALID_ID}, /* a space */
        {"bad/id", CODE_INVALID_ID, TEXT_INVALID_ID},
        {"dup-1", CODE_EXISTS, TEXT_EXISTS},   /* the second dup-1 of the request */
        {"ch-b", CODE_EXISTS, TEXT_EXISTS},    /* alt-a, claimed by dup-1 first */
        {"ch-old", CODE_EXISTS, TEXT_EXISTS},  /* stored by the earlier request */
        {"ch-c", CODE_EXISTS, TEXT_EXISTS},    /* alternate id = an existing handle id */
        {"ch-d", CODE_EXISTS, TEXT_EXISTS},    /* alternate id = an existing alternate id */
        {"alt-old", CODE_EXISTS, TEXT_EXISTS}, /* id = an existing alternate id */
        {"ch-f", CODE_EXISTS, TEXT_EXISTS},    /* claimed by ch-e as alternate id first */
        {"ch-h", CODE_EXISTS, TEXT_EXISTS},    /* its alternate id is ch-g's id */
        {NULL, NULL, NULL}};

    case_start(c, NULL);
    send_request(c, "req-1", DMI,
                 "{'dmiPlugin':'" DMI "','createdCmHandles':["
                 "{'cmHandle':'ch-old','alternateId':'alt-old'}]}");
    settle(c);
    send_request(c, "req-2", DMI,
                 "{'dmiPlugin':'" DMI "','createdCmHandles':["
                 "{'cmHandle':'bad id'},"
                 "{'cmHandle':'bad/id'},"
                 "{'cmHandle':'dup-1','alternateId':'alt-a'},"
                 "{'cmHandle':'dup-1'},"
                 "{'cmHandle':'ch-b','alternateId':'alt-a'},"
                 "{'cmHandle':'ch-old'},"
                 "{'cmHandle':'ch-c','alternateId':'ch-old'},"
                 "{'cmHandle':'ch-d','alternateId':'alt-old'},"
                 "{'cmHandle':'alt-old'},"
                 "{'cmHandle':'ch-e','alternateId':'ch-f'},"
                 "{'cmHandle':'ch-f'},"
                 "{'cmHandle':'ch-g'},"
                 "{'cmHandle':'ch-h','alternateId':'ch-g'},"
                 "{'cmHandle':'ch-ok'}]}");
    settle(c);

    nouts = read_outcomes(c, 2, &outs);
    cr_assert_eq(nouts, 2, "one outcome per request, got %zu", nouts);
    outcome = outcome_of(outs, nouts, "req-1");
    expect_all_applied(outcome);
    json_object_put(outcome);
    outcome = outcome_of(outs, nouts, "req-2");
    expect_failed(outcome, "failedCreatedCmHandles", created);
    expect_failed(outcome, "failedUpdatedCmHandles", no_failures);
    expect_failed(outcome, "failedRemovedCmHandles", no_failures);
    expect_failed(outcome, "failedUpgradeCmHandles", no_failures);
    json_object_put(outcome);
    it_records_free(outs, nouts);

    cr_assert_eq(handle_count(c), 5, "ch-old, dup-1, ch-e, ch-g and ch-ok");
    expect_field(c, "ch-old", "alternate_id", "alt-old");
    expect_field(c, "dup-1", "alternate_id", "alt-a"); /* the first dup-1 won */
    expect_field(c, "ch-e", "alternate_id", "ch-f");
    expect_field(c, "ch-ok", "state", "ADVISED");
    cr_assert(!handle_exists(c, "ch-b") && !handle_exists(c, "ch-f") &&
              !handle_exists(c, "bad id") && !handle_exists(c, "alt-old"));

    nlcm = read_lcm(c, 5, &lcm);
    cr_assert_eq(nlcm, 5, "a create event per stored handle only, got %zu", nlcm);
    events_free(evs, expect_events(c, lcm, nlcm, "ch-old", just_create, evs));
    events_free(evs, expect_events(c, lcm, nlcm, "dup-1", just_create, evs));
    events_free(evs, expect_events(c, lcm, nlcm, "ch-e", just_create, evs));
    events_free(evs, expect_events(c, lcm, nlcm, "ch-g", just_create, evs));
    events_free(evs, expect_events(c, lcm, nlcm, "ch-ok", just_create, evs));
    it_records_free(lcm, nlcm);
    case_fini(c);
}

/* Regression: ce_id was read into a 256-byte buffer and cut silently, so
 * the outcome of a request with a longer id was correlated with the first
 * 255 bytes of it. */
Test(registration, outcome_correlates_a_long_ce_id, .timeout = 120)
{
    reg_case *c = case_init("it-reg-longid");
    char ce_id[401];
    it_record *outs = NULL;
    size_t nouts;
    json_object *outcome;

    /* CloudEvents sets no limit on an id: a UUID is common, a longer
     * composite id is legal */
    memset(ce_id, 'r', sizeof(ce_id) - 1);
    ce_id[sizeof(ce_id) - 1] = '\0';
    case_start(c, NULL);
    send_request(c, ce_id, DMI, "{'dmiPlugin':'" DMI "','createdCmHandles':[{'cmHandle':'l-1'}]}");
    settle(c);
    cr_assert(handle_exists(c, "l-1"));
    nouts = read_outcomes(c, 1, &outs);
    cr_assert_eq(nouts, 1, "one outcome, got %zu", nouts);
    outcome = outcome_of(outs, nouts, ce_id);
    expect_all_applied(outcome);
    json_object_put(outcome);
    it_records_free(outs, nouts);
    case_fini(c);
}

/* Regression: a new alternate id was checked only against the database,
 * not against the ones earlier updates of the same request set, so the
 * second claim violated cm_handle_alternate_id and the whole request was
 * dead-lettered: no outcome, nothing applied. */
Test(registration, update_claims_of_one_new_alternate_id_first_wins, .timeout = 120)
{
    reg_case *c = case_init("it-reg-altclaim");
    it_record *outs = NULL, *dlq = NULL;
    size_t nouts, ndlq;
    json_object *outcome;
    const failure updated[] = {{"a-2", CODE_EXISTS, TEXT_EXISTS}, {NULL, NULL, NULL}};

    case_start(c, NULL);
    send_request(c, "req-1", DMI,
                 "{'dmiPlugin':'" DMI
                 "','createdCmHandles':[{'cmHandle':'a-1'},{'cmHandle':'a-2'}]}");
    settle(c);
    /* as on create, the first claim in a request wins (AlternateIdChecker) */
    send_request(
        c, "req-2", DMI,
        "{'dmiPlugin':'" DMI "','updatedCmHandles':["
        "{'cmHandle':'a-1','alternateId':'alt-x'},{'cmHandle':'a-2','alternateId':'alt-x'}]}");
    settle(c);
    ndlq = it_read_topic(c->dlq_topic, 0, 10000, &dlq);
    cr_assert_eq(ndlq, 0, "a valid request is not dead-lettered; log %s", c->log);
    it_records_free(dlq, ndlq);
    expect_field(c, "a-1", "alternate_id", "alt-x");
    expect_field(c, "a-2", "alternate_id", "<null>");
    nouts = read_outcomes(c, 2, &outs);
    cr_assert_eq(nouts, 2, "one outcome per request, got %zu", nouts);
    outcome = outcome_of(outs, nouts, "req-2");
    expect_failed(outcome, "failedCreatedCmHandles", no_failures);
    expect_failed(outcome, "failedUpdatedCmHandles", updated);
    expect_failed(outcome, "failedRemovedCmHandles", no_failures);
    expect_failed(outcome, "failedUpgradeCmHandles", no_failures);
    json_object_put(outcome);
    it_records_free(outs, nouts);
    case_fini(c);
}

Test(registration, update_merges_properties_and_keeps_alternate_id_immutable, .timeout = 120)
{
    reg_case *c = case_init("it-reg-update");
    it_record *outs = NULL, *lcm = NULL;
    size_t nouts, nlcm;
    json_object *outcome, *evs[8];
    const failure updated2[] = {{"nope", CODE_NOT_FOUND, TEXT_NOT_FOUND},
                                {"bad#id", CODE_INVALID_ID, TEXT_INVALID_ID},
                                {"u-3", CODE_EXISTS, TEXT_EXISTS}, /* alt-u2 is u-2's */
                                {NULL, NULL, NULL}};
    const failure updated3[] = {{"u-1", CODE_EXISTS, TEXT_EXISTS}, {NULL, NULL, NULL}};
    static const char *const create_update[] = {"create", "update", NULL};

    case_start(c, NULL);
    send_request(c, "req-1", DMI,
                 "{'dmiPlugin':'" DMI "','createdCmHandles':["
                 "{'cmHandle':'u-1','cmHandleProperties':{'a':'1','b':'2'},"
                 "'publicCmHandleProperties':{'p':'1','q':'2'},'dataProducerIdentifier':'prod-1'},"
                 "{'cmHandle':'u-2','alternateId':'alt-u2'},"
                 "{'cmHandle':'u-3','moduleSetTag':'tag-3'}]}");
    settle(c);
    /* only the fields sent; null deletes; the same producer is no change */
    send_request(c, "req-2", DMI,
                 "{'dmiPlugin':'" DMI "','updatedCmHandles':["
                 "{'cmHandle':'u-1','cmHandleProperties':{'a':'10','b':null,'c':3},"
                 "'publicCmHandleProperties':{'p':null,'r':'x'},'alternateId':'alt-u1',"
                 "'dataProducerIdentifier':'prod-1'},"
                 "{'cmHandle':'u-2','alternateId':'alt-u2','publicCmHandleProperties':{'z':'1'}},"
                 "{'cmHandle':'nope'},"
                 "{'cmHandle':'bad#id'},"
                 "{'cmHandle':'u-3','alternateId':'alt-u2'}]}");
    settle(c);
    expect_jsonb(c, "u-1", "additional_properties", "{'a':'10','c':'3'}");
    expect_jsonb(c, "u-1", "public_properties", "{'q':'2','r':'x'}");
    expect_field(c, "u-1", "alternate_id", "alt-u1");
    expect_field(c, "u-1", "data_producer_identifier", "prod-1");
    expect_field(c, "u-1", "state", "ADVISED");
    expect_field(c, "u-2", "alternate_id", "alt-u2");
    expect_jsonb(c, "u-2", "public_properties", "{'z':'1'}");
    expect_jsonb(c, "u-2", "additional_properties", "{}");
    expect_field(c, "u-3", "alternate_id", "<null>");

    /* an alternate id, once set, stays; a new producer is announced */
    send_request(
        c, "req-3", DMI,
        "{'dmiPlugin':'" DMI "','updatedCmHandles':["
        "{'cmHandle':'u-1','alternateId':'alt-other','publicCmHandleProperties':{'q':'9'}},"
        "{'cmHandle':'u-3','dataProducerIdentifier':'prod-3'}]}");
    settle(c);
    expect_field(c, "u-1", "alternate_id", "alt-u1");
    expect_jsonb(c, "u-1", "public_properties", "{'q':'2','r':'x'}"); /* rejected whole */
    expect_field(c, "u-3", "data_producer_identifier", "prod-3");
    expect_field(c, "u-3", "module_set_tag", "tag-3");
    cr_assert_eq(handle_count(c), 3);

    nouts = read_outcomes(c, 3, &outs);
    cr_assert_eq(nouts, 3, "one outcome per request, got %zu", nouts);
    outcome = outcome_of(outs, nouts, "req-1");
    expect_all_applied(outcome);
    json_object_put(outcome);
    outcome = outcome_of(outs, nouts, "req-2");
    expect_failed(outcome, "failedCreatedCmHandles", no_failures);
    expect_failed(outcome, "failedUpdatedCmHandles", updated2);
    expect_failed(outcome, "failedRemovedCmHandles", no_failures);
    expect_failed(outcome, "failedUpgradeCmHandles", no_failures);
    json_object_put(outcome);
    outcome = outcome_of(outs, nouts, "req-3");
    expect_failed(outcome, "failedCreatedCmHandles", no_failures);
    expect_failed(outcome, "failedUpdatedCmHandles", updated3);
    expect_failed(outcome, "failedRemovedCmHandles", no_failures);
    expect_failed(outcome, "failedUpgradeCmHandles", no_failures);
    json_object_put(outcome);
    it_records_free(outs, nouts);

    /* three creates and the one producer change: property and alternate
     * id changes are not lifecycle events */
    nlcm = read_lcm(c, 4, &lcm);
    cr_assert_eq(nlcm, 4, "3 creates + 1 update, got %zu", nlcm);
    events_free(evs, expect_events(c, lcm, nlcm, "u-1", just_create, evs));
    events_free(evs, expect_events(c, lcm, nlcm, "u-2", just_create, evs));
    expect_events(c, lcm, nlcm, "u-3", create_update, evs);
    expect_str(jstr(evs[1], "event.dataProducerIdentifier"), "prod-3", "u-3 new producer");
    expect_str(jstr(evs[1], "event.moduleSetTag"), "tag-3", "u-3 moduleSetTag");
    expect_str(jstr(evs[1], "event.alternateId"), "", "u-3 alternateId");
    events_free(evs, 2);
    it_records_free(lcm, nlcm);
    case_fini(c);
}

Test(registration, data_job_services_are_stored_at_create_and_kept_on_update, .timeout = 120)
{
    reg_case *c = case_init("it-reg-jobs");
    it_record *outs = NULL;
    size_t nouts;
    json_object *outcome;

    case_start(c, NULL);
    send_request(c, "req-1", DMI,
                 "{'dmiPlugin':'" DMI "','dmiDatajobsReadPlugin':' http://jobs-r:8080 ',"
                 "'dmiDatajobsWritePlugin':'http://jobs-w:8080',"
                 "'createdCmHandles':[{'cmHandle':'j-1'},{'cmHandle':'j-2'}]}");
    send_request(c, "req-2", DMI,
                 "{'dmiPlugin':'" DMI "','dmiDatajobsWritePlugin':'http://jobs-w2:8080',"
                 "'createdCmHandles':[{'cmHandle':'j-3'}]}");
    send_request(c, "req-3", DMI,
                 "{'dmiPlugin':'" DMI "','createdCmHandles':[{'cmHandle':'j-4'}]}");
    settle(c);
    expect_field(c, "j-1", "dmi_datajobs_read_service", "http://jobs-r:8080");
    expect_field(c, "j-1", "dmi_datajobs_write_service", "http://jobs-w:8080");
    expect_field(c, "j-2", "dmi_datajobs_read_service", "http://jobs-r:8080");
    expect_field(c, "j-2", "dmi_datajobs_write_service", "http://jobs-w:8080");
    /* stored as sent: '' when not sent, never dmiPlugin (resolved at use) */
    expect_field(c, "j-3", "dmi_datajobs_read_service", "");
    expect_field(c, "j-3", "dmi_datajobs_write_service", "http://jobs-w2:8080");
    expect_field(c, "j-4", "dmi_datajobs_read_service", "");
    expect_field(c, "j-4", "dmi_datajobs_write_service", "");
    expect_field(c, "j-4", "dmi_service_name", DMI);

    /* an update takes the handle's own fields only (as NCMP): the
     * request's services go to its creates */
    send_request(c, "req-4", DMI,
                 "{'dmiPlugin':'" DMI "','dmiDatajobsReadPlugin':'http://jobs-r9:8080',"
                 "'dmiDatajobsWritePlugin':'http://jobs-w9:8080',"
                 "'createdCmHandles':[{'cmHandle':'j-5'}],"
                 "'updatedCmHandles':[{'cmHandle':'j-1','publicCmHandleProperties':{'p':'1'}},"
                 "{'cmHandle':'j-4','dataProducerIdentifier':'prod-4'}]}");
    settle(c);
    expect_jsonb(c, "j-1", "public_properties", "{'p':'1'}");
    expect_field(c, "j-1", "dmi_datajobs_read_service", "http://jobs-r:8080");
    expect_field(c, "j-1", "dmi_datajobs_write_service", "http://jobs-w:8080");
    expect_field(c, "j-4", "data_producer_identifier", "prod-4");
    expect_field(c, "j-4", "dmi_datajobs_read_service", "");
    expect_field(c, "j-4", "dmi_datajobs_write_service", "");
    expect_field(c, "j-5", "dmi_datajobs_read_service", "http://jobs-r9:8080");
    expect_field(c, "j-5", "dmi_datajobs_write_service", "http://jobs-w9:8080");

    nouts = read_outcomes(c, 4, &outs);
    cr_assert_eq(nouts, 4, "one outcome per request, got %zu", nouts);
    for (int i = 1; i <= 4; i++) {
        char ce_id[16];
        snprintf(ce_id, sizeof(ce_id), "req-%d", i);
        outcome = outcome_of(outs, nouts, ce_id);
        expect_all_applied(outcome);
        json_object_put(outcome);
    }
    it_records_free(outs, nouts);
    case_fini(c);
}

Test(registration, remove_announces_deleting_then_deleted_before_creates, .timeout = 120)
{
    reg_case *c = case_init("it-reg-remove");
    it_record *outs = NULL, *lcm = NULL;
    size_t nouts, nlcm;
    json_object *outcome, *evs[8];
    const failure removed[] = {{"nope", CODE_NOT_FOUND, TEXT_NOT_FOUND},
                               {"bad id", CODE_INVALID_ID, TEXT_INVALID_ID},
                               {NULL, NULL, NULL}};
    static const char *const removed_events[] = {"create", "update", "delete", NULL};
    static const char *const recreated_events[] = {"create", "update", "delete", "create", NULL};

    case_start(c, NULL);
    send_request(c, "req-1", DMI,
                 "{'dmiPlugin':'" DMI "','createdCmHandles':["
                 "{'cmHandle':'r-1','alternateId':'alt-r1','moduleSetTag':'t1',"
                 "'dataProducerIdentifier':'p1'},"
                 "{'cmHandle':'r-2'},"
                 "{'cmHandle':'x-1','publicCmHandleProperties':{'v':'old'}}]}");
    settle(c);
    send_request(c, "req-2", DMI,
                 "{'dmiPlugin':'" DMI "','removedCmHandles':['r-1','nope','r-2','bad id']}");
    settle(c);
    cr_assert(!handle_exists(c, "r-1") && !handle_exists(c, "r-2"), "removed rows are gone");
    cr_assert(handle_exists(c, "x-1"));
    /* removed is processed before created: x-1 goes, then comes back */
    send_request(c, "req-3", DMI,
                 "{'dmiPlugin':'" DMI "','removedCmHandles':['x-1'],"
                 "'createdCmHandles':[{'cmHandle':'x-1','publicCmHandleProperties':{'v':'new'}}]}");
    settle(c);
    cr_assert_eq(handle_count(c), 1);
    expect_field(c, "x-1", "state", "ADVISED");
    expect_jsonb(c, "x-1", "public_properties", "{'v':'new'}");

    nouts = read_outcomes(c, 3, &outs);
    cr_assert_eq(nouts, 3, "one outcome per request, got %zu", nouts);
    outcome = outcome_of(outs, nouts, "req-2");
    expect_failed(outcome, "failedCreatedCmHandles", no_failures);
    expect_failed(outcome, "failedUpdatedCmHandles", no_failures);
    expect_failed(outcome, "failedRemovedCmHandles", removed);
    expect_failed(outcome, "failedUpgradeCmHandles", no_failures);
    json_object_put(outcome);
    outcome = outcome_of(outs, nouts, "req-3");
    expect_all_applied(outcome);
    json_object_put(outcome);
    it_records_free(outs, nouts);

    nlcm = read_lcm(c, 10, &lcm);
    cr_assert_eq(nlcm, 10, "3 creates, 2 x (DELETING, DELETED), x-1 again; got %zu", nlcm);
    expect_events(c, lcm, nlcm, "r-1", removed_events, evs);
    expect_json(jpath(evs[1], "event.oldValues"), "{'cmHandleState':'ADVISED'}", "r-1 old");
    expect_json(jpath(evs[1], "event.newValues"), "{'cmHandleState':'DELETING'}", "r-1 new");
    for (int i = 1; i < 3; i++) {
        expect_str(jstr(evs[i], "event.alternateId"), "alt-r1", "r-1 alternateId");
        expect_str(jstr(evs[i], "event.moduleSetTag"), "t1", "r-1 moduleSetTag");
        expect_str(jstr(evs[i], "event.dataProducerIdentifier"), "p1", "r-1 producer");
    }
    cr_assert(!jpath(evs[2], "event.oldValues") && !jpath(evs[2], "event.newValues"),
              "a delete has no values");
    events_free(evs, 3);
    events_free(evs, expect_events(c, lcm, nlcm, "r-2", removed_events, evs));
    expect_events(c, lcm, nlcm, "x-1", recreated_events, evs);
    expect_json(jpath(evs[3], "event.newValues"),
                "{'cmHandleState':'ADVISED','cmHandleProperties':[{'v':'new'}]}", "x-1 again");
    events_free(evs, 4);
    it_records_free(lcm, nlcm);
    case_fini(c);
}

/* lcm.event-schema-version=v2: the create with every key, a new producer
 * as NCMP's CmHandleUpdateSpec has it; and an event keeps the format it
 * was written in: written as v2 while no relay runs, it is published as
 * v2 (value and eventSchema header) by a relay of a process set to v1,
 * whose own events are v1. */
Test(registration, lcm_v2_by_setting_and_each_event_keeps_its_format, .timeout = 120)
{
    static const char *const v2[] = {"--lcm.event-schema-version=v2", NULL};
    static const char *const v2_no_relay[] = {"--lcm.event-schema-version=v2",
                                              "--roles=registration", NULL};
    static const char *const events_v2[] = {"create", "update", "update", "delete", NULL};
    reg_case *c = case_init("it-reg-lcm-v2");
    it_record *lcm = NULL;
    json_object *evs[8];
    size_t nlcm;

    case_start(c, v2);
    send_request(
        c, "req-1", DMI,
        "{'dmiPlugin':'" DMI "','createdCmHandles':["
        "{'cmHandle':'v-1','alternateId':'fdn1','moduleSetTag':'tag1',"
        "'dataProducerIdentifier':'prod1','publicCmHandleProperties':{'color':'green'}}]}");
    settle(c);
    send_request(c, "req-2", DMI,
                 "{'dmiPlugin':'" DMI "','updatedCmHandles':["
                 "{'cmHandle':'v-1','dataProducerIdentifier':'my-data-producer-id'}]}");
    settle(c);
    case_stop(c);

    /* written as v2 and left in the outbox: no relay runs */
    case_start(c, v2_no_relay);
    send_request(c, "req-3", DMI, "{'dmiPlugin':'" DMI "','removedCmHandles':['v-1']}");
    cr_assert_eq(it_wait_long(c->db, "SELECT count(*) FROM lcm_outbox", NULL, 2, WAIT_MS), 2,
                 "DELETING and DELETED wait in the outbox; log %s", c->log);
    cr_assert_eq(it_query_long(c->db,
                               "SELECT count(*) FROM lcm_outbox WHERE event_schema = "
                               "'org.onap.ncmp:cmhandle-lcm-event.v2'",
                               0, NULL),
                 2);
    case_stop(c);
    /* a v1 process relays them, then writes v1 */
    case_start(c, NULL);
    settle(c);
    send_request(c, "req-4", DMI,
                 "{'dmiPlugin':'" DMI
                 "','createdCmHandles':[{'cmHandle':'v-1','moduleSetTag':'t'}]}");
    settle(c);

    nlcm = read_lcm(c, 5, &lcm);
    cr_assert_eq(nlcm, 5, "create, producer, DELETING, DELETED, create; got %zu", nlcm);
    /* lcm_checked: each against the schema of its eventSchema, its
     * headers (eventSchema included) against its value */
    cr_assert_eq(events_of(c, lcm, nlcm, "v-1", evs, 8), 5);
    for (size_t i = 0; i < 4; i++) {
        cr_assert_str_eq(lcm_kind(evs[i]), events_v2[i]);
        expect_str(jstr(evs[i], "eventSchema"), "org.onap.ncmp:cmhandle-lcm-event.v2",
                   "eventSchema");
        cr_assert_null(jpath(evs[i], "event.moduleSetTag"), "v2 has no moduleSetTag there");
        expect_str(jstr(evs[i], "event.alternateId"), "fdn1", "alternateId");
    }
    cr_assert_null(jpath(evs[0], "event.oldValues"));
    expect_json(jpath(evs[0], "event.newValues"),
                "{'dataSyncEnabled':null,'cmHandleState':'ADVISED','alternateId':'fdn1',"
                "'moduleSetTag':'tag1','dataProducerIdentifier':'prod1',"
                "'cmHandleProperties':{'color':'green'}}",
                "v2 create");
    expect_json(jpath(evs[1], "event.oldValues"), "{'dataProducerIdentifier':'prod1'}",
                "v2 producer old");
    expect_json(jpath(evs[1], "event.newValues"),
                "{'dataProducerIdentifier':'my-data-producer-id'}", "v2 producer new");
    expect_json(jpath(evs[2], "event.oldValues"), "{'cmHandleState':'ADVISED'}", "v2 DELETING old");
    expect_json(jpath(evs[2], "event.newValues"), "{'cmHandleState':'DELETING'}", "v2 DELETING");
    cr_assert(!jpath(evs[3], "event.oldValues") && !jpath(evs[3], "event.newValues"));
    expect_str(jstr(evs[4], "eventSchema"), "org.onap.ncmp:cmhandle-lcm-event", "v1 again");
    expect_json(jpath(evs[4], "event.newValues"),
                "{'cmHandleState':'ADVISED','cmHandleProperties':[{}]}", "v1 create");
    events_free(evs, 5);
    it_records_free(lcm, nlcm);
    case_fini(c);
}

Test(registration, upgrade_locks_ready_handles_for_module_upgrade, .timeout = 120)
{
    reg_case *c = case_init("it-reg-upgrade");
    it_record *outs = NULL, *lcm = NULL;
    size_t nouts, nlcm;
    json_object *outcome, *evs[8];
    const failure upgraded[] = {{"g-adv", CODE_NOT_READY, TEXT_NOT_READY},
                                {"nope", CODE_NOT_FOUND, TEXT_NOT_FOUND},
                                {"bad id", CODE_INVALID_ID, TEXT_INVALID_ID},
                                {NULL, NULL, NULL}};
    static const char *const create_update[] = {"create", "update", NULL};
    /* this test checks the plain-string header option; the others NCMP's
     * Java-serialised default */
    const char *const extra[] = {"--lcm.java-serialized-headers=false", NULL};

    c->java_headers = 0;
    case_start(c, extra);
    send_request(
        c, "req-1", DMI,
        "{'dmiPlugin':'" DMI "','createdCmHandles':["
        "{'cmHandle':'g-1','moduleSetTag':'v1'},{'cmHandle':'g-2','moduleSetTag':'v1'},"
        "{'cmHandle':'g-3','moduleSetTag':'v2'},{'cmHandle':'g-adv','moduleSetTag':'v1'}]}");
    settle(c);
    /* module sync does not exist yet: make them READY by hand */
    cr_assert_eq(it_query_long(c->db,
                               "WITH u AS (UPDATE cm_handle SET state = 'READY' "
                               "WHERE id IN ('g-1', 'g-2', 'g-3') RETURNING 1) "
                               "SELECT count(*) FROM u",
                               0, NULL),
                 3);
    send_request(c, "req-2", DMI,
                 "{'dmiPlugin':'" DMI "','upgradedCmHandles':"
                 "{'cmHandles':['g-1','g-adv','nope','g-3','bad id'],'moduleSetTag':'v2'}}");
    settle(c);
    expect_field(c, "g-1", "state", "LOCKED");
    expect_field(c, "g-1", "lock_reason", "MODULE_UPGRADE");
    expect_field(c, "g-1", "lock_details", "Upgrade to ModuleSetTag: v2");
    expect_field(c, "g-1", "upgrade_module_set_tag", "v2");
    expect_field(c, "g-1", "module_set_tag", "v1"); /* module sync moves it */
    expect_field(c, "g-3", "state", "READY");       /* already on v2: nothing to do */
    expect_field(c, "g-3", "lock_reason", "<null>");
    expect_field(c, "g-adv", "state", "ADVISED");
    /* no tag: an upgrade all the same */
    send_request(c, "req-3", DMI,
                 "{'dmiPlugin':'" DMI "','upgradedCmHandles':{'cmHandles':['g-2']}}");
    settle(c);
    expect_field(c, "g-2", "state", "LOCKED");
    expect_field(c, "g-2", "lock_reason", "MODULE_UPGRADE");
    expect_field(c, "g-2", "lock_details", "Upgrade to ModuleSetTag: ");

    nouts = read_outcomes(c, 3, &outs);
    cr_assert_eq(nouts, 3, "one outcome per request, got %zu", nouts);
    outcome = outcome_of(outs, nouts, "req-2");
    expect_failed(outcome, "failedCreatedCmHandles", no_failures);
    expect_failed(outcome, "failedUpdatedCmHandles", no_failures);
    expect_failed(outcome, "failedRemovedCmHandles", no_failures);
    expect_failed(outcome, "failedUpgradeCmHandles", upgraded);
    json_object_put(outcome);
    outcome = outcome_of(outs, nouts, "req-3");
    expect_all_applied(outcome);
    json_object_put(outcome);
    it_records_free(outs, nouts);

    nlcm = read_lcm(c, 6, &lcm);
    cr_assert_eq(nlcm, 6, "4 creates + 2 upgrades, got %zu", nlcm);
    expect_events(c, lcm, nlcm, "g-1", create_update, evs);
    expect_json(jpath(evs[1], "event.oldValues"), "{'cmHandleState':'READY'}", "g-1 old");
    expect_json(jpath(evs[1], "event.newValues"), "{'cmHandleState':'LOCKED'}", "g-1 new");
    expect_str(jstr(evs[1], "event.moduleSetTag"), "v1", "g-1 moduleSetTag");
    events_free(evs, 2);
    expect_events(c, lcm, nlcm, "g-2", create_update, evs);
    expect_json(jpath(evs[1], "event.newValues"), "{'cmHandleState':'LOCKED'}", "g-2 new");
    events_free(evs, 2);
    events_free(evs, expect_events(c, lcm, nlcm, "g-3", just_create, evs));
    events_free(evs, expect_events(c, lcm, nlcm, "g-adv", just_create, evs));
    it_records_free(lcm, nlcm);
    case_fini(c);
}

Test(registration, invalid_dmi_url_rejects_the_whole_request, .timeout = 120)
{
    reg_case *c = case_init("it-reg-url");
    it_record *outs = NULL, *lcm = NULL;
    size_t nouts, nlcm;
    json_object *outcome, *evs[8];
    static const struct {
        const char *ce_id, *field;
    } bad[] = {{"req-ftp", "dmiPlugin"},
               {"req-data", "dmiDataPlugin"},
               {"req-model", "dmiModelPlugin"},
               {"req-jobs-read", "dmiDatajobsReadPlugin"},
               {"req-jobs-write", "dmiDatajobsWritePlugin"}};

    case_start(c, NULL);
    send_request(c, "req-ok", DMI,
                 "{'dmiPlugin':'" DMI "','createdCmHandles':[{'cmHandle':'keep-1'}]}");
    settle(c);
    /* each would remove keep-1 and create a handle: none of it happens */
    send_request(c, "req-ftp", "ftp://x",
                 "{'dmiPlugin':'ftp://x','createdCmHandles':[{'cmHandle':'new-1'}],"
                 "'removedCmHandles':['keep-1']}");
    send_request(c, "req-data", DMI,
                 "{'dmiPlugin':'" DMI "','dmiDataPlugin':'not a url',"
                 "'createdCmHandles':[{'cmHandle':'new-2'}],'removedCmHandles':['keep-1']}");
    send_request(
        c, "req-model", DMI,
        "{'dmiPlugin':'" DMI "','dmiModelPlugin':'http://',"
        "'createdCmHandles':[{'cmHandle':'new-3'}],'removedCmHandles':['keep-1'],"
        "'updatedCmHandles':[{'cmHandle':'keep-1','publicCmHandleProperties':{'x':'1'}}]}");
    send_request(c, "req-jobs-read", DMI,
                 "{'dmiPlugin':'" DMI "','dmiDatajobsReadPlugin':'jobs-r',"
                 "'createdCmHandles':[{'cmHandle':'new-4'}],'removedCmHandles':['keep-1']}");
    send_request(c, "req-jobs-write", DMI,
                 "{'dmiPlugin':'" DMI "','dmiDatajobsReadPlugin':'http://jobs-r:8080',"
                 "'dmiDatajobsWritePlugin':'ftp://jobs-w',"
                 "'createdCmHandles':[{'cmHandle':'new-5'}],'removedCmHandles':['keep-1']}");
    settle(c);
    cr_assert_eq(handle_count(c), 1, "nothing of the rejected requests applied");
    cr_assert(handle_exists(c, "keep-1"));
    expect_jsonb(c, "keep-1", "public_properties", "{}");

    nouts = read_outcomes(c, 6, &outs);
    cr_assert_eq(nouts, 6, "one outcome per request, got %zu", nouts);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char message[128];
        json_object *status;
        outcome = outcome_of(outs, nouts, bad[i].ce_id);
        for (size_t k = 0; k < 4; k++)
            expect_failed(outcome, outcome_lists[k], no_failures);
        status = jpath(outcome, "status");
        cr_assert(status && json_object_is_type(status, json_type_int) &&
                      json_object_get_int(status) == 400,
                  "status 400: %s", json_object_to_json_string(outcome));
        snprintf(message, sizeof(message), "Invalid DMI plugin URL for %s", bad[i].field);
        expect_str(jstr(outcome, "message"), message, bad[i].ce_id);
        json_object_put(outcome);
    }
    it_records_free(outs, nouts);

    nlcm = read_lcm(c, 1, &lcm);
    cr_assert_eq(nlcm, 1, "only keep-1's create, got %zu", nlcm);
    events_free(evs, expect_events(c, lcm, nlcm, "keep-1", just_create, evs));
    it_records_free(lcm, nlcm);
    case_fini(c);
}

/* --- bad input ----------------------------------------------------------- */

typedef struct bad_input {
    const char *ce_id;     /* NULL: no ce_id header */
    const char *body;      /* raw bytes */
    size_t len;            /* 0: strlen(body) */
    const char *reason[3]; /* what dlq_reason must say (NULL-terminated) */
    /* the dead letter may carry only the start of the value (a record too
     * large to accept is too large to send on whole) */
    int may_cut;
} bad_input;

/* Publish the bad records, then a good request on the same partition
 * (same key); the good one must be applied, and each bad one must be on
 * the dead-letter topic with its reason, its original key, value and
 * headers. */
static void expect_dead_letters(const char *name, const bad_input *bad, size_t nbad,
                                const char *const *extra)
{
    reg_case *c = case_init(name);
    it_outgoing recs[8];
    const char *headers[8][10];
    const char *good =
        "{\"dmiPlugin\":\"" DMI "\",\"createdCmHandles\":[{\"cmHandle\":\"good-1\"}]}";
    /* clang-format off */
    const char *good_headers[] = {"ce_specversion", "1.0",
                                  "ce_id", "req-good",
                                  "ce_type", REQUEST_TYPE,
                                  NULL};
    /* clang-format on */
    it_record *outs = NULL, *dlq = NULL, *lcm = NULL;
    size_t nouts, ndlq, nlcm;
    long offsets[8];
    json_object *outcome, *evs[8];

    cr_assert_lt(nbad, 7);
    for (size_t i = 0; i < nbad; i++) {
        size_t h = 0;
        headers[i][h++] = "ce_specversion";
        headers[i][h++] = "1.0";
        if (bad[i].ce_id) {
            headers[i][h++] = "ce_id";
            headers[i][h++] = bad[i].ce_id;
        }
        headers[i][h++] = "ce_type";
        headers[i][h++] = REQUEST_TYPE;
        headers[i][h++] = "x-test-marker";
        headers[i][h++] = name;
        headers[i][h] = NULL;
        recs[i].key = DMI;
        recs[i].value = bad[i].body;
        recs[i].len = bad[i].len ? bad[i].len : strlen(bad[i].body);
        recs[i].headers = headers[i];
    }
    recs[nbad].key = DMI;
    recs[nbad].value = good;
    recs[nbad].len = strlen(good);
    recs[nbad].headers = good_headers;

    case_start(c, extra);
    it_publish(c->topic, recs, nbad + 1);
    c->published += (long)nbad + 1;
    settle(c);

    cr_assert_eq(handle_count(c), 1, "only the good request's handle");
    cr_assert(handle_exists(c, "good-1"), "the partition moved on past the bad records");
    nouts = read_outcomes(c, 1, &outs);
    cr_assert_eq(nouts, 1, "an outcome for the good request only, got %zu", nouts);
    outcome = outcome_of(outs, nouts, "req-good");
    expect_all_applied(outcome);
    json_object_put(outcome);
    it_records_free(outs, nouts);

    ndlq = it_read_topic(c->dlq_topic, nbad, WAIT_MS, &dlq);
    cr_assert_leq(ndlq, 8);
    cr_assert_eq(ndlq, nbad, "%zu dead letters, expected %zu; log %s", ndlq, nbad, c->log);
    for (size_t i = 0; i < ndlq; i++) {
        char buf[64];
        cr_assert_not_null(it_record_header(&dlq[i], "dlq_offset", buf, sizeof(buf)),
                           "a dead letter names its source offset");
        offsets[i] = atol(buf);
    }
    for (size_t i = 0; i < ndlq; i++) {
        char buf[1024];
        const it_record *r = &dlq[i];
        size_t k = 0;
        const char *reason = it_record_header(r, "dlq_reason", buf, sizeof(buf));
        /* one source partition: the source offsets give the publish order */
        for (size_t j = 0; j < ndlq; j++)
            if (offsets[j] < offsets[i])
                k++;
        cr_assert_not_null(reason, "a dead letter says why");
        for (size_t m = 0; bad[k].reason[m]; m++)
            cr_assert(strstr(reason, bad[k].reason[m]), "dlq_reason '%s' should mention '%s'",
                      reason, bad[k].reason[m]);
        expect_str(it_record_header(r, "dlq_topic", buf, sizeof(buf)), c->topic, "dlq_topic");
        cr_assert_not_null(it_record_header(r, "dlq_partition", buf, sizeof(buf)));
        cr_assert_eq(
            conformance_check_headers(CONFORMANCE_DEAD_LETTER, r->headers, buf, sizeof(buf)), 0,
            "%s", buf);
        /* the original record, headers included */
        expect_str(r->key, DMI, "dead letter key");
        if (bad[k].may_cut)
            cr_assert_leq(r->len, recs[k].len);
        else
            cr_assert_eq(r->len, recs[k].len, "dead letter value of %zu bytes, expected %zu",
                         r->len, recs[k].len);
        cr_assert(memcmp(r->value, recs[k].value, r->len) == 0, "the original value");
        expect_str(it_record_header(r, "ce_type", buf, sizeof(buf)), REQUEST_TYPE,
                   "original ce_type");
        expect_str(it_record_header(r, "x-test-marker", buf, sizeof(buf)), name, "original header");
        if (bad[k].ce_id)
            expect_str(it_record_header(r, "ce_id", buf, sizeof(buf)), bad[k].ce_id,
                       "original ce_id");
        else
            cr_assert_null(it_record_header(r, "ce_id", buf, sizeof(buf)));
    }
    it_records_free(dlq, ndlq);

    nlcm = read_lcm(c, 1, &lcm);
    cr_assert_eq(nlcm, 1, "only good-1's create, got %zu", nlcm);
    events_free(evs, expect_events(c, lcm, nlcm, "good-1", just_create, evs));
    it_records_free(lcm, nlcm);
    cr_assert(it_file_contains(c->log, "rejected record topic="), "the log names the record");
    case_fini(c);
}

Test(registration, dead_letters_undecodable_json, .timeout = 120)
{
    const bad_input bad[] = {{
        .ce_id = "req-bad-json",
        .body = "{\"dmiPlugin\":\"" DMI "\",\"createdCmHandles\":[{\"cmHandle\":\"x\"}",
        .reason = {"invalid JSON", NULL},
    }};
    expect_dead_letters("it-reg-dlq-json", bad, 1, NULL);
}

Test(registration, dead_letters_wrong_types, .timeout = 120)
{
    const bad_input bad[] = {
        {
            .ce_id = "req-not-array",
            .body = "{\"dmiPlugin\":\"" DMI "\",\"createdCmHandles\":{\"cmHandle\":\"x-1\"}}",
            .reason = {"createdCmHandles", "must be an array", NULL},
        },
        {
            .ce_id = "req-props-string",
            .body = "{\"dmiPlugin\":\"" DMI "\",\"createdCmHandles\":[{\"cmHandle\":\"x-2\","
                    "\"cmHandleProperties\":\"a=b\"}]}",
            .reason = {"cmHandleProperties", "must be an object", NULL},
        },
    };
    expect_dead_letters("it-reg-dlq-types", bad, 2, NULL);
}

Test(registration, dead_letters_a_handle_without_cm_handle, .timeout = 120)
{
    const bad_input bad[] = {{
        .ce_id = "req-no-id",
        .body = "{\"dmiPlugin\":\"" DMI "\",\"createdCmHandles\":[{\"cmHandle\":\"x-1\"},"
                "{\"publicCmHandleProperties\":{\"a\":\"1\"}}]}",
        .reason = {"createdCmHandles[1]", "without cmHandle", NULL},
    }};
    expect_dead_letters("it-reg-dlq-noid", bad, 1, NULL);
}

Test(registration, dead_letters_invalid_utf8, .timeout = 120)
{
    const bad_input bad[] = {{
        .ce_id = "req-utf8",
        .body = "{\"dmiPlugin\":\"" DMI "\",\"createdCmHandles\":[{\"cmHandle\":\"x-\xff\xfe\"}]}",
        .reason = {"UTF-8", NULL},
    }};
    expect_dead_letters("it-reg-dlq-utf8", bad, 1, NULL);
}

Test(registration, dead_letters_a_request_without_ce_id, .timeout = 120)
{
    /* a valid request otherwise: x-1 must not be created */
    const bad_input bad[] = {{
        .ce_id = NULL,
        .body = "{\"dmiPlugin\":\"" DMI "\",\"createdCmHandles\":[{\"cmHandle\":\"x-1\"}]}",
        .reason = {"ce_id", NULL},
    }};
    expect_dead_letters("it-reg-dlq-noceid", bad, 1, NULL);
}

/* Regression: a record larger than kafka.max-message-bytes was
 * dead-lettered whole, but the producer's limit is the same, so the dead
 * letter failed, the batch was retried for ever and the partition never
 * moved on. It is now dead-lettered without its value. */
Test(registration, dead_letters_an_oversize_request, .timeout = 120)
{
    ncmp_buf body = NCMP_BUF_INIT;
    const char *const extra[] = {"--kafka.max-message-bytes=4096", NULL};
    bad_input bad[] = {{
        .ce_id = "req-big",
        .reason = {"kafka.max-message-bytes", NULL},
        .may_cut = 1,
    }};

    /* a valid request of 5,000 bytes */
    ncmp_buf_append_str(&body, "{\"dmiPlugin\":\"" DMI "\",\"createdCmHandles\":[{\"cmHandle\":"
                               "\"big-1\",\"publicCmHandleProperties\":{\"pad\":\"");
    while (body.len < 5000 - 5)
        ncmp_buf_append_char(&body, 'x');
    ncmp_buf_append_str(&body, "\"}}]}");
    cr_assert_eq(body.len, 5000);
    bad[0].body = body.data;
    bad[0].len = body.len;
    expect_dead_letters("it-reg-dlq-big", bad, 1, extra);
    ncmp_buf_free(&body);
}

/* --- kill -9 ------------------------------------------------------------- */

#define CRASH_REQUESTS 10
#define CRASH_HANDLES  200

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Publish CRASH_REQUESTS requests of CRASH_HANDLES new handles each, run
 * ncmpd until it kills itself at `point` (the second time it gets there),
 * restart it, and check the effect is exactly once: every handle stored
 * once, an outcome for every request and none with failures, one create
 * event per handle. Small registration and relay batches make several
 * transactions and relay rounds, so the point is reached twice. */
static void crash_and_recover(const char *point)
{
    reg_case *c = case_init("it-reg-crash");
    ncmp_buf bodies[CRASH_REQUESTS];
    char ce_ids[CRASH_REQUESTS][32], keys[CRASH_REQUESTS][64], fault[128];
    const char *headers[CRASH_REQUESTS][7];
    it_outgoing recs[CRASH_REQUESTS];
    const char *const after[] = {"--registration.batch-size=2", "--lcm.relay-batch-size=150", NULL};
    const char *before[4] = {after[0], after[1], fault, NULL};
    it_record *outs = NULL, *lcm = NULL;
    size_t nouts, nlcm, matched, total = CRASH_REQUESTS * CRASH_HANDLES;
    const char **want, **got;
    int status;
    long at_crash;

    for (int k = 0; k < CRASH_REQUESTS; k++) {
        /* three DMIs: three keys, spread over the partitions */
        snprintf(keys[k], sizeof(keys[k]), "http://dmi-%d:8080", k % 3);
        snprintf(ce_ids[k], sizeof(ce_ids[k]), "req-%d", k);
        memset(&bodies[k], 0, sizeof(bodies[k]));
        ncmp_buf_appendf(&bodies[k], "{\"dmiPlugin\":\"%s\",\"createdCmHandles\":[", keys[k]);
        for (int i = 0; i < CRASH_HANDLES; i++)
            ncmp_buf_appendf(&bodies[k],
                             "%s{\"cmHandle\":\"h-%d-%d\",\"alternateId\":\"alt-%d-%d\","
                             "\"publicCmHandleProperties\":{\"request\":\"%d\"}}",
                             i ? "," : "", k, i, k, i, k);
        ncmp_buf_append_str(&bodies[k], "]}");
        headers[k][0] = "ce_specversion";
        headers[k][1] = "1.0";
        headers[k][2] = "ce_id";
        headers[k][3] = ce_ids[k];
        headers[k][4] = "ce_type";
        headers[k][5] = REQUEST_TYPE;
        headers[k][6] = NULL;
        recs[k].key = keys[k];
        recs[k].value = bodies[k].data;
        recs[k].len = bodies[k].len;
        recs[k].headers = headers[k];
    }
    it_publish(c->topic, recs, CRASH_REQUESTS);
    c->published = CRASH_REQUESTS;
    for (int k = 0; k < CRASH_REQUESTS; k++)
        ncmp_buf_free(&bodies[k]);

    snprintf(fault, sizeof(fault), "--debug.fault=%s:2", point);
    case_spawn(c, before, 0);
    status = it_wait_exit(c->pid, WAIT_MS);
    if (status == -1) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
    }
    c->pid = 0;
    cr_assert(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "ncmpd should have been killed at %s (status %d); log %s", point, status, c->log);
    cr_assert(it_file_contains(c->log, "debug.fault point reached"));
    at_crash = handle_count(c);
    if (strncmp(point, "registration.", 13) == 0)
        cr_assert_lt(at_crash, (long)total, "the crash came before the end");
    if (strcmp(point, "lcm-relay.after-publish") == 0)
        cr_assert_gt(it_query_long(c->db, "SELECT count(*) FROM lcm_outbox", 0, NULL), 0,
                     "the round published before the crash is still in the outbox");

    case_start(c, after);
    settle(c);
    cr_assert_eq(handle_count(c), (long)total, "every handle stored (%ld before the restart)",
                 at_crash);
    cr_assert_eq(it_query_long(c->db,
                               "SELECT count(*) FROM cm_handle WHERE state = 'ADVISED' AND "
                               "alternate_id = 'alt-' || substr(id, 3) AND "
                               "public_properties->>'request' = split_part(id, '-', 2)",
                               0, NULL),
                 (long)total, "every handle stored whole");

    /* an outcome may repeat (a crash between its delivery and the commit
     * sends it again), but every request has one, and none failed */
    nouts = read_outcomes(c, CRASH_REQUESTS, &outs);
    cr_assert_geq(nouts, CRASH_REQUESTS, "%zu outcomes", nouts);
    matched = 0;
    for (int k = 0; k < CRASH_REQUESTS; k++) {
        int seen = 0;
        for (size_t i = 0; i < nouts; i++) {
            char buf[64];
            const char *corr = outcome_request(&outs[i], buf, sizeof(buf));
            if (!corr || strcmp(corr, ce_ids[k]) != 0)
                continue;
            json_object *o = json_tokener_parse(outs[i].value);
            cr_assert_not_null(o);
            expect_all_applied(o);
            json_object_put(o);
            seen++;
        }
        cr_assert_geq(seen, 1, "an outcome of %s", ce_ids[k]);
        matched += (size_t)seen;
    }
    cr_assert_eq(matched, nouts, "%zu outcomes answer no request", nouts - matched);
    it_records_free(outs, nouts);

    /* exactly one create per handle: the sorted keys are the sorted ids */
    nlcm = read_lcm(c, total, &lcm);
    want = calloc(total, sizeof(*want));
    got = calloc(nlcm + 1, sizeof(*got));
    cr_assert(want && got);
    for (size_t i = 0; i < nlcm; i++) {
        json_object *ev = lcm_checked(c, &lcm[i]);
        cr_assert_str_eq(lcm_kind(ev), "create", "%s: %s", lcm[i].key, lcm[i].value);
        json_object_put(ev);
        got[i] = lcm[i].key;
    }
    qsort(got, nlcm, sizeof(*got), cmp_str);
    for (size_t i = 1; i < nlcm; i++)
        cr_assert_str_neq(got[i - 1], got[i], "two create events of %s", got[i]);
    cr_assert_eq(nlcm, total, "%zu lifecycle events for %zu handles", nlcm, total);
    {
        char(*ids)[24] = calloc(total, sizeof(*ids));
        cr_assert_not_null(ids);
        for (int k = 0; k < CRASH_REQUESTS; k++)
            for (int i = 0; i < CRASH_HANDLES; i++) {
                size_t n = (size_t)k * CRASH_HANDLES + (size_t)i;
                snprintf(ids[n], sizeof(ids[n]), "h-%d-%d", k, i);
                want[n] = ids[n];
            }
        qsort(want, total, sizeof(*want), cmp_str);
        for (size_t i = 0; i < total; i++)
            cr_assert_str_eq(got[i], want[i], "events of the handles, one each");
        free(ids);
    }
    free(want);
    free(got);
    it_records_free(lcm, nlcm);
    case_fini(c);
}

Test(registration, crash_before_database_commit_applies_everything_once, .timeout = 180)
{
    crash_and_recover("registration.before-commit");
}

Test(registration, crash_after_database_commit_applies_everything_once, .timeout = 180)
{
    crash_and_recover("registration.after-commit");
}

Test(registration, crash_after_relay_publish_publishes_every_event_once, .timeout = 180)
{
    crash_and_recover("lcm-relay.after-publish");
}

Test(registration, crash_after_relay_commit_publishes_every_event_once, .timeout = 180)
{
    crash_and_recover("lcm-relay.after-commit");
}

/* The applied offset never goes back. Register, deregister and register
 * again the same 10 handles (one DMI: one partition, in order); ncmpd
 * applies the three requests in one batch and dies between the database
 * commit and the Kafka commit, so Kafka still says offset 0 while the
 * database says 3. Restarted with batches of one request, it must skip
 * all three: applied again, the first would answer "109 already exists"
 * and the last two would delete and create the handles a second time. */
Test(registration, replay_in_smaller_batches_applies_nothing_twice, .timeout = 180)
{
    reg_case *c = case_init("it-reg-replay");
    const char *const first[] = {"--registration.batch-size=10",
                                 "--registration.batch-wait-ms=3000",
                                 "--debug.fault=registration.after-commit:1", NULL};
    const char *const again[] = {"--registration.batch-size=1", NULL};
    static const char *const thrice[] = {"create", "update", "delete", "create", NULL};
    char created[1024], removed[512], group[256];
    size_t off = 0, roff = 0, nouts, nlcm;
    it_record *outs = NULL, *lcm = NULL;
    json_object *evs[8];
    int status;

    off += (size_t)snprintf(created + off, sizeof(created) - off,
                            "{'dmiPlugin':'" DMI "','createdCmHandles':[");
    roff += (size_t)snprintf(removed + roff, sizeof(removed) - roff,
                             "{'dmiPlugin':'" DMI "','removedCmHandles':[");
    for (int i = 0; i < 10; i++) {
        off += (size_t)snprintf(created + off, sizeof(created) - off, "%s{'cmHandle':'rp-%d'}",
                                i ? "," : "", i);
        roff +=
            (size_t)snprintf(removed + roff, sizeof(removed) - roff, "%s'rp-%d'", i ? "," : "", i);
    }
    snprintf(created + off, sizeof(created) - off, "]}");
    snprintf(removed + roff, sizeof(removed) - roff, "]}");
    send_request(c, "req-1", DMI, created);
    send_request(c, "req-2", DMI, removed);
    send_request(c, "req-3", DMI, created);

    case_spawn(c, first, 0);
    status = it_wait_exit(c->pid, WAIT_MS);
    if (status == -1) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
    }
    c->pid = 0;
    cr_assert(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "ncmpd should have died after its first commit (status %d); log %s", status, c->log);
    cr_assert_eq(it_query_long(c->db,
                               "SELECT COALESCE(sum(next_offset), 0) FROM consumer_offsets "
                               "WHERE topic = $1",
                               1, (const char *[]){c->topic}),
                 3, "the three requests were applied in one batch; log %s", c->log);

    case_start(c, again);
    /* the skipped records are committed to Kafka: wait for that */
    snprintf(group, sizeof(group), "g-%s-registration", c->topic);
    for (int i = 0; i < 300 && it_committed_sum(group, c->topic, PARTITIONS) < 3; i++)
        it_sleep_ms(100);
    cr_assert_eq(it_committed_sum(group, c->topic, PARTITIONS), 3, "log %s", c->log);
    settle(c);
    cr_assert_eq(it_query_long(c->db,
                               "SELECT COALESCE(sum(next_offset), 0) FROM consumer_offsets "
                               "WHERE topic = $1",
                               1, (const char *[]){c->topic}),
                 3, "the applied offset stays where it was");
    cr_assert_eq(handle_count(c), 10);

    nouts = read_outcomes(c, 3, &outs);
    cr_assert_eq(nouts, 3, "one outcome per request, none again; got %zu", nouts);
    for (size_t i = 0; i < nouts; i++) {
        json_object *o = json_tokener_parse(outs[i].value);
        cr_assert_not_null(o);
        expect_all_applied(o);
        json_object_put(o);
    }
    it_records_free(outs, nouts);
    nlcm = read_lcm(c, 40, &lcm);
    cr_assert_eq(nlcm, 40, "create, DELETING, DELETED, create for each of 10; got %zu", nlcm);
    for (int i = 0; i < 10; i++) {
        char id[16];
        snprintf(id, sizeof(id), "rp-%d", i);
        events_free(evs, expect_events(c, lcm, nlcm, id, thrice, evs));
    }
    it_records_free(lcm, nlcm);
    case_fini(c);
}

/* A relay's produce requests may reach a busy broker after the relay was
 * killed, later than the next relay's recovery scan. Here the predecessor
 * is a producer of the relay's transactional id that has published copies
 * of five outbox rows in an open transaction and never committed: the
 * relay that takes over must fence it (its commit then fails) and
 * publish every event once, none of the predecessor's visible. */
Test(registration, relay_fences_a_predecessor_still_in_flight, .timeout = 180)
{
    reg_case *c = case_init("it-reg-fence");
    const char *const no_relay[] = {"--roles=registration", NULL};
    char body[2048], txn_id[256], seq[32];
    size_t off = 0, nlcm;
    it_record *lcm = NULL;
    rd_kafka_t *zombie = NULL;
    rd_kafka_error_t *e;
    ncmp_kafka_opts kopts;
    PGresult *res = NULL;
    ncmp_err err;
    const char **got;

    off += (size_t)snprintf(body + off, sizeof(body) - off,
                            "{'dmiPlugin':'" DMI "','createdCmHandles':[");
    for (int i = 0; i < 20; i++)
        off += (size_t)snprintf(body + off, sizeof(body) - off, "%s{'cmHandle':'fz-%02d'}",
                                i ? "," : "", i);
    snprintf(body + off, sizeof(body) - off, "]}");
    send_request(c, "req-1", DMI, body);
    /* the events wait in the outbox: no relay runs */
    case_start(c, no_relay);
    cr_assert_eq(it_wait_long(c->db, "SELECT count(*) FROM lcm_outbox", NULL, 20, WAIT_MS), 20,
                 "20 events in the outbox; log %s", c->log);
    case_stop(c);

    it_kafka_opts(&kopts);
    snprintf(txn_id, sizeof(txn_id), "ncmpd-lcm-relay-%s", c->lcm_topic);
    cr_assert_eq(ncmp_kafka_txn_producer_new(&zombie, &kopts, NCMP_PRODUCER_KEYED, "it-zombie",
                                             txn_id, 30000, NULL, &err),
                 0, "%s", err.msg);
    e = rd_kafka_begin_transaction(zombie);
    cr_assert_null(e, "begin: %s", e ? rd_kafka_error_string(e) : "");
    cr_assert_eq(ncmp_db_query(c->db, "SELECT seq, handle_id FROM lcm_outbox ORDER BY seq LIMIT 5",
                               0, NULL, &res, &err),
                 0, "%s", err.msg);
    for (int i = 0; i < PQntuples(res); i++) {
        rd_kafka_headers_t *h = rd_kafka_headers_new(1);
        const char *key = PQgetvalue(res, i, 1);
        snprintf(seq, sizeof(seq), "%s", PQgetvalue(res, i, 0));
        rd_kafka_header_add(h, "ncmp_outbox_seq", -1, seq, -1);
        cr_assert_eq(rd_kafka_producev(zombie, RD_KAFKA_V_TOPIC(c->lcm_topic),
                                       RD_KAFKA_V_KEY(key, strlen(key)),
                                       RD_KAFKA_V_VALUE("not the event", 13),
                                       RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                       RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END),
                     RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    PQclear(res);
    /* on the broker, in the open transaction */
    cr_assert_eq(rd_kafka_flush(zombie, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);

    case_start(c, NULL);
    settle(c);
    e = rd_kafka_commit_transaction(zombie, 30000);
    cr_assert_not_null(e, "the predecessor's transaction was fenced, its commit must fail");
    rd_kafka_error_destroy(e);
    rd_kafka_destroy(zombie);

    /* read committed: each handle's create once, none of the copies */
    nlcm = read_lcm(c, 20, &lcm);
    cr_assert_eq(nlcm, 20, "%zu lifecycle events for 20 handles", nlcm);
    got = calloc(nlcm, sizeof(*got));
    cr_assert_not_null(got);
    for (size_t i = 0; i < nlcm; i++) {
        json_object *ev = lcm_checked(c, &lcm[i]);
        cr_assert_str_eq(lcm_kind(ev), "create");
        json_object_put(ev);
        got[i] = lcm[i].key;
    }
    qsort(got, nlcm, sizeof(*got), cmp_str);
    for (size_t i = 1; i < nlcm; i++)
        cr_assert_str_neq(got[i - 1], got[i], "two create events of %s", got[i]);
    free(got);
    it_records_free(lcm, nlcm);
    case_fini(c);
}
