//! Judged criteria: an external judge command, its failures, and grades
//! people store.

use understudy_testkit as common;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use understudy::recorder::Recorder;
use understudy::rubric::batch::{self, RunToScore};
use understudy::rubric::{JudgeCommand, Rubric, RubricSet, Score};
use understudy::store::{Actor, JudgmentRecord, Store};
use understudy::trajectory::ActionList;
use understudy::{Action, World};

fn gold(world: &World) -> Vec<Action> {
    world
        .task("pay-back")
        .expect("task")
        .solution
        .iter()
        .map(|a| Action::from_json(a).expect("action"))
        .collect()
}

fn trajectory(world: &World) -> RunToScore {
    RunToScore {
        run: ActionList {
            line: Some(1),
            ..ActionList::new("pay-back", gold(world))
        },
        judgments: Vec::new(),
        expert: false,
    }
}

fn judged(command: &str, timeout_ms: u64) -> Score {
    let world = common::mini();
    let rubrics = RubricSet::load(&world).expect("rubrics");
    judged_with(&world, &rubrics, command, Duration::from_millis(timeout_ms))
}

/// The gold run of pay-back scored with `rubrics`, `command` judging.
fn judged_with(world: &Arc<World>, rubrics: &RubricSet, command: &str, timeout: Duration) -> Score {
    let judge = JudgeCommand::parse(command, timeout).expect("command");
    let mut scores = batch::score_all(world, rubrics, &[trajectory(world)], Some(&judge), &|| {})
        .expect("scored");
    scores.remove(0)
}

fn friendly(score: &Score) -> &understudy::rubric::CriterionResult {
    score
        .criteria
        .iter()
        .find(|c| c.id == "friendly")
        .expect("criterion")
}

#[test]
fn a_judge_command_grades_pending_criteria() {
    let s = judged(
        r#"sh -c 'cat > /dev/null; echo "{\"met\": true, \"reason\": \"warm and clear\"}"'"#,
        10_000,
    );
    assert_eq!(s.value, Some(1.0));
    assert!(s.pending.is_empty());
    let f = friendly(&s);
    assert_eq!(f.met, Some(true));
    let j = f
        .evidence
        .judgment
        .as_ref()
        .expect("the judgment is evidence");
    assert_eq!(j.reason, "warm and clear");
    assert_eq!(j.judge, "command:sh");
    assert!(f.evidence.detail.contains("warm and clear"));

    let s = judged(
        r#"sh -c 'cat > /dev/null; echo "{\"met\": false, \"reason\": \"curt\"}"'"#,
        10_000,
    );
    assert!((s.value.expect("graded") - 10.0 / 11.0).abs() < 1e-9);
}

#[test]
fn the_judge_reads_the_criterion_the_transcript_and_the_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seen = dir.path().join("request.json");
    let cmd = format!(
        r#"sh -c 'cat > "{}"; echo "{{\"met\": true, \"reason\": \"ok\"}}"'"#,
        seen.display()
    );
    judged(&cmd, 10_000);
    let request: Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).expect("request written"))
            .expect("JSON");
    assert_eq!(request["criterion"]["id"], "friendly");
    assert!(request["criterion"]["guidance"]
        .as_str()
        .is_some_and(|g| g.contains("polite")));
    assert_eq!(request["task"]["id"], "pay-back");
    assert_eq!(request["messages"][0], "Done: 25 sent to Charles.");
    assert_eq!(request["transcript"].as_array().map(Vec::len), Some(3));
    assert_eq!(request["transcript"][1]["observation"]["ok"], true);
    assert!(request["changes"]["transfers"]["added"].is_object());
    assert!(request["policy"]
        .as_str()
        .is_some_and(|p| p.contains("frozen")));
}

#[test]
fn a_judge_that_hangs_is_stopped_and_the_criterion_stays_pending() {
    let started = std::time::Instant::now();
    let s = judged("sh -c 'sleep 5'", 300);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the timeout is enforced"
    );
    assert_eq!(s.value, None, "never guessed");
    assert_eq!(s.pending, vec!["friendly"]);
    let err = friendly(&s).error.as_deref().expect("an error");
    assert!(err.contains("judge for criterion `friendly`"), "{err}");
    assert!(err.contains("did not answer within 0.3 s"), "{err}");
    assert_eq!(
        batch::summarize(std::slice::from_ref(&s), 0).judge_errors,
        1
    );
}

#[test]
fn a_judge_that_prints_garbage_or_fails_is_named_in_the_error() {
    let cases = [
        (
            "sh -c 'cat > /dev/null; echo I think so'",
            "expected one JSON object",
        ),
        (
            r#"sh -c 'cat > /dev/null; echo "{\"met\": \"yes\", \"reason\": \"x\"}"'"#,
            "`met` is missing or not true/false",
        ),
        (
            r#"sh -c 'cat > /dev/null; echo "{\"met\": true}"'"#,
            "`reason` is missing or empty",
        ),
        (
            "sh -c 'cat > /dev/null; echo broken >&2; exit 3'",
            "exited with exit status: 3: broken",
        ),
        ("/no/such/judge", "cannot start `/no/such/judge`"),
    ];
    for (cmd, needle) in cases {
        let s = judged(cmd, 10_000);
        assert_eq!(s.value, None, "{cmd}");
        let err = friendly(&s).error.as_deref().unwrap_or_default();
        assert!(
            err.contains("criterion `friendly`") && err.contains(needle),
            "{cmd}: {err}"
        );
    }
    assert!(JudgeCommand::parse("   ", Duration::from_secs(1)).is_err());
    assert!(JudgeCommand::parse("judge 'unclosed", Duration::from_secs(1)).is_err());
    assert!(JudgeCommand::parse("judge", Duration::ZERO).is_err());
}

