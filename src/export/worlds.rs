//! Finding episodes' worlds by id in a folder of world folders.
//!
//! An episode names its world by id, not by path, because stores move
//! between machines and world folders get renamed. Only the worlds that are
//! needed are loaded: loading validates everything and is not free.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::store::EpisodeRecord;
use crate::world::World;

/// Loaded worlds, by id.
#[derive(Debug, Clone)]
pub struct WorldSet {
    dir: PathBuf,
    worlds: BTreeMap<String, Arc<World>>,
    /// Ids of every world found in `dir`, loaded or not, for messages.
    available: BTreeSet<String>,
}

/// The outcome of checking episodes against a [`WorldSet`].
#[derive(Debug, Default)]
pub(crate) struct WorldCheck {
    /// Episodes that cannot be used: their world or task is missing.
    pub problems: Vec<String>,
    /// Worlds that changed since episodes were recorded in them (once per
    /// world and recorded hash).
    pub warnings: Vec<String>,
}

impl WorldSet {
    /// A set holding one world that the user named by its folder.
    pub fn single(world: Arc<World>) -> WorldSet {
        let dir = world.root.clone();
        let id = world.meta.id.clone();
        WorldSet {
            dir,
            available: BTreeSet::from([id.clone()]),
            worlds: BTreeMap::from([(id, world)]),
        }
    }

    /// Loads the worlds with the given ids from `dir`: either `dir` is a
    /// world folder itself, or it holds world folders. Ids not found are
    /// simply absent (export and import then name them as missing); a world that is found but
    /// does not load is an error, with its problems.
    pub fn load(dir: &Path, ids: &BTreeSet<String>) -> Result<WorldSet> {
        let candidates = candidates(dir)?;
        let available: BTreeSet<String> =
            candidates.iter().filter_map(|(id, _)| id.clone()).collect();
        let mut worlds = BTreeMap::new();
        for want in ids {
            // A folder whose world.toml did not parse but is named after the
            // id is loaded anyway, so the user sees why it is broken instead
            // of "not found".
            let path = candidates
                .iter()
                .find(|(id, _)| id.as_deref() == Some(want.as_str()))
                .or_else(|| {
                    candidates.iter().find(|(id, p)| {
                        id.is_none() && p.file_name().is_some_and(|n| n == want.as_str())
                    })
                })
                .map(|(_, p)| p.clone());
            if let Some(path) = path {
                let world = World::load(&path)?;
                if &world.meta.id == want {
                    worlds.insert(want.clone(), Arc::new(world));
                }
            }
        }
        Ok(WorldSet {
            dir: dir.to_path_buf(),
            worlds,
            available,
        })
    }

    /// The folder the worlds were looked up in (for a single world, its
    /// own folder), for messages.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The loaded world with this id, if it was asked for and found.
    pub fn get(&self, id: &str) -> Option<&Arc<World>> {
        self.worlds.get(id)
    }

    /// Checks that each episode's world and task exist. `items` pairs each
    /// record with how to name it in a message (an episode id, a line).
    pub(crate) fn check<'r>(
        &self,
        items: impl IntoIterator<Item = (&'r EpisodeRecord, String)>,
    ) -> WorldCheck {
        let mut out = WorldCheck::default();
        let mut warned = BTreeSet::new();
        for (r, name) in items {
            let Some(world) = self.worlds.get(&r.world_id) else {
                let have = if self.available.is_empty() {
                    "no worlds".to_string()
                } else {
                    self.available
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                out.problems.push(format!(
                    "{name}: world `{}` is not in {} (it has {have}); name the folder that holds the world's folder",
                    r.world_id,
                    self.dir.display()
                ));
                continue;
            };
            if world.task(&r.task_id).is_none() {
                out.problems.push(format!(
                    "{name}: world `{}` has no task `{}`",
                    r.world_id, r.task_id
                ));
                continue;
            }
            if r.world_hash != world.content_hash
                && warned.insert((r.world_id.clone(), r.world_hash.clone()))
            {
                out.warnings.push(format!(
                    "world `{}` has changed since some episodes were recorded in it (recorded as version {} with content hash {}, now version {} with {}); the export uses today's policy and tools",
                    r.world_id,
                    r.world_version,
                    short(&r.world_hash),
                    world.meta.version,
                    short(&world.content_hash)
                ));
            }
        }
        out
    }

    /// Every loaded world, by id order.
    pub fn worlds(&self) -> impl Iterator<Item = &Arc<World>> {
        self.worlds.values()
    }
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// World folders in `dir` with the id their `world.toml` declares (`None`
/// when it cannot be read).
fn candidates(dir: &Path) -> Result<Vec<(Option<String>, PathBuf)>> {
    if dir.join("world.toml").is_file() {
        return Ok(vec![(declared_id(dir), dir.to_path_buf())]);
    }
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Error::Other(format!(
            "cannot read the worlds folder {}: {e}; point --worlds at the folder that holds the world folders",
            dir.display()
        ))
    })?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.join("world.toml").is_file() {
            out.push((declared_id(&path), path));
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

fn declared_id(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("world.toml")).ok()?;
    let table: toml::Table = toml::from_str(&text).ok()?;
    table.get("id")?.as_str().map(str::to_string)
}
