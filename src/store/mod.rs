//! The trajectory store: experts, episodes, steps and reviews in one SQLite
//! file.
//!
//! **Durability invariant:** a step is committed (WAL, `synchronous =
//! FULL`) before any caller sees its result, so a kill at any moment loses
//! nothing that was shown. Steps appended concurrently share one
//! transaction and one fsync (group commit, see the private `group_commit`
//! module); a failed commit fails every step it held. Nothing is ever deleted:
//! undo marks a step retracted, and the raw log keeps everything.
//!
//! Opening refuses files that are not SQLite, SQLite files that are not
//! Understudy stores, stores written by a newer build, and stores whose
//! schema is damaged or half-migrated, without touching them; a store that
//! cannot be written (read-only file or mount) can still be opened for
//! reading. See the private `open` module for how racing processes are handled.

mod checkpoint;
mod drafts;
mod events;
mod grading;
mod group_commit;
mod hub_cursors;
mod open;
mod pulled;
mod records;
mod reviews;
mod rubric_versions;
mod schema;
mod scores;

pub use open::BUSY_TIMEOUT;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{params, Connection, OptionalExtension};

pub use drafts::{Draft, MAX_DRAFT_BYTES};
pub use events::{EpisodeEvent, EventKind};
pub use grading::{Assignment, OverrideRecord, PulledAssignment};
pub use hub_cursors::HubCursor;
pub use records::*;
pub use reviews::EpisodeSummary;
pub use rubric_versions::{NewRubricVersion, RubricVersion};
pub use scores::{JudgmentRecord, ScoreRecord, StoredScore};

use crate::error::{Error, Result};
use crate::trajectory::Trajectory;

