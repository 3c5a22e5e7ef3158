//! `:_arguments`: every argument of a call as one JSON object, declared or
//! not, so a guard can refuse arguments a tool does not take with the
//! world's own message (τ-bench's Python keyword errors) rather than the
//! schema's.

use understudy_testkit as common;

use std::sync::Arc;

use common::{copy_world, mini_dir, problems, replace};
use serde_json::json;
use understudy::{Action, Episode, World};

/// A copy of the mini world whose `get_account` schema lets any argument
/// name through (no `additionalProperties = false`).
fn mini_taking_any_arguments() -> tempfile::TempDir {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/get_account.toml",
        "additionalProperties = false\n",
        "",
    );
    dir
}

/// The mini world's `get_account` without `additionalProperties = false`,
/// refusing unknown argument names (the first in byte order) in a guard.
fn world_refusing_unknown_names() -> Arc<World> {
    let dir = mini_taking_any_arguments();
    common::append(
        dir.path(),
        "tools/get_account.toml",
        "\n[[guards]]\ncheck = \"SELECT name IS NULL AS ok, name FROM (SELECT (SELECT key FROM json_each(:_arguments) WHERE key <> 'account_id' ORDER BY key LIMIT 1) AS name)\"\nerror = \"get_account() got an unexpected keyword argument '{{ name }}'\"\n",
    );
    Arc::new(World::load(dir.path()).expect("the world loads"))
}

fn get(args: serde_json::Value) -> Action {
    Action::tool("get_account", args)
}

#[test]
fn a_guard_sees_every_argument_declared_or_not() {
    let world = world_refusing_unknown_names();
    let mut ep = Episode::new(world).expect("episode");
    ep.reset("pay-back", 0).expect("reset");
    let fine = ep
        .step(&get(json!({"account_id": "A-1"})))
        .expect("step")
        .observation;
    assert!(fine.ok, "{}", fine.text);
    let refused = ep
        .step(&get(json!({"account_id": "A-1", "zeta": 1, "beta": [2]})))
        .expect("step")
        .observation;
    assert!(!refused.ok);
    assert_eq!(
        refused.text,
        "Error: get_account() got an unexpected keyword argument 'beta'"
    );
}

#[test]
fn arguments_bind_as_json_with_their_types() {
    let dir = mini_taking_any_arguments();
    replace(
        dir.path(),
        "tools/get_account.toml",
        "query = \"SELECT id, owner, balance FROM accounts WHERE id = :account_id\"",
        "query = \"SELECT :_arguments AS args, json_type(:_arguments, '$.n') AS n, json_type(:_arguments, '$.list') AS list\"",
    );
    let world = Arc::new(World::load(dir.path()).expect("the world loads"));
    let mut ep = Episode::new(world).expect("episode");
    ep.reset("pay-back", 0).expect("reset");
    let out = ep
        .step(&get(
            json!({"account_id": "A-1", "n": 2.5, "list": [1, "x"]}),
        ))
        .expect("step")
        .observation;
    assert!(out.ok, "{}", out.text);
    assert_eq!(
        out.content,
        json!({"args": r#"{"account_id":"A-1","n":2.5,"list":[1,"x"]}"#, "n": "real", "list": "array"})
    );
}

#[test]
fn a_tool_may_not_declare_the_reserved_name() {
    let dir = copy_world(&mini_dir());
    common::append(
        dir.path(),
        "tools/get_account.toml",
        "[parameters.properties._arguments]\ntype = \"string\"\n",
    );
    let found = problems(dir.path());
    assert!(
        found.iter().any(|p| p.contains("tools/get_account.toml")
            && p.contains("parameter _arguments")
            && p.contains("reserved")),
        "{found:?}"
    );
}

#[test]
fn other_undeclared_names_are_still_refused() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/get_account.toml",
        "WHERE id = :account_id\"\nerror",
        "WHERE id = :arguments\"\nerror",
    );
    let found = problems(dir.path());
    assert!(
        found
            .iter()
            .any(|p| p.contains("uses :arguments, which is not a declared parameter")),
        "{found:?}"
    );
}
