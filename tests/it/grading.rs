//! Grading agent runs: imported whole or not at all, graded by several
//! experts (judged criteria and overrides of automatic ones, the original
//! score kept), and the graders' agreement.

use std::sync::Arc;

use serde_json::Value;
use understudy::export::{self, ExportOptions, Source};
use understudy::grading::{self, GradeInput, Method, RunGrader};
use understudy::rubric::{self, Judgment, Rubric};
use understudy::store::{Actor, Decision, JudgmentRecord, ScoreRecord, Store};
use understudy::{Error, World};
use understudy_testkit as common;

/// Two submitted agent runs of the mini world's pay-back task (the task's
/// solution), exported as native JSONL.
fn agent_runs_jsonl() -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = Arc::new(Store::open(dir.path().join("agents.db")).expect("store"));
    let world = common::mini();
    let solution: Vec<Value> = world.task("pay-back").expect("task").solution.clone();
    for _ in 0..2 {
        let mut rec = common::record_mini(&source, "pay-back", &solution);
        rec.submit(None).expect("submit");
    }
    let mut out = Vec::new();
    export::write_jsonl(
        &Source::Store(&source),
        None,
        &ExportOptions::default(),
        &mut out,
        &|| {},
    )
    .expect("export");
    String::from_utf8(out).expect("utf-8")
}

/// An expert whose id is their name in lower case.
fn expert(store: &Store, name: &str) -> String {
    let id = name.to_lowercase();
    store.ensure_expert(&id, Some(name)).expect("expert").id
}

fn grade(criterion: &str, met: bool, reason: &str) -> GradeInput {
    GradeInput {
        criterion_id: criterion.into(),
        met,
        reason: reason.into(),
        level: None,
    }
}

/// The two agent runs imported into a fresh store, beside the mini world
/// and the pay-back rubric they are graded with.
struct Imported {
    _dir: tempfile::TempDir,
    store: Store,
    world: Arc<World>,
    rubric: Arc<Rubric>,
}

impl Imported {
    fn new() -> Imported {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path().join("s.db")).expect("store");
        grading::import_agent_runs(
            &store,
            &agent_runs_jsonl(),
            "runs.jsonl",
            &common::mini_dir(),
        )
        .expect("import");
        let world = common::mini();
        let rubric = grading::rubric_of(&world, None, "pay-back")
            .expect("loads")
            .expect("a rubric");
        Imported {
            _dir: dir,
            store,
            world,
            rubric,
        }
    }

    /// `grader` at work on run `episode_id`.
    fn grader<'a>(&'a self, episode_id: &'a str, grader: &'a str) -> RunGrader<'a> {
        RunGrader {
            store: &self.store,
            world: &self.world,
            rubric: &self.rubric,
            episode_id,
            grader,
        }
    }
}

#[test]
fn an_import_with_a_bad_line_stores_nothing_and_names_every_bad_line() {
    let good = agent_runs_jsonl();
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path().join("s.db")).expect("store");
    let mut expert_run: Value =
        serde_json::from_str(good.lines().next().expect("a line")).expect("json");
    expert_run["episode"]["id"] = "0190aaaa-0000-7000-8000-000000000000".into();
    expert_run["episode"]["actor"] = serde_json::json!({"kind": "expert", "id": "x-1"});
    let text = format!("{good}{{not json\n{expert_run}\n");
    let err = grading::import_agent_runs(&store, &text, "runs.jsonl", &common::mini_dir())
        .expect_err("refused");
    let Error::InvalidInput { path, problems } = err else {
        panic!("expected invalid input, got {err:?}");
    };
    assert_eq!(path, "runs.jsonl");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].starts_with("line 3: not valid JSON"),
        "{problems:?}"
    );
    assert!(problems[1].starts_with("line 4: "), "{problems:?}");
    assert!(problems[1].contains("not by an agent"), "{problems:?}");
    assert!(
        store
            .episodes(&Default::default())
            .expect("list")
            .is_empty(),
        "nothing partial is stored"
    );

    let err = grading::import_agent_runs(&store, "\n", "empty.jsonl", &common::mini_dir())
        .expect_err("an empty file is refused");
    assert!(err.to_string().contains("holds no runs"), "{err}");

    let summary = grading::import_agent_runs(&store, &good, "runs.jsonl", &common::mini_dir())
        .expect("the good lines import");
    assert_eq!(summary.episodes, 2);
    // The same file again is refused whole: its runs are in the store.
    let err = grading::import_agent_runs(&store, &good, "runs.jsonl", &common::mini_dir())
        .expect_err("duplicates");
    assert!(err.to_string().contains("is already in the store"), "{err}");
    assert_eq!(store.episodes(&Default::default()).expect("list").len(), 2);
}

