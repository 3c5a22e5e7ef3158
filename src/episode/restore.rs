//! Putting the world back to its seed at reset.
//!
//! The fast path reverts only the rows the last episode touched (known from
//! the update hook), in one transaction, reading the original values from
//! the read-only base copy. Prepared statements stay valid, so the next
//! episode's steps do not re-prepare anything. Whenever that is not safe
//! (triggers, foreign-key actions) or anything goes wrong, the whole
//! seeded database is copied back from the base copy instead, which is
//! always correct.

use std::collections::BTreeMap;

use rusqlite::backup::{Backup, StepResult};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, MAIN_DB};

use super::Episode;
use crate::error::Result;
use crate::sql::values::quote_ident;

pub(super) fn reset_database(ep: &mut Episode) -> Result<()> {
    let touched: Vec<(String, i64)> = {
        let mut set = ep.touched.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *set).into_iter().collect()
    };
    if touched.is_empty() && !ep.world.restore.has_sequence {
        return Ok(());
    }
    let reverted = ep.world.restore.fast && revert(ep, &touched).is_ok();
    if !reverted {
        copy_base(ep)?;
    }
    // Reverting fired the update hook; none of that is episode activity.
    ep.touched.lock().unwrap_or_else(|e| e.into_inner()).clear();
    Ok(())
}

/// Copies the whole seeded database back from the base copy, page by page
/// with SQLite's backup API, into the live database in place.
///
/// Not `sqlite3_deserialize`: that reopens `main` with a new schema object
/// and frees the old one, but SQLite's eponymous virtual tables
/// (`json_each`, `json_tree`, `pragma_*` functions), built once per
/// connection, keep pointing at the freed schema. The next statement that
/// reads their columns then has SQLite look up a database index that is
/// not there and hand the authorizer a database name read from garbage: a
/// rusqlite panic ("received non-utf8 string as database name") or a
/// segfault. A backup keeps the schema object and only resets its contents.
fn copy_base(ep: &mut Episode) -> Result<()> {
    let Episode { conn, base, .. } = ep;
    let live = conn
        .as_mut()
        .expect("the connection is only lent during a script call");
    let _ = live.execute_batch("ROLLBACK");
    // The backup changes the schema cookie, so SQLite would re-prepare
    // cached statements anyway; finalizing them now keeps none of them
    // holding the old database's pages or schema.
    live.flush_prepared_statement_cache();
    let base = crate::world::base::lock(base);
    let copy = Backup::new_with_names(&base, MAIN_DB, live, MAIN_DB)?;
    match copy.step(-1)? {
        StepResult::Done => {}
        // One connection per thread and no other user of either database:
        // anything short of done is a fault, not a wait.
        other => {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                Some(format!(
                    "copying the seeded database back stopped early ({other:?})"
                )),
            )
            .into())
        }
    }
    drop(copy);
    crate::sql::limits::limit_database_size(live)?;
    Ok(())
}

fn revert(ep: &Episode, touched: &[(String, i64)]) -> rusqlite::Result<()> {
    let live = ep.conn();
    let base = crate::world::base::lock(&ep.base);
    let base = &*base;
    let plan = &ep.world.restore;
    let mut by_table: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for (t, rowid) in touched {
        by_table.entry(t.as_str()).or_default().push(*rowid);
    }
    live.execute_batch("BEGIN")?;
    let result = (|| -> rusqlite::Result<()> {
        // Rows the episode added go first, children before parents, so
        // unique keys they hold are free when originals come back.
        for table in plan.order.iter().rev() {
            let Some(rowids) = by_table.get(table.as_str()) else {
                continue;
            };
            let exists_sql = format!("SELECT 1 FROM {} WHERE rowid = ?1", quote_ident(table));
            let delete_sql = format!("DELETE FROM {} WHERE rowid = ?1", quote_ident(table));
            for rowid in rowids {
                let in_base = base.prepare_cached(&exists_sql)?.exists([rowid])?;
                if !in_base {
                    live.prepare_cached(&delete_sql)?.execute([rowid])?;
                }
            }
        }
        // Then originals are written back, parents before children.
        for table in &plan.order {
            let Some(rowids) = by_table.get(table.as_str()) else {
                continue;
            };
            let Some(columns) = plan.columns.get(table) else {
                continue;
            };
            let list = columns
                .iter()
                .map(|c| quote_ident(c))
                .collect::<Vec<_>>()
                .join(", ");
            let select = format!("SELECT {list} FROM {} WHERE rowid = ?1", quote_ident(table));
            let sets = columns
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{} = ?{}", quote_ident(c), i + 2))
                .collect::<Vec<_>>()
                .join(", ");
            let update = format!("UPDATE {} SET {sets} WHERE rowid = ?1", quote_ident(table));
            let marks = (2..=columns.len() + 1)
                .map(|i| format!("?{i}"))
                .collect::<Vec<_>>()
                .join(", ");
            let insert = format!(
                "INSERT INTO {} (rowid, {list}) VALUES (?1, {marks})",
                quote_ident(table)
            );
            let exists_sql = format!("SELECT 1 FROM {} WHERE rowid = ?1", quote_ident(table));
            for rowid in rowids {
                let original = read_row(base, &select, *rowid, columns.len())?;
                let Some(mut values) = original else { continue };
                values.insert(0, SqlValue::Integer(*rowid));
                let present = live.prepare_cached(&exists_sql)?.exists([rowid])?;
                let sql = if present { &update } else { &insert };
                live.prepare_cached(sql)?
                    .execute(rusqlite::params_from_iter(values.iter()))?;
            }
        }
        if plan.has_sequence {
            live.prepare_cached("DELETE FROM sqlite_sequence")?
                .execute([])?;
            let rows: Vec<(String, i64)> = {
                let mut stmt = base.prepare_cached("SELECT name, seq FROM sqlite_sequence")?;
                let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            for (name, seq) in rows {
                live.prepare_cached("INSERT INTO sqlite_sequence (name, seq) VALUES (?1, ?2)")?
                    .execute(rusqlite::params![name, seq])?;
            }
        }
        Ok(())
    })();
    match result {
        Ok(()) => live.execute_batch("COMMIT"),
        Err(e) => {
            let _ = live.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn read_row(
    conn: &Connection,
    sql: &str,
    rowid: i64,
    n: usize,
) -> rusqlite::Result<Option<Vec<SqlValue>>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query([rowid])?;
    match rows.next()? {
        Some(row) => (0..n)
            .map(|i| row.get::<_, SqlValue>(i))
            .collect::<rusqlite::Result<Vec<_>>>()
            .map(Some),
        None => Ok(None),
    }
}
