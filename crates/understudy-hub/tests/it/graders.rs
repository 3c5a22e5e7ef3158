//! Graders' assignments through the hub: a lead assigns two graders on
//! their own machine, each grader grades on theirs, and every machine's
//! agreement report counts both graders' grades; each assignment is on the
//! hub once, attributed, and only those who grade may assign.

use std::sync::Arc;

use understudy::grading::{self, GradeInput, Method, RunGrader};
use understudy::store::Store;
use understudy_hub::outbox::Outbox;
use understudy_hub::wire::{GraderAssignment, GradesBatch};
use understudy_hub::work::Work;
use understudy_hub::Role;

use crate::support::*;

/// One person's app: its folder, store and outbox, signed in.
struct App {
    dir: tempfile::TempDir,
    store: Arc<Store>,
    outbox: Outbox,
}

fn app(url: &str, token: &str) -> App {
    let (dir, store) = local_store();
    let outbox = Outbox::open(dir.path()).expect("settings");
    outbox.sign_in_with_token(url, token).expect("signed in");
    App { dir, store, outbox }
}

fn sync(app: &App) {
    let s = app.outbox.sync(&app.store).expect("a sync");
    assert_eq!(s.last_error, None, "{:?}", app.dir.path());
}

/// `grader` grades the judged criterion of `run` (`friendly`), finishes,
/// and the app queues the run's grading work for the hub.
fn grade_and_finish(app: &App, run: &str, grader: &str, friendly: bool) {
    let world = understudy_testkit::mini();
    let rubric = grading::rubric_of(&world, None, "pay-back")
        .expect("loads")
        .expect("a rubric");
    let g = RunGrader {
        store: &app.store,
        world: &world,
        rubric: &rubric,
        episode_id: run,
        grader,
    };
    g.grade(&GradeInput {
        criterion_id: "friendly".into(),
        met: friendly,
        reason: "As I read it".into(),
        level: None,
    })
    .expect("graded");
    g.finish().expect("finished");
    app.outbox
        .queue(Work::Grades {
            episode_id: run.to_string(),
        })
        .expect("queued");
}

fn report(store: &Store, runs: &[String]) -> grading::AgreementReport {
    let world = understudy_testkit::mini();
    let rubric = grading::rubric_of(&world, None, "pay-back")
        .expect("loads")
        .expect("a rubric");
    grading::agreement_report(store, &world, &rubric, runs).expect("a report")
}

