//! A world: a company's records, its tools, its policy and its tasks, loaded
//! from a folder of plain files (see `docs/world-format.md`).
//!
//! A [`World`] is immutable once loaded and shared (`Arc<World>`) by every
//! episode that runs in it. Loading does all validation up front, so nothing
//! at run time can discover that the world itself is broken.

pub(crate) mod base;
mod hash;
mod image;
mod load;
pub(crate) mod manifest;
pub mod scope;
mod seed;
mod task;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;

pub(crate) use crate::diagnostics::{Diagnostic, Diagnostics};
pub(crate) use crate::sql::sql_message;
pub use image::default_cache_dir;
pub(crate) use load::describe_schema_error;
pub(crate) use load::open_episode_connection;
pub(crate) use manifest::ResultShape;
pub use manifest::ToolKind;
pub use task::{Answer, SolutionStep, Task, TaskRecord};

use crate::error::Result;
use crate::sql::functions::IdFormats;

/// A loaded, validated world.
pub struct World {
    /// The folder it was loaded from, as given to [`World::load`].
    pub root: PathBuf,
    /// Identity and clock, from `world.toml`.
    pub meta: WorldMeta,
    /// `policy.md` as written (empty when there is none): the rules the
    /// performer is told to follow, and the system prompt of exports.
    pub policy: String,
    /// The declared tools by name, in sorted file-name order.
    pub tools: IndexMap<String, Tool>,
    /// The views by name, in `views.toml` order; each is also a read tool.
    pub views: IndexMap<String, View>,
    /// The tasks by id, in the order of their files (sorted, TOML before
    /// JSONL) and of each file.
    pub tasks: IndexMap<String, Task>,
    /// Every table of the schema, with how its rows appear in the diff.
    pub tables: Vec<TableInfo>,
    /// Whose records a task is about, when the world declares it.
    pub scope: Option<scope::Scope>,
    /// SHA-256 over every behaviour-affecting file; see `docs/world-format.md`.
    pub content_hash: String,
    /// The seeded database, serialized once so that reset is a memory copy;
    /// shared with the process's image cache (see `image`).
    pub(crate) snapshot: Arc<[u8]>,
    /// Whether this load seeded the database or reused an image (what the
    /// image tests check).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) image_source: image::ImageSource,
    /// The read-only seed every episode diffs against (see `base`).
    pub(crate) base: base::SharedBase,
    pub(crate) scripts: rhai::Engine,
    pub(crate) templates: minijinja::Environment<'static>,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("id", &self.meta.id)
            .field("version", &self.meta.version)
            .field("content_hash", &self.content_hash)
            .finish_non_exhaustive()
    }
}

/// Identity and simulation settings from `world.toml`.
#[derive(Debug, Clone, Serialize)]
pub struct WorldMeta {
    /// The stable id episodes are recorded under (`support-desk`).
    pub id: String,
    /// The display name, e.g. the simulated company's.
    pub name: String,
    /// The author's version label; the content hash, not this, is what
    /// detects a changed world.
    pub version: String,
    /// Free text for people; empty when not given.
    pub description: String,
    /// What the world calls the person the performer serves (`customer`
    /// unless `world.toml` says `user = "patient"`), for the engine's
    /// prompts and briefs.
    pub user: String,
    /// Simulated clock at reset, seconds since the Unix epoch.
    pub(crate) clock_start: i64,
    /// How far the simulated clock moves per step.
    pub(crate) tick_seconds: i64,
    /// How `new_id` writes ids.
    pub(crate) ids: IdFormats,
}