#[test]
fn two_graders_grade_override_and_their_agreement_is_kappa() {
    let at = Imported::new();
    let (store, world, rubric) = (&at.store, &at.world, &at.rubric);
    let runs = run_ids(store);
    let (ana, ben) = (expert(store, "Ana"), expert(store, "Ben"));
    let grade_as = |run: &str, who: &str, g: GradeInput| at.grader(run, who).grade(&g);

    // Ana's sheet: the automatic score is computed and stored once.
    let sheet = at.grader(&runs[0], &ana).sheet().expect("sheet");
    assert!(!sheet.assigned && !sheet.done);
    assert_eq!(sheet.automatic.pending, ["friendly"]);
    let looked = sheet
        .criteria
        .iter()
        .find(|c| c.id == "looked-first")
        .expect("criterion");
    assert_eq!((looked.judged, looked.automatic), (false, Some(true)));
    assert!(
        !looked.evidence.detail.is_empty(),
        "automatic criteria show their evidence"
    );
    let friendly = sheet
        .criteria
        .iter()
        .find(|c| c.id == "friendly")
        .expect("criterion");
    assert!(friendly.judged && friendly.automatic.is_none());
    assert!(friendly.guidance.starts_with("Met when"));
    at.grader(&runs[0], &ana).sheet().expect("again");
    assert_eq!(store.scores(&runs[0]).expect("scores").len(), 1);

    // A judged criterion needs a reason; then it counts in Ana's score.
    let err = grade_as(&runs[0], &ana, grade("friendly", true, " ")).expect_err("no reason");
    assert!(err.to_string().contains("needs a reason"), "{err}");
    let err = grade_as(&runs[0], &ana, grade("nope", true, "x")).expect_err("unknown criterion");
    assert!(matches!(err, Error::NotFound(_)));
    let sheet =
        grade_as(&runs[0], &ana, grade("friendly", true, "Warm and clear.")).expect("graded");
    assert!(sheet.assigned, "grading assigns the grader");
    assert_eq!(sheet.graded.value, Some(1.0));

    // Ana overrides an automatic check: her score moves, the original stays.
    let sheet = grade_as(
        &runs[0],
        &ana,
        grade(
            "looked-first",
            false,
            "The look-up was of the wrong account.",
        ),
    )
    .expect("overridden");
    let looked = sheet
        .criteria
        .iter()
        .find(|c| c.id == "looked-first")
        .expect("criterion");
    let g = looked.grade.as_ref().expect("her override");
    assert_eq!((g.met, g.original), (false, Some(true)));
    assert_eq!(
        looked.automatic,
        Some(true),
        "what the check found is still shown"
    );
    assert!(sheet.graded.value.expect("value") < 1.0);
    assert_eq!(
        sheet.automatic.value, None,
        "the automatic score still waits for a grade"
    );
    let overrides = store.overrides(&runs[0]).expect("overrides");
    assert_eq!(overrides.len(), 1);
    assert_eq!(overrides[0].grader, ana);
    assert!(!overrides[0].at.is_empty());
    let stored = store.scores(&runs[0]).expect("scores");
    assert_eq!(stored.len(), 1, "the original score is kept, not replaced");
    assert_eq!(stored[0].record.pending, 1);

    // Ben cannot finish before grading the judged criterion.
    store.assign_grader(&runs[0], &ben).expect("assign");
    let err = at.grader(&runs[0], &ben).finish().expect_err("not yet");
    assert!(
        err.to_string()
            .contains("\"The reply to Ada is friendly.\""),
        "{err}"
    );

    // One grader only: no agreement yet.
    let report = grading::agreement_report(store, world, rubric, &runs).expect("report");
    assert_eq!(report.graders, std::slice::from_ref(&ana));
    assert_eq!(report.rubric.method, Method::None);

    // Both grade both runs: on `friendly` they agree on one run and not
    // on the other; everything else they let stand, except Ana's override.
    for (run, ana_says, ben_says) in [(&runs[0], true, true), (&runs[1], true, false)] {
        for (who, met) in [(&ana, ana_says), (&ben, ben_says)] {
            grade_as(run, who, grade("friendly", met, "Read the reply.")).expect("graded");
            at.grader(run, who).finish().expect("done");
        }
    }
    let report = grading::agreement_report(store, world, rubric, &runs).expect("report");
    let mut graders = vec![ana.clone(), ben.clone()];
    graders.sort();
    assert_eq!(report.graders, graders);
    assert_eq!(report.runs, 2);
    assert_eq!(report.rubric.method, Method::CohenKappa);
    let friendly = report
        .criteria
        .iter()
        .find(|c| c.id == "friendly")
        .expect("criterion");
    assert_eq!(friendly.agreement.items, 2);
    assert_eq!(friendly.agreement.percent, Some(0.5));
    // Ana said met twice, Ben once: p_o = 1/2, p_e = 1·1/2 = 1/2, κ = 0.
    assert_eq!(friendly.agreement.value, Some(0.0));
    let looked = report
        .criteria
        .iter()
        .find(|c| c.id == "looked-first")
        .expect("criterion");
    assert_eq!(
        looked.agreement.percent,
        Some(0.5),
        "Ana's override disagrees with Ben on run 1"
    );
    let rubric_value = report.rubric.value.expect("pooled κ");
    assert!(rubric_value > 0.0 && rubric_value < 1.0, "{rubric_value}");
}

