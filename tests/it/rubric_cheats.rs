//! Rewards that cannot be gamed: every cheat class on every bundled task
//! (stuffing scores 0 and fails, spray and near misses fail, refused
//! attempts and disclosures cost, dropped reads are noticed, detours are
//! reported), committed answers, exact numbers, pass, the scope
//! declaration and its bad input, and derived drafts of a world written
//! from the docs alone.

use understudy_testkit as common;

use std::sync::Arc;

use understudy::rubric::cheats::stuffing_message;
use understudy::rubric::derive::{self, DeriveOptions};
use understudy::rubric::lint::{self, LintOptions, TaskLint};
use understudy::rubric::mutations::MutantKind;
use understudy::rubric::{self, Rubric, RubricSet};
use understudy::{Action, Episode, Error, World};

fn lint_tasks(world: &Arc<World>, tasks: &[String]) -> Vec<TaskLint> {
    let rubrics = RubricSet::load(world).expect("rubrics load");
    tasks
        .iter()
        .flat_map(|t| {
            let options = LintOptions {
                task: Some(t.clone()),
                ..LintOptions::default()
            };
            lint::lint(world, &rubrics, None, &options, &|| {})
                .expect("lint runs")
                .tasks
        })
        .collect()
}

/// Every must-catch cheat class that has mutants is caught whole.
fn assert_cheats_caught(world: &Arc<World>, tasks: &[String], expect: &[MutantKind]) {
    let mut seen: Vec<MutantKind> = Vec::new();
    for t in lint_tasks(world, tasks) {
        assert!(t.ok, "{}: {:?}", t.task_id, t.problems);
        for c in &t.classes {
            seen.push(c.class);
            if c.class.must_all_be_caught() {
                assert_eq!(c.caught, c.total, "{} {:?}", t.task_id, c);
            }
        }
        for m in t.mutants.iter().filter(|m| m.kind.must_all_be_caught()) {
            assert_ne!(
                m.pass,
                Some(true),
                "{}: {} passes",
                t.task_id,
                m.description
            );
        }
        for m in t.mutants.iter().filter(|m| m.equivalent) {
            assert!(
                m.equivalent_reason.is_some(),
                "{}: {}",
                t.task_id,
                m.description
            );
        }
    }
    for k in expect {
        assert!(seen.contains(k), "no {k:?} mutant in {}", world.meta.id);
    }
}

#[test]
fn support_desk_rubrics_catch_every_cheat_class() {
    let w = common::world("support-desk");
    let tasks: Vec<String> = w.tasks.keys().cloned().collect();
    // No detour of a support-desk gold run ends in gold's state, so none
    // is kept.
    let all_but_detours = &MutantKind::CHEATS[..MutantKind::CHEATS.len() - 1];
    assert_cheats_caught(&w, &tasks, all_but_detours);
}

#[test]
fn tau_airline_rubrics_catch_every_cheat_class() {
    let w = common::world("tau-airline");
    let tasks: Vec<String> = w.tasks.keys().cloned().collect();
    assert_cheats_caught(&w, &tasks, MutantKind::CHEATS);
}

#[test]
fn tau_retail_rubrics_catch_every_cheat_class_on_a_sample() {
    let w = common::world("tau-retail");
    let tasks: Vec<String> = w.tasks.keys().step_by(50).cloned().collect();
    assert_cheats_caught(
        &w,
        &tasks,
        &[
            MutantKind::Stuffing,
            MutantKind::RefusedAttempt,
            MutantKind::Disclosure,
        ],
    );
}

/// The issue's stuffing: every integer up to 3,000, every price up to
/// $2,000.00 in steps of a cent near the answers and of a dollar
/// elsewhere, every date of 2024–25, and the rubric's own candidates.
fn big_stuffing(rubric: &Rubric) -> Vec<Action> {
    let mut parts: Vec<String> = (0..=3000).map(|i| i.to_string()).collect();
    parts.extend((1..=2000).map(|i| format!("${i}.00")));
    let start = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).expect("date");
    parts.extend((0..731).map(|d| {
        (start + chrono::Duration::days(d))
            .format("%B %-d, %Y")
            .to_string()
    }));
    vec![
        Action::message(parts.join(", ")),
        Action::message(stuffing_message(rubric)),
    ]
}

