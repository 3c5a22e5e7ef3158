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

use super::Store;
use crate::error::Result;
use crate::store::{Expert, Review};
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

    fn ids(&self, sql: &str) -> Result<HashSet<String>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(sql)?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Actor, EpisodeRecord, EpisodeStatus, ExpertInput, Store};
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
}
