//! An export from the hub is byte-identical to an export of the same
//! episodes from the expert's own store, in every format: the hub's
//! episodes come back as the engine's own bundles and the engine writes
//! them.

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
    record(&store, "x-ada", 5);
    client(&hub.url, &expert)
        .push(&store, PushOptions::default())
        .expect("the push");

    let worlds_dir = mini_dir()
        .parent()
        .expect("the worlds folder")
        .to_path_buf();
    let ids: BTreeSet<String> = ["mini".to_string()].into();
    let worlds = WorldSet::load(&worlds_dir, &ids).expect("the worlds");
    let from_hub = client(&hub.url, &engineer)
        .export_bundles(&EpisodeQuery::default())
        .expect("the hub's export");
    assert_eq!(from_hub.len(), 5);
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
            let (remote, remote_steps) = write(&Source::Episodes(&from_hub));
            assert!(!local.is_empty());
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
