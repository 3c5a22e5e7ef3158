//! Rubric versions, judgments and scores through the hub: graders push,
//! a retry adds nothing, each role reads what it may, and a wrong row
//! refuses its whole batch with nothing stored.

use understudy::store::{JudgmentRecord, ScoreRecord, StoredScore};
use understudy_hub::client::{EpisodeQuery, PushOptions};
use understudy_hub::wire::{EpisodeJudgment, GradesBatch, RubricQuery, RubricUpload};
use understudy_hub::Role;

use crate::support::*;

fn score(episode: &str, value: Option<f64>) -> StoredScore {
    StoredScore {
        id: 0,
        scored_at: "2026-01-02T03:04:05Z".into(),
        record: ScoreRecord {
            range: [0.0, 1.0],
            pending: 2,
            ..score_of(episode, value, Some(true))
        },
    }
}

fn judgment(episode: &str, reason: &str) -> EpisodeJudgment {
    EpisodeJudgment {
        episode_id: episode.into(),
        judgment: JudgmentRecord {
            criterion_id: "tone".into(),
            criterion_hash: None,
            met: true,
            reason: reason.into(),
            judge: "grader".into(),
            at: "2026-01-02T03:04:05Z".into(),
            level: None,
        },
    }
}

fn grades(db: &str) -> (i64, i64) {
    (
        count(db, "SELECT count(*) FROM scores"),
        count(db, "SELECT count(*) FROM judgments"),
    )
}

#[test]
fn graders_push_scores_and_judgments_once_and_each_role_reads_its_share() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_in_process(&db, understudy_hub::DEFAULT_MAX_BODY_BYTES);
    let admin = client(&hub.url, &person(&db, "admin", Role::Admin));
    let ada = client(&hub.url, &person(&db, "ada", Role::Expert));
    let grace = client(&hub.url, &person(&db, "grace", Role::Expert));
    let annotator = client(&hub.url, &person(&db, "ann", Role::Annotator));
    admin.add_world(&mini_dir()).expect("the world uploads");
    let (_dir, store) = local_store();
    let ids = record(&store, "x-ada", 2);
    ada.push(&store, PushOptions::default())
        .expect("ada pushes");

    let post =
        |who: &understudy_hub::client::Hub, batch: &GradesBatch| who.push_grades_batch(batch);
    let good = GradesBatch {
        scores: vec![score(&ids[0], Some(0.5))],
        judgments: vec![judgment(&ids[0], "polite and exact")],
        ..GradesBatch::default()
    };
    let first = post(&annotator, &good).expect("the annotator grades");
    assert_eq!((first.scores_added, first.judgments_added), (1, 1));
    let again = post(&annotator, &good).expect("a retry");
    assert_eq!((again.scores_added, again.judgments_added), (0, 0));
    assert_eq!(grades(&db), (1, 1), "a retry stores nothing twice");
    assert_eq!(
        count(&db, "SELECT count(*) FROM scores s JOIN people p ON p.id = s.changed_by WHERE p.login = 'ann'"),
        1,
        "a pushed score is attributed to its grader"
    );

    // Refusals: nothing of the batch is stored, the message says why.
    let refusals: Vec<(&str, &understudy_hub::client::Hub, GradesBatch, &str, &str)> = vec![
        (
            "an expert grading",
            &ada,
            good.clone(),
            "forbidden",
            "experts do not grade",
        ),
        (
            "an unknown episode after a good row",
            &annotator,
            GradesBatch {
                scores: vec![score(&ids[1], Some(0.9)), score("no-such", Some(0.1))],
                ..GradesBatch::default()
            },
            "not_found",
            "no episode no-such",
        ),
        (
            "a value above 1",
            &annotator,
            GradesBatch {
                scores: vec![score(&ids[1], Some(1.5))],
                ..GradesBatch::default()
            },
            "bad_request",
            "scores[0].record.value: 1.5 is outside 0..1",
        ),
        (
            "a judgment without a reason",
            &annotator,
            GradesBatch {
                scores: vec![score(&ids[1], Some(0.9))],
                judgments: vec![judgment(&ids[1], " ")],
                ..GradesBatch::default()
            },
            "bad_request",
            "judgments[0].judgment.reason: must not be empty",
        ),
        (
            "a score of another task",
            &annotator,
            GradesBatch {
                scores: vec![StoredScore {
                    record: ScoreRecord {
                        task_id: "frozen".into(),
                        ..score(&ids[1], Some(0.9)).record
                    },
                    ..score(&ids[1], Some(0.9))
                }],
                ..GradesBatch::default()
            },
            "bad_request",
            "names task `frozen`",
        ),
    ];
    for (what, who, batch, code, says) in refusals {
        let e = post(who, &batch).expect_err(what);
        assert_eq!(e.code(), Some(code), "{what}: {e}");
        assert!(e.to_string().contains(says), "{what}: {e}");
        assert_eq!(grades(&db), (1, 1), "{what}: nothing stored");
    }

    // Reading: the owner and the graders see the grades; another expert
    // sees none of them.
    let mine = ada.scores(&EpisodeQuery::default()).expect("ada's scores");
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].record.value, Some(0.5));
    assert_eq!(mine[0].record.pending, 2, "the pending count survives");
    assert_eq!(mine[0].scored_at, "2026-01-02T03:04:05Z");
    assert_eq!(
        ada.judgments(&EpisodeQuery::default())
            .expect("judgments")
            .len(),
        1
    );
    assert!(grace
        .scores(&EpisodeQuery::default())
        .expect("grace's")
        .is_empty());
    assert!(grace
        .judgments(&EpisodeQuery::default())
        .expect("grace's")
        .is_empty());
    let rewards = annotator
        .rewards(&EpisodeQuery::default())
        .expect("rewards");
    assert_eq!(rewards[&ids[0]].value, Some(0.5));
    assert_eq!(rewards[&ids[0]].pass, Some(true));
}

