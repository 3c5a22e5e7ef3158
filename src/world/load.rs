//! Loading and validating a world folder.
//!
//! The loader builds the seeded database, then prepares every piece of world
//! SQL against it under the same sandbox mode it will run in, so a tool that
//! would fail at run time because of a typo fails here instead, with a line.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use rusqlite::{Connection, MAIN_DB};
use serde::de::DeserializeOwned;
use toml::Spanned;

use super::diagnostics::{line_of, Diagnostics};
use super::manifest::{
    ResultToml, TaskSpec, TasksToml, ToolKind, ToolToml, ViewToml, ViewsToml, WorldToml,
};
use super::{
    hash, seed, Guard, TableInfo, Tool, ToolResult, View, World, WorldMeta, VIEW_TOOL_PREFIX,
};
use crate::action::Action;
use crate::error::{Error, Result};
use crate::script;
use crate::sql::functions::{self, SimState};
use crate::sql::sandbox::{check_statement_kind, Sandbox, SandboxMode};
use crate::sql::values::parameter_names;

pub fn load(root: &Path) -> Result<World> {
    let mut diags = Diagnostics::default();
    let display = root.display().to_string();
    if !root.is_dir() {
        return Err(Error::WorldInvalid {
            path: display,
            problems: vec![super::Diagnostic {
                file: ".".into(),
                line: None,
                subject: None,
                message: "not a folder (expected a world folder with world.toml)".into(),
            }],
        });
    }

    let manifest: Option<WorldToml> = read_toml(root, "world.toml", true, &mut diags);
    let meta = manifest
        .as_ref()
        .and_then(|m| check_manifest(m, &mut diags));
    let policy = read_text(root, "policy.md", &mut diags).unwrap_or_default();
    let schema = read_text(root, "schema.sql", &mut diags);

    let Some(ids) = meta.as_ref().map(|m| m.ids.clone()) else {
        return fail(display, diags);
    };
    let start = meta.as_ref().map(|m| m.clock_start).unwrap_or(0);
    let state = Arc::new(Mutex::new(SimState::new(start, 0, ids)));
    let conn = open_world_connection(&state).map_err(Error::Sqlite)?;
    let sandbox = Sandbox::install(&conn).map_err(Error::Sqlite)?;

    let mut schema_ok = schema.is_some();
    if let Some(schema) = &schema {
        if let Err(e) = conn.execute_batch(schema) {
            schema_ok = false;
            diags.push(
                "schema.sql",
                None,
                None,
                format!("schema does not apply: {}", sql_message(&e)),
            );
        }
    }
    // Without a manifest and a schema nothing else can be checked.
    let (Some(manifest), true) = (manifest, schema_ok) else {
        return fail(display, diags);
    };

    // Seed inside one transaction with deferred foreign keys, then check.
    let manifest_text = std::fs::read_to_string(root.join("world.toml")).unwrap_or_default();
    if let Err(e) = conn.execute_batch("BEGIN; PRAGMA defer_foreign_keys = ON;") {
        return Err(Error::Sqlite(e));
    }
    let mut origins = seed::Origins::new();
    let problems_before_seed = diags.len();
    for entry in &manifest.seed {
        let line = line_of(&manifest_text, entry.span().start);
        seed::load(&conn, root, entry.get_ref(), line, &mut origins, &mut diags);
    }
    seed::check_foreign_keys(&conn, &origins, &mut diags);
    if diags.len() > problems_before_seed {
        let _ = conn.execute_batch("ROLLBACK");
        return fail(display, diags);
    }
    conn.execute_batch("PRAGMA defer_foreign_keys = OFF; COMMIT;")
        .map_err(Error::Sqlite)?;

    let tables = table_infos(&conn, &manifest, &manifest_text, &mut diags);

    let scripts = script::engine();
    let mut templates = minijinja::Environment::new();
    templates.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    crate::template::register_filters(&mut templates);

    let tools = load_tools(root, &conn, &sandbox, &scripts, &mut templates, &mut diags);
    let views = load_views(root, &conn, &sandbox, &tools, &mut diags);
    let tasks = load_tasks(root, &conn, &tools, &views, &tables, &mut diags);

    if !diags.is_empty() {
        return fail(display, diags);
    }

    let snapshot = conn.serialize(MAIN_DB).map_err(Error::Sqlite)?.to_vec();
    let restore = restore_plan(&conn, &tables);
    let content_hash = hash::content_hash(root)?;
    let Some(meta) = meta else {
        return fail(display, diags);
    };
    Ok(World {
        root: root.to_path_buf(),
        meta,
        policy,
        tools,
        views,
        tasks,
        tables,
        content_hash,
        snapshot,
        restore,
        scripts,
        templates,
    })
}

