//! Rubric versions, judgments, overrides and scores on the hub: graders
//! push what they computed or decided against a local copy, everyone reads
//! them back within what their role sees (an expert: their own episodes'
//! grades), a grader's app pulls the others' into its store, and an
//! export's reward column comes from the latest score.
//!
//! A judgment, override or score is stored once: it is identified by the SHA-256 of
//! everything it says, so a retried push adds nothing twice. A batch is one
//! transaction, refused whole when any row is wrong.

use std::collections::HashSet;

use sha2::{Digest, Sha256};
use tokio_postgres::{Client, Row};
use understudy::store::{JudgmentRecord, OverrideRecord, RubricVersion, ScoreRecord, StoredScore};

use crate::episodes::{self, Query};
use crate::error::ApiError;
use crate::people::Person;
use crate::wire::{
    ChangeCursor, EpisodeJudgment, EpisodeOverride, GradesAfter, GradesBatch, GradesSummary,
    GradingChanges, NewGrades, Numbered, RubricQuery, RubricUpload, RunsGrading, CHANGES_PAGE,
    GRADES_PAGE,
};
use crate::{changes, graders};

fn sha256_of(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    hex::encode(h.finalize())
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Checks a batch without the database: each row says what the store
/// would require of it.
fn check(batch: &GradesBatch) -> Result<(), ApiError> {
    for (n, s) in batch.scores.iter().enumerate() {
        let r = &s.record;
        let at = |field: &str| format!("scores[{n}].record.{field}");
        if r.episode_id.as_deref().is_none_or(|e| e.trim().is_empty()) {
            return Err(ApiError::bad_request(format!(
                "{}: a score must name the episode it scored",
                at("episode_id")
            )));
        }
        if let Some(v) = r.value {
            if !(0.0..=1.0).contains(&v) {
                return Err(ApiError::bad_request(format!(
                    "{}: {v} is outside 0..1",
                    at("value")
                )));
            }
        }
        let ordered = r.range[0].partial_cmp(&r.range[1]);
        if !matches!(
            ordered,
            Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
        ) {
            return Err(ApiError::bad_request(format!(
                "{}: the low end {} is above the high end {}",
                at("range"),
                r.range[0],
                r.range[1]
            )));
        }
        for (field, value) in [
            ("task_id", &r.task_id),
            ("world_id", &r.world_id),
            ("world_hash", &r.world_hash),
            ("rubric_hash", &r.rubric_hash),
        ] {
            if value.trim().is_empty() {
                return Err(ApiError::bad_request(format!(
                    "{}: must not be empty",
                    at(field)
                )));
            }
        }
        if serde_json::from_str::<serde_json::Value>(&r.detail).is_err() {
            return Err(ApiError::bad_request(format!(
                "{}: expected the score's result as JSON text",
                at("detail")
            )));
        }
    }
    for (n, j) in batch.judgments.iter().enumerate() {
        let at = |field: &str| format!("judgments[{n}].{field}");
        if j.episode_id.trim().is_empty() {
            return Err(ApiError::bad_request(format!(
                "{}: must not be empty",
                at("episode_id")
            )));
        }
        for (field, value) in [
            ("judgment.criterion_id", &j.judgment.criterion_id),
            ("judgment.reason", &j.judgment.reason),
            ("judgment.judge", &j.judgment.judge),
        ] {
            if value.trim().is_empty() {
                return Err(ApiError::bad_request(format!(
                    "{}: must not be empty (a judgment says what was graded, why, and who graded)",
                    at(field)
                )));
            }
        }
        if j.judgment
            .level
            .as_deref()
            .is_some_and(|l| l.trim().is_empty())
        {
            return Err(ApiError::bad_request(format!(
                "{}: an empty level; give the label of the scale level chosen, or no level for a met / not met grade",
                at("judgment.level")
            )));
        }
    }
    for (n, o) in batch.overrides.iter().enumerate() {
        let at = |field: &str| format!("overrides[{n}].{field}");
        for (field, value) in [
            ("episode_id", &o.episode_id),
            ("override.criterion_id", &o.record.criterion_id),
            ("override.reason", &o.record.reason),
            ("override.grader", &o.record.grader),
        ] {
            if value.trim().is_empty() {
                return Err(ApiError::bad_request(format!(
                    "{}: must not be empty (an override says which check, why it is wrong, and who says so)",
                    at(field)
                )));
            }
        }
    }
    Ok(())
}

/// Stores `batch` for `caller` in one transaction.
pub(crate) async fn push(
    db: &mut Client,
    caller: &Person,
    batch: &GradesBatch,
) -> Result<GradesSummary, ApiError> {
    if !caller.role.grades() {
        return Err(caller.refused(
            "experts do not grade episodes (annotators, reviewers, engineers and admins do)",
        ));
    }
    check(batch)?;
    graders::check(&batch.assignments)?;
    let tx = db.transaction().await?;
    // Every episode named must be on the hub, and the score must be of
    // that episode's task.
    let ids: Vec<String> = batch
        .scores
        .iter()
        .filter_map(|s| s.record.episode_id.clone())
        .chain(batch.judgments.iter().map(|j| j.episode_id.clone()))
        .chain(batch.overrides.iter().map(|o| o.episode_id.clone()))
        .chain(batch.assignments.iter().map(|a| a.episode_id.clone()))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let known: std::collections::HashMap<String, (String, String)> = tx
        .query(
            "SELECT id, world_id, task_id FROM episodes WHERE id = ANY($1)",
            &[&ids],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2))))
        .collect();
    let missing = |id: &str| {
        ApiError::not_found(format!(
            "the hub has no episode {id}: push the episode before its grades; nothing was stored"
        ))
    };
    let mut summary = GradesSummary {
        scores: batch.scores.len(),
        judgments: batch.judgments.len(),
        overrides: batch.overrides.len(),
        assignments: batch.assignments.len(),
        ..GradesSummary::default()
    };
    let now = understudy::store::now();
    for s in &batch.scores {
        let r = &s.record;
        let episode = r.episode_id.as_deref().unwrap_or_default();
        let (world_id, task_id) = known.get(episode).ok_or_else(|| missing(episode))?;
        if (world_id, task_id) != (&r.world_id, &r.task_id) {
            return Err(ApiError::bad_request(format!(
                "a score of episode {episode} names task `{}` of world `{}`, but the episode is of task `{task_id}` of world `{world_id}`; nothing was stored",
                r.task_id, r.world_id
            )));
        }
        let scored_at = if s.scored_at.trim().is_empty() {
            now.clone()
        } else {
            s.scored_at.clone()
        };
        let pending = i32::try_from(r.pending).map_err(|_| {
            ApiError::bad_request(format!(
                "a score of episode {episode}: `pending` {} is not a count of criteria",
                r.pending
            ))
        })?;
        let content = serde_json::to_string(r).unwrap_or_default();
        let sha = sha256_of(&[&content, &scored_at]);
        summary.scores_added += tx
            .execute(
                "INSERT INTO scores (episode_id, task_id, world_id, world_version, world_hash, task_hash, rubric_version, rubric_hash, value, range_low, range_high, pending, detail, scored_at, content_sha256, changed_by)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT (episode_id, content_sha256) DO NOTHING",
                &[&episode, &r.task_id, &r.world_id, &r.world_version, &r.world_hash, &r.task_hash, &r.rubric_version, &r.rubric_hash, &r.value, &r.range[0], &r.range[1], &pending, &r.detail, &scored_at, &sha, &caller.id],
            )
            .await? as usize;
    }
    for j in &batch.judgments {
        if !known.contains_key(&j.episode_id) {
            return Err(missing(&j.episode_id));
        }
        let g = &j.judgment;
        let at = if g.at.trim().is_empty() {
            now.clone()
        } else {
            g.at.clone()
        };
        let content = serde_json::to_string(&JudgmentRecord {
            at: at.clone(),
            ..g.clone()
        })
        .unwrap_or_default();
        let sha = sha256_of(&[&j.episode_id, &content]);
        // The level is kept as given (the store keeps it so), so a pull
        // brings back the very judgment the grader's store holds.
        summary.judgments_added += tx
            .execute(
                "INSERT INTO judgments (episode_id, criterion_id, criterion_hash, met, reason, judge, at, level, content_sha256, changed_by)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (episode_id, content_sha256) DO NOTHING",
                &[&j.episode_id, &g.criterion_id, &g.criterion_hash, &g.met, &g.reason.trim(), &g.judge.trim(), &at, &g.level, &sha, &caller.id],
            )
            .await? as usize;
    }
    for o in &batch.overrides {
        if !known.contains_key(&o.episode_id) {
            return Err(missing(&o.episode_id));
        }
        let r = &o.record;
        let record = OverrideRecord {
            reason: r.reason.trim().to_string(),
            grader: r.grader.trim().to_string(),
            at: if r.at.trim().is_empty() {
                now.clone()
            } else {
                r.at.clone()
            },
            ..r.clone()
        };
        let content = serde_json::to_string(&record).unwrap_or_default();
        let sha = sha256_of(&[&o.episode_id, &content]);
        summary.overrides_added += tx
            .execute(
                "INSERT INTO overrides (episode_id, criterion_id, criterion_hash, original_met, met, reason, grader, at, content_sha256, changed_by)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (episode_id, content_sha256) DO NOTHING",
                &[&o.episode_id, &record.criterion_id, &record.criterion_hash, &record.original_met, &record.met, &record.reason, &record.grader, &record.at, &sha, &caller.id],
            )
            .await? as usize;
    }
    if let Some(a) = batch
        .assignments
        .iter()
        .find(|a| !known.contains_key(&a.episode_id))
    {
        return Err(missing(&a.episode_id));
    }
    summary.assignments_changed = graders::store(&tx, caller, &batch.assignments).await?;
    tx.commit().await?;
    Ok(summary)
}

