//! Graders' assignments on the hub: who is asked to grade which run, and
//! whether they said they were done. They come with a grader's or lead's
//! grades push (`POST /v1/sync/grades`, in its transaction), and go out to
//! every grading app that may pull the run, through the grading change
//! feed, so the agreement of all graders is measured on every machine.
//!
//! Who may assign: those who may grade (annotators, reviewers, engineers,
//! admins); experts are refused with the rest of the push. An assignment
//! is identified by its run and grader, so a resend adds nothing; "done"
//! is taken from any sender, and taken back only by the person who said
//! it. Every change is attributed (`assigned_by`, `done_by`, `changed_by`).

use tokio_postgres::{Row, Transaction};

use crate::error::ApiError;
use crate::people::Person;
use crate::wire::GraderAssignment;

/// Checks the assignments of a push without the database.
pub(crate) fn check(assignments: &[GraderAssignment]) -> Result<(), ApiError> {
    for (n, a) in assignments.iter().enumerate() {
        for (field, value) in [
            ("episode_id", &a.episode_id),
            ("grader", &a.grader),
            ("grader_name", &a.grader_name),
        ] {
            if value.trim().is_empty() {
                return Err(ApiError::bad_request(format!(
                    "assignments[{n}].{field}: must not be empty (an assignment names the run and the grader, by id and name)"
                )));
            }
        }
        if a.done_at.as_deref().is_some_and(|d| d.trim().is_empty()) {
            return Err(ApiError::bad_request(format!(
                "assignments[{n}].done_at: empty; give when the grader was done, or none while grading"
            )));
        }
    }
    Ok(())
}

/// Stores `assignments` (their runs checked present by the caller) in
/// `tx`; returns how many were added or had their "done" changed.
pub(crate) async fn store(
    tx: &Transaction<'_>,
    caller: &Person,
    assignments: &[GraderAssignment],
) -> Result<usize, ApiError> {
    let now = understudy::store::now();
    let mut changed = 0;
    for a in assignments {
        let assigned_at = if a.assigned_at.trim().is_empty() {
            now.clone()
        } else {
            a.assigned_at.clone()
        };
        let added = tx
            .execute(
                "INSERT INTO grading_assignments (episode_id, grader, grader_name, assigned_at, done_at, done_by, assigned_by, changed_by)
                 VALUES ($1, $2, $3, $4, $5, CASE WHEN $5::text IS NULL THEN NULL ELSE $6::bigint END, $6, $6) ON CONFLICT (episode_id, grader) DO NOTHING",
                &[&a.episode_id, &a.grader.trim(), &a.grader_name.trim(), &assigned_at, &a.done_at, &caller.id],
            )
            .await?;
        changed += added as usize;
        if added == 0 {
            changed += tx
                .execute(
                    "UPDATE grading_assignments SET done_at = $3, done_by = CASE WHEN $3::text IS NULL THEN NULL ELSE $4::bigint END, changed_by = $4, changed_at = now()
                     WHERE episode_id = $1 AND grader = $2 AND done_at IS DISTINCT FROM $3 AND ($3::text IS NOT NULL OR done_by = $4)",
                    &[&a.episode_id, &a.grader.trim(), &a.done_at, &caller.id],
                )
                .await? as usize;
        }
    }
    Ok(changed)
}

pub(crate) fn from_row(r: &Row) -> GraderAssignment {
    GraderAssignment {
        episode_id: r.get("episode_id"),
        grader: r.get("grader"),
        grader_name: r.get("grader_name"),
        assigned_at: r.get("assigned_at"),
        done_at: r.get("done_at"),
    }
}

/// The select a feed page of assignments reads.
pub(crate) const FEED: &str =
    "SELECT g.* FROM grading_assignments g JOIN episodes e ON e.id = g.episode_id";
