/*
 * search_index: the CM-handle inventory in memory, for searches that do
 * not wait on PostgreSQL returning every row.
 *
 * What it holds, per handle: the row a search answer is written from
 * (REST_HANDLE_COLUMNS, as the database returned it, in the block of rows
 * it came in), the DMI services, the module set, and the public and
 * private properties parsed into pairs; per module set, its module names.
 * A search is a scan of that memory (modules checked once per module set);
 * its answer is streamed from the matching rows by the same formatters as
 * the database path, so both write the same bytes.
 *
 * How it stays current, and why a write answered is seen by the next
 * search: the inventory_change table (migrations 0014, 0019) gets, for
 * every statement that changes handles or module sets, a row with the keys
 * it touched and the writing transaction's id. The index remembers the
 * snapshot of its last read (pg_current_snapshot). Before each search it
 * reads, in one repeatable-read transaction, a new snapshot, the keys
 * whose transaction was not visible in the old one (committed since, in
 * any order), and the current rows of those keys; a key without a row is
 * a deletion. Every write committed before the search arrived is
 * therefore in its answer, whichever process made it, as with the
 * database path. Searches that arrive while such a read runs wait for the
 * next one, which starts after them; one read serves all of them. A
 * truncate is read as "load everything again".
 *
 * The first load runs on its own thread, so the rest role starts at once;
 * until it is done, and whenever the database cannot be read, searches go
 * to PostgreSQL as before. Conditions on a CPS path always do.
 *
 * The change rows are kept for `RETENTION` (15 minutes) and deleted once a
 * minute by every index's loader thread, through the index on their time
 * (migration 0015); an index that could not read for half of that loads
 * everything again.
 */
#ifndef NCMPD_SEARCH_INDEX_H
#define NCMPD_SEARCH_INDEX_H

#include "ncmp_config.h"
#include "ncmp_err.h"
#include "ncmp_http.h"
#include "search.h"

typedef struct search_index search_index;

/* What each handle of an answer is written as. */
typedef enum search_output {
    SEARCH_OUT_ID,           /* its id, a JSON string */
    SEARCH_OUT_ALTERNATE_ID, /* its alternate id ("" when none) */
    SEARCH_OUT_HANDLE,       /* RestOutputCmHandle */
    SEARCH_OUT_HANDLE_DMI,   /* the same with cmHandleProperties */
    SEARCH_OUT_LIGHT,        /* RestOutputCmHandleLightweight */
    SEARCH_OUT_LIGHT_DMI,    /* the same with dmiProperties */
} search_output;

/* Start the first load on its own thread (its own database connection).
 * On success *sx is owned by the caller (search_index_stop). */
int search_index_start(search_index **sx, const ncmp_config *cfg, ncmp_err *err);

/* Stop and free. Accepts NULL. No answer may be in progress. */
void search_index_stop(search_index *sx);

/* Answer `req` with the handles matching every condition of `q`, written
 * as `out`: bring the index up to date, scan, stream. Returns 0 when it
 * answered; -1 when it did not (not loaded yet, a condition it cannot
 * evaluate, the database not readable): the caller asks PostgreSQL. */
int search_index_answer(search_index *sx, ncmp_http_request *req, const search_query *q,
                        search_output out);

/* The statement that deletes the change rows older than the retention,
 * and the one that reads the keys committed since a snapshot ($1); here
 * for the tests of the change table. */
extern const char search_index_cleanup_sql[];
extern const char search_index_changes_sql[];

#endif
