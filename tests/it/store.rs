//! The store and recorder: durability, undo as retraction, pause, resume by
//! replay, refusal of foreign/newer/corrupt files, all-or-nothing import.

use understudy::trajectory::Trajectory;
use understudy_testkit as common;

use std::sync::Arc;

use serde_json::json;
use understudy::recorder::Recorder;
use understudy::store::{
    Actor, Decision, EpisodeFilter, EpisodeStatus, EventKind, ExpertInput, Store,
};
use understudy::{Action, Error};

fn store() -> (tempfile::TempDir, Arc<Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path().join("store.sqlite")).unwrap());
    (dir, store)
}

use common::expert;

#[test]
fn records_steps_with_rationale_and_reads_them_back() {
    let (_d, store) = store();
    let world = common::mini();
    let actor = expert(&store);
    let mut rec = Recorder::start(store.clone(), world, "pay-back", actor.clone(), 0).unwrap();
    rec.step(
        Action::tool("view_accounts", json!({"search": "ada"})),
        Some("find Ada".into()),
    )
    .unwrap();
    let s = rec
        .step(
            Action::tool(
                "transfer",
                json!({"from_id": "A-1", "to_id": "A-2", "amount": 25}),
            ),
            None,
        )
        .unwrap();
    assert!(s.outcome.observation.ok);
    rec.annotate(
        1,
        Some("policy allows it".into()),
        Some("check amount".into()),
    )
    .unwrap();
    rec.step(Action::message("Sent."), None).unwrap();
    rec.submit(None).unwrap();

    let episode = store.episode(&rec.record().id).unwrap();
    assert_eq!(episode.status, EpisodeStatus::Submitted);
    assert_eq!(episode.final_message.as_deref(), Some("Sent."));
    assert_eq!(episode.actor, actor);
    assert!(episode.submitted_at.is_some());
    let steps = store.steps(&episode.id).unwrap();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[0].rationale.as_deref(), Some("find Ada"));
    assert_eq!(steps[1].rationale.as_deref(), Some("policy allows it"));
    assert_eq!(steps[1].flag.as_deref(), Some("check amount"));
    assert_eq!(steps[1].observation, s.outcome.observation);
    assert!(steps.windows(2).all(|w| w[0].active_ms <= w[1].active_ms));
    // Submitted episodes are closed.
    assert!(matches!(
        rec.step(Action::message("more"), None),
        Err(Error::Conflict(_))
    ));
    store.integrity_check().unwrap();
}

#[test]
fn undo_retracts_and_rebuilds_the_world() {
    let (_d, store) = store();
    let world = common::mini();
    let mut rec = Recorder::start(store.clone(), world, "pay-back", expert(&store), 0).unwrap();
    rec.step(
        Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 25}),
        ),
        None,
    )
    .unwrap();
    rec.step(
        Action::tool(
            "transfer",
            json!({"from_id": "A-1", "to_id": "A-2", "amount": 5}),
        ),
        None,
    )
    .unwrap();
    assert_eq!(rec.undo().unwrap(), Some(1));
    let changes = serde_json::to_value(rec.changes().unwrap()).unwrap();
    assert_eq!(
        changes["accounts"]["changed"]["A-1"]["balance"],
        json!(75.0)
    );
    // The retracted step is still in the raw log.
    let steps = store.steps(&rec.record().id).unwrap();
    assert_eq!(steps.len(), 2);
    assert!(steps[1].retracted && steps[1].retracted_at.is_some());
    assert!(!steps[0].retracted);
    // Next step continues the log; ids are rebuilt by replay, so the new
    // transfer gets the id the retracted one had.
    let s = rec
        .step(
            Action::tool(
                "transfer",
                json!({"from_id": "A-1", "to_id": "A-2", "amount": 1}),
            ),
            None,
        )
        .unwrap();
    assert_eq!(s.record.idx, 2);
    assert_eq!(s.outcome.observation.content["id"], "TR-000002");
}

