#include "rest_registration.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_db.h"
#include "ncmp_json.h"
#include "ncmp_kafka.h"
#include "ncmp_cloudevent.h"
#include "ncmp_kafka_config.h"
#include "ncmp_lcm.h"
#include "ncmp_log.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"

#define REQUEST_TYPE "org.onap.ncmp.dmi-plugin-registration"
/* Longest wait for the commit after the outcome (it follows in a few ms;
 * longer means the registration role runs with another kafka.group.id or
 * failed to commit and will answer again). */
#define COMMIT_WAIT_MS 2000

/* A request waiting for its outcome. Everything but the list links and
 * the fields set before publishing is written on the outcome thread (it
 * is the only one polling the producer, so delivery reports run there
 * too). Freed once answered and its delivery report is in. */
typedef struct waiter {
    char ce_id[37];
    ncmp_http_request *req; /* NULL once answered */
    double deadline;
    int delivered; /* 0 pending, 1 acknowledged, -1 failed */
    char delivery_error[160];
    int32_t partition; /* where the request landed */
    int64_t offset;
    char *outcome; /* the outcome's value, once it arrived */
    size_t outcome_len;
    double outcome_at;
    struct waiter *next;
} waiter;

struct rest_registration {
    const ncmp_config *cfg;
    rd_kafka_t *producer; /* our own: its delivery reports give the offsets */
    rd_kafka_t *consumer;
    ncmp_db *db;     /* the outcome thread's, for the commit check */
    char group[256]; /* the registration role's consumer group */
    pthread_t thread;
    int running;
    atomic_int stop; /* set by the stopping thread, read by the reader thread */
    pthread_mutex_t lock;
    int closed; /* stopping: new requests are refused */
    waiter *waiters;
};

/* --- the shape of a DmiPluginRegistration -------------------------------- */

