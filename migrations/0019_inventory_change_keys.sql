-- The search index's feed (migration 0014) as one row per statement, with
-- the keys the statement touched in an array, instead of one row per key.
--
-- A registration request of 2,000 handles wrote 2,000 rows into
-- inventory_change and 4,000 entries into its two indexes, inside the
-- registration's transaction; module sync's and deregistration's
-- statements the same per handle. COPY of 2,000 reference handles into
-- cm_handle holding 50,000 (medians of 12, the same minutes): 39 ms with
-- a row per key, 35 ms with a row per statement, 33 ms with no trigger.
--
-- A statement that changed nothing adds no row (HAVING). Rows written
-- before this migration, still within the retention, have `key` and no
-- `keys`: readers take COALESCE(keys, ARRAY[key]). A truncate still adds
-- one row of kind 'r' with the table's name as its key.
ALTER TABLE inventory_change ADD COLUMN keys text[];
ALTER TABLE inventory_change ALTER COLUMN key DROP NOT NULL;

CREATE OR REPLACE FUNCTION inventory_change_handles() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO inventory_change (kind, keys)
            SELECT 'h', array_agg(id) FROM changed_old HAVING count(*) > 0;
    ELSE
        INSERT INTO inventory_change (kind, keys)
            SELECT 'h', array_agg(id) FROM changed_new HAVING count(*) > 0;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION inventory_change_module_sets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO inventory_change (kind, keys)
            SELECT 'm', array_agg(DISTINCT module_set_id::text) FROM changed_old
            HAVING count(*) > 0;
    ELSE
        INSERT INTO inventory_change (kind, keys)
            SELECT 'm', array_agg(DISTINCT module_set_id::text) FROM changed_new
            HAVING count(*) > 0;
    END IF;
    RETURN NULL;
END
$$;
