//! Dataset export and import: native round trip to the byte, the TRL and
//! OpenAI row shapes (rationale, tool calls, retracted steps), the dataset
//! folder (chunks, checksums, card), filters, world checks, and import's
//! all-or-nothing validation.
//!
//! With `UNDERSTUDY_EXPORT_DIR` set, `export_folder_for_python` also leaves
//! a dataset folder and a TRL JSONL there for `tests/python/check_datasets.py`.

use understudy_testkit as common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use understudy::export::{self, native, ExportOptions, Filter, Format, Source, WorldSet};
use understudy::recorder::Recorder;
use understudy::store::{Actor, Decision, EpisodeStatus, ExpertInput, Store};
use understudy::{Action, Error, World};

/// A worlds folder holding the mini world and the support desk, as the
/// `--worlds` folder of a real installation would.
struct Fixture {
    dir: tempfile::TempDir,
    store: Arc<Store>,
    mini: Arc<World>,
    desk: Arc<World>,
    expert: String,
    second_expert: String,
}

impl Fixture {
    fn worlds(&self) -> PathBuf {
        self.dir.path().join("worlds")
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn store_path(&self) -> PathBuf {
        self.dir.path().join("store.sqlite")
    }
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap().flatten() {
        let to = dst.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

fn step(rec: &mut Recorder, action: Value, why: Option<&str>) {
    let action = Action::from_json(&action).unwrap();
    rec.step(action, why.map(str::to_string)).unwrap();
}

/// Records: a mini `pay-back` episode with rationale, a flag, an undone
/// step and an approving review; a second expert's `frozen` episode (with
/// an error observation), rejected; an agent's abandoned episode; and every
/// support-desk task's reference solution, submitted.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&common::mini_dir(), &dir.path().join("worlds/mini"));
    copy_dir(
        &common::repo().join("fixtures/worlds/support-desk"),
        &dir.path().join("worlds/support-desk"),
    );
    let mini = Arc::new(World::load(dir.path().join("worlds/mini")).unwrap());
    let desk = Arc::new(World::load(dir.path().join("worlds/support-desk")).unwrap());
    let store = Arc::new(Store::open(dir.path().join("store.sqlite")).unwrap());
    let expert = store
        .save_expert(
            None,
            &ExpertInput {
                name: "Dana Reyes".into(),
                domain: "Banking".into(),
                credentials: "8 years in retail banking".into(),
                credentials_attested: true,
            },
        )
        .unwrap()
        .id;
    store.set_expert_verified(&expert, true).unwrap();
    let second_expert = store
        .save_expert(
            None,
            &ExpertInput {
                name: "Sam Ortiz".into(),
                ..Default::default()
            },
        )
        .unwrap()
        .id;

    let mut rec = Recorder::start(
        store.clone(),
        mini.clone(),
        "pay-back",
        Actor::Expert { id: expert.clone() },
        7,
    )
    .unwrap();
    step(
        &mut rec,
        json!({"tool": "view_accounts", "args": {"search": "ada"}}),
        Some("Find Ada's account first."),
    );
    step(
        &mut rec,
        json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 250}}),
        Some("oops"),
    );
    rec.undo().unwrap();
    step(
        &mut rec,
        json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25.0}}),
        Some("Policy allows transfers the owner asks for."),
    );
    rec.annotate(
        2,
        Some("Policy allows transfers the owner asks for.".into()),
        Some("check amount".into()),
    )
    .unwrap();
    step(
        &mut rec,
        json!({"message": "Done: 25 sent to Charles."}),
        None,
    );
    rec.submit(None).unwrap();
    store
        .add_review(&rec.record().id, "lead", Decision::Approve, "clean")
        .unwrap();

    let mut rec = Recorder::start(
        store.clone(),
        mini.clone(),
        "frozen",
        Actor::Expert {
            id: second_expert.clone(),
        },
        0,
    )
    .unwrap();
    step(
        &mut rec,
        json!({"tool": "transfer", "args": {"from_id": "A-3", "to_id": "A-1", "amount": 5}}),
        None,
    );
    step(
        &mut rec,
        json!({"message": "Your account is frozen, so I cannot send it."}),
        Some("Guard refused."),
    );
    rec.submit(None).unwrap();
    store
        .add_review(
            &rec.record().id,
            "lead",
            Decision::Reject,
            "should have checked first",
        )
        .unwrap();

    let mut rec = Recorder::start(
        store.clone(),
        mini.clone(),
        "pay-back",
        Actor::Agent {
            model: "gpt-test".into(),
        },
        0,
    )
    .unwrap();
    step(
        &mut rec,
        json!({"tool": "get_account", "args": {"account_id": "A-1"}}),
        None,
    );
    rec.abandon().unwrap();

    for (id, task) in &desk.tasks {
        let mut rec = Recorder::start(
            store.clone(),
            desk.clone(),
            id,
            Actor::Expert { id: expert.clone() },
            0,
        )
        .unwrap();
        for (i, a) in task.solution.iter().enumerate() {
            if rec.is_done() {
                break;
            }
            step(&mut rec, a.clone(), Some(&format!("reason {i} for {id}")));
        }
        rec.submit(None).unwrap();
    }
    Fixture {
        dir,
        store,
        mini,
        desk,
        expert,
        second_expert,
    }
}

fn world_set(f: &Fixture) -> WorldSet {
    let ids = ["mini".to_string(), "support-desk".to_string()]
        .into_iter()
        .collect();
    WorldSet::load(&f.worlds(), &ids).unwrap()
}

fn options(format: Format) -> ExportOptions {
    ExportOptions {
        format,
        ..ExportOptions::default()
    }
}

fn export_bytes(
    source: &Source<'_>,
    worlds: Option<&WorldSet>,
    options: &ExportOptions,
) -> (Vec<u8>, export::ExportSummary) {
    let mut out = Vec::new();
    let summary = export::write_jsonl(source, worlds, options, &mut out, &|| {}).unwrap();
    (out, summary)
}

