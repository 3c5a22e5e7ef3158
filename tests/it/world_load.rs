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
fn authors_notes_leave_the_hash_alone() {
    let original = common::mini().content_hash.clone();
    let dir = copy_world(&mini_dir());
    write(dir.path(), "NOTES.md", "what I meant by the frozen rule");
    write(dir.path(), "notes/2025-03-04.md", "a day's notes");
    write(dir.path(), "notes/sketch.toml", "name = 'not a tool'");
    write(dir.path(), "tools/README.md", "how the tools fit together");
    write(dir.path(), "data/unused.csv", "a,b\n1,2\n");
    write(dir.path(), "scripts/unused.rhai", "1 + 1");
    write(dir.path(), "helper.py", "print('builds data/')");
    assert_eq!(
        understudy::World::load(dir.path()).unwrap().content_hash,
        original,
        "files the loader does not read are not part of the world"
    );
}

#[test]
fn every_file_the_world_is_built_from_changes_the_hash() {
    let original = common::mini().content_hash.clone();
    let edits: [(&str, &str, &str); 7] = [
        ("world.toml", "Mini", "Mini world"),
        ("schema.sql", "CREATE TABLE", "CREATE  TABLE"),
        ("data/accounts.csv", "\n", "\r\n"),
        ("views.toml", "[[views]]", "# listed\n[[views]]"),
        ("tools/close.toml", "name", "# the close tool\nname"),
        ("scripts/tag_doc.rhai", "", "// tags a doc\n"),
        ("tasks/tasks.toml", "[[tasks]]", "# tasks\n[[tasks]]"),
    ];
    for (rel, from, to) in edits {
        let dir = copy_world(&mini_dir());
        let path = dir.path().join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{rel} has no {from:?}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
        let changed = understudy::World::load(dir.path())
            .unwrap_or_else(|e| panic!("{rel}: {e}"))
            .content_hash;
        assert_ne!(changed, original, "editing {rel} must change the hash");
    }
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
    let p = problems(dir.path());
    assert_problem(
        &p,
        &[
            "data/accounts.csv:3",
            "column `balance`",
            "expected a number",
        ],
    );
    assert_eq!(
        p.iter()
            .filter(|m| m.starts_with("data/accounts.csv:3"))
            .count(),
        1,
        "a bad value is one problem, not also a wrong field count: {p:?}"
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

/// JSON seed files are read record by record as they are parsed; every
/// shape problem is still reported where it is.
#[test]
fn json_seed_files_are_checked_record_by_record() {
    let dir = copy_world(&mini_dir());
    write(dir.path(), "data/docs.json", "42");
    assert_problem(
        &problems(dir.path()),
        &[
            "data/docs.json",
            "expected an array of records or an object keyed by id",
        ],
    );

    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "data/docs.json",
        "{\"d1\": {\"title\": \"x\"},\n \"d2\": \"not a record\"}",
    );
    assert_problem(
        &problems(dir.path()),
        &["data/docs.json", "record \"d2\"", "expected a JSON object"],
    );

    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "data/docs.json",
        "{\"d1\": {\"title\": \"x\"},\n \"d2\": {\"title\": \"y\"},\n \"d3\": }",
    );
    assert_problem(&problems(dir.path()), &["data/docs.json:3", "invalid JSON"]);

    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "data/docs.json",
        "{\"d1\": {\"title\": \"x\"}, \"d1\": {\"title\": \"y\"}}",
    );
    assert_problem(&problems(dir.path()), &["data/docs.json", "record \"d1\""]);

    // Bytes that are not UTF-8 are named at their line, in either format.
    let dir = copy_world(&mini_dir());
    std::fs::write(
        dir.path().join("data/docs.json"),
        b"{\"d1\": {\"title\": \"x\"},\n \"d2\": {\"title\": \"caf\xe9\"}}",
    )
    .unwrap();
    assert_problem(&problems(dir.path()), &["data/docs.json:2", "invalid JSON"]);
    let dir = copy_world(&mini_dir());
    let mut bad = std::fs::read(dir.path().join("data/accounts.csv")).unwrap();
    bad.extend_from_slice(b"A-9,Ren\xe9e,1.0,false\n");
    std::fs::write(dir.path().join("data/accounts.csv"), bad).unwrap();
    assert_problem(
        &problems(dir.path()),
        &["data/accounts.csv:5", "invalid UTF-8 in field"],
    );
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
        "tools = [\n  \"get_account\",\n  \"wire\",\n]",
    );
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "max_steps = 5",
        "max_steps = 0",
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
    // Each problem points at its own line: 7 is `max_steps`, 8 the record,
    // 15 the second solution step's `[[tasks.solution]]`, 29 the second
    // entry of frozen's `tools`.
    assert_problem(&p, &["tasks/tasks.toml:7:", "task pay-back", "max_steps"]);
    assert_problem(&p, &["tasks/tasks.toml:8:", "task pay-back", "A-404"]);
    assert_problem(
        &p,
        &[
            "tasks/tasks.toml:15:",
            "solution step 2 (transfer)",
            "amount",
        ],
    );
    assert_problem(&p, &["tasks/tasks.toml:29:", "task frozen", "`wire`"]);
}

