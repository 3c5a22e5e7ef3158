//! Episode behaviour on the mini world: tools, guards, views, scripts,
//! termination, truncation and the state diff.

use understudy_testkit as common;

use serde_json::json;
use understudy::observation::ObservationErrorCode;
use understudy::{Action, Episode, Error};

#[test]
fn solution_changes_exactly_the_expected_rows() {
    let world = common::mini();
    let mut ep = common::episode(&world, "pay-back");
    let out = ep
        .step(&Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 25.0}),
        ))
        .unwrap();
    assert!(out.observation.ok, "{:?}", out.observation);
    assert_eq!(
        out.observation.text,
        "Transfer TR-000001 of 25.0 done at 2025-01-01T09:00:00Z."
    );
    let changes = serde_json::to_value(ep.changes().unwrap()).unwrap();
    assert_eq!(
        changes,
        json!({
            "accounts": {"added": {}, "removed": [], "changed": {
                "A-1": {"id": "A-1", "owner": "Ada Lovelace", "balance": 75.0, "frozen": 0},
                "A-2": {"id": "A-2", "owner": "Charles Babbage", "balance": 75.5, "frozen": 0}
            }},
            "transfers": {"added": {"TR-000001": {"id": "TR-000001", "from_id": "A-1", "to_id": "A-2", "amount": 25.0, "at": "2025-01-01T09:00:00Z"}}, "removed": [], "changed": {}}
        })
    );
}

#[test]
fn a_failing_guard_reports_its_message_and_changes_nothing() {
    let world = common::mini();
    let mut ep = common::episode(&world, "frozen");
    let out = ep
        .step(&Action::tool(
            "transfer",
            json!({"from_id": "A-3", "to_id": "A-1", "amount": 5}),
        ))
        .unwrap();
    assert!(!out.observation.ok);
    assert_eq!(
        out.observation.error.as_ref().unwrap().code,
        ObservationErrorCode::GuardFailed
    );
    assert_eq!(
        out.observation.text,
        "Error: Grace Hopper's account is frozen."
    );
    assert!(ep.changes().unwrap().is_empty());
    // The episode goes on after an error.
    assert!(!ep.is_done());
}

#[test]
fn a_sql_error_mid_body_rolls_back_earlier_statements() {
    let world = common::mini();
    let mut ep = common::episode(&world, "pay-back");
    // Overdrawing violates CHECK (balance >= 0) inside the body.
    let out = ep
        .step(&Action::tool(
            "transfer",
            json!({"from_id": "A-2", "to_id": "A-1", "amount": 1000}),
        ))
        .unwrap();
    assert!(!out.observation.ok);
    assert_eq!(
        out.observation.error.as_ref().unwrap().code,
        ObservationErrorCode::ToolFailed
    );
    assert!(
        out.observation.text.contains("CHECK constraint failed"),
        "{}",
        out.observation.text
    );
    assert!(ep.changes().unwrap().is_empty());
    // The failing body never reached new_id(), so the next id is the first.
    let ok = ep
        .step(&Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 1}),
        ))
        .unwrap();
    assert_eq!(ok.observation.content["id"], "TR-000001");
}

#[test]
fn invalid_arguments_name_the_parameter() {
    let world = common::mini();
    let mut ep = common::episode(&world, "pay-back");
    let out = ep
        .step(&Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": "ten"}),
        ))
        .unwrap();
    let err = out.observation.error.unwrap();
    assert_eq!(err.code, ObservationErrorCode::InvalidArguments);
    assert!(err.message.contains("amount"), "{}", err.message);
    assert!(err.message.contains("number"), "{}", err.message);

    let out = ep
        .step(&Action::tool("transfer", json!({"from_id": "A-1"})))
        .unwrap();
    let err = out.observation.error.unwrap();
    assert!(
        err.message.contains("to_id") && err.message.contains("required"),
        "{}",
        err.message
    );

    let out = ep
        .step(&Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 1, "memo": "x"}),
        ))
        .unwrap();
    assert!(out.observation.error.unwrap().message.contains("memo"));
}

