//! Grading agent runs: import them from a file, a grader's sheet for one
//! run (grade judged criteria, override automatic ones), who grades which
//! run, and the graders' agreement per task. The grader is the expert
//! profile using the app. Every rule lives in the engine
//! ([`understudy::grading`]); this only routes and names things.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use tauri::State;
use ts_rs::TS;
use understudy::grading::{
    self, AgreementReport, GradeInput, GradingSheet, JudgeAgreement, RunGrader,
};
use understudy::rubric::Rubric;
use understudy::store::{Actor, EpisodeFilter};
use understudy::World;

use crate::episodes::StepView;
use crate::error::{AppError, AppResult};
use crate::experts::ExpertView;
use crate::ipc::command;
use crate::rubrics::overlay_dir;
use crate::service::Service;
use crate::world_labels::WorldLabels;
use crate::worlds::TaskBrief;
use crate::AppState;

/// The runs to grade, as the grading screen lists them.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct GradingView {
    /// Who is grading: the expert using the app.
    pub grader: Option<ExpertView>,
    /// Everyone who can be asked to grade.
    pub experts: Vec<ExpertView>,
    /// Finished agent runs, oldest first.
    pub runs: Vec<GradingRow>,
}

/// One agent run in the grading list.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct GradingRow {
    pub episode_id: String,
    pub world_id: String,
    pub world_name: String,
    pub task_id: String,
    pub task_title: String,
    /// The agent's model.
    pub model: String,
    /// Steps kept (undone ones left out).
    pub steps: u32,
    pub created_at: String,
    /// Who is asked to grade it, and whether they are done.
    pub graders: Vec<RowGrader>,
    /// The task has a rubric to grade with.
    pub has_rubric: bool,
}

/// A grader of one run.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct RowGrader {
    pub id: String,
    pub name: String,
    pub done: bool,
}

/// What importing a file did: everything stored, or nothing and why.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ImportView {
    /// The file read.
    pub file: String,
    /// Runs stored (0 when the file was refused).
    pub stored: u32,
    /// Their steps.
    pub steps: u32,
    /// Why the file was refused, line by line; empty when it was stored.
    pub problems: Vec<LineProblem>,
    /// What did not stop the import (e.g. a world changed since recording).
    pub warnings: Vec<String>,
}

/// One problem of an imported file.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct LineProblem {
    /// 1-based line of the file, when the problem has one.
    pub line: Option<u32>,
    pub message: String,
}

/// One grader's sheet for one run, with the run itself to read.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct SheetView {
    pub run: GradingRow,
    pub task: Option<TaskBrief>,
    pub sheet: GradingSheet,
    /// The run's kept steps, which the evidence points at (1-based).
    pub steps: Vec<StepView>,
    pub final_message: Option<String>,
    /// What the world calls the tables and columns the evidence names.
    #[serde(flatten)]
    #[ts(flatten)]
    pub labels: WorldLabels,
}

/// The agreement of the graders of one task's runs.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct AgreementView {
    pub world_id: String,
    pub task_id: String,
    pub task_title: String,
    /// The graders' names, in the report's order.
    pub grader_names: Vec<String>,
    pub report: AgreementReport,
    /// A judge plug-in's grades against the people's, per judged criterion
    /// (nothing to show unless a judge graded some of the runs).
    pub judge: JudgeAgreement,
}

/// The expert using the app, who grades; refused without a profile.
fn grader(service: &Service) -> AppResult<ExpertView> {
    service.current_expert()?.ok_or_else(|| {
        AppError::new(
            "no_expert",
            "Choose your expert profile on the start screen first: grades are recorded under the grader's name.",
        )
    })
}

/// The rubric a task is graded with (the app's saved one first).
fn rubric(service: &Service, world: &Arc<World>, task_id: &str) -> AppResult<Arc<Rubric>> {
    let overlay = overlay_dir(service, world);
    grading::rubric_of(world, Some(&overlay), task_id)?.ok_or_else(|| {
        AppError::new(
            "no_rubric",
            "This task has no rubric yet, so there is nothing to grade against. Write one in the task's Rubric workspace first.",
        )
    })
}

