#include "it_front.h"

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it_util.h"

#define PARTITIONS 2
#define WAIT_MS    60000

static front_case the_case;
static int the_case_live;

void it_front_cleanup(void)
{
    front_case *c = &the_case;

    if (!the_case_live)
        return;
    the_case_live = 0;
    it_kill_wait(&c->pid);
    for (int i = 0; i < IT_FRONT_STUBS; i++)
        it_kill_wait(&c->stub[i]);
    ncmp_db_close(c->db);
    c->db = NULL;
    it_scratch_db_drop(c->dbname);
}

/* --- HTTP ------------------------------------------------------------------ */

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

void it_front_http(const char *base, const char *method, const char *path, const char *body_sq,
                   const char *const *headers, front_reply *r)
{
    CURL *curl = curl_easy_init();
    struct curl_slist *h = NULL;
    ncmp_buf body = NCMP_BUF_INIT, url = NCMP_BUF_INIT;
    const char *ctype = NULL;
    struct curl_header *retry = NULL;
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    for (size_t i = 0; headers && headers[i]; i++)
        h = curl_slist_append(h, headers[i]);
    for (const char *p = body_sq; p && *p; p++)
        ncmp_buf_append_char(&body, *p == '\'' ? '"' : *p);
    ncmp_buf_appendf(&url, "%s%s", base, path);
    curl_easy_setopt(curl, CURLOPT_URL, url.data);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
    if (body_sq) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data ? body.data : "");
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)body.len);
    }
    rc = curl_easy_perform(curl);
    cr_assert_eq(rc, CURLE_OK, "%s %s: %s", method, url.data, curl_easy_strerror(rc));
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ctype) == CURLE_OK && ctype)
        snprintf(r->content_type, sizeof(r->content_type), "%s", ctype);
    if (curl_easy_header(curl, "Retry-After", 0, CURLH_HEADER, -1, &retry) == CURLHE_OK)
        snprintf(r->retry_after, sizeof(r->retry_after), "%s", retry->value);
    if (!r->body.data)
        ncmp_buf_append_str(&r->body, "");
    r->json = json_tokener_parse(r->body.data);
    curl_slist_free_all(h);
    curl_easy_cleanup(curl);
    ncmp_buf_free(&body);
    ncmp_buf_free(&url);
}

void it_front_reply_free(front_reply *r)
{
    json_object_put(r->json);
    ncmp_buf_free(&r->body);
}

const char *it_front_field(json_object *o, const char *key)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
        return NULL;
    return json_object_get_string(v);
}

void it_front_call(front_case *c, const char *method, const char *path, const char *body_sq,
                   const char *const *headers, front_reply *r)
{
    char base[64];
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", c->port);
    it_front_http(base, method, path, body_sq, headers, r);
}

json_object *it_front_stub_get(front_case *c, int n, const char *what)
{
    front_reply r;
    json_object *o;

    it_front_http(c->dmi[n], "GET", what, NULL, NULL, &r);
    cr_assert_eq(r.status, 200, "GET %s: %ld %s", what, r.status, r.body.data);
    o = json_object_get(r.json);
    it_front_reply_free(&r);
    return o;
}

long it_front_stub_count(front_case *c, int n, const char *name)
{
    json_object *o = it_front_stub_get(c, n, "/stub/stats");
    const char *v = it_front_field(o, name);
    long count;

    cr_assert_not_null(v, "no %s in /stub/stats", name);
    count = atol(v);
    json_object_put(o);
    return count;
}

/* --- the stubs and ncmpd ------------------------------------------------------ */

static void stub_start(front_case *c, int n)
{
    const char *argv[] = {NCMP_DMISTUB_PATH,
                          "--port",
                          "0",
                          "--port-file",
                          c->port_file[n],
                          "--module-references-delay-ms",
                          "10",
                          "--module-resources-delay-ms",
                          "20",
                          "--provmns-read-delay-ms",
                          "20",
                          "--provmns-write-delay-ms",
                          "30",
                          "--read-delay-ms",
                          "20",
                          "--write-delay-ms",
                          "30",
                          "--threads",
                          "2",
                          NULL};
    long waited = 0;
    int p = 0;

    c->stub[n] = it_spawn(NCMP_DMISTUB_PATH, c->stub_log[n], argv);
    while (p <= 0) {
        FILE *f = fopen(c->port_file[n], "r");
        if (f) {
            if (fscanf(f, "%d", &p) != 1)
                p = 0;
            fclose(f);
        }
        cr_assert_lt(waited, 20000, "the DMI stub did not start; log %s", c->stub_log[n]);
        it_sleep_ms(20);
        waited += 20;
    }
    snprintf(c->dmi[n], sizeof(c->dmi[n]), "http://127.0.0.1:%d", p);
}

