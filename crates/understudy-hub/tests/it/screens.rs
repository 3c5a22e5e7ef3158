//! Reviewers, graders and annotators working from the app's screens
//! against the hub (`outbox` + `work` + `pull`): the reviewer's app pulls
//! what experts pushed, a decision made while the hub is down is sent
//! when it is back, exactly once (a resend after a lost answer included),
//! grades and rubric versions reach the hub, refusals are told plainly,
//! and the expert's app pulls the verdict.

use understudy::store::{Decision, EpisodeStatus, JudgmentRecord, NewRubricVersion};
use understudy_hub::client::PushOptions;
use understudy_hub::outbox::{Outbox, WorkState, WorkStatus};
use understudy_hub::wire::{ReviewRequest, RubricQuery};
use understudy_hub::work::{grades_key, review_key, rubric_key, Work};
use understudy_hub::Role;

use crate::support::*;

fn work_of(outbox: &Outbox, store: &understudy::store::Store, key: &str) -> Option<WorkStatus> {
    outbox
        .status(store)
        .expect("status")
        .work
        .into_iter()
        .find(|w| w.key == key)
}

fn state_of(outbox: &Outbox, store: &understudy::store::Store, key: &str) -> Option<WorkState> {
    work_of(outbox, store, key).map(|w| w.state)
}

fn approve(id: &str, request: &str) -> Work {
    Work::Review {
        request_id: request.into(),
        episode_id: id.into(),
        decision: Decision::Approve,
        comment: String::new(),
    }
}

