-- The change log's part in PostgreSQL, as the database holds it now (projects/change_log.py is the Python part;
-- why the design: docs/decisions.md, "One change log"). SQLite has none of this: its stamps come from the one-row
-- table projects_changestampcounter, written by projects/change_log.py.
--
-- Every change of a project takes a place in one order, its updated_date: a microsecond stamp. A writing
-- transaction reserves its stamps first (projects_change_stamps_reserve), which also gives the transaction its id
-- (xid) in the same short critical section, so stamps and xids rise together. A trigger records the writing xid on
-- every project row whose updated_date moves (change_xid); readers that follow the order serve only rows whose xid
-- is below their snapshot's horizon.
--
-- How to change it: edit this file, then add a migration that applies it again (docs/decisions.md, "The change
-- log's SQL in one file"). Every statement here can run again on a database that has it: CREATE OR REPLACE, IF NOT
-- EXISTS. A function whose arguments change is a new function beside the old one: drop the old one in the migration.
-- tests/projects/test_change_log_sql.py holds the database to this file.
--
-- Two advisory lock keys, any constants not used elsewhere:
--   7302114003  the stamps lock: one writer at a time takes its xid and its stamps (a few microseconds).
--   7302114004  the writers' gate: every writer holds it shared from its reservation to its transaction's end;
--               a writer overtaken again and again takes it exclusively, and so goes alone.


-- The stamps: microseconds since 1970, handed out in increasing order. Migration 0007 started it after the newest
-- updated_date then stored, so no new stamp falls behind one a follower has already seen.
CREATE SEQUENCE IF NOT EXISTS projects_change_stamp_seq AS bigint;


-- n consecutive stamps for the calling transaction, later than every stamp handed out before and not before the
-- server's clock: the first one is returned. `alone` (projects/change_log.py, stamped_transaction): wait until every
-- writer that has reserved has ended, and hold back those that reserve after, to the end of this transaction.
CREATE OR REPLACE FUNCTION projects_change_stamps_reserve(n integer, alone boolean DEFAULT false) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    first bigint;
BEGIN
    -- Transaction-level, and taken before the stamps lock: a writer may wait here, never while holding that.
    IF alone THEN PERFORM pg_advisory_xact_lock(7302114004); ELSE PERFORM pg_advisory_xact_lock_shared(7302114004); END IF;
    -- Session-level, released three statements on: held while the xid and the stamps are taken, not to commit.
    PERFORM pg_advisory_lock(7302114003);
    PERFORM pg_current_xact_id();
    first := greatest(
        nextval('projects_change_stamp_seq'),
        (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
    );
    PERFORM setval('projects_change_stamp_seq', first + n - 1);
    PERFORM pg_advisory_unlock(7302114003);
    RETURN first;
END
$$;


-- The writing transaction's xid on the row (change_xid), read by followers_visible in projects/change_log.py.
CREATE OR REPLACE FUNCTION projects_project_change_xid() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.change_xid := pg_current_xact_id()::text::bigint;
    RETURN NEW;
END
$$;

-- Every new project row,
CREATE OR REPLACE TRIGGER projects_project_change_xid_insert BEFORE INSERT ON projects_project
FOR EACH ROW EXECUTE FUNCTION projects_project_change_xid();

-- and every update that moves its updated_date (an update that leaves updated_date alone leaves the row's place
-- in the order, and its xid, alone too).
CREATE OR REPLACE TRIGGER projects_project_change_xid_update BEFORE UPDATE OF updated_date ON projects_project
FOR EACH ROW WHEN (NEW.updated_date IS DISTINCT FROM OLD.updated_date)
EXECUTE FUNCTION projects_project_change_xid();