fn score(r: &Row) -> StoredScore {
    let pending: i32 = r.get("pending");
    StoredScore {
        id: r.get("id"),
        scored_at: r.get("scored_at"),
        record: ScoreRecord {
            episode_id: Some(r.get("episode_id")),
            task_id: r.get("task_id"),
            world_id: r.get("world_id"),
            world_version: r.get("world_version"),
            world_hash: r.get("world_hash"),
            task_hash: r.get("task_hash"),
            rubric_version: r.get("rubric_version"),
            rubric_hash: r.get("rubric_hash"),
            value: r.get("value"),
            range: [r.get("range_low"), r.get("range_high")],
            pending: usize::try_from(pending).unwrap_or_default(),
            detail: r.get("detail"),
        },
    }
}

/// Scores of the episodes `q` selects as `caller` sees them, in the order
/// the hub received them (the last of an episode's is its current score).
pub(crate) async fn scores(
    db: &Client,
    caller: &Person,
    q: &Query,
) -> Result<Vec<StoredScore>, ApiError> {
    let (clauses, args) = episodes::conditions(caller, q);
    let sql = format!(
        "SELECT s.* FROM scores s JOIN episodes e ON e.id = s.episode_id{clauses} ORDER BY s.id"
    );
    Ok(db
        .query(&sql, &episodes::params(&args))
        .await?
        .iter()
        .map(score)
        .collect())
}

