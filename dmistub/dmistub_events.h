/*
 * dmistub_events: DataOperationEvent results on Kafka, as a DMI plugin
 * sends them after a batch read (NCMP's DataOperationEvent).
 *
 * A job is one request's operations; publishing it sends one CloudEvent
 * per CM handle to the async topic (ncmp-async-m2m), in Kafka's binary
 * encoding:
 *   headers  ce_specversion 1.0, ce_id (a fresh UUID), ce_source DMI,
 *            ce_type org.onap.cps.ncmp.events.async1_0_0.DataOperationEvent,
 *            ce_dataschema urn:cps:<ce_type>:1.0.0, ce_time (RFC 3339, UTC,
 *            milliseconds), ce_destination (the client topic),
 *            ce_correlationid (the request id), content-type
 *            application/json;
 *   key      the CM handle id (the reference stub uses a random UUID; the
 *            handle id spreads a request over the partitions and keeps one
 *            handle's results in order);
 *   value    {"data":{"responses":[{"operationId","ids":[<handle>],
 *            "resourceIdentifier","options","statusCode":"0",
 *            "statusMessage":"Successfully applied changes",
 *            "result":<the sample topology>}]}}
 *            (resourceIdentifier and options only when the request had
 *            them; the result's network-id is <network base>-<handle>,
 *            where the reference leaves "#network-id" as it is).
 *
 * With --async-legacy a pass-through job (dmistub_job_set_legacy) is
 * answered as ONAP's DMI plugin answers it (its AsyncTaskExecutor and
 * DmiAsyncRequestResponseEventCreator): one DmiAsyncRequestResponseEvent,
 * no CloudEvent headers:
 *   headers  __TypeId__ org.onap.cps.ncmp.event.model.DmiAsyncRequestResponseEvent
 *            (Spring's JSON type header, plain text);
 *   key      the request id;
 *   value    {"eventId":<UUID>,"eventCorrelationId":<request id>,
 *            "eventTime":"2026-12-03T18:40:00.123+0000",
 *            "eventTarget":<the client topic>,
 *            "eventType":"org.onap.cps.ncmp.event.model.DmiAsyncRequestResponseEvent",
 *            "eventSchema":"urn:cps:<that type>","eventSchemaVersion":"v1",
 *            "eventSource":"org.onap.cps.ncmp.dmi",
 *            "eventContent":{"response-data-schema":"urn:cps:<that type>:v1",
 *            "response-status":"OK","response-code":"200",
 *            "response-data":<the sample topology>}}
 *            (status and code by operation: create Created 201, delete
 *            No Content 204, the others OK 200).
 *
 * AVC events (CM notifications, NCMP's avc-event-schema) on --avc-topic
 * (dmi-cm-events), as a DMI plugin reports changes of a device:
 *   headers  ce_specversion 1.0, ce_id, ce_source ONAP-DMI-PLUGIN (the
 *            source NCMP applies to its operational cache), ce_type
 *            org.onap.cps.ncmp.events.avc1_0_0.AvcEvent, ce_dataschema,
 *            ce_time, content-type application/json;
 *   key      the CM handle id;
 *   value    one yang-patch edit: a patch of the Open ROADM device entry
 *            /openroadm-devices/openroadm-device=<handle id> setting its
 *            `status` leaf, "fail" and "success" in turn per handle.
 * With --avc-events N and --avc-handle, N of them are published once at
 * start, round robin over the handles; dmistub_events_submit_avc queues
 * more.
 *
 * One publisher thread takes submitted jobs in order and produces through
 * the core library's producer (batched: linger and lz4 compression by
 * default, --kafka-prop overrides), so HTTP threads never wait for Kafka.
 */
#ifndef DMISTUB_EVENTS_H
#define DMISTUB_EVENTS_H

#include <json-c/json.h>
#include <stddef.h>

#include "dmistub_models.h"
#include "dmistub_opts.h"
#include "dmistub_timer.h"
#include "ncmp_err.h"

typedef struct dmistub_events dmistub_events;
typedef struct dmistub_job dmistub_job;

/* Check a batch request's `operations` (borrowed): an array of objects
 * with a string "operationId", optional string "resourceIdentifier" and
 * "options", and "cmHandles", an array of objects with a string "id".
 * Sets *handles to the number of CM handles. A REJECT names the first
 * bad field. */
int dmistub_job_validate(json_object *operations, size_t *handles, ncmp_err *err);

/* A job for validated `operations` (taken over: the job puts it). The
 * strings are copied. Owned by the caller until submitted. */
dmistub_job *dmistub_job_new(const char *correlation_id, const char *destination,
                             const char *network_base, json_object *operations);

void dmistub_job_free(dmistub_job *job);

/* Answer this job, a pass-through of `operation` ("read", "create", ...;
 * copied) on one handle, in the legacy form above. */
void dmistub_job_set_legacy(dmistub_job *job, const char *operation);

/* Connect a producer to opts->kafka and start the publisher. On success
 * *ev is owned by the caller (dmistub_events_stop); `opts` and `models`
 * are borrowed and must outlive it. */
int dmistub_events_start(dmistub_events **ev, const dmistub_opts *opts, dmistub_models *models,
                         ncmp_err *err);

/* Queue a job for the publisher (takes it). Thread-safe. */
void dmistub_events_submit(dmistub_events *ev, dmistub_job *job);

/* Queue a job once delay_ms have passed, through `timer` (takes it; a
 * negative delay waits for the timer to stop). Thread-safe. */
void dmistub_events_submit_after(dmistub_events *ev, dmistub_timer *timer, long delay_ms,
                                 dmistub_job *job);

/* Queue `n` AVC events, round robin over the comma-separated handle ids
 * `handles` (copied). Thread-safe. */
void dmistub_events_submit_avc(dmistub_events *ev, const char *handles, long n);

typedef struct dmistub_event_stats {
    long queued;    /* handed to the producer */
    long delivered; /* acknowledged by the broker */
    long failed;    /* refused by the producer or not delivered */
} dmistub_event_stats;

/* Counters since the start or the last reset. Thread-safe. */
void dmistub_events_stats(dmistub_events *ev, dmistub_event_stats *out);
void dmistub_events_stats_reset(dmistub_events *ev);

/* Publish every job submitted so far, flush the producer (up to 10 s),
 * stop the thread and free. Accepts NULL. */
void dmistub_events_stop(dmistub_events *ev);

#endif
