/*
 * ncmp_cpspath on the real PostgreSQL: every translated path runs as
 * `SELECT id FROM cm_handle h WHERE <sql> ORDER BY id` on a scratch
 * database holding a small inventory (20 handles with varied properties,
 * states, lock reasons, alternate ids, tags and DMI services), and must select exactly
 * the handles the path names. Mutated paths from the fuzz corpus must all
 * run without a database error.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_cpspath.h"
#include "it_util.h"
#include "ncmp_cpspath.h"
#include "ncmp_migrate.h"

typedef struct search {
    const char *path;
    const char *ids; /* comma-separated, in id order */
} search;

static const char inventory_sql[] =
    "INSERT INTO cm_handle (id, alternate_id, module_set_tag, dmi_service_name,"
    " dmi_data_service_name, data_producer_identifier, public_properties,"
    " additional_properties, state, lock_reason, lock_details, data_sync_enabled,"
    " operational_sync_state, last_update_time) VALUES"
    " ('ch-01', 'Ireland/Dublin/1', 'tagA', 'http://dmi-1', '', 'prod-1', '{\"Contact\": "
    "\"newemailforstore@bookstore.com\", \"Color\": \"yellow\"}', '{}', 'READY', NULL, NULL, "
    "false, 'NONE_REQUESTED', '2025-06-01 12:00:00+00'),"
    " ('ch-02', 'Ireland/Cork/2', 'tagA', 'http://dmi-1', 'http://dmi-data-1', 'prod-1', "
    "'{\"Color\": \"red\", \"Size\": \"10\"}', '{\"secret\": \"s1\"}', 'READY', NULL, NULL, true, "
    "'UNSYNCHRONIZED', '2025-06-02 12:00:00+00'),"
    " ('ch-03', 'Sweden/Stockholm/3', 'tagB', 'http://dmi-2', '', 'prod-2', '{\"Size\": \"9\"}', "
    "'{}', 'LOCKED', 'MODULE_SYNC_FAILED', 'Attempt #1 failed: timeout', false, NULL, '2025-06-03 "
    "12:00:00+00'),"
    " ('ch-04', NULL, '', 'http://dmi-2', '', '', '{}', '{}', 'ADVISED', NULL, NULL, false, NULL, "
    "'2025-06-04 12:00:00+00'),"
    " ('ch-05', 'alt-5', 'tagB', 'http://dmi-1', '', '', '{\"Size\": \"100\"}', '{}', 'LOCKED', "
    "'MODULE_UPGRADE', 'Upgrade to ModuleSetTag: v2', true, 'SYNCHRONIZED', '2025-06-05 "
    "12:00:00+00'),"
    " ('ch-06', 'alt-6', 'tagC', 'http://dmi-1', '', '', '{\"Size\": \"abc\"}', '{}', 'DELETING', "
    "NULL, NULL, false, NULL, '2025-06-06 12:00:00+00'),"
    " ('ch-07', 'O''Brien/7', 'tagC', 'http://dmi-1', '', '', '{\"O''Brien\": \"say "
    "\\\"hi\\\"\"}', '{}', 'READY', NULL, NULL, false, 'NONE_REQUESTED', '2025-06-07 12:00:00+00'),"
    " ('ch-08', 'alt-8', 'tagC', 'http://dmi-1', '', '', '{\"Size\": \"-2.5\", \"Contact\": "
    "\"ops@example.com\"}', '{}', 'READY', NULL, NULL, false, 'NONE_REQUESTED', '2025-06-08 "
    "12:00:00+00'),"
    " ('ch-09', 'Ireland/Galway/9', 'tagA', 'http://dmi-1', '', '', '{\"Color\": \"yellow\"}', "
    "'{}', 'READY', NULL, NULL, true, 'SYNCHRONIZED', '2025-06-09 12:00:00+00'),"
    " ('ch-10', 'alt-10', 'tagC', 'http://dmi-1', '', '', '{\"Color\": \"Yellow\"}', '{}', "
    "'LOCKED', 'MODULE_SYNC_FAILED', NULL, false, NULL, '2025-06-10 12:00:00+00'),"
    " ('ch-11', 'x''); DROP TABLE cm_handle; --', 'tagD', 'http://dmi-1', '', '', '{\"Note\": "
    "\"50% off_now\"}', '{}', 'ADVISED', NULL, NULL, false, NULL, '2025-06-11 12:00:00+00'),"
    " ('ch-12', 'caf\xc3"
    "\xa9"
    "', 'tagD', 'http://dmi-1', '', '', '{\"Ville\": \"Montr\xc3"
    "\xa9"
    "al\"}', '{}', 'READY', NULL, NULL, false, 'NONE_REQUESTED', '2025-06-12 12:00:00+00'),"
    " ('ch-13', 'alt-13', 'tagB', 'http://dmi-1', '', '', '{}', '{}', 'ADVISED', NULL, NULL, "
    "false, NULL, '2025-06-13 12:00:00+00'),"
    " ('ch-14', 'alt-14', '', 'http://dmi-1', '', '', '{\"Contact\": \"\"}', '{}', 'READY', NULL, "
    "NULL, false, 'NONE_REQUESTED', '2025-06-14 12:00:00+00'),"
    " ('ch-15', 'alt-15', 'tagA', 'http://dmi-1', '', '', '{}', '{}', 'LOCKED', "
    "'MODULE_UPGRADE_FAILED', 'Upgrade failed', false, NULL, '2025-06-15 12:00:00+00'),"
    " ('ch-16', 'alt-16', 'tagD', 'http://dmi-1', '', '', '{\"Size\": \"010\"}', '{}', 'READY', "
    "NULL, NULL, true, 'UNSYNCHRONIZED', '2025-06-16 12:00:00+00'),"
    " ('ch-17', 'alt-17', 'tagD', 'http://dmi-1', '', '', '{}', '{}', 'DELETING', NULL, NULL, "
    "false, NULL, '2025-06-17 12:00:00+00'),"
    " ('ch-18', 'alt-18', 'tagA', 'http://dmi-1', '', '', '{\"Color\": \"yellow\", \"Contact\": "
    "\"newemailforstore@bookstore.com\"}', '{}', 'ADVISED', NULL, NULL, false, NULL, '2025-06-18 "
    "12:00:00+00'),"
    " ('ch-19', 'alt-19', '', 'http://dmi-1', '', '', '{}', '{\"Color\": \"yellow\"}', 'READY', "
    "NULL, NULL, false, 'NONE_REQUESTED', '2025-06-19 12:00:00+00'),"
    " ('ch-20', 'alt-20', 'tagB', 'http://dmi-1', '', '', '{}', '{}', 'READY', NULL, NULL, false, "
    "'NONE_REQUESTED', '2026-01-01 00:00:00+00')";