static int check_string(json_object *o, const char *key, const char *where, ncmp_err *err)
{
    const char *s;
    if (ncmp_json_string_field(o, key, &s, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    return 0;
}

static int check_properties(json_object *h, const char *key, const char *where, ncmp_err *err)
{
    json_object *map;

    if (ncmp_json_object_field(h, key, &map, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    if (!map)
        return 0;
    json_object_object_foreach(map, name, val)
    {
        json_type t = json_object_get_type(val);
        if (t == json_type_object || t == json_type_array)
            return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: %s.%s must be a string, not %s", where,
                                key, name, json_type_to_name(t));
    }
    return 0;
}

static int check_handle(json_object *h, const char *where, ncmp_err *err)
{
    const char *id = NULL, *trust = NULL;
    static const char *const strings[] = {"alternateId", "moduleSetTag", "dataProducerIdentifier",
                                          "cmHandleStatus"};

    if (!json_object_is_type(h, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s must be an object", where);
    if (ncmp_json_string_field(h, "cmHandle", &id, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    if (!id)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: cmHandle is required", where);
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
        if (check_string(h, strings[i], where, err) != 0)
            return -1;
    if (ncmp_json_string_field(h, "trustLevel", &trust, err) != 0)
        return ncmp_err_prefix(err, "%s", where);
    if (trust && strcmp(trust, "COMPLETE") != 0 && strcmp(trust, "NONE") != 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: trustLevel must be COMPLETE or NONE", where);
    if (check_properties(h, "cmHandleProperties", where, err) != 0 ||
        check_properties(h, "publicCmHandleProperties", where, err) != 0)
        return -1;
    return 0;
}

static int check_handles(json_object *root, const char *field, ncmp_err *err)
{
    json_object *arr;

    if (ncmp_json_array_field(root, field, &arr, err) != 0)
        return -1;
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
        char where[96];
        snprintf(where, sizeof(where), "%s[%zu]", field, i);
        if (check_handle(json_object_array_get_idx(arr, i), where, err) != 0)
            return -1;
    }
    return 0;
}

static int check_ids(json_object *arr, const char *field, ncmp_err *err)
{
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
        if (!json_object_is_type(json_object_array_get_idx(arr, i), json_type_string))
            return ncmp_err_set(err, NCMP_ERR_REJECT, "%s[%zu] must be a string", field, i);
    return 0;
}

static int check_root(json_object *root, ncmp_err *err)
{
    static const char *const plugins[] = {"dmiPlugin", "dmiDataPlugin", "dmiModelPlugin",
                                          "dmiDatajobsReadPlugin", "dmiDatajobsWritePlugin"};
    json_object *arr, *up;

    if (!json_object_is_type(root, json_type_object))
        return ncmp_err_set(err, NCMP_ERR_REJECT,
                            "the body must be a JSON object (DmiPluginRegistration)");
    for (size_t i = 0; i < sizeof(plugins) / sizeof(plugins[0]); i++)
        if (check_string(root, plugins[i], "DmiPluginRegistration", err) != 0)
            return -1;
    if (check_handles(root, "createdCmHandles", err) != 0 ||
        check_handles(root, "updatedCmHandles", err) != 0)
        return -1;
    if (ncmp_json_array_field(root, "removedCmHandles", &arr, err) != 0 ||
        check_ids(arr, "removedCmHandles", err) != 0)
        return -1;
    if (ncmp_json_object_field(root, "upgradedCmHandles", &up, err) != 0)
        return -1;
    if (!up)
        return 0;
    if (ncmp_json_array_field(up, "cmHandles", &arr, err) != 0)
        return ncmp_err_prefix(err, "upgradedCmHandles");
    if (!arr)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "upgradedCmHandles.cmHandles is required");
    if (check_ids(arr, "upgradedCmHandles.cmHandles", err) != 0)
        return -1;
    return check_string(up, "moduleSetTag", "upgradedCmHandles", err);
}

int rest_registration_check(const char *body, size_t len, ncmp_err *err)
{
    json_object *root = NULL;
    int rc;

    if (len == 0)
        return ncmp_err_set(err, NCMP_ERR_REJECT, "Required request body is missing");
    if (ncmp_json_parse(body, len, &root, err) != 0)
        return -1;
    rc = check_root(root, err);
    json_object_put(root);
    return rc;
}

/* --- answering from an outcome ------------------------------------------- */

static int list_empty(json_object *outcome, const char *key)
{
    json_object *arr;
    return !json_object_object_get_ex(outcome, key, &arr) ||
           !json_object_is_type(arr, json_type_array) || json_object_array_length(arr) == 0;
}

static void answer_outcome(ncmp_http_request *req, const char *value, size_t len)
{
    json_object *o = NULL, *message;
    ncmp_err err;

    if (ncmp_json_parse(value, len, &o, &err) != 0 || !json_object_is_type(o, json_type_object)) {
        log_error("rest", "undecodable registration outcome: %s", err.msg);
        ncmp_http_respond_error(req, 500, "Undecodable registration outcome", NULL);
    } else if (json_object_object_get_ex(o, "message", &message)) {
        /* refused whole, e.g. an invalid DMI plugin URL */
        ncmp_http_respond_error(req, 400, json_object_get_string(message), NULL);
    } else if (list_empty(o, "failedCreatedCmHandles") && list_empty(o, "failedUpdatedCmHandles") &&
               list_empty(o, "failedRemovedCmHandles") && list_empty(o, "failedUpgradeCmHandles")) {
        ncmp_http_respond(req, 200, NULL, "", 0);
    } else {
        ncmp_http_respond(req, 500, "application/json", value, len);
    }
    json_object_put(o);
}

/* --- the outcome consumer ------------------------------------------------ */

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    waiter *w = m->_private;

    if (!w)
        return;
    if (m->err) {
        snprintf(w->delivery_error, sizeof(w->delivery_error), "%s", rd_kafka_err2str(m->err));
        w->delivered = -1;
        return;
    }
    w->partition = m->partition;
    w->offset = m->offset;
    w->delivered = 1;
}

static void outcome_dispatch(rest_registration *rr, const rd_kafka_message_t *m)
{
    char id[64];

    if (!ncmp_kafka_header(m, "ce_correlationid", id, sizeof(id))) {
        if (!m->key || m->key_len >= sizeof(id))
            return;
        memcpy(id, m->key, m->key_len);
        id[m->key_len] = '\0';
    }
    pthread_mutex_lock(&rr->lock);
    for (waiter *w = rr->waiters; w; w = w->next) {
        if (w->req && !w->outcome && strcmp(w->ce_id, id) == 0) {
            w->outcome = ncmp_xmalloc(m->len + 1);
            if (m->len)
                memcpy(w->outcome, m->payload, m->len);
            w->outcome[m->len] = '\0';
            w->outcome_len = m->len;
            w->outcome_at = ncmp_now_ms();
            break;
        }
    }
    pthread_mutex_unlock(&rr->lock);
}

/* Has the registration role committed the request? The outcome is
 * published just before the transaction that applies the request
 * commits, with the offset after it (consumer_offsets); a client that
 * reads right after our answer must see its handles. */
static int request_committed(rest_registration *rr, const waiter *w)
{
    char partition[16], offset[32];
    const char *params[4] = {rr->group, rr->cfg->registration_topic, partition, offset};
    PGresult *res = NULL;
    ncmp_err err;
    int done;

    snprintf(partition, sizeof(partition), "%d", (int)w->partition);
    snprintf(offset, sizeof(offset), "%lld", (long long)w->offset);
    if (ncmp_db_query(rr->db,
                      "SELECT 1 FROM consumer_offsets WHERE group_id = $1 AND topic = $2"
                      " AND partition = $3::int AND next_offset > $4::bigint",
                      4, params, &res, &err) != 0) {
        log_warn("rest", "cannot check that request %s is committed: %s", w->ce_id, err.msg);
        return 1; /* answer with the outcome anyway */
    }
    done = PQntuples(res) > 0;
    PQclear(res);
    return done;
}

/* Answer what can be answered: an outcome whose request is committed, a
 * record that could not be published, a request out of time (with `all`:
 * every request, 503). Frees the waiters answered and delivered. Returns
 * 1 when an outcome waits for its commit (poll again soon). */
static int waiters_sweep(rest_registration *rr, int all)
{
    double now = ncmp_now_ms();
    int soon = 0;
    char msg[160];

    pthread_mutex_lock(&rr->lock);
    for (waiter **pp = &rr->waiters; *pp;) {
        waiter *w = *pp;
        int late = all || now >= w->deadline;
        if (w->req && w->delivered == -1) {
            ncmp_http_respond_error(w->req, 503, "Registration could not be published",
                                    w->delivery_error);
            w->req = NULL;
        } else if (w->req && w->outcome && w->delivered == 1) {
            if (late || now - w->outcome_at >= COMMIT_WAIT_MS || request_committed(rr, w)) {
                answer_outcome(w->req, w->outcome, w->outcome_len);
                w->req = NULL;
            } else {
                soon = 1;
            }
        } else if (w->req && late) {
            snprintf(msg, sizeof(msg), "no outcome for request %s within %d ms", w->ce_id,
                     rr->cfg->rest_registration_timeout_ms);
            ncmp_http_respond_error(w->req, all ? 503 : 504,
                                    all ? "Service stopping" : "Registration timed out", msg);
            w->req = NULL;
        }
        if (!w->req && w->delivered != 0) {
            *pp = w->next;
            free(w->outcome);
            free(w);
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&rr->lock);
    return soon;
}

static void *outcome_thread(void *arg)
{
    rest_registration *rr = arg;
    int soon = 0;

    while (!atomic_load(&rr->stop)) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rr->consumer, soon ? 2 : 50);
        if (m && !m->err)
            outcome_dispatch(rr, m);
        else if (m && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
            log_warn("rest", "outcome consumer: %s", rd_kafka_message_errstr(m));
        if (m)
            rd_kafka_message_destroy(m);
        rd_kafka_poll(rr->producer, 0);
        soon = waiters_sweep(rr, 0);
    }
    return NULL;
}

/* Every partition of the response topic, from its end now. */
static int consumer_new(rest_registration *rr, ncmp_err *err)
{
    const char *topic = rr->cfg->registration_response_topic;
    char group[300];
    ncmp_kafka_opts kopts;

    snprintf(group, sizeof(group), "%s-rest", rr->cfg->kafka_group_id);
    ncmp_kafka_opts_from_config(&kopts, rr->cfg);
    if (ncmp_kafka_tail_reader_new(&rr->consumer, &kopts, "ncmpd-rest-outcomes", group, topic,
                                   30000, err) != 0)
        return ncmp_err_prefix(err, "rest: outcome topic %s", topic);
    log_info("rest", "reading registration outcomes from %s", topic);
    return 0;
}

/* prompt: an HTTP client waits for each request's outcome */
static int producer_new(rest_registration *rr, ncmp_err *err)
{
    const ncmp_kafka_hooks hooks = {.dr_msg_cb = on_delivery};
    ncmp_kafka_opts kopts;

    ncmp_kafka_opts_from_config(&kopts, rr->cfg);
    if (ncmp_kafka_producer_new(&rr->producer, &kopts, NCMP_PRODUCER_PROMPT, "ncmpd-rest", &hooks,
                                err) != 0)
        return ncmp_err_prefix(err, "rest");
    return 0;
}

int rest_registration_start(rest_registration **out, const ncmp_config *cfg, ncmp_err *err)
{
    rest_registration *rr = ncmp_xcalloc(1, sizeof(*rr));

    rr->cfg = cfg;
    ncmp_kafka_group_name(rr->group, sizeof(rr->group), cfg->kafka_group_id, "registration");
    pthread_mutex_init(&rr->lock, NULL);
    if (ncmp_db_open(&rr->db, cfg->db_url, cfg->db_password, cfg->db_connect_timeout_s, err) != 0 ||
        producer_new(rr, err) != 0 || consumer_new(rr, err) != 0) {
        rest_registration_destroy(rr);
        return -1;
    }
    if (pthread_create(&rr->thread, NULL, outcome_thread, rr) != 0) {
        rest_registration_destroy(rr);
        return ncmp_err_set(err, NCMP_ERR_FATAL, "rest: cannot start the outcome thread");
    }
    rr->running = 1;
    *out = rr;
    return 0;
}

void rest_registration_stop(rest_registration *rr)
{
    if (!rr)
        return;
    pthread_mutex_lock(&rr->lock);
    rr->closed = 1;
    pthread_mutex_unlock(&rr->lock);
    atomic_store(&rr->stop, 1);
    if (rr->running)
        pthread_join(rr->thread, NULL);
    rr->running = 0;
    waiters_sweep(rr, 1);
}

void rest_registration_destroy(rest_registration *rr)
{
    if (!rr)
        return;
    rest_registration_stop(rr);
    if (rr->producer) {
        /* delivery reports write into the waiters: all in before they go */
        if (rd_kafka_flush(rr->producer, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR)
            log_warn("rest", "%d registration records not delivered at shutdown",
                     rd_kafka_outq_len(rr->producer));
        rd_kafka_destroy(rr->producer);
    }
    for (waiter *w = rr->waiters, *next; w; w = next) {
        next = w->next;
        free(w->outcome);
        free(w);
    }
    ncmp_kafka_reader_close(rr->consumer);
    ncmp_db_close(rr->db);
    pthread_mutex_destroy(&rr->lock);
    free(rr);
}

/* --- the handler --------------------------------------------------------- */

/* The Kafka key: the DMI plugin URL, as the Kafka path documents. */
static void registration_key(const char *body, size_t len, char **key)
{
    static const char *const fields[] = {"dmiPlugin", "dmiDataPlugin", "dmiModelPlugin"};
    json_object *root = NULL;
    ncmp_err err;

    *key = NULL;
    if (ncmp_json_parse(body, len, &root, &err) != 0)
        return;
    for (size_t i = 0; i < 3 && !*key; i++) {
        const char *s = NULL;
        if (ncmp_json_string_field(root, fields[i], &s, &err) == 0 && s && *s)
            *key = ncmp_xstrdup(s);
    }
    json_object_put(root);
}

static int publish(rest_registration *rr, waiter *w, const char *body, size_t len, ncmp_err *err)
{
    const ncmp_cloudevent ce = {.id = w->ce_id,
                                .source = "ncmpd-rest",
                                .type = REQUEST_TYPE,
                                .content_type = "application/json"};
    char *key = NULL;
    rd_kafka_headers_t *h = ncmp_cloudevent_headers(&ce);
    rd_kafka_resp_err_t e;

    registration_key(body, len, &key);
    e = rd_kafka_producev(rr->producer, RD_KAFKA_V_TOPIC(rr->cfg->registration_topic),
                          RD_KAFKA_V_KEY(key, key ? strlen(key) : 0),
                          RD_KAFKA_V_VALUE((void *)body, len),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(h),
                          RD_KAFKA_V_OPAQUE(w), RD_KAFKA_V_END);
    free(key);
    if (e) {
        rd_kafka_headers_destroy(h); /* not queued: still ours */
        return ncmp_err_set(err, NCMP_ERR_RETRY, "produce to %s: %s", rr->cfg->registration_topic,
                            rd_kafka_err2str(e));
    }
    return 0;
}

void rest_registration_handle(ncmp_http_request *req, void *arg)
{
    rest_registration *rr = arg;
    size_t len;
    const char *body = ncmp_http_body(req, &len);
    waiter *w;
    ncmp_err err;
    char limit[96];

    if (len > (size_t)rr->cfg->kafka_max_message_bytes) {
        snprintf(limit, sizeof(limit), "the limit is %d bytes (kafka.max-message-bytes)",
                 rr->cfg->kafka_max_message_bytes);
        ncmp_http_respond_error(req, 413, "Registration too large", limit);
        return;
    }
    if (rest_registration_check(body, len, &err) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid DmiPluginRegistration", err.msg);
        return;
    }
    ncmp_http_suspend(req);
    pthread_mutex_lock(&rr->lock);
    if (rr->closed) {
        pthread_mutex_unlock(&rr->lock);
        ncmp_http_respond_error(req, 503, "Service stopping", NULL);
        return;
    }
    w = ncmp_xcalloc(1, sizeof(*w));
    ncmp_uuid4(w->ce_id);
    w->deadline = ncmp_now_ms() + rr->cfg->rest_registration_timeout_ms;
    /* published under the lock: the outcome thread looks for the waiter
     * only once it is linked, however fast the outcome comes back */
    if (publish(rr, w, body, len, &err) != 0) {
        pthread_mutex_unlock(&rr->lock);
        free(w);
        ncmp_http_respond_error(req, 503, "Registration could not be published", err.msg);
        return;
    }
    w->req = req;
    w->next = rr->waiters;
    rr->waiters = w;
    pthread_mutex_unlock(&rr->lock);
}
