//! The trajectory: the product's main noun. One episode's header and its
//! recorded steps, the way the store keeps them, the app shows them, the
//! scorer replays them and the exporters turn them into training rows.
//!
//! **Key decision: one transcript.** [`Trajectory::transcript`] is the only
//! place that turns steps into a conversation (tool calls with their
//! results, messages with the customer's replies, the final answer), so the
//! agent server, every export format and the app cannot disagree about
//! what happened.
//!
//! **Key decision: one action list.** What replay and scoring re-execute is
//! an [`ActionList`]: a task, a seed and the actions, with where they came
//! from (an input line or a stored episode). Both read input lines through
//! the same helpers here, so a line means the same to both.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::action::Action;
use crate::error::{Error, Result};
use crate::observation::Observation;
use crate::world::World;

/// Where an episode is in its lifecycle: `in_progress ⇄ paused →
/// submitted | abandoned`, then a review moves a submitted episode to
/// `approved` or `rejected`. The [`Recorder`](crate::recorder::Recorder)
/// makes the first moves, the store's review the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum EpisodeStatus {
    /// Being recorded; the active clock runs.
    InProgress,
    /// Still open, but neither stepping nor counting active time.
    Paused,
    /// Finished by its performer and waiting for review.
    Submitted,
    /// Given up by its performer; it stays in the store, marked.
    Abandoned,
    /// Accepted by a reviewer.
    Approved,
    /// Turned down by a reviewer.
    Rejected,
}

impl EpisodeStatus {
    /// The status as written in the store, in files and on the command line
    /// (`in_progress`, `paused`, ...), the same as its serde name.
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

    /// The inverse of [`EpisodeStatus::as_str`]; `None` for anything else.
    pub(crate) fn parse(s: &str) -> Option<EpisodeStatus> {
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
    /// A person recording in the app.
    Expert {
        /// The expert's id in the store's `experts` table.
        id: String,
    },
    /// A program served through the agent server.
    Agent {
        /// The model the agent named when it started the episode
        /// (`unknown` when it named none).
        model: String,
    },
}

impl Actor {
    /// A person recording in the app: they may read the views shown to the
    /// expert only, and replaying their episode must let them again.
    pub fn is_expert(&self) -> bool {
        matches!(self, Actor::Expert { .. })
    }

    /// The actor as the store's two columns: kind (`expert` or `agent`) and
    /// the expert's id or the agent's model.
    pub(crate) fn parts(&self) -> (&'static str, &str) {
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
    /// The world's `id` from `world.toml`: episodes find their world by id,
    /// not by path.
    pub world_id: String,
    /// The world's declared `version` when the episode started (for people;
    /// `world_hash` is what replay checks).
    pub world_version: String,
    /// The world's content hash when the episode started.
    pub world_hash: String,
    /// The task's id within the world.
    pub task_id: String,
    /// The reset seed: with the world and the actions, it determines every
    /// observation.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seed: u64,
    /// Who performed the episode.
    pub actor: Actor,
    /// Where the episode is in its lifecycle.
    pub status: EpisodeStatus,
    /// When the episode started: RFC 3339, UTC, milliseconds.
    pub created_at: String,
    /// When the header last changed (status, active time, final message);
    /// same format.
    pub updated_at: String,
    /// When it was submitted, if it was; same format.
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
    /// What the performer did.
    pub action: Action,
    /// What the world answered, exactly as the performer saw it.
    pub observation: Observation,
    /// The task reached its end with this step: a tool that ends the
    /// episode succeeded.
    pub terminated: bool,
    /// The episode hit the task's `max_steps` with this step.
    pub truncated: bool,
    /// Wall-clock time the step was recorded (not world time): RFC 3339,
    /// UTC, milliseconds.
    pub wall_at: String,
    /// Active time into the episode when the step was recorded.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub active_ms: i64,
    /// The expert's "why I did this".
    pub rationale: Option<String>,
    /// A short free-text mark set with the rationale (see
    /// [`Recorder::annotate`](crate::recorder::Recorder::annotate)), e.g.
    /// `check`, so a reviewer can find the step again.
    pub flag: Option<String>,
    /// Undone; kept in the log, left out of training exports by default.
    pub retracted: bool,
    /// When the step was undone: RFC 3339, UTC, milliseconds.
    pub retracted_at: Option<String>,
}

/// One episode as recorded: its header and every step, retracted ones
/// included, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// The episode's header.
    pub record: EpisodeRecord,
    /// The raw log: `steps[i].idx == i`, retracted steps in place.
    pub steps: Vec<StepRecord>,
}

impl Trajectory {
    /// The steps that count: everything but undone (retracted) steps.
    pub fn kept_steps(&self) -> impl DoubleEndedIterator<Item = &StepRecord> {
        self.steps_for_training(false)
    }

