/* The AVC consumer's decoders: the event (edits of a cm handle's bytes)
 * and the ce_source header it checks first. */
#include <stdlib.h>

#include "avc_apply.h"
#include "avc_event.h"
#include "fuzz_common.h"

static const char *const tokens[] = {
    FUZZ_JSON_TOKENS,
    ("{\"data\":{\"push-change-update\":{\"datastore-changes\":{\"ietf-yang-patch:yang-patch\":{"
     "\"patch-id\":\"p\",\"edit\":["),
    "{\"edit-id\":\"1\",\"operation\":\"replace\",\"target\":\"/bookstore\",\"value\":{}}",
    "\"operation\":\"create\"",
    "\"operation\":\"merge\"",
    "\"operation\":\"delete\"",
    "\"operation\":\"READ\"",
    "\"target\":",
    "\"value\":",
    "\"edit\":[",
    "\"attributeValueChange\":[",
    "ONAP-DMI-PLUGIN",
    "\xac\xed\x00\x05\x74\x00\x0f",
};

static int one(const uint8_t *bytes, size_t size)
{
    avc_event ev = {0};
    ncmp_err err = {0};
    int ok = avc_event_parse((const char *)bytes, size, &ev, &err) == 0;

    if (!ok) {
        char *in = fuzz_text(bytes, size);
        fuzz_check_reject(in, &err);
        free(in);
    }
    avc_event_clear(&ev);
    (void)avc_source_is_dmi_plugin(bytes, size);
    return ok;
}

FUZZ_TARGET("avc", one, tokens)
