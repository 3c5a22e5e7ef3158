//! Load-time problems, collected rather than thrown.
//!
//! A world author fixing a broken world wants every problem at once, each
//! pinned to a file and (where the format has lines) a line, so loading keeps
//! going after the first error and reports them all together. Rubrics are
//! loaded the same way. This module sits on the bottom floor with `error`,
//! which carries the collected problems.

use std::fmt;

/// One problem found while loading a world (or a rubric).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    /// Path relative to the world folder, e.g. `tools/issue_refund.toml`.
    pub file: String,
    /// 1-based line, when the file format has lines.
    pub line: Option<usize>,
    /// What the problem is about: `tool issue_refund, guard 2`, `task t-1`.
    pub subject: Option<String>,
    /// What was wrong and what was expected.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(subject) = &self.subject {
            write!(f, ": {subject}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The accumulated problems of one load.
#[derive(Debug, Default, Clone)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(
        &mut self,
        file: impl Into<String>,
        line: Option<usize>,
        subject: Option<String>,
        message: impl Into<String>,
    ) {
        self.items.push(Diagnostic {
            file: file.into(),
            line,
            subject,
            message: message.into(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.items
    }
}

/// 1-based line number of a byte offset in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}
