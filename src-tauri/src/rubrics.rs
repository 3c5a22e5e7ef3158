//! The rubric workspace: a task's rubric as sentences, drafting one from a
//! gold run, checking edits, lint with progress, trying it on a stored
//! run, and saving versions. Thin: the engine's `rubric::document`,
//! `lint`, `survivors` and `derive` do the work.
//!
//! **Where saved rubrics go.** Never into a world's folder (bundled worlds
//! are read-only, and a world's files are its author's): into
//! `<data dir>/rubrics/<world id>/<task id>.toml`, which shadows the
//! world's own file of that task in the app and for
//! `understudy rubric lint --rubrics <that folder>`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tauri::{Emitter, Manager, State};
use ts_rs::TS;
use understudy::rubric::compare::{self, RubricComparison};
use understudy::rubric::document::{self, Checked, RubricDoc, TableColumns};
use understudy::rubric::lint::{self, LintOptions, LintProgress, RunResult};
use understudy::rubric::preview::{self, QueryPreview};
use understudy::rubric::survivors::{self, Survivor};
use understudy::rubric::{derive, Rubric};
use understudy::store::{Actor, EpisodeFilter, EpisodeStatus, NewRubricVersion, RubricVersion};
use understudy::world::ToolKind;
use understudy::{Action, Episode, World};

use crate::error::{AppError, AppResult};
use crate::ipc::command;
use crate::service::Service;
use crate::AppState;

/// The event lint progress is sent on: `{ job, done, total }`.
pub const LINT_PROGRESS_EVENT: &str = "rubric-lint-progress";

