//! The review queue: submitted episodes with their expert, task and
//! status, and the reviewer's approve or reject. The reviewer is the expert
//! profile using the app; the decision goes through the engine's store
//! ([`understudy::store::Store::add_expert_review`]), the same rules as
//! `understudy review approve|reject`: final, a rejection needs a comment,
//! and nobody reviews their own episode.

use std::collections::HashMap;

use serde::Serialize;
use tauri::State;
use ts_rs::TS;
use understudy::store::{Actor, Decision, EpisodeStatus, EpisodeSummary, Review};
use understudy::World;

use crate::error::{AppError, AppResult};
use crate::experts::ExpertView;
use crate::ipc::command;
use crate::service::Service;
use crate::AppState;

/// The queue as the reviewer sees it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct QueueView {
    /// Who is reviewing: the expert using the app.
    pub reviewer: Option<ExpertView>,
    /// Submitted, approved and rejected episodes, oldest first.
    pub rows: Vec<QueueRow>,
}

/// One finished episode in the queue.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct QueueRow {
    pub episode_id: String,
    pub world_id: String,
    pub world_name: String,
    pub task_id: String,
    pub task_title: String,
    /// The expert's id, or the agent's model.
    pub performer_id: String,
    /// The expert's name, or "Agent: <model>".
    pub performer: String,
    pub is_agent: bool,
    pub status: EpisodeStatus,
    /// Steps kept (undone ones left out).
    pub steps: u32,
    #[ts(type = "number")]
    pub active_ms: i64,
    pub submitted_at: Option<String>,
    pub last_review: Option<Review>,
    /// The reviewer recorded this episode, so they may not review it.
    pub own: bool,
}

/// A finished attempt a reviewer sent back, as its expert sees it on the
/// start screen.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct Returned {
    pub episode_id: String,
    pub reviewer: String,
    pub comment: String,
    pub at: String,
}

impl Returned {
    /// The rejection of a rejected episode, if it is one.
    pub fn of(s: &EpisodeSummary) -> Option<Returned> {
        let review = s.last_review.as_ref()?;
        (s.record.status == EpisodeStatus::Rejected && review.decision == Decision::Reject).then(
            || Returned {
                episode_id: s.record.id.clone(),
                reviewer: review.reviewer.clone(),
                comment: review.comment.clone(),
                at: review.at.clone(),
            },
        )
    }
}

impl QueueRow {
    pub fn new(
        s: EpisodeSummary,
        world: Option<&World>,
        names: &HashMap<String, String>,
        reviewer: Option<&str>,
    ) -> QueueRow {
        let e = s.record;
        let (performer_id, performer, is_agent) = match &e.actor {
            Actor::Expert { id } => (
                id.clone(),
                names.get(id).cloned().unwrap_or_else(|| id.clone()),
                false,
            ),
            Actor::Agent { model } => (model.clone(), format!("Agent: {model}"), true),
        };
        QueueRow {
            own: !is_agent && reviewer == Some(performer_id.as_str()),
            world_name: world
                .map(|w| w.meta.name.clone())
                .unwrap_or_else(|| e.world_id.clone()),
            task_title: world
                .and_then(|w| w.task(&e.task_id))
                .map(|t| t.title.clone())
                .unwrap_or_else(|| e.task_id.clone()),
            episode_id: e.id,
            world_id: e.world_id,
            task_id: e.task_id,
            performer_id,
            performer,
            is_agent,
            status: e.status,
            steps: s.kept_steps,
            active_ms: e.active_ms,
            submitted_at: e.submitted_at,
            last_review: s.last_review,
        }
    }
}

/// Whether an episode belongs in the queue: it was handed in.
fn finished(status: EpisodeStatus) -> bool {
    matches!(
        status,
        EpisodeStatus::Submitted | EpisodeStatus::Approved | EpisodeStatus::Rejected
    )
}

/// The queue's rows matching `filter` (finished episodes only).
pub fn rows(
    service: &Service,
    filter: &understudy::store::EpisodeFilter,
) -> AppResult<Vec<QueueRow>> {
    let reviewer = service.current_expert()?.map(|e| e.id);
    let names: HashMap<String, String> = service
        .experts()?
        .into_iter()
        .map(|e| (e.id, e.name))
        .collect();
    let mut worlds: HashMap<String, Option<std::sync::Arc<World>>> = HashMap::new();
    let mut out = Vec::new();
    for s in service.store().episode_summaries(filter)? {
        if !finished(s.record.status) {
            continue;
        }
        let world = worlds
            .entry(s.record.world_id.clone())
            .or_insert_with(|| service.world(&s.record.world_id).ok())
            .clone();
        out.push(QueueRow::new(
            s,
            world.as_deref(),
            &names,
            reviewer.as_deref(),
        ));
    }
    Ok(out)
}

