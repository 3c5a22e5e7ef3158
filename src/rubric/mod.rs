//! Rubrics: what "done correctly" means for a task, turned into a reward
//! that is explainable and tested against the gold run.
//!
//! A rubric is a file `rubrics/<task_id>.toml` in the world folder (not part
//! of the world's content hash). It lists criteria, each with points:
//! positive for what must happen, negative for what must not; gates zero
//! the score when they fail. Kinds: `state` (a read-only SQL query on the
//! final world, or "nothing else changed"), `action` (a tool was called or
//! not, with argument matchers, ordering and counts), `message` (what was
//! said to the customer, numbers matched as numbers) and `judged` (graded by
//! a person in the app or an external judge command; pending until then,
//! never guessed). The format and formula are in `docs/rubrics.md`.
//!
//! **Key decision: scoring never trusts a state the submitter supplies.**
//! Every score is computed on an episode replayed by the engine from the
//! actions, and records the rubric, world and task versions it used.
//!
//! # API
//!
//! ```no_run
//! use std::sync::Arc;
//! use understudy::rubric::{self, Rubric};
//! use understudy::{Action, Episode, World};
//!
//! let world = Arc::new(World::load("fixtures/worlds/support-desk")?);
//! // Validated against the world; cached per file and world version.
//! let rubric: Arc<Rubric> = Rubric::load(&world, "duplicate-charge")?.expect("the task has a rubric");
//!
//! let actions = vec![Action::message("Hello!")];
//! let mut episode = Episode::new(Arc::clone(&world))?;
//! episode.reset("duplicate-charge", 0)?;
//! let observations: Vec<_> = actions.iter().map(|a| episode.step(a).map(|o| o.observation)).collect::<Result<_, _>>()?;
//!
//! // At episode end (the agent server's reward):
//! let score = rubric::score_episode(&rubric, &episode, &actions, &observations);
//! println!("reward {:?} (pending: {:?})", score.value, score.pending);
//! for c in &score.criteria {
//!     println!("{} {:?} {}", c.id, c.met, c.evidence.detail);
//! }
//! # Ok::<(), understudy::Error>(())
//! ```
//!
//! - [`Rubric::load`] / [`RubricSet::load`]: one task's rubric, or all of a
//!   world's (every problem of every file reported at once, with lines).
//! - [`score_episode`], [`score_episode_with`] (with stored [`Judgment`]s),
//!   [`Score::apply_judgment`] when a person grades a judged criterion.
//! - [`replay_and_score`]: replay an action list on a fresh episode and
//!   score it (what batch scoring and lint do).
//! - [`judge::JudgeCommand`]: an external judge program.
//! - [`lint`]: gold, do-nothing and mutation checks; [`batch`]: JSONL and
//!   stored episodes scored on all cores, with a summary;
//!   [`derive`](mod@derive): rubrics derived from a task's gold solution.

pub mod batch;
pub mod cheats;
mod commit;
pub mod compare;
mod criterion;
pub mod derive;
pub mod document;
mod evaluation;
mod format;
mod interned;
pub mod judge;
mod judgment;
mod kinds;
pub mod lint;
mod load;
mod matchers;
pub mod mutations;
pub(crate) mod numbers;
mod plain_pattern;
pub mod preview;
mod prose;
mod pruned_json;
mod records;
mod scope_index;
mod scope_mutants;
mod score;
pub mod sentence;
pub mod survivors;
pub(crate) mod values;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use sha2::{Digest, Sha256};

pub use criterion::{Criterion, CriterionKind};
pub use evaluation::{ChangeRef, Evidence};
pub use format::FORMAT;
pub use judge::JudgeCommand;
pub use judgment::Judgment;

/// The support-desk fixture world, loaded once, for the rubric tests.
#[cfg(test)]
pub(crate) fn support_desk() -> Arc<World> {
    static W: OnceLock<Arc<World>> = OnceLock::new();
    Arc::clone(W.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/worlds/support-desk");
        Arc::new(World::load(&root).expect("support-desk loads"))
    }))
}
pub use kinds::judged::ScaleLevel;
pub use score::{score_episode, score_episode_with, CriterionResult, Score, SectionResult};

