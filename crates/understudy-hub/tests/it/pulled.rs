//! Grades and pulled episodes between apps: a grader's overrides of
//! automatic checks and judgments on a scale (with the level chosen)
//! reach the hub exactly once through the outbox and come back on another
//! grader's pull, without duplicates; bad grades are refused whole; and an
//! app that pulled others' episodes as a reviewer, then signs in as an
//! expert, pushes only what was recorded on it.

use understudy::store::{JudgmentRecord, OverrideRecord, Store};
use understudy_hub::client::{EpisodeQuery, PushOptions};
use understudy_hub::outbox::{Outbox, WorkState};
use understudy_hub::pull;
use understudy_hub::wire::{EpisodeOverride, GradesBatch, PushBatch, PushEpisode};
use understudy_hub::work::{grades_key, Work};
use understudy_hub::Role;

use crate::support::*;

fn on_a_scale(level: &str) -> JudgmentRecord {
    JudgmentRecord {
        criterion_id: "tone".into(),
        criterion_hash: Some("c".repeat(64)),
        met: true,
        reason: "Polite, a little curt".into(),
        judge: "x-ann".into(),
        at: String::new(),
        level: Some(level.into()),
    }
}

fn overridden(reason: &str) -> OverrideRecord {
    OverrideRecord {
        criterion_id: "paid".into(),
        criterion_hash: Some("d".repeat(64)),
        original_met: Some(false),
        met: true,
        reason: reason.into(),
        grader: "x-ann".into(),
        at: String::new(),
    }
}

fn grade_rows(db: &str) -> (i64, i64) {
    (
        count(db, "SELECT count(*) FROM judgments"),
        count(db, "SELECT count(*) FROM overrides"),
    )
}

fn grades_of(store: &Store, id: &str) -> (Vec<JudgmentRecord>, Vec<OverrideRecord>) {
    (
        store.judgments(id).expect("judgments"),
        store.overrides(id).expect("overrides"),
    )
}

/// A fresh hub with the mini world, an admin, and Ada (an expert) who has
/// recorded `n` runs (the first finished) and pushed them; returns the
/// hub's database, the hub, Ada's token and her run ids.
fn hub_with_adas_runs(server: &str, n: usize) -> (String, InProcessHub, String, Vec<String>) {
    let db = fresh_database(server);
    let hub = hub_in_process(&db, understudy_hub::DEFAULT_MAX_BODY_BYTES);
    let admin = client(&hub.url, &person(&db, "admin", Role::Admin));
    let ada_token = person(&db, "ada", Role::Expert);
    admin.add_world(&mini_dir()).expect("the world");
    let (_ada_dir, ada_store) = local_store();
    let ids = record(&ada_store, "x-ada", n);
    client(&hub.url, &ada_token)
        .push(&ada_store, PushOptions::default())
        .expect("ada pushes");
    (db, hub, ada_token, ids)
}

