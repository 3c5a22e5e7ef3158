//! The command-line authoring path: record a gold run into a store with
//! `understudy run --store`, review it with `understudy review`, then find
//! the approved episode in `export --status approved` and `rubric lint
//! --store`. Refused reviews change nothing.

use understudy_testkit as common;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::Value;
use understudy::recorder::Recorder;
use understudy::store::{Actor, EpisodeStatus, Store};

fn understudy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_understudy"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn ok(args: &[&str]) -> (String, String) {
    let out = understudy(args);
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success(),
        "understudy {args:?} failed:\n{stderr}"
    );
    (stdout, stderr)
}

fn fails(args: &[&str]) -> String {
    let out = understudy(args);
    let (_, stderr) = text(&out);
    assert!(!out.status.success(), "understudy {args:?} should fail");
    stderr
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// support-desk copied into `dir/worlds`, its duplicate-charge solution's
/// first step given another `why` and its second step none.
fn support_desk(dir: &Path) -> std::path::PathBuf {
    let world = dir.join("worlds/support-desk");
    common::copy_dir(&common::world_dir("support-desk"), &world);
    common::replace(
        &world,
        "tasks/duplicate-charge.toml",
        "why = \"Read the ticket: Dana says the March invoice was charged twice.\"",
        "why = \"Read the ticket before touching the account.\"",
    );
    common::replace(
        &world,
        "tasks/duplicate-charge.toml",
        "why = \"Open the customer record to confirm the account and the card on file.\"\n",
        "",
    );
    world
}

fn record_solution(world: &Path, task: &str, store: &Path, expert: &[&str]) -> String {
    let mut args = vec![
        "run",
        "--world",
        s(world),
        "--task",
        task,
        "--solution",
        "--store",
        s(store),
    ];
    args.extend_from_slice(expert);
    let (stdout, stderr) = ok(&args);
    assert!(stderr.contains("submitted for review"), "{stderr}");
    let id = stdout.trim().to_string();
    assert_eq!(id.len(), 36, "stdout is the episode id alone: {stdout:?}");
    id
}

#[test]
fn gold_goes_from_the_command_line_to_an_approved_export_and_lint() {
    let dir = tempfile::tempdir().unwrap();
    let world = support_desk(dir.path());
    let store_path = dir.path().join("gold.sqlite");
    let expert = ["--expert", "dana", "--expert-name", "Dana Reyes"];
    let first = record_solution(&world, "duplicate-charge", &store_path, &expert);
    let second = record_solution(
        &world,
        "duplicate-charge",
        &store_path,
        &["--expert", "dana"],
    );

    {
        let store = Store::open_for_reading(&store_path).unwrap();
        let t = store.trajectory(&first).unwrap();
        assert_eq!(t.record.status, EpisodeStatus::Submitted);
        assert_eq!(t.record.actor, Actor::Expert { id: "dana".into() });
        assert_eq!(t.steps.len(), 7);
        assert_eq!(
            t.steps[0].rationale.as_deref(),
            Some("Read the ticket before touching the account.")
        );
        assert_eq!(t.steps[1].rationale, None);
        assert!(t.steps.iter().all(|s| s.observation.ok));
        assert!(t
            .record
            .final_message
            .as_deref()
            .is_some_and(|m| m.contains("$79.00")));
        assert_eq!(store.expert("dana").unwrap().name, "Dana Reyes");
    }

    let (table, _) = ok(&["review", "list", "--store", s(&store_path)]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two rows:\n{table}");
    for column in [
        "episode",
        "world",
        "task",
        "expert",
        "status",
        "steps",
        "last review",
    ] {
        assert!(lines[0].contains(column), "{table}");
    }
    assert!(
        lines[1].starts_with(&first) && lines[2].starts_with(&second),
        "{table}"
    );
    for cell in [
        "support-desk",
        "duplicate-charge",
        "dana",
        "submitted",
        " 7 ",
    ] {
        assert!(lines[1].contains(cell), "{cell}: {table}");
    }

    ok(&[
        "review",
        "approve",
        "--store",
        s(&store_path),
        "--episode",
        &first,
        "--reviewer",
        "lee",
        "--comment",
        "clean",
    ]);
    let (_, said) = ok(&[
        "review",
        "reject",
        "--store",
        s(&store_path),
        "--episode",
        &second,
        "--reviewer",
        "lee",
        "--comment",
        "Say when the refund reaches the card.",
    ]);
    assert!(
        said.contains("rejected") && said.contains(&second),
        "{said}"
    );

    let (queue, said) = ok(&["review", "list", "--store", s(&store_path)]);
    assert_eq!(queue, "", "nothing is left to review");
    assert!(said.contains("no episodes match"), "{said}");
    let (rejected, _) = ok(&[
        "review",
        "list",
        "--store",
        s(&store_path),
        "--status",
        "rejected",
        "--expert",
        "dana",
    ]);
    assert!(
        rejected.contains(&second) && !rejected.contains(&first),
        "{rejected}"
    );
    assert!(
        rejected.contains("reject by lee")
            && rejected.contains("Say when the refund reaches the card."),
        "{rejected}"
    );
    let (none, _) = ok(&[
        "review",
        "list",
        "--store",
        s(&store_path),
        "--status",
        "all",
        "--expert",
        "lee",
    ]);
    assert_eq!(none, "", "lee recorded nothing");
    let (all, _) = ok(&[
        "review",
        "list",
        "--store",
        s(&store_path),
        "--status",
        "all",
        "--task",
        "duplicate-charge",
        "--json",
    ]);
    let all: Value = serde_json::from_str(&all).expect("JSON");
    let rows = all.as_array().expect("a list");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["episode"], first.as_str());
    assert_eq!(rows[0]["status"], "approved");
    assert_eq!(rows[0]["steps"], 7);
    assert_eq!(rows[0]["last_review"]["comment"], "clean");
    assert_eq!(rows[1]["status"], "rejected");
    assert_eq!(rows[1]["last_review"]["decision"], "reject");

    // Both the native and the TRL export hold the approved episode only.
    let export_approved = |format: &str| {
        let out = dir.path().join(format!("approved-{format}.jsonl"));
        ok(&[
            "export",
            "--store",
            s(&store_path),
            "--status",
            "approved",
            "--format",
            format,
            "--output",
            s(&out),
            "--worlds",
            s(&dir.path().join("worlds")),
        ]);
        std::fs::read_to_string(&out).unwrap()
    };
    let exported = export_approved("native");
    let lines: Vec<Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "only the approved episode: {exported}");
    assert_eq!(lines[0]["episode"]["id"], first.as_str());
    assert_eq!(
        lines[0]["steps"][0]["rationale"],
        "Read the ticket before touching the account."
    );
    assert_eq!(export_approved("trl").lines().count(), 1);

    let (report, _) = ok(&[
        "rubric",
        "lint",
        "--world",
        s(&world),
        "--store",
        s(&store_path),
        "--task",
        "duplicate-charge",
        "--json",
    ]);
    let report: Value = serde_json::from_str(&report).expect("JSON");
    let gold: Vec<&Value> = report["tasks"][0]["gold"]
        .as_array()
        .expect("gold runs")
        .iter()
        .collect();
    let sources: Vec<&str> = gold.iter().filter_map(|g| g["source"].as_str()).collect();
    assert!(
        sources.contains(&format!("episode {first}").as_str()),
        "{sources:?}"
    );
    assert!(
        !sources.iter().any(|s| s.contains(&second)),
        "a rejected run is not gold: {sources:?}"
    );
    assert!(gold.iter().all(|g| g["value"] == 1.0), "{gold:?}");
}

