//! Guards and views see the episode's own calls through `called()`, so a
//! policy like "look the account up before moving its money" is enforced
//! by the world, not only graded by a rubric.

use understudy_testkit as common;

use std::sync::Arc;

use common::{copy_world, mini_dir};
use serde_json::json;
use understudy::{Action, Episode, World};

/// The mini world with `transfer` guarded by an earlier successful
/// `get_account` of the account the money leaves.
fn world_that_wants_a_look_first() -> Arc<World> {
    let dir = copy_world(&mini_dir());
    common::append(
        dir.path(),
        "tools/transfer.toml",
        "\n[[guards]]\ncheck = \"SELECT called('get_account', 'account_id', :from_id) > 0\"\nerror = \"Look up {{ from_id }} before moving its money.\"\n",
    );
    let tasks = dir.path().join("tasks/tasks.toml");
    let text = std::fs::read_to_string(&tasks).expect("tasks");
    std::fs::write(&tasks, text.replace("max_steps = 5", "max_steps = 20")).expect("tasks");
    let world = Arc::new(World::load(dir.path()).expect("the world loads"));
    // The folder can go: a loaded world keeps what it read.
    drop(dir);
    world
}

fn transfer(from: &str) -> Action {
    Action::tool(
        "transfer",
        json!({"from_id": from, "to_id": "A-2", "amount": 5}),
    )
}

fn look(id: &str) -> Action {
    Action::tool("get_account", json!({"account_id": id}))
}

#[test]
fn a_guard_refuses_a_write_until_the_right_record_was_read() {
    let world = world_that_wants_a_look_first();
    let mut ep = Episode::new(world).expect("episode");
    ep.reset("pay-back", 0).expect("reset");
    let refused = ep.step(&transfer("A-1")).expect("step").observation;
    assert!(!refused.ok, "{}", refused.text);
    assert!(
        refused.text.contains("Look up A-1 before"),
        "{}",
        refused.text
    );
    // Looking at another account does not count, nor does a failed look-up.
    ep.step(&look("A-3")).expect("step");
    let missing = ep.step(&look("A-999")).expect("step").observation;
    assert!(!missing.ok, "{}", missing.text);
    assert!(!ep.step(&transfer("A-1")).expect("step").observation.ok);
    ep.step(&look("A-1")).expect("step");
    let done = ep.step(&transfer("A-1")).expect("step").observation;
    assert!(done.ok, "{}", done.text);
}

#[test]
fn calls_are_forgotten_at_reset_and_counted_by_queries() {
    let world = world_that_wants_a_look_first();
    let mut ep = Episode::new(world).expect("episode");
    ep.reset("pay-back", 0).expect("reset");
    ep.step(&look("A-1")).expect("step");
    ep.step(&look("A-1")).expect("step");
    let count = |ep: &Episode, sql: &str| {
        ep.query(sql, &serde_json::Map::new()).expect("query")[0]["n"].clone()
    };
    assert_eq!(count(&ep, "SELECT called('get_account') AS n"), json!(2));
    assert_eq!(
        count(
            &ep,
            "SELECT called('get_account', 'account_id', 'A-2') AS n"
        ),
        json!(0)
    );
    assert_eq!(count(&ep, "SELECT called('transfer') AS n"), json!(0));
    ep.reset("pay-back", 0).expect("reset");
    assert_eq!(count(&ep, "SELECT called('get_account') AS n"), json!(0));
    assert!(!ep.step(&transfer("A-1")).expect("step").observation.ok);
}

#[test]
fn called_with_the_wrong_arguments_is_a_clear_error() {
    let world = world_that_wants_a_look_first();
    let ep = {
        let mut ep = Episode::new(world).expect("episode");
        ep.reset("pay-back", 0).expect("reset");
        ep
    };
    let err = ep
        .query(
            "SELECT called('get_account', 'account_id') AS n",
            &serde_json::Map::new(),
        )
        .expect_err("two arguments are refused")
        .to_string();
    assert!(
        err.contains("called(tool) or called(tool, argument, value)"),
        "{err}"
    );
}
