//! Assignments: an admin gives a task of a stored world to one or more
//! experts (more than one is overlap, for agreement), with an optional due
//! date; an expert sees their own queue.

use tokio_postgres::{Client, Row};

use crate::error::ApiError;
use crate::people::Person;
use crate::roles::Role;
use crate::wire::{Assignment, NewAssignment};

const COLUMNS: &str = "a.id, a.world_hash, w.world_id, a.task_id, p.login, a.overlap, to_char(a.due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS due";

fn from_row(r: &Row) -> Assignment {
    Assignment {
        id: r.get(0),
        world_hash: r.get(1),
        world_id: r.get(2),
        task_id: r.get(3),
        expert: r.get(4),
        overlap: r.get(5),
        due_at: r.get(6),
    }
}

/// Creates (or, for a task already given to an expert, updates the due
/// date and overlap of) one assignment per expert, in one transaction.
pub(crate) async fn create(
    db: &mut Client,
    caller: &Person,
    new: &NewAssignment,
) -> Result<Vec<Assignment>, ApiError> {
    if caller.role != Role::Admin {
        return Err(caller.refused("only admins assign tasks"));
    }
    if new.experts.is_empty() {
        return Err(ApiError::bad_request(
            "experts: name at least one expert's login",
        ));
    }
    let due = match &new.due_at {
        Some(d) => Some(
            chrono::DateTime::parse_from_rfc3339(d)
                .map_err(|e| {
                    ApiError::bad_request(format!(
                        "due_at: `{d}` is not an RFC 3339 time such as 2026-03-04T17:00:00Z ({e})"
                    ))
                })?
                .with_timezone(&chrono::Utc)
                .to_rfc3339(),
        ),
        None => None,
    };
    let tx = db.transaction().await?;
    let world = tx
        .query_opt(
            "SELECT $2 = ANY(task_ids) FROM worlds WHERE hash = $1",
            &[&new.world_hash, &new.task_id],
        )
        .await?
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "world_hash: the hub has no world {}; upload it first",
                new.world_hash
            ))
        })?;
    if !world.get::<_, bool>(0) {
        return Err(ApiError::bad_request(format!(
            "task_id: world {} declares no task `{}`",
            new.world_hash, new.task_id
        )));
    }
    let overlap = new.experts.len() as i32;
    let mut ids = Vec::new();
    for login in &new.experts {
        let person = crate::people::by_login(&tx, login).await?;
        if person.role != Role::Expert {
            return Err(ApiError::bad_request(format!(
                "experts: {login} is a {}, not an expert",
                person.role.as_str()
            )));
        }
        let id: i64 = tx
            .query_one(
                "INSERT INTO assignments (world_hash, task_id, expert, overlap, due_at, changed_by) VALUES ($1, $2, $3, $4, $5::text::timestamptz, $6)
                 ON CONFLICT (world_hash, task_id, expert) DO UPDATE SET overlap = excluded.overlap, due_at = excluded.due_at, changed_by = excluded.changed_by, changed_at = now() RETURNING id",
                &[&new.world_hash, &new.task_id, &person.id, &overlap, &due, &caller.id],
            )
            .await?
            .get(0);
        ids.push(id);
    }
    let rows = tx
        .query(
            &format!("SELECT {COLUMNS} FROM assignments a JOIN worlds w ON w.hash = a.world_hash JOIN people p ON p.id = a.expert WHERE a.id = ANY($1) ORDER BY a.id"),
            &[&ids],
        )
        .await?;
    tx.commit().await?;
    Ok(rows.iter().map(from_row).collect())
}

/// An expert's own queue; everyone's for the other roles.
pub(crate) async fn list(db: &Client, caller: &Person) -> Result<Vec<Assignment>, ApiError> {
    let base = format!("SELECT {COLUMNS} FROM assignments a JOIN worlds w ON w.hash = a.world_hash JOIN people p ON p.id = a.expert");
    let rows = if caller.role.reads_all() {
        db.query(&format!("{base} ORDER BY a.due_at NULLS LAST, a.id"), &[])
            .await?
    } else {
        db.query(
            &format!("{base} WHERE a.expert = $1 ORDER BY a.due_at NULLS LAST, a.id"),
            &[&caller.id],
        )
        .await?
    };
    Ok(rows.iter().map(from_row).collect())
}
