/* Conformance of workers/forward/async_legacy.c with NCMP: the
 * NcmpAsyncRequestResponseEvent it maps from a DMI plugin's
 * DmiAsyncRequestResponseEvent, validated against ncmpd's schemas and,
 * when available, NCMP's published ones (loaded leniently, see
 * conformance.h). */
#include <criterion/criterion.h>
#include <string.h>

#include "async_legacy.h"
#include "conformance.h"
#include "conformance_leak.h"
#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"
#include "ncmp_lcm.h"

static ncmp_buf held_out = NCMP_BUF_INIT, held_target = NCMP_BUF_INIT;

static void async_legacy_fini(void)
{
    ncmp_buf_free(&held_out);
    ncmp_buf_free(&held_target);
    conformance_leak_check();
}

TestSuite(async_legacy_conformance, .fini = async_legacy_fini);

#define DMI_TYPE "org.onap.cps.ncmp.event.model.DmiAsyncRequestResponseEvent"

/* As ONAP's DMI plugin's DmiAsyncRequestResponseEventCreator writes it. */
static const char dmi_event[] =
    "{\"eventId\":\"5d1c8a3e-2f4b-4c6d-8e9f-0a1b2c3d4e5f\",\"eventCorrelationId\":\"req-7\","
    "\"eventTime\":\"2026-12-03T10:59:59.123+0000\",\"eventTarget\":\"client-topic\","
    "\"eventType\":\"" DMI_TYPE "\",\"eventSchema\":\"urn:cps:" DMI_TYPE "\","
    "\"eventSchemaVersion\":\"v1\",\"eventSource\":\"org.onap.cps.ncmp.dmi\","
    "\"eventContent\":{\"response-data-schema\":\"urn:cps:" DMI_TYPE ":v1\","
    "\"response-status\":\"OK\",\"response-code\":\"200\","
    "\"response-data\":{\"ietf-interfaces:interfaces\":{\"interface\":[{\"name\":\"eth0\"}]}}}}";

static int map(const char *in, char *err, size_t errlen)
{
    char id[37], time[32];

    ncmp_uuid4(id);
    ncmp_event_time_now(time);
    ncmp_buf_reset(&held_out);
    ncmp_buf_reset(&held_target);
    cr_assert_eq(async_legacy_map(in, strlen(in), id, time, &held_out, &held_target, err, errlen),
                 0, "%s", err);
    return conformance_check_event_text(CONFORMANCE_NCMP_ASYNC, held_out.data, held_out.len, err,
                                        errlen);
}

Test(async_legacy_conformance, the_dmi_plugins_event_and_its_mapping_conform)
{
    char err[1024] = "", status[512];

    fprintf(stderr, "%s\n", conformance_onap_status(status, sizeof(status)));
    cr_assert_eq(conformance_check_event_text(CONFORMANCE_DMI_ASYNC, dmi_event, strlen(dmi_event),
                                              err, sizeof(err)),
                 0, "the DMI plugin's event: %s", err);
    cr_assert_eq(map(dmi_event, err, sizeof(err)), 0, "the mapped event: %s: %s", err,
                 held_out.data);
}

/* NCMP's schema requires eventType and the other header fields at the
 * top; a DMI event without them maps to an event it refuses (ncmpd sends
 * it all the same, as NCMP does). This shows NCMP's schema is applied. */
Test(async_legacy_conformance, ncmps_schema_is_applied_when_available)
{
    static const char sparse[] = "{\"eventTarget\":\"t\",\"eventContent\":{\"response-data\":{}}}";
    char err[1024] = "";
    int rc;

    if (!conformance_onap_available())
        cr_skip_test("NCMP's published schemas are not available");
    rc = map(sparse, err, sizeof(err));
    cr_assert_eq(rc, -1, "NCMP's schema requires eventCorrelationId and the others");
    cr_assert(strstr(err, "NCMP's " CONFORMANCE_NCMP_ASYNC_SCHEMA_FILE) && strstr(err, "required"),
              "%s", err);
}
