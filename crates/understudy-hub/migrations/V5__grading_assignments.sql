-- Graders' assignments (which run each grader grades, and whether they
-- said they were done) reach the hub, so every grading machine counts
-- every grader's work in its agreement report; and the change feeds the
-- apps pull with.
--
-- A change feed: every row a feed serves carries the id of the
-- transaction that last wrote it (`change_xid`) and a number from one
-- sequence (`change_seq`), both set by a trigger on every insert and
-- update. A pull reads rows after its cursor in (change_xid, change_seq)
-- order, and only rows whose transaction is older than the oldest one
-- still running (pg_snapshot_xmin of the reading snapshot): those are all
-- committed or rolled back, and no later write can sort before them, so a
-- cursor never passes a row that commits later (the sequence-gap race of a
-- plain serial column). See src/changes.rs.
CREATE SEQUENCE change_seq;

CREATE FUNCTION note_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.change_xid := pg_current_xact_id()::text::bigint;
  NEW.change_seq := nextval('change_seq');
  RETURN NEW;
END
$$;

-- One row per run and grader, as in the app's store. The grader is named
-- by their expert id on the machines that grade (what their judgments and
-- overrides say as judge / grader) and their name, so a machine that lacks
-- the profile can show who it is. `done_by` is the person who said the
-- grader was done: only they take it back.
CREATE TABLE grading_assignments (
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  grader TEXT NOT NULL CHECK (grader <> ''),
  grader_name TEXT NOT NULL CHECK (grader_name <> ''),
  assigned_at TEXT NOT NULL,
  done_at TEXT,
  done_by BIGINT REFERENCES people (id),
  assigned_by BIGINT NOT NULL REFERENCES people (id),
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  change_xid BIGINT NOT NULL DEFAULT 0,
  change_seq BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (episode_id, grader)
);
CREATE INDEX grading_assignments_changes ON grading_assignments (change_xid, change_seq);
CREATE TRIGGER grading_assignments_change BEFORE INSERT OR UPDATE ON grading_assignments
  FOR EACH ROW EXECUTE FUNCTION note_change();
