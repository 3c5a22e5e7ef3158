//! What the app takes from the hub into its own store, so its screens
//! work unchanged on the team's data: the finished episodes a reviewer or
//! grader works on, the decisions reviewers made, the graders' judgments
//! (with their scale levels) and overrides, and rubric versions.
//!
//! The local store stays the screens' one source: pulled episodes are
//! imported whole (steps, expert profile, reviews) and replay, compare and
//! grade like local ones. Pulling never changes what is already here:
//! an episode the store has is left alone, a decision is applied only to
//! an episode still waiting for one, and a grade or rubric version is
//! added once. Pulled episodes (and the profiles they bring) are marked
//! as pulled in the same transaction: they are never pushed back, and the
//! start screen does not offer their experts as people of this computer.

use understudy::store::{EpisodeStatus, NewRubricVersion, Store};

use crate::client::{EpisodeQuery, Hub};
use crate::error::HubError;
use crate::wire::{GradesAfter, RubricQuery, GRADES_PAGE};

/// Whether the store has episode `id`.
fn has(store: &Store, id: &str) -> Result<bool, HubError> {
    match store.episode(id) {
        Ok(_) => Ok(true),
        Err(understudy::Error::NotFound(_)) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Imports the hub's finished episodes the store lacks; returns how many.
/// Only those are fetched, a few hundred at a time, each lot one
/// transaction: a pull cut off keeps the lots it finished and the next
/// one fetches the rest.
pub(crate) fn episodes(hub: &Hub, store: &Store) -> Result<usize, HubError> {
    let mut missing = Vec::new();
    for row in hub.episodes(&EpisodeQuery::default())? {
        if !row.record.status.is_open() && !has(store, &row.record.id)? {
            missing.push(row.record.id);
        }
    }
    let mut pulled = 0;
    for lot in missing.chunks(PULL_LOT) {
        let mut experts: Vec<understudy::store::Expert> = Vec::new();
        let mut episodes = Vec::new();
        for b in hub.export_episodes(lot)? {
            if let Some(x) = b.expert {
                if !experts.iter().any(|e| e.id == x.id) {
                    experts.push(x);
                }
            }
            episodes.push((b.trajectory, b.reviews));
        }
        if !episodes.is_empty() {
            store.import_pulled(&experts, &episodes)?;
        }
        pulled += episodes.len();
    }
    Ok(pulled)
}

/// How many episodes a pull fetches and imports at once.
const PULL_LOT: usize = 200;

/// Applies the hub's decisions with a row id above `after` to the
/// store's episodes still waiting for one; returns the highest id seen.
pub(crate) fn reviews(hub: &Hub, store: &Store, after: i64) -> Result<i64, HubError> {
    let mut last = after;
    for r in hub.reviews(after)? {
        last = last.max(r.id);
        let waiting = match store.episode(&r.episode_id) {
            Ok(e) => e.status == EpisodeStatus::Submitted,
            Err(understudy::Error::NotFound(_)) => false,
            Err(e) => return Err(e.into()),
        };
        if waiting {
            store.add_review(&r.episode_id, &r.reviewer, r.decision, &r.comment)?;
        }
    }
    Ok(last)
}

/// Adds the hub's judgments and overrides stored after `after` to the
/// store's episodes, each once: a grade the store already holds (this
/// app's own, sent earlier, coming back) is not added again, so a pull
/// cut off and repeated duplicates nothing. Returns the row ids to ask
/// after next time.
///
/// A grade of a run this store does not have yet (submitted and graded
/// on the hub after this sync listed the finished runs) is not passed
/// over for good: the ids returned stop just before the first such grade,
/// so the next sync, which pulls that run first, reads it again.
pub(crate) fn grades(
    hub: &Hub,
    store: &Store,
    mut after: GradesAfter,
) -> Result<GradesAfter, HubError> {
    let (mut judgment_waits, mut override_waits) = (None, None);
    loop {
        let page = hub.grades_after(&after)?;
        for j in &page.judgments {
            let g = &j.grade;
            if !has(store, &g.episode_id)? {
                judgment_waits.get_or_insert(j.id);
            } else if !store.judgments(&g.episode_id)?.contains(&g.judgment) {
                store.save_judgment(&g.episode_id, &g.judgment)?;
            }
            after.judgments_after = after.judgments_after.max(j.id);
        }
        for o in &page.overrides {
            let g = &o.grade;
            if !has(store, &g.episode_id)? {
                override_waits.get_or_insert(o.id);
            } else if !store.overrides(&g.episode_id)?.contains(&g.record) {
                store.save_override(&g.episode_id, &g.record)?;
            }
            after.overrides_after = after.overrides_after.max(o.id);
        }
        if page.judgments.len() < GRADES_PAGE && page.overrides.len() < GRADES_PAGE {
            return Ok(GradesAfter {
                judgments_after: judgment_waits.map_or(after.judgments_after, |id| id - 1),
                overrides_after: override_waits.map_or(after.overrides_after, |id| id - 1),
            });
        }
    }
}

/// Adds the hub's rubric versions the store lacks; returns how many.
pub(crate) fn rubrics(hub: &Hub, store: &Store) -> Result<usize, HubError> {
    let mut added = 0;
    // Oldest first, so the local history keeps the hub's order.
    let mut versions = hub.rubrics(&RubricQuery::default())?;
    versions.reverse();
    for v in versions {
        let here = store.rubric_versions(&v.world_id, &v.task_id)?;
        if here.iter().any(|h| h.hash == v.hash) {
            continue;
        }
        store.save_rubric_version(&NewRubricVersion {
            world_id: &v.world_id,
            task_id: &v.task_id,
            version: &v.version,
            hash: &v.hash,
            path: &v.path,
            content: &v.content,
            saved_by: v.saved_by.as_deref(),
        })?;
        added += 1;
    }
    Ok(added)
}
