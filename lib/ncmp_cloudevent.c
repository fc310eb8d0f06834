#include "ncmp_cloudevent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static void header_add(rd_kafka_headers_t *h, const char *name, const char *value)
{
    if (value)
        rd_kafka_header_add(h, name, -1, value, -1);
}

rd_kafka_headers_t *ncmp_cloudevent_headers(const ncmp_cloudevent *ce)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(9);
    char id[37], now[NCMP_CLOUDEVENT_TIME_SIZE];

    if (!ce->id)
        ncmp_uuid4(id);
    if (!ce->time)
        ncmp_cloudevent_time_now(now);
    header_add(h, "ce_specversion", "1.0");
    header_add(h, "ce_id", ce->id ? ce->id : id);
    header_add(h, "ce_source", ce->source);
    header_add(h, "ce_type", ce->type);
    header_add(h, "ce_dataschema", ce->dataschema);
    header_add(h, "ce_time", ce->time ? ce->time : now);
    header_add(h, "ce_correlationid", ce->correlation_id);
    header_add(h, "ce_destination", ce->destination);
    header_add(h, "content-type", ce->content_type);
    return h;
}

void ncmp_cloudevent_time(char out[NCMP_CLOUDEVENT_TIME_SIZE], const struct timespec *ts)
{
    struct tm tm;

    gmtime_r(&ts->tv_sec, &tm);
    snprintf(out, NCMP_CLOUDEVENT_TIME_SIZE, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (int)(ts->tv_nsec / 1000000));
}

void ncmp_cloudevent_time_now(char out[NCMP_CLOUDEVENT_TIME_SIZE])
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ncmp_cloudevent_time(out, &ts);
}

void ncmp_uuid4(char out[37])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[16];
    size_t got = 0;
    int o = 0;

    while (got < sizeof(b)) {
        ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
        if (n > 0) {
            got += (size_t)n;
        } else if (errno != EINTR) {
            /* no kernel randomness: ids would not be unique; stop */
            fprintf(stderr, "ncmpd: getrandom failed: %s\n", strerror(errno));
            abort();
        }
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 0xf];
    }
    out[o] = '\0';
}