#[test]
fn a_reviewers_approval_made_while_the_hub_is_down_reaches_it_once_with_grades_and_rubrics() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let (mut process, addr, url) = hub_on_a_port(&db);
    let admin = client(&url, &person(&db, "admin", Role::Admin));
    let ada_token = person(&db, "ada", Role::Expert);
    let rita_token = person(&db, "rita", Role::Reviewer);
    let ann_token = person(&db, "ann", Role::Annotator);
    admin.add_world(&mini_dir()).expect("the world");

    // Ada records three (0 and 2 submitted) and her app sends them.
    let (ada_dir, ada_store) = local_store();
    let ids = record(&ada_store, "x-ada", 3);
    let ada = Outbox::open(ada_dir.path()).expect("ada's settings");
    ada.sign_in_with_token(&url, &ada_token)
        .expect("ada signs in");
    assert_eq!(ada.sync(&ada_store).expect("a sync").last_error, None);

    // Rita's app, empty, pulls the finished ones into its store.
    let (rita_dir, rita_store) = local_store();
    let rita = Outbox::open(rita_dir.path()).expect("rita's settings");
    assert!(
        !rita.queue(approve(&ids[0], "r-0")).expect("no account"),
        "without a hub nothing is queued"
    );
    rita.sign_in_with_token(&url, &rita_token)
        .expect("rita signs in");
    let first = rita.sync(&rita_store).expect("a sync");
    assert_eq!(first.last_error, None);
    let pulled = rita_store.episodes(&Default::default()).expect("episodes");
    assert_eq!(
        pulled.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        [ids[0].as_str(), ids[2].as_str()],
        "the finished episodes, not the open one"
    );
    assert_eq!(
        rita_store.steps(&ids[0]).expect("steps").len(),
        ada_store.steps(&ids[0]).expect("steps").len(),
        "whole, with the undone step"
    );
    assert_eq!(
        rita_store.expert("x-ada").expect("ada's profile").name,
        "Expert x-ada"
    );
    rita.sync(&rita_store).expect("again");
    assert_eq!(
        rita_store
            .episodes(&Default::default())
            .expect("episodes")
            .len(),
        2,
        "pulled once"
    );

    // The hub goes down; Rita approves in her screen; it waits.
    process.kill();
    rita_store
        .add_review(&ids[0], "rita (test)", Decision::Approve, "")
        .expect("approved here");
    assert!(rita.queue(approve(&ids[0], "r-0")).expect("queued"));
    assert_eq!(
        state_of(&rita, &rita_store, &review_key(&ids[0])),
        Some(WorkState::Waiting)
    );
    let offline = rita.sync(&rita_store).expect("a failed sync is a status");
    assert!(
        offline
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("cannot be reached")),
        "{offline:?}"
    );
    assert_eq!(
        state_of(&rita, &rita_store, &review_key(&ids[0])),
        Some(WorkState::Waiting)
    );
    // The app is closed and opened again: the decision still waits.
    drop(rita);
    let rita = Outbox::open(rita_dir.path()).expect("the saved settings");
    assert_eq!(
        state_of(&rita, &rita_store, &review_key(&ids[0])),
        Some(WorkState::Waiting)
    );

    // Back: sent once, attributed to Rita; more syncs add nothing.
    let _process = HubProcess::start(&db, addr);
    let back = rita.sync(&rita_store).expect("a sync");
    assert_eq!(back.last_error, None);
    assert_eq!(
        state_of(&rita, &rita_store, &review_key(&ids[0])),
        Some(WorkState::Sent)
    );
    rita.sync(&rita_store).expect("again");
    assert_eq!(count(&db, "SELECT count(*) FROM reviews"), 1);
    assert_eq!(
        count(&db, "SELECT count(*) FROM reviews r JOIN people p ON p.id = r.changed_by WHERE p.login = 'rita' AND r.decision = 'approve'"),
        1
    );
    assert_eq!(
        count(
            &db,
            &format!(
                "SELECT count(*) FROM episodes WHERE id = '{}' AND status = 'approved'",
                ids[0]
            )
        ),
        1
    );

    // Its answer lost, the same decision sent again: still one review.
    let rita_hub = client(&url, &rita_token);
    let resend = ReviewRequest {
        decision: Decision::Approve,
        comment: String::new(),
        request_id: Some("r-0".into()),
    };
    let again = rita_hub
        .review_request(&ids[0], &resend)
        .expect("the stored review answers");
    assert_eq!(
        (again.episode_id.as_str(), again.reviewer.as_str()),
        (ids[0].as_str(), "rita (test)")
    );
    assert_eq!(
        count(&db, "SELECT count(*) FROM reviews"),
        1,
        "exactly once"
    );
    let reused = rita_hub
        .review_request(
            &ids[2],
            &ReviewRequest {
                decision: Decision::Reject,
                comment: "no".into(),
                request_id: Some("r-0".into()),
            },
        )
        .expect_err("an id names one decision");
    assert_eq!(reused.code(), Some("conflict"));
    assert!(reused.to_string().contains("request_id r-0"), "{reused}");
    let blank = rita_hub
        .review_request(
            &ids[2],
            &ReviewRequest {
                request_id: Some(" ".into()),
                ..resend.clone()
            },
        )
        .expect_err("a blank id");
    assert_eq!(blank.code(), Some("bad_request"));

    // Someone else decides episode 2 first: Rita's is refused, plainly,
    // and not sent again.
    admin
        .review(&ids[2], Decision::Reject, "Check the balance first.")
        .expect("the admin returns it");
    rita_store
        .add_review(&ids[2], "rita (test)", Decision::Approve, "")
        .expect("approved here");
    rita.queue(approve(&ids[2], "r-2")).expect("queued");
    rita.sync(&rita_store).expect("a sync");
    let refused = work_of(&rita, &rita_store, &review_key(&ids[2])).expect("its state");
    assert_eq!(refused.state, WorkState::Refused);
    assert!(
        refused
            .message
            .as_deref()
            .is_some_and(|m| m.contains("already has a decision") && m.contains("rejected")),
        "{refused:?}"
    );
    rita.sync(&rita_store).expect("again");
    assert_eq!(count(&db, "SELECT count(*) FROM reviews"), 2);
    // Her computer now holds the team's decision, not her refused one.
    let here = rita_store.reviews(&ids[2]).expect("reviews");
    assert_eq!(here.len(), 1, "{here:?}");
    assert_eq!(
        (here[0].decision, here[0].comment.as_str()),
        (Decision::Reject, "Check the balance first.")
    );
    assert_eq!(
        rita_store.episode(&ids[2]).expect("here").status,
        EpisodeStatus::Rejected
    );

    // A grade from the sheet reaches the hub, once.
    rita_store
        .save_judgment(
            &ids[0],
            &JudgmentRecord {
                criterion_id: "tone".into(),
                criterion_hash: None,
                level: None,
                met: true,
                reason: "Clear and kind.".into(),
                judge: "x-rita".into(),
                at: String::new(),
            },
        )
        .expect("graded here");
    rita.queue(Work::Grades {
        episode_id: ids[0].clone(),
    })
    .expect("queued");
    rita.queue(Work::Grades {
        episode_id: ids[0].clone(),
    })
    .expect("queued twice");
    assert_eq!(
        state_of(&rita, &rita_store, &grades_key(&ids[0])),
        Some(WorkState::Waiting)
    );
    rita.sync(&rita_store).expect("a sync");
    assert_eq!(
        state_of(&rita, &rita_store, &grades_key(&ids[0])),
        Some(WorkState::Sent)
    );
    assert_eq!(
        count(&db, "SELECT count(*) FROM judgments j JOIN people p ON p.id = j.changed_by WHERE p.login = 'rita' AND j.reason = 'Clear and kind.'"),
        1
    );
    // Grades of a run the hub lacks are refused, in words, and dropped.
    let local = record(&rita_store, "x-rita", 1);
    rita.queue(Work::Grades {
        episode_id: local[0].clone(),
    })
    .expect("queued");
    rita_store
        .save_judgment(
            &local[0],
            &JudgmentRecord {
                criterion_id: "tone".into(),
                criterion_hash: None,
                level: None,
                met: false,
                reason: "Curt.".into(),
                judge: "x-rita".into(),
                at: String::new(),
            },
        )
        .expect("graded here");
    let s = rita.sync(&rita_store).expect("a sync");
    assert_eq!(
        s.last_error, None,
        "a refusal is the work's, not the sync's"
    );
    let w = s
        .work
        .iter()
        .find(|w| w.key == grades_key(&local[0]))
        .expect("its state");
    assert_eq!(w.state, WorkState::Refused);
    assert!(
        w.message
            .as_deref()
            .is_some_and(|m| m.contains("not on the team hub")),
        "{w:?}"
    );
    assert_eq!(count(&db, "SELECT count(*) FROM judgments"), 1);

    // An annotator's rubric version goes up; Rita's app pulls it.
    let (ann_dir, ann_store) = local_store();
    let ann = Outbox::open(ann_dir.path()).expect("ann's settings");
    ann.sign_in_with_token(&url, &ann_token)
        .expect("ann signs in");
    let hash = "a".repeat(64);
    ann_store
        .save_rubric_version(&NewRubricVersion {
            world_id: "mini",
            task_id: "pay-back",
            version: "2",
            hash: &hash,
            path: "/rubrics/mini/pay-back.toml",
            content: "version = \"2\"\n",
            saved_by: Some("x-ann"),
        })
        .expect("saved here");
    let rubric = Work::Rubric {
        world_id: "mini".into(),
        task_id: "pay-back".into(),
        hash: hash.clone(),
    };
    ann.queue(rubric.clone()).expect("queued");
    ann.queue(rubric).expect("not twice");
    assert_eq!(ann.status(&ann_store).expect("status").work.len(), 1);
    ann.sync(&ann_store).expect("a sync");
    assert_eq!(
        state_of(&ann, &ann_store, &rubric_key(&hash)),
        Some(WorkState::Sent)
    );
    let on_hub = admin
        .rubrics(&RubricQuery::default())
        .expect("the hub's rubrics");
    assert_eq!(on_hub.len(), 1);
    assert_eq!(on_hub[0].saved_by.as_deref(), Some("x-ann"));
    rita.sync(&rita_store).expect("rita pulls");
    let here = rita_store
        .rubric_versions("mini", "pay-back")
        .expect("versions");
    assert_eq!(
        here.iter().map(|v| v.hash.as_str()).collect::<Vec<_>>(),
        [hash.as_str()]
    );
    rita.sync(&rita_store).expect("again");
    assert_eq!(
        rita_store
            .rubric_versions("mini", "pay-back")
            .expect("versions")
            .len(),
        1
    );
    // A reviewer may not save rubric versions: refused, told why.
    rita.queue(Work::Rubric {
        world_id: "mini".into(),
        task_id: "pay-back".into(),
        hash: hash.clone(),
    })
    .expect("queued");
    rita.sync(&rita_store).expect("a sync");
    let w = work_of(&rita, &rita_store, &rubric_key(&hash)).expect("its state");
    assert!(
        w.message
            .as_deref()
            .is_some_and(|m| m.contains("does not let your role")),
        "{w:?}"
    );

    // Ada's app pulls the verdicts onto her episodes.
    ada.sync(&ada_store).expect("ada syncs");
    assert_eq!(
        ada_store.episode(&ids[0]).expect("ep 0").status,
        EpisodeStatus::Approved
    );
    let returned = ada_store.reviews(&ids[2]).expect("reviews");
    assert_eq!(
        ada_store.episode(&ids[2]).expect("ep 2").status,
        EpisodeStatus::Rejected
    );
    assert_eq!(
        returned.last().map(|r| r.comment.as_str()),
        Some("Check the balance first.")
    );
    // Her next push leaves the hub's decisions standing.
    ada_store
        .annotate_step(&ids[1], 0, Some("later"), None)
        .expect("annotate");
    client(&url, &ada_token)
        .push(&ada_store, PushOptions::default())
        .expect("a push");
    assert_eq!(count(&db, "SELECT count(*) FROM reviews"), 2);
}
