//! Cost as the world grows: τ-retail's look-ups by key on the bundled world
//! and on copies with its users and orders repeated ×10 and ×100
//! (`understudy_testkit::scale`, written to a temp dir, never committed).
//!
//! Run with `cargo bench --bench scale`. Target (issue 13): each look-up
//! within 2× per call from ×1 to ×100. Each world's load time and the
//! memory one more session takes are printed beside the timings.
//!
//! One more session costs the pages it writes, not a copy of the world:
//! every episode reads the world's one seed image copy-on-write
//! (`crates/understudy-cowvfs`), so the figure stays flat from ×1 to ×100
//! (before it, 1 MB / 31 MB).
//! `SCALES=1,10` picks the factors (default `1,10,100`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use serde_json::{json, Value};
use understudy::{Action, Episode, World};

/// Steps run between two resets, so a long measurement does not grow the
/// trajectory without end (the resets are not timed).
const STEPS_PER_RESET: u64 = 500;

/// Sessions opened beside the first to measure what one more costs.
const EXTRA_SESSIONS: usize = 4;

/// Resident memory of this process, in bytes (Linux; 0 elsewhere).
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// The last record of a seed file: the one a scan in file order reaches last.
fn last_record(world_dir: &std::path::Path, file: &str) -> (String, Value) {
    let text = std::fs::read_to_string(world_dir.join("data").join(file)).expect("seed file");
    let Value::Object(map) = serde_json::from_str(&text).expect("seed JSON") else {
        panic!("{file} is an object keyed by id");
    };
    map.into_iter().next_back().expect("a record")
}

/// The look-ups a τ-retail agent makes, each by a key of the newest user
/// and order in the world.
fn look_ups(world_dir: &std::path::Path) -> Vec<(&'static str, Action)> {
    let (user_id, user) = last_record(world_dir, "users.json");
    let (order_id, order) = last_record(world_dir, "orders.json");
    let product_id = order["items"][0]["product_id"].clone();
    vec![
        (
            "find_user_id_by_email",
            Action::tool("find_user_id_by_email", json!({"email": user["email"]})),
        ),
        (
            "find_user_id_by_name_zip",
            Action::tool(
                "find_user_id_by_name_zip",
                json!({
                    "first_name": user["name"]["first_name"],
                    "last_name": user["name"]["last_name"],
                    "zip": user["address"]["zip"],
                }),
            ),
        ),
        (
            "get_user_details",
            Action::tool("get_user_details", json!({"user_id": user_id})),
        ),
        (
            "get_order_details",
            Action::tool("get_order_details", json!({"order_id": order_id})),
        ),
        (
            "get_product_details",
            Action::tool("get_product_details", json!({"product_id": product_id})),
        ),
    ]
}

fn scales() -> Vec<usize> {
    std::env::var("SCALES")
        .unwrap_or_else(|_| "1,10,100".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("SCALES: whole numbers, e.g. 1,10,100")
        })
        .collect()
}

fn scale(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    for factor in scales() {
        let dir = tempfile::tempdir().expect("tempdir");
        understudy_testkit::scale::write_scaled_tau_retail(factor, dir.path())
            .expect("scaled world written");
        let before = resident_bytes();
        let started = Instant::now();
        let world = Arc::new(World::load(dir.path()).expect("scaled world loads"));
        let loaded = started.elapsed();
        let after_load = resident_bytes();
        let task = world.tasks.keys().next().expect("a task").clone();
        let mut episode = Episode::new(Arc::clone(&world)).expect("episode");
        episode.set_enforce_limits(false);
        episode.reset(&task, 0).expect("reset");
        let after_session = resident_bytes();
        // Several at once, averaged: the allocator may hand the first one
        // pages the load freed, which would hide what a session costs.
        let extra: Vec<Episode> = (0..EXTRA_SESSIONS)
            .map(|_| {
                let mut e = Episode::new(Arc::clone(&world)).expect("another episode");
                e.reset(&task, 0).expect("reset");
                e
            })
            .collect();
        let after_extra = resident_bytes();
        eprintln!(
            "scale/x{factor}: load {:.2} s, +{} MB loading, +{} MB first session, +{} MB one more session",
            loaded.as_secs_f64(),
            after_load.saturating_sub(before) >> 20,
            after_session.saturating_sub(after_load) >> 20,
            (after_extra.saturating_sub(after_session) / EXTRA_SESSIONS as u64) >> 20,
        );
        drop(extra);

        for (name, action) in look_ups(dir.path()) {
            let first = episode.step(&action).expect("step");
            assert!(
                first.observation.ok,
                "x{factor} {name}: {:?}",
                first.observation
            );
            group.bench_with_input(
                BenchmarkId::new(name, format!("x{factor}")),
                &action,
                |b, a| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        let mut done = 0;
                        while done < iters {
                            episode.reset(&task, 0).expect("reset");
                            let n = (iters - done).min(STEPS_PER_RESET);
                            let started = Instant::now();
                            for _ in 0..n {
                                std::hint::black_box(episode.step(a).expect("step"));
                            }
                            total += started.elapsed();
                            done += n;
                        }
                        total
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, scale);
criterion_main!(benches);