#[test]
fn answers_need_words_that_ask_and_something_to_say() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "replies = [\"Yes, go ahead.\", \"Thanks!\"]\n",
        "unanswered = \" \"\n\n[[tasks.answers]]\nwhen_asked = []\nsays = \"A-1\"\n\n[[tasks.answers]]\nwhen_asked = [\"account\", \"\"]\nsays = \"A-1\"\n\n[[tasks.answers]]\nwhen_asked = [\"id\"]\nsays = \"\"\n",
    );
    let p = problems(dir.path());
    // Lines: 10 is `unanswered`'s task, 11, 15 and 19 the three answers.
    assert_problem(
        &p,
        &[
            "tasks/tasks.toml:1:",
            "task pay-back",
            "`unanswered` must not be empty",
        ],
    );
    assert_problem(
        &p,
        &[
            "tasks/tasks.toml:11:",
            "answer 1",
            "`when_asked` must list at least one",
        ],
    );
    assert_problem(
        &p,
        &[
            "tasks/tasks.toml:15:",
            "answer 2",
            "`when_asked` entry 2 is empty",
        ],
    );
    assert_problem(
        &p,
        &[
            "tasks/tasks.toml:19:",
            "answer 3",
            "`says` must not be empty",
        ],
    );
}

#[test]
fn an_unknown_key_in_an_answer_is_named() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "replies = [\"Yes, go ahead.\", \"Thanks!\"]\n",
        "\n[[tasks.answers]]\nwhen_asked = [\"account\"]\nreply = \"A-1\"\n",
    );
    let p = problems(dir.path());
    assert_problem(&p, &["tasks/tasks.toml", "reply"]);
}

#[test]
fn a_broken_tool_is_reported_once_not_by_every_task_that_uses_it() {
    for (from, to) in [
        // SQL that does not prepare.
        (
            "FROM accounts WHERE id = :from_id\"",
            "FROM acounts WHERE id = :from_id\"",
        ),
        // A file that does not parse.
        ("[[guards]]", "[[guards]"),
    ] {
        let dir = copy_world(&mini_dir());
        replace(dir.path(), "tools/transfer.toml", from, to);
        let p = problems(dir.path());
        assert!(
            p.iter().any(|m| m.starts_with("tools/transfer.toml")),
            "the tool's own problem is reported: {p:?}"
        );
        assert!(
            p.iter().all(|m| !m.starts_with("tasks/")),
            "tasks using the broken tool are not reported: {p:?}"
        );
    }
    // A task naming a tool that has no file at all is still reported.
    let dir = copy_world(&mini_dir());
    std::fs::remove_file(dir.path().join("tools/transfer.toml")).unwrap();
    let p = problems(dir.path());
    assert_problem(
        &p,
        &["task frozen", "`transfer`", "not a tool of this world"],
    );
    assert_problem(&p, &["task pay-back", "solution step 2", "`transfer`"]);
}

