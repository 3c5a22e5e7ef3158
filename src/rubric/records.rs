//! Scores and judgments as the store keeps them. The store is a lower
//! layer and knows nothing of rubrics, so the conversions to and from its
//! plain records live here.

use super::judgment::Judgment;
use super::score::Score;
use crate::error::{Error, Result};
use crate::store::{JudgmentRecord, ScoreRecord, StoredScore};

impl TryFrom<&Score> for ScoreRecord {
    type Error = Error;

    fn try_from(s: &Score) -> Result<ScoreRecord> {
        let detail =
            serde_json::to_string(s).map_err(|e| Error::Other(format!("encoding a score: {e}")))?;
        Ok(ScoreRecord {
            episode_id: s.episode_id.clone(),
            task_id: s.task_id.clone(),
            world_id: s.world_id.clone(),
            world_version: s.world_version.clone(),
            world_hash: s.world_hash.clone(),
            task_hash: s.task_hash.clone(),
            rubric_version: s.rubric_version.clone(),
            rubric_hash: s.rubric_hash.clone(),
            value: s.value,
            range: s.range,
            pending: s.pending.len(),
            detail,
        })
    }
}

/// The full score a stored row holds.
impl TryFrom<&StoredScore> for Score {
    type Error = Error;

    fn try_from(stored: &StoredScore) -> Result<Score> {
        serde_json::from_str(&stored.record.detail).map_err(|e| {
            Error::Other(format!(
                "score {} of episode {} cannot be read: {e}",
                stored.id,
                stored.record.episode_id.as_deref().unwrap_or("?")
            ))
        })
    }
}

impl From<&Judgment> for JudgmentRecord {
    fn from(j: &Judgment) -> JudgmentRecord {
        JudgmentRecord {
            criterion_id: j.criterion_id.clone(),
            criterion_hash: j.criterion_hash.clone(),
            met: j.met,
            reason: j.reason.clone(),
            judge: j.judge.clone(),
            at: j.at.clone(),
            level: j.level.clone(),
        }
    }
}

impl From<JudgmentRecord> for Judgment {
    fn from(j: JudgmentRecord) -> Judgment {
        Judgment {
            criterion_id: j.criterion_id,
            criterion_hash: j.criterion_hash,
            met: j.met,
            reason: j.reason,
            judge: j.judge,
            at: j.at,
            level: j.level,
        }
    }
}
