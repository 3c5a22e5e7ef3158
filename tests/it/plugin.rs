//! Plug-in commands (judge, user simulator) as hostile processes: ones that
//! fork, ones that answer and leave a child holding their output, and
//! absurd time limits.

use std::path::Path;
use std::time::{Duration, Instant};

use understudy::plugin::{self, RunError};

fn sh(script: &str, timeout: Duration) -> Result<Vec<u8>, RunError> {
    plugin::run(
        "sh",
        &["-c".to_string(), script.to_string()],
        Vec::new(),
        timeout,
        1 << 20,
        4 << 10,
    )
}

/// Whether `pid` is gone (or a zombie nobody reaped: dead all the same).
fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

fn wait_dead(pid: u32, within: Duration) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if is_dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    is_dead(pid)
}

fn read_pid(path: &Path) -> u32 {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(Instant::now() < until, "the command never wrote its pid");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_timed_out_command_is_killed_with_everything_it_forked() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild.pid");
    let script = format!(
        "sleep 30 >/dev/null 2>&1 </dev/null & echo $! > '{}'; sleep 30",
        pidfile.display()
    );
    let started = Instant::now();
    let result = sh(&script, Duration::from_millis(400));
    assert!(matches!(result, Err(RunError::TimedOut)), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let grandchild = read_pid(&pidfile);
    assert!(
        wait_dead(grandchild, Duration::from_secs(3)),
        "the forked process {grandchild} outlived the timeout"
    );
}

#[test]
fn an_answer_is_read_even_if_a_background_child_keeps_the_output_open() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("straggler.pid");
    let script = format!(
        "echo '{{\"met\": true, \"reason\": \"ok\"}}'; sleep 30 & echo $! > '{}'",
        pidfile.display()
    );
    let started = Instant::now();
    let out = sh(&script, Duration::from_secs(10)).expect("the command answered");
    assert_eq!(
        String::from_utf8_lossy(&out).trim(),
        "{\"met\": true, \"reason\": \"ok\"}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the answer was only read after {:?}",
        started.elapsed()
    );
    let straggler = read_pid(&pidfile);
    assert!(
        wait_dead(straggler, Duration::from_secs(3)),
        "the background child {straggler} was left running"
    );
}

#[test]
fn an_absurd_time_limit_does_not_panic() {
    for timeout in [
        Duration::MAX,
        Duration::from_secs(u64::MAX / 2),
        Duration::from_secs(10_000_000_000_000_000_000),
    ] {
        let out = sh("echo hi", timeout).expect("runs");
        assert_eq!(out, b"hi\n");
    }
}
