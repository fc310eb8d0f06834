/*
 * modsync_queue: hands CM handles to module sync.
 *
 * Registration (new ADVISED handles, handles locked for an upgrade) and the
 * module-sync sweep collect (target tag, handle id) pairs here and send
 * them to the module-sync topic in one go: one record per tag (in chunks
 * of at most MODSYNC_QUEUE_CHUNK ids), keyed by the tag, so that every
 * handle of a tag is synced in one place and the DMI is asked once; one
 * record per handle, keyed by its id, for handles without a tag (each has
 * its own module set).
 *
 * Record value: {"moduleSetTag":"tagA","cmHandles":["ch-1","ch-6",...]},
 * with "retry":true when the sweep hands back handles whose sync failed.
 * Records are only a wake-up: module sync reads each handle's state from
 * the database, so a record sent twice does no harm.
 */
#ifndef NCMPD_MODSYNC_QUEUE_H
#define NCMPD_MODSYNC_QUEUE_H

#include <stddef.h>

#include "ncmp_err.h"
#include "ncmp_kafka.h"

#define MODSYNC_QUEUE_CHUNK 5000

typedef struct modsync_pair {
    char *tag;
    char *id;
} modsync_pair;

typedef struct modsync_queue {
    modsync_pair *pairs;
    size_t n, cap;
    /* the records are retries of failed syncs ("retry":true): only then
     * does module sync take handles LOCKED by a failure */
    int retry;
} modsync_queue;

void modsync_queue_add(modsync_queue *q, const char *tag, const char *id);

/* Send what was added to `topic` (counted in `d`, so the caller's commit
 * waits for the broker), then empty the queue. */
int modsync_queue_send(modsync_queue *q, ncmp_producer *p, ncmp_delivery *d, const char *topic,
                       ncmp_err *err);

void modsync_queue_reset(modsync_queue *q);
void modsync_queue_free(modsync_queue *q);

/* Decode a record's value. On success *tag and ids[] point into `*root`
 * (json_object_put it). A bad record is a REJECT error. */
struct json_object;
int modsync_record_decode(const void *payload, size_t len, struct json_object **root,
                          const char **tag, const char ***ids, size_t *nids, int *retry,
                          ncmp_err *err);

#endif