/* The data-job DMI services of three handles (the others have none). */
static const char datajobs_sql[] =
    "UPDATE cm_handle SET dmi_datajobs_read_service = 'http://jobs-r',"
    " dmi_datajobs_write_service = 'http://jobs-w' WHERE id = 'ch-02';"
    "UPDATE cm_handle SET dmi_datajobs_write_service = 'http://jobs-w' WHERE id = 'ch-03';"
    "UPDATE cm_handle SET dmi_datajobs_read_service = 'http://jobs-r2' WHERE id = 'ch-05'";

static const search searches[] = {
    {"//state[@cm-handle-state='READY']",
     "ch-01,ch-02,ch-07,ch-08,ch-09,ch-12,ch-14,ch-16,ch-19,ch-20"},
    {"//state[@cm-handle-state='LOCKED']/ancestor::cm-handles/@id", "ch-03,ch-05,ch-10,ch-15"},
    {"//state[@data-sync-enabled='true']", "ch-02,ch-05,ch-09,ch-16"},
    {"//state[@data-sync-enabled='false']", "ch-01,ch-03,ch-04,ch-06,ch-07,ch-08,ch-10,ch-11,ch-12,"
                                            "ch-13,ch-14,ch-15,ch-17,ch-18,ch-19,ch-20"},
    {"//cm-handles[@alternate-id='alt-5']", "ch-05"},
    {"//lock-reason[@reason='MODULE_SYNC_FAILED']", "ch-03,ch-10"},
    {"//public-properties[@name='Contact' and @value='newemailforstore@bookstore.com']",
     "ch-01,ch-18"},
    {"//public-properties[@name='Color' and @value='yellow']/ancestor::cm-handles/@id",
     "ch-01,ch-09,ch-18"},
    {"//cm-handles[@id='ch-07']", "ch-07"},
    {"/dmi-registry/cm-handles[@id='ch-05']/state[@cm-handle-state='LOCKED']", "ch-05"},
    {"/dmi-registry/cm-handles[@id='ch-01']/state[@cm-handle-state='LOCKED']", ""},
    {"//cm-handles[contains(@alternate-id,'Ireland')]", "ch-01,ch-02,ch-09"},
    {"//cm-handles/module-set-tag[text()='tagA']", "ch-01,ch-02,ch-09,ch-15,ch-18"},
    {"//lock-reason", "ch-03,ch-05,ch-10,ch-15"},
    {"//lock-reason/details", "ch-03,ch-05,ch-15"},
    {"//lock-reason[contains(@details,'Upgrade')]", "ch-05,ch-15"},
    {"//datastores", "ch-01,ch-02,ch-05,ch-07,ch-08,ch-09,ch-12,ch-14,ch-16,ch-19,ch-20"},
    {"//operational[@sync-state='UNSYNCHRONIZED']", "ch-02,ch-16"},
    {"//public-properties[@name='Size' and @value>=10]", "ch-02,ch-05,ch-16"},
    {"//public-properties[@name='Size' and @value<0]", "ch-08"},
    {"//public-properties[@name='Size' and @value='10']", "ch-02"},
    {"//public-properties[@name='Size' and @value=10]", "ch-02,ch-16"},
    {"//state[@last-update-time<'2025-06-03']", "ch-01,ch-02"},
    {"//state[@last-update-time>='2026']", "ch-20"},
    {"//state[@last-update-time='2025-06-05T12:00:00.000+0000']", "ch-05"},
    {"//cm-handles[@alternate-id='x''); DROP TABLE cm_handle; --']", "ch-11"},
    {"//cm-handles[@alternate-id=\"O'Brien/7\"]", "ch-07"},
    {"//public-properties[@name='O''Brien' and @value='say \"hi\"']", "ch-07"},
    {"//public-properties[contains(@value,'%')]", "ch-11"},
    {"//public-properties[contains(@value,'%_')]", ""},
    {"//cm-handles[@alternate-id='caf\xc3"
     "\xa9"
     "']",
     "ch-12"},
    {"//public-properties[@value='Montr\xc3"
     "\xa9"
     "al']",
     "ch-12"},
    {"//additional-properties[@name='secret']", ""},
    {"//value[text()='yellow']", "ch-01,ch-09,ch-18"},
    {"//public-properties",
     "ch-01,ch-02,ch-03,ch-05,ch-06,ch-07,ch-08,ch-09,ch-10,ch-11,ch-12,ch-14,ch-16,ch-18"},
    {"//public-properties[@name='Color']", "ch-01,ch-02,ch-09,ch-10,ch-18"},
    {"/dmi-registry/cm-handles", "ch-01,ch-02,ch-03,ch-04,ch-05,ch-06,ch-07,ch-08,ch-09,ch-10,ch-"
                                 "11,ch-12,ch-13,ch-14,ch-15,ch-16,ch-17,ch-18,ch-19,ch-20"},
    {"/dmi-registry", ""},
    {"//cm-handles[@module-set-tag='']", "ch-04,ch-14,ch-19"},
    {"//cm-handles/alternate-id", "ch-01,ch-02,ch-03,ch-05,ch-06,ch-07,ch-08,ch-09,ch-10,ch-11,ch-"
                                  "12,ch-13,ch-14,ch-15,ch-16,ch-17,ch-18,ch-19,ch-20"},
    {"//state[@cm-handle-state='ADVISED' or @cm-handle-state='DELETING' and "
     "@data-sync-enabled='false']",
     "ch-04,ch-06,ch-11,ch-13,ch-17,ch-18"},
    {"//cm-handles[@dmi-data-service-name='http://dmi-data-1']", "ch-02"},
    {"//cm-handles[@dmi-service-name='http://dmi-2']", "ch-03,ch-04"},
    {"//cm-handles[@dmi-datajobs-read-service='http://jobs-r']", "ch-02"},
    {"//cm-handles[@dmi-datajobs-write-service='http://jobs-w']", "ch-02,ch-03"},
    {"//cm-handles[contains(@dmi-datajobs-read-service,'jobs-r')]", "ch-02,ch-05"},
    {"//cm-handles[@dmi-datajobs-write-service!='']", "ch-02,ch-03"},
    {"//cm-handles/dmi-datajobs-read-service[text()='http://jobs-r2']", "ch-05"},
    {"//cm-handles[@dmi-datajobs-read-service='http://jobs-r' and "
     "@dmi-datajobs-write-service='http://jobs-w']/state[@cm-handle-state='READY']",
     "ch-02"},
    {"//cm-handles[@id>'ch-18']", "ch-19,ch-20"},
    {"//running", ""},
    {"//public-properties[@name='Contact' and @value='']", "ch-14"},
    {"//cm-handles[@no-such-leaf='x']", ""},
    {"//state[@cm-handle-state!='READY']",
     "ch-03,ch-04,ch-05,ch-06,ch-10,ch-11,ch-13,ch-15,ch-17,ch-18"},
    {"//cm-handles[@data-producer-identifier='prod-1']", "ch-01,ch-02"},
    {"//public-properties[@name='Color' or "
     "@name='Size']/ancestor::cm-handles[@module-set-tag='tagA']",
     "ch-01,ch-02,ch-09,ch-18"},
    {"//reason[text()='MODULE_UPGRADE']/ancestor::state[@data-sync-enabled='true']", "ch-05"},
};

