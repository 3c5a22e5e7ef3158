//! Reading a world's files, with every failure a diagnostic.
//!
//! A missing file, an unreadable one and a TOML syntax error all become a
//! problem pinned to the file (and, for TOML, the line), and the caller gets
//! `None` and carries on looking for more problems.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::diagnostics::{line_of, Diagnostics};

/// The text of a required file (`rel` is relative to the world folder).
pub(super) fn read_text(root: &Path, rel: &str, diags: &mut Diagnostics) -> Option<String> {
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

/// The text of an optional file: `None`, and no problem, when it is absent.
pub(super) fn read_optional_text(
    root: &Path,
    rel: &str,
    diags: &mut Diagnostics,
) -> Option<String> {
    root.join(rel)
        .exists()
        .then(|| read_text(root, rel, diags))
        .flatten()
}

/// A required TOML file parsed into `T`.
pub(super) fn read_toml<T: DeserializeOwned>(
    root: &Path,
    rel: &str,
    diags: &mut Diagnostics,
) -> Option<T> {
    let text = read_text(root, rel, diags)?;
    parse_toml(rel, &text, diags)
}

/// TOML text parsed into `T`, or a problem at the line where it went wrong.
pub(super) fn parse_toml<T: DeserializeOwned>(
    rel: &str,
    text: &str,
    diags: &mut Diagnostics,
) -> Option<T> {
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

/// The files in `dir` whose names end in `ext`, as paths relative to the
/// world folder, sorted (so problems and tools come in a stable order).
/// Hidden files are skipped; a missing folder has no files.
pub(super) fn list_files(
    root: &Path,
    dir: &str,
    ext: &str,
    diags: &mut Diagnostics,
) -> Vec<String> {
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
