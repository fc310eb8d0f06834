/* The registration request: the REST front's shape check and the
 * registration role's decoder (DmiPluginRegistration). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "registration_decode.h"
#include "rest_registration.h"

static const char *const tokens[] = {
    FUZZ_JSON_TOKENS,
    "\"dmiPlugin\":\"http://dmi:8080\"",
    "\"dmiDataPlugin\":",
    "\"dmiModelPlugin\":",
    "\"dmiDatajobsReadPlugin\":",
    "\"createdCmHandles\":[",
    "\"updatedCmHandles\":[",
    "\"removedCmHandles\":[",
    "\"upgradedCmHandles\":{",
    "\"cmHandles\":[",
    "\"cmHandle\":\"ch-1\"",
    "\"alternateId\":\" a \"",
    "\"moduleSetTag\":\"tag\"",
    "\"trustLevel\":\"COMPLETE\"",
    "\"trustLevel\":\"NONE\"",
    "\"dataProducerIdentifier\":",
    "\"cmHandleProperties\":{\"k\":\"v\"}",
    "\"publicCmHandleProperties\":{\"k\":null}",
    "\"ch:1\"",
};

static void check_handles(const char *in, const reg_handle *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!h[i].id)
            fuzz_fail("a decoded handle without an id", in, "");
        (void)registration_id_valid(h[i].id);
    }
}

static int one(const uint8_t *bytes, size_t size)
{
    char *in = fuzz_text(bytes, size);
    reg_request r;
    ncmp_err err = {0}, cerr = {0};
    int ok;

    (void)rest_registration_check((const char *)bytes, size, &cerr);
    memset(&r, 0, sizeof(r));
    ok = registration_request_decode(&r, bytes, size, &err) == 0;
    if (ok) {
        check_handles(in, r.created, r.ncreated);
        check_handles(in, r.updated, r.nupdated);
        for (size_t i = 0; i < r.nremoved; i++)
            (void)registration_id_valid(r.removed[i]);
    } else {
        fuzz_check_reject(in, &err);
    }
    registration_request_free(&r);
    free(in);
    return ok;
}

FUZZ_TARGET("registration", one, tokens)
