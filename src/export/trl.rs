//! Hugging Face / TRL conversational rows: `messages` + `tools`, plus
//! columns to filter on (task, world version, actor, status, reward, pass).
//!
//! The expert's rationale ("why I did this") is the point of recording
//! experts, so it is kept where reasoning-aware chat templates look for it:
//! in the assistant message's `reasoning_content`, once (a copy in
//! `content` too would be rendered twice by such a template). Tool calls
//! carry an `id` that their tool turn's `tool_call_id` names, as templates
//! that pair calls with results need. A row ends on its last assistant
//! turn, and an episode with none (nothing done) is left out.

use serde::Serialize;
use serde_json::{Map, Value};

use super::chat::{self, call_id, ToolCache};
use super::{EpisodeBundle, WorldSet};
use crate::error::{Error, Result};
use crate::store::Actor;
use crate::trajectory::Turn;

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub(crate) enum Message<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        content: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_calls: Option<[ToolCall<'a>; 1]>,
    },
    Tool {
        tool_call_id: String,
        name: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
pub(crate) struct ToolCall<'a> {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: &'a Map<String, Value>,
}

/// Who performed the episode, as a column with the same shape for experts
/// and agents (`id` is the expert id or the model name).
#[derive(Serialize)]
pub(crate) struct ActorColumn<'a> {
    kind: &'static str,
    id: &'a str,
}

impl<'a> ActorColumn<'a> {
    pub(crate) fn of(actor: &'a Actor) -> Self {
        let (kind, id) = actor.parts();
        ActorColumn { kind, id }
    }
}

#[derive(Serialize)]
struct Row<'a> {
    messages: Vec<Message<'a>>,
    tools: &'a [Value],
    task_id: &'a str,
    world_id: &'a str,
    world_version: &'a str,
    episode_id: &'a str,
    actor: ActorColumn<'a>,
    status: &'static str,
    reward: Option<f64>,
    pass: Option<bool>,
}

/// An episode's latest score, as the training formats carry it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reward {
    /// The score in [0, 1]; `None` when unscored or pending.
    pub value: Option<f64>,
    /// Whether it passed; `None` when unscored or pending.
    pub pass: Option<bool>,
}

/// The conversation of one episode, TRL-style, ending on its last
/// assistant turn; `None` when it has none.
pub(crate) fn messages<'a>(
    system: &'a str,
    opening: &'a str,
    turns: &'a [Turn<'a>],
) -> Option<Vec<Message<'a>>> {
    let mut out = Vec::with_capacity(2 + turns.len() * 2);
    out.push(Message::System { content: system });
    out.push(Message::User { content: opening });
    for t in turns {
        match t {
            Turn::Call {
                idx,
                tool,
                args,
                rationale,
                result,
                ..
            } => {
                out.push(Message::Assistant {
                    content: "",
                    reasoning_content: *rationale,
                    tool_calls: Some([ToolCall {
                        id: call_id(*idx),
                        kind: "function",
                        function: Function {
                            name: tool,
                            arguments: args,
                        },
                    }]),
                });
                out.push(Message::Tool {
                    tool_call_id: call_id(*idx),
                    name: tool,
                    content: result,
                });
            }
            Turn::Say {
                message,
                rationale,
                reply,
                ..
            } => {
                out.push(Message::Assistant {
                    content: message,
                    reasoning_content: *rationale,
                    tool_calls: None,
                });
                if !reply.is_empty() {
                    out.push(Message::User { content: reply });
                }
            }
        }
    }
    chat::end_on_assistant(&mut out, |m| matches!(m, Message::Assistant { .. })).then_some(out)
}

/// Appends one episode's row (without the newline) to `out`; returns the
/// number of steps in it, or `None` (writing nothing) when the episode has
/// no assistant turn to train on.
pub(crate) fn write_row(
    b: &EpisodeBundle,
    worlds: &WorldSet,
    cache: &mut ToolCache,
    reward: Reward,
    include_retracted: bool,
    out: &mut Vec<u8>,
) -> Result<Option<usize>> {
    let (world, task) = chat::world_and_task(worlds, b)?;
    let (system, tools) = cache.prompt_and_tools(world, task);
    let transcript = chat::agent_transcript(world, b, include_retracted);
    let (turns, steps) = (transcript.turns, transcript.steps);
    let r = &b.record;
    let Some(messages) = messages(system, &task.opening_message, &turns) else {
        return Ok(None);
    };
    let row = Row {
        messages,
        tools,
        task_id: &r.task_id,
        world_id: &r.world_id,
        world_version: &r.world_version,
        episode_id: &r.id,
        actor: ActorColumn::of(&r.actor),
        status: r.status.as_str(),
        reward: reward.value,
        pass: reward.pass,
    };
    serde_json::to_writer(&mut *out, &row)
        .map_err(|e| Error::Other(format!("encoding episode {}: {e}", r.id)))?;
    Ok(Some(steps))
}

/// The column names of a TRL row, in order (for the dataset card).
pub const COLUMNS: [&str; 10] = [
    "messages",
    "tools",
    "task_id",
    "world_id",
    "world_version",
    "episode_id",
    "actor",
    "status",
    "reward",
    "pass",
];
