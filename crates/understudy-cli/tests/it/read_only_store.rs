//! A store that cannot be written, on a read-only mount or as a read-only
//! file, is still exported and replayed (opened read-only), not reported
//! as corrupt.
//!
//! The read-only mount is made in a private mount namespace (`unshare
//! --mount`, as root); where that is not allowed, the tests say so and pass.

use understudy_testkit as common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::json;
use understudy::store::Store;

/// Runs `understudy args` with `target` (a folder or a file) bind-mounted
/// read-only over itself, visible to that process only.
fn run_read_only(target: &Path, args: &[&std::ffi::OsStr]) -> Output {
    Command::new("unshare")
        .args(["--mount", "sh", "-c"])
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

/// Whether read-only bind mounts can be made here.
fn mounts_allowed(probe: &Path) -> bool {
    let out = Command::new("unshare")
        .args(["--mount", "sh", "-c"])
        .arg("mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && ! touch \"$1/probe\" 2>/dev/null")
        .arg("sh")
        .arg(probe)
        .output();
    let ok = out.is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: read-only bind mounts are not allowed here (needs root and unshare)");
    }
    ok
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

    fn export_and_replay(&self, read_only: &Path) {
        let before = std::fs::read(self.path("store/s.sqlite")).unwrap();
        let out = run_read_only(
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
    if !mounts_allowed(&f.path("store")) {
        return;
    }
    f.export_and_replay(&f.path("store"));
}

#[test]
fn a_read_only_store_file_is_exported_and_replayed() {
    let f = Fixture::new();
    if !mounts_allowed(&f.path("store")) {
        return;
    }
    // Only the file is read-only; its folder can still be written.
    f.export_and_replay(&f.path("store/s.sqlite"));
}
