#include "role.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avc_apply.h"
#include "cps.h"
#include "cps_split.h"
#include "datasync.h"
#include "forward.h"
#include "ingest.h"
#include "lcm_relay.h"
#include "modsync.h"
#include "ncmp_buf.h"
#include "ncmp_dlq.h"
#include "ncmp_kafka_config.h"
#include "ncmp_log.h"
#include "ncmp_text.h"
#include "ncmp_time.h"
#include "registration.h"
#include "rest.h"
#include "trust.h"

/* --- services ------------------------------------------------------------ */

/* The producer learns where the roles' topics live before the roles
 * start: unknown to it, a topic costs its first record a metadata round
 * (about half a second, measured as the first registration batch's wait
 * for its outcome and hand-over records). Best effort, within 5 s in all
 * and a second when the broker does not answer: a topic still unknown is
 * learnt at its first record, as before. */
static void producer_learn_topics(const ncmp_services *svc)
{
    char names[64][256];
    size_t n = ncmp_roles_topics(svc->cfg, names, 64);
    rd_kafka_t *rk = ncmp_producer_rk(svc->producer);
    double deadline = ncmp_now_ms() + 5000, t0 = ncmp_now_ms();
    size_t known = 0;

    for (size_t i = 0; i < n; i++) {
        ncmp_err err;
        int count, left = (int)(deadline - ncmp_now_ms());
        if (left < 100)
            break;
        /* one topic not found within a second: the broker is away or the
         * topics are made by their first record; the rest would wait too */
        if (ncmp_kafka_partition_count(rk, names[i], left < 1000 ? left : 1000, &count, &err) != 0)
            break;
        known++;
    }
    log_debug("kafka", "producer knows %zu of %zu topics (%.0f ms)", known, n, ncmp_now_ms() - t0);
}

int ncmp_services_new(ncmp_services *svc, const ncmp_config *cfg, ncmp_err *err)
{
    ncmp_dmi_opts opts;
    ncmp_kafka_opts kopts;

    memset(svc, 0, sizeof(*svc));
    svc->cfg = cfg;
    cps_events_configure(cfg->cps_data_updated_events, cfg->cps_delta_notification);
    cps_split_configure((size_t)cfg->cps_split_parse_bytes);
    if (!ncmp_roles_need_services(cfg->roles))
        return 0;
    ncmp_dmi_opts_from_config(&opts, cfg);
    ncmp_kafka_opts_from_config(&kopts, cfg);
    if (ncmp_producer_new(&svc->producer, &kopts, NCMP_PRODUCER_KEYED, "ncmpd", err) != 0 ||
        ncmp_dmi_new(&svc->dmi, &opts, err) != 0) {
        ncmp_services_free(svc);
        return -1;
    }
    producer_learn_topics(svc);
    return 0;
}

void ncmp_services_free(ncmp_services *svc)
{
    ncmp_dmi_destroy(svc->dmi);
    svc->dmi = NULL;
    ncmp_producer_destroy(svc->producer);
    svc->producer = NULL;
}

/* --- stage rows: ncmp_stage ----------------------------------------------- */

#define CFG_AT(cfg, type, at) (*(const type *)((const char *)(cfg) + (at)))

const char *ncmp_role_stage_topic(const ncmp_role *r, const ncmp_config *cfg)
{
    return CFG_AT(cfg, char *, r->topic_at);
}

typedef struct stage_row {
    ncmp_stage_role role;
    const char *topics[1];
    ncmp_stage *stage;
} stage_row;

static int stage_row_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                           ncmp_err *err)
{
    stage_row *h = ncmp_xcalloc(1, sizeof(*h));

    h->topics[0] = ncmp_role_stage_topic(self, svc->cfg);
    h->role = (ncmp_stage_role){.name = self->name,
                                .topics = h->topics,
                                .ntopics = 1,
                                .workers = CFG_AT(svc->cfg, int, self->workers_at),
                                .batch_size = CFG_AT(svc->cfg, int, self->batch_size_at),
                                .batch_wait_ms = CFG_AT(svc->cfg, int, self->batch_wait_at),
                                .arg = (void *)svc,
                                .ops = *self->stage};
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

/* --- singleton rows: ncmp_singleton --------------------------------------- */

typedef struct singleton_row {
    const ncmp_role *self;
    void *arg;
    ncmp_singleton *runner;
} singleton_row;

static int singleton_row_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                               ncmp_err *err)
{
    singleton_row *h = ncmp_xcalloc(1, sizeof(*h));
    ncmp_singleton_task task;

    h->self = self;
    if (self->task(svc, &task, err) != 0) {
        free(h);
        return -1;
    }
    h->arg = task.arg;
    if (ncmp_singleton_start(&h->runner, svc->cfg, &task, err) != 0) {
        self->task_free(h->arg);
        free(h);
        return -1;
    }
    *handle = h;
    return 0;
}

static int singleton_row_join(void *handle, ncmp_err *err)
{
    singleton_row *h = handle;
    return ncmp_singleton_join(h->runner, err);
}

static void singleton_row_destroy(void *handle)
{
    singleton_row *h = handle;
    if (!h)
        return;
    ncmp_singleton_destroy(h->runner);
    h->self->task_free(h->arg);
    free(h);
}

/* --- the others ----------------------------------------------------------- */

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

/* --- pump rows: ncmp_pump -------------------------------------------------- */

typedef struct pump_row {
    ncmp_pump_role role;
    ncmp_pump *pump;
} pump_row;

