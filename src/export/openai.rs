//! OpenAI chat fine-tuning rows: `{"messages": [...], "tools": [...]}`.
//!
//! Differences from TRL that OpenAI's validator insists on: `arguments` is a
//! JSON *string*, each call has an `id` that its tool turn points back to
//! (`call_<step index>`, deterministic so exports are reproducible),
//! `parallel_tool_calls` is `false` (each turn makes one call, and a model
//! trained on it should too), and there are no extra columns. The
//! rationale is the assistant's `content` before the call. A row ends on
//! its last assistant turn, and an episode with none (nothing done) is
//! left out. With `--include-retracted`, undone steps are kept with
//! `"weight": 0` so they are shown to the model but not trained on.

use serde::Serialize;
use serde_json::Value;

use super::chat::{self, call_id, ToolCache};
use super::{EpisodeBundle, WorldSet};
use crate::error::{Error, Result};
use crate::trajectory::Turn;

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Message<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_calls: Option<[ToolCall<'a>; 1]>,
        #[serde(skip_serializing_if = "Option::is_none")]
        weight: Option<u8>,
    },
    Tool {
        tool_call_id: String,
        content: &'a str,
    },
}

#[derive(Serialize)]
struct ToolCall<'a> {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: String,
}

#[derive(Serialize)]
struct Row<'a> {
    messages: Vec<Message<'a>>,
    tools: &'a [Value],
    parallel_tool_calls: bool,
}

/// Appends one episode's row (without the newline) to `out`; returns the
/// number of steps in it, or `None` (writing nothing) when the episode has
/// no assistant turn to train on.
pub fn write_row(
    b: &EpisodeBundle,
    worlds: &WorldSet,
    cache: &mut ToolCache,
    include_retracted: bool,
    out: &mut Vec<u8>,
) -> Result<Option<usize>> {
    let (world, task) = chat::world_and_task(worlds, b)?;
    let (system, tools) = cache.prompt_and_tools(world, task);
    let transcript = chat::agent_transcript(world, b, include_retracted);
    let (turns, steps) = (transcript.turns, transcript.steps);
    let weight = |retracted: bool| retracted.then_some(0u8);
    let mut messages = Vec::with_capacity(2 + turns.len() * 2);
    messages.push(Message::System { content: system });
    messages.push(Message::User {
        content: &task.opening_message,
    });
    for t in &turns {
        match t {
            Turn::Call {
                idx,
                tool,
                args,
                rationale,
                result,
                retracted,
            } => {
                let arguments = serde_json::to_string(args).map_err(|e| {
                    Error::Other(format!("encoding episode {} step {idx}: {e}", b.record.id))
                })?;
                messages.push(Message::Assistant {
                    content: *rationale,
                    tool_calls: Some([ToolCall {
                        id: call_id(*idx),
                        kind: "function",
                        function: Function {
                            name: tool,
                            arguments,
                        },
                    }]),
                    weight: weight(*retracted),
                });
                messages.push(Message::Tool {
                    tool_call_id: call_id(*idx),
                    content: result,
                });
            }
            Turn::Say {
                message,
                reply,
                retracted,
                ..
            } => {
                messages.push(Message::Assistant {
                    content: Some(message),
                    tool_calls: None,
                    weight: weight(*retracted),
                });
                if !reply.is_empty() {
                    messages.push(Message::User { content: reply });
                }
            }
        }
    }
    if !chat::end_on_assistant(&mut messages, |m| matches!(m, Message::Assistant { .. })) {
        return Ok(None);
    }
    let row = Row {
        messages,
        tools,
        parallel_tool_calls: false,
    };
    serde_json::to_writer(&mut *out, &row)
        .map_err(|e| Error::Other(format!("encoding episode {}: {e}", b.record.id)))?;
    Ok(Some(steps))
}
