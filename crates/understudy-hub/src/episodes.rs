//! Reading episodes back out of the hub (the list, whole bundles for
//! export) and reviewing them, each limited to what the caller's role may
//! see: an expert only the episodes they pushed.

use std::collections::HashMap;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row};
use understudy::export::EpisodeBundle;
use understudy::store::{
    Actor, Decision, EpisodeRecord, EpisodeStatus, Expert, Review, StepRecord,
};
use understudy::trajectory::Trajectory;

use crate::error::{codes, ApiError};
use crate::people::Person;
use crate::wire::{
    ChangeCursor, EpisodeRow, ReviewChanges, ReviewRequest, RunChanges, CHANGES_PAGE,
};

/// Which episodes (`GET /v1/episodes`, `GET /v1/export` query parameters).
#[derive(Debug, Clone, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Query {
    pub world: Option<String>,
    pub task: Option<String>,
    pub status: Option<EpisodeStatus>,
    /// An expert's id (the episodes' actor).
    pub expert: Option<String>,
}

const EPISODE_COLUMNS: &str = "e.id, e.world_id, e.world_version, e.world_hash, e.task_id, e.seed, e.actor_kind, e.actor_id, e.status, e.created_at, e.updated_at, e.submitted_at, e.active_ms, e.final_message";

fn record(r: &Row) -> Result<EpisodeRecord, ApiError> {
    let kind: String = r.get("actor_kind");
    let actor_id: String = r.get("actor_id");
    let status: String = r.get("status");
    Ok(EpisodeRecord {
        id: r.get("id"),
        world_id: r.get("world_id"),
        world_version: r.get("world_version"),
        world_hash: r.get("world_hash"),
        task_id: r.get("task_id"),
        seed: r.get::<_, i64>("seed") as u64,
        actor: if kind == "agent" {
            Actor::Agent { model: actor_id }
        } else {
            Actor::Expert { id: actor_id }
        },
        status: serde_json::from_value(serde_json::Value::String(status.clone())).map_err(
            |_| {
                ApiError::new(
                    500,
                    codes::DATABASE,
                    format!("unknown status `{status}` in the database"),
                )
            },
        )?,
        created_at: r.get("created_at"),
        updated_at: r.get("updated_at"),
        submitted_at: r.get("submitted_at"),
        active_ms: r.get("active_ms"),
        final_message: r.get("final_message"),
    })
}

fn step(r: &Row) -> Result<StepRecord, ApiError> {
    let bad = |what: &str, e: serde_json::Error| {
        ApiError::new(
            500,
            codes::DATABASE,
            format!("a stored step's {what} is not JSON: {e}"),
        )
    };
    let action: String = r.get("action");
    let observation: String = r.get("observation");
    Ok(StepRecord {
        idx: r.get::<_, i32>("idx") as u32,
        action: serde_json::from_str(&action).map_err(|e| bad("action", e))?,
        observation: serde_json::from_str(&observation).map_err(|e| bad("observation", e))?,
        terminated: r.get("terminated"),
        truncated: r.get("truncated"),
        wall_at: r.get("wall_at"),
        active_ms: r.get("active_ms"),
        rationale: r.get("rationale"),
        flag: r.get("flag"),
        retracted: r.get("retracted"),
        retracted_at: r.get("retracted_at"),
    })
}

fn review(r: &Row) -> Review {
    let decision: String = r.get("decision");
    Review {
        id: r.get("id"),
        episode_id: r.get("episode_id"),
        reviewer: r.get("reviewer"),
        decision: if decision == "approve" {
            Decision::Approve
        } else {
            Decision::Reject
        },
        comment: r.get("comment"),
        at: r.get("at"),
    }
}