fn fail<T>(path: String, diags: Diagnostics) -> Result<T> {
    Err(Error::WorldInvalid {
        path,
        problems: diags.into_vec(),
    })
}

/// A fresh in-memory connection with the world's built-ins installed.
pub(crate) fn open_world_connection(
    state: &functions::SharedState,
) -> rusqlite::Result<Connection> {
    let conn = Connection::open_in_memory()?;
    conn.execute_batch("PRAGMA foreign_keys = ON;")?;
    functions::register(&conn, state)?;
    Ok(conn)
}

pub(crate) fn sql_message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        other => other.to_string(),
    }
}

fn read_text(root: &Path, rel: &str, diags: &mut Diagnostics) -> Option<String> {
    match std::fs::read_to_string(root.join(rel)) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            diags.push(rel, None, None, "file is missing (every world needs it)");
            None
        }
        Err(e) => {
            diags.push(rel, None, None, format!("cannot read: {e}"));
            None
        }
    }
}

fn read_toml<T: DeserializeOwned>(
    root: &Path,
    rel: &str,
    required: bool,
    diags: &mut Diagnostics,
) -> Option<T> {
    let path = root.join(rel);
    if !required && !path.exists() {
        return None;
    }
    let text = read_text(root, rel, diags)?;
    parse_toml(rel, &text, diags)
}

fn parse_toml<T: DeserializeOwned>(rel: &str, text: &str, diags: &mut Diagnostics) -> Option<T> {
    match toml::from_str::<T>(text) {
        Ok(v) => Some(v),
        Err(e) => {
            let line = e.span().map(|s| line_of(text, s.start));
            let mut message = e.message().trim().to_string();
            // The commonest TOML slip: a top-level key written after a
            // `[[guards]]` or `[parameters]` header belongs to that table.
            let misplaced = [
                "body",
                "script",
                "name",
                "description",
                "kind",
                "ends_episode",
                "title",
            ]
            .iter()
            .any(|k| message.contains(&format!("unknown field `{k}`")));
            if misplaced && rel.starts_with("tools/") {
                message.push_str(". Top-level keys (name, description, kind, body, script, ...) must come before the first [table] or [[guards]] header; after a header they belong to that table");
            }
            diags.push(rel, line, None, message);
            None
        }
    }
}

