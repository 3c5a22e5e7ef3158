-- Experts, episodes and their steps, and reviews of submitted episodes.
CREATE TABLE experts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  domain TEXT NOT NULL DEFAULT '',
  credentials TEXT NOT NULL DEFAULT '',
  credentials_attested INTEGER NOT NULL DEFAULT 0 CHECK (credentials_attested IN (0, 1)),
  verified INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1)),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE episodes (
  id TEXT PRIMARY KEY,
  world_id TEXT NOT NULL,
  world_version TEXT NOT NULL,
  world_hash TEXT NOT NULL,
  task_id TEXT NOT NULL,
  seed INTEGER NOT NULL DEFAULT 0,
  actor_kind TEXT NOT NULL CHECK (actor_kind IN ('expert', 'agent')),
  actor_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('in_progress', 'paused', 'submitted', 'abandoned', 'approved', 'rejected')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  submitted_at TEXT,
  active_ms INTEGER NOT NULL DEFAULT 0,
  final_message TEXT
);
CREATE INDEX episodes_by_task ON episodes (world_id, task_id, status);
CREATE INDEX episodes_by_actor ON episodes (actor_kind, actor_id);

CREATE TABLE steps (
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  idx INTEGER NOT NULL,
  action TEXT NOT NULL,
  observation TEXT NOT NULL,
  is_error INTEGER NOT NULL CHECK (is_error IN (0, 1)),
  terminated INTEGER NOT NULL DEFAULT 0,
  truncated INTEGER NOT NULL DEFAULT 0,
  wall_at TEXT NOT NULL,
  active_ms INTEGER NOT NULL,
  rationale TEXT,
  flag TEXT,
  retracted INTEGER NOT NULL DEFAULT 0 CHECK (retracted IN (0, 1)),
  retracted_at TEXT,
  PRIMARY KEY (episode_id, idx)
);

CREATE TABLE reviews (
  id INTEGER PRIMARY KEY,
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  reviewer TEXT NOT NULL,
  decision TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
  comment TEXT NOT NULL DEFAULT '',
  at TEXT NOT NULL
);
CREATE INDEX reviews_by_episode ON reviews (episode_id);
