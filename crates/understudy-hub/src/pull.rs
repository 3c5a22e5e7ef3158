//! What the app takes from the hub into its own store, so its screens
//! work unchanged on the team's data: the finished episodes a reviewer or
//! grader works on, the decisions reviewers made, the graders' judgments
//! (with their scale levels), overrides and assignments, and rubric
//! versions. Runs and grading work come through the hub's change feeds,
//! read after a cursor this store keeps per hub account and feed: a sync
//! reads what changed since the last one, not the hub's whole lists.
//!
//! The local store stays the screens' one source: pulled episodes are
//! imported whole (steps, expert profile, reviews) and replay, compare and
//! grade like local ones. Pulling never changes what is already here:
//! an episode the store has is left alone, a decision is applied only to
//! an episode still waiting for one, and a grade or rubric version is
//! added once. Pulled episodes (and the profiles they bring) are marked
//! as pulled in the same transaction: they are never pushed back, and the
//! start screen does not offer their experts as people of this computer.

use std::collections::BTreeSet;

use understudy::store::{
    Assignment, EpisodeStatus, HubCursor, NewRubricVersion, PulledAssignment, Store,
};

use crate::client::Hub;
use crate::error::HubError;
use crate::wire::{ChangeCursor, EpisodeJudgment, EpisodeOverride, GraderAssignment, RubricQuery};

