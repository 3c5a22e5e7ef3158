//! The trajectory: the product's main noun. One episode's header and its
//! recorded steps, the way the store keeps them, the app shows them, the
//! scorer replays them and the exporters turn them into training rows.
//!
//! **Key decision: one transcript.** [`Trajectory::transcript`] is the only
//! place that turns steps into a conversation (tool calls with their
//! results, messages with the customer's replies, the final answer), so the
//! agent server, every export format and the app cannot disagree about
//! what happened.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::action::Action;
use crate::observation::Observation;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum EpisodeStatus {
    InProgress,
    Paused,
    Submitted,
    Abandoned,
    Approved,
    Rejected,
}

impl EpisodeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EpisodeStatus::InProgress => "in_progress",
            EpisodeStatus::Paused => "paused",
            EpisodeStatus::Submitted => "submitted",
            EpisodeStatus::Abandoned => "abandoned",
            EpisodeStatus::Approved => "approved",
            EpisodeStatus::Rejected => "rejected",
        }
    }

    pub fn parse(s: &str) -> Option<EpisodeStatus> {
        Some(match s {
            "in_progress" => EpisodeStatus::InProgress,
            "paused" => EpisodeStatus::Paused,
            "submitted" => EpisodeStatus::Submitted,
            "abandoned" => EpisodeStatus::Abandoned,
            "approved" => EpisodeStatus::Approved,
            "rejected" => EpisodeStatus::Rejected,
            _ => return None,
        })
    }

    /// Still being recorded: can take steps (once unpaused).
    pub fn is_open(self) -> bool {
        matches!(self, EpisodeStatus::InProgress | EpisodeStatus::Paused)
    }
}

/// Who performed an episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Actor {
    Expert { id: String },
    Agent { model: String },
}

impl Actor {
    pub fn parts(&self) -> (&'static str, &str) {
        match self {
            Actor::Expert { id } => ("expert", id),
            Actor::Agent { model } => ("agent", model),
        }
    }
}

/// One episode's header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EpisodeRecord {
    /// UUID v7: sortable by creation time.
    pub id: String,
    pub world_id: String,
    pub world_version: String,
    /// The world's content hash when the episode started.
    pub world_hash: String,
    pub task_id: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seed: u64,
    pub actor: Actor,
    pub status: EpisodeStatus,
    pub created_at: String,
    pub updated_at: String,
    pub submitted_at: Option<String>,
    /// Time spent working, pauses excluded, in milliseconds.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub active_ms: i64,
    /// The final message or answer to the customer.
    pub final_message: Option<String>,
}

/// One recorded step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepRecord {
    /// Position in the raw log, retracted steps included.
    pub idx: u32,
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub action: Action,
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub observation: Observation,
    pub terminated: bool,
    pub truncated: bool,
    /// Wall-clock time the step was recorded (not world time).
    pub wall_at: String,
    /// Active time into the episode when the step was recorded.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub active_ms: i64,
    /// The expert's "why I did this".
    pub rationale: Option<String>,
    pub flag: Option<String>,
    /// Undone; kept in the log, left out of training exports by default.
    pub retracted: bool,
    pub retracted_at: Option<String>,
}

/// One episode as recorded: its header and every step, retracted ones
/// included, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub record: EpisodeRecord,
    pub steps: Vec<StepRecord>,
}

impl Trajectory {
    /// The steps that count: everything but undone (retracted) steps.
    pub fn kept_steps(&self) -> impl Iterator<Item = &StepRecord> {
        self.steps.iter().filter(|s| !s.retracted)
    }

    /// The steps a training example or a transcript is made of: the kept
    /// ones, or all of them when retracted steps are asked for too.
    pub fn steps_for_training(&self, include_retracted: bool) -> impl Iterator<Item = &StepRecord> {
        self.steps
            .iter()
            .filter(move |s| include_retracted || !s.retracted)
    }

    /// The kept actions, in order: what replay and scoring re-execute.
    pub fn actions(&self) -> Vec<Action> {
        self.kept_steps().map(|s| s.action.clone()).collect()
    }

    /// The episode as a conversation: one turn per step, plus the final
    /// message when it was given at submission and never sent as a message
    /// step (so the conversation still ends with what the performer told
    /// the customer).
    pub fn transcript(&self, include_retracted: bool) -> Transcript<'_> {
        let mut turns = Vec::with_capacity(self.steps.len() + 1);
        let mut steps = 0;
        let mut last_message: Option<&str> = None;
        for s in self.steps_for_training(include_retracted) {
            steps += 1;
            let rationale = s.rationale.as_deref().filter(|r| !r.trim().is_empty());
            match &s.action {
                Action::Tool { tool, args } => turns.push(Turn::Call {
                    idx: s.idx,
                    tool,
                    args,
                    rationale,
                    result: &s.observation.text,
                    retracted: s.retracted,
                }),
                Action::Message { message } => {
                    if !s.retracted {
                        last_message = Some(message);
                    }
                    turns.push(Turn::Say {
                        idx: Some(s.idx),
                        message,
                        rationale,
                        reply: &s.observation.text,
                        retracted: s.retracted,
                    })
                }
            }
        }
        if let Some(final_message) = self
            .record
            .final_message
            .as_deref()
            .filter(|m| !m.trim().is_empty())
        {
            if last_message != Some(final_message) {
                turns.push(Turn::Say {
                    idx: None,
                    message: final_message,
                    rationale: None,
                    reply: "",
                    retracted: false,
                });
            }
        }
        Transcript { turns, steps }
    }
}

/// A trajectory as a conversation; see [`Trajectory::transcript`].
pub struct Transcript<'a> {
    pub turns: Vec<Turn<'a>>,
    /// How many recorded steps the turns came from (the final message,
    /// when added, is not a step).
    pub steps: usize,
}

/// One step as a conversation sees it.
pub enum Turn<'a> {
    /// A tool call and what the tool answered.
    Call {
        idx: u32,
        tool: &'a str,
        args: &'a Map<String, Value>,
        rationale: Option<&'a str>,
        result: &'a str,
        retracted: bool,
    },
    /// A message to the customer and their reply (empty when none).
    Say {
        /// The step, or `None` for a final message given only at submission.
        idx: Option<u32>,
        message: &'a str,
        rationale: Option<&'a str>,
        reply: &'a str,
        retracted: bool,
    },
}
