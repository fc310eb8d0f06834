/* The DMI plugin's answers: module references, module resources, the
 * health answer, and an error answer to a bytes call (status from the
 * input's length). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ncmp_dmi.h"

static const char *const tokens[] = {
    FUZZ_JSON_TOKENS,
    "{\"schemas\":[",
    "{\"moduleName\":\"m\",\"revision\":\"2024-01-01\",\"namespace\":\"urn:m\"}",
    "[{\"moduleName\":\"m\",\"revision\":\"2024-01-01\",\"yangSource\":\"module m {}\"}]",
    "\"moduleName\":",
    "\"revision\":null",
    "\"namespace\":",
    "\"yangSource\":",
    "{\"status\":\"UP\"}",
    "\"status\":",
    "\"message\":",
    "\"body\":",
};

static void check_list(const char *in, const ncmp_dmi_module_list *l, int resources)
{
    for (size_t i = 0; i < l->len; i++) {
        const ncmp_dmi_module *m = &l->items[i];
        if (!m->name || !m->name[0] || !m->revision)
            fuzz_fail("a module without its name or revision", in, "");
        if (resources && (!m->source || !m->source[0]))
            fuzz_fail("a module resource without its source", in, m->name);
    }
}

static int one(const uint8_t *bytes, size_t size)
{
    static const long statuses[] = {200, 400, 404, 500, 503, 0};
    char *in = fuzz_text(bytes, size);
    ncmp_dmi_module_list l = {0};
    ncmp_dmi_response r;
    ncmp_err err = {0};
    int ok = 0;

    if (ncmp_dmi_parse_module_references((const char *)bytes, size, &l, &err) == 0) {
        check_list(in, &l, 0);
        ncmp_dmi_module_list_free(&l);
        ok = 1;
    } else {
        fuzz_check_reject(in, &err);
    }
    memset(&l, 0, sizeof(l));
    if (ncmp_dmi_parse_module_resources((const char *)bytes, size, &l, &err) == 0) {
        check_list(in, &l, 1);
        ncmp_dmi_module_list_free(&l);
        ok = 1;
    } else {
        fuzz_check_reject(in, &err);
    }
    memset(&r, 0, sizeof(r));
    r.status = statuses[size % (sizeof(statuses) / sizeof(statuses[0]))];
    ncmp_buf_append(&r.body, bytes, size);
    (void)ncmp_dmi_health_up(&r);
    if (ncmp_dmi_response_check(&r, &err) != 0 && !err.msg[0])
        fuzz_fail("a failed answer without its reason", in, "");
    ncmp_dmi_response_free(&r);
    free(in);
    return ok;
}

FUZZ_TARGET("dmi", one, tokens)
