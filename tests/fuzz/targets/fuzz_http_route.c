/* The HTTP request target (path and query) through the router, over the
 * real CPS and ProvMnS route tables and NCMP's own patterns. The first
 * line of the input is the method, the rest the request target. */
#include <stdlib.h>
#include <string.h>

#include "cps.h"
#include "fuzz_common.h"
#include "ncmp_http.h"
#include "ncmp_utf8.h"
#include "provmns.h"

static const char *const tokens[] = {
    "GET\n",
    "POST\n",
    "PUT\n",
    "PATCH\n",
    "DELETE\n",
    "/",
    "//",
    "?",
    "&",
    "=",
    "+",
    "%",
    "%2F",
    "%00",
    "%C3%A9",
    "%FF",
    "%zz",
    "%",
    "{",
    "}",
    "...",
    "/ncmp/v1/ch/",
    "/ncmpInventory/v1/ch",
    "/cps/api/v2/dataspaces/",
    "/anchors/",
    "/node",
    "?xpath=/",
    "&descendants=all",
    "/ProvMnS/v1/",
    "SubNetwork=1/ManagedElement=1",
    "/data/ds/ncmp-datastore:passthrough-running",
    "?resourceIdentifier=",
    "&include-descendants=true",
    "/prov-mns-extensions/v1alpha1/actions/",
};

static void noop(ncmp_http_request *req, void *arg)
{
    (void)req;
    (void)arg;
}

static ncmp_http_server *server(void)
{
    static const char *const ncmp[][2] = {
        {"POST", "/ncmp/v1/ch/searches"},
        {"GET", "/ncmp/v1/ch/{ref}"},
        {"GET", "/ncmp/v1/ch/{ref}/state"},
        {"GET", "/ncmp/v1/ch/{ref}/modules/definitions"},
        {"PUT", "/ncmp/v1/ch/{ref}/data-sync"},
        {"POST", "/ncmpInventory/v1/ch"},
        {"GET", "/ncmpInventory/v1/ch/cmHandles"},
        {"GET", "/ncmp/v1/ch/{ref}/data/ds/{datastore}"},
        {"POST", "/ncmp/v1/ch/{ref}/data/ds/{datastore}"},
        {"GET", "/ncmp/v1/ch/{ref}/data/ds/{datastore}/query"},
        {"POST", "/ncmp/v1/data"},
        {"POST", "/do-not-use/dataJobs/{dataJobId}/write"},
        {"GET", "/actuator/health/{group...}"},
    };
    static ncmp_http_server *srv;
    ncmp_http_options o = {.threads = 1, .max_body_bytes = 1024};
    ncmp_err err;

    if (srv)
        return srv;
    if (ncmp_http_server_new(&srv, &o, &err) != 0)
        fuzz_fail("no server", "", err.msg);
    for (size_t i = 0; i < sizeof(ncmp) / sizeof(ncmp[0]); i++)
        ncmp_http_route(srv, ncmp[i][0], ncmp[i][1], noop, NULL);
    /* the handlers' argument is not touched while routing */
    cps_api_routes_add(NULL, srv);
    provmns_routes_add(NULL, srv);
    return srv;
}

static void check_param(const char *in, const char *value)
{
    if (value && !ncmp_utf8_valid(value, strlen(value)))
        fuzz_fail("a decoded parameter that is not UTF-8", in, value);
}

static void matched(void *arg, const ncmp_http_request *req)
{
    static const char *const names[] = {"ref",   "datastore", "dataspace", "anchor",
                                        "fdn",   "path",      "group",     "xpath",
                                        "topic", "options",   "scope",     "attributes"};
    const char *in = arg;
    int b;

    if (!ncmp_http_route_pattern(req) || !ncmp_http_path(req))
        fuzz_fail("a match without its pattern or path", in, "");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        check_param(in, ncmp_http_param(req, names[i]));
        check_param(in, ncmp_http_query(req, names[i]));
    }
    (void)ncmp_http_query_bool(req, "descendants", 0, &b);
    (void)ncmp_http_query_bool(req, "include-descendants", 0, &b);
}

static int one(const uint8_t *bytes, size_t size)
{
    char *in = fuzz_text(bytes, size);
    char *nl = strchr(in, '\n');
    const char *method = "GET", *uri = in;
    int status;

    if (nl) {
        *nl = '\0';
        method = in;
        uri = nl + 1;
    }
    status = ncmp_http_resolve(server(), method, uri, matched, in);
    if (status != 0 && status != 400 && status != 404 && status != 405)
        fuzz_fail("an unexpected status", uri, "");
    free(in);
    return status == 0;
}

FUZZ_TARGET("http_route", one, tokens)
