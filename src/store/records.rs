//! The rows of the store, as Rust values.

use rusqlite::Row;
use serde::{Deserialize, Serialize};

pub use crate::trajectory::{Actor, EpisodeRecord, EpisodeStatus, StepRecord};

pub(super) const EXPERT_COLUMNS: &str =
    "id, name, domain, credentials, credentials_attested, verified, created_at, updated_at";
pub(super) const EPISODE_COLUMNS: &str = "id, world_id, world_version, world_hash, task_id, seed, actor_kind, actor_id, status, created_at, updated_at, submitted_at, active_ms, final_message";
pub(super) const STEP_COLUMNS: &str = "idx, action, observation, terminated, truncated, wall_at, active_ms, rationale, flag, retracted, retracted_at";

/// A domain expert who records trajectories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Expert {
    /// Stable id (a UUID), used as the actor id of the expert's episodes.
    pub id: String,
    /// The name shown in the app and exports.
    pub name: String,
    /// e.g. "Customer support", "Tax law".
    pub domain: String,
    /// Free text: the credentials the expert states.
    pub credentials: String,
    /// The expert attested that the credentials are true.
    pub credentials_attested: bool,
    /// An administrator checked the credentials.
    pub verified: bool,
    /// When the profile was created (RFC 3339, wall time).
    pub created_at: String,
    /// When the profile last changed (RFC 3339, wall time).
    pub updated_at: String,
}

impl Expert {
    pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<Expert> {
        Ok(Expert {
            id: r.get(0)?,
            name: r.get(1)?,
            domain: r.get(2)?,
            credentials: r.get(3)?,
            credentials_attested: r.get(4)?,
            verified: r.get(5)?,
            created_at: r.get(6)?,
            updated_at: r.get(7)?,
        })
    }
}

/// What an expert enters about themselves.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExpertInput {
    /// The name shown in the app and exports.
    pub name: String,
    /// The field of expertise, e.g. "Customer support".
    pub domain: String,
    /// The credentials the expert states, as free text.
    pub credentials: String,
    /// The expert attests that the credentials are true.
    pub credentials_attested: bool,
}

impl EpisodeRecord {
    /// A new episode in progress, with a fresh id, created now; nothing
    /// is stored until [`super::Store::insert_episode`].
    pub fn begin(
        world_id: &str,
        world_version: &str,
        world_hash: &str,
        task_id: &str,
        seed: u64,
        actor: Actor,
    ) -> EpisodeRecord {
        let now = super::now();
        EpisodeRecord {
            id: super::new_uuid(),
            world_id: world_id.to_string(),
            world_version: world_version.to_string(),
            world_hash: world_hash.to_string(),
            task_id: task_id.to_string(),
            seed,
            actor,
            status: EpisodeStatus::InProgress,
            created_at: now.clone(),
            updated_at: now,
            submitted_at: None,
            active_ms: 0,
            final_message: None,
        }
    }

    pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<EpisodeRecord> {
        let kind: String = r.get(6)?;
        let actor_id: String = r.get(7)?;
        let status: String = r.get(8)?;
        Ok(EpisodeRecord {
            id: r.get(0)?,
            world_id: r.get(1)?,
            world_version: r.get(2)?,
            world_hash: r.get(3)?,
            task_id: r.get(4)?,
            seed: r.get::<_, i64>(5)? as u64,
            actor: if kind == "agent" {
                Actor::Agent { model: actor_id }
            } else {
                Actor::Expert { id: actor_id }
            },
            status: EpisodeStatus::parse(&status).unwrap_or(EpisodeStatus::Abandoned),
            created_at: r.get(9)?,
            updated_at: r.get(10)?,
            submitted_at: r.get(11)?,
            active_ms: r.get(12)?,
            final_message: r.get(13)?,
        })
    }
}

impl StepRecord {
    pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<StepRecord> {
        let action: String = r.get(1)?;
        let observation: String = r.get(2)?;
        let bad = |i: usize, e: serde_json::Error| {
            rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
        };
        Ok(StepRecord {
            idx: r.get(0)?,
            action: serde_json::from_str(&action).map_err(|e| bad(1, e))?,
            observation: serde_json::from_str(&observation).map_err(|e| bad(2, e))?,
            terminated: r.get(3)?,
            truncated: r.get(4)?,
            wall_at: r.get(5)?,
            active_ms: r.get(6)?,
            rationale: r.get(7)?,
            flag: r.get(8)?,
            retracted: r.get(9)?,
            retracted_at: r.get(10)?,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
/// A reviewer's verdict on a submitted episode. Decisions are final.
pub enum Decision {
    /// The episode is gold: lint and export use it by default.
    Approve,
    /// The episode goes back to its expert with the comment.
    Reject,
}

impl Decision {
    /// The name stored in the `reviews` table.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Reject => "reject",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
/// A reviewer's decision on one episode, as stored.
pub struct Review {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    /// Row id, in the order decisions were made.
    pub id: i64,
    /// The episode decided on.
    pub episode_id: String,
    /// Who decided (an expert id or a name).
    pub reviewer: String,
    /// Approve or reject.
    pub decision: Decision,
    /// Why; required for a rejection.
    pub comment: String,
    /// When (RFC 3339, wall time).
    pub at: String,
}

impl Review {
    pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<Review> {
        let decision: String = r.get(3)?;
        Ok(Review {
            id: r.get(0)?,
            episode_id: r.get(1)?,
            reviewer: r.get(2)?,
            decision: if decision == "approve" {
                Decision::Approve
            } else {
                Decision::Reject
            },
            comment: r.get(4)?,
            at: r.get(5)?,
        })
    }
}

/// Which episodes to list or export. Unset fields match everything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EpisodeFilter {
    /// Only episodes of this world.
    pub world_id: Option<String>,
    /// Only episodes of this task.
    pub task_id: Option<String>,
    /// Only episodes in this status.
    pub status: Option<EpisodeStatus>,
    /// "expert" or "agent".
    pub actor_kind: Option<String>,
    /// Expert id or model name.
    pub actor_id: Option<String>,
    /// RFC 3339, inclusive.
    pub since: Option<String>,
    /// RFC 3339, exclusive.
    pub until: Option<String>,
}
