//! Rubric scores and judgments in the store.
//!
//! Scores are history, never overwritten: re-scoring under a new rubric or
//! world version adds a row, and each row says which versions it used, so a
//! score that moved can be explained. The latest row is the current score.
//!
//! The store keeps plain records of its own and knows nothing of rubrics:
//! the rubric layer turns its scores and judgments into these records and
//! back (`rubric/records.rs`).

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::{now, Store};
use crate::error::{Error, Result};

/// A score as the store keeps it: what it scored, the versions it was
/// computed against, its value, and the whole result as JSON text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreRecord {
    /// The stored episode scored; a score without one cannot be saved.
    pub episode_id: Option<String>,
    /// The task scored.
    pub task_id: String,
    /// The world the episode ran in.
    pub world_id: String,
    /// That world's declared version.
    pub world_version: String,
    /// That world's content hash.
    pub world_hash: String,
    /// The task's content hash, so a changed task is not compared with old scores.
    pub task_hash: String,
    /// The rubric's declared version.
    pub rubric_version: String,
    /// The rubric's content hash; scores keep the version they used.
    pub rubric_hash: String,
    /// `None` while something is pending.
    pub value: Option<f64>,
    /// The lowest and highest value still possible.
    pub range: [f64; 2],
    /// How many criteria were waiting for a grade.
    pub pending: usize,
    /// The full result as JSON; the rubric layer reads it back.
    pub detail: String,
}

/// A score as stored: its row id, when it was saved, and the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredScore {
    /// Row id.
    pub id: i64,
    /// When the score was saved (RFC 3339, wall time).
    pub scored_at: String,
    /// What was scored and the result.
    pub record: ScoreRecord,
}

/// A grade for one judged criterion of one episode, as the store keeps it.
/// Read strictly (a team hub takes it as JSON): a misspelt `level` must be
/// an error, not a grade whose level is silently lost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgmentRecord {
    /// The judged criterion's id within its rubric.
    pub criterion_id: String,
    /// The graded criterion's hash; `None` applies to any version.
    pub criterion_hash: Option<String>,
    /// Whether the criterion was met.
    pub met: bool,
    /// The grader's reason, shown to reviewers.
    pub reason: String,
    /// Who graded: an expert id, or `command:<program>`.
    pub judge: String,
    /// When; empty means now, when saved.
    pub at: String,
    /// The level of the criterion's scale it was graded at, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
}

const SCORE_COLUMNS: &str = "id, episode_id, task_id, world_id, world_version, world_hash, task_hash, rubric_version, rubric_hash, value, range_low, range_high, pending, detail, scored_at";

impl Store {
    /// Stores scores of stored episodes in one transaction: all land or
    /// none does. Every score must name an episode that is in the store.
    pub fn save_scores(&self, scores: &[ScoreRecord]) -> Result<Vec<i64>> {
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
                    s.pending as i64,
                    s.detail,
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
        Ok(conn
            .query_row(
                &format!("SELECT {SCORE_COLUMNS} FROM scores WHERE episode_id = ?1 ORDER BY id DESC LIMIT 1"),
                [episode_id],
                read_score,
            )
            .optional()?)
    }

    /// Every score an episode has had, oldest first.
    pub fn scores(&self, episode_id: &str) -> Result<Vec<StoredScore>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {SCORE_COLUMNS} FROM scores WHERE episode_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([episode_id], read_score)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
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
    pub fn save_judgment(&self, episode_id: &str, j: &JudgmentRecord) -> Result<i64> {
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
            "INSERT INTO judgments (episode_id, criterion_id, criterion_hash, met, reason, judge, at, level) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![episode_id, j.criterion_id, j.criterion_hash, j.met, j.reason.trim(), j.judge.trim(), at, j.level],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// An episode's judgments, oldest first (later ones override earlier).
    pub fn judgments(&self, episode_id: &str) -> Result<Vec<JudgmentRecord>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT criterion_id, criterion_hash, met, reason, judge, at, level FROM judgments WHERE episode_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([episode_id], |r| {
            Ok(JudgmentRecord {
                criterion_id: r.get(0)?,
                criterion_hash: r.get(1)?,
                met: r.get(2)?,
                reason: r.get(3)?,
                judge: r.get(4)?,
                at: r.get(5)?,
                level: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// A `scores` row selected as [`SCORE_COLUMNS`].
fn read_score(r: &Row<'_>) -> rusqlite::Result<StoredScore> {
    Ok(StoredScore {
        id: r.get(0)?,
        scored_at: r.get(14)?,
        record: ScoreRecord {
            episode_id: Some(r.get(1)?),
            task_id: r.get(2)?,
            world_id: r.get(3)?,
            world_version: r.get(4)?,
            world_hash: r.get(5)?,
            task_hash: r.get(6)?,
            rubric_version: r.get(7)?,
            rubric_hash: r.get(8)?,
            value: r.get(9)?,
            range: [r.get(10)?, r.get(11)?],
            pending: usize::try_from(r.get::<_, i64>(12)?).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    12,
                    rusqlite::types::Type::Integer,
                    e.into(),
                )
            })?,
            detail: r.get(13)?,
        },
    })
}