/// The expert using the app, who reviews; refused without a profile.
pub fn reviewer(service: &Service) -> AppResult<ExpertView> {
    service.current_expert()?.ok_or_else(|| {
        AppError::new(
            "no_expert",
            "Choose your expert profile on the start screen first: a decision is recorded under the reviewer's name.",
        )
    })
}

command! {
    /// The review queue: every submitted, approved and rejected episode.
    #[tauri::command(async)]
    pub fn review_queue(state: State<'_, AppState>) -> AppResult<QueueView> {
        let service = state.service()?;
        Ok(QueueView {
            // Signed in to a hub as a reviewer: the decisions are theirs.
            reviewer: match crate::hub_work::reviewer(&state) {
                Some(hub) => Some(hub),
                None => service.current_expert()?,
            },
            rows: rows(service, &Default::default())?,
        })
    }
}

command! {
    /// Approves or rejects a submitted episode as the expert using the app.
    /// Final; a rejection needs a comment, which goes back to the expert.
    #[tauri::command(async)]
    pub fn decide_episode(
        state: State<'_, AppState>,
        episode_id: String,
        decision: Decision,
        comment: String,
    ) -> AppResult<Review> {
        if let Some(review) = crate::hub_work::decide(&state, &episode_id, decision, comment.trim())? {
            return Ok(review);
        }
        let service = state.service()?;
        let reviewer = reviewer(service)?;
        Ok(service
            .store()
            .add_expert_review(&episode_id, &reviewer.id, decision, comment.trim())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use understudy::Action;

    use crate::testing::{profile, service};

    fn submitted(s: &Service, task: &str) -> String {
        let ep = s.start("support-desk", task).unwrap();
        s.step(&ep.id, Action::message("Looking into it."), None)
            .unwrap();
        s.submit(&ep.id, None).unwrap();
        ep.id
    }

    #[test]
    fn the_queue_lists_finished_episodes_and_marks_the_reviewers_own() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        let renee = profile(&s, "Renee Okafor");
        let first = submitted(&s, "duplicate-charge");
        let open = s.start("support-desk", "duplicate-charge").unwrap().id;
        let lee = profile(&s, "Lee Park");

        let rows = rows(&s, &Default::default()).unwrap();
        assert_eq!(rows.len(), 1, "the open episode {open} is not in the queue");
        let row = &rows[0];
        assert_eq!(row.episode_id, first);
        assert_eq!(
            (row.performer.as_str(), row.performer_id.as_str()),
            ("Renee Okafor", renee.as_str())
        );
        assert_eq!(row.task_title, "Refund a duplicate March charge");
        assert_eq!(
            (row.status, row.steps, row.own),
            (EpisodeStatus::Submitted, 1, false)
        );

        s.select_expert(&renee).unwrap();
        assert!(super::rows(&s, &Default::default()).unwrap()[0].own);
        let err = s
            .store()
            .add_expert_review(&first, &renee, Decision::Approve, "")
            .unwrap_err();
        assert!(AppError::from(err)
            .message
            .contains("cannot review their own work"));

        s.select_expert(&lee).unwrap();
        s.store()
            .add_expert_review(&first, &lee, Decision::Reject, "Verify the account first")
            .unwrap();
        let row = &super::rows(&s, &Default::default()).unwrap()[0];
        assert_eq!(row.status, EpisodeStatus::Rejected);
        let review = row.last_review.as_ref().expect("the rejection");
        assert_eq!(
            (review.reviewer.as_str(), review.comment.as_str()),
            ("Lee Park", "Verify the account first")
        );
    }

    #[test]
    fn a_rejected_attempt_shows_on_its_task_until_the_expert_submits_again() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        let renee = profile(&s, "Renee Okafor");
        let first = submitted(&s, "duplicate-charge");
        let lee = profile(&s, "Lee Park");
        s.store()
            .add_expert_review(&first, &lee, Decision::Reject, "Verify the account first")
            .unwrap();
        s.select_expert(&renee).unwrap();
        let progress = |s: &Service| {
            s.catalog()
                .unwrap()
                .worlds
                .into_iter()
                .find(|w| w.id == "support-desk")
                .unwrap()
                .tasks
                .into_iter()
                .find(|t| t.id == "duplicate-charge")
                .unwrap()
                .progress
        };
        let returned = progress(&s).returned.expect("returned to Renee");
        assert_eq!(
            (
                returned.episode_id.as_str(),
                returned.reviewer.as_str(),
                returned.comment.as_str()
            ),
            (first.as_str(), "Lee Park", "Verify the account first")
        );
        // Still shown while she works on a new attempt, gone once she submits it.
        let again = s.start("support-desk", "duplicate-charge").unwrap().id;
        assert!(progress(&s).returned.is_some());
        s.submit(&again, None).unwrap();
        assert_eq!(progress(&s).returned, None);
        // Lee sees nothing returned: it was not his.
        s.select_expert(&lee).unwrap();
        assert_eq!(progress(&s).returned, None);
    }
}
