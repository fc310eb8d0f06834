/* The batch read body (DataOperationRequest, POST /ncmp/v1/bytes and the
 * request topic): a checked request, or a 400/413 with a message. */
#include <stdlib.h>

#include "data.h"
#include "fuzz_common.h"

static const char *const tokens[] = {
    FUZZ_JSON_TOKENS,
    "\"operations\":[",
    ("{\"operation\":\"read\",\"operationId\":\"1\",\"datastore\":\"ncmp-datastore:passthrough-"
     "operational\",\"targetIds\":[\"ch-1\"]}"),
    "\"operation\":\"read\"",
    "\"operation\":\"create\"",
    "\"operationId\":",
    "\"datastore\":\"ncmp-datastore:passthrough-running\"",
    "\"datastore\":\"ncmp-datastore:operational\"",
    "\"options\":\"(fields=x)\"",
    "\"resourceIdentifier\":\"/\"",
    "\"targetIds\":[",
    "\"ch-1\",",
};

static int one(const uint8_t *bytes, size_t size)
{
    json_object *root = NULL;
    batch_error e = {0};
    int ok = data_batch_parse((const char *)bytes, size, &root, &e) == 0;

    if (ok != (root != NULL) || (!ok && (!e.message[0] || (e.status != 400 && e.status != 413)))) {
        char *in = fuzz_text(bytes, size);
        fuzz_fail("an inconsistent result", in, e.message);
    }
    json_object_put(root);
    return ok;
}

FUZZ_TARGET("batch", one, tokens)
