//! Rubric loading and scoring on the mini world: the formula, gates,
//! evidence, judged criteria, and every kind of bad rubric.

use understudy_testkit as common;

use std::sync::Arc;

use serde_json::json;
use understudy::rubric::{self, Judgment, Rubric, RubricSet};
use understudy::{Action, Episode, Error, World};

fn gold(world: &World, task: &str) -> Vec<Action> {
    world
        .task(task)
        .expect("task")
        .solution
        .iter()
        .map(|a| Action::from_json(a).expect("action"))
        .collect()
}

fn score(world: &Arc<World>, rubric: &Rubric, actions: &[Action]) -> rubric::Score {
    let mut ep = Episode::new(Arc::clone(world)).expect("episode");
    rubric::replay_and_score(&mut ep, rubric, 0, actions, &[]).expect("scored")
}

fn criterion<'a>(s: &'a rubric::Score, id: &str) -> &'a rubric::CriterionResult {
    s.criteria
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("criterion {id}"))
}

fn problems(world: &Arc<World>, text: &str) -> Vec<String> {
    match Rubric::from_str(world, "pay-back", "rubrics/pay-back.toml", text) {
        Ok(_) => panic!("expected the rubric to be rejected"),
        Err(Error::RubricInvalid { problems, .. }) => {
            problems.iter().map(|p| p.to_string()).collect()
        }
        Err(e) => panic!("unexpected error {e}"),
    }
}

#[test]
fn gold_scores_full_marks_once_the_judged_criterion_is_graded() {
    let world = common::mini();
    let rubric = Rubric::load(&world, "pay-back")
        .expect("loads")
        .expect("exists");
    let s = score(&world, &rubric, &gold(&world, "pay-back"));
    assert_eq!(
        s.value, None,
        "a judged criterion is pending, never guessed"
    );
    assert_eq!(s.pending, vec!["friendly"]);
    // 10 of 11 positive points are certain; the judged point is open.
    assert!((s.range[0] - 10.0 / 11.0).abs() < 1e-9, "{:?}", s.range);
    assert_eq!(s.range[1], 1.0);
    assert_eq!(s.world_hash, world.content_hash);
    assert_eq!(s.rubric_hash, rubric.hash);
    assert_eq!(s.rubric_version, "1");

    let mut graded = s.clone();
    let j = Judgment {
        criterion_id: "friendly".into(),
        criterion_hash: None,
        met: true,
        reason: "polite and clear".into(),
        judge: "expert-1".into(),
        at: String::new(),
        level: None,
    };
    assert!(graded.apply_judgment(&rubric, &j));
    assert_eq!(graded.value, Some(1.0));
    assert!(graded.is_success());

    let mut ep = Episode::new(Arc::clone(&world)).expect("episode");
    let not_met = Judgment { met: false, ..j };
    let s = rubric::replay_and_score(&mut ep, &rubric, 0, &gold(&world, "pay-back"), &[not_met])
        .expect("scored");
    assert!((s.value.expect("graded") - 10.0 / 11.0).abs() < 1e-9);
}

#[test]
fn do_nothing_and_saying_the_right_words_both_score_zero() {
    let world = common::mini();
    let rubric = Rubric::load(&world, "pay-back")
        .expect("loads")
        .expect("exists");
    let nothing = score(&world, &rubric, &[]);
    assert_eq!(nothing.range, [0.0, 0.0]);
    assert_eq!(nothing.failed_gates, vec!["charles-paid"]);

    let words = score(
        &world,
        &rubric,
        &[Action::message("Done: 25 sent to Charles.")],
    );
    assert!(
        criterion(&words, "told-amount").met == Some(true),
        "the words are there"
    );
    assert_eq!(
        words.range,
        [0.0, 0.0],
        "but nothing was done, so the gate zeroes it"
    );
}

