//! The client side of the hub, as blocking calls: what `understudy hub
//! push`, `review --hub`, `export --hub` and the desktop app use (an async
//! caller runs them on a blocking thread).
//!
//! A push is offline-first and safe to repeat: it asks the hub which
//! episodes it lacks or holds an older digest of, and sends only those, in
//! batches the hub stores one transaction each. A push cut off at any
//! point (the hub killed, the connection dropped, the app killed) is
//! finished by the next one, with nothing lost or stored twice.

use std::path::Path;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

use understudy::export::{native, trl::Reward, EpisodeBundle};
use understudy::store::{
    Actor, Decision, EpisodeFilter, Expert, Review, RubricVersion, Store, StoredScore,
};
use understudy::trajectory::Trajectory;

use crate::episodes::Query;
use crate::error::HubError;
use crate::people::{NewPerson, Person};
use crate::wire::*;

pub use crate::episodes::Query as EpisodeQuery;

/// A hub at `url`, called as the person `token` belongs to.
#[derive(Debug, Clone)]
pub struct Hub {
    url: String,
    token: String,
    http: reqwest::blocking::Client,
}

/// How a push is cut into batches.
#[derive(Debug, Clone, Copy)]
pub struct PushOptions {
    /// A batch holds whole episodes up to about this many steps (one
    /// longer episode goes alone).
    pub max_steps_per_batch: usize,
}

impl Default for PushOptions {
    fn default() -> Self {
        PushOptions {
            max_steps_per_batch: 2000,
        }
    }
}

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PushReport {
    /// Episodes recorded in the local store (pulled ones not counted).
    pub local_episodes: usize,
    /// Of those, the ones the hub lacked or held an older copy of.
    pub sent_episodes: usize,
    /// Batches sent (each one transaction on the hub).
    pub batches: usize,
    /// What the hub stored, summed over the batches.
    pub stored: PushSummary,
}

/// The digest a push sends with an episode: SHA-256 of its header, every
/// step and its expert's profile as JSON. The hub keeps it so the next push
/// skips episodes that have not changed since.
pub fn digest(t: &Trajectory, expert: Option<&Expert>) -> String {
    let mut h = Sha256::new();
    for part in [
        serde_json::to_vec(&t.record),
        serde_json::to_vec(&t.steps),
        serde_json::to_vec(&expert),
    ] {
        let bytes = part.unwrap_or_default();
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    hex::encode(h.finalize())
}

fn trim_url(url: &str) -> String {
    url.trim().trim_end_matches('/').to_string()
}

fn http_client() -> Result<reqwest::blocking::Client, HubError> {
    reqwest::blocking::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(300))
        .build()
        .map_err(|e| HubError::Transport {
            url: String::new(),
            message: e.to_string(),
        })
}

/// Signs in with a password; the answer's token opens a [`Hub`].
pub fn sign_in(url: &str, login: &str, password: &str) -> Result<Issued, HubError> {
    let hub = Hub {
        url: trim_url(url),
        token: String::new(),
        http: http_client()?,
    };
    hub.call(
        reqwest::Method::POST,
        "/v1/sessions",
        Some(&SignIn {
            login: login.to_string(),
            password: password.to_string(),
        }),
    )
}

