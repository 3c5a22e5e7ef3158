//! What the two chat formats (TRL and OpenAI) share: the system prompt,
//! the tool specs, and the walk from steps to turns.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{EpisodeBundle, WorldSet};
use crate::error::{Error, Result};
use crate::trajectory::{Transcript, Turn};
use crate::world::{Task, World};

/// The system message: a short preamble with the task's instruction, then
/// the policy. The instruction is the performer's brief (what the expert
/// was told), so a model trained on the trajectory sees the same brief.
pub fn system_prompt(world: &World, task: &Task) -> String {
    let mut s = format!(
        "You are working in {}. Use the tools to act, and write to the {} in plain text. Follow the policy below.\n\nTask: {}",
        world.meta.name,
        world.meta.user,
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
            "episode {}: world `{}` is not in {}; name the folder that holds the world's folder",
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

/// The episode as an agent-facing row tells it: its transcript without
/// the expert's reads of expert-only lists (`audience = "expert"`). Agents
/// are never offered those tools, so they are not in the row's `tools`,
/// and a model trained on a call of one would learn to call a tool it does
/// not have. The native format keeps them, as it keeps everything.
pub fn agent_transcript<'b>(
    world: &World,
    b: &'b EpisodeBundle,
    include_retracted: bool,
) -> Transcript<'b> {
    let mut transcript = b.transcript(include_retracted);
    let before = transcript.turns.len();
    transcript
        .turns
        .retain(|t| !matches!(t, Turn::Call { tool, .. } if world.is_expert_only_tool(tool)));
    transcript.steps -= before - transcript.turns.len();
    transcript
}

/// The deterministic id of the tool call made at raw step `idx`: the
/// call's `id` and its tool turn's `tool_call_id`, the same in every export
/// of the episode.
pub fn call_id(idx: u32) -> String {
    format!("call_{idx}")
}

/// Drops the turns after the last assistant turn (a tool's last result, the
/// customer's last reply): a training row ends on what the model is
/// trained to say. Returns false when no assistant turn is left, so the
/// row has nothing to train on.
pub fn end_on_assistant<M>(messages: &mut Vec<M>, is_assistant: impl Fn(&M) -> bool) -> bool {
    match messages.iter().rposition(is_assistant) {
        Some(last) => {
            messages.truncate(last + 1);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{end_on_assistant, system_prompt};

    #[test]
    fn rows_end_on_their_last_assistant_turn() {
        let mut m = vec!["system", "user", "assistant", "tool", "assistant", "user"];
        assert!(end_on_assistant(&mut m, |r| *r == "assistant"));
        assert_eq!(m, ["system", "user", "assistant", "tool", "assistant"]);
        let mut none = vec!["system", "user"];
        assert!(!end_on_assistant(&mut none, |r| *r == "assistant"));
    }
    use crate::world::World;
    use std::path::Path;

    fn copy(src: &Path, dst: &Path) {
        std::fs::create_dir_all(dst).unwrap();
        for entry in std::fs::read_dir(src).unwrap() {
            let entry = entry.unwrap();
            let to = dst.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &to);
            } else {
                std::fs::copy(entry.path(), &to).unwrap();
            }
        }
    }

    #[test]
    fn the_prompt_names_the_worlds_user() {
        let mini = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/worlds/mini");
        let world = World::load(&mini).unwrap();
        assert_eq!(world.meta.user, "customer");
        let task = world.task("pay-back").unwrap();
        assert!(system_prompt(&world, task).contains("write to the customer in plain text"));

        let dir = tempfile::tempdir().unwrap();
        copy(&mini, dir.path());
        let manifest = dir.path().join("world.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(
            &manifest,
            text.replacen("[clock]", "user = \"patient\"\n\n[clock]", 1),
        )
        .unwrap();
        let world = World::load(dir.path()).unwrap();
        assert_eq!(world.meta.user, "patient");
        let prompt = system_prompt(&world, world.task("pay-back").unwrap());
        assert!(
            prompt.contains("write to the patient in plain text"),
            "{prompt}"
        );
        assert!(!prompt.contains("customer"), "{prompt}");

        std::fs::write(
            &manifest,
            text.replacen("[clock]", "user = \" \"\n\n[clock]", 1),
        )
        .unwrap();
        let e = World::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("user") && e.contains("short name"), "{e}");
    }
}
