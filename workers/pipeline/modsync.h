/*
 * Module sync: ADVISED handles to READY (or LOCKED), with the YANG modules
 * of their module set stored once.
 *
 * Registration hands new ADVISED handles (and handles locked for an
 * upgrade) to the module-sync topic at once, keyed by module-set tag (see
 * modsync_queue.h). The module-sync role consumes it in batches, one
 * transaction per batch (lib/ncmp_stage.h). For each batch:
 *
 *   read the named handles (locked FOR UPDATE) and keep those that need a
 *   sync: ADVISED, LOCKED for an upgrade, or LOCKED after a failure when
 *   the record is a retry; group them by target set (the tag, or the
 *   handle itself when it has no tag)
 *   a tag whose module set is stored: attach the handles, no DMI call
 *   a tag without one: take the tag's advisory lock (one fetch across all
 *   workers and processes), look again, else ask the DMI plugin of one of
 *   its handles for the module references, then for the sources of the
 *   modules not stored yet; check them with libyang; store the sources by
 *   SHA-256 and the set - all groups of the batch in parallel
 *   handles of a stored set become READY; of a failed fetch, LOCKED with
 *   MODULE_SYNC_FAILED (MODULE_UPGRADE_FAILED for an upgrade) and
 *   "Attempt #n failed: <reason>", retried after an exponential back-off
 *   every transition writes its lifecycle event to the outbox
 *
 * A module refresh (POST /ncmpInventory/v1/ch/module/refresh, see
 * workers/rest/refresh.h) locks one READY sample handle per module-set
 * tag with MODULE_REFRESH and hands it over the same way. Module sync
 * then reads that handle's module references and every source again
 * (under the tag's lock), compares them with the stored set and, only
 * where they differ, changes the set in place: same set id, members as
 * the DMI answers now, and a source changed under the same name and
 * revision replaced in every set that holds it. The handle goes back to
 * READY (set and data sync unchanged); a failed read leaves it LOCKED
 * with MODULE_REFRESH_FAILED, retried like a failed sync.
 *
 * A sweep (one process at a time, by advisory lock) hands back what is due:
 * failed handles whose back-off expired (every sweep), and handles left
 * ADVISED, MODULE_UPGRADE or MODULE_REFRESH longer than
 * module-sync.advised-grace-ms (a lost record, a crash; looked for every
 * half grace period, or every sweep if that is longer). It also deletes,
 * every module-sync.cleanup-interval-s, module sets that no handle uses,
 * the sources no set uses, and the retry rows (module_sync_retry) of
 * handles deregistered while they waited.
 */
#ifndef NCMPD_MODSYNC_H
#define NCMPD_MODSYNC_H

#include "ncmp_err.h"
#include "ncmp_stage.h"
#include "ncmp_singleton.h"
#include "role.h"

/* The stage row's functions (workers/role.c). */
extern const ncmp_stage_ops modsync_stage;

/* The sweep: a singleton task (lib/ncmp_singleton.h) that sends with the
 * process's producer. Fills *task; its arg is freed by modsync_sweep_free
 * once the task ended. */
typedef struct modsync_sweep modsync_sweep;
int modsync_sweep_task(const ncmp_services *svc, ncmp_singleton_task *task, ncmp_err *err);

/* The sweep's queries: the failed handles due for a retry (no
 * parameter), and those with the handles left past the grace period ($1,
 * in ms); and how often, in ms, the second runs. Here for the tests. */
extern const char modsync_sql_due_retries[];
extern const char modsync_sql_due_all[];
double modsync_missed_interval_ms(int sweep_interval_ms, int advised_grace_ms);
/* What a retry writes: the sweep's claim of the handles it hands over
 * ($1 their ids, $2 the grace period in ms), and a failure (ids, lock
 * reasons, details, back-off in ms). Here for the tests. */
extern const char modsync_sql_claim[];
extern const char modsync_sql_locked[];
void modsync_sweep_free(void *arg);

#endif