fn rows(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The row of the mini `pay-back` episode recorded by the expert.
fn pay_back(rows: &[Value]) -> &Value {
    rows.iter()
        .find(|r| {
            let task = r.get("task_id").or_else(|| r.pointer("/episode/task_id"));
            let actor = r
                .pointer("/actor/kind")
                .or_else(|| r.pointer("/episode/actor/kind"));
            task == Some(&json!("pay-back")) && actor == Some(&json!("expert"))
        })
        .expect("the pay-back episode is exported")
}

pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_understudy"))
}

pub(crate) fn run_ok(cmd: &mut Command) -> (String, String) {
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "command failed:\nstdout: {stdout}\nstderr: {stderr}"
    );
    (stdout, stderr)
}

pub(crate) fn run_err(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        !out.status.success(),
        "command should have failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn native_export_has_everything_and_round_trips_to_the_byte() {
    let f = fixture();
    let (first, summary) = export_bytes(&Source::Store(&f.store), None, &options(Format::Native));
    let lines = rows(&first);
    assert_eq!(summary.episodes, 3 + f.desk.tasks.len());
    assert_eq!(lines.len(), summary.episodes);
    assert!(lines.iter().all(|l| l["format"] == "understudy.episode/1"));

    let ep = pay_back(&lines);
    let header = &ep["episode"];
    for field in [
        "id",
        "world_id",
        "world_version",
        "world_hash",
        "task_id",
        "seed",
        "actor",
        "status",
        "created_at",
        "updated_at",
        "submitted_at",
        "active_ms",
        "final_message",
    ] {
        assert!(header.get(field).is_some(), "episode.{field} is exported");
    }
    assert_eq!(header["seed"], 7);
    assert_eq!(header["status"], "approved");
    assert_eq!(header["world_hash"], json!(f.mini.content_hash));
    assert_eq!(ep["expert"]["name"], "Dana Reyes");
    assert_eq!(ep["expert"]["credentials"], "8 years in retail banking");
    assert_eq!(ep["expert"]["verified"], true);
    let steps = ep["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4, "the retracted step is kept");
    assert_eq!(steps[1]["retracted"], true);
    assert!(steps[1]["retracted_at"].is_string());
    assert_eq!(
        steps[2]["rationale"],
        "Policy allows transfers the owner asks for."
    );
    assert_eq!(steps[2]["flag"], "check amount");
    assert_eq!(
        steps[2]["action"],
        json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25.0}})
    );
    for s in steps {
        for field in [
            "idx",
            "action",
            "observation",
            "is_error",
            "terminated",
            "truncated",
            "wall_at",
            "active_ms",
            "rationale",
            "flag",
            "retracted",
            "retracted_at",
        ] {
            assert!(s.get(field).is_some(), "steps[].{field} is exported");
        }
    }
    assert_eq!(
        ep["reviews"],
        json!([{"reviewer": "lead", "decision": "approve", "comment": "clean", "at": ep["reviews"][0]["at"]}])
    );
    let frozen = lines
        .iter()
        .find(|l| l["episode"]["task_id"] == "frozen")
        .unwrap();
    assert_eq!(frozen["steps"][0]["is_error"], true);
    assert_eq!(
        frozen["steps"][0]["observation"]["error"]["code"],
        "guard_failed"
    );
    let agent = lines
        .iter()
        .find(|l| l["episode"]["actor"]["kind"] == "agent")
        .unwrap();
    assert_eq!(agent["expert"], Value::Null);
    assert_eq!(agent["episode"]["actor"]["model"], "gpt-test");

    // export -> import into a fresh store -> export: the same bytes.
    let file = f.path("episodes.jsonl");
    std::fs::write(&file, &first).unwrap();
    let fresh = Store::open(f.path("fresh.sqlite")).unwrap();
    let imported = export::import(
        &fresh,
        &String::from_utf8(first.clone()).unwrap(),
        "episodes.jsonl",
        &f.worlds(),
    )
    .unwrap();
    assert_eq!(imported.episodes, summary.episodes);
    assert_eq!(imported.experts_added, 2);
    assert_eq!(imported.reviews, 2);
    let (second, _) = export_bytes(&Source::Store(&fresh), None, &options(Format::Native));
    assert_eq!(
        String::from_utf8(second).unwrap(),
        String::from_utf8(first.clone()).unwrap()
    );

    // The same through the CLI.
    let cli_store = f.path("cli.sqlite");
    run_ok(
        bin()
            .args(["import", "--store"])
            .arg(&cli_store)
            .arg("--input")
            .arg(&file)
            .arg("--worlds")
            .arg(f.worlds()),
    );
    let again = f.path("again.jsonl");
    run_ok(
        bin()
            .args(["export", "--format", "native", "--store"])
            .arg(&cli_store)
            .arg("--output")
            .arg(&again),
    );
    assert_eq!(std::fs::read(&again).unwrap(), first);
}

