-- Offsets of the records each consumer group has applied, written in the
-- same transaction as the records' effects. The database, not Kafka, says
-- what was applied: see lib/ncmp_stage.h.
CREATE TABLE consumer_offsets (
    group_id    text        NOT NULL,
    topic       text        NOT NULL,
    partition   integer     NOT NULL,
    next_offset bigint      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (group_id, topic, partition)
);

-- The ingest role: one row per JSON event of the ingest topic. It proves
-- the platform end to end (Kafka -> batch -> PostgreSQL) and is the
-- simplest example of a role.
CREATE TABLE ingest_event (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic       text        NOT NULL,
    partition   integer     NOT NULL,
    "offset"    bigint      NOT NULL,
    event_key   text,
    body        jsonb       NOT NULL,
    stored_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ingest_event_source ON ingest_event (topic, partition, "offset");