#[test]
fn overrides_and_scale_levels_reach_the_hub_once_and_come_back_on_another_graders_pull() {
    let Some(server) = server_url() else { return };
    let (db, hub, ada_token, ids) = hub_with_adas_runs(&server, 3);
    let ann_token = person(&db, "ann", Role::Annotator);
    let gus_token = person(&db, "gus", Role::Reviewer);
    let grace = client(&hub.url, &person(&db, "grace", Role::Expert));

    // Ann's app pulls the finished runs, grades one on the sheet (a
    // judgment on a scale, an override of a check) and queues the grades.
    let (ann_dir, ann_store) = local_store();
    let ann = Outbox::open(ann_dir.path()).expect("ann's settings");
    ann.sign_in_with_token(&hub.url, &ann_token)
        .expect("ann signs in");
    assert_eq!(ann.sync(&ann_store).expect("a sync").last_error, None);
    ann_store
        .save_judgment(&ids[0], &on_a_scale("Curt"))
        .expect("judged here");
    ann_store
        .save_override(&ids[0], &overridden("The refund went out the next day"))
        .expect("overridden here");
    let work = Work::Grades {
        episode_id: ids[0].clone(),
    };
    assert!(ann.queue(work.clone()).expect("queued"));
    let sent = ann.sync(&ann_store).expect("a sync");
    assert_eq!(sent.last_error, None);
    let state = sent.work.iter().find(|w| w.key == grades_key(&ids[0]));
    assert_eq!(state.map(|w| w.state), Some(WorkState::Sent), "{sent:?}");
    assert_eq!(grade_rows(&db), (1, 1));
    assert_eq!(
        count(&db, "SELECT count(*) FROM judgments WHERE level = 'Curt'"),
        1,
        "the level is stored"
    );
    assert_eq!(
        count(&db, "SELECT count(*) FROM overrides o JOIN people p ON p.id = o.changed_by WHERE p.login = 'ann' AND o.original_met = false AND o.met = true"),
        1,
        "the override keeps what the check found, and who sent it"
    );

    // Sent again (queued twice, its answer lost, the CLI's push): once.
    ann.queue(work.clone()).expect("queued again");
    ann.sync(&ann_store).expect("a sync");
    let batch = GradesBatch {
        overrides: ann_store
            .overrides(&ids[0])
            .expect("overrides")
            .into_iter()
            .map(|record| EpisodeOverride {
                episode_id: ids[0].clone(),
                record,
            })
            .collect(),
        ..GradesBatch::default()
    };
    let resent = client(&hub.url, &ann_token)
        .push_grades_batch(&batch)
        .expect("a resend");
    assert_eq!((resent.overrides, resent.overrides_added), (1, 0));
    let cli = client(&hub.url, &ann_token)
        .push_grades(&ann_store, PushOptions::default())
        .expect("the CLI's push");
    assert_eq!((cli.judgments_added, cli.overrides_added), (0, 0));
    assert_eq!(grade_rows(&db), (1, 1), "exactly once");
    // Ann's own grades came back on her pulls: not added twice here.
    assert_eq!(
        grades_of(&ann_store, &ids[0]).0.len(),
        1,
        "her judgment once"
    );
    assert_eq!(
        grades_of(&ann_store, &ids[0]).1.len(),
        1,
        "her override once"
    );

    // Gus's app pulls the runs and Ann's grades, level and all; again: no
    // duplicate.
    let (gus_dir, gus_store) = local_store();
    let gus = Outbox::open(gus_dir.path()).expect("gus's settings");
    gus.sign_in_with_token(&hub.url, &gus_token)
        .expect("gus signs in");
    assert_eq!(gus.sync(&gus_store).expect("a sync").last_error, None);
    gus.sync(&gus_store).expect("again");
    assert_eq!(
        grades_of(&gus_store, &ids[0]),
        grades_of(&ann_store, &ids[0])
    );
    assert_eq!(
        gus_store.judgments(&ids[0]).expect("judgments")[0]
            .level
            .as_deref(),
        Some("Curt")
    );
    // A sync cut off after the grades were added but before its cursor
    // was saved (the store's grading cursor as it was): the next one adds
    // nothing twice.
    let gus_id = client(&hub.url, &gus_token).me().expect("me").id;
    gus_store
        .save_hub_cursor(&understudy::store::HubCursor {
            account: &format!("{}#{gus_id}", hub.url),
            feed: understudy_hub::pull::GRADING_FEED,
            cursor: "{\"seq\":0}",
        })
        .expect("rolled back");
    let gus = Outbox::open(gus_dir.path()).expect("reopened");
    assert_eq!(gus.sync(&gus_store).expect("a sync").last_error, None);
    assert_eq!(
        grades_of(&gus_store, &ids[0]),
        grades_of(&ann_store, &ids[0]),
        "nothing added twice"
    );

    // Each role reads its share: Ada sees the override of her run, Grace
    // (another expert) none; the hub's copy is the local one.
    let ada_sees = client(&hub.url, &ada_token)
        .overrides(&EpisodeQuery::default())
        .expect("ada's");
    assert_eq!(ada_sees.len(), 1);
    assert_eq!(
        ada_sees[0].record,
        ann_store.overrides(&ids[0]).expect("o")[0]
    );
    assert!(grace
        .overrides(&EpisodeQuery::default())
        .expect("grace's")
        .is_empty());
    let judged = client(&hub.url, &ada_token)
        .judgments(&EpisodeQuery::default())
        .expect("judgments");
    assert_eq!(
        judged[0].judgment,
        ann_store.judgments(&ids[0]).expect("j")[0]
    );

    // Refused whole, nothing stored, the message names the field.
    let ann_hub = client(&hub.url, &ann_token);
    let good = EpisodeOverride {
        episode_id: ids[2].clone(),
        record: overridden("Paid, late"),
    };
    let refusals: Vec<(&str, &understudy_hub::client::Hub, GradesBatch, &str, &str)> = vec![
        (
            "an expert overriding",
            &grace,
            GradesBatch {
                overrides: vec![good.clone()],
                ..GradesBatch::default()
            },
            "forbidden",
            "experts do not grade",
        ),
        (
            "an override without a reason after a good one",
            &ann_hub,
            GradesBatch {
                overrides: vec![
                    good.clone(),
                    EpisodeOverride {
                        record: overridden("  "),
                        ..good.clone()
                    },
                ],
                ..GradesBatch::default()
            },
            "bad_request",
            "overrides[1].override.reason: must not be empty",
        ),
        (
            "an override without a grader",
            &ann_hub,
            GradesBatch {
                overrides: vec![EpisodeOverride {
                    record: OverrideRecord {
                        grader: String::new(),
                        ..overridden("Paid")
                    },
                    ..good.clone()
                }],
                ..GradesBatch::default()
            },
            "bad_request",
            "overrides[0].override.grader",
        ),
        (
            "an override of an unknown run",
            &ann_hub,
            GradesBatch {
                overrides: vec![
                    good.clone(),
                    EpisodeOverride {
                        episode_id: "no-such".into(),
                        ..good.clone()
                    },
                ],
                ..GradesBatch::default()
            },
            "not_found",
            "no episode no-such",
        ),
        (
            "a blank level",
            &ann_hub,
            GradesBatch {
                judgments: vec![understudy_hub::wire::EpisodeJudgment {
                    episode_id: ids[2].clone(),
                    judgment: on_a_scale(" "),
                }],
                overrides: vec![good.clone()],
                ..GradesBatch::default()
            },
            "bad_request",
            "judgments[0].judgment.level: an empty level",
        ),
    ];
    for (what, who, batch, code, says) in refusals {
        let e = who.push_grades_batch(&batch).expect_err(what);
        assert_eq!(e.code(), Some(code), "{what}: {e}");
        assert!(e.to_string().contains(says), "{what}: {e}");
        assert_eq!(grade_rows(&db), (1, 1), "{what}: nothing stored");
    }
    // Malformed: a misspelt field, a verdict that is not a yes or no.
    let url = format!("{}/v1/sync/grades", hub.url);
    let post = |body: &serde_json::Value| {
        raw(
            "POST",
            &url,
            Some(&ann_token),
            Some("application/json"),
            serde_json::to_vec(body).expect("json"),
        )
    };
    let mut typo = serde_json::to_value(GradesBatch {
        overrides: vec![good.clone()],
        ..GradesBatch::default()
    })
    .expect("json");
    typo["overrides"][0]["override"]["grade"] = serde_json::json!("met");
    let answer = post(&typo);
    assert_error(answer, 400, "bad_request", "grade");
    let mut not_bool = serde_json::to_value(GradesBatch {
        overrides: vec![good.clone()],
        ..GradesBatch::default()
    })
    .expect("json");
    not_bool["overrides"][0]["override"]["met"] = serde_json::json!("yes");
    let answer = post(&not_bool);
    assert_error(answer, 400, "bad_request", "expected a boolean");
    assert_error(
        post(&not_bool),
        400,
        "bad_request",
        "at `overrides[0].override.met`",
    );
    let mut misspelt_level = serde_json::to_value(GradesBatch {
        judgments: vec![understudy_hub::wire::EpisodeJudgment {
            episode_id: ids[2].clone(),
            judgment: on_a_scale("Clear"),
        }],
        ..GradesBatch::default()
    })
    .expect("json");
    misspelt_level["judgments"][0]["judgment"]["levle"] = serde_json::json!("Clear");
    let answer = post(&misspelt_level);
    assert_error(answer, 400, "bad_request", "levle");
    let answer = raw(
        "GET",
        &format!("{}/v1/grades?judgments_after=first", hub.url),
        Some(&ann_token),
        None,
        Vec::new(),
    );
    assert_error(answer, 400, "bad_request", "judgments_after");
    let answer = raw(
        "GET",
        &format!("{}/v1/grades", hub.url),
        Some("ush_not-a-token"),
        None,
        Vec::new(),
    );
    assert_eq!(answer.0, 401, "{}", answer.1);
    assert_eq!(grade_rows(&db), (1, 1), "nothing stored");
}