/// The pay-back rubric with `friendly` graded on a three-level scale.
fn scaled_rubric(world: &Arc<World>) -> Arc<Rubric> {
    let text = common::pay_back_on_a_scale();
    Arc::new(Rubric::from_str(world, "pay-back", "pay-back.toml", &text).expect("compiles"))
}

#[test]
fn graders_on_a_scale_agree_on_levels_not_just_on_met() {
    let mut at = Imported::new();
    at.rubric = scaled_rubric(&at.world);
    let store = &at.store;
    let runs = run_ids(store);
    let (ana, ben) = (expert(store, "Ana"), expert(store, "Ben"));
    let leveled = |level: &str| GradeInput {
        level: Some(level.into()),
        ..grade("friendly", true, "Read the reply.")
    };
    // Both call both replies met (a level with points), but on run 1 Ana
    // says "Warm" and Ben "Curt".
    for (run, ana_says, ben_says) in [(&runs[0], "Warm", "Warm"), (&runs[1], "Warm", "Curt")] {
        for (who, level) in [(&ana, ana_says), (&ben, ben_says)] {
            at.grader(run, who).grade(&leveled(level)).expect("graded");
            at.grader(run, who).finish().expect("done");
        }
    }
    let report = grading::agreement_report(store, &at.world, &at.rubric, &runs).expect("report");
    let friendly = report
        .criteria
        .iter()
        .find(|c| c.id == "friendly")
        .expect("criterion");
    assert_eq!(friendly.agreement.method, Method::KrippendorffAlphaOrdinal);
    assert_eq!(friendly.agreement.items, 2);
    assert_eq!(
        friendly.agreement.percent,
        Some(0.5),
        "the levels differ on one run of two, though both said met"
    );
    let alpha = friendly.agreement.value.expect("ordinal α");
    assert!(alpha < 1.0, "{alpha}");
    // The whole rubric's figure pools met / not met, the question every
    // criterion shares: two graders, Cohen's κ.
    assert_eq!(report.rubric.method, Method::CohenKappa);
}

#[test]
fn a_rubric_saved_from_the_app_is_the_one_graded_with() {
    let world = common::mini();
    let overlay = tempfile::tempdir().expect("tempdir");
    let own = Rubric::load(&world, "pay-back")
        .expect("loads")
        .expect("exists");
    let text = std::fs::read_to_string(&own.path)
        .expect("read")
        .replace("version = \"1\"", "version = \"2\"");
    std::fs::write(overlay.path().join("pay-back.toml"), text).expect("write");
    let r = grading::rubric_of(&world, Some(overlay.path()), "pay-back")
        .expect("loads")
        .expect("exists");
    assert_eq!(r.version, "2");
    let r = grading::rubric_of(&world, Some(overlay.path()), "no-such-task").expect("loads");
    assert!(r.is_none());
    std::fs::write(overlay.path().join("pay-back.toml"), "format = 1\n").expect("write");
    assert!(matches!(
        grading::rubric_of(&world, Some(overlay.path()), "pay-back"),
        Err(Error::RubricInvalid { .. })
    ));
}

