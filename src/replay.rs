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

use serde::Serialize;
use serde_json::Value;

use crate::action::Action;
use crate::episode::{Changes, Episode};
use crate::error::{Error, Result};
use crate::observation::Observation;
use crate::ordered::ordered_parallel;
use crate::trajectory::{actions_from_json, input_line, ActionList, StepRecord, Trajectory};
use crate::world::World;

/// One output line.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReplayOutput {
    /// The input line's `task_index`, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_index: Option<Value>,
    /// The input line's `task_id`, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Each action's observation text, in order.
    pub observations: Vec<String>,
    /// The state diff against the seed after the last action.
    pub changes: Changes,
}

/// Parses a JSONL document of action lists. Any bad line rejects the whole
/// input, naming the line, so no partial output is ever written.
pub fn parse_input(text: &str, source: &str) -> Result<Vec<ActionList>> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match parse_input_line(line, i + 1) {
            Ok(Some(input)) => out.push(input),
            Ok(None) => {}
            Err(e) => problems.push(format!("{source}:{}: {e}", i + 1)),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(Error::InvalidAction(problems.join("\n")))
    }
}

/// The fields of an input line replay reads.
const LINE_FIELDS: &[&str] = &["task_index", "task_id", "actions"];

/// Parses line number `line` (1-based) of an input: `None` when it is
/// blank, else the action list (run from seed 0) or why it is not one. For
/// reading a large input a line at a time (see [`replay_each`]).
pub fn parse_input_line(
    text: &str,
    line: usize,
) -> std::result::Result<Option<ActionList>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value = input_line(text, LINE_FIELDS)?;
    let obj = value
        .as_object()
        .ok_or("expected a JSON object with an `actions` list")?;
    let actions = obj
        .get("actions")
        .and_then(Value::as_array)
        .ok_or("expected an `actions` list")?;
    let actions = actions_from_json(actions)?;
    let task_id = obj
        .get("task_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Some(ActionList {
        line: Some(line),
        episode_id: None,
        task_index: obj.get("task_index").cloned(),
        task_id,
        seed: 0,
        actions,
    }))
}

/// Replays one action list on `episode` from a fresh reset with `seed`.
pub(crate) fn replay_one(
    episode: &mut Episode,
    task_id: &str,
    seed: u64,
    actions: &[Action],
) -> Result<(Vec<String>, Changes)> {
    episode.set_enforce_limits(false);
    episode.reset(task_id, seed)?;
    let mut observations = Vec::with_capacity(actions.len());
    for action in actions {
        observations.push(episode.step(action)?.observation.text);
    }
    Ok((observations, episode.changes()?))
}

/// Replays every input in parallel and returns the outputs in input order.
/// `progress` is called once per finished line. Holds every output: for
/// large batches, stream them with [`replay_each`].
pub fn replay_all(
    world: &Arc<World>,
    inputs: &[ActionList],
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<ReplayOutput>> {
    let mut outputs = Vec::with_capacity(inputs.len());
    replay_each(
        world,
        inputs.iter().cloned().map(Ok),
        progress,
        &mut |out| {
            outputs.push(out);
            Ok(())
        },
    )?;
    Ok(outputs)
}

/// How many outputs may wait for an earlier, slower line per worker: the
/// reorder buffer holds at most this many times the worker count, so memory
/// stays flat however long the batch is.
const REORDER_WINDOW_PER_WORKER: usize = 16;

/// Replays every input on every core and hands each output to `sink` in
/// input order, as soon as it and every line before it are done. Inputs are
/// pulled from `inputs` as workers free up, so neither the inputs nor the
/// outputs of a batch are ever all in memory: at most a small window of
/// them (see `REORDER_WINDOW_PER_WORKER`). Returns how many lines were
/// replayed.
///
/// Each worker keeps one episode for all its lines, reset between them (the
/// reset reverts only the rows the last line touched, and prepared
/// statements stay warm), instead of copying the seed for every line.
///
/// The first failure (a bad input, a failed replay, a failing `sink`) stops
/// the batch: no later line is handed to `sink`, lines before it have been.
pub fn replay_each<I>(
    world: &Arc<World>,
    inputs: I,
    progress: &(dyn Fn() + Sync),
    sink: &mut dyn FnMut(ReplayOutput) -> Result<()>,
) -> Result<usize>
where
    I: Iterator<Item = Result<ActionList>> + Send,
{
    let workers = rayon::current_num_threads().max(1);
    ordered_parallel(
        inputs,
        workers,
        workers * REORDER_WINDOW_PER_WORKER,
        || Episode::new(Arc::clone(world)),
        |episode, input| {
            let task = input.task(world)?;
            let (observations, changes) = replay_one(episode, task, input.seed, &input.actions)
                .map_err(|e| input.at_line(e))?;
            progress();
            Ok(ReplayOutput {
                task_index: input.task_index,
                task_id: input.task_id,
                observations,
                changes,
            })
        },
        sink,
    )
}

/// Where a stored trajectory stopped matching its recording.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Divergence {
    /// The step's index in the episode's raw log (as stored).
    pub step: u32,
    /// Its position among the kept (non-retracted) steps, from 0.
    pub position: usize,
    /// The recorded action that was replayed.
    pub action: Action,
    /// The observation recorded then.
    pub expected: Observation,
    /// The observation the world gives now.
    pub actual: Observation,
    /// What else differs, e.g. "terminated: recorded false, replayed true".
    pub other: Vec<String>,
    /// The replayed world's state diff against the seed, after this step.
    pub changes: Changes,
}

