//! Group commit: steps appended concurrently (the agent server's many
//! sessions over one store) share one transaction, so one fsync makes the
//! whole batch durable instead of one fsync per step.
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

use super::StepRecord;

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

/// Steps waiting for a leader to commit them, oldest first.
#[derive(Default)]
pub(super) struct Queue {
    pending: Mutex<Vec<(StepRow, Slot)>>,
}

impl Queue {
    /// Queues `row`; its outcome will be settled in the returned slot.
    pub(super) fn push(&self, row: StepRow) -> Slot {
        let slot = Slot::default();
        self.lock().push((row, Arc::clone(&slot)));
        slot
    }

    /// Takes every queued step.
    fn drain(&self) -> Vec<(StepRow, Slot)> {
        std::mem::take(&mut *self.lock())
    }

    /// Steps queued and not yet taken by a leader.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(StepRow, Slot)>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Called with the store's connection held, by the owner of `slot`: its
/// outcome if a leader already settled it, else it leads, committing every
/// queued step in one transaction.
pub(super) fn settle(conn: &mut Connection, queue: &Queue, slot: &Slot) -> Outcome {
    if let Some(done) = slot.get() {
        return done.clone();
    }
    let batch = queue.drain();
    let outcomes = commit(conn, &batch);
    for ((_, s), outcome) in batch.iter().zip(outcomes) {
        // Each slot is settled exactly once: its step was in one batch.
        let _ = s.set(outcome);
    }
    slot.get().cloned().unwrap_or_else(|| {
        Err("the step was not in the batch its appender committed (a bug in the store)".into())
    })
}

/// Writes `batch` in one transaction and commits it: the outcome of each
/// step, in order.
fn commit(conn: &mut Connection, batch: &[(StepRow, Slot)]) -> Vec<Outcome> {
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
        let message = if n == 1 {
            format!("the step could not be committed (SQLite says: {e}); it was not recorded")
        } else {
            format!("a batch of {n} steps from concurrent sessions could not be committed (SQLite says: {e}); none of them was recorded")
        };
        vec![Err(message); n]
    })
}

