//! Group commit: steps appended concurrently (the agent server's many
//! sessions over one store) share one transaction, so one fsync makes the
//! whole batch durable instead of one fsync per step. Episode headers
//! (a session starting) join the same batches, so starting an episode does
//! not pay an fsync of its own either.
//!
//! An appender queues its step, then takes the store's connection. Whoever
//! holds the connection while its own step is still queued leads: it takes
//! every queued step (its own and those of the sessions waiting behind it),
//! writes them in one transaction, commits, and settles each step's
//! outcome. An appender whose step a leader committed finds it settled when
//! it gets the connection and returns at once. No thread is added, and a
//! lone appender (the desktop app, the CLI) does what it did before: one
//! transaction, one commit.
//!
//! **Invariant:** an outcome is settled only after the commit returned, so
//! no step is acknowledged before it is durable. When the commit fails,
//! every step of the batch is settled with the error and the transaction is
//! rolled back, so none of them is stored or reported as recorded. A step
//! whose own insert fails (in a batch of several) is rolled back to its
//! savepoint alone and fails alone.

use std::sync::{Arc, Mutex, OnceLock};

use rusqlite::{params, Connection};

use super::{EpisodeRecord, StepRecord};

/// What became of one queued step: `Err` holds why it was not recorded.
pub(super) type Outcome = Result<(), String>;

/// Where a queued step's outcome is settled, once, by the batch's leader.
pub(super) type Slot = Arc<OnceLock<Outcome>>;

/// One step, serialized and ready to insert.
pub(super) struct StepRow {
    episode_id: String,
    idx: u32,
    action: String,
    observation: String,
    is_error: bool,
    terminated: bool,
    truncated: bool,
    wall_at: String,
    active_ms: i64,
    rationale: Option<String>,
    flag: Option<String>,
    retracted: bool,
    retracted_at: Option<String>,
}

impl StepRow {
    /// Serializes `step` (outside any lock: the JSON is the costly part).
    pub(super) fn new(episode_id: &str, step: &StepRecord) -> serde_json::Result<StepRow> {
        Ok(StepRow {
            episode_id: episode_id.to_string(),
            idx: step.idx,
            action: serde_json::to_string(&step.action)?,
            observation: serde_json::to_string(&step.observation)?,
            is_error: !step.observation.ok,
            terminated: step.terminated,
            truncated: step.truncated,
            wall_at: step.wall_at.clone(),
            active_ms: step.active_ms,
            rationale: step.rationale.clone(),
            flag: step.flag.clone(),
            retracted: step.retracted,
            retracted_at: step.retracted_at.clone(),
        })
    }
}

/// One write waiting for a group commit.
pub(super) enum Row {
    /// A step and its episode's active time.
    Step(StepRow),
    /// A new episode's header.
    Episode(Box<EpisodeRecord>),
}

impl Row {
    /// What the row is, for errors.
    fn what(&self) -> String {
        match self {
            Row::Step(s) => format!("step {} of episode {}", s.idx, s.episode_id),
            Row::Episode(e) => format!("episode {}", e.id),
        }
    }
}

/// Rows waiting for a leader to commit them, oldest first.
#[derive(Default)]
pub(super) struct Queue {
    pending: Mutex<Vec<(Row, Slot)>>,
}

impl Queue {
    /// Queues `row`; its outcome will be settled in the returned slot.
    pub(super) fn push(&self, row: Row) -> Slot {
        let slot = Slot::default();
        self.lock().push((row, Arc::clone(&slot)));
        slot
    }

    /// Takes every queued row.
    fn drain(&self) -> Vec<(Row, Slot)> {
        std::mem::take(&mut *self.lock())
    }