#[derive(Debug, Clone, Serialize, TS)]
pub struct RubricWorkspaceView {
    pub world_id: String,
    pub world_name: String,
    pub task_id: String,
    pub task_title: String,
    /// The task's rubric, if it has one (saved from the app, or the world's).
    pub rubric: Option<OpenedRubric>,
    /// What "Draft from a gold run" would start from, in a sentence.
    pub draft_from: String,
    pub tools: Vec<ToolChoice>,
    pub tables: Vec<TableColumns>,
    /// Runs the rubric can be tried on.
    pub runs: Vec<RunChoice>,
    pub versions: Vec<RubricVersion>,
    /// Where saving writes.
    pub save_dir: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct OpenedRubric {
    pub doc: RubricDoc,
    pub checked: Checked,
    /// `saved` (edited in the app) or `world` (the world's own file).
    pub origin: String,
    pub path: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ToolChoice {
    pub name: String,
    pub title: String,
    pub writes: bool,
    pub params: Vec<ParamChoice>,
    /// The tool's parameters as the world declares them (JSON Schema): the
    /// argument form is built from it.
    #[ts(type = "Record<string, unknown>")]
    pub schema: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ParamChoice {
    pub name: String,
    /// JSON Schema type: string, number, integer, boolean…
    pub kind: String,
    pub description: String,
    /// Allowed values, when the schema lists them.
    pub choices: Vec<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct RunChoice {
    /// `solution`, or an episode id.
    pub id: String,
    pub label: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct DraftView {
    pub doc: RubricDoc,
    pub checked: Checked,
    /// Which run it was drafted from, in a sentence.
    pub from: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct LintView {
    pub ok: bool,
    /// What failed, in sentences.
    pub problems: Vec<String>,
    pub gold: Vec<LintRun>,
    pub do_nothing: Option<LintRun>,
    pub mutants: u32,
    pub caught: u32,
    pub mutation_score: Option<f64>,
    pub classes: Vec<ClassView>,
    pub survivors: Vec<Survivor>,
    pub millis: f64,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct LintRun {
    pub source: String,
    /// The best score it can reach.
    pub best: f64,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ClassView {
    pub class: String,
    pub label: String,
    pub total: u32,
    pub caught: u32,
    pub equivalent: u32,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct LintProgressEvent {
    pub job: String,
    pub done: u32,
    pub total: u32,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct TryView {
    pub run: String,
    pub value: Option<f64>,
    pub pass: Option<bool>,
    pub criteria: Vec<TryCriterion>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct TryCriterion {
    pub id: String,
    pub sentence: String,
    pub points: f64,
    pub gate: bool,
    pub met: Option<bool>,
    pub earned: f64,
    /// What decided it, in a sentence.
    pub detail: String,
    /// The words of a message that matched.
    pub excerpt: Option<String>,
    /// 1-based steps that decided it.
    pub steps: Vec<u32>,
    /// The rows a state check read.
    #[ts(type = "Array<unknown>")]
    pub rows: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct SavedView {
    pub path: String,
    pub hash: String,
    pub version: String,
    pub versions: Vec<RubricVersion>,
    /// The command that lints the saved file from a terminal.
    pub lint_command: String,
}

/// Where the app saves a world's rubrics (see docs/rubrics.md).
pub(crate) fn overlay_dir(service: &Service, world: &World) -> PathBuf {
    service.data_dir().join("rubrics").join(&world.meta.id)
}

fn invalid(checked: &Checked) -> AppError {
    let n = checked.problems.len();
    AppError::new(
        "rubric_invalid",
        format!(
            "The rubric has {n} problem{} (marked in red). Fix {} first; nothing was changed.",
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "them" }
        ),
    )
}

/// The doc compiled, or an error saying the problems are marked.
fn compiled(world: &Arc<World>, doc: &RubricDoc) -> AppResult<(Checked, Rubric)> {
    match document::check(world, doc) {
        (checked, Some(r)) => Ok((checked, r)),
        (checked, None) => Err(invalid(&checked)),
    }
}

/// The gold a draft starts from: the newest approved episode of the task,
/// else its reference solution.
fn gold_for_draft(
    service: &Service,
    world: &World,
    task_id: &str,
) -> AppResult<(Vec<Action>, String)> {
    let filter = EpisodeFilter {
        world_id: Some(world.meta.id.clone()),
        task_id: Some(task_id.to_string()),
        status: Some(EpisodeStatus::Approved),
        ..EpisodeFilter::default()
    };
    let store = service.store();
    if let Some(e) = store.episodes(&filter)?.into_iter().last() {
        let actions = store.trajectory(&e.id)?.actions();
        return Ok((
            actions,
            format!(
                "the approved run {} (recorded {})",
                short(&e.id),
                day(&e.created_at)
            ),
        ));
    }
    let task = world
        .task(task_id)
        .ok_or_else(|| AppError::not_found(format!("The task \"{task_id}\"")))?;
    Ok((
        derive::solution(task)?,
        "the task's reference solution (no approved run of this task yet)".into(),
    ))
}

fn actor(a: &Actor) -> String {
    match a {
        Actor::Expert { id } => format!("expert {}", short(id)),
        Actor::Agent { model } => format!("agent {model}"),
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

fn day(at: &str) -> &str {
    at.get(..10).unwrap_or(at)
}

fn tools(world: &World) -> Vec<ToolChoice> {
    world
        .tools
        .values()
        .map(|t| {
            let props = t.parameters.get("properties").and_then(|p| p.as_object());
            ToolChoice {
                name: t.name.clone(),
                title: t.title.clone(),
                writes: t.kind == ToolKind::Write,
                schema: t.parameters.clone(),
                params: props
                    .into_iter()
                    .flatten()
                    .map(|(name, p)| ParamChoice {
                        name: name.clone(),
                        kind: p
                            .get("type")
                            .and_then(|v| v.as_str())
                            .unwrap_or("string")
                            .to_string(),
                        description: p
                            .get("description")
                            .and_then(|v| v.as_str())
                            .unwrap_or_default()
                            .to_string(),
                        choices: p
                            .get("enum")
                            .and_then(|v| v.as_array())
                            .into_iter()
                            .flatten()
                            .map(|v| {
                                v.as_str()
                                    .map(str::to_string)
                                    .unwrap_or_else(|| v.to_string())
                            })
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect()
}

fn runs(service: &Service, world: &World, task_id: &str) -> AppResult<Vec<RunChoice>> {
    let mut out = Vec::new();
    if world.task(task_id).is_some_and(|t| !t.solution.is_empty()) {
        out.push(RunChoice {
            id: "solution".into(),
            label: "The task's reference solution".into(),
        });
    }
    let filter = EpisodeFilter {
        world_id: Some(world.meta.id.clone()),
        task_id: Some(task_id.to_string()),
        ..EpisodeFilter::default()
    };
    for e in service.store().episodes(&filter)?.into_iter().rev() {
        if !matches!(
            e.status,
            EpisodeStatus::Submitted | EpisodeStatus::Approved | EpisodeStatus::Rejected
        ) {
            continue;
        }
        out.push(RunChoice {
            label: format!(
                "{} run {} by {}, {}",
                capitalize(e.status.as_str()),
                short(&e.id),
                actor(&e.actor),
                day(&e.created_at)
            ),
            id: e.id,
        });
    }
    Ok(out)
}

/// The actions and seed of a run of `task_id` (`solution`, or a stored
/// episode id), with a label for the window.
/// A run the rubric editor tries a rubric on: the task's reference solution
/// or a stored episode of that task.
struct StoredRun {
    actions: Vec<Action>,
    seed: u64,
    /// How the editor names it ("Run 1a2b3c4d by Dana Lee").
    label: String,
    /// Recorded by an expert: it replays with the lists only experts see.
    expert: bool,
}

fn stored_run(service: &Service, world: &World, task_id: &str, run: &str) -> AppResult<StoredRun> {
    // The reference solution is an expert's run, as gold runs are: it may
    // read the lists only experts see.
    if run == "solution" {
        let task = world
            .task(task_id)
            .ok_or_else(|| AppError::not_found(format!("The task \"{task_id}\"")))?;
        return Ok(StoredRun {
            actions: derive::solution(task)?,
            seed: 0,
            label: "The task's reference solution".to_string(),
            expert: true,
        });
    }
    let record = service.store().episode(run)?;
    if record.task_id != task_id || record.world_id != world.meta.id {
        return Err(AppError::new(
            "wrong_run",
            format!(
                "Run {} is of another task; choose a run of this one.",
                short(&record.id)
            ),
        ));
    }
    Ok(StoredRun {
        actions: service.store().trajectory(run)?.actions(),
        seed: record.seed,
        label: format!("Run {} by {}", short(&record.id), actor(&record.actor)),
        expert: record.actor.is_expert(),
    })
}

fn lint_view(rubric: &Rubric, lint: &lint::TaskLint, millis: f64) -> LintView {
    let run = |r: &RunResult| LintRun {
        source: r.source.clone(),
        best: r.range[1],
    };
    LintView {
        ok: lint.ok,
        problems: lint.problems.clone(),
        gold: lint.gold.iter().map(run).collect(),
        do_nothing: lint.do_nothing.as_ref().map(run),
        mutants: lint.mutation.total as u32,
        caught: lint.mutation.caught as u32,
        mutation_score: lint.mutation.score,
        classes: lint
            .classes
            .iter()
            .map(|c| ClassView {
                class: c.class.name().to_string(),
                label: class_label(c.class.name()).to_string(),
                total: c.total as u32,
                caught: c.caught as u32,
                equivalent: c.equivalent as u32,
            })
            .collect(),
        survivors: survivors::survivors(rubric, lint),
        millis,
    }
}

/// What each class of mutant or cheat tries, for the window.
fn class_label(name: &str) -> &'static str {
    match name {
        "drop-step" => "Leaving out a step",
        "perturb" => "A wrong value in a step",
        "forbidden" => "Doing what the policy forbids",
        "drop-message" => "Not telling the customer",
        "stuffing" => "Listing every possible answer",
        "spray" => "The answer hidden among wrong ones",
        "near-miss" => "An answer that is almost right",
        "refused-attempt" => "Trying another customer's records",
        "disclosure" => "Telling another customer's details",
        "dropped-read" => "Skipping a required look-up",
        "detour" => "A wrong change, undone later",
        _ => "Other",
    }
}

command! {
    /// The rubric workspace of a task: its rubric as sentences (or none
    /// yet), and what the editor offers (tools, tables, runs, versions).
    #[tauri::command(async)]
    pub fn open_rubric(state: State<'_, AppState>, world_id: String, task_id: String) -> AppResult<RubricWorkspaceView> {
        let service = state.service()?;
        let world = service.world(&world_id)?;
        let task = world
            .task(&task_id)
            .ok_or_else(|| AppError::not_found(format!("The task \"{task_id}\"")))?;
        let dir = overlay_dir(service, &world);
        let rubric = document::open(&world, Some(&dir), &task_id)?.map(|(path, doc)| {
            let (checked, _) = document::check(&world, &doc);
            OpenedRubric {
                origin: if path.starts_with(&dir) { "saved" } else { "world" }.into(),
                path: path.display().to_string(),
                doc,
                checked,
            }
        });
        let (_, draft_from) = gold_for_draft(service, &world, &task_id)?;
        Ok(RubricWorkspaceView {
            world_id: world.meta.id.clone(),
            world_name: world.meta.name.clone(),
            task_title: task.title.clone(),
            task_id,
            rubric,
            draft_from,
            tools: tools(&world),
            tables: document::tables(&world)?,
            runs: runs(service, &world, &task.id)?,
            versions: service.store().rubric_versions(&world.meta.id, &task.id)?,
            save_dir: dir.display().to_string(),
        })
    }
}

command! {
    /// Drafts a rubric from the task's newest approved run (or its
    /// reference solution when there is none).
    #[tauri::command(async)]
    pub fn draft_rubric(state: State<'_, AppState>, world_id: String, task_id: String) -> AppResult<DraftView> {
        let service = state.service()?;
        let world = service.world(&world_id)?;
        let (gold, from) = gold_for_draft(service, &world, &task_id)?;
        let doc = document::draft(&world, &task_id, gold, &from)?;
        let (checked, _) = document::check(&world, &doc);
        Ok(DraftView { doc, checked, from })
    }
}

command! {
    /// Checks a rubric being edited: each criterion's sentence, and each
    /// problem at its criterion and field.
    #[tauri::command(async)]
    pub fn check_rubric(state: State<'_, AppState>, world_id: String, doc: RubricDoc) -> AppResult<Checked> {
        let world = state.service()?.world(&world_id)?;
        Ok(document::check(&world, &doc).0)
    }
}

command! {
    /// Lints a rubric being edited (gold = 1, doing nothing = 0, every
    /// mutant and cheat class), sending `{ job, done, total }` on the
    /// `rubric-lint-progress` event after every run.
    #[tauri::command(async)]
    pub fn lint_rubric(window: tauri::Window, world_id: String, doc: RubricDoc, job: String) -> AppResult<LintView> {
        let started = Instant::now();
        let state = window.state::<AppState>();
        let service = state.service()?;
        let world = service.world(&world_id)?;
        let (_, rubric) = compiled(&world, &doc)?;
        let rubric = Arc::new(rubric);
        let progress = |p: LintProgress| {
            let _ = window.emit(
                LINT_PROGRESS_EVENT,
                LintProgressEvent {
                    job: job.clone(),
                    done: p.done as u32,
                    total: p.total as u32,
                },
            );
        };
        let report = lint::lint_rubric(
            &world,
            Arc::clone(&rubric),
            Some(service.store()),
            &LintOptions::default(),
            &progress,
        )?;
        Ok(lint_view(&rubric, &report, started.elapsed().as_secs_f64() * 1000.0))
    }
}

command! {
    /// Scores a run (`solution` or a stored episode id) with the rubric
    /// being edited, with each criterion's evidence.
    #[tauri::command(async)]
    pub fn try_rubric(state: State<'_, AppState>, world_id: String, doc: RubricDoc, run: String) -> AppResult<TryView> {
        let service = state.service()?;
        let world = service.world(&world_id)?;
        let (checked, rubric) = compiled(&world, &doc)?;
        let StoredRun { actions, seed, label, expert } = stored_run(service, &world, &rubric.task_id, &run)?;
        let mut episode = Episode::new(Arc::clone(&world))?;
        episode.set_expert(expert);
        let score = understudy::rubric::replay_and_score(&mut episode, &rubric, seed, &actions, &[])?;
        let sentence_of = |id: &str| {
            doc.criteria
                .iter()
                .position(|c| c.get("id").and_then(|v| v.as_str()) == Some(id))
                .and_then(|i| checked.sentences.get(i).cloned())
                .unwrap_or_else(|| id.to_string())
        };
        Ok(TryView {
            run: label,
            value: score.value,
            pass: score.pass,
            criteria: score
                .criteria
                .iter()
                .map(|c| TryCriterion {
                    sentence: sentence_of(&c.id),
                    id: c.id.clone(),
                    points: c.points,
                    gate: c.gate,
                    met: c.met,
                    earned: c.earned,
                    detail: c.error.clone().unwrap_or_else(|| c.evidence.detail.clone()),
                    excerpt: c.evidence.excerpt.clone(),
                    steps: c.evidence.steps.iter().map(|s| *s as u32 + 1).collect(),
                    rows: c.evidence.rows.clone().unwrap_or_default(),
                })
                .collect(),
        })
    }
}

command! {
    /// Saves the rubric as a new version: the canonical file in the app's
    /// rubric folder (only if it compiles; nothing is written otherwise),
    /// recorded in the store with its content hash.
    #[tauri::command(async)]
    pub fn save_rubric(state: State<'_, AppState>, world_id: String, doc: RubricDoc) -> AppResult<SavedView> {
        let service = state.service()?;
        let world = service.world(&world_id)?;
        let (checked, _) = compiled(&world, &doc)?;
        let dir = overlay_dir(service, &world);
        let saved = document::save(&world, &dir, &doc)?;
        let expert = service.current_expert()?.map(|e| e.id);
        let path = saved.path.display().to_string();
        service.store().save_rubric_version(&NewRubricVersion {
            world_id: &world.meta.id,
            task_id: &doc.task,
            version: &saved.version,
            hash: &saved.hash,
            path: &path,
            content: &checked.toml,
            saved_by: expert.as_deref(),
        })?;
        crate::hub_work::rubric_saved(&state, &world.meta.id, &doc.task, &saved.hash)?;
        Ok(SavedView {
            lint_command: format!(
                "understudy rubric lint --world {} --rubrics {} --task {}",
                world.root.display(),
                dir.display(),
                doc.task
            ),
            path,
            hash: saved.hash,
            version: saved.version,
            versions: service.store().rubric_versions(&world.meta.id, &doc.task)?,
        })
    }
}

command! {
    /// What a state check's query reads on a run's final state (`solution`
    /// or a stored episode id), replayed by the engine: at most 50 rows,
    /// read-only; a query that cannot run says why in plain words.
    #[tauri::command(async)]
    pub fn preview_query(state: State<'_, AppState>, world_id: String, task_id: String, run: String, query: String) -> AppResult<QueryPreview> {
        let service = state.service()?;
        let world = service.world(&world_id)?;
        let run = stored_run(service, &world, &task_id, &run)?;
        Ok(preview::preview_after(&world, &task_id, run.seed, &run.actions, run.expert, &query)?)
    }
}

command! {
    /// What differs between two saved versions of a task's rubric (by their
    /// ids in the version list): criteria added, removed and changed, as
    /// sentences.
    #[tauri::command(async)]
    pub fn compare_rubric_versions(state: State<'_, AppState>, world_id: String, task_id: String, from: u32, to: u32) -> AppResult<RubricComparison> {
        let service = state.service()?;
        let world = service.world(&world_id)?;
        let versions = service.store().rubric_versions(&world.meta.id, &task_id)?;
        let doc = |id: u32| -> AppResult<RubricDoc> {
            let v = versions
                .iter()
                .find(|v| v.id == i64::from(id))
                .ok_or_else(|| AppError::not_found(format!("Saved version {id} of this rubric")))?;
            Ok(RubricDoc::parse(&task_id, &v.path, &v.content)?)
        };
        let (older, newer) = if from <= to { (from, to) } else { (to, from) };
        Ok(compare::compare(&world, &doc(older)?, &doc(newer)?))
    }
}
