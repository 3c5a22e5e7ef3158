//! The seeded database every episode of a world diffs against and restores
//! from, opened once per world and shared.
//!
//! Each episode used to deserialize its own read-only copy of the seed
//! beside its live one, so one more session cost two copies of the world:
//! 1.6 GB at ×100 τ-retail. The base is never written, so one connection,
//! behind a lock held only while a diff or a reset reads the rows an
//! episode touched, serves every episode of the world.
//!
//! Each episode's live database is still a whole private copy of the seed,
//! so one more session costs about the seeded database's size, which grows
//! with the world. Sharing the seed's pages and copying only those an
//! episode writes needs a copy-on-write layer under SQLite: a VFS over the
//! shared image, or a private `mmap` of it handed to `sqlite3_deserialize`.
//! Both are `unsafe` FFI, which the engine forbids (`unsafe_code =
//! "forbid"`), and SQLite has no such layer built in (its `memdb` shares a
//! database between connections only as one writable copy).

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rusqlite::{Connection, MAIN_DB};

use crate::error::Result;

/// Prepared statements kept on the shared base (a few per table).
const STATEMENT_CACHE: usize = 64;

/// The world's read-only seed connection, opened on first use.
#[derive(Default)]
pub(crate) struct SharedBase(OnceLock<Arc<Mutex<Connection>>>);

impl SharedBase {
    /// The base connection of the world whose seed is `snapshot`, opening it
    /// the first time.
    pub(crate) fn get(&self, snapshot: &[u8]) -> Result<Arc<Mutex<Connection>>> {
        if let Some(base) = self.0.get() {
            return Ok(Arc::clone(base));
        }
        let mut conn = Connection::open_in_memory()?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        conn.deserialize_read_exact(MAIN_DB, snapshot, snapshot.len(), true)?;
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