impl Hub {
    /// A client for the hub at `url` (`http://host:port`), with a token.
    pub fn new(url: &str, token: &str) -> Result<Hub, HubError> {
        let url = trim_url(url);
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(HubError::Invalid(format!(
                "--hub: `{url}` is not a hub address; expected http://host:port or https://host"
            )));
        }
        if token.trim().is_empty() {
            return Err(HubError::Invalid(
                "--token: empty; give the token `understudy hub token` printed or sign-in returned"
                    .into(),
            ));
        }
        Ok(Hub {
            url,
            token: token.trim().to_string(),
            http: http_client()?,
        })
    }

    /// The hub's address, as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> Result<reqwest::blocking::Response, HubError> {
        let url = format!("{}{path}", self.url);
        let mut req = self.http.request(method, &url);
        if !self.token.is_empty() {
            req = req.bearer_auth(&self.token);
        }
        if let Some(body) = body {
            let bytes = serde_json::to_vec(body).map_err(|e| HubError::Invalid(e.to_string()))?;
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes);
        }
        let transport = |e: reqwest::Error| HubError::Transport {
            url: self.url.clone(),
            message: e.to_string(),
        };
        let resp = req.send().map_err(transport)?;
        if resp.status().is_success() {
            return Ok(resp);
        }
        let status = resp.status().as_u16();
        let text = resp.text().map_err(transport)?;
        #[derive(serde::Deserialize)]
        struct ErrorBody {
            code: String,
            message: String,
        }
        Err(match serde_json::from_str::<ErrorBody>(&text) {
            Ok(e) => HubError::Api {
                status,
                code: e.code,
                message: e.message,
            },
            Err(_) => HubError::Api {
                status,
                code: "http".into(),
                message: format!(
                    "HTTP {status}: {}",
                    text.chars().take(300).collect::<String>()
                ),
            },
        })
    }

    fn call<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> Result<T, HubError> {
        let resp = self.send(method, path, body)?;
        let url = self.url.clone();
        resp.json().map_err(|e| HubError::Transport {
            url,
            message: format!("reading the answer to {path}: {e}"),
        })
    }

    fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, HubError> {
        self.call(reqwest::Method::GET, path, None::<&()>)
    }

    fn post<T: DeserializeOwned>(&self, path: &str, body: &impl Serialize) -> Result<T, HubError> {
        self.call(reqwest::Method::POST, path, Some(body))
    }

    /// Who the token belongs to.
    pub fn me(&self) -> Result<Person, HubError> {
        self.get("/v1/me")
    }

    /// Adds a person (admins only).
    pub fn add_person(&self, new: &NewPerson) -> Result<Person, HubError> {
        self.post("/v1/people", new)
    }

    /// Issues a token for `login` (admins, or the person themselves).
    pub fn issue_token(&self, login: &str, label: &str) -> Result<Issued, HubError> {
        self.post(
            &format!("/v1/people/{login}/tokens"),
            &serde_json::json!({ "label": label }),
        )
    }

    /// A person's tokens (admins, or the person themselves).
    pub fn tokens(&self, login: &str) -> Result<Vec<TokenInfo>, HubError> {
        self.get(&format!("/v1/people/{}/tokens", percent(login)))
    }

    /// Revokes token `id` (admins: anyone's; others: their own).
    pub fn revoke_token(&self, id: i64) -> Result<TokenInfo, HubError> {
        self.post(&format!("/v1/tokens/{id}/revoke"), &serde_json::json!({}))
    }

    /// Revokes the token this client calls with: signing out.
    pub fn sign_out(&self) -> Result<TokenInfo, HubError> {
        self.post("/v1/sessions/current/revoke", &serde_json::json!({}))
    }

    /// Saves a rubric version (annotators, engineers, admins); the same
    /// bytes again answer the stored version.
    pub fn add_rubric(&self, up: &RubricUpload) -> Result<RubricVersion, HubError> {
        self.post("/v1/rubrics", up)
    }

    /// Rubric versions, newest first, of a world or task (or all).
    pub fn rubrics(&self, q: &RubricQuery) -> Result<Vec<RubricVersion>, HubError> {
        let mut parts = Vec::new();
        if let Some(w) = &q.world {
            parts.push(format!("world={}", percent(w)));
        }
        if let Some(t) = &q.task {
            parts.push(format!("task={}", percent(t)));
        }
        let query = if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        };
        self.get(&format!("/v1/rubrics{query}"))
    }

    /// Scores of the episodes the caller sees, in the order the hub
    /// received them.
    pub fn scores(&self, q: &Query) -> Result<Vec<StoredScore>, HubError> {
        self.get(&format!("/v1/scores{}", query_string(q)))
    }

    /// Judgments of the episodes the caller sees, oldest first.
    pub fn judgments(&self, q: &Query) -> Result<Vec<EpisodeJudgment>, HubError> {
        self.get(&format!("/v1/judgments{}", query_string(q)))
    }

    /// Overrides of automatic checks of the episodes the caller sees,
    /// oldest first.
    pub fn overrides(&self, q: &Query) -> Result<Vec<EpisodeOverride>, HubError> {
        self.get(&format!("/v1/overrides{}", query_string(q)))
    }

    /// Judgments and overrides stored after the row ids in `after`, of the
    /// episodes the caller sees (a page of each at most: [`GRADES_PAGE`]).
    pub fn grades_after(&self, after: &GradesAfter) -> Result<NewGrades, HubError> {
        self.get(&format!(
            "/v1/grades?judgments_after={}&overrides_after={}",
            after.judgments_after, after.overrides_after
        ))
    }

    /// Reviewers' decisions made after `after`, on episodes the caller
    /// sees, in commit order.
    pub fn review_changes(&self, after: &ChangeCursor) -> Result<ReviewChanges, HubError> {
        self.get(&format!("/v1/sync/reviews?seq={}", after.seq))
    }

    /// A page of the runs feed: the finished runs the caller may pull
    /// that changed after `after`.
    pub fn run_changes(&self, after: &ChangeCursor) -> Result<RunChanges, HubError> {
        self.get(&format!("/v1/sync/runs?seq={}", after.seq))
    }

    /// A page of the grading feed: graders' assignments changed after
    /// `after`, of the runs the caller may pull.
    pub fn grading_changes(&self, after: &ChangeCursor) -> Result<GradingChanges, HubError> {
        self.get(&format!("/v1/sync/grading?seq={}", after.seq))
    }

    /// All the grading work of the runs among `ids` the caller may pull
    /// ([`MAX_EXPORT_IDS`] at most).
    pub fn grading_of_runs(&self, ids: &[String]) -> Result<RunsGrading, HubError> {
        self.post("/v1/sync/grading/runs", &EpisodeIds { ids: ids.to_vec() })
    }

    /// Each episode's reward column: its latest score on the hub.
    pub fn rewards(&self, q: &Query) -> Result<HashMap<String, Reward>, HubError> {
        let mut latest: HashMap<String, Reward> = HashMap::new();
        for s in self.scores(q)? {
            if let Some(id) = &s.record.episode_id {
                latest.insert(id.clone(), understudy::export::reward_of(&s));
            }
        }
        Ok(latest)
    }

    /// Pushes every score, judgment and override of the episodes in
    /// `store` (annotators, reviewers, engineers, admins), in batches of
    /// about `options.max_steps_per_batch` rows. Safe to repeat: the hub
    /// stores each once. The episodes must be on the hub already.
    pub fn push_grades(
        &self,
        store: &Store,
        options: PushOptions,
    ) -> Result<GradesSummary, HubError> {
        let mut total = GradesSummary::default();
        let mut batch = GradesBatch::default();
        let rows = |b: &GradesBatch| {
            b.scores.len() + b.judgments.len() + b.overrides.len() + b.assignments.len()
        };
        let flush = |batch: &mut GradesBatch, total: &mut GradesSummary| -> Result<(), HubError> {
            if rows(batch) == 0 {
                return Ok(());
            }
            let s = self.push_grades_batch(batch)?;
            total.scores += s.scores;
            total.scores_added += s.scores_added;
            total.judgments += s.judgments;
            total.judgments_added += s.judgments_added;
            total.overrides += s.overrides;
            total.overrides_added += s.overrides_added;
            total.assignments += s.assignments;
            total.assignments_changed += s.assignments_changed;
            *batch = GradesBatch::default();
            Ok(())
        };
        for r in store.episodes(&EpisodeFilter::default())? {
            let one = crate::work::grades(store, &r.id)?;
            batch.scores.extend(one.scores);
            batch.judgments.extend(one.judgments);
            batch.overrides.extend(one.overrides);
            batch.assignments.extend(one.assignments);
            if rows(&batch) >= options.max_steps_per_batch {
                flush(&mut batch, &mut total)?;
            }
        }
        flush(&mut batch, &mut total)?;
        Ok(total)
    }

    /// Sends one batch of scores and judgments (one transaction).
    pub fn push_grades_batch(&self, batch: &GradesBatch) -> Result<GradesSummary, HubError> {
        self.post("/v1/sync/grades", batch)
    }

    /// Uploads the world folder at `dir` (engineers and admins). It is
    /// loaded here first, so a broken world is refused before it is sent,
    /// and the hub's hash must equal the one computed here.
    pub fn add_world(&self, dir: &Path) -> Result<WorldInfo, HubError> {
        let world = understudy::World::load(dir)?;
        let mut files = Vec::new();
        collect_files(dir, dir, &mut files)?;
        let info: WorldInfo = self.post("/v1/worlds", &WorldUpload { files })?;
        if info.hash != world.content_hash {
            return Err(HubError::Invalid(format!(
                "the hub stored {} with content hash {}, but it hashes to {} here",
                dir.display(),
                info.hash,
                world.content_hash
            )));
        }
        Ok(info)
    }

    /// The worlds the hub stores.
    pub fn worlds(&self) -> Result<Vec<WorldInfo>, HubError> {
        self.get("/v1/worlds")
    }

    /// Gives a task to experts (admins only).
    pub fn assign(&self, new: &NewAssignment) -> Result<Vec<Assignment>, HubError> {
        self.post("/v1/assignments", new)
    }

    /// The caller's assignments (an expert's queue).
    pub fn assignments(&self) -> Result<Vec<Assignment>, HubError> {
        self.get("/v1/assignments")
    }

    /// Reviews with a row id above `after`, of episodes the caller sees.
    pub fn reviews(&self, after: i64) -> Result<Vec<Review>, HubError> {
        self.get(&format!("/v1/reviews?after={after}"))
    }

    /// The episodes the caller sees, filtered.
    pub fn episodes(&self, q: &Query) -> Result<Vec<EpisodeRow>, HubError> {
        self.get(&format!("/v1/episodes{}", query_string(q)))
    }

    /// Approves or rejects a submitted episode (reviewers and admins).
    pub fn review(
        &self,
        episode: &str,
        decision: Decision,
        comment: &str,
    ) -> Result<Review, HubError> {
        self.review_request(
            episode,
            &ReviewRequest {
                decision,
                comment: comment.to_string(),
                request_id: None,
            },
        )
    }

    /// [`Hub::review`] with the sender's request id: safe to send again
    /// after a lost answer (the hub answers the stored review).
    pub fn review_request(&self, episode: &str, req: &ReviewRequest) -> Result<Review, HubError> {
        self.post(&format!("/v1/episodes/{}/reviews", percent(episode)), req)
    }

    /// Whole episodes for export, read from the hub's native lines into the
    /// engine's own types, so every export format is written by the same
    /// code as a local export.
    pub fn export_bundles(&self, q: &Query) -> Result<Vec<EpisodeBundle>, HubError> {
        let resp = self.send(
            reqwest::Method::GET,
            &format!("/v1/export{}", query_string(q)),
            None::<&()>,
        )?;
        self.bundles_in(resp)
    }

    /// The episodes among `ids` the caller sees, whole ([`MAX_EXPORT_IDS`]
    /// at most): what an app pulls, only the episodes it lacks.
    pub fn export_episodes(&self, ids: &[String]) -> Result<Vec<EpisodeBundle>, HubError> {
        let resp = self.send(
            reqwest::Method::POST,
            "/v1/export/episodes",
            Some(&EpisodeIds { ids: ids.to_vec() }),
        )?;
        self.bundles_in(resp)
    }

    fn bundles_in(
        &self,
        resp: reqwest::blocking::Response,
    ) -> Result<Vec<EpisodeBundle>, HubError> {
        let text = resp.text().map_err(|e| HubError::Transport {
            url: self.url.clone(),
            message: format!("reading the export: {e}"),
        })?;
        Ok(
            native::parse(&text, &format!("the export from {}", self.url))?
                .into_iter()
                .map(|p| p.bundle)
                .collect(),
        )
    }

    /// [`Hub::export_bundles`] and each episode's reward: what
    /// `Source::Scored` exports with the same rewards as a local store.
    pub fn export_scored(
        &self,
        q: &Query,
    ) -> Result<(Vec<EpisodeBundle>, HashMap<String, Reward>), HubError> {
        Ok((self.export_bundles(q)?, self.rewards(q)?))
    }

    /// Pushes every episode recorded in `store` that the hub lacks or holds
    /// an older copy of; episodes pulled from a hub are others' and never
    /// sent back. Safe to repeat after any failure.
    pub fn push(&self, store: &Store, options: PushOptions) -> Result<PushReport, HubError> {
        let records = recorded_here(store)?;
        let mut report = PushReport {
            local_episodes: records.len(),
            ..PushReport::default()
        };
        let mut digests = Vec::with_capacity(records.len());
        for r in &records {
            let (t, x) = load(store, &r.id)?;
            digests.push(EpisodeDigest {
                id: r.id.clone(),
                digest: digest(&t, x.as_ref()),
            });
        }
        let mut stale = Vec::new();
        for chunk in digests.chunks(5000) {
            let answer: Stale = self.post(
                "/v1/sync/state",
                &SyncState {
                    episodes: chunk.to_vec(),
                },
            )?;
            stale.extend(answer.stale);
        }
        report.sent_episodes = stale.len();
        let mut batch = PushBatch {
            experts: Vec::new(),
            episodes: Vec::new(),
        };
        let mut steps = 0;
        for id in &stale {
            let (t, x) = load(store, id)?;
            let n = t.steps.len();
            if !batch.episodes.is_empty() && steps + n > options.max_steps_per_batch {
                self.send_batch(&mut batch, &mut report)?;
                steps = 0;
            }
            let digest = digest(&t, x.as_ref());
            if let Some(x) = x {
                if !batch.experts.iter().any(|e| e.id == x.id) {
                    batch.experts.push(x);
                }
            }
            batch.episodes.push(PushEpisode {
                record: t.record,
                steps: t.steps,
                digest,
            });
            steps += n;
        }
        if !batch.episodes.is_empty() {
            self.send_batch(&mut batch, &mut report)?;
        }
        Ok(report)
    }

    fn send_batch(&self, batch: &mut PushBatch, report: &mut PushReport) -> Result<(), HubError> {
        let s: PushSummary = self.post("/v1/sync/push", batch)?;
        report.batches += 1;
        report.stored.episodes += s.episodes;
        report.stored.episodes_added += s.episodes_added;
        report.stored.steps_added += s.steps_added;
        report.stored.steps_updated += s.steps_updated;
        batch.experts.clear();
        batch.episodes.clear();
        Ok(())
    }
}

