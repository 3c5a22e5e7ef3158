//! Rubric lint: is the rubric right about the runs we know the answer to?
//!
//! For each task: (a) every gold trajectory (the task's reference solution,
//! the rubric's own `[[gold]]` runs and the approved episodes in the
//! store) scores 1.0; (b) doing nothing
//! scores 0; (c) mutants of the gold run (see [`super::mutations`]) score
//! below it — the mutation score is caught / counted, and survivors are
//! listed so the annotator sees which behaviour the rubric does not notice;
//! (d) no criterion comes out the same on every one of these runs.
//!
//! **Judged criteria** cannot be graded here, so lint is strict both ways:
//! gold must reach 1.0 at best, do-nothing must be 0 even at best, and a
//! mutant counts as caught only when it is below gold whatever the judges
//! say.
//!
//! **Equivalent mutants.** A mutant whose replay ends in the same state and
//! says the same messages as gold (say, a perturbed argument of a call
//! that fails in gold too) cannot be told apart by what happened. If the
//! rubric still scores it lower (an action criterion noticed) it counts as
//! caught; otherwise it is listed as equivalent and left out of the
//! mutation score.

use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use super::mutations::{self, MutantKind};
use super::{replay, score_episode, RubricSet, Score};
use crate::action::Action;
use crate::episode::{Changes, Episode};
use crate::error::{Error, Result};
use crate::store::{EpisodeFilter, EpisodeStatus, Store};
use crate::world::World;

/// What [`lint`] and [`lint_rubric`] check (the command line's `--task` and
/// `--min-mutation-score`). `task` only narrows [`lint`]: [`lint_rubric`]
/// always lints its rubric's own task. The default lints every task at 90%.
#[derive(Debug, Clone)]
pub struct LintOptions {
    /// Only this task.
    pub task: Option<String>,
    /// A task fails lint below this mutation score.
    pub min_mutation_score: f64,
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            task: None,
            min_mutation_score: 0.9,
        }
    }
}

/// The lint of a world's rubrics: one [`TaskLint`] per task and the totals
/// `understudy rubric lint` prints (its `--json` output is this, serialized).
#[derive(Debug, Clone, Serialize)]
pub struct LintReport {
    /// Id of the linted world.
    pub world_id: String,
    /// Its version, as the report's first line prints it.
    pub world_version: String,
    /// Its content hash. Rubrics are not part of it: each task's `rubric_hash`
    /// names the rubric linted.
    pub world_hash: String,
    /// The threshold each task's mutation score was held to, a fraction in
    /// [0, 1] (from [`LintOptions::min_mutation_score`]).
    pub min_mutation_score: f64,
    /// One entry per task linted, in the world's task order.
    pub tasks: Vec<TaskLint>,
    /// Tasks whose lint found no problem.
    pub passed: usize,
    /// Tasks with at least one problem; `passed + failed` is `tasks.len()`.
    pub failed: usize,
    /// Over all tasks: mutants counted, caught, and left out as equivalent.
    pub mutants: usize,
    /// Of `mutants`, those the rubrics caught.
    pub caught: usize,
    /// Uncaught mutants left out of `mutants` as equivalent to gold.
    pub equivalent: usize,
    /// `caught / mutants`; `None` when no mutant was counted. Like the per-task
    /// [`MutationScore`] it covers only the classes of
    /// [`MutantKind::in_mutation_score`]; the cheat classes are in `classes`.
    /// It is not held to the threshold: each task is.
    pub mutation_score: Option<f64>,
    /// Per mutant class over all tasks.
    pub classes: Vec<ClassScore>,
}

