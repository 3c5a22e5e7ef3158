//! The native episodes format, `understudy.episode/1`: one JSON object per
//! line with everything the store holds about an episode.
//!
//! The schema is spelled out here with its own types rather than by
//! serializing the store's records, so that a field added to the store
//! cannot silently change a versioned file format. Reading is strict
//! (unknown fields are errors): a typo in a hand-made file must not vanish.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::EpisodeBundle;
use crate::action::Action;
use crate::error::{Error, Result};
use crate::observation::Observation;
use crate::store::{Actor, Decision, EpisodeRecord, EpisodeStatus, Expert, Review, StepRecord};
use crate::trajectory::Trajectory;

/// The `format` value of every line.
pub(crate) const FORMAT: &str = "understudy.episode/1";

#[derive(Serialize)]
struct LineOut<'a> {
    format: &'static str,
    episode: HeaderOut<'a>,
    expert: Option<ExpertOut<'a>>,
    steps: Vec<StepOut<'a>>,
    reviews: Vec<ReviewOut<'a>>,
}

#[derive(Serialize)]
struct HeaderOut<'a> {
    id: &'a str,
    world_id: &'a str,
    world_version: &'a str,
    world_hash: &'a str,
    task_id: &'a str,
    seed: u64,
    actor: &'a Actor,
    status: &'static str,
    created_at: &'a str,
    updated_at: &'a str,
    submitted_at: Option<&'a str>,
    active_ms: i64,
    final_message: Option<&'a str>,
}

#[derive(Serialize)]
struct ExpertOut<'a> {
    id: &'a str,
    name: &'a str,
    domain: &'a str,
    credentials: &'a str,
    credentials_attested: bool,
    verified: bool,
    created_at: &'a str,
    updated_at: &'a str,
}

#[derive(Serialize)]
struct StepOut<'a> {
    idx: u32,
    action: &'a Action,
    observation: &'a Observation,
    is_error: bool,
    terminated: bool,
    truncated: bool,
    wall_at: &'a str,
    active_ms: i64,
    rationale: Option<&'a str>,
    flag: Option<&'a str>,
    retracted: bool,
    retracted_at: Option<&'a str>,
}

#[derive(Serialize)]
struct ReviewOut<'a> {
    reviewer: &'a str,
    decision: &'static str,
    comment: &'a str,
    at: &'a str,
}