/// A declared tool, compiled.
pub struct Tool {
    /// What actions call it by (`issue_refund`).
    pub name: String,
    /// A label for people; derived from the name when not given.
    pub title: String,
    /// What the tool does, as the performer reads it.
    pub description: String,
    /// Whether it may change the world.
    pub kind: ToolKind,
    /// A successful call ends the task (the step is `terminated`).
    pub ends_episode: bool,
    /// JSON Schema of the arguments, as the agent and the form builder see it.
    pub parameters: serde_json::Value,
    pub(crate) validator: jsonschema::Validator,
    /// Argument names refused before any guard (`[arguments]`).
    pub(crate) arguments: ArgumentRules,
    /// Rules checked in order before the body; the first that fails refuses
    /// the call.
    pub(crate) guards: Vec<Guard>,
    /// SQL statements, run in order after the guards; a write tool's whole
    /// call is one savepoint, so a failure leaves the world as it was.
    pub(crate) body: Vec<String>,
    pub(crate) script: Option<rhai::AST>,
    /// What the call returns, when it returns more than `Done.`.
    pub(crate) result: Option<ToolResult>,
}

/// `[arguments]`, compiled: the refusals of calls naming reserved or
/// undeclared arguments, checked in Rust before the guards' SQL.
#[derive(Default)]
pub(crate) struct ArgumentRules {
    /// Reserved names with their error template's name, in name order.
    pub reserved: Vec<(String, String)>,
    /// The undeclared-argument error template's name, and the names
    /// `parameters` declares.
    pub unexpected: Option<(String, std::collections::BTreeSet<String>)>,
}

/// A business rule checked before a tool's body runs.
pub(crate) struct Guard {
    pub check: String,
    /// Name of the error template in the world's template environment.
    pub(crate) error_template: String,
}

/// A tool's answer: a query, its shape and the text template.
pub(crate) struct ToolResult {
    pub query: Option<String>,
    pub shape: ResultShape,
    pub(crate) text_template: Option<String>,
    /// Columns of `query` holding JSON text, given to the agent (and the
    /// template) as JSON values.
    pub(crate) json_columns: Vec<String>,
}

/// A named read-only query shown as a record table; also a read tool.
#[derive(Debug, Clone, Serialize)]
pub struct View {
    /// The view's name; its read tool is `view_<name>`.
    pub name: String,
    /// A label for people; derived from the name when not given.
    pub title: String,
    /// What it lists, as the performer reads it; may be empty.
    pub description: String,
    /// The listing's `SELECT`, run read-only.
    pub query: String,
    /// The query's columns, in order, as found when the world loaded.
    pub columns: Vec<String>,
    /// The column that identifies a record, for opening one.
    pub key: Option<String>,
    /// The `SELECT` for one full record, with `:key` bound; with `key`, it
    /// lets the read tool open a record.
    pub record: Option<String>,
    /// Columns holding JSON text, returned as JSON values (in listings and
    /// in an opened record).
    pub json_columns: Vec<String>,
    /// Who may read it: agents and experts, or the human expert only.
    pub audience: Audience,
    /// Plain-language labels of its columns (and its record's), by name:
    /// its own `labels`, else the tables' (see `[tables.<name>.labels]`).
    pub labels: BTreeMap<String, String>,
}

/// Who a view is shown to. A world whose agents must earn what they know
/// (τ-bench's: find the user by name and zip first) still wants its
/// records listed for the person recording, who reads them in the app as
/// recorded steps; offering agents the same list would let them skip the
/// authentication the task is testing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Audience {
    /// A read tool for agents and a records list for experts.
    #[default]
    Everyone,
    /// A records list in the app only: no agent is offered it or may call it.
    Expert,
}

