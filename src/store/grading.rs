//! Grading agent runs in the store: who is asked to grade which run, and a
//! grader's overrides of automatic checks.
//!
//! Several graders per run are the point (their overlap is what agreement
//! is measured on), so an assignment is one row per run and grader. An
//! override is history like a score: it is added beside the automatic
//! result, which stays as it was, and the latest override of a criterion
//! by a grader is that grader's verdict.

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::hub_cursors::{self, HubCursor};
use super::{now, Store};
use crate::error::{Error, Result};

/// A run someone is asked to grade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Assignment {
    /// The run to grade.
    pub episode_id: String,
    /// The grader's expert id.
    pub grader: String,
    /// When the grader was assigned (RFC 3339).
    pub assigned_at: String,
    /// When the grader said they were done; `None` while grading.
    pub done_at: Option<String>,
}

/// A grader's verdict on an automatically checked criterion that differs
/// from (or confirms again) what the check found. Read strictly (a team
/// hub takes it as JSON): a misspelt field is an error, not a lost verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct OverrideRecord {
    /// The criterion overridden.
    pub criterion_id: String,
    /// The criterion's hash when overridden; an edited criterion is checked
    /// afresh and the override no longer applies.
    pub criterion_hash: Option<String>,
    /// What the automatic check found, kept with the override.
    pub original_met: Option<bool>,
    /// The grader's verdict.
    pub met: bool,
    /// Why the grader disagrees with the check.
    pub reason: String,
    /// The grader's expert id.
    pub grader: String,
    /// When; empty means now, when saved.
    pub at: String,
}

/// A grading assignment as a team hub hands it out: the assignment and
/// the grader's name, for a store that lacks the grader's profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PulledAssignment {
    /// The assignment, as the hub holds it.
    pub assignment: Assignment,
    /// The grader's name, for the profile made when the store lacks it.
    pub grader_name: String,
}

