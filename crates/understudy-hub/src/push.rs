//! The server's side of a push: a batch of episodes and their steps, stored
//! in one transaction, idempotent by episode id and step index.
//!
//! What a step cannot change once recorded (action, observation, its end
//! flags and times) is kept with its SHA-256: the same step pushed again is
//! a no-op, one with other content under the same id is refused and the
//! whole batch with it. What may change later locally, an episode's status
//! and active time, a step's rationale, flag and undo, is updated; an undo
//! is never taken back, and a reviewed episode's header is the reviewer's.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};
use tokio_postgres::Client;
use understudy::store::{Actor, EpisodeRecord, EpisodeStatus, StepRecord};

use crate::error::{codes, ApiError};
use crate::people::Person;
use crate::wire::{PushBatch, PushEpisode, PushSummary};

/// A step as the store writes it: its JSON texts and the hash of what may
/// never change.
struct StepText {
    action: String,
    observation: String,
    content_sha256: String,
}

fn step_text(s: &StepRecord) -> Result<StepText, ApiError> {
    let json = |v: serde_json::Result<String>| {
        v.map_err(|e| ApiError::bad_request(format!("step {}: {e}", s.idx)))
    };
    let action = json(serde_json::to_string(&s.action))?;
    let observation = json(serde_json::to_string(&s.observation))?;
    let mut h = Sha256::new();
    for part in [
        action.as_str(),
        observation.as_str(),
        if s.terminated { "1" } else { "0" },
        if s.truncated { "1" } else { "0" },
        s.wall_at.as_str(),
        &s.active_ms.to_string(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    Ok(StepText {
        action,
        observation,
        content_sha256: hex::encode(h.finalize()),
    })
}

/// Checks what needs no database: ids present, steps in order.
fn check_shape(batch: &PushBatch) -> Result<(), ApiError> {
    let mut seen = HashSet::new();
    for (n, e) in batch.episodes.iter().enumerate() {
        let id = &e.record.id;
        if id.trim().is_empty() {
            return Err(ApiError::bad_request(format!(
                "episodes[{n}].record.id: must not be empty"
            )));
        }
        if !seen.insert(id.as_str()) {
            return Err(ApiError::bad_request(format!(
                "episode {id} is in the batch twice"
            )));
        }
        for (i, s) in e.steps.iter().enumerate() {
            if s.idx as usize != i {
                return Err(ApiError::bad_request(format!(
                    "episode {id}: steps[{i}] has idx {}; steps must be every step from 0, in order",
                    s.idx
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
    batch: &PushBatch,
) -> Result<PushSummary, ApiError> {
    if !caller.role.pushes() {
        return Err(caller.refused("only experts and admins push episodes"));
    }
    check_shape(batch)?;
    let tx = db.transaction().await?;
    check_worlds(&tx, &batch.episodes).await?;
    store_experts(&tx, caller, batch).await?;
    let mut summary = PushSummary {
        episodes: batch.episodes.len(),
        ..PushSummary::default()
    };
    for e in &batch.episodes {
        store_episode(&tx, caller, e, &mut summary).await?;
    }
    tx.commit().await?;
    Ok(summary)
}

/// Refuses the batch when any episode names a world the hub lacks.
async fn check_worlds(
    tx: &tokio_postgres::Transaction<'_>,
    episodes: &[PushEpisode],
) -> Result<(), ApiError> {
    let hashes: Vec<String> = episodes
        .iter()
        .map(|e| e.record.world_hash.clone())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let known: HashSet<String> = tx
        .query("SELECT hash FROM worlds WHERE hash = ANY($1)", &[&hashes])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let missing: Vec<&EpisodeRecord> = episodes
        .iter()
        .map(|e| &e.record)
        .filter(|r| !known.contains(&r.world_hash))
        .collect();
    if let Some(first) = missing.first() {
        return Err(ApiError::new(
            409,
            codes::UNKNOWN_WORLD,
            format!(
                "episode {} was recorded against world `{}` version {} (content hash {}), which this hub does not have{}; nothing was stored. Upload that exact world folder first (`understudy hub world add DIR`), or record against the world the hub assigns",
                first.id,
                first.world_id,
                first.world_version,
                first.world_hash,
                if missing.len() > 1 { format!(", and {} more episode(s) name unknown worlds", missing.len() - 1) } else { String::new() }
            ),
        ));
    }
    Ok(())
}

async fn store_experts(
    tx: &tokio_postgres::Transaction<'_>,
    caller: &Person,
    batch: &PushBatch,
) -> Result<(), ApiError> {
    let mut given = HashSet::new();
    for x in &batch.experts {
        let owner = tx
            .query_opt(
                "INSERT INTO expert_profiles (id, owner, name, domain, credentials, credentials_attested, verified, created_at, updated_at, changed_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $2)
                 ON CONFLICT (id) DO UPDATE SET name = excluded.name, domain = excluded.domain, credentials = excluded.credentials, credentials_attested = excluded.credentials_attested, verified = excluded.verified, created_at = excluded.created_at, updated_at = excluded.updated_at, changed_by = excluded.changed_by, changed_at = now()
                 WHERE expert_profiles.owner = excluded.owner RETURNING owner",
                &[&x.id, &caller.id, &x.name, &x.domain, &x.credentials, &x.credentials_attested, &x.verified, &x.created_at, &x.updated_at],
            )
            .await?;
        if owner.is_none() {
            return Err(ApiError::forbidden(format!(
                "expert profile {} was pushed by someone else; {} cannot change it",
                x.id, caller.login
            )));
        }
        given.insert(x.id.as_str());
    }
    for e in &batch.episodes {
        if let Actor::Expert { id } = &e.record.actor {
            if given.contains(id.as_str()) {
                continue;
            }
            let owner: Option<i64> = tx
                .query_opt("SELECT owner FROM expert_profiles WHERE id = $1", &[id])
                .await?
                .map(|r| r.get(0));
            match owner {
                Some(o) if o == caller.id => {}
                Some(_) => {
                    return Err(ApiError::forbidden(format!(
                        "episode {}: expert {id} belongs to someone else's pushes",
                        e.record.id
                    )))
                }
                None => {
                    return Err(ApiError::bad_request(format!(
                        "episode {}: the profile of its expert {id} is not in `experts` and the hub has none",
                        e.record.id
                    )))
                }
            }
        }
    }
    Ok(())
}

async fn store_episode(
    tx: &tokio_postgres::Transaction<'_>,
    caller: &Person,
    e: &PushEpisode,
    summary: &mut PushSummary,
) -> Result<(), ApiError> {
    let r = &e.record;
    let (kind, actor_id) = match &r.actor {
        Actor::Expert { id } => ("expert", id.as_str()),
        Actor::Agent { model } => ("agent", model.as_str()),
    };
    let seed = i64::try_from(r.seed).map_err(|_| {
        ApiError::bad_request(format!("episode {}: seed {} is too large", r.id, r.seed))
    })?;
    let added = tx
        .query_opt(
            "INSERT INTO episodes (id, owner, world_id, world_version, world_hash, task_id, seed, actor_kind, actor_id, status, created_at, updated_at, submitted_at, active_ms, final_message, digest, changed_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $2) ON CONFLICT (id) DO NOTHING RETURNING id",
            &[&r.id, &caller.id, &r.world_id, &r.world_version, &r.world_hash, &r.task_id, &seed, &kind, &actor_id, &r.status.as_str(), &r.created_at, &r.updated_at, &r.submitted_at, &r.active_ms, &r.final_message, &e.digest],
        )
        .await?
        .is_some();
    let mut existing: HashMap<u32, StoredStep> = HashMap::new();
    if added {
        summary.episodes_added += 1;
    } else {
        let row = tx
            .query_one(
                "SELECT owner, world_id, world_version, world_hash, task_id, seed, actor_kind, actor_id, created_at, status FROM episodes WHERE id = $1 FOR UPDATE",
                &[&r.id],
            )
            .await?;
        let owner: i64 = row.get("owner");
        if owner != caller.id {
            return Err(ApiError::forbidden(format!(
                "episode {} was pushed by someone else; {} cannot change it",
                r.id, caller.login
            )));
        }
        let fixed: [(&str, String, String); 8] = [
            ("world_id", row.get("world_id"), r.world_id.clone()),
            (
                "world_version",
                row.get("world_version"),
                r.world_version.clone(),
            ),
            ("world_hash", row.get("world_hash"), r.world_hash.clone()),
            ("task_id", row.get("task_id"), r.task_id.clone()),
            (
                "seed",
                row.get::<_, i64>("seed").to_string(),
                seed.to_string(),
            ),
            ("actor_kind", row.get("actor_kind"), kind.to_string()),
            ("actor_id", row.get("actor_id"), actor_id.to_string()),
            ("created_at", row.get("created_at"), r.created_at.clone()),
        ];
        if let Some((field, have, got)) = fixed.iter().find(|(_, have, got)| have != got) {
            return Err(ApiError::conflict(format!(
                "episode {}: `{field}` is `{got}` in this push but `{have}` on the hub; an episode's {field} never changes, so this is another episode under the same id; nothing was stored",
                r.id
            )));
        }
        let status: String = row.get("status");
        let reviewed = matches!(status.as_str(), "approved" | "rejected")
            && !matches!(r.status, EpisodeStatus::Approved | EpisodeStatus::Rejected);
        if reviewed {
            // The reviewer's decision stands; remember the digest so the
            // next sync skips this episode.
            tx.execute(
                "UPDATE episodes SET digest = $2 WHERE id = $1",
                &[&r.id, &e.digest],
            )
            .await?;
        } else {
            tx.execute(
                "UPDATE episodes SET status = $2, updated_at = $3, submitted_at = $4, active_ms = $5, final_message = $6, digest = $7, changed_by = $8, changed_at = now() WHERE id = $1",
                &[&r.id, &r.status.as_str(), &r.updated_at, &r.submitted_at, &r.active_ms, &r.final_message, &e.digest, &caller.id],
            )
            .await?;
        }
        for row in tx
            .query(
                "SELECT idx, content_sha256, rationale, flag, retracted, retracted_at FROM steps WHERE episode_id = $1",
                &[&r.id],
            )
            .await?
        {
            let idx: i32 = row.get("idx");
            existing.insert(
                idx as u32,
                StoredStep {
                    content_sha256: row.get("content_sha256"),
                    rationale: row.get("rationale"),
                    flag: row.get("flag"),
                    retracted: row.get("retracted"),
                    retracted_at: row.get("retracted_at"),
                },
            );
        }
    }
    let mut new = NewSteps::default();
    for s in &e.steps {
        let text = step_text(s)?;
        match existing.get(&s.idx) {
            None => new.add(s, text),
            Some(have) if have.content_sha256 != text.content_sha256 => {
                return Err(ApiError::new(
                    409,
                    codes::STEP_CONFLICT,
                    format!(
                        "step {} of episode {} differs from the one the hub stored under that id (its action, observation or times changed); a recorded step never changes, so nothing in this push was stored",
                        s.idx, r.id
                    ),
                ))
            }
            Some(have) if have.retracted && !s.retracted => {
                return Err(ApiError::new(
                    409,
                    codes::STEP_CONFLICT,
                    format!(
                        "step {} of episode {} was undone in an earlier push but is not undone in this one; an undo is never taken back, so nothing in this push was stored",
                        s.idx, r.id
                    ),
                ))
            }
            Some(have) => {
                if have.rationale != s.rationale || have.flag != s.flag || have.retracted != s.retracted || have.retracted_at != s.retracted_at {
                    tx.execute(
                        "UPDATE steps SET rationale = $3, flag = $4, retracted = $5, retracted_at = $6, changed_by = $7, changed_at = now() WHERE episode_id = $1 AND idx = $2",
                        &[&r.id, &(s.idx as i32), &s.rationale, &s.flag, &s.retracted, &s.retracted_at, &caller.id],
                    )
                    .await?;
                    summary.steps_updated += 1;
                }
            }
        }
    }
    summary.steps_added += new.insert(tx, &r.id, caller.id).await?;
    Ok(())
}

struct StoredStep {
    content_sha256: String,
    rationale: Option<String>,
    flag: Option<String>,
    retracted: bool,
    retracted_at: Option<String>,
}

/// Steps to insert, as columns: one `INSERT ... SELECT FROM unnest(...)`
/// per episode however many steps it has.
#[derive(Default)]
struct NewSteps {
    idx: Vec<i32>,
    content: Vec<String>,
    action: Vec<String>,
    observation: Vec<String>,
    is_error: Vec<bool>,
    terminated: Vec<bool>,
    truncated: Vec<bool>,
    wall_at: Vec<String>,
    active_ms: Vec<i64>,
    rationale: Vec<Option<String>>,
    flag: Vec<Option<String>>,
    retracted: Vec<bool>,
    retracted_at: Vec<Option<String>>,
}

impl NewSteps {
    fn add(&mut self, s: &StepRecord, text: StepText) {
        self.idx.push(s.idx as i32);
        self.content.push(text.content_sha256);
        self.action.push(text.action);
        self.observation.push(text.observation);
        self.is_error.push(!s.observation.ok);
        self.terminated.push(s.terminated);
        self.truncated.push(s.truncated);
        self.wall_at.push(s.wall_at.clone());
        self.active_ms.push(s.active_ms);
        self.rationale.push(s.rationale.clone());
        self.flag.push(s.flag.clone());
        self.retracted.push(s.retracted);
        self.retracted_at.push(s.retracted_at.clone());
    }

    async fn insert(
        &self,
        tx: &tokio_postgres::Transaction<'_>,
        episode: &str,
        by: i64,
    ) -> Result<usize, ApiError> {
        if self.idx.is_empty() {
            return Ok(0);
        }
        let n = tx
            .execute(
                "INSERT INTO steps (episode_id, idx, content_sha256, action, observation, is_error, terminated, truncated, wall_at, active_ms, rationale, flag, retracted, retracted_at, changed_by)
                 SELECT $1, * , $15 FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::bool[], $8::bool[], $9::text[], $10::bigint[], $11::text[], $12::text[], $13::bool[], $14::text[])",
                &[&episode, &self.idx, &self.content, &self.action, &self.observation, &self.is_error, &self.terminated, &self.truncated, &self.wall_at, &self.active_ms, &self.rationale, &self.flag, &self.retracted, &self.retracted_at, &by],
            )
            .await?;
        Ok(n as usize)
    }
}
