//! Grading agent runs: imported whole or not at all, graded by several
//! experts (judged criteria and overrides of automatic ones, the original
//! score kept), and the graders' agreement.

use std::sync::Arc;

use serde_json::Value;
use understudy::export::{self, ExportOptions, Source};
use understudy::grading::{self, GradeInput, Method, RunGrader};
use understudy::rubric::Rubric;
use understudy::store::Store;
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
    let runs: Vec<String> = store
        .episodes(&Default::default())
        .expect("list")
        .into_iter()
        .map(|e| e.id)
        .collect();
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
