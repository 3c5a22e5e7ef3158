//! Worlds and their tasks, as the start screen and the workspace show them.

use serde::Serialize;
use tauri::State;
use ts_rs::TS;
use understudy::world::{Audience, Task, ToolKind, ToolSpec, World, VIEW_TOOL_PREFIX};

use crate::error::AppResult;
use crate::ipc::command;
use crate::AppState;

#[derive(Debug, Clone, Serialize, TS)]
pub struct Catalog {
    /// Where the worlds were found, if anywhere.
    pub worlds_dir: Option<String>,
    pub worlds: Vec<WorldSummary>,
    /// World folders that did not load, each with a plain explanation.
    pub problems: Vec<WorldProblem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct WorldProblem {
    pub folder: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct WorldSummary {
    pub id: String,
    pub name: String,
    pub version: String,
    pub description: String,
    pub tasks: Vec<TaskSummary>,
}

impl WorldSummary {
    /// The world's listing with no one's progress yet (the catalogue adds
    /// the current expert's).
    pub fn new(w: &World) -> WorldSummary {
        WorldSummary {
            id: w.meta.id.clone(),
            name: w.meta.name.clone(),
            version: w.meta.version.clone(),
            description: w.meta.description.clone(),
            tasks: w
                .tasks
                .values()
                .map(|t| TaskSummary {
                    id: t.id.clone(),
                    title: t.title.clone(),
                    difficulty: t.difficulty.clone(),
                    summary: first_words(&summary_of(t), SUMMARY_CHARS),
                    progress: TaskProgress::default(),
                })
                .collect(),
        }
    }
}

/// What the performer is told about a task (never its solution).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct TaskBrief {
    pub id: String,
    pub title: String,
    pub difficulty: Option<String>,
    /// The performer's brief.
    pub instruction: String,
    /// The customer's first message.
    pub opening_message: String,
    /// Who the performer is talking to: the task's customer, or the
    /// world's word for its user ("the customer", "the patient"). What the
    /// customer knows is never sent to the window: the expert learns it by
    /// asking, so the question and the answer are both in the trajectory.
    pub customer: String,
    pub max_steps: u32,
}

impl TaskBrief {
    pub fn new(t: &Task, user: &str) -> TaskBrief {
        TaskBrief {
            id: t.id.clone(),
            title: t.title.clone(),
            difficulty: t.difficulty.clone(),
            instruction: t.instruction.clone(),
            opening_message: t.opening_message.clone(),
            customer: t.customer.clone().unwrap_or_else(|| format!("the {user}")),
            max_steps: t.max_steps,
        }
    }
}

/// A task in the start screen's list: kept small, because a world may
/// have hundreds of tasks (the full brief comes with the episode).
#[derive(Debug, Clone, Serialize, TS)]
pub struct TaskSummary {
    pub id: String,
    pub title: String,
    pub difficulty: Option<String>,
    /// What the customer wants: the task's display-only summary, else the
    /// start of their opening message, after their name; the brief when
    /// there is none.
    pub summary: String,
    pub progress: TaskProgress,
}

/// How much of a task's brief the list shows.
const SUMMARY_CHARS: usize = 160;

/// What the list says of a task: its display-only `summary` when it has
/// one. Otherwise, as every brief of a world tends to read the same
/// ("Resolve ticket T-10xx following the policy"), the customer's own
/// opening words tell tasks apart.
fn summary_of(t: &Task) -> String {
    if let Some(summary) = &t.summary {
        return summary.clone();
    }
    if t.opening_message.trim().is_empty() {
        return t.instruction.clone();
    }
    match t.customer.as_deref().and_then(|c| c.split(',').next()) {
        Some(name) if !name.trim().is_empty() => format!("{}: {}", name.trim(), t.opening_message),
        _ => t.opening_message.clone(),
    }
}

/// `text` cut at a word boundary to at most `max` characters, with an
/// ellipsis when cut.
fn first_words(text: &str, max: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= max {
        return text;
    }
    let cut: String = text.chars().take(max).collect();
    let cut = cut.rsplit_once(' ').map(|(head, _)| head).unwrap_or(&cut);
    format!("{}…", cut.trim_end_matches([',', ';', ':', '.']))
}

/// The current expert's progress on one task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
pub struct TaskProgress {
    /// Episodes submitted (including reviewed ones).
    pub submitted: u32,
    /// An episode in progress or paused, to resume.
    pub open_episode: Option<String>,
    /// The expert's latest finished attempt was sent back by a reviewer
    /// (cleared once they submit another).
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returned: Option<crate::queue::Returned>,
}

/// A world's policy, tools and views: what the workspace is built from.
#[derive(Debug, Clone, Serialize, TS)]
pub struct WorldDetail {
    pub id: String,
    pub name: String,
    pub version: String,
    pub description: String,
    /// The policy (SOP), Markdown.
    pub policy: String,
    pub views: Vec<ViewInfo>,
}

impl WorldDetail {
    pub fn new(w: &World) -> WorldDetail {
        WorldDetail {
            id: w.meta.id.clone(),
            name: w.meta.name.clone(),
            version: w.meta.version.clone(),
            description: w.meta.description.clone(),
            policy: w.policy.clone(),
            views: w
                .views
                .values()
                .map(|v| ViewInfo {
                    name: v.name.clone(),
                    tool: v.tool_name(),
                    title: v.title.clone(),
                    description: v.description.clone(),
                    columns: v.columns.clone(),
                    key: v.key.clone(),
                    has_record: v.record.is_some() && v.key.is_some(),
                    expert_only: v.audience == Audience::Expert,
                    labels: v.labels.clone(),
                })
                .collect(),
        }
    }
}

/// A view: a record table, also a read tool (`tool`).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ViewInfo {
    pub name: String,
    /// The read tool that lists it, e.g. `view_tickets`.
    pub tool: String,
    pub title: String,
    pub description: String,
    pub columns: Vec<String>,
    /// The column that identifies a record.
    pub key: Option<String>,
    /// A row can be opened to see the full record.
    pub has_record: bool,
    /// Shown to the expert only (`audience = "expert"`): agents are not
    /// offered it, so the window says so.
    pub expert_only: bool,
    /// Plain-language labels of its columns and its record's fields, from
    /// the world; a column without one is shown by its name made readable.
    #[ts(type = "Record<string, string>")]
    pub labels: std::collections::BTreeMap<String, String>,
}