/// The lint of one task's rubric: every run it was checked on, what each
/// scored, and the problems that fail it.
#[derive(Debug, Clone, Serialize)]
pub struct TaskLint {
    /// Id of the task whose rubric was linted.
    pub task_id: String,
    /// Whether the rubric passed lint: true exactly when `problems` is empty.
    pub ok: bool,
    /// What failed, in sentences.
    pub problems: Vec<String>,
    /// The linted rubric's `version`; `None` when the task has no rubric (then
    /// `problems` says so and nothing was run).
    pub rubric_version: Option<String>,
    /// SHA-256 of the linted rubric file's bytes; `None` when the task has no
    /// rubric.
    pub rubric_hash: Option<String>,
    /// Every gold run checked, each of which must reach 1.0 at best: the
    /// reference solution (unless the rubric says `solution_is_gold = false`),
    /// the approved episodes in the store, then the rubric's `[[gold]]` runs.
    pub gold: Vec<RunResult>,
    /// The empty run, which must score 0 even at best; `None` only when the
    /// task has no rubric.
    pub do_nothing: Option<RunResult>,
    /// Every mutant and cheat mutant of the first gold run, as scored; empty
    /// without a gold run. A detour whose wrong write failed, or that did not
    /// end in gold's state, is not a detour and is left out.
    pub mutants: Vec<MutantResult>,
    /// This task's mutation score, which fails the task below
    /// [`LintOptions::min_mutation_score`].
    pub mutation: MutationScore,
    /// Per mutant class (the cheat classes included), the classes that
    /// have mutants for this task.
    pub classes: Vec<ClassScore>,
    /// Criteria that came out the same on every run.
    pub constant_criteria: Vec<String>,
}

/// How one class of mutants fared.
#[derive(Debug, Clone, Serialize)]
pub struct ClassScore {
    /// The class; reports print its [`MutantKind::name`].
    pub class: MutantKind,
    /// Mutants counted (all but the equivalent ones).
    pub total: usize,
    /// Mutants of the class caught (for a cheat class: scored below gold and did
    /// not pass).
    pub caught: usize,
    /// Uncaught mutants left out of `total` as equivalent to gold (for detours:
    /// every uncaught one).
    pub equivalent: usize,
}

/// Mutants caught out of those counted, over the classes that make the
/// mutation score ([`MutantKind::in_mutation_score`]: dropped steps,
/// perturbed arguments, forbidden actions, the dropped final message).
#[derive(Debug, Clone, Default, Serialize)]
pub struct MutationScore {
    /// Mutants counted (all but the uncaught equivalent ones).
    pub total: usize,
    /// Of `total`, the mutants whose best score is below gold's.
    pub caught: usize,
    /// Uncaught mutants that end in gold's state and say gold's messages, left
    /// out of `total`.
    pub equivalent: usize,
    /// `caught / total`, a fraction in [0, 1]; `None` when `total` is 0 (no gold
    /// run, or nothing in it to mutate).
    pub score: Option<f64>,
}

/// What one run (a gold run, or doing nothing) scored, and the criteria that
/// kept it from full marks.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// `solution`, or `episode <id>`.
    pub source: String,
    /// The score; `None` while a judged criterion is pending (lint never grades
    /// them, so any judged criterion leaves it `None`).
    pub value: Option<f64>,
    /// The lowest and highest score still possible, `[low, high]`. Lint holds
    /// the high end to 1.0 for gold and to 0 for doing nothing.
    pub range: [f64; 2],
    /// Positive criteria not met.
    pub unmet: Vec<String>,
    /// Negative criteria that fired.
    pub penalized: Vec<String>,
    /// Ids of gates that were not met (the score is then 0).
    pub failed_gates: Vec<String>,
    /// Ids of criteria whose check could not run on this run; they count
    /// against it, and a gold run with any fails lint.
    pub errors: Vec<String>,
    /// Ids of judged criteria left ungraded.
    pub pending: Vec<String>,
}

/// How one mutant of the gold run fared.
#[derive(Debug, Clone, Serialize)]
pub struct MutantResult {
    /// The mutant's stable id ([`Mutant::id`](mutations::Mutant::id)), e.g.
    /// `drop:4` or `arg:4:amount:+1`.
    pub id: String,
    /// Its class. A [`MutantKind::Forbidden`] call the world refused is reported
    /// as a [`MutantKind::RefusedAttempt`].
    pub kind: MutantKind,
    /// What changed, for the annotator: "step 2 (transfer): amount 25.0 → 26.0".
    pub description: String,
    /// The mutant's lowest and highest possible score, `[low, high]`.
    pub range: [f64; 2],
    /// Whether the rubric noticed: the mutant's best score is below gold's, and
    /// for a class of [`MutantKind::must_all_be_caught`] it also did not pass
    /// (stuffing alone must score 0 outright).
    pub caught: bool,
    /// Left out of the mutation score: uncaught, and nothing that happened tells
    /// it apart from gold (`equivalent_reason` says why).
    pub equivalent: bool,
    /// Why an equivalent mutant cannot be told from gold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equivalent_reason: Option<String>,
    /// Whether the mutant passed (it should not).
    pub pass: Option<bool>,
    /// Criteria whose result differs from the gold run's.
    pub noticed_by: Vec<String>,
}

