//! What every criterion check is given and what it gives back: the finished
//! episode ([`Context`]), and an [`Outcome`] with [`Evidence`] an annotator
//! can read (the step that satisfied or violated it, or the rows a query
//! returned). Each kind's own check is in `kinds/`.

use std::cell::OnceCell;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::judgment::Judgment;
use super::values::Stated;
use crate::action::Action;
use crate::episode::{Changes, Episode};
use crate::observation::Observation;

/// A record the state diff names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ChangeRef {
    /// The table the record is in.
    pub table: String,
    /// The record's primary key, as text.
    pub key: String,
    /// `added`, `changed` or `removed`.
    pub change: String,
}

/// Why a criterion came out as it did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Evidence {
    /// One or two sentences for people.
    pub detail: String,
    /// 0-based positions in the action list of the steps that satisfied or
    /// violated the criterion.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<usize>,
    /// The SQL a state criterion ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The first rows the query returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "Array<unknown> | null"))]
    pub rows: Option<Vec<Value>>,
    /// How many rows the query returned (`rows` holds only the first five).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_count: Option<usize>,
    /// The value that was compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub value: Option<Value>,
    /// What it was compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// Records that changed where they should not have.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeRef>,
    /// The words of a message that matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    /// The grade of a judged criterion, once a person or a judge command gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judgment: Option<Judgment>,
}

impl Evidence {
    /// Evidence that is only a sentence.
    pub(crate) fn detail(detail: impl Into<String>) -> Evidence {
        Evidence {
            detail: detail.into(),
            ..Evidence::default()
        }
    }
}

/// How one criterion came out.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    Met(bool),
    /// Waiting for a person or a judge.
    Pending,
    /// The check itself failed (e.g. a query ran out of budget).
    Error(String),
}

/// What a finished episode offers to the checks. What several checks need
/// (the state diff, normalized messages) is computed once, on first use.
pub(crate) struct Context<'a> {
    pub episode: &'a Episode,
    pub actions: &'a [Action],
    pub observations: &'a [Observation],
    pub judgments: &'a [Judgment],
    changes: OnceCell<Result<Changes, String>>,
    /// Each message normalized once (`None` for tool calls).
    normalized: OnceCell<Vec<Option<String>>>,
    /// The values each message states (empty for tool calls).
    stated: OnceCell<Vec<Vec<Stated>>>,
}

impl<'a> Context<'a> {
    pub fn new(
        episode: &'a Episode,
        actions: &'a [Action],
        observations: &'a [Observation],
        judgments: &'a [Judgment],
    ) -> Self {
        Context {
            episode,
            actions,
            observations,
            judgments,
            changes: OnceCell::new(),
            normalized: OnceCell::new(),
            stated: OnceCell::new(),
        }
    }

    /// The values step `i`'s message states, read once however many
    /// criteria ask.
    pub fn stated(&self, i: usize) -> &[Stated] {
        let all = self.stated.get_or_init(|| {
            self.actions
                .iter()
                .map(|a| match a {
                    Action::Message { message } => super::values::stated_values(message),
                    Action::Tool { .. } => Vec::new(),
                })
                .collect()
        });
        all.get(i).map_or(&[], Vec::as_slice)
    }

    /// Step `i`'s message as [`super::numbers::normalize`] makes it; empty
    /// for a tool call.
    pub fn normalized(&self, i: usize) -> &str {
        let all = self.normalized.get_or_init(|| {
            self.actions
                .iter()
                .map(|a| match a {
                    Action::Message { message } => Some(super::numbers::normalize(message)),
                    Action::Tool { .. } => None,
                })
                .collect()
        });
        all.get(i).and_then(|n| n.as_deref()).unwrap_or("")
    }

    /// The final state's difference from the seed.
    pub fn changes(&self) -> Result<&Changes, String> {
        self.changes
            .get_or_init(|| self.episode.changes().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A call counts when it succeeded, or always with `include_failed`;
    /// a step without an observation is treated as failed.
    pub fn succeeded(&self, i: usize) -> bool {
        self.observations.get(i).is_some_and(|o| o.ok)
    }

    /// The messages to the customer, with their step positions.
    pub fn messages(&self) -> impl Iterator<Item = (usize, &'a str)> + 'a {
        self.actions
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a {
                Action::Message { message } => Some((i, message.as_str())),
                Action::Tool { .. } => None,
            })
    }
}
