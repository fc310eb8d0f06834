#include "outbox.h"

#include <string.h>

#include "ncmp_cloudevent.h"

void ncmp_outbox_init(ncmp_outbox *ob, ncmp_db *db)
{
    memset(ob, 0, sizeof(*ob));
    ob->db = db;
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
    ncmp_lcm_event_json(&ob->event, ev, id, now);
    ncmp_buf_append_copy_field(&ob->rows, ev->cm_handle_id, strlen(ev->cm_handle_id));
    ncmp_buf_appendf(&ob->rows, "\t%s\t%s\t%s\t", id, now, type);
    ncmp_buf_append_copy_field(&ob->rows, ob->event.data, ob->event.len);
    ncmp_buf_append_char(&ob->rows, '\n');
    ob->count++;
}

int ncmp_outbox_flush(ncmp_outbox *ob, ncmp_err *err)
{
    if (!ob->count)
        return 0;
    if (ncmp_db_copy(ob->db,
                     "COPY lcm_outbox (handle_id, event_id, event_time, event_type, payload) "
                     "FROM STDIN",
                     ob->rows.data, ob->rows.len, err) != 0 ||
        ncmp_db_exec(ob->db, "NOTIFY " NCMP_OUTBOX_CHANNEL, err) != 0)
        return -1;
    ncmp_outbox_reset(ob);
    return 0;
}
