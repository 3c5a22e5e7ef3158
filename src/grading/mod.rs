//! Experts grading agent runs: importing the runs, one grader's sheet for
//! one run, their grades and overrides, how much graders agree, and a
//! task's scores at a glance ([`dashboard`]).
//!
//! A run's criteria are of two sorts. Automatically checked ones (state,
//! action, message, scope) come with the check's verdict and evidence; a
//! grader who disagrees overrides it with a reason, stored beside the
//! automatic score, which is never changed. Judged ones are pending until a
//! grader grades them (met or not met, with a reason: the rubric format's
//! scale for judged criteria). Each grader's grades are their own, so
//! several graders can grade one run and their agreement be measured
//! ([`report`]); the score's usual rule, the latest grade of a judged
//! criterion counts, is unchanged.
//!
//! **Invariant:** the automatic score is computed by replaying the run's
//! actions (never from a state anyone supplies), and the first one computed
//! under a rubric version is stored, so the original stays on record.

pub mod agreement;
pub mod dashboard;
mod import;
pub mod judge_agreement;
pub mod progress;
pub mod report;
mod sheet;
mod verdicts;

use std::path::Path;
use std::sync::Arc;

pub use dashboard::{task_dashboard, TaskDashboard};
pub use import::import_agent_runs;
pub use judge_agreement::{judge_agreement, JudgeAgreement, JudgeCriterionAgreement};
pub use progress::{people_progress, PeopleProgress};
pub use report::{agreement_report, Agreement, AgreementReport, CriterionAgreement, Method};
pub use sheet::{met_at_level, Grade, GradeInput, GradingSheet, RunGrader, SheetCriterion};

use crate::episode::Episode;
use crate::error::{Error, Result};
use crate::rubric::{self, Rubric};
use crate::store::{ScoreRecord, Store};
use crate::trajectory::Trajectory;
use crate::world::World;

/// The rubric a task is graded with: the one saved from the app in
/// `overlay` (a folder of `<task>.toml` files for this world) when there is
/// one, else the world's own; `None` when the task has no rubric.
pub fn rubric_of(
    world: &Arc<World>,
    overlay: Option<&Path>,
    task_id: &str,
) -> Result<Option<Arc<Rubric>>> {
    if let Some(path) = overlay.map(|d| d.join(format!("{task_id}.toml"))) {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let source = path.display().to_string();
                return Rubric::from_str(world, task_id, &source, &text).map(|r| Some(Arc::new(r)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        }
    }
    Rubric::load(world, task_id)
}

/// The automatic score of a stored run under `rubric`: its actions replayed
/// and scored with no grades (judged criteria pending). The first score a
/// run gets under this rubric, world and task version is saved, so the
/// original stays whatever graders later say.
pub fn automatic_score(
    store: &Store,
    world: &Arc<World>,
    rubric: &Rubric,
    run: &Trajectory,
) -> Result<rubric::Score> {
    let mut episode = Episode::new(Arc::clone(world))?;
    episode.set_expert(run.record.actor.is_expert());
    let mut score =
        rubric::replay_and_score(&mut episode, rubric, run.record.seed, &run.actions(), &[])?;
    score.episode_id = Some(run.record.id.clone());
    let already = store.scores(&run.record.id)?.into_iter().any(|s| {
        s.record.rubric_hash == score.rubric_hash
            && s.record.world_hash == score.world_hash
            && s.record.task_hash == score.task_hash
    });
    if !already && !store.is_read_only() {
        store.save_scores(&[ScoreRecord::try_from(&score)?])?;
    }
    Ok(score)
}
