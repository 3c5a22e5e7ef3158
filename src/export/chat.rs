//! What the two chat formats (TRL and OpenAI) share: the system prompt,
//! the tool specs, and the walk from steps to turns.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{EpisodeBundle, WorldSet};
use crate::error::{Error, Result};
use crate::world::{Task, World};

/// The system message: a short preamble with the task's instruction, then
/// the policy. The instruction is the performer's brief (what the expert
/// was told), so a model trained on the trajectory sees the same brief.
pub fn system_prompt(world: &World, task: &Task) -> String {
    let mut s = format!(
        "You are working in {}. Use the tools to act, and write to the customer in plain text. Follow the policy below.\n\nTask: {}",
        world.meta.name,
        task.instruction.trim()
    );
    if !world.policy.trim().is_empty() {
        s.push_str("\n\n");
        s.push_str(world.policy.trim());
    }
    s
}

/// Per world and task: the system prompt and the `tools` list. Built once
/// per task, not once per episode.
#[derive(Default)]
pub struct ToolCache {
    entries: HashMap<(String, String), (String, Vec<Value>)>,
}

/// The world and task of an episode, or a clear error.
pub fn world_and_task<'w>(
    worlds: &'w WorldSet,
    b: &EpisodeBundle,
) -> Result<(&'w World, &'w Task)> {
    let r = &b.record;
    let world = worlds.get(&r.world_id).ok_or_else(|| {
        Error::Other(format!(
            "episode {}: world `{}` is not in {}",
            r.id,
            r.world_id,
            worlds.dir().display()
        ))
    })?;
    let task = world.task(&r.task_id).ok_or_else(|| {
        Error::Other(format!(
            "episode {}: world `{}` has no task `{}`",
            r.id, r.world_id, r.task_id
        ))
    })?;
    Ok((world, task))
}

impl ToolCache {
    /// The system prompt and tools for the episode's task.
    pub fn prompt_and_tools(&mut self, world: &World, task: &Task) -> &(String, Vec<Value>) {
        self.entries
            .entry((world.meta.id.clone(), task.id.clone()))
            .or_insert_with(|| (system_prompt(world, task), tool_specs(world, task)))
    }
}

/// `{"type": "function", "function": {name, description, parameters}}` for
/// every tool the task allows: the shape both TRL and OpenAI read.
pub fn tool_specs(world: &World, task: &Task) -> Vec<Value> {
    world
        .task_tool_specs(task)
        .into_iter()
        .map(|t| {
            json!({
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters}
            })
        })
        .collect()
}
