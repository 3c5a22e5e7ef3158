//! Replay of stored trajectories: an unchanged world replays cleanly
//! (retracted steps skipped), a changed world is refused without --force,
//! and with --force the first divergence is reported with the step, both
//! observations and the state so far. Through the library and the CLI,
//! from a store and from a native export file.

use understudy_testkit as common;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::{json, Value};
use understudy::export::{self, ExportOptions, Format, Source};
use understudy::recorder::Recorder;
use understudy::replay::replay_stored;
use understudy::store::{Actor, Store};
use understudy::{Action, Error, World};

struct Recorded {
    _world_dir: tempfile::TempDir,
    _store_dir: tempfile::TempDir,
    world_dir: std::path::PathBuf,
    store_path: std::path::PathBuf,
    store: Arc<Store>,
    episode: String,
}

/// Records pay-back on a copy of the mini world: a look, a transfer that is
/// undone, the real transfer, and a message.
fn record() -> Recorded {
    // In a folder of its own: `--worlds` is pointed at the parent, and the
    // shared temp folder holds other tests' copies of the same world.
    let world_tmp = tempfile::tempdir().unwrap();
    let world_dir = world_tmp.path().join("mini");
    common::copy_dir(&common::mini_dir(), &world_dir);
    let world = Arc::new(World::load(&world_dir).unwrap());
    let store_tmp = tempfile::tempdir().unwrap();
    let store_path = store_tmp.path().join("store.sqlite");
    let store = Arc::new(Store::open(&store_path).unwrap());
    let mut rec = Recorder::start(
        store.clone(),
        world,
        "pay-back",
        Actor::Expert { id: "e1".into() },
        3,
    )
    .unwrap();
    rec.step(
        Action::tool("view_accounts", json!({"search": "ada"})),
        None,
    )
    .unwrap();
    rec.step(
        Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 60}),
        ),
        None,
    )
    .unwrap();
    rec.undo().unwrap();
    rec.step(
        Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 25}),
        ),
        Some("as asked".into()),
    )
    .unwrap();
    rec.step(Action::message("Done: 25 sent to Charles."), None)
        .unwrap();
    rec.submit(None).unwrap();
    Recorded {
        world_dir,
        episode: rec.record().id.clone(),
        _world_dir: world_tmp,
        _store_dir: store_tmp,
        store_path,
        store,
    }
}

/// Changes what `transfer` tells the caller: the same state change, a
/// different observation.
fn change_transfer(world_dir: &Path) {
    common::replace(
        world_dir,
        "tools/transfer.toml",
        "text = \"Transfer {{ id }} of {{ amount }} done at {{ at }}.\"",
        "text = \"Sent {{ amount }} ({{ id }}).\"",
    );
}

fn replay_cli(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_understudy"))
        .arg("replay")
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn an_unchanged_world_replays_every_kept_step() {
    let r = record();
    let world = Arc::new(World::load(&r.world_dir).unwrap());
    let record = r.store.episode(&r.episode).unwrap();
    let steps = r.store.steps(&r.episode).unwrap();
    assert_eq!(steps.len(), 4);
    let report = replay_stored(&world, &record, &steps, false).unwrap();
    assert_eq!(report.divergence, None);
    assert_eq!(report.kept_steps, 3, "the undone step is not replayed");
    assert_eq!(report.replayed_steps, 3);
    assert!(!report.world_changed);
}

#[test]
fn a_changed_world_is_refused_unless_forced_then_the_divergence_is_reported() {
    let r = record();
    change_transfer(&r.world_dir);
    let world = Arc::new(World::load(&r.world_dir).unwrap());
    let record = r.store.episode(&r.episode).unwrap();
    let steps = r.store.steps(&r.episode).unwrap();

    let err = replay_stored(&world, &record, &steps, false).unwrap_err();
    assert!(matches!(err, Error::WorldChanged(_)), "{err}");
    assert!(err.to_string().contains("--force"), "{err}");

    let report = replay_stored(&world, &record, &steps, true).unwrap();
    assert!(report.world_changed);
    let d = report.divergence.expect("the changed tool diverges");
    assert_eq!(
        d.step, 2,
        "raw index of the kept transfer (step 1 was undone)"
    );
    assert_eq!(d.position, 1);
    assert_eq!(
        d.action,
        Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 25})
        )
    );
    assert_eq!(
        d.expected.text,
        "Transfer TR-000001 of 25.0 done at 2025-01-01T09:00:30Z."
    );
    assert_eq!(d.actual.text, "Sent 25.0 (TR-000001).");
    let changes = serde_json::to_value(&d.changes).unwrap();
    assert_eq!(
        changes["accounts"]["changed"]["A-1"]["balance"],
        json!(75.0),
        "the state so far"
    );
    assert!(changes["transfers"]["added"]["TR-000001"].is_object());
    assert_eq!(
        report.replayed_steps, 2,
        "replay stops at the first divergence"
    );
}