/// Finished agent runs (all of them, or one task's), as listed.
fn rows(service: &Service, filter: EpisodeFilter) -> AppResult<Vec<GradingRow>> {
    let names: HashMap<String, String> = service
        .experts()?
        .into_iter()
        .map(|e| (e.id, e.name))
        .collect();
    let mut graders: HashMap<String, Vec<RowGrader>> = HashMap::new();
    for a in service.store().assignments()? {
        graders.entry(a.episode_id).or_default().push(RowGrader {
            name: names
                .get(&a.grader)
                .cloned()
                .unwrap_or_else(|| a.grader.clone()),
            id: a.grader,
            done: a.done_at.is_some(),
        });
    }
    let filter = EpisodeFilter {
        actor_kind: Some("agent".into()),
        ..filter
    };
    let mut out = Vec::new();
    for s in service.store().episode_summaries(&filter)? {
        let e = s.record;
        if e.status.is_open() {
            continue;
        }
        let Actor::Agent { model } = &e.actor else {
            continue;
        };
        let world = service.world(&e.world_id).ok();
        let task = world.as_ref().and_then(|w| w.task(&e.task_id));
        let has_rubric = world
            .as_ref()
            .is_some_and(|w| rubric(service, w, &e.task_id).is_ok());
        out.push(GradingRow {
            world_name: world
                .as_ref()
                .map(|w| w.meta.name.clone())
                .unwrap_or_else(|| e.world_id.clone()),
            task_title: task
                .map(|t| t.title.clone())
                .unwrap_or_else(|| e.task_id.clone()),
            graders: graders.remove(&e.id).unwrap_or_default(),
            model: model.clone(),
            steps: s.kept_steps,
            created_at: e.created_at,
            has_rubric,
            episode_id: e.id,
            world_id: e.world_id,
            task_id: e.task_id,
        });
    }
    Ok(out)
}

/// The grading list.
pub fn view(service: &Service) -> AppResult<GradingView> {
    Ok(GradingView {
        grader: service.current_expert()?,
        experts: service.experts()?,
        runs: rows(service, EpisodeFilter::default())?,
    })
}

/// Reads and imports the file at `path`; a refused file is not an error
/// but the list of its problems (nothing was stored).
pub fn import(service: &Service, path: &str) -> AppResult<ImportView> {
    let file = std::path::Path::new(path);
    let refused = |problems: Vec<LineProblem>| ImportView {
        file: path.to_string(),
        stored: 0,
        steps: 0,
        problems,
        warnings: Vec::new(),
    };
    let bytes = std::fs::read(file).map_err(|e| {
        AppError::new(
            "io",
            format!(
                "The file {path} could not be read. Check that it exists and that you may open it."
            ),
        )
        .with_detail(e.to_string())
    })?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(refused(vec![LineProblem {
            line: None,
            message: "This is not a text file. Choose the agent runs file (.jsonl) that `understudy export --format native` writes.".into(),
        }]));
    };
    let worlds = service.worlds_dir().ok_or_else(|| {
        AppError::new(
            "no_worlds",
            "No worlds folder was found, so the runs' tasks cannot be checked. Start the app with --worlds-dir.",
        )
    })?;
    match grading::import_agent_runs(service.store(), &text, path, worlds) {
        Ok(summary) => Ok(ImportView {
            file: path.to_string(),
            stored: summary.episodes as u32,
            steps: summary.steps as u32,
            problems: Vec::new(),
            warnings: summary.warnings,
        }),
        Err(understudy::Error::InvalidInput { problems, .. }) => {
            Ok(refused(problems.iter().map(|p| line_problem(p)).collect()))
        }
        Err(e) => Err(e.into()),
    }
}