static int pump_row_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                          ncmp_err *err)
{
    pump_row *h = ncmp_xcalloc(1, sizeof(*h));

    if (self->pump(svc, &h->role, err) != 0 ||
        ncmp_pump_start(&h->pump, svc->cfg, &h->role, err) != 0) {
        free(h);
        return -1;
    }
    *handle = h;
    return 0;
}

static int pump_row_join(void *handle, ncmp_err *err)
{
    pump_row *h = handle;
    return ncmp_pump_join(h->pump, err);
}

static void pump_row_destroy(void *handle)
{
    pump_row *h = handle;
    if (!h)
        return;
    ncmp_pump_destroy(h->pump);
    free(h);
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

static int datasync_row_start(const ncmp_role *self, const ncmp_services *svc, void **handle,
                              ncmp_err *err)
{
    return datasync_start((datasync **)handle, svc, err);
}

static void datasync_row_stop(void *handle)
{
    datasync_stop(handle);
}

static int datasync_row_join(void *handle, ncmp_err *err)
{
    return datasync_join(handle, err);
}

static void datasync_row_destroy(void *handle)
{
    datasync_destroy(handle);
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

static size_t cps_relay_topics(const ncmp_role *self, const ncmp_config *cfg, char (*names)[256],
                               size_t max)
{
    return add_topic(names, 0, max, cfg->cps_data_updated_topic);
}

/* The batch-read request topic and its dead letters (data access, in the
 * rest role). */
static size_t rest_topics(const ncmp_role *self, const ncmp_config *cfg, char (*names)[256],
                          size_t max)
{
    size_t n = 0;

    if (*cfg->data_request_topic) {
        char dlq[256];
        ncmp_dlq_topic(dlq, sizeof(dlq), cfg->data_request_topic);
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

#define STAGE_ROW(row_name, ops, topic, prefix, outputs)                                           \
    {                                                                                              \
        .name = row_name, .needs_db = 1, .stage = &ops, .topic_at = offsetof(ncmp_config, topic),  \
        .workers_at = offsetof(ncmp_config, prefix##_workers),                                     \
        .batch_size_at = offsetof(ncmp_config, prefix##_batch_size),                               \
        .batch_wait_at = offsetof(ncmp_config, prefix##_batch_wait_ms), .topics = outputs,         \
        .start = stage_row_start, .join = stage_row_join, .destroy = stage_row_destroy             \
    }

#define SINGLETON_ROW(row_name, parent, fill, release, outputs)                                    \
    {                                                                                              \
        .name = row_name, .part_of = parent, .needs_db = 1, .task = fill, .task_free = release,    \
        .topics = outputs, .start = singleton_row_start, .join = singleton_row_join,               \
        .destroy = singleton_row_destroy                                                           \
    }

#define PUMP_ROW(row_name, fill, outputs)                                                          \
    {                                                                                              \
        .name = row_name, .pump = fill, .topics = outputs, .start = pump_row_start,                \
        .join = pump_row_join, .destroy = pump_row_destroy                                         \
    }

/* Start order; the stop order is the reverse (see role.h). */
const ncmp_role ncmp_roles[] = {
    SINGLETON_ROW("lcm-relay", NULL, lcm_relay_task, lcm_relay_free, relay_topics),
    SINGLETON_ROW("cps-relay", NULL, cps_relay_task, cps_relay_free, cps_relay_topics),
    STAGE_ROW("ingest", ingest_stage, ingest_topic, ingest, NULL),
    STAGE_ROW("registration", registration_stage, registration_topic, registration,
              registration_topics),
    STAGE_ROW("module-sync", modsync_stage, module_sync_topic, module_sync, NULL),
    SINGLETON_ROW("module-sync-sweep", "module-sync", modsync_sweep_task, modsync_sweep_free, NULL),
    STAGE_ROW("trust", trust_stage, trust_heartbeat_topic, trust, trust_topics),
    SINGLETON_ROW("trust-watchdog", "trust", trust_watchdog_task, trust_watchdog_free, NULL),
    PUMP_ROW(FORWARD_AVC_ROLE, forward_avc_pump, forward_row_topics),
    PUMP_ROW(FORWARD_ASYNC_ROLE, forward_async_pump, forward_row_topics),
    /* a consumer group of its own on avc-forward's input: the cache never
     * holds the forwarding back (workers/avc/avc_apply.h) */
    STAGE_ROW(AVC_APPLY_ROLE, avc_apply_stage, avc_forward_input_topic, avc_apply, NULL),
    {.name = "data-sync",
     .needs_db = 1,
     .start = datasync_row_start,
     .stop = datasync_row_stop,
     .join = datasync_row_join,
     .destroy = datasync_row_destroy},
    /* before rest: stopped after it, so the server rest owns is gone
     * before anything cps owns (nothing, then) is freed */
    {.name = "cps",
     .needs_db = 1,
     .no_services = 1,
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
    return strcmp(roles, "all") == 0 || ncmp_list_has(roles, ',', name, n);
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

int ncmp_roles_need_services(const char *roles)
{
    for (size_t i = 0; i < ncmp_nroles; i++)
        if (!ncmp_roles[i].no_services && ncmp_role_selected(&ncmp_roles[i], roles))
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
    char row[NCMP_ROLE_MAX_TOPICS][256];
    size_t n = 0;

    for (size_t i = 0; i < ncmp_nroles; i++) {
        const ncmp_role *r = &ncmp_roles[i];
        size_t k = 0;
        if (r->stage) {
            const char *topic = ncmp_role_stage_topic(r, cfg);
            char dlq[256];
            ncmp_dlq_topic(dlq, sizeof(dlq), topic);
            n = add_unique(names, n, max, topic);
            n = add_unique(names, n, max, dlq);
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
