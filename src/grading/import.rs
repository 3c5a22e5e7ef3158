//! Importing agent runs to grade: the native episodes JSONL that
//! `understudy export --format native` writes and `understudy import`
//! reads, through the same all-or-nothing importer, with one rule more:
//! every line must be an agent's run (an expert's recording goes through
//! review, not grading).

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::Result;
use crate::export::{import_parsed, native, ImportSummary, WorldSet};
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
    let (parsed, mut problems) = native::parse_all(text);
    for p in &parsed {
        if let Actor::Expert { id } = &p.bundle.record.actor {
            problems.push((
                p.line,
                format!(
                    "line {}: episode {} was recorded by expert {id}, not by an agent; only agent runs are graded here (recordings by experts go to the review queue)",
                    p.line, p.bundle.record.id
                ),
            ));
        }
    }
    if parsed.is_empty() && problems.is_empty() {
        problems.push((1, "line 1: the file holds no runs".to_string()));
    }
    let ids: BTreeSet<String> = parsed
        .iter()
        .map(|p| p.bundle.record.world_id.clone())
        .collect();
    let worlds = WorldSet::load(worlds_dir, &ids)?;
    import_parsed(store, parsed, problems, source, &worlds)
}
