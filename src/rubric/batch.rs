//! Batch scoring: many trajectories replayed and scored on every core, and
//! a summary engineers can put in a paper (mean with a bootstrap interval,
//! per-criterion pass rates, pass^k).
//!
//! Inputs are action lists, never states: each trajectory is replayed from
//! the task's seeded world, so a submitter cannot claim a state its actions
//! do not produce. Accepted lines:
//! - a native episode export (`steps: [{action, retracted}]` with the
//!   episode's `task_id`, `seed`, `id`);
//! - `{"task_id": .., "actions": [..], "seed"?: n}`;
//! - τ-bench's `{"task_index": n, "actions": [{"name", "kwargs"}]}`, with a
//!   task prefix mapping index n to task `<prefix>n`.

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use super::judge::{self, JudgeCommand};
use super::judgment::Judgment;
use super::{replay, score_episode_with, CriterionKind, RubricSet, Score};
use crate::action::Action;
use crate::episode::Episode;
use crate::error::{Error, Result};
use crate::store::{EpisodeFilter, Store};
use crate::trajectory::{actions_from_json, input_line, ActionList};
use crate::world::World;

/// One run to score: an action list from a JSONL line or a stored
/// episode's kept steps, with the grades judged criteria already have.
#[derive(Debug, Clone)]
pub struct RunToScore {
    /// What to replay. Its task exists in the world when it came from
    /// [`parse_jsonl`] or [`from_store`]; with no task named, the world's
    /// first task is scored.
    pub run: ActionList,
    /// Grades already given to judged criteria.
    pub judgments: Vec<Judgment>,
    /// An expert recorded it, so it is replayed as theirs: the views shown
    /// to the expert only answer as they did when it was recorded.
    pub expert: bool,
}

/// Parses a JSONL file of trajectories. Any bad line rejects the whole
/// input, and every bad line is listed.
pub fn parse_jsonl(
    text: &str,
    source: &str,
    world: &World,
    task_prefix: Option<&str>,
) -> Result<Vec<RunToScore>> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line, world, task_prefix) {
            Ok(mut t) => {
                t.run.line = Some(i + 1);
                out.push(t);
            }
            Err(e) => problems.push(format!("line {}: {e}", i + 1)),
        }
    }
    if !problems.is_empty() {
        return Err(Error::InvalidInput {
            path: source.to_string(),
            problems,
        });
    }
    if out.is_empty() {
        return Err(Error::InvalidInput {
            path: source.to_string(),
            problems: vec!["no trajectories: the file has no lines".into()],
        });
    }
    Ok(out)
}

/// Parses line `number` (1-based) of a JSONL input: `None` for a blank
/// line, else the trajectory or what is wrong with it. For reading a large
/// input a line at a time (see [`score_each`]).
pub fn parse_jsonl_line(
    line: &str,
    number: usize,
    world: &World,
    task_prefix: Option<&str>,
) -> std::result::Result<Option<RunToScore>, String> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    let mut t = parse_line(line, world, task_prefix)?;
    t.run.line = Some(number);
    Ok(Some(t))
}

/// The fields of an input line scoring reads (a native export's header is
/// `episode`); the rest, such as recorded results, is skipped unread.
const LINE_FIELDS: &[&str] = &[
    "episode",
    "world_id",
    "seed",
    "id",
    "episode_id",
    "steps",
    "actions",
    "task_id",
    "task_index",
    "judgments",
];

