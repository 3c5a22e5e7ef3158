//! Shared fixtures for the integration tests of every Understudy crate:
//! where the repository's worlds are, a tiny test world, throw-away copies
//! of world folders to break, and small file edits.
//!
//! Helpers panic with a message on failure: they run only inside tests.

pub mod fuzz;
pub mod scale;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use understudy::{Episode, World};

/// The repository root (this crate lives in `crates/understudy-testkit`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// A bundled world folder, e.g. `world_dir("support-desk")`.
pub fn world_dir(name: &str) -> PathBuf {
    repo().join("fixtures/worlds").join(name)
}

/// Loads a bundled world.
pub fn world(name: &str) -> Arc<World> {
    Arc::new(World::load(world_dir(name)).unwrap_or_else(|e| panic!("{name} loads: {e}")))
}

/// The tiny world built for tests.
pub fn mini_dir() -> PathBuf {
    repo().join("tests/worlds/mini")
}

pub fn mini() -> Arc<World> {
    Arc::new(World::load(mini_dir()).expect("the mini test world loads"))
}

/// A fresh episode of `task`, reset with seed 0.
pub fn episode(world: &Arc<World>, task: &str) -> Episode {
    let mut ep = Episode::new(Arc::clone(world)).expect("episode opens");
    ep.reset(task, 0).expect("reset");
    ep
}

/// Copies a world folder into a fresh temp dir so a test can break it.
pub fn copy_world(src: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(src, dir.path());
    dir
}

/// Copies a folder tree.
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for entry in std::fs::read_dir(src).expect("read_dir") {
        let entry = entry.expect("entry");
        let to = dst.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).expect("copy");
        }
    }
}

/// Loads `dir` expecting failure; returns the rendered problems.
pub fn problems(dir: &Path) -> Vec<String> {
    match World::load(dir) {
        Ok(_) => panic!("expected {} to be rejected", dir.display()),
        Err(understudy::Error::WorldInvalid { problems, .. }) => {
            problems.iter().map(|p| p.to_string()).collect()
        }
        Err(other) => panic!("expected WorldInvalid, got {other}"),
    }
}

/// Writes `text` to `dir/rel`, creating folders.
pub fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

/// Adds `text` at the end of `dir/rel`, on a line of its own.
pub fn append(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    let before = std::fs::read_to_string(&path).expect("read");
    std::fs::write(path, format!("{before}\n{text}\n")).expect("write");
}

/// Replaces the first `from` in `dir/rel` by `to`; the text must be there.
pub fn replace(dir: &Path, rel: &str, from: &str, to: &str) {
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{rel} does not contain {from:?}");
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}

/// Every world folder under fixtures/worlds.
pub fn fixture_worlds() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(repo().join("fixtures/worlds"))
        .expect("fixtures/worlds exists")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("world.toml").exists())
        .collect();
    out.sort();
    out
}

/// Starts an agent episode (model `m`) of `task` in the mini world,
/// recording into `store`, and steps `actions` (JSON action shapes). The
/// caller submits, undoes or drops it.
pub fn record_mini(
    store: &Arc<understudy::store::Store>,
    task: &str,
    actions: &[serde_json::Value],
) -> understudy::recorder::Recorder {
    let mut rec = understudy::recorder::Recorder::start(
        Arc::clone(store),
        mini(),
        task,
        understudy::store::Actor::Agent { model: "m".into() },
        0,
    )
    .expect("the episode starts");
    for action in actions {
        let action = understudy::Action::from_json(action).expect("a valid action");
        rec.step(action, None).expect("the step is recorded");
    }
    rec
}

/// Records the mini world's pay-back solution as an agent run and submits
/// it; the run's id.
pub fn submitted_pay_back(store: &Arc<understudy::store::Store>) -> String {
    let solution = mini().task("pay-back").expect("task").solution.clone();
    let mut rec = record_mini(store, "pay-back", &solution);
    rec.submit(None).expect("submit");
    rec.record().id.clone()
}

/// The mini world's pay-back rubric with its judged criterion `friendly`
/// graded on a scale of three levels: "Warm" (1 point), "Curt" (0.5),
/// "Rude" (0).
pub fn pay_back_on_a_scale() -> String {
    let text = std::fs::read_to_string(mini_dir().join("rubrics/pay-back.toml"))
        .expect("the pay-back rubric");
    let from = "points = 1\n\n[[forbidden]]";
    assert!(text.contains(from), "the pay-back rubric changed shape");
    text.replacen(
        from,
        "points = 1\nscale = [{ label = \"Warm\", points = 1 }, { label = \"Curt\", points = 0.5 }, { label = \"Rude\", points = 0 }]\n\n[[forbidden]]",
        1,
    )
}

/// Saves an expert profile in `store` (Dana Reyes, support) and returns
/// them as an episode's actor.
pub fn expert(store: &understudy::store::Store) -> understudy::store::Actor {
    let e = store
        .save_expert(
            None,
            &understudy::store::ExpertInput {
                name: "Dana Reyes".into(),
                domain: "Support".into(),
                credentials: "8 years".into(),
                credentials_attested: true,
            },
        )
        .expect("the expert is saved");
    understudy::store::Actor::Expert { id: e.id }
}
