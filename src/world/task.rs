//! A task: one job to do in a world, as the engine runs, scores and exports
//! it.
//!
//! The files say what a task is in [`TaskSpec`], whose shape follows the
//! file syntax (defaults, `deny_unknown_fields`); a [`Task`] is built from it
//! once the loader has checked it against the world, so the rest of the
//! engine never depends on how tasks are written.

use serde::Serialize;
use serde_json::{Map, Value};

use super::manifest::{AnswerSpec, RecordRef, TaskSpec};
use crate::action::Action;
use crate::error::{Error, Result};

/// A task of a loaded world, checked against it.
///
/// It serializes (for `world describe` and the like) with the field names
/// and omissions of the file format, so what is shown reads like what was
/// written.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Task {
    /// Unique in the world; episodes record it.
    pub id: String,
    /// A one-line name for people.
    pub title: String,
    /// Free text such as `easy` or `hard`, for choosing tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<String>,
    /// The performer's brief.
    pub instruction: String,
    /// The customer's first message.
    pub opening_message: String,
    /// Who the performer is talking to, as a ticket would name them
    /// ("Priya Raman, Lumen Yoga Studios"); shown to the performer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customer: Option<String>,
    /// What a list of tasks says of this one, for people choosing a task:
    /// display only. Agents never get it (their brief is `instruction` and
    /// `opening_message`), and it is not part of the task's hash, so
    /// rewording it leaves scores standing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// What the customer knows, for a user simulator playing them; kept
    /// from the performer, who learns it by asking.
    pub facts: Vec<String>,
    /// The episode is truncated after this many steps.
    pub max_steps: u32,
    /// The declared tools the task allows (views' read tools are always
    /// allowed); `None` allows every tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Records the task is about, each in the seed data.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<TaskRecord>,
    /// The customer's scripted replies, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replies: Vec<String>,
    /// What the customer answers when asked (see [`Answer`]); kept from the
    /// performer, who learns it only by asking.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Answer>,
    /// The reply to a message that asks for none of the `answers`, when the
    /// task has some and nothing else answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unanswered: Option<String>,
    /// What the performer must tell the customer, for rubrics to check.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
    /// A reference solution: actions in their JSON form, each valid for
    /// this world, each with an optional `why` (see [`SolutionStep`]); read
    /// them parsed with [`Task::solution_steps`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub solution: Vec<Value>,
    /// Known problems with the task or its reference answer, recorded so
    /// reviewers and graders can discount them instead of rediscovering them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub known_issues: Vec<String>,
}

/// A record a task names: a row of `table` by its key.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TaskRecord {
    /// The table the record is in.
    pub table: String,
    /// The value of the table's key column (or rowid).
    pub key: Value,
}

/// One step of a task's reference solution: the action, and the expert's
/// reasoning before taking it (`why = "..."` in the task file), which is
/// recorded as the step's rationale when the solution is recorded as an
/// episode.
#[derive(Debug, Clone, PartialEq)]
pub struct SolutionStep {
    /// What the step does.
    pub action: Action,
    /// Why, in the expert's words; `None` when the step does not say.
    pub why: Option<String>,
}

/// The keys each action shape of [`Action::from_json`] reads, by the key
/// that selects the shape (in the order it checks them); `why` is allowed
/// in every shape. A step with any other key has a typo in it (`arg`,
/// `rationale`) that would otherwise be dropped without a word.
const STEP_SHAPES: [(&str, &[&str]); 4] = [
    ("function", &["function", "type", "id"]),
    ("message", &["message"]),
    ("tool", &["tool", "args"]),
    ("name", &["name", "kwargs", "arguments"]),
];

impl SolutionStep {
    /// Reads one solution step as written in a task file: an action in any
    /// shape [`Action::from_json`] accepts, plus an optional `why` text.
    /// The error says which key is wrong and what was expected, for the
    /// caller to prefix with the task and step.
    pub fn from_json(value: &Value) -> std::result::Result<SolutionStep, String> {
        let obj = value
            .as_object()
            .ok_or_else(|| "a solution step must be a table (a JSON object)".to_string())?;
        check_step_keys(obj)?;
        let why = match obj.get("why") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
            Some(other) => {
                return Err(format!(
                    "`why` must be text (the reasoning before this step), not {}",
                    json_kind(other)
                ))
            }
        };
        Ok(SolutionStep {
            action: Action::from_json(value)?,
            why,
        })
    }
}

fn check_step_keys(obj: &Map<String, Value>) -> std::result::Result<(), String> {
    let Some((_, allowed)) = STEP_SHAPES.iter().find(|(k, _)| obj.contains_key(*k)) else {
        // No shape matches: Action::from_json explains what is expected.
        return Ok(());
    };
    let unknown: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "why" && !allowed.contains(k))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let mut expected: Vec<String> = allowed.iter().map(|k| format!("`{k}`")).collect();
    expected.push("`why`".into());
    Err(format!(
        "unknown key{} {} in a solution step; expected {}",
        if unknown.len() == 1 { "" } else { "s" },
        unknown
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", "),
        expected.join(", ")
    ))
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
    }
}

impl Task {
    /// The reference solution, parsed: each step's action and rationale.
    /// The loader checked every step, so an error here means the task was
    /// built by hand; it names the task and the step.
    pub fn solution_steps(&self) -> Result<Vec<SolutionStep>> {
        self.solution
            .iter()
            .enumerate()
            .map(|(i, step)| {
                SolutionStep::from_json(step).map_err(|e| {
                    Error::Other(format!("task {}: solution step {}: {e}", self.id, i + 1))
                })
            })
            .collect()
    }
}

impl From<TaskSpec> for Task {
    fn from(spec: TaskSpec) -> Task {
        Task {
            records: spec.records.into_iter().map(TaskRecord::from).collect(),
            id: spec.id,
            title: spec.title,
            difficulty: spec.difficulty,
            instruction: spec.instruction,
            opening_message: spec.opening_message,
            customer: spec.customer,
            summary: spec.summary,
            facts: spec.facts,
            max_steps: spec.max_steps,
            tools: spec.tools,
            replies: spec.replies,
            answers: spec.answers.into_iter().map(Answer::from).collect(),
            unanswered: spec.unanswered,
            outputs: spec.outputs,
            solution: spec.solution,
            known_issues: spec.known_issues,
        }
    }
}

/// One thing the customer knows and says when asked for it: the customer
/// answers what the message asks, not the next line of a script, so a
/// trajectory's questions and answers are both recorded and mean
/// something.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Answer {
    /// Words or phrases that ask for it; any one, as whole words in any
    /// case, is enough (`zip` matches "ZIP code?", not "zipper").
    pub when_asked: Vec<String>,
    /// What the customer says.
    pub says: String,
}

impl From<AnswerSpec> for Answer {
    fn from(spec: AnswerSpec) -> Answer {
        Answer {
            when_asked: spec.when_asked,
            says: spec.says,
        }
    }
}

impl From<RecordRef> for TaskRecord {
    fn from(r: RecordRef) -> TaskRecord {
        TaskRecord {
            table: r.table,
            key: r.key,
        }
    }
}