/// Judgments of the episodes `q` selects as `caller` sees them, oldest
/// first (a criterion's latest judgment is the one that counts).
pub(crate) async fn judgments(
    db: &Client,
    caller: &Person,
    q: &Query,
) -> Result<Vec<EpisodeJudgment>, ApiError> {
    let (clauses, args) = episodes::conditions(caller, q);
    let sql = format!(
        "SELECT j.* FROM judgments j JOIN episodes e ON e.id = j.episode_id{clauses} ORDER BY j.id"
    );
    Ok(db
        .query(&sql, &episodes::params(&args))
        .await?
        .iter()
        .map(judgment)
        .collect())
}

fn judgment(r: &Row) -> EpisodeJudgment {
    EpisodeJudgment {
        episode_id: r.get("episode_id"),
        judgment: JudgmentRecord {
            criterion_id: r.get("criterion_id"),
            criterion_hash: r.get("criterion_hash"),
            met: r.get("met"),
            reason: r.get("reason"),
            judge: r.get("judge"),
            at: r.get("at"),
            level: r.get("level"),
        },
    }
}

fn override_of(r: &Row) -> EpisodeOverride {
    EpisodeOverride {
        episode_id: r.get("episode_id"),
        record: OverrideRecord {
            criterion_id: r.get("criterion_id"),
            criterion_hash: r.get("criterion_hash"),
            original_met: r.get("original_met"),
            met: r.get("met"),
            reason: r.get("reason"),
            grader: r.get("grader"),
            at: r.get("at"),
        },
    }
}