impl Store {
    /// Adds assignments pulled from a hub, in one transaction with the
    /// pull's `cursor` (when given): those of runs this store lacks are
    /// left out (the caller pulls the runs first). An assignment already
    /// here is kept as it is, except that a grader's "done" said on
    /// another machine is taken (not the other way: taking back "done" is
    /// the grader's own, on their machine). A grader this store has no
    /// profile of gets one with their name, marked as pulled. Returns how
    /// many assignments were added or marked done.
    pub fn save_pulled_assignments(
        &self,
        rows: &[PulledAssignment],
        cursor: Option<&HubCursor<'_>>,
    ) -> Result<usize> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let mut changed = 0;
        for PulledAssignment {
            assignment: a,
            grader_name,
        } in rows
        {
            if a.grader.trim().is_empty() || grader_name.trim().is_empty() {
                return Err(Error::Conflict(format!(
                    "a pulled assignment to run {} names no grader; nothing was stored",
                    a.episode_id
                )));
            }
            let has_run: bool = tx.query_row(
                "SELECT count(*) > 0 FROM episodes WHERE id = ?1",
                [&a.episode_id],
                |r| r.get(0),
            )?;
            if !has_run {
                continue;
            }
            let at = now();
            let added = tx.execute(
                "INSERT OR IGNORE INTO experts (id, name, domain, credentials, credentials_attested, verified, created_at, updated_at) VALUES (?1, ?2, '', '', 0, 0, ?3, ?3)",
                params![a.grader, grader_name.trim(), at],
            )?;
            if added > 0 {
                tx.execute(
                    "INSERT OR IGNORE INTO pulled_experts (expert_id, pulled_at) VALUES (?1, ?2)",
                    params![a.grader, at],
                )?;
            }
            changed += tx.execute(
                "INSERT OR IGNORE INTO grading_assignments (episode_id, grader, assigned_at, done_at) VALUES (?1, ?2, ?3, ?4)",
                params![a.episode_id, a.grader, a.assigned_at, a.done_at],
            )?;
            if let Some(done) = &a.done_at {
                changed += tx.execute(
                    "UPDATE grading_assignments SET done_at = ?3 WHERE episode_id = ?1 AND grader = ?2 AND done_at IS NULL",
                    params![a.episode_id, a.grader, done],
                )?;
            }
        }
        if let Some(c) = cursor {
            hub_cursors::save_in(&tx, c)?;
        }
        tx.commit()?;
        Ok(changed)
    }

    /// Asks an expert to grade a run. Assigning twice is not an error (the
    /// first assignment stays). Refused: an unknown run or expert.
    pub fn assign_grader(&self, episode_id: &str, grader: &str) -> Result<Assignment> {
        let conn = self.lock();
        require(&conn, "episodes", episode_id, "episode")?;
        require(&conn, "experts", grader, "expert")?;
        conn.execute(
            "INSERT OR IGNORE INTO grading_assignments (episode_id, grader, assigned_at, done_at) VALUES (?1, ?2, ?3, NULL)",
            params![episode_id, grader, now()],
        )?;
        drop(conn);
        self.assignment(episode_id, grader)?
            .ok_or_else(|| Error::NotFound(format!("the assignment of {grader} to {episode_id}")))
    }

    /// One grader's assignment to one run, if there is one.
    pub fn assignment(&self, episode_id: &str, grader: &str) -> Result<Option<Assignment>> {
        Ok(self
            .lock()
            .query_row(
                "SELECT episode_id, grader, assigned_at, done_at FROM grading_assignments WHERE episode_id = ?1 AND grader = ?2",
                [episode_id, grader],
                read_assignment,
            )
            .optional()?)
    }

    /// Every assignment, by run then by when it was made.
    pub fn assignments(&self) -> Result<Vec<Assignment>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT episode_id, grader, assigned_at, done_at FROM grading_assignments ORDER BY episode_id, assigned_at, grader",
        )?;
        let rows = stmt.query_map([], read_assignment)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One run's assignments, by when they were made.
    pub fn assignments_of(&self, episode_id: &str) -> Result<Vec<Assignment>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT episode_id, grader, assigned_at, done_at FROM grading_assignments WHERE episode_id = ?1 ORDER BY assigned_at, grader",
        )?;
        let rows = stmt.query_map([episode_id], read_assignment)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Marks a grader's work on a run done (or, with `done = false`, open
    /// again). Refused when the grader is not assigned to the run.
    pub fn set_grading_done(&self, episode_id: &str, grader: &str, done: bool) -> Result<()> {
        let n = self.lock().execute(
            "UPDATE grading_assignments SET done_at = ?3 WHERE episode_id = ?1 AND grader = ?2",
            params![episode_id, grader, done.then(now)],
        )?;
        if n == 0 {
            return Err(Error::NotFound(format!(
                "an assignment of {grader} to grade episode {episode_id}"
            )));
        }
        Ok(())
    }

    /// Records a grader's override of an automatic check. The reason and
    /// the grader are required; the run must be in the store.
    pub fn save_override(&self, episode_id: &str, o: &OverrideRecord) -> Result<i64> {
        if o.reason.trim().is_empty() {
            return Err(Error::Conflict(
                "an override needs a reason: say why the automatic check is wrong".into(),
            ));
        }
        if o.grader.trim().is_empty() {
            return Err(Error::Conflict(
                "an override needs to say who made it".into(),
            ));
        }
        let conn = self.lock();
        require(&conn, "episodes", episode_id, "episode")?;
        let at = if o.at.is_empty() { now() } else { o.at.clone() };
        conn.execute(
            "INSERT INTO score_overrides (episode_id, criterion_id, criterion_hash, original_met, met, reason, grader, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![episode_id, o.criterion_id, o.criterion_hash, o.original_met, o.met, o.reason.trim(), o.grader.trim(), at],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// A run's overrides, oldest first (a grader's later one replaces
    /// their earlier one).
    pub fn overrides(&self, episode_id: &str) -> Result<Vec<OverrideRecord>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT criterion_id, criterion_hash, original_met, met, reason, grader, at FROM score_overrides WHERE episode_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([episode_id], |r| {
            Ok(OverrideRecord {
                criterion_id: r.get(0)?,
                criterion_hash: r.get(1)?,
                original_met: r.get(2)?,
                met: r.get(3)?,
                reason: r.get(4)?,
                grader: r.get(5)?,
                at: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

fn read_assignment(r: &rusqlite::Row<'_>) -> rusqlite::Result<Assignment> {
    Ok(Assignment {
        episode_id: r.get(0)?,
        grader: r.get(1)?,
        assigned_at: r.get(2)?,
        done_at: r.get(3)?,
    })
}

/// `NotFound` naming `what` when `table` has no row with this id.
fn require(conn: &rusqlite::Connection, table: &str, id: &str, what: &str) -> Result<()> {
    let exists: bool = conn.query_row(
        &format!("SELECT count(*) > 0 FROM {table} WHERE id = ?1"),
        [id],
        |r| r.get(0),
    )?;
    if exists {
        Ok(())
    } else {
        Err(Error::NotFound(format!("{what} {id}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Actor, EpisodeRecord, EpisodeStatus};

    fn store_with_run() -> (tempfile::TempDir, Store, String) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path().join("s.db")).expect("store");
        let at = now();
        let record = EpisodeRecord {
            id: "run-1".into(),
            world_id: "w".into(),
            world_version: "1".into(),
            world_hash: "h".into(),
            task_id: "t".into(),
            seed: 0,
            actor: Actor::Agent { model: "m".into() },
            status: EpisodeStatus::Submitted,
            created_at: at.clone(),
            updated_at: at,
            submitted_at: None,
            active_ms: 0,
            final_message: None,
        };
        store.insert_episode(&record).expect("episode");
        (dir, store, record.id)
    }

    fn expert(store: &Store, name: &str) -> String {
        let id = name.to_lowercase();
        store.ensure_expert(&id, Some(name)).expect("expert").id
    }

    #[test]
    fn a_run_takes_several_graders_once_each_and_each_says_when_done() {
        let (_dir, store, run) = store_with_run();
        let (ana, ben) = (expert(&store, "Ana"), expert(&store, "Ben"));
        let first = store.assign_grader(&run, &ana).expect("assign");
        assert_eq!(first.done_at, None);
        assert_eq!(store.assign_grader(&run, &ana).expect("again"), first);
        store.assign_grader(&run, &ben).expect("assign");
        assert_eq!(store.assignments().expect("list").len(), 2);

        store.set_grading_done(&run, &ana, true).expect("done");
        assert!(store
            .assignment(&run, &ana)
            .unwrap()
            .unwrap()
            .done_at
            .is_some());
        assert_eq!(store.assignment(&run, &ben).unwrap().unwrap().done_at, None);
        store.set_grading_done(&run, &ana, false).expect("reopen");
        assert_eq!(store.assignment(&run, &ana).unwrap().unwrap().done_at, None);

        let err = store.assign_grader("nope", &ana).unwrap_err();
        assert_eq!(err.to_string(), "episode nope not found");
        let err = store.assign_grader(&run, "nobody").unwrap_err();
        assert_eq!(err.to_string(), "expert nobody not found");
        let carl = expert(&store, "Carl");
        assert!(matches!(
            store.set_grading_done(&run, &carl, true),
            Err(Error::NotFound(_))
        ));
    }

    #[test]
    fn pulled_assignments_are_added_once_with_their_cursor_and_a_bad_one_stores_nothing() {
        let (_dir, store, run) = store_with_run();
        let pulled = |episode: &str, grader: &str, done: Option<&str>| PulledAssignment {
            assignment: Assignment {
                episode_id: episode.into(),
                grader: grader.into(),
                assigned_at: "2026-01-01T00:00:00Z".into(),
                done_at: done.map(String::from),
            },
            grader_name: format!("Grader {grader}"),
        };
        let cursor = HubCursor {
            account: "http://hub#1",
            feed: "grading",
            cursor: "c1",
        };
        let saved = || store.hub_cursor("http://hub#1", "grading").unwrap();
        let rows = [
            pulled(&run, "x-ann", None),
            pulled("elsewhere", "x-ann", None),
        ];
        assert_eq!(
            store.save_pulled_assignments(&rows, Some(&cursor)).unwrap(),
            1
        );
        assert_eq!(
            store.assignments().unwrap().len(),
            1,
            "a run not here is left out"
        );
        assert_eq!(store.expert("x-ann").unwrap().name, "Grader x-ann");
        assert!(store.pulled_expert_ids().unwrap().contains("x-ann"));
        assert_eq!(saved().as_deref(), Some("c1"));
        // Again: nothing added. Done elsewhere: taken; not done: kept.
        assert_eq!(store.save_pulled_assignments(&rows, None).unwrap(), 0);
        let done = [pulled(&run, "x-ann", Some("2026-01-02T00:00:00Z"))];
        assert_eq!(store.save_pulled_assignments(&done, None).unwrap(), 1);
        assert_eq!(store.save_pulled_assignments(&rows, None).unwrap(), 0);
        assert!(store
            .assignment(&run, "x-ann")
            .unwrap()
            .unwrap()
            .done_at
            .is_some());
        // A row naming no grader refuses the page and its cursor.
        let bad = [pulled(&run, "x-ben", None), pulled(&run, " ", None)];
        let next = HubCursor {
            cursor: "c2",
            ..cursor
        };
        let e = store
            .save_pulled_assignments(&bad, Some(&next))
            .unwrap_err();
        assert!(e.to_string().contains("names no grader"), "{e}");
        assert_eq!(store.assignments().unwrap().len(), 1, "nothing stored");
        assert_eq!(saved().as_deref(), Some("c1"));
        assert_eq!(store.hub_cursor("http://hub#2", "grading").unwrap(), None);
    }

    #[test]
    fn an_override_keeps_the_original_verdict_who_and_when_and_needs_a_reason() {
        let (_dir, store, run) = store_with_run();
        let o = OverrideRecord {
            criterion_id: "refunded".into(),
            criterion_hash: Some("abc".into()),
            original_met: Some(true),
            met: false,
            reason: "  The refund went to the wrong invoice. ".into(),
            grader: "ana".into(),
            at: String::new(),
        };
        store.save_override(&run, &o).expect("saved");
        let stored = store.overrides(&run).expect("read");
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].reason, "The refund went to the wrong invoice.");
        assert_eq!((stored[0].original_met, stored[0].met), (Some(true), false));
        assert!(!stored[0].at.is_empty());

        let blank = OverrideRecord {
            reason: " ".into(),
            ..o.clone()
        };
        assert!(store
            .save_override(&run, &blank)
            .unwrap_err()
            .to_string()
            .contains("needs a reason"));
        let nobody = OverrideRecord {
            grader: "".into(),
            ..o.clone()
        };
        assert!(store
            .save_override(&run, &nobody)
            .unwrap_err()
            .to_string()
            .contains("who made it"));
        assert!(matches!(
            store.save_override("nope", &o),
            Err(Error::NotFound(_))
        ));
        assert_eq!(store.overrides(&run).expect("read").len(), 1);
    }
}
