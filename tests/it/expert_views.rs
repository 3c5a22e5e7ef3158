//! Views for the expert only (`audience = "expert"`): the person recording
//! in the app reads them as recorded steps; no agent is offered them or may
//! call them, whatever path it comes by.

use std::sync::Arc;

use serde_json::json;
use understudy::observation::ObservationErrorCode;
use understudy::recorder::Recorder;
use understudy::replay::replay_stored;
use understudy::store::{Actor, Store};
use understudy::world::Audience;
use understudy::{Action, World};
use understudy_testkit as common;

use common::{append, copy_world, expert, mini_dir, problems};

const LEDGER: &str = r#"
[[views]]
name = "ledger"
title = "Ledger"
audience = "expert"
query = "SELECT id, owner FROM accounts ORDER BY id"
key = "id"
record = "SELECT * FROM accounts WHERE id = :key"
"#;

/// The mini world with one more view, `ledger`, shown to the expert only.
fn mini_with_ledger() -> (tempfile::TempDir, Arc<World>) {
    let dir = copy_world(&mini_dir());
    append(dir.path(), "views.toml", LEDGER);
    let world = Arc::new(World::load(dir.path()).expect("the mini world with a ledger loads"));
    (dir, world)
}

fn names(specs: Vec<understudy::world::ToolSpec>) -> Vec<String> {
    specs.into_iter().map(|s| s.name).collect()
}

#[test]
fn agents_are_not_offered_an_expert_view_and_experts_are() {
    let (_dir, world) = mini_with_ledger();
    assert_eq!(world.views["ledger"].audience, Audience::Expert);
    assert_eq!(world.views["accounts"].audience, Audience::Everyone);
    let task = world.task("pay-back").expect("the task exists");
    for agent in [
        names(world.tool_specs()),
        names(world.task_tool_specs(task)),
    ] {
        assert!(agent.contains(&"view_accounts".to_string()), "{agent:?}");
        assert!(!agent.contains(&"view_ledger".to_string()), "{agent:?}");
    }
    for expert in [
        names(world.expert_tool_specs()),
        names(world.expert_task_tool_specs(task)),
    ] {
        assert!(expert.contains(&"view_accounts".to_string()), "{expert:?}");
        assert!(expert.contains(&"view_ledger".to_string()), "{expert:?}");
    }
}

#[test]
fn an_agent_calling_an_expert_view_gets_an_unknown_tool() {
    let (_dir, world) = mini_with_ledger();
    let mut ep = common::episode(&world, "pay-back");
    let out = ep.step(&Action::tool("view_ledger", json!({}))).unwrap();
    let error = out
        .observation
        .error
        .expect("an agent may not read the ledger");
    assert_eq!(error.code, ObservationErrorCode::UnknownTool);
    assert!(
        error.message.starts_with("Unknown action view_ledger."),
        "{}",
        error.message
    );
    assert!(
        !error.message.contains("`view_ledger`"),
        "the tools listed to an agent leave it out: {}",
        error.message
    );
    // A refused call is not a call: `called()` does not count it.
    let counted = ep
        .query("SELECT called('view_ledger') AS n", &Default::default())
        .unwrap();
    assert_eq!(counted[0]["n"], json!(0));

    ep.set_expert(true);
    let out = ep.step(&Action::tool("view_ledger", json!({}))).unwrap();
    assert!(out.observation.ok, "{:?}", out.observation);
    assert_eq!(out.observation.content["total"], json!(3));
    let out = ep
        .step(&Action::tool("view_ledger", json!({"key": "A-1"})))
        .unwrap();
    assert!(out.observation.ok, "{:?}", out.observation);
    assert_eq!(out.observation.content["id"], json!("A-1"));
}

#[test]
fn the_recorder_opens_expert_views_to_experts_only_and_replay_agrees() {
    let (dir, world) = mini_with_ledger();
    let store = Arc::new(Store::open(dir.path().join("store.sqlite")).unwrap());

    let mut agent = Recorder::start(
        Arc::clone(&store),
        Arc::clone(&world),
        "pay-back",
        Actor::Agent { model: "m".into() },
        0,
    )
    .unwrap();
    let step = agent
        .step(Action::tool("view_ledger", json!({})), None)
        .unwrap();
    assert_eq!(
        step.record.observation.error.map(|e| e.code),
        Some(ObservationErrorCode::UnknownTool)
    );

    let actor = expert(&store);
    let mut rec =
        Recorder::start(Arc::clone(&store), Arc::clone(&world), "pay-back", actor, 0).unwrap();
    let listed = rec
        .step(
            Action::tool("view_ledger", json!({})),
            Some("who has an account".into()),
        )
        .unwrap();
    assert!(
        listed.record.observation.ok,
        "{:?}",
        listed.record.observation
    );
    let opened = rec
        .step(Action::tool("view_ledger", json!({"key": "A-2"})), None)
        .unwrap();
    assert!(
        opened.record.observation.ok,
        "{:?}",
        opened.record.observation
    );
    let id = rec.record().id.clone();
    // The expert's reads are stored steps, in order.
    let stored = store.steps(&id).unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].action, Action::tool("view_ledger", json!({})));
    assert_eq!(stored[0].rationale.as_deref(), Some("who has an account"));
    drop(rec);

    // Reopening after a crash replays the reads as the expert's, and checks
    // each observation against the stored one.
    let rec = Recorder::reopen(Arc::clone(&store), Arc::clone(&world), &id, false)
        .expect("the expert's episode reopens");
    let report = replay_stored(&world, rec.trajectory(), false).unwrap();
    assert!(report.divergence.is_none(), "{:?}", report.divergence);
    assert_eq!(report.replayed_steps, 2);
}

