//! The world database: a connection with the world's built-ins, the schema
//! applied to it, and the seed rows loaded and checked.

use rusqlite::Connection;

use super::context::LoadContext;
use crate::diagnostics::line_of;
use crate::error::{Error, Result};
use crate::sql::budget::is_exhausted;
use crate::sql::{functions, sql_message};
use crate::world::manifest::WorldToml;
use crate::world::seed;

/// A connection whose main database reads `image` (a serialized SQLite
/// database; empty for a new one) through the copy-on-write VFS
/// (`understudy-cowvfs`), with the world's built-ins installed, and the
/// handle to the pages it writes.
///
/// Both the loader and every episode open the world this way. An episode
/// holds only the pages it writes and drops them at reset. The loader
/// seeds a new world over an empty image and then takes its pages as the
/// world's image ([`understudy_cowvfs::Overlay::into_image`]), or opens
/// over an image an earlier load compiled, so the world's data is held
/// once rather than as a page cache, a serialized copy and the image.
pub(crate) fn open_episode_connection(
    state: &functions::SharedState,
    image: &std::sync::Arc<[u8]>,
) -> rusqlite::Result<(Connection, understudy_cowvfs::Overlay)> {
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let (conn, overlay) = understudy_cowvfs::open(std::sync::Arc::clone(image), flags)?;
    conn.execute_batch("PRAGMA foreign_keys = ON;")?;
    functions::register(&conn, state)?;
    Ok((conn, overlay))
}

/// Applies `schema.sql` under one operation budget; whether it applied (if
/// not, that is a problem).
pub(super) fn apply_schema(cx: &mut LoadContext<'_>, schema: &str) -> bool {
    cx.budget.renew();
    match cx.conn.execute_batch(schema) {
        Ok(()) => true,
        Err(e) => {
            let message = if is_exhausted(&e) {
                format!("schema.sql took too long: {}", sql_message(&e))
            } else {
                format!("schema does not apply: {}", sql_message(&e))
            };
            cx.diags.push("schema.sql", None, None, message);
            false
        }
    }
}

/// Loads every `[[seed]]` entry inside one transaction with deferred
/// foreign keys, then checks the keys. Whether the seed is sound: when it
/// is not, the problems are reported and nothing is kept.
pub(super) fn seed(cx: &mut LoadContext<'_>, manifest: &WorldToml, text: &str) -> Result<bool> {
    let conn = &cx.conn;
    conn.execute_batch("BEGIN; PRAGMA defer_foreign_keys = ON;")
        .map_err(Error::Sqlite)?;
    let mut origins = seed::Origins::new();
    let problems_before_seed = cx.diags.len();
    for entry in &manifest.seed {
        // Each seed file gets its own budget: the schema's triggers run on
        // every row loaded.
        cx.budget.renew();
        let line = line_of(text, entry.span().start);
        cx.hashed.add(&entry.get_ref().file);
        seed::load(
            conn,
            cx.root,
            entry.get_ref(),
            line,
            &mut origins,
            &mut cx.diags,
        );
    }
    cx.budget.renew();
    seed::check_foreign_keys(conn, &origins, &mut cx.diags);
    if cx.diags.len() > problems_before_seed {
        let _ = conn.execute_batch("ROLLBACK");
        return Ok(false);
    }
    conn.execute_batch("PRAGMA defer_foreign_keys = OFF; COMMIT;")
        .map_err(Error::Sqlite)?;
    Ok(true)
}
