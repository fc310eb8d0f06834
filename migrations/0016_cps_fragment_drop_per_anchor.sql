-- Deleting an anchor deletes its fragments (0008's statement trigger).
-- 0008 joined the fragment table with the deleted anchors in one DELETE;
-- the transition table has no statistics, and once the fragment table
-- has them (ANALYZE after bulk writes, workers/cps/cps_analyze.c) the
-- planner chose a hash join over a sequential scan of the whole table: 80
-- ms to delete an anchor of 13,000 nodes from a table of a million, where
-- its key range takes 9. One DELETE per deleted anchor, on its key's
-- prefix, is planned for that anchor's own rows.
CREATE OR REPLACE FUNCTION fragment_drop_anchors() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT id FROM gone LOOP
        DELETE FROM fragment WHERE anchor_id = g.id;
    END LOOP;
    RETURN NULL;
END $$;