#[test]
fn an_app_that_pulled_as_a_reviewer_then_signs_in_as_an_expert_pushes_only_its_own() {
    let Some(server) = server_url() else { return };
    let (db, hub, _, ada_ids) = hub_with_adas_runs(&server, 3);
    let rita_token = person(&db, "rita", Role::Reviewer);
    let bob_token = person(&db, "bob", Role::Expert);

    // One computer: Rita reviews on it first, pulling Ada's finished runs.
    let (dir, store) = local_store();
    let outbox = Outbox::open(dir.path()).expect("settings");
    outbox
        .sign_in_with_token(&hub.url, &rita_token)
        .expect("rita signs in");
    assert_eq!(outbox.sync(&store).expect("a sync").last_error, None);
    let pulled = store.pulled_episode_ids().expect("pulled");
    assert_eq!(pulled.len(), 2, "the finished ones");
    assert!(pulled.contains(&ada_ids[0]) && pulled.contains(&ada_ids[2]));
    // Ada's profile came along, but she does not use this computer.
    assert!(store.expert("x-ada").is_ok());
    assert!(store.local_experts().expect("local").is_empty());

    // Then Bob, an expert, signs in on it and records one of his own.
    outbox
        .sign_in_with_token(&hub.url, &bob_token)
        .expect("bob signs in");
    let bob_ids = record(&store, "x-bob", 1);
    let before = outbox.status(&store).expect("status");
    assert_eq!(before.waiting, 1, "only Bob's episode waits to be sent");
    let after = outbox.sync(&store).expect("a sync");
    assert_eq!(after.last_error, None, "the hub took the batch");
    assert_eq!(after.waiting, 0);
    assert_eq!(
        count(&db, &format!("SELECT count(*) FROM episodes e JOIN people p ON p.id = e.owner WHERE p.login = 'bob' AND e.id = '{}'", bob_ids[0])),
        1,
        "Bob's own episode is on the hub, his"
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM episodes e JOIN people p ON p.id = e.owner WHERE p.login = 'ada'"
        ),
        3,
        "Ada's stay hers"
    );
    assert_eq!(count(&db, "SELECT count(*) FROM episodes"), 4);
    let report = client(&hub.url, &bob_token)
        .push(&store, PushOptions::default())
        .expect("a push from the CLI");
    assert_eq!(
        (report.local_episodes, report.sent_episodes),
        (1, 0),
        "pulled episodes are not counted or sent"
    );
    let names: Vec<String> = store
        .local_experts()
        .expect("local")
        .into_iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(names, ["x-bob"]);

    // Fetching episodes by id: only those the caller sees, a bounded lot.
    let bob = client(&hub.url, &bob_token);
    assert!(bob
        .export_episodes(std::slice::from_ref(&ada_ids[0]))
        .expect("an answer")
        .is_empty());
    let rita = client(&hub.url, &rita_token);
    let two = rita
        .export_episodes(&[ada_ids[0].clone(), "no-such".into(), bob_ids[0].clone()])
        .expect("an answer");
    assert_eq!(
        two.iter().map(|b| b.record.id.clone()).collect::<Vec<_>>(),
        [ada_ids[0].clone(), bob_ids[0].clone()]
    );
    let many = vec!["e".to_string(); understudy_hub::wire::MAX_EXPORT_IDS + 1];
    let e = rita.export_episodes(&many).expect_err("too many");
    assert_eq!(e.code(), Some("bad_request"), "{e}");
    assert!(e.to_string().contains("ask for 500 at most"), "{e}");
    let e = rita
        .export_episodes(&[ada_ids[0].clone(), " ".into()])
        .expect_err("an empty id");
    assert!(e.to_string().contains("ids[1]: an empty episode id"), "{e}");

    // What the tracking prevents: Ada's episode in Bob's batch refuses the
    // whole batch, Bob's own included.
    let mut episodes = Vec::new();
    for id in [&bob_ids[0], &ada_ids[0]] {
        let t = store.trajectory(id).expect("the episode");
        let expert = match &t.record.actor {
            understudy::store::Actor::Expert { id } => store.expert(id).ok(),
            understudy::store::Actor::Agent { .. } => None,
        };
        episodes.push(PushEpisode {
            digest: understudy_hub::client::digest(&t, expert.as_ref()),
            record: t.record,
            steps: t.steps,
        });
    }
    let mixed = PushBatch {
        experts: store.experts().expect("experts"),
        episodes,
    };
    let answer = raw(
        "POST",
        &format!("{}/v1/sync/push", hub.url),
        Some(&bob_token),
        Some("application/json"),
        serde_json::to_vec(&mixed).expect("json"),
    );
    assert_eq!(answer.0, 403, "{}", answer.1);
    assert_eq!(
        count(&db, "SELECT count(*) FROM episodes"),
        4,
        "nothing stored"
    );
}