#[test]
fn a_different_outcome_flag_is_a_divergence() {
    let r = record();
    // `transfer` now ends the episode: same observation, new flag. The
    // recorded episode never ended, so this must be reported.
    let world_dir = r.world_dir.clone();
    std::fs::write(
        world_dir.join("tools/transfer.toml"),
        std::fs::read_to_string(world_dir.join("tools/transfer.toml"))
            .unwrap()
            .replacen("description", "ends_episode = true\ndescription", 1),
    )
    .unwrap();
    let world = Arc::new(World::load(&world_dir).unwrap());
    let record = r.store.episode(&r.episode).unwrap();
    let report = replay_stored(&world, &record, &r.store.steps(&r.episode).unwrap(), true).unwrap();
    let d = report.divergence.expect("diverges");
    assert_eq!(d.step, 2);
    assert_eq!(d.expected, d.actual);
    assert_eq!(d.other, ["terminated: recorded false, replayed true"]);
}

#[test]
fn cli_reports_the_step_and_both_observations_and_exits_non_zero() {
    let r = record();
    let store = r.store_path.as_os_str();
    let world = r.world_dir.as_os_str();
    let episode = std::ffi::OsStr::new(&r.episode);

    // Unchanged: exit 0, and it says so.
    let out = replay_cli(&[
        "--store".as_ref(),
        store,
        "--episode".as_ref(),
        episode,
        "--world".as_ref(),
        world,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("all 3 kept steps match the recording"),
        "{}",
        text(&out.stdout)
    );

    change_transfer(&r.world_dir);
    // Changed, not forced: refused with a clear message.
    let out = replay_cli(&[
        "--store".as_ref(),
        store,
        "--episode".as_ref(),
        episode,
        "--world".as_ref(),
        world,
    ]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("has changed since episode") && err.contains("--force"),
        "{err}"
    );

    // Forced: the divergence, named.
    let out = replay_cli(&[
        "--store".as_ref(),
        store,
        "--episode".as_ref(),
        episode,
        "--world".as_ref(),
        world,
        "--force".as_ref(),
    ]);
    assert!(!out.status.success(), "a divergence exits non-zero");
    let report = text(&out.stdout);
    assert!(report.contains("DIVERGED at step 2"), "{report}");
    assert!(
        report.contains("expected: Transfer TR-000001 of 25.0 done at 2025-01-01T09:00:30Z."),
        "{report}"
    );
    assert!(
        report.contains("actual:   Sent 25.0 (TR-000001)."),
        "{report}"
    );
    assert!(
        report.contains("\"balance\": 75.0"),
        "the state diff: {report}"
    );
    assert!(text(&out.stderr).contains("1 diverged"));

    // --json gives the same as data; --worlds finds the world by id.
    let worlds_parent = r.world_dir.parent().unwrap().as_os_str();
    let out = replay_cli(&[
        "--store".as_ref(),
        store,
        "--worlds".as_ref(),
        worlds_parent,
        "--force".as_ref(),
        "--json".as_ref(),
    ]);
    assert!(!out.status.success());
    let line: Value = serde_json::from_str(text(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(line["divergence"]["step"], 2);
    assert_eq!(
        line["divergence"]["expected"]["text"],
        "Transfer TR-000001 of 25.0 done at 2025-01-01T09:00:30Z."
    );
    assert_eq!(
        line["divergence"]["actual"]["text"],
        "Sent 25.0 (TR-000001)."
    );

    // An unknown episode is named.
    let out = replay_cli(&[
        "--store".as_ref(),
        store,
        "--episode".as_ref(),
        "nope".as_ref(),
        "--world".as_ref(),
        world,
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("episode nope not found"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn cli_replays_a_native_export_file() {
    let r = record();
    let file = r.store_path.with_file_name("episodes.jsonl");
    export::export_to_path(
        &Source::Store(&r.store),
        None,
        &ExportOptions {
            format: Format::Native,
            ..Default::default()
        },
        &file,
        &|| {},
    )
    .unwrap();
    let out = replay_cli(&[
        "--input".as_ref(),
        file.as_os_str(),
        "--world".as_ref(),
        r.world_dir.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("all 3 kept steps match"));

    change_transfer(&r.world_dir);
    let out = replay_cli(&[
        "--input".as_ref(),
        file.as_os_str(),
        "--world".as_ref(),
        r.world_dir.as_os_str(),
        "--force".as_ref(),
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stdout).contains("DIVERGED at step 2"),
        "{}",
        text(&out.stdout)
    );

    // The batch interface is unchanged: an action list still replays.
    let actions = r.store_path.with_file_name("actions.jsonl");
    std::fs::write(
        &actions,
        "{\"task_id\": \"pay-back\", \"actions\": [{\"message\": \"hi\"}]}\n",
    )
    .unwrap();
    let out = replay_cli(&[
        "--world".as_ref(),
        r.world_dir.as_os_str(),
        "--input".as_ref(),
        actions.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(line["observations"], json!(["Yes, go ahead."]));
}
