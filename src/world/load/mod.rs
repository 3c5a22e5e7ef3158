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
mod labels;
mod manifest_check;
pub(crate) mod names;
mod scope;
mod tables;
mod task_lines;
mod tasks;
mod template_names;
mod tools;
mod views;

use std::path::Path;
use std::sync::Arc;

use super::image::{self, ImageSource};
use super::manifest::WorldToml;
use super::World;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::error::{Error, Result};
use context::LoadContext;

pub(crate) use database::open_episode_connection;
pub(crate) use tools::describe_schema_error;

/// Loads the world in `root`, reusing its seeded database from memory or
/// from an image file under `cache_dir` when one was built from the same
/// files (see `world::image`).
pub fn load(root: &Path, cache_dir: Option<&Path>) -> Result<World> {
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
    let manifest_text = std::fs::read_to_string(root.join("world.toml")).unwrap_or_default();
    // The seeded database of an earlier load of the same files, if any:
    // a world with problems never leaves an image, so using one skips
    // only work that is known to succeed.
    let seeds = manifest.as_ref().and_then(|m| image::seed_digest(root, m));
    let key = match (&seeds, &schema) {
        (Some(seeds), Some(s)) => Some(image::key(&manifest_text, s, seeds)),
        _ => None,
    };
    let found = key.and_then(|k| image::find(k, cache_dir));
    let start: Arc<[u8]> = match &found {
        Some(found) => Arc::clone(&found.image),
        None => Arc::from(&[][..]),
    };
    let mut cx = LoadContext::open(root, diags, &meta, &start)?;
    drop(start);
    for rel in ["world.toml", "policy.md", "schema.sql"] {
        cx.hashed.add(rel);
    }
    let Some(manifest) = manifest else {
        return fail(display, cx.diags);
    };
    if found.is_some() {
        for entry in &manifest.seed {
            cx.hashed.add(&entry.get_ref().file);
        }
    } else {
        // Without a schema nothing else can be checked.
        if !schema.is_some_and(|s| database::apply_schema(&mut cx, &s)) {
            return fail(display, cx.diags);
        }
        if !database::seed(&mut cx, &manifest, &manifest_text)? {
            return fail(display, cx.diags);
        }
    }
    // The rest of loading runs only the engine's own small queries.
    cx.budget.renew();
    let mut tables = tables::table_infos(&mut cx, &manifest, &manifest_text);
    let scope = scope::load_scope(&mut cx, &manifest, &manifest_text, &tables);
    let tools::LoadedTools { tools, broken } = tools::load_tools(&mut cx);
    let mut views = views::load_views(&mut cx, &tools);
    labels::load_labels(&mut cx, &mut tables, &mut views);
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
        overlay,
        scripts,
        templates,
        hashed,
        ..
    } = cx;
    if !diags.is_empty() {
        return fail(display, diags);
    }
    // Closing the connection leaves the overlay the only owner of the
    // pages seeding wrote.
    drop(conn);
    let (snapshot, image_source) = match found {
        Some(found) => (found.image, found.source),
        None => {
            let snapshot = overlay
                .into_image()
                .map_err(|_| Error::Other("the seeded world database was still open".into()))?;
            if let Some(key) = key {
                image::store(key, &snapshot, cache_dir);
            }
            (snapshot, ImageSource::Seeded)
        }
    };
    let content_hash = hashed.content_hash(root, seeds.as_ref())?;
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
        image_source,
        base: Default::default(),
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
