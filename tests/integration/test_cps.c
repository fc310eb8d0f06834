/*
 * The CPS store's admin API over HTTP (libcurl) against ncmpd running the
 * cps role, alone (its own server) or with the rest role (one server for
 * both), each test on a scratch database of its own.
 *
 * The YANG models are written here (a module and the types module it
 * imports), and the .zip upload is made with libzip at test time.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>

#include "it_util.h"
#include "ncmp_buf.h"

static const char SHOP_TYPES[] = "module shop-types {\n"
                                 "  namespace \"urn:shop-types\";\n"
                                 "  prefix st;\n"
                                 "  revision 2024-01-01;\n"
                                 "  typedef price { type uint32; }\n"
                                 "}\n";
static const char SHOP[] = "module shop {\n"
                           "  namespace \"urn:shop\";\n"
                           "  prefix s;\n"
                           "  import shop-types { prefix st; }\n"
                           "  revision 2024-02-02;\n"
                           "  container shop {\n"
                           "    leaf name { type string; }\n"
                           "    list item { key id; leaf id { type string; }\n"
                           "      leaf price { type st:price; } }\n"
                           "  }\n"
                           "}\n";
/* line 4 is the broken one */
static const char BROKEN[] = "module broken {\n"
                             "  namespace \"urn:broken\";\n"
                             "  prefix b;\n"
                             "  leaf x { typo; }\n"
                             "}\n";

typedef struct cps_case {
    char name[128];
    char dbname[96];
    char dburl[512];
    char log[512];
    char flags[9][640];
    pid_t pid;
    int port;
} cps_case;

static cps_case the_case;
static int the_case_live;

static void cps_cleanup(void)
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

TestSuite(cps, .fini = cps_cleanup);

static cps_case *case_start(const char *name, const char *roles)
{
    cps_case *c = &the_case;
    const char *dir = getenv("NCMP_TEST_LOG_DIR");
    const char *args[10];
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
    for (int i = 0; i < n; i++)
        args[i] = c->flags[i];
    args[n] = NULL;
    c->pid = it_ncmpd_start(c->log, args);
    c->port = it_logged_port(c->log);
    return c;
}

static void case_fini(cps_case *c)
{
    int status = it_ncmpd_stop(c->pid);

    c->pid = 0;
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "SIGTERM should stop ncmpd cleanly, status %d; log %s", status, c->log);
    the_case_live = 0;
    cr_assert_eq(it_scratch_db_drop(c->dbname), 0);
}

/* --- HTTP ---------------------------------------------------------------- */

typedef struct reply {
    long status;
    ncmp_buf body;
} reply;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* One request; with `file` (a path) the body is multipart with it as
 * part `file`. */
static void call(cps_case *c, const char *method, const char *path, const char *file, reply *r)
{
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
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
    if (file) {
        curl_mimepart *part;
        mime = curl_mime_init(curl);
        part = curl_mime_addpart(mime);
        curl_mime_name(part, "file");
        curl_mime_filedata(part, file);
        curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime);
    }
    rc = curl_easy_perform(curl);
    cr_assert_eq(rc, CURLE_OK, "%s %s: %s; log %s", method, path, curl_easy_strerror(rc), c->log);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    ncmp_buf_append_char(&r->body, '\0');
    r->body.len--;
    curl_mime_free(mime);
    curl_easy_cleanup(curl);
}

/* The request answers `status`, and its body holds `needle` (NULL: any). */
static void expect(cps_case *c, const char *method, const char *path, const char *file, long status,
                   const char *needle)
{
    reply r;

    call(c, method, path, file, &r);
    cr_expect_eq(r.status, status, "%s %s: %ld, expected %ld: %s", method, path, r.status, status,
                 r.body.data ? r.body.data : "");
    if (needle)
        cr_expect(r.body.data && strstr(r.body.data, needle), "%s %s: no '%s' in %s", method, path,
                  needle, r.body.data ? r.body.data : "(empty)");
    ncmp_buf_free(&r.body);
}

