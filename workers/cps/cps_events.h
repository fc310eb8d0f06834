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

/* In the transaction of a write of anchor `t` at `xpath` (NULL: "/"):
 * its event, when the anchor is subscribed. `action` is "create",
 * "replace" or "remove". */
int cps_events_note(ncmp_db *db, const cps_target *t, const char *action, const char *xpath,
                    ncmp_err *err);

/* GET/POST/DELETE /cps/api/v2/notification-subscription?xpath= */
void cps_events_routes_add(cps_api *api, ncmp_http_server *server);

#endif
