//! Drafts: what an expert has typed and not yet sent.
//!
//! A half-written message or a half-filled form is work; the app saves it
//! as the expert types (one row per episode and slot), so a crash or a kill
//! loses none of it. A draft is not part of the trajectory: it is never
//! exported, replayed or scored, and sending it clears it.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{now, Store};
use crate::error::{Error, Result};

/// The longest draft kept, in bytes: far beyond any message or form, small
/// enough that a runaway caller cannot fill the disk through this door.
pub const MAX_DRAFT_BYTES: usize = 256 * 1024;

/// One saved draft.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Draft {
    /// What the text belongs to, named by the caller (e.g. `message`,
    /// `tool:issue_refund`, `why:3`).
    pub slot: String,
    /// The text as last saved (a form is saved as its JSON).
    pub text: String,
    /// When it was saved (wall clock).
    pub updated_at: String,
}

impl Store {
    /// Saves `text` as the episode's draft in `slot`, replacing the last
    /// one; empty text removes the draft. Committed before it returns.
    pub fn save_draft(&self, episode_id: &str, slot: &str, text: &str) -> Result<()> {
        if slot.trim().is_empty() || slot.len() > 200 {
            return Err(Error::InvalidInput {
                path: "draft".into(),
                problems: vec![format!(
                    "slot: expected a name of 1 to 200 bytes, got {} bytes",
                    slot.len()
                )],
            });
        }
        if text.len() > MAX_DRAFT_BYTES {
            return Err(Error::InvalidInput {
                path: "draft".into(),
                problems: vec![format!(
                    "text: a draft may hold at most {MAX_DRAFT_BYTES} bytes, got {}",
                    text.len()
                )],
            });
        }
        let conn = self.lock();
        if text.is_empty() {
            conn.execute(
                "DELETE FROM drafts WHERE episode_id = ?1 AND slot = ?2",
                params![episode_id, slot],
            )?;
            return Ok(());
        }
        let exists: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM episodes WHERE id = ?1)",
            params![episode_id],
            |r| r.get(0),
        )?;
        if !exists {
            return Err(Error::NotFound(format!("episode {episode_id}")));
        }
        conn.execute(
            "INSERT INTO drafts (episode_id, slot, text, updated_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (episode_id, slot) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
            params![episode_id, slot, text, now()],
        )?;
        Ok(())
    }

    /// The episode's drafts, by slot.
    pub fn drafts(&self, episode_id: &str) -> Result<Vec<Draft>> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT slot, text, updated_at FROM drafts WHERE episode_id = ?1 ORDER BY slot",
        )?;
        let rows = stmt.query_map(params![episode_id], |r| {
            Ok(Draft {
                slot: r.get(0)?,
                text: r.get(1)?,
                updated_at: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
