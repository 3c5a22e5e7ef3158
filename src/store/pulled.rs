//! What this store took from a team hub: the episodes a reviewer's or
//! grader's app pulled to work on, and the expert profiles that came with
//! them.
//!
//! They are other people's work. Remembering which they are is what keeps
//! the app from sending them back as its own (an app that pulled as a
//! reviewer and later signs in as an expert pushes only what was recorded
//! on it; the hub would refuse a batch holding someone else's episode) and
//! keeps pulled profiles off the start screen, which offers only the
//! people who use this computer.

use std::collections::HashSet;

use rusqlite::{params, OptionalExtension};

use super::{now, Store};
use crate::error::Result;
use crate::store::{Decision, EpisodeStatus, Expert, Review};
use crate::trajectory::Trajectory;

impl Store {
    /// [`Store::import_full`] for episodes pulled from a hub, marking them
    /// (and the experts it adds) as pulled in the same transaction, so a
    /// crash cannot leave a pulled episode that looks recorded here.
    /// Returns how many experts were added.
    pub fn import_pulled(
        &self,
        experts: &[Expert],
        episodes: &[(Trajectory, Vec<Review>)],
    ) -> Result<usize> {
        self.import_marking(experts, episodes, true)
    }

    /// Ids of the episodes pulled from a hub.
    pub fn pulled_episode_ids(&self) -> Result<HashSet<String>> {
        self.ids("SELECT episode_id FROM pulled_episodes")
    }

    /// Ids of the expert profiles that came with pulled episodes.
    pub fn pulled_expert_ids(&self) -> Result<HashSet<String>> {
        self.ids("SELECT expert_id FROM pulled_experts")
    }

    /// The profiles of the people who use this computer: every expert but
    /// those that came with pulled episodes, by name.
    pub fn local_experts(&self) -> Result<Vec<Expert>> {
        let pulled = self.pulled_expert_ids()?;
        Ok(self
            .experts()?
            .into_iter()
            .filter(|x| !pulled.contains(&x.id))
            .collect())
    }