#[test]
fn unknown_tools_and_tools_outside_the_task_are_errors() {
    let world = common::mini();
    let mut ep = common::episode(&world, "pay-back");
    let out = ep.step(&Action::tool("nope", json!({}))).unwrap();
    assert_eq!(
        out.observation.text,
        "Error: Unknown action nope. The tools of this task are: `close`, `get_account`, `tag_doc`, `transfer`, `view_accounts`."
    );
    assert_eq!(
        out.observation.error.unwrap().code,
        ObservationErrorCode::UnknownTool
    );

    let mut ep = common::episode(&world, "frozen");
    let out = ep
        .step(&Action::tool(
            "tag_doc",
            json!({"doc_id": "d1", "tag": "y"}),
        ))
        .unwrap();
    assert!(out.observation.text.contains("not available in this task"));
    assert!(
        out.observation
            .text
            .ends_with("The tools of this task are: `get_account`, `transfer`, `view_accounts`."),
        "{}",
        out.observation.text
    );

    let mut ep = common::episode(&world, "pay-back");
    let out = ep
        .step(&Action::tool("transfr", json!({"amount": 1})))
        .unwrap();
    assert!(
        out.observation
            .text
            .starts_with("Error: Unknown action transfr. Did you mean `transfer`?"),
        "{}",
        out.observation.text
    );
}

#[test]
fn messages_get_scripted_replies_then_silence() {
    let world = common::mini();
    let mut ep = common::episode(&world, "pay-back");
    assert_eq!(
        ep.step(&Action::message("ok?")).unwrap().observation.text,
        "Yes, go ahead."
    );
    assert_eq!(
        ep.step(&Action::message("done")).unwrap().observation.text,
        "Thanks!"
    );
    assert_eq!(
        ep.step(&Action::message("bye")).unwrap().observation.text,
        ""
    );
}

#[test]
fn the_customer_answers_what_the_message_asks_for() {
    let world = common::world("support-desk");
    let mut ep = common::episode(&world, "upgrade-with-verification");
    let mut say = |text: &str| ep.step(&Action::message(text)).unwrap().observation.text;
    // Nothing asked: the customer says so, and gives nothing away.
    assert_eq!(
        say("Hi Priya, thanks for writing in."),
        "Sorry, what do you need from me?"
    );
    // The facts are revealed only by the question that asks for them.
    assert_eq!(
        say("Could you confirm the billing ZIP code on the account?"),
        "Sure — our billing ZIP code is 78702."
    );
    assert_eq!(
        say("What's your email address?"),
        "It's priya@lumenyoga.com."
    );
    // Two questions in one message get both answers, in the task's order.
    assert_eq!(
        say("What is your e-mail address, and your postcode?"),
        "Sure — our billing ZIP code is 78702. It's priya@lumenyoga.com."
    );
    // Asked again, the same answer: replies depend on the message only.
    assert_eq!(
        say("Sorry, the ZIP again?"),
        "Sure — our billing ZIP code is 78702."
    );
    assert_eq!(
        say("It's $108.39 today. Shall I go ahead?"),
        "Yes, that works. Please go ahead."
    );
}

/// Every task of the bundled worlds names its customer and answers what a
/// question asks for: each answer is reached by one of its own cues, and a
/// message that asks for nothing gets the customer's "what do you need".
#[test]
fn every_bundled_task_has_a_customer_who_answers_questions() {
    for name in [
        "support-desk",
        "contract-review",
        "underwriting",
        "month-end-close",
        "tau-airline",
        "tau-retail",
    ] {
        let world = common::world(name);
        for task in world.tasks.values() {
            let at = format!("{name}/{}", task.id);
            assert!(task.customer.is_some(), "{at}: no customer");
            assert!(task.replies.is_empty(), "{at}: scripted replies left");
            assert!(!task.answers.is_empty(), "{at}: no answers");
            let mut ep = common::episode(&world, &task.id);
            ep.set_enforce_limits(false);
            let mut say = |text: &str| ep.step(&Action::message(text)).unwrap().observation.text;
            assert_eq!(say("Thanks."), "Sorry, what do you need from me?", "{at}");
            for answer in &task.answers {
                let reached = answer
                    .when_asked
                    .iter()
                    .any(|cue| say(&format!("{cue}?")).contains(answer.says.as_str()));
                assert!(reached, "{at}: no cue of {:?} gets its answer", answer.says);
            }
        }
    }
}