#[test]
fn pause_blocks_steps_and_stops_the_clock() {
    let (_d, store) = store();
    let mut rec =
        Recorder::start(store.clone(), common::mini(), "pay-back", expert(&store), 0).unwrap();
    rec.pause().unwrap();
    assert_eq!(
        store.episode(&rec.record().id).unwrap().status,
        EpisodeStatus::Paused
    );
    let before = rec.active_ms();
    std::thread::sleep(std::time::Duration::from_millis(30));
    assert_eq!(rec.active_ms(), before, "paused time is not active time");
    assert!(matches!(
        rec.step(Action::message("x"), None),
        Err(Error::Conflict(_))
    ));
    rec.resume().unwrap();
    rec.step(Action::message("x"), None).unwrap();
}

#[test]
fn reopening_rebuilds_state_and_continues() {
    let (dir, store) = store();
    let world = common::mini();
    let id = {
        let mut rec =
            Recorder::start(store.clone(), world.clone(), "pay-back", expert(&store), 0).unwrap();
        rec.step(
            Action::tool(
                "transfer",
                json!({"from_id": "A-1", "to_id": "A-2", "amount": 25}),
            ),
            None,
        )
        .unwrap();
        rec.step(Action::message("ok?"), None).unwrap();
        rec.record().id.clone()
    };
    drop(store);
    let store = Arc::new(Store::open(dir.path().join("store.sqlite")).unwrap());
    let mut rec = Recorder::reopen(store.clone(), world, &id, false).unwrap();
    assert_eq!(rec.steps().len(), 2);
    let changes = serde_json::to_value(rec.changes().unwrap()).unwrap();
    assert_eq!(
        changes["accounts"]["changed"]["A-1"]["balance"],
        json!(75.0)
    );
    // Scripted replies continue where they were.
    let reply = rec.step(Action::message("done"), None).unwrap();
    assert_eq!(reply.outcome.observation.text, "Thanks!");
    assert_eq!(reply.record.idx, 2);
}

#[test]
fn reopening_against_a_changed_world_is_refused_unless_forced() {
    let (_d, store) = store();
    let dir = common::copy_world(&common::mini_dir());
    let world = Arc::new(understudy::World::load(dir.path()).unwrap());
    let id = Recorder::start(store.clone(), world, "pay-back", expert(&store), 0)
        .unwrap()
        .record()
        .id
        .clone();
    common::replace(dir.path(), "policy.md", "frozen", "locked");
    let changed = Arc::new(understudy::World::load(dir.path()).unwrap());
    match Recorder::reopen(store.clone(), changed.clone(), &id, false) {
        Err(Error::WorldChanged(m)) => {
            assert!(m.contains("has changed") && m.contains("--force"), "{m}")
        }
        other => panic!("expected WorldChanged, got {:?}", other.err()),
    }
    Recorder::reopen(store, changed, &id, true).unwrap();
}

#[test]
fn reviews_move_submitted_episodes_only() {
    let (_d, store) = store();
    let mut rec =
        Recorder::start(store.clone(), common::mini(), "pay-back", expert(&store), 0).unwrap();
    let id = rec.record().id.clone();
    assert!(matches!(
        store.add_review(&id, "lead", Decision::Approve, ""),
        Err(Error::Conflict(_))
    ));
    rec.submit(Some("final".into())).unwrap();
    let r = store
        .add_review(&id, "lead", Decision::Reject, "missed verification")
        .unwrap();
    assert_eq!(r.comment, "missed verification");
    assert_eq!(store.episode(&id).unwrap().status, EpisodeStatus::Rejected);
    assert_eq!(store.reviews(&id).unwrap().len(), 1);
    let filter = EpisodeFilter {
        status: Some(EpisodeStatus::Rejected),
        ..Default::default()
    };
    assert_eq!(store.episodes(&filter).unwrap().len(), 1);
}

