//! Where each person's work stands: for experts, the recordings they
//! handed in and what reviewers made of them, and the time they spent; for
//! reviewers, what they decided and what still waits; for graders, the
//! agent runs asked of them. People look here for their own progress, and
//! a lead for the team's.
//!
//! Counts come from each episode's current status, so a recording returned
//! and then approved counts once, as approved. Active time excludes pauses
//! (the recorder's clock) and abandoned recordings, which are not work
//! anyone will use.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::Result;
use crate::store::{Actor, Decision, EpisodeFilter, EpisodeStatus, Store};

/// One expert's recordings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExpertProgress {
    /// The expert's id.
    pub id: String,
    /// Their name (the id when the profile is gone).
    pub name: String,
    /// Recordings open now (being recorded or paused).
    pub in_progress: u32,
    /// Handed in: waiting for review, approved or returned.
    pub done: u32,
    /// Waiting for a reviewer.
    pub waiting: u32,
    /// Returned by a reviewer to be done again.
    pub returned: u32,
    /// Approved: gold.
    pub approved: u32,
    /// Distinct tasks with a recording handed in.
    pub tasks: u32,
    /// Working time on recordings not abandoned, pauses excluded.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub active_ms: i64,
    /// When they last worked on a recording (RFC 3339).
    pub last_active: Option<String>,
}

/// One reviewer's decisions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ReviewerProgress {
    /// The reviewer's expert id, or the name given on the command line
    /// when it names no single expert.
    pub id: String,
    /// Their name.
    pub name: String,
    /// Decisions made.
    pub reviewed: u32,
    /// Of those, approvals.
    pub approved: u32,
    /// Of those, returns.
    pub returned: u32,
    /// Recordings by others waiting for a review now.
    pub pending: u32,
    /// When they last decided (RFC 3339).
    pub last_review: Option<String>,
}

/// One grader's agent runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GraderProgress {
    /// The grader's expert id.
    pub id: String,
    /// Their name.
    pub name: String,
    /// Runs they were asked to grade.
    pub assigned: u32,
    /// Runs they said they were done with.
    pub done: u32,
}

/// Everyone's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PeopleProgress {
    /// Experts with any recording, by name.
    pub experts: Vec<ExpertProgress>,
    /// Everyone who reviewed or could review (every expert profile), by name.
    pub reviewers: Vec<ReviewerProgress>,
    /// Everyone asked to grade an agent run, by name.
    pub graders: Vec<GraderProgress>,
    /// Recordings waiting for a review, in all.
    pub waiting: u32,
}

/// Everyone's progress in the store.
pub fn people_progress(store: &Store) -> Result<PeopleProgress> {
    let names: BTreeMap<String, String> = store
        .experts()?
        .into_iter()
        .map(|e| (e.id, e.name))
        .collect();
    let name_of = |id: &str| names.get(id).cloned().unwrap_or_else(|| id.to_string());
    // The app stores a reviewer by name (`Store::add_expert_review`), the
    // command line by whatever was typed: a reviewer is an expert when the
    // text is their id, or the name of exactly one of them.
    let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (id, name) in &names {
        by_name.entry(name.as_str()).or_default().push(id.as_str());
    }
    let reviewer_id = |who: &str| -> String {
        if names.contains_key(who) {
            return who.to_string();
        }
        match by_name.get(who).map(Vec::as_slice) {
            Some([id]) => (*id).to_string(),
            _ => who.to_string(),
        }
    };

    let mut experts: BTreeMap<String, ExpertProgress> = BTreeMap::new();
    let mut tasks: BTreeMap<String, std::collections::BTreeSet<(String, String)>> = BTreeMap::new();
    let mut reviewers: BTreeMap<String, ReviewerProgress> = names
        .iter()
        .map(|(id, name)| {
            let r = ReviewerProgress {
                id: id.clone(),
                name: name.clone(),
                ..ReviewerProgress::default()
            };
            (id.clone(), r)
        })
        .collect();
    // Who performed each recording waiting for review.
    let mut waiting_by: Vec<String> = Vec::new();
    for e in store.episodes(&EpisodeFilter::default())? {
        for r in store.reviews(&e.id)? {
            let id = reviewer_id(&r.reviewer);
            let entry = reviewers
                .entry(id.clone())
                .or_insert_with(|| ReviewerProgress {
                    name: name_of(&id),
                    id,
                    ..ReviewerProgress::default()
                });
            entry.reviewed += 1;
            match r.decision {
                Decision::Approve => entry.approved += 1,
                Decision::Reject => entry.returned += 1,
            }
            if entry
                .last_review
                .as_deref()
                .is_none_or(|l| l < r.at.as_str())
            {
                entry.last_review = Some(r.at.clone());
            }
        }
        let Actor::Expert { id } = &e.actor else {
            continue;
        };
        let p = experts.entry(id.clone()).or_insert_with(|| ExpertProgress {
            id: id.clone(),
            name: name_of(id),
            ..ExpertProgress::default()
        });
        let handed_in = match e.status {
            EpisodeStatus::InProgress | EpisodeStatus::Paused => {
                p.in_progress += 1;
                false
            }
            EpisodeStatus::Submitted => {
                p.waiting += 1;
                waiting_by.push(id.clone());
                true
            }
            EpisodeStatus::Approved => {
                p.approved += 1;
                true
            }
            EpisodeStatus::Rejected => {
                p.returned += 1;
                true
            }
            EpisodeStatus::Abandoned => continue,
        };
        if handed_in {
            p.done += 1;
            tasks
                .entry(id.clone())
                .or_default()
                .insert((e.world_id.clone(), e.task_id.clone()));
        }
        p.active_ms += e.active_ms.max(0);
        if p.last_active
            .as_deref()
            .is_none_or(|l| l < e.updated_at.as_str())
        {
            p.last_active = Some(e.updated_at.clone());
        }
    }
    for (id, t) in &tasks {
        if let Some(p) = experts.get_mut(id) {
            p.tasks = t.len() as u32;
        }
    }
    for r in reviewers.values_mut() {
        // Nobody reviews their own recording (the store refuses it).
        r.pending = waiting_by.iter().filter(|by| **by != r.id).count() as u32;
    }
    let mut graders: BTreeMap<String, GraderProgress> = BTreeMap::new();
    for a in store.assignments()? {
        let g = graders
            .entry(a.grader.clone())
            .or_insert_with(|| GraderProgress {
                id: a.grader.clone(),
                name: name_of(&a.grader),
                ..GraderProgress::default()
            });
        g.assigned += 1;
        g.done += u32::from(a.done_at.is_some());
    }
    let by_name = |a: &str, b: &str, ia: &str, ib: &str| a.cmp(b).then_with(|| ia.cmp(ib));
    let mut experts: Vec<_> = experts.into_values().collect();
    experts.sort_by(|a, b| by_name(&a.name, &b.name, &a.id, &b.id));
    let mut reviewers: Vec<_> = reviewers.into_values().collect();
    reviewers.sort_by(|a, b| by_name(&a.name, &b.name, &a.id, &b.id));
    let mut graders: Vec<_> = graders.into_values().collect();
    graders.sort_by(|a, b| by_name(&a.name, &b.name, &a.id, &b.id));
    Ok(PeopleProgress {
        experts,
        reviewers,
        graders,
        waiting: waiting_by.len() as u32,
    })
}
