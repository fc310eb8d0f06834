/* The headers consumers read: CloudEvent attributes (ce_*), the
 * dead-letter ones (dlq_*) and the relay's sequence, through
 * ncmp_kafka_headers_value, and the AVC consumer's ce_source check. The
 * input is the record's headers, one "name:value" per line (a value may
 * hold any byte but a line break; a line without ':' is a header without
 * a value). */
#include <stdlib.h>
#include <string.h>

#include "avc_apply.h"
#include "fuzz_common.h"
#include "ncmp_kafka.h"

static const char *const tokens[] = {
    "\n",
    ":",
    "ce_id:",
    "ce_type:",
    "ce_source:",
    "ce_specversion:1.0\n",
    "ce_correlationid:",
    "ce_destination:",
    "content-type:application/json\n",
    "dlq_reason:",
    "dlq_offset:",
    "ncmp_seq:",
    "ONAP-DMI-PLUGIN",
    "\xac\xed\x00\x05\x74\x00\x0f",
    "\x00",
};

static rd_kafka_headers_t *headers(const uint8_t *bytes, size_t size)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(8);
    size_t at = 0;

    while (at < size) {
        const uint8_t *line = bytes + at, *nl = memchr(line, '\n', size - at);
        size_t n = nl ? (size_t)(nl - line) : size - at;
        const uint8_t *colon = memchr(line, ':', n);
        char name[64];
        size_t nlen = colon ? (size_t)(colon - line) : n;

        if (nlen >= sizeof(name))
            nlen = sizeof(name) - 1;
        memcpy(name, line, nlen);
        name[nlen] = '\0';
        if (colon)
            rd_kafka_header_add(h, name, -1, colon + 1, (ssize_t)(n - (size_t)(colon - line) - 1));
        else
            rd_kafka_header_add(h, name, -1, NULL, 0);
        at += n + 1;
    }
    return h;
}

static int one(const uint8_t *bytes, size_t size)
{
    static const char *const names[] = {
        "ce_id",      "ce_type",    "ce_source", "ce_correlationid", "ce_destination",
        "dlq_reason", "dlq_offset", "ncmp_seq",  "content-type"};
    static const size_t sizes[] = {1, 2, 37, 256};
    rd_kafka_headers_t *h = headers(bytes, size);
    const void *value = NULL;
    size_t vlen = 0;
    int found = 0;

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            char *buf = malloc(sizes[k]);
            const char *v = ncmp_kafka_headers_value(h, names[i], buf, sizes[k]);
            if (v && (v != buf || strlen(v) >= sizes[k]))
                fuzz_fail("a header value that does not fit", names[i], "");
            found |= v != NULL;
            free(buf);
        }
    }
    if (rd_kafka_header_get_last(h, "ce_source", &value, &vlen) == RD_KAFKA_RESP_ERR_NO_ERROR)
        (void)avc_source_is_dmi_plugin(value, vlen);
    rd_kafka_headers_destroy(h);
    return found;
}

FUZZ_TARGET("kafka_headers", one, tokens)
