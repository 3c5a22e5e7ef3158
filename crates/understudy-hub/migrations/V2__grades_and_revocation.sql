-- Rubric versions, judgments and scores get routes, and tokens can be
-- revoked.
--
-- V1's rubric_versions (keyed by world hash, with no routes, so never
-- written) is replaced by the shape the app's store keeps: a version is
-- the rubric file's bytes under (world id, task id), named by the hash a
-- score's rubric_hash refers to.
DROP TABLE rubric_versions;
CREATE TABLE rubric_versions (
  id BIGSERIAL PRIMARY KEY,
  world_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  version TEXT NOT NULL,
  hash TEXT NOT NULL,
  path TEXT NOT NULL,
  content TEXT NOT NULL,
  saved_by TEXT,
  saved_at TEXT NOT NULL,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (world_id, task_id, hash)
);

-- A pushed judgment or score is identified by the SHA-256 of what it says
-- (every field, its time included): pushing it again adds nothing. The
-- tables had no routes, so they are empty and the columns need no default.
ALTER TABLE judgments ADD COLUMN content_sha256 TEXT NOT NULL;
ALTER TABLE judgments ADD CONSTRAINT judgments_once UNIQUE (episode_id, content_sha256);
ALTER TABLE scores ADD COLUMN content_sha256 TEXT NOT NULL;
ALTER TABLE scores ADD CONSTRAINT scores_once UNIQUE (episode_id, content_sha256);

-- When a token was issued; `revoked_at` (V1) and `changed_by` say when and
-- by whom it was revoked.
ALTER TABLE tokens ADD COLUMN created_at TIMESTAMPTZ NOT NULL DEFAULT now();

-- A score keeps how many criteria were waiting for a grade, as the store
-- does, not only whether some were.
ALTER TABLE scores ALTER COLUMN pending TYPE INTEGER USING pending::int;
ALTER TABLE scores ADD CONSTRAINT scores_pending_count CHECK (pending >= 0);
