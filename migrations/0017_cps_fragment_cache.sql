-- The operational cache (dataspace NFP-Operational, one small anchor per
-- handle, written by the data-sync role) gets a partition of the fragment
-- table of its own, without the node-name index of 0009.
--
-- That index serves CPS-path queries whose last step names a node
-- (`//degree`) in anchors of many rows: without it such a query reads the
-- whole anchor. A cache anchor holds one device (87 rows of the Open ROADM
-- device), read through its primary key's range in well under a
-- millisecond. But the index is a third of the cost of writing the rows:
-- its entries go to as many places in the index as there are node names,
-- each insert a descent from the root, where the primary key's entries
-- (anchor, path) arrive in order and are appended. Measured with COPY of
-- the same 1,500,000 rows of 17,000 cache anchors (PostgreSQL 15, 2
-- cores, best of 3): 7.4 s into the table with both indexes, 5.2 s with
-- the primary key alone, 4.9 s into this partitioned table's cache
-- partition. The data sync of 50,000 handles writes 4,350,000 such rows.
--
-- Anchors of NFP-Operational get ids from 2^48 up (the trigger below adds
-- 2^48 to the identity's value), and the fragment table is partitioned by
-- anchor id: fragment_store below 2^48 (the table as it was, with both
-- indexes), fragment_cache from 2^48 (the primary key only). Every
-- statement still names `fragment`; a statement for one anchor reaches
-- one partition, and a query over the anchors of a dataspace probes the
-- other partition's key with the same anchor ids and finds nothing there.
-- A CPS-path query over all the anchors of NFP-Operational at once (not
-- something NCMP does: its operational reads are per handle) reads each
-- anchor's rows instead of the index. Cache anchors made before this
-- migration keep their ids and stay in fragment_store.
ALTER TABLE fragment RENAME TO fragment_store;
ALTER INDEX fragment_pkey RENAME TO fragment_store_pkey;
ALTER INDEX fragment_name RENAME TO fragment_store_name;

CREATE TABLE fragment (
    anchor_id  bigint   NOT NULL,
    path       text     COLLATE "C" NOT NULL,
    depth      smallint NOT NULL,
    name       text     COLLATE "C" NOT NULL,
    attributes jsonb    NOT NULL DEFAULT '{}',
    PRIMARY KEY (anchor_id, path)
) PARTITION BY RANGE (anchor_id);

-- the existing rows are checked once to be below the bound; the primary
-- key of fragment_store becomes a partition of fragment's
ALTER TABLE fragment ATTACH PARTITION fragment_store FOR VALUES FROM (MINVALUE) TO (281474976710656);
CREATE TABLE fragment_cache PARTITION OF fragment FOR VALUES FROM (281474976710656) TO (MAXVALUE);

CREATE FUNCTION anchor_cache_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM dataspace d WHERE d.id = NEW.dataspace_id AND d.name = 'NFP-Operational') THEN
        NEW.id := NEW.id + 281474976710656;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER anchor_cache_id BEFORE INSERT ON anchor
    FOR EACH ROW EXECUTE FUNCTION anchor_cache_id();
