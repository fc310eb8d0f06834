#include "it_cps.h"

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it_util.h"

static cps_case the_case;
static int the_case_live;

void it_cps_cleanup(void)
{
    if (!the_case_live)
        return;
    the_case_live = 0;
    if (the_case.pid > 0) {
        kill(the_case.pid, SIGKILL);
        waitpid(the_case.pid, NULL, 0);
    }
    it_scratch_db_drop(the_case.dbname);
}

/* Spawn ncmpd with the case's options and `extra`; wait for its port. */
static void spawn(cps_case *c, const char *extra)
{
    const char *args[16];
    int n = 0;

    for (; n < c->nflags; n++)
        args[n] = c->flags[n];
    if (extra)
        args[n++] = extra;
    args[n] = NULL;
    c->pid = it_ncmpd_start(c->log, args);
    c->port = it_logged_port(c->log);
}

cps_case *it_cps_start(const char *name, const char *roles)
{
    return it_cps_start_with(name, roles, NULL);
}

cps_case *it_cps_start_with(const char *name, const char *roles, const char *extra)
{
    cps_case *c = &the_case;
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    int n = 6;

    memset(c, 0, sizeof(*c));
    it_unique(c->name, sizeof(c->name), name);
    snprintf(c->log, sizeof(c->log), "%s/%s.log", dir && *dir ? dir : "/tmp", c->name);
    it_scratch_db_create("it_cps", c->dbname, sizeof(c->dbname), c->dburl, sizeof(c->dburl));
    the_case_live = 1;
    snprintf(c->flags[0], sizeof(c->flags[0]), "--db.url=%s", c->dburl);
    snprintf(c->flags[1], sizeof(c->flags[1]), "--roles=%s", roles);
    snprintf(c->flags[2], sizeof(c->flags[2]), "--http.port=0");
    snprintf(c->flags[3], sizeof(c->flags[3]), "--http.host=127.0.0.1");
    snprintf(c->flags[4], sizeof(c->flags[4]), "--kafka.bootstrap.servers=%s", it_kafka());
    snprintf(c->flags[5], sizeof(c->flags[5]), "--kafka.group.id=g-%s", c->name);
    if (strstr(roles, "rest")) {
        /* the rest role's registration side needs its topics */
        static const char *const names[] = {"registration.topic", "registration.response-topic",
                                            "lcm.topic"};
        for (int i = 0; i < 3; i++, n++) {
            char topic[200];
            snprintf(topic, sizeof(topic), "%s-%d", c->name, i);
            it_create_topic(topic, 1);
            snprintf(c->flags[n], sizeof(c->flags[n]), "--%s=%s", names[i], topic);
        }
    }
    if (strstr(roles, "cps-relay")) {
        snprintf(c->events_topic, sizeof(c->events_topic), "%s-events", c->name);
        it_create_topic(c->events_topic, 3);
        snprintf(c->flags[n++], sizeof(c->flags[0]), "--cps.data-updated-topic=%s",
                 c->events_topic);
    }
    c->nflags = n;
    spawn(c, extra);
    return c;
}

void it_cps_stop(cps_case *c)
{
    cr_assert_eq(it_ncmpd_stop(c->pid), 0, "ncmpd stops cleanly on SIGTERM");
    c->pid = 0;
}

void it_cps_restart(cps_case *c, const char *extra)
{
    size_t len = strlen(c->log);

    /* a log of its own: the port is the first one a log names */
    if (len > 4 && len + 2 < sizeof(c->log))
        snprintf(c->log + len - 4, sizeof(c->log) - (len - 4), "-r.log");
    spawn(c, extra);
}

void it_cps_fini(cps_case *c)
{
    int status = it_ncmpd_stop(c->pid);
    char pattern[256];
    glob_t files;

    /* the case's files (it_cps_temp_path) go with it */
    snprintf(pattern, sizeof(pattern), "/tmp/%s-*", c->name);
    if (glob(pattern, 0, NULL, &files) == 0) {
        for (size_t i = 0; i < files.gl_pathc; i++)
            unlink(files.gl_pathv[i]);
        globfree(&files);
    }

    c->pid = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "SIGTERM should stop ncmpd cleanly, status %d; log %s", status, c->log);
    the_case_live = 0;
    cr_assert_eq(it_scratch_db_drop(c->dbname), 0);
}

