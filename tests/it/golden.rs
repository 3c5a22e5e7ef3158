//! Golden outputs: every task solution of the mini, support-desk,
//! contract-review, underwriting, month-end-close and τ-airline worlds, run from reset, with each step's observation and the
//! final state diff, compared with the snapshot files in
//! `tests/it/snapshots/` (insta). A change in what an agent or an expert
//! would see fails here with a readable diff; accept a deliberate change
//! with `cargo insta review` (or `INSTA_UPDATE=always cargo test`).
//! τ-retail's 500 tasks are covered by the τ-bench conformance test.

use std::sync::Arc;

use serde_json::{json, Value};
use understudy::{Action, Episode, World};
use understudy_testkit as common;

/// Reset, every solution step and the final changes, as one JSON value.
fn transcript(world: &Arc<World>, task: &str) -> Value {
    let mut ep = Episode::new(Arc::clone(world)).expect("episode");
    ep.set_enforce_limits(false);
    let reset = ep.reset(task, 0).expect("reset");
    let mut steps = Vec::new();
    for step in &world.task(task).expect("task").solution {
        let action = Action::from_json(step).expect("solution actions parse");
        let out = ep.step(&action).expect("step");
        steps.push(json!({"action": action, "outcome": out}));
    }
    json!({
        "reset": reset,
        "steps": steps,
        "changes": ep.changes().expect("changes"),
    })
}

fn check_world(world: Arc<World>) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots");
    settings.bind(|| {
        for task in world.tasks.keys() {
            let name = format!("{}__{}", world.meta.id, task);
            insta::assert_json_snapshot!(name, transcript(&world, task));
        }
    });
}

#[test]
fn mini_solutions_match_their_snapshots() {
    check_world(common::mini());
}

#[test]
fn support_desk_solutions_match_their_snapshots() {
    check_world(common::world("support-desk"));
}

#[test]
fn tau_airline_solutions_match_their_snapshots() {
    check_world(common::world("tau-airline"));
}

#[test]
fn contract_review_solutions_match_their_snapshots() {
    check_world(common::world("contract-review"));
}

#[test]
fn underwriting_solutions_match_their_snapshots() {
    check_world(common::world("underwriting"));
}

#[test]
fn month_end_close_solutions_match_their_snapshots() {
    check_world(common::world("month-end-close"));
}

/// The seed jobs' reference solutions are demonstrations: every step says
/// why, in the expert's words, so recorded gold carries the reasoning
/// before each action (τ-bench's ported solutions have none to carry).
#[test]
fn every_step_of_the_seed_jobs_solutions_says_why() {
    for name in [
        "support-desk",
        "contract-review",
        "underwriting",
        "month-end-close",
    ] {
        let world = World::load(common::world_dir(name)).expect("the world loads");
        for (id, task) in &world.tasks {
            let steps = task.solution_steps().expect("solution steps parse");
            assert!(!steps.is_empty(), "{name}/{id} has no solution");
            for (i, step) in steps.iter().enumerate() {
                assert!(
                    step.why.as_deref().is_some_and(|w| !w.trim().is_empty()),
                    "{name}/{id}: solution step {} has no why",
                    i + 1
                );
            }
        }
    }
}
