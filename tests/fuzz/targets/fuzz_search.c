/* The CM-handle search bodies (CmHandleQueryParameters), on both sides
 * and with the legacy form: one SQL condition that uses each of its
 * parameters and no other, with balanced brackets and quotes, or a 400
 * with a message. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_sql.h"
#include "search.h"

static const char *const tokens[] = {
    FUZZ_JSON_TOKENS,
    "\"cmHandleQueryParameters\":[",
    "{\"conditionName\":\"hasAllModules\",\"conditionParameters\":[{\"moduleName\":\"m\"}]}",
    "{\"conditionName\":\"hasAllProperties\",\"conditionParameters\":[{\"k\":\"v\"}]}",
    "{\"conditionName\":\"hasAllAdditionalProperties\",\"conditionParameters\":[{\"k\":\"v\"}]}",
    "{\"conditionName\":\"cmHandleWithCpsPath\",\"conditionParameters\":[{\"cpsPath\":\"//"
    "state[@cm-handle-state='READY']\"}]}",
    "{\"conditionName\":\"cmHandleWithTrustLevel\",\"conditionParameters\":[{\"trustLevel\":"
    "\"COMPLETE\"}]}",
    "{\"conditionName\":\"cmHandleWithDmiPlugin\",\"conditionParameters\":[{\"dmiPluginName\":"
    "\"http://dmi\"}]}",
    "\"conditionName\":",
    "\"conditionParameters\":[",
    "\"conditions\":[{\"name\":\"hasAllModules\",\"conditionParameters\":[",
    "\"moduleName\":",
    "\"cpsPath\":\"//",
    "[@",
    "']",
};

static int check(const char *in, const uint8_t *bytes, size_t size, search_side side, int legacy)
{
    search_query q;
    search_error e;
    int ok;

    memset(&e, 0, sizeof(e));
    ok = search_parse((const char *)bytes, size, side, legacy, &q, &e) == 0;
    if (ok) {
        const char *where = q.where.data ? q.where.data : "";
        fuzz_check_placeholders(in, where, 1, (size_t)q.nparams, 0);
        fuzz_check_shape(in, where);
    } else if (!e.message[0]) {
        fuzz_fail("a refusal without a message", in, "");
    }
    search_query_free(&q);
    return ok;
}

static int one(const uint8_t *bytes, size_t size)
{
    char *in = fuzz_text(bytes, size);
    int ok = check(in, bytes, size, SEARCH_NORTHBOUND, 0);

    ok |= check(in, bytes, size, SEARCH_NORTHBOUND, 1);
    ok |= check(in, bytes, size, SEARCH_SOUTHBOUND, 0);
    ok |= check(in, bytes, size, SEARCH_SOUTHBOUND, 1);
    free(in);
    return ok;
}

FUZZ_TARGET("search", one, tokens)
