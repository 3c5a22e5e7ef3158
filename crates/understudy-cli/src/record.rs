//! `understudy run --store`: record a run as an expert's episode through
//! the engine's [`Recorder`], the path the desktop app records by, so a
//! run recorded here replays, scores and exports exactly like one recorded
//! there. The episode is submitted at the end, ready for `understudy review`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use understudy::recorder::Recorder;
use understudy::store::{Actor, Store};
use understudy::world::SolutionStep;
use understudy::World;

/// Where a run is recorded, and by whom.
pub struct Target<'a> {
    pub store: &'a Path,
    pub expert: &'a str,
    pub expert_name: Option<&'a str>,
}

/// Records `steps` (each with its rationale) as one episode of `task` and
/// submits it; prints its id on standard output and what happened on
/// standard error. A step a guard or the arguments check refused is
/// recorded as the app records it (an error observation) and reported; an
/// engine error abandons the episode, so nothing half-run is submitted.
pub fn record(
    world: Arc<World>,
    task: &str,
    seed: u64,
    steps: &[SolutionStep],
    target: &Target<'_>,
) -> anyhow::Result<ExitCode> {
    let store = Arc::new(Store::open(target.store)?);
    let expert = store.ensure_expert(target.expert, target.expert_name)?;
    let actor = Actor::Expert {
        id: expert.id.clone(),
    };
    let mut rec = Recorder::start(store, world, task, actor, seed)?;
    let id = rec.record().id.clone();
    let mut refused = 0;
    for (i, step) in steps.iter().enumerate() {
        if rec.is_done() {
            eprintln!(
                "warning: the task ended after step {i}; the {} action(s) after it were not recorded",
                steps.len() - i
            );
            break;
        }
        let recorded = match rec.step(step.action.clone(), step.why.clone()) {
            Ok(r) => r,
            Err(e) => {
                let abandoned = match rec.abandon() {
                    Ok(()) => "abandoned".to_string(),
                    Err(a) => format!("left open ({a})"),
                };
                anyhow::bail!(
                    "step {} ({}): {e}; episode {id} was {abandoned}, not submitted",
                    i + 1,
                    describe(step)
                );
            }
        };
        if !recorded.record.observation.ok {
            refused += 1;
            eprintln!(
                "refused: step {} ({}) was recorded as failed: {}",
                i + 1,
                describe(step),
                recorded.record.observation.text
            );
        }
    }
    rec.submit(None)?;
    let kept = rec.trajectory().kept_steps().count();
    let refused_note = match refused {
        0 => String::new(),
        n => format!(", {n} of them refused"),
    };
    eprintln!(
        "recorded episode {id} of task {task} by expert {} ({kept} step(s){refused_note}); submitted for review in {}",
        expert.id,
        target.store.display()
    );
    println!("{id}");
    Ok(ExitCode::SUCCESS)
}

/// A step as people name it: its tool, or "message".
fn describe(step: &SolutionStep) -> String {
    match step.action.tool_name() {
        Some(tool) => format!("`{tool}`"),
        None => "message".into(),
    }
}
