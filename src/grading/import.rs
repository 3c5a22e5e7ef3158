//! Importing agent runs to grade: the native episodes JSONL that
//! `understudy export --format native` writes and `understudy import`
//! reads, through the same all-or-nothing importer, with one rule more:
//! every line must be an agent's run (an expert's recording goes through
//! review, not grading).

use std::path::Path;

use crate::error::{Error, Result};
use crate::export::{import_checked, ImportSummary};
use crate::store::{Actor, Store};

/// Checks every line of `text` (named `source` in messages) and stores
/// all its runs in one transaction, or none: any problem on any line
/// rejects the file with `InvalidInput`, each problem starting with its
/// line (`line 3: ...`).
pub fn import_agent_runs(
    store: &Store,
    text: &str,
    source: &str,
    worlds_dir: &Path,
) -> Result<ImportSummary> {
    if text.trim().is_empty() {
        return Err(Error::InvalidInput {
            path: source.to_string(),
            problems: vec!["line 1: the file holds no runs".to_string()],
        });
    }
    import_checked(store, text, source, worlds_dir, |p| {
        match &p.bundle.record.actor {
        Actor::Expert { id } => Some(format!(
            "episode {} was recorded by expert {id}, not by an agent; only agent runs are graded here (recordings by experts go to the review queue)",
            p.bundle.record.id
        )),
        Actor::Agent { .. } => None,
    }
    })
}
