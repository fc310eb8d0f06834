/*
 * cps_events: CPS's data-updated events (topic cps.data-updated-topic).
 *
 * A write of the store (cps_store.h) announces itself when its anchor is
 * subscribed: the anchor is named in CPS-Admin's anchor
 * cps-notification-subscriptions, or its dataspace is and names no
 * anchors (CPS's rule, CpsNotificationServiceImpl). The check and the
 * outbox row are one statement in the write's transaction, so a write
 * that rolls back announces nothing, and the cps-relay role publishes
 * each committed write's event once (lib/ncmp_relay.h).
 *
 * The event is CPS's: a CloudEvent (ce_source CPS, ce_type
 * org.onap.cps.events.model.CpsDataUpdatedEvent, ce_correlationid and key
 * <dataspace>:<anchor>) with {"eventPayload": {observedTimestamp,
 * dataspaceName, schemaSetName, anchorName, action, xpath}}; action is
 * create (save), replace (save list entries, update, replace) or remove
 * (delete). schema/cps-data-updated-event.json is its schema.
 */
#ifndef NCMPD_CPS_EVENTS_H
#define NCMPD_CPS_EVENTS_H

#include "cps_internal.h"
#include "ncmp_buf.h"
#include "ncmp_cloudevent.h"

/* A write's events, in its transaction. cps_events_begin is called once
 * the anchor is locked and before anything is written, with the stored
 * path of the node the write names (its parent for a save, "" for the
 * root); cps_events_end after the write: without delta notifications (or
 * for an anchor not subscribed), one event with `action` ("create",
 * "replace" or "remove") and the write's `xpath` (NULL: "/"), when the
 * anchor is subscribed; with them (cps.delta-notification), one event per
 * entry of the grouped delta of that node's subtree from before the write
 * to after it, each with its sourceData and targetData (one event without
 * them when nothing changed), as CPS sends them. */
typedef struct cps_notice {
    int delta;        /* a snapshot was taken */
    char scratch[24]; /* its anchor */
    char *path;       /* the node's stored path */
} cps_notice;

int cps_events_begin(ncmp_db *db, const cps_target *t, const char *path, cps_notice *n,
                     ncmp_err *err);
int cps_events_end(ncmp_db *db, const cps_target *t, cps_notice *n, const char *action,
                   const char *xpath, ncmp_err *err);

/* Does cps_events_begin read the database (delta notifications on)? When
 * it does not, a write may send its first statements before calling it. */
int cps_events_begin_reads(void);

/* Accepts a zeroed struct. */
void cps_notice_clear(cps_notice *n);

/* The event of a write without delta notifications (what cps_events_end
 * writes then), as one prepared statement for the caller's pipeline in
 * the write's transaction: 1 and *step filled (its parameters in *note,
 * zeroed before, cleared with cps_note_clear after the pipeline), 0 when
 * events are off (no step), -1 on error. */
typedef struct cps_note {
    ncmp_buf anchor, dataspace, anchors, key, payload;
    char id[37], now[NCMP_CLOUDEVENT_TIME_SIZE];
    const char *params[8];
} cps_note;

int cps_events_note_step(ncmp_db *db, const cps_target *t, const char *action, const char *xpath,
                         cps_note *note, ncmp_db_step *step, ncmp_err *err);
void cps_note_clear(cps_note *note);

/* GET/POST/DELETE /cps/api/v2/notification-subscription?xpath= */
void cps_events_routes_add(cps_api *api, ncmp_http_server *server);

#endif