#[test]
fn numbers_in_messages_are_numbers_not_substrings() {
    let world = common::mini();
    let rubric = Rubric::load(&world, "pay-back")
        .expect("loads")
        .expect("exists");
    let mut actions = gold(&world, "pay-back");
    actions.pop();
    actions.push(Action::message(
        "Done: 250 sent to Charles (ref 2500, 0.25%).",
    ));
    let s = score(&world, &rubric, &actions);
    let told = criterion(&s, "told-amount");
    assert_eq!(told.met, Some(false));
    assert_eq!(
        told.evidence.detail,
        "The message does not mention the number 25"
    );
    actions.pop();
    actions.push(Action::message("Done: $25.00 sent to Charles."));
    let s = score(&world, &rubric, &actions);
    let told = criterion(&s, "told-amount");
    assert_eq!(told.met, Some(true));
    assert_eq!(told.evidence.steps, vec![2]);
    assert_eq!(
        told.evidence.detail,
        "The message at step 3 mentions the number 25 (“$25.00”)"
    );
}

#[test]
fn evidence_names_the_step_and_the_rows() {
    let world = common::mini();
    let rubric = Rubric::load(&world, "pay-back")
        .expect("loads")
        .expect("exists");
    let mut actions = gold(&world, "pay-back");
    actions.insert(
        2,
        Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-3", "amount": 5}),
        ),
    );
    let s = score(&world, &rubric, &actions);
    assert_eq!(
        s.value,
        Some(0.0),
        "the extra transfer breaks the nothing-else gate"
    );
    assert_eq!(s.failed_gates, vec!["nothing-else-changed"]);
    let gate = criterion(&s, "nothing-else-changed");
    assert_eq!(gate.evidence.changes.len(), 1);
    assert_eq!(gate.evidence.changes[0].key, "A-3");
    // In words a grader reads: the table as the world shows it (the mini
    // world has no labels.toml, so its name made readable), no SQL terms.
    assert_eq!(
        gate.evidence.detail,
        "1 record changed that the task does not allow: Accounts A-3 (changed)"
    );
    let neg = criterion(&s, "no-transfer-to-others");
    assert_eq!(neg.met, Some(true));
    assert_eq!(neg.earned, -3.0);
    assert_eq!(neg.evidence.steps, vec![2]);
    let bal = criterion(&s, "ada-balance");
    assert_eq!(bal.met, Some(false));
    assert_eq!(bal.evidence.value, Some(json!(70.0)));
    assert!(bal
        .evidence
        .query
        .as_deref()
        .is_some_and(|q| q.contains("FROM accounts")));
    assert_eq!(
        bal.evidence.detail,
        "It is 70.0; it should be about 75 (± 0.001)"
    );
    let passed = score(&world, &rubric, &gold(&world, "pay-back"));
    assert_eq!(
        criterion(&passed, "nothing-else-changed").evidence.detail,
        "No record changed other than the ones the task allows."
    );
    assert_eq!(
        criterion(&passed, "ada-balance").evidence.detail,
        "It is 75.0, as expected"
    );
}

#[test]
fn ordering_and_failed_calls_are_explained() {
    let world = common::mini();
    let rubric = Rubric::load(&world, "pay-back")
        .expect("loads")
        .expect("exists");
    let actions = vec![
        Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 25}),
        ),
        Action::tool("view_accounts", json!({})),
        Action::message("Sent 25."),
    ];
    let s = score(&world, &rubric, &actions);
    let looked = criterion(&s, "looked-first");
    assert_eq!(looked.met, Some(false));
    // In words a grader reads: the tools by their titles, steps counted
    // from 1, and what the order should have been.
    assert_eq!(
        looked.evidence.detail,
        "“Transfer” was used once, at step 1; step 1 came too early: it should follow “Accounts”"
    );
    let paid = criterion(&s, "no-transfer-to-others");
    assert_eq!(paid.met, Some(false));
    assert_eq!(
        paid.evidence.detail,
        "“Transfer” with To id one of “A-1” or “A-3” was never used"
    );
    // A refused attempt is named, and does not count for a criterion that
    // must be met.
    let refused = vec![Action::tool(
        "transfer",
        json!({"from_id": "A-3", "to_id": "A-2", "amount": 5}),
    )];
    let r = score(&world, &rubric, &refused);
    assert_eq!(
        criterion(&r, "looked-first").evidence.detail,
        "“Transfer” was never used; the attempt at step 1 was refused and does not count; it should be used at least once"
    );
    // 5 + 2 + 2 of 11 (the judged point pending).
    assert!((s.range[0] - 9.0 / 11.0).abs() < 1e-9, "{:?}", s.range);

    let frozen = Rubric::load(&world, "frozen")
        .expect("loads")
        .expect("exists");
    // A rubric only grades its own task.
    let mut ep = Episode::new(Arc::clone(&world)).expect("episode");
    ep.reset("pay-back", 0).expect("reset");
    let wrong = rubric::score_episode(&frozen, &ep, &[], &[]);
    assert_eq!(wrong.value, Some(0.0));
    assert_eq!(wrong.errors.len(), frozen.criteria.len());
    assert!(wrong.criteria[0]
        .evidence
        .detail
        .contains("ran task `pay-back`"));
    let s = score(&world, &frozen, &gold(&world, "frozen"));
    assert_eq!(s.value, Some(1.0), "the refused attempt is what gold did");
    let s = score(&world, &frozen, &[]);
    assert_eq!(s.value, Some(0.0));
}

