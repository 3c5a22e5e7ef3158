//! The on-disk shapes of a world's files, exactly as authors write them.
//! Validation beyond "does it parse" happens in `load`; these types only
//! describe syntax, so `deny_unknown_fields` catches typos such as `gaurds`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::sql::functions::IdFormats;

/// `world.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldToml {
    pub format: u32,
    pub id: String,
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub description: String,
    /// What the world calls the person the performer serves (`patient`,
    /// `client`); the engine's prompts use it.
    #[serde(default = "default_user")]
    pub user: String,
    pub clock: ClockToml,
    #[serde(default)]
    pub ids: IdsToml,
    #[serde(default)]
    pub seed: Vec<Spanned<SeedToml>>,
    #[serde(default)]
    pub tables: BTreeMap<String, TableToml>,
    /// Whose records a task is about (see `world::scope`).
    pub scope: Option<Spanned<ScopeToml>>,
}

/// `[scope]` of `world.toml`, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeToml {
    pub subject: String,
    #[serde(default)]
    pub reach: Vec<ReachToml>,
    #[serde(default)]
    pub sensitive: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReachToml {
    pub table: String,
    pub via: String,
    /// The table `via` points into (default: the subject table).
    pub from: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockToml {
    pub start: String,
    #[serde(default = "default_tick")]
    pub tick_seconds: i64,
}

fn default_user() -> String {
    "customer".into()
}

fn default_tick() -> i64 {
    60
}

/// `[ids]`: how `new_id` writes ids (see [`IdFormats`]).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct IdsToml {
    #[serde(default = "default_separator")]
    pub separator: String,
    #[serde(default = "default_width")]
    pub width: usize,
    #[serde(default = "default_start")]
    pub start: u64,
}

impl Default for IdsToml {
    fn default() -> Self {
        IdsToml {
            separator: default_separator(),
            width: default_width(),
            start: default_start(),
        }
    }
}

impl From<&IdsToml> for IdFormats {
    fn from(ids: &IdsToml) -> IdFormats {
        IdFormats {
            separator: ids.separator.clone(),
            width: ids.width,
            start: ids.start,
        }
    }
}

fn default_separator() -> String {
    "-".into()
}
fn default_width() -> usize {
    6
}
fn default_start() -> u64 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedToml {
    pub table: String,
    pub file: String,
    pub key_column: Option<String>,
    pub document_column: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableToml {
    pub document_column: Option<String>,
}

/// `tools/<name>.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolToml {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    #[serde(default)]
    pub kind: ToolKind,
    #[serde(default)]
    pub ends_episode: bool,
    pub parameters: Option<toml::Value>,
    pub arguments: Option<ArgumentsToml>,
    #[serde(default)]
    pub guards: Vec<GuardToml>,
    #[serde(default)]
    pub body: Vec<Spanned<String>>,
    pub script: Option<Spanned<String>>,
    pub result: Option<ResultToml>,
}

/// Read tools are the information path: they may look but never touch.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ToolKind {
    /// Looks only: its SQL runs in the read sandbox, which denies every
    /// change.
    Read,
    /// May change the world's records (the default).
    #[default]
    Write,
}

/// `[arguments]`: how a call naming the wrong arguments is refused, before
/// any guard and without SQL (τ-bench's Python raises on these).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgumentsToml {
    /// Argument names a call may not use, each with its refusal (a
    /// template over the call's arguments); checked in name order.
    #[serde(default)]
    pub reserved: BTreeMap<String, Spanned<String>>,
    /// The refusal of a call naming an argument `parameters` does not
    /// declare; `{{ name }}` is the first such name in code-point order.
    pub unexpected: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardToml {
    pub check: Spanned<String>,
    pub error: Spanned<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultToml {
    pub query: Option<Spanned<String>>,
    #[serde(default)]
    pub shape: ResultShape,
    pub text: Option<Spanned<String>>,
    /// Columns of `query` that hold JSON text, returned as JSON values.
    pub json_columns: Option<Spanned<Vec<String>>>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ResultShape {
    #[default]
    Rows,
    Row,
    Value,
}

/// `views.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewsToml {
    #[serde(default)]
    pub views: Vec<ViewToml>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewToml {
    pub name: Spanned<String>,
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    pub query: Spanned<String>,
    pub key: Option<String>,
    pub record: Option<Spanned<String>>,
    /// Columns that hold JSON text, returned as JSON values.
    #[serde(default)]
    pub json_columns: Vec<String>,
    /// Who is shown the view: `everyone` (the default) or `expert`.
    pub audience: Option<Spanned<String>>,
}

/// `labels.toml`: plain-language labels, for people (see `load::labels`):
/// `[table_titles]` maps a table to what it is called on screen;
/// `[tables.<table>]` and `[views.<view>]` each map a column to its label.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelsToml {
    #[serde(default)]
    pub table_titles: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    pub tables: BTreeMap<String, BTreeMap<String, Spanned<String>>>,
    #[serde(default)]
    pub views: BTreeMap<String, BTreeMap<String, Spanned<String>>>,
}

/// A `tasks/*.toml` file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TasksToml {
    #[serde(default)]
    pub tasks: Vec<Spanned<TaskSpec>>,
}

/// One task, as written in TOML or JSONL. The loader checks it and turns
/// it into a [`Task`](super::Task), which is what the engine uses; a field
/// added here needs its counterpart there.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub difficulty: Option<String>,
    pub instruction: String,
    #[serde(default)]
    pub opening_message: String,
    /// Who the performer is talking to, as a ticket would name them.
    #[serde(default)]
    pub customer: Option<String>,
    /// What the task list says of the task (display only).
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub facts: Vec<String>,
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    #[serde(default)]
    pub records: Vec<RecordRef>,
    #[serde(default)]
    pub replies: Vec<String>,
    /// What the customer answers when asked, each with the words that ask.
    #[serde(default)]
    pub answers: Vec<AnswerSpec>,
    /// The customer's reply when a message asks for nothing they know.
    #[serde(default)]
    pub unanswered: Option<String>,
    #[serde(default)]
    pub outputs: Vec<String>,
    #[serde(default)]
    pub solution: Vec<serde_json::Value>,
    /// Known problems with the task or its reference answer.
    #[serde(default)]
    pub known_issues: Vec<String>,
}

/// One thing the customer says when asked: `says`, given when the
/// performer's message contains any of `when_asked` (as words, any case).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerSpec {
    pub when_asked: Vec<String>,
    pub says: String,
}

fn default_max_steps() -> u32 {
    50
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordRef {
    pub table: String,
    pub key: serde_json::Value,
}