impl RunResult {
    fn from_score(source: String, s: &Score) -> RunResult {
        RunResult {
            source,
            value: s.value,
            range: s.range,
            unmet: s
                .criteria
                .iter()
                .filter(|c| c.points >= 0.0 && c.met == Some(false))
                .map(|c| c.id.clone())
                .collect(),
            penalized: s
                .criteria
                .iter()
                .filter(|c| c.points < 0.0 && c.met == Some(true))
                .map(|c| c.id.clone())
                .collect(),
            failed_gates: s.failed_gates.clone(),
            errors: s.errors.clone(),
            pending: s.pending.clone(),
        }
    }
}

/// A gold trajectory to check.
#[derive(Debug, Clone)]
pub struct Gold {
    /// Where it came from, as reports name it: `solution`, `episode <id>` (with
    /// both world versions when it was recorded in another one), or
    /// `rubric gold <n> (line <l>)`.
    pub source: String,
    /// The seed the task is reset with before the replay: 0 for the solution and
    /// `[[gold]]` runs, the episode's own seed for stored ones.
    pub seed: u64,
    /// The actions, replayed in order from the seeded world.
    pub actions: Vec<Action>,
}

/// What one run left behind, for equivalence.
struct Run {
    score: Score,
    changes: Option<Changes>,
    messages: Vec<String>,
    /// Whether each applied step's call succeeded.
    ok: Vec<bool>,
}

fn run(
    episode: &mut Episode,
    rubric: &super::Rubric,
    seed: u64,
    actions: &[Action],
) -> Result<Run> {
    let r = replay(episode, &rubric.task_id, seed, actions)?;
    let mut score = score_episode(rubric, episode, &r.actions, &r.observations);
    score.ignored_actions = r.ignored;
    let messages = r.messages();
    Ok(Run {
        score,
        changes: episode.changes().ok(),
        messages,
        ok: r.observations.iter().map(|o| o.ok).collect(),
    })
}

/// The gold trajectories of every task: reference solutions, and the
/// approved episodes of this world in `store`.
pub fn gold_runs(world: &World, store: Option<&Store>) -> Result<Vec<(String, Gold)>> {
    let mut out = Vec::new();
    for (id, task) in &world.tasks {
        if task.solution.is_empty() {
            continue;
        }
        let actions = task
            .solution
            .iter()
            .enumerate()
            .map(|(i, a)| {
                Action::from_json(a)
                    .map_err(|e| Error::Other(format!("task {id}: solution step {}: {e}", i + 1)))
            })
            .collect::<Result<Vec<_>>>()?;
        out.push((
            id.clone(),
            Gold {
                source: "solution".into(),
                seed: 0,
                actions,
            },
        ));
    }
    if let Some(store) = store {
        let filter = EpisodeFilter {
            world_id: Some(world.meta.id.clone()),
            status: Some(EpisodeStatus::Approved),
            ..EpisodeFilter::default()
        };
        for record in store.episodes(&filter)? {
            if world.task(&record.task_id).is_none() {
                continue;
            }
            let actions = store.trajectory(&record.id)?.actions();
            let mut source = format!("episode {}", record.id);
            if record.world_hash != world.content_hash {
                source.push_str(&format!(
                    " (recorded in world version {}, replayed in {})",
                    record.world_version, world.meta.version
                ));
            }
            out.push((
                record.task_id.clone(),
                Gold {
                    source,
                    seed: record.seed,
                    actions,
                },
            ));
        }
    }
    Ok(out)
}