fn parse_line(
    line: &str,
    world: &World,
    task_prefix: Option<&str>,
) -> std::result::Result<RunToScore, String> {
    let value = input_line(line, LINE_FIELDS)?;
    let obj = value.as_object().ok_or("expected a JSON object")?;
    // A native export nests the episode header; accept it flat too.
    let header = obj.get("episode").and_then(Value::as_object).unwrap_or(obj);
    if let Some(w) = header.get("world_id").and_then(Value::as_str) {
        if w != world.meta.id {
            return Err(format!(
                "the trajectory is from world `{w}`, not `{}`",
                world.meta.id
            ));
        }
    }
    let seed = match header.get("seed") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_u64().ok_or("`seed` must be a whole number ≥ 0")?,
    };
    let episode_id = header
        .get("id")
        .or_else(|| obj.get("episode_id"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let actions: Vec<Action> = if let Some(steps) = obj.get("steps") {
        let steps = steps.as_array().ok_or("`steps` must be a list")?;
        let mut actions = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            if s.get("retracted").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            let a = s
                .get("action")
                .ok_or_else(|| format!("step {}: no `action`", i + 1))?;
            actions.push(Action::from_json(a).map_err(|e| format!("step {}: {e}", i + 1))?);
        }
        actions
    } else if let Some(list) = obj.get("actions") {
        actions_from_json(list.as_array().ok_or("`actions` must be a list")?)?
    } else {
        return Err(
            "expected `actions` (a list of actions) or `steps` (a native episode export)".into(),
        );
    };
    let task_index = obj.get("task_index").cloned();
    let task_id = match (header.get("task_id"), &task_index) {
        (Some(t), _) => t.as_str().ok_or("`task_id` must be text")?.to_string(),
        (None, Some(idx)) => {
            let prefix = task_prefix.ok_or("a τ-bench line (`task_index`) needs --task-prefix to name its task, e.g. --task-prefix train-")?;
            let idx = match idx {
                Value::Number(n) if n.is_u64() => n.to_string(),
                Value::String(s) => s.clone(),
                _ => return Err("`task_index` must be a whole number".into()),
            };
            format!("{prefix}{idx}")
        }
        (None, None) => return Err("no `task_id` (or τ-bench `task_index`)".into()),
    };
    if world.task(&task_id).is_none() {
        return Err(format!(
            "there is no task `{task_id}` in world `{}`",
            world.meta.id
        ));
    }
    let judgments = match obj.get("judgments") {
        None => Vec::new(),
        Some(j) => serde_json::from_value(j.clone()).map_err(|e| format!("`judgments`: {e}"))?,
    };
    // A native export's header names who performed it; anything else is
    // an agent's action list.
    let expert = header
        .get("actor")
        .and_then(|a| a.get("kind"))
        .and_then(Value::as_str)
        == Some("expert");
    Ok(RunToScore {
        run: ActionList {
            line: None,
            episode_id,
            task_index,
            task_id: Some(task_id),
            seed,
            actions,
        },
        judgments,
        expert,
    })
}

/// The finished episodes an actor (a model name or an expert id) performed
/// in this world, with their kept steps and stored judgments.
pub fn from_store(store: &Store, world: &World, actor: &str) -> Result<Vec<RunToScore>> {
    let filter = EpisodeFilter {
        world_id: Some(world.meta.id.clone()),
        actor_id: Some(actor.to_string()),
        ..EpisodeFilter::default()
    };
    let mut out = Vec::new();
    for record in store.episodes(&filter)? {
        if record.status.is_open() || world.task(&record.task_id).is_none() {
            continue;
        }
        out.push(RunToScore {
            run: store.trajectory(&record.id)?.action_list(),
            judgments: store
                .judgments(&record.id)?
                .into_iter()
                .map(Judgment::from)
                .collect(),
            expert: record.actor.is_expert(),
        });
    }
    Ok(out)
}

/// What is wrong when `t`'s task is not in `world` or has no rubric,
/// naming its line.
pub fn missing_rubric(t: &RunToScore, rubrics: &RubricSet, world: &World) -> Option<String> {
    let at = match t.run.line {
        Some(l) => format!("line {l}: "),
        None => String::new(),
    };
    match t.run.task(world) {
        Ok(task) if rubrics.get(task).is_none() => Some(format!(
            "{at}task `{task}` has no rubric (rubrics/{task}.toml)"
        )),
        Ok(_) => None,
        Err(e) => Some(format!("{at}{e}")),
    }
}

/// Every task named must have a rubric (and be in the world); checked
/// before any work starts.
pub fn check_rubrics(
    trajectories: &[RunToScore],
    rubrics: &RubricSet,
    world: &World,
    source: &str,
) -> Result<()> {
    let problems: Vec<String> = trajectories
        .iter()
        .filter_map(|t| missing_rubric(t, rubrics, world))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::InvalidInput {
            path: source.to_string(),
            problems,
        })
    }
}