/* The scratch database of the running test. */
static char scratch_name[96];
static ncmp_db *scratch_db;

static void scratch_drop(void)
{
    ncmp_db_close(scratch_db);
    scratch_db = NULL;
    if (scratch_name[0])
        it_scratch_db_drop(scratch_name);
    scratch_name[0] = '\0';
}

TestSuite(cpspath_sql, .fini = scratch_drop);

/* A scratch database with the schema and the inventory above. */
static ncmp_db *inventory_open(void)
{
    char url[512];
    ncmp_err err;

    it_scratch_db_create("it_cps", scratch_name, sizeof(scratch_name), url, sizeof(url));
    cr_assert_eq(ncmp_db_open(&scratch_db, url, NULL, 10, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_migrate_run(scratch_db, ncmp_migrations, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_db_exec(scratch_db, inventory_sql, &err), 0, "%s", err.msg);
    cr_assert_eq(ncmp_db_exec(scratch_db, datajobs_sql, &err), 0, "%s", err.msg);
    return scratch_db;
}

/* The ids `path` selects, comma-separated in id order, into *ids. */
static void select_ids(ncmp_db *db, const char *path, int first_param, ncmp_buf *ids)
{
    ncmp_buf sql = NCMP_BUF_INIT;
    ncmp_cpspath_params params = {0};
    ncmp_err err = {0};
    PGresult *res = NULL;
    int rc;

    ncmp_buf_append_str(&sql, "SELECT id FROM cm_handle h WHERE ");
    if (first_param == 2) {
        /* a caller's own parameter before the path's */
        ncmp_buf_append_str(&sql, "h.id <> $1 AND ");
        params.values = malloc(sizeof(char *));
        params.values[0] = strdup("no-such-handle");
        params.n = 1;
    }
    if (ncmp_cpspath_to_sql(path, first_param, &sql, &params, NULL, &err) != 0)
        cr_assert_fail("%s: %s", path, err.msg);
    ncmp_buf_append_str(&sql, " ORDER BY id");
    rc = ncmp_db_query(db, sql.data, (int)params.n, (const char *const *)params.values, &res, &err);
    if (rc != 0)
        cr_assert_fail("%s\n  %s\n  %s", path, sql.data, err.msg);
    ncmp_buf_reset(ids);
    ncmp_buf_append_str(ids, ""); /* "" rather than NULL when none */
    for (int i = 0; i < PQntuples(res); i++)
        ncmp_buf_appendf(ids, "%s%s", i ? "," : "", PQgetvalue(res, i, 0));
    PQclear(res);
    ncmp_cpspath_params_free(&params);
    ncmp_buf_free(&sql);
}

Test(cpspath_sql, selects_the_handles_the_path_names, .timeout = 60)
{
    ncmp_db *db = inventory_open();
    ncmp_buf ids = NCMP_BUF_INIT;

    for (size_t i = 0; i < sizeof(searches) / sizeof(searches[0]); i++) {
        for (int first = 1; first <= 2; first++) {
            select_ids(db, searches[i].path, first, &ids);
            cr_expect_str_eq(ids.data, searches[i].ids, "%s (parameters from $%d)",
                             searches[i].path, first);
        }
    }
    ncmp_buf_free(&ids);
}

Test(cpspath_sql, hostile_values_stay_data, .timeout = 60)
{
    /* LIKE would take % and _ as patterns; contains() must not */
    static const search hostile[] = {
        {"//cm-handles[@id='''); DROP TABLE cm_handle; --']", ""},
        {"//cm-handles[@id='x'' OR ''1''=''1']", ""},
        {"//public-properties[@name='a\\' and @value='\\'' OR true --']", ""},
        {"//public-properties[@name='\"}' and @value='{\"a\":\"b\"}']", ""},
        {"//cm-handles[contains(@alternate-id,'%')]", ""},
        {"//cm-handles[contains(@alternate-id,'_')]", "ch-11"},
        {"//cm-handles[contains(@alternate-id,'''); DROP')]", "ch-11"},
        {"//cm-handles[@alternate-id=''') OR (''a''=''a']", ""},
        {"//state[@last-update-time<'$$; DROP TABLE cm_handle; $$']/ancestor::cm-handles", ""},
    };
    ncmp_db *db = inventory_open();
    ncmp_buf ids = NCMP_BUF_INIT;

    for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
        select_ids(db, hostile[i].path, 1, &ids);
        cr_expect_str_eq(ids.data, hostile[i].ids, "%s selected %s", hostile[i].path, ids.data);
    }
    cr_expect_eq(it_query_long(db, "SELECT count(*) FROM cm_handle", 0, NULL), 20);
    ncmp_buf_free(&ids);
}

/* Mutated paths: whatever the translator accepts, PostgreSQL runs. */
Test(cpspath_sql, accepted_fuzz_outputs_run_on_postgresql, .timeout = 120)
{
    enum { RUNS = 3000 };
    static uint8_t buf[4200];
    ncmp_db *db = inventory_open();
    fuzz_corpus corpus;
    fuzz_rng rng;
    size_t accepted = 0;

    cr_assert_eq(fuzz_corpus_load(NCMP_SOURCE_DIR "/tests/fuzz/corpus/cpspath", &corpus), 0);
    cr_assert_gt(corpus.n, 0);
    fuzz_rng_seed(&rng, 20260128);
    for (int r = 0; r < RUNS; r++) {
        size_t len = fuzz_mutate(&rng, &corpus, &fuzz_cpspath_dict, buf, sizeof(buf));
        ncmp_buf sql = NCMP_BUF_INIT;
        ncmp_cpspath_params params = {0};
        ncmp_err err = {0};
        PGresult *res = NULL;

        ncmp_buf_append_str(&sql, "SELECT count(*) FROM cm_handle h WHERE ");
        if (fuzz_cpspath_check(buf, len, 1, &sql, &params)) {
            accepted++;
            if (ncmp_db_query(db, sql.data, (int)params.n, (const char *const *)params.values, &res,
                              &err) != 0)
                cr_assert_fail("path '%.*s'\n  %s\n  %s", (int)len, (const char *)buf, sql.data,
                               err.msg);
            PQclear(res);
        }
        ncmp_cpspath_params_free(&params);
        ncmp_buf_free(&sql);
    }
    fuzz_corpus_free(&corpus);
    cr_expect_gt(accepted, RUNS / 50, "only %zu of %d mutations were accepted", accepted, RUNS);
}
