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
    ///
    /// `seeds`, the seed files already hashed for the world image's key,
    /// is taken up where it left off when those files come first in that
    /// order (they do when they sit in `data/`, as in every bundled
    /// world): a large world's seed files are most of its bytes, and
    /// hashing them twice was a seventh of loading tau-airline.
    pub fn content_hash(&self, root: &Path, seeds: Option<&SeedDigest>) -> Result<String> {
        let prefix = seeds.filter(|s| self.files.iter().take(s.files.len()).eq(s.files.iter()));
        let (mut hasher, skip) = match prefix {
            Some(s) => (s.state.clone(), s.files.len()),
            None => (Sha256::new(), 0),
        };
        for rel in self.files.iter().skip(skip) {
            let path = root.join(rel);
            hash_file(&mut hasher, rel, &path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        }
        Ok(hex::encode(hasher.finalize()))
    }
}

/// A world's seed files hashed as [`HashedFiles::content_hash`] hashes
/// files (the same framing, sorted by normalized path), so the content
/// hash can go on from it and the image key can be made from it.
pub(crate) struct SeedDigest {
    /// The normalized paths, sorted, each once.
    files: Vec<String>,
    /// The hash state after them.
    state: Sha256,
}

impl SeedDigest {
    /// Hashes the seed files `rels` (as `world.toml` names them) under
    /// `root`; an error when one cannot be read (loading then reports it).
    pub fn of<'a>(root: &Path, rels: impl Iterator<Item = &'a str>) -> std::io::Result<SeedDigest> {
        let files: Vec<String> = rels
            .map(normalize)
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect();
        let mut state = Sha256::new();
        for rel in &files {
            hash_file(&mut state, rel, &root.join(rel))?;
        }
        Ok(SeedDigest { files, state })
    }

    /// The digest of the seed files alone.
    pub fn digest(&self) -> [u8; 32] {
        self.state.clone().finalize().into()
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
    use super::{normalize, HashedFiles, SeedDigest};

    #[test]
    fn the_content_hash_is_the_same_whether_or_not_it_goes_on_from_the_seeds() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (rel, text) in [
            ("data/a.csv", "id\n1\n"),
            ("data/b.json", "[]"),
            ("world.toml", "format = 1"),
            ("zz.csv", "id\n2\n"),
        ] {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        // Seeds first in path order (taken up), and a seed after another
        // file (not a prefix: hashed again), each written as a world might.
        for seeds in [
            vec!["./data/b.json", "data/a.csv"],
            vec!["zz.csv", "data/a.csv"],
        ] {
            let mut files = HashedFiles::default();
            files.add("world.toml");
            for s in &seeds {
                files.add(s);
            }
            let digest = SeedDigest::of(dir.path(), seeds.iter().copied()).expect("seeds read");
            assert_eq!(
                files.content_hash(dir.path(), Some(&digest)).expect("hash"),
                files.content_hash(dir.path(), None).expect("hash"),
                "{seeds:?}"
            );
        }
        assert!(SeedDigest::of(dir.path(), ["data/missing.csv"].into_iter()).is_err());
    }

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
