-- Graders' overrides of automatic checks reach the hub, as their
-- judgments of judged criteria do, and a judgment on a scale keeps the
-- level chosen.
--
-- An override never replaces the automatic score (that stays in
-- `scores`): it sits beside it with what the check had found, the
-- grader's verdict, who, when and why, as in the app's store. Like a
-- judgment it is identified by the SHA-256 of what it says, so a resend
-- adds nothing.
CREATE TABLE overrides (
  id BIGSERIAL PRIMARY KEY,
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  criterion_id TEXT NOT NULL CHECK (criterion_id <> ''),
  criterion_hash TEXT,
  original_met BOOLEAN,
  met BOOLEAN NOT NULL,
  reason TEXT NOT NULL CHECK (reason <> ''),
  grader TEXT NOT NULL CHECK (grader <> ''),
  at TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  CONSTRAINT overrides_once UNIQUE (episode_id, content_sha256)
);
CREATE INDEX overrides_by_episode ON overrides (episode_id, criterion_id, id);

-- The label of the scale level a judgment chose; NULL: met or not met.
ALTER TABLE judgments ADD COLUMN level TEXT CHECK (level IS NULL OR level <> '');