/// Whether the store has episode `id`.
fn has(store: &Store, id: &str) -> Result<bool, HubError> {
    match store.episode(id) {
        Ok(_) => Ok(true),
        Err(understudy::Error::NotFound(_)) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// The feed of finished runs in the store's hub cursors.
pub const RUNS_FEED: &str = "runs";

/// Imports the hub's finished runs the store lacks, reading only the runs
/// added or changed since this store's last pull from `account` (the
/// runs feed, page by page): a sync costs what changed, not what the hub
/// holds. Only those lacking are fetched whole, a few hundred at a time,
/// each lot one transaction; the cursor is saved after the page's runs
/// are in, so a pull cut off reads that page again and imports the rest
/// (a run already here is skipped). Returns how many were imported.
pub fn episodes(hub: &Hub, store: &Store, account: &str) -> Result<usize, HubError> {
    let mut after = cursor(store, account, RUNS_FEED)?;
    let mut pulled = 0;
    loop {
        let page = hub.run_changes(&after)?;
        let mut lacking = Vec::new();
        for id in &page.runs {
            if !has(store, id)? {
                lacking.push(id.clone());
            }
        }
        pulled += runs(hub, store, &lacking)?;
        save_cursor(store, account, RUNS_FEED, &page.next)?;
        after = page.next;
        if !page.more {
            return Ok(pulled);
        }
    }
}

fn save_cursor(
    store: &Store,
    account: &str,
    feed: &str,
    at: &ChangeCursor,
) -> Result<(), HubError> {
    let text = cursor_text(at)?;
    store.save_hub_cursor(&HubCursor {
        account,
        feed,
        cursor: &text,
    })?;
    Ok(())
}

fn cursor_text(at: &ChangeCursor) -> Result<String, HubError> {
    serde_json::to_string(at).map_err(|e| HubError::Invalid(e.to_string()))
}

/// How many episodes a pull fetches and imports at once.
const PULL_LOT: usize = 200;

/// Imports the runs `ids` (which the store lacks), a lot at a time, each
/// lot one transaction, and then everything graders did on them: a run
/// pulled now brings the grading work done before it could be pulled.
/// Returns how many were imported.
fn runs(hub: &Hub, store: &Store, ids: &[String]) -> Result<usize, HubError> {
    let mut pulled = 0;
    for lot in ids.chunks(PULL_LOT) {
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
        let work = hub.grading_of_runs(lot)?;
        add_grades(store, &work.judgments, &work.overrides)?;
        store.save_pulled_assignments(&pulled_assignments(&work.assignments), None)?;
    }
    Ok(pulled)
}

/// The feed of grading work (assignments, judgments, overrides) in the
/// store's hub cursors.
pub const GRADING_FEED: &str = "grading";

/// The store's position in `feed` of `account`: the start when it never
/// pulled it.
fn cursor(store: &Store, account: &str, feed: &str) -> Result<ChangeCursor, HubError> {
    match store.hub_cursor(account, feed)? {
        None => Ok(ChangeCursor::default()),
        Some(text) => serde_json::from_str(&text).map_err(|e| {
            HubError::Invalid(format!(
                "the store's position in the hub's {feed} feed (hub_cursors, account {account}) is `{text}`, not a cursor ({e}); it was written by another program"
            ))
        }),
    }
}

fn pulled_assignments(rows: &[GraderAssignment]) -> Vec<PulledAssignment> {
    rows.iter()
        .map(|a| PulledAssignment {
            assignment: Assignment {
                episode_id: a.episode_id.clone(),
                grader: a.grader.clone(),
                assigned_at: a.assigned_at.clone(),
                done_at: a.done_at.clone(),
            },
            grader_name: a.grader_name.clone(),
        })
        .collect()
}

/// Adds judgments and overrides to the store's runs, each once: a grade
/// the store already holds (this app's own, sent earlier, coming back,
/// or one read again after a pull cut off) is not added again. Grades of
/// runs the store lacks are left out (the caller pulls runs first).
fn add_grades(
    store: &Store,
    judgments: &[EpisodeJudgment],
    overrides: &[EpisodeOverride],
) -> Result<(), HubError> {
    for g in judgments {
        if has(store, &g.episode_id)? && !store.judgments(&g.episode_id)?.contains(&g.judgment) {
            store.save_judgment(&g.episode_id, &g.judgment)?;
        }
    }
    for g in overrides {
        if has(store, &g.episode_id)? && !store.overrides(&g.episode_id)?.contains(&g.record) {
            store.save_override(&g.episode_id, &g.record)?;
        }
    }
    Ok(())
}

/// What a pull of the grading feed read and did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GradingPull {
    /// Rows the hub served (assignments, judgments, overrides).
    pub read: usize,
    /// Runs pulled because the feed named them before the runs feed did.
    pub runs: usize,
    /// Assignments added or marked done.
    pub assignments: usize,
}

/// Pulls the grading work (graders' assignments, judgments, overrides)
/// changed since this store's last pull from the hub `account` names
/// (its URL and person), page by page, the cursor saved after each page.
///
/// The hub serves only the work on runs this person may pull, and its
/// cursor passes the rest, so a grade of a run never pullable is never
/// read again. A run named that the store lacks (it became pullable
/// after this sync's runs pull) is pulled first, in the same sync, with
/// all its grading work; one that becomes pullable later is announced by
/// the runs feed and brings its work then ([`episodes`]). So nothing is
/// lost and nothing is read for ever.
pub fn grading(hub: &Hub, store: &Store, account: &str) -> Result<GradingPull, HubError> {
    let mut after = cursor(store, account, GRADING_FEED)?;
    let mut report = GradingPull::default();
    loop {
        let page = hub.grading_changes(&after)?;
        report.read += page.assignments.len() + page.judgments.len() + page.overrides.len();
        let named: BTreeSet<&str> = page
            .assignments
            .iter()
            .map(|a| a.episode_id.as_str())
            .chain(page.judgments.iter().map(|g| g.episode_id.as_str()))
            .chain(page.overrides.iter().map(|g| g.episode_id.as_str()))
            .collect();
        let mut lacking = Vec::new();
        for id in named {
            if !has(store, id)? {
                lacking.push(id.to_string());
            }
        }
        report.runs += runs(hub, store, &lacking)?;
        add_grades(store, &page.judgments, &page.overrides)?;
        let text = cursor_text(&page.next)?;
        report.assignments += store.save_pulled_assignments(
            &pulled_assignments(&page.assignments),
            Some(&HubCursor {
                account,
                feed: GRADING_FEED,
                cursor: &text,
            }),
        )?;
        after = page.next;
        if !page.more {
            return Ok(report);
        }
    }
}

/// The feed of reviewers' decisions in the store's hub cursors.
pub const REVIEWS_FEED: &str = "reviews";

/// Applies the hub's decisions made since this store's last pull from
/// `account` (the reviews feed, page by page, the cursor saved after each
/// page) to the store's episodes still waiting for one; returns how many
/// it applied. A decision on an episode the store lacks is passed: the
/// episode brings its reviews when it is pulled. On a pulled episode
/// this computer decided otherwise (the hub refused that decision:
/// someone was first), the hub's decision replaces it.
pub fn reviews(hub: &Hub, store: &Store, account: &str) -> Result<usize, HubError> {
    let mut after = cursor(store, account, REVIEWS_FEED)?;
    let mut applied = 0;
    loop {
        let page = hub.review_changes(&after)?;
        for r in &page.reviews {
            let waiting = match store.episode(&r.episode_id) {
                Ok(e) => e.status == EpisodeStatus::Submitted,
                Err(understudy::Error::NotFound(_)) => false,
                Err(e) => return Err(e.into()),
            };
            if waiting {
                store.add_review(&r.episode_id, &r.reviewer, r.decision, &r.comment)?;
                applied += 1;
            } else if store.take_hubs_decision(r)? {
                applied += 1;
            }
        }
        save_cursor(store, account, REVIEWS_FEED, &page.next)?;
        after = page.next;
        if !page.more {
            return Ok(applied);
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
