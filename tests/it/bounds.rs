//! Bounds on every call: a hostile world's template or SQL fails the call
//! (or the load) quickly, with an error that names what broke, instead of
//! hanging or taking a gigabyte.

use understudy_testkit as common;

use std::sync::mpsc;
use std::time::Duration;

use common::{copy_world, mini_dir, write};
use serde_json::json;
use understudy::{Action, Episode, World};

/// Runs `f` on its own thread and fails the test if it does not return
/// within `seconds` (before the bounds existed, these calls never did).
fn within<T: Send + 'static>(seconds: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(seconds))
        .unwrap_or_else(|_| panic!("the call did not return within {seconds} s"))
}

/// The mini world plus one read tool `name` described by `toml`.
fn world_with_tool(name: &str, toml: &str) -> tempfile::TempDir {
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        &format!("tools/{name}.toml"),
        &format!("name = \"{name}\"\ndescription = \"hostile\"\nkind = \"read\"\n{toml}"),
    );
    dir
}

/// One step of tool `name` with no arguments in a fresh episode.
fn step_once(dir: &std::path::Path, name: &str) -> understudy::Observation {
    let world = std::sync::Arc::new(World::load(dir).expect("the world loads"));
    let name = name.to_string();
    within(60, move || {
        let mut ep = Episode::new(world).expect("episode");
        ep.reset("pay-back", 0).expect("reset");
        ep.step(&Action::tool(&name, json!({})))
            .expect("step")
            .observation
    })
}

/// Asserts that calling tool `name` (`toml` added to a read tool of that
/// name) fails, within a time limit, with an error containing each of `words`.
fn assert_tool_fails(name: &str, toml: &str, words: &[&str]) {
    let dir = world_with_tool(name, toml);
    let out = step_once(dir.path(), name);
    assert!(
        !out.ok,
        "{name} succeeded with {} bytes of text",
        out.text.len()
    );
    for word in words {
        assert!(out.text.contains(word), "{name}: {}", out.text);
    }
}

#[test]
fn a_runaway_result_template_fails_fast_naming_tool_and_template() {
    assert_tool_fails(
        "spin",
        "[result]\nquery = \"SELECT 1\"\nshape = \"value\"\ntext = \"{% for i in range(100000) %}{% for j in range(100000) %}.{% endfor %}{% endfor %}\"\n",
        &["`spin`", "spin/text", "took too long"],
    );
}

#[test]
fn a_huge_rendered_message_is_refused() {
    assert_tool_fails(
        "shout",
        "[result]\nquery = \"SELECT 1\"\nshape = \"value\"\ntext = \"{% for i in range(4000) %}{{ 'x' * 1000 }}{% endfor %}\"\n",
        &["`shout`", "bytes of text"],
    );
}

/// Asserts that the mini world with `schema` added to its `schema.sql`
/// fails to load, within a time limit, with a problem in `file` that says
/// `words`.
fn assert_schema_fails_load(schema: &str, file: &str, words: &str) {
    let dir = copy_world(&mini_dir());
    common::append(dir.path(), "schema.sql", schema);
    let path = dir.path().to_path_buf();
    let problems = within(60, move || common::problems(&path));
    assert!(
        problems
            .iter()
            .any(|p| p.contains(file) && p.contains(words)),
        "{problems:?}"
    );
}

#[test]
fn an_endless_recursive_cte_in_schema_sql_fails_the_load() {
    assert_schema_fails_load(
        "CREATE TABLE forever AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) AS m FROM n;",
        "schema.sql",
        "took too long",
    );
}

#[test]
fn an_endless_trigger_fails_the_seed_with_its_file() {
    assert_schema_fails_load(
        "CREATE TABLE log (n INTEGER);\nCREATE TRIGGER spin AFTER INSERT ON accounts BEGIN INSERT INTO log WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n; END;",
        "accounts.csv",
        "SQLite operations",
    );
}

#[test]
fn an_endless_rubric_query_is_stopped_with_a_clear_error() {
    let world = common::mini();
    let err = within(60, move || {
        let ep = common::episode(&world, "pay-back");
        ep.query(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n",
            &serde_json::Map::new(),
        )
        .expect_err("an endless query fails")
        .to_string()
    });
    assert!(err.contains("took too long"), "{err}");
    assert!(err.contains("SQLite operations"), "{err}");
}