#[test]
fn templates_naming_what_the_context_lacks_fail_to_load() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/transfer.toml",
        "done at {{ at }}.",
        "done at {{ when }} ({{ result.amout }}).",
    );
    replace(
        dir.path(),
        "tools/transfer.toml",
        "\"{{ owner }}'s account is frozen.\"",
        "\"{{ ownr }}'s account is frozen.\"",
    );
    let p = problems(dir.path());
    assert_problem(
        &p,
        &[
            "tools/transfer.toml:36",
            "tool transfer, result.text",
            "`when`",
            "it can use: amount, at, from_id, id, result, to_id",
        ],
    );
    assert_problem(
        &p,
        &[
            "tools/transfer.toml:36",
            "`result.amout`",
            "the result's columns: id, amount, at",
        ],
    );
    assert_problem(
        &p,
        &[
            "tools/transfer.toml:27",
            "tool transfer, guard 2, error",
            "`ownr`",
            "it can use: amount, from_id, ok, owner, to_id",
        ],
    );
    assert_eq!(p.len(), 3, "{p:?}");

    // Only the tool's parameters and `result` when the result is a value.
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/close.toml",
        "shape = \"value\"",
        "shape = \"value\"\ntext = \"{{ result }} {{ closed }}\"",
    );
    assert_problem(
        &problems(dir.path()),
        &["tools/close.toml", "`closed`", "it can use: result"],
    );
}

#[test]
fn json_columns_must_be_columns_of_the_result() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tools/get_account.toml",
        "shape = \"row\"",
        "shape = \"row\"\njson_columns = [\"owner\", \"tags\"]",
    );
    replace(
        dir.path(),
        "views.toml",
        "key = \"id\"",
        "key = \"id\"\njson_columns = [\"doc\"]",
    );
    replace(
        dir.path(),
        "tools/close.toml",
        "[result]\nquery = \"SELECT 'closed'\"",
        "[result]\njson_columns = [\"x\"]",
    );
    let p = problems(dir.path());
    assert_problem(
        &p,
        &[
            "tools/get_account.toml:19",
            "result.json_columns",
            "`tags` is not a column of the result query (columns: id, owner, balance)",
        ],
    );
    assert!(!p.iter().any(|m| m.contains("`owner` is not")), "{p:?}");
    assert_problem(
        &p,
        &[
            "views.toml",
            "view accounts",
            "`doc`",
            "columns: id, owner, balance, frozen",
        ],
    );
    assert_problem(
        &p,
        &["tools/close.toml", "json_columns needs a result.query"],
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

#[test]
fn a_summary_is_for_people_only_and_not_empty() {
    let dir = copy_world(&mini_dir());
    replace(
        dir.path(),
        "tasks/tasks.toml",
        "max_steps = 5\n",
        "max_steps = 5\nsummary = \"Ada wants Charles paid back\"\n",
    );
    let world = std::sync::Arc::new(understudy::World::load(dir.path()).expect("loads"));
    let task = world.task("pay-back").unwrap();
    assert_eq!(task.summary.as_deref(), Some("Ada wants Charles paid back"));
    // A performer's first observation carries the brief, never the summary.
    let mut ep = understudy::Episode::new(std::sync::Arc::clone(&world)).unwrap();
    let reset = ep.reset("pay-back", 0).unwrap();
    assert!(
        !serde_json::to_string(&reset).unwrap().contains("paid back"),
        "{reset:?}"
    );
    // Rewording it leaves the rubric's task hash alone.
    let plain = common::mini();
    let rubric = |w: &std::sync::Arc<understudy::World>| {
        understudy::rubric::Rubric::load(w, "pay-back")
            .expect("the rubric loads")
            .expect("the task has a rubric")
            .task_hash
            .clone()
    };
    assert_eq!(rubric(&world), rubric(&plain));

    replace(
        dir.path(),
        "tasks/tasks.toml",
        "summary = \"Ada wants Charles paid back\"",
        "summary = \" \"",
    );
    assert_problem(
        &problems(dir.path()),
        &[
            "tasks/tasks.toml:8",
            "task pay-back",
            "`summary` must not be empty",
        ],
    );
}

#[test]
fn labels_name_columns_in_plain_words_and_leave_the_hash_alone() {
    let original = common::mini().content_hash.clone();
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "labels.toml",
        "[table_titles]\naccounts = \" Bank accounts \"\n\n[tables.accounts]\nowner = \"Account holder\"\nbalance = \"Balance\"\n\n[tables.docs]\ntitle = \"Document title\"\n\n[views.accounts]\nid = \"Account number\"\n",
    );
    let world = understudy::World::load(dir.path()).expect("loads");
    assert_eq!(
        world.table("accounts").unwrap().title.as_deref(),
        Some("Bank accounts"),
        "a table's title, trimmed"
    );
    assert_eq!(
        world.table("docs").unwrap().title,
        None,
        "untitled: the app humanises the name"
    );
    assert_eq!(
        world.content_hash, original,
        "labels are for people: relabelling keeps recorded episodes standing"
    );
    let accounts = world.table("accounts").unwrap();
    assert_eq!(accounts.labels["owner"], "Account holder");
    assert_eq!(
        world.table("docs").unwrap().labels["title"],
        "Document title",
        "a document table's labels name its records' fields"
    );
    let view = &world.views["accounts"];
    assert_eq!(view.labels["id"], "Account number", "the view's own label");
    assert_eq!(view.labels["owner"], "Account holder", "from the table");
    assert!(
        !view.labels.contains_key("frozen"),
        "unlabelled: the app humanises the name"
    );
}

