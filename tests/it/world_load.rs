//! Broken worlds are rejected whole, with a precise message per problem.

use understudy_testkit as common;

use common::{copy_world, mini_dir, problems, replace, write};

fn assert_problem(problems: &[String], needles: &[&str]) {
    assert!(
        problems
            .iter()
            .any(|p| needles.iter().all(|n| p.contains(n))),
        "no problem mentions all of {needles:?}; got:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_mini_world_loads_and_has_a_stable_hash() {
    let a = common::mini();
    let b = common::mini();
    assert_eq!(a.content_hash, b.content_hash);
    assert_eq!(a.content_hash.len(), 64);
    assert_eq!(a.tools.len(), 4);
    assert_eq!(a.tool_specs().len(), 5, "four tools plus view_accounts");
}

#[test]
fn changing_a_behaviour_file_changes_the_hash_but_docs_do_not() {
    let original = common::mini().content_hash.clone();
    let dir = copy_world(&mini_dir());
    write(dir.path(), "README.md", "docs only");
    write(dir.path(), "rubrics/x.toml", "not behaviour");
    assert_eq!(
        understudy::World::load(dir.path()).unwrap().content_hash,
        original
    );
    replace(dir.path(), "policy.md", "frozen", "locked");
    assert_ne!(
        understudy::World::load(dir.path()).unwrap().content_hash,
        original
    );
}

#[test]
fn malformed_toml_names_file_and_line() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/transfer.toml",
        "[parameters.properties.amount]",
        "[parameters.properties.amount",
    );
    assert_problem(
        &problems(dir.path()),
        &["tools/transfer.toml:17", "unclosed table"],
    );
}

#[test]
fn misplaced_top_level_keys_get_a_hint() {
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "tools/get_account.toml",
        "name = \"get_account\"\ndescription = \"x\"\n[[guards]]\ncheck = \"SELECT 1\"\nerror = \"e\"\nbody = []\n",
    );
    assert_problem(
        &problems(dir.path()),
        &[
            "tools/get_account.toml:6",
            "unknown field `body`",
            "before the first",
        ],
    );
}

#[test]
fn sql_that_does_not_prepare_is_reported_with_tool_guard_and_line() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/transfer.toml",
        "SELECT NOT frozen AS ok",
        "SELECT NOT frozn AS ok",
    );
    assert_problem(
        &problems(dir.path()),
        &[
            "tools/transfer.toml:26",
            "tool transfer, guard 2",
            "no such column: frozn",
        ],
    );
}

#[test]
fn undeclared_parameters_are_reported() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/transfer.toml",
        "balance + :amount WHERE id = :to_id",
        "balance + :amount WHERE id = :dest",
    );
    assert_problem(
        &problems(dir.path()),
        &[
            "tool transfer, body statement 2",
            ":dest",
            "not a declared parameter",
        ],
    );
}

#[test]
fn bad_json_schema_and_required_mismatch_are_reported() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/transfer.toml",
        "required = [\"from_id\", \"to_id\", \"amount\"]",
        "required = [\"from_id\", \"to_id\", \"amount\", \"memo\"]",
    );
    assert_problem(
        &problems(dir.path()),
        &["tool transfer, parameter memo", "not declared"],
    );
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/transfer.toml",
        "type = \"number\"",
        "type = \"numbr\"",
    );
    assert_problem(
        &problems(dir.path()),
        &["tool transfer, parameters", "not a valid JSON Schema"],
    );
}

#[test]
fn seed_rows_must_fit_the_schema() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "data/accounts.csv",
        "A-2,Charles Babbage,50.5",
        "A-2,Charles Babbage,fifty",
    );
    assert_problem(
        &problems(dir.path()),
        &[
            "data/accounts.csv:3",
            "column `balance`",
            "expected a number",
        ],
    );

    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "data/accounts.csv",
        "A-2,Charles Babbage,50.5",
        "A-2,Charles Babbage,-1",
    );
    assert_problem(
        &problems(dir.path()),
        &["data/accounts.csv:3", "CHECK constraint failed"],
    );

    let dir = copy_world(&mini_dir());
    replace(dir.path(), "data/accounts.csv", "id,owner", "id,ownr");
    assert_problem(
        &problems(dir.path()),
        &["data/accounts.csv:1", "`ownr` is not a column"],
    );

    let dir = copy_world(&mini_dir());
    write(dir.path(), "data/docs.json", "{\"d1\": {\"title\": \"x\",}");
    assert_problem(&problems(dir.path()), &["data/docs.json:1", "invalid JSON"]);
}

#[test]
fn foreign_keys_in_seed_data_are_checked() {
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "data/transfers.csv",
        "id,from_id,to_id,amount,at\nT-1,A-1,A-404,1,2025-01-01\n",
    );
    replace(dir.path(), "world.toml", "[[seed]]\ntable = \"docs\"", "[[seed]]\ntable = \"transfers\"\nfile = \"data/transfers.csv\"\n\n[[seed]]\ntable = \"docs\"");
    assert_problem(
        &problems(dir.path()),
        &["data/transfers.csv:2", "foreign key"],
    );
}