/* --- files --------------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* A zip of the shop model (and a file that is not YANG, ignored). */
static void write_zip(const char *path)
{
    int zerr;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    static const struct {
        const char *name, *text;
    } files[] = {{"model/shop.yang", SHOP},
                 {"model/shop-types.yang", SHOP_TYPES},
                 {"README.txt", "not yang"}};

    cr_assert_not_null(z, "zip_open %s: %d", path, zerr);
    for (size_t i = 0; i < 3; i++) {
        zip_source_t *s = zip_source_buffer(z, files[i].text, strlen(files[i].text), 0);
        cr_assert_geq(zip_file_add(z, files[i].name, s, ZIP_FL_OVERWRITE), 0);
    }
    cr_assert_eq(zip_close(z), 0);
}

static void temp_path(char *out, size_t len, const cps_case *c, const char *suffix)
{
    snprintf(out, len, "/tmp/%s-%s", c->name, suffix);
}

/* --- tests ---------------------------------------------------------------- */

/* Dataspaces, schema sets (.zip and .yang), anchors: create, list, get,
 * delete, with CPS's status codes, on the cps role's own server. */
Test(cps, admin_lifecycle_on_its_own_server, .timeout = 120)
{
    cps_case *c = case_start("cps-admin", "cps");
    char zip[512], yang[512];

    temp_path(zip, sizeof(zip), c, "shop.zip");
    temp_path(yang, sizeof(yang), c, "shop-types.yang");
    write_zip(zip);
    write_file(yang, SHOP_TYPES);

    expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    expect(c, "POST", "/cps/api/v1/dataspaces?dataspace-name=ds2", NULL, 201, "ds2");
    expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 409, "already exists");
    expect(c, "GET", "/cps/api/v2/admin/dataspaces", NULL, 200, "{\"name\" : \"ds2\"}");
    expect(c, "GET", "/cps/api/v1/admin/dataspaces/ds", NULL, 200, "\"ds\"");
    expect(c, "GET", "/cps/api/v2/admin/dataspaces/nope", NULL, 404, "Dataspace not found");

    expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=shop", zip, 201, NULL);
    expect(c, "POST", "/cps/api/v1/dataspaces/ds/schema-sets?schema-set-name=types", yang, 201,
           "types");
    expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=shop", zip, 409,
           "already exists");
    expect(c, "POST", "/cps/api/v2/dataspaces/nope/schema-sets?schema-set-name=shop", zip, 404,
           "Dataspace not found");
    expect(c, "GET", "/cps/api/v2/dataspaces/ds/schema-sets/shop", NULL, 200,
           "\"namespace\" : \"urn:shop-types\", \"revision\" : \"2024-01-01\"");
    expect(c, "GET", "/cps/api/v2/dataspaces/ds/schema-sets", NULL, 200, "\"name\" : \"types\"");
    expect(c, "GET", "/cps/api/v2/dataspaces/ds/schema-sets/none", NULL, 404,
           "Schema Set not found");

    expect(c, "POST", "/cps/api/v2/dataspaces/ds/anchors?schema-set-name=shop&anchor-name=a1", NULL,
           201, NULL);
    expect(c, "POST", "/cps/api/v1/dataspaces/ds/anchors?schema-set-name=types&anchor-name=a2",
           NULL, 201, "a2");
    expect(c, "POST", "/cps/api/v2/dataspaces/ds/anchors?schema-set-name=shop&anchor-name=a1", NULL,
           409, "already exists");
    expect(c, "POST", "/cps/api/v2/dataspaces/ds/anchors?schema-set-name=none&anchor-name=a3", NULL,
           404, "Schema Set not found");
    expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors/a1", NULL, 200,
           "\"schemaSetName\" : \"shop\"");
    expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors?schema-set-names=types", NULL, 200,
           "[{\"name\" : \"a2\"");
    expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors/none", NULL, 404, "Anchor not found");

    /* in use: 409; the anchors first, then the set and the dataspace */
    expect(c, "DELETE", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 409,
           "Dataspace is being used");
    expect(c, "DELETE", "/cps/api/v2/dataspaces/ds/schema-sets/shop", NULL, 409,
           "Schema Set is being used");
    expect(c, "DELETE", "/cps/api/v2/dataspaces/ds/anchors/a1", NULL, 204, NULL);
    expect(c, "DELETE", "/cps/api/v2/dataspaces/ds/anchors/a1", NULL, 404, "Anchor not found");
    expect(c, "DELETE", "/cps/api/v2/dataspaces/ds/schema-sets/shop", NULL, 204, NULL);
    /* cascade takes the anchor along */
    expect(c, "DELETE", "/cps/api/v2/dataspaces/ds/schema-sets/types?cascade=true", NULL, 204,
           NULL);
    expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors/a2", NULL, 404, "Anchor not found");
    expect(c, "DELETE", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 204, NULL);
    expect(c, "DELETE", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 404,
           "Dataspace not found");
    unlink(zip);
    unlink(yang);
    case_fini(c);
}