/// The `WHERE` clause for `q` as seen by `caller`, and its parameters.
pub(crate) fn conditions(
    caller: &Person,
    q: &Query,
) -> (String, Vec<Box<dyn ToSql + Sync + Send>>) {
    let mut sql = String::from(" WHERE true");
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
    let mut add = |clause: &str, v: Box<dyn ToSql + Sync + Send>| {
        args.push(v);
        sql.push_str(&format!(" AND {clause} ${}", args.len()));
    };
    if !caller.role.reads_all() {
        add("e.owner =", Box::new(caller.id));
    }
    if let Some(v) = &q.world {
        add("e.world_id =", Box::new(v.clone()));
    }
    if let Some(v) = &q.task {
        add("e.task_id =", Box::new(v.clone()));
    }
    if let Some(v) = q.status {
        add("e.status =", Box::new(v.as_str().to_string()));
    }
    if let Some(v) = &q.expert {
        add(
            "e.actor_kind = 'expert' AND e.actor_id =",
            Box::new(v.clone()),
        );
    }
    (sql, args)
}

/// The clause (after [`conditions`]) that keeps the runs an app may pull:
/// finished ones (an open run is still being recorded).
pub(crate) const PULLABLE: &str = " AND e.status NOT IN ('in_progress', 'paused')";