static void flag(front_case *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void flag(front_case *c, const char *fmt, ...)
{
    va_list ap;

    cr_assert_lt(c->nflags, IT_FRONT_MAXFLAGS);
    va_start(ap, fmt);
    vsnprintf(c->flag[c->nflags++], sizeof(c->flag[0]), fmt, ap);
    va_end(ap);
}

front_case *it_front_start(const char *name, int stubs, const char *const *extra)
{
    front_case *c = &the_case;
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    const char *args[IT_FRONT_MAXFLAGS + 1];
    static const char *const suffixes[] = {"", "-response", "-lcm", "-ms"};
    char t[256];
    ncmp_err err;

    memset(c, 0, sizeof(*c));
    dir = dir && *dir ? dir : "/tmp";
    curl_global_init(CURL_GLOBAL_ALL);
    it_unique(c->topic, sizeof(c->topic), name);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir, c->topic);
    for (int i = 0; i < stubs; i++) {
        snprintf(c->stub_log[i], sizeof(c->stub_log[i]), "%s/%s-stub%d.log", dir, c->topic, i);
        snprintf(c->port_file[i], sizeof(c->port_file[i]), "%s/%s-stub%d.port", dir, c->topic, i);
    }
    it_scratch_db_create("it_front", c->dbname, sizeof(c->dbname), c->dburl, sizeof(c->dburl));
    the_case_live = 1;
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        snprintf(t, sizeof(t), "%s%s", c->topic, suffixes[i]);
        it_create_topic(t, PARTITIONS);
    }
    for (int i = 0; i < stubs; i++)
        stub_start(c, i);
    flag(c, "--db.url=%s", c->dburl);
    flag(c, "--registration.topic=%s", c->topic);
    flag(c, "--registration.response-topic=%s-response", c->topic);
    flag(c, "--lcm.topic=%s-lcm", c->topic);
    flag(c, "--module-sync.topic=%s-ms", c->topic);
    flag(c, "--kafka.group.id=g-%s", c->topic);
    flag(c, "--roles=registration,module-sync,lcm-relay,rest");
    flag(c, "--http.port=0");
    flag(c, "--http.host=127.0.0.1");
    flag(c, "--rest.db-connections=3");
    flag(c, "--data.request-topic=");
    flag(c, "--datajob.request-topic=");
    flag(c, "--dmi.response-timeout-ms=1000");
    flag(c, "--dmi.connect-timeout-ms=500");
    flag(c, "--module-sync.sweep-interval-ms=200");
    flag(c, "--kafka.topic-partitions=%d", PARTITIONS);
    for (size_t i = 0; extra && extra[i]; i++) {
        const char *at = strstr(extra[i], "%s");
        if (at)
            flag(c, "%.*s%s%s", (int)(at - extra[i]), extra[i], c->dmi[0], at + 2);
        else
            flag(c, "%s", extra[i]);
    }
    for (int i = 0; i < c->nflags; i++)
        args[i] = c->flag[i];
    args[c->nflags] = NULL;
    c->pid = it_ncmpd_start(c->log, args);
    c->port = it_logged_port(c->log);
    for (int i = 0; !it_file_contains(c->log, "relaying lifecycle events"); i++) {
        cr_assert_lt(i, 600, "the lifecycle relay did not start; log %s", c->log);
        it_sleep_ms(50);
    }
    cr_assert_eq(ncmp_db_open(&c->db, c->dburl, NULL, 10, &err), 0, "%s", err.msg);
    return c;
}

void it_front_fini(front_case *c)
{
    int status = it_ncmpd_stop(c->pid);

    c->pid = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "SIGTERM should stop ncmpd cleanly, status %d; log %s", status, c->log);
    it_front_cleanup();
}

void it_front_wait_ready(front_case *c, int first, int n)
{
    char path[256];
    front_reply r;

    cr_assert_eq(
        it_wait_long(c->db, "SELECT count(*) FROM cm_handle WHERE state = $1", "READY", n, WAIT_MS),
        n, "handles not READY; log %s", c->log);
    for (int i = first; i < first + n; i++) {
        long got = 0;
        snprintf(path, sizeof(path), "/ncmp/v1/ch/ch-%d/state", i);
        for (int k = 0; k < 200 && got != 200; k++) {
            it_front_call(c, "GET", path, NULL, NULL, &r);
            got = r.status == 200 && strstr(r.body.data, "READY") ? 200 : r.status;
            it_front_reply_free(&r);
            if (got != 200)
                it_sleep_ms(50);
        }
        cr_assert_eq(got, 200, "ch-%d is not served READY; log %s", i, c->log);
    }
    /* the state above is the database's; the map follows the lifecycle
     * events a moment later */
    it_sleep_ms(500);
}
