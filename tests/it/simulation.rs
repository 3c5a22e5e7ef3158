//! The simulated world owes nothing to the host, to failed calls or to
//! whoever inspects it: scripts have no clock, a failed call gives back the
//! ids and random draws it used, a rubric query changes nothing, and clock
//! settings that would wrap are refused at load.

use understudy_testkit as common;

use common::{copy_world, mini_dir, problems, write};
use serde_json::json;
use understudy::{Action, Episode, World};

/// The mini world plus one tool `name` running `script`.
fn world_with_script(name: &str, script: &str) -> tempfile::TempDir {
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        &format!("tools/{name}.toml"),
        &format!(
            "name = \"{name}\"\ndescription = \"reads the host\"\nkind = \"read\"\nscript = \"scripts/{name}.rhai\"\n"
        ),
    );
    write(dir.path(), &format!("scripts/{name}.rhai"), script);
    dir
}

fn step(dir: &std::path::Path, tool: &str) -> understudy::Observation {
    let world = std::sync::Arc::new(World::load(dir).expect("loads"));
    let mut ep = Episode::new(world).unwrap();
    ep.reset("pay-back", 0).unwrap();
    ep.step(&Action::tool(tool, json!({}))).unwrap().observation
}

#[test]
fn scripts_have_no_clock() {
    for (name, script) in [
        ("stamp", "let t = timestamp(); \"the time is known\""),
        ("nap", "sleep(3); \"slept\""),
        ("nap_float", "sleep(3.0); \"slept\""),
    ] {
        let dir = world_with_script(name, script);
        let started = std::time::Instant::now();
        let out = step(dir.path(), name);
        assert!(!out.ok, "{name}: {}", out.text);
        assert!(out.text.contains("not found"), "{name}: {}", out.text);
        assert!(
            started.elapsed().as_secs() < 3,
            "{name} waited on real time"
        );
    }
}

#[test]
fn scripts_keep_the_rest_of_the_language() {
    let dir = world_with_script(
        "busy",
        r#"
        let xs = [3, 1, 2];
        xs.sort();
        let m = #{ a: 1.5, b: "x" };
        let s = `${xs[0]}-${m.b}`.to_upper();
        let blob = blob(2, 7);
        let f = |x| x * 2;
        let total = 0;
        for i in range(0, 4) { total += f.call(i); }
        s + ":" + total + ":" + blob.len() + ":" + (10 >> 1) + ":" + type_of(m) + ":" + floor(2.7) + ":" + now()
        "#,
    );
    let out = step(dir.path(), "busy");
    assert!(out.ok, "{}", out.text);
    assert_eq!(out.text, "1-X:12:2:5:map:2.0:2025-01-01T09:00:00Z");
}

/// The mini world plus a write tool `grab` that takes an id and a random
/// number into `log`, then fails when `fail` is true (in its body, its
/// script or its result, as `how` says).
fn world_with_grab(how: &str) -> std::sync::Arc<World> {
    let dir = copy_world(&mini_dir());
    common::append(
        dir.path(),
        "schema.sql",
        "CREATE TABLE log (id TEXT, r INTEGER, CHECK (id <> 'never'));",
    );
    let failing = match how {
        "body" => "body = [\"INSERT INTO log VALUES (new_id('G'), random())\", \"INSERT INTO log SELECT 'never', 0 WHERE :fail\"]\n[result]\nquery = \"SELECT id || ' ' || r FROM log ORDER BY rowid DESC LIMIT 1\"\nshape = \"value\"\n".to_string(),
        "script" => {
            write(
                dir.path(),
                "scripts/grab.rhai",
                "execute(\"INSERT INTO log VALUES (new_id('G'), random())\");\nlet id = new_id(\"G\");\nif args.fail { fail(\"no\"); }\nquery_value(\"SELECT id || ' ' || r FROM log ORDER BY rowid DESC LIMIT 1\") + \" \" + id",
            );
            "script = \"scripts/grab.rhai\"\n".to_string()
        }
        _ => unreachable!(),
    };
    write(
        dir.path(),
        "tools/grab.toml",
        &format!("name = \"grab\"\ndescription = \"takes an id\"\n{failing}\n[parameters]\ntype = \"object\"\n[parameters.properties.fail]\ntype = \"boolean\"\n"),
    );
    std::sync::Arc::new(World::load(dir.path()).expect("loads"))
}

