-- Grading agent runs: which expert is asked to grade which run (several
-- graders per run give the overlap agreement is measured on), and a
-- grader's overrides of automatic checks. An override never replaces the
-- automatic result: the score stays in `scores`, the override sits beside
-- it with who made it, when, and why.
CREATE TABLE grading_assignments (
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  grader TEXT NOT NULL REFERENCES experts (id),
  assigned_at TEXT NOT NULL,
  done_at TEXT,
  PRIMARY KEY (episode_id, grader)
);
CREATE INDEX grading_assignments_by_grader ON grading_assignments (grader);

CREATE TABLE score_overrides (
  id INTEGER PRIMARY KEY,
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  criterion_id TEXT NOT NULL,
  criterion_hash TEXT,
  original_met INTEGER CHECK (original_met IS NULL OR original_met IN (0, 1)),
  met INTEGER NOT NULL CHECK (met IN (0, 1)),
  reason TEXT NOT NULL,
  grader TEXT NOT NULL,
  at TEXT NOT NULL
);
CREATE INDEX score_overrides_by_episode ON score_overrides (episode_id, criterion_id, id);