fn check_manifest(m: &WorldToml, diags: &mut Diagnostics) -> Option<WorldMeta> {
    let before = diags.len();
    if m.format != 1 {
        diags.push(
            "world.toml",
            None,
            Some("format".into()),
            format!(
                "unsupported world format {}; this build reads format 1",
                m.format
            ),
        );
    }
    if !is_slug(&m.id) {
        diags.push("world.toml", None, Some("id".into()), format!("id {:?} must be lowercase letters, digits and dashes, starting with a letter or digit", m.id));
    }
    if m.name.trim().is_empty() {
        diags.push(
            "world.toml",
            None,
            Some("name".into()),
            "name must not be empty",
        );
    }
    if m.version.trim().is_empty() {
        diags.push(
            "world.toml",
            None,
            Some("version".into()),
            "version must not be empty",
        );
    }
    let clock_start = match chrono::DateTime::parse_from_rfc3339(&m.clock.start) {
        Ok(t) => t.timestamp(),
        Err(e) => {
            diags.push(
                "world.toml",
                None,
                Some("clock.start".into()),
                format!(
                    "expected an RFC 3339 time such as 2025-03-04T09:00:00Z, got {:?} ({e})",
                    m.clock.start
                ),
            );
            0
        }
    };
    if m.clock.tick_seconds < 0 {
        diags.push(
            "world.toml",
            None,
            Some("clock.tick_seconds".into()),
            "must be zero or more",
        );
    }
    if m.ids.width > 20 {
        diags.push(
            "world.toml",
            None,
            Some("ids.width".into()),
            "must be at most 20",
        );
    }
    if diags.len() > before {
        return None;
    }
    Some(WorldMeta {
        id: m.id.clone(),
        name: m.name.clone(),
        version: m.version.clone(),
        description: m.description.clone(),
        clock_start,
        tick_seconds: m.clock.tick_seconds,
        ids: m.ids.clone(),
    })
}

fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
}

fn table_infos(
    conn: &Connection,
    m: &WorldToml,
    text: &str,
    diags: &mut Diagnostics,
) -> Vec<TableInfo> {
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .unwrap_or_default();
    for table in m.tables.keys() {
        if !names.contains(table) {
            let line = text
                .find(&format!("[tables.{table}]"))
                .map(|o| line_of(text, o));
            diags.push(
                "world.toml",
                line,
                Some(format!("tables.{table}")),
                format!("table `{table}` is not defined in schema.sql"),
            );
        }
    }
    let mut out = Vec::new();
    for name in names {
        let pk: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk")
            .and_then(|mut s| s.query_map([&name], |r| r.get(0))?.collect())
            .unwrap_or_default();
        let without_rowid: bool = conn
            .query_row(
                "SELECT sql LIKE '%WITHOUT ROWID%' FROM sqlite_schema WHERE name = ?1",
                [&name],
                |r| r.get(0),
            )
            .unwrap_or(false);
        if without_rowid {
            diags.push(
                "schema.sql",
                None,
                Some(format!("table `{name}`")),
                "WITHOUT ROWID tables are not supported; the state diff tracks rows by rowid",
            );
        }
        let options = m.tables.get(&name).cloned().unwrap_or_default();
        if let Some(doc) = &options.document_column {
            let cols = seed::table_columns(conn, &name).unwrap_or_default();
            if !cols.iter().any(|c| &c.name == doc) {
                diags.push(
                    "world.toml",
                    None,
                    Some(format!("tables.{name}")),
                    format!("document_column `{doc}` is not a column of `{name}`"),
                );
            }
        }
        out.push(TableInfo {
            key_column: if pk.len() == 1 {
                pk.into_iter().next()
            } else {
                None
            },
            name,
            document_column: options.document_column,
        });
    }
    out
}

