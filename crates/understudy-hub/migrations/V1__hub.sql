-- The hub's schema: people and how they sign in, the worlds it assigns (by
-- content hash), assignments, the episodes and steps experts push, reviews,
-- rubric versions, judgments and scores.
--
-- Every row says who last changed it and when (`changed_by`, `changed_at`);
-- a row an expert pushed also keeps its `owner`. Recorded times (an
-- episode's `created_at`, a step's `wall_at`, ...) are kept as the RFC 3339
-- text the recording machine wrote, so an export from the hub is
-- byte-identical to one from the expert's own store.

CREATE TABLE people (
  id BIGSERIAL PRIMARY KEY,
  login TEXT NOT NULL UNIQUE CHECK (login <> ''),
  name TEXT NOT NULL CHECK (name <> ''),
  role TEXT NOT NULL CHECK (role IN ('expert', 'annotator', 'reviewer', 'engineer', 'admin')),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Argon2id PHC strings; a person without a row signs in with tokens only.
CREATE TABLE passwords (
  person_id BIGINT PRIMARY KEY REFERENCES people (id),
  hash TEXT NOT NULL,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Bearer tokens, stored as the SHA-256 of the token (tokens are 256 random
-- bits, so a fast hash is enough; the token itself is shown once).
CREATE TABLE tokens (
  id BIGSERIAL PRIMARY KEY,
  person_id BIGINT NOT NULL REFERENCES people (id),
  token_sha256 TEXT NOT NULL UNIQUE,
  label TEXT NOT NULL DEFAULT '',
  revoked_at TIMESTAMPTZ,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE worlds (
  hash TEXT PRIMARY KEY,
  world_id TEXT NOT NULL,
  version TEXT NOT NULL,
  name TEXT NOT NULL,
  task_ids TEXT[] NOT NULL,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX worlds_by_id ON worlds (world_id);

-- Every file of an uploaded world folder, so the hub can hand out exactly
-- what an episode was recorded against.
CREATE TABLE world_files (
  world_hash TEXT NOT NULL REFERENCES worlds (hash),
  path TEXT NOT NULL,
  content BYTEA NOT NULL,
  PRIMARY KEY (world_hash, path)
);

-- One row per (task, expert); `overlap` is how many experts the task was
-- given to at once (for agreement).
CREATE TABLE assignments (
  id BIGSERIAL PRIMARY KEY,
  world_hash TEXT NOT NULL REFERENCES worlds (hash),
  task_id TEXT NOT NULL,
  expert BIGINT NOT NULL REFERENCES people (id),
  overlap INTEGER NOT NULL CHECK (overlap >= 1),
  due_at TIMESTAMPTZ,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (world_hash, task_id, expert)
);

-- The expert profiles of the local stores episodes came from, as recorded
-- there (their ids are the episodes' actor ids).
CREATE TABLE expert_profiles (
  id TEXT PRIMARY KEY,
  owner BIGINT NOT NULL REFERENCES people (id),
  name TEXT NOT NULL,
  domain TEXT NOT NULL,
  credentials TEXT NOT NULL,
  credentials_attested BOOLEAN NOT NULL,
  verified BOOLEAN NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE episodes (
  id TEXT PRIMARY KEY,
  owner BIGINT NOT NULL REFERENCES people (id),
  world_id TEXT NOT NULL,
  world_version TEXT NOT NULL,
  world_hash TEXT NOT NULL REFERENCES worlds (hash),
  task_id TEXT NOT NULL,
  seed BIGINT NOT NULL,
  actor_kind TEXT NOT NULL CHECK (actor_kind IN ('expert', 'agent')),
  actor_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('in_progress', 'paused', 'submitted', 'abandoned', 'approved', 'rejected')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  submitted_at TEXT,
  active_ms BIGINT NOT NULL,
  final_message TEXT,
  -- The pushing client's digest of the episode as last pushed: a sync
  -- skips episodes whose digest has not changed.
  digest TEXT NOT NULL,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX episodes_by_owner ON episodes (owner);
CREATE INDEX episodes_by_task ON episodes (world_id, task_id, status);

CREATE TABLE steps (
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  idx INTEGER NOT NULL CHECK (idx >= 0),
  -- SHA-256 of what a step cannot change once recorded (action,
  -- observation, end flags, times): a push of the same id with other
  -- content is refused.
  content_sha256 TEXT NOT NULL,
  action TEXT NOT NULL,
  observation TEXT NOT NULL,
  is_error BOOLEAN NOT NULL,
  terminated BOOLEAN NOT NULL,
  truncated BOOLEAN NOT NULL,
  wall_at TEXT NOT NULL,
  active_ms BIGINT NOT NULL,
  rationale TEXT,
  flag TEXT,
  retracted BOOLEAN NOT NULL,
  retracted_at TEXT,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (episode_id, idx)
);

CREATE TABLE reviews (
  id BIGSERIAL PRIMARY KEY,
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  reviewer TEXT NOT NULL,
  decision TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
  comment TEXT NOT NULL,
  at TEXT NOT NULL,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX reviews_by_episode ON reviews (episode_id, id);

CREATE TABLE rubric_versions (
  id BIGSERIAL PRIMARY KEY,
  world_hash TEXT NOT NULL REFERENCES worlds (hash),
  task_id TEXT NOT NULL,
  version TEXT NOT NULL,
  hash TEXT NOT NULL,
  body TEXT NOT NULL,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (world_hash, task_id, hash)
);

CREATE TABLE judgments (
  id BIGSERIAL PRIMARY KEY,
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  criterion_id TEXT NOT NULL,
  criterion_hash TEXT,
  met BOOLEAN NOT NULL,
  reason TEXT NOT NULL,
  judge TEXT NOT NULL,
  at TEXT NOT NULL,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX judgments_by_episode ON judgments (episode_id, criterion_id, id);

CREATE TABLE scores (
  id BIGSERIAL PRIMARY KEY,
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  task_id TEXT NOT NULL,
  world_id TEXT NOT NULL,
  world_version TEXT NOT NULL,
  world_hash TEXT NOT NULL,
  task_hash TEXT NOT NULL,
  rubric_version TEXT NOT NULL,
  rubric_hash TEXT NOT NULL,
  value DOUBLE PRECISION CHECK (value IS NULL OR (value >= 0 AND value <= 1)),
  range_low DOUBLE PRECISION NOT NULL,
  range_high DOUBLE PRECISION NOT NULL,
  pending BOOLEAN NOT NULL,
  detail TEXT NOT NULL,
  scored_at TEXT NOT NULL,
  changed_by BIGINT REFERENCES people (id),
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX scores_by_episode ON scores (episode_id, id);
