-- The fragment table, rebuilt before any data is written to it (0007
-- created it; no release wrote rows), so that a subtree read comes out
-- of the index in the order the answer is written.
--
-- `path` is the node's CPS xpath (no module prefixes, list keys written
-- [@k='v'] sorted by name, joined with " and ", a ' doubled) with each
-- step separator written as the control character U+0001 instead of '/':
--
--     /bookstore/categories[@code='1']/books[@title='A/B']
--  -> \x01bookstore\x01categories[@code='1']\x01books[@title='A/B']
--
-- A '/' inside a key value stays a '/'. U+0001 sorts below every
-- character a YANG name or a key predicate can hold, so in the "C" order
-- of the primary key a node comes first, its whole subtree right after
-- it, then its next sibling: a read with descendants is one index range
-- scan whose rows can be written out as nested JSON as they arrive, and
-- the entries of one list are contiguous. With '/' itself (0x2F), a
-- sibling named "b-x" (0x2D) would sort between "b" and "b/c". Key values
-- holding U+0001 are refused.
--
--   the subtree of P (P excluded):  path >= P || E'\x01' AND path < P || E'\x02'
--   the entries of list L:          path >= L || '['     AND path < L || '\'
--
-- `depth` is the number of steps (1 for a top-level node): it bounds a
-- read to N levels inside the range. `name` is the last step's node name
-- without its predicate (what a CPS path step like //name matches).
-- `attributes` holds only the node's own leaves and leaf-lists; children
-- are rows of their own. No parent link: parents are path prefixes.
--
-- No foreign key to the anchor either: its check would run once per
-- inserted row (a third of the cost of a large COPY). Writers lock their
-- anchor's row instead (SELECT .. FOR NO KEY UPDATE, once per write), which
-- also makes a concurrent delete of the anchor wait for them; the anchor's
-- fragments go with it through the statement trigger below, in one
-- set-based DELETE however the anchor is deleted (directly, or with its
-- dataspace).
DROP TABLE fragment;

CREATE TABLE fragment (
    anchor_id  bigint   NOT NULL,
    path       text     COLLATE "C" NOT NULL,
    depth      smallint NOT NULL,
    name       text     COLLATE "C" NOT NULL,
    attributes jsonb    NOT NULL DEFAULT '{}',
    PRIMARY KEY (anchor_id, path)
);

CREATE FUNCTION fragment_drop_anchors() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fragment f USING gone g WHERE f.anchor_id = g.id;
    RETURN NULL;
END $$;

CREATE TRIGGER anchor_drop_fragments AFTER DELETE ON anchor
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION fragment_drop_anchors();