impl Audience {
    /// The words `views.toml` uses, in the order the docs give them.
    pub const WORDS: [&'static str; 2] = ["everyone", "expert"];

    /// The audience `views.toml` names by `word`, if it is one.
    pub fn parse(word: &str) -> Option<Audience> {
        match word {
            "everyone" => Some(Audience::Everyone),
            "expert" => Some(Audience::Expert),
            _ => None,
        }
    }
}

/// How a table's rows appear in the state diff.
#[derive(Debug, Clone, Serialize)]
pub struct TableInfo {
    /// The SQL table's name.
    pub name: String,
    /// The single-column primary key, or `None` to key rows by `rowid`.
    pub key_column: Option<String>,
    /// When set, a record *is* this column's JSON document.
    pub document_column: Option<String>,
    /// Plain-language labels of its columns (or documents' fields), by
    /// name, from `[tables.<name>.labels]`; a column without one is shown
    /// by its name made readable.
    pub labels: BTreeMap<String, String>,
    /// What the table is called on screen ("Messages sent" for `outbox`),
    /// from labels.toml's `[table_titles]`; without one the app shows the
    /// name made readable.
    pub title: Option<String>,
}

/// A tool as offered to agents and to the app: a function spec.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ToolSpec {
    /// The name actions call it by.
    pub name: String,
    /// A label for people.
    pub title: String,
    /// What it does, as the agent reads it.
    pub description: String,
    /// Read or write.
    pub kind: ToolKind,
    /// A successful call ends the task.
    pub ends_episode: bool,
    /// The arguments' JSON Schema.
    pub parameters: serde_json::Value,
}

/// The prefix that turns a view name into its read tool's name.
pub const VIEW_TOOL_PREFIX: &str = "view_";

/// The SQL parameter that holds every argument of a tool call as one JSON
/// object (`json_each(:_arguments)`), declared or not: a guard can refuse
/// arguments a tool does not take with the world's own message (τ-bench's
/// Python keyword errors) instead of the schema's. Reserved: no tool may
/// declare a parameter of this name.
pub const ALL_ARGUMENTS: &str = "_arguments";

impl World {
    /// Loads and validates the world in `dir`. Either everything is right
    /// and a world comes back, or every problem found is reported.
    ///
    /// The seeded database of an earlier load of the same world in this
    /// process is reused (keyed by the content of the files seeding reads),
    /// so loading a world again costs no seeding.
    pub fn load(dir: impl AsRef<Path>) -> Result<World> {
        load::load(dir.as_ref(), None)
    }

    /// [`World::load`], also keeping the seeded database as an image file
    /// under `cache_dir` for later processes (see [`default_cache_dir`]).
    /// An image file that does not verify is ignored and rewritten; one
    /// that cannot be written only costs the next process a seeding.
    pub fn load_cached(dir: impl AsRef<Path>, cache_dir: Option<&Path>) -> Result<World> {
        load::load(dir.as_ref(), cache_dir)
    }

