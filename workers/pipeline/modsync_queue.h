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
 *
 * Registration sends its records inside its transaction, before the
 * commit (they are counted in the batch's delivery, so the commit waits
 * until the broker has them): a crash after the commit cannot lose them,
 * and module sync starts without waiting for a sweep. Module sync may then
 * read a record before the handles it names are committed; the hand-over
 * barrier closes that gap. The sender takes, in its transaction, a shared
 * advisory lock on the barrier slot of every tag it hands over (slots are
 * a hash of the tag, MODSYNC_BARRIER_SLOTS of them, so a transaction holds
 * a bounded number of locks); module sync, before it reads the handles of
 * a batch, takes and at once releases the exclusive lock of each slot of
 * the batch's tags, which waits until every transaction that handed over
 * one of those tags has committed or rolled back. Module sync holds at
 * most one slot at a time and the sender none that module sync waits for,
 * so the barrier cannot deadlock.
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

#define MODSYNC_BARRIER_SLOTS 64

/* The barrier slot of `tag` ("" for untagged handles): the same in every
 * process and build. */
int modsync_barrier_slot(const char *tag);

/* The distinct barrier slots of the queued tags as a PostgreSQL int[]
 * literal ("{3,17}"; "{}" when empty), replacing the content of `out`. */
struct ncmp_buf;
void modsync_queue_slots(const modsync_queue *q, struct ncmp_buf *out);

/* SQL (one parameter: the slots literal) that the sender runs in its
 * transaction before modsync_queue_send, and module sync before it reads
 * the handles of a batch. */
#define MODSYNC_SQL_HANDOVER_LOCK                                                                  \
    "SELECT pg_advisory_xact_lock_shared(hashtextextended('ncmp-handover:' || s, 0)) "             \
    "FROM unnest($1::int[]) AS s ORDER BY s"
#define MODSYNC_SQL_HANDOVER_BARRIER                                                               \
    "SELECT pg_advisory_lock(hashtextextended('ncmp-handover:' || s, 0)),"                         \
    " pg_advisory_unlock(hashtextextended('ncmp-handover:' || s, 0)) "                             \
    "FROM unnest($1::int[]) AS s ORDER BY s"
void modsync_queue_free(modsync_queue *q);

/* Decode a record's value. On success *tag and ids[] point into `*root`
 * (json_object_put it). A bad record is a REJECT error. */
struct json_object;
int modsync_record_decode(const void *payload, size_t len, struct json_object **root,
                          const char **tag, const char ***ids, size_t *nids, int *retry,
                          ncmp_err *err);

#endif