#[test]
fn the_score_records_ignored_actions_after_the_end() {
    let world = common::mini();
    let rubric = Rubric::load(&world, "pay-back")
        .expect("loads")
        .expect("exists");
    // max_steps is 5: the sixth and later actions are not applied.
    let mut actions: Vec<Action> = (0..5)
        .map(|_| Action::tool("view_accounts", json!({})))
        .collect();
    actions.push(Action::tool(
        "transfer",
        json!({"from_id": "A-1", "to_id": "A-2", "amount": 25}),
    ));
    let s = score(&world, &rubric, &actions);
    assert_eq!(s.ignored_actions, 1);
    assert_eq!(s.steps, 5);
    assert_eq!(s.value, Some(0.0));
}

#[test]
fn a_check_that_cannot_run_counts_against_the_episode() {
    let world = common::mini();
    let text = r#"
format = 1
version = "1"
[[criteria]]
id = "runaway"
description = "A query that only explodes once a transfer exists."
kind = "state"
query = "SELECT CASE WHEN (SELECT count(*) FROM transfers) = 0 THEN 1 ELSE (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c) END"
expect = { equals = 1 }
points = 1
[[criteria]]
id = "told"
description = "Said 25."
kind = "message"
number = 25
points = 1
"#;
    let rubric = Rubric::from_str(&world, "pay-back", "inline", text).expect("valid on the seed");
    let s = score(&world, &rubric, &gold(&world, "pay-back"));
    let c = criterion(&s, "runaway");
    assert_eq!(c.met, Some(false));
    assert!(c.error.is_some(), "the budget stops the query");
    assert_eq!(s.errors, vec!["runaway"]);
    assert_eq!(s.value, Some(0.5));
}

#[test]
fn sections_are_weighted_means_of_their_children() {
    let world = common::mini();
    let text = r#"
format = 1
version = "2"
[[sections]]
id = "outcome"
weight = 3
[[sections]]
id = "communication"
weight = 1
[[criteria]]
id = "paid"
section = "outcome"
description = "Charles was paid."
kind = "state"
query = "SELECT count(*) FROM transfers WHERE to_id = 'A-2'"
expect = { rows = 1 }
points = 1
[[criteria]]
id = "told"
section = "communication"
description = "Told Ada 25."
kind = "message"
number = 25
points = 4
[[criteria]]
id = "said-sorry"
section = "communication"
description = "Apologised."
kind = "message"
regex = "(?i)sorry"
points = 4
"#;
    let rubric = Rubric::from_str(&world, "pay-back", "inline", text).expect("valid");
    let s = score(&world, &rubric, &gold(&world, "pay-back"));
    // outcome 1.0 (weight 3), communication 0.5 (weight 1): 3.5 / 4.
    assert_eq!(s.value, Some(0.875));
    assert_eq!(s.sections.len(), 2);
    assert_eq!(s.sections[1].value, Some(0.5));
}

