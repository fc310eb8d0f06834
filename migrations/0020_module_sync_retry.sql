-- Module sync's retry schedule in a narrow table of its own, out of
-- cm_handle.
--
-- A handle whose module sync failed waited for its next attempt in
-- cm_handle.next_sync_at, indexed so that the sweep finds the handles due
-- (migration 0003). Every attempt then rewrote the row twice: the sweep's
-- claim (next_sync_at moved past the grace period) and the failure (the
-- next back-off), and as both change an indexed column neither could be
-- a heap-only update (migration 0006): each wrote a new entry into every
-- index of cm_handle, the GIN index of public properties among them.
-- Measured on 50,000 handles behind an unreachable DMI plugin, retries
-- every 1-2 s for 60 s: 1,186,400 updates of cm_handle, none heap-only,
-- the table and its indexes grown from 85 MB to 294 MB.
--
-- Now the due time lives in module_sync_retry (a handle's id and when it
-- is due), indexed there; the claim updates only this table, and a
-- failure updates cm_handle's state, reason, details and attempts, none
-- indexed, so that update can stay on its page. The row is written by
-- every failure (an upsert), deleted when the handle becomes READY, and
-- a row left by a handle deregistered while it waited is deleted by the
-- sweep's periodic cleanup; the sweep reads due rows only together with
-- a handle whose module sync failed, so a row left over is never taken
-- for a retry.
--
-- No foreign key: its check and cascade would cost every registration and
-- deregistration statement a probe of this table per handle.
CREATE TABLE module_sync_retry (
    id     text        PRIMARY KEY,
    due_at timestamptz NOT NULL
);
CREATE INDEX module_sync_retry_due ON module_sync_retry (due_at);

INSERT INTO module_sync_retry (id, due_at)
    SELECT id, next_sync_at FROM cm_handle WHERE next_sync_at IS NOT NULL;

DROP INDEX cm_handle_next_sync;
ALTER TABLE cm_handle DROP COLUMN next_sync_at;