#[test]
fn a_bad_audience_is_named_with_its_line() {
    let dir = copy_world(&mini_dir());
    append(
        dir.path(),
        "views.toml",
        &LEDGER.replace("audience = \"expert\"", "audience = \"experts\""),
    );
    let p = problems(dir.path());
    assert!(
        p.iter().any(|m| m.contains("views.toml:13")
            && m.contains("view ledger")
            && m.contains("audience `experts` is not one; expected `everyone`")
            && m.contains("`expert`")),
        "{p:?}"
    );

    let dir = copy_world(&mini_dir());
    append(
        dir.path(),
        "views.toml",
        &LEDGER.replace("audience = \"expert\"", "audience = true"),
    );
    let p = problems(dir.path());
    assert!(
        p.iter()
            .any(|m| m.contains("views.toml:13") && m.contains("string")),
        "{p:?}"
    );
}

/// τ-bench's tools, as its agents get them: exactly its own, no lists.
#[test]
fn the_tau_worlds_list_their_records_to_the_expert_only() {
    for (name, tools, lists) in [
        (
            "tau-airline",
            14,
            ["view_users", "view_reservations", "view_flights"],
        ),
        (
            "tau-retail",
            16,
            ["view_users", "view_orders", "view_products"],
        ),
    ] {
        let world = common::world(name);
        let agent = names(world.tool_specs());
        assert_eq!(agent.len(), tools, "{name}: {agent:?}");
        assert!(
            agent.iter().all(|t| !t.starts_with("view_")),
            "{name}: {agent:?}"
        );
        let task_id = world.tasks.keys().next().expect("a task").clone();
        let mut ep = common::episode(&world, &task_id);
        ep.set_expert(true);
        for list in lists {
            let out = ep.step(&Action::tool(list, json!({"limit": 3}))).unwrap();
            assert!(out.observation.ok, "{name} {list}: {:?}", out.observation);
            let rows = out.observation.content["rows"].as_array().expect("rows");
            assert_eq!(rows.len(), 3, "{name} {list}");
            assert!(
                out.observation.content["total"].as_u64().unwrap() > 3,
                "{name} {list}"
            );
            let view = &world.views[list.trim_start_matches("view_")];
            let key = rows[0][view.key.as_deref().expect("a key")].clone();
            let out = ep.step(&Action::tool(list, json!({"key": key}))).unwrap();
            assert!(out.observation.ok, "{name} {list}: {:?}", out.observation);
            let record = out.observation.content.as_object().expect("a record");
            assert_eq!(record[view.key.as_deref().unwrap()], key, "{name} {list}");
            let filled = record.values().filter(|v| !v.is_null()).count();
            assert!(
                filled * 4 >= record.len() * 3,
                "{name} {list}: most fields of the first record have a value: {record:?}"
            );
        }
    }
}

/// An expert's reads of an expert-only list stay in the native export (it
/// keeps everything) and are left out of every agent-facing format: their
/// tool is not in the row's `tools`, and a model must not learn to call a
/// tool it does not have.
#[test]
fn agent_facing_exports_leave_out_reads_of_expert_only_lists() {
    use understudy::export::{self, ExportOptions, Format, Source, WorldSet};
    let (dir, world) = mini_with_ledger();
    let store = Arc::new(Store::open(dir.path().join("store.sqlite")).unwrap());
    let actor = expert(&store);
    let mut rec =
        Recorder::start(Arc::clone(&store), Arc::clone(&world), "pay-back", actor, 0).unwrap();
    rec.step(
        Action::tool("view_ledger", json!({})),
        Some("who has an account".into()),
    )
    .unwrap();
    rec.step(Action::tool("view_accounts", json!({})), None)
        .unwrap();
    rec.step(Action::message("I'm looking into it."), None)
        .unwrap();
    rec.submit(None).unwrap();
    let worlds = WorldSet::single(Arc::clone(&world));
    let export = |format: Format| -> (String, usize) {
        let options = ExportOptions {
            format,
            ..ExportOptions::default()
        };
        if format == Format::Folder {
            let out = tempfile::tempdir().unwrap();
            let path = out.path().join("dataset");
            let summary = export::export_to_path(
                &Source::Store(&store),
                Some(&worlds),
                &options,
                &path,
                &|| {},
            )
            .unwrap();
            let mut text = String::new();
            for f in &summary.files {
                let p = path.join(f);
                if p.extension().is_some_and(|e| e == "jsonl") {
                    text.push_str(&std::fs::read_to_string(p).unwrap());
                }
            }
            return (text, summary.steps);
        }
        let mut out = Vec::new();
        let summary = export::write_jsonl(
            &Source::Store(&store),
            Some(&worlds),
            &options,
            &mut out,
            &|| {},
        )
        .unwrap();
        (String::from_utf8(out).unwrap(), summary.steps)
    };
    let (native, steps) = export(Format::Native);
    assert!(
        native.contains("view_ledger"),
        "the native format keeps everything"
    );
    assert_eq!(steps, 3);
    for format in [Format::Trl, Format::OpenAi, Format::Folder] {
        let (text, steps) = export(format);
        assert!(!text.is_empty(), "{format:?}: a row");
        assert!(!text.contains("view_ledger"), "{format:?}: {text}");
        assert!(
            !text.contains("who has an account"),
            "{format:?}: its why goes with it"
        );
        assert!(
            text.contains("view_accounts"),
            "{format:?}: a list agents have stays"
        );
        assert_eq!(steps, 2, "{format:?}: the steps written");
    }
}
