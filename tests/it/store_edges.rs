//! The store at its edges: racing creators, busy writers, read-only files
//! and damaged schemas.

use understudy_testkit as common;

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use understudy::store::Store;
use understudy::trajectory::Trajectory;

#[test]
fn processes_creating_the_same_new_store_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..12 {
        let path = dir.path().join(format!("new-{round}.sqlite"));
        let creators = 6;
        let barrier = Arc::new(Barrier::new(creators));
        let threads: Vec<_> = (0..creators)
            .map(|_| {
                let (path, barrier) = (path.clone(), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&path).map(drop).map_err(|e| e.to_string())
                })
            })
            .collect();
        for t in threads {
            let result = t.join().expect("no panic");
            assert!(result.is_ok(), "round {round}: {}", result.unwrap_err());
        }
        let store = Store::open(&path).expect("reopens");
        store.integrity_check().expect("sound");
        assert!(store.episodes(&Default::default()).unwrap().is_empty());
    }
}

/// One recorded episode, and a copy of it under a new id for importing.
fn one_episode(store: &Arc<Store>) -> Trajectory {
    let rec = common::record_mini(store, "pay-back", &[serde_json::json!({"message": "hi"})]);
    let mut record = store.episode(&rec.record().id).unwrap();
    let steps = store.steps(&record.id).unwrap();
    record.id = understudy::store::new_uuid();
    Trajectory { record, steps }
}

#[test]
fn a_writer_waits_out_another_process_holding_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("busy.sqlite");
    let store = Arc::new(Store::open(&path).unwrap());
    for _ in 0..3 {
        let episode = one_episode(&store);
        let id = episode.record.id.clone();
        // Another process (here: another connection) writes for a while.
        let held = Arc::new(Barrier::new(2));
        let other = {
            let (path, held) = (path.clone(), Arc::clone(&held));
            std::thread::spawn(move || {
                let conn = rusqlite::Connection::open(&path).unwrap();
                conn.execute_batch(
                    "BEGIN IMMEDIATE; INSERT INTO experts (id, name, created_at, updated_at) VALUES (hex(randomblob(8)), 'x', 'now', 'now');",
                )
                .unwrap();
                held.wait();
                std::thread::sleep(Duration::from_millis(400));
                conn.execute_batch("COMMIT").unwrap();
            })
        };
        held.wait();
        store
            .import(std::slice::from_ref(&episode))
            .expect("the import waits for the other writer instead of failing");
        other.join().unwrap();
        assert_eq!(store.episode(&id).unwrap().id, id);
    }
}

/// A store file with every table the migrations create, then `damage`
/// applied behind the store's back.
fn damaged(dir: &Path, name: &str, damage: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(damage).unwrap();
    drop(conn);
    path
}

#[test]
fn a_damaged_or_half_migrated_schema_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    for (name, damage, mentions) in [
        ("no-scores.sqlite", "DROP TABLE scores;", "`scores`"),
        (
            "no-reviews.sqlite",
            "DROP INDEX reviews_by_episode; DROP TABLE reviews;",
            "`reviews`",
        ),
        (
            "no-column.sqlite",
            "ALTER TABLE steps DROP COLUMN flag;",
            "`steps.flag`",
        ),
        (
            "wrong-type.sqlite",
            "DROP TABLE judgments; CREATE TABLE judgments (id INTEGER PRIMARY KEY, episode_id TEXT, criterion_id TEXT, criterion_hash TEXT, met TEXT, reason TEXT, judge TEXT, at TEXT); CREATE INDEX judgments_by_episode ON judgments (episode_id, criterion_id, id);",
            "`judgments.met`",
        ),
        (
            "half-migrated.sqlite",
            // At the newest schema version by its number, without a table
            // an earlier migration made.
            "DROP INDEX episode_events_by_episode; DROP TABLE episode_events;",
            "`episode_events`",
        ),
        (
            "no-rubric-versions.sqlite",
            "DROP INDEX rubric_versions_by_task; DROP TABLE rubric_versions;",
            "`rubric_versions`",
        ),
    ] {
        let path = damaged(dir.path(), name, damage);
        // Close enough to "untouched": the main file's bytes and no WAL.
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).unwrap_err().to_string();
        assert!(
            err.contains("damaged") && err.contains(mentions) && err.contains("untouched"),
            "{name}: {err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before, "{name} was changed");
        let err = Store::open_read_only(&path).unwrap_err().to_string();
        assert!(err.contains(mentions), "{name} (read-only): {err}");
    }
}

#[test]
fn a_store_opened_read_only_reads_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ro.sqlite");
    let store = Arc::new(Store::open(&path).unwrap());
    let episode = one_episode(&store);
    let record = episode.record.clone();
    store.import(&[episode]).unwrap();
    drop(store);
    let before = std::fs::read(&path).unwrap();
    let ro = Store::open_read_only(&path).expect("opens read-only");
    assert!(ro.is_read_only());
    assert_eq!(ro.episodes(&Default::default()).unwrap().len(), 2);
    assert_eq!(ro.steps(&record.id).unwrap().len(), 1);
    assert!(ro.retract_step(&record.id, 0).is_err(), "no writes");
    drop(ro);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}
