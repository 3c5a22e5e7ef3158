//! Export and stored-replay speed.
//!
//! Run with `cargo bench --bench export`. Targets (2 cores):
//! - export to JSONL: at least 100k steps/s (native and TRL, from a store);
//! - `replay::replay_all`: at least 5k ten-step episodes/s on the mini world.
//!
//! Criterion reports throughput in elements/s: steps for the export
//! benches, episodes for the replay bench.

use std::path::PathBuf;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use understudy::export::{self, ExportOptions, Format, Source, WorldSet};
use understudy::replay;
use understudy::store::{Actor, EpisodeRecord, EpisodeStatus, StepRecord, Store};
use understudy::trajectory::ActionList;
use understudy::trajectory::Trajectory;
use understudy::{Action, Episode, World};

const EPISODES: usize = 200;
const STEPS_PER_EPISODE: usize = 50;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Ten actions of the mini world's pay-back task: reads, writes, a failing
/// guard, a script and messages.
fn ten_actions() -> Vec<Action> {
    [
        json!({"tool": "view_accounts", "args": {"search": "ada"}}),
        json!({"tool": "get_account", "args": {"account_id": "A-1"}}),
        json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25.0}}),
        json!({"message": "Sent 25 to Charles."}),
        json!({"tool": "transfer", "args": {"from_id": "A-3", "to_id": "A-1", "amount": 1}}),
        json!({"tool": "tag_doc", "args": {"doc_id": "d1", "tag": "paid"}}),
        json!({"tool": "view_accounts", "args": {"key": "A-2"}}),
        json!({"tool": "get_account", "args": {"account_id": "A-9"}}),
        json!({"message": "Anything else?"}),
        json!({"tool": "get_account", "args": {"account_id": "A-2"}}),
    ]
    .iter()
    .map(|a| Action::from_json(a).expect("a valid action"))
    .collect()
}

/// A store of `EPISODES` episodes of `STEPS_PER_EPISODE` real steps each
/// (observations from running the actions), written in one import.
fn big_store(world: &Arc<World>) -> (tempfile::TempDir, Store) {
    let actions = ten_actions();
    let mut ep = Episode::new(Arc::clone(world)).expect("episode");
    ep.set_enforce_limits(false);
    ep.reset("pay-back", 0).expect("reset");
    let steps: Vec<StepRecord> = (0..STEPS_PER_EPISODE)
        .map(|i| {
            let action = actions[i % actions.len()].clone();
            let out = ep.step(&action).expect("step");
            StepRecord {
                idx: i as u32,
                action,
                observation: out.observation,
                terminated: false,
                truncated: false,
                wall_at: "2025-03-04T09:00:00.000Z".into(),
                active_ms: i as i64 * 1000,
                rationale: (i % 3 == 0).then(|| "Because the policy says so.".to_string()),
                flag: None,
                retracted: i % 17 == 5,
                retracted_at: (i % 17 == 5).then(|| "2025-03-04T09:00:01.000Z".to_string()),
            }
        })
        .collect();
    let episodes: Vec<Trajectory> = (0..EPISODES)
        .map(|n| Trajectory {
            record: EpisodeRecord {
                id: format!("ep-{n:05}"),
                world_id: world.meta.id.clone(),
                world_version: world.meta.version.clone(),
                world_hash: world.content_hash.clone(),
                task_id: "pay-back".into(),
                seed: 0,
                actor: Actor::Expert { id: "bench".into() },
                status: EpisodeStatus::Submitted,
                created_at: "2025-03-04T09:00:00.000Z".into(),
                updated_at: "2025-03-04T09:30:00.000Z".into(),
                submitted_at: Some("2025-03-04T09:30:00.000Z".into()),
                active_ms: 1_800_000,
                final_message: Some("Anything else?".into()),
            },
            steps: steps.clone(),
        })
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path().join("bench.sqlite")).expect("store");
    store.import(&episodes).expect("import");
    (dir, store)
}

fn exports(c: &mut Criterion) {
    let world = Arc::new(World::load(repo().join("tests/worlds/mini")).expect("mini loads"));
    let (_dir, store) = big_store(&world);
    let worlds = WorldSet::single(Arc::clone(&world));
    let mut group = c.benchmark_group("export");
    group.sample_size(10);
    group.throughput(Throughput::Elements((EPISODES * STEPS_PER_EPISODE) as u64));
    for (name, format) in [
        ("native_jsonl", Format::Native),
        ("trl_jsonl", Format::Trl),
        ("openai_jsonl", Format::OpenAi),
    ] {
        let options = ExportOptions {
            format,
            include_retracted: format != Format::Native,
            ..ExportOptions::default()
        };
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut out = Vec::with_capacity(64 << 20);
                let s = export::write_jsonl(
                    &Source::Store(&store),
                    Some(&worlds),
                    &options,
                    &mut out,
                    &|| {},
                )
                .expect("export");
                assert_eq!(s.steps, EPISODES * STEPS_PER_EPISODE);
                out
            })
        });
    }
    group.finish();
}

fn replays(c: &mut Criterion) {
    let world = Arc::new(World::load(repo().join("tests/worlds/mini")).expect("mini loads"));
    let actions = ten_actions();
    const N: usize = 2000;
    let inputs: Vec<ActionList> = (0..N)
        .map(|i| ActionList {
            line: Some(i + 1),
            ..ActionList::new("pay-back", actions.clone())
        })
        .collect();
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("replay_all_mini_10_steps", |b| {
        b.iter(|| replay::replay_all(&world, &inputs, &|| {}).expect("replay"))
    });
    group.finish();
}

criterion_group!(benches, exports, replays);
criterion_main!(benches);