/// Every refused review changes nothing: the status and the reviews stay.
#[test]
fn refused_reviews_change_nothing() {
    let (_d, store) = store();
    let unchanged = |id: &str, status: EpisodeStatus, reviews: usize| {
        assert_eq!(store.episode(id).unwrap().status, status);
        assert_eq!(store.reviews(id).unwrap().len(), reviews);
    };
    match store.add_review("no-such-episode", "lead", Decision::Approve, "") {
        Err(Error::NotFound(m)) => assert!(m.contains("no-such-episode"), "{m}"),
        other => panic!("expected NotFound, got {other:?}"),
    }

    let mut rec =
        Recorder::start(store.clone(), common::mini(), "pay-back", expert(&store), 0).unwrap();
    let id = rec.record().id.clone();
    match store.add_review(&id, "lead", Decision::Approve, "") {
        Err(Error::Conflict(m)) => assert!(m.contains("is in progress"), "{m}"),
        other => panic!("expected Conflict, got {other:?}"),
    }
    unchanged(&id, EpisodeStatus::InProgress, 0);
    rec.submit(None).unwrap();

    for comment in ["", "  "] {
        match store.add_review(&id, "lead", Decision::Reject, comment) {
            Err(Error::Conflict(m)) => assert!(m.contains("needs a comment"), "{m}"),
            other => panic!("expected Conflict, got {other:?}"),
        }
    }
    assert!(matches!(
        store.add_review(&id, " ", Decision::Approve, ""),
        Err(Error::Conflict(_))
    ));
    unchanged(&id, EpisodeStatus::Submitted, 0);

    store
        .add_review(&id, "lead", Decision::Approve, "")
        .unwrap();
    for decision in [Decision::Approve, Decision::Reject] {
        match store.add_review(&id, "other", decision, "second opinion") {
            Err(Error::Conflict(m)) => {
                assert!(m.contains("already approved by lead"), "{m}")
            }
            other => panic!("expected Conflict, got {other:?}"),
        }
    }
    unchanged(&id, EpisodeStatus::Approved, 1);

    let mut rec =
        Recorder::start(store.clone(), common::mini(), "pay-back", expert(&store), 0).unwrap();
    rec.abandon().unwrap();
    let abandoned = rec.record().id.clone();
    match store.add_review(&abandoned, "lead", Decision::Approve, "") {
        Err(Error::Conflict(m)) => assert!(m.contains("is abandoned"), "{m}"),
        other => panic!("expected Conflict, got {other:?}"),
    }
    unchanged(&abandoned, EpisodeStatus::Abandoned, 0);
}

/// The review queue counts kept steps (undone ones left out), carries the
/// latest review and applies the filter.
#[test]
fn episode_summaries_count_kept_steps_and_show_the_latest_review() {
    let (_d, store) = store();
    let actor = expert(&store);
    let mut rec =
        Recorder::start(store.clone(), common::mini(), "pay-back", actor.clone(), 0).unwrap();
    rec.step(Action::message("one"), None).unwrap();
    rec.step(Action::message("two"), None).unwrap();
    rec.undo().unwrap();
    rec.submit(None).unwrap();
    let first = rec.record().id.clone();
    let mut rec = Recorder::start(store.clone(), common::mini(), "frozen", actor, 0).unwrap();
    rec.submit(None).unwrap();
    let second = rec.record().id.clone();
    store
        .add_review(&second, "lead", Decision::Reject, "do something")
        .unwrap();

    let all = store.episode_summaries(&EpisodeFilter::default()).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(
        (all[0].record.id.as_str(), all[0].kept_steps),
        (first.as_str(), 1)
    );
    assert_eq!(all[0].last_review, None);
    assert_eq!(all[1].kept_steps, 0);
    let review = all[1].last_review.as_ref().expect("the rejection");
    assert_eq!(
        (review.reviewer.as_str(), review.decision),
        ("lead", Decision::Reject)
    );
    assert_eq!(review.comment, "do something");

    let submitted = EpisodeFilter {
        status: Some(EpisodeStatus::Submitted),
        ..Default::default()
    };
    let queue = store.episode_summaries(&submitted).unwrap();
    assert_eq!(
        queue.iter().map(|s| &s.record.id).collect::<Vec<_>>(),
        vec![&first]
    );
    let frozen = EpisodeFilter {
        task_id: Some("frozen".into()),
        ..Default::default()
    };
    assert_eq!(
        store.episode_summaries(&frozen).unwrap()[0].record.id,
        second
    );
}