/// A handle to one store file. Cheap to share (`Arc<Store>`); calls are
/// serialized on one connection, which is what SQLite does with writers
/// anyway.
pub struct Store {
    /// Checkpoints the log off the commit path (none when read-only).
    /// Declared before `conn` so that it stops first and the store's own
    /// connection, closing last, checkpoints and removes the log.
    checkpointer: Option<checkpoint::Checkpointer>,
    conn: Mutex<Connection>,
    /// Steps waiting for the next group commit.
    steps: group_commit::Queue,
    path: PathBuf,
    read_only: bool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// How hard a commit works to survive failures. `Full` is the invariant
/// above; `Fast` trades power-loss safety for speed where a lost tail of
/// steps can be re-run (agent rollouts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous = FULL`: every commit is fsynced; survives power loss.
    #[default]
    Full,
    /// `synchronous = NORMAL` (WAL): durable against a process crash, not
    /// against power loss or an OS crash.
    Fast,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema
    /// up to date.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Store::open_with(path, Durability::Full)
    }

    /// [`Store::open`] with a chosen durability.
    pub fn open_with(path: impl AsRef<Path>, durability: Durability) -> Result<Store> {
        Store::open_checkpointed(path, durability, checkpoint::Limits::default())
    }

    /// [`Store::open_with`], but checkpointing the way SQLite does by
    /// default: inside the commit that finds the log past 1000 pages, with
    /// no background checkpointer. Only for benchmarks that show what the
    /// background checkpointer saves.
    #[doc(hidden)]
    pub fn open_with_inline_checkpoints(
        path: impl AsRef<Path>,
        durability: Durability,
    ) -> Result<Store> {
        let mut store = Store::open_with(path, durability)?;
        store.checkpointer = None;
        store
            .lock()
            .execute_batch("PRAGMA wal_autocheckpoint = 1000;")?;
        Ok(store)
    }

    /// [`Store::open_with`], checkpointing the log at `limits`.
    fn open_checkpointed(
        path: impl AsRef<Path>,
        durability: Durability,
        limits: checkpoint::Limits,
    ) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        let conn = open::read_write(&path, durability).map_err(|m| store_error(&path, m))?;
        let checkpointer = checkpoint::Checkpointer::new(&path, durability, limits);
        Ok(Store {
            checkpointer: Some(checkpointer),
            conn: Mutex::new(conn),
            steps: group_commit::Queue::default(),
            path,
            read_only: false,
        })
    }

    /// Opens an existing store for reading only: nothing is created,
    /// migrated or written, so it works on a read-only file or mount.
    /// Writes through it fail. The store must be at this build's schema
    /// version.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        let conn = open::read_only(&path).map_err(|m| store_error(&path, m))?;
        Ok(Store {
            checkpointer: None,
            conn: Mutex::new(conn),
            steps: group_commit::Queue::default(),
            path,
            read_only: true,
        })
    }

    /// For commands that only read (export, replay): [`Store::open`] when
    /// the store can be written, else [`Store::open_read_only`].
    pub fn open_for_reading(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        if open::is_writable(path) {
            Store::open(path)
        } else {
            Store::open_read_only(path)
        }
    }

    /// Opened with [`Store::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The store file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `PRAGMA integrity_check`: `Ok` when the file is sound.
    pub fn integrity_check(&self) -> Result<()> {
        let result: String = self
            .lock()
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        if result == "ok" {
            Ok(())
        } else {
            Err(Error::Store {
                path: self.path.display().to_string(),
                message: format!("integrity check failed: {result}"),
            })
        }
    }

    // ---- experts ----

    /// Creates an expert, or updates the one with `id`.
    pub fn save_expert(&self, id: Option<&str>, input: &ExpertInput) -> Result<Expert> {
        if input.name.trim().is_empty() {
            return Err(Error::Conflict("an expert needs a name".into()));
        }
        let now = now();
        let conn = self.lock();
        let id = match id {
            Some(id) => {
                let n = conn.execute(
                    "UPDATE experts SET name = ?2, domain = ?3, credentials = ?4, credentials_attested = ?5, updated_at = ?6 WHERE id = ?1",
                    params![id, input.name.trim(), input.domain.trim(), input.credentials.trim(), input.credentials_attested, now],
                )?;
                if n == 0 {
                    return Err(Error::NotFound(format!("expert {id}")));
                }
                id.to_string()
            }
            None => {
                let id = new_uuid();
                conn.execute(
                    "INSERT INTO experts (id, name, domain, credentials, credentials_attested, verified, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?6)",
                    params![id, input.name.trim(), input.domain.trim(), input.credentials.trim(), input.credentials_attested, now],
                )?;
                id
            }
        };
        drop(conn);
        self.expert(&id)
    }

    /// The expert with this `id`, created (named `name`, or its id) when
    /// the store has none: front ends that identify experts by an id they
    /// were given, such as `understudy run --expert`, record under it. A
    /// `name` that differs from the stored one renames the expert; the rest
    /// of the profile is left as it is.
    pub fn ensure_expert(&self, id: &str, name: Option<&str>) -> Result<Expert> {
        let id = id.trim();
        if id.is_empty() {
            return Err(Error::Conflict("an expert id must not be empty".into()));
        }
        let name = name.map(str::trim);
        if name.is_some_and(str::is_empty) {
            return Err(Error::Conflict(format!(
                "expert {id}: the name must not be empty"
            )));
        }
        let now = now();
        let conn = self.lock();
        conn.execute(
            "INSERT OR IGNORE INTO experts (id, name, domain, credentials, credentials_attested, verified, created_at, updated_at) VALUES (?1, ?2, '', '', 0, 0, ?3, ?3)",
            params![id, name.unwrap_or(id), now],
        )?;
        if let Some(name) = name {
            conn.execute(
                "UPDATE experts SET name = ?2, updated_at = ?3 WHERE id = ?1 AND name <> ?2",
                params![id, name, now],
            )?;
        }
        drop(conn);
        self.expert(id)
    }

    /// Records whether an administrator checked the expert's credentials.
    pub fn set_expert_verified(&self, id: &str, verified: bool) -> Result<()> {
        let n = self.lock().execute(
            "UPDATE experts SET verified = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, verified, now()],
        )?;
        if n == 0 {
            return Err(Error::NotFound(format!("expert {id}")));
        }
        Ok(())
    }

    /// One expert; `NotFound` when the id is unknown.
    pub fn expert(&self, id: &str) -> Result<Expert> {
        self.lock()
            .query_row(
                &format!("SELECT {EXPERT_COLUMNS} FROM experts WHERE id = ?1"),
                [id],
                Expert::from_row,
            )
            .optional()?
            .ok_or_else(|| Error::NotFound(format!("expert {id}")))
    }

    /// Every expert, by name.
    pub fn experts(&self) -> Result<Vec<Expert>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {EXPERT_COLUMNS} FROM experts ORDER BY name"
        ))?;
        let rows = stmt.query_map([], Expert::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    // ---- episodes ----

    /// Stores a new episode row (its steps come later, one by one),
    /// durably. Concurrent sessions starting episodes and appending steps
    /// share the commit (group commit).
    pub fn insert_episode(&self, e: &EpisodeRecord) -> Result<()> {
        let slot = self
            .steps
            .push(group_commit::Row::Episode(Box::new(e.clone())));
        self.settle(&slot)
    }

    /// One episode; `NotFound` when the id is unknown.
    pub fn episode(&self, id: &str) -> Result<EpisodeRecord> {
        self.lock()
            .query_row(
                &format!("SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?1"),
                [id],
                EpisodeRecord::from_row,
            )
            .optional()?
            .ok_or_else(|| Error::NotFound(format!("episode {id}")))
    }

    /// Episodes matching `filter`, oldest first.
    pub fn episodes(&self, filter: &EpisodeFilter) -> Result<Vec<EpisodeRecord>> {
        let (clauses, args) = filter_sql(filter);
        let sql = format!(
            "SELECT {EPISODE_COLUMNS} FROM episodes WHERE 1 = 1{clauses} ORDER BY created_at, id"
        );
        let conn = self.lock();
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(
            rusqlite::params_from_iter(args.iter()),
            EpisodeRecord::from_row,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Updates an episode's status, active time and final message.
    pub fn update_episode(
        &self,
        id: &str,
        status: EpisodeStatus,
        active_ms: i64,
        final_message: Option<&str>,
    ) -> Result<()> {
        let now = now();
        let submitted_at = matches!(status, EpisodeStatus::Submitted).then(|| now.clone());
        let n = self.lock().execute(
            "UPDATE episodes SET status = ?2, active_ms = ?3, final_message = coalesce(?4, final_message), updated_at = ?5, submitted_at = coalesce(?6, submitted_at) WHERE id = ?1",
            params![id, status.as_str(), active_ms, final_message, now, submitted_at],
        )?;
        if n == 0 {
            return Err(Error::NotFound(format!("episode {id}")));
        }
        Ok(())
    }

    // ---- steps ----

    /// Appends one step and the episode's active time, atomically and
    /// durably. Returns only once committed; concurrent calls (other
    /// sessions on this store) share the commit, and a failed commit fails
    /// every step it held (group commit).
    pub fn append_step(&self, episode_id: &str, step: &StepRecord) -> Result<()> {
        let row = group_commit::StepRow::new(episode_id, step).map_err(|e| {
            self.error(format!(
                "step {} of episode {episode_id} cannot be stored as JSON: {e}",
                step.idx
            ))
        })?;
        let slot = self.steps.push(group_commit::Row::Step(row));
        self.settle(&slot)
    }

    /// Waits until the row of `slot` is committed, leading the commit if
    /// no one else has.
    fn settle(&self, slot: &group_commit::Slot) -> Result<()> {
        let outcome = group_commit::settle(&mut self.lock(), &self.steps, slot, |conn| {
            self.after_commit(conn)
        });
        outcome.map_err(|message| self.error(message))
    }

    /// After a commit on `conn` (held): lets the checkpointer look at the
    /// log.
    fn after_commit(&self, conn: &Connection) {
        if let Some(c) = &self.checkpointer {
            c.after_commit(conn);
        }
    }

    /// Runs `f` on the store's connection: tests above the store inject
    /// failures through it (a commit hook that refuses every commit).
    #[cfg(test)]
    pub(crate) fn with_connection<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        f(&self.lock())
    }

    fn error(&self, message: String) -> Error {
        store_error(&self.path, message)
    }

    /// All steps of an episode, retracted ones included, in order.
    /// An episode's header and every step: the whole trajectory.
    pub fn trajectory(&self, episode_id: &str) -> Result<Trajectory> {
        Ok(Trajectory {
            record: self.episode(episode_id)?,
            steps: self.steps(episode_id)?,
        })
    }

    /// An episode's steps in order, retracted ones included (marked).
    pub fn steps(&self, episode_id: &str) -> Result<Vec<StepRecord>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {STEP_COLUMNS} FROM steps WHERE episode_id = ?1 ORDER BY idx"
        ))?;
        let rows = stmt.query_map([episode_id], StepRecord::from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Sets a step's rationale and flag (`None` clears).
    pub fn annotate_step(
        &self,
        episode_id: &str,
        idx: u32,
        rationale: Option<&str>,
        flag: Option<&str>,
    ) -> Result<()> {
        let n = self.lock().execute(
            "UPDATE steps SET rationale = ?3, flag = ?4 WHERE episode_id = ?1 AND idx = ?2",
            params![
                episode_id,
                idx,
                rationale.filter(|s| !s.trim().is_empty()),
                flag.filter(|s| !s.trim().is_empty())
            ],
        )?;
        if n == 0 {
            return Err(Error::NotFound(format!(
                "step {idx} of episode {episode_id}"
            )));
        }
        Ok(())
    }

    /// Marks a step retracted (undo). The step stays in the log.
    pub fn retract_step(&self, episode_id: &str, idx: u32) -> Result<()> {
        let n = self.lock().execute(
            "UPDATE steps SET retracted = 1, retracted_at = ?3 WHERE episode_id = ?1 AND idx = ?2 AND retracted = 0",
            params![episode_id, idx, now()],
        )?;
        if n == 0 {
            return Err(Error::NotFound(format!(
                "step {idx} of episode {episode_id}"
            )));
        }
        Ok(())
    }

    /// Stores whole episodes (with their steps) in one transaction: either
    /// all of them land or none does. Existing ids are refused.
    pub fn import(&self, episodes: &[Trajectory]) -> Result<()> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        for t in episodes {
            insert_new_episode(&tx, &t.record, &t.steps)?;
        }
        tx.commit()?;
        self.after_commit(&conn);
        Ok(())
    }

    /// [`Store::import`] for whole exported episodes: also their experts
    /// and reviews, in the same all-or-nothing transaction. An expert whose
    /// id is already in the store keeps the profile it has here, so an
    /// import never rewrites who someone is; reviews get fresh row ids.
    /// Returns how many experts were added.
    pub fn import_full(
        &self,
        experts: &[Expert],
        episodes: &[(Trajectory, Vec<Review>)],
    ) -> Result<usize> {
        self.import_marking(experts, episodes, false)
    }

    /// [`Store::import_full`]; with `pulled`, the episodes and the experts
    /// added are marked as pulled from a hub in the same transaction.
    fn import_marking(
        &self,
        experts: &[Expert],
        episodes: &[(Trajectory, Vec<Review>)],
        pulled: bool,
    ) -> Result<usize> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let added = import_full_in(&tx, experts, episodes)?;
        if pulled {
            let at = now();
            for (t, _) in episodes {
                tx.execute(
                    "INSERT OR IGNORE INTO pulled_episodes (episode_id, pulled_at) VALUES (?1, ?2)",
                    params![t.record.id, at],
                )?;
            }
            for id in &added {
                tx.execute(
                    "INSERT OR IGNORE INTO pulled_experts (expert_id, pulled_at) VALUES (?1, ?2)",
                    params![id, at],
                )?;
            }
        }
        tx.commit()?;
        self.after_commit(&conn);
        Ok(added.len())
    }
}