#[test]
fn trl_rows_carry_policy_tools_rationale_and_columns() {
    let f = fixture();
    let worlds = world_set(&f);
    let (bytes, summary) = export_bytes(
        &Source::Store(&f.store),
        Some(&worlds),
        &options(Format::Trl),
    );
    let rows = rows(&bytes);
    assert_eq!(rows.len(), summary.episodes);
    let row = pay_back(&rows);
    for col in export::trl::COLUMNS {
        assert!(row.get(col).is_some(), "column {col}");
    }
    assert_eq!(row["world_id"], "mini");
    assert_eq!(row["world_version"], "1.0.0");
    assert_eq!(row["status"], "approved");
    assert_eq!(row["actor"], json!({"kind": "expert", "id": f.expert}));
    assert_eq!(row["reward"], Value::Null);
    assert_eq!(row["pass"], Value::Null, "not scored, so no pass");

    let tools = row["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"transfer") && names.contains(&"view_accounts"),
        "{names:?}"
    );
    let transfer = tools
        .iter()
        .find(|t| t["function"]["name"] == "transfer")
        .unwrap();
    assert_eq!(transfer["type"], "function");
    assert_eq!(
        transfer["function"]["description"],
        "Move money between two accounts."
    );
    assert_eq!(
        transfer["function"]["parameters"]["required"],
        json!(["from_id", "to_id", "amount"])
    );

    let m = row["messages"].as_array().unwrap();
    let roles: Vec<&str> = m.iter().map(|x| x["role"].as_str().unwrap()).collect();
    // system, opening; view + result; transfer + result (the undone one is
    // left out); the message. The customer's reply after it is not: a row
    // ends on the last assistant turn.
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    let system = m[0]["content"].as_str().unwrap();
    assert!(
        system.contains("Task: Move 25 from Ada to Charles."),
        "{system}"
    );
    assert!(
        system.contains(f.mini.policy.trim()),
        "the policy is in the system message"
    );
    assert_eq!(m[1]["content"], "Hi, Ada here. Please send Charles 25.");
    // The rationale is there once, as reasoning, not again as content.
    assert_eq!(m[2]["content"], "");
    assert_eq!(m[2]["reasoning_content"], "Find Ada's account first.");
    assert_eq!(
        m[2]["tool_calls"],
        json!([{"id": "call_0", "type": "function", "function": {"name": "view_accounts", "arguments": {"search": "ada"}}}])
    );
    assert_eq!(m[3]["name"], "view_accounts");
    assert_eq!(
        m[3]["tool_call_id"], "call_0",
        "the tool turn names its call"
    );
    // Step 1 was undone: the next call keeps its raw step index.
    assert_eq!(m[4]["tool_calls"][0]["id"], "call_2");
    assert_eq!(m[5]["tool_call_id"], "call_2");
    assert!(m[3]["content"].as_str().unwrap().contains("A-1"));
    assert_eq!(
        m[4]["tool_calls"][0]["function"]["arguments"],
        json!({"from_id": "A-1", "to_id": "A-2", "amount": 25.0})
    );
    assert!(m[5]["content"]
        .as_str()
        .unwrap()
        .starts_with("Transfer TR-000001 of 25.0"));
    assert_eq!(
        m[6],
        json!({"role": "assistant", "content": "Done: 25 sent to Charles."})
    );
    for r in &rows {
        let last = r["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(
            last["role"], "assistant",
            "every row ends on an assistant turn"
        );
    }
    assert!(
        !rows
            .iter()
            .flat_map(|r| r["messages"].as_array().unwrap())
            .any(|x| {
                x["reasoning_content"].is_string() && x["reasoning_content"] == x["content"]
            }),
        "no rationale is repeated as content"
    );
    assert_eq!(
        summary.steps,
        rows.iter()
            .map(|r| r["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| x["role"] == "assistant")
                .count())
            .sum::<usize>()
    );

    // The error observation is the tool turn's text; the message's rationale
    // is its reasoning.
    let frozen = rows.iter().find(|r| r["task_id"] == "frozen").unwrap();
    let fm = frozen["messages"].as_array().unwrap();
    assert_eq!(fm[3]["content"], "Error: Grace Hopper's account is frozen.");
    assert_eq!(fm[4]["reasoning_content"], "Guard refused.");
    assert_eq!(
        fm[4]["content"],
        "Your account is frozen, so I cannot send it."
    );
    assert_eq!(
        fm.len(),
        5,
        "no user turn after a message nobody replied to"
    );
    assert_eq!(
        frozen["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["function"]["name"] == "close")
            .count(),
        0,
        "tools the task does not allow are left out"
    );

    // With --include-retracted the undone transfer is back.
    let mut with = options(Format::Trl);
    with.include_retracted = true;
    let (bytes, with_summary) = export_bytes(&Source::Store(&f.store), Some(&worlds), &with);
    let rows = self::rows(&bytes);
    let m = pay_back(&rows)["messages"].as_array().unwrap();
    assert_eq!(m.len(), 9);
    assert_eq!(
        m[4]["tool_calls"][0]["function"]["arguments"]["amount"],
        250
    );
    assert_eq!(with_summary.steps, summary.steps + 1);
}

#[test]
fn an_episode_with_nothing_to_train_on_is_left_out_with_a_warning() {
    let f = fixture();
    let worlds = world_set(&f);
    let before = export_bytes(
        &Source::Store(&f.store),
        Some(&worlds),
        &options(Format::Trl),
    )
    .1;
    // Opened and submitted without a single action.
    let mut idle = Recorder::start(
        f.store.clone(),
        f.mini.clone(),
        "frozen",
        Actor::Expert {
            id: f.expert.clone(),
        },
        1,
    )
    .unwrap();
    idle.submit(None).unwrap();
    let idle_id = idle.record().id.clone();
    for format in [Format::Trl, Format::OpenAi, Format::Native] {
        let (bytes, summary) =
            export_bytes(&Source::Store(&f.store), Some(&worlds), &options(format));
        let text = String::from_utf8(bytes).unwrap();
        if format == Format::Native {
            assert!(
                text.contains(&idle_id),
                "the native format keeps every episode"
            );
            assert_eq!(summary.left_out, 0);
            continue;
        }
        assert!(
            !text.contains(&idle_id),
            "{format:?}: the empty episode has no row"
        );
        assert_eq!(summary.episodes, before.episodes, "{format:?}");
        assert_eq!(summary.left_out, 1, "{format:?}");
        assert!(
            summary.warnings.iter().any(|w| w
                .contains("left out 1 episode with nothing to train on")
                && w.contains(&idle_id)),
            "{format:?}: {:?}",
            summary.warnings
        );
    }
}

#[test]
fn openai_rows_use_string_arguments_and_matching_call_ids() {
    let f = fixture();
    let worlds = world_set(&f);
    let (bytes, _) = export_bytes(
        &Source::Store(&f.store),
        Some(&worlds),
        &options(Format::OpenAi),
    );
    let rows = rows(&bytes);
    for row in &rows {
        let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["messages", "tools", "parallel_tool_calls"],
            "OpenAI rows have no extra columns"
        );
        assert_eq!(row["parallel_tool_calls"], false, "one call per turn");
        let last = row["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(
            last["role"], "assistant",
            "every row ends on an assistant turn"
        );
        let m = row["messages"].as_array().unwrap();
        for (i, msg) in m.iter().enumerate() {
            if let Some(calls) = msg.get("tool_calls") {
                let call = &calls[0];
                assert_eq!(call["type"], "function");
                let args: Value = serde_json::from_str(
                    call["function"]["arguments"]
                        .as_str()
                        .expect("arguments is a JSON string"),
                )
                .unwrap();
                assert!(args.is_object());
                if let Some(next) = m.get(i + 1) {
                    assert_eq!(next["role"], "tool");
                    assert_eq!(next["tool_call_id"], call["id"]);
                }
            }
        }
    }
    let row = rows
        .iter()
        .find(|r| {
            r["messages"][1]["content"] == "Hi, Ada here. Please send Charles 25."
                && r["messages"].as_array().unwrap().len() == 7
        })
        .unwrap();
    let m = row["messages"].as_array().unwrap();
    assert_eq!(m[2]["content"], "Find Ada's account first.");
    assert_eq!(m[2]["tool_calls"][0]["id"], "call_0");
    // Step 1 was undone: the next call keeps its raw step index.
    assert_eq!(m[4]["tool_calls"][0]["id"], "call_2");
    assert_eq!(
        m[4]["tool_calls"][0]["function"]["arguments"],
        r#"{"from_id":"A-1","to_id":"A-2","amount":25.0}"#
    );
    assert_eq!(
        m[5],
        json!({"role": "tool", "tool_call_id": "call_2", "content": m[5]["content"]})
    );

    let mut with = options(Format::OpenAi);
    with.include_retracted = true;
    let (bytes, _) = export_bytes(&Source::Store(&f.store), Some(&worlds), &with);
    let rows = self::rows(&bytes);
    let undone = rows
        .iter()
        .flat_map(|r| r["messages"].as_array().unwrap().iter())
        .find(|m| {
            m.pointer("/tool_calls/0/id") == Some(&json!("call_1"))
                && m.pointer("/tool_calls/0/function/arguments")
                    .and_then(Value::as_str)
                    .is_some_and(|a| a.contains("250"))
        })
        .expect("the undone call is included");
    assert_eq!(
        undone["weight"], 0,
        "an undone step is shown but not trained on"
    );
}

fn sha256(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn dataset_folder_has_chunks_checksums_card_and_is_reproducible() {
    let f = fixture();
    let worlds = world_set(&f);
    let mut opts = options(Format::Folder);
    opts.rows_per_file = 4;
    let out = f.path("dataset");
    let summary =
        export::export_to_path(&Source::Store(&f.store), Some(&worlds), &opts, &out, &|| {})
            .unwrap();
    let episodes = 3 + f.desk.tasks.len(); // 12
    assert_eq!(summary.episodes, episodes);
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta/info.json")).unwrap())
            .unwrap();
    assert_eq!(info["format"], "understudy.dataset/1");
    assert_eq!(
        info["exporter"],
        format!("understudy {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(info["counts"]["episodes"], episodes);
    assert_eq!(info["counts"]["steps"], summary.steps);
    let files = info["files"].as_array().unwrap();
    assert_eq!(files.len(), episodes.div_ceil(4));
    let mut total = 0;
    for (i, file) in files.iter().enumerate() {
        let rel = file["path"].as_str().unwrap();
        assert_eq!(rel, format!("data/train-{i:05}.jsonl"));
        assert_eq!(file["sha256"], sha256(&out.join(rel)), "checksum of {rel}");
        let n = std::fs::read_to_string(out.join(rel))
            .unwrap()
            .lines()
            .count();
        assert_eq!(file["rows"], n);
        assert!(n <= 4);
        total += n;
    }
    assert_eq!(total, episodes);
    let mini = info["worlds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == "mini")
        .unwrap();
    assert_eq!(mini["version"], "1.0.0");
    assert_eq!(mini["content_hash"], json!(f.mini.content_hash));
    assert_eq!(mini["tasks"], json!(["frozen", "pay-back"]));
    assert_eq!(
        info["tasks"].as_array().unwrap().len(),
        2 + f.desk.tasks.len()
    );

    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(card.starts_with("---\n"));
    let front = card.split("---\n").nth(1).unwrap();
    for needle in [
        "configs:",
        "config_name: default",
        "path: data/train-*.jsonl",
        "- name: messages\n    list: json",
        "- name: reward\n    dtype: float64",
    ] {
        assert!(
            front.contains(needle),
            "front matter has {needle:?}:\n{front}"
        );
    }
    assert!(
        card.contains(&f.desk.content_hash),
        "provenance names the world hashes"
    );

    // Same episodes, same bytes; and re-exporting replaces the folder.
    let out2 = f.path("dataset2");
    export::export_to_path(
        &Source::Store(&f.store),
        Some(&worlds),
        &opts,
        &out2,
        &|| {},
    )
    .unwrap();
    let data_files: Vec<String> = files
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    for rel in ["README.md", "meta/info.json"]
        .into_iter()
        .chain(data_files.iter().map(String::as_str))
    {
        assert_eq!(
            std::fs::read(out.join(rel)).unwrap(),
            std::fs::read(out2.join(rel)).unwrap(),
            "{rel}"
        );
    }
    // The loader caches by the card's config, so the config names the
    // content: two different exports never share a cache entry.
    assert!(
        front.contains(&format!(
            "  description: \"Understudy export, content SHA-256 {}\"",
            info["content_sha256"].as_str().unwrap()
        )),
        "the card's config names the dataset's content hash:\n{front}"
    );
    opts.rows_per_file = 100;
    export::export_to_path(&Source::Store(&f.store), Some(&worlds), &opts, &out, &|| {}).unwrap();
    assert!(
        !out.join("data/train-00001.jsonl").exists(),
        "the old chunks are gone"
    );
    let info2: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta/info.json")).unwrap())
            .unwrap();
    assert_ne!(
        info2["content_sha256"], info["content_sha256"],
        "other rows, another content hash"
    );
    assert_ne!(
        std::fs::read_to_string(out.join("README.md")).unwrap(),
        card,
        "and another card"
    );

    // A folder that is not ours is never replaced.
    let foreign = f.path("mine");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "keep me").unwrap();
    let err = export::export_to_path(
        &Source::Store(&f.store),
        Some(&worlds),
        &opts,
        &foreign,
        &|| {},
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("not an Understudy dataset folder"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "keep me"
    );
}

/// Native lines with `created_at` rewritten, imported into a new store, so
/// the date filters have known dates to work on.
fn dated_store(f: &Fixture) -> (Store, Vec<Value>) {
    let (bytes, _) = export_bytes(&Source::Store(&f.store), None, &options(Format::Native));
    let mut lines = rows(&bytes);
    let dates = [
        "2025-01-10T12:00:00.000Z",
        "2025-02-01T00:00:00.000Z",
        "2025-02-28T23:59:59.000Z",
        "2025-03-01T00:00:00.000+01:00",
    ];
    let mut text = String::new();
    for (i, l) in lines.iter_mut().enumerate() {
        l["episode"]["created_at"] = json!(dates[i % dates.len()]);
        text.push_str(&serde_json::to_string(l).unwrap());
        text.push('\n');
    }
    let store = Store::open(f.path("dated.sqlite")).unwrap();
    export::import(&store, &text, "dated.jsonl", &f.worlds()).unwrap();
    (store, lines)
}

#[test]
fn filters_by_world_task_status_expert_and_date() {
    let f = fixture();
    let (store, lines) = dated_store(&f);
    let count = |filter: Filter| {
        let opts = ExportOptions {
            filter,
            ..options(Format::Native)
        };
        let (bytes, _) = export_bytes(&Source::Store(&store), None, &opts);
        let ids: Vec<String> = rows(&bytes)
            .iter()
            .map(|r| r["episode"]["id"].as_str().unwrap().to_string())
            .collect();
        // The same filter on a native file gives the same episodes.
        let parsed: String = lines
            .iter()
            .map(|l| serde_json::to_string(l).unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        let bundles: Vec<_> = native::parse(&parsed, "x")
            .unwrap()
            .into_iter()
            .map(|p| p.bundle)
            .collect();
        let (bytes2, _) = export_bytes(&Source::Episodes(&bundles), None, &opts);
        let ids2: Vec<String> = rows(&bytes2)
            .iter()
            .map(|r| r["episode"]["id"].as_str().unwrap().to_string())
            .collect();
        let mut a = ids.clone();
        let mut b = ids2;
        a.sort();
        b.sort();
        assert_eq!(a, b, "store and file filters agree");
        ids.len()
    };
    let all = 3 + f.desk.tasks.len();
    assert_eq!(count(Filter::default()), all);
    assert_eq!(
        count(Filter {
            world: Some("mini".into()),
            ..Default::default()
        }),
        3
    );
    assert_eq!(
        count(Filter {
            world: Some("support-desk".into()),
            ..Default::default()
        }),
        f.desk.tasks.len()
    );
    assert_eq!(
        count(Filter {
            task: Some("pay-back".into()),
            ..Default::default()
        }),
        2
    );
    assert_eq!(
        count(Filter {
            status: Some(EpisodeStatus::Approved),
            ..Default::default()
        }),
        1
    );
    assert_eq!(
        count(Filter {
            status: Some(EpisodeStatus::Submitted),
            ..Default::default()
        }),
        f.desk.tasks.len()
    );
    assert_eq!(
        count(Filter {
            expert: Some(f.second_expert.clone()),
            ..Default::default()
        }),
        1
    );
    assert_eq!(
        count(Filter {
            expert: Some(f.expert.clone()),
            ..Default::default()
        }),
        1 + f.desk.tasks.len()
    );
    assert_eq!(
        count(Filter {
            world: Some("mini".into()),
            task: Some("frozen".into()),
            status: Some(EpisodeStatus::Approved),
            ..Default::default()
        }),
        0
    );
    // Dates cycle Jan 10, Feb 1, Feb 28 23:59:59, Feb 28 23:00 UTC (+01:00).
    let n = |i: usize| (0..all).filter(|k| k % 4 == i).count();
    let since = |s| Some(Filter::parse_time("--since", s, false).unwrap());
    let until = |s| Some(Filter::parse_time("--until", s, true).unwrap());
    assert_eq!(
        count(Filter {
            since: since("2025-02-01"),
            ..Default::default()
        }),
        all - n(0)
    );
    assert_eq!(
        count(Filter {
            until: until("2025-01-31"),
            ..Default::default()
        }),
        n(0)
    );
    assert_eq!(
        count(Filter {
            since: since("2025-02-01"),
            until: until("2025-02-28"),
            ..Default::default()
        }),
        n(1) + n(2) + n(3),
        "a plain --until date includes that day; +01:00 is compared as an instant"
    );
    assert_eq!(
        count(Filter {
            since: since("2025-02-28T23:30:00Z"),
            ..Default::default()
        }),
        n(2)
    );
    assert_eq!(
        count(Filter {
            until: until("2025-02-01T00:00:00Z"),
            ..Default::default()
        }),
        n(0),
        "an RFC 3339 --until is exclusive"
    );

    // Bad filter values are named.
    assert!(Filter::parse_time("--since", "last week", false)
        .unwrap_err()
        .to_string()
        .contains("--since: `last week` is not a date"));
    let e = Filter::parse_status("--status", "done")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`done` is not an episode status") && e.contains("approved"),
        "{e}"
    );

    // The CLI applies the same filters.
    let (stdout, _) = run_ok(
        bin()
            .args([
                "export", "--format", "native", "--output", "-", "--world", "mini", "--task",
                "pay-back", "--expert",
            ])
            .arg(&f.expert)
            .arg("--store")
            .arg(f.store_path()),
    );
    assert_eq!(stdout.lines().count(), 1);
    let (stdout, _) = run_ok(
        bin()
            .args([
                "export",
                "--format",
                "native",
                "--output",
                "-",
                "--since",
                "2025-02-01",
                "--until",
                "2025-02-28",
                "--status",
                "submitted",
                "--store",
            ])
            .arg(f.path("dated.sqlite")),
    );
    let expected = lines
        .iter()
        .enumerate()
        .filter(|(i, l)| i % 4 != 0 && l["episode"]["status"] == "submitted")
        .count();
    assert_eq!(stdout.lines().count(), expected);
    let err = run_err(
        bin()
            .args([
                "export", "--format", "native", "--output", "-", "--status", "done", "--store",
            ])
            .arg(f.store_path()),
    );
    assert!(
        err.contains("--status: `done` is not an episode status"),
        "{err}"
    );
}

#[test]
fn training_exports_refuse_missing_worlds_and_warn_on_changed_ones() {
    let f = fixture();
    // Only the mini world is available.
    let only_mini = f.path("only-mini");
    copy_dir(&f.worlds().join("mini"), &only_mini.join("mini"));
    let ids = ["mini".to_string(), "support-desk".to_string()]
        .into_iter()
        .collect();
    let worlds = WorldSet::load(&only_mini, &ids).unwrap();
    let mut out = Vec::new();
    let err = export::write_jsonl(
        &Source::Store(&f.store),
        Some(&worlds),
        &options(Format::Trl),
        &mut out,
        &|| {},
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("world `support-desk` is not in") && msg.contains("`mini`"),
        "{msg}"
    );
    assert!(out.is_empty(), "nothing is written before the check");
    // Filtering to the mini world works with only the mini world.
    let mut opts = options(Format::Trl);
    opts.filter.world = Some("mini".into());
    export::write_jsonl(
        &Source::Store(&f.store),
        Some(&worlds),
        &opts,
        &mut Vec::new(),
        &|| {},
    )
    .unwrap();

    // A changed world: exported, with one warning.
    common::replace(
        &only_mini.join("mini"),
        "policy.md",
        "",
        "Changed policy.\n",
    );
    let changed = WorldSet::load(&only_mini, &ids).unwrap();
    let (bytes, summary) = export_bytes(&Source::Store(&f.store), Some(&changed), &opts);
    assert_eq!(rows(&bytes).len(), 3);
    assert_eq!(summary.warnings.len(), 1, "{:?}", summary.warnings);
    assert!(
        summary.warnings[0].contains("world `mini` has changed"),
        "{}",
        summary.warnings[0]
    );

    // The CLI says the same.
    let err = run_err(
        bin()
            .args(["export", "--format", "trl", "--output"])
            .arg(f.path("x.jsonl"))
            .arg("--store")
            .arg(f.store_path())
            .arg("--worlds")
            .arg(&only_mini),
    );
    assert!(err.contains("world `support-desk` is not in"), "{err}");
    assert!(!f.path("x.jsonl").exists(), "no partial output");
    let (_, stderr) = run_ok(
        bin()
            .args([
                "export", "--format", "openai", "--world", "mini", "--output",
            ])
            .arg(f.path("y.jsonl"))
            .arg("--store")
            .arg(f.store_path())
            .arg("--worlds")
            .arg(&only_mini),
    );
    assert!(
        stderr.contains("warning: world `mini` has changed"),
        "{stderr}"
    );
    // Flags that do not apply are refused, not ignored.
    let err = run_err(
        bin()
            .args([
                "export",
                "--format",
                "native",
                "--include-retracted",
                "--output",
                "-",
                "--store",
            ])
            .arg(f.store_path()),
    );
    assert!(
        err.contains("--include-retracted applies to trl, openai and folder"),
        "{err}"
    );
    let err = run_err(
        bin()
            .args([
                "export",
                "--format",
                "trl",
                "--rows-per-file",
                "5",
                "--output",
                "-",
                "--store",
            ])
            .arg(f.store_path()),
    );
    assert!(
        err.contains("--rows-per-file applies only to --format folder"),
        "{err}"
    );
    let err = run_err(
        bin()
            .args([
                "export",
                "--format",
                "native",
                "--output",
                "-",
                "--since",
                "yesterday",
                "--store",
            ])
            .arg(f.store_path()),
    );
    assert!(err.contains("--since: `yesterday` is not a date"), "{err}");
    // A missing store is not silently created.
    let err = run_err(
        bin()
            .args(["export", "--format", "native", "--output", "-", "--store"])
            .arg(f.path("nope.sqlite")),
    );
    assert!(err.contains("there is no store at"), "{err}");
    assert!(!f.path("nope.sqlite").exists());
}

#[test]
fn import_reports_every_bad_line_and_stores_nothing() {
    let f = fixture();
    let (bytes, _) = export_bytes(&Source::Store(&f.store), None, &options(Format::Native));
    let good = rows(&bytes);
    let line = |v: &Value| serde_json::to_string(v).unwrap();
    let mut wrong_version = good[0].clone();
    wrong_version["format"] = json!("understudy.episode/9");
    let mut unknown_world = good[1].clone();
    unknown_world["episode"]["world_id"] = json!("atlantis");
    unknown_world["episode"]["id"] = json!("ep-unknown-world");
    let mut unknown_task = good[2].clone();
    unknown_task["episode"]["task_id"] = json!("no-such-task");
    unknown_task["episode"]["id"] = json!("ep-unknown-task");
    let mut gap = good[3].clone();
    gap["episode"]["id"] = json!("ep-gap");
    gap["steps"][1]["idx"] = json!(5);
    let mut bad_status = good[4].clone();
    bad_status["episode"]["id"] = json!("ep-status");
    bad_status["episode"]["status"] = json!("finished");
    let mut bad_action = good[5].clone();
    bad_action["episode"]["id"] = json!("ep-action");
    bad_action["steps"][0]["action"] = json!({"verb": "x"});
    let text = [
        line(&good[6]),          // 1: fine
        "{not json".to_string(), // 2
        line(&wrong_version),    // 3
        line(&unknown_world),    // 4
        line(&unknown_task),     // 5
        line(&good[6]),          // 6: duplicate of line 1
        line(&gap),              // 7
        line(&bad_status),       // 8
        line(&bad_action),       // 9
    ]
    .join("\n");
    let store = Store::open(f.path("target.sqlite")).unwrap();
    let err = export::import(&store, &text, "bad.jsonl", &f.worlds()).unwrap_err();
    let Error::InvalidInput { path, problems } = &err else {
        panic!("expected InvalidInput, got {err}");
    };
    assert_eq!(path, "bad.jsonl");
    let expect = [
        ("line 2:", "not valid JSON"),
        ("line 3:", "format `understudy.episode/9` is not supported"),
        ("line 4:", "world `atlantis` is not in"),
        ("line 5:", "has no task `no-such-task`"),
        ("line 6:", "appears more than once"),
        ("line 7:", "steps[1].idx is 5"),
        ("line 8:", "episode.status `finished` is not a status"),
        ("line 9:", "steps[0].action"),
    ];
    for (prefix, needle) in expect {
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(prefix) && p.contains(needle)),
            "{prefix} {needle}: {problems:#?}"
        );
    }
    assert!(
        !problems.iter().any(|p| p.starts_with("line 1:")),
        "{problems:#?}"
    );
    assert!(
        store.episodes(&Default::default()).unwrap().is_empty(),
        "nothing was stored"
    );
    assert!(
        store.experts().unwrap().is_empty(),
        "no expert was stored either"
    );

    // Episodes already in the store are refused, naming them.
    let err = export::import(&f.store, &line(&good[0]), "again.jsonl", &f.worlds()).unwrap_err();
    assert!(err.to_string().contains("is already in the store"), "{err}");

    // The CLI lists every problem, says nothing was imported, and does not
    // leave a new empty store behind.
    let bad = f.path("bad.jsonl");
    std::fs::write(&bad, &text).unwrap();
    let target = f.path("new-store.sqlite");
    let err = run_err(
        bin()
            .args(["import", "--store"])
            .arg(&target)
            .arg("--input")
            .arg(&bad)
            .arg("--worlds")
            .arg(f.worlds()),
    );
    assert!(err.contains("nothing was imported"), "{err}");
    assert!(err.contains("8 problem(s)"), "{err}");
    assert!(err.contains("line 9:"), "{err}");
    assert!(!target.exists());
}

#[test]
fn import_checks_consistency_inside_a_line() {
    let f = fixture();
    let (bytes, _) = export_bytes(&Source::Store(&f.store), None, &options(Format::Native));
    let mut ep = pay_back(&rows(&bytes)).clone();
    ep["steps"][0]["is_error"] = json!(true);
    ep["steps"][1]["wall_at"] = json!("yesterday");
    ep["expert"]["id"] = json!("someone-else");
    ep["reviews"][0]["decision"] = json!("maybe");
    ep["extra"] = json!(1);
    let err = native::parse(&serde_json::to_string(&ep).unwrap(), "x.jsonl")
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `extra`"), "{err}");
    ep.as_object_mut().unwrap().remove("extra");
    let err = native::parse(&serde_json::to_string(&ep).unwrap(), "x.jsonl")
        .unwrap_err()
        .to_string();
    for needle in [
        "steps[0].is_error is true but observation.ok is true",
        "steps[1].wall_at: `yesterday` is not an RFC 3339 time",
        "expert.id `someone-else` is not the episode's actor",
        "reviews[0].decision `maybe` is not a decision",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
}

/// Leaves a dataset folder and a TRL JSONL in `UNDERSTUDY_EXPORT_DIR` for
/// the Python `datasets` check (see scripts/python.sh); without it, writes
/// them to a temporary folder and checks the basics.
#[test]
fn export_folder_for_python() {
    let f = fixture();
    let worlds = world_set(&f);
    let target = std::env::var_os("UNDERSTUDY_EXPORT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| f.path("python"));
    std::fs::create_dir_all(&target).unwrap();
    // Small chunks, so the loader has to combine files whose rows use
    // different tools.
    let mut opts = options(Format::Folder);
    opts.rows_per_file = 5;
    let folder = target.join("dataset");
    let s = export::export_to_path(
        &Source::Store(&f.store),
        Some(&worlds),
        &opts,
        &folder,
        &|| {},
    )
    .unwrap();
    let trl = target.join("trl.jsonl");
    export::export_to_path(
        &Source::Store(&f.store),
        Some(&worlds),
        &options(Format::Trl),
        &trl,
        &|| {},
    )
    .unwrap();
    let openai = target.join("openai.jsonl");
    export::export_to_path(
        &Source::Store(&f.store),
        Some(&worlds),
        &options(Format::OpenAi),
        &openai,
        &|| {},
    )
    .unwrap();
    // Another export of other episodes (the mini world's only), for the
    // check that loading it from the same path never returns the first.
    let mut mini_only = opts.clone();
    mini_only.filter.world = Some("mini".into());
    let other = export::export_to_path(
        &Source::Store(&f.store),
        Some(&worlds),
        &mini_only,
        &target.join("dataset-mini"),
        &|| {},
    )
    .unwrap();
    assert!(other.episodes < s.episodes);
    let expected = json!({
        "episodes": s.episodes,
        "steps": s.steps,
        "files": s.episodes.div_ceil(5),
        "mini_episodes": other.episodes,
    });
    std::fs::write(
        target.join("expected.json"),
        serde_json::to_string_pretty(&expected).unwrap(),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&trl).unwrap().lines().count(),
        s.episodes
    );
    assert_eq!(
        std::fs::read_dir(folder.join("data")).unwrap().count(),
        s.episodes.div_ceil(5)
    );
}

/// The app exports through `export::ExportRequest` and
/// `export::export_store`; for the same filters it must write exactly what
/// `understudy export` writes, in every format.
#[test]
fn the_apps_export_request_writes_what_the_command_line_writes() {
    let f = fixture();
    let episodes = f.store.episodes(&Default::default()).unwrap();
    let today = episodes[0].created_at[..10].to_string();
    type Case<'a> = (Format, &'a str, Vec<(&'a str, String)>);
    let cases: [Case; 5] = [
        (Format::Native, "native", vec![]),
        (
            Format::Trl,
            "trl",
            vec![("status", "approved".into()), ("world", "mini".into())],
        ),
        (
            Format::OpenAi,
            "openai",
            vec![("expert", f.expert.clone()), ("since", today.clone())],
        ),
        (
            Format::Folder,
            "folder",
            vec![("task", "pay-back".into()), ("until", today.clone())],
        ),
        (
            Format::Trl,
            "trl",
            vec![
                ("status", "submitted".into()),
                ("since", "2020-01-01".into()),
            ],
        ),
    ];
    for (i, (format, name, filters)) in cases.iter().enumerate() {
        let by_cli = f.path(&format!("cli-{i}"));
        let mut cmd = bin();
        cmd.args(["export", "--format", name, "--output"])
            .arg(&by_cli)
            .arg("--worlds")
            .arg(f.worlds())
            .arg("--store")
            .arg(f.store_path());
        let mut request = export::ExportRequest::new(*format);
        for (flag, value) in filters {
            cmd.arg(format!("--{flag}")).arg(value);
            let slot = match *flag {
                "status" => &mut request.status,
                "world" => &mut request.world,
                "task" => &mut request.task,
                "expert" => &mut request.expert,
                "since" => &mut request.since,
                "until" => &mut request.until,
                other => panic!("no filter {other}"),
            };
            *slot = Some(value.clone());
        }
        run_ok(&mut cmd);
        let by_app = f.path(&format!("app-{i}"));
        let seen = std::cell::RefCell::new(Vec::new());
        let summary = export::export_store(
            &f.store,
            &f.worlds(),
            &request.options().unwrap(),
            &by_app,
            &|p| seen.borrow_mut().push((p.done, p.total)),
        )
        .unwrap();
        assert!(summary.episodes > 0, "case {i} exports something");
        let seen = seen.into_inner();
        let total = seen[0].1;
        assert_eq!(seen[0], (0, total), "the total comes first");
        assert_eq!(seen.last(), Some(&(total, total)), "case {i}: {seen:?}");
        assert_eq!(seen.len(), total as usize + 1);
        assert_eq!(
            export::count_matching(&f.store, &request.options().unwrap()).unwrap(),
            total as usize
        );
        if *format == Format::Folder {
            let files = |dir: &Path| -> Vec<(PathBuf, Vec<u8>)> {
                let mut out = Vec::new();
                let mut stack = vec![dir.to_path_buf()];
                while let Some(d) = stack.pop() {
                    for e in std::fs::read_dir(&d).unwrap().flatten() {
                        if e.path().is_dir() {
                            stack.push(e.path());
                        } else {
                            let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
                            out.push((rel, std::fs::read(e.path()).unwrap()));
                        }
                    }
                }
                out.sort();
                out
            };
            let (a, b) = (files(&by_cli), files(&by_app));
            assert!(!a.is_empty());
            assert_eq!(a, b, "case {i}: the dataset folders differ");
        } else {
            let (a, b) = (
                std::fs::read(&by_cli).unwrap(),
                std::fs::read(&by_app).unwrap(),
            );
            assert!(!a.is_empty());
            assert!(a == b, "case {i}: {name} exports differ");
        }
    }
}

#[test]
fn an_export_request_says_what_is_wrong_in_plain_words() {
    let wrong = |edit: &dyn Fn(&mut export::ExportRequest)| {
        let mut r = export::ExportRequest::new(Format::Trl);
        edit(&mut r);
        r.options().unwrap_err().to_string()
    };
    assert!(wrong(&|r| r.status = Some("done".into()))
        .contains("the status: `done` is not an episode status"));
    assert!(wrong(&|r| r.since = Some("last week".into())).contains("the start date"));
    assert!(wrong(&|r| {
        r.since = Some("2025-03-02".into());
        r.until = Some("2025-03-01".into());
    })
    .contains("The end date is before the start date"));
    assert!(wrong(&|r| r.rows_per_file = Some(10)).contains("only to a dataset folder"));
    assert!(wrong(&|r| {
        r.format = Format::Native;
        r.include_retracted = true;
    })
    .contains("always keeps undone steps"));
    assert!(wrong(&|r| {
        r.format = Format::Folder;
        r.rows_per_file = Some(0);
    })
    .contains("at least 1"));
    // Blank filters mean "any", and one day is a whole day.
    let mut r = export::ExportRequest::new(Format::Native);
    r.world = Some("  ".into());
    r.since = Some("2025-03-01".into());
    r.until = Some("2025-03-01".into());
    let o = r.options().unwrap();
    assert_eq!(o.filter.world, None);
    assert_eq!(
        (o.filter.until.unwrap() - o.filter.since.unwrap()).num_hours(),
        24
    );
}
