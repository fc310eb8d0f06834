#include "ncmp_migrate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_log.h"

/* Any constant will do; it only has to be the same in every process. */
#define MIGRATE_LOCK_KEY "7340217001"

int ncmp_migration_version(const char *name)
{
    int v = 0;
    const char *p = name;

    if (!isdigit((unsigned char)*p))
        return -1;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p - '0');
        if (v > 1000000)
            return -1;
        p++;
    }
    return *p == '_' ? v : -1;
}

static int apply_one(ncmp_db *db, const ncmp_migration *m, int version, ncmp_err *err)
{
    char vtext[16];
    const char *params[3];

    snprintf(vtext, sizeof(vtext), "%d", version);
    params[0] = vtext;
    params[1] = m->name;
    params[2] = m->sql;
    if (ncmp_db_begin(db, err) != 0 || ncmp_db_exec(db, m->sql, err) != 0 ||
        ncmp_db_query(db,
                      "INSERT INTO schema_migrations (version, name, checksum) "
                      "VALUES ($1::int, $2, md5($3))",
                      3, params, NULL, err) != 0 ||
        ncmp_db_commit(db, err) != 0) {
        ncmp_db_rollback(db);
        return ncmp_err_prefix(err, "migration %s failed", m->name);
    }
    return 0;
}

int ncmp_migrate_run(ncmp_db *db, const ncmp_migration *list, int *applied, ncmp_err *err)
{
    int count = 0;
    int last = -1;
    int rc = -1;

    if (ncmp_db_exec(db, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", err) != 0)
        return -1;
    if (ncmp_db_exec(db,
                     "CREATE TABLE IF NOT EXISTS schema_migrations ("
                     " version integer PRIMARY KEY,"
                     " name text NOT NULL,"
                     " checksum text NOT NULL,"
                     " applied_at timestamptz NOT NULL DEFAULT now())",
                     err) != 0)
        goto done;

    for (const ncmp_migration *m = list; m->name; m++) {
        int version = ncmp_migration_version(m->name);
        char vtext[16];
        const char *params[2];
        PGresult *res = NULL;

        if (version < 0) {
            ncmp_err_set(err, NCMP_ERR_FATAL, "migration %s: name must start with NNNN_", m->name);
            goto done;
        }
        if (version <= last) {
            ncmp_err_set(err, NCMP_ERR_FATAL, "migration %s: version %d is out of order", m->name,
                         version);
            goto done;
        }
        last = version;
        snprintf(vtext, sizeof(vtext), "%d", version);
        params[0] = vtext;
        params[1] = m->sql;
        if (ncmp_db_query(db,
                          "SELECT checksum = md5($2), name FROM schema_migrations "
                          "WHERE version = $1::int",
                          2, params, &res, err) != 0)
            goto done;
        if (PQntuples(res) == 1) {
            int same = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
            PQclear(res);
            if (!same) {
                ncmp_err_set(err, NCMP_ERR_FATAL,
                             "migration %s was changed after it was applied; add a new "
                             "migration instead",
                             m->name);
                goto done;
            }
            continue;
        }
        PQclear(res);
        log_info("migrate", "applying %s", m->name);
        if (apply_one(db, m, version, err) != 0)
            goto done;
        count++;
    }
    rc = 0;
    if (applied)
        *applied = count;
done : {
    ncmp_err ignore;
    ncmp_db_exec(db, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")", &ignore);
}
    return rc;
}