/// The episodes recorded in `store`: all but those pulled from a hub.
pub(crate) fn recorded_here(
    store: &Store,
) -> Result<Vec<understudy::store::EpisodeRecord>, HubError> {
    let pulled = store.pulled_episode_ids()?;
    Ok(store
        .episodes(&EpisodeFilter::default())?
        .into_iter()
        .filter(|r| !pulled.contains(&r.id))
        .collect())
}

/// An episode and its expert's profile (none for agents, or when the store
/// has no profile for the id).
pub(crate) fn load(store: &Store, id: &str) -> Result<(Trajectory, Option<Expert>), HubError> {
    let t = store.trajectory(id)?;
    let x = match &t.record.actor {
        Actor::Expert { id } => match store.expert(id) {
            Ok(x) => Some(x),
            Err(understudy::Error::NotFound(_)) => None,
            Err(e) => return Err(e.into()),
        },
        Actor::Agent { .. } => None,
    };
    Ok((t, x))
}

fn query_string(q: &Query) -> String {
    let mut parts = Vec::new();
    let mut add = |k: &str, v: &str| parts.push(format!("{k}={}", percent(v)));
    if let Some(v) = &q.world {
        add("world", v);
    }
    if let Some(v) = &q.task {
        add("task", v);
    }
    if let Some(v) = q.status {
        add("status", v.as_str());
    }
    if let Some(v) = &q.expert {
        add("expert", v);
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// Percent-encodes everything but unreserved characters.
fn percent(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Every regular file under `dir`, relative to `root`, hex-encoded.
fn collect_files(root: &Path, dir: &Path, out: &mut Vec<WorldFile>) -> Result<(), HubError> {
    let io = |what: String| move |e| HubError::Io { what, source: e };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io(format!("reading {}", dir.display())))?
        .collect::<Result<_, _>>()
        .map_err(io(format!("reading {}", dir.display())))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(io(format!("reading {}", path.display())))?;
        if kind.is_dir() {
            collect_files(root, &path, out)?;
        } else if kind.is_file() {
            let rel = path.strip_prefix(root).map_err(|_| {
                HubError::Invalid(format!("{} is outside {}", path.display(), root.display()))
            })?;
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let bytes = std::fs::read(&path).map_err(io(format!("reading {}", path.display())))?;
            out.push(WorldFile {
                path: rel,
                hex: hex::encode(bytes),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        let q = Query {
            world: Some("support desk".into()),
            task: Some("a&b=c".into()),
            status: Some(understudy::store::EpisodeStatus::Submitted),
            expert: None,
        };
        assert_eq!(
            query_string(&q),
            "?world=support%20desk&task=a%26b%3Dc&status=submitted"
        );
        assert_eq!(query_string(&Query::default()), "");
    }

    #[test]
    fn addresses_and_tokens_are_checked_before_any_call() {
        let e = Hub::new("hub.example:8600", "t").expect_err("no scheme");
        assert!(e.to_string().contains("expected http://host:port"), "{e}");
        let e = Hub::new("http://hub.example:8600/", " ").expect_err("no token");
        assert!(e.to_string().starts_with("--token"), "{e}");
        assert_eq!(
            Hub::new("http://h:1/", "t").expect("a client").url(),
            "http://h:1"
        );
    }
}
