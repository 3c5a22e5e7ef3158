//! Rubric versions saved from the app: each save keeps the file's bytes
//! and content hash, so a score's `rubric_hash` always names a version
//! that can be read back, and two versions can be compared.

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::{now, Store};
use crate::error::Result;

/// What a save records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRubricVersion<'a> {
    /// The world the rubric grades.
    pub world_id: &'a str,
    /// The task it grades.
    pub task_id: &'a str,
    /// The rubric's own `version` field.
    pub version: &'a str,
    /// SHA-256 of `content`.
    pub hash: &'a str,
    /// Where the file was written.
    pub path: &'a str,
    /// The file's bytes, as written.
    pub content: &'a str,
    /// The expert who saved it, if known.
    pub saved_by: Option<&'a str>,
}

/// One saved version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RubricVersion {
    /// Row id, in the order versions were saved.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub id: i64,
    /// The world the rubric grades.
    pub world_id: String,
    /// The task it grades.
    pub task_id: String,
    /// The rubric's own `version` field.
    pub version: String,
    /// SHA-256 of `content`: what a score's `rubric_hash` names.
    pub hash: String,
    /// Where the file was written.
    pub path: String,
    /// The file's bytes, as saved.
    pub content: String,
    /// The expert who saved it, if known.
    pub saved_by: Option<String>,
    /// When (RFC 3339, wall time).
    pub saved_at: String,
}

const COLUMNS: &str = "id, world_id, task_id, version, hash, path, content, saved_by, saved_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RubricVersion> {
    Ok(RubricVersion {
        id: r.get(0)?,
        world_id: r.get(1)?,
        task_id: r.get(2)?,
        version: r.get(3)?,
        hash: r.get(4)?,
        path: r.get(5)?,
        content: r.get(6)?,
        saved_by: r.get(7)?,
        saved_at: r.get(8)?,
    })
}

impl Store {
    /// Records a saved rubric. Saving the same bytes as the task's latest
    /// version again returns that version instead of a duplicate.
    pub fn save_rubric_version(&self, v: &NewRubricVersion<'_>) -> Result<RubricVersion> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let latest: Option<RubricVersion> = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM rubric_versions WHERE world_id = ?1 AND task_id = ?2 ORDER BY id DESC LIMIT 1"),
                params![v.world_id, v.task_id],
                row,
            )
            .optional()?;
        if let Some(latest) = latest.filter(|l| l.hash == v.hash && l.path == v.path) {
            return Ok(latest);
        }
        tx.execute(
            "INSERT INTO rubric_versions (world_id, task_id, version, hash, path, content, saved_by, saved_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![v.world_id, v.task_id, v.version, v.hash, v.path, v.content, v.saved_by, now()],
        )?;
        let id = tx.last_insert_rowid();
        let saved = tx.query_row(
            &format!("SELECT {COLUMNS} FROM rubric_versions WHERE id = ?1"),
            params![id],
            row,
        )?;
        tx.commit()?;
        Ok(saved)
    }

    /// The saved versions of a task's rubric, newest first.
    pub fn rubric_versions(&self, world_id: &str, task_id: &str) -> Result<Vec<RubricVersion>> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM rubric_versions WHERE world_id = ?1 AND task_id = ?2 ORDER BY id DESC"
        ))?;
        let rows = stmt.query_map(params![world_id, task_id], row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version<'a>(hash: &'a str, content: &'a str) -> NewRubricVersion<'a> {
        NewRubricVersion {
            world_id: "support-desk",
            task_id: "duplicate-charge",
            version: "2",
            hash,
            path: "/data/rubrics/support-desk/duplicate-charge.toml",
            content,
            saved_by: Some("expert-1"),
        }
    }

    #[test]
    fn versions_are_kept_newest_first_without_duplicating_a_resave() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path().join("s.sqlite")).expect("opens");
        assert!(store
            .rubric_versions("support-desk", "duplicate-charge")
            .expect("reads")
            .is_empty());
        let a = store
            .save_rubric_version(&version("aaa", "format = 1"))
            .expect("saves");
        let again = store
            .save_rubric_version(&version("aaa", "format = 1"))
            .expect("saves");
        assert_eq!(a, again, "the same bytes again are the same version");
        let b = store
            .save_rubric_version(&version("bbb", "format = 1\n"))
            .expect("saves");
        let back = store
            .save_rubric_version(&version("aaa", "format = 1"))
            .expect("saves");
        assert_ne!(back.id, a.id, "going back to older bytes is a new version");
        let all = store
            .rubric_versions("support-desk", "duplicate-charge")
            .expect("reads");
        assert_eq!(
            all.iter().map(|v| v.id).collect::<Vec<_>>(),
            vec![back.id, b.id, a.id]
        );
        assert_eq!(all[1].content, "format = 1\n");
        assert_eq!(all[1].saved_by.as_deref(), Some("expert-1"));
        assert!(store
            .rubric_versions("support-desk", "other")
            .expect("reads")
            .is_empty());
    }
}
