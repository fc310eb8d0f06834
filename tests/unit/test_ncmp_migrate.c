/* Unit tests of the parts of lib/ncmp_migrate.c that need no database:
 * file name versions and the embedded list. */
#include <criterion/criterion.h>
#include <string.h>

#include "ncmp_migrate.h"
#include "unit_leak.h"

TestSuite(ncmp_migrate, .fini = unit_leak_check);

Test(ncmp_migrate, version_of_file_names)
{
    static const struct {
        const char *name;
        int version;
    } cases[] = {
        {"0001_x.sql", 1},
        {"12_a.sql", 12},
        {"0042_inventory.sql", 42},
        {"1000000_big.sql", 1000000},
        {"x.sql", -1},
        {"0001.sql", -1},
        {"_x.sql", -1},
        {"", -1},
        {"0001-x.sql", -1},
        {"1a_x.sql", -1},
        {"1000001_x.sql", -1},
        {"99999999999_x.sql", -1},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(ncmp_migration_version(cases[i].name), cases[i].version, "'%s'",
                     cases[i].name);
}

Test(ncmp_migrate, embedded_list_is_ordered_and_complete)
{
    int last = -1;
    size_t count = 0;

    for (const ncmp_migration *m = ncmp_migrations; m->name; m++, count++) {
        int version = ncmp_migration_version(m->name);
        size_t len = strlen(m->name);

        cr_expect_gt(version, last, "%s: version %d not after %d", m->name, version, last);
        cr_expect(len > 4 && strcmp(m->name + len - 4, ".sql") == 0, "%s is no .sql file", m->name);
        cr_assert_not_null(m->sql, "%s has no SQL", m->name);
        cr_expect_gt(strlen(m->sql), 0, "%s is empty", m->name);
        last = version;
    }
    cr_assert_gt(count, 0, "no migrations embedded");
}

Test(ncmp_migrate, first_migration_is_version_1)
{
    cr_assert_not_null(ncmp_migrations[0].name);
    cr_assert_eq(ncmp_migration_version(ncmp_migrations[0].name), 1, "%s", ncmp_migrations[0].name);
}
