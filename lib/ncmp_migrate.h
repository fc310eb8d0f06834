/*
 * ncmp_migrate: applies the numbered SQL files of migrations/ in order.
 *
 * The files are compiled into the binary (migrations/embed.cmake). Each is
 * applied once, in its own transaction, and recorded in schema_migrations
 * with its checksum; a recorded file whose text changed afterwards is an
 * error. An advisory lock lets several ncmpd processes start at once.
 */
#ifndef NCMP_MIGRATE_H
#define NCMP_MIGRATE_H

#include "ncmp_db.h"
#include "ncmp_err.h"

typedef struct ncmp_migration {
    const char *name; /* file name, e.g. "0001_inventory.sql" */
    const char *sql;
} ncmp_migration;

/* The embedded migrations, in order, terminated by {NULL, NULL}. */
extern const ncmp_migration ncmp_migrations[];

/* Version number of a migration file name ("0012_x.sql" -> 12), or -1 when
 * the name does not start with digits and an underscore. */
int ncmp_migration_version(const char *name);

/* Apply the pending migrations of `list`. *applied (if not NULL) gets how
 * many were applied now. A failure names the file and the database error. */
int ncmp_migrate_run(ncmp_db *db, const ncmp_migration *list, int *applied, ncmp_err *err);

#endif
