//! The hub's change feeds: what an app pulls is read as "the rows changed
//! after my cursor", not the whole table, so a sync costs what changed, not
//! what the hub holds.
//!
//! Every row a feed serves carries `change_xid`, the id of the transaction
//! that last wrote it, and `change_seq`, a number from one sequence, both
//! set by the `note_change` trigger on every insert and update (hub
//! migration V5). A page is the rows after the cursor in `(change_xid,
//! change_seq)` order, **only those whose transaction is older than the
//! oldest transaction still running** when the page is read
//! (`pg_snapshot_xmin` of the reading snapshot).
//!
//! Why this and not a plain serial column read with `> cursor`: sequence
//! numbers are handed out when a row is written, not when its transaction
//! commits, so a transaction holding number 7 can commit after one holding
//! 8 was read; a cursor at 8 would pass 7 for good. Below the snapshot's
//! xmin every transaction has finished, so what a page holds is final, and
//! any write not yet visible belongs to a transaction at or above xmin,
//! which sorts after every row read. Chosen over a commit-ordered counter
//! bumped under a lock because that lock would serialize every push (a
//! push transaction is large); the price here is only that a long-running
//! transaction delays what the feeds show until it ends, never loses it.
//! The page is read in one REPEATABLE READ snapshot, so the bound and the
//! rows agree.

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, IsolationLevel, Row, Transaction};

use crate::error::ApiError;
use crate::wire::ChangeCursor;

/// A feed read: its snapshot, and the transaction id below which every
/// write is final in it.
pub(crate) struct Read<'a> {
    pub tx: Transaction<'a>,
    pub bound: i64,
}

/// Opens a feed read on `db`.
pub(crate) async fn begin(db: &mut Client) -> Result<Read<'_>, ApiError> {
    let tx = db
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await?;
    let bound: i64 = tx
        .query_one(
            "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint",
            &[],
        )
        .await?
        .get(0);
    Ok(Read { tx, bound })
}

impl Read<'_> {
    /// Up to `limit` rows of `select` (a `SELECT ... FROM table g ...`
    /// whose rows have g's change columns) with `clauses` (a `WHERE ...`
    /// over `args`), after `after` and below the bound, in feed order.
    pub async fn page(
        &self,
        select: &str,
        clauses: &str,
        mut args: Vec<Box<dyn ToSql + Sync + Send>>,
        after: ChangeCursor,
        limit: usize,
    ) -> Result<Vec<Row>, ApiError> {
        let n = args.len();
        args.push(Box::new(after.xid));
        args.push(Box::new(after.seq));
        args.push(Box::new(self.bound));
        args.push(Box::new(limit as i64));
        let sql = format!(
            "{select}{clauses} AND (g.change_xid, g.change_seq) > (${}, ${}) AND g.change_xid < ${} ORDER BY g.change_xid, g.change_seq LIMIT ${}",
            n + 1,
            n + 2,
            n + 3,
            n + 4
        );
        Ok(self.tx.query(&sql, &crate::episodes::params(&args)).await?)
    }

    /// Where the next read starts after pages of several tables read with
    /// the same `after` and `limit`: the last row of the first full page
    /// (rows after it are kept for the next read: see [`keep`]), or, when
    /// no page was full, the bound itself — every write below it has been
    /// seen. `true` when more rows wait.
    pub fn next(
        &self,
        after: ChangeCursor,
        pages: &[&[Row]],
        limit: usize,
    ) -> (ChangeCursor, bool) {
        let cut = pages
            .iter()
            .filter(|p| p.len() >= limit)
            .filter_map(|p| p.last().map(key))
            .min();
        match cut {
            Some(c) => (c, true),
            None => (
                after.max(ChangeCursor {
                    xid: self.bound - 1,
                    seq: i64::MAX,
                }),
                false,
            ),
        }
    }
}

/// A row's position in its feed.
pub(crate) fn key(r: &Row) -> ChangeCursor {
    ChangeCursor {
        xid: r.get("change_xid"),
        seq: r.get("change_seq"),
    }
}

/// Whether `r` belongs to the page that ends at `next`.
pub(crate) fn keep(r: &Row, next: ChangeCursor) -> bool {
    key(r) <= next
}
