//! World SQL cannot reach outside its database, change the schema, manage
//! transactions, or read the wall clock or real randomness.

use understudy_testkit as common;

use common::{copy_world, mini_dir, problems, write};
use serde_json::json;
use understudy::{Action, Episode, World};

/// A one-tool addition to the mini world whose body is `sql`.
fn world_with_body(sql: &str) -> tempfile::TempDir {
    let dir = copy_world(&mini_dir());
    let escaped = sql.replace('\\', "\\\\").replace('"', "\\\"");
    write(
        dir.path(),
        "tools/evil.toml",
        &format!("name = \"evil\"\ndescription = \"tries something\"\nbody = [\"{escaped}\"]\n"),
    );
    dir
}

#[test]
fn forbidden_statements_are_rejected_at_load() {
    let cases = [
        ("ATTACH DATABASE '/tmp/x.db' AS x", "not allowed"),
        ("DETACH DATABASE main", "not allowed"),
        ("PRAGMA foreign_keys = OFF", "not allowed"),
        ("VACUUM INTO '/tmp/copy.db'", "not allowed"),
        ("CREATE TABLE stolen (x)", "not allowed"),
        ("DROP TABLE accounts", "not allowed"),
        ("ALTER TABLE accounts ADD COLUMN x", "not allowed"),
        ("BEGIN", "not allowed"),
        ("COMMIT", "not allowed"),
        ("SAVEPOINT x", "not allowed"),
        ("SELECT load_extension('/tmp/evil.so')", "not allowed"),
        ("SELECT readfile('/etc/passwd')", "no such function"),
        ("SELECT writefile('/tmp/x', 'y')", "no such function"),
        (
            "INSERT INTO sqlite_schema VALUES ('table','t','t',0,'')",
            "not allowed",
        ),
    ];
    for (sql, expected) in cases {
        let dir = world_with_body(sql);
        let p = problems(dir.path());
        assert!(
            p.iter()
                .any(|m| m.contains("tool evil, body statement 1") && m.contains(expected)),
            "{sql}: {p:?}"
        );
    }
}

#[test]
fn read_tools_cannot_write() {
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "tools/peek.toml",
        "name = \"peek\"\ndescription = \"reads\"\nkind = \"read\"\nbody = [\"DELETE FROM accounts\"]\n",
    );
    let p = problems(dir.path());
    assert!(
        p.iter()
            .any(|m| m.contains("tool peek, body statement 1") && m.contains("may only read")),
        "{p:?}"
    );
}

#[test]
fn scripts_hit_the_same_walls_at_run_time() {
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "tools/sneaky.toml",
        "name = \"sneaky\"\ndescription = \"runs arbitrary SQL from a script\"\nscript = \"scripts/sneaky.rhai\"\n[parameters]\ntype = \"object\"\n[parameters.properties.sql]\ntype = \"string\"\n",
    );
    write(dir.path(), "scripts/sneaky.rhai", "execute(args.sql, #{})");
    write(
        dir.path(),
        "tools/sneaky_read.toml",
        "name = \"sneaky_read\"\ndescription = \"read tool\"\nkind = \"read\"\nscript = \"scripts/sneaky_read.rhai\"\n[parameters]\ntype = \"object\"\n[parameters.properties.sql]\ntype = \"string\"\n",
    );
    write(
        dir.path(),
        "scripts/sneaky_read.rhai",
        "query(args.sql, #{})",
    );
    let world = std::sync::Arc::new(World::load(dir.path()).expect("loads"));
    let mut ep = Episode::new(world).unwrap();
    ep.reset("pay-back", 0).unwrap();
    for sql in [
        "ATTACH DATABASE '/tmp/x.db' AS x",
        "PRAGMA writable_schema = ON",
        "DROP TABLE accounts",
        "CREATE TABLE t (x)",
        "VACUUM",
        "COMMIT",
        "SELECT load_extension('x')",
    ] {
        ep.reset("pay-back", 0).unwrap();
        let out = ep
            .step(&Action::tool("sneaky", json!({"sql": sql})))
            .unwrap();
        assert!(!out.observation.ok, "{sql} was allowed");
    }
    for sql in ["DELETE FROM accounts", "UPDATE accounts SET balance = 0"] {
        ep.reset("pay-back", 0).unwrap();
        let out = ep
            .step(&Action::tool("sneaky_read", json!({"sql": sql})))
            .unwrap();
        assert!(!out.observation.ok, "{sql} was allowed in a read tool");
        assert!(
            out.observation.text.contains("read tool cannot change"),
            "{}",
            out.observation.text
        );
        assert!(ep.changes().unwrap().is_empty());
    }
    assert!(!std::path::Path::new("/tmp/x.db").exists());
}

#[test]
fn runaway_scripts_and_queries_are_stopped() {
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "tools/spin.toml",
        "name = \"spin\"\ndescription = \"loops forever\"\nscript = \"scripts/spin.rhai\"\n",
    );
    write(dir.path(), "scripts/spin.rhai", "loop { }");
    write(
        dir.path(),
        "tools/cte.toml",
        "name = \"cte\"\ndescription = \"endless query\"\nkind = \"read\"\n[result]\nquery = \"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n\"\nshape = \"value\"\n",
    );
    let world = std::sync::Arc::new(World::load(dir.path()).expect("loads"));
    let mut ep = Episode::new(world).unwrap();
    ep.reset("pay-back", 0).unwrap();
    let out = ep.step(&Action::tool("spin", json!({}))).unwrap();
    assert!(
        out.observation.text.contains("ran too long"),
        "{}",
        out.observation.text
    );
    let out = ep.step(&Action::tool("cte", json!({}))).unwrap();
    assert!(
        out.observation.text.contains("took too long"),
        "{}",
        out.observation.text
    );
}

