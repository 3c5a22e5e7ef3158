//! Where this store's pulls from a team hub got to (see
//! `migrations/08-hub-cursors`): a cursor per hub account and feed, opaque
//! text the hub's client reads and writes, saved in the same transaction
//! as what the pull added.

use rusqlite::{params, OptionalExtension};

use super::{now, Store};
use crate::error::Result;

/// A pull's position in one feed of one hub account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubCursor<'a> {
    /// The hub and who is signed in to it (a reviewer and an expert see
    /// different things, so they pull from different positions).
    pub account: &'a str,
    /// Which feed.
    pub feed: &'a str,
    /// Where the pull got to, as the client wrote it.
    pub cursor: &'a str,
}

impl Store {
    /// The saved position of `feed` for `account`; `None`: never pulled.
    pub fn hub_cursor(&self, account: &str, feed: &str) -> Result<Option<String>> {
        Ok(self
            .lock()
            .query_row(
                "SELECT cursor FROM hub_cursors WHERE account = ?1 AND feed = ?2",
                [account, feed],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Saves a position on its own (a page that added nothing).
    pub fn save_hub_cursor(&self, c: &HubCursor<'_>) -> Result<()> {
        save_in(&self.lock(), c)
    }
}

/// Saves `c` on `conn` (inside the caller's transaction, when it has one).
pub(crate) fn save_in(conn: &rusqlite::Connection, c: &HubCursor<'_>) -> Result<()> {
    if c.account.trim().is_empty() || c.feed.trim().is_empty() {
        return Err(crate::error::Error::Conflict(
            "a hub cursor needs an account and a feed".into(),
        ));
    }
    conn.execute(
        "INSERT INTO hub_cursors (account, feed, cursor, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (account, feed) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at",
        params![c.account, c.feed, c.cursor, now()],
    )?;
    Ok(())
}
