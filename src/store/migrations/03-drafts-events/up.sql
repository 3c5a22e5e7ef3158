-- What an expert has typed but not yet sent (a message, a tool form, a
-- why), saved as they type so a crash loses none of it; and the episode's
-- events that are not steps (pause, resume, undo, rationale edits, which
-- app opened it), so the record says what happened, not only what was done.
CREATE TABLE drafts (
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  slot TEXT NOT NULL,
  text TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (episode_id, slot)
);
CREATE TABLE episode_events (
  id INTEGER PRIMARY KEY,
  episode_id TEXT NOT NULL REFERENCES episodes (id),
  kind TEXT NOT NULL,
  detail TEXT NOT NULL,
  active_ms INTEGER NOT NULL,
  at TEXT NOT NULL
);
CREATE INDEX episode_events_by_episode ON episode_events (episode_id, id);