/// Appends one episode's line (without the newline) to `out`; returns the
/// number of steps written.
pub(crate) fn write_line(b: &EpisodeBundle, out: &mut Vec<u8>) -> Result<usize> {
    let r = &b.record;
    let line = LineOut {
        format: FORMAT,
        episode: HeaderOut {
            id: &r.id,
            world_id: &r.world_id,
            world_version: &r.world_version,
            world_hash: &r.world_hash,
            task_id: &r.task_id,
            seed: r.seed,
            actor: &r.actor,
            status: r.status.as_str(),
            created_at: &r.created_at,
            updated_at: &r.updated_at,
            submitted_at: r.submitted_at.as_deref(),
            active_ms: r.active_ms,
            final_message: r.final_message.as_deref(),
        },
        expert: b.expert.as_ref().map(|x| ExpertOut {
            id: &x.id,
            name: &x.name,
            domain: &x.domain,
            credentials: &x.credentials,
            credentials_attested: x.credentials_attested,
            verified: x.verified,
            created_at: &x.created_at,
            updated_at: &x.updated_at,
        }),
        steps: b
            .steps
            .iter()
            .map(|s| StepOut {
                idx: s.idx,
                action: &s.action,
                observation: &s.observation,
                is_error: !s.observation.ok,
                terminated: s.terminated,
                truncated: s.truncated,
                wall_at: &s.wall_at,
                active_ms: s.active_ms,
                rationale: s.rationale.as_deref(),
                flag: s.flag.as_deref(),
                retracted: s.retracted,
                retracted_at: s.retracted_at.as_deref(),
            })
            .collect(),
        reviews: b
            .reviews
            .iter()
            .map(|v| ReviewOut {
                reviewer: &v.reviewer,
                decision: v.decision.as_str(),
                comment: &v.comment,
                at: &v.at,
            })
            .collect(),
    };
    serde_json::to_writer(&mut *out, &line)
        .map_err(|e| Error::Other(format!("encoding episode {}: {e}", r.id)))?;
    Ok(b.steps.len())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineIn {
    #[allow(dead_code)]
    format: String,
    episode: HeaderIn,
    #[serde(default)]
    expert: Option<ExpertIn>,
    steps: Vec<StepIn>,
    #[serde(default)]
    reviews: Vec<ReviewIn>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderIn {
    id: String,
    world_id: String,
    world_version: String,
    world_hash: String,
    task_id: String,
    #[serde(default)]
    seed: u64,
    actor: Value,
    status: String,
    created_at: String,
    updated_at: String,
    submitted_at: Option<String>,
    #[serde(default)]
    active_ms: i64,
    final_message: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpertIn {
    id: String,
    name: String,
    #[serde(default)]
    domain: String,
    #[serde(default)]
    credentials: String,
    #[serde(default)]
    credentials_attested: bool,
    #[serde(default)]
    verified: bool,
    created_at: String,
    updated_at: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepIn {
    idx: u32,
    action: Value,
    observation: Value,
    is_error: Option<bool>,
    #[serde(default)]
    terminated: bool,
    #[serde(default)]
    truncated: bool,
    wall_at: String,
    #[serde(default)]
    active_ms: i64,
    rationale: Option<String>,
    flag: Option<String>,
    #[serde(default)]
    retracted: bool,
    retracted_at: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewIn {
    reviewer: String,
    decision: String,
    #[serde(default)]
    comment: String,
    at: String,
}

/// One parsed line of a native file.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedEpisode {
    /// 1-based line number in the file.
    pub line: usize,
    /// The episode, checked against the schema and the format's rules (not
    /// yet against worlds or a store).
    pub bundle: EpisodeBundle,
}

/// Reads a native JSONL document. Every line is checked and every problem
/// is reported (as `line N: ...`); any problem rejects the whole document,
/// so a caller never acts on part of a file. Checks: JSON, the format
/// version, the schema, timestamps, actions, observations, contiguous step
/// indexes, status and decision values, and episode ids unique in the file.
/// Worlds and tasks are checked by the caller, which knows where they are.
pub fn parse(text: &str, source: &str) -> Result<Vec<ParsedEpisode>> {
    let (out, problems) = parse_all(text);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(Error::InvalidInput {
            path: source.to_string(),
            problems: problems.into_iter().map(|(_, p)| p).collect(),
        })
    }
}

/// Like [`parse`], but returns the lines that parsed alongside the problems
/// (as `(line, message)`), so a caller can add its own checks of the good
/// lines and report everything at once.
pub fn parse_all(text: &str) -> (Vec<ParsedEpisode>, Vec<(usize, String)>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        match parse_line(raw) {
            Ok(bundle) => {
                if !seen.insert(bundle.record.id.clone()) {
                    problems.push((
                        line,
                        format!(
                            "line {line}: episode id {} appears more than once in the file",
                            bundle.record.id
                        ),
                    ));
                }
                out.push(ParsedEpisode { line, bundle });
            }
            Err(list) => problems.extend(
                list.into_iter()
                    .map(|p| (line, format!("line {line}: {p}"))),
            ),
        }
    }
    (out, problems)
}

fn parse_line(raw: &str) -> std::result::Result<EpisodeBundle, Vec<String>> {
    let value: Value =
        serde_json::from_str(raw).map_err(|e| vec![format!("not valid JSON: {e}")])?;
    let Some(obj) = value.as_object() else {
        return Err(vec![format!(
            "expected a JSON object with \"format\": \"{FORMAT}\""
        )]);
    };
    match obj.get("format") {
        Some(Value::String(f)) if f == FORMAT => {}
        Some(Value::String(f)) => {
            return Err(vec![format!(
                "format `{f}` is not supported; this build reads `{FORMAT}` (an episode exported by `understudy export --format native`)"
            )])
        }
        Some(_) => return Err(vec![format!("`format` must be the text \"{FORMAT}\"")]),
        None => {
            return Err(vec![format!(
                "missing `format`; expected \"{FORMAT}\" (is this a native episodes file from `understudy export --format native`?)"
            )])
        }
    }
    let line: LineIn = serde_json::from_value(value)
        .map_err(|e| vec![format!("does not match the {FORMAT} schema: {e}")])?;
    let mut problems = Vec::new();
    let h = line.episode;
    for (field, v) in [
        ("episode.id", &h.id),
        ("episode.world_id", &h.world_id),
        ("episode.task_id", &h.task_id),
    ] {
        if v.trim().is_empty() {
            problems.push(format!("{field} is empty"));
        }
    }
    let status = EpisodeStatus::parse(&h.status);
    if status.is_none() {
        problems.push(format!(
            "episode.status `{}` is not a status; expected one of {}",
            h.status,
            super::STATUSES.join(", ")
        ));
    }
    let actor = parse_actor(&h.actor).map_err(|e| format!("episode.actor: {e}"));
    if let Err(e) = &actor {
        problems.push(e.clone());
    }
    check_time(&mut problems, "episode.created_at", Some(&h.created_at));
    check_time(&mut problems, "episode.updated_at", Some(&h.updated_at));
    check_time(
        &mut problems,
        "episode.submitted_at",
        h.submitted_at.as_deref(),
    );
    if h.active_ms < 0 {
        problems.push("episode.active_ms is negative".into());
    }
    let expert = line.expert.map(|x| {
        check_time(&mut problems, "expert.created_at", Some(&x.created_at));
        check_time(&mut problems, "expert.updated_at", Some(&x.updated_at));
        Expert {
            id: x.id,
            name: x.name,
            domain: x.domain,
            credentials: x.credentials,
            credentials_attested: x.credentials_attested,
            verified: x.verified,
            created_at: x.created_at,
            updated_at: x.updated_at,
        }
    });
    match (&actor, &expert) {
        (Ok(Actor::Expert { id }), Some(x)) if &x.id != id => {
            problems.push(format!(
                "expert.id `{}` is not the episode's actor `{id}`",
                x.id
            ));
        }
        (Ok(Actor::Agent { .. }), Some(_)) => {
            problems.push("an agent's episode has no expert profile; `expert` must be null".into())
        }
        _ => {}
    }
    let mut steps = Vec::with_capacity(line.steps.len());
    for (i, s) in line.steps.into_iter().enumerate() {
        let at = format!("steps[{i}]");
        if s.idx as usize != i {
            problems.push(format!(
                "{at}.idx is {}; step indexes must run 0, 1, 2, … in order without gaps",
                s.idx
            ));
        }
        let action =
            Action::from_json(&s.action).map_err(|e| problems.push(format!("{at}.action: {e}")));
        let observation = serde_json::from_value::<Observation>(s.observation).map_err(|e| {
            problems.push(format!(
                "{at}.observation: expected {{\"ok\", \"text\", \"content\"?, \"error\"?}}: {e}"
            ))
        });
        if let (Ok(o), Some(flag)) = (&observation, s.is_error) {
            if flag == o.ok {
                problems.push(format!(
                    "{at}.is_error is {flag} but observation.ok is {}",
                    o.ok
                ));
            }
        }
        check_time(&mut problems, &format!("{at}.wall_at"), Some(&s.wall_at));
        check_time(
            &mut problems,
            &format!("{at}.retracted_at"),
            s.retracted_at.as_deref(),
        );
        if let (Ok(action), Ok(observation)) = (action, observation) {
            steps.push(StepRecord {
                idx: s.idx,
                action,
                observation,
                terminated: s.terminated,
                truncated: s.truncated,
                wall_at: s.wall_at,
                active_ms: s.active_ms,
                rationale: s.rationale,
                flag: s.flag,
                retracted: s.retracted,
                retracted_at: s.retracted_at,
            });
        }
    }
    let mut reviews = Vec::with_capacity(line.reviews.len());
    for (i, v) in line.reviews.into_iter().enumerate() {
        let decision = match v.decision.as_str() {
            "approve" => Some(Decision::Approve),
            "reject" => Some(Decision::Reject),
            other => {
                problems.push(format!(
                    "reviews[{i}].decision `{other}` is not a decision; expected approve or reject"
                ));
                None
            }
        };
        check_time(&mut problems, &format!("reviews[{i}].at"), Some(&v.at));
        if let Some(decision) = decision {
            reviews.push(Review {
                id: 0,
                episode_id: h.id.clone(),
                reviewer: v.reviewer,
                decision,
                comment: v.comment,
                at: v.at,
            });
        }
    }
    match (problems.is_empty(), status, actor) {
        (true, Some(status), Ok(actor)) => Ok(EpisodeBundle {
            trajectory: Trajectory {
                record: EpisodeRecord {
                    id: h.id,
                    world_id: h.world_id,
                    world_version: h.world_version,
                    world_hash: h.world_hash,
                    task_id: h.task_id,
                    seed: h.seed,
                    actor,
                    status,
                    created_at: h.created_at,
                    updated_at: h.updated_at,
                    submitted_at: h.submitted_at,
                    active_ms: h.active_ms,
                    final_message: h.final_message,
                },
                steps,
            },
            expert,
            reviews,
        }),
        _ => Err(problems),
    }
}

fn parse_actor(v: &Value) -> std::result::Result<Actor, String> {
    let text = |key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
    };
    match v.get("kind").and_then(Value::as_str) {
        Some("expert") => text("id")
            .map(|id| Actor::Expert { id })
            .ok_or_else(|| "an expert actor needs a non-empty `id`".to_string()),
        Some("agent") => text("model")
            .map(|model| Actor::Agent { model })
            .ok_or_else(|| "an agent actor needs a non-empty `model`".to_string()),
        _ => Err(
            "expected {\"kind\": \"expert\", \"id\": ..} or {\"kind\": \"agent\", \"model\": ..}"
                .into(),
        ),
    }
}

fn check_time(problems: &mut Vec<String>, field: &str, value: Option<&str>) {
    if let Some(v) = value {
        if chrono::DateTime::parse_from_rfc3339(v).is_err() {
            problems.push(format!(
                "{field}: `{v}` is not an RFC 3339 time such as 2025-03-04T09:00:00.000Z"
            ));
        }
    }
}