#[test]
fn refused_reviews_say_why_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store_path = dir.path().join("s.sqlite");
    let missing = dir.path().join("typo.sqlite");
    let said = fails(&[
        "review",
        "approve",
        "--store",
        s(&missing),
        "--episode",
        "x",
        "--reviewer",
        "lee",
    ]);
    assert!(said.contains("there is no store at"), "{said}");
    assert!(!missing.exists(), "a mistyped store is not created");

    let id = record_solution(
        &common::mini_dir(),
        "pay-back",
        &store_path,
        &["--expert", "e1"],
    );
    let open = {
        let store = Arc::new(Store::open(&store_path).unwrap());
        let rec = Recorder::start(
            store,
            common::mini(),
            "pay-back",
            Actor::Expert { id: "e1".into() },
            0,
        )
        .unwrap();
        rec.record().id.clone()
    };
    let review = |verb: &str, episode: &str, comment: Option<&str>| {
        let mut args = vec![
            "review",
            verb,
            "--store",
            s(&store_path),
            "--episode",
            episode,
            "--reviewer",
            "lee",
        ];
        if let Some(c) = comment {
            args.extend(["--comment", c]);
        }
        understudy(&args)
    };
    let status = |episode: &str| {
        let store = Store::open_for_reading(&store_path).unwrap();
        (
            store.episode(episode).unwrap().status,
            store.reviews(episode).unwrap().len(),
        )
    };

    let out = review("approve", "no-such-episode", None);
    assert!(!out.status.success());
    assert!(
        text(&out).1.contains("episode no-such-episode"),
        "{}",
        text(&out).1
    );

    let out = review("approve", &open, None);
    assert!(!out.status.success());
    assert!(text(&out).1.contains("is in progress"), "{}", text(&out).1);
    assert_eq!(status(&open), (EpisodeStatus::InProgress, 0));

    let out = review("reject", &id, None);
    assert!(!out.status.success());
    assert!(
        text(&out).1.contains("--comment"),
        "clap names the flag: {}",
        text(&out).1
    );
    let out = review("reject", &id, Some("  "));
    assert!(!out.status.success());
    assert!(text(&out).1.contains("needs a comment"), "{}", text(&out).1);
    assert_eq!(status(&id), (EpisodeStatus::Submitted, 0));

    assert!(review("approve", &id, None).status.success());
    let out = review("reject", &id, Some("changed my mind"));
    assert!(!out.status.success());
    assert!(
        text(&out).1.contains("already approved by lee"),
        "{}",
        text(&out).1
    );
    assert_eq!(status(&id), (EpisodeStatus::Approved, 1));
}

