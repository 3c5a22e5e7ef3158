//! `understudy run`: apply a list of actions to a task and print what
//! happened, as JSON. The quickest way to try a world by hand; with
//! `--store`, also the command-line way to record a gold run
//! (see [`record`](crate::record)).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::{json, Value};
use understudy::world::SolutionStep;
use understudy::{Action, Episode};

#[derive(Args)]
pub struct RunArgs {
    /// The world folder.
    #[arg(long)]
    world: PathBuf,
    /// The task id.
    #[arg(long)]
    task: String,
    /// A JSON file with a list of actions (`-` for standard input); with
    /// `--store`, each may carry a `why` (its rationale).
    #[arg(long, conflicts_with = "solution")]
    actions: Option<PathBuf>,
    /// Run the task's own reference solution (with each step's `why`).
    #[arg(long)]
    solution: bool,
    /// Seed for the world's random().
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Record the run as an episode in this store (created if missing) and
    /// submit it for review; prints the episode's id instead of the JSON.
    #[arg(long, requires = "expert")]
    store: Option<PathBuf>,
    /// With `--store`: the id of the expert who performed it (added to the
    /// store if new).
    #[arg(long, value_name = "ID", requires = "store")]
    expert: Option<String>,
    /// With `--store`: the expert's name (sets it; defaults to the id for a
    /// new expert).
    #[arg(long, value_name = "NAME", requires = "expert")]
    expert_name: Option<String>,
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let world = super::load_world(&args.world)?;
    let task = world
        .task(&args.task)
        .with_context(|| format!("world `{}` has no task `{}`", world.meta.id, args.task))?;
    let steps: Vec<SolutionStep> = if args.solution {
        task.solution_steps()?
    } else {
        let raw = read_actions(args.actions.as_ref())?;
        if args.store.is_some() {
            // Recorded gold is read as strictly as a task's solution.
            raw.iter()
                .enumerate()
                .map(|(i, a)| {
                    SolutionStep::from_json(a).map_err(|e| anyhow::anyhow!("action {}: {e}", i + 1))
                })
                .collect::<anyhow::Result<_>>()?
        } else {
            raw.iter()
                .enumerate()
                .map(|(i, a)| {
                    Action::from_json(a)
                        .map(|action| SolutionStep { action, why: None })
                        .map_err(|e| anyhow::anyhow!("action {}: {e}", i + 1))
                })
                .collect::<anyhow::Result<_>>()?
        }
    };
    if let (Some(store), Some(expert)) = (&args.store, &args.expert) {
        let target = crate::record::Target {
            store,
            expert,
            expert_name: args.expert_name.as_deref(),
        };
        return crate::record::record(world, &args.task, args.seed, &steps, &target);
    }
    let mut episode = Episode::new(world.clone())?;
    let reset = episode.reset(&args.task, args.seed)?;
    let mut out_steps = Vec::new();
    for SolutionStep { action, .. } in &steps {
        if episode.is_done() {
            break;
        }
        let out = episode.step(action)?;
        out_steps.push(json!({"action": action, "observation": out.observation, "terminated": out.terminated, "truncated": out.truncated}));
    }
    let out = json!({
        "world": world.meta.id,
        "task": args.task,
        "reset": reset.observation,
        "steps": out_steps,
        "changes": episode.changes()?,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::SUCCESS)
}

/// The actions of a file (or standard input): a JSON list, or an object
/// with an `actions` list.
fn read_actions(path: Option<&PathBuf>) -> anyhow::Result<Vec<Value>> {
    let text = match path {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?
        }
        _ => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("reading actions from standard input")?;
            s
        }
    };
    let value: Value = serde_json::from_str(&text).context("the actions are not valid JSON")?;
    match value {
        Value::Array(items) => Ok(items),
        Value::Object(ref o) if o.get("actions").is_some_and(Value::is_array) => {
            Ok(o["actions"].as_array().cloned().unwrap_or_default())
        }
        _ => anyhow::bail!("expected a JSON list of actions, or an object with an `actions` list"),
    }
}
