//! Engine speed: reset, a read step and a write step on the support-desk
//! world, and reset on a ~10k-row world.
//!
//! Run with `cargo bench --bench engine`. Targets: step <= 20 us median
//! (each support-desk read tool: `support_desk/read/<tool>`), reset <= 200
//! us for a world of about 10k rows.
//!
//! `SUPPORT_DESK_BASELINE=<world folder>` also times the read tools of
//! that copy of the support desk (`support_desk_baseline/read/<tool>`),
//! so an earlier version of its SQL can be measured in the same run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use understudy::world::ToolKind;
use understudy::{Action, Episode, World};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The first read and the first write step of the support desk's reference
/// solutions, with the task they belong to.
fn pick_steps(world: &World) -> (String, Action, String, Vec<Action>) {
    let mut read = None;
    let mut write = None;
    for (id, task) in &world.tasks {
        let actions: Vec<Action> = task
            .solution
            .iter()
            .filter_map(|s| Action::from_json(s).ok())
            .collect();
        for (i, a) in actions.iter().enumerate() {
            let Some(name) = a.tool_name() else { continue };
            let kind = world
                .tools
                .get(name)
                .map(|t| t.kind)
                .unwrap_or(ToolKind::Read);
            if kind == ToolKind::Read && read.is_none() {
                read = Some((id.clone(), a.clone()));
            }
            if kind == ToolKind::Write && write.is_none() {
                write = Some((id.clone(), actions[..=i].to_vec()));
            }
        }
    }
    let (read_task, read) = read.expect("a read step in some solution");
    let (write_task, write) = write.expect("a write step in some solution");
    (read_task, read, write_task, write)
}

/// A copy of the mini test world with ~10k seeded rows.
fn big_world() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&repo().join("tests/worlds/mini"), dir.path());
    let mut csv = String::from("id,owner,balance,frozen\n");
    for i in 1..=10_000 {
        csv.push_str(&format!(
            "A-{i},Customer number {i} of the big bank,{}.25,false\n",
            i % 977
        ));
    }
    std::fs::write(dir.path().join("data/accounts.csv"), csv).expect("write");
    let path = dir.path().to_path_buf();
    (dir, path)
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for entry in std::fs::read_dir(src).expect("read_dir").flatten() {
        let to = dst.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).expect("copy");
        }
    }
}

/// The first call of each read tool in the reference solutions, with its
/// task, in tool order.
fn read_calls(world: &World) -> Vec<(String, String, Action)> {
    let mut calls: Vec<(String, String, Action)> = Vec::new();
    for (task_id, task) in &world.tasks {
        for a in task
            .solution
            .iter()
            .filter_map(|s| Action::from_json(s).ok())
        {
            let Some(name) = a.tool_name() else { continue };
            let read = world
                .tools
                .get(name)
                .is_some_and(|t| t.kind == ToolKind::Read);
            if read && !calls.iter().any(|(n, _, _)| n == name) {
                calls.push((name.to_string(), task_id.clone(), a.clone()));
            }
        }
    }
    calls.sort_by(|a, b| a.0.cmp(&b.0));
    calls
}

/// Each read tool's step, in an episode of the task whose solution calls it.
fn read_tools(c: &mut Criterion, label: &str, world: &Arc<World>) {
    for (tool, task, action) in read_calls(world) {
        let mut ep = Episode::new(Arc::clone(world)).expect("episode");
        ep.set_enforce_limits(false);
        ep.reset(&task, 0).expect("reset");
        let out = ep.step(&action).expect("step");
        assert!(out.observation.ok, "{tool}: {}", out.observation.text);
        c.bench_function(&format!("{label}/read/{tool}"), |b| {
            b.iter(|| ep.step(&action).expect("step"))
        });
    }
}

fn engine(c: &mut Criterion) {
    let world = Arc::new(
        World::load(repo().join("fixtures/worlds/support-desk")).expect("support-desk loads"),
    );
    let (read_task, read, write_task, write) = pick_steps(&world);
    let (last, before) = write.split_last().expect("write step");
    let mut ep = Episode::new(Arc::clone(&world)).expect("episode");
    ep.set_enforce_limits(false);
    ep.reset(&write_task, 0).expect("reset");

    // Reset after an episode that changed the world (the realistic case).
    c.bench_function("support_desk/reset_after_write", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for a in before.iter().chain([last]) {
                    ep.step(a).expect("step");
                }
                let start = Instant::now();
                ep.reset(&write_task, 0).expect("reset");
                total += start.elapsed();
            }
            total
        })
    });

    read_tools(c, "support_desk", &world);
    if let Some(dir) = std::env::var_os("SUPPORT_DESK_BASELINE") {
        let baseline = Arc::new(World::load(PathBuf::from(dir)).expect("baseline world loads"));
        read_tools(c, "support_desk_baseline", &baseline);
    }

    ep.reset(&read_task, 0).expect("reset");
    c.bench_function("support_desk/read_step", |b| {
        b.iter(|| ep.step(&read).expect("step"))
    });

    c.bench_function("support_desk/write_step", |b| {
        // Only the write step is timed; the reset and the steps leading to
        // it (so its guards pass) are set-up.
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                ep.reset(&write_task, 0).expect("reset");
                for a in before {
                    ep.step(a).expect("step");
                }
                let start = Instant::now();
                let out = ep.step(last).expect("step");
                total += start.elapsed();
                assert!(out.observation.ok, "{}", out.observation.text);
            }
            total
        })
    });

    // Engine overhead on a trivial tool, without a heavy query.
    let mini = Arc::new(World::load(repo().join("tests/worlds/mini")).expect("mini loads"));
    let mut mini_ep = Episode::new(Arc::clone(&mini)).expect("episode");
    mini_ep.set_enforce_limits(false);
    mini_ep.reset("pay-back", 0).expect("reset");
    let get = Action::tool("get_account", serde_json::json!({"account_id": "A-1"}));
    c.bench_function("mini/read_step", |b| {
        b.iter(|| mini_ep.step(&get).expect("step"))
    });
    let transfer = Action::tool(
        "transfer",
        serde_json::json!({"from_id": "A-1", "to_id": "A-2", "amount": 1}),
    );
    c.bench_function("mini/write_step", |b| {
        b.iter(|| mini_ep.step(&transfer).expect("step"))
    });
    let msg = Action::message("hello");
    c.bench_function("mini/message_step", |b| {
        b.iter(|| mini_ep.step(&msg).expect("step"))
    });

    let (_keep, big) = big_world();
    let big = Arc::new(World::load(&big).expect("big world loads"));
    let mut big_ep = Episode::new(Arc::clone(&big)).expect("episode");
    big_ep.set_enforce_limits(false);
    big_ep.reset("pay-back", 0).expect("reset");
    c.bench_function("big_10k_rows/reset_after_write", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                big_ep.step(&transfer).expect("step");
                let start = Instant::now();
                big_ep.reset("pay-back", 0).expect("reset");
                total += start.elapsed();
            }
            total
        })
    });
}

criterion_group!(benches, engine);
criterion_main!(benches);