    /// Steps queued and not yet taken by a leader.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Row, Slot)>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Called with the store's connection held, by the owner of `slot`: its
/// outcome if a leader already settled it, else it leads, committing every
/// queued row in one transaction, then runs `after_commit` (the
/// checkpointer's look at the log) with the connection still held.
pub(super) fn settle(
    conn: &mut Connection,
    queue: &Queue,
    slot: &Slot,
    after_commit: impl FnOnce(&Connection),
) -> Outcome {
    if let Some(done) = slot.get() {
        return done.clone();
    }
    let batch = queue.drain();
    let outcomes = commit(conn, &batch);
    for ((_, s), outcome) in batch.iter().zip(outcomes) {
        // Each slot is settled exactly once: its row was in one batch.
        let _ = s.set(outcome);
    }
    after_commit(conn);
    slot.get().cloned().unwrap_or_else(|| {
        Err("the step was not in the batch its appender committed (a bug in the store)".into())
    })
}

/// Writes `batch` in one transaction and commits it: the outcome of each
/// row, in order.
fn commit(conn: &mut Connection, batch: &[(Row, Slot)]) -> Vec<Outcome> {
    let n = batch.len();
    let written = (|| -> rusqlite::Result<Vec<Outcome>> {
        let tx = conn.transaction()?;
        let outcomes = if n == 1 {
            // Alone, the transaction is the step's own: no savepoint needed.
            write(&tx, &batch[0].0)?;
            vec![Ok(())]
        } else {
            batch.iter().map(|(row, _)| write_alone(&tx, row)).collect()
        };
        tx.commit()?;
        Ok(outcomes)
    })();
    written.unwrap_or_else(|e| {
        let message = match batch {
            [(Row::Step(_), _)] => format!(
                "the step could not be committed (SQLite says: {e}); it was not recorded"
            ),
            [(row, _)] => format!(
                "{} could not be committed (SQLite says: {e}); it was not recorded",
                row.what()
            ),
            _ if batch.iter().all(|(r, _)| matches!(r, Row::Step(_))) => format!("a batch of {n} steps from concurrent sessions could not be committed (SQLite says: {e}); none of them was recorded"),
            _ => format!("a batch of {n} steps and new episodes from concurrent sessions could not be committed (SQLite says: {e}); none of them was recorded"),
        };
        vec![Err(message); n]
    })
}

/// Writes one row of a shared batch inside its own savepoint, so that its
/// failure undoes only its own rows.
fn write_alone(conn: &Connection, row: &Row) -> Outcome {
    let fail = |e: rusqlite::Error| format!("{} was not recorded: {e}", row.what());
    conn.prepare_cached("SAVEPOINT step")
        .and_then(|mut s| s.execute([]))
        .map_err(fail)?;
    match write(conn, row) {
        Ok(()) => conn
            .prepare_cached("RELEASE step")
            .and_then(|mut s| s.execute([]))
            .map(drop)
            .map_err(fail),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK TO step; RELEASE step");
            Err(fail(e))
        }
    }
}

fn write(conn: &Connection, row: &Row) -> rusqlite::Result<()> {
    match row {
        Row::Step(s) => write_step(conn, s),
        Row::Episode(e) => super::insert_episode(conn, e).map(drop),
    }
}