#[test]
fn a_failed_call_gives_back_its_ids_and_random_draws() {
    for how in ["body", "script"] {
        let world = world_with_grab(how);
        let grab = |fail: bool| Action::tool("grab", json!({ "fail": fail }));
        // Without the failed call.
        let mut clean = Episode::new(world.clone()).unwrap();
        clean.reset("pay-back", 5).unwrap();
        let expected = clean.step(&grab(false)).unwrap().observation;
        assert!(expected.ok, "{how}: {}", expected.text);
        // With a failed call first: the same id and random number.
        let mut ep = Episode::new(world).unwrap();
        ep.reset("pay-back", 5).unwrap();
        let failed = ep.step(&grab(true)).unwrap().observation;
        assert!(!failed.ok, "{how}: the call should fail");
        let after = ep.step(&grab(false)).unwrap().observation;
        assert_eq!(after.text, expected.text, "{how}");
        assert!(after.text.starts_with("G-000001 "), "{how}: {}", after.text);
    }
}

#[test]
fn a_query_draws_nothing_from_the_episode() {
    let world = common::mini();
    let mut ep = common::episode(&world, "pay-back");
    let peek = "SELECT new_id('TR') AS id, random() AS r";
    let first = ep.query(peek, &serde_json::Map::new()).unwrap();
    assert_eq!(first[0]["id"], "TR-000001");
    let again = ep.query(peek, &serde_json::Map::new()).unwrap();
    assert_eq!(
        again, first,
        "looking twice sees the same next id and number"
    );
    let out = ep
        .step(&Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 25.0}),
        ))
        .unwrap()
        .observation;
    assert!(out.text.starts_with("Transfer TR-000001 "), "{}", out.text);
}

#[test]
fn rubric_criteria_cannot_change_what_the_next_criterion_sees() {
    let world = common::mini();
    // Two criteria peeking at the next transfer id (one transfer is made).
    let peek = |id: &str| {
        format!(
            "[[criteria]]\nid = \"{id}\"\ndescription = \"The next transfer id is TR-000002.\"\nkind = \"state\"\nquery = \"SELECT new_id('TR')\"\nexpect = {{ equals = \"TR-000002\" }}\npoints = 1\n"
        )
    };
    let text = format!(
        "format = 1\ntask = \"pay-back\"\nversion = \"1\"\ntitle = \"Peeks at the next id\"\n\n{}\n{}",
        peek("first-peek"),
        peek("second-peek")
    );
    let rubric =
        understudy::rubric::Rubric::from_str(&world, "pay-back", "rubrics/peek.toml", &text)
            .expect("the rubric loads");
    let actions: Vec<Action> = world
        .task("pay-back")
        .unwrap()
        .solution
        .iter()
        .map(|a| Action::from_json(a).unwrap())
        .collect();
    let mut ep = Episode::new(world.clone()).unwrap();
    let score = understudy::rubric::replay_and_score(&mut ep, &rubric, 0, &actions, &[]).unwrap();
    for c in &score.criteria {
        assert_eq!(c.met, Some(true), "{}: {:?}", c.id, c.evidence);
    }
}

#[test]
fn clock_settings_that_would_wrap_are_refused_at_load() {
    for (from, to, subject) in [
        (
            "tick_seconds = 30",
            "tick_seconds = 9223372036854775000",
            "clock.tick_seconds",
        ),
        (
            "tick_seconds = 30",
            "tick_seconds = 31622401",
            "clock.tick_seconds",
        ),
        (
            "start = \"2025-01-01T09:00:00Z\"",
            "start = \"9999-12-31T23:30:00-05:00\"",
            "clock.start",
        ),
        (
            "start = \"2025-01-01T09:00:00Z\"",
            "start = \"0000-01-01T00:30:00+01:00\"",
            "clock.start",
        ),
    ] {
        let dir = copy_world(&mini_dir());
        common::replace(dir.path(), "world.toml", from, to);
        let problems = problems(dir.path());
        assert!(
            problems
                .iter()
                .any(|p| p.contains("world.toml") && p.contains(subject)),
            "{to}: {problems:?}"
        );
    }
}

#[test]
fn the_largest_allowed_tick_keeps_the_clock_readable() {
    let dir = copy_world(&mini_dir());
    common::replace(
        dir.path(),
        "world.toml",
        "tick_seconds = 30",
        "tick_seconds = 31622400",
    );
    let world = std::sync::Arc::new(World::load(dir.path()).expect("366 days is allowed"));
    let mut ep = Episode::new(world).unwrap();
    ep.reset("pay-back", 0).unwrap();
    let out = ep.step(&Action::message("Hello")).expect("a step");
    assert_eq!(out.info.clock, "2026-01-02T09:00:00Z");
}