/// Lints every task of `world` (or the one in `options`).
pub fn lint(
    world: &Arc<World>,
    rubrics: &RubricSet,
    store: Option<&Store>,
    options: &LintOptions,
    progress: &(dyn Fn() + Sync),
) -> Result<LintReport> {
    if let Some(t) = &options.task {
        if world.task(t).is_none() {
            return Err(Error::UnknownTask {
                world: world.meta.id.clone(),
                task: t.clone(),
            });
        }
    }
    let golds = gold_runs(world, store)?;
    let tasks: Vec<&String> = world
        .tasks
        .keys()
        .filter(|t| options.task.as_ref().is_none_or(|only| only == *t))
        .collect();
    let pool = super::EpisodePool::new(world);
    let results: Vec<TaskLint> = tasks
        .par_iter()
        .map_init(
            || pool.take(),
            |episode, task_id| {
                let out = match episode {
                    Ok(ep) => {
                        let mine: Vec<&Gold> = golds
                            .iter()
                            .filter(|(t, _)| t == *task_id)
                            .map(|(_, g)| g)
                            .collect();
                        lint_task(
                            world,
                            rubrics,
                            ep.episode(),
                            task_id,
                            &mine,
                            options,
                            &|_| {},
                        )
                    }
                    Err(e) => Err(Error::Other(e.to_string())),
                };
                progress();
                out
            },
        )
        .collect::<Result<Vec<_>>>()?;
    let passed = results.iter().filter(|t| t.ok).count();
    let mutants: usize = results.iter().map(|t| t.mutation.total).sum();
    let caught: usize = results.iter().map(|t| t.mutation.caught).sum();
    let equivalent: usize = results.iter().map(|t| t.mutation.equivalent).sum();
    let classes = MutantKind::ALL
        .into_iter()
        .filter_map(|class| {
            let of: Vec<&ClassScore> = results
                .iter()
                .flat_map(|t| &t.classes)
                .filter(|c| c.class == class)
                .collect();
            (!of.is_empty()).then(|| ClassScore {
                class,
                total: of.iter().map(|c| c.total).sum(),
                caught: of.iter().map(|c| c.caught).sum(),
                equivalent: of.iter().map(|c| c.equivalent).sum(),
            })
        })
        .collect();
    Ok(LintReport {
        world_id: world.meta.id.clone(),
        world_version: world.meta.version.clone(),
        world_hash: world.content_hash.clone(),
        min_mutation_score: options.min_mutation_score,
        failed: results.len() - passed,
        passed,
        tasks: results,
        mutants,
        caught,
        equivalent,
        mutation_score: (mutants > 0).then(|| caught as f64 / mutants as f64),
        classes,
    })
}

const EPS: f64 = 1e-9;

/// How far the lint of one rubric is: runs replayed and scored so far, of
/// those known to come (the count grows once the mutants of gold are
/// known).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LintProgress {
    /// Runs replayed and scored so far.
    pub done: usize,
    /// Runs known to come, `done` included; it grows once the mutants of gold
    /// are known, so the bar may move back.
    pub total: usize,
}

/// Lints one rubric (say, one being edited, not yet saved) against its
/// task's gold runs — the reference solution, the approved episodes in
/// `store`, the rubric's own `[[gold]]` — reporting after every run.
pub fn lint_rubric(
    world: &Arc<World>,
    rubric: Arc<super::Rubric>,
    store: Option<&Store>,
    options: &LintOptions,
    progress: &dyn Fn(LintProgress),
) -> Result<TaskLint> {
    let task_id = rubric.task_id.clone();
    if world.task(&task_id).is_none() {
        return Err(Error::UnknownTask {
            world: world.meta.id.clone(),
            task: task_id,
        });
    }
    let golds = gold_runs(world, store)?;
    let mine: Vec<&Gold> = golds
        .iter()
        .filter(|(t, _)| *t == task_id)
        .map(|(_, g)| g)
        .collect();
    let mut rubrics = RubricSet::default();
    rubrics.rubrics.insert(task_id.clone(), rubric);
    let mut episode = Episode::new(Arc::clone(world))?;
    lint_task(
        world,
        &rubrics,
        &mut episode,
        &task_id,
        &mine,
        options,
        progress,
    )
}

