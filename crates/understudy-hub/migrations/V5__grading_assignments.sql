-- Graders' assignments (which run each grader grades, and whether they
-- said they were done) reach the hub, so every grading machine counts
-- every grader's work in its agreement report; and the change feeds the
-- apps pull with.
--
-- A change feed: every row a feed serves gets a number from one sequence,
-- `change_seq`, handed out in commit order. An insert or update marks the
-- row as changed (`change_seq` NULL, by a BEFORE trigger); a deferred
-- trigger, run as the writing transaction commits, takes one lock (a
-- transaction-level advisory lock of this database) and numbers the
-- marked rows; the lock is held until the commit is done. So a
-- transaction's numbers are all above those of every transaction that
-- committed before it, and a pull reading `change_seq > cursor` can never
-- pass a row that commits later (the sequence-gap race of a serial column
-- numbered at write time). See src/changes.rs.
CREATE SEQUENCE change_seq;

-- BEFORE INSERT OR UPDATE: the row changed; number it at commit. The
-- numbering's own update (which sets change_seq) is left alone.
CREATE FUNCTION mark_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.change_seq IS NOT DISTINCT FROM OLD.change_seq THEN
    NEW.change_seq := NULL;
  END IF;
  RETURN NEW;
END
$$;

-- The deferred AFTER trigger's body, for a table whose rows are found by
-- the columns named in the trigger's arguments.
CREATE FUNCTION number_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  keys text := '';
  i int;
BEGIN
  PERFORM pg_advisory_xact_lock(8600500);
  FOR i IN 0 .. TG_NARGS - 1 LOOP
    keys := keys || format(' AND %I = ($1).%I', TG_ARGV[i], TG_ARGV[i]);
  END LOOP;
  EXECUTE format('UPDATE %I SET change_seq = nextval(''change_seq'') WHERE change_seq IS NULL%s', TG_TABLE_NAME, keys)
    USING NEW;
  RETURN NULL;
END
$$;

-- Makes `tbl` a feed table: its change_seq column (its rows numbered now,
-- in table order), an index to read it by, and the two triggers, the
-- deferred one finding a row by the columns `keys`.
CREATE FUNCTION join_change_feed(tbl text, VARIADIC keys text[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %I ADD COLUMN change_seq BIGINT', tbl);
  EXECUTE format('UPDATE %I SET change_seq = nextval(''change_seq'')', tbl);
  EXECUTE format('CREATE INDEX %I ON %I (change_seq)', tbl || '_changes', tbl);
  EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION mark_change()', tbl || '_mark', tbl);
  EXECUTE format(
    'CREATE CONSTRAINT TRIGGER %I AFTER INSERT OR UPDATE ON %I DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.change_seq IS NULL) EXECUTE FUNCTION number_change(%s)',
    tbl || '_number', tbl, (SELECT string_agg(quote_literal(k), ', ') FROM unnest(keys) AS k));
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
  PRIMARY KEY (episode_id, grader)
);
-- change_seq is NULL while the writing transaction has not committed.
SELECT join_change_feed('grading_assignments', 'episode_id', 'grader');
