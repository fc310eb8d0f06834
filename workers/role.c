#include "role.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cps.h"
#include "forward.h"
#include "ingest.h"
#include "lcm_relay.h"
#include "modsync.h"
#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "registration.h"
#include "rest.h"
#include "trust.h"

/* --- services ------------------------------------------------------------ */

int ncmp_services_new(ncmp_services *svc, const ncmp_config *cfg, ncmp_err *err)
{
    ncmp_dmi_opts opts;

    memset(svc, 0, sizeof(*svc));
    svc->cfg = cfg;
    ncmp_dmi_opts_from_config(&opts, cfg);
    if (ncmp_producer_new(&svc->producer, cfg, "ncmpd", err) != 0 ||
        ncmp_dmi_new(&svc->dmi, &opts, err) != 0) {
        ncmp_services_free(svc);
        return -1;
    }
    return 0;
}

void ncmp_services_free(ncmp_services *svc)
{
    ncmp_dmi_destroy(svc->dmi);
    svc->dmi = NULL;
    ncmp_producer_destroy(svc->producer);
    svc->producer = NULL;
}

/* --- stage rows: ncmp_stage with the row's descriptor --------------------- */

typedef struct stage_row {
    ncmp_stage_role role;
    const char *topics[4];
    ncmp_stage *stage;
} stage_row;

static int stage_row_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                           ncmp_err *err)
{
    stage_row *h = ncmp_xcalloc(1, sizeof(*h));

    self->stage_init(&h->role, svc, h->topics);
    if (ncmp_stage_start(&h->stage, svc->cfg, &h->role, svc->producer, err) != 0) {
        free(h);
        return -1;
    }
    *handle = h;
    return 0;
}

static int stage_row_join(void *handle, ncmp_err *err)
{
    stage_row *h = handle;
    return ncmp_stage_join(h->stage, err);
}

static void stage_row_destroy(void *handle)
{
    stage_row *h = handle;
    if (!h)
        return;
    ncmp_stage_destroy(h->stage);
    free(h);
}

/* --- the other rows: adapters to their modules ---------------------------- */

static int relay_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                       ncmp_err *err)
{
    return lcm_relay_start((lcm_relay **)handle, svc->cfg, err);
}

static int relay_join(void *handle, ncmp_err *err)
{
    return lcm_relay_join(handle, err);
}

static void relay_destroy(void *handle)
{
    lcm_relay_destroy(handle);
}

static int sweep_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                       ncmp_err *err)
{
    return modsync_sweep_start((modsync_sweep **)handle, svc, err);
}

static int sweep_join(void *handle, ncmp_err *err)
{
    return modsync_sweep_join(handle, err);
}

static void sweep_destroy(void *handle)
{
    modsync_sweep_destroy(handle);
}

static int watchdog_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                          ncmp_err *err)
{
    return trust_watchdog_start((trust_watchdog **)handle, svc, err);
}

static int watchdog_join(void *handle, ncmp_err *err)
{
    return trust_watchdog_join(handle, err);
}

static void watchdog_destroy(void *handle)
{
    trust_watchdog_destroy(handle);
}

static int rest_row_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                          ncmp_err *err)
{
    return rest_start((rest **)handle, svc, err);
}

static void rest_row_stop(void *handle)
{
    rest_stop(handle);
}

static void rest_row_destroy(void *handle)
{
    rest_destroy(handle);
}

static int forward_row_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                             ncmp_err *err)
{
    return forward_start((forward **)handle, svc->cfg, self->name, err);
}

static int forward_row_join(void *handle, ncmp_err *err)
{
    return forward_join(handle, err);
}

static void forward_row_destroy(void *handle)
{
    forward_destroy(handle);
}

static int cps_row_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                         ncmp_err *err)
{
    return cps_start((cps **)handle, svc, err);
}

static void cps_row_stop(void *handle)
{
    cps_stop(handle);
}

static void cps_row_destroy(void *handle)
{
    cps_destroy(handle);
}

/* --- topics that are not a stage's input ---------------------------------- */

static size_t add_topic(char (*names)[256], size_t n, size_t max, const char *topic)
{
    if (n < max && topic && *topic)
        snprintf(names[n++], sizeof(names[0]), "%s", topic);
    return n;
}

static size_t registration_topics(const ncmp_role *self, const ncmp_config *cfg, char (*names)[256],
                                  size_t max)
{
    return add_topic(names, 0, max, cfg->registration_response_topic);
}

static size_t trust_topics(const ncmp_role *self, const ncmp_config *cfg, char (*names)[256],
                           size_t max)
{
    return add_topic(names, 0, max, cfg->trust_inventory_events_topic);
}

static size_t relay_topics(const ncmp_role *self, const ncmp_config *cfg, char (*names)[256],
                           size_t max)
{
    return add_topic(names, 0, max, cfg->lcm_topic);
}

/* The batch-read request topic and its dead letters (data access, in the
 * rest role). */
static size_t rest_topics(const ncmp_role *self, const ncmp_config *cfg, char (*names)[256],
                          size_t max)
{
    size_t n = 0;

    if (*cfg->data_request_topic) {
        char dlq[256];
        snprintf(dlq, sizeof(dlq), "%s-dlq", cfg->data_request_topic);
        n = add_topic(names, n, max, cfg->data_request_topic);
        n = add_topic(names, n, max, dlq);
    }
    return n;
}

static size_t forward_row_topics(const ncmp_role *self, const ncmp_config *cfg, char (*names)[256],
                                 size_t max)
{
    return forward_topics(cfg, self->name, names, max);
}

