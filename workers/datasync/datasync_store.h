/*
 * datasync_store: the data-sync role's side of the database: the queue
 * (data_sync_work), the cache's dataspace, schema sets and anchors, and
 * the batch that stores what the DMI plugins answered.
 *
 * Schema sets of NFP-Operational are made from a module set's
 * module_set_member rows (the YANG sources module sync stored, shared by
 * checksum), in one transaction with the module-sync cleanup lock held
 * shared, INSERT .. ON CONFLICT DO NOTHING: two processes making the same
 * set at once end with one set, complete, which both use. Sets never
 * change once made (a module set of a tag never changes either), so a
 * set's id and root nodes are kept for the life of the store.
 *
 * Thread-safe: the writers and the dispatcher share one store, each with
 * its own connection.
 */
#ifndef NCMPD_DATASYNC_STORE_H
#define NCMPD_DATASYNC_STORE_H

#include <stddef.h>

#include "cps_store.h"
#include "ncmp_db.h"
#include "ncmp_err.h"

typedef struct datasync_store datasync_store;

/* A schema set of the cache, resolved. */
typedef struct datasync_set {
    char id[24];  /* schema_set.id, decimal */
    char **roots; /* "module:name" of every top-level data node */
    size_t nroots;
} datasync_set;

/* Owned by the caller (datasync_store_destroy). */
datasync_store *datasync_store_new(void);
void datasync_store_destroy(datasync_store *st);

/* The schema set `name` of NFP-Operational (made from module set
 * `module_set_id` when missing, the dataspace too), with its root nodes.
 * *set is borrowed from the store and lives as long as it. A set whose
 * sources do not compile is REJECT. */
int datasync_store_set(datasync_store *st, ncmp_db *db, const char *name, const char *module_set_id,
                       const datasync_set **set, ncmp_err *err);

/* One handle's outcome, for datasync_store_write. */
typedef struct datasync_item {
    const char *id;     /* the handle */
    const char *set_id; /* its schema set (NULL: none, nothing to store) */
    int attempts;       /* failures before this one */
    int failed;         /* a read failed: back off */
    int busy; /* with failed: a read not sent, its DMI plugin had dmi.max-in-flight-per-plugin
               * of this process's requests; not the plugin's failure: queued again after
               * DATASYNC_BUSY_PAUSE_MS, not counted as an attempt */
    const char *const *bodies; /* each root's answer (NULL: none) */
    const size_t *lens;
    size_t nbodies;
    /* out: 1 stored and SYNCHRONIZED, 0 not (failed, or no longer eligible) */
    int synced;
    size_t nodes; /* data nodes stored */
} datasync_item;

/* How long a handle whose read was not sent (busy) waits to be taken
 * again: a little, the requests before it are being answered. */
#define DATASYNC_BUSY_PAUSE_MS 200

/* The retry policy of failed reads. */
typedef struct datasync_retry {
    long initial_ms, max_ms;
} datasync_retry;

/* Store the outcomes of items[0..n) in one transaction on `db` (begun and
 * committed here): the still eligible handles' rows locked, failures
 * queued again after their back-off (busy ones after
 * DATASYNC_BUSY_PAUSE_MS, their attempts unchanged), the data of the others saved in their
 * anchors (made or emptied first) and the handles marked SYNCHRONIZED.
 * Data the schema set refuses is left out (logged). When the batch fails
 * as a whole (the database), it is rolled back and -1 returned: the
 * handles stay queued and come back when their lease ends. */
int datasync_store_write(datasync_store *st, ncmp_db *db, datasync_item *items, size_t n,
                         const datasync_retry *retry, ncmp_err *err);

#endif
