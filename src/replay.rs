//! Replay, in two forms.
//!
//! **Batch replay of action lists**, the conformance and regression
//! workhorse: each input line is an action list (engine shape or τ-bench's
//! `{"actions": [{"name", "kwargs"}]}`); each output line holds the
//! observation texts and the final state diff. Lines are independent, so
//! they run in parallel on every core, one reusable episode per thread.
//!
//! **Replay of a stored trajectory** ([`replay_stored`]): the kept steps of
//! a recorded episode run again on a fresh episode, and every observation
//! is compared with the recorded one. This is how a world author learns
//! that a change to a tool altered what experts saw: the first divergence
//! is reported with both observations and the state so far.

use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use crate::action::Action;
use crate::episode::{Changes, Episode};
use crate::error::{Error, Result};
use crate::observation::Observation;
use crate::trajectory::{StepRecord, Trajectory};
use crate::world::World;

/// One parsed input line.
#[derive(Debug, Clone)]
pub struct ReplayInput {
    /// 1-based line number in the input file.
    pub line: usize,
    pub task_index: Option<Value>,
    pub task_id: Option<String>,
    pub actions: Vec<Action>,
}

/// One output line.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReplayOutput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_index: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub observations: Vec<String>,
    pub changes: Changes,
}

/// Parses a JSONL document of action lists. Any bad line rejects the whole
/// input, naming the line, so no partial output is ever written.
pub fn parse_input(text: &str, source: &str) -> Result<Vec<ReplayInput>> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line) {
            Ok((task_index, task_id, actions)) => out.push(ReplayInput {
                line: i + 1,
                task_index,
                task_id,
                actions,
            }),
            Err(e) => problems.push(format!("{source}:{}: {e}", i + 1)),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(Error::InvalidAction(problems.join("\n")))
    }
}

/// A parsed input line: task index, task id, actions.
type ParsedLine = (Option<Value>, Option<String>, Vec<Action>);

fn parse_line(line: &str) -> std::result::Result<ParsedLine, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not valid JSON: {e}"))?;
    let obj = value
        .as_object()
        .ok_or("expected a JSON object with an `actions` list")?;
    let actions = obj
        .get("actions")
        .and_then(Value::as_array)
        .ok_or("expected an `actions` list")?;
    let actions = actions
        .iter()
        .enumerate()
        .map(|(i, a)| Action::from_json(a).map_err(|e| format!("action {}: {e}", i + 1)))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let task_id = obj
        .get("task_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok((obj.get("task_index").cloned(), task_id, actions))
}

/// Replays one action list on `episode` from a fresh reset.
pub fn replay_one(
    episode: &mut Episode,
    task_id: &str,
    actions: &[Action],
) -> Result<(Vec<String>, Changes)> {
    episode.set_enforce_limits(false);
    episode.reset(task_id, 0)?;
    let mut observations = Vec::with_capacity(actions.len());
    for action in actions {
        observations.push(episode.step(action)?.observation.text);
    }
    Ok((observations, episode.changes()?))
}

/// Which task an input line runs as: its `task_id`, else the world's first.
fn task_for<'a>(world: &'a World, input: &'a ReplayInput) -> Result<&'a str> {
    match &input.task_id {
        Some(id) if world.task(id).is_some() => Ok(id),
        Some(id) => Err(Error::UnknownTask {
            world: world.meta.id.clone(),
            task: id.clone(),
        }),
        None => world
            .tasks
            .keys()
            .next()
            .map(String::as_str)
            .ok_or_else(|| {
                Error::Other(format!(
                    "world `{}` has no task to replay against",
                    world.meta.id
                ))
            }),
    }
}