#[test]
fn a_gigabyte_string_in_a_tool_fails_naming_the_limit_and_the_tool() {
    assert_tool_fails(
        "balloon",
        "[result]\nquery = \"SELECT length(printf('%.*c', 999999999, 'x'))\"\nshape = \"value\"\n",
        &["`balloon`", "8 MiB"],
    );
}

#[test]
fn a_gigabyte_blob_in_a_rubric_query_fails_naming_the_limit() {
    let world = common::mini();
    let ep = common::episode(&world, "pay-back");
    let err = ep
        .query("SELECT length(hex(zeroblob(4e8)))", &serde_json::Map::new())
        .expect_err("a 400 MB blob is refused")
        .to_string();
    assert!(err.contains("8 MiB"), "{err}");
}

#[test]
fn many_rows_under_the_value_limit_still_cannot_take_gigabytes() {
    assert_tool_fails(
        "flood",
        "[result]\nquery = \"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT i, hex(zeroblob(2000000)) AS junk FROM n\"\nshape = \"rows\"\n",
        &["the rows returned take more than 32 MiB"],
    );
}

#[test]
fn a_write_tool_cannot_grow_the_database_without_bound() {
    let dir = copy_world(&mini_dir());
    common::append(dir.path(), "schema.sql", "CREATE TABLE junk (b BLOB);");
    write(
        dir.path(),
        "tools/hoard.toml",
        "name = \"hoard\"\ndescription = \"fills the database\"\nbody = [\"INSERT INTO junk WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT zeroblob(4000000) FROM n\"]\n",
    );
    let out = step_once(dir.path(), "hoard");
    assert!(!out.ok, "{}", out.text);
    assert!(out.text.contains("`hoard`"), "{}", out.text);
    assert!(out.text.contains("128 MiB"), "{}", out.text);
}

/// Set in the child process of
/// [`past_the_process_heap_limit_a_tool_fails_naming_the_limit`]: the heap
/// cap is process-wide, so lowering it must not touch the other tests.
const HEAP_CHILD: &str = "UNDERSTUDY_TEST_HEAP_CHILD";

#[test]
fn past_the_process_heap_limit_a_tool_fails_naming_the_limit() {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "bounds::heap_limit_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HEAP_CHILD, "1")
        .output()
        .expect("the child test runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}"
    );
    assert!(stdout.contains("heap child: refused"), "{stdout}");
}

/// The child's half: lowers the cap to 24 MiB, then a write tool that
/// builds 80 MB of rows (under the 128 MiB database cap) must fail naming
/// the memory cap, and the episode must go on working.
#[test]
fn heap_limit_child() {
    if std::env::var_os(HEAP_CHILD).is_none() {
        return; // run only as the child of the test above
    }
    let dir = copy_world(&mini_dir());
    common::append(dir.path(), "schema.sql", "CREATE TABLE junk (b BLOB);");
    write(
        dir.path(),
        "tools/hoard.toml",
        "name = \"hoard\"\ndescription = \"fills memory\"\nbody = [\"INSERT INTO junk WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT randomblob(2000000) FROM n\"]\n",
    );
    let world = std::sync::Arc::new(World::load(dir.path()).expect("the world loads"));
    let mut ep = Episode::new(world).expect("episode");
    ep.reset("pay-back", 0).expect("reset");
    // The engine opened SQLite first, so the cap is the lock-free
    // counting allocator's, not SQLite's own (which takes a global mutex on
    // every allocation).
    assert!(
        understudy_cowvfs::heap::installed(),
        "SQLite's own allocator is in use"
    );
    assert!(understudy_cowvfs::heap::used() > 0, "nothing counted");
    understudy::sql::limits::lower_process_heap_limit(24 << 20).expect("lowered");
    let out = ep
        .step(&Action::tool("hoard", json!({})))
        .expect("step")
        .observation;
    assert!(!out.ok, "{}", out.text);
    assert!(out.text.contains("`hoard`"), "{}", out.text);
    assert!(out.text.contains("24 MiB of memory"), "{}", out.text);
    let next = ep
        .query("SELECT count(*) AS n FROM junk", &serde_json::Map::new())
        .expect("the episode still answers");
    assert_eq!(next[0]["n"], json!(0), "the failed call left rows behind");
    println!("heap child: refused");
}