    /// The steps a training example or a transcript is made of: the kept
    /// ones, or all of them when retracted steps are asked for too.
    pub(crate) fn steps_for_training(
        &self,
        include_retracted: bool,
    ) -> impl DoubleEndedIterator<Item = &StepRecord> {
        self.steps
            .iter()
            .filter(move |s| include_retracted || !s.retracted)
    }

    /// The kept actions, in order: what replay and scoring re-execute.
    pub fn actions(&self) -> Vec<Action> {
        self.kept_steps().map(|s| s.action.clone()).collect()
    }

    /// The episode as an action list to run again: its task and seed, its
    /// id, and its kept actions.
    pub fn action_list(&self) -> ActionList {
        ActionList {
            line: None,
            episode_id: Some(self.record.id.clone()),
            task_index: None,
            task_id: Some(self.record.task_id.clone()),
            seed: self.record.seed,
            actions: self.actions(),
        }
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
    /// In order: one per step, then the final message when it is added.
    pub turns: Vec<Turn<'a>>,
    /// How many recorded steps the turns came from (the final message,
    /// when added, is not a step).
    pub steps: usize,
}

/// One step as a conversation sees it.
pub enum Turn<'a> {
    /// A tool call and what the tool answered.
    Call {
        /// The step's index in the raw log.
        idx: u32,
        /// The tool called.
        tool: &'a str,
        /// Its arguments, as given.
        args: &'a Map<String, Value>,
        /// The performer's reason, when one was given and is not blank.
        rationale: Option<&'a str>,
        /// The observation's text: what the performer read back.
        result: &'a str,
        /// The step was undone (present only when retracted steps are asked
        /// for).
        retracted: bool,
    },
    /// A message to the customer and their reply (empty when none).
    Say {
        /// The step, or `None` for a final message given only at submission.
        idx: Option<u32>,
        /// What the performer told the customer.
        message: &'a str,
        /// The performer's reason, when one was given and is not blank.
        rationale: Option<&'a str>,
        /// The customer's reply (the observation's text), empty for none.
        reply: &'a str,
        /// As for [`Turn::Call`].
        retracted: bool,
    },
}

/// An action list to run from a task's seeded world: one line of a replay
/// or scoring input, or a stored episode's kept steps
/// ([`Trajectory::action_list`]). Replay and scoring both take it.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionList {
    /// 1-based line in the input file, when it came from one.
    pub line: Option<usize>,
    /// The episode's id, when the input names one; a score carries it.
    pub episode_id: Option<String>,
    /// The line's `task_index`, whatever it holds, when it has one
    /// (τ-bench numbers its tasks); replay copies it to its output so lines
    /// can be matched up.
    pub task_index: Option<Value>,
    /// The task to run, as named; `None` runs the world's first task (see
    /// [`ActionList::task`]).
    pub task_id: Option<String>,
    /// The seed the task is reset with before the actions.
    pub seed: u64,
    /// The actions, in order; undone steps are already left out.
    pub actions: Vec<Action>,
}

impl ActionList {
    /// A list run from `task_id` with seed 0, with no input line or episode
    /// behind it (built by a program rather than read).
    pub fn new(task_id: impl Into<String>, actions: Vec<Action>) -> ActionList {
        ActionList {
            line: None,
            episode_id: None,
            task_index: None,
            task_id: Some(task_id.into()),
            seed: 0,
            actions,
        }
    }