#[test]
fn the_dashboard_scores_runs_afresh_with_the_stored_grades() {
    let at = Imported::new();
    let (store, world, rubric) = (&at.store, &at.world, &at.rubric);
    let runs = store.episodes(&Default::default()).expect("list");

    let waiting = grading::task_dashboard(store, world, rubric, &runs).expect("dashboard");
    assert_eq!(
        (waiting.agent_runs, waiting.expert_runs, waiting.pending),
        (2, 0, 2)
    );
    assert_eq!(waiting.agent_mean, None);
    assert!(waiting.bins.iter().all(|b| b.agents == 0));

    let ana = expert(store, "Ana");
    for (run, met) in runs.iter().zip([true, false]) {
        at.grader(&run.id, &ana)
            .grade(&grade("friendly", met, "Read it."))
            .expect("graded");
    }
    let d = grading::task_dashboard(store, world, rubric, &runs).expect("dashboard");
    assert_eq!(d.pending, 0);
    assert_eq!(d.bins.len(), 10);
    // 1.0 with the friendly reply, and just over 0.9 without its one point.
    assert_eq!(d.bins[9].agents, 2);
    assert_eq!(d.bins.iter().map(|b| b.agents).sum::<u32>(), 2);
    let friendly = d
        .criteria
        .iter()
        .find(|c| c.id == "friendly")
        .expect("criterion");
    assert_eq!((friendly.agents_right, friendly.agents_decided), (1, 2));
    let careful = d
        .criteria
        .iter()
        .find(|c| c.id == "no-transfer-to-others")
        .expect("criterion");
    assert_eq!(
        (careful.agents_right, careful.agents_decided),
        (2, 2),
        "not sending money elsewhere is right"
    );
    assert_eq!(d.agent_pass_k.first().map(|p| p.k), Some(1));
    assert!(d.agent_mean.expect("a mean") < 1.0);
}

/// Imports the two agent runs into a fresh store; their ids, oldest first.
fn imported_runs(store: &Store) -> Vec<String> {
    grading::import_agent_runs(
        store,
        &agent_runs_jsonl(),
        "runs.jsonl",
        &common::mini_dir(),
    )
    .expect("import");
    run_ids(store)
}

/// The ids of the runs in `store`.
fn run_ids(store: &Store) -> Vec<String> {
    store
        .episodes(&Default::default())
        .expect("list")
        .into_iter()
        .map(|e| e.id)
        .collect()
}

fn judgment(criterion: &str, hash: Option<&str>, met: bool, judge: &str) -> JudgmentRecord {
    JudgmentRecord {
        criterion_id: criterion.into(),
        criterion_hash: hash.map(str::to_string),
        level: None,
        met,
        reason: format!("{judge} says {met}"),
        judge: judge.into(),
        at: String::new(),
    }
}

/// A store with the two agent runs, the pay-back rubric, and the hash of
/// its judged criterion (`friendly`).
fn judged_runs() -> (tempfile::TempDir, Store, Vec<String>, Arc<Rubric>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path().join("s.db")).expect("store");
    let runs = imported_runs(&store);
    let rubric = grading::rubric_of(&common::mini(), None, "pay-back")
        .expect("loads")
        .expect("a rubric");
    let hash = rubric.criterion("friendly").expect("judged").hash.clone();
    (dir, store, runs, rubric, hash)
}

