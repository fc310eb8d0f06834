/* Unit tests of lib/ncmp_cloudevent.c: the ce_* headers, the UUIDs and
 * the time. Every ce_time is checked with the strict RFC 3339 parser of
 * the conformance tests (conformance_rfc3339, tested there), not with the
 * code under test. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conformance.h"
#include "ncmp_cloudevent.h"
#include "unit_leak.h"

TestSuite(ncmp_cloudevent, .fini = unit_leak_check);

Test(ncmp_cloudevent, time_formats_known_instants)
{
    static const struct {
        time_t sec;
        long nsec;
        const char *expect;
    } cases[] = {
        {0, 0, "1970-01-01T00:00:00.000Z"},
        {951782400, 999999999, "2000-02-29T00:00:00.999Z"}, /* truncated, not rounded up */
        {1796281822, 587000000, "2026-12-03T07:10:22.587Z"},
        {4102444799, 1000000, "2099-12-31T23:59:59.001Z"},
    };
    char out[NCMP_CLOUDEVENT_TIME_SIZE];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct timespec ts = {cases[i].sec, cases[i].nsec};
        ncmp_cloudevent_time(out, &ts);
        cr_assert_str_eq(out, cases[i].expect);
        cr_assert(conformance_rfc3339_utc_ms(out), "%s", out);
    }
}

Test(ncmp_cloudevent, time_now_is_now_in_utc)
{
    char out[NCMP_CLOUDEVENT_TIME_SIZE], before[NCMP_CLOUDEVENT_TIME_SIZE];
    char after[NCMP_CLOUDEVENT_TIME_SIZE];
    struct timespec t0, t1;

    clock_gettime(CLOCK_REALTIME, &t0);
    ncmp_cloudevent_time_now(out);
    clock_gettime(CLOCK_REALTIME, &t1);
    ncmp_cloudevent_time(before, &t0);
    ncmp_cloudevent_time(after, &t1);
    cr_assert(conformance_rfc3339_utc_ms(out), "%s", out);
    /* same-length strings of one format order as the instants do */
    cr_assert(strcmp(before, out) <= 0 && strcmp(out, after) <= 0, "%s not in [%s, %s]", out,
              before, after);
}

static const char *header(const rd_kafka_headers_t *h, const char *name, char *buf, size_t len)
{
    const void *v;
    size_t n;

    if (rd_kafka_header_get_last(h, name, &v, &n) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return NULL;
    cr_assert_lt(n, len);
    memcpy(buf, v, n);
    buf[n] = '\0';
    return buf;
}

static int uuid4_valid(const char *s)
{
    if (strlen(s) != 36)
        return 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return 0;
        } else if (!strchr("0123456789abcdef", s[i])) {
            return 0;
        }
    }
    return s[14] == '4' && strchr("89ab", s[19]) != NULL;
}

Test(ncmp_cloudevent, headers_of_a_full_event_in_order)
{
    const ncmp_cloudevent ce = {.id = "id-1",
                                .source = "NCMP",
                                .type = "t",
                                .dataschema = "urn:s",
                                .time = "2026-12-03T07:10:22.587Z",
                                .correlation_id = "req-1",
                                .destination = "client-topic",
                                .content_type = "application/json"};
    static const char *const expect[][2] = {
        {"ce_specversion", "1.0"},
        {"ce_id", "id-1"},
        {"ce_source", "NCMP"},
        {"ce_type", "t"},
        {"ce_dataschema", "urn:s"},
        {"ce_time", "2026-12-03T07:10:22.587Z"},
        {"ce_correlationid", "req-1"},
        {"ce_destination", "client-topic"},
        {"content-type", "application/json"},
    };
    rd_kafka_headers_t *h = ncmp_cloudevent_headers(&ce);
    const char *name;
    const void *value;
    size_t size;

    cr_assert_eq(rd_kafka_header_cnt(h), 9);
    for (size_t i = 0; i < 9; i++) {
        cr_assert_eq(rd_kafka_header_get_all(h, i, &name, &value, &size),
                     RD_KAFKA_RESP_ERR_NO_ERROR);
        cr_assert_str_eq(name, expect[i][0]);
        cr_assert(size == strlen(expect[i][1]) && memcmp(value, expect[i][1], size) == 0,
                  "%s: %.*s", name, (int)size, (const char *)value);
    }
    rd_kafka_headers_destroy(h);
}

Test(ncmp_cloudevent, headers_of_a_minimal_event_make_id_and_time)
{
    const ncmp_cloudevent ce = {.source = "NCMP", .type = "t"};
    rd_kafka_headers_t *h1 = ncmp_cloudevent_headers(&ce);
    rd_kafka_headers_t *h2 = ncmp_cloudevent_headers(&ce);
    char id1[64], id2[64], when[64];
    static const char *const absent[] = {"ce_dataschema", "ce_correlationid", "ce_destination",
                                         "content-type"};

    cr_assert_eq(rd_kafka_header_cnt(h1), 5);
    cr_assert_not_null(header(h1, "ce_id", id1, sizeof(id1)));
    cr_assert_not_null(header(h2, "ce_id", id2, sizeof(id2)));
    cr_assert(uuid4_valid(id1), "%s", id1);
    cr_assert_str_neq(id1, id2, "a new id per event");
    cr_assert_not_null(header(h1, "ce_time", when, sizeof(when)));
    cr_assert(conformance_rfc3339_utc_ms(when), "ce_time %s", when);
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
        cr_assert_null(header(h1, absent[i], id2, sizeof(id2)), "%s", absent[i]);
    rd_kafka_headers_destroy(h1);
    rd_kafka_headers_destroy(h2);
}

/* The events the workers, the stub and the load generator send, as they
 * fill the attributes: each one's ce_time is RFC 3339. */
Test(ncmp_cloudevent, every_produced_ce_time_is_rfc3339)
{
    const ncmp_cloudevent events[] = {
        {.source = "NCMP",
         .type = "org.onap.cps.ncmp.events.async1_0_0.DataOperationEvent",
         .correlation_id = "r",
         .destination = "d",
         .content_type = "application/json"},
        {.source = "NCMP",
         .type = "org.onap.ncmp.dmi-plugin-registration-response",
         .correlation_id = "r",
         .content_type = "application/json"},
        {.id = "given", .source = "ncmpd-rest", .type = "org.onap.ncmp.dmi-plugin-registration"},
        {.source = "NCMP", .type = "org.onap.cps.ncmp.events.avc.ncmp_to_client.AvcEvent"},
    };
    char when[64];

    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
            rd_kafka_headers_t *h = ncmp_cloudevent_headers(&events[i]);
            cr_assert_not_null(header(h, "ce_time", when, sizeof(when)));
            rd_kafka_headers_destroy(h);
            if (!conformance_rfc3339_utc_ms(when))
                cr_assert_fail("event %zu: ce_time %s", i, when);
        }
    }
}

Test(ncmp_cloudevent, uuid4_is_a_random_version_4_uuid)
{
    char a[37], b[37];

    for (int i = 0; i < 1000; i++) {
        ncmp_uuid4(a);
        ncmp_uuid4(b);
        if (!uuid4_valid(a) || strcmp(a, b) == 0)
            cr_assert_fail("%s / %s", a, b);
    }
}
