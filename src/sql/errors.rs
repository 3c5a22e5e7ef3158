//! SQLite failures in words, as world authors and agents read them.

use super::budget;

/// SQLite's own message for a failed statement, without rusqlite's wrapping;
/// a bound the engine set is named instead of SQLite's terse word for it.
pub fn sql_message(e: &rusqlite::Error) -> String {
    if budget::is_exhausted(e) {
        return format!(
            "it ran more than {} SQLite operations and was stopped (a query, trigger or recursive CTE that never ends?)",
            budget::MAX_OPERATIONS
        );
    }
    match e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        other => other.to_string(),
    }
}
