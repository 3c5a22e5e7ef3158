//! The lines of a task's fields, so a problem with a task points at the
//! field or solution step that has it rather than at the task's header.

use serde::Deserialize;
use toml::Spanned;

use crate::diagnostics::line_of;

/// Where the checked fields of one task are written, so a problem points
/// at the offending line: a TOML task's fields each have their own line; a
/// JSONL task is one line.
#[derive(Debug, Default)]
pub(super) struct FieldLines {
    pub task: Option<usize>,
    pub id: Option<usize>,
    pub max_steps: Option<usize>,
    pub summary: Option<usize>,
    pub tools: Vec<usize>,
    pub records: Vec<usize>,
    pub solution: Vec<usize>,
    pub answers: Vec<usize>,
}

impl FieldLines {
    /// Every field on the task's one line.
    pub fn one(line: usize) -> FieldLines {
        FieldLines {
            task: Some(line),
            ..FieldLines::default()
        }
    }

    /// The line of the `i`-th entry of `list`, or the task's.
    pub fn entry(&self, list: &[usize], i: usize) -> Option<usize> {
        list.get(i).copied().or(self.task)
    }

    /// The line of a field, or the task's.
    pub fn field(&self, line: Option<usize>) -> Option<usize> {
        line.or(self.task)
    }
}

/// The spans of a TOML tasks file's checked fields, read beside the
/// `TasksToml` parse (whose shape JSONL shares, so it cannot carry spans).
#[derive(Deserialize)]
pub(super) struct TaskSpansToml {
    #[serde(default)]
    pub tasks: Vec<TaskFieldSpans>,
}

#[derive(Deserialize)]
pub(super) struct TaskFieldSpans {
    id: Option<Spanned<toml::Value>>,
    max_steps: Option<Spanned<toml::Value>>,
    summary: Option<Spanned<toml::Value>>,
    #[serde(default)]
    tools: Vec<Spanned<toml::Value>>,
    #[serde(default)]
    records: Vec<Spanned<toml::Value>>,
    #[serde(default)]
    solution: Vec<Spanned<toml::Value>>,
    #[serde(default)]
    answers: Vec<Spanned<toml::Value>>,
}

impl FieldLines {
    pub fn of_toml(text: &str, task: usize, spans: Option<&TaskFieldSpans>) -> FieldLines {
        let Some(spans) = spans else {
            return FieldLines::one(task);
        };
        let line = |s: &Spanned<toml::Value>| line_of(text, s.span().start);
        let lines = |v: &[Spanned<toml::Value>]| v.iter().map(line).collect();
        FieldLines {
            task: Some(task),
            id: spans.id.as_ref().map(line),
            max_steps: spans.max_steps.as_ref().map(line),
            summary: spans.summary.as_ref().map(line),
            tools: lines(&spans.tools),
            records: lines(&spans.records),
            solution: lines(&spans.solution),
            answers: lines(&spans.answers),
        }
    }
}
