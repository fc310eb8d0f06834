#include "outbox.h"

#include <string.h>

#include "ncmp_cloudevent.h"

void ncmp_outbox_init(ncmp_outbox *ob, ncmp_db *db, const ncmp_config *cfg)
{
    memset(ob, 0, sizeof(*ob));
    ob->db = db;
    ob->format = ncmp_lcm_format_parse(cfg->lcm_event_schema_version);
}

void ncmp_outbox_free(ncmp_outbox *ob)
{
    ncmp_buf_free(&ob->rows);
    ncmp_buf_free(&ob->event);
}

void ncmp_outbox_reset(ncmp_outbox *ob)
{
    ncmp_buf_reset(&ob->rows);
    ob->count = 0;
}

void ncmp_outbox_add(ncmp_outbox *ob, const ncmp_lcm_event *ev)
{
    char id[37], now[32];
    const char *type = ncmp_lcm_event_type(ev);

    ncmp_uuid4(id);
    ncmp_event_time_now(now);
    ncmp_buf_reset(&ob->event);
    ncmp_lcm_event_json(&ob->event, ev, ob->format, id, now);
    ncmp_buf_append_copy_field(&ob->rows, ev->cm_handle_id, strlen(ev->cm_handle_id));
    ncmp_buf_appendf(&ob->rows, "\t%s\t%s\t%s\t", id, now, type);
    ncmp_buf_append_copy_field(&ob->rows, ob->event.data, ob->event.len);
    ncmp_buf_appendf(&ob->rows, "\t%s\n", ncmp_lcm_format_schema(ob->format));
    ob->count++;
}

void ncmp_outbox_add_state(ncmp_outbox *ob, const char *id, const char *alternate_id,
                           const char *module_set_tag, const char *data_producer_identifier,
                           ncmp_handle_state old_state, ncmp_handle_state new_state)
{
    ncmp_lcm_event ev = {0};

    ev.cm_handle_id = id;
    ev.alternate_id = alternate_id;
    ev.module_set_tag = module_set_tag;
    ev.data_producer_identifier = data_producer_identifier;
    ev.old_values.state = old_state;
    ev.old_values.data_sync_enabled = -1;
    ev.new_values.state = new_state;
    ev.new_values.data_sync_enabled = -1;
    ncmp_outbox_add(ob, &ev);
}

int ncmp_outbox_flush(ncmp_outbox *ob, ncmp_err *err)
{
    if (!ob->count)
        return 0;
    if (ncmp_db_copy(ob->db,
                     "COPY lcm_outbox (handle_id, event_id, event_time, event_type, payload, "
                     "event_schema) FROM STDIN",
                     ob->rows.data, ob->rows.len, err) != 0 ||
        ncmp_db_exec(ob->db, "NOTIFY " NCMP_OUTBOX_CHANNEL, err) != 0)
        return -1;
    ncmp_outbox_reset(ob);
    return 0;
}
