//! `--output` of `replay`, `score` and `export`: a regular file is replaced
//! whole, but a device or a FIFO that is already there is written through,
//! never replaced by a regular file.

use understudy_testkit as common;

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use understudy::store::Store;

fn understudy() -> Command {
    Command::new(env!("CARGO_BIN_EXE_understudy"))
}

/// The three commands, each writing to `output`.
struct Inputs {
    dir: tempfile::TempDir,
}

impl Inputs {
    fn new() -> Inputs {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("actions.jsonl"),
            "{\"task_id\": \"frozen\", \"actions\": [{\"tool\": \"view_accounts\", \"args\": {\"search\": \"ada\"}}]}\n",
        )
        .unwrap();
        common::copy_dir(&common::mini_dir(), &dir.path().join("worlds/mini"));
        let store = Arc::new(Store::open(dir.path().join("s.sqlite")).unwrap());
        let look = json!({"tool": "view_accounts", "args": {"search": "ada"}});
        common::record_mini(&store, "frozen", &[look])
            .submit(None)
            .unwrap();
        Inputs { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn commands(&self, output: &Path) -> Vec<(&'static str, Command)> {
        let mut replay = understudy();
        replay
            .args(["replay", "--world"])
            .arg(common::mini_dir())
            .arg("--input")
            .arg(self.path("actions.jsonl"))
            .arg("--output")
            .arg(output);
        let mut score = understudy();
        score
            .args(["score", "--world"])
            .arg(common::mini_dir())
            .arg("--input")
            .arg(self.path("actions.jsonl"))
            .arg("--output")
            .arg(output);
        let mut export = understudy();
        export
            .args(["export", "--format", "native", "--store"])
            .arg(self.path("s.sqlite"))
            .arg("--worlds")
            .arg(self.path("worlds"))
            .arg("--output")
            .arg(output);
        vec![("replay", replay), ("score", score), ("export", export)]
    }
}

fn assert_ok(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success());
}

#[test]
fn a_fifo_given_as_output_is_written_through_not_replaced() {
    let inputs = Inputs::new();
    let fifo = inputs.path("out.fifo");
    for (what, mut command) in inputs.commands(&fifo) {
        let _ = std::fs::remove_file(&fifo);
        mkfifo(&fifo);
        // The reader blocks until a writer opens the FIFO; if the command
        // replaces it instead, nobody ever does, so don't wait on it long.
        let (tx, rx) = mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(std::fs::read_to_string(&path));
        });
        let out = command.output().expect("runs");
        assert_ok(what, &out);
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{what} replaced the FIFO with {kind:?}");
        let read = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("{what} never wrote into the FIFO"))
            .expect("read the FIFO");
        assert!(
            read.lines().count() == 1 && read.starts_with('{'),
            "{what} wrote {read:?}"
        );
        assert_eq!(
            std::fs::read_dir(inputs.dir.path())
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().contains("partial"))
                .count(),
            0,
            "{what} left a temporary file"
        );
    }
}

#[test]
fn dev_null_as_output_stays_the_device() {
    let inputs = Inputs::new();
    let null = Path::new("/dev/null");
    for (what, mut command) in inputs.commands(null) {
        let out = command.output().expect("runs");
        assert_ok(what, &out);
        let kind = std::fs::symlink_metadata(null).unwrap().file_type();
        assert!(kind.is_char_device(), "{what} replaced /dev/null: {kind:?}");
    }
}

#[test]
fn a_regular_output_file_is_replaced_whole() {
    let inputs = Inputs::new();
    let file = inputs.path("out.jsonl");
    for (what, mut command) in inputs.commands(&file) {
        std::fs::write(&file, "old contents\nmore\n").unwrap();
        let out = command.output().expect("runs");
        assert_ok(what, &out);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.lines().count() == 1 && text.starts_with('{'),
            "{what}: {text:?}"
        );
    }
}