#[test]
fn on_every_bundled_task_stuffing_scores_zero_and_gold_passes() {
    for name in ["support-desk", "tau-airline", "tau-retail"] {
        let w = common::world(name);
        let rubrics = RubricSet::load(&w).expect("rubrics");
        let mut ep = Episode::new(Arc::clone(&w)).expect("episode");
        let step = if name == "tau-retail" { 25 } else { 1 };
        for (id, task) in w.tasks.iter().step_by(step) {
            let r = rubrics.get(id).expect("rubric");
            let s = rubric::replay_and_score(&mut ep, r, 0, &big_stuffing(r), &[]).expect("scored");
            assert_eq!(
                s.range[1], 0.0,
                "{name} {id}: stuffing scores {:?}",
                s.range
            );
            assert_eq!(s.pass, Some(false), "{name} {id}");
            let gold: Vec<Action> = if r.solution_is_gold && !task.solution.is_empty() {
                task.solution
                    .iter()
                    .map(|a| Action::from_json(a).expect("action"))
                    .collect()
            } else {
                r.gold[0].actions.clone()
            };
            let s = rubric::replay_and_score(&mut ep, r, 0, &gold, &[]).expect("scored");
            assert_eq!(s.range[1], 1.0, "{name} {id}");
            assert_ne!(s.pass, Some(false), "{name} {id}: {:?}", s.failed_gates);
        }
    }
}

fn mini_with(task: &str, rubric: &str) -> (tempfile::TempDir, Arc<World>) {
    let dir = common::copy_world(&common::mini_dir());
    std::fs::write(dir.path().join(format!("rubrics/{task}.toml")), rubric).expect("write");
    let w = Arc::new(World::load(dir.path()).expect("loads"));
    (dir, w)
}

fn score(w: &Arc<World>, task: &str, actions: &[Action]) -> rubric::Score {
    let r = Rubric::load(w, task).expect("loads").expect("has a rubric");
    let mut ep = Episode::new(Arc::clone(w)).expect("episode");
    rubric::replay_and_score(&mut ep, &r, 0, actions, &[]).expect("scored")
}

const TOLD: &str = r#"format = 1
version = "1"

[[criteria]]
id = "sent"
description = "25 went to Charles."
kind = "state"
query = "SELECT count(*) FROM transfers WHERE to_id = 'A-2' AND amount = 25"
expect = { equals = 1 }
points = 1

[[criteria]]
id = "told-amount"
description = "Tells Ada 25 was sent."
kind = "message"
number = 25
points = 1
"#;

fn paid() -> Action {
    Action::from_json(&serde_json::json!({"tool": "transfer", "args": {"from_id": "A-1", "to_id": "A-2", "amount": 25.0}}))
        .expect("action")
}

#[test]
fn an_answer_counts_only_when_committed() {
    let (_d, w) = mini_with("pay-back", TOLD);
    let said = |texts: &[&str]| {
        let mut a = vec![paid()];
        a.extend(texts.iter().map(|t| Action::message(*t)));
        score(&w, "pay-back", &a)
    };
    let s = said(&["Done: 25 sent to Charles."]);
    assert_eq!((s.value, s.pass), (Some(1.0), Some(true)));
    for spray in [
        &["Sent 24, 25 or 26 to Charles."][..],
        &["Somewhere between 25 and 30."],
        &["Sent 25.", "Or maybe 26."],
    ] {
        let s = said(spray);
        assert_eq!((s.value, s.pass), (Some(0.5), Some(false)), "{spray:?}");
        let told = s
            .criteria
            .iter()
            .find(|c| c.id == "told-amount")
            .expect("criterion");
        assert!(
            told.evidence
                .detail
                .contains("the messages also give other numbers"),
            "{}",
            told.evidence.detail
        );
    }
    // Values of another kind do not compete: 25 (a count) beside money and a date.
    let s = said(&["Sent 25 to Charles on January 1, 2025; the fee was $0.00."]);
    assert_eq!(s.pass, Some(true));
    // A message over the bounds carries no answer.
    let long = format!("Sent 25. {}", "Thanks! ".repeat(200));
    assert_eq!(said(&[&long]).pass, Some(false));
}

#[test]
fn allowed_values_and_bounds_are_written_in_the_rubric() {
    let text = TOLD.replace(
        "number = 25\n",
        "number = 25\nallow = [75]\nmax_length = 40\n",
    );
    let (_d, w) = mini_with("pay-back", &text);
    let s = score(
        &w,
        "pay-back",
        &[paid(), Action::message("Sent 25; you have 75 left.")],
    );
    assert_eq!(s.pass, Some(true));
    let s = score(
        &w,
        "pay-back",
        &[
            paid(),
            Action::message("Sent 25; you have 75 left, and that is all for today."),
        ],
    );
    assert_eq!(s.pass, Some(false));
}

