//! WAL checkpoints off the commit path.
//!
//! SQLite's default moves the write-ahead log back into the main file
//! (a checkpoint) inside whichever commit first finds the log past 1000
//! pages: that commit copies the pages, fsyncs the main file and only then
//! returns, so one step in a few hundred waited several fsyncs instead of
//! one. The store's connection runs with `wal_autocheckpoint = 0` instead,
//! and this checkpointer does the work from its own connection and thread:
//!
//! - after each commit the committing thread reads the log's size (a
//!   `NOOP` checkpoint: the shared-memory header only, no lock, no I/O) and
//!   wakes the checkpointer once [`Limits::passive_at`] pages are not yet
//!   copied back;
//! - the checkpointer copies them with a `PASSIVE` checkpoint, which never
//!   blocks a writer;
//! - under a steady stream of commits a passive checkpoint never catches
//!   the log's end, so the log would only grow. Once it holds
//!   [`Limits::restart_at`] pages with fewer than a quarter of
//!   [`Limits::passive_at`] left to copy back, the committing thread runs a `RESTART` checkpoint, without waiting on
//!   anyone: it copies the few pages left, fsyncs the main file, and the
//!   next commit writes the log from its start again, over the same file
//!   blocks. One commit in about a thousand pays that one extra fsync, where
//!   SQLite's way made one in a few hundred copy a thousand pages first;
//! - should the checkpointer fall behind anyway (starved of CPU), the
//!   commit that finds the log at [`Limits::block_at`] pages waits until it
//!   can restart it: back-pressure, so the log stays bounded whatever
//!   happens (a reader in another process can pin the log at most for
//!   [`BUSY_TIMEOUT`], then commits go on and try again).
//!
//! Durability is untouched: every commit still fsyncs the log before it
//! returns (`synchronous = FULL`), and a checkpoint only copies pages that
//! are already durable in the log; a crash during one is recovered by
//! SQLite from the log.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use rusqlite::{Connection, OpenFlags};

use super::{open::BUSY_TIMEOUT, Durability};

/// Log sizes, in pages (4 KiB each by default), at which checkpoints run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Limits {
    /// Pages not yet copied back that wake the checkpointer (SQLite's own
    /// autocheckpoint threshold).
    pub passive_at: i64,
    /// Log length at which a commit makes the log start over, once the
    /// checkpointer has copied it back.
    pub restart_at: i64,
    /// Log length at which a commit waits until the log starts over.
    pub block_at: i64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            passive_at: 500,
            restart_at: 2000,
            block_at: 16_000,
        }
    }
}

/// The log beside a store is cut back to this size when it starts over
/// (`journal_size_limit`), so a burst (a large import) does not leave a
/// huge file behind, while the usual size is kept and written over in
/// place.
pub(super) const LOG_SIZE_LIMIT: i64 = 64 << 20;

/// Bytes of one page in the log: the page and its frame header.
const FRAME_BYTES: u64 = 4096 + 24;

/// Where the log stands: its length and how much of it is copied back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LogSize {
    /// Pages in the log.
    pub pages: i64,
    /// Of those, pages already copied into the main file.
    pub copied: i64,
}

/// Reads the log's size without checkpointing anything.
pub(super) fn log_size(conn: &Connection) -> rusqlite::Result<LogSize> {
    conn.query_row("PRAGMA wal_checkpoint(NOOP)", [], |r| {
        Ok(LogSize {
            pages: r.get(1)?,
            copied: r.get(2)?,
        })
    })
}

/// What the checkpointer has done, for tests and diagnostics.
#[derive(Debug, Default)]
pub(super) struct Counts {
    pub passive: AtomicU64,
    pub restart: AtomicU64,
    pub inline_restart: AtomicU64,
    pub failed: AtomicU64,
}

#[derive(Default)]
struct State {
    /// A checkpoint was asked for since the last one began.
    wanted: bool,
    stop: bool,
    /// A checkpoint is being run.
    running: bool,
    /// Tests hold the checkpointer still to show the back-pressure.
    #[cfg(test)]
    held: bool,
}

struct Shared {
    path: PathBuf,
    /// The log was written out to its working size (see
    /// [`Checkpointer::prefill`]), or that is not needed.
    prefilled: std::sync::atomic::AtomicBool,
    durability: Durability,
    limits: Limits,
    state: Mutex<State>,
    wake: Condvar,
    counts: Counts,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The background checkpointer of one store connection. Its thread starts
/// with the first checkpoint needed (most stores opened by a command never
/// need one) and stops when it is dropped.
pub(super) struct Checkpointer {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Checkpointer {
    pub(super) fn new(path: &Path, durability: Durability, limits: Limits) -> Checkpointer {
        Checkpointer {
            shared: Arc::new(Shared {
                path: path.to_path_buf(),
                prefilled: (durability != Durability::Full).into(),
                durability,
                limits,
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
                counts: Counts::default(),
            }),
            thread: Mutex::new(None),
        }
    }