#[test]
fn grades_people_store_are_used_until_the_criterion_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::open(dir.path().join("s.sqlite")).expect("store"));
    let world = common::mini();
    let rubric = Rubric::load(&world, "pay-back")
        .expect("load")
        .expect("exists");
    let mut rec = Recorder::start(
        Arc::clone(&store),
        Arc::clone(&world),
        "pay-back",
        Actor::Agent { model: "m1".into() },
        0,
    )
    .expect("start");
    for a in gold(&world) {
        rec.step(a, None).expect("step");
    }
    rec.submit(None).expect("submit");
    let id = rec.record().id.clone();
    let hash = rubric
        .criterion("friendly")
        .expect("criterion")
        .hash
        .clone();

    let grade = |met: bool, hash: Option<String>| JudgmentRecord {
        criterion_id: "friendly".into(),
        criterion_hash: hash,
        met,
        reason: "read the reply".into(),
        judge: "expert-7".into(),
        at: String::new(),
        level: None,
    };
    store
        .save_judgment(&id, &grade(false, Some(hash.clone())))
        .expect("save");
    store
        .save_judgment(&id, &grade(true, Some(hash.clone())))
        .expect("save");
    let rubrics = RubricSet::load(&world).expect("rubrics");
    let trajectories = batch::from_store(&store, &world, "m1").expect("episodes");
    assert_eq!(trajectories.len(), 1);
    assert_eq!(trajectories[0].judgments.len(), 2);
    let s = batch::score_all(&world, &rubrics, &trajectories, None, &|| {}).expect("scored");
    assert_eq!(s[0].value, Some(1.0), "the latest grade counts");
    assert_eq!(s[0].episode_id.as_deref(), Some(id.as_str()));

    // A grade of an older wording of the criterion no longer counts.
    store
        .save_judgment(&id, &grade(true, Some("0".repeat(64))))
        .expect("save");
    let trajectories = batch::from_store(&store, &world, "m1").expect("episodes");
    let s = batch::score_all(&world, &rubrics, &trajectories, None, &|| {}).expect("scored");
    assert_eq!(s[0].value, None);
    assert!(friendly(&s[0]).evidence.detail.contains("earlier version"));

    let bad = JudgmentRecord {
        reason: "  ".into(),
        ..grade(true, None)
    };
    assert!(
        store.save_judgment(&id, &bad).is_err(),
        "a grade needs a reason"
    );
    assert!(store
        .save_judgment("no-such-episode", &grade(true, None))
        .is_err());
}

/// The gold run scored with `friendly` on a scale (the rubric saved in an
/// overlay folder, as the app saves edited rubrics), the judge answering
/// `answer` and leaving its request in `seen`.
fn judged_on_a_scale(answer: &str, seen: &std::path::Path) -> Score {
    let world = common::mini();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("pay-back.toml"),
        common::pay_back_on_a_scale(),
    )
    .expect("overlay written");
    let rubrics = RubricSet::load_with_overlay(&world, Some(dir.path())).expect("loads");
    let cmd = format!(
        r#"sh -c 'cat > "{}"; echo "{}"'"#,
        seen.display(),
        answer.replace('"', "\\\"")
    );
    judged_with(&world, &rubrics, &cmd, Duration::from_secs(10))
}

/// Why the judge's answer was refused; `friendly` then stays pending.
fn refused(s: &Score) -> String {
    let f = friendly(s);
    assert_eq!(f.met, None, "a refused answer leaves the criterion pending");
    f.error.clone().expect("the judge's answer was refused")
}

#[test]
fn on_a_scale_the_judge_reads_the_levels_and_answers_with_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seen = dir.path().join("request.json");
    let s = judged_on_a_scale(r#"{"level": "Curt", "reason": "short but fine"}"#, &seen);
    let request: Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).expect("request written"))
            .expect("JSON");
    assert_eq!(
        request["criterion"]["scale"][1],
        serde_json::json!({"label": "Curt", "points": 0.5}),
        "the request lists the levels"
    );
    let f = friendly(&s);
    let j = f.evidence.judgment.as_ref().expect("the judgment");
    assert_eq!(j.level.as_deref(), Some("Curt"));
    assert_eq!(f.met, Some(true), "a level with points counts as met");
    assert_eq!(f.earned, 0.5, "and earns the level's points");
    assert!(
        f.evidence.detail.contains("graded “Curt” by command:sh"),
        "{}",
        f.evidence.detail
    );

    let rude = judged_on_a_scale(r#"{"level": "Rude", "reason": "rude"}"#, &seen);
    assert_eq!(friendly(&rude).met, Some(false));

    let contradicts = refused(&judged_on_a_scale(
        r#"{"level": "Rude", "met": true, "reason": "x"}"#,
        &seen,
    ));
    assert!(
        contradicts.contains("criterion `friendly`") && contradicts.contains("counts as not met"),
        "{contradicts}"
    );
    let no_level = refused(&judged_on_a_scale(r#"{"met": true, "reason": "x"}"#, &seen));
    assert!(
        no_level.contains(r#"one of "Warm", "Curt", "Rude""#),
        "{no_level}"
    );
}
