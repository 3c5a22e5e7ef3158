//! Batch scoring: input shapes, all-or-nothing parsing, the summary, and the
//! `understudy score` / `understudy rubric` commands end to end.

use understudy_testkit as common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Value};
use understudy::recorder::Recorder;
use understudy::rubric::batch;
use understudy::rubric::{RubricSet, Score};
use understudy::store::{Actor, ScoreRecord, Store};
use understudy::{Action, Error};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_understudy"))
}

fn mini_solution() -> Value {
    json!([
        {"tool": "view_accounts", "args": {"search": "ada"}},
        {"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25.0}},
        {"message": "Done: 25 sent to Charles."}
    ])
}

#[test]
fn every_input_shape_is_read_and_replayed() {
    let world = common::mini();
    let lines = [
        json!({"task_id": "frozen", "actions": [{"tool": "transfer", "args": {"from_id": "A-3", "to_id": "A-1", "amount": 5}}]}).to_string(),
        json!({"task_index": 0, "actions": [{"name": "transfer", "kwargs": {"from_id": "A-3", "to_id": "A-1", "amount": 5}}]}).to_string(),
        json!({"format": "understudy.episode/1", "episode": {"id": "ep-1", "world_id": "mini", "task_id": "frozen", "seed": 3},
               "steps": [
                   {"idx": 0, "action": {"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-3", "amount": 5}}, "retracted": true},
                   {"idx": 1, "action": {"tool": "transfer", "args": {"from_id": "A-3", "to_id": "A-1", "amount": 5}}, "retracted": false}
               ]}).to_string(),
    ];
    let t = batch::parse_jsonl(&lines.join("\n"), "in.jsonl", &world, Some("fro")).unwrap_err();
    assert!(
        t.to_string().contains("line 2: there is no task `fro0`"),
        "{t}"
    );
    let renamed = lines[1].replace("\"task_index\":0", "\"task_index\":\"zen\"");
    let text = [lines[0].clone(), renamed, lines[2].clone()].join("\n");
    let t = batch::parse_jsonl(&text, "in.jsonl", &world, Some("fro")).expect("parses");
    assert_eq!(
        t.iter()
            .map(|x| x.run.task_id.as_deref().unwrap_or(""))
            .collect::<Vec<_>>(),
        vec!["frozen"; 3]
    );
    assert_eq!(t[2].run.episode_id.as_deref(), Some("ep-1"));
    assert_eq!(t[2].run.seed, 3);
    assert_eq!(
        t[2].run.actions.len(),
        1,
        "retracted steps are not replayed"
    );
    let rubrics = RubricSet::load(&world).expect("rubrics");
    let scores = batch::score_all(&world, &rubrics, &t, None, &|| {}).expect("scored");
    assert!(
        scores.iter().all(|s| s.value == Some(1.0)),
        "{:?}",
        scores.iter().map(|s| s.value).collect::<Vec<_>>()
    );
}