#[test]
fn assignments_made_on_a_leads_machine_reach_both_graders_and_every_report_counts_both() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_in_process(&db, understudy_hub::DEFAULT_MAX_BODY_BYTES);
    let admin = client(&hub.url, &person(&db, "admin", Role::Admin));
    admin.add_world(&mini_dir()).expect("the world");
    let ada_token = person(&db, "ada", Role::Expert);
    let (_ada_dir, ada_store) = local_store();
    let all = record(&ada_store, "x-ada", 4);
    client(&hub.url, &ada_token)
        .push(&ada_store, understudy_hub::client::PushOptions::default())
        .expect("ada pushes");
    // The finished ones: every other run.
    let runs = vec![all[0].clone(), all[2].clone()];

    let lea = app(&hub.url, &person(&db, "lea", Role::Reviewer));
    let ann = app(&hub.url, &person(&db, "ann", Role::Annotator));
    let gus = app(&hub.url, &person(&db, "gus", Role::Reviewer));
    // Each grader's profile on their machine; the lead's app knows them.
    ann.store.ensure_expert("x-ann", Some("Ann")).expect("ann");
    gus.store.ensure_expert("x-gus", Some("Gus")).expect("gus");
    for (id, name) in [("x-ann", "Ann"), ("x-gus", "Gus")] {
        lea.store.ensure_expert(id, Some(name)).expect("known");
    }

    // The lead pulls the runs and assigns both graders to both.
    sync(&lea);
    for run in &runs {
        for grader in ["x-ann", "x-gus"] {
            lea.store.assign_grader(run, grader).expect("assigned");
        }
        lea.outbox
            .queue(Work::Grades {
                episode_id: run.clone(),
            })
            .expect("queued");
    }
    sync(&lea);
    assert_eq!(
        count(&db, "SELECT count(*) FROM grading_assignments g JOIN people p ON p.id = g.assigned_by WHERE p.login = 'lea' AND g.done_at IS NULL"),
        4,
        "on the hub, the lead's"
    );

    // Each grader's sync brings their assignments (and the other's).
    for a in [&ann, &gus] {
        sync(a);
        assert_eq!(a.store.assignments().expect("assignments").len(), 4);
    }
    // Ann's profile came to Gus's machine as a pulled one, not a local one.
    assert_eq!(
        gus.store.expert("x-ann").expect("ann's profile").name,
        "Ann"
    );
    assert!(gus
        .store
        .pulled_expert_ids()
        .expect("pulled")
        .contains("x-ann"));
    // They disagree on the second run.
    grade_and_finish(&ann, &runs[0], "x-ann", true);
    grade_and_finish(&ann, &runs[1], "x-ann", true);
    grade_and_finish(&gus, &runs[0], "x-gus", true);
    grade_and_finish(&gus, &runs[1], "x-gus", false);
    for a in [&ann, &gus, &lea, &ann, &gus, &lea] {
        sync(a);
    }

    for (who, a) in [("ann", &ann), ("gus", &gus), ("lea", &lea)] {
        let r = report(&a.store, &runs);
        assert_eq!(r.graders, ["x-ann", "x-gus"], "{who}'s report");
        assert_eq!(r.rubric.method, Method::CohenKappa, "{who}'s report");
        let friendly = r
            .criteria
            .iter()
            .find(|c| c.id == "friendly")
            .expect("friendly");
        assert_eq!(
            (friendly.agreement.graders, friendly.agreement.items),
            (2, 2),
            "{who}: both graders' grades of both runs"
        );
        assert_eq!(friendly.agreement.percent, Some(0.5), "{who}");
        let assignments = a.store.assignments().expect("assignments");
        assert_eq!(assignments.len(), 4, "{who}: once each");
        assert!(
            assignments.iter().all(|x| x.done_at.is_some()),
            "{who}: every grader's done came along: {assignments:?}"
        );
    }
    assert_eq!(count(&db, "SELECT count(*) FROM grading_assignments"), 4);
    assert_eq!(
        count(&db, "SELECT count(*) FROM grading_assignments g JOIN people p ON p.id = g.done_by WHERE p.login IN ('ann', 'gus')"),
        4,
        "done, by the graders themselves"
    );

    // Sent again: nothing changes. The lead's stale "not done" does not
    // take a grader's "done" back; only the grader does.
    let lea_hub = client(&hub.url, &person(&db, "lea2", Role::Reviewer));
    let not_done = GradesBatch {
        assignments: vec![GraderAssignment {
            episode_id: runs[0].clone(),
            grader: "x-ann".into(),
            grader_name: "Ann".into(),
            assigned_at: String::new(),
            done_at: None,
        }],
        ..GradesBatch::default()
    };
    let s = lea_hub.push_grades_batch(&not_done).expect("sent");
    assert_eq!((s.assignments, s.assignments_changed), (1, 0));
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM grading_assignments WHERE done_at IS NULL"
        ),
        0
    );

    // Refused whole, nothing stored: an expert assigning, a run the hub
    // lacks, an assignment naming no grader.
    let ada = client(&hub.url, &ada_token);
    let e = ada.push_grades_batch(&not_done).expect_err("an expert");
    assert_eq!(e.code(), Some("forbidden"), "{e}");
    let mut unknown = not_done.clone();
    unknown.assignments.push(GraderAssignment {
        episode_id: "no-such".into(),
        grader: "x-new".into(),
        ..not_done.assignments[0].clone()
    });
    let e = lea_hub
        .push_grades_batch(&unknown)
        .expect_err("no such run");
    assert_eq!(e.code(), Some("not_found"), "{e}");
    assert!(e.to_string().contains("no episode no-such"), "{e}");
    let mut nameless = not_done.clone();
    nameless.assignments[0].grader = " ".into();
    let e = lea_hub.push_grades_batch(&nameless).expect_err("no grader");
    assert!(
        e.to_string()
            .contains("assignments[0].grader: must not be empty"),
        "{e}"
    );
    assert_eq!(count(&db, "SELECT count(*) FROM grading_assignments"), 4);
    // A malformed cursor is refused with its field named.
    let answer = raw(
        "GET",
        &format!("{}/v1/sync/grading?seq=first", hub.url),
        Some(&ada_token),
        None,
        Vec::new(),
    );
    assert_error(answer, 400, "bad_request", "seq");
}
