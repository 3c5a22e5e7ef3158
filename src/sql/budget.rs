//! The operation budget on world connections: SQLite's progress handler
//! stops any statement once the current budget is spent.
//!
//! Counting VM operations rather than time keeps the bound deterministic:
//! the same SQL on the same data stops at the same point on every machine.
//! Every world connection gets one (the load connection, for `schema.sql`
//! and the seed, as well as each episode's), and whoever runs world SQL
//! renews it first: one budget per call, per query, per load step.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rusqlite::Connection;

/// SQLite calls the progress handler every this many VM operations.
const PROGRESS_INTERVAL: i32 = 10_000;
/// A budget is this many progress intervals.
const MAX_PROGRESS_TICKS: u64 = 10_000;
/// The most VM operations one budget allows (~100M; a second or so).
pub const MAX_OPERATIONS: u64 = PROGRESS_INTERVAL as u64 * MAX_PROGRESS_TICKS;

/// Handle to renew the budget of one connection.
#[derive(Debug, Clone)]
pub struct OperationBudget {
    ticks: Arc<AtomicU64>,
}

impl OperationBudget {
    /// Installs the progress handler on `conn`, with a full budget.
    pub fn install(conn: &Connection) -> rusqlite::Result<OperationBudget> {
        let ticks = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&ticks);
        conn.progress_handler(
            PROGRESS_INTERVAL,
            Some(move || counter.fetch_add(1, Ordering::Relaxed) >= MAX_PROGRESS_TICKS),
        )?;
        Ok(OperationBudget { ticks })
    }

    /// Starts a fresh budget for the next piece of work.
    pub fn renew(&self) {
        self.ticks.store(0, Ordering::Relaxed);
    }
}

/// Whether `e` is a statement stopped by the budget.
pub fn is_exhausted(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::OperationInterrupted)
}
