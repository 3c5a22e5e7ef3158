//! Putting the world back to its seed at reset.
//!
//! The episode's database is copy-on-write over the world's seed image
//! (`understudy-cowvfs`): every page it wrote is private, every other page
//! is read from the shared image. Reset drops the private pages, so it
//! costs what the episode changed, never the world's size, and is right
//! whatever the episode did (triggers, foreign-key actions, AUTOINCREMENT
//! bookkeeping): the database is the seed again, byte for byte. SQLite
//! sees the seed's page 1 change counter differ from the one its page cache
//! was read with and drops that cache at the next statement; the schema is
//! unchanged, so prepared statements stay valid.

use super::Episode;
use crate::error::Result;

pub(super) fn reset_database(ep: &mut Episode) -> Result<()> {
    ep.touched.lock().unwrap_or_else(|e| e.into_inner()).clear();
    if ep.overlay.private_bytes() == 0 {
        return Ok(());
    }
    if ep.overlay.reset().is_err() {
        // A transaction or a statement still holds a lock: end them, then
        // the pages can go.
        let live = ep.conn();
        if !live.is_autocommit() {
            let _ = live.execute_batch("ROLLBACK");
        }
        live.flush_prepared_statement_cache();
        ep.overlay.reset().map_err(|e| {
            crate::error::Error::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                Some(format!("resetting the episode's database: {e}")),
            ))
        })?;
    }
    Ok(())
}
