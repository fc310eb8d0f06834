/*
 * The ingest role: JSON events from `ingest.topic`, one row each in table
 * ingest_event. It is the platform's first vertical slice and the smallest
 * example of a role built on ncmp_stage.
 */
#ifndef NCMPD_INGEST_H
#define NCMPD_INGEST_H

#include "ncmp_stage.h"
#include "role.h"

/* The stage row's functions (workers/role.c). */
extern const ncmp_stage_ops ingest_stage;

#endif
