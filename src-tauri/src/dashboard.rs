//! The scores dashboard: for a task, how experts' and agents' runs score,
//! how often each criterion comes out right, and pass^k. The numbers are
//! the engine's ([`understudy::grading::task_dashboard`]); this picks the
//! runs and the rubric.

use std::collections::BTreeMap;

use serde::Serialize;
use tauri::State;
use ts_rs::TS;
use understudy::grading::{self, JudgeAgreement, TaskDashboard};
use understudy::store::{EpisodeFilter, EpisodeRecord, EpisodeStatus};

use crate::error::{AppError, AppResult};
use crate::ipc::command;
use crate::rubrics::overlay_dir;
use crate::service::Service;
use crate::AppState;

/// A task with finished runs, to pick on the dashboard.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct DashboardTask {
    pub world_id: String,
    pub task_id: String,
    pub title: String,
    /// Finished runs of it (experts' and agents').
    pub runs: u32,
    /// Experts' runs a reviewer approved: the task's gold.
    pub gold: u32,
    /// Active time experts spent on their finished runs of it, in minutes.
    pub expert_minutes: f64,
}

/// The dashboard: the tasks to choose from and the chosen one's scores.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct DashboardView {
    pub tasks: Vec<DashboardTask>,
    /// The task shown (the one asked for, else the first with a rubric).
    pub shown: Option<DashboardTask>,
    pub scores: Option<TaskDashboard>,
    /// A judge plug-in against the people who graded the same runs.
    pub judge: Option<JudgeAgreement>,
}

/// A run that counts: handed in, approved or returned (not open or discarded).
fn finished(e: &EpisodeRecord) -> bool {
    !e.status.is_open() && e.status != EpisodeStatus::Abandoned
}

/// Milliseconds as minutes, to a tenth (what a chart of effort shows).
fn minutes(ms: i64) -> f64 {
    (ms as f64 / 6_000.0).round() / 10.0
}

/// The dashboard of `task` (`world_id`, `task_id`), or of the first task
/// with finished runs and a rubric.
pub fn build(service: &Service, task: Option<(String, String)>) -> AppResult<DashboardView> {
    let mut by_task: BTreeMap<(String, String), Vec<EpisodeRecord>> = BTreeMap::new();
    for e in service.store().episodes(&EpisodeFilter::default())? {
        if finished(&e) {
            by_task
                .entry((e.world_id.clone(), e.task_id.clone()))
                .or_default()
                .push(e);
        }
    }
    let mut tasks = Vec::new();
    let mut rubric_of = BTreeMap::new();
    for ((world_id, task_id), runs) in &by_task {
        let Ok(world) = service.world(world_id) else {
            continue;
        };
        let Some(t) = world.task(task_id) else {
            continue;
        };
        let overlay = overlay_dir(service, &world);
        if let Ok(Some(r)) = grading::rubric_of(&world, Some(&overlay), task_id) {
            rubric_of.insert((world_id.clone(), task_id.clone()), (world.clone(), r));
        }
        let experts: Vec<&EpisodeRecord> = runs.iter().filter(|e| e.actor.is_expert()).collect();
        tasks.push(DashboardTask {
            world_id: world_id.clone(),
            task_id: task_id.clone(),
            title: t.title.clone(),
            runs: runs.len() as u32,
            gold: experts
                .iter()
                .filter(|e| e.status == EpisodeStatus::Approved)
                .count() as u32,
            expert_minutes: minutes(experts.iter().map(|e| e.active_ms.max(0)).sum()),
        });
    }
    let key = task.or_else(|| rubric_of.keys().next().cloned());
    let Some(key) = key else {
        return Ok(DashboardView {
            tasks,
            shown: None,
            scores: None,
            judge: None,
        });
    };
    let shown = tasks
        .iter()
        .find(|t| t.world_id == key.0 && t.task_id == key.1)
        .cloned()
        .ok_or_else(|| AppError::not_found(format!("Finished runs of the task \"{}\"", key.1)))?;
    let (world, rubric) = rubric_of.get(&key).ok_or_else(|| {
        AppError::new(
            "no_rubric",
            "This task has no rubric yet, so its runs have no score. Write one in the task's Rubric workspace first.",
        )
    })?;
    let runs = by_task.get(&key).map(Vec::as_slice).unwrap_or_default();
    let scores = grading::task_dashboard(service.store(), world, rubric, runs)?;
    let ids: Vec<String> = runs.iter().map(|r| r.id.clone()).collect();
    let judge = grading::judge_agreement(service.store(), rubric, &ids)?;
    Ok(DashboardView {
        tasks,
        shown: Some(shown),
        scores: Some(scores),
        judge: Some(judge),
    })
}

command! {
    /// The scores dashboard of a task (`null`s: the first one that has a rubric).
    #[tauri::command(async)]
    pub fn task_dashboard(state: State<'_, AppState>, world_id: Option<String>, task_id: Option<String>) -> AppResult<DashboardView> {
        build(state.service()?, world_id.zip(task_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::service;

    #[test]
    fn imported_agent_runs_show_on_their_tasks_dashboard() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        let empty = build(&s, None).unwrap();
        assert!(empty.tasks.is_empty() && empty.scores.is_none());
        let runs = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests-e2e/data/agent-runs.jsonl"
        );
        assert!(crate::grading::import(&s, runs)
            .unwrap()
            .problems
            .is_empty());
        let view = build(&s, None).unwrap();
        let shown = view.shown.expect("a task");
        assert_eq!(
            (shown.task_id.as_str(), shown.runs),
            ("cancel-no-refund", 2)
        );
        let scores = view.scores.expect("scores");
        assert_eq!(scores.agent_runs, 2);
        // The judged tone criterion is not graded yet: the good run waits;
        // the one that refunded failed a gate, so its 0 is decided.
        assert_eq!(scores.pending, 1);
        assert_eq!(scores.bins[0].agents, 1);
        let err = build(&s, Some(("support-desk".into(), "no-such-task".into()))).unwrap_err();
        assert_eq!(err.code, "not_found");
    }

    #[test]
    fn each_task_counts_its_gold_and_the_experts_active_time() {
        use understudy::store::Decision;
        use understudy::Action;
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        crate::testing::profile(&s, "Renee Okafor");
        let mut recorded = Vec::new();
        for minutes_spent in [3, 2] {
            let ep = s.start("support-desk", "duplicate-charge").unwrap();
            s.step(&ep.id, Action::message("Looking into it."), None)
                .unwrap();
            s.submit(&ep.id, None).unwrap();
            s.store()
                .save_active_time(&ep.id, minutes_spent * 60_000)
                .unwrap();
            recorded.push(ep.id);
        }
        // One approved (gold), one still waiting for a review.
        s.store()
            .add_review(&recorded[0], "Lee Park", Decision::Approve, "Clean.")
            .unwrap();
        let view = build(&s, None).unwrap();
        let task = view
            .tasks
            .iter()
            .find(|t| t.task_id == "duplicate-charge")
            .expect("the task is listed");
        assert_eq!((task.runs, task.gold), (2, 1));
        assert_eq!(task.expert_minutes, 5.0);
        assert_eq!(minutes(90_000), 1.5);
        assert_eq!(minutes(0), 0.0);
    }
}