/// [`Store::import_full`] inside `tx`; returns the ids of the experts
/// added (those already here keep their profile).
fn import_full_in(
    tx: &rusqlite::Transaction<'_>,
    experts: &[Expert],
    episodes: &[(Trajectory, Vec<Review>)],
) -> Result<Vec<String>> {
    let mut added = Vec::new();
    for x in experts {
        let n = tx.execute(
            "INSERT OR IGNORE INTO experts (id, name, domain, credentials, credentials_attested, verified, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![x.id, x.name, x.domain, x.credentials, x.credentials_attested, x.verified, x.created_at, x.updated_at],
        )?;
        if n > 0 {
            added.push(x.id.clone());
        }
    }
    for (Trajectory { record, steps }, reviews) in episodes {
        insert_new_episode(tx, record, steps)?;
        for r in reviews {
            tx.execute(
                "INSERT INTO reviews (episode_id, reviewer, decision, comment, at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![record.id, r.reviewer, r.decision.as_str(), r.comment, r.at],
            )?;
        }
    }
    Ok(added)
}

/// `filter` as SQL conditions on `episodes` (each ` AND ...`, numbered
/// parameters) and their values.
fn filter_sql(filter: &EpisodeFilter) -> (String, Vec<String>) {
    let mut sql = String::new();
    let mut args: Vec<String> = Vec::new();
    let mut add = |clause: &str, value: String| {
        args.push(value);
        sql.push_str(&format!(" AND episodes.{clause} ?{}", args.len()));
    };
    if let Some(v) = &filter.world_id {
        add("world_id =", v.clone());
    }
    if let Some(v) = &filter.task_id {
        add("task_id =", v.clone());
    }
    if let Some(v) = &filter.status {
        add("status =", v.as_str().to_string());
    }
    if let Some(v) = &filter.actor_kind {
        add("actor_kind =", v.clone());
    }
    if let Some(v) = &filter.actor_id {
        add("actor_id =", v.clone());
    }
    if let Some(v) = &filter.since {
        add("created_at >=", v.clone());
    }
    if let Some(v) = &filter.until {
        add("created_at <", v.clone());
    }
    (sql, args)
}

