/*
 * registration_decode: NCMP's DmiPluginRegistration body (the data of a
 * registration CloudEvent), decoded into what the registration role
 * applies. No database, no Kafka: unit-tested on its own.
 *
 * What decoding checks is the request's shape: types, a cmHandle in every
 * handle, trustLevel COMPLETE or NONE, properties that are maps of
 * strings. A request that fails it is rejected whole (a dead letter).
 * What it does not check is per handle and answered in the outcome: ids
 * (registration_id_valid), duplicates, the DMI URL.
 */
#ifndef NCMPD_REGISTRATION_DECODE_H
#define NCMPD_REGISTRATION_DECODE_H

#include <json-c/json.h>
#include <stddef.h>

#include "ncmp_err.h"

typedef struct reg_handle {
    const char *id;
    const char *alternate_id; /* trimmed copy owned by the request, NULL: none */
    const char *module_set_tag;
    const char *data_producer_identifier;
    const char *trust_level; /* NULL: not sent */
    char *additional_set;    /* JSON object of properties to set */
    char *additional_del;    /* JSON array of property names to delete */
    char *public_set;
    char *public_del;
    int has_additional, has_public;
    int has_alternate_id, has_data_producer_identifier;
} reg_handle;

typedef struct reg_request {
    json_object *root;
    const char *dmi_plugin, *dmi_data_plugin, *dmi_model_plugin;
    /* dmiDatajobsReadPlugin, dmiDatajobsWritePlugin: stored as sent, ""
     * when not; a data job falls back on dmi_plugin when blank */
    const char *dmi_datajobs_read_plugin, *dmi_datajobs_write_plugin;
    reg_handle *created;
    size_t ncreated;
    reg_handle *updated;
    size_t nupdated;
    const char **removed;
    size_t nremoved;
    const char **upgraded;
    size_t nupgraded;
    const char *upgrade_tag;
    char **owned; /* trimmed strings */
    size_t nowned;
} reg_request;

/* Decode `payload`. On success every pointer in *r points into r->root or
 * into strings *r owns; release with registration_request_free. A
 * structural problem is a REJECT error (the request goes to the
 * dead-letter topic); *r must then be released too. */
int registration_request_decode(reg_request *r, const void *payload, size_t len, ncmp_err *err);

/* Release what *r holds and zero it. */
void registration_request_free(reg_request *r);

/* NCMP's rule for a CM handle id: not empty, none of
 * =!" #$%&'()*+,./\:;<>?@[]^`{|}~ */
int registration_id_valid(const char *id);

#endif
