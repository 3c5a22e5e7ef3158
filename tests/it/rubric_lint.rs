//! Rubric lint on the mini world: gold, do-nothing, mutants, constant
//! criteria, equivalent mutants, and gold taken from the store.

use understudy_testkit as common;

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use understudy::recorder::Recorder;
use understudy::rubric::lint::{self, LintOptions, TaskLint};
use understudy::rubric::RubricSet;
use understudy::store::{Actor, Decision, Store};
use understudy::{Action, Error, World};

/// A copy of the mini world whose `task` rubric is `text`.
fn world_with(task: &str, text: &str) -> (tempfile::TempDir, Arc<World>) {
    let dir = common::copy_world(&common::mini_dir());
    std::fs::write(dir.path().join(format!("rubrics/{task}.toml")), text).expect("write rubric");
    let world = Arc::new(World::load(dir.path()).expect("world loads"));
    (dir, world)
}

fn lint_task(world: &Arc<World>, task: &str, store: Option<&Store>) -> TaskLint {
    let rubrics = RubricSet::load(world).expect("rubrics load");
    let options = LintOptions {
        task: Some(task.into()),
        ..LintOptions::default()
    };
    let mut report = lint::lint(world, &rubrics, store, &options, &|| {}).expect("lint runs");
    assert_eq!(report.tasks.len(), 1);
    report.tasks.remove(0)
}

const HEADER: &str = "format = 1\nversion = \"1\"\n";

#[test]
fn the_bundled_mini_rubrics_pass() {
    let world = common::mini();
    let rubrics = RubricSet::load(&world).expect("load");
    let report = lint::lint(&world, &rubrics, None, &LintOptions::default(), &|| {}).expect("lint");
    assert_eq!(
        report.failed,
        0,
        "{:#?}",
        report.tasks.iter().map(|t| &t.problems).collect::<Vec<_>>()
    );
    assert_eq!(report.mutation_score, Some(1.0));
    let pay = report
        .tasks
        .iter()
        .find(|t| t.task_id == "pay-back")
        .expect("pay-back");
    assert_eq!(pay.gold[0].source, "solution");
    assert_eq!(pay.gold[0].range[1], 1.0);
    assert_eq!(pay.do_nothing.as_ref().map(|d| d.range), Some([0.0, 0.0]));
    let kinds: Vec<String> = pay
        .mutants
        .iter()
        .map(|m| format!("{:?}", m.kind))
        .collect();
    for k in ["DropStep", "Perturb", "Forbidden", "DropFinalMessage"] {
        assert!(kinds.iter().any(|x| x == k), "no {k} mutant in {kinds:?}");
    }
}

#[test]
fn a_rubric_that_only_listens_lets_mutants_survive_and_says_which() {
    let text = format!(
        "{HEADER}[[criteria]]\nid = \"told\"\ndescription = \"Said 25 was sent.\"\nkind = \"message\"\nnumber = 25\npoints = 1\n"
    );
    let (_dir, world) = world_with("pay-back", &text);
    let t = lint_task(&world, "pay-back", None);
    assert!(!t.ok);
    let survived: Vec<&str> = t
        .mutants
        .iter()
        .filter(|m| !m.caught)
        .map(|m| m.description.as_str())
        .collect();
    assert!(
        survived.contains(&"step 2 (transfer) dropped"),
        "{survived:?}"
    );
    assert!(
        survived.iter().any(|s| s.contains("amount 25.0 → 26.0")),
        "{survived:?}"
    );
    let score = t.mutation.score.expect("a score");
    assert!(score < 0.5, "{score}");
    let problem = t
        .problems
        .iter()
        .find(|p| p.contains("mutation score"))
        .expect("a mutation problem");
    assert!(problem.contains("does not notice 5 mutant(s)"), "{problem}");
}

#[test]
fn gold_below_one_do_nothing_above_zero_and_constant_criteria_are_reported() {
    let text = format!(
        r#"{HEADER}
[[criteria]]
id = "always"
description = "A query that is always true."
kind = "state"
query = "SELECT 1"
expect = {{ equals = 1 }}
points = 1

[[criteria]]
id = "paid-30"
description = "Charles got 30 (the wrong amount)."
kind = "state"
query = "SELECT count(*) FROM transfers WHERE amount = 30"
expect = {{ equals = 1 }}
points = 1
"#
    );
    let (_dir, world) = world_with("pay-back", &text);
    let t = lint_task(&world, "pay-back", None);
    let all = t.problems.join("\n");
    assert!(
        all.contains("gold solution scores 0.500, not 1.0: unmet paid-30"),
        "{all}"
    );
    assert!(
        all.contains("doing nothing scores up to 0.500, not 0: it earns always"),
        "{all}"
    );
    assert_eq!(t.constant_criteria, vec!["always", "paid-30"]);
}