/* A bad module is a 400 naming the module and the line; a set missing an
 * import, a file that is not YANG and a body without `file` are 400s;
 * nothing is stored. */
Test(cps, invalid_yang_is_400_and_stores_nothing, .timeout = 120)
{
    cps_case *c = case_start("cps-badyang", "cps");
    char bad[512], lone[512], txt[512];

    temp_path(bad, sizeof(bad), c, "broken.yang");
    temp_path(lone, sizeof(lone), c, "shop.yang");
    temp_path(txt, sizeof(txt), c, "notes.txt");
    write_file(bad, BROKEN);
    write_file(lone, SHOP);
    write_file(txt, "hello");
    expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=x", bad, 400,
           "Line number 4");
    expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=x", bad, 400,
           "module broken");
    expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=x", lone, 400, "shop");
    expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=x", txt, 400,
           "unsupported file type");
    expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=x", NULL, 400, NULL);
    expect(c, "GET", "/cps/api/v2/dataspaces/ds/schema-sets", NULL, 200, "[]");
    unlink(bad);
    unlink(lone);
    unlink(txt);
    case_fini(c);
}

/* Hostile names and versions are 4xx, never 5xx. */
Test(cps, hostile_names_are_4xx, .timeout = 120)
{
    cps_case *c = case_start("cps-hostile", "cps");
    static const char *const paths[] = {
        "/cps/api/v2/dataspaces?dataspace-name=a%20b",
        "/cps/api/v2/dataspaces?dataspace-name=",
        "/cps/api/v2/dataspaces?dataspace-name=x'%3B%20DROP%20TABLE%20dataspace--",
        "/cps/api/v2/dataspaces",
        "/cps/api/v9/dataspaces?dataspace-name=ok",
        "/cps/api/x/dataspaces?dataspace-name=ok",
        "/cps/api/v2/dataspaces/%2F..%2F/anchors?schema-set-name=s&anchor-name=a",
    };

    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        reply r;
        call(c, "POST", paths[i], NULL, &r);
        cr_expect(r.status >= 400 && r.status < 500, "%s: %ld %s", paths[i], r.status,
                  r.body.data ? r.body.data : "");
        ncmp_buf_free(&r.body);
    }
    expect(c, "GET", "/cps/api/v2/admin/dataspaces", NULL, 200, "[]");
    case_fini(c);
}

/* With the rest role, one server answers both APIs. */
Test(cps, shares_the_server_with_the_rest_role, .timeout = 120)
{
    cps_case *c = case_start("cps-rest", "rest,cps");

    expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    expect(c, "GET", "/cps/api/v2/admin/dataspaces/ds", NULL, 200, "\"ds\"");
    expect(c, "GET", "/ncmp/v1/ch/unknown-handle", NULL, 404, "Cm handle not found");
    cr_expect_eq(it_file_contains(c->log, "CPS API served on the rest role's HTTP server"), 1);
    case_fini(c);
}
