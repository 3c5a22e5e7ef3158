//! Durable recording at the physical limit: the disk's own fsync latency
//! beside the recorder's per-step commit at `full` durability, measured in
//! the same run on the same folder (the target dir), so the ratio between
//! them says what the store adds to the disk.
//!
//! Run with `cargo bench --bench durability`. Target (issue 13): recorder
//! step p99 <= 1.5x the raw fsync p99. Criterion reports medians; the
//! percentiles are printed after each benchmark as
//! `percentiles <name>: n=<count> p50=<us> p99=<us>` (read by
//! `scripts/bench`).
//!
//! The recorded step is the mini world's `get_account`, a few microseconds
//! of engine work, so the figure is the commit's. The same step is also
//! measured on a store that checkpoints the way SQLite does by default
//! (inside a commit, every 1000 pages of log), to show what the background
//! checkpointer saves.

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use understudy::recorder::Recorder;
use understudy::store::{Actor, Durability, Store};
use understudy::{Action, World};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every timed iteration's duration, for the percentiles criterion does
/// not report.
#[derive(Default, Clone)]
struct Samples(Arc<Mutex<Vec<Duration>>>);

impl Samples {
    fn push(&self, d: Duration) {
        if let Ok(mut v) = self.0.lock() {
            v.push(d);
        }
    }

    fn report(&self, name: &str) {
        let Ok(mut v) = self.0.lock() else { return };
        if v.is_empty() {
            return;
        }
        v.sort_unstable();
        let at = |q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
        println!(
            "percentiles {name}: n={} p50={:.1} p99={:.1}",
            v.len(),
            at(0.50).as_secs_f64() * 1e6,
            at(0.99).as_secs_f64() * 1e6
        );
    }
}

/// A folder on the disk the benches build on (the target dir).
fn bench_dir() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(base).expect("target tmp dir");
    tempfile::tempdir_in(base).expect("tempdir in the target dir")
}

/// write + fdatasync of a small file, in a loop: the disk's floor for any
/// durable commit.
fn raw_fsync(c: &mut Criterion, dir: &Path) {
    let mut file = std::fs::File::create(dir.join("fsync.bin")).expect("create");
    let page = [0x5au8; 4096];
    let samples = Samples::default();
    c.bench_function("durability/raw_fsync", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t = Instant::now();
                file.seek(SeekFrom::Start(0)).expect("seek");
                file.write_all(&page).expect("write");
                file.sync_data().expect("fdatasync");
                let d = t.elapsed();
                samples.push(d);
                total += d;
            }
            total
        })
    });
    samples.report("durability/raw_fsync");
}

/// One recorded step at `full` durability: engine step plus durable commit,
/// on `store` (a fresh file in `dir`), reported as `name`.
fn recorder_step(c: &mut Criterion, name: &str, store: Store) {
    let world = Arc::new(World::load(repo().join("tests/worlds/mini")).expect("mini world"));
    let store = Arc::new(store);
    let start = || {
        Recorder::start(
            Arc::clone(&store),
            Arc::clone(&world),
            "pay-back",
            Actor::Agent {
                model: "bench".into(),
            },
            0,
        )
        .expect("episode starts")
    };
    let action = Action::tool("get_account", serde_json::json!({"account_id": "A-1"}));
    let mut rec = start();
    let samples = Samples::default();
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if rec.is_done() || rec.steps().len() >= 15 {
                    rec = start();
                }
                let t = Instant::now();
                rec.step(action.clone(), None).expect("step recorded");
                let d = t.elapsed();
                samples.push(d);
                total += d;
            }
            total
        })
    });
    samples.report(name);
}

fn durability(c: &mut Criterion) {
    let dir = bench_dir();
    raw_fsync(c, dir.path());
    let store = Store::open_with(dir.path().join("store.sqlite"), Durability::Full);
    recorder_step(c, "durability/recorder_step_full", store.expect("store"));
    // The same step without the fsync: what the engine and SQLite add to
    // the disk's part.
    let fast = Store::open_with(dir.path().join("fast.sqlite"), Durability::Fast);
    recorder_step(c, "durability/recorder_step_fast", fast.expect("store"));
    let inline =
        Store::open_with_inline_checkpoints(dir.path().join("inline.sqlite"), Durability::Full);
    recorder_step(
        c,
        "durability/recorder_step_full_inline_checkpoints",
        inline.expect("store"),
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = durability
}
criterion_main!(benches);