#[test]
fn the_seed_worlds_customers_reveal_facts_only_when_asked() {
    let cases = [
        (
            "contract-review",
            "liability-cap-amount",
            "How much do you expect to spend with Brightwater each year?",
            "We expect to spend the full $1.4 million annual commitment with Brightwater.",
        ),
        (
            "underwriting",
            "missing-loss-runs",
            "Who insured GreenScape before Midwest Indemnity?",
            "Crossroads Farm & Commercial Mutual insured GreenScape from July 2022 to July 2023; Midwest Indemnity has had it since.",
        ),
        (
            "month-end-close",
            "check-transposition",
            "What does the bank's image of the check show?",
            "The bank's image of check 4471 shows $4,832.00, signed and payable to Midwest Hydraulic Supply.",
        ),
        (
            "tau-airline",
            "test-0",
            "Hello, how can I help you today?",
            "I want to fly from New York to Seattle on May 20 (one way).",
        ),
        (
            "tau-retail",
            "train-0",
            "Could you give me your name and zip code?",
            "My name is Omar Anderson. My zip code is 19031.",
        ),
    ];
    for (name, task, question, answer) in cases {
        let world = common::world(name);
        let mut ep = common::episode(&world, task);
        let reply = ep
            .step(&Action::message(question))
            .unwrap()
            .observation
            .text;
        assert!(reply.starts_with(answer), "{name}/{task}: {reply:?}");
        let customer = world.task(task).unwrap().customer.clone().unwrap();
        assert!(!customer.contains("You "), "{name}/{task}: {customer:?}");
    }
}

#[test]
fn a_task_with_answers_keeps_its_scripted_replies_for_what_they_do_not_cover() {
    let dir = common::copy_world(&common::mini_dir());
    common::replace(
        dir.path(),
        "tasks/tasks.toml",
        "replies = [\"Yes, go ahead.\", \"Thanks!\"]",
        "replies = [\"Yes, go ahead.\"]\nunanswered = \"Hm?\"\n\n[[tasks.answers]]\nwhen_asked = [\"account\"]\nsays = \"A-1.\"",
    );
    let world = std::sync::Arc::new(understudy::World::load(dir.path()).unwrap());
    let mut ep = common::episode(&world, "pay-back");
    let mut say = |text: &str| ep.step(&Action::message(text)).unwrap().observation.text;
    assert_eq!(
        say("Which account?"),
        "A-1.",
        "an answer does not use up a scripted reply"
    );
    assert_eq!(say("ok?"), "Yes, go ahead.");
    assert_eq!(
        say("done"),
        "Hm?",
        "the task's own words once the script has run out"
    );
}

#[test]
fn step_limit_truncates_and_ending_tool_terminates() {
    let world = common::mini();
    let mut ep = common::episode(&world, "pay-back"); // max_steps = 5
    for i in 1..=5 {
        let out = ep.step(&Action::message("hello")).unwrap();
        assert_eq!(out.truncated, i == 5);
        assert!(!out.terminated);
    }
    assert!(matches!(
        ep.step(&Action::message("more")),
        Err(Error::EpisodeOver { .. })
    ));

    let mut ep = common::episode(&world, "pay-back");
    let out = ep.step(&Action::tool("close", json!({}))).unwrap();
    assert!(out.terminated && !out.truncated);
    assert_eq!(out.observation.text, "closed");
    assert!(matches!(
        ep.step(&Action::message("x")),
        Err(Error::EpisodeOver { .. })
    ));

    // reset starts over
    ep.reset("pay-back", 0).unwrap();
    assert!(!ep.is_done());
    assert_eq!(ep.steps(), 0);
}

