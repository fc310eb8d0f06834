/*
 * CM-handle searches: NCMP's query body (CmHandleQueryParameters) turned
 * into ONE parameterised SQL condition on the cm_handle table (alias `h`),
 * every condition ANDed in SQL.
 *
 * Conditions (NCMP's CmHandleQueryParameters): hasAllModules, hasAllProperties,
 * cmHandleWithCpsPath, cmHandleWithTrustLevel (northbound and southbound);
 * hasAllAdditionalProperties, cmHandleWithDmiPlugin (southbound only).
 * Only the first entry of each condition name counts; no condition
 * selects every handle. Values never enter the SQL text: they are the
 * parameters $1.. of the condition.
 */
#ifndef NCMPD_SEARCH_H
#define NCMPD_SEARCH_H

#include <stddef.h>

#include "ncmp_buf.h"

typedef enum search_side {
    SEARCH_NORTHBOUND, /* /ncmp/v1|v2/ch/... */
    SEARCH_SOUTHBOUND, /* /ncmpInventory/v1|v2/ch/... */
} search_side;

typedef struct search_query {
    ncmp_buf where; /* SQL boolean expression on `h` */
    char **params;  /* owned; a NULL entry is SQL NULL */
    int nparams;
} search_query;

/* Why a request was refused: NCMP's 400 message and details. */
typedef struct search_error {
    char message[128];
    char details[768];
} search_error;

/* Parse the body and build the condition. `legacy` accepts the
 * deprecated `conditions` form too (NCMP maps it on /ncmp/v1/ch/searches
 * and searchCmHandles only). On a bad request returns -1 with *e filled
 * (answer 400); *q is then empty. On success free *q with
 * search_query_free. */
int search_parse(const char *body, size_t len, search_side side, int legacy, search_query *q,
                 search_error *e);

void search_query_free(search_query *q);

#endif
