//! `understudy run`: apply a list of actions to a task and print what
//! happened, as JSON. The quickest way to try a world by hand.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::{json, Value};
use understudy::{Action, Episode};

#[derive(Args)]
pub struct RunArgs {
    /// The world folder.
    #[arg(long)]
    world: PathBuf,
    /// The task id.
    #[arg(long)]
    task: String,
    /// A JSON file with a list of actions (`-` for standard input).
    #[arg(long, conflicts_with = "solution")]
    actions: Option<PathBuf>,
    /// Run the task's own reference solution.
    #[arg(long)]
    solution: bool,
    /// Seed for the world's random().
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let world = super::load_world(&args.world)?;
    let task = world
        .task(&args.task)
        .with_context(|| format!("world `{}` has no task `{}`", world.meta.id, args.task))?;
    let raw: Vec<Value> = if args.solution {
        task.solution.clone()
    } else {
        let text = match &args.actions {
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
            Value::Array(items) => items,
            Value::Object(ref o) if o.get("actions").is_some_and(Value::is_array) => {
                o["actions"].as_array().cloned().unwrap_or_default()
            }
            _ => anyhow::bail!(
                "expected a JSON list of actions, or an object with an `actions` list"
            ),
        }
    };
    let actions = raw
        .iter()
        .enumerate()
        .map(|(i, a)| Action::from_json(a).map_err(|e| anyhow::anyhow!("action {}: {e}", i + 1)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut episode = Episode::new(world.clone())?;
    let reset = episode.reset(&args.task, args.seed)?;
    let mut steps = Vec::new();
    for action in &actions {
        if episode.is_done() {
            break;
        }
        let out = episode.step(action)?;
        steps.push(json!({"action": action, "observation": out.observation, "terminated": out.terminated, "truncated": out.truncated}));
    }
    let out = json!({
        "world": world.meta.id,
        "task": args.task,
        "reset": reset.observation,
        "steps": steps,
        "changes": episode.changes()?,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::SUCCESS)
}