#[test]
fn bad_rubrics_are_rejected_whole_with_every_problem_located() {
    let world = common::mini();
    let text = r#"format = 1
version = "1"

[[criteria]]
id = "bad-sql"
description = "x"
kind = "state"
query = "SELECT nope FROM nowhere"
expect = { equals = 1 }
points = 1

[[criteria]]
id = "bad-tool"
description = "x"
kind = "action"
tool = "teleport"
points = 1

[[criteria]]
id = "bad-arg"
description = "x"
kind = "action"
tool = "transfer"
args = { amout = 25 }
points = 1

[[criteria]]
id = "bad-matcher"
description = "x"
kind = "action"
tool = "transfer"
args = { amount = { number = "lots" }, to_id = { regex = "(" } }
points = 1

[[criteria]]
id = "writes"
description = "x"
kind = "state"
query = "DELETE FROM accounts"
expect = { rows = 0 }
points = 1

[[criteria]]
id = "bad-gate"
description = "x"
kind = "message"
contains = "hi"
points = -1
gate = true

[[criteria]]
id = "stray"
description = "x"
kind = "message"
contains = "hi"
tool = "transfer"
points = 1

[[criteria]]
id = "bad-sql"
description = ""
kind = "wish"
points = 1
"#;
    let p = problems(&world, text);
    let find = |needle: &str| {
        p.iter()
            .find(|x| x.contains(needle))
            .unwrap_or_else(|| panic!("no problem mentioning {needle:?} in {p:#?}"))
            .clone()
    };
    assert!(
        find("no such table: nowhere").starts_with("rubrics/pay-back.toml:8: criterion `bad-sql`")
    );
    assert!(
        find("no tool `teleport`").starts_with("rubrics/pay-back.toml:16: criterion `bad-tool`")
    );
    assert!(find("no parameter `amout`").contains("criterion `bad-arg`"));
    assert!(find("`number` must be a number").contains("criterion `bad-matcher`"));
    assert!(find("`regex` does not compile").contains("criterion `bad-matcher`"));
    assert!(find("criterion `writes`").contains("may only read"));
    assert!(find("criterion `bad-gate`").contains("0 or positive points"));
    assert!(find("criterion `stray`").contains("tool do(es) not apply to message"));
    assert!(find("used by an earlier criterion").contains(":59:"));
    assert!(find("unknown kind `wish`").contains("criterion `bad-sql`"));
}

