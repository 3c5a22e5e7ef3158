//! A team's project through the hub, with the command line only: an admin
//! adds people and a world and assigns a task to two experts, who record
//! and push; a reviewer lists the hub's queue and approves; an engineer's
//! export from the hub is what the experts' stores export locally.
//!
//! Needs the PostgreSQL server the hub stage starts
//! (`UNDERSTUDY_HUB_TEST_DATABASE`), so it is ignored in the engine's run
//! and run by `scripts/hub.sh` with `--ignored`.

use understudy_testkit as common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::export::{bin, run_err, run_ok};

/// A database of its own on the test server; its URL.
fn fresh_database() -> String {
    let server = std::env::var("UNDERSTUDY_HUB_TEST_DATABASE")
        .expect("UNDERSTUDY_HUB_TEST_DATABASE: run through the hub stage (scripts/hub.sh)");
    let name = format!("cli_team_{}", std::process::id());
    let (base, _) = server.rsplit_once('/').expect("a URL with a database name");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let (client, conn) = tokio_postgres::connect(&server, tokio_postgres::NoTls)
            .await
            .expect("the test server answers");
        let conn = tokio::spawn(conn);
        // One statement each: DROP DATABASE may not run in a transaction.
        for sql in [
            format!("DROP DATABASE IF EXISTS {name}"),
            format!("CREATE DATABASE {name}"),
        ] {
            client
                .batch_execute(&sql)
                .await
                .expect("a database of its own");
        }
        drop(client);
        let _ = conn.await;
    });
    format!("{base}/{name}")
}

