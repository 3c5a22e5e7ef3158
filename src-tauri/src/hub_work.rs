//! The review queue, the grading sheet and the rubric workspace against
//! the team hub. The screens stay the same and keep working on the local
//! store (which a sync fills with the hub's episodes, decisions and rubric
//! versions: `understudy_hub::pull`); when the app is signed in, the work
//! done in them is also queued for the hub (`understudy_hub::work`) and
//! the background sync is woken to send it. Each screen then says where
//! that work is ("Saved here, will be sent to the hub" / "Sent to the
//! hub") from `HubView::work`.
//!
//! Without a hub every function here does nothing and the screens work as
//! they always did.

use understudy::store::{Decision, Review};
use understudy_hub::outbox::SignedIn;
use understudy_hub::work::Work;

use crate::error::{AppError, AppResult};
use crate::experts::ExpertView;
use crate::AppState;

/// The signed-in account, if any (an unreadable hub.json counts as none:
/// the hub card says why).
fn account(state: &AppState) -> Option<SignedIn> {
    state.hub().signed_in_as()
}

/// The hub person who reviews, as the queue's reviewer: the decision is
/// theirs on the hub, whichever local profile is chosen.
pub fn reviewer(state: &AppState) -> Option<ExpertView> {
    let a = account(state).filter(|a| a.role.reviews())?;
    Some(ExpertView {
        id: format!("hub:{}", a.login),
        name: a.name,
        domain: String::new(),
        credentials: String::new(),
        credentials_attested: false,
        verified: false,
        current: true,
    })
}

/// Queues `work` for the hub and wakes the sync; a no-op without a hub.
fn queue(state: &AppState, work: Work) -> AppResult<()> {
    let hub = state.hub();
    let queued = hub.queue(work).map_err(|e| {
        AppError::new(
            "hub",
            "Your work is saved on this computer, but the app could not note it for the team hub. Send it again from the start screen, or tell your team's admin.",
        )
        .with_detail(e.to_string())
    })?;
    if queued {
        hub.wake();
    }
    Ok(())
}

/// A decision made in the review queue while signed in as a reviewer:
/// saved in the local store under the hub person's name and queued for the
/// hub (which checks the role and attributes it). `None`: not signed in
/// as a reviewer, so the queue decides locally as before.
pub fn decide(
    state: &AppState,
    episode_id: &str,
    decision: Decision,
    comment: &str,
) -> AppResult<Option<Review>> {
    let Some(a) = account(state).filter(|a| a.role.reviews()) else {
        return Ok(None);
    };
    let review = state
        .service()?
        .store()
        .add_review(episode_id, &a.name, decision, comment)?;
    queue(state, Work::review(episode_id, decision, comment))?;
    Ok(Some(review))
}

/// Grades were saved on the grading sheet: queue the run's grades.
pub fn graded(state: &AppState, episode_id: &str) -> AppResult<()> {
    if account(state).is_some_and(|a| a.role.grades()) {
        queue(
            state,
            Work::Grades {
                episode_id: episode_id.to_string(),
            },
        )?;
    }
    Ok(())
}

/// A rubric version was saved in the workspace: queue it.
pub fn rubric_saved(state: &AppState, world_id: &str, task_id: &str, hash: &str) -> AppResult<()> {
    if account(state).is_some_and(|a| a.role.writes_rubrics()) {
        queue(
            state,
            Work::Rubric {
                world_id: world_id.to_string(),
                task_id: task_id.to_string(),
                hash: hash.to_string(),
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::Instant;
    use understudy::store::EpisodeStatus;
    use understudy::Action;

    use crate::hub::HubState;
    use crate::testing::{profile, service};

    fn state(dir: &Path) -> AppState {
        AppState {
            service: Ok(service(dir)),
            hub: HubState::open(Some(dir)),
            started: Instant::now(),
        }
    }

    fn submitted(state: &AppState) -> String {
        let s = state.service().unwrap();
        profile(s, "Renee Okafor");
        let ep = s.start("support-desk", "duplicate-charge").unwrap();
        s.step(&ep.id, Action::message("Looking into it."), None)
            .unwrap();
        s.submit(&ep.id, None).unwrap();
        ep.id
    }

    fn waiting(state: &AppState) -> Vec<String> {
        let store = state.service().unwrap().store();
        state
            .hub()
            .status_of(store)
            .unwrap()
            .work
            .into_iter()
            .filter(|w| w.state == understudy_hub::outbox::WorkState::Waiting)
            .map(|w| w.key)
            .collect()
    }

    #[test]
    fn without_a_hub_the_screens_work_locally_and_nothing_is_queued() {
        let dir = tempfile::tempdir().unwrap();
        let state = state(dir.path());
        let ep = submitted(&state);
        assert!(reviewer(&state).is_none());
        assert_eq!(decide(&state, &ep, Decision::Approve, "").unwrap(), None);
        graded(&state, &ep).unwrap();
        rubric_saved(&state, "support-desk", "duplicate-charge", "h").unwrap();
        assert!(waiting(&state).is_empty());
        assert!(!dir.path().join(understudy_hub::outbox::FILE).exists());
    }

    #[test]
    fn signed_in_as_a_reviewer_a_decision_is_theirs_saved_here_and_queued() {
        let dir = tempfile::tempdir().unwrap();
        // Signed in earlier, to a hub that is not running now.
        std::fs::write(
            dir.path().join(understudy_hub::outbox::FILE),
            r#"{"account": {"url": "http://127.0.0.1:9", "token": "ush_x", "person": {"id": 2, "login": "rita", "name": "Rita Reviewer", "role": "reviewer"}}}"#,
        )
        .unwrap();
        let state = state(dir.path());
        let ep = submitted(&state);
        let who = reviewer(&state).expect("the hub's reviewer");
        assert_eq!(
            (who.id.as_str(), who.name.as_str()),
            ("hub:rita", "Rita Reviewer")
        );
        let review = decide(&state, &ep, Decision::Approve, "")
            .unwrap()
            .expect("decided for the hub");
        assert_eq!(review.reviewer, "Rita Reviewer");
        let store = state.service().unwrap().store();
        assert_eq!(store.episode(&ep).unwrap().status, EpisodeStatus::Approved);
        graded(&state, &ep).unwrap();
        // A reviewer does not save rubric versions on the hub: not queued.
        rubric_saved(&state, "support-desk", "duplicate-charge", "h").unwrap();
        assert_eq!(
            waiting(&state),
            [format!("review:{ep}"), format!("grades:{ep}")]
        );
        // Final here as without a hub: a second decision is refused, not queued.
        let again = decide(&state, &ep, Decision::Reject, "no").unwrap_err();
        assert!(
            again.message.contains("decision is final"),
            "{}",
            again.message
        );
        assert_eq!(waiting(&state).len(), 2);
    }
}
