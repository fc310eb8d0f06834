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

#include "it_cps.h"
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

TestSuite(cps, .fini = it_cps_cleanup);

/* --- files --------------------------------------------------------------- */

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

/* --- tests ---------------------------------------------------------------- */

/* Dataspaces, schema sets (.zip and .yang), anchors: create, list, get,
 * delete, with CPS's status codes, on the cps role's own server. */
Test(cps, admin_lifecycle_on_its_own_server, .timeout = 120)
{
    cps_case *c = it_cps_start("cps-admin", "cps");
    char zip[512], yang[512];

    it_cps_temp_path(zip, sizeof(zip), c, "shop.zip");
    it_cps_temp_path(yang, sizeof(yang), c, "shop-types.yang");
    write_zip(zip);
    it_cps_write_file(yang, SHOP_TYPES);

    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", "/cps/api/v1/dataspaces?dataspace-name=ds2", NULL, 201, "ds2");
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 409,
                  "already exists");
    it_cps_expect(c, "GET", "/cps/api/v2/admin/dataspaces", NULL, 200, "{\"name\" : \"ds2\"}");
    it_cps_expect(c, "GET", "/cps/api/v1/admin/dataspaces/ds", NULL, 200, "\"ds\"");
    it_cps_expect(c, "GET", "/cps/api/v2/admin/dataspaces/nope", NULL, 404, "Dataspace not found");

    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=shop", zip, 201,
                  NULL);
    it_cps_expect(c, "POST", "/cps/api/v1/dataspaces/ds/schema-sets?schema-set-name=types", yang,
                  201, "types");
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=shop", zip, 409,
                  "already exists");
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces/nope/schema-sets?schema-set-name=shop", zip,
                  404, "Dataspace not found");
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/schema-sets/shop", NULL, 200,
                  "\"namespace\" : \"urn:shop-types\", \"revision\" : \"2024-01-01\"");
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/schema-sets", NULL, 200,
                  "\"name\" : \"types\"");
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/schema-sets/none", NULL, 404,
                  "Schema Set not found");

    it_cps_expect(c, "POST",
                  "/cps/api/v2/dataspaces/ds/anchors?schema-set-name=shop&anchor-name=a1", NULL,
                  201, NULL);
    it_cps_expect(c, "POST",
                  "/cps/api/v1/dataspaces/ds/anchors?schema-set-name=types&anchor-name=a2", NULL,
                  201, "a2");
    it_cps_expect(c, "POST",
                  "/cps/api/v2/dataspaces/ds/anchors?schema-set-name=shop&anchor-name=a1", NULL,
                  409, "already exists");
    it_cps_expect(c, "POST",
                  "/cps/api/v2/dataspaces/ds/anchors?schema-set-name=none&anchor-name=a3", NULL,
                  404, "Schema Set not found");
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors/a1", NULL, 200,
                  "\"schemaSetName\" : \"shop\"");
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors?schema-set-names=types", NULL, 200,
                  "[{\"name\" : \"a2\"");
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors/none", NULL, 404,
                  "Anchor not found");

    /* in use: 409; the anchors first, then the set and the dataspace */
    it_cps_expect(c, "DELETE", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 409,
                  "Dataspace is being used");
    it_cps_expect(c, "DELETE", "/cps/api/v2/dataspaces/ds/schema-sets/shop", NULL, 409,
                  "Schema Set is being used");
    it_cps_expect(c, "DELETE", "/cps/api/v2/dataspaces/ds/anchors/a1", NULL, 204, NULL);
    it_cps_expect(c, "DELETE", "/cps/api/v2/dataspaces/ds/anchors/a1", NULL, 404,
                  "Anchor not found");
    it_cps_expect(c, "DELETE", "/cps/api/v2/dataspaces/ds/schema-sets/shop", NULL, 204, NULL);
    /* cascade takes the anchor along */
    it_cps_expect(c, "DELETE", "/cps/api/v2/dataspaces/ds/schema-sets/types?cascade=true", NULL,
                  204, NULL);
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/anchors/a2", NULL, 404, "Anchor not found");
    it_cps_expect(c, "DELETE", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 204, NULL);
    it_cps_expect(c, "DELETE", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 404,
                  "Dataspace not found");
    unlink(zip);
    unlink(yang);
    it_cps_fini(c);
}

/* A bad module is a 400 naming the module and the line; a set missing an
 * import, a file that is not YANG and a body without `file` are 400s;
 * nothing is stored. */
Test(cps, invalid_yang_is_400_and_stores_nothing, .timeout = 120)
{
    cps_case *c = it_cps_start("cps-badyang", "cps");
    char bad[512], lone[512], txt[512];

    it_cps_temp_path(bad, sizeof(bad), c, "broken.yang");
    it_cps_temp_path(lone, sizeof(lone), c, "shop.yang");
    it_cps_temp_path(txt, sizeof(txt), c, "notes.txt");
    it_cps_write_file(bad, BROKEN);
    it_cps_write_file(lone, SHOP);
    it_cps_write_file(txt, "hello");
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=x", bad, 400,
                  "Line number 4");
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=x", bad, 400,
                  "module broken");
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=x", lone, 400,
                  "shop");
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=x", txt, 400,
                  "unsupported file type");
    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces/ds/schema-sets?schema-set-name=x", NULL, 400,
                  NULL);
    it_cps_expect(c, "GET", "/cps/api/v2/dataspaces/ds/schema-sets", NULL, 200, "[]");
    unlink(bad);
    unlink(lone);
    unlink(txt);
    it_cps_fini(c);
}

/* Hostile names and versions are 4xx, never 5xx. */
Test(cps, hostile_names_are_4xx, .timeout = 120)
{
    cps_case *c = it_cps_start("cps-hostile", "cps");
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
        it_cps_call(c, "POST", paths[i], NULL, &r);
        cr_expect(r.status >= 400 && r.status < 500, "%s: %ld %s", paths[i], r.status,
                  r.body.data ? r.body.data : "");
        it_cps_reply_free(&r);
    }
    {
        /* none made: only CPS-Admin, the subscriptions' dataspace */
        reply r;
        const char *p;
        int names = 0;
        it_cps_call(c, "GET", "/cps/api/v2/admin/dataspaces", NULL, &r);
        cr_expect_eq(r.status, 200);
        for (p = r.body.data; p && (p = strstr(p, "\"name\"")); p++)
            names++;
        cr_expect(names == 1 && strstr(r.body.data, "\"CPS-Admin\""), "%s", r.body.data);
        it_cps_reply_free(&r);
    }
    it_cps_fini(c);
}

/* With the rest role, one server answers both APIs. */
Test(cps, shares_the_server_with_the_rest_role, .timeout = 120)
{
    cps_case *c = it_cps_start("cps-rest", "rest,cps");

    it_cps_expect(c, "POST", "/cps/api/v2/dataspaces?dataspace-name=ds", NULL, 201, NULL);
    it_cps_expect(c, "GET", "/cps/api/v2/admin/dataspaces/ds", NULL, 200, "\"ds\"");
    it_cps_expect(c, "GET", "/ncmp/v1/ch/unknown-handle", NULL, 404, "Cm handle not found");
    cr_expect_eq(it_file_contains(c->log, "CPS API served on the rest role's HTTP server"), 1);
    it_cps_fini(c);
}
