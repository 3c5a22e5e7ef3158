//! The SQL sandbox: what world SQL may do, enforced by SQLite's authorizer.
//!
//! The authorizer runs when a statement is *prepared*, so the mode in force
//! at preparation decides. The engine prepares its own statements (savepoints,
//! diffs) in [`SandboxMode::Engine`] without the statement cache, and world
//! SQL only ever under a world mode, so a cached world statement can never
//! have been authorized with engine rights.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::Connection;

/// Who is running SQL right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum SandboxMode {
    /// The engine itself: schema creation, seeding, savepoints, diffs.
    Engine = 0,
    /// A write tool: may read and change rows, nothing else.
    WorldWrite = 1,
    /// A read tool, a view, a rubric query: may only read.
    WorldRead = 2,
}

/// Handle to switch the authorizer's mode on one connection.
#[derive(Debug, Clone)]
pub struct Sandbox {
    mode: Arc<AtomicU8>,
}

impl Sandbox {
    /// Installs the authorizer and hardening limits (and the size limits of
    /// [`super::limits`]) on `conn`.
    pub fn install(conn: &Connection) -> rusqlite::Result<Sandbox> {
        let mode = Arc::new(AtomicU8::new(SandboxMode::Engine as u8));
        let seen = Arc::clone(&mode);
        conn.authorizer(Some(move |ctx: AuthContext<'_>| {
            authorize(seen.load(Ordering::Relaxed), ctx.action)
        }))?;
        // Belt and braces: even if the authorizer were bypassed, no database
        // can be attached and the schema cannot be edited through PRAGMAs.
        conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0)?;
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        super::limits::apply(conn)?;
        Ok(Sandbox { mode })
    }

    /// Switches what the connection may do from the next statement on.
    pub fn set(&self, mode: SandboxMode) {
        self.mode.store(mode as u8, Ordering::Relaxed);
    }

    /// What the connection may do now.
    pub fn mode(&self) -> SandboxMode {
        match self.mode.load(Ordering::Relaxed) {
            1 => SandboxMode::WorldWrite,
            2 => SandboxMode::WorldRead,
            _ => SandboxMode::Engine,
        }
    }

    /// Runs `f` under `mode`, restoring the previous mode afterwards.
    pub fn with<T>(&self, mode: SandboxMode, f: impl FnOnce() -> T) -> T {
        let previous = self.mode();
        self.set(mode);
        let out = f();
        self.set(previous);
        out
    }
}

fn authorize(mode: u8, action: AuthAction<'_>) -> Authorization {
    if mode == SandboxMode::Engine as u8 {
        // Deleting row by row keeps the update hook informed (the truncate
        // optimisation skips it), which the state diff relies on.
        return match action {
            AuthAction::Delete { .. } => Authorization::Ignore,
            _ => Authorization::Allow,
        };
    }
    let read_only = mode == SandboxMode::WorldRead as u8;
    match action {
        AuthAction::Select | AuthAction::Recursive => Authorization::Allow,
        AuthAction::Read { .. } => Authorization::Allow,
        AuthAction::Function { function_name } => {
            if FORBIDDEN_FUNCTIONS.contains(&function_name.to_ascii_lowercase().as_str()) {
                Authorization::Deny
            } else {
                Authorization::Allow
            }
        }
        AuthAction::Insert { table_name } | AuthAction::Update { table_name, .. }
            if !read_only && !is_internal(table_name) =>
        {
            Authorization::Allow
        }
        // IGNORE on DELETE lets it proceed row by row: see above.
        AuthAction::Delete { table_name } if !read_only && !is_internal(table_name) => {
            Authorization::Ignore
        }
        _ => Authorization::Deny,
    }
}

/// SQLite's own bookkeeping tables are never a world's to write.
fn is_internal(table: &str) -> bool {
    table.to_ascii_lowercase().starts_with("sqlite_")
}

/// Functions that reach outside the world or defeat determinism. Time and
/// randomness functions are replaced by deterministic versions instead.
const FORBIDDEN_FUNCTIONS: &[&str] = &[
    "load_extension",
    "readfile",
    "writefile",
    "edit",
    "fts3_tokenizer",
    "sqlite_offset",
];

/// The statement kinds world SQL may contain. Checked on the text because
/// some statements (VACUUM INTO) have no authorizer action of their own.
pub fn check_statement_kind(sql: &str) -> Result<(), String> {
    let first = first_keyword(sql);
    match first.as_str() {
        "SELECT" | "WITH" | "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | "VALUES" => Ok(()),
        "" => Err("the statement is empty".into()),
        other => Err(format!(
            "`{other}` statements are not allowed in a world; only SELECT, WITH, INSERT, UPDATE, DELETE, REPLACE and VALUES"
        )),
    }
}

fn first_keyword(sql: &str) -> String {
    let mut rest = sql.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix("--") {
            rest = after
                .split_once('\n')
                .map(|(_, r)| r)
                .unwrap_or("")
                .trim_start();
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after
                .split_once("*/")
                .map(|(_, r)| r)
                .unwrap_or("")
                .trim_start();
        } else {
            break;
        }
    }
    rest.chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_kinds() {
        assert!(check_statement_kind("select 1").is_ok());
        assert!(
            check_statement_kind("  -- c\n /* x */ WITH a AS (SELECT 1) SELECT * FROM a").is_ok()
        );
        assert!(check_statement_kind("VACUUM INTO '/tmp/x'").is_err());
        assert!(check_statement_kind("pragma foreign_keys=off").is_err());
        assert!(check_statement_kind("ATTACH 'x' AS y").is_err());
        assert!(check_statement_kind("").is_err());
    }
}