/// Overrides of the episodes `q` selects as `caller` sees them, oldest
/// first (a grader's latest override of a criterion is their verdict).
pub(crate) async fn overrides(
    db: &Client,
    caller: &Person,
    q: &Query,
) -> Result<Vec<EpisodeOverride>, ApiError> {
    let (clauses, args) = episodes::conditions(caller, q);
    let sql = format!(
        "SELECT o.* FROM overrides o JOIN episodes e ON e.id = o.episode_id{clauses} ORDER BY o.id"
    );
    Ok(db
        .query(&sql, &episodes::params(&args))
        .await?
        .iter()
        .map(override_of)
        .collect())
}

/// The judgments and overrides stored after the row ids `after` names, of
/// the episodes `caller` sees, oldest first, a page of each at most.
pub(crate) async fn after(
    db: &Client,
    caller: &Person,
    after: &GradesAfter,
) -> Result<NewGrades, ApiError> {
    let judgments = rows_after(db, caller, "judgments", after.judgments_after)
        .await?
        .iter()
        .map(|r| Numbered {
            id: r.get("id"),
            grade: judgment(r),
        })
        .collect();
    let overrides = rows_after(db, caller, "overrides", after.overrides_after)
        .await?
        .iter()
        .map(|r| Numbered {
            id: r.get("id"),
            grade: override_of(r),
        })
        .collect();
    Ok(NewGrades {
        judgments,
        overrides,
    })
}

/// Rows of `table` (judgments or overrides) with an id above `from`, of
/// the episodes `caller` sees, oldest first, a page at most.
async fn rows_after(
    db: &Client,
    caller: &Person,
    table: &'static str,
    from: i64,
) -> Result<Vec<Row>, ApiError> {
    let (clauses, mut args) = episodes::conditions(caller, &Query::default());
    args.push(Box::new(from));
    args.push(Box::new(GRADES_PAGE as i64));
    let sql = format!(
        "SELECT g.* FROM {table} g JOIN episodes e ON e.id = g.episode_id{clauses} AND g.id > ${} ORDER BY g.id LIMIT ${}",
        args.len() - 1,
        args.len()
    );
    Ok(db.query(&sql, &episodes::params(&args)).await?)
}

/// The grading feed: assignments, judgments and overrides changed after
/// `after`, of the runs `caller` may pull, a page of each at most (see
/// [`changes`]). Grades of runs the caller may not pull (yet) are not
/// served, and the cursor passes them: a run that becomes pullable is
/// announced by the runs feed, and pulling it brings all its grading work
/// ([`of_runs`]). So nothing waits on a run that may never come, and
/// nothing is lost when it comes.
pub(crate) async fn changes(
    db: &mut Client,
    caller: &Person,
    after: ChangeCursor,
) -> Result<GradingChanges, ApiError> {
    let read = changes::begin(db).await?;
    let page = |table: &'static str, select: &'static str| {
        let (clauses, args) = episodes::conditions(caller, &Query::default());
        let clauses = format!("{clauses}{}", episodes::PULLABLE);
        let read = &read;
        async move {
            read.page(table, select, &clauses, args, after, CHANGES_PAGE)
                .await
        }
    };
    let assignments = page("grading_assignments", graders::FEED).await?;
    let judgments = page(
        "judgments",
        "SELECT g.* FROM judgments g JOIN episodes e ON e.id = g.episode_id",
    )
    .await?;
    let overrides = page(
        "overrides",
        "SELECT g.* FROM overrides g JOIN episodes e ON e.id = g.episode_id",
    )
    .await?;
    let (next, more) = changes::next(after, &[&assignments, &judgments, &overrides]);
    let kept = |p: &changes::Page| -> Vec<Row> {
        p.rows
            .iter()
            .filter(|r| changes::keep(r, next))
            .cloned()
            .collect()
    };
    Ok(GradingChanges {
        assignments: kept(&assignments).iter().map(graders::from_row).collect(),
        judgments: kept(&judgments).iter().map(judgment).collect(),
        overrides: kept(&overrides).iter().map(override_of).collect(),
        next,
        more,
    })
}

