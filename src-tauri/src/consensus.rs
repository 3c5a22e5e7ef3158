//! Demonstration agreement for the reviewer: where the experts' handed-in
//! runs of one task end differently or act differently, before any of them
//! is approved as gold. Each run's final state comes from the replay view's
//! diff ([`crate::review::tables_after`]); the comparison is the engine's
//! ([`understudy::consensus::compare`]).

use serde::Serialize;
use tauri::State;
use ts_rs::TS;
use understudy::consensus::{self, ChangedField, Consensus, RunOutcome};
use understudy::store::{EpisodeFilter, EpisodeStatus};

use crate::error::{AppError, AppResult};
use crate::ipc::command;
use crate::queue::{self, QueueRow};
use crate::review;
use crate::service::Service;
use crate::world_labels::WorldLabels;
use crate::AppState;

/// The field name of a record compared whole (added or removed).
pub const WHOLE_RECORD: &str = "(whole record)";

/// The experts' runs of one task, compared.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ConsensusView {
    pub task_title: String,
    /// The runs compared (handed in or approved, by experts), in the
    /// order the comparison's lists use.
    pub runs: Vec<QueueRow>,
    pub consensus: Consensus,
    /// What the world calls the tables and columns the lists name.
    #[serde(flatten)]
    #[ts(flatten)]
    pub labels: WorldLabels,
}

/// The comparison of the experts' runs of a task.
pub fn build(service: &Service, world_id: &str, task_id: &str) -> AppResult<ConsensusView> {
    let world = service.world(world_id)?;
    let filter = EpisodeFilter {
        world_id: Some(world_id.to_string()),
        task_id: Some(task_id.to_string()),
        actor_kind: Some("expert".into()),
        ..EpisodeFilter::default()
    };
    let runs: Vec<QueueRow> = queue::rows(service, &filter)?
        .into_iter()
        .filter(|r| matches!(r.status, EpisodeStatus::Submitted | EpisodeStatus::Approved))
        .collect();
    if runs.len() < 2 {
        return Err(AppError::new(
            "too_few_runs",
            "Agreement needs at least two experts' runs of this task that are handed in or approved.",
        ));
    }
    let mut outcomes = Vec::with_capacity(runs.len());
    for r in &runs {
        let trajectory = service.store().trajectory(&r.episode_id)?;
        let mut changed = Vec::new();
        for t in review::tables_after(&world, &trajectory, None)? {
            // A record added or removed compares whole: "added" in one run
            // and absent in another is one difference, not one per field.
            let whole = |rec: &review::RecordDiff, after: bool| {
                let fields: serde_json::Map<String, serde_json::Value> = rec
                    .fields
                    .iter()
                    .map(|f| {
                        (
                            f.field.clone(),
                            if after {
                                f.after.clone()
                            } else {
                                f.before.clone()
                            },
                        )
                    })
                    .collect();
                serde_json::Value::Object(fields)
            };
            for rec in &t.added {
                changed.push(ChangedField {
                    table: t.table.clone(),
                    key: rec.key.clone(),
                    field: WHOLE_RECORD.into(),
                    before: serde_json::Value::Null,
                    after: whole(rec, true),
                });
            }
            for rec in &t.removed {
                changed.push(ChangedField {
                    table: t.table.clone(),
                    key: rec.key.clone(),
                    field: WHOLE_RECORD.into(),
                    before: whole(rec, false),
                    after: serde_json::Value::Null,
                });
            }
            for rec in &t.changed {
                for f in &rec.fields {
                    changed.push(ChangedField {
                        table: t.table.clone(),
                        key: rec.key.clone(),
                        field: f.field.clone(),
                        before: f.before.clone(),
                        after: f.after.clone(),
                    });
                }
            }
        }
        outcomes.push(RunOutcome {
            episode_id: r.episode_id.clone(),
            changed,
            actions: trajectory.actions(),
        });
    }
    Ok(ConsensusView {
        task_title: runs
            .first()
            .map(|r| r.task_title.clone())
            .unwrap_or_default(),
        consensus: consensus::compare(&outcomes),
        runs,
        labels: WorldLabels::of(&world),
    })
}

command! {
    /// Where the experts' runs of a task diverge, field by field and call by call.
    #[tauri::command(async)]
    pub fn task_consensus(state: State<'_, AppState>, world_id: String, task_id: String) -> AppResult<ConsensusView> {
        build(state.service()?, &world_id, &task_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{profile, service};
    use serde_json::json;
    use understudy::Action;

    #[test]
    fn two_experts_runs_differ_in_the_refund_they_gave() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        for (name, amount) in [("Renee", 79.0), ("Lee", 50.0)] {
            profile(&s, name);
            let ep = s.start("support-desk", "duplicate-charge").unwrap();
            s.step(
                &ep.id,
                Action::tool("get_ticket", json!({"ticket_id": "T-1042"})),
                None,
            )
            .unwrap();
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
            if name == "Renee" {
                let err = build(&s, "support-desk", "duplicate-charge").unwrap_err();
                assert_eq!(err.code, "too_few_runs");
            }
        }
        let view = build(&s, "support-desk", "duplicate-charge").unwrap();
        assert_eq!(view.runs.len(), 2);
        let c = &view.consensus;
        assert!(!c.unanimous);
        let refunded = c
            .fields
            .iter()
            .find(|f| f.table == "invoices" && !f.agreed)
            .expect("the invoice differs");
        assert_eq!(refunded.values, [json!(7900), json!(5000)]);
        // The reviewer reads the world's words for the table and the field.
        assert_eq!(view.labels.table_titles["invoices"], "Invoices");
        assert_eq!(
            view.labels.column_labels["invoices"]["refunded_cents"],
            "Refunded so far"
        );
        let look = c.actions.iter().find(|a| a.tool == "get_ticket").unwrap();
        assert!(look.agreed);
        assert_eq!(c.actions_agreed, 1);
    }
}
