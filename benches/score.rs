//! Scoring speed, replay included: ten-step support-desk episodes (the
//! duplicate-charge gold run plus look-ups) replayed from the seed and
//! scored against their rubric, on every core.
//!
//! Run with `cargo bench --bench score`. Target: at least 5,000 ten-step
//! episodes per second on 2 cores.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use understudy::rubric::batch::{self, RunToScore};
use understudy::rubric::{self, RubricSet};
use understudy::trajectory::ActionList;
use understudy::{Action, Episode, World};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The duplicate-charge gold run padded with look-ups to ten steps.
fn ten_steps(world: &World) -> Vec<Action> {
    let mut actions: Vec<Action> = world
        .task("duplicate-charge")
        .expect("task")
        .solution
        .iter()
        .map(|a| Action::from_json(a).expect("action"))
        .collect();
    while actions.len() < 10 {
        actions.insert(
            0,
            Action::tool("get_ticket", json!({"ticket_id": "T-1042"})),
        );
    }
    actions
}

fn score(c: &mut Criterion) {
    let world = Arc::new(
        World::load(repo().join("fixtures/worlds/support-desk")).expect("support-desk loads"),
    );
    let rubrics = RubricSet::load(&world).expect("rubrics load");
    let actions = ten_steps(&world);
    let rubric = Arc::clone(rubrics.get("duplicate-charge").expect("rubric"));

    let mut episode = Episode::new(Arc::clone(&world)).expect("episode");
    let s = rubric::replay_and_score(&mut episode, &rubric, 0, &actions, &[]).expect("scored");
    assert_eq!(
        s.value,
        Some(1.0),
        "the padded gold run still earns full marks"
    );

    let mut group = c.benchmark_group("score");
    group.throughput(Throughput::Elements(1));
    // For comparison: the replay alone, without scoring.
    group.bench_function("ten_step_replay_only/one_core", |b| {
        b.iter(|| rubric::replay(&mut episode, "duplicate-charge", 0, &actions).expect("replayed"))
    });
    group.bench_function("ten_step_episode/one_core", |b| {
        b.iter(|| {
            rubric::replay_and_score(&mut episode, &rubric, 0, &actions, &[]).expect("scored")
        })
    });

    const BATCH: usize = 2000;
    let trajectories: Vec<RunToScore> = (0..BATCH)
        .map(|_| RunToScore {
            run: ActionList::new("duplicate-charge", actions.clone()),
            judgments: Vec::new(),
            expert: false,
        })
        .collect();
    group.throughput(Throughput::Elements(BATCH as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("ten_step_episodes/all_cores", |b| {
        b.iter(|| batch::score_all(&world, &rubrics, &trajectories, None, &|| {}).expect("scored"))
    });
    group.finish();
}

criterion_group!(benches, score);
criterion_main!(benches);
