-- The DMI plugin a handle's trust depends on is NCMP's DATA service: the
-- data service name when one was registered, else the DMI plugin name.
-- The trust watchdog and the heartbeat role look handles up by it, so it
-- gets an index of its own (the expression must be written the same way
-- in the queries for the planner to use it).
CREATE INDEX cm_handle_trust_dmi ON cm_handle
    ((CASE WHEN dmi_data_service_name <> '' THEN dmi_data_service_name
           ELSE dmi_service_name END));
