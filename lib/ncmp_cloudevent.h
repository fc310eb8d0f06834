/*
 * ncmp_cloudevent: the CloudEvent attributes of a Kafka record in binary
 * mode (CloudEvents' Kafka protocol binding: one "ce_" header per
 * attribute, the data as the value), and the two values every event
 * needs, a random id and the time.
 *
 * ce_time is RFC 3339 in UTC with milliseconds, e.g.
 * 2026-12-03T07:10:22.587Z, as CloudEvents requires. Not to be confused
 * with the "+0000" time of NCMP's legacy lifecycle event body
 * (ncmp_event_time_now in ncmp_lcm), which is NCMP's own format.
 */
#ifndef NCMP_CLOUDEVENT_H
#define NCMP_CLOUDEVENT_H

#include <librdkafka/rdkafka.h>
#include <time.h>

/* Room for a time of ncmp_cloudevent_time (24 characters and a NUL). */
#define NCMP_CLOUDEVENT_TIME_SIZE 32

/* One event's attributes; the pointers are borrowed for the call. */
typedef struct ncmp_cloudevent {
    const char *id;             /* ce_id; NULL: a new random UUID */
    const char *source;         /* ce_source, required */
    const char *type;           /* ce_type, required */
    const char *dataschema;     /* ce_dataschema; NULL: none */
    const char *time;           /* ce_time; NULL: now */
    const char *correlation_id; /* ce_correlationid; NULL: none */
    const char *destination;    /* ce_destination; NULL: none */
    const char *content_type;   /* content-type (not a ce_ header); NULL: none */
} ncmp_cloudevent;

/* The headers of `ce`: ce_specversion "1.0", ce_id, ce_source, ce_type,
 * then those of ce_dataschema, ce_time, ce_correlationid, ce_destination
 * and content-type that apply, in that order. The caller owns the result
 * (a produce call that takes headers takes it over). */
rd_kafka_headers_t *ncmp_cloudevent_headers(const ncmp_cloudevent *ce);

/* `ts` (CLOCK_REALTIME) as RFC 3339 in UTC with milliseconds (truncated,
 * not rounded), e.g. 2026-12-03T07:10:22.587Z. */
void ncmp_cloudevent_time(char out[NCMP_CLOUDEVENT_TIME_SIZE], const struct timespec *ts);

/* Now, as ncmp_cloudevent_time formats it. */
void ncmp_cloudevent_time_now(char out[NCMP_CLOUDEVENT_TIME_SIZE]);

/* A random (version 4) UUID in lowercase, 36 characters and a NUL, from
 * the kernel's random source; aborts when there is none (ids would not be
 * unique). */
void ncmp_uuid4(char out[37]);

#endif