#[test]
fn recording_reports_refused_steps_and_reads_actions_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let store_path = dir.path().join("s.sqlite");
    let mini = common::mini_dir();

    // The frozen task's gold is a transfer the guard refuses.
    let out = understudy(&[
        "run",
        "--world",
        s(&mini),
        "--task",
        "frozen",
        "--solution",
        "--store",
        s(&store_path),
        "--expert",
        "e1",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("refused: step 1 (`transfer`)") && stderr.contains("frozen"),
        "{stderr}"
    );
    assert!(stderr.contains("1 of them refused"), "{stderr}");
    let store = Store::open_for_reading(&store_path).unwrap();
    let t = store.trajectory(stdout.trim()).unwrap();
    assert_eq!(t.record.status, EpisodeStatus::Submitted);
    assert_eq!(t.steps.len(), 1);
    assert!(!t.steps[0].observation.ok, "recorded as the failure it was");
    drop(store);

    let actions = dir.path().join("actions.json");
    let record_actions = [
        "run",
        "--world",
        s(&mini),
        "--task",
        "pay-back",
        "--actions",
        s(&actions),
        "--store",
        s(&store_path),
        "--expert",
        "e1",
    ];
    std::fs::write(
        &actions,
        r#"[{"tool": "view_accounts", "args": {"search": "ada"}, "why": "Look first."},
            {"tool": "close", "args": {}},
            {"message": "too late"}]"#,
    )
    .unwrap();
    let (stdout, stderr) = ok(&record_actions);
    assert!(
        stderr.contains("the task ended after step 2") && stderr.contains("1 action(s)"),
        "{stderr}"
    );
    let store = Store::open_for_reading(&store_path).unwrap();
    let t = store.trajectory(stdout.trim()).unwrap();
    assert_eq!(t.steps.len(), 2);
    assert_eq!(t.steps[0].rationale.as_deref(), Some("Look first."));
    let episodes_before = store.episodes(&Default::default()).unwrap().len();
    drop(store);

    std::fs::write(
        &actions,
        r#"[{"tool": "view_accounts", "arg": {"search": "ada"}}]"#,
    )
    .unwrap();
    let said = fails(&record_actions);
    assert!(
        said.contains("action 1") && said.contains("unknown key `arg`"),
        "{said}"
    );
    std::fs::write(&actions, r#"[{"message": "hi", "why": 7}]"#).unwrap();
    let said = fails(&record_actions);
    assert!(said.contains("`why` must be text"), "{said}");
    let store = Store::open_for_reading(&store_path).unwrap();
    assert_eq!(
        store.episodes(&Default::default()).unwrap().len(),
        episodes_before,
        "nothing recorded"
    );
    drop(store);

    // Without --store the run is only printed, as before; extra keys pass.
    let (json, _) = ok(&[
        "run",
        "--world",
        s(&mini),
        "--task",
        "pay-back",
        "--actions",
        s(&actions),
    ]);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["steps"].as_array().map(Vec::len), Some(1));
    let said = fails(&[
        "run",
        "--world",
        s(&mini),
        "--task",
        "pay-back",
        "--solution",
        "--store",
        s(&store_path),
    ]);
    assert!(said.contains("--expert"), "{said}");
}
