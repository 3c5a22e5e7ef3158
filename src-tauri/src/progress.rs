//! Where each person's work stands: experts' recordings and what reviewers
//! made of them, reviewers' decisions and what waits, graders' runs. The
//! numbers are the engine's ([`understudy::grading::people_progress`]);
//! this marks who is using the app, so they find themselves first.

use serde::Serialize;
use tauri::State;
use ts_rs::TS;
use understudy::grading::{self, PeopleProgress};

use crate::error::AppResult;
use crate::ipc::command;
use crate::service::Service;
use crate::AppState;

/// Everyone's progress, and who is looking.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ProgressView {
    /// The expert using the app, if one is chosen.
    pub me: Option<String>,
    pub progress: PeopleProgress,
}

/// Everyone's progress, with the person using the app first in each list.
pub fn build(service: &Service) -> AppResult<ProgressView> {
    let me = service.current_expert()?.map(|e| e.id);
    let mut progress = grading::people_progress(service.store())?;
    if let Some(me) = &me {
        progress.experts.sort_by_key(|e| e.id != *me);
        progress.reviewers.sort_by_key(|r| r.id != *me);
        progress.graders.sort_by_key(|g| g.id != *me);
    }
    Ok(ProgressView { me, progress })
}

command! {
    /// Experts', reviewers' and graders' progress.
    #[tauri::command(async)]
    pub fn people_progress(state: State<'_, AppState>) -> AppResult<ProgressView> {
        build(state.service()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{profile, service};

    #[test]
    fn the_person_using_the_app_comes_first() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        let empty = build(&s).unwrap();
        assert!(empty.me.is_none() && empty.progress.experts.is_empty());
        let zoe = profile(&s, "Zoe");
        let ep = s.start("support-desk", "cancel-no-refund").unwrap();
        s.pause(&ep.id).unwrap();
        let adam = profile(&s, "Adam");
        let ep = s.start("support-desk", "cancel-no-refund").unwrap();
        s.pause(&ep.id).unwrap();
        s.select_expert(&zoe).unwrap();
        let view = build(&s).unwrap();
        assert_eq!(view.me.as_deref(), Some(zoe.as_str()));
        let names: Vec<&str> = view
            .progress
            .experts
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(names, ["Zoe", "Adam"], "Zoe first, though Adam sorts first");
        assert_eq!(view.progress.experts[0].in_progress, 1);
        assert_eq!(view.progress.reviewers[0].id, zoe);
        assert_eq!(view.progress.reviewers[1].id, adam);
    }
}
