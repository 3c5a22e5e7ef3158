//! Episode events: what happened in an episode besides its steps.
//!
//! Steps say what the expert did to the world; events say how the work went:
//! pauses and resumes, undos and redos, edits of a step's why (with the text before
//! and after, so nothing said is overwritten), and which app and engine
//! opened the episode. They are appended, never changed.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{now, Store};
use crate::error::Result;

/// What kind of thing happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The episode was opened (started or resumed after a restart); the
    /// detail names the client and the engine versions.
    Opened,
    /// The active clock stopped.
    Paused,
    /// The active clock started again.
    Resumed,
    /// A step was undone; the detail names it (`step`) and how many steps
    /// the episode had (`steps`), so a redo after a restart knows no new
    /// step came since.
    Undone,
    /// An undone step was done again, as a new step; the detail names the
    /// new step (`step`), the undone one (`of`) and the step count.
    Redone,
    /// A step's why or flag changed; the detail holds before and after.
    Annotated,
}

impl EventKind {
    const ALL: [EventKind; 6] = [
        EventKind::Opened,
        EventKind::Paused,
        EventKind::Resumed,
        EventKind::Undone,
        EventKind::Redone,
        EventKind::Annotated,
    ];

    fn as_str(self) -> &'static str {
        match self {
            EventKind::Opened => "opened",
            EventKind::Paused => "paused",
            EventKind::Resumed => "resumed",
            EventKind::Undone => "undone",
            EventKind::Redone => "redone",
            EventKind::Annotated => "annotated",
        }
    }

    fn parse(text: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// One stored event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeEvent {
    /// What happened.
    pub kind: EventKind,
    /// Kind-specific facts, as JSON.
    pub detail: serde_json::Value,
    /// The episode's active time when it happened.
    pub active_ms: i64,
    /// When it happened (wall clock).
    pub at: String,
}

impl Store {
    /// Appends an event to the episode's log, durably.
    pub fn add_event(
        &self,
        episode_id: &str,
        kind: EventKind,
        detail: &serde_json::Value,
        active_ms: i64,
    ) -> Result<()> {
        self.lock().execute(
            "INSERT INTO episode_events (episode_id, kind, detail, active_ms, at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![episode_id, kind.as_str(), detail.to_string(), active_ms, now()],
        )?;
        Ok(())
    }

    /// The episode's events, oldest first.
    pub fn events(&self, episode_id: &str) -> Result<Vec<EpisodeEvent>> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT kind, detail, active_ms, at FROM episode_events WHERE episode_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![episode_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (kind, detail, active_ms, at) = row?;
            // A kind this version doesn't know (written by a newer one) is
            // skipped rather than failing the whole episode.
            let Some(kind) = EventKind::parse(&kind) else {
                continue;
            };
            out.push(EpisodeEvent {
                kind,
                detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::String(detail)),
                active_ms,
                at,
            });
        }
        Ok(out)
    }

    /// Saves the episode's active time without a step, so a crash between
    /// steps loses at most the time since the last call.
    pub fn save_active_time(&self, episode_id: &str, active_ms: i64) -> Result<()> {
        self.lock().execute(
            "UPDATE episodes SET active_ms = max(active_ms, ?2), updated_at = ?3 WHERE id = ?1",
            params![episode_id, active_ms, now()],
        )?;
        Ok(())
    }
}
