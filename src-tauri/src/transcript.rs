//! The conversation of an episode, as the workspace's Conversation panel
//! shows it: the engine's one transcript
//! ([`understudy::trajectory::Trajectory::transcript`], the same one the
//! agent server and every export format use), with each step's time, so
//! the window never rebuilds the conversation from steps on its own.

use serde::Serialize;
use serde_json::{Map, Value};
use tauri::State;
use ts_rs::TS;
use understudy::trajectory::{Trajectory, Turn};

use crate::error::AppResult;
use crate::ipc::command;
use crate::service::Service;
use crate::AppState;

/// One turn of the conversation: a tool call with its result, or a
/// message to the customer with their reply.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnView {
    /// A tool call and what the tool answered.
    Call {
        /// The step's position in the log, undone steps included.
        idx: u32,
        tool: String,
        #[ts(type = "Record<string, unknown>")]
        args: Map<String, Value>,
        /// The performer's reason, when one was given and is not blank.
        rationale: Option<String>,
        /// What the performer read back.
        result: String,
        /// Undone: kept in the record, marked.
        retracted: bool,
        /// When it was recorded (wall clock, RFC 3339).
        wall_at: String,
    },
    /// A message to the customer and their reply.
    Say {
        /// The step, or `null` for a final message given only when the
        /// episode was handed in.
        idx: Option<u32>,
        message: String,
        rationale: Option<String>,
        /// The customer's reply; empty for none.
        reply: String,
        retracted: bool,
        /// When it was sent; `null` for the final message.
        wall_at: Option<String>,
    },
}

/// The whole conversation, undone turns included (marked).
pub fn turns(trajectory: &Trajectory) -> Vec<TurnView> {
    let at = |idx: u32| {
        trajectory
            .steps
            .get(idx as usize)
            .map(|s| s.wall_at.clone())
            .unwrap_or_default()
    };
    trajectory
        .transcript(true)
        .turns
        .into_iter()
        .map(|t| match t {
            Turn::Call {
                idx,
                tool,
                args,
                rationale,
                result,
                retracted,
            } => TurnView::Call {
                idx,
                tool: tool.to_string(),
                args: args.clone(),
                rationale: rationale.map(str::to_string),
                result: result.to_string(),
                retracted,
                wall_at: at(idx),
            },
            Turn::Say {
                idx,
                message,
                rationale,
                reply,
                retracted,
            } => TurnView::Say {
                idx,
                message: message.to_string(),
                rationale: rationale.map(str::to_string),
                reply: reply.to_string(),
                retracted,
                wall_at: idx.map(at),
            },
        })
        .collect()
}

/// The conversation of `episode_id`, as recorded so far.
pub fn of_episode(service: &Service, episode_id: &str) -> AppResult<Vec<TurnView>> {
    Ok(turns(&service.store().trajectory(episode_id)?))
}

command! {
    /// The conversation of an episode so far: the engine's transcript,
    /// undone turns included (marked), each with its time.
    #[tauri::command(async)]
    pub fn episode_transcript(state: State<'_, AppState>, episode_id: String) -> AppResult<Vec<TurnView>> {
        of_episode(state.service()?, &episode_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use understudy::Action;

    /// The panel's turns are the engine's transcript: messages with the
    /// customer's replies, tool calls with results, undone turns marked,
    /// each with the time its step was recorded; an unknown episode is an
    /// error, not an empty conversation.
    #[test]
    fn the_conversation_is_the_engines_transcript_with_times() {
        let dir = tempfile::tempdir().unwrap();
        let s = crate::testing::service(dir.path());
        crate::testing::profile(&s, "Renee");
        let id = s.start("support-desk", "duplicate-charge").unwrap().id;
        s.step(
            &id,
            Action::tool("get_ticket", json!({"ticket_id": "T-1042"})),
            Some("Read the ticket first".into()),
        )
        .unwrap();
        s.step(&id, Action::message("Could you confirm your ZIP?"), None)
            .unwrap();
        s.step(&id, Action::message("Sorry, wrong box."), None)
            .unwrap();
        s.undo(&id).unwrap();
        s.submit(&id, Some("Your refund is on its way.".into()))
            .unwrap();

        let trajectory = s.store().trajectory(&id).unwrap();
        let got = of_episode(&s, &id).unwrap();
        assert_eq!(got.len(), trajectory.transcript(true).turns.len());
        assert_eq!(got.len(), 4);
        let TurnView::Call {
            idx,
            tool,
            rationale,
            result,
            wall_at,
            ..
        } = &got[0]
        else {
            panic!("the first turn is the ticket: {got:?}");
        };
        assert_eq!((*idx, tool.as_str()), (0, "get_ticket"));
        assert_eq!(rationale.as_deref(), Some("Read the ticket first"));
        assert_eq!(result, &trajectory.steps[0].observation.text);
        assert_eq!(wall_at, &trajectory.steps[0].wall_at);
        let TurnView::Say {
            idx,
            message,
            reply,
            retracted,
            wall_at,
            ..
        } = &got[1]
        else {
            panic!("the second turn is the message: {got:?}");
        };
        assert_eq!(*idx, Some(1));
        assert_eq!(message, "Could you confirm your ZIP?");
        assert_eq!(reply, &trajectory.steps[1].observation.text);
        assert!(!retracted);
        assert_eq!(
            wall_at.as_deref(),
            Some(trajectory.steps[1].wall_at.as_str())
        );
        assert!(
            matches!(
                &got[2],
                TurnView::Say {
                    retracted: true,
                    idx: Some(2),
                    ..
                }
            ),
            "the undone message is kept, marked: {got:?}"
        );
        assert_eq!(
            got[3],
            TurnView::Say {
                idx: None,
                message: "Your refund is on its way.".into(),
                rationale: None,
                reply: String::new(),
                retracted: false,
                wall_at: None,
            },
            "the final message given at hand-in ends the conversation"
        );

        assert!(of_episode(&s, "no-such-episode").is_err());
    }
}