/// All the grading work of the runs among `ids` that `caller` may pull,
/// in the order it was committed (a criterion's latest grade last).
pub(crate) async fn of_runs(
    db: &Client,
    caller: &Person,
    ids: &[String],
) -> Result<RunsGrading, ApiError> {
    let of = |table: &'static str| {
        let (clauses, mut args) = episodes::conditions(caller, &Query::default());
        args.push(Box::new(ids.to_vec()));
        let sql = format!(
            "SELECT g.* FROM {table} g JOIN episodes e ON e.id = g.episode_id{clauses}{} AND g.episode_id = ANY(${}) ORDER BY g.change_seq",
            episodes::PULLABLE,
            args.len()
        );
        async move { db.query(&sql, &episodes::params(&args)).await }
    };
    Ok(RunsGrading {
        assignments: of("grading_assignments")
            .await?
            .iter()
            .map(graders::from_row)
            .collect(),
        judgments: of("judgments").await?.iter().map(judgment).collect(),
        overrides: of("overrides").await?.iter().map(override_of).collect(),
    })
}

const RUBRIC_COLUMNS: &str =
    "id, world_id, task_id, version, hash, path, content, saved_by, saved_at";

fn rubric(r: &Row) -> RubricVersion {
    RubricVersion {
        id: r.get(0),
        world_id: r.get(1),
        task_id: r.get(2),
        version: r.get(3),
        hash: r.get(4),
        path: r.get(5),
        content: r.get(6),
        saved_by: r.get(7),
        saved_at: r.get(8),
    }
}

/// Saves a rubric version; the same bytes (hash) of the same task again
/// answer the stored version.
pub(crate) async fn add_rubric(
    db: &Client,
    caller: &Person,
    up: &RubricUpload,
) -> Result<RubricVersion, ApiError> {
    if !caller.role.writes_rubrics() {
        return Err(caller.refused("only annotators, engineers and admins save rubrics"));
    }
    for (field, value) in [
        ("world_id", &up.world_id),
        ("task_id", &up.task_id),
        ("version", &up.version),
        ("content", &up.content),
    ] {
        if value.trim().is_empty() {
            return Err(ApiError::bad_request(format!("{field}: must not be empty")));
        }
    }
    if !is_sha256(&up.hash) {
        return Err(ApiError::bad_request(format!(
            "hash: `{}` is not a content hash (64 hexadecimal digits)",
            up.hash
        )));
    }
    let saved_at = if up.saved_at.trim().is_empty() {
        understudy::store::now()
    } else {
        up.saved_at.clone()
    };
    let inserted = db
        .query_opt(
            &format!("INSERT INTO rubric_versions (world_id, task_id, version, hash, path, content, saved_by, saved_at, changed_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (world_id, task_id, hash) DO NOTHING RETURNING {RUBRIC_COLUMNS}"),
            &[&up.world_id, &up.task_id, &up.version, &up.hash, &up.path, &up.content, &up.saved_by, &saved_at, &caller.id],
        )
        .await?;
    match inserted {
        Some(r) => Ok(rubric(&r)),
        None => Ok(rubric(
            &db.query_one(
                &format!("SELECT {RUBRIC_COLUMNS} FROM rubric_versions WHERE world_id = $1 AND task_id = $2 AND hash = $3"),
                &[&up.world_id, &up.task_id, &up.hash],
            )
            .await?,
        )),
    }
}

/// Rubric versions, newest first, of one world or task (or all): every
/// role reads them (experts see what they will be graded by).
pub(crate) async fn rubrics(db: &Client, q: &RubricQuery) -> Result<Vec<RubricVersion>, ApiError> {
    Ok(db
        .query(
            &format!("SELECT {RUBRIC_COLUMNS} FROM rubric_versions WHERE ($1::text IS NULL OR world_id = $1) AND ($2::text IS NULL OR task_id = $2) ORDER BY id DESC"),
            &[&q.world, &q.task],
        )
        .await?
        .iter()
        .map(rubric)
        .collect())
}
