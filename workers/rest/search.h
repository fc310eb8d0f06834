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

/* The same conditions, for an evaluation outside the database
 * (search_index.h). */
typedef enum search_cond_kind {
    SEARCH_COND_MODULES,    /* every name of `values` in the handle's module set */
    SEARCH_COND_PUBLIC,     /* every keys[i] -> values[i] in the public properties */
    SEARCH_COND_ADDITIONAL, /* the same in the private (additional) properties */
    SEARCH_COND_TRUST,      /* effective trust level = values[0] */
    SEARCH_COND_DMI,        /* values[0] is one of the handle's three DMI services */
    SEARCH_COND_NONE,       /* no handle matches */
    SEARCH_COND_COLUMN,     /* cm_handle column keys[0] = values[0] (<> when `negate`): a
                             * CPS path that came down to one comparison */
} search_cond_kind;

typedef struct search_cond {
    search_cond_kind kind;
    char **keys;   /* SEARCH_COND_PUBLIC/ADDITIONAL/COLUMN; owned */
    char **values; /* owned */
    int n;
    int negate; /* SEARCH_COND_COLUMN */
} search_cond;

typedef struct search_query {
    ncmp_buf where; /* SQL boolean expression on `h` */
    char **params;  /* owned; a NULL entry is SQL NULL */
    int nparams;
    search_cond *conds; /* every condition ANDed, as `where` */
    int nconds;
    int needs_db; /* a condition only the database can answer (most CPS paths) */
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
