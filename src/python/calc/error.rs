//! The error every stage of `calculate` raises: a Python exception's text.
//!
//! Lexer, parser and evaluator all fail the same way (the observation is
//! just `Error: <message>`), so they share one type rather than each
//! stage defining its own and converting.

use std::fmt;

/// Failure of `calculate`: the Python exception message, without the
/// `Error: ` prefix that the observation adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalcError {
    message: String,
}

impl CalcError {
    pub(super) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The Python exception text, e.g. `division by zero` (what `Display`
    /// writes too).
    #[cfg(test)]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CalcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CalcError {}

/// A `SyntaxError` as `str()` renders it, naming the line CPython reports.
pub(super) fn syntax_error_at(message: &str, line: u32) -> CalcError {
    CalcError::new(format!("{message} (<string>, line {line})"))
}

/// A `SyntaxError` on line 1, where every non-empty `eval` input starts.
pub(super) fn syntax_error(message: &str) -> CalcError {
    syntax_error_at(message, 1)
}