/// The outcome of replaying one stored episode.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StoredReplay {
    /// The replayed episode's id.
    pub episode_id: String,
    /// Its world's id.
    pub world_id: String,
    /// Its task's id.
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
    episode.set_expert(record.actor.is_expert());
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

/// The world as it stood after the first `upto` kept steps of a stored
/// trajectory, rebuilt on a fresh episode: what a reviewer stepping
/// through a recording sees at each point, where [`Episode::changes`]
/// gives the state diff so far. `upto` counts kept steps (undone ones are
/// not part of the run); 0 is the seeded world, the kept step count the
/// final state. Limits are not enforced, as in [`replay_stored`], and a
/// changed world is refused unless `force` (see
/// [`crate::recorder::check_world`]).
pub fn replay_prefix(
    world: &Arc<World>,
    trajectory: &Trajectory,
    upto: usize,
    force: bool,
) -> Result<Episode> {
    let record = &trajectory.record;
    crate::recorder::check_world(record, world, force)?;
    let kept = trajectory.kept_steps().count();
    if upto > kept {
        return Err(Error::Other(format!(
            "episode {} has {kept} kept step(s), so the state after step {upto} does not exist (`upto` must be 0 to {kept})",
            record.id
        )));
    }
    let mut episode = Episode::new(Arc::clone(world))?;
    episode.set_enforce_limits(false);
    episode.set_expert(record.actor.is_expert());
    episode.reset(&record.task_id, record.seed)?;
    for step in trajectory.kept_steps().take(upto) {
        episode.step(&step.action)?;
    }
    Ok(episode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Items finish out of order (later ones faster), yet reach the sink in
    /// order, and no worker runs further ahead than the window allows.
    #[test]
    fn ordered_parallel_keeps_input_order_within_the_window() {
        let ahead = AtomicUsize::new(0);
        let emitted = AtomicUsize::new(0);
        let mut seen = Vec::new();
        let n = ordered_parallel(
            (0..200usize).map(Ok),
            4,
            8,
            || Ok(()),
            |_, i| {
                let gap = i.saturating_sub(emitted.load(Ordering::SeqCst));
                ahead.fetch_max(gap, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_micros(
                    ((200 - i) % 7) as u64 * 50,
                ));
                Ok(i * 10)
            },
            &mut |v| {
                seen.push(v);
                emitted.store(seen.len(), Ordering::SeqCst);
                Ok(())
            },
        )
        .expect("all items map");
        assert_eq!(n, 200);
        assert_eq!(seen, (0..200).map(|i| i * 10).collect::<Vec<_>>());
        assert!(
            ahead.load(Ordering::SeqCst) < 8,
            "a worker ran past the window"
        );
    }

    /// The first failure in input order is returned, nothing after it is
    /// emitted, and everything before it was.
    #[test]
    fn ordered_parallel_stops_at_the_first_failure() {
        let mut seen = Vec::new();
        let err = ordered_parallel(
            (0..100usize).map(|i| {
                if i == 60 {
                    Err(Error::Other("bad line 60".into()))
                } else {
                    Ok(i)
                }
            }),
            3,
            6,
            || Ok(()),
            |_, i| {
                if i == 40 {
                    Err(Error::Other("line 40 failed".into()))
                } else {
                    Ok(i)
                }
            },
            &mut |v| {
                seen.push(v);
                Ok(())
            },
        )
        .expect_err("line 40 fails");
        assert!(err.to_string().contains("line 40 failed"), "{err}");
        assert_eq!(seen, (0..40).collect::<Vec<_>>());

        // A failing sink stops the batch too.
        let mut calls = 0;
        let err = ordered_parallel(
            (0..50usize).map(Ok),
            2,
            4,
            || Ok(()),
            |_, i| Ok(i),
            &mut |_| {
                calls += 1;
                if calls == 5 {
                    Err(Error::Other("disk full".into()))
                } else {
                    Ok(())
                }
            },
        )
        .expect_err("the sink fails");
        assert!(err.to_string().contains("disk full"), "{err}");
        assert_eq!(calls, 5);
    }

    /// A worker whose state cannot be made fails the line it took.
    #[test]
    fn ordered_parallel_reports_a_failed_init() {
        let err = ordered_parallel(
            (0..10usize).map(Ok),
            2,
            4,
            || Err::<(), _>(Error::Other("no episode".into())),
            |_, i| Ok(i),
            &mut |_| Ok(()),
        )
        .expect_err("init fails");
        assert!(err.to_string().contains("no episode"), "{err}");
    }

    /// The state after k kept steps: undone steps are skipped, 0 is the
    /// seed, the last is the final state, and past the end is an error
    /// naming the parameter.
    #[test]
    fn replay_prefix_rebuilds_the_state_after_k_kept_steps() {
        use crate::recorder::Recorder;
        use crate::store::{Actor, Store};
        use serde_json::json;

        let dir = tempfile::tempdir().unwrap();
        let world = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/worlds/mini");
        let world = Arc::new(World::load(world).expect("the mini world loads"));
        let store = Arc::new(Store::open(dir.path().join("store.sqlite")).unwrap());
        let actor = Actor::Expert { id: "e1".into() };
        let mut rec = Recorder::start(store, Arc::clone(&world), "pay-back", actor, 0).unwrap();
        let transfer = |amount: f64| {
            Action::tool(
                "transfer",
                json!({"from_id": "A-1", "to_id": "A-2", "amount": amount}),
            )
        };
        rec.step(transfer(90.0), None).unwrap();
        rec.undo().unwrap();
        rec.step(
            Action::tool("view_accounts", json!({"search": "ada"})),
            None,
        )
        .unwrap();
        rec.step(transfer(25.0), None).unwrap();
        rec.step(Action::message("Done."), None).unwrap();
        let trajectory = rec.trajectory().clone();

        let balance = |k: usize| {
            let ep = replay_prefix(&world, &trajectory, k, false).unwrap();
            let rows = ep
                .query(
                    "SELECT balance FROM accounts WHERE id = 'A-1'",
                    &serde_json::Map::new(),
                )
                .unwrap();
            (rows[0]["balance"].clone(), ep.changes().unwrap())
        };
        let (seeded, none) = balance(0);
        assert_eq!(seeded, json!(100.0));
        assert!(none.is_empty(), "{none:?}");
        let (looked, still_none) = balance(1);
        assert_eq!(looked, json!(100.0), "the undone 90 is not replayed");
        assert!(still_none.is_empty());
        let (paid, changes) = balance(2);
        assert_eq!(paid, json!(75.0));
        assert!(
            changes["accounts"].changed.contains_key("A-1"),
            "{changes:?}"
        );
        assert!(changes.contains_key("transfers"));
        let (last, _) = balance(3);
        assert_eq!(last, json!(75.0));

        let Err(err) = replay_prefix(&world, &trajectory, 4, false) else {
            panic!("there is no fourth kept step");
        };
        let text = err.to_string();
        assert!(
            text.contains("3 kept step(s)") && text.contains("`upto` must be 0 to 3"),
            "{text}"
        );
    }
}
