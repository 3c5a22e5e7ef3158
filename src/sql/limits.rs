//! Size limits on world connections, so one call cannot take a gigabyte.
//!
//! SQLite's defaults let a single value grow to 1 GB
//! (`printf('%.*c', 999999999, 'x')`, `hex(zeroblob(4e8))`) and an
//! in-memory database grow until the machine runs out. World connections
//! get limits a real world never comes near; breaking one fails the call
//! (or the load) with an error that says which limit it was.

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

/// Sets every limit on `conn`.
pub fn apply(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)?;
    conn.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES)?;
    limit_database_size(conn)
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
