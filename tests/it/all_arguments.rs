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

/// An episode of `pay-back` on `world`, checked to take a call with the
/// declared argument only.
fn episode_taking_a_plain_call(world: Arc<World>) -> Episode {
    let mut ep = Episode::new(world).expect("episode");
    ep.reset("pay-back", 0).expect("reset");
    let fine = call(&mut ep, json!({"account_id": "A-1"}));
    assert!(fine.ok, "{}", fine.text);
    ep
}

fn call(ep: &mut Episode, args: serde_json::Value) -> understudy::Observation {
    ep.step(&get(args)).expect("step").observation
}

#[test]
fn a_guard_sees_every_argument_declared_or_not() {
    let mut ep = episode_taking_a_plain_call(world_refusing_unknown_names());
    let refused = call(
        &mut ep,
        json!({"account_id": "A-1", "zeta": 1, "beta": [2]}),
    );
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

/// The mini world's `get_account` refusing `data` and undeclared argument
/// names with `[arguments]`, in Rust, before its guards.
fn world_with_argument_rules(rules: &str) -> tempfile::TempDir {
    let dir = mini_taking_any_arguments();
    common::append(dir.path(), "tools/get_account.toml", rules);
    dir
}

const RULES: &str = "\n[arguments]\nreserved.data = \"get_account() got multiple values for 'data' (account {{ account_id }})\"\nunexpected = \"get_account() got an unexpected keyword argument '{{ name }}'\"\n";

#[test]
fn argument_rules_refuse_reserved_then_undeclared_names_before_any_guard() {
    let dir = world_with_argument_rules(RULES);
    let world = Arc::new(World::load(dir.path()).expect("the world loads"));
    let mut ep = episode_taking_a_plain_call(world);
    // Both wrong: the reserved name is refused first, its template sees the arguments.
    let refused = call(&mut ep, json!({"account_id": "A-1", "zeta": 1, "data": 2}));
    assert!(!refused.ok);
    assert_eq!(
        refused.error.as_ref().map(|e| e.code),
        Some(understudy::observation::ObservationErrorCode::GuardFailed)
    );
    assert_eq!(
        refused.text,
        "Error: get_account() got multiple values for 'data' (account A-1)"
    );
    // Undeclared names: the first in code-point order ("Beta" before "alpha").
    let refused = call(
        &mut ep,
        json!({"account_id": "A-1", "alpha": 1, "Beta": [2]}),
    );
    assert_eq!(
        refused.text,
        "Error: get_account() got an unexpected keyword argument 'Beta'"
    );
    // An unknown account still reaches the guards (and their own message).
    let missing = call(&mut ep, json!({"account_id": "A-404"}));
    assert!(!missing.ok);
    assert!(!missing.text.contains("keyword"), "{}", missing.text);
}

#[test]
fn argument_rules_that_contradict_the_parameters_or_name_unknowns_are_rejected() {
    let dir = world_with_argument_rules(
        "\n[arguments]\nreserved.account_id = \"no\"\nunexpected = \"bad {{ nme }}\"\n",
    );
    let found = problems(dir.path());
    assert!(
        found.iter().any(|p| p.contains("tools/get_account.toml")
            && p.contains("arguments.reserved.account_id")
            && p.contains("declared in parameters")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|p| p.contains("arguments.unexpected") && p.contains("`nme`")),
        "{found:?}"
    );
    let dir = world_with_argument_rules("\n[arguments]\nreserved = 3\n");
    let found = problems(dir.path());
    assert!(
        found
            .iter()
            .any(|p| p.contains("tools/get_account.toml:") && p.contains("expected a map")),
        "{found:?}"
    );
}
