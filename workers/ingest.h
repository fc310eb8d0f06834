/*
 * The ingest role: JSON events from `ingest.topic`, one row each in table
 * ingest_event. It is the platform's first vertical slice and the smallest
 * example of a role built on ncmp_stage.
 */
#ifndef NCMPD_INGEST_H
#define NCMPD_INGEST_H

#include "ncmp_stage.h"
#include "role.h"

/* Fill *role for `cfg`; `topics` must hold 1 entry and outlive the role. */
void ingest_role_init(ncmp_stage_role *role, const ncmp_services *svc, const char **topics);

#endif
