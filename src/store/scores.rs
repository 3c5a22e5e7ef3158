//! Rubric scores and judgments in the store.
//!
//! Scores are history, never overwritten: re-scoring under a new rubric or
//! world version adds a row, and each row says which versions it used, so a
//! score that moved can be explained. The latest row is the current score.

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::{now, Store};
use crate::error::{Error, Result};
use crate::rubric::{Judgment, Score};

/// A score as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredScore {
    pub id: i64,
    pub episode_id: String,
    pub scored_at: String,
    pub score: Score,
}

impl Store {
    /// Stores scores of stored episodes in one transaction: all land or
    /// none does. Every score must name an episode that is in the store.
    pub fn save_scores(&self, scores: &[Score]) -> Result<Vec<i64>> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let at = now();
        let mut ids = Vec::with_capacity(scores.len());
        for s in scores {
            let Some(episode_id) = &s.episode_id else {
                return Err(Error::Conflict(format!(
                    "a score of task {} has no episode id; only stored episodes' scores can be saved",
                    s.task_id
                )));
            };
            let exists: bool = tx.query_row(
                "SELECT count(*) > 0 FROM episodes WHERE id = ?1",
                [episode_id],
                |r| r.get(0),
            )?;
            if !exists {
                return Err(Error::NotFound(format!("episode {episode_id}")));
            }
            let detail = serde_json::to_string(s)
                .map_err(|e| Error::Other(format!("encoding a score: {e}")))?;
            tx.execute(
                "INSERT INTO scores (episode_id, task_id, world_id, world_version, world_hash, task_hash, rubric_version, rubric_hash, value, range_low, range_high, pending, detail, scored_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                params![
                    episode_id,
                    s.task_id,
                    s.world_id,
                    s.world_version,
                    s.world_hash,
                    s.task_hash,
                    s.rubric_version,
                    s.rubric_hash,
                    s.value,
                    s.range[0],
                    s.range[1],
                    s.pending.len() as i64,
                    detail,
                    at
                ],
            )?;
            ids.push(tx.last_insert_rowid());
        }
        tx.commit()?;
        Ok(ids)
    }

    /// The current (latest) score of an episode.
    pub fn latest_score(&self, episode_id: &str) -> Result<Option<StoredScore>> {
        let conn = self.lock();
        let row = conn
            .query_row(
                "SELECT id, episode_id, scored_at, detail FROM scores WHERE episode_id = ?1 ORDER BY id DESC LIMIT 1",
                [episode_id],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?)),
            )
            .optional()?;
        row.map(decode_score).transpose()
    }

    /// Every score an episode has had, oldest first.
    pub fn scores(&self, episode_id: &str) -> Result<Vec<StoredScore>> {
        let conn = self.lock();
        let mut stmt = conn.prepare("SELECT id, episode_id, scored_at, detail FROM scores WHERE episode_id = ?1 ORDER BY id")?;
        let rows = stmt
            .query_map([episode_id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter().map(decode_score).collect()
    }

    /// The reward of an episode: its latest score's value (`None` when it
    /// was never scored or is pending).
    pub fn latest_score_value(&self, episode_id: &str) -> Result<Option<f64>> {
        Ok(self
            .lock()
            .query_row(
                "SELECT value FROM scores WHERE episode_id = ?1 ORDER BY id DESC LIMIT 1",
                [episode_id],
                |r| r.get::<_, Option<f64>>(0),
            )
            .optional()?
            .flatten())
    }

    /// Records a grade for a judged criterion. The latest grade of a
    /// criterion is the one that counts.
    pub fn save_judgment(&self, episode_id: &str, j: &Judgment) -> Result<i64> {
        if j.reason.trim().is_empty() {
            return Err(Error::Conflict("a judgment needs a reason".into()));
        }
        if j.judge.trim().is_empty() {
            return Err(Error::Conflict("a judgment needs to say who judged".into()));
        }
        let conn = self.lock();
        let exists: bool = conn.query_row(
            "SELECT count(*) > 0 FROM episodes WHERE id = ?1",
            [episode_id],
            |r| r.get(0),
        )?;
        if !exists {
            return Err(Error::NotFound(format!("episode {episode_id}")));
        }
        let at = if j.at.is_empty() { now() } else { j.at.clone() };
        conn.execute(
            "INSERT INTO judgments (episode_id, criterion_id, criterion_hash, met, reason, judge, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![episode_id, j.criterion_id, j.criterion_hash, j.met, j.reason.trim(), j.judge.trim(), at],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// An episode's judgments, oldest first (later ones override earlier).
    pub fn judgments(&self, episode_id: &str) -> Result<Vec<Judgment>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT criterion_id, criterion_hash, met, reason, judge, at FROM judgments WHERE episode_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([episode_id], |r| {
            Ok(Judgment {
                criterion_id: r.get(0)?,
                criterion_hash: r.get(1)?,
                met: r.get(2)?,
                reason: r.get(3)?,
                judge: r.get(4)?,
                at: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

fn decode_score(
    (id, episode_id, scored_at, detail): (i64, String, String, String),
) -> Result<StoredScore> {
    let score: Score = serde_json::from_str(&detail).map_err(|e| {
        Error::Other(format!(
            "score {id} of episode {episode_id} cannot be read: {e}"
        ))
    })?;
    Ok(StoredScore {
        id,
        episode_id,
        scored_at,
        score,
    })
}
