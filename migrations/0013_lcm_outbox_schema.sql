-- The eventSchema of each lifecycle event waiting in the outbox: the
-- format (lcm.event-schema-version, v1 or v2) is chosen when the event is
-- written, and the relay's eventSchema header must say the same as the
-- value it publishes even when a restart changed the setting in between.
-- A constant default adds the column without rewriting the table; rows
-- written before it are v1.
ALTER TABLE lcm_outbox
    ADD COLUMN event_schema text NOT NULL DEFAULT 'org.onap.ncmp:cmhandle-lcm-event';