    /// Which task the list runs as: its `task_id`, else the world's first.
    /// A task the world does not have is an error naming both.
    pub fn task<'a>(&'a self, world: &'a World) -> Result<&'a str> {
        match &self.task_id {
            Some(id) if world.task(id).is_some() => Ok(id),
            Some(id) => Err(Error::UnknownTask {
                world: world.meta.id.clone(),
                task: id.clone(),
            }),
            None => world
                .tasks
                .keys()
                .next()
                .map(String::as_str)
                .ok_or_else(|| {
                    Error::Other(format!(
                        "world `{}` has no task to replay against",
                        world.meta.id
                    ))
                }),
        }
    }

    /// Puts the input line's number in front of an error about running
    /// this list, when it came from a line.
    pub(crate) fn at_line(&self, e: Error) -> Error {
        match self.line {
            Some(l) => Error::Other(format!("line {l}: {e}")),
            None => e,
        }
    }
}

/// An input line as a JSON object, reading only `fields` (the rest, such as
/// τ-bench's recorded results, is skipped unbuilt). `Err` says why the line
/// is not JSON; the caller says what object it expected.
pub(crate) fn input_line(line: &str, fields: &[&str]) -> std::result::Result<Value, String> {
    match crate::action::json_object_fields(line, fields) {
        Some(fields) => Ok(Value::Object(fields)),
        None => serde_json::from_str(line).map_err(|e| format!("not valid JSON: {e}")),
    }
}

/// An input line's `actions` list (engine or τ-bench shapes), or which
/// action is not one and why.
pub(crate) fn actions_from_json(list: &[Value]) -> std::result::Result<Vec<Action>, String> {
    list.iter()
        .enumerate()
        .map(|(i, a)| Action::from_json(a).map_err(|e| format!("action {}: {e}", i + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mini() -> World {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/worlds/mini");
        World::load(root).expect("the mini world loads")
    }

    /// A list runs its named task, or the world's first when it names none;
    /// a task the world lacks is an error naming both, and an error about a
    /// line names the line.
    #[test]
    fn an_action_list_runs_its_task_or_the_worlds_first() {
        let world = mini();
        let first = world.tasks.keys().next().expect("a task").clone();
        let last = world.tasks.keys().next_back().expect("a task").clone();
        assert_eq!(
            ActionList::new(&last, Vec::new()).task(&world).unwrap(),
            last
        );
        let unnamed = ActionList {
            task_id: None,
            ..ActionList::new("x", Vec::new())
        };
        assert_eq!(unnamed.task(&world).unwrap(), first);

        let err = ActionList::new("no-such-task", Vec::new())
            .task(&world)
            .expect_err("not in the world");
        assert!(
            matches!(&err, Error::UnknownTask { world: w, task } if w == &world.meta.id && task == "no-such-task"),
            "{err:?}"
        );
        let at_seven = ActionList {
            line: Some(7),
            ..ActionList::new("t", Vec::new())
        };
        assert_eq!(
            at_seven.at_line(Error::Other("boom".into())).to_string(),
            "line 7: boom"
        );
        let from_code = ActionList::new("t", Vec::new());
        assert_eq!(
            from_code.at_line(Error::Other("boom".into())).to_string(),
            "boom"
        );
    }

    /// A line's actions are read in every shape `Action::from_json` takes;
    /// a bad one is named by its position, and a line that is not JSON says
    /// so.
    #[test]
    fn input_lines_and_their_actions_are_read_or_refused_by_position() {
        let line = r#"{"actions": [{"name": "transfer", "kwargs": {"amount": 1}}, {"message": "Done."}], "expected": [1, 2]}"#;
        let obj = input_line(line, &["actions"]).expect("an object");
        assert!(obj.get("expected").is_none(), "unread fields are skipped");
        let actions = actions_from_json(obj["actions"].as_array().unwrap()).expect("actions");
        assert_eq!(actions.len(), 2);
        assert_eq!(actions[1], Action::message("Done."));

        let err = actions_from_json(&[serde_json::json!({"message": "ok"}), serde_json::json!(3)])
            .expect_err("3 is no action");
        assert!(err.starts_with("action 2: "), "{err}");
        let err = input_line("{not json", &["actions"]).expect_err("not JSON");
        assert!(err.starts_with("not valid JSON"), "{err}");
    }
}
