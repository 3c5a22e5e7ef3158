//! `understudy rubric judge`: a person's grade from the command line, on a
//! criterion graded met / not met and on one graded on a scale.

use understudy_testkit as common;

use std::sync::Arc;

use understudy::store::Store;

use crate::export::{bin, run_err, run_ok};

/// The mini world copied with `friendly` on a three-level scale, a store
/// with one pay-back run, and the run's id.
fn scaled_world() -> (tempfile::TempDir, tempfile::TempDir, Arc<Store>, String) {
    let world = common::copy_world(&common::mini_dir());
    std::fs::write(
        world.path().join("rubrics/pay-back.toml"),
        common::pay_back_on_a_scale(),
    )
    .expect("rubric written");
    let (dir, store, id) = stored_run();
    (dir, world, store, id)
}

/// A store holding one submitted pay-back run, and the run's id.
fn stored_run() -> (tempfile::TempDir, Arc<Store>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::open(dir.path().join("s.db")).expect("store"));
    let id = common::submitted_pay_back(&store);
    (dir, store, id)
}

fn judge(
    world: &std::path::Path,
    dir: &std::path::Path,
    id: &str,
    grade: &[&str],
) -> std::process::Command {
    let mut cmd = bin();
    cmd.arg("rubric").arg("judge").arg("--world").arg(world);
    cmd.arg("--store").arg(dir.join("s.db"));
    cmd.args([
        "--episode",
        id,
        "--criterion",
        "friendly",
        "--reason",
        "Read it.",
        "--judge",
        "ana",
    ]);
    cmd.args(grade);
    cmd
}

#[test]
fn a_grade_on_a_scale_names_its_level_and_the_level_decides_met() {
    let (dir, world, store, id) = scaled_world();
    let world = world.path();
    let (_, said) = run_ok(&mut judge(world, dir.path(), &id, &["--level", "Curt"]));
    assert!(said.contains("recorded: friendly “Curt” (met)"), "{said}");
    let stored = store.judgments(&id).expect("judgments");
    assert_eq!(stored.len(), 1);
    assert_eq!(
        (stored[0].met, stored[0].level.as_deref()),
        (true, Some("Curt"))
    );

    let err = run_err(&mut judge(world, dir.path(), &id, &["--met", "true"]));
    assert!(
        err.contains(r#"choose one of "Warm", "Curt", "Rude""#),
        "{err}"
    );
    let err = run_err(&mut judge(world, dir.path(), &id, &["--level", "Superb"]));
    assert!(err.contains("\"Superb\" is not a level"), "{err}");
    let err = run_err(&mut judge(
        world,
        dir.path(),
        &id,
        &["--level", "Rude", "--met", "true"],
    ));
    assert!(
        err.contains("contradicts --level \"Rude\", which counts as not met"),
        "{err}"
    );
    assert_eq!(
        store.judgments(&id).expect("judgments").len(),
        1,
        "nothing refused was stored"
    );
}

#[test]
fn a_met_or_not_met_criterion_takes_met_and_refuses_a_level() {
    let (dir, store, id) = stored_run();
    let world = &common::mini_dir();
    let (_, said) = run_ok(&mut judge(world, dir.path(), &id, &["--met", "false"]));
    assert!(said.contains("recorded: friendly not met"), "{said}");
    let err = run_err(&mut judge(world, dir.path(), &id, &["--level", "Warm"]));
    assert!(err.contains("has no scale"), "{err}");
    let err = run_err(&mut judge(world, dir.path(), &id, &[]));
    assert!(err.contains("--met"), "{err}");
    assert_eq!(store.judgments(&id).expect("judgments").len(), 1);
}
