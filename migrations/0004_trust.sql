-- Trust levels.
--
-- A handle's own trust starts at its registration trust level and follows
-- the device heartbeats afterwards; a DMI plugin's trust follows its health
-- check. The effective trust of a handle is the lower of its own and its
-- DMI plugin's, kept on the row so that a search by trust level is one
-- index scan and every ncmpd process answers the same.
CREATE TABLE dmi_plugin (
    name        text PRIMARY KEY,
    trust_level text NOT NULL DEFAULT 'COMPLETE' CHECK (trust_level IN ('COMPLETE', 'NONE')),
    checked_at  timestamptz
);

ALTER TABLE cm_handle
    ADD COLUMN trust_level text NOT NULL DEFAULT 'COMPLETE'
        CHECK (trust_level IN ('COMPLETE', 'NONE')),
    ADD COLUMN effective_trust_level text NOT NULL DEFAULT 'COMPLETE'
        CHECK (effective_trust_level IN ('COMPLETE', 'NONE'));
CREATE INDEX cm_handle_effective_trust ON cm_handle (effective_trust_level);