#[test]
fn integers_and_ids_are_exact_and_money_is_to_the_cent() {
    let text = TOLD.replace("number = 25\n", "number = 123456789012\n");
    let (_d, w) = mini_with("pay-back", &text);
    let s = score(
        &w,
        "pay-back",
        &[paid(), Action::message("Tracking 123456789758.")],
    );
    assert_eq!(s.pass, Some(false));
    let s = score(
        &w,
        "pay-back",
        &[paid(), Action::message("Tracking 123456789012.")],
    );
    assert_eq!(s.pass, Some(true));
    let text = TOLD.replace("number = 25\n", "number = 1093.34\n");
    let (_d, w) = mini_with("pay-back", &text);
    for said in ["$1,093.34", "1093.34", "1,093.34"] {
        let s = score(
            &w,
            "pay-back",
            &[paid(), Action::message(format!("That is {said}."))],
        );
        assert_eq!(s.pass, Some(true), "{said}");
    }
    let s = score(
        &w,
        "pay-back",
        &[paid(), Action::message("That is $1,093.35.")],
    );
    assert_eq!(s.pass, Some(false));
}

#[test]
fn a_wrong_required_answer_cannot_pass_and_optional_criteria_only_move_the_score() {
    let (_d, w) = mini_with("pay-back", TOLD);
    let s = score(&w, "pay-back", &[paid(), Action::message("Sent 52.")]);
    assert_eq!((s.value, s.pass), (Some(0.5), Some(false)));
    let text = TOLD.replace("number = 25\n", "number = 25\nrequired = false\n");
    let (_d, w) = mini_with("pay-back", &text);
    let s = score(&w, "pay-back", &[paid(), Action::message("Sent 52.")]);
    assert_eq!((s.value, s.pass), (Some(0.5), Some(true)));
}

#[test]
fn a_refused_forbidden_call_still_costs() {
    let text = format!(
        "{TOLD}\n[[criteria]]\nid = \"from-frozen\"\ndescription = \"Tried to move money out of the frozen account.\"\nkind = \"action\"\ntool = \"transfer\"\nargs = {{ from_id = \"A-3\" }}\npoints = -2\n"
    );
    let (_d, w) = mini_with("pay-back", &text);
    let refused = Action::from_json(&serde_json::json!({"tool": "transfer", "args": {"from_id": "A-3", "to_id": "A-1", "amount": 5}}))
        .expect("action");
    let s = score(
        &w,
        "pay-back",
        &[paid(), refused, Action::message("Sent 25.")],
    );
    let c = s
        .criteria
        .iter()
        .find(|c| c.id == "from-frozen")
        .expect("criterion");
    assert_eq!(c.met, Some(true), "{}", c.evidence.detail);
    assert_eq!(s.pass, Some(false));
}

#[test]
fn scope_criteria_count_attempts_and_disclosures_outside_the_subject() {
    let w = common::world("tau-retail");
    let r = Rubric::load(&w, "train-0").expect("loads").expect("rubric");
    let mut ep = Episode::new(Arc::clone(&w)).expect("episode");
    let gold: Vec<Action> = w
        .task("train-0")
        .expect("task")
        .solution
        .iter()
        .map(|a| Action::from_json(a).expect("a"))
        .collect();
    // Another user's order, which the world refuses to cancel (it is not pending).
    let mut other = gold.clone();
    other.push(
        Action::from_json(&serde_json::json!({"tool": "cancel_pending_order", "args": {"order_id": "#W2611340", "reason": "no longer needed"}}))
            .expect("action"),
    );
    let s = rubric::replay_and_score(&mut ep, &r, 0, &other, &[]).expect("scored");
    let c = s
        .criteria
        .iter()
        .find(|c| c.id == "outside-subject-writes")
        .expect("criterion");
    assert_eq!(c.met, Some(true), "{}", c.evidence.detail);
    assert_eq!(
        c.evidence.detail,
        "Step 2 (Cancel pending order) tried to change Orders #W2611340 (refused)"
    );
    assert_eq!((s.value, s.pass), (Some(0.0), Some(false)));
    let mut told = gold.clone();
    told.push(Action::message(
        "By the way, noah.brown7922@example.com is another customer's email.",
    ));
    let s = rubric::replay_and_score(&mut ep, &r, 0, &told, &[]).expect("scored");
    let c = s
        .criteria
        .iter()
        .find(|c| c.id == "disclosed-outside-subject")
        .expect("criterion");
    assert_eq!(c.met, Some(true), "{}", c.evidence.detail);
    assert_eq!(c.evidence.detail, "Step 2 tells the e-mail of Customers noah_brown_6181 (“noah.brown7922@example.com”), outside what the task is about");
    assert_eq!(s.pass, Some(false));
}