/// `ensure_expert` creates an expert under the id it is given, renames it
/// only when asked, and keeps the rest of its profile.
#[test]
fn ensure_expert_creates_under_the_given_id_and_renames() {
    let (_d, store) = store();
    let e = store.ensure_expert("dana", None).unwrap();
    assert_eq!((e.id.as_str(), e.name.as_str()), ("dana", "dana"));
    let e = store.ensure_expert("dana", Some("Dana Reyes")).unwrap();
    assert_eq!(e.name, "Dana Reyes");
    let before = store
        .save_expert(
            Some("dana"),
            &ExpertInput {
                name: "Dana Reyes".into(),
                domain: "Support".into(),
                ..Default::default()
            },
        )
        .unwrap();
    let after = store.ensure_expert("dana", None).unwrap();
    assert_eq!(after, before, "no name given: nothing changes");
    assert_eq!(
        store
            .ensure_expert("dana", Some("D. Reyes"))
            .unwrap()
            .domain,
        "Support"
    );
    assert_eq!(store.experts().unwrap().len(), 1);
    assert!(matches!(
        store.ensure_expert(" ", None),
        Err(Error::Conflict(_))
    ));
    assert!(matches!(
        store.ensure_expert("lee", Some("")),
        Err(Error::Conflict(_))
    ));
    assert!(matches!(store.expert("lee"), Err(Error::NotFound(_))));
}

#[test]
fn foreign_corrupt_and_newer_files_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    // Another program's SQLite file.
    let foreign = dir.path().join("foreign.sqlite");
    {
        let c = rusqlite::Connection::open(&foreign).unwrap();
        c.execute_batch("CREATE TABLE invoices (id INTEGER); INSERT INTO invoices VALUES (1);")
            .unwrap();
    }
    let before = std::fs::read(&foreign).unwrap();
    let err = Store::open(&foreign).unwrap_err().to_string();
    assert!(err.contains("another program"), "{err}");
    assert_eq!(std::fs::read(&foreign).unwrap(), before);

    // Not SQLite at all.
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(
        &junk,
        b"this is not a database, just some text that is long enough to be a header....",
    )
    .unwrap();
    let before = std::fs::read(&junk).unwrap();
    let err = Store::open(&junk).unwrap_err().to_string();
    assert!(err.contains("not an Understudy store"), "{err}");
    assert_eq!(std::fs::read(&junk).unwrap(), before);

    // A store from a newer build.
    let newer = dir.path().join("newer.sqlite");
    drop(Store::open(&newer).unwrap());
    {
        let c = rusqlite::Connection::open(&newer).unwrap();
        c.execute_batch("PRAGMA user_version = 99;").unwrap();
    }
    let err = Store::open(&newer).unwrap_err().to_string();
    assert!(
        err.contains("newer Understudy") && err.contains("99"),
        "{err}"
    );
}

#[test]
fn import_is_all_or_nothing() {
    let (_d, store) = store();
    let mut rec =
        Recorder::start(store.clone(), common::mini(), "pay-back", expert(&store), 0).unwrap();
    rec.step(Action::message("hi"), None).unwrap();
    let record = store.episode(&rec.record().id).unwrap();
    let steps = store.steps(&record.id).unwrap();
    let mut fresh = record.clone();
    fresh.id = understudy::store::new_uuid();
    // The second entry collides with an existing id: nothing is stored.
    let err = store
        .import(&[
            Trajectory {
                record: fresh.clone(),
                steps: steps.clone(),
            },
            Trajectory {
                record: record.clone(),
                steps: steps.clone(),
            },
        ])
        .unwrap_err();
    assert!(err.to_string().contains("already in the store"));
    assert!(matches!(store.episode(&fresh.id), Err(Error::NotFound(_))));
    store
        .import(&[Trajectory {
            record: fresh.clone(),
            steps,
        }])
        .unwrap();
    assert_eq!(store.steps(&fresh.id).unwrap().len(), 1);
}