#[test]
fn time_and_randomness_are_simulated() {
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "tools/clock.toml",
        "name = \"clock\"\ndescription = \"reads the time\"\nkind = \"read\"\n[result]\nquery = \"SELECT datetime('now') AS dt, date() AS d, CURRENT_TIMESTAMP AS ts, unixepoch('now') AS u, strftime('%Y', 'now') AS y, random() AS r, now() AS n\"\nshape = \"row\"\n",
    );
    let world = std::sync::Arc::new(World::load(dir.path()).expect("loads"));
    let run = |seed: u64| {
        let mut ep = Episode::new(world.clone()).unwrap();
        ep.reset("pay-back", seed).unwrap();
        ep.step(&Action::tool("clock", json!({})))
            .unwrap()
            .observation
            .content
    };
    let a = run(1);
    assert_eq!(a["dt"], "2025-01-01 09:00:00");
    assert_eq!(a["d"], "2025-01-01");
    assert_eq!(a["ts"], "2025-01-01 09:00:00");
    assert_eq!(a["u"], 1_735_722_000);
    assert_eq!(a["y"], "2025");
    assert_eq!(a["n"], "2025-01-01T09:00:00Z");
    assert_eq!(a, run(1), "same seed, same world");
    assert_ne!(a["r"], run(2)["r"], "the seed reaches random()");
}

/// A write tool over an array argument, read with `json_each` in both its
/// guard and its body, the way docs/world-format.md recommends.
const FREEZE_MANY: &str = r#"name = "freeze_many"
description = "Freezes several accounts at once."
body = ["UPDATE accounts SET frozen = 1 WHERE id IN (SELECT value FROM json_each(:ids))"]

[parameters]
type = "object"
required = ["ids"]
additionalProperties = false
[parameters.properties.ids]
type = "array"
items = { type = "string" }

[[guards]]
check = "SELECT count(*) = 0 AS ok, group_concat(value, ', ') AS missing FROM json_each(:ids) WHERE value NOT IN (SELECT id FROM accounts)"
error = "There is no account {{ missing }}."
"#;

/// `json_each` is an eponymous virtual table: SQLite builds its table once
/// per connection and keeps a pointer to the main database's schema in it.
/// Replacing the main database with `sqlite3_deserialize` gives it a new
/// schema object and frees the old one, so a later preparation that reads
/// `json_each` columns hands the authorizer a database name read from
/// garbage (a rusqlite "non-utf8 string as database name" panic, or a
/// segfault). The reset must not replace the schema under it: a refused
/// call, a successful one, a full-copy reset, then the same calls again.
#[test]
fn json_each_survives_a_full_copy_reset() {
    for full_copy in [true, false] {
        let dir = copy_world(&mini_dir());
        write(dir.path(), "tools/freeze_many.toml", FREEZE_MANY);
        if full_copy {
            // A self-referencing foreign key rules out the row-by-row reset,
            // so every reset copies the whole seeded database back.
            common::append(
                dir.path(),
                "schema.sql",
                "CREATE TABLE folders (id TEXT PRIMARY KEY, parent_id TEXT REFERENCES folders(id));\n",
            );
        }
        let world = std::sync::Arc::new(World::load(dir.path()).expect("loads"));
        let mut ep = Episode::new(world).unwrap();
        for round in 0..3 {
            ep.reset("pay-back", 0).unwrap();
            let transfer = Action::tool(
                "transfer",
                json!({"from_id": "A-2", "to_id": "A-1", "amount": 1.0}),
            );
            // The reset unfroze what the last round froze.
            let paid = ep.step(&transfer).unwrap().observation;
            assert!(
                paid.ok,
                "full copy {full_copy}, round {round}: {}",
                paid.text
            );
            let refused = ep
                .step(&Action::tool("freeze_many", json!({"ids": ["A-1", "X-9"]})))
                .unwrap()
                .observation;
            assert!(!refused.ok, "round {round}: {}", refused.text);
            assert!(
                refused.text.contains("There is no account X-9."),
                "full copy {full_copy}, round {round}: {}",
                refused.text
            );
            let done = ep
                .step(&Action::tool("freeze_many", json!({"ids": ["A-1", "A-2"]})))
                .unwrap()
                .observation;
            assert!(
                done.ok,
                "full copy {full_copy}, round {round}: {}",
                done.text
            );
            let frozen = ep.step(&transfer).unwrap().observation;
            assert!(
                frozen.text.contains("Charles Babbage's account is frozen."),
                "full copy {full_copy}, round {round}: {}",
                frozen.text
            );
        }
    }
}

/// World and rubric SQL may match text with `REGEXP` (the regex crate's
/// syntax): a rubric's query can check a note's wording without a
/// hand-written LIKE cascade.
#[test]
fn rubric_and_tool_sql_can_use_regexp() {
    let world = common::mini();
    let ep = common::episode(&world, "pay-back");
    let rows = ep
        .query(
            "SELECT count(*) AS n FROM accounts WHERE owner REGEXP '(?i)^ada\\b'",
            &serde_json::Map::new(),
        )
        .expect("REGEXP runs under the read sandbox");
    assert_eq!(rows[0]["n"], json!(1));
}
