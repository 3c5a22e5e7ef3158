//! The load context: what every step of loading a world shares.
//!
//! Compiling a tool, a view or a task needs the world folder, the seeded
//! database (behind the same sandbox it will run under), the script engine,
//! the template environment and the list of problems found so far. Holding
//! them in one place keeps each step's signature down to what is specific to
//! it.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use super::database::open_episode_connection;
use crate::diagnostics::Diagnostics;
use crate::error::{Error, Result};
use crate::sql::functions::SimState;
use crate::sql::sandbox::{check_statement_kind, Sandbox, SandboxMode};
use crate::sql::values::parameter_names;
use crate::sql::{sql_message, OperationBudget};
use crate::world::hash::HashedFiles;
use crate::world::WorldMeta;

/// The shared state of one world load.
pub(super) struct LoadContext<'a> {
    /// The world folder.
    pub root: &'a Path,
    /// Every problem found so far; loading goes on after the first.
    pub diags: Diagnostics,
    /// The world database, with the world's built-ins installed.
    pub conn: Connection,
    /// The pages written to `conn`: a newly seeded world's image, once
    /// `conn` is closed.
    pub overlay: understudy_cowvfs::Overlay,
    /// The authorizer on `conn`, so world SQL prepares under its run-time mode.
    pub sandbox: Sandbox,
    /// The operation budget on `conn`: `schema.sql` and the seed run under
    /// it too, so a query or trigger that never ends fails the load.
    pub budget: OperationBudget,
    /// Compiles tool scripts; moves into the world once loaded.
    pub scripts: rhai::Engine,
    /// Collects guard-error and result templates; moves into the world.
    pub templates: minijinja::Environment<'static>,
    /// The files the world is built from, which its content hash covers:
    /// each step adds the files it reads.
    pub hashed: HashedFiles,
}

/// What preparing a piece of world SQL tells the loader about it.
pub(super) struct PreparedSql {
    /// The `:name` parameters it uses, without their sigil.
    pub parameters: Vec<String>,
    /// The names of the columns it returns.
    pub columns: Vec<String>,
}

impl<'a> LoadContext<'a> {
    /// Opens the world database over `image` (empty to seed a new one)
    /// for `meta`'s simulation settings, keeping the problems found before
    /// it (in the manifest and required files).
    pub fn open(
        root: &'a Path,
        diags: Diagnostics,
        meta: &WorldMeta,
        image: &Arc<[u8]>,
    ) -> Result<Self> {
        let state = Arc::new(Mutex::new(SimState::new(
            meta.clock_start,
            0,
            meta.ids.clone(),
        )));
        let (conn, overlay) = open_episode_connection(&state, image).map_err(Error::Sqlite)?;
        let sandbox = Sandbox::install(&conn).map_err(Error::Sqlite)?;
        let budget = OperationBudget::install(&conn).map_err(Error::Sqlite)?;
        let templates = crate::template::environment();
        Ok(LoadContext {
            root,
            diags,
            conn,
            overlay,
            sandbox,
            budget,
            scripts: crate::script::engine(),
            templates,
            hashed: HashedFiles::default(),
        })
    }

    /// Prepares world SQL under `mode`, so a statement that could not run
    /// (a typo, a write in a read tool, a `?` parameter) fails at load.
    pub fn prepare(
        &self,
        mode: SandboxMode,
        sql: &str,
    ) -> std::result::Result<PreparedSql, String> {
        check_statement_kind(sql)?;
        self.sandbox.with(mode, || {
            let stmt = self.conn.prepare(sql).map_err(|e| {
                let m = sql_message(&e);
                if m.contains("not authorized") {
                    match mode {
                        SandboxMode::WorldRead => "not allowed here: this SQL may only read (read tools, guards, results and views cannot change the world, call other databases, or run PRAGMAs)".to_string(),
                        _ => "not allowed: world SQL may read and change rows, but not attach databases, run PRAGMAs, change the schema, or manage transactions".to_string(),
                    }
                } else {
                    m
                }
            })?;
            if stmt.parameter_count() > 0 && (1..=stmt.parameter_count()).any(|i| stmt.parameter_name(i).is_none()) {
                return Err("use named parameters such as :order_id, not `?`".to_string());
            }
            let columns = stmt.column_names().iter().map(|s| s.to_string()).collect();
            Ok(PreparedSql {
                parameters: parameter_names(&stmt),
                columns,
            })
        })
    }

    /// Adds a template under `name`; a template that does not parse is a
    /// problem at `rel:line`.
    pub fn add_template(
        &mut self,
        name: &str,
        source: &str,
        rel: &str,
        line: usize,
        subject: Option<String>,
    ) {
        if let Err(e) = self
            .templates
            .add_template_owned(name.to_string(), source.to_string())
        {
            self.diags.push(
                rel,
                Some(line),
                subject,
                format!("template does not parse: {e}"),
            );
        }
    }
}
