-- What changed in the inventory, and by which transaction: the feed the
-- rest role's in-memory search index follows (workers/rest/search_index.h).
--
-- Every statement that inserts, updates or deletes handles, or changes the
-- modules of a module set, adds one row per key it touched, stamped with
-- its transaction id. A reader that remembers the snapshot of its last
-- read asks for the rows whose transaction was not visible in that
-- snapshot: exactly what was committed since, whatever the order in which
-- the transactions began and committed. A truncate adds one row of kind
-- 'r' (read everything again).
--
-- Statement-level triggers with transition tables: one INSERT ... SELECT
-- per statement, however many rows it changed.
CREATE TABLE inventory_change (
    xid  xid8        NOT NULL DEFAULT pg_current_xact_id(),
    -- 'h' a handle (key: its id), 'm' a module set (key: its id), 'r' all
    kind "char"      NOT NULL,
    key  text        NOT NULL,
    at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX inventory_change_xid ON inventory_change (xid);

CREATE FUNCTION inventory_change_handles() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO inventory_change (kind, key) SELECT 'h', id FROM changed_old;
    ELSE
        INSERT INTO inventory_change (kind, key) SELECT 'h', id FROM changed_new;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION inventory_change_module_sets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO inventory_change (kind, key)
            SELECT DISTINCT 'm', module_set_id::text FROM changed_old;
    ELSE
        INSERT INTO inventory_change (kind, key)
            SELECT DISTINCT 'm', module_set_id::text FROM changed_new;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION inventory_change_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO inventory_change (kind, key) VALUES ('r', TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER cm_handle_changed_insert AFTER INSERT ON cm_handle
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION inventory_change_handles();
CREATE TRIGGER cm_handle_changed_update AFTER UPDATE ON cm_handle
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION inventory_change_handles();
CREATE TRIGGER cm_handle_changed_delete AFTER DELETE ON cm_handle
    REFERENCING OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION inventory_change_handles();
CREATE TRIGGER cm_handle_truncated AFTER TRUNCATE ON cm_handle
    FOR EACH STATEMENT EXECUTE FUNCTION inventory_change_truncated();

CREATE TRIGGER module_set_member_changed_insert AFTER INSERT ON module_set_member
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION inventory_change_module_sets();
CREATE TRIGGER module_set_member_changed_update AFTER UPDATE ON module_set_member
    REFERENCING NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION inventory_change_module_sets();
CREATE TRIGGER module_set_member_changed_delete AFTER DELETE ON module_set_member
    REFERENCING OLD TABLE AS changed_old
    FOR EACH STATEMENT EXECUTE FUNCTION inventory_change_module_sets();
CREATE TRIGGER module_set_member_truncated AFTER TRUNCATE ON module_set_member
    FOR EACH STATEMENT EXECUTE FUNCTION inventory_change_truncated();
