//! `understudy import`: native episodes JSONL into a store.
//!
//! Everything is checked before anything is stored, and every problem is
//! reported with its line, so one run tells the user all that is wrong;
//! then the episodes land in one transaction, or none does.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use super::native::{self, ParsedEpisode};
use super::{EpisodeBundle, WorldSet};
use crate::error::{Error, Result};
use crate::store::{Expert, Store};

/// What an import stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportSummary {
    /// Episodes stored.
    pub episodes: usize,
    /// Their steps, retracted ones included.
    pub steps: usize,
    /// Their reviews.
    pub reviews: usize,
    /// Experts that were not in the store yet.
    pub experts_added: usize,
    /// Problems that did not stop the import, e.g. a world that changed
    /// since an episode was recorded.
    pub warnings: Vec<String>,
}

/// Validates `text` (a native JSONL document named `source` in messages)
/// against the schema, the worlds in `worlds_dir` and the store, then
/// stores it whole. Checks, beyond [`native::parse`]'s: each episode's
/// world and task exist; its id is not already in the store. A world that
/// changed since recording is only a warning: the trajectory is still what
/// happened.
pub fn import(store: &Store, text: &str, source: &str, worlds_dir: &Path) -> Result<ImportSummary> {
    import_checked(store, text, source, worlds_dir, |_| None)
}

/// [`import`] with one more rule per line: `extra` returns why a parsed
/// episode may not be imported here (reported as `line N: why`, with the
/// other problems), or `None`.
pub fn import_checked(
    store: &Store,
    text: &str,
    source: &str,
    worlds_dir: &Path,
    extra: impl Fn(&ParsedEpisode) -> Option<String>,
) -> Result<ImportSummary> {
    let (parsed, mut problems) = native::parse_all(text);
    for p in &parsed {
        if let Some(why) = extra(p) {
            problems.push((p.line, format!("line {}: {why}", p.line)));
        }
    }
    let ids: BTreeSet<String> = parsed
        .iter()
        .map(|p| p.bundle.record.world_id.clone())
        .collect();
    let worlds = WorldSet::load(worlds_dir, &ids)?;
    import_parsed(store, parsed, problems, source, &worlds)
}

/// [`import`] for a document already parsed (`problems` are the parser's,
/// reported together with the ones found here), against worlds already
/// loaded.
pub(crate) fn import_parsed(
    store: &Store,
    parsed: Vec<ParsedEpisode>,
    mut problems: Vec<(usize, String)>,
    source: &str,
    worlds: &WorldSet,
) -> Result<ImportSummary> {
    let check = worlds.check(
        parsed
            .iter()
            .map(|p| (&p.bundle.record, format!("line {}", p.line))),
    );
    problems.extend(check.problems.into_iter().map(|p| (line_of(&p), p)));
    for p in &parsed {
        match store.episode(&p.bundle.record.id) {
            Ok(_) => problems.push((
                p.line,
                format!(
                    "line {}: episode {} is already in the store",
                    p.line, p.bundle.record.id
                ),
            )),
            Err(Error::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    if !problems.is_empty() {
        // Stable: a line's own problems stay in the order they were found.
        problems.sort_by_key(|(line, _)| *line);
        return Err(Error::InvalidInput {
            path: source.to_string(),
            problems: problems.into_iter().map(|(_, p)| p).collect(),
        });
    }
    let mut experts: Vec<Expert> = Vec::new();
    let mut summary = ImportSummary {
        warnings: check.warnings,
        ..ImportSummary::default()
    };
    let mut episodes = Vec::with_capacity(parsed.len());
    for p in parsed {
        let EpisodeBundle {
            trajectory,
            expert,
            reviews,
        } = p.bundle;
        if let Some(x) = expert {
            if !experts.iter().any(|e| e.id == x.id) {
                experts.push(x);
            }
        }
        summary.episodes += 1;
        summary.steps += trajectory.steps.len();
        summary.reviews += reviews.len();
        episodes.push((trajectory, reviews));
    }
    summary.experts_added = store.import_full(&experts, &episodes)?;
    Ok(summary)
}

/// The line number a `line N: ...` message starts with, for sorting.
fn line_of(message: &str) -> usize {
    message
        .strip_prefix("line ")
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
