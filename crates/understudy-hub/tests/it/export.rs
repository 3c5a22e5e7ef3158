//! An export from the hub is byte-identical to an export of the same
//! episodes from the expert's own store, in every format, rewards
//! included: the hub's episodes come back as the engine's own bundles, its
//! scores as their rewards, and the engine writes them. The grades beside
//! them (judgments with their scale level, overrides of checks) are the
//! local ones.

use std::collections::BTreeSet;

use understudy::export::{self, ExportOptions, Format, Source, WorldSet};
use understudy_hub::client::{EpisodeQuery, PushOptions};
use understudy_hub::Role;

use crate::support::*;

#[test]
fn an_export_from_the_hub_equals_the_local_export_byte_for_byte() {
    let Some(server) = server_url() else { return };
    let db = fresh_database(&server);
    let hub = hub_in_process(&db, understudy_hub::DEFAULT_MAX_BODY_BYTES);
    let admin = person(&db, "admin", Role::Admin);
    let engineer = person(&db, "eng", Role::Engineer);
    let expert = person(&db, "ada", Role::Expert);
    client(&hub.url, &admin)
        .add_world(&mini_dir())
        .expect("the world uploads");
    let (_dir, store) = local_store();
    let episodes = record(&store, "x-ada", 5);
    client(&hub.url, &expert)
        .push(&store, PushOptions::default())
        .expect("the push");
    // Graded locally: a pass, a pending score, a re-score (the latest
    // counts), and two episodes never scored. The engineer pushes them.
    let score = score_of;
    store
        .save_scores(&[
            score(&episodes[0], Some(0.75), Some(true)),
            score(&episodes[1], None, None),
            score(&episodes[2], Some(0.25), Some(false)),
        ])
        .expect("scores");
    store
        .save_scores(&[score(&episodes[2], Some(1.0), Some(true))])
        .expect("a re-score");
    store
        .save_judgment(
            &episodes[1],
            &understudy::store::JudgmentRecord {
                criterion_id: "tone".into(),
                criterion_hash: None,
                met: true,
                reason: "polite".into(),
                judge: "grader".into(),
                at: String::new(),
                level: Some("Warm".into()),
            },
        )
        .expect("a judgment on a scale");
    store
        .save_override(
            &episodes[0],
            &understudy::store::OverrideRecord {
                criterion_id: "paid".into(),
                criterion_hash: None,
                original_met: Some(true),
                met: false,
                reason: "Paid the wrong account".into(),
                grader: "grader".into(),
                at: String::new(),
            },
        )
        .expect("an override");
    let pushed = client(&hub.url, &engineer)
        .push_grades(&store, PushOptions::default())
        .expect("the grades push");
    assert_eq!(
        (
            pushed.scores_added,
            pushed.judgments_added,
            pushed.overrides_added
        ),
        (4, 1, 1)
    );
    // The grades an export is read with are the local ones, level and
    // override included.
    let hub_judgments = client(&hub.url, &engineer)
        .judgments(&EpisodeQuery::default())
        .expect("the hub's judgments");
    assert_eq!(
        hub_judgments
            .iter()
            .map(|j| (j.episode_id.clone(), j.judgment.clone()))
            .collect::<Vec<_>>(),
        vec![(
            episodes[1].clone(),
            store.judgments(&episodes[1]).expect("local")[0].clone()
        )]
    );
    let hub_overrides = client(&hub.url, &engineer)
        .overrides(&EpisodeQuery::default())
        .expect("the hub's overrides");
    assert_eq!(hub_overrides.len(), 1);
    assert_eq!(hub_overrides[0].episode_id, episodes[0]);
    assert_eq!(
        hub_overrides[0].record,
        store.overrides(&episodes[0]).expect("local")[0]
    );

    let worlds_dir = mini_dir()
        .parent()
        .expect("the worlds folder")
        .to_path_buf();
    let ids: BTreeSet<String> = ["mini".to_string()].into();
    let worlds = WorldSet::load(&worlds_dir, &ids).expect("the worlds");
    let (from_hub, rewards) = client(&hub.url, &engineer)
        .export_scored(&EpisodeQuery::default())
        .expect("the hub's export");
    assert_eq!(from_hub.len(), 5);
    assert_eq!(rewards.len(), 3, "three episodes have scores");
    for format in [Format::Native, Format::Trl, Format::OpenAi] {
        for include_retracted in [false, true] {
            if format == Format::Native && include_retracted {
                continue;
            }
            let options = ExportOptions {
                format,
                include_retracted,
                ..ExportOptions::default()
            };
            let write = |source: &Source<'_>| {
                let mut out = Vec::new();
                let summary =
                    export::write_jsonl(source, Some(&worlds), &options, &mut out, &|| {})
                        .expect("an export");
                (out, summary.steps)
            };
            let (local, local_steps) = write(&Source::Store(&store));
            let (remote, remote_steps) = write(&Source::Scored(&from_hub, &rewards));
            assert!(!local.is_empty());
            if format == Format::Trl {
                // The rewards are there, not nulls on both sides.
                let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&remote)
                    .lines()
                    .map(|l| serde_json::from_str(l).expect("a row"))
                    .collect();
                let of = |id: &str| {
                    let row = rows
                        .iter()
                        .find(|r| r["episode_id"] == id)
                        .expect("the episode's row");
                    (row["reward"].clone(), row["pass"].clone())
                };
                assert_eq!(of(&episodes[0]), (0.75.into(), true.into()));
                assert_eq!(
                    of(&episodes[1]),
                    (serde_json::Value::Null, serde_json::Value::Null)
                );
                assert_eq!(of(&episodes[2]), (1.0.into(), true.into()));
                assert_eq!(of(&episodes[3]).0, serde_json::Value::Null);
            }
            assert_eq!(remote_steps, local_steps, "{format:?}");
            assert!(
                remote == local,
                "{format:?} (retracted: {include_retracted}) differs:\nlocal: {}\nhub:   {}",
                String::from_utf8_lossy(&local),
                String::from_utf8_lossy(&remote)
            );
        }
    }

    // The filters apply on the hub as locally.
    let submitted = client(&hub.url, &engineer)
        .export_bundles(&EpisodeQuery {
            status: Some(understudy::store::EpisodeStatus::Submitted),
            ..EpisodeQuery::default()
        })
        .expect("a filtered export");
    assert_eq!(submitted.len(), 3);
    let none = client(&hub.url, &engineer)
        .export_bundles(&EpisodeQuery {
            task: Some("frozen".into()),
            ..EpisodeQuery::default()
        })
        .expect("a filtered export");
    assert!(none.is_empty());
}
