/*
 * role: the role table's own rules, and what create-topics makes of it.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ncmp_config.h"
#include "role.h"

static const ncmp_role *row(const char *name)
{
    for (size_t i = 0; i < ncmp_nroles; i++)
        if (strcmp(ncmp_roles[i].name, name) == 0)
            return &ncmp_roles[i];
    return NULL;
}

Test(role, every_row_keeps_the_contract)
{
    for (size_t i = 0; i < ncmp_nroles; i++) {
        const ncmp_role *r = &ncmp_roles[i];
        cr_assert(r->name && *r->name);
        cr_assert_not_null(r->start, "%s", r->name);
        cr_assert_not_null(r->destroy, "%s", r->name);
        cr_assert(r->join || r->stop, "%s can be ended", r->name);
        if (r->part_of)
            cr_assert_not_null(row(r->part_of), "%s is part of a row that exists", r->name);
        for (size_t j = 0; j < i; j++)
            cr_assert_str_neq(ncmp_roles[j].name, r->name, "two rows named %s", r->name);
    }
}

Test(role, the_stop_order_is_the_reverse_of_the_table)
{
    size_t relay = 0, rest = 0, reg = 0;

    for (size_t i = 0; i < ncmp_nroles; i++) {
        if (strcmp(ncmp_roles[i].name, "lcm-relay") == 0)
            relay = i;
        if (strcmp(ncmp_roles[i].name, "rest") == 0)
            rest = i;
        if (strcmp(ncmp_roles[i].name, "registration") == 0)
            reg = i;
    }
    /* the relay stops after the stages (it publishes what they committed),
     * the REST API before them (no new requests while they finish) */
    cr_assert_lt(relay, reg);
    cr_assert_gt(rest, reg);
    cr_assert_eq(rest, ncmp_nroles - 1);
}

Test(role, selection_by_name_part_of_and_all)
{
    cr_assert(ncmp_role_selected(row("registration"), "all"));
    cr_assert(ncmp_role_selected(row("registration"), "rest, registration"));
    cr_assert(!ncmp_role_selected(row("registration"), "rest,registration-x"));
    cr_assert(ncmp_role_selected(row("module-sync-sweep"), "module-sync"));
    cr_assert(ncmp_role_selected(row("trust-watchdog"), "trust"));
    cr_assert(!ncmp_role_selected(row("trust-watchdog"), "trust-watchdog"));
    cr_assert(!ncmp_roles_need_db("avc-forward,async-forward"));
    cr_assert(ncmp_roles_need_db("avc-forward,rest"));
    cr_assert(!ncmp_roles_need_services("cps"));
    cr_assert(ncmp_roles_need_services("cps,rest"));
    cr_assert(ncmp_roles_need_services("all"));
}

Test(role, unknown_names_are_refused_with_the_list)
{
    ncmp_err err;

    cr_assert_eq(ncmp_roles_check("all", &err), 0);
    cr_assert_eq(ncmp_roles_check("ingest,lcm-relay,rest,avc-forward", &err), 0);
    cr_assert_eq(ncmp_roles_check("ingest,reigstration", &err), -1);
    cr_assert_eq(err.cls, NCMP_ERR_FATAL);
    cr_assert(strstr(err.msg, "'reigstration'"), "%s", err.msg);
    cr_assert(strstr(err.msg, "module-sync"), "the known roles are listed: %s", err.msg);
    /* the sweep is not a role of its own */
    cr_assert_eq(ncmp_roles_check("module-sync-sweep", &err), -1);
}

static int has(char (*names)[256], size_t n, const char *topic)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], topic) == 0)
            return 1;
    return 0;
}

Test(role, create_topics_knows_every_topic_once)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    char names[64][256];
    size_t n = ncmp_roles_topics(cfg, names, 64);
    const char *const want[] = {cfg->registration_topic,    cfg->registration_response_topic,
                                cfg->module_sync_topic,     cfg->lcm_topic,
                                cfg->trust_heartbeat_topic, cfg->trust_inventory_events_topic,
                                cfg->data_request_topic};

    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char dlq[300];
        cr_assert(has(names, n, want[i]), "%s missing", want[i]);
        snprintf(dlq, sizeof(dlq), "%s-dlq", want[i]);
        if (i != 1 && i != 3 && i != 5)
            cr_assert(has(names, n, dlq), "%s missing (an input's dead letters)", dlq);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            cr_assert_str_neq(names[i], names[j], "%s twice", names[i]);
    ncmp_config_destroy(cfg);
}
