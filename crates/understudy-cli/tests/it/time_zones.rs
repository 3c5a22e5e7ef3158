//! Observations do not depend on the host's time zone: every bundled task's
//! solution, replayed by the real binary under different `TZ` values, gives
//! the same bytes. The C library reads `TZ` once per process, so each zone
//! needs its own process; that is why this drives the CLI.

use understudy_testkit as common;

use std::path::Path;
use std::process::Command;

use serde_json::json;
use understudy::World;

/// Zones far from UTC on both sides of it, by name and as a POSIX rule (which
/// needs no zone database).
const ZONES: &[&str] = &["UTC", "Asia/Tokyo", "America/Los_Angeles", "XYZ-9"];

/// One `{"task_id", "actions"}` line per task: each task's own solution.
fn solutions_jsonl(world: &Path) -> String {
    let world = World::load(world).unwrap_or_else(|e| panic!("{}: {e}", world.display()));
    world
        .tasks
        .iter()
        .map(|(id, task)| json!({"task_id": id, "actions": task.solution}).to_string() + "\n")
        .collect()
}

/// The replay output of `input` in `world` under `TZ=zone`.
fn replay_under(zone: &str, world: &Path, input: &Path) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_understudy"))
        .env("TZ", zone)
        .args(["replay", "--world"])
        .arg(world)
        .arg("--input")
        .arg(input)
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "replay in {} under TZ={zone} failed: {}",
        world.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The mini world plus a read tool that shows local and UTC time through
/// SQLite's zone modifiers, and a task whose solution calls it.
fn clock_world() -> tempfile::TempDir {
    let dir = common::copy_world(&common::mini_dir());
    common::write(
        dir.path(),
        "tools/clock.toml",
        r#"name = "clock"
description = "What time is it here?"
kind = "read"

[result]
query = "SELECT datetime('now', 'localtime') AS local, strftime('%H:%M', 'now', 'LocalTime') AS hour, datetime('2025-01-01 09:00:00', 'utc') AS utc, date('now', 'localtime', '+1 day') AS tomorrow"
shape = "row"
"#,
    );
    let tasks = std::fs::read_to_string(dir.path().join("tasks/tasks.toml")).expect("tasks");
    common::write(
        dir.path(),
        "tasks/tasks.toml",
        &format!(
            "{tasks}\n[[tasks]]\nid = \"what-time\"\ntitle = \"What time is it\"\ninstruction = \"Check the clock.\"\nopening_message = \"What time is it?\"\n\n[[tasks.solution]]\ntool = \"clock\"\nargs = {{}}\n"
        ),
    );
    dir
}

#[test]
fn localtime_and_utc_modifiers_read_the_world_clock_in_utc() {
    let world = clock_world();
    let input = world.path().join("solutions.jsonl");
    std::fs::write(&input, solutions_jsonl(world.path())).expect("write input");
    let out = replay_under("Asia/Tokyo", world.path(), &input);
    let text = String::from_utf8_lossy(&out);
    let line = text
        .lines()
        .find(|l| l.contains("what-time"))
        .expect("the clock task was replayed");
    assert!(
        line.contains(r#"\"local\": \"2025-01-01 09:00:00\""#),
        "{line}"
    );
    assert!(line.contains(r#"\"hour\": \"09:00\""#), "{line}");
    assert!(
        line.contains(r#"\"utc\": \"2025-01-01 09:00:00\""#),
        "{line}"
    );
    assert!(line.contains(r#"\"tomorrow\": \"2025-01-02\""#), "{line}");
}

#[test]
fn every_bundled_task_gives_the_same_bytes_in_every_time_zone() {
    let clock = clock_world();
    let mut worlds = common::fixture_worlds();
    worlds.push(common::mini_dir());
    worlds.push(clock.path().to_path_buf());
    let inputs = tempfile::tempdir().expect("tempdir");
    for (i, world) in worlds.iter().enumerate() {
        let input = inputs.path().join(format!("{i}.jsonl"));
        std::fs::write(&input, solutions_jsonl(world)).expect("write input");
        let reference = replay_under(ZONES[0], world, &input);
        assert!(!reference.is_empty(), "{}: no output", world.display());
        for zone in &ZONES[1..] {
            let other = replay_under(zone, world, &input);
            assert!(
                other == reference,
                "{}: the replay under TZ={zone} differs from TZ={}",
                world.display(),
                ZONES[0]
            );
        }
    }
}