/// Replays and scores every trajectory in parallel, in input order. With a
/// judge command, pending judged criteria are sent to it; a judge failure
/// leaves the criterion pending, with the error on it.
pub fn score_all(
    world: &Arc<World>,
    rubrics: &RubricSet,
    trajectories: &[RunToScore],
    judge: Option<&JudgeCommand>,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Score>> {
    let pool = super::EpisodePool::new(world);
    trajectories
        .par_iter()
        .map_init(
            || pool.take(),
            |episode, t| {
                let episode = episode.as_mut().map_err(|e| Error::Other(e.to_string()))?;
                let out = score_one(world, rubrics, episode.episode(), t, judge);
                progress();
                out
            },
        )
        .collect()
}

/// How many scores may wait for an earlier, slower trajectory per worker.
const REORDER_WINDOW_PER_WORKER: usize = 16;

/// Replays and scores trajectories on every core as they are pulled from
/// `trajectories`, handing each score to `sink` in input order as soon as
/// it and every one before it are done. Neither the inputs nor the scores
/// of a batch are ever all in memory, so a batch of any length runs in
/// flat memory; summarize on the way with [`SummaryBuilder`]. Each worker
/// keeps one episode, reset between trajectories. The first failure stops
/// the batch. Returns how many were scored.
pub fn score_each<I>(
    world: &Arc<World>,
    rubrics: &RubricSet,
    trajectories: I,
    judge: Option<&JudgeCommand>,
    progress: &(dyn Fn() + Sync),
    sink: &mut dyn FnMut(Option<usize>, Score) -> Result<()>,
) -> Result<usize>
where
    I: Iterator<Item = Result<RunToScore>> + Send,
{
    let workers = rayon::current_num_threads().max(1);
    crate::ordered::ordered_parallel(
        trajectories,
        workers,
        workers * REORDER_WINDOW_PER_WORKER,
        || Episode::new(Arc::clone(world)),
        |episode, t| {
            let score = score_one(world, rubrics, episode, &t, judge)?;
            progress();
            Ok((t.run.line, score))
        },
        &mut |(line, score)| sink(line, score),
    )
}

fn score_one(
    world: &World,
    rubrics: &RubricSet,
    episode: &mut Episode,
    t: &RunToScore,
    judge: Option<&JudgeCommand>,
) -> Result<Score> {
    let task = t.run.task(world)?;
    let rubric = rubrics
        .get(task)
        .ok_or_else(|| Error::NotFound(format!("rubric of task {task}")))?;
    episode.set_expert(t.expert);
    let r = replay(episode, task, t.run.seed, &t.run.actions).map_err(|e| t.run.at_line(e))?;
    let mut score = score_episode_with(rubric, episode, &r.actions, &r.observations, &t.judgments);
    score.ignored_actions = r.ignored;
    score.episode_id = t.run.episode_id.clone();
    if let Some(judge) = judge {
        let pending: Vec<String> = score.pending.clone();
        if !pending.is_empty() {
            let changes = episode.changes()?;
            for id in pending {
                let Some(c) = rubric
                    .criterion(&id)
                    .filter(|c| c.kind == CriterionKind::Judged)
                else {
                    continue;
                };
                let request = judge::request(world, task, c, &r.actions, &r.observations, &changes);
                match judge.judge(c, &request) {
                    Ok(j) => {
                        score.apply_judgment(rubric, &j);
                    }
                    Err(e) => score.note_judge_error(&id, e.to_string()),
                }
            }
        }
    }
    Ok(score)
}

/// One line of the per-episode output.
#[derive(Debug, Clone, Serialize)]
pub struct ScoredLine<'a> {
    /// The 1-based input line the trajectory came from; left out for stored
    /// episodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The score, its fields flattened into the line.
    #[serde(flatten)]
    pub score: &'a Score,
}

