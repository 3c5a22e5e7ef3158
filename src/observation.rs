//! What the world answers to an action.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Why a tool call did not do what was asked. The call still counts as a
/// step: the attempt is part of the trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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

/// One way a tool call's arguments break the tool's JSON Schema, as data,
/// so that a front end can word it for its reader instead of parsing the
/// engine's English (which is written for language models).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ArgumentProblem {
    /// The argument, as a dotted path (`amount`, `filter.status`,
    /// `items.0.qty`); empty for the arguments as a whole. For `required`
    /// and `additionalProperties` it names the missing or unexpected
    /// argument itself.
    pub field: String,
    /// The JSON-Schema keyword that failed: `required`, `type`, `pattern`,
    /// `enum`, `minimum`, `minLength`, `anyOf`, `additionalProperties`, ...
    pub keyword: String,
    /// What the keyword asks for: the type name for `type`, the pattern for
    /// `pattern`, the allowed values for `enum`, the limit for `minimum`
    /// or `maxLength`; for `anyOf` and `oneOf`, one list of problems per
    /// alternative; `null` when there is nothing more to say (`required`).
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    #[serde(default)]
    pub expected: Value,
}

/// An error observation's cause: a stable code, the message (the text the
/// performer reads, after `Error: `) and, for arguments that fail the
/// tool's schema, the same problems as data.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ObservationError {
    /// What kind of failure, for programs.
    pub code: ObservationErrorCode,
    /// The explanation, for the performer: the observation's text is
    /// `Error: ` followed by it.
    pub message: String,
    /// Set only for `invalid_arguments` from schema validation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<ArgumentProblem>,
}

/// Two errors are the same when their code and message are: `problems` is
/// a structured reading of the validation that wrote the message, and
/// steps recorded before it existed must still replay as unchanged.
impl PartialEq for ObservationError {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.message == other.message
    }
}

/// The result of one step as the performer sees it: structured content for
/// programs, and `text` for language models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Observation {
    /// The action did what was asked; `false` exactly when `error` is set.
    pub ok: bool,
    /// The structured result: a tool's rows or value, a [`ViewListing`] or
    /// a record, `{"reply"}` for a message, the task's brief at reset;
    /// `null` for failures.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub content: Value,
    /// Why the action failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ObservationError>,
    /// What the performer reads: the tool's result text, the customer's
    /// reply, or `Error: <message>`. Replay compares observations by it
    /// (and the rest), so it must be deterministic.
    pub text: String,
}

impl Observation {
    /// A successful observation with its structured content and the text
    /// the performer reads.
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
            error: Some(ObservationError {
                code,
                message,
                problems: Vec::new(),
            }),
        }
    }

    /// An `invalid_arguments` failure with its problems as data; the text
    /// is exactly that of [`Observation::failure`].
    pub fn invalid_arguments(
        message: impl Into<String>,
        problems: Vec<ArgumentProblem>,
    ) -> Observation {
        let mut out = Observation::failure(ObservationErrorCode::InvalidArguments, message);
        if let Some(error) = &mut out.error {
            error.problems = problems;
        }
        out
    }
}

/// The content of a view's listing (a view tool called without `key`):
/// one page of rows, the view's columns in order, and how many rows match
/// in all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ViewListing {
    /// The view's columns, in the order its query returns them.
    pub columns: Vec<String>,
    /// This page of rows (after `offset`, at most `limit`), each keyed by
    /// column.
    #[cfg_attr(feature = "ts", ts(type = "Array<Record<string, unknown>>"))]
    pub rows: Vec<Map<String, Value>>,
    /// How many rows match the filter and search, over all pages.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub total: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn problems_add_data_but_not_text_and_old_errors_still_compare_equal() {
        let problem = ArgumentProblem {
            field: "amount".into(),
            keyword: "type".into(),
            expected: json!("number"),
        };
        let message = "invalid arguments for t: amount: \"ten\" is not of type \"number\"";
        let with = Observation::invalid_arguments(message, vec![problem]);
        let without = Observation::failure(ObservationErrorCode::InvalidArguments, message);
        assert_eq!(with.text, without.text);
        assert_eq!(
            with, without,
            "a step recorded without problems replays equal"
        );
        let json = serde_json::to_value(&with).unwrap();
        assert_eq!(
            json["error"]["problems"],
            json!([{"field": "amount", "keyword": "type", "expected": "number"}])
        );
        // Other errors serialize exactly as before: no `problems` key.
        let guard = Observation::failure(ObservationErrorCode::GuardFailed, "no");
        assert_eq!(
            serde_json::to_value(&guard).unwrap(),
            json!({"ok": false, "error": {"code": "guard_failed", "message": "no"}, "text": "Error: no"})
        );
        let stored: Observation = serde_json::from_value(
            json!({"ok": false, "error": {"code": "invalid_arguments", "message": message}, "text": without.text}),
        )
        .unwrap();
        assert!(stored.error.unwrap().problems.is_empty());
    }
}