use crate::action::Action;
use crate::episode::Episode;
use crate::error::{Error, Result};
use crate::observation::Observation;
use crate::world::{Diagnostics, Task, World};
use kinds::compile::Probe;

/// The folder of a world that holds its rubrics.
pub const RUBRICS_DIR: &str = "rubrics";

/// A task's rubric, validated against its world.
#[derive(Debug, Clone, Serialize)]
pub struct Rubric {
    /// The task it grades; the file is named after it.
    pub task_id: String,
    /// The file's `format`; loading refuses any but [`FORMAT`].
    pub format: u32,
    /// The author's `version`, bumped when a criterion changes meaning; every
    /// score records it.
    pub version: String,
    /// A short name for people; may be empty.
    pub title: String,
    /// Free text for annotators (known issues, judgment calls); scoring ignores
    /// it.
    pub notes: String,
    /// SHA-256 of the file's bytes.
    pub hash: String,
    /// The file it was read from; for [`Rubric::from_str`], the `source` it was
    /// given, under the world's folder.
    pub path: PathBuf,
    /// The weighted groups of criteria, in file order; empty when the rubric has
    /// none (then the score is one sum over all criteria).
    pub sections: Vec<Section>,
    /// The criteria, in file order; at least one has positive points.
    pub criteria: Vec<Criterion>,
    /// Actions the policy forbids here; lint adds each to the gold run.
    pub forbidden: Vec<Forbidden>,
    /// Runs the annotator vouches for; lint checks they score 1.0.
    pub gold: Vec<GoldExample>,
    /// Whether the task's reference solution must score 1.0 in lint.
    pub solution_is_gold: bool,
    /// The world it was validated against.
    pub world_id: String,
    /// That world's content hash. A rubric is valid only for the world it was
    /// checked against: [`Rubric::load`] reloads it when the world changes.
    pub world_hash: String,
    /// SHA-256 of the task's definition in that world.
    pub task_hash: String,
}

/// A weighted group of criteria or of sub-sections.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    /// Unique among the rubric's sections; criteria name it in `section`.
    pub id: String,
    /// For people; the id when the file gives none.
    pub title: String,
    /// Its weight in the mean of its siblings under the parent (or at the top
    /// level); greater than 0, 1 when the file gives none.
    pub weight: f64,
    /// The section it is nested in; `None` at the top level.
    pub parent: Option<String>,
}

/// A `[[gold]]` run of the rubric: actions the annotator vouches for. Lint
/// replays it with seed 0 and requires 1.0; the runs matter most when the
/// reference solution is not a full-marks run (`solution_is_gold = false`).
#[derive(Debug, Clone, Serialize)]
pub struct GoldExample {
    /// The run's actions, in order.
    pub actions: Vec<Action>,
    /// What the run shows, in the annotator's words; may be empty.
    pub why: String,
    /// 1-based line of the `[[gold]]` entry in the rubric file, for reports.
    pub line: usize,
}

/// A `[[forbidden]]` entry: an action the policy forbids in this task. Lint
/// adds it to the gold run, and the rubric must score that mutant lower.
#[derive(Debug, Clone, Serialize)]
pub struct Forbidden {
    /// The forbidden tool call, or a message that must never be said.
    pub action: Action,
    /// Why it is forbidden (say, the policy rule), shown in the mutant's
    /// description; may be empty.
    pub why: String,
    /// 1-based line of the entry in the rubric file.
    pub line: usize,
}

type CacheKey = (PathBuf, String);
type Cache = Mutex<HashMap<CacheKey, (String, Arc<Rubric>)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

