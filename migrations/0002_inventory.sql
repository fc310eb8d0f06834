-- The CM-handle inventory: one row per handle, its properties as JSON
-- objects on the row (GIN-indexed for property search), the DMI services,
-- the module-set tag and the composite state.
CREATE TABLE cm_handle (
    id                       text        PRIMARY KEY,
    dmi_service_name         text        NOT NULL DEFAULT '',
    dmi_data_service_name    text        NOT NULL DEFAULT '',
    dmi_model_service_name   text        NOT NULL DEFAULT '',
    module_set_tag           text        NOT NULL DEFAULT '',
    -- NULL when none: "" would collide under the unique index
    alternate_id             text,
    data_producer_identifier text        NOT NULL DEFAULT '',
    -- private ("additional", DMI) and public properties: {"name": "value"}
    additional_properties    jsonb       NOT NULL DEFAULT '{}',
    public_properties        jsonb       NOT NULL DEFAULT '{}',
    state                    text        NOT NULL
        CHECK (state IN ('ADVISED', 'READY', 'LOCKED', 'DELETING')),
    lock_reason              text,
    lock_details             text,
    -- module-set tag an upgrade moves to (with lock_reason MODULE_UPGRADE)
    upgrade_module_set_tag   text,
    registration_trust_level text        NOT NULL DEFAULT 'COMPLETE'
        CHECK (registration_trust_level IN ('COMPLETE', 'NONE')),
    data_sync_enabled        boolean     NOT NULL DEFAULT false,
    operational_sync_state   text,
    last_update_time         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX cm_handle_alternate_id ON cm_handle (alternate_id);
CREATE INDEX cm_handle_state ON cm_handle (state);
CREATE INDEX cm_handle_module_set_tag ON cm_handle (module_set_tag);
CREATE INDEX cm_handle_dmi_service ON cm_handle (dmi_service_name);
CREATE INDEX cm_handle_dmi_data_service ON cm_handle (dmi_data_service_name)
    WHERE dmi_data_service_name <> '';
CREATE INDEX cm_handle_dmi_model_service ON cm_handle (dmi_model_service_name)
    WHERE dmi_model_service_name <> '';
CREATE INDEX cm_handle_public_properties ON cm_handle USING gin (public_properties jsonb_path_ops);

-- Lifecycle events, written in the same transaction as the state change
-- they announce, published in seq order by one relay (see
-- workers/lcm_relay.c) and deleted once Kafka has them.
CREATE TABLE lcm_outbox (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    handle_id   text        NOT NULL,
    event_id    text        NOT NULL,
    event_time  text        NOT NULL,
    event_type  text        NOT NULL,
    payload     text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- How far the relay's records in each partition of the lifecycle topic
-- are known to be reflected in lcm_outbox (their rows deleted). After a
-- crash the relay reads each partition from here to its end and deletes
-- the outbox rows whose events it finds there, so nothing is published
-- twice.
CREATE TABLE lcm_relay_checkpoint (
    topic       text    NOT NULL,
    partition   integer NOT NULL,
    next_offset bigint  NOT NULL,
    PRIMARY KEY (topic, partition)
);
