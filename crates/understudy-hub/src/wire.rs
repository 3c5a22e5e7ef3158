//! The JSON bodies of the hub's API, shared by the server and the client so
//! the two cannot drift. Requests refuse unknown fields: a misspelt field
//! must not be silently ignored.

use serde::{Deserialize, Serialize};
use understudy::store::{
    Decision, EpisodeRecord, Expert, JudgmentRecord, OverrideRecord, Review, StepRecord,
    StoredScore,
};

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
    /// The token's id, to revoke it by (`POST /v1/tokens/{id}/revoke`).
    #[serde(default)]
    pub token_id: i64,
    pub person: Person,
}

/// A token as listed (never the token itself: it is shown once).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenInfo {
    pub id: i64,
    /// The owner's login.
    pub login: String,
    pub label: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// RFC 3339, UTC; `None` while the token works.
    pub revoked_at: Option<String>,
}

/// `POST /v1/rubrics`: a rubric file saved as a version, as the app's
/// store keeps it (`understudy::store::RubricVersion` without the row id).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RubricUpload {
    pub world_id: String,
    pub task_id: String,
    /// The rubric's own `version` field.
    pub version: String,
    /// The content hash scores name in `rubric_hash` (64 hex digits).
    pub hash: String,
    /// Where the file was saved on the machine it came from.
    #[serde(default)]
    pub path: String,
    /// The file's bytes.
    pub content: String,
    /// The expert id who saved it, if known.
    #[serde(default)]
    pub saved_by: Option<String>,
    /// RFC 3339; now, when empty.
    #[serde(default)]
    pub saved_at: String,
}

/// `GET /v1/rubrics?world=&task=`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RubricQuery {
    pub world: Option<String>,
    pub task: Option<String>,
}

/// A judgment of one episode's criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpisodeJudgment {
    pub episode_id: String,
    pub judgment: JudgmentRecord,
}

/// A grader's override of one episode's automatically checked criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpisodeOverride {
    pub episode_id: String,
    #[serde(rename = "override")]
    pub record: OverrideRecord,
}

/// `POST /v1/sync/grades`: scores, judgments and overrides, stored in one
/// transaction, each once (identified by its content).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GradesBatch {
    /// As the local store keeps them; `id` is the local row id (ignored),
    /// `record.episode_id` must name an episode on the hub.
    #[serde(default)]
    pub scores: Vec<StoredScore>,
    #[serde(default)]
    pub judgments: Vec<EpisodeJudgment>,
    #[serde(default)]
    pub overrides: Vec<EpisodeOverride>,
    /// Who is asked to grade which of these runs, and who said they were
    /// done (annotators, reviewers, engineers and admins assign).
    #[serde(default)]
    pub assignments: Vec<GraderAssignment>,
}

/// A grader asked to grade a run, as the app's store keeps it
/// (`understudy::store::Assignment`), with the grader's name. Identified
/// by its run and grader: sent again, it adds nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraderAssignment {
    pub episode_id: String,
    /// The grader's expert id (what their judgments name as judge).
    pub grader: String,
    pub grader_name: String,
    /// RFC 3339; now, when empty.
    #[serde(default)]
    pub assigned_at: String,
    /// RFC 3339: when the grader said they were done; `None` while grading.
    #[serde(default)]
    pub done_at: Option<String>,
}

/// A position in one of the hub's change feeds: the change number read
/// up to (numbers are handed out in commit order: see the hub's `changes`
/// module). The default is the start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeCursor {
    #[serde(default)]
    pub seq: i64,
}

/// The most rows of each kind one page of a change feed holds.
pub const CHANGES_PAGE: usize = 2000;

/// `GET /v1/sync/runs?seq=`: the finished runs the caller may pull
/// that were added or changed after a cursor, oldest change first, by id
/// (an app fetches whole only those it lacks: `POST /v1/export/episodes`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunChanges {
    pub runs: Vec<String>,
    /// Where the next page starts.
    pub next: ChangeCursor,
    /// More changes wait after `next`: ask again.
    pub more: bool,
}

/// `GET /v1/sync/reviews?seq=`: reviewers' decisions made after a
/// cursor, on the episodes the caller sees, in commit order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReviewChanges {
    pub reviews: Vec<Review>,
    /// Where the next page starts.
    pub next: ChangeCursor,
    /// More changes wait after `next`: ask again.
    pub more: bool,
}

/// `GET /v1/sync/grading?seq=`: grading work (assignments, judgments,
/// overrides) changed after a cursor,
/// of the finished runs the caller sees, oldest change first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GradingChanges {
    pub assignments: Vec<GraderAssignment>,
    pub judgments: Vec<EpisodeJudgment>,
    pub overrides: Vec<EpisodeOverride>,
    /// Where the next page starts.
    pub next: ChangeCursor,
    /// More changes wait after `next`: ask again.
    pub more: bool,
}

/// `POST /v1/sync/grading/runs`: all the grading work of some runs (those
/// the caller may pull), for an app that has just pulled them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunsGrading {
    pub assignments: Vec<GraderAssignment>,
    /// Oldest first.
    pub judgments: Vec<EpisodeJudgment>,
    /// Oldest first.
    pub overrides: Vec<EpisodeOverride>,
}

/// What a grades push stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GradesSummary {
    pub scores: usize,
    pub scores_added: usize,
    pub judgments: usize,
    pub judgments_added: usize,
    #[serde(default)]
    pub overrides: usize,
    #[serde(default)]
    pub overrides_added: usize,
    #[serde(default)]
    pub assignments: usize,
    /// Assignments the hub did not have, or whose "done" changed.
    #[serde(default)]
    pub assignments_changed: usize,
}

/// `GET /v1/grades?judgments_after=&overrides_after=`: the judgments and
/// overrides stored after the given row ids, which a grader's app pulls
/// into its store (a page at a time: [`GRADES_PAGE`] of each at most).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GradesAfter {
    #[serde(default)]
    pub judgments_after: i64,
    #[serde(default)]
    pub overrides_after: i64,
}

/// The most judgments (and, apart, overrides) one `GET /v1/grades` answers.
pub const GRADES_PAGE: usize = 2000;

/// A row with the hub's id for it (what the next pull asks after).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Numbered<T> {
    pub id: i64,
    pub grade: T,
}

/// The answer to [`GradesAfter`], oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NewGrades {
    pub judgments: Vec<Numbered<EpisodeJudgment>>,
    pub overrides: Vec<Numbered<EpisodeOverride>>,
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
    /// The sender's id for this decision: sending it again (its answer
    /// was lost) answers the stored review, so it is stored once.
    #[serde(default)]
    pub request_id: Option<String>,
}

/// `POST /v1/export/episodes`: whole episodes by id, what an app pulls
/// (only the ones it lacks, not the whole hub).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpisodeIds {
    pub ids: Vec<String>,
}

/// The most ids one `POST /v1/export/episodes` takes.
pub const MAX_EXPORT_IDS: usize = 500;

/// One row of `GET /v1/episodes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeRow {
    pub record: EpisodeRecord,
    /// Steps that were not undone.
    pub kept_steps: i64,
    /// The login of the person who pushed it.
    pub owner: String,
}
