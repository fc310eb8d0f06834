-- YANG modules of the inventory.
--
-- A module set holds the modules of one module-set tag (shared by every
-- handle registered with that tag: the DMI is asked once per tag) or of one
-- untagged handle. Sources are stored once, by checksum, however many sets
-- use them. A handle points at its set once module sync made it READY.
CREATE TABLE yang_resource (
    checksum    text PRIMARY KEY, -- SHA-256 of the source, lower-case hex
    module_name text NOT NULL,
    revision    text NOT NULL,    -- '' when the module declares none
    namespace   text NOT NULL DEFAULT '',
    source      text NOT NULL
);
CREATE INDEX yang_resource_module ON yang_resource (module_name, revision);

CREATE TABLE module_set (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tag        text, -- NULL for the set of an untagged handle
    handle_id  text, -- the untagged handle that owns the set; NULL for a tag
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((tag IS NULL) <> (handle_id IS NULL))
);
CREATE UNIQUE INDEX module_set_tag ON module_set (tag) WHERE tag IS NOT NULL;
CREATE UNIQUE INDEX module_set_handle ON module_set (handle_id) WHERE handle_id IS NOT NULL;

-- Name and revision repeated from yang_resource: searches by module name
-- and the module APIs read this table alone.
CREATE TABLE module_set_member (
    module_set_id bigint NOT NULL REFERENCES module_set ON DELETE CASCADE,
    checksum      text   NOT NULL REFERENCES yang_resource,
    module_name   text   NOT NULL,
    revision      text   NOT NULL,
    PRIMARY KEY (module_set_id, checksum)
);
CREATE INDEX module_set_member_name ON module_set_member (module_name, module_set_id);
CREATE INDEX module_set_member_checksum ON module_set_member (checksum);

-- No foreign key to module_set: the orphan cleanup, off the hot path,
-- removes sets no handle points at (and sources no set uses).
ALTER TABLE cm_handle
    ADD COLUMN module_set_id bigint,
    -- module sync: failed attempts so far, and when the next one is due
    ADD COLUMN sync_attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN next_sync_at timestamptz;
CREATE INDEX cm_handle_module_set ON cm_handle (module_set_id);
CREATE INDEX cm_handle_next_sync ON cm_handle (next_sync_at) WHERE next_sync_at IS NOT NULL;