/// A run submitted and graded on the hub between a reviewer's listing of
/// the finished runs and the pull of grades in the same sync (mimicked by
/// the run showing as still in progress to that sync): its grade is not
/// passed over for good, but arrives with the run on the next sync, once.
#[test]
fn a_grade_of_a_run_not_pulled_yet_arrives_with_the_run_on_the_next_sync() {
    let Some(server) = server_url() else { return };
    let (db, hub, _, ids) = hub_with_adas_runs(&server, 1);
    let ann_token = person(&db, "ann", Role::Annotator);
    let gus_token = person(&db, "gus", Role::Reviewer);

    // Ann grades the run, on a scale, and her grade reaches the hub.
    let (ann_dir, ann_store) = local_store();
    let ann = Outbox::open(ann_dir.path()).expect("ann's settings");
    ann.sign_in_with_token(&hub.url, &ann_token)
        .expect("ann signs in");
    assert_eq!(ann.sync(&ann_store).expect("a sync").last_error, None);
    let graded = on_a_scale("Curt");
    ann_store
        .save_judgment(&ids[0], &graded)
        .expect("judged here");
    ann.queue(Work::Grades {
        episode_id: ids[0].clone(),
    })
    .expect("queued");
    assert_eq!(ann.sync(&ann_store).expect("a sync").last_error, None);
    assert_eq!(grade_rows(&db), (1, 0));

    // Gus's sync lists the finished runs while this one is not (yet), and
    // then reads the grades, this one's among them.
    let set_status = |status: &str| {
        count(
            &db,
            &format!("WITH u AS (UPDATE episodes SET status = '{status}' WHERE id = '{}' RETURNING 1) SELECT count(*) FROM u", ids[0]),
        )
    };
    assert_eq!(
        count(
            &db,
            &format!(
                "SELECT count(*) FROM episodes WHERE id = '{}' AND status = 'submitted'",
                ids[0]
            )
        ),
        1
    );
    assert_eq!(set_status("in_progress"), 1);
    let (gus_dir, gus_store) = local_store();
    let gus = Outbox::open(gus_dir.path()).expect("gus's settings");
    gus.sign_in_with_token(&hub.url, &gus_token)
        .expect("gus signs in");
    assert_eq!(gus.sync(&gus_store).expect("a sync").last_error, None);
    assert!(
        gus_store.pulled_episode_ids().expect("pulled").is_empty(),
        "the run was not finished when listed"
    );

    // The next sync pulls the run, and its grade comes with it, once.
    assert_eq!(set_status("submitted"), 1);
    assert_eq!(gus.sync(&gus_store).expect("a sync").last_error, None);
    assert_eq!(
        gus_store.pulled_episode_ids().expect("pulled"),
        ids.iter().cloned().collect()
    );
    let (judgments, _) = grades_of(&gus_store, &ids[0]);
    assert_eq!(judgments.len(), 1, "{judgments:?}");
    assert_eq!(judgments[0].level.as_deref(), Some("Curt"));
    assert_eq!(judgments[0].reason, graded.reason);
    assert_eq!(gus.sync(&gus_store).expect("a sync").last_error, None);
    assert_eq!(grades_of(&gus_store, &ids[0]).0.len(), 1, "not twice");
}