#[test]
fn a_judge_is_compared_with_the_people_who_graded_the_same_runs() {
    let (_dir, store, runs, rubric, hash) = judged_runs();
    let none = grading::judge_agreement(&store, &rubric, &runs).expect("report");
    assert!(!none.has_judge());
    assert_eq!(none.criteria.len(), 1, "only judged criteria are compared");
    assert_eq!(
        none.criteria[0].note.as_deref(),
        Some("No judge has graded these runs.")
    );

    // The judge says met, then not met; Ana says met twice, Ben agrees
    // with the judge. A grade of the criterion before it was edited (an
    // old hash) does not count.
    let save = |run: &str, met: bool, who: &str| {
        store
            .save_judgment(run, &judgment("friendly", Some(&hash), met, who))
            .expect("saved");
    };
    save(&runs[0], true, "command:my-judge");
    save(&runs[1], false, "command:my-judge");
    save(&runs[0], true, "ana");
    save(&runs[1], true, "ana");
    save(&runs[0], true, "ben");
    save(&runs[1], false, "ben");
    store
        .save_judgment(&runs[1], &judgment("friendly", Some("old"), true, "carl"))
        .expect("saved");
    let report = grading::judge_agreement(&store, &rubric, &runs).expect("report");
    assert!(report.has_judge());
    let c = &report.criteria[0];
    assert_eq!(c.judges, ["command:my-judge"]);
    assert_eq!(
        (c.judged_runs, c.graded_runs, c.items, c.agreed),
        (2, 2, 4, 3)
    );
    assert_eq!(c.percent, Some(0.75));
    // Judge 1,0,1,0 against people 1,1,1,0: p_o = 3/4, p_e = 1/2, κ = 1/2.
    assert!((c.kappa.expect("defined") - 0.5).abs() < 1e-12, "{c:?}");
    assert_eq!(c.note, None);
    assert_eq!(c.disagreements.len(), 1);
    let d = &c.disagreements[0];
    assert_eq!(
        (
            d.episode_id.as_str(),
            d.grader.as_str(),
            d.judge_met,
            d.grader_met
        ),
        (runs[1].as_str(), "ana", false, true)
    );
}

#[test]
fn on_a_scale_the_judge_and_people_are_compared_on_levels() {
    let (_dir, store, runs, _, _) = judged_runs();
    let rubric = scaled_rubric(&common::mini());
    let hash = rubric.criterion("friendly").expect("judged").hash.clone();
    let save = |run: &str, level: Option<&str>, who: &str| {
        let record = JudgmentRecord {
            level: level.map(str::to_string),
            ..judgment("friendly", Some(&hash), level != Some("Rude"), who)
        };
        store.save_judgment(run, &record).expect("saved");
    };
    // Both runs met by everyone, but on run 1 the judge says "Polite but
    // curt" where Ana says "Warm". Ben's grade has no level: it cannot be
    // compared on a scale and is left out.
    save(&runs[0], Some("Warm"), "command:my-judge");
    save(&runs[1], Some("Curt"), "command:my-judge");
    save(&runs[0], Some("Warm"), "ana");
    save(&runs[1], Some("Warm"), "ana");
    save(&runs[1], None, "ben");
    let report = grading::judge_agreement(&store, &rubric, &runs).expect("report");
    let c = &report.criteria[0];
    assert_eq!((c.items, c.agreed), (2, 1), "{c:?}");
    assert_eq!(c.disagreements.len(), 1);
    let d = &c.disagreements[0];
    assert_eq!((d.judge_met, d.grader_met), (true, true), "both said met");
    assert_eq!(
        (d.judge_level.as_deref(), d.grader_level.as_deref()),
        (Some("Curt"), Some("Warm"))
    );
}

#[test]
fn a_judges_grade_inside_a_saved_score_counts_and_nobody_graded_is_explained() {
    let (_dir, store, runs, rubric, hash) = judged_runs();
    let world = common::mini();
    // What `understudy score --judge … --save` keeps: the judge's grade
    // in the score's detail, not in the judgments table.
    let run = store.trajectory(&runs[0]).expect("run");
    let mut episode = understudy::Episode::new(Arc::clone(&world)).expect("episode");
    let judged = Judgment::from(judgment("friendly", Some(&hash), true, "command:llm"));
    let mut score = rubric::replay_and_score(&mut episode, &rubric, 0, &run.actions(), &[judged])
        .expect("scored");
    score.episode_id = Some(runs[0].clone());
    store
        .save_scores(&[ScoreRecord::try_from(&score).expect("record")])
        .expect("saved");
    let report = grading::judge_agreement(&store, &rubric, &runs).expect("report");
    let c = &report.criteria[0];
    assert_eq!((c.judged_runs, c.items), (1, 0));
    assert_eq!(c.judges, Vec::<String>::new(), "named once it is compared");
    assert_eq!(
        c.note.as_deref(),
        Some("Nobody has graded a run the judge graded yet.")
    );
    // A person agrees, on the only run: one item, agreement 100%, and κ
    // cannot be computed from one category.
    store
        .save_judgment(&runs[0], &judgment("friendly", Some(&hash), true, "ana"))
        .expect("saved");
    let c = grading::judge_agreement(&store, &rubric, &runs)
        .expect("report")
        .criteria[0]
        .clone();
    assert_eq!((c.items, c.agreed, c.percent), (1, 1, Some(1.0)));
    assert_eq!(c.judges, ["command:llm"]);
    assert_eq!(c.kappa, None);
    assert!(c.note.expect("why").contains("Every grade was the same"));
}