#[test]
fn views_filter_sort_page_and_open_records() {
    let world = common::mini();
    let mut ep = common::episode(&world, "pay-back");
    let out = ep
        .step(&Action::tool(
            "view_accounts",
            json!({"sort": "balance", "descending": true, "limit": 2}),
        ))
        .unwrap();
    let rows = out.observation.content["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["id"], "A-1");
    assert_eq!(out.observation.content["total"], 3);

    let out = ep
        .step(&Action::tool(
            "view_accounts",
            json!({"filter": {"frozen": 1}}),
        ))
        .unwrap();
    assert_eq!(out.observation.content["rows"][0]["owner"], "Grace Hopper");

    let out = ep
        .step(&Action::tool("view_accounts", json!({"key": "A-2"})))
        .unwrap();
    assert_eq!(out.observation.content["owner"], "Charles Babbage");

    let out = ep
        .step(&Action::tool("view_accounts", json!({"key": "A-9"})))
        .unwrap();
    assert!(out.observation.text.contains("no record with id A-9"));

    let out = ep
        .step(&Action::tool("view_accounts", json!({"sort": "password"})))
        .unwrap();
    assert!(out.observation.text.contains("`password` is not a column"));
}

#[test]
fn scripts_keep_ints_and_floats_and_document_changes_diff_as_documents() {
    let world = common::mini();
    let mut ep = common::episode(&world, "pay-back");
    let out = ep
        .step(&Action::tool(
            "tag_doc",
            json!({"doc_id": "d1", "tag": "y"}),
        ))
        .unwrap();
    assert!(out.observation.ok, "{:?}", out.observation);
    // 68 (int) + 0.125 -> 68.125 -> round half-even to 2 places -> 68.12
    assert_eq!(out.observation.content["count"], json!(68.12));
    assert_eq!(out.observation.content["tags"], json!(["x", "y"]));
    assert_eq!(out.observation.content["stamp"], "DOC-000001");
    let changes = serde_json::to_value(ep.changes().unwrap()).unwrap();
    assert_eq!(changes["docs"]["changed"]["d1"]["count"], json!(68.12));

    let out = ep
        .step(&Action::tool(
            "tag_doc",
            json!({"doc_id": "zz", "tag": "y"}),
        ))
        .unwrap();
    assert_eq!(out.observation.text, "Error: document not found");
}

#[test]
fn reset_restores_the_seed_and_restarts_clock_and_ids() {
    let world = common::mini();
    let mut ep = Episode::new(world.clone()).unwrap();
    let run = |ep: &mut Episode| {
        ep.reset("pay-back", 7).unwrap();
        ep.step(&Action::message("hi")).unwrap();
        let out = ep
            .step(&Action::tool(
                "transfer",
                json!({"from_id": "A-1", "to_id": "A-2", "amount": 10}),
            ))
            .unwrap();
        (
            out.observation,
            serde_json::to_string(&ep.changes().unwrap()).unwrap(),
        )
    };
    let first = run(&mut ep);
    let second = run(&mut ep);
    assert_eq!(first, second);
    assert_eq!(first.0.content["at"], "2025-01-01T09:00:30Z");
}

#[test]
fn read_only_queries_cannot_write() {
    let world = common::mini();
    let ep = common::episode(&world, "pay-back");
    let rows = ep
        .query("SELECT count(*) AS n FROM accounts", &Default::default())
        .unwrap();
    assert_eq!(rows[0]["n"], 3);
    assert!(ep
        .query("DELETE FROM accounts", &Default::default())
        .is_err());
    assert!(ep
        .query("PRAGMA table_info(accounts)", &Default::default())
        .is_err());
}

/// Two copies of the mini world: as it is, and with a trigger (an audit
/// row per transfer), which makes reset copy the whole seed back.
fn mini_plain_and_with_trigger() -> (tempfile::TempDir, tempfile::TempDir) {
    let plain = common::copy_world(&common::mini_dir());
    let with_trigger = common::copy_world(&common::mini_dir());
    common::write(
        with_trigger.path(),
        "schema.sql",
        &(std::fs::read_to_string(common::mini_dir().join("schema.sql")).unwrap()
            + "CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT);\n\
               CREATE TRIGGER log_transfer AFTER INSERT ON transfers BEGIN INSERT INTO audit (what) VALUES (NEW.id); END;\n"),
    );
    (plain, with_trigger)
}

/// Reset must restore the seed whether it reverts rows one by one or copies
/// the whole snapshot (worlds with triggers or cascading foreign keys).
#[test]
fn reset_restores_the_seed_in_every_kind_of_world() {
    let (plain, with_trigger) = mini_plain_and_with_trigger();
    for dir in [plain.path(), with_trigger.path()] {
        let world = std::sync::Arc::new(understudy::World::load(dir).unwrap());
        let mut ep = Episode::new(world.clone()).unwrap();
        let mut runs = Vec::new();
        for _ in 0..3 {
            ep.reset("pay-back", 0).unwrap();
            assert!(ep.changes().unwrap().is_empty(), "reset leaves no changes");
            let out = ep
                .step(&Action::tool(
                    "transfer",
                    json!({"from_id": "A-1", "to_id": "A-2", "amount": 10}),
                ))
                .unwrap();
            ep.step(&Action::tool(
                "tag_doc",
                json!({"doc_id": "d2", "tag": "z"}),
            ))
            .unwrap();
            runs.push((
                out.observation,
                serde_json::to_string(&ep.changes().unwrap()).unwrap(),
            ));
        }
        assert!(
            runs.windows(2).all(|w| w[0] == w[1]),
            "{}: runs differ after reset",
            dir.display()
        );
        if dir == with_trigger.path() {
            assert!(
                runs[0].1.contains("\"audit\""),
                "the trigger's row is part of the diff"
            );
        }
    }
}

/// Sessions of one world share its read-only seed (one copy, not one per
/// session): what one session changes is in its own diff only, and each
/// resets to the seed, by rows or by whole copy, with another open beside it.
#[test]
fn sessions_sharing_the_seed_keep_their_changes_apart() {
    let (plain, with_trigger) = mini_plain_and_with_trigger();
    for dir in [plain.path(), with_trigger.path()] {
        let world = std::sync::Arc::new(understudy::World::load(dir).unwrap());
        let mut a = common::episode(&world, "pay-back");
        let mut b = common::episode(&world, "pay-back");
        let moved = a
            .step(&Action::tool(
                "transfer",
                json!({"from_id": "A-1", "to_id": "A-2", "amount": 10}),
            ))
            .unwrap();
        assert!(moved.observation.ok, "{}", moved.observation.text);
        let tagged = b
            .step(&Action::tool(
                "tag_doc",
                json!({"doc_id": "d2", "tag": "z"}),
            ))
            .unwrap();
        assert!(tagged.observation.ok, "{}", tagged.observation.text);
        let (in_a, in_b) = (a.changes().unwrap(), b.changes().unwrap());
        assert!(
            in_a.contains_key("accounts") && !in_a.contains_key("docs"),
            "{in_a:?}"
        );
        assert!(
            in_b.contains_key("docs") && !in_b.contains_key("accounts"),
            "{in_b:?}"
        );
        a.reset("pay-back", 0).unwrap();
        assert!(a.changes().unwrap().is_empty(), "a resets to the seed");
        assert_eq!(
            b.changes().unwrap(),
            in_b,
            "b keeps its change through a's reset"
        );
        b.reset("pay-back", 0).unwrap();
        assert!(b.changes().unwrap().is_empty(), "b resets to the seed");
    }
}

/// The mini world plus a `get_doc` tool and a `docs` view whose `doc`
/// column is declared JSON.
fn mini_with_json_columns() -> (tempfile::TempDir, std::sync::Arc<understudy::World>) {
    let dir = common::copy_world(&common::mini_dir());
    common::write(
        dir.path(),
        "tools/get_doc.toml",
        r#"name = "get_doc"
description = "Look up a document."
kind = "read"

[parameters]
type = "object"
required = ["doc_id"]
[parameters.properties.doc_id]
type = "string"

[result]
query = "SELECT id, doc, json_extract(doc, '$.title') AS title FROM docs WHERE id = :doc_id"
shape = "row"
json_columns = ["doc"]
text = "{{ title }} has {{ doc.tags | length }} tag(s)."
"#,
    );
    common::append(
        dir.path(),
        "views.toml",
        r#"
[[views]]
name = "docs"
query = "SELECT id, doc FROM docs ORDER BY id"
key = "id"
json_columns = ["doc"]
"#,
    );
    let world = std::sync::Arc::new(understudy::World::load(dir.path()).expect("loads"));
    (dir, world)
}

#[test]
fn json_columns_reach_the_agent_as_json() {
    let (_dir, world) = mini_with_json_columns();
    let mut ep = common::episode(&world, "pay-back");
    let out = ep
        .step(&Action::tool("get_doc", json!({"doc_id": "d1"})))
        .unwrap();
    assert!(out.observation.ok, "{:?}", out.observation);
    assert_eq!(
        out.observation.content["doc"],
        json!({"title": "Note", "tags": ["x"], "count": 68})
    );
    assert_eq!(out.observation.content["title"], json!("Note"));
    assert_eq!(out.observation.text, "Note has 1 tag(s).");

    let out = ep.step(&Action::tool("view_docs", json!({}))).unwrap();
    assert!(out.observation.ok, "{:?}", out.observation);
    assert_eq!(out.observation.content["rows"][1]["doc"]["tags"], json!([]));
    assert!(
        out.observation.text.contains(r#""tags": ["x"]"#)
            && !out.observation.text.contains(r#"\""#),
        "the listing's text shows JSON, not escaped strings: {}",
        out.observation.text
    );
    let out = ep
        .step(&Action::tool("view_docs", json!({"key": "d2"})))
        .unwrap();
    assert_eq!(out.observation.content["doc"]["count"], json!(1.5));
}

#[test]
fn a_json_column_holding_other_text_fails_the_call_naming_it() {
    let (dir, _) = mini_with_json_columns();
    common::replace(
        dir.path(),
        "tools/get_doc.toml",
        "SELECT id, doc,",
        "SELECT id, 'not json' AS doc,",
    );
    let world = std::sync::Arc::new(understudy::World::load(dir.path()).expect("loads"));
    let mut ep = common::episode(&world, "pay-back");
    let out = ep
        .step(&Action::tool("get_doc", json!({"doc_id": "d1"})))
        .unwrap();
    let error = out.observation.error.expect("fails");
    assert_eq!(error.code, ObservationErrorCode::ToolFailed);
    assert!(
        error.message.contains("`doc` is declared JSON"),
        "{}",
        error.message
    );
}

/// A τ customer answers the expert's closing as a customer would, not with
/// "what do you need from me?", and never with the request again.
#[test]
fn a_tau_customer_thanks_the_expert_who_closes() {
    for (name, task) in [("tau-airline", "test-0"), ("tau-retail", "train-0")] {
        let world = common::world(name);
        let request = world.task(task).unwrap().answers[0].says.clone();
        let mut ep = common::episode(&world, task);
        let mut say = |text: &str| ep.step(&Action::message(text)).unwrap().observation.text;
        for closing in [
            "I've sent you a certificate of $100. Is there anything else I can help you with?",
            "Is there anything else?",
            "You're all set. Have a great day!",
        ] {
            assert_eq!(
                say(closing),
                "No, that's everything. Thank you for your help!",
                "{name}/{task}: {closing}"
            );
        }
        // Opening questions still get the request.
        assert_eq!(
            say("What can I help you with today?"),
            request,
            "{name}/{task}"
        );
    }
}