/// Decides whether row-by-row reset is safe, and in which table order.
fn restore_plan(conn: &Connection, tables: &[TableInfo]) -> super::RestorePlan {
    let mut plan = super::RestorePlan::default();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap_or(1) };
    let triggers = count("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'");
    plan.has_sequence =
        count("SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_sequence'") > 0;
    let mut parents: std::collections::HashMap<String, Vec<String>> =
        std::collections::HashMap::new();
    let mut actions = false;
    for t in tables {
        let cols = seed::table_columns(conn, &t.name).unwrap_or_default();
        plan.columns
            .insert(t.name.clone(), cols.into_iter().map(|c| c.name).collect());
        let fks: Vec<(String, String, String)> = conn
            .prepare("SELECT \"table\", on_update, on_delete FROM pragma_foreign_key_list(?1)")
            .and_then(|mut s| {
                s.query_map([&t.name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .unwrap_or_default();
        for (parent, on_update, on_delete) in fks {
            let passive = |a: &str| a == "NO ACTION" || a == "RESTRICT";
            if !passive(&on_update) || !passive(&on_delete) || parent == t.name {
                actions = true;
            }
            parents.entry(t.name.clone()).or_default().push(parent);
        }
    }
    // Topological order, parents first; a cycle disables the fast path.
    let mut order: Vec<String> = Vec::new();
    let mut cyclic = false;
    fn visit(
        t: &str,
        parents: &std::collections::HashMap<String, Vec<String>>,
        state: &mut std::collections::HashMap<String, u8>,
        order: &mut Vec<String>,
        cyclic: &mut bool,
    ) {
        match state.get(t) {
            Some(2) => return,
            Some(1) => {
                *cyclic = true;
                return;
            }
            _ => {}
        }
        state.insert(t.to_string(), 1);
        for p in parents.get(t).into_iter().flatten() {
            visit(p, parents, state, order, cyclic);
        }
        state.insert(t.to_string(), 2);
        order.push(t.to_string());
    }
    let mut state = std::collections::HashMap::new();
    for t in tables {
        visit(&t.name, &parents, &mut state, &mut order, &mut cyclic);
    }
    order.retain(|t| tables.iter().any(|x| &x.name == t));
    plan.order = order;
    plan.fast = triggers == 0 && !actions && !cyclic;
    plan
}

/// Prepares world SQL under `mode`, returning its parameter names.
fn prepare_world_sql(
    conn: &Connection,
    sandbox: &Sandbox,
    mode: SandboxMode,
    sql: &str,
) -> std::result::Result<(Vec<String>, Vec<String>, bool), String> {
    check_statement_kind(sql)?;
    sandbox.with(mode, || {
        let stmt = conn.prepare(sql).map_err(|e| {
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
        Ok((parameter_names(&stmt), columns, stmt.readonly()))
    })
}

fn tool_files(root: &Path, dir: &str, ext: &str, diags: &mut Diagnostics) -> Vec<String> {
    let path = root.join(dir);
    if !path.is_dir() {
        return Vec::new();
    }
    let mut out = Vec::new();
    match std::fs::read_dir(&path) {
        Ok(entries) => {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                if name.ends_with(ext) && !name.starts_with('.') {
                    out.push(format!("{dir}/{name}"));
                }
            }
        }
        Err(e) => diags.push(dir, None, None, format!("cannot list folder: {e}")),
    }
    out.sort();
    out
}

fn load_tools(
    root: &Path,
    conn: &Connection,
    sandbox: &Sandbox,
    scripts: &rhai::Engine,
    templates: &mut minijinja::Environment<'static>,
    diags: &mut Diagnostics,
) -> IndexMap<String, Tool> {
    let mut tools = IndexMap::new();
    let files = tool_files(root, "tools", ".toml", diags);
    if files.is_empty() {
        diags.push(
            "tools",
            None,
            None,
            "a world needs at least one tool in tools/*.toml",
        );
    }
    for rel in files {
        let Some(text) = read_text(root, &rel, diags) else {
            continue;
        };
        let Some(spec) = parse_toml::<ToolToml>(&rel, &text, diags) else {
            continue;
        };
        if let Some(tool) = compile_tool(
            root, &rel, &text, spec, conn, sandbox, scripts, templates, diags,
        ) {
            if tools.contains_key(&tool.name) {
                diags.push(
                    &rel,
                    None,
                    Some(format!("tool {}", tool.name)),
                    "another tool has the same name",
                );
            } else {
                tools.insert(tool.name.clone(), tool);
            }
        }
    }
    tools
}

#[allow(clippy::too_many_arguments)]
fn compile_tool(
    root: &Path,
    rel: &str,
    text: &str,
    spec: ToolToml,
    conn: &Connection,
    sandbox: &Sandbox,
    scripts: &rhai::Engine,
    templates: &mut minijinja::Environment<'static>,
    diags: &mut Diagnostics,
) -> Option<Tool> {
    let before = diags.len();
    let subject = |extra: &str| Some(format!("tool {}{extra}", spec.name));
    let stem = rel.trim_start_matches("tools/").trim_end_matches(".toml");
    if !is_identifier(&spec.name) {
        diags.push(
            rel,
            None,
            subject(""),
            "tool names must be lowercase letters, digits and underscores, starting with a letter",
        );
    } else if spec.name != stem {
        diags.push(
            rel,
            None,
            subject(""),
            format!(
                "the file must be named after the tool: expected tools/{}.toml",
                spec.name
            ),
        );
    }
    if spec.name.starts_with(VIEW_TOOL_PREFIX) {
        diags.push(
            rel,
            None,
            subject(""),
            format!("names starting with `{VIEW_TOOL_PREFIX}` are reserved for views' read tools"),
        );
    }
    if spec.description.trim().is_empty() {
        diags.push(
            rel,
            None,
            subject(""),
            "description must not be empty: agents and experts read it to choose the tool",
        );
    }

    // Parameters: a JSON Schema object.
    let parameters: serde_json::Value = match &spec.parameters {
        None => {
            serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
        }
        Some(p) => match serde_json::to_value(p) {
            Ok(v) => v,
            Err(e) => {
                diags.push(
                    rel,
                    None,
                    subject(", parameters"),
                    format!("not representable as JSON: {e}"),
                );
                serde_json::Value::Null
            }
        },
    };
    if parameters.get("type").and_then(|t| t.as_str()) != Some("object") {
        diags.push(
            rel,
            None,
            subject(", parameters"),
            "parameters must be a JSON Schema with type = \"object\"",
        );
    }
    for keyword in ["anyOf", "oneOf", "allOf", "not", "enum"] {
        if parameters.get(keyword).is_some() {
            diags.push(rel, None, subject(", parameters"), format!("top-level `{keyword}` is not allowed (function-calling APIs reject it); use a guard to require one of several arguments"));
        }
    }
    let declared: BTreeSet<String> = parameters
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(required) = parameters.get("required").and_then(|r| r.as_array()) {
        for r in required {
            if let Some(name) = r.as_str() {
                if !declared.contains(name) {
                    diags.push(
                        rel,
                        None,
                        subject(&format!(", parameter {name}")),
                        "listed in `required` but not declared in `properties`",
                    );
                }
            }
        }
    }
    let validator = match jsonschema::validator_for(&parameters) {
        Ok(v) => Some(v),
        Err(e) => {
            diags.push(
                rel,
                None,
                subject(", parameters"),
                format!("not a valid JSON Schema: {e}"),
            );
            None
        }
    };

    let check_params = |diags: &mut Diagnostics, used: &[String], line: usize, what: &str| {
        for name in used {
            if !declared.contains(name) {
                diags.push(
                    rel,
                    Some(line),
                    subject(what),
                    format!(
                        "uses :{name}, which is not a declared parameter (declared: {})",
                        declared.iter().cloned().collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        }
    };

    let mut guards = Vec::new();
    for (i, guard) in spec.guards.iter().enumerate() {
        let line = line_of(text, guard.check.span().start);
        let what = format!(", guard {}", i + 1);
        match prepare_world_sql(conn, sandbox, SandboxMode::WorldRead, guard.check.get_ref()) {
            Ok((used, _, _)) => check_params(diags, &used, line, &what),
            Err(m) => diags.push(
                rel,
                Some(line),
                subject(&what),
                format!("check does not prepare: {m}"),
            ),
        }
        let name = format!("{}/guard/{}", spec.name, i + 1);
        add_template(
            templates,
            &name,
            guard.error.get_ref(),
            rel,
            line_of(text, guard.error.span().start),
            subject(&what),
            diags,
        );
        guards.push(Guard {
            check: guard.check.get_ref().clone(),
            error_template: name,
        });
    }

    let mode = match spec.kind {
        ToolKind::Read => SandboxMode::WorldRead,
        ToolKind::Write => SandboxMode::WorldWrite,
    };
    for (i, stmt) in spec.body.iter().enumerate() {
        let line = line_of(text, stmt.span().start);
        let what = format!(", body statement {}", i + 1);
        match prepare_world_sql(conn, sandbox, mode, stmt.get_ref()) {
            Ok((used, _, _)) => check_params(diags, &used, line, &what),
            Err(m) => diags.push(
                rel,
                Some(line),
                subject(&what),
                format!("does not prepare: {m}"),
            ),
        }
    }

    let script_ast = spec.script.as_ref().and_then(|s| {
        let line = line_of(text, s.span().start);
        let path = root.join(s.get_ref());
        let inside = path
            .canonicalize()
            .ok()
            .zip(root.canonicalize().ok())
            .is_some_and(|(p, r)| p.starts_with(r));
        if !inside {
            diags.push(
                rel,
                Some(line),
                subject(", script"),
                format!(
                    "script {:?} must be a file inside the world folder",
                    s.get_ref()
                ),
            );
            return None;
        }
        let source = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                diags.push(
                    rel,
                    Some(line),
                    subject(", script"),
                    format!("cannot read {:?}: {e}", s.get_ref()),
                );
                return None;
            }
        };
        match script::compile(scripts, &source) {
            Ok(ast) => Some(ast),
            Err((l, m)) => {
                diags.push(
                    s.get_ref().as_str(),
                    l,
                    subject(", script"),
                    format!("script does not compile: {m}"),
                );
                None
            }
        }
    });

    let result = spec.result.as_ref().map(|r: &ResultToml| {
        if let Some(q) = &r.query {
            let line = line_of(text, q.span().start);
            if spec.script.is_some() {
                diags.push(
                    rel,
                    Some(line),
                    subject(", result"),
                    "a tool with a script returns the script's value; remove result.query",
                );
            }
            match prepare_world_sql(conn, sandbox, SandboxMode::WorldRead, q.get_ref()) {
                Ok((used, _, _)) => check_params(diags, &used, line, ", result"),
                Err(m) => diags.push(
                    rel,
                    Some(line),
                    subject(", result"),
                    format!("query does not prepare: {m}"),
                ),
            }
        }
        let text_template = r.text.as_ref().map(|t| {
            let name = format!("{}/text", spec.name);
            add_template(
                templates,
                &name,
                t.get_ref(),
                rel,
                line_of(text, t.span().start),
                subject(", result.text"),
                diags,
            );
            name
        });
        ToolResult {
            query: r.query.as_ref().map(|q| q.get_ref().clone()),
            shape: r.shape,
            text_template,
        }
    });

    if diags.len() > before {
        return None;
    }
    Some(Tool {
        title: spec.title.clone().unwrap_or_else(|| humanize(&spec.name)),
        name: spec.name,
        description: spec.description,
        kind: spec.kind,
        ends_episode: spec.ends_episode,
        parameters,
        validator: validator?,
        guards,
        body: spec.body.into_iter().map(Spanned::into_inner).collect(),
        script: script_ast,
        result,
    })
}

fn add_template(
    templates: &mut minijinja::Environment<'static>,
    name: &str,
    source: &str,
    rel: &str,
    line: usize,
    subject: Option<String>,
    diags: &mut Diagnostics,
) {
    if let Err(e) = templates.add_template_owned(name.to_string(), source.to_string()) {
        diags.push(
            rel,
            Some(line),
            subject,
            format!("template does not parse: {e}"),
        );
    }
}

/// `issue_refund` → `Issue refund`.
pub(crate) fn humanize(name: &str) -> String {
    let spaced = name.replace('_', " ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

fn load_views(
    root: &Path,
    conn: &Connection,
    sandbox: &Sandbox,
    tools: &IndexMap<String, Tool>,
    diags: &mut Diagnostics,
) -> IndexMap<String, View> {
    let mut views = IndexMap::new();
    let rel = "views.toml";
    let Some(text) = root
        .join(rel)
        .exists()
        .then(|| read_text(root, rel, diags))
        .flatten()
    else {
        return views;
    };
    let Some(parsed) = parse_toml::<ViewsToml>(rel, &text, diags) else {
        return views;
    };
    for v in parsed.views {
        if let Some(view) = compile_view(rel, &text, v, conn, sandbox, diags) {
            if views.contains_key(&view.name) {
                diags.push(
                    rel,
                    None,
                    Some(format!("view {}", view.name)),
                    "another view has the same name",
                );
            } else if tools.contains_key(&view.tool_name()) {
                diags.push(
                    rel,
                    None,
                    Some(format!("view {}", view.name)),
                    format!(
                        "its read tool `{}` clashes with a declared tool",
                        view.tool_name()
                    ),
                );
            } else {
                views.insert(view.name.clone(), view);
            }
        }
    }
    views
}

fn compile_view(
    rel: &str,
    text: &str,
    v: ViewToml,
    conn: &Connection,
    sandbox: &Sandbox,
    diags: &mut Diagnostics,
) -> Option<View> {
    let before = diags.len();
    let name = v.name.get_ref().clone();
    let line = line_of(text, v.name.span().start);
    let subject = Some(format!("view {name}"));
    if !is_identifier(&name) {
        diags.push(
            rel,
            Some(line),
            subject.clone(),
            "view names must be lowercase letters, digits and underscores",
        );
    }
    let qline = line_of(text, v.query.span().start);
    let columns = match prepare_world_sql(conn, sandbox, SandboxMode::WorldRead, v.query.get_ref())
    {
        Ok((params, columns, _)) => {
            if !params.is_empty() {
                diags.push(
                    rel,
                    Some(qline),
                    subject.clone(),
                    "a view's query takes no parameters; filtering is done by the view tool",
                );
            }
            columns
        }
        Err(m) => {
            diags.push(
                rel,
                Some(qline),
                subject.clone(),
                format!("query does not prepare: {m}"),
            );
            Vec::new()
        }
    };
    let unique: HashSet<&String> = columns.iter().collect();
    if unique.len() != columns.len() {
        diags.push(
            rel,
            Some(qline),
            subject.clone(),
            "the query returns two columns with the same name; alias them",
        );
    }
    if let Some(key) = &v.key {
        if !columns.contains(key) && !columns.is_empty() {
            diags.push(
                rel,
                Some(line),
                subject.clone(),
                format!(
                    "key `{key}` is not a column of the view (columns: {})",
                    columns.join(", ")
                ),
            );
        }
    }
    if let Some(record) = &v.record {
        let rline = line_of(text, record.span().start);
        if v.key.is_none() {
            diags.push(
                rel,
                Some(rline),
                subject.clone(),
                "a view with a `record` query needs a `key` column",
            );
        }
        match prepare_world_sql(conn, sandbox, SandboxMode::WorldRead, record.get_ref()) {
            Ok((params, _, _)) => {
                if params != ["key"] {
                    diags.push(
                        rel,
                        Some(rline),
                        subject.clone(),
                        "the record query must use exactly one parameter, :key",
                    );
                }
            }
            Err(m) => diags.push(
                rel,
                Some(rline),
                subject.clone(),
                format!("record query does not prepare: {m}"),
            ),
        }
    }
    if diags.len() > before {
        return None;
    }
    Some(View {
        title: v.title.unwrap_or_else(|| humanize(&name)),
        name,
        description: v.description,
        query: v.query.into_inner(),
        columns,
        key: v.key,
        record: v.record.map(Spanned::into_inner),
    })
}

fn load_tasks(
    root: &Path,
    conn: &Connection,
    tools: &IndexMap<String, Tool>,
    views: &IndexMap<String, View>,
    tables: &[TableInfo],
    diags: &mut Diagnostics,
) -> IndexMap<String, TaskSpec> {
    let mut found: Vec<(String, Option<usize>, TaskSpec)> = Vec::new();
    for rel in tool_files(root, "tasks", ".toml", diags) {
        let Some(text) = read_text(root, &rel, diags) else {
            continue;
        };
        if let Some(parsed) = parse_toml::<TasksToml>(&rel, &text, diags) {
            for t in parsed.tasks {
                let line = line_of(&text, t.span().start);
                found.push((rel.clone(), Some(line), t.into_inner()));
            }
        }
    }
    for rel in tool_files(root, "tasks", ".jsonl", diags) {
        let Some(text) = read_text(root, &rel, diags) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<TaskSpec>(line) {
                Ok(t) => found.push((rel.clone(), Some(i + 1), t)),
                Err(e) => diags.push(&rel, Some(i + 1), None, format!("not a valid task: {e}")),
            }
        }
    }
    let mut tasks = IndexMap::new();
    for (rel, line, task) in found {
        let subject = Some(format!("task {}", task.id));
        let before = diags.len();
        if task.id.trim().is_empty() {
            diags.push(&rel, line, None, "task id must not be empty");
        }
        if tasks.contains_key(&task.id) {
            diags.push(&rel, line, subject.clone(), "another task has the same id");
        }
        if task.max_steps == 0 {
            diags.push(&rel, line, subject.clone(), "max_steps must be at least 1");
        }
        if let Some(allowed) = &task.tools {
            for t in allowed {
                if !tools.contains_key(t) {
                    diags.push(
                        &rel,
                        line,
                        subject.clone(),
                        format!("`tools` names `{t}`, which is not a tool of this world"),
                    );
                }
            }
        }
        for r in &task.records {
            match tables.iter().find(|t| t.name == r.table) {
                None => diags.push(
                    &rel,
                    line,
                    subject.clone(),
                    format!("`records` names table `{}`, which does not exist", r.table),
                ),
                Some(info) => {
                    let col = info.key_column.clone().unwrap_or_else(|| "rowid".into());
                    let sql = format!(
                        "SELECT count(*) FROM \"{}\" WHERE \"{}\" = ?1",
                        info.name, col
                    );
                    let n: i64 = conn
                        .query_row(&sql, [crate::sql::values::from_json(&r.key)], |row| {
                            row.get(0)
                        })
                        .unwrap_or(0);
                    if n == 0 {
                        diags.push(
                            &rel,
                            line,
                            subject.clone(),
                            format!(
                                "`records` names {} {} in `{}`, which is not in the seed data",
                                col, r.key, r.table
                            ),
                        );
                    }
                }
            }
        }
        for (i, step) in task.solution.iter().enumerate() {
            let what = format!("solution step {}", i + 1);
            match Action::from_json(step) {
                Err(e) => diags.push(&rel, line, subject.clone(), format!("{what}: {e}")),
                Ok(Action::Message { .. }) => {}
                Ok(Action::Tool { tool, args }) => {
                    if let Some(t) = tools.get(&tool) {
                        let value = serde_json::Value::Object(args);
                        let errors: Vec<String> = t
                            .validator
                            .iter_errors(&value)
                            .map(|e| describe_schema_error(&e))
                            .collect();
                        if !errors.is_empty() {
                            diags.push(
                                &rel,
                                line,
                                subject.clone(),
                                format!("{what} ({tool}): {}", errors.join("; ")),
                            );
                        }
                    } else if !tool
                        .strip_prefix(VIEW_TOOL_PREFIX)
                        .is_some_and(|v| views.contains_key(v))
                    {
                        diags.push(
                            &rel,
                            line,
                            subject.clone(),
                            format!("{what}: `{tool}` is not a tool of this world"),
                        );
                    }
                }
            }
        }
        if diags.len() == before {
            tasks.insert(task.id.clone(), task);
        }
    }
    tasks
}

/// A JSON Schema violation in words: `amount: "ten" is not of type "number"`.
pub(crate) fn describe_schema_error(e: &jsonschema::ValidationError<'_>) -> String {
    let path = e.instance_path().to_string();
    let path = path.trim_start_matches('/').replace('/', ".");
    if path.is_empty() {
        e.to_string()
    } else {
        format!("{path}: {e}")
    }
}
