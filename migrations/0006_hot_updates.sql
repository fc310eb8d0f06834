-- State changes as heap-only (HOT) updates.
--
-- Module sync moves every handle from ADVISED to READY, and the update
-- rewrites the row. When no indexed column changes and the page has room,
-- PostgreSQL keeps the new row version on the same page and touches no
-- index; otherwise every index of cm_handle (a dozen, a GIN among them)
-- gets a new entry per handle. So: no index on the state (searches by
-- state return most of the inventory and scan it anyway; the module-sync
-- sweep's scan every few seconds is cheap) nor on the module set (read
-- by hash joins), and pages kept more than half free: the handles of a
-- page are registered together and become READY together, so a page must
-- hold a new version of every row at once.
DROP INDEX cm_handle_state;
DROP INDEX cm_handle_module_set;
ALTER TABLE cm_handle SET (fillfactor = 45);