/// `line 3: what` as line 3 and "What".
fn line_problem(p: &str) -> LineProblem {
    let parsed = p.strip_prefix("line ").and_then(|rest| {
        let (n, what) = rest.split_once(": ")?;
        Some((n.parse::<u32>().ok()?, what))
    });
    match parsed {
        Some((line, what)) => LineProblem {
            line: Some(line),
            message: capitalize(what),
        },
        None => LineProblem {
            line: None,
            message: capitalize(p),
        },
    }
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

/// The row of one run.
fn row(service: &Service, episode_id: &str) -> AppResult<GradingRow> {
    let record = service.store().episode(episode_id)?;
    let filter = EpisodeFilter {
        world_id: Some(record.world_id.clone()),
        task_id: Some(record.task_id.clone()),
        ..EpisodeFilter::default()
    };
    rows(service, filter)?
        .into_iter()
        .find(|r| r.episode_id == episode_id)
        .ok_or_else(|| {
            AppError::new(
                "not_gradable",
                "Only finished agent runs are graded here; this one is not an agent's finished run.",
            )
        })
}

/// The sheet `make` returns, with the run around it.
fn sheet_view(
    service: &Service,
    episode_id: &str,
    make: impl FnOnce(RunGrader<'_>) -> understudy::Result<GradingSheet>,
) -> AppResult<SheetView> {
    let who = grader(service)?;
    let run = row(service, episode_id)?;
    let world = service.world(&run.world_id)?;
    let rubric = rubric(service, &world, &run.task_id)?;
    let sheet = make(RunGrader {
        store: service.store(),
        world: &world,
        rubric: &rubric,
        episode_id,
        grader: &who.id,
    })?;
    let trajectory = service.store().trajectory(episode_id)?;
    Ok(SheetView {
        task: world
            .task(&run.task_id)
            .map(|t| TaskBrief::new(t, &world.meta.user)),
        steps: trajectory.kept_steps().map(StepView::new).collect(),
        final_message: trajectory.record.final_message.clone(),
        labels: WorldLabels::of(&world),
        run: row(service, episode_id)?,
        sheet,
    })
}

/// One task's agreement report.
pub fn agreement(service: &Service, world_id: &str, task_id: &str) -> AppResult<AgreementView> {
    let world = service.world(world_id)?;
    let rubric = rubric(service, &world, task_id)?;
    let runs: Vec<String> = rows(
        service,
        EpisodeFilter {
            world_id: Some(world_id.to_string()),
            task_id: Some(task_id.to_string()),
            ..EpisodeFilter::default()
        },
    )?
    .into_iter()
    .map(|r| r.episode_id)
    .collect();
    let report = grading::agreement_report(service.store(), &world, &rubric, &runs)?;
    let judge = grading::judge_agreement(service.store(), &rubric, &runs)?;
    let names: HashMap<String, String> = service
        .experts()?
        .into_iter()
        .map(|e| (e.id, e.name))
        .collect();
    Ok(AgreementView {
        world_id: world_id.to_string(),
        task_id: task_id.to_string(),
        task_title: world
            .task(task_id)
            .map(|t| t.title.clone())
            .unwrap_or_else(|| task_id.to_string()),
        grader_names: report
            .graders
            .iter()
            .map(|g| names.get(g).cloned().unwrap_or_else(|| g.clone()))
            .collect(),
        report,
        judge,
    })
}

command! {
    /// The agent runs to grade, with who grades each.
    #[tauri::command(async)]
    pub fn grading_runs(state: State<'_, AppState>) -> AppResult<GradingView> {
        view(state.service()?)
    }
}

command! {
    /// Imports agent runs from a native episodes JSONL file: all of them,
    /// or none with the problems line by line.
    #[tauri::command(async)]
    pub fn import_agent_runs(state: State<'_, AppState>, path: String) -> AppResult<ImportView> {
        import(state.service()?, &path)
    }
}

command! {
    /// Asks an expert to grade a run (several graders may grade one run).
    #[tauri::command(async)]
    pub fn assign_grader(state: State<'_, AppState>, episode_id: String, grader_id: String) -> AppResult<GradingView> {
        let service = state.service()?;
        service.store().assign_grader(&episode_id, &grader_id)?;
        crate::hub_work::graded(&state, &episode_id)?;
        view(service)
    }
}

command! {
    /// The grading sheet of a run for the expert using the app.
    #[tauri::command(async)]
    pub fn open_grading(state: State<'_, AppState>, episode_id: String) -> AppResult<SheetView> {
        let service = state.service()?;
        sheet_view(service, &episode_id, |g| g.sheet())
    }
}

command! {
    /// Grades one criterion with a reason: a judged one, or an override of
    /// an automatic check (the check's result is kept).
    #[tauri::command(async)]
    pub fn grade_criterion(state: State<'_, AppState>, episode_id: String, grade: GradeInput) -> AppResult<SheetView> {
        let service = state.service()?;
        let view = sheet_view(service, &episode_id, |g| g.grade(&grade))?;
        crate::hub_work::graded(&state, &episode_id)?;
        Ok(view)
    }
}

command! {
    /// Marks the grader's work on a run done (every judged criterion graded).
    #[tauri::command(async)]
    pub fn finish_grading(state: State<'_, AppState>, episode_id: String) -> AppResult<SheetView> {
        let service = state.service()?;
        let view = sheet_view(service, &episode_id, |g| g.finish())?;
        crate::hub_work::graded(&state, &episode_id)?;
        Ok(view)
    }
}

command! {
    /// How much the graders of a task's runs agree, per criterion and overall.
    #[tauri::command(async)]
    pub fn grading_agreement(state: State<'_, AppState>, world_id: String, task_id: String) -> AppResult<AgreementView> {
        agreement(state.service()?, &world_id, &task_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::{profile, service};

    const RUNS: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests-e2e/data/agent-runs.jsonl"
    );

    #[test]
    fn a_refused_file_lists_its_problems_by_line_and_stores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        let bad = dir.path().join("bad.jsonl");
        let good = std::fs::read_to_string(RUNS).unwrap();
        std::fs::write(&bad, format!("{good}{{oops\n")).unwrap();
        let view = import(&s, &bad.display().to_string()).unwrap();
        assert_eq!(view.stored, 0);
        let last = good.lines().count() as u32 + 1;
        assert_eq!(view.problems.len(), 1, "{:?}", view.problems);
        assert_eq!(view.problems[0].line, Some(last));
        assert!(view.problems[0].message.starts_with("Not valid JSON"));
        assert!(super::view(&s).unwrap().runs.is_empty());

        let err = import(&s, "/no/such/file.jsonl").unwrap_err();
        assert_eq!(err.code, "io");
        let binary = dir.path().join("bin.jsonl");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        let view = import(&s, &binary.display().to_string()).unwrap();
        assert_eq!((view.stored, view.problems[0].line), (0, None));
    }

    #[test]
    fn two_graders_grade_a_run_and_see_their_agreement() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        let view = import(&s, RUNS).unwrap();
        assert!(view.problems.is_empty(), "{:?}", view.problems);
        assert!(view.stored >= 1);
        let runs = super::view(&s).unwrap().runs;
        let run = runs
            .iter()
            .find(|r| r.task_id == "cancel-no-refund")
            .expect("a run to grade");
        assert!(run.has_rubric);

        let err = sheet_view(&s, &run.episode_id, |_| unreachable!()).unwrap_err();
        assert_eq!(err.code, "no_expert");
        let ana = profile(&s, "Ana Ruiz");
        let sheet = sheet_view(&s, &run.episode_id, |g| g.sheet()).unwrap();
        assert_eq!(sheet.sheet.grader, ana);
        assert!(!sheet.steps.is_empty());
        let grade = |who: &str, met: bool| {
            s.select_expert(who).unwrap();
            sheet_view(&s, &run.episode_id, |g| {
                g.grade(&GradeInput {
                    criterion_id: "kind-and-clear".into(),
                    met,
                    reason: "Read the reply.".into(),
                    level: None,
                })
            })
            .unwrap()
        };
        grade(&ana, true);
        let ben = profile(&s, "Ben Okoro");
        let after = grade(&ben, true);
        assert_eq!(
            after
                .run
                .graders
                .iter()
                .map(|g| g.name.as_str())
                .collect::<Vec<_>>(),
            ["Ana Ruiz", "Ben Okoro"]
        );
        let report = agreement(&s, &run.world_id, &run.task_id).unwrap();
        assert_eq!(report.grader_names, ["Ana Ruiz", "Ben Okoro"]);
        assert_eq!(report.report.rubric.method, grading::Method::CohenKappa);
    }

    #[test]
    fn problems_split_into_line_and_words() {
        assert_eq!(
            line_problem("line 12: episode x is already in the store"),
            LineProblem {
                line: Some(12),
                message: "Episode x is already in the store".into()
            }
        );
        assert_eq!(line_problem("something else").line, None);
    }
}
