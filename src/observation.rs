//! What the world answers to an action.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a tool call did not do what was asked. The call still counts as a
/// step: the attempt is part of the trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservationErrorCode {
    /// No tool or view has that name (or the task does not allow it).
    UnknownTool,
    /// The arguments do not match the tool's parameters.
    InvalidArguments,
    /// A guard (a business rule) refused the call.
    GuardFailed,
    /// The tool's SQL failed, e.g. a constraint was violated.
    ToolFailed,
    /// The tool's script failed.
    ScriptFailed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservationError {
    pub code: ObservationErrorCode,
    pub message: String,
}

/// The result of one step as the performer sees it: structured content for
/// programs, and `text` for language models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub content: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ObservationError>,
    pub text: String,
}

impl Observation {
    pub fn success(content: Value, text: String) -> Observation {
        Observation {
            ok: true,
            content,
            error: None,
            text,
        }
    }

    /// An error observation; its text is `Error: <message>`, the form
    /// τ-bench and most tool-agent environments use.
    pub fn failure(code: ObservationErrorCode, message: impl Into<String>) -> Observation {
        let message = message.into();
        Observation {
            ok: false,
            content: Value::Null,
            text: format!("Error: {message}"),
            error: Some(ObservationError { code, message }),
        }
    }
}