/// The step's row and its episode's active time.
fn write_step(conn: &Connection, s: &StepRow) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO steps (episode_id, idx, action, observation, is_error, terminated, truncated, wall_at, active_ms, rationale, flag, retracted, retracted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![s.episode_id, s.idx, s.action, s.observation, s.is_error, s.terminated, s.truncated, s.wall_at, s.active_ms, s.rationale, s.flag, s.retracted, s.retracted_at])?;
    conn.prepare_cached("UPDATE episodes SET active_ms = ?2, updated_at = ?3 WHERE id = ?1")?
        .execute(params![s.episode_id, s.active_ms, s.wall_at])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use crate::action::Action;
    use crate::error::Result;
    use crate::observation::Observation;
    use crate::store::{self, Actor, EpisodeRecord, StepRecord, Store};

    /// A store with `n` open episodes; their ids.
    fn episodes(dir: &std::path::Path, n: usize) -> (Arc<Store>, Vec<String>) {
        let store = Arc::new(Store::open(dir.join("store.sqlite")).expect("store opens"));
        let ids = (0..n)
            .map(|i| {
                let actor = Actor::Agent {
                    model: format!("session-{i}"),
                };
                let record = EpisodeRecord::begin("mini", "1", "h", "pay-back", 0, actor);
                store.insert_episode(&record).expect("episode stored");
                record.id
            })
            .collect();
        (store, ids)
    }

    fn step(idx: u32) -> StepRecord {
        StepRecord {
            idx,
            action: Action::message(format!("step {idx}")),
            observation: Observation::success(serde_json::Value::Null, format!("reply {idx}")),
            terminated: false,
            truncated: false,
            wall_at: store::now(),
            active_ms: i64::from(idx) * 10,
            rationale: None,
            flag: None,
            retracted: false,
            retracted_at: None,
        }
    }

    /// Step `idx` of every episode is appended at once while the
    /// connection is held, so all of them queue and the next leader
    /// commits them as one batch. `before_commit` runs with the connection
    /// held, once all are queued.
    fn one_batch(
        store: &Arc<Store>,
        ids: &[String],
        idx: u32,
        before_commit: impl FnOnce(&rusqlite::Connection),
    ) -> Vec<(String, Result<()>)> {
        let conn = store.lock();
        let threads: Vec<_> = ids
            .iter()
            .map(|id| {
                let (store, id) = (Arc::clone(store), id.clone());
                std::thread::spawn(move || {
                    let out = store.append_step(&id, &step(idx));
                    (id, out)
                })
            })
            .collect();
        let started = Instant::now();
        while store.steps.len() < ids.len() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "only {} of {} steps were queued",
                store.steps.len(),
                ids.len()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        before_commit(&conn);
        drop(conn);
        threads
            .into_iter()
            .map(|t| t.join().expect("an appending thread panicked"))
            .collect()
    }

    fn count_commits(conn: &rusqlite::Connection) -> Arc<AtomicUsize> {
        let commits = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&commits);
        conn.commit_hook(Some(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            false
        }))
        .expect("commit hook");
        commits
    }

    fn stored_idx(store: &Store, id: &str) -> Vec<u32> {
        store.steps(id).unwrap().iter().map(|s| s.idx).collect()
    }

    #[test]
    fn concurrent_steps_share_one_commit_and_land_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ids) = episodes(dir.path(), 6);
        let mut commits = None;
        for (_, out) in one_batch(&store, &ids, 0, |c| commits = Some(count_commits(c))) {
            out.expect("recorded");
        }
        let commits = commits.expect("hook installed");
        assert_eq!(commits.load(Ordering::SeqCst), 1, "six steps, one commit");
        for (_, out) in one_batch(&store, &ids, 1, |_| {}) {
            out.expect("recorded");
        }
        assert_eq!(
            commits.load(Ordering::SeqCst),
            2,
            "a second batch, one commit"
        );
        for id in &ids {
            assert_eq!(stored_idx(&store, id), [0, 1], "episode {id}");
            assert_eq!(
                store.episode(id).unwrap().active_ms,
                10,
                "its active time too"
            );
        }
    }

    #[test]
    fn starting_episodes_shares_the_commit_with_concurrent_steps() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ids) = episodes(dir.path(), 3);
        let conn = store.lock();
        let starts: Vec<_> = (0..3)
            .map(|i| {
                let store = Arc::clone(&store);
                std::thread::spawn(move || {
                    let actor = Actor::Agent {
                        model: format!("late-{i}"),
                    };
                    let record = EpisodeRecord::begin("mini", "1", "h", "pay-back", 0, actor);
                    store.insert_episode(&record).map(|()| record.id)
                })
            })
            .collect();
        let steps: Vec<_> = ids
            .iter()
            .map(|id| {
                let (store, id) = (Arc::clone(&store), id.clone());
                std::thread::spawn(move || store.append_step(&id, &step(0)))
            })
            .collect();
        let started = Instant::now();
        while store.steps.len() < 6 {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "not all queued"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let commits = count_commits(&conn);
        drop(conn);
        let started_ids: Vec<String> = starts
            .into_iter()
            .map(|t| t.join().expect("thread").expect("episode stored"))
            .collect();
        for t in steps {
            t.join().expect("thread").expect("step recorded");
        }
        assert_eq!(
            commits.load(Ordering::SeqCst),
            1,
            "three episode starts and three steps, one commit"
        );
        for id in &started_ids {
            assert_eq!(store.episode(id).unwrap().id, *id);
        }
        for id in &ids {
            assert_eq!(stored_idx(&store, id), [0]);
        }
    }

    #[test]
    fn an_episode_whose_header_fails_fails_alone_and_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ids) = episodes(dir.path(), 1);
        let existing = store.episode(&ids[0]).unwrap();
        let err = store
            .insert_episode(&existing)
            .expect_err("an id already stored is refused")
            .to_string();
        assert!(
            err.contains(&format!("episode {} could not be committed", ids[0]))
                && err.contains("it was not recorded"),
            "unclear error: {err}"
        );
        store
            .append_step(&ids[0], &step(0))
            .expect("the store works again");
    }

    #[test]
    fn a_failed_commit_acknowledges_no_step_of_its_batch() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ids) = episodes(dir.path(), 4);
        for id in &ids {
            store
                .append_step(id, &step(0))
                .expect("first step recorded");
        }
        // A commit hook that returns true turns the commit into a rollback.
        let done = one_batch(&store, &ids, 1, |c| {
            c.commit_hook(Some(|| true)).expect("hook");
        });
        store
            .lock()
            .commit_hook(None::<fn() -> bool>)
            .expect("hook removed");
        for (id, out) in done {
            let err = out
                .expect_err("a failed commit must fail the step")
                .to_string();
            assert!(
                err.contains("a batch of 4 steps") && err.contains("none of them was recorded"),
                "unclear error: {err}"
            );
            assert_eq!(stored_idx(&store, &id), [0], "nothing of the batch stored");
            assert_eq!(store.episode(&id).unwrap().active_ms, 0);
            store
                .append_step(&id, &step(1))
                .expect("the store works again");
            assert_eq!(stored_idx(&store, &id), [0, 1]);
        }
    }

    #[test]
    fn a_step_whose_insert_fails_fails_alone_in_its_batch() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ids) = episodes(dir.path(), 3);
        let victim = ids[1].clone();
        // Another writer took step 0 of one episode: its insert conflicts.
        let done = one_batch(&store, &ids, 0, |c| {
            c.execute(
                "INSERT INTO steps (episode_id, idx, action, observation, is_error, terminated, truncated, wall_at, active_ms, retracted) VALUES (?1, 0, '{}', '{}', 0, 0, 0, '', 0, 0)",
                [&victim],
            )
            .expect("conflicting row");
        });
        for (id, out) in done {
            if id == victim {
                let err = out.expect_err("the conflicting step fails").to_string();
                assert!(
                    err.contains(&format!("step 0 of episode {victim} was not recorded")),
                    "unclear error: {err}"
                );
            } else {
                out.expect("the other steps of the batch are recorded");
                assert_eq!(stored_idx(&store, &id), [0]);
            }
        }
    }
}