    /// The task with this id, if the world declares it.
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.get(id)
    }

    /// Every action an agent may call: declared tools, then one read tool per
    /// view shown to everyone (expert-only views are left out).
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        self.specs(Audience::Everyone)
    }

    /// Every action an expert may call: an agent's, then the read tools of
    /// the views shown to the expert only.
    pub fn expert_tool_specs(&self) -> Vec<ToolSpec> {
        self.specs(Audience::Expert)
    }

    fn specs(&self, audience: Audience) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self
            .tools
            .values()
            .map(|t| ToolSpec {
                name: t.name.clone(),
                title: t.title.clone(),
                description: t.description.clone(),
                kind: t.kind,
                ends_episode: t.ends_episode,
                parameters: t.parameters.clone(),
            })
            .collect();
        specs.extend(
            self.views
                .values()
                .filter(|v| audience == Audience::Expert || v.audience == Audience::Everyone)
                .map(View::tool_spec),
        );
        specs
    }

    /// The tool specs a task allows an agent (all, unless the task names a
    /// subset): what the agent server, MCP and exports offer.
    pub fn task_tool_specs(&self, task: &Task) -> Vec<ToolSpec> {
        Self::allowed(self.tool_specs(), task)
    }

    /// The tool specs a task allows the expert recording it in the app: an
    /// agent's, plus the expert-only views' read tools.
    pub fn expert_task_tool_specs(&self, task: &Task) -> Vec<ToolSpec> {
        Self::allowed(self.expert_tool_specs(), task)
    }

    fn allowed(all: Vec<ToolSpec>, task: &Task) -> Vec<ToolSpec> {
        match &task.tools {
            None => all,
            Some(allowed) => all
                .into_iter()
                .filter(|s| {
                    (s.kind == ToolKind::Read && s.name.starts_with(VIEW_TOOL_PREFIX))
                        || allowed.contains(&s.name)
                })
                .collect(),
        }
    }

    /// Whether `tool` is the read tool of a view shown to the expert only:
    /// no agent is offered it.
    pub fn is_expert_only_tool(&self, tool: &str) -> bool {
        tool.strip_prefix(VIEW_TOOL_PREFIX)
            .and_then(|name| self.views.get(name))
            .is_some_and(|v| v.audience == Audience::Expert)
    }

    /// How the table `name` appears in the state diff, if the schema has it.
    pub fn table(&self, name: &str) -> Option<&TableInfo> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// What the table `name` is called on screen: its title from
    /// labels.toml, else its name made readable (`ticket_messages` →
    /// "Ticket messages"), so evidence names records in the world's words.
    pub fn table_title(&self, name: &str) -> String {
        self.table(name)
            .and_then(|t| t.title.clone())
            .unwrap_or_else(|| load::names::humanize(name))
    }

    /// What the tool `name` is called on screen: its title, a view's read
    /// tool by the view's title, else the name made readable, so evidence
    /// names steps as the expert saw them.
    pub fn tool_title(&self, name: &str) -> String {
        if let Some(t) = self.tools.get(name) {
            return t.title.clone();
        }
        name.strip_prefix(VIEW_TOOL_PREFIX)
            .and_then(|v| self.views.get(v))
            .map_or_else(|| load::names::humanize(name), |v| v.title.clone())
    }

    /// What argument `arg` of tool `tool` is called on its form: the
    /// parameter's `title` in the tool's schema, else the name made readable.
    pub fn argument_title(&self, tool: &str, arg: &str) -> String {
        self.tools
            .get(tool)
            .and_then(|t| t.parameters.get("properties")?.get(arg)?.get("title"))
            .and_then(serde_json::Value::as_str)
            .map_or_else(|| load::names::humanize(arg), str::to_string)
    }
}

impl View {
    /// The name of the view's read tool: `view_<name>`.
    pub fn tool_name(&self) -> String {
        format!("{VIEW_TOOL_PREFIX}{}", self.name)
    }

    /// The view's read tool: filter, search, sort and paging arguments
    /// over its columns, plus `key` when it can open a record.
    pub(crate) fn tool_spec(&self) -> ToolSpec {
        let columns: Vec<serde_json::Value> = self
            .columns
            .iter()
            .map(|c| serde_json::Value::String(c.clone()))
            .collect();
        let mut properties = serde_json::json!({
            "filter": {"type": "object", "description": "Exact match on columns: {column: value}.", "propertyNames": {"enum": columns}},
            "search": {"type": "string", "description": "Case-insensitive text to look for in any text column."},
            "sort": {"type": "string", "enum": columns, "description": "Column to sort by."},
            "descending": {"type": "boolean", "description": "Sort from largest to smallest."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500, "description": "How many rows to return (default 50)."},
            "offset": {"type": "integer", "minimum": 0, "description": "How many rows to skip."}
        });
        if self.record.is_some() {
            if let (Some(key), Some(obj)) = (&self.key, properties.as_object_mut()) {
                obj.insert(
                    "key".into(),
                    serde_json::json!({"description": format!("Open one record by its `{key}` to see all of its fields.")}),
                );
            }
        }
        let description = if self.description.is_empty() {
            format!("List {}.", self.title)
        } else {
            self.description.clone()
        };
        ToolSpec {
            name: self.tool_name(),
            title: self.title.clone(),
            description,
            kind: ToolKind::Read,
            ends_episode: false,
            parameters: serde_json::json!({
                "type": "object",
                "properties": properties,
                "additionalProperties": false
            }),
        }
    }
}
