/* The ProvMnS PATCH body (a JSON Patch array): its items, or a 400/413
 * with a title. */
#include <stdlib.h>

#include "fuzz_common.h"
#include "provmns.h"

static const char *const tokens[] = {
    FUZZ_JSON_TOKENS,
    "{\"op\":\"replace\",\"path\":\"/attributes/x\",\"value\":1}",
    "{\"op\":\"add\",\"path\":\"#/attributes/y\",\"value\":{}}",
    "{\"op\":\"remove\",\"path\":\"/\"}",
    "{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/b\"}",
    "\"op\":\"copy\"",
    "\"op\":\"test\"",
    "\"op\":\"bogus\"",
    "\"path\":",
    "\"from\":",
    "\"value\":",
};

static int one(const uint8_t *bytes, size_t size)
{
    json_object *items = NULL;
    provmns_patch_error e = {0};
    /* the limit from the input, so that 413 is reached too */
    int max = 1 + (int)(size % 8);
    int ok = provmns_patch_parse((const char *)bytes, size, max, &items, &e) == 0;

    if (ok ? !json_object_is_type(items, json_type_array) ||
                 (int)json_object_array_length(items) > max
           : items != NULL || !e.title[0] || (e.status != 400 && e.status != 413)) {
        char *in = fuzz_text(bytes, size);
        fuzz_fail("an inconsistent result", in, e.title);
    }
    json_object_put(items);
    return ok;
}

FUZZ_TARGET("provmns_patch", one, tokens)