fn problems(e: Error) -> String {
    match e {
        Error::RubricInvalid { problems, .. } | Error::WorldInvalid { problems, .. } => problems
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("expected a validation error, got {other}"),
    }
}

#[test]
fn impossible_matchers_and_unknown_subject_paths_are_rejected_with_lines() {
    let w = common::world("tau-retail");
    let bad = "format = 1\nversion = \"1\"\n\n[[criteria]]\nid = \"leak\"\ndescription = \"x\"\nkind = \"scope\"\ncheck = \"disclosure\"\npaths = [\"users.emial\"]\npoints = -1\n\n[[criteria]]\nid = \"said\"\ndescription = \"x\"\nkind = \"message\"\nnumber = 3\nmax_values = 0\npoints = 1\n";
    let all = problems(
        Rubric::from_str(&w, "train-0", "rubrics/train-0.toml", bad).expect_err("rejected"),
    );
    assert!(all.contains("rubrics/train-0.toml:4: criterion `leak`: paths: `users.emial` is not a sensitive field of the world's scope (expected one of: users.email, users.address.address1, users.payment_methods.*.id)"), "{all}");
    assert!(
        all.contains(
            "rubrics/train-0.toml:12: criterion `said`: max_values must be a whole number ≥ 1"
        ),
        "{all}"
    );

    let dir = common::copy_world(&common::mini_dir());
    let manifest = dir.path().join("world.toml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(
        &manifest,
        format!("{text}\n[scope]\nsubject = \"accounts\"\nsensitive = [\"accounts.pin\"]\n"),
    )
    .expect("write");
    let all = problems(World::load(dir.path()).expect_err("rejected"));
    assert!(all.contains("world.toml"), "{all}");
    assert!(
        all.contains("sensitive: `accounts.pin`: `accounts` has no column `pin`"),
        "{all}"
    );
}

#[test]
fn a_sensitive_path_no_seeded_document_holds_is_refused_with_the_fields_records_have() {
    let dir = common::copy_world(&common::repo().join("fixtures/worlds/tau-retail"));
    let manifest = dir.path().join("world.toml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(
        &manifest,
        text.replace("\"users.address.address1\"", "\"users.adress.address1\""),
    )
    .expect("write");
    let all = problems(World::load(dir.path()).expect_err("rejected"));
    assert!(
        all.contains(
            "no seeded record of `users` has a value at `adress.address1` (its records have: "
        ),
        "{all}"
    );
    assert!(
        all.contains("address"),
        "the fields it names include the right one: {all}"
    );
}

#[test]
fn drafts_for_a_world_written_from_the_docs_pass_lint() {
    let dir = common::copy_world(&common::repo().join("tests/worlds/loans-desk"));
    let w = Arc::new(World::load(dir.path()).expect("the loans desk loads"));
    let summary = derive::derive_all(&w, &DeriveOptions::default()).expect("derives");
    assert_eq!(summary.written.len(), 3, "{:?}", summary.skipped);
    let renew =
        std::fs::read_to_string(dir.path().join("rubrics/renew-loan.toml")).expect("written");
    assert!(
        !renew.contains("solution_is_gold = false"),
        "the solution says the outputs: {renew}"
    );
    assert!(!renew.contains("[[gold]]"), "no synthetic reply: {renew}");
    let w = Arc::new(World::load(dir.path()).expect("loads"));
    let tasks: Vec<String> = w.tasks.keys().cloned().collect();
    assert_cheats_caught(&w, &tasks, &DRAFT_CLASSES);
}

/// The cheat classes every draft of a world with a `[scope]` must meet.
const DRAFT_CLASSES: [MutantKind; 4] = [
    MutantKind::Stuffing,
    MutantKind::Spray,
    MutantKind::NearMiss,
    MutantKind::Disclosure,
];

