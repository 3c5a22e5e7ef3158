//! Crash test: a child process records steps in a loop and is killed with
//! SIGKILL at random moments. Every step it reported as recorded must be in
//! the store, the store must pass the integrity check, and the episode must
//! resume. The same with many sessions recording at once, whose steps
//! are group-committed: no step reported by any of them may be lost.

use understudy_testkit as common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use understudy::store::Store;

fn spawn(store: &std::path::Path, resume: Option<&str>) -> std::process::Child {
    spawn_sessions(store, resume, 1)
}

fn spawn_sessions(
    store: &std::path::Path,
    resume: Option<&str>,
    sessions: usize,
) -> std::process::Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_understudy"));
    cmd.args(["debug", "record-loop", "--task", "pay-back"])
        .arg("--sessions")
        .arg(sessions.to_string())
        .arg("--store")
        .arg(store)
        .arg("--world")
        .arg(common::mini_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(id) = resume {
        cmd.args(["--resume", id]);
    }
    cmd.spawn().expect("spawn the recorder")
}

/// The next number of a simple deterministic pseudo-random sequence
/// (xorshift), for kill points.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Reads the child's `step <episode> <idx>` lines into `reported` until
/// `steps` were reported (or it exited), then kills it with SIGKILL. The
/// episode of the last line read, if any.
fn kill_after_steps(
    mut child: std::process::Child,
    steps: usize,
    reported: &mut HashSet<(String, u32)>,
) -> Option<String> {
    let mut reader = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut last = None;
    let mut seen = 0;
    while seen < steps {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let ["step", id, idx] = parts[..] {
            reported.insert((id.to_string(), idx.parse().unwrap()));
            last = Some(id.to_string());
            seen += 1;
        }
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    last
}

/// Opens the store after a kill: it must open, pass the integrity check,
/// and hold every step that was reported.
fn reopen_with_every_reported_step(
    path: &std::path::Path,
    reported: &HashSet<(String, u32)>,
) -> Store {
    let store = Store::open(path).expect("the store opens after a kill");
    store.integrity_check().expect("integrity after a kill");
    for (id, idx) in reported {
        let steps = store.steps(id).expect("steps");
        assert!(
            steps.iter().any(|s| s.idx == *idx),
            "step {idx} of {id} was reported but is missing"
        );
    }
    store
}

#[test]
fn sigkill_loses_no_reported_step() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.sqlite");
    let mut reported: HashSet<(String, u32)> = HashSet::new();
    let mut last_open: Option<String> = None;
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let started = Instant::now();
    for round in 0..25 {
        let child = spawn(&path, last_open.as_deref());
        let kill_after = 1 + (next(&mut state) % 12) as usize;
        if let Some(id) = kill_after_steps(child, kill_after, &mut reported) {
            last_open = Some(id);
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "crash test is taking too long (round {round})"
        );
        let store = reopen_with_every_reported_step(&path, &reported);
        // The episode the child was writing must be resumable, unless it
        // was closed because it hit its step limit.
        if let Some(id) = &last_open {
            if !store.episode(id).unwrap().status.is_open() {
                last_open = None;
            }
        }
    }
    assert!(
        reported.len() >= 25,
        "the child recorded too few steps: {}",
        reported.len()
    );
}

/// Eight sessions record at once (their steps share commits) and the
/// process is killed at random moments: every step any of them reported is
/// stored, each episode's steps are whole and in order (0, 1, 2, ...), and
/// the file is sound.
#[test]
fn sigkill_during_concurrent_group_commits_loses_no_reported_step() {
    const SESSIONS: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash-concurrent.sqlite");
    let mut reported: HashSet<(String, u32)> = HashSet::new();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let started = Instant::now();
    for round in 0..12 {
        let child = spawn_sessions(&path, None, SESSIONS);
        let kill_after = 1 + (next(&mut state) % 60) as usize;
        kill_after_steps(child, kill_after, &mut reported);
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "crash test is taking too long (round {round})"
        );
        let store = reopen_with_every_reported_step(&path, &reported);
        for (id, _) in &reported {
            let steps = store.steps(id).expect("steps");
            let order: Vec<u32> = steps.iter().map(|s| s.idx).collect();
            assert_eq!(
                order,
                (0..steps.len() as u32).collect::<Vec<_>>(),
                "episode {id}: steps missing or out of order"
            );
        }
    }
    let episodes: HashSet<&String> = reported.iter().map(|(id, _)| id).collect();
    assert!(
        reported.len() >= 50 && episodes.len() >= SESSIONS,
        "the sessions recorded too little: {} steps in {} episodes",
        reported.len(),
        episodes.len()
    );
}