/// What `understudy score` prints after scoring (a table, or this as JSON):
/// the mean with its interval, pass rates, pass^k and per-criterion rates.
/// Built by [`summarize`].
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Scores summarized.
    pub episodes: usize,
    /// With a value (nothing pending).
    pub scored: usize,
    /// Episodes without a value because a judged criterion is still pending;
    /// left out of `mean`, `ci95` and `full_marks`.
    pub pending: usize,
    /// Mean value of the `scored` episodes; `None` when there are none.
    pub mean: Option<f64>,
    /// 95% percentile bootstrap interval of the mean.
    pub ci95: Option<[f64; 2]>,
    /// Resamples behind `ci95` ([`BOOTSTRAP_RESAMPLES`]).
    pub bootstrap_resamples: usize,
    /// Seed of the SplitMix64 generator behind `ci95` (`--seed`): the same seed
    /// gives the same interval on every machine.
    pub bootstrap_seed: u64,
    /// Share of scored episodes with full marks.
    pub full_marks: Option<f64>,
    /// Episodes whose pass is decided (nothing pending could change it).
    pub decided: usize,
    /// Share of decided episodes that passed (every gate and required
    /// criterion right).
    pub pass_rate: Option<f64>,
    /// pass^k over the decided episodes, by task.
    pub pass_k: Vec<PassK>,
    /// Per criterion id across tasks, lowest pass rate first.
    pub criteria: Vec<CriterionRate>,
    /// Per task and criterion.
    pub task_criteria: Vec<CriterionRate>,
    /// Episodes where some check could not run.
    pub check_errors: usize,
    /// Judged criteria a judge command failed to grade.
    pub judge_errors: usize,
}

/// pass^k for one k: the chance that k runs of a task, drawn without
/// replacement from its decided runs, all pass ([`pass_hat_k`]), averaged
/// over the tasks that have at least k decided runs.
#[derive(Debug, Clone, Serialize)]
pub struct PassK {
    /// Runs drawn: from 1 up to the most decided runs any task has, at most 16.
    pub k: usize,
    /// Tasks with at least k scored runs (the average is over these).
    pub tasks: usize,
    /// The average, in [0, 1].
    pub value: f64,
}

/// How often one criterion was met, over the episodes where its result was
/// known.
#[derive(Debug, Clone, Serialize)]
pub struct CriterionRate {
    /// The task, in the per-task rates; `None` in the rates by criterion id
    /// across tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The criterion's id; across tasks, criteria that share an id are counted
    /// together.
    pub criterion_id: String,
    /// Positive for what must happen, negative for what must not.
    pub points: f64,
    /// Episodes where it was met; for a negative criterion, where the bad thing
    /// happened.
    pub met: usize,
    /// Episodes where its result was known: pending ones are left out, and a
    /// check that could not run counts as failed closed.
    pub evaluated: usize,
    /// `met / evaluated`, in [0, 1]; for a negative criterion, high is bad.
    pub rate: f64,
}

/// Resamples of the bootstrap interval in every [`Summary`].
pub const BOOTSTRAP_RESAMPLES: usize = 1000;

/// Summarizes scores. `seed` makes the bootstrap reproducible.
pub fn summarize(scores: &[Score], seed: u64) -> Summary {
    let mut builder = SummaryBuilder::default();
    for s in scores {
        builder.add(s);
    }
    builder.finish(seed)
}

/// A [`Summary`] built one score at a time, so a streamed batch need not
/// keep its scores: what it holds per episode is its value (8 bytes); the
/// rest is counts per task and criterion.
#[derive(Debug, Default)]
pub struct SummaryBuilder {
    episodes: usize,
    values: Vec<f64>,
    full: usize,
    decided: usize,
    passed: usize,
    /// Decided and passed runs per task.
    per_task: BTreeMap<String, (usize, usize)>,
    /// Points, met and evaluated per (task, criterion) and per criterion.
    by_task: BTreeMap<(String, String), (f64, usize, usize)>,
    by_id: BTreeMap<String, (f64, usize, usize)>,
    check_errors: usize,
    judge_errors: usize,
}

impl SummaryBuilder {
    /// Counts one score in.
    pub fn add(&mut self, s: &Score) {
        self.episodes += 1;
        if let Some(v) = s.value {
            self.values.push(v);
            if s.is_success() {
                self.full += 1;
            }
        }
        if s.pass.is_some() {
            self.decided += 1;
            let e = match self.per_task.get_mut(&s.task_id) {
                Some(e) => e,
                None => self.per_task.entry(s.task_id.clone()).or_default(),
            };
            e.0 += 1;
            if s.passed() {
                self.passed += 1;
                e.1 += 1;
            }
        }
        for c in &s.criteria {
            let Some(met) = c.met else { continue };
            let by_task = self
                .by_task
                .entry((s.task_id.clone(), c.id.clone()))
                .or_insert((c.points, 0, 0));
            by_task.2 += 1;
            by_task.1 += usize::from(met);
            let by_id = match self.by_id.get_mut(&c.id) {
                Some(e) => e,
                None => self.by_id.entry(c.id.clone()).or_insert((c.points, 0, 0)),
            };
            by_id.2 += 1;
            by_id.1 += usize::from(met);
        }
        if !s.errors.is_empty() {
            self.check_errors += 1;
        }
        self.judge_errors += s
            .criteria
            .iter()
            .filter(|c| c.met.is_none() && c.error.is_some())
            .count();
    }

