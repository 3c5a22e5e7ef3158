//! A store that cannot be written, on a read-only mount or as a read-only
//! file, is still exported and replayed (opened read-only), not reported
//! as corrupt.
//!
//! The read-only mount is made in a private mount namespace: `unshare
//! --mount` as root, or inside a user namespace (`--user --map-root-user`)
//! otherwise. Where neither is allowed the tests say so and pass, except
//! under CI (`CI` set), which runs as root and must not skip them.

use understudy_testkit as common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::json;
use understudy::store::Store;

/// The ways of getting a private mount namespace, tried in order.
const NAMESPACES: [&[&str]; 2] = [&["--mount"], &["--user", "--map-root-user", "--mount"]];

/// Runs `understudy args` with `target` (a folder or a file) bind-mounted
/// read-only over itself, visible to that process only.
fn run_read_only(namespace: &[&str], target: &Path, args: &[&std::ffi::OsStr]) -> Output {
    Command::new("unshare")
        .args(namespace)
        .args(["sh", "-c"])
        .arg(
            "mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && shift && exec \"$@\"",
        )
        .arg("sh")
        .arg(target)
        .arg(env!("CARGO_BIN_EXE_understudy"))
        .args(args)
        .output()
        .expect("unshare runs")
}

/// The `unshare` arguments under which a read-only bind mount of `probe`
/// really refuses writes here, if any.
fn mount_namespace(probe: &Path) -> Option<&'static [&'static str]> {
    let found = NAMESPACES.into_iter().find(|namespace| {
        Command::new("unshare")
            .args(*namespace)
            .args(["sh", "-c"])
            .arg("mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && ! touch \"$1/probe\" 2>/dev/null")
            .arg("sh")
            .arg(probe)
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root, so read-only bind mounts must work there (is unshare installed?)"
        );
        eprintln!("skipped: read-only bind mounts are not allowed here (needs unshare, and root or user namespaces)");
    }
    found
}

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// A store (in `store/`) with one recorded step, closed cleanly, and a
    /// worlds folder.
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("store")).unwrap();
        common::copy_dir(&common::mini_dir(), &dir.path().join("worlds/mini"));
        let store = Arc::new(Store::open(dir.path().join("store/s.sqlite")).unwrap());
        let look = json!({"tool": "view_accounts", "args": {"search": "ada"}});
        common::record_mini(&store, "pay-back", &[look])
            .submit(None)
            .unwrap();
        drop(store);
        Fixture { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn export_and_replay(&self, namespace: &[&str], read_only: &Path) {
        let before = std::fs::read(self.path("store/s.sqlite")).unwrap();
        let out = run_read_only(
            namespace,
            read_only,
            &[
                "export".as_ref(),
                "--format".as_ref(),
                "native".as_ref(),
                "--store".as_ref(),
                self.path("store/s.sqlite").as_os_str(),
                "--worlds".as_ref(),
                self.path("worlds").as_os_str(),
                "--output".as_ref(),
                self.path("out.jsonl").as_os_str(),
            ],
        );
        assert!(
            out.status.success(),
            "export: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let exported = std::fs::read_to_string(self.path("out.jsonl")).unwrap();
        assert_eq!(exported.lines().count(), 1, "{exported}");
        let out = run_read_only(
            namespace,
            read_only,
            &[
                "replay".as_ref(),
                "--store".as_ref(),
                self.path("store/s.sqlite").as_os_str(),
                "--worlds".as_ref(),
                self.path("worlds").as_os_str(),
            ],
        );
        assert!(
            out.status.success(),
            "replay: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("1 matched"));
        assert_eq!(std::fs::read(self.path("store/s.sqlite")).unwrap(), before);
    }
}

#[test]
fn a_store_on_a_read_only_mount_is_exported_and_replayed() {
    let f = Fixture::new();
    let Some(namespace) = mount_namespace(&f.path("store")) else {
        return;
    };
    f.export_and_replay(namespace, &f.path("store"));
}

#[test]
fn a_read_only_store_file_is_exported_and_replayed() {
    let f = Fixture::new();
    let Some(namespace) = mount_namespace(&f.path("store")) else {
        return;
    };
    // Only the file is read-only; its folder can still be written.
    f.export_and_replay(namespace, &f.path("store/s.sqlite"));
}