/// The same race inside one sync: the run becomes pullable after the
/// runs pull and before the grading pull. The grading pull, which names
/// the run, pulls it then, with its grade, once.
#[test]
fn a_run_that_becomes_pullable_during_a_sync_comes_with_its_grade_in_that_sync() {
    let Some(server) = server_url() else { return };
    let (db, hub, _, ids) = hub_with_adas_runs(&server, 1);
    let ann = client(&hub.url, &person(&db, "ann", Role::Annotator));
    let gus_token = person(&db, "gus", Role::Reviewer);
    let gus = client(&hub.url, &gus_token);
    let account = format!("{}#{}", hub.url, gus.me().expect("me").id);
    let set_status = |status: &str| {
        count(
            &db,
            &format!("WITH u AS (UPDATE episodes SET status = '{status}' WHERE id = '{}' RETURNING 1) SELECT count(*) FROM u", ids[0]),
        )
    };
    ann.push_grades_batch(&GradesBatch {
        judgments: vec![understudy_hub::wire::EpisodeJudgment {
            episode_id: ids[0].clone(),
            judgment: on_a_scale("Curt"),
        }],
        ..GradesBatch::default()
    })
    .expect("graded");
    assert_eq!(set_status("in_progress"), 1);
    let (_dir, store) = local_store();
    assert_eq!(pull::episodes(&gus, &store, &account).expect("runs"), 0);
    assert_eq!(set_status("submitted"), 1);
    let got = pull::grading(&gus, &store, &account).expect("grading");
    assert_eq!((got.read, got.runs), (1, 1), "{got:?}");
    assert!(store
        .pulled_episode_ids()
        .expect("pulled")
        .contains(&ids[0]));
    assert_eq!(grades_of(&store, &ids[0]).0.len(), 1, "once");
    // The runs feed announces it too: nothing is fetched or added twice.
    assert_eq!(pull::episodes(&gus, &store, &account).expect("runs"), 0);
    let again = pull::grading(&gus, &store, &account).expect("grading");
    assert_eq!(again, pull::GradingPull::default(), "nothing read again");
    assert_eq!(grades_of(&store, &ids[0]).0.len(), 1);
}

