//! Time-limit flags take any text without panicking: out-of-range values
//! are refused with the flag's name and the allowed range.

use understudy_testkit as common;

use std::process::{Command, Stdio};

fn understudy() -> Command {
    Command::new(env!("CARGO_BIN_EXE_understudy"))
}

fn assert_refused(out: &std::process::Output, flag: &str, value: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(
        out.status.code(),
        Some(101),
        "{flag} {value} panicked: {stderr}"
    );
    assert!(!out.status.success(), "{flag} {value} was accepted");
    assert!(
        stderr.contains(flag) && stderr.contains("from 0.001 to 1000000000"),
        "{flag} {value}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_judge_timeout_out_of_range_is_refused_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, "{\"task_id\": \"pay-back\", \"actions\": []}\n").unwrap();
    for value in ["1e300", "1e19", "0", "-5", "inf", "NaN"] {
        let out = understudy()
            .args(["score", "--world"])
            .arg(common::mini_dir())
            .arg("--input")
            .arg(&input)
            .args(["--judge", "true"])
            .arg(format!("--judge-timeout={value}"))
            .output()
            .expect("runs");
        assert_refused(&out, "--judge-timeout", value);
    }
}

#[test]
fn serve_time_limits_out_of_range_are_refused_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--idle-timeout", "--user-sim-timeout"] {
        for value in ["1e300", "1e19", "0"] {
            let out = understudy()
                .args(["serve", "--stdio", "--world"])
                .arg(common::mini_dir())
                .arg("--store")
                .arg(dir.path().join("s.sqlite"))
                .args([flag, value])
                .stdin(Stdio::null())
                .output()
                .expect("runs");
            assert_refused(&out, flag, value);
        }
    }
}