#[test]
fn progress_counts_each_experts_recordings_reviews_and_grading() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::open(dir.path().join("s.db")).expect("store"));
    let (ana, ben) = (expert(&store, "Ana"), expert(&store, "Ben"));
    let solution: Vec<Value> = common::mini()
        .task("pay-back")
        .expect("task")
        .solution
        .clone();
    let record = |who: &str| {
        understudy::recorder::Recorder::start(
            Arc::clone(&store),
            common::mini(),
            "pay-back",
            Actor::Expert { id: who.into() },
            0,
        )
        .expect("starts")
    };
    // Ana: four recordings handed in (one approved, one returned, two
    // waiting), one still open, one abandoned (its time does not count).
    let mut ids = Vec::new();
    for _ in 0..4 {
        let mut rec = record(&ana);
        for a in &solution {
            rec.step(understudy::Action::from_json(a).expect("action"), None)
                .expect("step");
        }
        rec.submit(None).expect("submit");
        ids.push(rec.record().id.clone());
    }
    let open = record(&ana);
    let mut dropped = record(&ana);
    dropped.abandon().expect("abandon");
    for (id, ms) in ids.iter().map(|i| (i.as_str(), 60_000)).chain([
        (open.record().id.as_str(), 30_000),
        (dropped.record().id.as_str(), 999_000),
    ]) {
        store.save_active_time(id, ms).expect("time");
    }
    store
        .add_expert_review(&ids[0], &ben, Decision::Approve, "")
        .expect("approve");
    store
        .add_expert_review(
            &ids[1],
            &ben,
            Decision::Reject,
            "Look the account up first.",
        )
        .expect("return");
    // A reviewer named on the command line who is no expert of the store.
    store
        .add_review(&ids[2], "lead-reviewer", Decision::Approve, "")
        .expect("approve");
    let runs = imported_runs(&store);
    store.assign_grader(&runs[0], &ben).expect("assign");
    store.assign_grader(&runs[1], &ben).expect("assign");

    let p = grading::people_progress(&store).expect("progress");
    assert_eq!(
        p.experts.len(),
        1,
        "agents are not experts: {:?}",
        p.experts
    );
    let a = &p.experts[0];
    assert_eq!(a.name, "Ana");
    assert_eq!(
        (
            a.done,
            a.approved,
            a.returned,
            a.waiting,
            a.in_progress,
            a.tasks
        ),
        (4, 2, 1, 1, 1, 1)
    );
    assert_eq!(
        a.active_ms,
        4 * 60_000 + 30_000,
        "abandoned time is left out"
    );
    assert!(a.last_active.is_some());
    assert_eq!(p.waiting, 1);

    let names: Vec<&str> = p.reviewers.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["Ana", "Ben", "lead-reviewer"]);
    let b = &p.reviewers[1];
    assert_eq!(
        b.id, ben,
        "the app's reviews name the expert, found by name"
    );
    assert_eq!(
        (b.reviewed, b.approved, b.returned, b.pending),
        (2, 1, 1, 1)
    );
    assert!(b.last_review.is_some());
    let own = &p.reviewers[0];
    assert_eq!(
        (own.reviewed, own.pending),
        (0, 0),
        "nobody reviews their own recording"
    );
    assert_eq!(p.reviewers[2].reviewed, 1);

    assert_eq!(p.graders.len(), 1);
    assert_eq!((p.graders[0].assigned, p.graders[0].done), (2, 0));
    store.set_grading_done(&runs[0], &ben, true).expect("done");
    let p = grading::people_progress(&store).expect("progress");
    assert_eq!((p.graders[0].assigned, p.graders[0].done), (2, 1));
}
