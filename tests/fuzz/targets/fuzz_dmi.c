/* The DMI plugin's answers: module references, module resources, the
 * health answer, an error answer to a bytes call (status from the
 * input's length), and a root's data read by data sync (its first
 * member kept: what is kept must be one JSON object of one member). */
#include <stdlib.h>
#include <string.h>

#include "datasync.h"
#include "fuzz_common.h"
#include "ncmp_dmi.h"
#include "ncmp_json.h"

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
    {
        ncmp_buf scratch = NCMP_BUF_INIT;
        const char *kept = NULL;
        size_t klen = 0;
        json_object *doc = NULL;
        int got = datasync_first_member((const char *)bytes, size, &scratch, &kept, &klen, &err);
        if (got < 0) {
            fuzz_check_reject(in, &err);
        } else if (got == 1) {
            if (ncmp_json_parse(kept, klen, &doc, &err) != 0 ||
                !json_object_is_type(doc, json_type_object) || json_object_object_length(doc) < 1)
                fuzz_fail("data sync kept what is not a JSON object", in, err.msg);
            if (scratch.len && json_object_object_length(doc) != 1)
                fuzz_fail("data sync kept more than the first member", in, "");
            ok = 1;
        }
        json_object_put(doc);
        ncmp_buf_free(&scratch);
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
