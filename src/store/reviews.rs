//! Reviews: a reviewer approves or rejects a submitted episode, and the
//! review queue lists episodes with what a reviewer needs to pick one.
//!
//! A decision is final: only a submitted episode can be reviewed, once, so
//! a gold run cannot silently flip back, and a rejection always carries the
//! comment that goes back to its expert.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use super::records::EPISODE_COLUMNS;
use super::{
    filter_sql, now, Decision, EpisodeFilter, EpisodeRecord, EpisodeStatus, Review, Store,
};
use crate::error::{Error, Result};

const REVIEW_COLUMNS: &str = "id, episode_id, reviewer, decision, comment, at";

/// One row of the review queue: an episode's header, how many steps it
/// kept (undone ones left out), and its latest review.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpisodeSummary {
    /// The episode as stored.
    pub record: EpisodeRecord,
    /// Steps that were not undone.
    pub kept_steps: u32,
    /// The most recent review, if any.
    pub last_review: Option<Review>,
}

impl Store {
    /// Records a review decision and sets the episode's status from it, in
    /// one transaction. Refused, changing nothing: an episode that is not
    /// in the store, one not submitted (still open, abandoned, or already
    /// approved or rejected), an empty reviewer, and a rejection without a
    /// comment (the expert gets the episode back with it).
    pub fn add_review(
        &self,
        episode_id: &str,
        reviewer: &str,
        decision: Decision,
        comment: &str,
    ) -> Result<Review> {
        let reviewer = reviewer.trim();
        if reviewer.is_empty() {
            return Err(Error::Conflict("a review needs the reviewer's name".into()));
        }
        if decision == Decision::Reject && comment.trim().is_empty() {
            return Err(Error::Conflict(format!(
                "rejecting episode {episode_id} needs a comment: it goes back to its expert, who needs to know what to fix"
            )));
        }
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let status: Option<String> = tx
            .query_row(
                "SELECT status FROM episodes WHERE id = ?1",
                [episode_id],
                |r| r.get(0),
            )
            .optional()?;
        let status = status.ok_or_else(|| Error::NotFound(format!("episode {episode_id}")))?;
        match EpisodeStatus::parse(&status) {
            Some(EpisodeStatus::Submitted) => {}
            Some(s @ (EpisodeStatus::Approved | EpisodeStatus::Rejected)) => {
                let last: Option<(String, String)> = tx
                    .query_row(
                        "SELECT reviewer, at FROM reviews WHERE episode_id = ?1 ORDER BY id DESC LIMIT 1",
                        [episode_id],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?;
                let by = last
                    .map(|(who, at)| format!(" by {who} at {at}"))
                    .unwrap_or_default();
                return Err(Error::Conflict(format!(
                    "episode {episode_id} was already {}{by}; a decision is final",
                    s.as_str()
                )));
            }
            _ => {
                return Err(Error::Conflict(format!(
                    "episode {episode_id} is {}; only a submitted episode can be reviewed",
                    status.replace('_', " ")
                )))
            }
        }
        let at = now();
        tx.execute(
            "INSERT INTO reviews (episode_id, reviewer, decision, comment, at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![episode_id, reviewer, decision.as_str(), comment, at],
        )?;
        let id = tx.last_insert_rowid();
        let new_status = match decision {
            Decision::Approve => EpisodeStatus::Approved,
            Decision::Reject => EpisodeStatus::Rejected,
        };
        tx.execute(
            "UPDATE episodes SET status = ?2, updated_at = ?3 WHERE id = ?1",
            params![episode_id, new_status.as_str(), at],
        )?;
        tx.commit()?;
        Ok(Review {
            id,
            episode_id: episode_id.to_string(),
            reviewer: reviewer.to_string(),
            decision,
            comment: comment.to_string(),
            at,
        })
    }

    /// Records a decision by an expert of this store, under their name:
    /// how the desktop app reviews, with the reviewer being the profile
    /// using it. Refused, changing nothing, when the expert recorded the
    /// episode themselves (a second pair of eyes must be a second person),
    /// and for everything [`Store::add_review`] refuses.
    pub fn add_expert_review(
        &self,
        episode_id: &str,
        reviewer_id: &str,
        decision: Decision,
        comment: &str,
    ) -> Result<Review> {
        let reviewer = self.expert(reviewer_id)?;
        let episode = self.episode(episode_id)?;
        if let crate::trajectory::Actor::Expert { id } = &episode.actor {
            if id == &reviewer.id {
                return Err(Error::Conflict(format!(
                    "episode {episode_id} was recorded by {}, who cannot review their own work; another expert has to",
                    reviewer.name
                )));
            }
        }
        self.add_review(episode_id, &reviewer.name, decision, comment)
    }

    /// Every review of an episode, oldest first.
    pub fn reviews(&self, episode_id: &str) -> Result<Vec<Review>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {REVIEW_COLUMNS} FROM reviews WHERE episode_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([episode_id], Review::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The review queue: episodes matching `filter`, oldest first, each
    /// with its kept step count and latest review, in two queries however
    /// many episodes there are.
    pub fn episode_summaries(&self, filter: &EpisodeFilter) -> Result<Vec<EpisodeSummary>> {
        let (clauses, args) = filter_sql(filter);
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {EPISODE_COLUMNS}, (SELECT count(*) FROM steps WHERE steps.episode_id = episodes.id AND steps.retracted = 0) FROM episodes WHERE 1 = 1{clauses} ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
            Ok((EpisodeRecord::from_row(r)?, r.get::<_, u32>(14)?))
        })?;
        let episodes = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        let mut stmt = conn.prepare(&format!(
            "SELECT {REVIEW_COLUMNS} FROM reviews WHERE id IN (SELECT max(id) FROM reviews GROUP BY episode_id)"
        ))?;
        let mut latest: HashMap<String, Review> = stmt
            .query_map([], Review::from_row)?
            .map(|r| r.map(|r| (r.episode_id.clone(), r)))
            .collect::<rusqlite::Result<_>>()?;
        Ok(episodes
            .into_iter()
            .map(|(record, kept_steps)| EpisodeSummary {
                last_review: latest.remove(&record.id),
                record,
                kept_steps,
            })
            .collect())
    }
}
