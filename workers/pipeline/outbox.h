/*
 * outbox: lifecycle events written in the same transaction as the change
 * they announce (table lcm_outbox), for the relay to publish.
 *
 * A worker collects a batch's events with ncmp_outbox_add and writes them
 * with one COPY in ncmp_outbox_flush (seq follows the order of the rows), which also NOTIFYs the
 * relay (the notification is delivered when the transaction commits).
 */
#ifndef NCMPD_OUTBOX_H
#define NCMPD_OUTBOX_H

#include "ncmp_buf.h"
#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_err.h"
#include "ncmp_lcm.h"

typedef struct ncmp_outbox {
    ncmp_db *db; /* borrowed */
    ncmp_lcm_format format;
    ncmp_buf rows;  /* COPY text of the kept events */
    ncmp_buf event; /* scratch */
    size_t count;
} ncmp_outbox;

/* Start empty, writing to `db` events in the format `cfg` names
 * (lcm.event-schema-version). */
void ncmp_outbox_init(ncmp_outbox *ob, ncmp_db *db, const ncmp_config *cfg);
void ncmp_outbox_free(ncmp_outbox *ob);
void ncmp_outbox_reset(ncmp_outbox *ob);

/* Encode `ev` (a fresh event id, the time now) and keep it for the flush. */
void ncmp_outbox_add(ncmp_outbox *ob, const ncmp_lcm_event *ev);

/* ncmp_outbox_add of a change of one handle's state alone (dataSyncEnabled
 * left out: unchanged). */
void ncmp_outbox_add_state(ncmp_outbox *ob, const char *id, const char *alternate_id,
                           const char *module_set_tag, const char *data_producer_identifier,
                           ncmp_handle_state old_state, ncmp_handle_state new_state);

/* Write the kept events in the order they were added. */
int ncmp_outbox_flush(ncmp_outbox *ob, ncmp_err *err);

/* The channel the relay LISTENs on. */
#define NCMP_OUTBOX_CHANNEL "ncmp_lcm_outbox"

#endif