impl Rubric {
    /// The rubric of `task_id`, or `None` when the world has no rubric file
    /// for it. Validated against `world`; reloaded only when the file or
    /// the world changed, so calling this at every episode end is cheap.
    pub fn load(world: &Arc<World>, task_id: &str) -> Result<Option<Arc<Rubric>>> {
        let rel = format!("{RUBRICS_DIR}/{task_id}.toml");
        let path = world.root.join(&rel);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        let file_hash = hex::encode(Sha256::digest(&bytes));
        let key = (path.clone(), world.content_hash.clone());
        if let Some((h, r)) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            if *h == file_hash {
                return Ok(Some(Arc::clone(r)));
            }
        }
        let text = decode(&path, bytes)?;
        let mut diags = Diagnostics::default();
        let mut probe = Probe::new(world);
        let rubric = load::compile(world, task_id, &rel, &text, &mut probe, &mut diags);
        let rubric = finish(world, rubric, diags, &path)?;
        let rubric = Arc::new(rubric);
        cache()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, (file_hash, Arc::clone(&rubric)));
        Ok(Some(rubric))
    }

    /// Parses and validates rubric text for `task_id` without touching the
    /// disk (for editors and tests); `source` names it in errors.
    pub fn from_str(world: &Arc<World>, task_id: &str, source: &str, text: &str) -> Result<Rubric> {
        let mut diags = Diagnostics::default();
        let mut probe = Probe::new(world);
        let rubric = load::compile(world, task_id, source, text, &mut probe, &mut diags);
        finish(world, rubric, diags, Path::new(source))
    }

    /// The criterion with this id, if the rubric has one.
    pub fn criterion(&self, id: &str) -> Option<&Criterion> {
        self.criteria.iter().find(|c| c.id == id)
    }

    /// Σ positive points: the denominator of the score.
    pub fn possible_points(&self) -> f64 {
        self.criteria
            .iter()
            .filter(|c| c.points > 0.0)
            .map(|c| c.points)
            .sum()
    }
}

fn decode(path: &Path, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|_| Error::RubricInvalid {
        path: path.display().to_string(),
        problems: vec![crate::world::Diagnostic {
            file: path.display().to_string(),
            line: None,
            subject: None,
            message: "not UTF-8 text".into(),
        }],
    })
}

fn task_hash(world: &World, task_id: &str) -> String {
    // The summary is display only: rewording it changes no score.
    let text = world
        .task(task_id)
        .map(|t| Task {
            summary: None,
            ..t.clone()
        })
        .and_then(|t| serde_json::to_string(&t).ok())
        .unwrap_or_default();
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn finish(
    world: &World,
    rubric: Option<Rubric>,
    diags: Diagnostics,
    path: &Path,
) -> Result<Rubric> {
    match rubric {
        Some(mut r) if diags.is_empty() => {
            r.task_hash = task_hash(world, &r.task_id);
            Ok(r)
        }
        _ => Err(Error::RubricInvalid {
            path: path.display().to_string(),
            problems: diags.into_vec(),
        }),
    }
}

/// Every rubric of a world, by task id.
#[derive(Debug, Clone, Default)]
pub struct RubricSet {
    /// The rubrics by task id, in task id order.
    pub rubrics: indexmap::IndexMap<String, Arc<Rubric>>,
}

impl RubricSet {
    /// Loads and validates every `rubrics/*.toml` of the world. Any problem
    /// in any file fails the whole load, listing all of them.
    pub fn load(world: &Arc<World>) -> Result<RubricSet> {
        RubricSet::load_with_overlay(world, None)
    }

    /// Like [`RubricSet::load`], with the rubric files in `overlay` (the
    /// app's saved edits of a world's rubrics) in place of the world's own
    /// files of the same task, and beside them for tasks the world has no
    /// rubric for. See "Where rubrics live" in `docs/rubrics.md`.
    pub fn load_with_overlay(world: &Arc<World>, overlay: Option<&Path>) -> Result<RubricSet> {
        let mut files: indexmap::IndexMap<String, (PathBuf, String)> = indexmap::IndexMap::new();
        let dir = world.root.join(RUBRICS_DIR);
        if let Some(d) = overlay.filter(|d| !d.is_dir()) {
            return Err(Error::io(
                format!("reading the rubric folder {}", d.display()),
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such folder"),
            ));
        }
        for (folder, in_world) in [(Some(dir.as_path()), true), (overlay, false)] {
            let Some(folder) = folder.filter(|d| d.is_dir()) else {
                continue;
            };
            let mut paths: Vec<PathBuf> = std::fs::read_dir(folder)
                .map_err(|e| Error::io(format!("reading {}", folder.display()), e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            paths.sort();
            for path in paths {
                let Some(task_id) = path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .map(str::to_string)
                else {
                    continue;
                };
                let rel = if in_world {
                    format!("{RUBRICS_DIR}/{task_id}.toml")
                } else {
                    path.display().to_string()
                };
                files.insert(task_id, (path, rel));
            }
        }
        files.sort_keys();
        let mut set = RubricSet::default();
        let mut diags = Diagnostics::default();
        let mut probe = Probe::new(world);
        for (task_id, (path, rel)) in files {
            let text = match std::fs::read(&path) {
                Ok(b) => match String::from_utf8(b) {
                    Ok(t) => t,
                    Err(_) => {
                        diags.push(&rel, None, None, "not UTF-8 text");
                        continue;
                    }
                },
                Err(e) => {
                    diags.push(&rel, None, None, format!("cannot read: {e}"));
                    continue;
                }
            };
            if let Some(mut r) = load::compile(world, &task_id, &rel, &text, &mut probe, &mut diags)
            {
                r.task_hash = task_hash(world, &task_id);
                set.rubrics.insert(task_id, Arc::new(r));
            }
        }
        if diags.is_empty() {
            Ok(set)
        } else {
            Err(Error::RubricInvalid {
                path: dir.display().to_string(),
                problems: diags.into_vec(),
            })
        }
    }

    /// The rubric of `task_id`, if the world has one.
    pub fn get(&self, task_id: &str) -> Option<&Arc<Rubric>> {
        self.rubrics.get(task_id)
    }
}

/// Episodes reused across parallel jobs. Rayon may start many more jobs
/// than it has threads, and creating an episode copies the world's
/// database, so jobs borrow episodes from here instead of making their own.
pub(crate) struct EpisodePool {
    world: Arc<World>,
    free: Mutex<Vec<Episode>>,
}

impl EpisodePool {
    pub fn new(world: &Arc<World>) -> Self {
        EpisodePool {
            world: Arc::clone(world),
            free: Mutex::new(Vec::new()),
        }
    }

    pub fn take(&self) -> Result<Pooled<'_>> {
        let ep = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let ep = match ep {
            Some(ep) => ep,
            None => Episode::new(Arc::clone(&self.world))?,
        };
        Ok(Pooled {
            ep: Some(ep),
            pool: self,
        })
    }
}

/// An episode on loan from an [`EpisodePool`]; it goes back when dropped.
pub(crate) struct Pooled<'a> {
    ep: Option<Episode>,
    pool: &'a EpisodePool,
}

impl Pooled<'_> {
    pub fn episode(&mut self) -> &mut Episode {
        self.ep
            .as_mut()
            .expect("a pooled episode is present until dropped")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(ep) = self.ep.take() {
            self.pool
                .free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(ep);
        }
    }
}

