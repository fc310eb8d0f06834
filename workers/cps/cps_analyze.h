/*
 * cps_analyze: ANALYZE (and VACUUM) of the fragment table once the nodes
 * written since the last one pass autovacuum's threshold, on a thread of
 * its own, at most once every ten seconds (cps_analyze.c says why).
 */
#ifndef CPS_ANALYZE_H
#define CPS_ANALYZE_H

#include "ncmp_config.h"

typedef struct cps_analyzer cps_analyzer;

/* `cfg` is borrowed (the database it connects to when first due);
 * `table` is what it analyzes: "fragment" (the partitioned table, every
 * partition with it) or one partition the caller writes to alone
 * ("fragment_cache", the data sync's). `vacuum`, when not NULL, is a
 * partition to VACUUM before each ANALYZE: "fragment_store", the API's,
 * whose rows near the top are read by index-only scans. String
 * constants. */
cps_analyzer *cps_analyzer_new(const ncmp_config *cfg, const char *table, const char *vacuum);

/* `nodes` were written (committed): ANALYZE when due. Starts the thread
 * on the first call. A NULL analyzer does nothing. */
void cps_analyzer_wrote(cps_analyzer *a, long nodes);

/* Stop the thread (after the ANALYZE it may be running) and free. */
void cps_analyzer_free(cps_analyzer *a);

#endif
