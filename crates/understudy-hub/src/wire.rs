//! The JSON bodies of the hub's API, shared by the server and the client so
//! the two cannot drift. Requests refuse unknown fields: a misspelt field
//! must not be silently ignored.

use serde::{Deserialize, Serialize};
use understudy::store::{Decision, EpisodeRecord, Expert, StepRecord};

use crate::people::Person;

/// `POST /v1/sessions`: sign in with a password.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignIn {
    pub login: String,
    pub password: String,
}

/// A token and whose it is (sign-in, `POST /v1/people/{login}/tokens`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Issued {
    pub token: String,
    pub person: Person,
}

/// One episode as a client pushes it: the header and every step recorded so
/// far (retracted ones included), and the client's digest of both.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushEpisode {
    pub record: EpisodeRecord,
    pub steps: Vec<StepRecord>,
    /// [`crate::client::digest`] of the record, the steps and the expert.
    pub digest: String,
}

/// `POST /v1/sync/push`: a batch, stored in one transaction.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushBatch {
    /// The profiles of the experts who performed the episodes.
    pub experts: Vec<Expert>,
    pub episodes: Vec<PushEpisode>,
}

/// What a push stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushSummary {
    /// Episodes in the batch.
    pub episodes: usize,
    /// Episodes the hub did not have before.
    pub episodes_added: usize,
    /// Steps the hub did not have before.
    pub steps_added: usize,
    /// Stored steps whose rationale, flag or undo changed.
    pub steps_updated: usize,
}

/// One episode's digest, to ask which need pushing.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpisodeDigest {
    pub id: String,
    pub digest: String,
}

/// `POST /v1/sync/state`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncState {
    pub episodes: Vec<EpisodeDigest>,
}

/// The episodes of a [`SyncState`] the hub lacks or holds another digest of.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stale {
    pub stale: Vec<String>,
}

/// One file of a world folder, hex-encoded.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldFile {
    /// Relative to the world folder, `/`-separated.
    pub path: String,
    pub hex: String,
}

/// `POST /v1/worlds`: a whole world folder.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldUpload {
    pub files: Vec<WorldFile>,
}

/// A world the hub stores.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldInfo {
    pub hash: String,
    pub world_id: String,
    pub version: String,
    pub name: String,
}

/// `POST /v1/assignments`: a task to one or more experts.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewAssignment {
    pub world_hash: String,
    pub task_id: String,
    /// Logins; more than one is overlap, for agreement.
    pub experts: Vec<String>,
    /// RFC 3339.
    #[serde(default)]
    pub due_at: Option<String>,
}

/// A task given to an expert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    pub id: i64,
    pub world_hash: String,
    pub world_id: String,
    pub task_id: String,
    /// The expert's login.
    pub expert: String,
    /// How many experts the task was given to.
    pub overlap: i32,
    /// RFC 3339, UTC.
    pub due_at: Option<String>,
}

/// `POST /v1/episodes/{id}/reviews`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewRequest {
    pub decision: Decision,
    #[serde(default)]
    pub comment: String,
}

/// One row of `GET /v1/episodes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeRow {
    pub record: EpisodeRecord,
    /// Steps that were not undone.
    pub kept_steps: i64,
    /// The login of the person who pushed it.
    pub owner: String,
}