#[test]
fn a_label_naming_nothing_is_reported_with_file_line_and_field() {
    let dir = copy_world(&mini_dir());
    write(
        dir.path(),
        "labels.toml",
        "[tables.accounts]\nowner = \"Holder\"\nownr = \"Typo\"\nbalance = \" \"\n\n[tables.acounts]\nid = \"Id\"\n\n[tables.docs]\nheading = \"Heading\"\n\n[views.accounts]\ntotal = \"Total\"\n\n[views.acounts]\nid = \"Id\"\n",
    );
    let p = problems(dir.path());
    assert_problem(
        &p,
        &[
            "labels.toml:3",
            "tables.accounts.ownr",
            "`ownr` is not a column of `accounts`",
            "owner",
        ],
    );
    assert_problem(&p, &["labels.toml:4", "tables.accounts.balance", "empty"]);
    assert_problem(
        &p,
        &["labels.toml:7", "`acounts` is not a table", "accounts"],
    );
    assert_problem(
        &p,
        &[
            "labels.toml:10",
            "tables.docs.heading",
            "fields of its records: count, tags, title",
        ],
    );
    assert_problem(
        &p,
        &[
            "labels.toml:13",
            "views.accounts.total",
            "not a column of the view",
        ],
    );
    assert_problem(&p, &["labels.toml:16", "`acounts` is not a view"]);
    write(
        dir.path(),
        "labels.toml",
        "[table_titles]\naccounts = \"Accounts\"\nacounts = \"Typo\"\ndocs = \"  \"\n",
    );
    let p = problems(dir.path());
    assert_problem(
        &p,
        &[
            "labels.toml:3",
            "table_titles.acounts",
            "`acounts` is not a table of schema.sql",
            "accounts",
        ],
    );
    assert_problem(&p, &["labels.toml:4", "table_titles.docs", "empty"]);
    write(dir.path(), "labels.toml", "[table_titles]\naccounts = 3\n");
    assert_problem(&problems(dir.path()), &["labels.toml:2"]);
    write(dir.path(), "labels.toml", "[tables.accounts]\nowner = 3\n");
    assert_problem(&problems(dir.path()), &["labels.toml:2"]);
    write(
        dir.path(),
        "labels.toml",
        "[columns.accounts]\nowner = \"x\"\n",
    );
    assert_problem(&problems(dir.path()), &["labels.toml:1", "columns"]);
}

/// An expert reads every bundled world in plain words: each table (the
/// review's diff headings) has a title, and each column of each table and
/// of each records list has a label.
#[test]
fn every_bundled_world_labels_what_an_expert_sees() {
    for dir in common::fixture_worlds() {
        let world = understudy::World::load(&dir).expect("the fixture world loads");
        let id = &world.meta.id;
        for view in world.views.values() {
            for c in &view.columns {
                assert!(
                    view.labels.contains_key(c),
                    "{id}: view {} column {c} has no label",
                    view.name
                );
            }
        }
        for table in &world.tables {
            assert!(
                !table.labels.is_empty(),
                "{id}: table {} has no labels",
                table.name
            );
            assert!(
                table.title.is_some(),
                "{id}: table {} has no title in labels.toml's [table_titles]",
                table.name
            );
        }
    }
}