/// A tool the performer may use, with its parameters' JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ToolInfo {
    pub name: String,
    pub title: String,
    pub description: String,
    /// `read` tools only look; `write` tools change the world.
    pub kind: ToolKind,
    /// A successful call ends the task.
    pub ends_episode: bool,
    /// The view this tool lists, for view tools.
    pub view: Option<String>,
    #[ts(type = "Record<string, unknown>")]
    pub parameters: serde_json::Value,
}

impl ToolInfo {
    pub fn new(s: ToolSpec) -> ToolInfo {
        ToolInfo {
            view: s.name.strip_prefix(VIEW_TOOL_PREFIX).map(str::to_string),
            name: s.name,
            title: s.title,
            description: s.description,
            kind: s.kind,
            ends_episode: s.ends_episode,
            parameters: s.parameters,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{first_words, summary_of};

    #[test]
    fn summaries_cut_at_a_word() {
        assert_eq!(
            first_words("Resolve  ticket\nT-1042.", 160),
            "Resolve ticket T-1042."
        );
        assert_eq!(first_words("one two three four", 12), "one two…");
        assert_eq!(first_words("alpha, beta gamma", 8), "alpha…");
    }

    #[test]
    fn a_task_is_summarised_by_what_its_customer_asks() {
        let world = understudy::World::load(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../fixtures/worlds/support-desk"),
        )
        .expect("support-desk loads");
        let task = world
            .task("upgrade-with-verification")
            .expect("the task exists");
        assert!(summary_of(task).starts_with("Priya Raman: Hi! We're opening a second studio"));
        // Every support-desk summary differs, though their briefs read alike.
        let summaries: std::collections::BTreeSet<String> =
            world.tasks.values().map(summary_of).collect();
        assert_eq!(summaries.len(), world.tasks.len());
    }

    #[test]
    fn a_tau_task_is_summarised_by_its_display_only_summary() {
        let world = understudy::World::load(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/worlds/tau-airline"),
        )
        .expect("tau-airline loads");
        let task = world.task("test-0").expect("the task exists");
        assert_eq!(
            summary_of(task),
            "I want to fly from New York to Seattle on May 20."
        );
        // Not the brief every τ task shares, and what agents get stays that brief.
        assert_eq!(
            task.instruction,
            "Help the customer with their request, following the policy."
        );
        let summaries: std::collections::BTreeSet<String> =
            world.tasks.values().map(summary_of).collect();
        assert!(summaries.len() >= world.tasks.len() - 2, "{summaries:?}");
    }
}

command! {
    /// A world's policy and views, for the workspace.
    #[tauri::command(async)]
    pub fn get_world(state: State<'_, AppState>, world_id: String) -> AppResult<WorldDetail> {
        state.service()?.world_detail(&world_id)
    }
}
