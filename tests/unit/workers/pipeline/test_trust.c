/*
 * trust: the device heartbeat decoder and the inventory event's data.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "trust.h"

Test(trust, heartbeat_gives_the_level)
{
    const char *level = NULL;
    ncmp_err err;
    static const char none[] = "{\"data\":{\"trustLevel\":\"NONE\"}}";
    static const char complete[] = "{\"data\":{\"trustLevel\":\"COMPLETE\"}}";

    cr_assert_eq(trust_heartbeat_decode(none, strlen(none), &level, &err), 0, "%s", err.msg);
    cr_assert_str_eq(level, TRUST_NONE);
    cr_assert_eq(trust_heartbeat_decode(complete, strlen(complete), &level, &err), 0, "%s",
                 err.msg);
    cr_assert_str_eq(level, TRUST_COMPLETE);
}

Test(trust, heartbeat_refuses_anything_else)
{
    static const char *const bad[] = {
        "not json",
        "[]",
        "{}",
        "{\"data\":{}}",
        "{\"data\":{\"trustLevel\":\"PARTIAL\"}}",
        "{\"data\":{\"trustLevel\":1}}",
        "{\"data\":{\"trustLevel\":\"NONE\",\"extra\":1}}",
        "{\"data\":{\"trustLevel\":\"NONE\"},\"extra\":1}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *level = NULL;
        ncmp_err err;
        cr_expect_eq(trust_heartbeat_decode(bad[i], strlen(bad[i]), &level, &err), -1,
                     "%s accepted", bad[i]);
        cr_expect_eq(err.cls, NCMP_ERR_REJECT, "%s", bad[i]);
        cr_expect_null(level, "%s", bad[i]);
    }
}

Test(trust, avc_data_leaves_out_a_missing_old_value)
{
    ncmp_buf b = NCMP_BUF_INIT;

    trust_avc_json(&b, TRUST_COMPLETE, TRUST_NONE);
    cr_assert_str_eq(b.data, "{\"data\":{\"attributeValueChange\":[{\"attributeName\":"
                             "\"trustLevel\",\"oldAttributeValue\":\"COMPLETE\","
                             "\"newAttributeValue\":\"NONE\"}]}}");
    ncmp_buf_reset(&b);
    trust_avc_json(&b, NULL, TRUST_NONE);
    cr_assert_null(strstr(b.data, "oldAttributeValue"), "%s", b.data);
    ncmp_buf_free(&b);
}
