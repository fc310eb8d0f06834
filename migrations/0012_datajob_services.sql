-- The data-job DMI services of a handle: NCMP's dmi-datajobs-read-service
-- and dmi-datajobs-write-service leaves (dmi-registry@2026-01-28), stored
-- as registered from the registration's dmiDatajobsReadPlugin and
-- dmiDatajobsWritePlugin ('' when not sent). Which DMI serves a data job
-- is resolved where the job is split: the service when not blank, else
-- dmi_service_name.
--
-- Not indexed: data jobs find their handles by id and alternate id, and
-- an index would be one more entry per handle on every non-HOT update
-- (0006). A constant default adds the columns without rewriting the table.
ALTER TABLE cm_handle
    ADD COLUMN dmi_datajobs_read_service  text NOT NULL DEFAULT '',
    ADD COLUMN dmi_datajobs_write_service text NOT NULL DEFAULT '';