#[test]
fn missing_files_are_named() {
    let dir = copy_world(&mini_dir());
    std::fs::remove_file(dir.path().join("policy.md")).unwrap();
    std::fs::remove_file(dir.path().join("data/accounts.csv")).unwrap();
    let p = problems(dir.path());
    assert_problem(&p, &["policy.md", "missing"]);
    assert_problem(&p, &["world.toml", "seed data/accounts.csv", "cannot read"]);

    let dir = copy_world(&mini_dir());
    std::fs::remove_file(dir.path().join("schema.sql")).unwrap();
    assert_problem(&problems(dir.path()), &["schema.sql", "missing"]);

    let dir = copy_world(&mini_dir());
    std::fs::remove_file(dir.path().join("scripts/tag_doc.rhai")).unwrap();
    assert_problem(
        &problems(dir.path()),
        &["tools/tag_doc.toml", "tool tag_doc, script"],
    );

    assert!(understudy::World::load("/nonexistent/world").is_err());
}

#[test]
fn task_references_must_resolve() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "tools = [\"get_account\", \"transfer\"]",
        "tools = [\"get_account\", \"wire\"]",
    );
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "key = \"A-1\"",
        "key = \"A-404\"",
    );
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "amount = 25.0",
        "amount = \"lots\"",
    );
    let p = problems(dir.path());
    assert_problem(&p, &["task frozen", "`wire`"]);
    assert_problem(&p, &["task pay-back", "A-404", "not in the seed data"]);
    assert_problem(
        &p,
        &["task pay-back", "solution step 2 (transfer)", "amount"],
    );
}

#[test]
fn script_syntax_errors_have_a_line() {
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "scripts/tag_doc.rhai",
        "let x = 1;\nlet y = ;\n",
    );
    assert_problem(
        &problems(dir.path()),
        &["scripts/tag_doc.rhai:2", "does not compile"],
    );
    let dir = copy_world(&mini_dir());
    write(dir.path(), "scripts/tag_doc.rhai", "let x = argz.doc_id;\n");
    assert_problem(&problems(dir.path()), &["scripts/tag_doc.rhai:1", "argz"]);
}

#[test]
fn every_problem_is_reported_not_just_the_first() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/transfer.toml",
        "SELECT NOT frozen AS ok",
        "SELECT NOT frozn AS ok",
    );
    replace(dir.path(), "views.toml", "ORDER BY id", "ORDER BY idd");
    std::fs::remove_file(dir.path().join("policy.md")).unwrap();
    let p = problems(dir.path());
    assert!(p.len() >= 3, "{p:?}");
    assert_problem(&p, &["views.toml:5", "view accounts"]);
}

#[test]
fn bad_manifest_values_are_explained() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "world.toml",
        "start = \"2025-01-01T09:00:00Z\"",
        "start = \"yesterday\"",
    );
    replace(
        dir.path(),
        "world.toml",
        "id = \"mini\"",
        "id = \"Mini World\"",
    );
    let p = problems(dir.path());
    assert_problem(&p, &["world.toml", "clock.start", "RFC 3339"]);
    assert_problem(&p, &["world.toml", "id", "lowercase"]);
}

#[test]
fn solution_steps_carry_their_why() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "tool = \"view_accounts\"\nargs = { search = \"ada\" }",
        "tool = \"view_accounts\"\nargs = { search = \"ada\" }\nwhy = \"  Find Ada's account before moving money. \"",
    );
    let world = understudy::World::load(dir.path()).expect("a text `why` loads");
    let steps = world
        .task("pay-back")
        .expect("task")
        .solution_steps()
        .expect("steps parse");
    assert_eq!(steps.len(), 3);
    assert_eq!(
        steps[0].why.as_deref(),
        Some("Find Ada's account before moving money.")
    );
    assert_eq!(
        steps[0].action,
        understudy::Action::tool("view_accounts", serde_json::json!({"search": "ada"}))
    );
    assert_eq!(steps[1].why, None);
    assert_eq!(
        steps[2].action,
        understudy::Action::message("Done: 25 sent to Charles.")
    );
}

#[test]
fn a_why_that_is_not_text_is_reported() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "amount = 25.0 }",
        "amount = 25.0 }\nwhy = 3",
    );
    assert_problem(
        &problems(dir.path()),
        &[
            "task pay-back",
            "solution step 2",
            "`why` must be text",
            "a number",
        ],
    );
}

#[test]
fn unknown_keys_in_a_solution_step_are_reported() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "message = \"Done: 25 sent to Charles.\"",
        "message = \"Done: 25 sent to Charles.\"\nrationale = \"Tell her.\"",
    );
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "tool = \"view_accounts\"\nargs =",
        "tool = \"view_accounts\"\narg =",
    );
    let p = problems(dir.path());
    assert_problem(
        &p,
        &[
            "task pay-back",
            "solution step 3",
            "unknown key `rationale`",
            "`why`",
        ],
    );
    assert_problem(
        &p,
        &[
            "task pay-back",
            "solution step 1",
            "unknown key `arg`",
            "`args`",
        ],
    );
}
