//! SQLite failures in words, as world authors and agents read them.

use rusqlite::ErrorCode;

use super::{budget, limits};

/// SQLite's own message for a failed statement, without rusqlite's wrapping;
/// a bound the engine set is named instead of SQLite's terse word for it.
pub fn sql_message(e: &rusqlite::Error) -> String {
    let own = match e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        other => other.to_string(),
    };
    match e.sqlite_error_code() {
        Some(ErrorCode::OperationInterrupted) => format!(
            "it ran more than {} SQLite operations and was stopped (a query, trigger or recursive CTE that never ends?)",
            budget::MAX_OPERATIONS
        ),
        Some(ErrorCode::TooBig) if own == "string or blob too big" => format!(
            "a value grew past {} MiB, the most world SQL may build in one string, blob or row",
            limits::MAX_VALUE_BYTES >> 20
        ),
        Some(ErrorCode::TooBig) if own == "statement too long" => format!(
            "the statement is longer than {} MiB, the most world SQL may be",
            limits::MAX_SQL_BYTES >> 20
        ),
        Some(ErrorCode::DiskFull) => format!(
            "the world's database would grow past {} MiB, the most it may hold",
            limits::MAX_DATABASE_BYTES >> 20
        ),
        Some(ErrorCode::OutOfMemory) => format!(
            "SQLite reached the {} MiB of memory it may hold in this process (too many large sessions open at once, or SQL that builds too much)",
            limits::process_heap_limit() >> 20
        ),
        _ => own,
    }
}

/// Whether `e` is a statement stopped by one of the engine's bounds (the
/// operation budget or a size limit) rather than an error in the SQL.
pub fn is_bound(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(
            ErrorCode::OperationInterrupted
                | ErrorCode::TooBig
                | ErrorCode::DiskFull
                | ErrorCode::OutOfMemory
        )
    )
}
