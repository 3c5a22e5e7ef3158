//! Shared helpers for the engine's integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use understudy::{Episode, World};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn mini_dir() -> PathBuf {
    repo().join("tests/worlds/mini")
}

pub fn mini() -> Arc<World> {
    Arc::new(World::load(mini_dir()).expect("the mini test world loads"))
}

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

fn copy_dir(src: &Path, dst: &Path) {
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

pub fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

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