#[test]
fn a_bad_line_rejects_the_whole_input_listing_every_problem() {
    let world = common::mini();
    let text = [
        "{\"task_id\": \"frozen\", \"actions\": []}",
        "not json",
        "{\"task_id\": \"nope\", \"actions\": []}",
        "{\"task_index\": 1, \"actions\": []}",
        "{\"task_id\": \"frozen\", \"actions\": [{\"wat\": 1}]}",
        "{\"task_id\": \"frozen\", \"episode\": {\"world_id\": \"elsewhere\"}, \"steps\": []}",
        "{\"task_id\": \"frozen\"}",
    ]
    .join("\n");
    match batch::parse_jsonl(&text, "in.jsonl", &world, None) {
        Err(Error::InvalidInput { path, problems }) => {
            assert_eq!(path, "in.jsonl");
            let all = problems.join("\n");
            for needle in [
                "line 2: not valid JSON",
                "line 3: there is no task `nope`",
                "line 4: a τ-bench line (`task_index`) needs --task-prefix",
                "line 5: action 1: expected",
                "line 6: the trajectory is from world `elsewhere`",
                "line 7: expected `actions`",
            ] {
                assert!(all.contains(needle), "{needle:?} not in\n{all}");
            }
            assert_eq!(problems.len(), 6);
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert!(batch::parse_jsonl("\n\n", "empty.jsonl", &world, None).is_err());
}

#[test]
fn the_summary_has_a_reproducible_interval_and_pass_hat_k() {
    let world = common::mini();
    let rubrics = RubricSet::load(&world).expect("rubrics");
    let attempt =
        json!([{"tool": "transfer", "args": {"from_id": "A-3", "to_id": "A-1", "amount": 5}}]);
    // frozen: 3 runs, 2 succeed; pay-back gold stays pending (judged).
    let text = [
        json!({"task_id": "frozen", "actions": attempt}),
        json!({"task_id": "frozen", "actions": attempt}),
        json!({"task_id": "frozen", "actions": []}),
        json!({"task_id": "pay-back", "actions": mini_solution()}),
    ]
    .iter()
    .map(Value::to_string)
    .collect::<Vec<_>>()
    .join("\n");
    let t = batch::parse_jsonl(&text, "in", &world, None).expect("parses");
    let scores = batch::score_all(&world, &rubrics, &t, None, &|| {}).expect("scored");
    let s = batch::summarize(&scores, 42);
    assert_eq!((s.episodes, s.scored, s.pending), (4, 3, 1));
    assert!((s.mean.expect("mean") - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(s.pass_k.len(), 3);
    assert!((s.pass_k[0].value - 2.0 / 3.0).abs() < 1e-12);
    assert!(
        (s.pass_k[1].value - 1.0 / 3.0).abs() < 1e-12,
        "C(2,2)/C(3,2)"
    );
    assert_eq!(s.pass_k[2].value, 0.0);
    let again = batch::summarize(&scores, 42);
    assert_eq!(s.ci95, again.ci95);
    let attempted = s
        .task_criteria
        .iter()
        .find(|c| c.criterion_id == "attempted")
        .expect("rate");
    assert_eq!((attempted.met, attempted.evaluated), (2, 3));
}

fn write(path: &Path, lines: &[Value]) {
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(path, text.join("\n") + "\n").expect("write");
}

#[test]
fn the_score_command_writes_lines_and_a_summary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.jsonl");
    let output = dir.path().join("out.jsonl");
    write(
        &input,
        &[
            json!({"task_id": "frozen", "actions": [{"tool": "transfer", "args": {"from_id": "A-3", "to_id": "A-1", "amount": 5}}]}),
            json!({"task_id": "frozen", "actions": []}),
        ],
    );
    let out = bin()
        .args(["score", "--world"])
        .arg(common::mini_dir())
        .arg("--input")
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .arg("--json")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("summary JSON on stdout");
    assert_eq!(summary["episodes"], 2);
    assert_eq!(summary["mean"], 0.5);
    let lines: Vec<Value> = std::fs::read_to_string(&output)
        .expect("output")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines[0]["line"], 1);
    assert_eq!(lines[0]["value"], 1.0);
    assert_eq!(lines[1]["value"], 0.0);
    assert_eq!(lines[1]["failed_gates"], json!([]));
    assert_eq!(
        lines[1]["criteria"][1]["evidence"]["detail"],
        "“Transfer” with Amount 5, From id “A-3” and To id “A-1” was never used; it should be used at least once"
    );

    // A task without a rubric stops everything before any work.
    let bare = common::copy_world(&common::mini_dir());
    std::fs::remove_file(bare.path().join("rubrics/frozen.toml")).expect("rm");
    let out = bin()
        .args(["score", "--world"])
        .arg(bare.path())
        .arg("--input")
        .arg(&input)
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 1: task `frozen` has no rubric"), "{err}");
}

#[test]
fn stored_episodes_of_an_actor_are_scored_and_saved() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.sqlite");
    let store = Arc::new(Store::open(&path).expect("store"));
    let world = common::mini();
    let mut ids = Vec::new();
    for actions in [
        vec![Action::tool(
            "transfer",
            json!({"from_id": "A-3", "to_id": "A-1", "amount": 5}),
        )],
        vec![],
    ] {
        let mut rec = Recorder::start(
            Arc::clone(&store),
            Arc::clone(&world),
            "frozen",
            Actor::Agent { model: "m2".into() },
            0,
        )
        .expect("start");
        for a in actions {
            rec.step(a, None).expect("step");
        }
        rec.submit(None).expect("submit");
        ids.push(rec.record().id.clone());
    }
    drop(store);
    let out = bin()
        .args(["score", "--world"])
        .arg(common::mini_dir())
        .arg("--store")
        .arg(&path)
        .args(["--actor", "m2", "--save", "--output"])
        .arg(dir.path().join("o.jsonl"))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("mean 0.500"), "{table}");
    assert!(table.contains("attempted"), "{table}");
    let store = Store::open(&path).expect("reopen");
    assert_eq!(store.latest_score_value(&ids[0]).expect("read"), Some(1.0));
    assert_eq!(store.latest_score_value(&ids[1]).expect("read"), Some(0.0));
    let stored = store.latest_score(&ids[0]).expect("read").expect("a score");
    assert_eq!(stored.record.world_hash, world.content_hash);
    assert_eq!(stored.record.rubric_version, "1");
    // The store's record holds the whole score, which the rubric reads back.
    let score = Score::try_from(&stored).expect("the stored score decodes");
    assert_eq!(score.world_hash, world.content_hash);
    assert_eq!(score.rubric_version, "1");
    assert_eq!(score.episode_id.as_deref(), Some(ids[0].as_str()));
    assert_eq!(
        ScoreRecord::try_from(&score).expect("encodes"),
        stored.record
    );

    // The store's native export scores the same, replayed from its steps.
    drop(store);
    let native = dir.path().join("native.jsonl");
    let out = bin()
        .args(["export", "--format", "native", "--store"])
        .arg(&path)
        .arg("--output")
        .arg(&native)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = bin()
        .args(["score", "--json", "--world"])
        .arg(common::mini_dir())
        .arg("--input")
        .arg(&native)
        .arg("--store")
        .arg(&path)
        .args(["--save", "--output"])
        .arg(dir.path().join("o2.jsonl"))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("summary");
    assert_eq!(summary["mean"], 0.5);
    let store = Store::open(&path).expect("reopen");
    assert_eq!(
        store.scores(&ids[0]).expect("read").len(),
        2,
        "a re-score adds history"
    );

    // Scores of trajectories that are not stored episodes cannot be saved,
    // and a batch with one unknown episode saves nothing.
    let mut unknown = stored.record.clone();
    unknown.episode_id = Some("no-such-episode".into());
    assert!(store
        .save_scores(&[stored.record.clone(), unknown])
        .is_err());
    assert_eq!(
        store.scores(&ids[0]).expect("read").len(),
        2,
        "nothing of the failed batch was stored"
    );
    let mut anonymous = stored.record.clone();
    anonymous.episode_id = None;
    assert!(store.save_scores(&[anonymous]).is_err());
}

