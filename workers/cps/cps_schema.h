/*
 * cps_schema: the YANG side of the CPS store.
 *
 * A schema set arrives as one .yang file or a .zip of them (CPS's
 * multipart `file`). Its sources are named from their text, checked
 * together by libyang, and stored once by SHA-256 in yang_resource, the
 * store module sync uses: a module a DMI plugin gave and the same module
 * uploaded to CPS are one row.
 *
 * Data writes validate against the anchor's schema set, so the compiled
 * libyang context of each set is kept in a cache (schema sets never change;
 * a deleted one is dropped from it). Contexts are shared by the HTTP
 * threads: libyang's data parsing only reads a compiled context.
 */
#ifndef NCMPD_CPS_SCHEMA_H
#define NCMPD_CPS_SCHEMA_H

#include <libyang/libyang.h>
#include <stddef.h>

#include "ncmp_db.h"
#include "ncmp_err.h"
#include "ncmp_yang.h"

/* The sources of one upload; every string is owned by the struct. */
typedef struct cps_sources {
    ncmp_yang_source *src;
    size_t n;
} cps_sources;

/* The YANG sources of an uploaded file: a .zip (by name, or by its magic
 * when there is no name) gives its *.yang entries, anything else is one
 * .yang source. Each is named from its text. Not a YANG file, an archive
 * without one, or more than 64 MB unpacked is REJECT. On success *out
 * owns copies of everything (cps_sources_free). */
int cps_sources_from_upload(const char *filename, const char *data, size_t len, cps_sources *out,
                            ncmp_err *err);

/* Accepts a zeroed struct. */
void cps_sources_free(cps_sources *s);

/* Store the checked sources and a new schema set `name` of dataspace
 * `dataspace_id` using them, in the caller's transaction; the module-sync
 * cleanup lock is taken shared, so that an orphan cleanup running at the
 * same time cannot remove a source this set is about to use. *created is
 * 0 when a set of that name exists already (nothing written). */
int cps_schema_store(ncmp_db *db, const char *dataspace_id, const char *name, const cps_sources *s,
                     int *created, ncmp_err *err);

typedef struct cps_schema_cache cps_schema_cache;

/* One compiled schema set, shared: hold it while parsing, then release. */
typedef struct cps_schema cps_schema;

cps_schema_cache *cps_schema_cache_new(void);
void cps_schema_cache_destroy(cps_schema_cache *cache);

/* The compiled context of schema set `schema_set_id` (decimal), loaded
 * from the database with `db` on first use. On success *schema holds a
 * reference (cps_schema_release). A set whose stored sources do not
 * compile any more is REJECT. */
int cps_schema_get(cps_schema_cache *cache, ncmp_db *db, const char *schema_set_id,
                   cps_schema **schema, ncmp_err *err);

/* The schema set's id (decimal; borrowed, as the context). */
const char *cps_schema_set_id(const cps_schema *schema);

/* The context (borrowed, valid while the reference is held). */
const struct ly_ctx *cps_schema_ctx(const cps_schema *schema);

/* Another reference to `schema` (NULL gives NULL). */
cps_schema *cps_schema_ref(cps_schema *schema);

/* Drop a reference. Accepts NULL. */
void cps_schema_release(cps_schema *schema);

/* Forget set `schema_set_id` (it was deleted); holders keep theirs. */
void cps_schema_forget(cps_schema_cache *cache, const char *schema_set_id);

#endif
