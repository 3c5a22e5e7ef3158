//! Loading `tasks/*.toml` and `tasks/*.jsonl`: each task's limits, the
//! tools it allows, the records it names and its reference solution are
//! checked against the world they run in.

use std::collections::BTreeSet;

use super::context::LoadContext;
use super::files;
use super::task_lines::{FieldLines, TaskSpansToml};
use super::tools::describe_schema_error;
use crate::action::Action;
use crate::diagnostics::line_of;
use crate::world::manifest::{AnswerSpec, RecordRef, TaskSpec, TasksToml};
use crate::world::{SolutionStep, TableInfo, Task, Tool, View, VIEW_TOOL_PREFIX};
use indexmap::IndexMap;

/// What a task is checked against: the world's compiled pieces.
pub(super) struct TaskWorld<'w> {
    pub tools: &'w IndexMap<String, Tool>,
    pub views: &'w IndexMap<String, View>,
    pub tables: &'w [TableInfo],
    /// Tools whose files had problems (already reported): a task naming
    /// one is not reported again for it.
    pub broken_tools: &'w BTreeSet<String>,
}

/// A task as found in a file, before it is checked.
struct Found {
    rel: String,
    lines: FieldLines,
    spec: TaskSpec,
}

/// Every sound task, by id; tasks with problems are left out (and the
/// problems reported).
pub(super) fn load_tasks(
    cx: &mut LoadContext<'_>,
    world: &TaskWorld<'_>,
) -> IndexMap<String, Task> {
    let mut tasks = IndexMap::new();
    for found in read_tasks(cx) {
        let before = cx.diags.len();
        check_task(cx, world, &found, tasks.contains_key(&found.spec.id));
        if cx.diags.len() == before {
            tasks.insert(found.spec.id.clone(), Task::from(found.spec));
        }
    }
    tasks
}

/// The tasks of every TOML file, then of every JSONL file (one per line).
fn read_tasks(cx: &mut LoadContext<'_>) -> Vec<Found> {
    let mut found = Vec::new();
    for rel in files::list_files(cx.root, "tasks", ".toml", &mut cx.diags) {
        let Some(text) = files::read_text(cx.root, &rel, &mut cx.diags) else {
            continue;
        };
        cx.hashed.add(&rel);
        if let Some(parsed) = files::parse_toml::<TasksToml>(&rel, &text, &mut cx.diags) {
            let spans = toml::from_str::<TaskSpansToml>(&text).ok();
            for (i, t) in parsed.tasks.into_iter().enumerate() {
                let line = line_of(&text, t.span().start);
                let task_spans = spans.as_ref().and_then(|s| s.tasks.get(i));
                found.push(Found {
                    rel: rel.clone(),
                    lines: FieldLines::of_toml(&text, line, task_spans),
                    spec: t.into_inner(),
                });
            }
        }
    }
    for rel in files::list_files(cx.root, "tasks", ".jsonl", &mut cx.diags) {
        let Some(text) = files::read_text(cx.root, &rel, &mut cx.diags) else {
            continue;
        };
        cx.hashed.add(&rel);
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<TaskSpec>(line) {
                Ok(spec) => found.push(Found {
                    rel: rel.clone(),
                    lines: FieldLines::one(i + 1),
                    spec,
                }),
                Err(e) => cx
                    .diags
                    .push(&rel, Some(i + 1), None, format!("not a valid task: {e}")),
            }
        }
    }
    found
}

/// Reports every problem of one task; `duplicate` when an earlier task
/// already has its id.
fn check_task(cx: &mut LoadContext<'_>, world: &TaskWorld<'_>, found: &Found, duplicate: bool) {
    let Found {
        rel,
        lines,
        spec: task,
    } = found;
    let subject = Some(format!("task {}", task.id));
    let id_line = lines.field(lines.id);
    if task.id.trim().is_empty() {
        cx.diags
            .push(rel, id_line, None, "task id must not be empty");
    }
    if duplicate {
        cx.diags.push(
            rel,
            id_line,
            subject.clone(),
            "another task has the same id",
        );
    }
    if task.max_steps == 0 {
        cx.diags.push(
            rel,
            lines.field(lines.max_steps),
            subject.clone(),
            "max_steps must be at least 1",
        );
    }
    for (i, t) in task.tools.iter().flatten().enumerate() {
        if !world.tools.contains_key(t) && !world.broken_tools.contains(t) {
            cx.diags.push(
                rel,
                lines.entry(&lines.tools, i),
                subject.clone(),
                format!("`tools` names `{t}`, which is not a tool of this world"),
            );
        }
    }
    for (i, r) in task.records.iter().enumerate() {
        if let Err(message) = check_record(cx, world.tables, r) {
            cx.diags.push(
                rel,
                lines.entry(&lines.records, i),
                subject.clone(),
                message,
            );
        }
    }
    for (i, answer) in task.answers.iter().enumerate() {
        if let Err(message) = check_answer(i, answer) {
            cx.diags.push(
                rel,
                lines.entry(&lines.answers, i),
                subject.clone(),
                message,
            );
        }
    }
    if task
        .unanswered
        .as_deref()
        .is_some_and(|u| u.trim().is_empty())
    {
        cx.diags.push(
            rel,
            lines.task,
            subject.clone(),
            "`unanswered` must not be empty: it is what the customer says to a message they cannot answer",
        );
    }
    if task.summary.as_deref().is_some_and(|u| u.trim().is_empty()) {
        cx.diags.push(
            rel,
            lines.field(lines.summary),
            subject.clone(),
            "`summary` must not be empty: it is what the task list says of the task (leave it out to show the customer's opening message)",
        );
    }
    for (i, step) in task.solution.iter().enumerate() {
        if calls_broken_tool(world, step) {
            continue;
        }
        if let Err(message) = check_solution_step(world, i, step) {
            cx.diags.push(
                rel,
                lines.entry(&lines.solution, i),
                subject.clone(),
                message,
            );
        }
    }
}