#[test]
fn the_rubric_commands_check_lint_and_explain_failures() {
    let out = bin()
        .args(["rubric", "lint", "--world"])
        .arg(common::mini_dir())
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("passed 2/2 task(s); mutation score 100%"),
        "{text}"
    );

    let out = bin()
        .args(["rubric", "lint", "--json", "--task", "frozen", "--world"])
        .arg(common::mini_dir())
        .output()
        .expect("runs");
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["tasks"].as_array().map(Vec::len), Some(1));
    assert_eq!(report["tasks"][0]["mutation"]["score"], 1.0);

    let broken = common::copy_world(&common::mini_dir());
    std::fs::write(
        broken.path().join("rubrics/frozen.toml"),
        "format = 1\nversion = \"1\"\n[[criteria]]\nid = \"x\"\ndescription = \"x\"\nkind = \"action\"\ntool = \"wire_money\"\npoints = 1\n",
    )
    .expect("write");
    // `world check` checks the rubrics too, and says where the mistake is
    // in the same format as `rubric check`.
    for check in [&["rubric", "check", "--world"][..], &["world", "check"][..]] {
        let out = bin().args(check).arg(broken.path()).output().expect("runs");
        assert!(!out.status.success(), "{check:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("rubrics/frozen.toml:7: criterion `x`: there is no tool `wire_money`"),
            "{check:?}: {err}"
        );
    }
    let out = bin()
        .args(["rubric", "lint", "--world"])
        .arg(broken.path())
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("wire_money"));
}

