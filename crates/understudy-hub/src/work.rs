//! Work done in the app's own screens that belongs on the hub: a
//! reviewer's decision, a grader's grades of a run (judgments of judged
//! criteria, with their scale level, and overrides of automatic checks), an annotator's rubric
//! version. Each is saved in the local store first, exactly as without a
//! hub, then queued here (in `hub.json`) and sent by the next sync, so it
//! survives the hub being down and the app being closed.
//!
//! Every send is safe to repeat: a decision carries a request id the hub
//! answers again instead of storing twice, and grades and rubric versions
//! are identified on the hub by their content. So work is sent exactly
//! once, even when an answer is lost and the send is retried.

use serde::{Deserialize, Serialize};
use understudy::store::{Decision, Store};

use crate::client::Hub;
use crate::error::HubError;
use crate::wire::{
    EpisodeJudgment, EpisodeOverride, GraderAssignment, GradesBatch, ReviewRequest, RubricUpload,
};

/// One piece of work waiting to be sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Work {
    /// A decision on an episode, already in the local store.
    Review {
        /// Sent with the decision so a resend stores nothing twice.
        request_id: String,
        episode_id: String,
        decision: Decision,
        comment: String,
    },
    /// Every score, judgment, override and grader's assignment the local
    /// store holds of an episode (a grader graded or finished it, or a
    /// lead assigned graders to it).
    Grades { episode_id: String },
    /// A rubric version in the local store.
    Rubric {
        world_id: String,
        task_id: String,
        hash: String,
    },
}

impl Work {
    /// A decision made now, with a fresh request id (128 random bits).
    pub fn review(episode_id: &str, decision: Decision, comment: &str) -> Work {
        Work::Review {
            request_id: format!("rq_{}", hex::encode(rand::random::<[u8; 16]>())),
            episode_id: episode_id.to_string(),
            decision,
            comment: comment.to_string(),
        }
    }
}

/// The key a screen asks about a decision by.
pub fn review_key(episode_id: &str) -> String {
    format!("review:{episode_id}")
}

/// The key of an episode's grades.
pub fn grades_key(episode_id: &str) -> String {
    format!("grades:{episode_id}")
}

/// The key of a rubric version.
pub fn rubric_key(hash: &str) -> String {
    format!("rubric:{hash}")
}

impl Work {
    /// What the screens ask about it by.
    pub fn key(&self) -> String {
        match self {
            Work::Review { episode_id, .. } => review_key(episode_id),
            Work::Grades { episode_id } => grades_key(episode_id),
            Work::Rubric { hash, .. } => rubric_key(hash),
        }
    }
}

/// A piece of work after its send: taken by the hub, or refused (and
/// dropped: sending it again would be refused again), with when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivered {
    pub key: String,
    /// RFC 3339.
    pub at: String,
    /// Why the hub refused it, in plain words; `None`: it is on the hub.
    pub refused: Option<String>,
}

/// Whether `e` means "stop and send again later" (the hub unreachable or
/// failing, or the sign-in no longer accepted) rather than "the hub
/// refuses this piece of work".
fn retry_later(e: &HubError) -> bool {
    e.is_transient() || matches!(e.code(), Some("unauthorized" | "token_revoked"))
}

/// Sends one piece of work. `Ok(None)`: the hub has it; `Ok(Some(why))`:
/// the hub refused it for good; `Err`: try again at the next sync.
pub(crate) fn send(hub: &Hub, store: &Store, work: &Work) -> Result<Option<String>, HubError> {
    let result = match work {
        Work::Review {
            request_id,
            episode_id,
            decision,
            comment,
        } => hub
            .review_request(
                episode_id,
                &ReviewRequest {
                    decision: *decision,
                    comment: comment.clone(),
                    request_id: Some(request_id.clone()),
                },
            )
            .map(|_| ()),
        Work::Grades { episode_id } => grades(store, episode_id)
            .and_then(|batch| hub.push_grades_batch(&batch))
            .map(|_| ()),
        Work::Rubric {
            world_id,
            task_id,
            hash,
        } => match rubric(store, world_id, task_id, hash)? {
            Some(up) => hub.add_rubric(&up).map(|_| ()),
            None => return Ok(Some(format!(
                "This rubric version is no longer on this computer, so it was not sent ({task_id} of {world_id})."
            ))),
        },
    };
    match result {
        Ok(()) => Ok(None),
        Err(e) if retry_later(&e) => Err(e),
        Err(e) => Ok(Some(refusal(work, &e))),
    }
}

/// Why the hub refused `work`, for the person who did it.
fn refusal(work: &Work, e: &HubError) -> String {
    let message = match e {
        HubError::Api { message, .. } => message.clone(),
        other => other.to_string(),
    };
    match (work, e.code()) {
        (Work::Review { .. }, Some("conflict")) => format!(
            "Not sent: the hub already has a decision on this recording ({message}). The hub's decision replaces yours on this computer."
        ),
        (Work::Grades { .. }, Some("not_found")) => {
            "Not sent: this run is not on the team hub, so its grades stay on this computer.".into()
        }
        (_, Some("forbidden")) => format!("Not sent: the hub does not let your role do this ({message})."),
        _ => format!("Not sent: the hub refused it ({message})."),
    }
}

/// An episode's scores, judgments, overrides and graders' assignments,
/// as one batch.
pub(crate) fn grades(store: &Store, episode_id: &str) -> Result<GradesBatch, HubError> {
    let mut assignments = Vec::new();
    for a in store.assignments_of(episode_id)? {
        assignments.push(GraderAssignment {
            grader_name: store.expert(&a.grader)?.name,
            episode_id: a.episode_id,
            grader: a.grader,
            assigned_at: a.assigned_at,
            done_at: a.done_at,
        });
    }
    Ok(GradesBatch {
        assignments,
        scores: store.scores(episode_id)?,
        judgments: store
            .judgments(episode_id)?
            .into_iter()
            .map(|judgment| EpisodeJudgment {
                episode_id: episode_id.to_string(),
                judgment,
            })
            .collect(),
        overrides: store
            .overrides(episode_id)?
            .into_iter()
            .map(|record| EpisodeOverride {
                episode_id: episode_id.to_string(),
                record,
            })
            .collect(),
    })
}

/// A local rubric version as the hub takes it.
fn rubric(
    store: &Store,
    world_id: &str,
    task_id: &str,
    hash: &str,
) -> Result<Option<RubricUpload>, HubError> {
    Ok(store
        .rubric_versions(world_id, task_id)?
        .into_iter()
        .find(|v| v.hash == hash)
        .map(|v| RubricUpload {
            world_id: v.world_id,
            task_id: v.task_id,
            version: v.version,
            hash: v.hash,
            path: v.path,
            content: v.content,
            saved_by: v.saved_by,
            saved_at: v.saved_at,
        }))
}
