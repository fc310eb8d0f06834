/*
 * The data-sync role: NCMP's data sync (its DataSyncWatchdog) filling the
 * operational cache of every handle with data sync on.
 *
 * The cache is the CPS store's: dataspace NFP-Operational, one anchor per
 * handle named by its id, on a schema set named after the handle's module
 * set tag (the handle's id for a handle without a tag, as NCMP names it),
 * made from the handle's module set's YANG sources when missing
 * (datasync_store.h). This folder's one include from outside it is
 * workers/cps/cps_store.h (with the cps_schema.h it includes): the cache's
 * rows are made by the store's own parse and check (cps_store_rows), in
 * this role's transaction.
 *
 * Which handles: those READY, with data sync on and UNSYNCHRONIZED. A
 * trigger (migrations/0011) queues a handle in data_sync_work the moment
 * it becomes one and NOTIFYs `ncmp_data_sync`; the role LISTENs and takes
 * queued handles at once. A sweep every data-sync.sweep-interval-ms queues
 * what was missed (a queue row lost by hand, say): only a safety net.
 *
 * How: one dispatcher thread claims due handles (FOR UPDATE SKIP LOCKED,
 * setting a lease of data-sync.lease-ms as their next time, so that
 * several processes share the queue and a crashed one's handles come back
 * after the lease), reads each root node of the handle's schema set from
 * its DMI plugin as NCMP does (a pass-through-operational read of
 * resourceIdentifier=/ with options=(fields=<module>:<root>), one request
 * per root), and keeps up to data-sync.max-in-flight handles in flight on
 * the process's DMI client (ncmp_dmi_submit: no thread per handle). The
 * completion callbacks only hand the answers over; data-sync.workers
 * writer threads write them, up to data-sync.batch-size handles per
 * transaction: each handle's row is locked and checked to be still READY,
 * enabled and UNSYNCHRONIZED (a disable that committed first wins: nothing
 * is written), its anchor made or emptied and locked, the rows of every
 * handle's roots stored with one COPY, and the handles marked
 * SYNCHRONIZED with the sync time.
 * NCMP sends no lifecycle event for that, and neither does this.
 *
 * A read that fails (no answer, or an HTTP error) leaves the handle
 * UNSYNCHRONIZED and queued for a later attempt, after
 * data-sync.retry-initial-ms doubling up to data-sync.retry-max-ms. (NCMP
 * logs such a failure and marks the handle SYNCHRONIZED anyway; here the
 * cache is only called synchronized when it holds what the plugin has.)
 * Data the schema set refuses is left out with a warning, as NCMP does.
 *
 * Threads: the dispatcher and the writers are this role's; DMI callbacks
 * run on the DMI client's event thread and only take a lock to queue.
 */
#ifndef NCMPD_DATASYNC_H
#define NCMPD_DATASYNC_H

#include <stddef.h>

#include "ncmp_buf.h"
#include "ncmp_err.h"
#include "role.h"

typedef struct datasync datasync;

/* Start the dispatcher and the writers with the process's DMI client
 * (`svc`, borrowed: it must outlive datasync_destroy). On success *ds is
 * owned by the caller. */
int datasync_start(datasync **ds, const ncmp_services *svc, ncmp_err *err);

/* Ask the threads to stop; does not block. Reads still in flight are
 * dropped when they complete (their handles stay queued; the lease
 * brings them back). */
void datasync_stop(datasync *ds);

/* Wait for the threads; -1 with the fatal error that ended one. */
int datasync_join(datasync *ds, ncmp_err *err);

/* Accepts NULL. */
void datasync_destroy(datasync *ds);

/* --- pure helpers (unit-tested) -------------------------------------------- */

/* The wait before attempt `failures` + 1 after `failures` failures:
 * initial_ms doubled per failure after the first, at most max_ms. */
long datasync_backoff_ms(int failures, long initial_ms, long max_ms);

/* The name of a handle's schema set in NFP-Operational: its module set
 * tag, or its id when it has none (NCMP's rule). Borrowed from the
 * arguments. */
const char *datasync_schema_set_name(const char *module_set_tag, const char *handle_id);

/* NCMP's options of a root's read: "(fields=<root>)", appended. */
void datasync_fields_option(ncmp_buf *out, const char *root);

/* What a root's read answered, as NCMP keeps it: the first member of the
 * JSON object, as an object of its own ({"m:root": ...}). Returns 1 with
 * *start and *out_len the text to store (the body itself when it has one member,
 * else `scratch` holding the first one), 0 for an empty object (nothing
 * to store), -1 REJECT when the body is not a JSON object. */
int datasync_first_member(const char *body, size_t len, ncmp_buf *scratch, const char **start,
                          size_t *out_len, ncmp_err *err);

#endif
