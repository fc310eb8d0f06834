#include "lcm_relay.h"

#include "ncmp_lcm.h"
#include "ncmp_relay.h"
#include "outbox.h"

/* Any constant will do, the same in every process. */
#define RELAY_LOCK_KEY 7340217002LL

/* eventSchema from the row: the format it was written in, whatever the
 * setting is now */
static rd_kafka_headers_t *lcm_headers(void *arg, const char *key, const char *type,
                                       const char *schema, const char *id, const char *time)
{
    const ncmp_config *cfg = arg;
    return ncmp_lcm_headers(key, type, schema, id, time, cfg->lcm_java_serialized_headers);
}

int lcm_relay_task(const ncmp_services *svc, ncmp_singleton_task *task, ncmp_err *err)
{
    const ncmp_relay_spec spec = {.component = "lcm-relay",
                                  .what = "lifecycle events",
                                  .leader_msg = "this process relays lifecycle events",
                                  .table = "lcm_outbox",
                                  .key_column = "handle_id",
                                  .schema_column = "event_schema",
                                  .channel = NCMP_OUTBOX_CHANNEL,
                                  .topic = svc->cfg->lcm_topic,
                                  .lock_key = RELAY_LOCK_KEY,
                                  .batch_size = svc->cfg->lcm_relay_batch_size,
                                  .headers = lcm_headers,
                                  .headers_arg = (void *)svc->cfg};
    return ncmp_relay_task(svc->cfg, &spec, task, err);
}

void lcm_relay_free(void *arg)
{
    ncmp_relay_free(arg);
}