#[test]
fn pauses_undos_why_edits_and_the_opening_client_are_events_in_order() {
    let (_d, store) = store();
    let mut rec =
        Recorder::start(store.clone(), common::mini(), "pay-back", expert(&store), 0).unwrap();
    rec.opened_by("understudy-app 9.9.9").unwrap();
    rec.step(Action::message("first"), Some("why one".into()))
        .unwrap();
    rec.annotate(0, Some("why two".into()), None).unwrap();
    // Saving the same text again is not an edit.
    rec.annotate(0, Some("why two".into()), None).unwrap();
    rec.pause().unwrap();
    rec.resume().unwrap();
    rec.undo().unwrap();
    let id = rec.record().id.clone();
    let events = store.events(&id).unwrap();
    let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            EventKind::Opened,
            EventKind::Annotated,
            EventKind::Paused,
            EventKind::Resumed,
            EventKind::Undone
        ]
    );
    assert_eq!(events[0].detail["client"], "understudy-app 9.9.9");
    assert_eq!(events[0].detail["engine"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        events[1].detail,
        json!({"step": 0, "before": {"rationale": "why one", "flag": null}, "after": {"rationale": "why two", "flag": null}})
    );
    assert_eq!(events[4].detail, json!({"step": 0, "steps": 1}));
    // The step keeps the latest why; the first one survives in the event.
    assert_eq!(
        store.steps(&id).unwrap()[0].rationale.as_deref(),
        Some("why two")
    );
}

#[test]
fn redo_takes_the_undone_step_again_and_is_an_event() {
    let (_d, store) = store();
    let world = common::mini();
    let mut rec =
        Recorder::start(store.clone(), world.clone(), "pay-back", expert(&store), 0).unwrap();
    let id = rec.record().id.clone();
    rec.step(Action::message("first"), None).unwrap();
    let transfer = Action::tool(
        "transfer",
        json!({"from_id": "A-1", "to_id": "A-2", "amount": 25}),
    );
    let paid = rec
        .step(transfer.clone(), Some("pay Charles back".into()))
        .unwrap();
    let after_step = rec.changes().unwrap();
    assert!(!rec.transitions().can_redo, "nothing undone yet");
    assert_eq!(rec.redo().unwrap(), None);
    assert_eq!(rec.undo().unwrap(), Some(1));
    assert_ne!(rec.changes().unwrap(), after_step);
    assert!(rec.transitions().can_redo);
    assert_eq!(rec.redo().unwrap(), Some(2), "a new step");
    assert_eq!(
        rec.changes().unwrap(),
        after_step,
        "the world is as before the undo"
    );
    let stored = store.steps(&id).unwrap();
    assert!(stored[1].retracted, "the undo is never taken back");
    assert!(!stored[2].retracted);
    assert_eq!(stored[2].action, transfer);
    assert_eq!(
        stored[2].observation, paid.record.observation,
        "the same result"
    );
    assert_eq!(stored[2].rationale.as_deref(), Some("pay Charles back"));
    assert!(!rec.transitions().can_redo, "redone: nothing left to redo");

    // Undo both kept steps; redo takes the last undone first, then the other.
    assert_eq!(rec.undo().unwrap(), Some(2));
    assert_eq!(rec.undo().unwrap(), Some(0));
    assert_eq!(rec.redo().unwrap(), Some(3));
    assert_eq!(
        store.steps(&id).unwrap()[3].action,
        Action::message("first")
    );
    let events: Vec<(EventKind, serde_json::Value)> = store
        .events(&id)
        .unwrap()
        .into_iter()
        .map(|e| (e.kind, e.detail))
        .collect();
    assert_eq!(
        events,
        [
            (EventKind::Undone, json!({"step": 1, "steps": 2})),
            (EventKind::Redone, json!({"step": 2, "of": 1, "steps": 3})),
            (EventKind::Undone, json!({"step": 2, "steps": 3})),
            (EventKind::Undone, json!({"step": 0, "steps": 3})),
            (EventKind::Redone, json!({"step": 3, "of": 0, "steps": 4})),
        ]
    );

    // After a restart the rest of what was undone can still be redone...
    drop(rec);
    let mut rec = Recorder::reopen(store.clone(), world.clone(), &id, false).unwrap();
    assert!(rec.transitions().can_redo);
    assert_eq!(rec.redo().unwrap(), Some(4));
    assert_eq!(store.steps(&id).unwrap()[4].action, transfer);
    assert!(!rec.transitions().can_redo);
    // ...and a new step after an undo ends redo, now and after a restart.
    rec.undo().unwrap();
    rec.step(Action::message("second thoughts"), None).unwrap();
    assert!(!rec.transitions().can_redo);
    assert_eq!(rec.redo().unwrap(), None);
    drop(rec);
    let rec = Recorder::reopen(store.clone(), world, &id, false).unwrap();
    assert!(
        !rec.transitions().can_redo,
        "a new step since the undo ends redo"
    );
    let kept: Vec<Action> = rec.trajectory().actions();
    assert_eq!(
        kept,
        [Action::message("first"), Action::message("second thoughts")]
    );
}