/// Writes one step of a shared batch inside its own savepoint, so that its
/// failure undoes only its own rows.
fn write_alone(conn: &Connection, row: &StepRow) -> Outcome {
    let fail = |e: rusqlite::Error| {
        format!(
            "step {} of episode {} was not recorded: {e}",
            row.idx, row.episode_id
        )
    };
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

/// The step's row and its episode's active time.
fn write(conn: &Connection, s: &StepRow) -> rusqlite::Result<()> {
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
    use std::path::Path;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use crate::action::Action;
    use crate::recorder::{RecordedStep, Recorder};
    use crate::store::{Actor, Store};
    use crate::world::World;
    use crate::Result;

    fn recorders(dir: &Path, n: usize) -> (Arc<Store>, Vec<Recorder>) {
        let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/worlds/mini");
        let world = Arc::new(World::load(world).expect("the mini world loads"));
        let store = Arc::new(Store::open(dir.join("store.sqlite")).expect("store opens"));
        let recs = (0..n)
            .map(|i| {
                let actor = Actor::Agent {
                    model: format!("session-{i}"),
                };
                Recorder::start(Arc::clone(&store), Arc::clone(&world), "pay-back", actor, 0)
                    .expect("episode starts")
            })
            .collect();
        (store, recs)
    }

    fn read_step() -> Action {
        Action::tool("get_account", serde_json::json!({"account_id": "A-1"}))
    }

    /// Every recorder steps at once while the connection is held, so all
    /// their steps queue and the next leader commits them as one batch.
    /// `before_commit` runs with the connection held, once all are queued.
    fn one_batch(
        store: &Store,
        recs: Vec<Recorder>,
        before_commit: impl FnOnce(&rusqlite::Connection),
    ) -> Vec<(Recorder, Result<RecordedStep>)> {
        let n = recs.len();
        let conn = store.lock();
        let threads: Vec<_> = recs
            .into_iter()
            .map(|mut rec| {
                std::thread::spawn(move || {
                    let out = rec.step(read_step(), None);
                    (rec, out)
                })
            })
            .collect();
        let started = Instant::now();
        while store.steps.len() < n {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "only {} of {n} steps were queued",
                store.steps.len()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        before_commit(&conn);
        drop(conn);
        threads
            .into_iter()
            .map(|t| t.join().expect("a stepping thread panicked"))
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

    #[test]
    fn concurrent_steps_share_one_commit_and_land_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (store, recs) = recorders(dir.path(), 6);
        let mut commits = None;
        let done = one_batch(&store, recs, |c| commits = Some(count_commits(c)));
        let commits = commits.expect("hook installed");
        assert_eq!(commits.load(Ordering::SeqCst), 1, "six steps, one commit");
        let recs: Vec<Recorder> = done
            .into_iter()
            .map(|(rec, out)| {
                assert_eq!(out.expect("recorded").record.idx, 0);
                rec
            })
            .collect();
        let done = one_batch(&store, recs, |_| {});
        assert_eq!(
            commits.load(Ordering::SeqCst),
            2,
            "a second batch, one commit"
        );
        for (rec, out) in done {
            assert_eq!(out.expect("recorded").record.idx, 1);
            let stored = store.steps(&rec.record().id).unwrap();
            assert_eq!(stored.iter().map(|s| s.idx).collect::<Vec<_>>(), [0, 1]);
            assert_eq!(stored, rec.steps(), "stored exactly as acknowledged");
        }
    }

    #[test]
    fn a_failed_commit_acknowledges_no_step_of_its_batch() {
        let dir = tempfile::tempdir().unwrap();
        let (store, mut recs) = recorders(dir.path(), 4);
        for rec in &mut recs {
            rec.step(read_step(), None).expect("first step recorded");
        }
        // A commit hook that returns true turns the commit into a rollback.
        let done = one_batch(&store, recs, |c| {
            c.commit_hook(Some(|| true)).expect("hook");
        });
        store
            .lock()
            .commit_hook(None::<fn() -> bool>)
            .expect("hook removed");
        for (mut rec, out) in done {
            let err = out
                .expect_err("a failed commit must fail the step")
                .to_string();
            assert!(
                err.contains("a batch of 4 steps") && err.contains("none of them was recorded"),
                "unclear error: {err}"
            );
            let id = rec.record().id.clone();
            assert_eq!(
                store.steps(&id).unwrap().len(),
                1,
                "nothing of the batch stored"
            );
            assert_eq!(rec.steps().len(), 1, "nothing of the batch acknowledged");
            let next = rec.step(read_step(), None).expect("the store works again");
            assert_eq!(next.record.idx, 1, "the failed step left no trace");
            assert_eq!(store.steps(&id).unwrap().len(), 2);
        }
    }

    #[test]
    fn a_step_whose_insert_fails_fails_alone_in_its_batch() {
        let dir = tempfile::tempdir().unwrap();
        let (store, recs) = recorders(dir.path(), 3);
        let victim = recs[1].record().id.clone();
        // Another writer took step 0 of one episode: its insert conflicts.
        let done = one_batch(&store, recs, |c| {
            c.execute(
                "INSERT INTO steps (episode_id, idx, action, observation, is_error, terminated, truncated, wall_at, active_ms, retracted) VALUES (?1, 0, '{}', '{}', 0, 0, 0, '', 0, 0)",
                [&victim],
            )
            .expect("conflicting row");
        });
        for (rec, out) in done {
            let id = rec.record().id.clone();
            if id == victim {
                let err = out.expect_err("the conflicting step fails").to_string();
                assert!(
                    err.contains(&format!("step 0 of episode {victim} was not recorded")),
                    "unclear error: {err}"
                );
                assert!(
                    rec.steps().is_empty(),
                    "the failed step is not acknowledged"
                );
            } else {
                out.expect("the other steps of the batch are recorded");
                assert_eq!(store.steps(&id).unwrap().len(), 1);
            }
        }
    }
}
