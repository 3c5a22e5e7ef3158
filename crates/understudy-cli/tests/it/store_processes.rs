//! Several `understudy` processes writing one store at once: SQLite's file
//! locks, not the engine's in-process mutex, are what keep them apart here.
//! Every episode must land whole, none twice, and replay exactly; a reader
//! in yet another process sees only whole episodes.

use understudy_testkit as common;

use std::path::Path;
use std::process::{Child, Command, Stdio};

use understudy::store::{EpisodeFilter, EpisodeStatus, Store};

const TASKS: [&str; 6] = [
    "duplicate-charge",
    "renewal-question",
    "upgrade-with-verification",
    "cancel-no-refund",
    "discount-not-applied",
    "partial-refund-remaining",
];

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_understudy"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

#[test]
fn recorders_in_separate_processes_share_one_store_without_loss_or_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let world = common::world_dir("support-desk");
    let store = dir.path().join("store.sqlite");
    // Three rounds of six writers at once, each its own process and expert.
    let mut ids = Vec::new();
    for round in 0..3 {
        let children: Vec<(String, Child)> = TASKS
            .iter()
            .enumerate()
            .map(|(i, task)| {
                let expert = format!("e{round}{i}");
                let child = spawn(&[
                    "run",
                    "--world",
                    s(&world),
                    "--task",
                    task,
                    "--solution",
                    "--store",
                    s(&store),
                    "--expert",
                    &expert,
                ]);
                (expert, child)
            })
            .collect();
        // The first round's writers also race to create the store and
        // migrate it. From then on, a reader in another process reads
        // while they write.
        let reader = (round > 0).then(|| spawn(&["review", "list", "--store", s(&store)]));
        for (expert, child) in children {
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "writer {expert} failed:\n{stderr}");
            ids.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
        }
        if let Some(reader) = reader {
            let out = reader.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "the reader failed while writers ran:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    let opened = Store::open(&store).unwrap();
    let episodes = opened.episodes(&EpisodeFilter::default()).unwrap();
    assert_eq!(
        episodes.len(),
        3 * TASKS.len(),
        "one episode per writer, none lost or doubled"
    );
    let mut stored: Vec<String> = episodes.iter().map(|e| e.id.clone()).collect();
    stored.sort();
    ids.sort();
    assert_eq!(
        stored, ids,
        "the ids the writers printed are the ids stored"
    );
    let world = common::world("support-desk");
    for e in &episodes {
        assert_eq!(e.status, EpisodeStatus::Submitted);
        let solution = world.task(&e.task_id).unwrap().solution.len();
        assert_eq!(
            opened.steps(&e.id).unwrap().len(),
            solution,
            "{}: every step, once",
            e.task_id
        );
    }
    drop(opened);
    let out = Command::new(env!("CARGO_BIN_EXE_understudy"))
        .args([
            "replay",
            "--store",
            s(&store),
            "--worlds",
            s(&common::repo().join("fixtures/worlds")),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "every episode replays exactly:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
