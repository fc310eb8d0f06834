-- NCMP's data sync: the operational cache of each handle with data sync
-- on, kept in the CPS store (dataspace NFP-Operational, one anchor per
-- handle named by its id), filled by the data-sync role
-- (workers/datasync/).
--
-- When the handle was last synchronized (NCMP's
-- dataSyncState.operational.lastSyncTime). Not indexed, so that setting
-- it stays a HOT update (0006).
ALTER TABLE cm_handle ADD COLUMN operational_last_sync_time timestamptz;

-- The handles waiting for a sync: a row from the moment a handle is READY
-- with data sync on and UNSYNCHRONIZED (the trigger below adds it) until
-- the worker stored its data or finds it no longer eligible. Kept apart
-- from cm_handle so that the queue's index and its churn never touch the
-- inventory's rows: an index on cm_handle's sync columns would turn
-- module sync's READY updates into non-HOT ones.
--
-- `next_at` is when the handle may be taken next: now when it arrives, a
-- lease while a worker has it (another process skips it until then), the
-- back-off after a failed DMI read. `attempts` counts the failures since
-- the last success. No foreign key to cm_handle: a row of a deleted
-- handle is dropped by the worker that finds it, and deregistration pays
-- no check per row.
CREATE TABLE data_sync_work (
    handle_id text        PRIMARY KEY,
    next_at   timestamptz NOT NULL DEFAULT now(),
    attempts  integer     NOT NULL DEFAULT 0
);
CREATE INDEX data_sync_work_next ON data_sync_work (next_at);

-- A handle becomes eligible (READY, enabled, UNSYNCHRONIZED): queue it
-- and wake the workers (NOTIFY is delivered at commit, deduplicated
-- within a transaction).
CREATE FUNCTION data_sync_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO data_sync_work (handle_id) VALUES (NEW.id)
        ON CONFLICT (handle_id) DO UPDATE SET next_at = now(), attempts = 0;
    PERFORM pg_notify('ncmp_data_sync', '');
    RETURN NULL;
END $$;

CREATE TRIGGER cm_handle_data_sync_enqueue AFTER UPDATE OF state, data_sync_enabled,
    operational_sync_state ON cm_handle FOR EACH ROW
    WHEN (NEW.state = 'READY' AND NEW.data_sync_enabled
          AND NEW.operational_sync_state = 'UNSYNCHRONIZED'
          AND (OLD.state IS DISTINCT FROM 'READY' OR NOT OLD.data_sync_enabled
               OR OLD.operational_sync_state IS DISTINCT FROM 'UNSYNCHRONIZED'))
    EXECUTE FUNCTION data_sync_enqueue();

-- The cache lives while data sync is on: when it is turned off (by the
-- REST call, or by module sync making the handle READY again) or the
-- handle is deleted, its anchor goes, and its fragments with it (0008's
-- anchor trigger), in the same transaction. Only rows that had it on pay
-- for the function call.
CREATE FUNCTION data_sync_drop_cache() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM anchor a USING dataspace d
        WHERE d.name = 'NFP-Operational' AND a.dataspace_id = d.id AND a.name = OLD.id;
    DELETE FROM data_sync_work WHERE handle_id = OLD.id;
    RETURN NULL;
END $$;

CREATE TRIGGER cm_handle_data_sync_disable AFTER UPDATE OF data_sync_enabled ON cm_handle
    FOR EACH ROW WHEN (OLD.data_sync_enabled AND NOT NEW.data_sync_enabled)
    EXECUTE FUNCTION data_sync_drop_cache();

CREATE TRIGGER cm_handle_data_sync_delete AFTER DELETE ON cm_handle
    FOR EACH ROW WHEN (OLD.data_sync_enabled)
    EXECUTE FUNCTION data_sync_drop_cache();