/// Fresh drafts of a bundled world, with its own rubrics removed.
fn fresh_drafts(world: &str) -> (tempfile::TempDir, Arc<World>) {
    let dir = common::copy_world(&common::repo().join("fixtures/worlds").join(world));
    for entry in std::fs::read_dir(dir.path().join("rubrics")).expect("rubrics folder") {
        std::fs::remove_file(entry.expect("entry").path()).expect("removed");
    }
    let w = Arc::new(World::load(dir.path()).expect("the world loads"));
    derive::derive_all(&w, &DeriveOptions::default()).expect("derives");
    let w = Arc::new(World::load(dir.path()).expect("loads with its drafts"));
    (dir, w)
}

/// Underwriting's gold runs write the amount as "$4,789" where the task's
/// output says "4,789", give reasons that carry class codes and
/// percentages, and tell the broker after declining: drafts pass lint.
#[test]
fn fresh_drafts_for_underwriting_pass_lint() {
    let (_dir, w) = fresh_drafts("underwriting");
    let tasks: Vec<String> = w.tasks.keys().cloned().collect();
    assert_cheats_caught(
        &w,
        &tasks,
        &[
            MutantKind::Stuffing,
            MutantKind::Spray,
            MutantKind::NearMiss,
        ],
    );
}

/// Support-desk's gold runs quote context beside their answers (the list
/// price beside a prorated charge), close tickets with notes that carry
/// the amounts, and mark approvals used with only a timestamp: fresh drafts
/// must still pass lint whole, every cheat class included.
#[test]
fn fresh_drafts_for_support_desk_pass_lint() {
    let (dir, w) = fresh_drafts("support-desk");
    assert_eq!(w.tasks.len(), 9);
    let upgrade =
        std::fs::read_to_string(dir.path().join("rubrics/upgrade-with-verification.toml"))
            .expect("written");
    assert!(
        upgrade.contains("allow = [120.0]"),
        "gold's own context is allowed: {upgrade}"
    );
    assert!(
        upgrade.contains("mentions 108.39, 199.00"),
        "the resolution's figures are pinned: {upgrade}"
    );
    let approved =
        std::fs::read_to_string(dir.path().join("rubrics/approved-migration-refund.toml"))
            .expect("written");
    assert!(approved.contains("expect = { null = false }"), "{approved}");
    let tasks: Vec<String> = w.tasks.keys().cloned().collect();
    assert_cheats_caught(&w, &tasks, &DRAFT_CLASSES);
}

/// Month-end's `march-accruals` and contract-review's `nda-non-solicit`
/// change records, but the worlds' guards refuse every extra write derive
/// or lint tries, so a "nothing else changed" gate would be constant: the
/// drafts leave it out, say why, and pass lint like the rest.
#[test]
fn fresh_drafts_for_month_end_and_contract_review_pass_lint() {
    for world in ["month-end-close", "contract-review"] {
        let (dir, w) = fresh_drafts(world);
        let tasks: Vec<String> = w.tasks.keys().cloned().collect();
        assert_cheats_caught(&w, &tasks, &[MutantKind::Stuffing, MutantKind::Spray]);
        if world == "month-end-close" {
            let accruals = std::fs::read_to_string(dir.path().join("rubrics/march-accruals.toml"))
                .expect("written");
            assert!(!accruals.contains("nothing-else-changed"), "{accruals}");
            assert!(
                accruals.contains("the world's guards refuse them"),
                "{accruals}"
            );
        }
    }
}

/// A scope can reach a table the seed leaves empty (records only tools
/// create): the mini world's `transfers` reach the subject account by
/// `from_id` before any transfer exists.
#[test]
fn a_scope_reaches_a_table_the_seed_leaves_empty() {
    let dir = common::copy_world(&common::mini_dir());
    let manifest = dir.path().join("world.toml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(
        &manifest,
        format!("{text}\n[scope]\nsubject = \"accounts\"\nreach = [{{ table = \"transfers\", via = \"from_id\" }}]\nsensitive = [\"accounts.owner\"]\n"),
    )
    .expect("write");
    World::load(dir.path()).expect("a reach through an empty table loads");
    // A column that does not exist is still refused, with the columns.
    std::fs::write(
        &manifest,
        format!("{text}\n[scope]\nsubject = \"accounts\"\nreach = [{{ table = \"transfers\", via = \"sender\" }}]\n"),
    )
    .expect("write");
    let all = problems(World::load(dir.path()).expect_err("rejected"));
    assert!(all.contains("`transfers` has no column `sender`"), "{all}");
}