/* --- the table ------------------------------------------------------------ */

#define STAGE_ROW(row_name, init, outputs)                                                         \
    {                                                                                              \
        .name = row_name, .needs_db = 1, .stage_init = init, .topics = outputs,                    \
        .start = stage_row_start, .join = stage_row_join, .destroy = stage_row_destroy             \
    }

/* Start order; the stop order is the reverse (see role.h). */
const ncmp_role ncmp_roles[] = {
    {.name = "lcm-relay",
     .needs_db = 1,
     .topics = relay_topics,
     .start = relay_start,
     .join = relay_join,
     .destroy = relay_destroy},
    STAGE_ROW("ingest", ingest_role_init, NULL),
    STAGE_ROW("registration", registration_role_init, registration_topics),
    STAGE_ROW("module-sync", modsync_role_init, NULL),
    {.name = "module-sync-sweep",
     .part_of = "module-sync",
     .needs_db = 1,
     .start = sweep_start,
     .join = sweep_join,
     .destroy = sweep_destroy},
    STAGE_ROW("trust", trust_role_init, trust_topics),
    {.name = "trust-watchdog",
     .part_of = "trust",
     .needs_db = 1,
     .start = watchdog_start,
     .join = watchdog_join,
     .destroy = watchdog_destroy},
    {.name = FORWARD_AVC_ROLE,
     .topics = forward_row_topics,
     .start = forward_row_start,
     .join = forward_row_join,
     .destroy = forward_row_destroy},
    {.name = FORWARD_ASYNC_ROLE,
     .topics = forward_row_topics,
     .start = forward_row_start,
     .join = forward_row_join,
     .destroy = forward_row_destroy},
    /* before rest: stopped after it, so the server rest owns is gone
     * before anything cps owns (nothing, then) is freed */
    {.name = "cps",
     .needs_db = 1,
     .start = cps_row_start,
     .stop = cps_row_stop,
     .destroy = cps_row_destroy},
    {.name = "rest",
     .needs_db = 1,
     .topics = rest_topics,
     .start = rest_row_start,
     .stop = rest_row_stop,
     .destroy = rest_row_destroy},
};

const size_t ncmp_nroles = sizeof(ncmp_roles) / sizeof(ncmp_roles[0]);

/* Is `name` (len bytes) in the comma-separated `roles` (or is it "all")? */
static int listed(const char *roles, const char *name, size_t n)
{
    const char *p = roles;

    if (strcmp(roles, "all") == 0)
        return 1;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && *p == ' ')
            p++, len--;
        while (len && p[len - 1] == ' ')
            len--;
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

int ncmp_role_selected(const ncmp_role *r, const char *roles)
{
    const char *name = r->part_of ? r->part_of : r->name;
    return listed(roles, name, strlen(name));
}

int ncmp_role_name_selected(const char *name, const char *roles)
{
    for (size_t i = 0; i < ncmp_nroles; i++)
        if (strcmp(ncmp_roles[i].name, name) == 0)
            return ncmp_role_selected(&ncmp_roles[i], roles);
    return 0;
}

int ncmp_roles_check(const char *roles, ncmp_err *err)
{
    const char *p = roles;

    if (strcmp(roles, "all") == 0)
        return 0;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[64];
        int known = 0;
        snprintf(name, sizeof(name), "%.*s", (int)len, p);
        for (size_t i = 0; i < ncmp_nroles; i++)
            known |= !ncmp_roles[i].part_of &&
                     listed(name, ncmp_roles[i].name, strlen(ncmp_roles[i].name));
        if (!known)
            return ncmp_err_set(err, NCMP_ERR_FATAL, "roles: unknown role '%s' (roles: %s)", name,
                                ncmp_roles_names());
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

int ncmp_roles_need_db(const char *roles)
{
    for (size_t i = 0; i < ncmp_nroles; i++)
        if (ncmp_roles[i].needs_db && ncmp_role_selected(&ncmp_roles[i], roles))
            return 1;
    return 0;
}

static size_t add_unique(char (*names)[256], size_t n, size_t max, const char *topic)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], topic) == 0)
            return n;
    return add_topic(names, n, max, topic);
}

size_t ncmp_roles_topics(const ncmp_config *cfg, char (*names)[256], size_t max)
{
    ncmp_services svc = {.cfg = cfg};
    char row[NCMP_ROLE_MAX_TOPICS][256];
    size_t n = 0;

    for (size_t i = 0; i < ncmp_nroles; i++) {
        const ncmp_role *r = &ncmp_roles[i];
        size_t k = 0;
        if (r->stage_init) {
            ncmp_stage_role role;
            const char *topics[4] = {0};
            memset(&role, 0, sizeof(role));
            r->stage_init(&role, &svc, topics);
            for (size_t t = 0; t < role.ntopics; t++) {
                char dlq[256];
                snprintf(dlq, sizeof(dlq), "%s-dlq", role.topics[t]);
                n = add_unique(names, n, max, role.topics[t]);
                n = add_unique(names, n, max, dlq);
            }
        }
        if (r->topics)
            k = r->topics(r, cfg, row, NCMP_ROLE_MAX_TOPICS);
        for (size_t t = 0; t < k; t++)
            n = add_unique(names, n, max, row[t]);
    }
    return n;
}

const char *ncmp_roles_names(void)
{
    static char names[512];

    if (!*names) {
        size_t off = 0;
        for (size_t i = 0; i < ncmp_nroles && off < sizeof(names); i++)
            if (!ncmp_roles[i].part_of)
                off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", off ? ", " : "",
                                        ncmp_roles[i].name);
    }
    return names;
}