/* --- HTTP ---------------------------------------------------------------- */

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* One request; with `file` (a path) the body is multipart with it as
 * part `file`. */
void it_cps_call(cps_case *c, const char *method, const char *path, const char *file, reply *r)
{
    it_cps_send(c, method, path, file, NULL, NULL, 0, r);
}

void it_cps_send(cps_case *c, const char *method, const char *path, const char *file,
                 const char *ctype, const char *body, size_t len, reply *r)
{
    struct curl_slist *headers = NULL;
    CURL *curl = curl_easy_init();
    curl_mime *mime = NULL;
    char url[4096];
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", c->port, path);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &r->headers);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
    if (file) {
        curl_mimepart *part;
        mime = curl_mime_init(curl);
        part = curl_mime_addpart(mime);
        curl_mime_name(part, "file");
        curl_mime_filedata(part, file);
        curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime);
    }
    if (body) {
        char header[256];
        snprintf(header, sizeof(header), "Content-Type: %s", ctype ? ctype : "application/json");
        headers = curl_slist_append(headers, header);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    rc = curl_easy_perform(curl);
    cr_assert_eq(rc, CURLE_OK, "%s %s: %s; log %s", method, path, curl_easy_strerror(rc), c->log);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    ncmp_buf_append_char(&r->body, '\0');
    r->body.len--;
    ncmp_buf_append_char(&r->headers, '\0');
    r->headers.len--;
    curl_mime_free(mime);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
}

void it_cps_request(cps_case *c, const char *method, const char *path, const char *accept,
                    const char *name1, const char *file1, const char *name2, const char *file2,
                    reply *r)
{
    struct curl_slist *headers = NULL;
    CURL *curl = curl_easy_init();
    curl_mime *mime = NULL;
    char url[4096], header[256];
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", c->port, path);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &r->headers);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 120L);
    if (accept) {
        snprintf(header, sizeof(header), "Accept: %s", accept);
        headers = curl_slist_append(headers, header);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    }
    if (name1) {
        curl_mimepart *part;
        mime = curl_mime_init(curl);
        part = curl_mime_addpart(mime);
        curl_mime_name(part, name1);
        curl_mime_filedata(part, file1);
        if (name2) {
            part = curl_mime_addpart(mime);
            curl_mime_name(part, name2);
            curl_mime_filedata(part, file2);
        }
        curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime);
    }
    rc = curl_easy_perform(curl);
    cr_assert_eq(rc, CURLE_OK, "%s %s: %s; log %s", method, path, curl_easy_strerror(rc), c->log);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    ncmp_buf_append_char(&r->body, '\0');
    r->body.len--;
    ncmp_buf_append_char(&r->headers, '\0');
    r->headers.len--;
    curl_mime_free(mime);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
}

/* The request answers `status`, and its body holds `needle` (NULL: any). */
void it_cps_expect(cps_case *c, const char *method, const char *path, const char *file, long status,
                   const char *needle)
{
    reply r;

    it_cps_call(c, method, path, file, &r);
    cr_expect_eq(r.status, status, "%s %s: %ld, expected %ld: %s", method, path, r.status, status,
                 r.body.data ? r.body.data : "");
    if (needle)
        cr_expect(r.body.data && strstr(r.body.data, needle), "%s %s: no '%s' in %s", method, path,
                  needle, r.body.data ? r.body.data : "(empty)");
    it_cps_reply_free(&r);
}

void it_cps_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

void it_cps_temp_path(char *out, size_t len, const cps_case *c, const char *suffix)
{
    snprintf(out, len, "/tmp/%s-%s", c->name, suffix);
}

void it_cps_reply_free(reply *r)
{
    ncmp_buf_free(&r->body);
    ncmp_buf_free(&r->headers);
}