/// Replays every input in parallel, preserving input order in the output.
/// `progress` is called once per finished line.
///
/// Inputs go to the threads in a few contiguous chunks, each replayed on
/// one episode: an episode is worth reusing (its prepared statements stay
/// warm), and rayon's `map_init` would build a new one for every split of
/// the work, which is many more.
pub fn replay_all(
    world: &Arc<World>,
    inputs: &[ReplayInput],
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<ReplayOutput>> {
    let threads = rayon::current_num_threads().max(1);
    let chunk = inputs.len().div_ceil(threads * 4).max(1);
    let chunks: Vec<Vec<ReplayOutput>> = inputs
        .par_chunks(chunk)
        .map(|chunk| {
            let mut episode = Episode::new(Arc::clone(world))?;
            chunk
                .iter()
                .map(|input| {
                    let task = task_for(world, input)?;
                    let (observations, changes) = replay_one(&mut episode, task, &input.actions)
                        .map_err(|e| Error::Other(format!("line {}: {e}", input.line)))?;
                    progress();
                    Ok(ReplayOutput {
                        task_index: input.task_index.clone(),
                        task_id: input.task_id.clone(),
                        observations,
                        changes,
                    })
                })
                .collect()
        })
        .collect::<Result<_>>()?;
    Ok(chunks.into_iter().flatten().collect())
}

/// Where a stored trajectory stopped matching its recording.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Divergence {
    /// The step's index in the episode's raw log (as stored).
    pub step: u32,
    /// Its position among the kept (non-retracted) steps, from 0.
    pub position: usize,
    pub action: Action,
    pub expected: Observation,
    pub actual: Observation,
    /// What else differs, e.g. "terminated: recorded false, replayed true".
    pub other: Vec<String>,
    /// The replayed world's state diff against the seed, after this step.
    pub changes: Changes,
}

/// The outcome of replaying one stored episode.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StoredReplay {
    pub episode_id: String,
    pub world_id: String,
    pub task_id: String,
    /// The world's content differs from the recording's (replay was forced).
    pub world_changed: bool,
    /// Kept steps in the recording.
    pub kept_steps: usize,
    /// Steps replayed, up to and including a divergence.
    pub replayed_steps: usize,
    /// `None` when every observation matched.
    pub divergence: Option<Divergence>,
}

/// Re-executes the kept steps of a recorded episode on a fresh episode and
/// compares each observation (and the terminated/truncated flags) with the
/// recorded ones, stopping at the first difference. A world whose content
/// changed since recording is refused unless `force` (see
/// [`crate::recorder::check_world`]). Limits are not enforced, as in batch
/// replay: if a changed world ends the episode early, that shows up as a
/// divergence rather than an error.
pub fn replay_stored(
    world: &Arc<World>,
    trajectory: &Trajectory,
    force: bool,
) -> Result<StoredReplay> {
    let record = &trajectory.record;
    crate::recorder::check_world(record, world, force)?;
    let mut episode = Episode::new(Arc::clone(world))?;
    episode.set_enforce_limits(false);
    episode.reset(&record.task_id, record.seed)?;
    let kept: Vec<&StepRecord> = trajectory.kept_steps().collect();
    let mut out = StoredReplay {
        episode_id: record.id.clone(),
        world_id: record.world_id.clone(),
        task_id: record.task_id.clone(),
        world_changed: record.world_hash != world.content_hash,
        kept_steps: kept.len(),
        replayed_steps: 0,
        divergence: None,
    };
    for (position, step) in kept.into_iter().enumerate() {
        let got = episode.step(&step.action)?;
        out.replayed_steps += 1;
        let mut other = Vec::new();
        if got.terminated != step.terminated {
            other.push(format!(
                "terminated: recorded {}, replayed {}",
                step.terminated, got.terminated
            ));
        }
        if got.truncated != step.truncated {
            other.push(format!(
                "truncated: recorded {}, replayed {}",
                step.truncated, got.truncated
            ));
        }
        if got.observation != step.observation || !other.is_empty() {
            out.divergence = Some(Divergence {
                step: step.idx,
                position,
                action: step.action.clone(),
                expected: step.observation.clone(),
                actual: got.observation,
                other,
                changes: episode.changes()?,
            });
            break;
        }
    }
    Ok(out)
}
