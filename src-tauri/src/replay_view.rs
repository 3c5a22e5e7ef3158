//! The replay view: a finished episode step by step, for the reviewer,
//! with the world's state after any step (rebuilt by the engine's
//! [`understudy::replay::replay_prefix`]) and the other runs of the same
//! task to compare it with.

use serde::Serialize;
use tauri::State;
use ts_rs::TS;
use understudy::store::EpisodeFilter;

use crate::episodes::StepView;
use crate::error::AppResult;
use crate::ipc::command;
use crate::queue::{self, QueueRow};
use crate::review::{self, TableDiff};
use crate::service::Service;
use crate::worlds::{TaskBrief, ToolInfo};
use crate::AppState;

/// One recorded run, whole.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ReplayView {
    pub episode: QueueRow,
    /// The task's brief, when the world still has the task.
    pub task: Option<TaskBrief>,
    /// The task's tools, to name the steps' actions.
    pub tools: Vec<ToolInfo>,
    /// Every step, undone ones included (marked `retracted`).
    pub steps: Vec<StepView>,
    /// What the run changed in the world by its end, field by field.
    pub final_state: Vec<TableDiff>,
    pub final_message: Option<String>,
    /// The world's files changed since the recording: the replayed states
    /// may differ from what the performer saw.
    pub world_changed: bool,
    /// The other finished runs of the same task, to compare with.
    pub others: Vec<QueueRow>,
}

/// The world's state at one point of a run.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ReplayState {
    /// Kept steps replayed (0: the seeded world).
    pub upto: u32,
    /// What had changed by then, field by field.
    pub tables: Vec<TableDiff>,
}

/// The run of `episode_id`, with its final state.
pub fn open(service: &Service, episode_id: &str) -> AppResult<ReplayView> {
    let trajectory = service.store().trajectory(episode_id)?;
    let record = &trajectory.record;
    let world = service.world(&record.world_id)?;
    let task = world.task(&record.task_id);
    let same_task = EpisodeFilter {
        world_id: Some(record.world_id.clone()),
        task_id: Some(record.task_id.clone()),
        ..EpisodeFilter::default()
    };
    let mut rows = queue::rows(service, &same_task)?;
    let Some(at) = rows.iter().position(|r| r.episode_id == record.id) else {
        return Err(crate::error::AppError::new(
            "not_reviewable",
            "This attempt has not been handed in yet, so there is nothing to review.",
        ));
    };
    let episode = rows.remove(at);
    Ok(ReplayView {
        episode,
        task: task.map(|t| TaskBrief::new(t, &world.meta.user)),
        tools: task
            .map(|t| {
                world
                    .expert_task_tool_specs(t)
                    .into_iter()
                    .map(ToolInfo::new)
                    .collect()
            })
            .unwrap_or_default(),
        steps: trajectory.steps.iter().map(StepView::new).collect(),
        final_state: review::tables_after(&world, &trajectory, None)?,
        final_message: record.final_message.clone(),
        world_changed: record.world_hash != world.content_hash,
        others: rows,
    })
}

/// What the run had changed in the world after its first `upto` kept steps.
pub fn state_after(service: &Service, episode_id: &str, upto: u32) -> AppResult<ReplayState> {
    let trajectory = service.store().trajectory(episode_id)?;
    let world = service.world(&trajectory.record.world_id)?;
    Ok(ReplayState {
        upto,
        tables: review::tables_after(&world, &trajectory, Some(upto as usize))?,
    })
}

command! {
    /// A finished episode step by step, with its final state and the other
    /// runs of its task.
    #[tauri::command(async)]
    pub fn open_replay(state: State<'_, AppState>, episode_id: String) -> AppResult<ReplayView> {
        open(state.service()?, &episode_id)
    }
}

command! {
    /// The world's state after the first `upto` kept steps of an episode
    /// (0: nothing changed yet), field by field against the seed.
    #[tauri::command(async)]
    pub fn replay_state(
        state: State<'_, AppState>,
        episode_id: String,
        upto: u32,
    ) -> AppResult<ReplayState> {
        state_after(state.service()?, &episode_id, upto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;
    use understudy::store::ExpertInput;
    use understudy::Action;

    #[test]
    fn a_run_replays_with_its_state_after_each_step_and_its_task_mates() {
        let dir = tempfile::tempdir().unwrap();
        let worlds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/worlds");
        let s = Service::open(dir.path(), Some(worlds)).unwrap();
        s.save_expert(
            None,
            ExpertInput {
                name: "Renee".into(),
                ..ExpertInput::default()
            },
        )
        .unwrap();
        let mut ids = Vec::new();
        for amount in [79.0, 50.0] {
            let ep = s.start("support-desk", "duplicate-charge").unwrap();
            s.step(
                &ep.id,
                Action::tool("get_ticket", json!({"ticket_id": "T-1042"})),
                Some("Read the ticket first".into()),
            )
            .unwrap();
            s.step(&ep.id, Action::message("oops"), None).unwrap();
            s.undo(&ep.id).unwrap();
            s.step(
                &ep.id,
                Action::tool(
                    "issue_refund",
                    json!({"invoice_id": "INV-24073", "amount": amount, "reason": "Duplicate charge", "ticket_id": "T-1042"}),
                ),
                None,
            )
            .unwrap();
            s.submit(&ep.id, None).unwrap();
            ids.push(ep.id);
        }
        let open_one = s.start("support-desk", "duplicate-charge").unwrap().id;
        let err = open(&s, &open_one).unwrap_err();
        assert_eq!(err.code, "not_reviewable");

        let view = open(&s, &ids[0]).unwrap();
        assert_eq!(view.steps.len(), 3);
        assert!(view.steps[1].retracted);
        assert_eq!(
            view.steps[0].rationale.as_deref(),
            Some("Read the ticket first")
        );
        assert_eq!(view.episode.steps, 2);
        assert!(!view.world_changed);
        assert_eq!(
            view.others
                .iter()
                .map(|r| r.episode_id.as_str())
                .collect::<Vec<_>>(),
            [ids[1].as_str()]
        );
        assert!(view.tools.iter().any(|t| t.name == "issue_refund"));
        let refunded = |tables: &[TableDiff]| {
            tables
                .iter()
                .find(|t| t.table == "invoices")
                .map(|t| t.changed[0].fields[0].after.clone())
        };
        assert_eq!(refunded(&view.final_state), Some(json!(7900)));

        // After the ticket was read nothing had changed; after the refund it had.
        assert!(state_after(&s, &ids[0], 1).unwrap().tables.is_empty());
        assert_eq!(
            refunded(&state_after(&s, &ids[1], 2).unwrap().tables),
            Some(json!(5000))
        );
        let err = state_after(&s, &ids[0], 3).unwrap_err();
        assert!(err
            .detail
            .unwrap_or_default()
            .contains("`upto` must be 0 to 2"));
    }
}