pub(crate) fn params(args: &[Box<dyn ToSql + Sync + Send>]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter()
        .map(|a| a.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

/// Episodes as the local store orders them: by creation time, then id,
/// compared byte by byte (not by the database's locale).
const ORDER: &str = "ORDER BY e.created_at COLLATE \"C\", e.id COLLATE \"C\"";

/// The episode list.
pub(crate) async fn list(
    db: &Client,
    caller: &Person,
    q: &Query,
) -> Result<Vec<EpisodeRow>, ApiError> {
    let (clauses, args) = conditions(caller, q);
    let sql = format!(
        "SELECT {EPISODE_COLUMNS}, p.login AS owner_login, (SELECT count(*) FROM steps s WHERE s.episode_id = e.id AND NOT s.retracted) AS kept FROM episodes e JOIN people p ON p.id = e.owner{clauses} {ORDER}"
    );
    db.query(&sql, &params(&args))
        .await?
        .iter()
        .map(|r| {
            Ok(EpisodeRow {
                record: record(r)?,
                kept_steps: r.get("kept"),
                owner: r.get("owner_login"),
            })
        })
        .collect()
}

/// The runs feed: ids of the runs `caller` may pull changed after
/// `after`, a page at most (see [`crate::changes`]).
pub(crate) async fn changes(
    db: &mut Client,
    caller: &Person,
    after: ChangeCursor,
) -> Result<RunChanges, ApiError> {
    // `g`: the feed's table, here the episodes themselves.
    let (rows, next, more) = visible_feed(
        db,
        caller,
        "episodes",
        "SELECT g.id, g.change_seq FROM episodes g JOIN episodes e ON e.id = g.id",
        PULLABLE,
        after,
    )
    .await?;
    Ok(RunChanges {
        runs: rows.iter().map(|r| r.get("id")).collect(),
        next,
        more,
    })
}

/// A page of `table`'s feed after `after`: the rows of `select` (joined
/// to their episode as `e`) on episodes `caller` sees, narrowed by
/// `extra` (`AND ...`), where the next page starts, and whether more wait.
async fn visible_feed(
    db: &mut Client,
    caller: &Person,
    table: &'static str,
    select: &str,
    extra: &str,
    after: ChangeCursor,
) -> Result<(Vec<Row>, ChangeCursor, bool), ApiError> {
    let read = crate::changes::begin(db).await?;
    let (clauses, args) = conditions(caller, &Query::default());
    let page = read
        .page(
            table,
            select,
            &format!("{clauses}{extra}"),
            args,
            after,
            CHANGES_PAGE,
        )
        .await?;
    let (next, more) = crate::changes::next(after, &[&page]);
    Ok((page.rows, next, more))
}

/// Whole episodes (steps, expert profile, reviews), oldest first: what an
/// export is made of.
pub(crate) async fn bundles(
    db: &Client,
    caller: &Person,
    q: &Query,
) -> Result<Vec<EpisodeBundle>, ApiError> {
    bundles_of(db, caller, q, None).await
}

/// [`bundles`] of the episodes among `ids` that `caller` sees (an id the
/// hub lacks, or another expert's, is left out).
pub(crate) async fn bundles_by_id(
    db: &Client,
    caller: &Person,
    ids: &[String],
) -> Result<Vec<EpisodeBundle>, ApiError> {
    bundles_of(db, caller, &Query::default(), Some(ids)).await
}

async fn bundles_of(
    db: &Client,
    caller: &Person,
    q: &Query,
    only: Option<&[String]>,
) -> Result<Vec<EpisodeBundle>, ApiError> {
    let (mut clauses, mut args) = conditions(caller, q);
    if let Some(ids) = only {
        args.push(Box::new(ids.to_vec()));
        clauses.push_str(&format!(" AND e.id = ANY(${})", args.len()));
    }
    let sql = format!("SELECT {EPISODE_COLUMNS} FROM episodes e{clauses} {ORDER}");
    let records = db
        .query(&sql, &params(&args))
        .await?
        .iter()
        .map(record)
        .collect::<Result<Vec<_>, _>>()?;
    let ids: Vec<String> = records.iter().map(|r| r.id.clone()).collect();
    let mut steps: HashMap<String, Vec<StepRecord>> = HashMap::new();
    for r in db
        .query(
            "SELECT * FROM steps WHERE episode_id = ANY($1) ORDER BY episode_id, idx",
            &[&ids],
        )
        .await?
    {
        steps
            .entry(r.get("episode_id"))
            .or_default()
            .push(step(&r)?);
    }
    let mut reviews: HashMap<String, Vec<Review>> = HashMap::new();
    for r in db
        .query(
            "SELECT * FROM reviews WHERE episode_id = ANY($1) ORDER BY id",
            &[&ids],
        )
        .await?
    {
        let rv = review(&r);
        reviews.entry(rv.episode_id.clone()).or_default().push(rv);
    }
    let expert_ids: Vec<String> = records
        .iter()
        .filter_map(|r| match &r.actor {
            Actor::Expert { id } => Some(id.clone()),
            Actor::Agent { .. } => None,
        })
        .collect();
    let experts: HashMap<String, Expert> = db
        .query(
            "SELECT id, name, domain, credentials, credentials_attested, verified, created_at, updated_at FROM expert_profiles WHERE id = ANY($1)",
            &[&expert_ids],
        )
        .await?
        .iter()
        .map(|r| {
            let x = Expert {
                id: r.get(0),
                name: r.get(1),
                domain: r.get(2),
                credentials: r.get(3),
                credentials_attested: r.get(4),
                verified: r.get(5),
                created_at: r.get(6),
                updated_at: r.get(7),
            };
            (x.id.clone(), x)
        })
        .collect();
    Ok(records
        .into_iter()
        .map(|record| {
            let expert = match &record.actor {
                Actor::Expert { id } => experts.get(id).cloned(),
                Actor::Agent { .. } => None,
            };
            EpisodeBundle {
                expert,
                reviews: reviews.remove(&record.id).unwrap_or_default(),
                trajectory: Trajectory {
                    steps: steps.remove(&record.id).unwrap_or_default(),
                    record,
                },
            }
        })
        .collect())
}

/// Reviews of the episodes `caller` may see, with row id above `after`,
/// oldest first: what an app pulls to show its expert the verdicts.
pub(crate) async fn reviews(
    db: &Client,
    caller: &Person,
    after: i64,
) -> Result<Vec<Review>, ApiError> {
    let rows = if caller.role.reads_all() {
        db.query(
            "SELECT r.* FROM reviews r WHERE r.id > $1 ORDER BY r.id",
            &[&after],
        )
        .await?
    } else {
        db.query(
            "SELECT r.* FROM reviews r JOIN episodes e ON e.id = r.episode_id WHERE r.id > $1 AND e.owner = $2 ORDER BY r.id",
            &[&after, &caller.id],
        )
        .await?
    };
    Ok(rows.iter().map(review).collect())
}

/// The decisions on episodes `caller` sees that were made after `after`,
/// in commit order (the reviews feed).
pub(crate) async fn review_changes(
    db: &mut Client,
    caller: &Person,
    after: ChangeCursor,
) -> Result<ReviewChanges, ApiError> {
    let (rows, next, more) = visible_feed(
        db,
        caller,
        "reviews",
        "SELECT g.* FROM reviews g JOIN episodes e ON e.id = g.episode_id",
        "",
        after,
    )
    .await?;
    Ok(ReviewChanges {
        reviews: rows.iter().map(review).collect(),
        next,
        more,
    })
}

/// Approves or rejects a submitted episode, as the local store does: only
/// a submitted episode, once (a decision is final), and a rejection needs
/// its comment. In one transaction with the episode's status.
pub(crate) async fn add_review(
    db: &mut Client,
    caller: &Person,
    episode_id: &str,
    req: &ReviewRequest,
) -> Result<Review, ApiError> {
    if !caller.role.reviews() {
        return Err(caller.refused("only reviewers and admins approve or reject episodes"));
    }
    if req.decision == Decision::Reject && req.comment.trim().is_empty() {
        return Err(ApiError::bad_request(format!(
            "rejecting episode {episode_id} needs a comment: it goes back to its expert, who needs to know what to fix"
        )));
    }
    let tx = db.transaction().await?;
    let status: String = tx
        .query_opt(
            "SELECT status FROM episodes WHERE id = $1 FOR UPDATE",
            &[&episode_id],
        )
        .await?
        .ok_or_else(|| ApiError::not_found(format!("the hub has no episode {episode_id}")))?
        .get(0);
    // After the episode's row lock, so a retry racing its first send
    // finds the stored review.
    if let Some(stored) = replayed(&tx, caller, episode_id, req).await? {
        return Ok(stored);
    }
    match status.as_str() {
        "submitted" => {}
        "approved" | "rejected" => {
            let by = tx
                .query_opt(
                    "SELECT reviewer, at FROM reviews WHERE episode_id = $1 ORDER BY id DESC LIMIT 1",
                    &[&episode_id],
                )
                .await?
                .map(|r| format!(" by {} at {}", r.get::<_, String>(0), r.get::<_, String>(1)))
                .unwrap_or_default();
            return Err(ApiError::conflict(format!(
                "episode {episode_id} was already {status}{by}; a decision is final"
            )));
        }
        other => {
            return Err(ApiError::conflict(format!(
                "episode {episode_id} is {}; only a submitted episode can be reviewed",
                other.replace('_', " ")
            )))
        }
    }
    let at = understudy::store::now();
    let id: i64 = tx
        .query_one(
            "INSERT INTO reviews (episode_id, reviewer, decision, comment, at, changed_by, request_id) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
            &[&episode_id, &caller.name, &req.decision.as_str(), &req.comment, &at, &caller.id, &req.request_id],
        )
        .await?
        .get(0);
    let new_status = match req.decision {
        Decision::Approve => "approved",
        Decision::Reject => "rejected",
    };
    tx.execute(
        "UPDATE episodes SET status = $2, updated_at = $3, changed_by = $4, changed_at = now() WHERE id = $1",
        &[&episode_id, &new_status, &at, &caller.id],
    )
    .await?;
    tx.commit().await?;
    Ok(Review {
        id,
        episode_id: episode_id.to_string(),
        reviewer: caller.name.clone(),
        decision: req.decision,
        comment: req.comment.clone(),
        at,
    })
}

/// The review a request id already stored: a resent decision (its first
/// answer was lost) answers that review instead of a second one. The id
/// reused for another episode, decision or person is refused.
async fn replayed(
    tx: &tokio_postgres::Transaction<'_>,
    caller: &Person,
    episode_id: &str,
    req: &ReviewRequest,
) -> Result<Option<Review>, ApiError> {
    let Some(request_id) = &req.request_id else {
        return Ok(None);
    };
    if request_id.trim().is_empty() || request_id.len() > 200 {
        return Err(ApiError::bad_request(
            "request_id: expected a non-empty id of at most 200 characters, or none",
        ));
    }
    let Some(row) = tx
        .query_opt(
            "SELECT *, changed_by AS by_id FROM reviews WHERE request_id = $1",
            &[request_id],
        )
        .await?
    else {
        return Ok(None);
    };
    let stored = review(&row);
    let by: Option<i64> = row.get("by_id");
    if stored.episode_id != episode_id || stored.decision != req.decision || by != Some(caller.id) {
        return Err(ApiError::conflict(format!(
            "request_id {request_id} already named another decision (on episode {}); send a new id for a new decision",
            stored.episode_id
        )));
    }
    Ok(Some(stored))
}