/// What replaying an action list produced.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The actions applied (those after the episode ended are dropped).
    pub actions: Vec<Action>,
    /// What each applied action returned, one per entry of `actions`.
    pub observations: Vec<Observation>,
    /// Actions given after the episode had ended.
    pub ignored: usize,
}

impl Replayed {
    /// What was said to the customer, in order.
    pub fn messages(&self) -> Vec<String> {
        self.actions
            .iter()
            .filter_map(|a| match a {
                Action::Message { message } => Some(message.clone()),
                Action::Tool { .. } => None,
            })
            .collect()
    }
}

/// Resets `episode` to `task_id` with `seed` and applies `actions` as the
/// live environment would: actions after an ending tool succeeded or after
/// the step limit are not applied.
pub fn replay(
    episode: &mut Episode,
    task_id: &str,
    seed: u64,
    actions: &[Action],
) -> Result<Replayed> {
    episode.set_enforce_limits(true);
    episode.reset(task_id, seed)?;
    let mut observations = Vec::with_capacity(actions.len());
    let mut applied = 0;
    for action in actions {
        if episode.is_done() {
            break;
        }
        observations.push(episode.step(action)?.observation);
        applied += 1;
    }
    Ok(Replayed {
        actions: actions[..applied].to_vec(),
        observations,
        ignored: actions.len() - applied,
    })
}

/// Replays `actions` on a fresh reset of `episode` and scores the result.
pub fn replay_and_score(
    episode: &mut Episode,
    rubric: &Rubric,
    seed: u64,
    actions: &[Action],
    judgments: &[Judgment],
) -> Result<Score> {
    let r = replay(episode, &rubric.task_id, seed, actions)?;
    let mut score = score_episode_with(rubric, episode, &r.actions, &r.observations, judgments);
    score.ignored_actions = r.ignored;
    Ok(score)
}
