//! The seeded database every episode of a world diffs against, opened once
//! per world and shared.
//!
//! Each episode used to deserialize its own read-only copy of the seed
//! beside its live one, so one more session cost two copies of the world:
//! 1.6 GB at ×100 τ-retail. The base is never written, so one connection,
//! behind a lock held only while a diff reads the rows an episode touched,
//! serves every episode of the world.
//!
//! The base and every episode's live database read the seed's pages from
//! one shared image, the world's serialized snapshot, through the
//! copy-on-write VFS in `understudy-cowvfs`: an episode holds only the
//! pages it writes (a few KB for a few steps, whatever the world's size),
//! and the base, never written, holds none. That crate is the one place
//! with `unsafe` (SQLite calls a VFS through C function pointers); the
//! engine itself stays `unsafe_code = "forbid"`.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rusqlite::{Connection, OpenFlags};

use crate::error::Result;

/// Prepared statements kept on the shared base (a few per table).
const STATEMENT_CACHE: usize = 64;

/// The world's read-only seed connection, opened on first use.
#[derive(Default)]
pub(crate) struct SharedBase(OnceLock<Arc<Mutex<Connection>>>);

impl SharedBase {
    /// The base connection of the world whose seed is `snapshot`, opening it
    /// the first time.
    pub(crate) fn get(&self, snapshot: &Arc<[u8]>) -> Result<Arc<Mutex<Connection>>> {
        if let Some(base) = self.0.get() {
            return Ok(Arc::clone(base));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let (conn, _no_writes) = understudy_cowvfs::open(Arc::clone(snapshot), flags)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // Two episodes racing here both open one; the first stored wins and
        // the other is dropped.
        Ok(Arc::clone(
            self.0.get_or_init(|| Arc::new(Mutex::new(conn))),
        ))
    }
}

/// Locks a base connection; a panic elsewhere while it was held leaves it
/// as usable as before (it is read-only), so poisoning is ignored.
pub(crate) fn lock(base: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    base.lock().unwrap_or_else(|e| e.into_inner())
}