#[test]
fn rubric_versions_are_saved_once_by_their_writers_and_read_by_all() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_in_process(&db, understudy_hub::DEFAULT_MAX_BODY_BYTES);
    let annotator = client(&hub.url, &person(&db, "ann", Role::Annotator));
    let ada = client(&hub.url, &person(&db, "ada", Role::Expert));
    let reviewer = client(&hub.url, &person(&db, "rev", Role::Reviewer));
    let up = RubricUpload {
        world_id: "mini".into(),
        task_id: "pay-back".into(),
        version: "2".into(),
        hash: "a".repeat(64),
        path: "/home/ann/rubrics/mini/pay-back.toml".into(),
        content: "format = 1\n".into(),
        saved_by: Some("x-ann".into()),
        saved_at: String::new(),
    };
    let saved = annotator.add_rubric(&up).expect("the annotator saves");
    let again = annotator.add_rubric(&up).expect("the same bytes again");
    assert_eq!(saved, again, "the same version, not a second one");
    let newer = annotator
        .add_rubric(&RubricUpload {
            hash: "b".repeat(64),
            content: "format = 1\n# v3\n".into(),
            version: "3".into(),
            ..up.clone()
        })
        .expect("a new version");
    for (what, who, bad, code, says) in [
        (
            "an expert",
            &ada,
            up.clone(),
            "forbidden",
            "only annotators, engineers and admins",
        ),
        (
            "a reviewer",
            &reviewer,
            up.clone(),
            "forbidden",
            "only annotators",
        ),
        (
            "a bad hash",
            &annotator,
            RubricUpload {
                hash: "xyz".into(),
                ..up.clone()
            },
            "bad_request",
            "hash: `xyz` is not a content hash",
        ),
        (
            "no content",
            &annotator,
            RubricUpload {
                content: String::new(),
                hash: "c".repeat(64),
                ..up.clone()
            },
            "bad_request",
            "content: must not be empty",
        ),
    ] {
        let e = who.add_rubric(&bad).expect_err(what);
        assert_eq!(e.code(), Some(code), "{what}: {e}");
        assert!(e.to_string().contains(says), "{what}: {e}");
    }
    assert_eq!(count(&db, "SELECT count(*) FROM rubric_versions"), 2);
    let listed = ada
        .rubrics(&RubricQuery {
            world: Some("mini".into()),
            task: Some("pay-back".into()),
        })
        .expect("experts read the rubrics");
    assert_eq!(
        listed.iter().map(|v| v.id).collect::<Vec<_>>(),
        vec![newer.id, saved.id],
        "newest first"
    );
    assert_eq!(listed[1].content, "format = 1\n");
    assert!(ada
        .rubrics(&RubricQuery {
            world: Some("other".into()),
            task: None
        })
        .expect("none")
        .is_empty());
}
