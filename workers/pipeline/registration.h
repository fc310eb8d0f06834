/*
 * The registration role: DMI plugins' DmiPluginRegistration requests from
 * `registration.topic` (CloudEvents, binary mode) applied to the
 * inventory in NCMP's order (removed, created, updated, upgraded), with one
 * outcome event per request and the lifecycle events of every change
 * written to the outbox in the same transaction.
 */
#ifndef NCMPD_REGISTRATION_H
#define NCMPD_REGISTRATION_H

#include "ncmp_stage.h"
#include "role.h"

/* The stage row's functions (workers/role.c). */
extern const ncmp_stage_ops registration_stage;

#endif
