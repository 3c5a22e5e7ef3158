//! Size limits on world connections, so one call cannot take a gigabyte.
//!
//! SQLite's defaults let a single value grow to 1 GB
//! (`printf('%.*c', 999999999, 'x')`, `hex(zeroblob(4e8))`) and an
//! in-memory database grow until the machine runs out. World connections
//! get limits a real world never comes near; breaking one fails the call
//! (or the load) with an error that says which limit it was.

use std::sync::atomic::{AtomicI64, Ordering};

use rusqlite::limits::Limit;
use rusqlite::Connection;

/// The longest string or blob, and the largest row, world SQL may build.
pub const MAX_VALUE_BYTES: i32 = 8 << 20;
/// The longest SQL statement text.
pub const MAX_SQL_BYTES: i32 = 1 << 20;
/// The largest a world's database may grow (seed plus an episode's changes).
pub const MAX_DATABASE_BYTES: i64 = 128 << 20;
/// The most one query's rows may take once collected (see [`ResultSize`]).
pub const MAX_RESULT_BYTES: usize = 32 << 20;

/// The most memory SQLite may hold in this process, for every world
/// session and store connection together. The per-connection limits above
/// bound one call; this is the backstop for many large sessions at once
/// (64 sessions of a world near [`MAX_DATABASE_BYTES`] would take 8 GiB),
/// so the next allocation fails with a clear error instead of the machine
/// running out of memory.
pub const MAX_SQLITE_HEAP_BYTES: i64 = 4 << 30;

/// The process-wide cap in force, for error messages (SQLite's own
/// "out of memory" does not say which cap was met).
static HEAP_LIMIT: AtomicI64 = AtomicI64::new(0);

/// Sets every limit on `conn`, and the process-wide heap cap if it is not
/// already at or below [`MAX_SQLITE_HEAP_BYTES`].
pub fn apply(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)?;
    conn.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES)?;
    set_process_heap_limit(conn, MAX_SQLITE_HEAP_BYTES)?;
    limit_database_size(conn)
}

/// Lowers the cap on all the memory SQLite holds in this process to
/// `bytes`. The cap can be lowered but never raised, so an embedder
/// that wants less (a small container) calls this before loading worlds.
pub fn lower_process_heap_limit(bytes: i64) -> rusqlite::Result<()> {
    set_process_heap_limit(&Connection::open_in_memory()?, bytes)
}

/// Sets the process-wide cap through `conn` unless it is already lower.
fn set_process_heap_limit(conn: &Connection, bytes: i64) -> rusqlite::Result<()> {
    let current = HEAP_LIMIT.load(Ordering::Relaxed);
    if current != 0 && current <= bytes {
        return Ok(());
    }
    let now: i64 = if understudy_cowvfs::heap::installed() {
        understudy_cowvfs::heap::set_limit(bytes)
    } else {
        conn.query_row(&format!("PRAGMA hard_heap_limit = {bytes}"), [], |r| {
            r.get(0)
        })?
    };
    HEAP_LIMIT.store(now, Ordering::Relaxed);
    Ok(())
}

/// The process-wide cap set by [`lower_process_heap_limit`], in bytes (0
/// before any world connection was opened).
pub fn process_heap_limit() -> i64 {
    HEAP_LIMIT.load(Ordering::Relaxed)
}

/// Caps the main database's size. A page-count limit belongs to the open
/// database, so this is needed again whenever the database is replaced
/// (deserialized).
pub fn limit_database_size(conn: &Connection) -> rusqlite::Result<()> {
    let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    conn.pragma_update(
        None,
        "max_page_count",
        MAX_DATABASE_BYTES / page_size.max(512),
    )
}

/// Counts what a query's collected rows take, so a query of many rows
/// under the value limit (a thousand 8 MiB strings) still cannot take
/// gigabytes once turned into JSON.
#[derive(Debug, Default)]
pub struct ResultSize {
    bytes: usize,
}

impl ResultSize {
    /// Counts one value; fails once the rows so far pass
    /// [`MAX_RESULT_BYTES`]. Blobs count double (they become hex text), and
    /// every value counts a little for its key and slot.
    pub fn add(&mut self, value: rusqlite::types::ValueRef<'_>) -> rusqlite::Result<()> {
        use rusqlite::types::ValueRef;
        let data = match value {
            ValueRef::Text(t) => t.len(),
            ValueRef::Blob(b) => b.len() * 2,
            _ => 0,
        };
        self.bytes = self.bytes.saturating_add(64 + data);
        if self.bytes > MAX_RESULT_BYTES {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_TOOBIG),
                Some(format!(
                    "the rows returned take more than {} MiB, the most one query may return",
                    MAX_RESULT_BYTES >> 20
                )),
            ));
        }
        Ok(())
    }
}