#[test]
fn equivalent_mutants_are_left_out_unless_the_rubric_notices_them() {
    // The frozen account refuses every transfer, so a different amount ends
    // in the same state as gold: equivalent. This rubric ignores the amount.
    let text = format!(
        r#"{HEADER}
[[criteria]]
id = "nothing-changed"
description = "No money moved."
kind = "state"
changes = {{ none = true }}
gate = true

[[criteria]]
id = "attempted"
description = "Tried the transfer from A-3."
kind = "action"
tool = "transfer"
args = {{ from_id = "A-3", to_id = "A-1" }}
include_failed = true
points = 1

[[forbidden]]
tool = "transfer"
args = {{ from_id = "A-1", to_id = "A-3", amount = 5 }}
"#
    );
    let (_dir, world) = world_with("frozen", &text);
    let t = lint_task(&world, "frozen", None);
    let eq: Vec<&str> = t
        .mutants
        .iter()
        .filter(|m| m.equivalent)
        .map(|m| m.description.as_str())
        .collect();
    assert_eq!(
        eq,
        vec![
            "step 1 (transfer): amount 5 → 6",
            "step 1 (transfer): amount 5 → 4"
        ]
    );
    assert_eq!(t.mutation.equivalent, 2);
    // The mutation score counts the classes before cheat classes; cheat
    // classes are scored per class.
    let scored = t
        .mutants
        .iter()
        .filter(|m| m.kind.in_mutation_score())
        .count();
    assert_eq!(t.mutation.total, scored - 2);
    assert_eq!(t.mutation.score, Some(1.0));
    assert!(t.ok, "{:?}", t.problems);
    // The bundled rubric matches the amount exactly, so it notices them.
    let t = lint_task(&common::mini(), "frozen", None);
    assert_eq!(t.mutation.equivalent, 0);
    assert!(t
        .mutants
        .iter()
        .filter(|m| m.description.contains("amount"))
        .all(|m| m.caught));
}

fn record(
    store: &Arc<Store>,
    world: &Arc<World>,
    actions: &[Action],
    decision: Option<Decision>,
) -> String {
    let mut rec = Recorder::start(
        Arc::clone(store),
        Arc::clone(world),
        "pay-back",
        Actor::Expert { id: "e1".into() },
        0,
    )
    .expect("start");
    for a in actions {
        rec.step(a.clone(), None).expect("step");
    }
    rec.submit(None).expect("submit");
    let id = rec.record().id.clone();
    if let Some(d) = decision {
        store
            .add_review(&id, "reviewer", d, "reviewed in the lint test")
            .expect("review");
    }
    id
}

#[test]
fn approved_episodes_in_the_store_are_gold_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::open(dir.path().join("s.sqlite")).expect("store"));
    let world = common::mini();
    let good = vec![
        Action::tool("view_accounts", json!({})),
        Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 25}),
        ),
        Action::message("Sent Charles $25."),
    ];
    let bad = vec![
        Action::tool("view_accounts", json!({})),
        Action::message("Sent 25."),
    ];
    let approved = record(&store, &world, &good, Some(Decision::Approve));
    let approved_bad = record(&store, &world, &bad, Some(Decision::Approve));
    let _rejected = record(&store, &world, &bad, Some(Decision::Reject));
    let t = lint_task(&world, "pay-back", Some(&store));
    let sources: Vec<&str> = t.gold.iter().map(|g| g.source.as_str()).collect();
    assert_eq!(
        sources,
        vec![
            "solution".to_string(),
            format!("episode {approved}"),
            format!("episode {approved_bad}")
        ]
    );
    assert!(
        !t.ok,
        "an approved episode that does not reach 1.0 fails lint"
    );
    assert!(
        t.problems
            .iter()
            .any(|p| p.contains(&approved_bad) && p.contains("charles-paid")),
        "{:?}",
        t.problems
    );
}

#[test]
fn rubric_gold_runs_replace_a_partial_reference_solution() {
    let text = format!(
        r#"{HEADER}solution_is_gold = false

[[criteria]]
id = "paid"
description = "Charles was paid 25."
kind = "state"
query = "SELECT count(*) FROM transfers WHERE from_id = 'A-1' AND to_id = 'A-2' AND amount = 25"
expect = {{ equals = 1 }}
points = 1
gate = true

[[criteria]]
id = "said-sorry"
description = "Apologised for the wait."
kind = "message"
regex = "(?i)sorry"
points = 1

[[gold]]
why = "the solution, with an apology"
actions = [
  {{ tool = "transfer", args = {{ from_id = "A-1", to_id = "A-2", amount = 25.0 }} }},
  {{ message = "Sorry for the wait: 25 sent." }},
]
"#
    );
    let (_dir, world) = world_with("pay-back", &text);
    let t = lint_task(&world, "pay-back", None);
    assert_eq!(t.gold.len(), 1);
    assert!(t.gold[0].source.starts_with("rubric gold 1"));
    assert!(t.ok, "{:?}", t.problems);

    let broken = text.split("[[gold]]").next().expect("head").to_string();
    let dir = common::copy_world(&common::mini_dir());
    std::fs::write(dir.path().join("rubrics/pay-back.toml"), broken).expect("write");
    let world = Arc::new(World::load(dir.path()).expect("loads"));
    match RubricSet::load(&world) {
        Err(Error::RubricInvalid { problems, .. }) => {
            assert!(
                problems
                    .iter()
                    .any(|p| p.message.contains("needs at least one [[gold]]")),
                "{problems:?}"
            )
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn a_task_without_a_rubric_fails_lint_and_an_unknown_task_is_an_error() {
    let dir = common::copy_world(&common::mini_dir());
    std::fs::remove_file(dir.path().join("rubrics/frozen.toml")).expect("rm");
    let world = Arc::new(World::load(dir.path()).expect("loads"));
    let t = lint_task(&world, "frozen", None);
    assert!(!t.ok);
    assert_eq!(t.problems, vec!["no rubric: write rubrics/frozen.toml"]);
    let rubrics = RubricSet::load(&world).expect("load");
    let options = LintOptions {
        task: Some("nope".into()),
        ..LintOptions::default()
    };
    assert!(matches!(
        lint::lint(&world, &rubrics, None, &options, &|| {}),
        Err(Error::UnknownTask { .. })
    ));
    assert!(Path::new(&common::mini_dir().join("rubrics/frozen.toml")).exists());
}