fn store_error(path: &Path, message: String) -> Error {
    Error::Store {
        path: path.display().to_string(),
        message,
    }
}

/// Inserts an episode and its steps, refusing an id already stored.
fn insert_new_episode(tx: &Connection, record: &EpisodeRecord, steps: &[StepRecord]) -> Result<()> {
    let exists: bool = tx.query_row(
        "SELECT count(*) > 0 FROM episodes WHERE id = ?1",
        [&record.id],
        |r| r.get(0),
    )?;
    if exists {
        return Err(Error::Conflict(format!(
            "episode {} is already in the store",
            record.id
        )));
    }
    insert_episode(tx, record)?;
    for step in steps {
        insert_step(tx, &record.id, step)?;
    }
    Ok(())
}

fn insert_episode(conn: &Connection, e: &EpisodeRecord) -> rusqlite::Result<usize> {
    let (kind, actor_id) = e.actor.parts();
    conn.prepare_cached(
        "INSERT INTO episodes (id, world_id, world_version, world_hash, task_id, seed, actor_kind, actor_id, status, created_at, updated_at, submitted_at, active_ms, final_message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![e.id, e.world_id, e.world_version, e.world_hash, e.task_id, e.seed as i64, kind, actor_id, e.status.as_str(), e.created_at, e.updated_at, e.submitted_at, e.active_ms, e.final_message],
    )
}

fn insert_step(conn: &Connection, episode_id: &str, s: &StepRecord) -> rusqlite::Result<usize> {
    let action = serde_json::to_string(&s.action)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    let observation = serde_json::to_string(&s.observation)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    conn.execute(
        "INSERT INTO steps (episode_id, idx, action, observation, is_error, terminated, truncated, wall_at, active_ms, rationale, flag, retracted, retracted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![episode_id, s.idx, action, observation, !s.observation.ok, s.terminated, s.truncated, s.wall_at, s.active_ms, s.rationale, s.flag, s.retracted, s.retracted_at],
    )
}

/// Wall-clock time for records *about* episodes (never inside a world).
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A new time-ordered id (UUID v7) for episodes and experts.
pub fn new_uuid() -> String {
    uuid::Uuid::now_v7().to_string()
}