/// `understudy hub serve` on a free port, killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(database: &str) -> (Served, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let mut child = bin()
        .args([
            "hub",
            "serve",
            "--database",
            database,
            "--listen",
            &port.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the hub starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the hub says where it listens");
    assert!(line.contains("listening on"), "the hub said {line:?}");
    (Served(child), format!("http://{port}"))
}

/// Adds a person straight on the database and returns their token.
fn person(database: &str, login: &str, name: &str, role: &str) -> String {
    run_ok(
        bin()
            .args([
                "hub",
                "user",
                "add",
                "--database",
                database,
                "--login",
                login,
            ])
            .args(["--name", name, "--role", role]),
    );
    let (token, _) = run_ok(bin().args(["hub", "token", "--database", database, "--login", login]));
    token.trim().to_string()
}

fn as_person(hub: &str, token: &str, args: &[&str]) -> Command {
    let mut cmd = bin();
    cmd.args(args).args(["--hub", hub, "--token", token]);
    cmd
}

/// The episode ids `review list --json` prints.
fn listed(out: &str) -> Vec<String> {
    let rows: Vec<Value> = serde_json::from_str(out).expect("a JSON array");
    rows.iter()
        .map(|r| r["episode"].as_str().expect("an id").to_string())
        .collect()
}

fn sorted_lines(path: &Path) -> Vec<String> {
    let mut lines: Vec<String> = std::fs::read_to_string(path)
        .expect("the export")
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

#[test]
#[ignore = "needs PostgreSQL: scripts/hub.sh runs it"]
fn a_team_records_reviews_and_exports_through_the_hub_from_the_command_line() {
    let database = fresh_database();
    let root = person(&database, "root", "Lab admin", "admin");
    let ada = person(&database, "ada", "Ada Lovelace", "expert");
    let grace = person(&database, "grace", "Grace Hopper", "expert");
    let rita = person(&database, "rita", "Rita Levi", "reviewer");
    let eve = person(&database, "eve", "Eve Engineer", "engineer");
    let (_hub, hub) = serve(&database);
    let dir = tempfile::tempdir().expect("tempdir");
    let worlds = common::repo().join("fixtures/worlds");
    let worlds = worlds.to_str().expect("a UTF-8 path");
    let world = &format!("{worlds}/support-desk");

    let (added, _) = run_ok(&mut as_person(&hub, &root, &["hub", "world", "add", world]));
    let hash = added
        .split(|c: char| !c.is_ascii_hexdigit())
        .find(|w| w.len() == 64)
        .unwrap_or_else(|| panic!("`hub world add` names the world's hash: {added}"))
        .to_string();
    run_ok(
        as_person(&hub, &root, &["hub", "assign", "--world-hash", &hash]).args([
            "--task",
            "duplicate-charge",
            "--expert",
            "ada",
            "--expert",
            "grace",
        ]),
    );
    let (queue, _) = run_ok(&mut as_person(&hub, &ada, &["hub", "pull"]));
    let queue: Value = serde_json::from_str(&queue).expect("JSON");
    assert_eq!(
        queue["assignments"][0]["task_id"], "duplicate-charge",
        "{queue}"
    );

    for (who, token) in [("ada", &ada), ("grace", &grace)] {
        let store = dir.path().join(format!("{who}.db"));
        let store = store.to_str().expect("a UTF-8 path");
        run_ok(
            bin()
                .args([
                    "run",
                    "--world",
                    world,
                    "--task",
                    "duplicate-charge",
                    "--solution",
                ])
                .args(["--store", store, "--expert", who]),
        );
        let (_, pushed) = run_ok(&mut as_person(
            &hub,
            token,
            &["hub", "push", "--store", store],
        ));
        assert!(pushed.contains("1 new episode(s)"), "{pushed}");
        let (_, again) = run_ok(&mut as_person(
            &hub,
            token,
            &["hub", "push", "--store", store],
        ));
        assert!(
            again.contains("0 new episode(s), 0 new step(s)"),
            "a second push adds nothing: {again}"
        );
    }

    // The reviewer lists the hub's queue and approves both runs.
    let (out, _) = run_ok(&mut as_person(&hub, &rita, &["review", "list", "--json"]));
    let waiting = listed(&out);
    assert_eq!(waiting.len(), 2, "{out}");
    let (table, _) = run_ok(&mut as_person(&hub, &rita, &["review", "list"]));
    assert!(
        table.contains("ada") && table.contains("grace") && table.contains("submitted"),
        "{table}"
    );
    let refused = run_err(&mut as_person(
        &hub,
        &ada,
        &["review", "approve", "--episode", &waiting[0]],
    ));
    assert!(
        refused.contains("only reviewers and admins approve"),
        "{refused}"
    );
    for id in &waiting {
        let (_, said) = run_ok(
            as_person(&hub, &rita, &["review", "approve", "--episode", id])
                .args(["--comment", "Clean run."]),
        );
        assert!(said.contains("approved (gold) by Rita Levi"), "{said}");
    }
    let (out, _) = run_ok(&mut as_person(&hub, &rita, &["review", "list", "--json"]));
    assert!(listed(&out).is_empty(), "nothing waits any more: {out}");
    // An expert sees only her own run, with its review.
    let (out, _) = run_ok(&mut as_person(
        &hub,
        &ada,
        &["review", "list", "--status", "all", "--json"],
    ));
    let mine: Vec<Value> = serde_json::from_str(&out).expect("JSON");
    assert_eq!(mine.len(), 1, "{out}");
    assert_eq!(mine[0]["last_review"]["comment"], "Clean run.");

    // The engineer's export from the hub is the experts' local exports.
    let from_hub = dir.path().join("hub.jsonl");
    run_ok(
        as_person(
            &hub,
            &eve,
            &[
                "export", "--format", "trl", "--status", "approved", "--worlds", worlds,
            ],
        )
        .args(["--output".as_ref(), from_hub.as_os_str()]),
    );
    let mut local = Vec::new();
    for who in ["ada", "grace"] {
        let store = dir.path().join(format!("{who}.db"));
        let id = &listed(
            &run_ok(
                bin()
                    .arg("review")
                    .arg("list")
                    .arg("--store")
                    .arg(&store)
                    .arg("--json"),
            )
            .0,
        )[0];
        run_ok(
            bin()
                .arg("review")
                .arg("approve")
                .arg("--store")
                .arg(&store)
                .args(["--episode", id, "--reviewer", "rita"]),
        );
        let out = dir.path().join(format!("{who}.jsonl"));
        run_ok(
            bin()
                .arg("export")
                .arg("--store")
                .arg(&store)
                .args([
                    "--format", "trl", "--status", "approved", "--worlds", worlds, "--output",
                ])
                .arg(&out),
        );
        local.extend(sorted_lines(&out));
    }
    local.sort();
    assert_eq!(local.len(), 2);
    assert_eq!(
        sorted_lines(&from_hub),
        local,
        "the hub's export is the local one, line for line"
    );
}
