/* The strict RFC 3339 checker every CloudEvent's ce_time is read back
 * with (conformance_rfc3339), and conformance_check_headers using it on
 * the headers of every CloudEvent ncmpd writes. */
#include <criterion/criterion.h>
#include <string.h>

#include "conformance.h"
#include "conformance_leak.h"
#include "ncmp_cloudevent.h"
#include "ncmp_lcm.h"

TestSuite(ce_time, .fini = conformance_leak_check);

Test(ce_time, the_rfc3339_checker_is_strict)
{
    static const char *const good[] = {"2026-12-03T07:10:22.587Z",    "2024-02-29T23:59:60Z",
                                       "2000-02-29T00:00:00Z",        "1970-01-01T00:00:00+01:00",
                                       "2026-12-03T07:10:22.5-05:30", "2026-12-03T07:10:22+00:00"};
    static const char *const bad[] = {
        "2026-12-03T07:10:22.587+0000", /* NCMP's legacy eventTime: not RFC 3339 */
        "2026-12-03 07:10:22.587Z",
        "2026-12-03t07:10:22.587Z",
        "2026-12-03T07:10:22.587z",
        "2026-12-03T07:10:22.Z",
        "2026-13-03T07:10:22Z",
        "2026-00-03T07:10:22Z",
        "2026-12-00T07:10:22Z",
        "2025-02-29T07:10:22Z", /* not a leap year */
        "1900-02-29T07:10:22Z", /* nor is 1900 */
        "2026-04-31T07:10:22Z",
        "2026-12-03T24:00:00Z",
        "2026-12-03T07:60:22Z",
        "2026-12-03T07:10:61Z",
        "2026-12-03T07:10Z", /* seconds are not optional */
        "2026-12-03T07:10:22",
        "2026-12-03T07:10:22Zx",
        "2026-12-03T07:10:22+01",
        "2026-12-03T07:10:22+01:00:00",
        "26-12-03T07:10:22Z",
        "2026-12-03T07:10:22+25:00",
        "",
    };

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        cr_assert(conformance_rfc3339(good[i]), "%s", good[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_not(conformance_rfc3339(bad[i]), "%s", bad[i]);
}

Test(ce_time, ncmpd_form_is_utc_with_milliseconds)
{
    cr_assert(conformance_rfc3339_utc_ms("2026-12-03T07:10:22.587Z"));
    cr_assert_not(conformance_rfc3339_utc_ms("2026-12-03T07:10:22Z"));
    cr_assert_not(conformance_rfc3339_utc_ms("2026-12-03T07:10:22.5870Z"));
    cr_assert_not(conformance_rfc3339_utc_ms("2026-12-03T07:10:22.587+00:00"));
    cr_assert_not(conformance_rfc3339_utc_ms("2026-02-30T07:10:22.587Z"), "no 30 February");
}

/* The LCM body's eventTime keeps NCMP's "+0000": it must never be used
 * as a ce_time (it was, for registration outcomes). */
Test(ce_time, the_legacy_event_time_is_not_a_ce_time)
{
    char legacy[32];

    ncmp_event_time_now(legacy);
    cr_assert_not(conformance_rfc3339(legacy), "%s", legacy);
}

/* Headers of a written CloudEvent of `event` with ce_time `time`. */
static rd_kafka_headers_t *written(conformance_event event, const char *time)
{
    ncmp_cloudevent ce = {.source = "NCMP", .time = time, .correlation_id = "c-1"};

    switch (event) {
    case CONFORMANCE_REGISTRATION_RESPONSE:
        ce.type = "org.onap.ncmp.dmi-plugin-registration-response";
        ce.content_type = "application/json";
        break;
    case CONFORMANCE_INVENTORY:
        ce.type = "org.onap.cps.ncmp.events.avc.ncmp_to_client.AvcEvent";
        ce.dataschema = "urn:cps:org.onap.cps.ncmp.events:inventory-event:1.0.0";
        break;
    case CONFORMANCE_DATA_OPERATION:
        ce.type = "org.onap.cps.ncmp.events.async1_0_0.DataOperationEvent";
        ce.dataschema = "urn:cps:org.onap.cps.ncmp.events.async1_0_0.DataOperationEvent:1.0.0";
        ce.destination = "client-topic";
        ce.content_type = "application/json";
        break;
    case CONFORMANCE_CPS_DATA_UPDATED:
        ce.source = "CPS";
        ce.type = "org.onap.cps.events.model.CpsDataUpdatedEvent";
        ce.dataschema = "urn:cps:org.onap.cps.events.model.CpsDataUpdatedEvent:1.0.0";
        ce.correlation_id = "ds:a1";
        break;
    case CONFORMANCE_DATAJOB_RESULT:
        ce.type = "org.onap.cps.ncmp.events.datajob.DataJobResult";
        ce.destination = "ncmp-datajob-responses";
        ce.content_type = "application/json";
        break;
    case CONFORMANCE_REST_REGISTRATION:
        ce.source = "ncmpd-rest";
        ce.type = "org.onap.ncmp.dmi-plugin-registration";
        ce.correlation_id = NULL;
        ce.content_type = "application/json";
        break;
    default:
        cr_assert_fail("event %d is not one ncmpd writes", (int)event);
    }
    return ncmp_cloudevent_headers(&ce);
}

/* Every CloudEvent ncmpd writes: its headers pass with the time ncmpd
 * writes, and not with a time that is not RFC 3339, even one of the
 * form the schema's pattern takes (30 February). */
Test(ce_time, headers_of_every_written_cloudevent_need_an_rfc3339_time)
{
    static const conformance_event events[] = {
        CONFORMANCE_REGISTRATION_RESPONSE, CONFORMANCE_INVENTORY,
        CONFORMANCE_DATA_OPERATION,        CONFORMANCE_CPS_DATA_UPDATED,
        CONFORMANCE_DATAJOB_RESULT,        CONFORMANCE_REST_REGISTRATION};
    static const char *const refused[] = {"2026-02-30T07:10:22.587Z",
                                          "2026-12-03T07:10:22.587+0000"};
    char err[1024] = "";

    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
        rd_kafka_headers_t *h = written(events[i], NULL);
        int rc = conformance_check_headers(events[i], h, err, sizeof(err));

        rd_kafka_headers_destroy(h);
        cr_assert_eq(rc, 0, "event %d: %s", (int)events[i], err);
        for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
            h = written(events[i], refused[k]);
            rc = conformance_check_headers(events[i], h, err, sizeof(err));
            rd_kafka_headers_destroy(h);
            cr_assert_eq(rc, -1, "event %d took ce_time %s", (int)events[i], refused[k]);
            cr_assert(strstr(err, "ce_time"), "%s", err);
        }
    }
}

