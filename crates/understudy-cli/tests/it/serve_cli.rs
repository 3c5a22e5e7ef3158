//! `understudy serve` as a process: stdio until end of input, HTTP until
//! SIGTERM. A client that goes away mid-episode leaves it recorded as
//! abandoned with every step kept.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use understudy::store::{EpisodeFilter, EpisodeStatus, Store};
use understudy_testkit::repo;

const WAIT: Duration = Duration::from_secs(30);

fn understudy() -> Command {
    Command::new(env!("CARGO_BIN_EXE_understudy"))
}

/// Lines of the child's stdout, read on a thread so every wait is bounded.
fn lines(stdout: ChildStdout) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn wait_exit(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The store's episodes: (id, status, steps), oldest first.
fn stored(store: &Path) -> Vec<(String, EpisodeStatus, usize)> {
    let store = Store::open(store).expect("store");
    store
        .episodes(&EpisodeFilter::default())
        .expect("episodes")
        .iter()
        .map(|e| {
            (
                e.id.clone(),
                e.status,
                store.steps(&e.id).expect("steps").len(),
            )
        })
        .collect()
}

fn only_episode(store: &Path) -> (String, EpisodeStatus, usize) {
    let mut episodes = stored(store);
    assert_eq!(episodes.len(), 1);
    episodes.remove(0)
}

/// `understudy serve ARGS --world mini --store STORE`, its output piped.
fn serve_mini(store: &Path, args: &[&str]) -> Command {
    let mut command = understudy();
    command
        .arg("serve")
        .args(args)
        .arg("--world")
        .arg(repo().join("tests/worlds/mini"))
        .arg("--store")
        .arg(store)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command
}

/// [`stored`] without the ids.
fn statuses(store: &Path) -> Vec<(EpisodeStatus, usize)> {
    stored(store).into_iter().map(|(_, s, n)| (s, n)).collect()
}

#[test]
fn stdio_end_of_input_abandons_the_open_episode_with_its_steps() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let mut child = serve_mini(&store, &["--stdio"]).spawn().expect("spawn");
    let rx = lines(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut ask = |request: Value| -> Value {
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        serde_json::from_str(&rx.recv_timeout(WAIT).expect("a response line")).expect("JSON")
    };
    let out = ask(json!({"id": 1, "op": "reset", "task_id": "pay-back", "model": "stdio-test"}));
    let id = out["result"]["episode_id"]
        .as_str()
        .expect("id")
        .to_string();
    let out = ask(
        json!({"id": 2, "op": "step", "episode_id": id, "action": {"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25}}}),
    );
    assert_eq!(out["result"]["observation"]["ok"], true, "{out}");
    let out = ask(
        json!({"id": 3, "op": "step", "episode_id": id, "action": {"tool": "transfer", "args": {"amount": "x"}}}),
    );
    assert_eq!(
        out["result"]["observation"]["error"]["code"], "invalid_arguments",
        "{out}"
    );
    let out =
        ask(json!({"id": 4, "op": "step", "episode_id": "other", "action": {"message": "hi"}}));
    assert_eq!(out["error"]["code"], "unknown_episode");
    drop(stdin);
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status}");
    let (stored_id, status, steps) = only_episode(&store);
    assert_eq!(stored_id, id);
    assert_eq!(status, EpisodeStatus::Abandoned);
    assert_eq!(steps, 2);
}

#[test]
fn http_serves_on_loopback_and_shutdown_abandons_open_episodes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let mut child = understudy()
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--durability",
            "fast",
            "--world",
        ])
        .arg(repo().join("tests/worlds/mini"))
        .arg("--store")
        .arg(&store)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let rx = lines(child.stdout.take().unwrap());
    let first = rx.recv_timeout(WAIT).expect("the listening line");
    let base = first
        .strip_prefix("listening on ")
        .expect("`listening on URL`")
        .to_string();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    let client = reqwest::blocking::Client::builder()
        .timeout(WAIT)
        .build()
        .unwrap();
    let health: Value = client
        .get(format!("{base}/health"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(health["durability"], "fast");
    let reset: Value = client
        .post(format!("{base}/reset"))
        .json(&json!({"task_id": "pay-back"}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let id = reset["episode_id"].as_str().expect("id").to_string();
    let step = client
        .post(format!("{base}/step"))
        .json(&json!({"episode_id": id, "action": {"message": "Hello"}}))
        .send()
        .unwrap();
    assert_eq!(step.status().as_u16(), 200);
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status}");
    assert_eq!(only_episode(&store), (id, EpisodeStatus::Abandoned, 1));
}

#[test]
fn bad_flags_are_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let mini = repo().join("tests/worlds/mini");
    for (args, mentions) in [
        (vec!["--http", "0.0.0.0:0"], "loopback"),
        (vec![], "--stdio"),
        (vec!["--stdio", "--idle-timeout", "0"], "--idle-timeout"),
        (vec!["--stdio", "--user-sim", "sh -c 'oops"], "quote"),
        (vec!["--stdio", "--max-concurrent", "0"], "max-concurrent"),
    ] {
        let out = understudy()
            .arg("serve")
            .args(&args)
            .arg("--world")
            .arg(&mini)
            .arg("--store")
            .arg(&store)
            .stdin(Stdio::null())
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(stderr.contains(mentions), "{args:?}: {stderr}");
    }
}

/// A user simulator that never answers in time holds a step open for as
/// long as `--user-sim-timeout` allows: a step that hangs.
const HANGING_SIM: &str = "sleep 20";

fn wait_exit_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("wait") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn sigterm(child: &Child) {
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
}

#[test]
fn sigterm_stops_http_within_the_grace_even_when_a_step_hangs() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let mut child = serve_mini(
        &store,
        &[
            "--http",
            "127.0.0.1:0",
            "--user-sim",
            HANGING_SIM,
            "--user-sim-timeout",
            "120",
            "--shutdown-grace",
            "1",
        ],
    )
    .spawn()
    .expect("spawn");
    let rx = lines(child.stdout.take().unwrap());
    let base = rx
        .recv_timeout(WAIT)
        .expect("the listening line")
        .strip_prefix("listening on ")
        .expect("`listening on URL`")
        .to_string();
    let client = reqwest::blocking::Client::builder()
        .timeout(WAIT)
        .build()
        .unwrap();
    let reset = |task: &str| -> String {
        let out: Value = client
            .post(format!("{base}/reset"))
            .json(&json!({"task_id": task}))
            .send()
            .unwrap()
            .json()
            .unwrap();
        out["episode_id"].as_str().expect("id").to_string()
    };
    // `frozen` has no scripted replies: a message waits on the simulator.
    let hung = reset("frozen");
    let step = client
        .post(format!("{base}/step"))
        .json(&json!({"episode_id": hung, "action": {"tool": "get_account", "args": {"account_id": "A-3"}}}))
        .send()
        .unwrap();
    assert_eq!(step.status().as_u16(), 200);
    let idle = reset("pay-back");
    let (hung_base, hung_id) = (base.clone(), hung.clone());
    std::thread::spawn(move || {
        let _ = reqwest::blocking::Client::new()
            .post(format!("{hung_base}/step"))
            .json(&json!({"episode_id": hung_id, "action": {"message": "Hello?"}}))
            .send();
    });
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    sigterm(&child);
    let status = wait_exit_within(&mut child, Duration::from_secs(10))
        .expect("serve did not stop on SIGTERM while a step hung");
    assert!(status.success(), "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let _ = idle;
    // The hung episode keeps its committed step (its status stays
    // in_progress, as after a crash); the idle one is abandoned.
    assert_eq!(
        statuses(&store),
        vec![
            (EpisodeStatus::InProgress, 1),
            (EpisodeStatus::Abandoned, 0)
        ]
    );
}

#[test]
fn sigterm_stops_stdio_within_the_grace_even_when_a_step_hangs() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let mut child = serve_mini(
        &store,
        &[
            "--stdio",
            "--user-sim",
            HANGING_SIM,
            "--user-sim-timeout",
            "120",
            "--shutdown-grace",
            "1",
        ],
    )
    .spawn()
    .expect("spawn");
    let mut input = child.stdin.take().unwrap();
    let rx = lines(child.stdout.take().unwrap());
    let mut call = |request: Value| -> Value {
        writeln!(input, "{request}").unwrap();
        input.flush().unwrap();
        serde_json::from_str(&rx.recv_timeout(WAIT).expect("a response line")).expect("JSON")
    };
    let reset = call(json!({"op": "reset", "task_id": "frozen"}));
    let id = reset["result"]["episode_id"].as_str().unwrap().to_string();
    let step = call(
        json!({"op": "step", "episode_id": id, "action": {"tool": "get_account", "args": {"account_id": "A-3"}}}),
    );
    assert!(step.get("result").is_some(), "{step}");
    writeln!(
        input,
        "{}",
        json!({"op": "step", "episode_id": id, "action": {"message": "Hello?"}})
    )
    .unwrap();
    input.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    sigterm(&child);
    let status = wait_exit_within(&mut child, Duration::from_secs(10))
        .expect("serve --stdio did not stop on SIGTERM while a step hung");
    assert!(status.success(), "{status}");
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(statuses(&store), vec![(EpisodeStatus::InProgress, 1)]);
}
