//! The hub's change feeds: what an app pulls is read as "the rows changed
//! after my cursor", not the whole table, so a sync costs what changed, not
//! what the hub holds.
//!
//! Every row a feed serves carries `change_seq`, a number from one
//! sequence **handed out in commit order** (hub migration V5): an insert or
//! update marks the row (`change_seq` NULL, a BEFORE trigger), and a
//! deferred trigger, run while the writing transaction commits, takes one
//! lock of this database (a transaction-level advisory lock, held until
//! the commit is done) and numbers the marked rows. A page is the rows
//! with `change_seq > cursor`, in that order.
//!
//! Why: a serial column numbered when the row is written is not enough, as
//! numbers are handed out at write time and transactions commit in any
//! order. A transaction holding 7 can commit after one holding 8 was read,
//! and a cursor at 8 passes 7 for good (the sequence-gap race). Numbered
//! under the lock at commit, every row a reader can see has a lower
//! number than every row not yet committed, so a cursor never passes one.
//! Chosen over bounding reads by the oldest running transaction
//! (`pg_snapshot_xmin`) because that bound is the whole PostgreSQL
//! cluster's: one long transaction anywhere on the server, in any
//! database, would hold every app's feed back; the lock here is this
//! database's only and is held just for the numbering and the commit
//! (writers still do their work side by side; only their commits queue).
//!
//! Marked rows are invisible until numbered (their transaction has not
//! committed), so the feed never shows a NULL; the page and the high-water
//! mark are read in one snapshot (REPEATABLE READ), so they agree.

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, IsolationLevel, Row, Transaction};

use crate::error::ApiError;
use crate::wire::ChangeCursor;

/// A feed read: one snapshot for its pages and marks.
pub(crate) struct Read<'a> {
    pub tx: Transaction<'a>,
}

/// Opens a feed read on `db`.
pub(crate) async fn begin(db: &mut Client) -> Result<Read<'_>, ApiError> {
    let tx = db
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await?;
    Ok(Read { tx })
}

/// A page of one table's feed: the rows served, and the highest number
/// in the table (rows the filter left out included).
pub(crate) struct Page {
    pub rows: Vec<Row>,
    pub high: i64,
    full: bool,
}

impl Read<'_> {
    /// Up to `limit` rows of `select` (a `SELECT ... FROM table g ...`
    /// whose rows have g's `change_seq`) with `clauses` (a `WHERE ...`
    /// over `args`), numbered after `after`, in feed order.
    pub async fn page(
        &self,
        table: &'static str,
        select: &str,
        clauses: &str,
        mut args: Vec<Box<dyn ToSql + Sync + Send>>,
        after: ChangeCursor,
        limit: usize,
    ) -> Result<Page, ApiError> {
        let n = args.len();
        args.push(Box::new(after.seq));
        args.push(Box::new(limit as i64));
        let sql = format!(
            "{select}{clauses} AND g.change_seq > ${} ORDER BY g.change_seq LIMIT ${}",
            n + 1,
            n + 2
        );
        let rows = self.tx.query(&sql, &crate::episodes::params(&args)).await?;
        let high: Option<i64> = self
            .tx
            .query_one(&format!("SELECT max(change_seq) FROM {table}"), &[])
            .await?
            .get(0);
        Ok(Page {
            full: rows.len() >= limit,
            rows,
            high: high.unwrap_or(0),
        })
    }
}

/// Where the next read starts after `pages` (of several tables, read with
/// the same `after`): the last row of the first full page (rows after it
/// wait for the next read: see [`keep`]), or, when no page was full, the
/// highest number of any table, past rows the filters left out, which
/// are then never read again. `true` when more rows wait.
pub(crate) fn next(after: ChangeCursor, pages: &[&Page]) -> (ChangeCursor, bool) {
    let cut = pages
        .iter()
        .filter(|p| p.full)
        .filter_map(|p| p.rows.last().map(key))
        .min();
    match cut {
        Some(c) => (c, true),
        None => (
            after.max(ChangeCursor {
                seq: pages.iter().map(|p| p.high).max().unwrap_or(0),
            }),
            false,
        ),
    }
}

/// A row's position in its feed.
pub(crate) fn key(r: &Row) -> ChangeCursor {
    ChangeCursor {
        seq: r.get("change_seq"),
    }
}

/// Whether `r` belongs to the page that ends at `next`.
pub(crate) fn keep(r: &Row, next: ChangeCursor) -> bool {
    key(r) <= next
}