/// A grade of a run the puller may never pull (it stays open) is not
/// served to them, and their cursor passes it: no sync reads it again,
/// however many there are; the grades after it arrive as usual.
#[test]
fn a_grade_of_a_run_never_pullable_is_not_read_again_and_does_not_hold_the_cursor() {
    let Some(server) = server_url() else { return };
    // Two runs: the first finished, the second open for good.
    let (db, hub, _, ids) = hub_with_adas_runs(&server, 2);
    let ann = client(&hub.url, &person(&db, "ann", Role::Annotator));
    let gus_token = person(&db, "gus", Role::Reviewer);
    let gus = client(&hub.url, &gus_token);
    let account = format!("{}#{}", hub.url, gus.me().expect("me").id);
    let judged = |id: &str, level: &str| GradesBatch {
        judgments: vec![understudy_hub::wire::EpisodeJudgment {
            episode_id: id.to_string(),
            judgment: on_a_scale(level),
        }],
        ..GradesBatch::default()
    };
    ann.push_grades_batch(&judged(&ids[1], "Curt"))
        .expect("the open run graded");
    let (_dir, store) = local_store();
    pull::episodes(&gus, &store, &account).expect("runs");
    let first = pull::grading(&gus, &store, &account).expect("grading");
    assert_eq!(
        first,
        pull::GradingPull::default(),
        "never served: {first:?}"
    );
    ann.push_grades_batch(&judged(&ids[0], "Clear"))
        .expect("the finished run graded");
    let second = pull::grading(&gus, &store, &account).expect("grading");
    assert_eq!(second.read, 1, "only the new grade: {second:?}");
    for _ in 0..3 {
        let again = pull::grading(&gus, &store, &account).expect("grading");
        assert_eq!(again.read, 0, "nothing read again: {again:?}");
    }
    // The hub answers the store's cursor with nothing, and that cursor is
    // past the open run's grade.
    let text = store
        .hub_cursor(&account, pull::GRADING_FEED)
        .expect("read")
        .expect("a cursor");
    let at: understudy_hub::wire::ChangeCursor = serde_json::from_str(&text).expect("a cursor");
    let page = gus.grading_changes(&at).expect("a page");
    assert!(page.judgments.is_empty() && !page.more, "{page:?}");
    let open_grade = count(
        &db,
        &format!(
            "SELECT change_seq FROM judgments WHERE episode_id = '{}'",
            ids[1]
        ),
    );
    assert!(
        at.seq >= open_grade,
        "the cursor passed it: {at:?} < {open_grade}"
    );
    assert_eq!(grades_of(&store, &ids[0]).0.len(), 1);
    assert!(!store
        .pulled_episode_ids()
        .expect("pulled")
        .contains(&ids[1]));
}