#[test]
fn drafts_survive_reopening_the_store_and_empty_text_clears_them() {
    let (dir, store) = store();
    let rec =
        Recorder::start(store.clone(), common::mini(), "pay-back", expert(&store), 0).unwrap();
    let id = rec.record().id.clone();
    store
        .save_draft(&id, "message", "Hi Dana, I'm looking")
        .unwrap();
    store
        .save_draft(&id, "message", "Hi Dana, I'm looking into it")
        .unwrap();
    store
        .save_draft(&id, "tool:transfer", r#"{"amount":25}"#)
        .unwrap();
    drop(rec);
    drop(store);
    let store = Store::open(dir.path().join("store.sqlite")).unwrap();
    let drafts = store.drafts(&id).unwrap();
    let got: Vec<(&str, &str)> = drafts
        .iter()
        .map(|d| (d.slot.as_str(), d.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("message", "Hi Dana, I'm looking into it"),
            ("tool:transfer", r#"{"amount":25}"#)
        ]
    );
    store.save_draft(&id, "message", "").unwrap();
    assert_eq!(store.drafts(&id).unwrap().len(), 1);
}

#[test]
fn a_draft_for_no_episode_an_empty_slot_or_too_much_text_is_refused() {
    let (_d, store) = store();
    let rec =
        Recorder::start(store.clone(), common::mini(), "pay-back", expert(&store), 0).unwrap();
    let id = rec.record().id.clone();
    assert!(matches!(
        store.save_draft("no-such-episode", "message", "x"),
        Err(Error::NotFound(_))
    ));
    let err = store.save_draft(&id, " ", "x").unwrap_err().to_string();
    assert!(err.contains("slot"), "{err}");
    let big = "x".repeat(understudy::store::MAX_DRAFT_BYTES + 1);
    let err = store
        .save_draft(&id, "message", &big)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at most"), "{err}");
    assert!(store.drafts(&id).unwrap().is_empty(), "nothing half-saved");
}

#[test]
fn a_checkpoint_saves_active_time_between_steps() {
    let (dir, store) = store();
    let mut rec =
        Recorder::start(store.clone(), common::mini(), "pay-back", expert(&store), 0).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    rec.checkpoint().unwrap();
    let id = rec.record().id.clone();
    let saved = Store::open(dir.path().join("store.sqlite"))
        .unwrap()
        .episode(&id)
        .unwrap()
        .active_ms;
    assert!(saved >= 30, "saved {saved} ms");
    rec.submit(None).unwrap();
    assert!(
        rec.checkpoint().is_err(),
        "a submitted episode's time is final"
    );
}

/// In the app the reviewer is an expert profile: the review is recorded
/// under their name, and nobody reviews their own episode.
#[test]
fn an_expert_reviews_others_episodes_under_their_name_never_their_own() {
    let (_d, store) = store();
    let author = expert(&store);
    let Actor::Expert { id: author_id } = author.clone() else {
        unreachable!()
    };
    let reviewer = store
        .save_expert(
            None,
            &ExpertInput {
                name: "Lee Park".into(),
                ..ExpertInput::default()
            },
        )
        .unwrap();
    let mut rec = Recorder::start(store.clone(), common::mini(), "pay-back", author, 0).unwrap();
    let id = rec.record().id.clone();
    rec.submit(None).unwrap();

    match store.add_expert_review(&id, &author_id, Decision::Approve, "") {
        Err(Error::Conflict(m)) => {
            assert!(
                m.contains("recorded by Dana Reyes, who cannot review their own work"),
                "{m}"
            )
        }
        other => panic!("expected Conflict, got {other:?}"),
    }
    match store.add_expert_review(&id, "nobody", Decision::Approve, "") {
        Err(Error::NotFound(m)) => assert!(m.contains("expert nobody"), "{m}"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    match store.add_expert_review("no-such-episode", &reviewer.id, Decision::Approve, "") {
        Err(Error::NotFound(m)) => assert!(m.contains("no-such-episode"), "{m}"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert_eq!(store.episode(&id).unwrap().status, EpisodeStatus::Submitted);
    assert!(store.reviews(&id).unwrap().is_empty());

    // The store's own rules still hold: a rejection needs its comment.
    assert!(matches!(
        store.add_expert_review(&id, &reviewer.id, Decision::Reject, " "),
        Err(Error::Conflict(_))
    ));
    let r = store
        .add_expert_review(
            &id,
            &reviewer.id,
            Decision::Reject,
            "Verify the account first",
        )
        .unwrap();
    assert_eq!(
        (r.reviewer.as_str(), r.decision),
        ("Lee Park", Decision::Reject)
    );
    assert_eq!(store.episode(&id).unwrap().status, EpisodeStatus::Rejected);
}

/// Many sessions stepping at once over one store (the agent server's
/// case, where their steps are group-committed): every acknowledged step
/// is stored exactly once, in order, under its own episode, and nothing
/// else is.
#[test]
fn concurrent_sessions_steps_land_exactly_once_and_in_order() {
    const SESSIONS: usize = 8;
    const ROUNDS: usize = 3;
    let (_d, store) = store();
    let world = common::mini();
    let threads: Vec<_> = (0..SESSIONS)
        .map(|i| {
            let (store, world) = (Arc::clone(&store), Arc::clone(&world));
            std::thread::spawn(move || {
                let mut acknowledged = Vec::new();
                for round in 0..ROUNDS {
                    let actor = Actor::Agent {
                        model: format!("session-{i}-{round}"),
                    };
                    let mut rec = Recorder::start(
                        Arc::clone(&store),
                        Arc::clone(&world),
                        "pay-back",
                        actor,
                        0,
                    )
                    .unwrap();
                    while !rec.is_done() {
                        let text = format!("session {i} round {round} step {}", rec.steps().len());
                        rec.step(Action::message(text), None).unwrap();
                    }
                    acknowledged.push(rec.trajectory().clone());
                }
                acknowledged
            })
        })
        .collect();
    let mut episodes = 0;
    for t in threads {
        for acknowledged in t.join().expect("a session thread panicked") {
            let stored = store.steps(&acknowledged.record.id).unwrap();
            assert!(!stored.is_empty());
            assert_eq!(
                stored, acknowledged.steps,
                "episode {}: stored steps differ from the acknowledged ones",
                acknowledged.record.id
            );
            let idx: Vec<u32> = stored.iter().map(|s| s.idx).collect();
            assert_eq!(idx, (0..stored.len() as u32).collect::<Vec<_>>());
            episodes += 1;
        }
    }
    assert_eq!(episodes, SESSIONS * ROUNDS);
    let all = store.episodes(&EpisodeFilter::default()).unwrap();
    assert_eq!(all.len(), SESSIONS * ROUNDS, "no stray episodes");
    store.integrity_check().unwrap();
}