/// An answer (the `i`-th, from 0) needs something to say and at least one
/// cue that asks for it; an empty cue would match nothing and hide the
/// answer for good.
fn check_answer(i: usize, answer: &AnswerSpec) -> Result<(), String> {
    let n = i + 1;
    if answer.says.trim().is_empty() {
        return Err(format!(
            "answer {n}: `says` must not be empty: it is what the customer answers"
        ));
    }
    if answer.when_asked.is_empty() {
        return Err(format!(
            "answer {n}: `when_asked` must list at least one word or phrase that asks for it, e.g. when_asked = [\"zip\", \"postcode\"]"
        ));
    }
    if let Some(k) = answer.when_asked.iter().position(|c| c.trim().is_empty()) {
        return Err(format!(
            "answer {n}: `when_asked` entry {} is empty; each entry is a word or phrase the performer would write to ask",
            k + 1
        ));
    }
    Ok(())
}

/// A step calling a tool whose file had problems: those problems are the
/// ones to fix, and are reported once, against the tool.
fn calls_broken_tool(world: &TaskWorld<'_>, step: &serde_json::Value) -> bool {
    matches!(Action::from_json(step), Ok(Action::Tool { tool, .. }) if world.broken_tools.contains(&tool))
}

/// A record a task names must be in the seed data.
fn check_record(cx: &LoadContext<'_>, tables: &[TableInfo], r: &RecordRef) -> Result<(), String> {
    let Some(info) = tables.iter().find(|t| t.name == r.table) else {
        return Err(format!(
            "`records` names table `{}`, which does not exist",
            r.table
        ));
    };
    let col = info.key_column.clone().unwrap_or_else(|| "rowid".into());
    let sql = format!(
        "SELECT count(*) FROM \"{}\" WHERE \"{}\" = ?1",
        info.name, col
    );
    // Cached: a world's tasks name thousands of records of a few tables,
    // and preparing the same look-up for each was a tenth of loading them.
    let n: i64 = cx
        .conn
        .prepare_cached(&sql)
        .and_then(|mut stmt| {
            stmt.query_row([crate::sql::values::from_json(&r.key)], |row| row.get(0))
        })
        .unwrap_or(0);
    if n == 0 {
        return Err(format!(
            "`records` names {} {} in `{}`, which is not in the seed data",
            col, r.key, r.table
        ));
    }
    Ok(())
}

/// A step of the reference solution (the `i`-th, from 0) must be an action
/// this world can take, with arguments its tool accepts, and only the keys
/// of its action shape plus an optional `why` text (see [`SolutionStep`]).
fn check_solution_step(
    world: &TaskWorld<'_>,
    i: usize,
    step: &serde_json::Value,
) -> Result<(), String> {
    let what = format!("solution step {}", i + 1);
    match SolutionStep::from_json(step).map(|s| s.action) {
        Err(e) => Err(format!("{what}: {e}")),
        Ok(Action::Message { .. }) => Ok(()),
        Ok(Action::Tool { tool, args }) => {
            if let Some(t) = world.tools.get(&tool) {
                let value = serde_json::Value::Object(args);
                let errors: Vec<String> = t
                    .validator
                    .iter_errors(&value)
                    .map(|e| describe_schema_error(&e))
                    .collect();
                if !errors.is_empty() {
                    return Err(format!("{what} ({tool}): {}", errors.join("; ")));
                }
                Ok(())
            } else if !tool
                .strip_prefix(VIEW_TOOL_PREFIX)
                .is_some_and(|v| world.views.contains_key(v))
            {
                Err(format!("{what}: `{tool}` is not a tool of this world"))
            } else {
                Ok(())
            }
        }
    }
}
