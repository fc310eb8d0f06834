/*
 * handle_cache: the in-process map the data paths resolve CM-handle
 * references with, so that a pass-through request costs no database
 * round trip.
 *
 * It maps a handle id and an alternate id (exact match, ids first, as
 * NCMP's AlternateIdMatcher) to what a data request needs: the id, the
 * state, the DMI data service (dmi_data_service_name, or dmi_service_name
 * when that is empty), the private properties, the module-set tag and the
 * data producer identifier.
 *
 * Kept current from the lifecycle events on `lcm.topic`:
 *   1. a tail reader (ncmp_kafka_tail_reader_new: assign, no group
 *      membership, nothing committed) takes the end offset of every
 *      partition of the topic;
 *   2. load the cm_handle table (in blocks, from a cursor);
 *   3. apply the events the reader fetched from the offsets of step 1,
 *      so no change committed after the load is missed and one committed
 *      before it is applied again (harmless: events carry states, not
 *      deltas).
 * A create event, or an update of a handle the map does not know, is
 * completed with one database query per poll batch (events do not carry
 * the DMI URL nor the private properties); a delete event removes the
 * handle. A handle created or deleted in another process is therefore
 * visible here within one event's latency.
 *
 * A reference the map does not know may still exist (an alternate id set
 * by a later update emits no event, or the event is on its way): callers
 * ask the database with handle_cache_fetch, which adds what it finds
 * unless a delete was applied meanwhile.
 *
 * Known limit: an update of private properties emits no lifecycle event
 * (NCMP sends none either), so the properties sent to the DMI are those of
 * the last load, create or state change of the handle.
 *
 * Thread-safe: lookups take a read lock and copy the entry out; one
 * thread applies the events.
 */
#ifndef NCMPD_HANDLE_CACHE_H
#define NCMPD_HANDLE_CACHE_H

#include <stddef.h>

#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_err.h"
#include "ncmp_lcm.h"

typedef struct handle_cache handle_cache;

/* A copy of one handle; every string is owned by the struct. */
typedef struct handle_info {
    char *id;
    char *alternate_id;   /* "" when none */
    char *dmi;            /* the DMI data service URL */
    char *properties;     /* private properties, a compact JSON object of strings */
    char *module_set_tag; /* "" when none */
    char *data_producer;  /* dataProducerIdentifier, "" when none */
    char *datajobs_write; /* the data-job write service (dmiDatajobsWritePlugin, else dmiPlugin) */
    char *datajobs_read;  /* the data-job read service (dmiDatajobsReadPlugin, else dmiPlugin) */
    ncmp_handle_state state;
} handle_info;

/* Free the strings and zero *h. Accepts a zeroed struct. */
void handle_info_free(handle_info *h);

/* Steps 1 to 3 above, then the event thread runs. Opens its own database
 * connection and Kafka consumer. On success *hc is owned by the caller
 * (handle_cache_stop). */
int handle_cache_start(handle_cache **hc, const ncmp_config *cfg, ncmp_err *err);

/* Stop the event thread and free everything. Accepts NULL. */
void handle_cache_stop(handle_cache *hc);

/* Look `ref` up in the map: 1 with *out filled (owned by the caller),
 * 0 when the map does not know it. Never touches the database. */
int handle_cache_get(handle_cache *hc, const char *ref, handle_info *out);

/* NCMP's longest-match candidates of `ref` (AlternateIdMatcher): `ref`
 * cut at its first '#', then each parent path cut at the last '/',
 * longest first, the empty one left out. "/A=1/B=2#/attributes/x" gives
 * "/A=1/B=2" and "/A=1". *n is set; free with handle_candidates_free. */
char **handle_candidates(const char *ref, size_t *n);
void handle_candidates_free(char **c, size_t n);

/* The handle whose id or alternate id is the longest candidate of `ref`
 * (above) the map knows: 1 with *out filled (owned by the caller), 0 when
 * none. Never touches the database. */
int handle_cache_longest(handle_cache *hc, const char *ref, handle_info *out);

/* The same for ref[0..len) without a copy: fn is called with the handle,
 * its strings borrowed, under the map's read lock (fn must be short and
 * must not call the map). 1 when found (fn was called), else 0. */
int handle_cache_longest_with(handle_cache *hc, const char *ref, size_t len,
                              void (*fn)(const handle_info *h, void *arg), void *arg);

/* Call fn for every handle whose id or alternate id holds `term` (NCMP's
 * reference LIKE '%term%'), under the map's read lock (fn must not call
 * the map). Returns how many. A scan of the whole map. */
size_t handle_cache_containing(handle_cache *hc, const char *term,
                               void (*fn)(const handle_info *h, void *arg), void *arg);

/* Is `dmi` the data-job read or write service of a handle the map knows?
 * (What a client names as a DMI must be one ncmpd would call itself.) */
int handle_cache_serves_datajobs(handle_cache *hc, const char *dmi);

/* Ask the database for the references refs[0..n) (ids or alternate ids)
 * and add what it finds to the map. found[i] is set to 1 and out[i] filled
 * (owned by the caller) for each one that exists, else found[i] = 0.
 * `db` is borrowed. RETRY/FATAL when the query fails. */
int handle_cache_fetch(handle_cache *hc, ncmp_db *db, const char *const *refs, size_t n,
                       handle_info *out, int *found, ncmp_err *err);

#endif
