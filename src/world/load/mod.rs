//! Loading and validating a world folder.
//!
//! The loader builds the seeded database, then prepares every piece of world
//! SQL against it under the same sandbox mode it will run in, so a tool that
//! would fail at run time because of a typo fails here instead, with a line.
//!
//! The steps share a [`context::LoadContext`]; each kind of compiled thing
//! (tools, views, tasks) has its own file.

mod context;
mod database;
mod files;
mod manifest_check;
mod names;
mod scope;
mod tables;
mod task_lines;
mod tasks;
mod template_names;
mod tools;
mod views;

use std::path::Path;

use rusqlite::MAIN_DB;

use super::manifest::WorldToml;
use super::World;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::error::{Error, Result};
use context::LoadContext;

pub(crate) use database::open_world_connection;
pub(crate) use tools::describe_schema_error;

pub fn load(root: &Path) -> Result<World> {
    let mut diags = Diagnostics::default();
    let display = root.display().to_string();
    if !root.is_dir() {
        return Err(Error::WorldInvalid {
            path: display,
            problems: vec![Diagnostic {
                file: ".".into(),
                line: None,
                subject: None,
                message: "not a folder (expected a world folder with world.toml)".into(),
            }],
        });
    }

    let manifest: Option<WorldToml> = files::read_toml(root, "world.toml", &mut diags);
    let meta = manifest
        .as_ref()
        .and_then(|m| manifest_check::world_meta(m, &mut diags));
    let policy = files::read_text(root, "policy.md", &mut diags).unwrap_or_default();
    let schema = files::read_text(root, "schema.sql", &mut diags);

    let Some(meta) = meta else {
        return fail(display, diags);
    };
    let mut cx = LoadContext::open(root, diags, &meta)?;
    for rel in ["world.toml", "policy.md", "schema.sql"] {
        cx.hashed.add(rel);
    }
    let schema_ok = schema.is_some_and(|s| database::apply_schema(&mut cx, &s));
    // Without a manifest and a schema nothing else can be checked.
    let (Some(manifest), true) = (manifest, schema_ok) else {
        return fail(display, cx.diags);
    };

    let manifest_text = std::fs::read_to_string(root.join("world.toml")).unwrap_or_default();
    if !database::seed(&mut cx, &manifest, &manifest_text)? {
        return fail(display, cx.diags);
    }
    // The rest of loading runs only the engine's own small queries.
    cx.budget.renew();
    let tables = tables::table_infos(&mut cx, &manifest, &manifest_text);
    let scope = scope::load_scope(&mut cx, &manifest, &manifest_text, &tables);
    let tools::LoadedTools { tools, broken } = tools::load_tools(&mut cx);
    let views = views::load_views(&mut cx, &tools);
    let tasks = tasks::load_tasks(
        &mut cx,
        &tasks::TaskWorld {
            tools: &tools,
            views: &views,
            tables: &tables,
            broken_tools: &broken,
        },
    );

    let LoadContext {
        diags,
        conn,
        scripts,
        templates,
        hashed,
        ..
    } = cx;
    if !diags.is_empty() {
        return fail(display, diags);
    }
    let snapshot = conn.serialize(MAIN_DB).map_err(Error::Sqlite)?.to_vec();
    let restore = tables::restore_plan(&conn, &tables);
    let content_hash = hashed.content_hash(root)?;
    Ok(World {
        root: root.to_path_buf(),
        meta,
        policy,
        tools,
        views,
        tasks,
        tables,
        scope,
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
