//! The content hash of a world: what an episode was recorded against.
//!
//! Replaying an episode against a world whose behaviour changed would
//! silently produce a different trajectory, so the hash covers every file
//! that can change behaviour, and nothing that cannot (docs, rubrics).

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Is this relative path part of the world's behaviour?
pub fn affects_behaviour(rel: &str) -> bool {
    let first = rel.split('/').next().unwrap_or("");
    let name = rel.rsplit('/').next().unwrap_or("");
    !(first == "rubrics"
        || name.starts_with('.')
        || first.starts_with('.')
        || name.eq_ignore_ascii_case("README.md")
        || name.to_ascii_uppercase().starts_with("LICENSE")
        || name.ends_with(".py"))
}

/// SHA-256 over `len(path) path len(bytes) bytes` of each behaviour file,
/// in sorted path order, so renames and moves change the hash too.
pub fn content_hash(root: &Path) -> Result<String> {
    let mut files = Vec::new();
    collect(root, root, &mut files)?;
    files.sort();
    let mut hasher = Sha256::new();
    for rel in files {
        let bytes = std::fs::read(root.join(&rel))
            .map_err(|e| Error::io(format!("reading {}", root.join(&rel).display()), e))?;
        hasher.update((rel.len() as u64).to_le_bytes());
        hasher.update(rel.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(hex::encode(hasher.finalize()))
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if !affects_behaviour(&rel) {
            continue;
        }
        let kind = entry
            .file_type()
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        if kind.is_dir() {
            collect(root, &path, out)?;
        } else if kind.is_file() {
            out.push(rel);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::affects_behaviour;

    #[test]
    fn docs_and_rubrics_do_not_count() {
        assert!(affects_behaviour("tools/issue_refund.toml"));
        assert!(affects_behaviour("data/customers.csv"));
        assert!(!affects_behaviour("rubrics/t1.toml"));
        assert!(!affects_behaviour("README.md"));
        assert!(!affects_behaviour("LICENSE"));
        assert!(!affects_behaviour(".DS_Store"));
    }
}