    /// The summary of every score added.
    pub fn finish(self, seed: u64) -> Summary {
        let values = self.values;
        let mean = (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
        let ci95 = bootstrap_ci(&values, BOOTSTRAP_RESAMPLES, seed);
        let per_task = self.per_task;
        let max_n = per_task.values().map(|(n, _)| *n).max().unwrap_or(0);
        let pass_k = (1..=max_n.min(16))
            .map(|k| {
                let eligible: Vec<f64> = per_task
                    .values()
                    .filter(|(n, _)| *n >= k)
                    .map(|(n, c)| pass_hat_k(*n, *c, k))
                    .collect();
                PassK {
                    k,
                    tasks: eligible.len(),
                    value: eligible.iter().sum::<f64>() / eligible.len().max(1) as f64,
                }
            })
            .collect();
        let rate = |task: Option<String>, id: String, (points, met, n): (f64, usize, usize)| {
            CriterionRate {
                task_id: task,
                criterion_id: id,
                points,
                met,
                evaluated: n,
                rate: if n > 0 { met as f64 / n as f64 } else { 0.0 },
            }
        };
        let mut criteria: Vec<CriterionRate> = self
            .by_id
            .into_iter()
            .map(|(id, v)| rate(None, id, v))
            .collect();
        criteria.sort_by(|a, b| {
            a.rate
                .total_cmp(&b.rate)
                .then_with(|| a.criterion_id.cmp(&b.criterion_id))
        });
        let task_criteria = self
            .by_task
            .into_iter()
            .map(|((t, id), v)| rate(Some(t), id, v))
            .collect();
        Summary {
            episodes: self.episodes,
            scored: values.len(),
            pending: self.episodes - values.len(),
            mean,
            ci95,
            bootstrap_resamples: BOOTSTRAP_RESAMPLES,
            bootstrap_seed: seed,
            full_marks: (!values.is_empty()).then(|| self.full as f64 / values.len() as f64),
            decided: self.decided,
            pass_rate: (self.decided > 0).then(|| self.passed as f64 / self.decided as f64),
            pass_k,
            criteria,
            task_criteria,
            check_errors: self.check_errors,
            judge_errors: self.judge_errors,
        }
    }
}

/// pass^k for one task with n decided runs and c passes: C(c, k) / C(n, k), the
/// chance that k runs drawn without replacement all succeed.
pub fn pass_hat_k(n: usize, c: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k)
        .map(|i| c.saturating_sub(i) as f64 / (n - i) as f64)
        .product()
}

/// SplitMix64: a tiny, well-known generator, so the interval is the same on
/// every machine for the same seed.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn bootstrap_ci(values: &[f64], resamples: usize, seed: u64) -> Option<[f64; 2]> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mut rng = SplitMix(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            (0..n)
                .map(|_| values[(rng.next() % n as u64) as usize])
                .sum::<f64>()
                / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    Some([at(0.025), at(0.975)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_hat_k_matches_the_formula() {
        assert_eq!(pass_hat_k(4, 4, 2), 1.0);
        assert_eq!(pass_hat_k(4, 2, 1), 0.5);
        assert!((pass_hat_k(4, 2, 2) - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(pass_hat_k(4, 1, 2), 0.0);
        assert_eq!(pass_hat_k(2, 2, 3), 0.0);
    }

    #[test]
    fn the_bootstrap_is_deterministic_and_brackets_the_mean() {
        let v: Vec<f64> = (0..50).map(|i| (i % 5) as f64 / 4.0).collect();
        let a = bootstrap_ci(&v, 1000, 7).expect("ci");
        let b = bootstrap_ci(&v, 1000, 7).expect("ci");
        assert_eq!(a, b);
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        assert!(a[0] < mean && mean < a[1], "{a:?} {mean}");
        assert_ne!(bootstrap_ci(&v, 1000, 8), Some(a));
        assert_eq!(bootstrap_ci(&[], 1000, 7), None);
    }
}