#[test]
fn derive_writes_rubrics_that_pass_lint_and_never_overwrites_silently() {
    let dir = common::copy_world(&common::mini_dir());
    std::fs::remove_dir_all(dir.path().join("rubrics")).expect("rm");
    let out = bin()
        .args(["rubric", "derive", "--from-solution", "--world"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("rubrics/pay-back.toml")).expect("written");
    assert!(text.contains("id = \"accounts-a-1\""), "{text}");
    assert!(text.contains("nothing-else-changed"));
    let frozen = std::fs::read_to_string(dir.path().join("rubrics/frozen.toml")).expect("written");
    assert!(
        frozen.contains("attempt-transfer"),
        "gold changes nothing, so its call is graded: {frozen}"
    );
    // pay-back has no `outputs`, but gold tells the user after its
    // transfer: the draft checks that it does, so dropping that message is
    // caught.
    assert!(text.contains("id = \"told-the-user\""), "{text}");
    // `transfers` is empty in the seed: its columns still come out.
    assert!(
        text.contains("SELECT json_object('id', \"id\", 'from_id', \"from_id\""),
        "{text}"
    );
    let out = bin()
        .args(["rubric", "lint", "--world"])
        .arg(dir.path())
        .output()
        .expect("runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("ok   frozen"), "{report}");
    assert!(report.contains("ok   pay-back"), "{report}");

    let out = bin()
        .args(["rubric", "derive", "--from-solution", "--world"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists (use --force to replace it)"));
    let out = bin()
        .args(["rubric", "derive", "--world"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(!out.status.success(), "a source must be named");
}

#[test]
fn the_audit_prints_which_cheat_classes_each_rubric_catches() {
    let out = bin()
        .args(["rubric", "audit", "--world"])
        .arg(common::world_dir("support-desk"))
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("rubric audit: support-desk"), "{text}");
    for class in [
        "stuffing",
        "spray",
        "near-miss",
        "refused-attempt",
        "disclosure",
        "dropped-read",
        "detour",
    ] {
        assert!(text.contains(class), "{class} missing in\n{text}");
    }
    assert!(text.contains("  duplicate-charge           2/2"), "{text}");
    assert!(
        text.contains("every rubric catches every cheat class that applies to it"),
        "{text}"
    );
    // A rubric that only listens for the number misses stuffing and spray.
    let dir = common::copy_world(&common::mini_dir());
    std::fs::write(
        dir.path().join("rubrics/pay-back.toml"),
        "format = 1\nversion = \"1\"\n\n[[criteria]]\nid = \"told\"\ndescription = \"Says 25.\"\nkind = \"message\"\nnumber = 25\ncommit = false\npoints = 1\n",
    )
    .expect("write");
    let out = bin()
        .args(["rubric", "audit", "--task", "pay-back", "--world"])
        .arg(dir.path())
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("not caught everywhere: stuffing"), "{text}");
}

#[test]
fn the_score_summary_reports_the_pass_rate_and_stuffing_fails() {
    let dir = tempfile::tempdir().expect("tmp");
    let input = dir.path().join("in.jsonl");
    let stuffed: String = (0..=3000).map(|i| format!("{i}, ${i}.00, ")).collect();
    write(
        &input,
        &[
            json!({"task_id": "pay-back", "actions": mini_solution(), "judgments": [{"criterion_id": "friendly", "met": true, "reason": "ok", "judge": "t"}]}),
            json!({"task_id": "pay-back", "actions": [{"message": stuffed}]}),
        ],
    );
    let out = bin()
        .args(["score", "--world"])
        .arg(common::mini_dir())
        .arg("--input")
        .arg(&input)
        .output()
        .expect("runs");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines[0]["pass"], json!(true), "{}", lines[0]);
    assert_eq!(lines[1]["pass"], json!(false));
    assert_eq!(lines[1]["value"], json!(0.0));
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(
        summary.contains("passed 50.0% (1 of 2 decided)"),
        "{summary}"
    );
}

/// Over several tasks the summary table names each row's task: the same id
/// (`nothing-else-changed`) is a different criterion in each rubric, with
/// its own points, and merging them misread both.
#[test]
fn the_score_table_over_several_tasks_names_each_rows_task() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.jsonl");
    write(
        &input,
        &[
            json!({"task_id": "frozen", "actions": []}),
            json!({"task_id": "pay-back", "actions": []}),
        ],
    );
    let out = bin()
        .args(["score", "--world"])
        .arg(common::mini_dir())
        .arg("--input")
        .arg(&input)
        .arg("--output")
        .arg(dir.path().join("out.jsonl"))
        .output()
        .expect("runs");
    let table = String::from_utf8_lossy(&out.stdout).into_owned()
        + String::from_utf8_lossy(&out.stderr).as_ref();
    assert!(out.status.success(), "{table}");
    assert!(table.contains("task criterion"), "{table}");
    assert!(table.contains("frozen "), "{table}");
    assert!(table.contains("pay-back "), "{table}");
}

/// `score_each` streams the same scores as `score_all`, in input order,
/// and a summary built a score at a time is the summary of them all.
#[test]
fn streamed_scores_and_summary_match_the_batch_ones() {
    let world = common::mini();
    let rubrics = RubricSet::load(&world).expect("rubrics");
    let attempt =
        json!([{"tool": "transfer", "args": {"from_id": "A-3", "to_id": "A-1", "amount": 5}}]);
    let lines: Vec<String> = (0..40)
        .map(|i| match i % 3 {
            0 => json!({"task_id": "frozen", "actions": attempt}),
            1 => json!({"task_id": "frozen", "actions": []}),
            _ => json!({"task_id": "pay-back", "actions": mini_solution()}),
        })
        .map(|v| v.to_string())
        .collect();
    let t = batch::parse_jsonl(&lines.join("\n"), "in", &world, None).expect("parses");
    let all = batch::score_all(&world, &rubrics, &t, None, &|| {}).expect("scored");
    let mut streamed = Vec::new();
    let mut builder = batch::SummaryBuilder::default();
    let runs = lines.iter().enumerate().filter_map(|(i, l)| {
        batch::parse_jsonl_line(l, i + 1, &world, None)
            .map_err(understudy::Error::Other)
            .transpose()
    });
    let n = batch::score_each(&world, &rubrics, runs, None, &|| {}, &mut |line, s| {
        builder.add(&s);
        streamed.push((line, s));
        Ok(())
    })
    .expect("streamed");
    assert_eq!(n, 40);
    let lines_seen: Vec<Option<usize>> = streamed.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines_seen, (1..=40).map(Some).collect::<Vec<_>>());
    let as_json = |s: &Score| serde_json::to_string(s).expect("json");
    assert_eq!(
        streamed.iter().map(|(_, s)| as_json(s)).collect::<Vec<_>>(),
        all.iter().map(as_json).collect::<Vec<_>>()
    );
    assert_eq!(
        serde_json::to_value(builder.finish(7)).expect("json"),
        serde_json::to_value(batch::summarize(&all, 7)).expect("json")
    );
    // A bad line stops the stream with its error.
    let bad = ["{\"task_id\": \"nope\", \"actions\": []}".to_string()];
    let runs = bad.iter().enumerate().filter_map(|(i, l)| {
        batch::parse_jsonl_line(l, i + 1, &world, None)
            .map_err(understudy::Error::Other)
            .transpose()
    });
    let err = batch::score_each(&world, &rubrics, runs, None, &|| {}, &mut |_, _| Ok(()))
        .expect_err("rejected");
    assert!(err.to_string().contains("no task `nope`"), "{err}");
    assert!(matches!(
        batch::parse_jsonl_line("  ", 3, &world, None),
        Ok(None)
    ));
}