    /// Called by a committing thread, on the connection it committed with
    /// (held, so no other writer of this store runs), right after the
    /// commit: wakes the checkpointer when pages wait to be copied back,
    /// and makes a long log start over.
    pub(super) fn after_commit(&self, conn: &Connection) {
        if !self.shared.prefilled.swap(true, Ordering::Relaxed) {
            self.prefill(conn);
        }
        let Ok(log) = log_size(conn) else { return };
        let limits = self.shared.limits;
        let behind = log.pages - log.copied;
        if behind >= limits.passive_at {
            self.wake();
        }
        if log.pages >= limits.block_at {
            self.restart_waiting(conn);
        } else if log.pages >= limits.restart_at && behind < limits.passive_at / 4 {
            // The checkpointer has copied nearly all of it: restarting
            // copies the rest (little) and fsyncs the main file once.
            // Busy when the checkpointer is mid-way: the next commit
            // tries again.
            if let Ok(false) = restart(conn) {
                self.shared.counts.restart.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Writes the log file out to the size it works at, once, so that its
    /// commits write over blocks the file already has. A commit that
    /// appends to the file also changes its size, and its fsync then waits
    /// for the file system's journal as well: that, not the data, made a
    /// growing log's commits several times slower than the disk's fsync.
    /// The bytes past the log's last frame are zeros, which SQLite never
    /// takes for frames (a frame's salt and checksum must match the log's
    /// header), just like the stale frames a restarted log leaves behind.
    ///
    /// Only inside a write transaction, so that no writer (another process
    /// on the store) appends frames meanwhile; if one holds the lock, the
    /// next commit tries again.
    fn prefill(&self, conn: &Connection) {
        let done = (|| -> Result<bool, String> {
            conn.busy_timeout(std::time::Duration::ZERO)
                .map_err(|e| e.to_string())?;
            let began = conn.execute_batch("BEGIN IMMEDIATE");
            conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| e.to_string())?;
            if began.is_err() {
                return Ok(false);
            }
            let mut wal = self.shared.path.as_os_str().to_os_string();
            wal.push("-wal");
            let written = write_zeros_to(
                Path::new(&wal),
                32 + (self.shared.limits.restart_at + self.shared.limits.passive_at) as u64
                    * FRAME_BYTES,
            );
            let _ = conn.execute_batch("ROLLBACK");
            written.map(|()| true).map_err(|e| e.to_string())
        })();
        match done {
            Ok(true) => {}
            Ok(false) => self.shared.prefilled.store(false, Ordering::Relaxed),
            Err(_) => {
                // Commits work as before, only slower: not tried again.
                self.shared.counts.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Back-pressure: the log reached [`Limits::block_at`], so this commit
    /// waits until the log is made to start over, whatever the checkpointer
    /// is doing (it holds the checkpoint lock while it copies).
    fn restart_waiting(&self, conn: &Connection) {
        let started = std::time::Instant::now();
        loop {
            match restart(conn) {
                Ok(false) => {
                    self.shared
                        .counts
                        .inline_restart
                        .fetch_add(1, Ordering::Relaxed);
                    return;
                }
                Ok(true) if started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                _ => {
                    self.shared.counts.failed.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            }
        }
    }

    fn wake(&self) {
        self.shared.lock().wanted = true;
        self.shared.wake.notify_all();
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        if thread.is_none() {
            let shared = Arc::clone(&self.shared);
            *thread = std::thread::Builder::new()
                .name("store-checkpoint".into())
                .spawn(move || run(&shared))
                .ok();
        }
    }

    #[cfg(test)]
    pub(super) fn counts(&self) -> &Counts {
        &self.shared.counts
    }

    /// Holds the checkpointer still (`true`: once the checkpoint it may be
    /// running is over) or lets it go on.
    #[cfg(test)]
    pub(super) fn hold(&self, held: bool) {
        let mut state = self.shared.lock();
        state.held = held;
        self.shared.wake.notify_all();
        while state.running {
            state = self
                .shared
                .wake
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
        let thread = self.thread.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(thread) = thread.take() {
            let _ = thread.join();
        }
    }
}

/// Extends the file at `path` with written zeros up to `len` bytes (a
/// longer file is left as it is), durably.
fn write_zeros_to(path: &Path, len: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    let mut at = file.metadata()?.len();
    if at >= len {
        return Ok(());
    }
    file.seek(SeekFrom::Start(at))?;
    let zeros = vec![0u8; 1 << 20];
    while at < len {
        let n = (len - at).min(zeros.len() as u64) as usize;
        file.write_all(&zeros[..n])?;
        at += n as u64;
    }
    file.sync_all()
}

/// The checkpointer's own connection: no schema work, the store's sync
/// level (a checkpoint fsyncs the main file before it lets the log start
/// over, at either level).
fn connect(shared: &Shared) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        &shared.path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let sync = match shared.durability {
        Durability::Full => "FULL",
        Durability::Fast => "NORMAL",
    };
    conn.execute_batch(&format!(
        "PRAGMA synchronous = {sync}; PRAGMA wal_autocheckpoint = 0;"
    ))?;
    Ok(conn)
}

fn run(shared: &Shared) {
    let mut conn = None;
    loop {
        {
            let mut state = shared.lock();
            loop {
                #[cfg(test)]
                let held = state.held;
                #[cfg(not(test))]
                let held = false;
                if state.stop {
                    return;
                }
                if state.wanted && !held {
                    break;
                }
                state = shared.wake.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            state.wanted = false;
            state.running = true;
        }
        round(shared, &mut conn);
        shared.lock().running = false;
        shared.wake.notify_all();
    }
}

/// One checkpoint, on `conn` (opened first if need be).
fn round(shared: &Shared, conn: &mut Option<Connection>) {
    if conn.is_none() {
        *conn = connect(shared).ok();
    }
    let Some(c) = conn.as_ref() else {
        shared.counts.failed.fetch_add(1, Ordering::Relaxed);
        return;
    };
    if checkpoint(c, shared).is_err() {
        shared.counts.failed.fetch_add(1, Ordering::Relaxed);
        // A fresh connection next time, in case this one is the trouble.
        *conn = None;
    }
}

/// One round: copy back what is not copied yet, without blocking writers.
fn checkpoint(conn: &Connection, shared: &Shared) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(0))?;
    shared.counts.passive.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// A `RESTART` checkpoint on `conn`, without waiting: `Ok(true)` when it
/// could not finish (the checkpointer holds the checkpoint lock, another
/// process writes, or a reader still reads the old log). Waiting belongs
/// to the callers: a commit must not sit out another process's long read.
fn restart(conn: &Connection) -> rusqlite::Result<bool> {
    conn.busy_timeout(std::time::Duration::ZERO)?;
    let busy = conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |r| r.get::<_, i64>(0));
    conn.busy_timeout(BUSY_TIMEOUT)?;
    busy.map(|busy| busy != 0)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::{log_size, Limits};
    use crate::action::Action;
    use crate::observation::Observation;
    use crate::store::{self, Actor, Durability, EpisodeRecord, StepRecord, Store};

    /// Small limits, so a test run crosses each of them many times.
    const SMALL: Limits = Limits {
        passive_at: 20,
        restart_at: 80,
        block_at: 320,
    };

    /// Pages one step commit can add past a limit before the log is cut
    /// back: the step's row and index pages, its episode's row, and the
    /// commits that land while a background checkpoint is mid-way.
    const SLACK: i64 = 100;

    fn store(dir: &std::path::Path, durability: Durability, limits: Limits) -> (Store, String) {
        let store = Store::open_checkpointed(dir.join("store.sqlite"), durability, limits)
            .expect("store opens");
        let actor = Actor::Agent {
            model: "long-run".into(),
        };
        let record = EpisodeRecord::begin("mini", "1", "h", "pay-back", 0, actor);
        store.insert_episode(&record).expect("episode stored");
        (store, record.id)
    }

    /// A step whose observation fills about half a page.
    fn step(idx: u32) -> StepRecord {
        StepRecord {
            idx,
            action: Action::message(format!("step {idx}")),
            observation: Observation::success(serde_json::Value::Null, "x".repeat(2000)),
            terminated: false,
            truncated: false,
            wall_at: store::now(),
            active_ms: i64::from(idx),
            rationale: None,
            flag: None,
            retracted: false,
            retracted_at: None,
        }
    }

    /// Appends `n` steps; the longest the log was after any of them, in
    /// pages.
    fn run(store: &Store, id: &str, n: u32) -> i64 {
        (0..n)
            .map(|i| {
                store.append_step(id, &step(i)).expect("step recorded");
                store.with_connection(|c| log_size(c).expect("log size").pages)
            })
            .max()
            .unwrap_or(0)
    }

    fn log_file_len(dir: &std::path::Path) -> u64 {
        std::fs::metadata(dir.join("store.sqlite-wal")).map_or(0, |m| m.len())
    }

    /// Bytes a log of `pages` pages takes: a header, then each page with
    /// its frame header.
    fn log_bytes(pages: i64) -> u64 {
        32 + pages as u64 * (4096 + 24)
    }

    #[test]
    fn a_long_run_keeps_the_log_bounded_and_checkpoints_in_the_background() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = store(dir.path(), Durability::Fast, SMALL);
        let longest = run(&store, &id, 3000);
        assert!(
            longest <= SMALL.block_at + SLACK,
            "the log reached {longest} pages; bound {}",
            SMALL.block_at + SLACK
        );
        assert!(
            log_file_len(dir.path()) <= log_bytes(SMALL.block_at + SLACK),
            "the log file grew to {} bytes",
            log_file_len(dir.path())
        );
        let counts = store
            .checkpointer
            .as_ref()
            .expect("a checkpointer")
            .counts();
        assert!(
            counts.passive.load(Ordering::Relaxed) > 0,
            "no passive checkpoint ran in the background"
        );
        assert_eq!(
            counts.failed.load(Ordering::Relaxed),
            0,
            "a checkpoint failed"
        );
        assert_eq!(
            store.steps(&id).unwrap().len(),
            3000,
            "every step is stored"
        );
        store.integrity_check().expect("sound");
    }

    #[test]
    fn a_stalled_checkpointer_makes_commits_restart_the_log_themselves() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = store(dir.path(), Durability::Fast, SMALL);
        let checkpointer = store.checkpointer.as_ref().expect("a checkpointer");
        checkpointer.hold(true);
        let before = checkpointer.counts().passive.load(Ordering::Relaxed);
        let longest = run(&store, &id, 1500);
        assert!(
            longest <= SMALL.block_at + SLACK,
            "the log reached {longest} pages with the checkpointer stalled"
        );
        let counts = checkpointer.counts();
        assert!(
            counts.inline_restart.load(Ordering::Relaxed) > 0,
            "no commit restarted the log"
        );
        assert_eq!(
            counts.passive.load(Ordering::Relaxed),
            before,
            "the checkpointer was held"
        );
        checkpointer.hold(false);
        assert_eq!(store.steps(&id).unwrap().len(), 1500);
        store.integrity_check().expect("sound");
    }

    #[test]
    fn commits_never_checkpoint_in_line() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = store(dir.path(), Durability::Full, Limits::default());
        store
            .checkpointer
            .as_ref()
            .expect("a checkpointer")
            .hold(true);
        // SQLite's own autocheckpoint would have cut the log back at 1000.
        let longest = run(&store, &id, 600);
        assert!(
            longest > 1000,
            "the log was cut back in line ({longest} pages at most)"
        );
        assert_eq!(store.steps(&id).unwrap().len(), 600);
    }

    #[test]
    fn the_log_is_written_out_once_so_commits_write_over_it() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = store(dir.path(), Durability::Full, SMALL);
        let working = 32 + (SMALL.restart_at + SMALL.passive_at) as u64 * super::FRAME_BYTES;
        assert!(
            log_file_len(dir.path()) >= working,
            "the log is {} bytes after the first commit; expected at least {working}",
            log_file_len(dir.path())
        );
        run(&store, &id, 50);
        store.integrity_check().expect("sound");
        // What a crash leaves: the log, zeros past its frames included.
        let copy = dir.path().join("copy");
        std::fs::create_dir(&copy).unwrap();
        for name in ["store.sqlite", "store.sqlite-wal"] {
            std::fs::copy(dir.path().join(name), copy.join(name)).unwrap();
        }
        let recovered = Store::open(copy.join("store.sqlite")).expect("the copy opens");
        assert_eq!(
            recovered.steps(&id).unwrap().len(),
            50,
            "every step recovered"
        );
        recovered.integrity_check().expect("sound");
    }

    #[test]
    fn the_log_is_checkpointed_and_removed_when_the_store_closes() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = store(dir.path(), Durability::Full, SMALL);
        run(&store, &id, 200);
        drop(store);
        assert!(
            !dir.path().join("store.sqlite-wal").exists(),
            "the log outlived the store"
        );
        let reopened = Store::open(dir.path().join("store.sqlite")).expect("reopens");
        assert_eq!(reopened.steps(&id).unwrap().len(), 200);
    }
}
