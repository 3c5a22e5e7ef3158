//! `understudy world check|describe`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;
use std::sync::Arc;

use understudy::diagnostics::Diagnostic;
use understudy::rubric::RubricSet;
use understudy::{Error, World};

#[derive(Subcommand)]
pub enum WorldCommand {
    /// Validate a world folder; print every problem and exit non-zero if any.
    Check {
        dir: PathBuf,
        /// Print the problems as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a world's tools, views and tasks.
    Describe {
        dir: PathBuf,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: WorldCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        WorldCommand::Check { dir, json } => check(dir, json),
        WorldCommand::Describe { dir, json } => describe(dir, json),
    }
}

/// Checks the whole world: its files, then its rubrics (`rubrics/`), in
/// one format, so one command says whether a world is ready.
fn check(dir: PathBuf, as_json: bool) -> anyhow::Result<ExitCode> {
    let world = match World::load(&dir) {
        Ok(world) => Arc::new(world),
        Err(Error::WorldInvalid { path, problems }) => {
            return report_problems(&path, &problems, as_json)
        }
        Err(e) => return Err(e.into()),
    };
    let rubrics = match RubricSet::load(&world) {
        Ok(set) => set,
        Err(Error::RubricInvalid { problems, .. }) => {
            return report_problems(&dir.display().to_string(), &problems, as_json)
        }
        Err(e) => return Err(e.into()),
    };
    let without: Vec<&String> = world
        .tasks
        .keys()
        .filter(|t| rubrics.get(t).is_none())
        .collect();
    if as_json {
        println!(
            "{}",
            json!({"ok": true, "world": world.meta.id, "version": world.meta.version, "content_hash": world.content_hash, "rubrics": rubrics.rubrics.len(), "tasks_without_rubric": without, "problems": []})
        );
    } else {
        println!(
            "ok: {} {} — {} tools, {} views, {} tasks, {} tables, {} rubrics (hash {})",
            world.meta.id,
            world.meta.version,
            world.tools.len(),
            world.views.len(),
            world.tasks.len(),
            world.tables.len(),
            rubrics.rubrics.len(),
            &world.content_hash[..12]
        );
        if !without.is_empty() {
            let names: Vec<&str> = without.iter().map(|s| s.as_str()).collect();
            println!("tasks without a rubric: {}", names.join(", "));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every problem, one per line under the folder it is in (or as JSON).
fn report_problems(path: &str, problems: &[Diagnostic], as_json: bool) -> anyhow::Result<ExitCode> {
    if as_json {
        println!("{}", json!({"ok": false, "problems": problems}));
    } else {
        eprintln!("{path}: {} problem(s)", problems.len());
        for p in problems {
            eprintln!("  {}/{p}", path.trim_end_matches('/'));
        }
    }
    Ok(ExitCode::FAILURE)
}

/// Describes a world, reusing its cached seeded image like every other
/// command that reads a world (`world check` alone seeds afresh: checking
/// the seed files is its job).
fn describe(dir: PathBuf, as_json: bool) -> anyhow::Result<ExitCode> {
    let world = super::load_world(&dir)?;
    if as_json {
        let out = json!({
            "id": world.meta.id,
            "name": world.meta.name,
            "version": world.meta.version,
            "description": world.meta.description,
            "content_hash": world.content_hash,
            "tools": world.tool_specs(),
            "views": world.views.values().collect::<Vec<_>>(),
            "tasks": world.tasks.values().collect::<Vec<_>>(),
            "tables": world.tables,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} — {} (version {})",
        world.meta.id, world.meta.name, world.meta.version
    );
    if !world.meta.description.is_empty() {
        println!("{}", world.meta.description.trim());
    }
    println!("\nTools ({}):", world.tools.len());
    for t in world.tools.values() {
        let params: Vec<String> = t
            .parameters
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let kind = match t.kind {
            understudy::world::ToolKind::Read => "read ",
            understudy::world::ToolKind::Write => "write",
        };
        let ends = if t.ends_episode {
            " (ends the episode)"
        } else {
            ""
        };
        println!("  {kind} {}({}){ends}", t.name, params.join(", "));
        println!("        {}", first_line(&t.description));
    }
    println!(
        "\nViews ({}), each also a read tool view_<name>:",
        world.views.len()
    );
    for v in world.views.values() {
        println!("  {} — {} [{}]", v.name, v.title, v.columns.join(", "));
    }
    println!("\nTasks ({}):", world.tasks.len());
    for t in world.tasks.values() {
        let difficulty = t.difficulty.as_deref().unwrap_or("-");
        println!(
            "  {} [{difficulty}] {} (max {} steps, {} solution steps)",
            t.id,
            t.title,
            t.max_steps,
            t.solution.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