#[test]
fn structural_mistakes_are_explained() {
    let world = common::mini();
    let cases = [
        ("format = 2\nversion = \"1\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"message\"\ncontains = \"x\"\npoints = 1\n", "unsupported rubric format 2"),
        ("format = 1\nversion = \"1\"\n", "at least one [[criteria]]"),
        ("format = 1\nversion = \"1\"\ntask = \"frozen\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"message\"\ncontains = \"x\"\npoints = 1\n", "says task `frozen`"),
        ("format = 1\nversion = \"1\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"message\"\ncontains = \"x\"\npoints = -1\n", "no criterion has positive points"),
        ("format = 1\nversion = \"1\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"message\"\ncontains = \"x\"\nponits = 1\n", "unknown field `ponits`"),
        ("format = 1\nversion = \"1\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"state\"\nquery = \"SELECT id FROM accounts WHERE id = :id\"\nexpect = { rows = 1 }\npoints = 1\n", "parameter `:id`"),
        ("format = 1\nversion = \"1\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"state\"\nchanges = { only = [{ table = \"ledger\" }] }\ngate = true\n[[criteria]]\nid = \"b\"\ndescription = \"x\"\nkind = \"message\"\ncontains = \"x\"\npoints = 1\n", "no table `ledger`"),
        ("format = 1\nversion = \"1\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"message\"\ncontains = \"x\"\nsection = \"s\"\npoints = 1\n", "section `s` is not defined"),
        ("format = 1\nversion = \"1\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"action\"\ntool = \"transfer\"\ncount = { min = 3, max = 1 }\npoints = 1\n", "count.max is smaller"),
        ("format = 1\nversion = \"1\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"message\"\ndate = \"April 1\"\npoints = 1\n", "YYYY-MM-DD"),
        ("format = 1\nversion = \"1\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"message\"\ncontains = \"x\"\npoints = 1\n[[forbidden]]\ntool = \"transfer\"\nargs = { from_id = \"A-1\" }\n", "do not fit the tool's parameters"),
    ];
    for (text, needle) in cases {
        let p = problems(&world, text);
        assert!(
            p.iter().any(|x| x.contains(needle)),
            "expected {needle:?} in {p:#?}"
        );
    }
    // The frozen task only allows get_account and transfer.
    let text = "format = 1\nversion = \"1\"\n[[criteria]]\nid = \"a\"\ndescription = \"x\"\nkind = \"action\"\ntool = \"tag_doc\"\npoints = 1\n";
    match Rubric::from_str(&world, "frozen", "rubrics/frozen.toml", text) {
        Err(Error::RubricInvalid { problems, .. }) => assert!(problems[0]
            .message
            .contains("not available in task `frozen`")),
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn a_world_with_a_broken_rubric_file_reports_it_and_loads_nothing() {
    let dir = common::copy_world(&common::mini_dir());
    std::fs::write(
        dir.path().join("rubrics/nope.toml"),
        "format = 1\nversion = \"1\"\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("rubrics/frozen.toml"),
        "format = 1\nversion = \"1\"\n[[criteria]]\nid = \"x\"\n",
    )
    .expect("write");
    let world = Arc::new(World::load(dir.path()).expect("the world itself is fine"));
    match RubricSet::load(&world) {
        Err(Error::RubricInvalid { problems, .. }) => {
            let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
            assert!(
                text.iter()
                    .any(|p| p.starts_with("rubrics/nope.toml") && p.contains("no task `nope`")),
                "{text:#?}"
            );
            assert!(
                text.iter()
                    .any(|p| p.starts_with("rubrics/frozen.toml") && p.contains("missing field")),
                "{text:#?}"
            );
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    let ok = RubricSet::load(&common::mini()).expect("the bundled mini rubrics load");
    assert_eq!(ok.rubrics.len(), 2);
}

#[test]
fn editing_a_rubric_file_is_picked_up_and_changes_the_hash() {
    let dir = common::copy_world(&common::mini_dir());
    let world = Arc::new(World::load(dir.path()).expect("loads"));
    let first = Rubric::load(&world, "frozen")
        .expect("loads")
        .expect("exists");
    let again = Rubric::load(&world, "frozen")
        .expect("loads")
        .expect("exists");
    assert!(Arc::ptr_eq(&first, &again), "cached while unchanged");
    let path = dir.path().join("rubrics/frozen.toml");
    let text = std::fs::read_to_string(&path)
        .expect("read")
        .replace("version = \"1\"", "version = \"2\"");
    std::fs::write(&path, text).expect("write");
    let edited = Rubric::load(&world, "frozen")
        .expect("loads")
        .expect("exists");
    assert_eq!(edited.version, "2");
    assert_ne!(edited.hash, first.hash);
    assert!(Rubric::load(&world, "no-such-task")
        .expect("no file is fine")
        .is_none());
}

/// A file that is not TOML, or whose values have the wrong type, is
/// refused with the line of the fault (the file is parsed once and read
/// twice, so both kinds of fault must still carry their place).
#[test]
fn a_rubric_that_is_not_toml_or_mistyped_is_refused_at_its_line() {
    let world = common::mini();
    let syntax = "format = 1\nversion = \"1\"\n\n[[criteria]]\nid = \"x\nkind = \"state\"\n";
    let p = problems(&world, syntax);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("rubrics/pay-back.toml:5"), "{p:?}");
    let mistyped = "format = 1\nversion = \"1\"\n\n[[criteria]]\nid = \"x\"\ndescription = \"d\"\nkind = \"state\"\npoints = 1\ngate = \"yes\"\n";
    let p = problems(&world, mistyped);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("rubrics/pay-back.toml:9"), "{p:?}");
    assert!(p[0].contains("bool"), "{p:?}");
}
