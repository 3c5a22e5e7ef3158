-- Where this store's pulls from a team hub got to: one cursor per hub
-- account and feed (the hub's change feeds of finished runs and of
-- grading), so a sync reads only what changed since the last one. Kept
-- here, beside what was pulled, and written in the same transaction as
-- the rows a pull adds: the store and its cursor cannot disagree (a store
-- copied elsewhere, or a settings file reset, starts its pull afresh
-- rather than skipping what it lacks).
CREATE TABLE hub_cursors (
  account TEXT NOT NULL CHECK (account <> ''),
  feed TEXT NOT NULL CHECK (feed <> ''),
  cursor TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (account, feed)
);