    /// Puts the hub's decision `hub` in place of this store's on a pulled
    /// episode, when they differ: the hub refused this computer's decision
    /// because someone decided first, and the team's record is the hub's.
    /// In one transaction: the episode's reviews become the hub's one, and
    /// its status follows. An episode recorded here (not pulled) is never
    /// rewritten, nor one still waiting (the caller applies a decision to
    /// it as to any). Returns whether anything changed.
    pub fn take_hubs_decision(&self, hub: &Review) -> Result<bool> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let pulled: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM pulled_episodes WHERE episode_id = ?1)",
            [&hub.episode_id],
            |r| r.get(0),
        )?;
        let status: Option<String> = tx
            .query_row(
                "SELECT status FROM episodes WHERE id = ?1",
                [&hub.episode_id],
                |r| r.get(0),
            )
            .optional()?;
        let decided = matches!(
            status.as_deref().and_then(EpisodeStatus::parse),
            Some(EpisodeStatus::Approved | EpisodeStatus::Rejected)
        );
        if !pulled || !decided {
            return Ok(false);
        }
        let here: Option<(String, String, String)> = tx
            .query_row(
                "SELECT reviewer, decision, comment FROM reviews WHERE episode_id = ?1 ORDER BY id DESC LIMIT 1",
                [&hub.episode_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let theirs = (
            hub.reviewer.clone(),
            hub.decision.as_str().to_string(),
            hub.comment.clone(),
        );
        if here.as_ref() == Some(&theirs) {
            return Ok(false);
        }
        tx.execute(
            "DELETE FROM reviews WHERE episode_id = ?1",
            [&hub.episode_id],
        )?;
        tx.execute(
            "INSERT INTO reviews (episode_id, reviewer, decision, comment, at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![hub.episode_id, hub.reviewer, hub.decision.as_str(), hub.comment, hub.at],
        )?;
        let status = match hub.decision {
            Decision::Approve => EpisodeStatus::Approved,
            Decision::Reject => EpisodeStatus::Rejected,
        };
        tx.execute(
            "UPDATE episodes SET status = ?2, updated_at = ?3 WHERE id = ?1",
            params![hub.episode_id, status.as_str(), now()],
        )?;
        tx.commit()?;
        Ok(true)
    }

    fn ids(&self, sql: &str) -> Result<HashSet<String>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(sql)?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Actor, Decision, EpisodeRecord, EpisodeStatus, ExpertInput, Review, Store};
    use crate::trajectory::Trajectory;

    fn episode(id: &str, expert: &str) -> Trajectory {
        Trajectory {
            record: EpisodeRecord {
                id: id.into(),
                world_id: "w".into(),
                world_version: "1".into(),
                world_hash: "h".into(),
                task_id: "t".into(),
                seed: 0,
                actor: Actor::Expert { id: expert.into() },
                status: EpisodeStatus::Submitted,
                created_at: "2026-01-01T00:00:00Z".into(),
                updated_at: "2026-01-01T00:00:00Z".into(),
                submitted_at: Some("2026-01-01T00:00:00Z".into()),
                active_ms: 0,
                final_message: None,
            },
            steps: Vec::new(),
        }
    }

    #[test]
    fn pulled_episodes_and_the_profiles_they_bring_are_told_apart_from_local_ones() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path().join("s.db")).expect("a store");
        let me = store
            .save_expert(
                None,
                &ExpertInput {
                    name: "Local Lawyer".into(),
                    ..ExpertInput::default()
                },
            )
            .expect("a local profile");
        let mut other = me.clone();
        other.id = "x-other".into();
        other.name = "Another Expert".into();
        // `me` comes along too (the hub knew her): she stays local.
        store
            .import_pulled(
                &[other.clone(), me.clone()],
                &[(episode("e-1", "x-other"), vec![])],
            )
            .expect("pulled");
        store
            .import_full(&[], &[(episode("e-2", &me.id), vec![])])
            .expect("imported by hand");
        assert_eq!(
            store.pulled_episode_ids().expect("ids"),
            ["e-1".to_string()].into()
        );
        assert_eq!(
            store.pulled_expert_ids().expect("ids"),
            ["x-other".to_string()].into()
        );
        let local: Vec<String> = store
            .local_experts()
            .expect("local")
            .into_iter()
            .map(|x| x.name)
            .collect();
        assert_eq!(local, ["Local Lawyer"]);
        assert_eq!(store.experts().expect("all").len(), 2);
        // A refused pull (an id already here) marks nothing.
        let again = store.import_pulled(&[], &[(episode("e-2", &me.id), vec![])]);
        assert!(again.is_err());
        assert_eq!(store.pulled_episode_ids().expect("ids").len(), 1);
    }

    #[test]
    fn the_hubs_decision_replaces_a_refused_one_on_pulled_episodes_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path().join("s.db")).expect("a store");
        store
            .import_pulled(&[], &[(episode("e-pulled", "x-ada"), vec![])])
            .expect("pulled");
        store
            .import_full(&[], &[(episode("e-mine", "x-me"), vec![])])
            .expect("recorded here");
        let hubs = |id: &str| Review {
            id: 7,
            episode_id: id.into(),
            reviewer: "Gus".into(),
            decision: Decision::Reject,
            comment: "Check the balance first.".into(),
            at: "2026-12-02T00:00:00Z".into(),
        };
        // Still waiting: the caller applies the decision as any other.
        assert!(!store.take_hubs_decision(&hubs("e-pulled")).expect("read"));
        for id in ["e-pulled", "e-mine"] {
            store
                .add_review(id, "Rita", Decision::Approve, "")
                .expect("approved here");
        }
        assert!(store
            .take_hubs_decision(&hubs("e-pulled"))
            .expect("replaced"));
        let here = store.reviews("e-pulled").expect("reviews");
        assert_eq!(here.len(), 1);
        assert_eq!(
            (
                here[0].reviewer.as_str(),
                here[0].decision,
                here[0].at.as_str()
            ),
            ("Gus", Decision::Reject, "2026-12-02T00:00:00Z")
        );
        assert_eq!(
            store.episode("e-pulled").expect("here").status,
            EpisodeStatus::Rejected
        );
        assert!(
            !store.take_hubs_decision(&hubs("e-pulled")).expect("read"),
            "the same decision again changes nothing"
        );
        // An episode recorded here keeps its own decision.
        assert!(!store.take_hubs_decision(&hubs("e-mine")).expect("read"));
        assert_eq!(
            store.reviews("e-mine").expect("reviews")[0].reviewer,
            "Rita"
        );
        assert!(!store
            .take_hubs_decision(&hubs("e-none"))
            .expect("an unknown id"));
    }
}
