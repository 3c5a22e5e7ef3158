-- Episodes and expert profiles this store took from a team hub: a
-- reviewer's or grader's app pulls others' finished work to review and
-- grade it. They are others' work, so the app never sends them back to the
-- hub as its own (a later sign-in as an expert pushes only what was
-- recorded here), and a pulled profile is not someone who uses this
-- computer, so the start screen does not offer it.
CREATE TABLE pulled_episodes (
  episode_id TEXT PRIMARY KEY REFERENCES episodes (id),
  pulled_at TEXT NOT NULL
);
CREATE TABLE pulled_experts (
  expert_id TEXT PRIMARY KEY REFERENCES experts (id),
  pulled_at TEXT NOT NULL
);
