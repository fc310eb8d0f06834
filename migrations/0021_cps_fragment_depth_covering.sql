-- The index on the rows near the top of a tree (0018) carries their
-- leaves, so that a read bounded in depth is answered from the index
-- alone.
--
-- With (anchor_id, depth, path) a read of /openroadm-devices with direct
-- descendants found its 1,001 rows in one range scan of 28 index pages,
-- then fetched each from the heap: a device's row sits beside its 85
-- descendants, so the 1,001 rows lay on 1,000 pages, 2.2 of the 2.6 ms
-- the statement took. With the rows' attributes in the index too the
-- same read is an index-only scan of about 40 pages: 0.6 ms (PostgreSQL
-- 15, 2 cores, the table vacuumed). An index-only scan needs the heap
-- pages marked all-visible, which VACUUM does: the API's writes run it
-- on fragment_store when they run ANALYZE (workers/cps/cps_analyze.c).
--
-- A B-tree entry holds at most 2,704 bytes, and a write whose entry is
-- larger fails. So only rows whose path and leaves are small carry their
-- leaves: at most 512 bytes of path and 400 characters of leaves as JSON
-- text, whose binary form (jsonb) is at most about 4.3 times as long
-- (a leaf-list of one-digit numbers: 128 bytes for the 30 characters of
-- ten; an Open ROADM device's leaves are 137 characters, 145 bytes), so
-- about 2,300 bytes at most with the rest of the entry. The other rows
-- near the top keep an entry without leaves in an index of their own,
-- read beside the first (workers/cps/cps_read.c, SQL_READ_SHALLOW). The
-- reads repeat both predicates word for word so that the planner may use
-- the two indexes.
DROP INDEX fragment_store_depth;
CREATE INDEX fragment_store_depth ON fragment_store (anchor_id, depth, path) INCLUDE (attributes)
    WHERE depth <= 3 AND octet_length(path) <= 512 AND octet_length(attributes::text) <= 400;
CREATE INDEX fragment_store_depth_large ON fragment_store (anchor_id, depth, path)
    WHERE depth <= 3 AND (octet_length(path) > 512 OR octet_length(attributes::text) > 400);
