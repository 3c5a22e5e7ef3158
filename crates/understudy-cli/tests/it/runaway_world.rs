//! A world whose `schema.sql` never finishes (an endless recursive CTE)
//! makes `world check` and `serve` fail at load within a bounded time,
//! naming the file, instead of hanging (before the operation budget, both
//! hung until killed).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use understudy_testkit as common;

/// Longer than the budget takes on a loaded CI machine, far shorter than a hang.
const LIMIT: Duration = Duration::from_secs(60);

fn runaway_world() -> tempfile::TempDir {
    let dir = common::copy_world(&common::mini_dir());
    common::append(
        dir.path(),
        "schema.sql",
        "CREATE TABLE forever AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) AS m FROM n;",
    );
    dir
}

/// Runs `understudy args`, killing it and failing the test past [`LIMIT`];
/// returns its exit success and stderr.
fn run_bounded(args: &[&std::ffi::OsStr]) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_understudy"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("understudy starts");
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`understudy {args:?}` did not finish within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut err)
        .expect("stderr reads");
    (status.success(), err)
}

#[test]
fn world_check_fails_a_runaway_schema_naming_the_file() {
    let world = runaway_world();
    let (ok, err) = run_bounded(&["world".as_ref(), "check".as_ref(), world.path().as_os_str()]);
    assert!(!ok, "world check passed a schema that never finishes");
    assert!(err.contains("schema.sql"), "{err}");
    assert!(err.contains("took too long"), "{err}");
}

#[test]
fn serve_refuses_to_start_on_a_runaway_schema() {
    let world = runaway_world();
    let store = tempfile::tempdir().expect("temp dir");
    let (ok, err) = run_bounded(&[
        "serve".as_ref(),
        "--stdio".as_ref(),
        "--store".as_ref(),
        store.path().join("s.sqlite").as_os_str(),
        "--world".as_ref(),
        world.path().as_os_str(),
    ]);
    assert!(!ok, "serve started on a schema that never finishes");
    assert!(err.contains("schema.sql"), "{err}");
    assert!(err.contains("took too long"), "{err}");
}