fn lint_task(
    world: &Arc<World>,
    rubrics: &RubricSet,
    episode: &mut Episode,
    task_id: &str,
    golds: &[&Gold],
    options: &LintOptions,
    on_run: &dyn Fn(LintProgress),
) -> Result<TaskLint> {
    // Gold runs are experts' (approved episodes, or the author's
    // solution), and so are their mutants: replayed as recorded.
    episode.set_expert(true);
    let mut lint = TaskLint {
        task_id: task_id.to_string(),
        ok: false,
        problems: Vec::new(),
        rubric_version: None,
        rubric_hash: None,
        gold: Vec::new(),
        do_nothing: None,
        mutants: Vec::new(),
        mutation: MutationScore::default(),
        classes: Vec::new(),
        constant_criteria: Vec::new(),
    };
    let Some(rubric) = rubrics.get(task_id) else {
        lint.problems
            .push(format!("no rubric: write rubrics/{task_id}.toml"));
        return Ok(lint);
    };
    lint.rubric_version = Some(rubric.version.clone());
    lint.rubric_hash = Some(rubric.hash.clone());
    let examples: Vec<Gold> = rubric
        .gold
        .iter()
        .enumerate()
        .map(|(i, g)| Gold {
            source: format!("rubric gold {} (line {})", i + 1, g.line),
            seed: 0,
            actions: g.actions.clone(),
        })
        .collect();
    let golds: Vec<&Gold> = golds
        .iter()
        .copied()
        .filter(|g| rubric.solution_is_gold || g.source != "solution")
        .chain(examples.iter())
        .collect();
    if golds.is_empty() {
        lint.problems.push("no gold trajectory: the task has no reference solution, no approved episode and no [[gold]] in its rubric".into());
    }
    let mut all_scores: Vec<Score> = Vec::new();
    let mut base: Option<Run> = None;
    // Runs so far, and runs known to come (the mutants are known once
    // gold has run).
    let mut progress = LintProgress {
        done: 0,
        total: golds.len() + 1,
    };
    let ran = |progress: &mut LintProgress| {
        progress.done += 1;
        on_run(*progress);
    };
    for g in &golds {
        let r = run(episode, rubric, g.seed, &g.actions)?;
        ran(&mut progress);
        let res = RunResult::from_score(g.source.clone(), &r.score);
        if r.score.range[1] < 1.0 - EPS || !r.score.errors.is_empty() {
            let mut why = Vec::new();
            if !res.failed_gates.is_empty() {
                why.push(format!("failed gates {}", res.failed_gates.join(", ")));
            }
            if !res.unmet.is_empty() {
                why.push(format!("unmet {}", res.unmet.join(", ")));
            }
            if !res.penalized.is_empty() {
                why.push(format!("penalized {}", res.penalized.join(", ")));
            }
            if !res.errors.is_empty() {
                why.push(format!(
                    "checks that could not run {}",
                    res.errors.join(", ")
                ));
            }
            lint.problems.push(format!(
                "gold {} scores {:.3}, not 1.0: {}",
                g.source,
                r.score.range[1],
                why.join("; ")
            ));
        }
        lint.gold.push(res);
        all_scores.push(r.score.clone());
        if base.is_none() {
            base = Some(r);
        }
    }
    let nothing = run(episode, rubric, 0, &[])?;
    ran(&mut progress);
    if nothing.score.range[1] > EPS {
        let earned: Vec<String> = nothing
            .score
            .criteria
            .iter()
            .filter(|c| c.points > 0.0 && c.met != Some(false))
            .map(|c| c.id.clone())
            .collect();
        lint.problems.push(format!(
            "doing nothing scores up to {:.3}, not 0: it earns {} (make the outcome a gate, or add a state criterion the do-nothing run fails)",
            nothing.score.range[1],
            earned.join(", ")
        ));
    }
    lint.do_nothing = Some(RunResult::from_score("do nothing".into(), &nothing.score));
    all_scores.push(nothing.score.clone());

    if let (Some(base), Some(g)) = (&base, golds.first()) {
        let mut mutants = mutations::mutants(world, rubric, &g.actions);
        let cheats = super::cheats::cheat_mutants(world, rubric, &g.actions)
            .into_iter()
            .chain(super::scope_mutants::scope_mutants(
                world, rubric, &g.actions, g.seed, episode,
            )?);
        for m in cheats {
            if m.actions != g.actions && !mutants.iter().any(|o| o.actions == m.actions) {
                mutants.push(m);
            }
        }
        progress.total += mutants.len();
        on_run(progress);
        for mut m in mutants {
            let r = run(episode, rubric, g.seed, &m.actions)?;
            ran(&mut progress);
            let added_ok = m.added.and_then(|i| r.ok.get(i).copied());
            let same_outcome =
                r.changes.is_some() && r.changes == base.changes && r.messages == base.messages;
            match m.kind {
                // A forbidden call the world refuses is an attempt.
                MutantKind::Forbidden if added_ok == Some(false) => {
                    m.kind = MutantKind::RefusedAttempt;
                }
                // Only a wrong write that really happened and was undone.
                MutantKind::Detour if added_ok != Some(true) || r.changes != base.changes => {
                    continue;
                }
                _ => {}
            }
            let below = r.score.range[1] < base.score.range[1] - EPS;
            let caught = match m.kind {
                // Stuffing alone must earn nothing at all.
                MutantKind::Stuffing if m.id == "stuffing:alone" => {
                    r.score.range[1] <= EPS && r.score.pass != Some(true)
                }
                k if k.must_all_be_caught() => below && r.score.pass != Some(true),
                _ => below,
            };
            let equivalent_reason = match m.kind {
                _ if caught => None,
                MutantKind::Detour => Some("a wrong write undone by gold's own call ends in gold's state; whether a detour should cost is a judgment call (an action criterion with a count catches it)".to_string()),
                MutantKind::RefusedAttempt => None,
                _ if same_outcome => Some("it ends in gold's state and says gold's messages, so nothing that happened tells it apart".to_string()),
                _ => None,
            };
            let noticed_by = r
                .score
                .criteria
                .iter()
                .zip(&base.score.criteria)
                .filter(|(a, b)| a.met.is_some() && b.met.is_some() && a.met != b.met)
                .map(|(a, _)| a.id.clone())
                .collect();
            lint.mutants.push(super::lint::MutantResult {
                id: m.id,
                kind: m.kind,
                description: m.description,
                range: r.score.range,
                caught,
                equivalent: equivalent_reason.is_some(),
                equivalent_reason,
                pass: r.score.pass,
                noticed_by,
            });
            all_scores.push(r.score);
        }
    }
    let counted = |m: &&MutantResult| m.kind.in_mutation_score();
    let equivalent = lint
        .mutants
        .iter()
        .filter(counted)
        .filter(|m| m.equivalent)
        .count();
    let caught = lint
        .mutants
        .iter()
        .filter(counted)
        .filter(|m| m.caught)
        .count();
    let total = lint.mutants.iter().filter(counted).count() - equivalent;
    lint.mutation = MutationScore {
        total,
        caught,
        equivalent,
        score: (total > 0).then(|| caught as f64 / total as f64),
    };
    for class in MutantKind::ALL {
        let of: Vec<&MutantResult> = lint.mutants.iter().filter(|m| m.kind == class).collect();
        if of.is_empty() {
            continue;
        }
        let equivalent = of.iter().filter(|m| m.equivalent).count();
        let c = ClassScore {
            class,
            total: of.len() - equivalent,
            caught: of.iter().filter(|m| m.caught).count(),
            equivalent,
        };
        if class.must_all_be_caught() && c.caught < c.total {
            lint.problems.push(format!(
                "cheat class {}: the rubric does not catch {} of {} mutant(s) (listed as survivors)",
                class.name(),
                c.total - c.caught,
                c.total
            ));
        }
        lint.classes.push(c);
    }
    if let Some(s) = lint.mutation.score {
        if s < options.min_mutation_score - EPS {
            let survivors = lint
                .mutants
                .iter()
                .filter(|m| m.kind.in_mutation_score() && !m.caught && !m.equivalent)
                .count();
            lint.problems.push(format!(
                "mutation score {:.0}% is below {:.0}%: the rubric does not notice {survivors} mutant(s) (the survivors)",
                s * 100.0,
                options.min_mutation_score * 100.0,
            ));
        }
    }

    for c in &rubric.criteria {
        let seen: Vec<bool> = all_scores
            .iter()
            .filter_map(|s| s.criteria.iter().find(|r| r.id == c.id).and_then(|r| r.met))
            .collect();
        if seen.len() >= 2 && seen.iter().all(|m| *m == seen[0]) {
            lint.constant_criteria.push(c.id.clone());
        }
    }
    if !lint.constant_criteria.is_empty() {
        lint.problems.push(format!(
            "criteria with the same result on gold, do-nothing and every mutant (they cannot tell runs apart; add a forbidden action or a mutant they catch, or remove them): {}",
            lint.constant_criteria.join(", ")
        ));
    }
    lint.ok = lint.problems.is_empty();
    Ok(lint)
}
