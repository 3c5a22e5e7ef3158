//! SQLite failures in words, as world authors and agents read them.

/// SQLite's own message for a failed statement, without rusqlite's wrapping.
pub fn sql_message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        other => other.to_string(),
    }
}
