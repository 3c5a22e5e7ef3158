-- Rubric scores (history: the latest row per episode is current) and the
-- grades people or judge commands gave judged criteria.
CREATE TABLE scores (
  id INTEGER PRIMARY KEY,
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  task_id TEXT NOT NULL,
  world_id TEXT NOT NULL,
  world_version TEXT NOT NULL,
  world_hash TEXT NOT NULL,
  task_hash TEXT NOT NULL,
  rubric_version TEXT NOT NULL,
  rubric_hash TEXT NOT NULL,
  value REAL CHECK (value IS NULL OR (value >= 0 AND value <= 1)),
  range_low REAL NOT NULL,
  range_high REAL NOT NULL,
  pending INTEGER NOT NULL DEFAULT 0,
  detail TEXT NOT NULL,
  scored_at TEXT NOT NULL
);
CREATE INDEX scores_by_episode ON scores (episode_id, id);

CREATE TABLE judgments (
  id INTEGER PRIMARY KEY,
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  criterion_id TEXT NOT NULL,
  criterion_hash TEXT,
  met INTEGER NOT NULL CHECK (met IN (0, 1)),
  reason TEXT NOT NULL,
  judge TEXT NOT NULL,
  at TEXT NOT NULL
);
CREATE INDEX judgments_by_episode ON judgments (episode_id, criterion_id, id);
