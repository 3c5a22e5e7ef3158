-- Every version of a rubric saved from the app: the file's bytes, their
-- hash (what scores record as rubric_hash), where it was written and who
-- saved it. Nothing is deleted: an older version stays comparable.
CREATE TABLE rubric_versions (
  id INTEGER PRIMARY KEY,
  world_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  version TEXT NOT NULL,
  hash TEXT NOT NULL,
  path TEXT NOT NULL,
  content TEXT NOT NULL,
  saved_by TEXT,
  saved_at TEXT NOT NULL
);
CREATE INDEX rubric_versions_by_task ON rubric_versions (world_id, task_id, id);
