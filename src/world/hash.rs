//! The content hash of a world: what an episode was recorded against.
//!
//! Replaying an episode against a world whose behaviour changed would
//! silently produce a different trajectory, so the hash covers the files the
//! loader reads to build the world, and nothing else. That is a list, not a
//! folder walk: an author's notes (`README.md`, `NOTES.md`, a `notes/`
//! folder, a helper script) never change the hash, so writing them down does
//! not strand every recorded episode. Rubrics are left out too: a score
//! records its rubric's own version.

use std::collections::BTreeSet;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The files a world's hash covers, as paths relative to the world folder.
///
/// The loader adds each file as it reads it (`world.toml`, `schema.sql`,
/// `policy.md`, `views.toml`, `tools/*.toml`, the scripts tools name,
/// `tasks/*.toml`, `tasks/*.jsonl` and the seed files `world.toml` lists),
/// so what is hashed is by construction what the world is built from.
#[derive(Debug, Default, Clone)]
pub(crate) struct HashedFiles {
    files: BTreeSet<String>,
}

impl HashedFiles {
    /// Adds a file the world is built from, written relative to the world
    /// folder; `./` and `..` steps are resolved so one file counts once.
    pub fn add(&mut self, rel: &str) {
        self.files.insert(normalize(rel));
    }

    /// The paths, sorted.
    #[cfg(test)]
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(String::as_str)
    }

    /// SHA-256 over `len(path) path len(bytes) bytes` of each file, in
    /// sorted path order, so renames and moves change the hash too.
    pub fn content_hash(&self, root: &Path) -> Result<String> {
        let mut hasher = Sha256::new();
        for rel in &self.files {
            let path = root.join(rel);
            hash_file(&mut hasher, rel, &path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        }
        Ok(hex::encode(hasher.finalize()))
    }
}

/// Adds `len(rel) rel len(bytes) bytes` of the file at `path` to `hasher`,
/// streaming it: a world's seed files can be hundreds of megabytes, and
/// reading one whole would hold it beside the world being loaded.
pub(crate) fn hash_file(hasher: &mut Sha256, rel: &str, path: &Path) -> std::io::Result<()> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    hasher.update((rel.len() as u64).to_le_bytes());
    hasher.update(rel.as_bytes());
    hasher.update(len.to_le_bytes());
    let copied = std::io::copy(&mut file, hasher)?;
    if copied != len {
        return Err(std::io::Error::other(format!(
            "the file changed while it was read ({len} bytes, then {copied})"
        )));
    }
    Ok(())
}

/// `./data/../data/a.csv` as `data/a.csv`, with `/` separators. An
/// absolute path stays as written (joining it to the root gives itself).
fn normalize(rel: &str) -> String {
    if Path::new(rel).is_absolute() {
        return rel.to_string();
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in rel.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::{normalize, HashedFiles};

    #[test]
    fn a_path_counts_once_however_it_is_written() {
        assert_eq!(normalize("./data/../data/a.csv"), "data/a.csv");
        assert_eq!(normalize("scripts\\tag.rhai"), "scripts/tag.rhai");
        assert_eq!(normalize("../outside.csv"), "../outside.csv");
        let mut files = HashedFiles::default();
        files.add("data/a.csv");
        files.add("./data/a.csv");
        files.add("world.toml");
        assert_eq!(
            files.paths().collect::<Vec<_>>(),
            ["data/a.csv", "world.toml"]
        );
    }
}