/* A CloudEvent read (a heartbeat): ce_time is not required, but one that
 * is there must be RFC 3339, whatever its offset. */
Test(ce_time, a_read_cloudevents_time_when_present_is_rfc3339)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(4);
    char err[1024] = "";
    int none, offset, legacy, valueless;

    rd_kafka_header_add(h, "ce_id", -1, "ch-1", -1);
    none = conformance_check_headers(CONFORMANCE_DEVICE_HEARTBEAT, h, err, sizeof(err));
    rd_kafka_header_add(h, "ce_time", -1, "2026-12-03T08:10:22.5+01:00", -1);
    offset = conformance_check_headers(CONFORMANCE_DEVICE_HEARTBEAT, h, err, sizeof(err));
    rd_kafka_header_add(h, "ce_time", -1, "2026-12-03T07:10:22.587+0000", -1);
    legacy = conformance_check_headers(CONFORMANCE_DEVICE_HEARTBEAT, h, err, sizeof(err));
    rd_kafka_header_add(h, "ce_time", -1, NULL, 0);
    valueless = conformance_check_headers(CONFORMANCE_DEVICE_HEARTBEAT, h, err, sizeof(err));
    rd_kafka_headers_destroy(h);
    cr_assert_eq(none, 0);
    cr_assert_eq(offset, 0);
    cr_assert_eq(legacy, -1, "+0000 is not RFC 3339");
    cr_assert_eq(valueless, -1, "a ce_time header without a value");
    cr_assert(strstr(err, "ce_time"), "%s", err);
}
