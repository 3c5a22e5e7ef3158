//! A task: one job to do in a world, as the engine runs, scores and exports
//! it.
//!
//! The files say what a task is in [`TaskSpec`], whose shape follows the
//! file syntax (defaults, `deny_unknown_fields`); a [`Task`] is built from it
//! once the loader has checked it against the world, so the rest of the
//! engine never depends on how tasks are written.

use serde::Serialize;
use serde_json::Value;

use super::manifest::{RecordRef, TaskSpec};

/// A task of a loaded world, checked against it.
///
/// It serializes (for `world describe` and the like) with the field names
/// and omissions of the file format, so what is shown reads like what was
/// written.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Task {
    pub id: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<String>,
    /// The performer's brief.
    pub instruction: String,
    /// The customer's first message.
    pub opening_message: String,
    /// What the customer knows and would say when asked.
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
    /// What the performer must tell the customer, for rubrics to check.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
    /// A reference solution: actions in their JSON form, each valid for
    /// this world.
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
    pub table: String,
    /// The value of the table's key column (or rowid).
    pub key: Value,
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
            facts: spec.facts,
            max_steps: spec.max_steps,
            tools: spec.tools,
            replies: spec.replies,
            outputs: spec.outputs,
            solution: spec.solution,
            known_issues: spec.known_issues,
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
