//! Compiled criteria and how each kind is checked against a finished
//! episode. Every check returns evidence an annotator can read: the step
//! that satisfied or violated it, or the rows the query returned.

use std::cell::OnceCell;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::judge::Judgment;
use super::matchers::{compact, shorten, Matcher, TextPattern};
use crate::action::Action;
use crate::episode::{Changes, Episode};
use crate::observation::Observation;

/// One criterion of a rubric, validated against its world.
#[derive(Debug, Clone, Serialize)]
pub struct Criterion {
    pub id: String,
    /// What an expert reads: the behaviour, in plain words.
    pub description: String,
    /// Positive for what must happen, negative for what must not.
    pub points: f64,
    /// When a gate is not met the whole score is 0.
    pub gate: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    pub kind: CriterionKind,
    /// The criterion as written, for display.
    pub spec: Value,
    /// SHA-256 of `spec` and the points: a stored judgment is only reused
    /// while the criterion it judged is unchanged.
    pub hash: String,
    /// 1-based line of the criterion in its rubric file.
    pub line: usize,
    #[serde(skip)]
    pub(crate) check: Check,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum CriterionKind {
    State,
    Action,
    Message,
    Judged,
}

#[derive(Debug, Clone)]
pub(crate) enum Check {
    Query {
        sql: String,
        expect: Expect,
    },
    /// Only these records may differ from the seed (`None` key: any record
    /// of the table).
    Changes {
        only: Vec<(String, Option<String>)>,
    },
    Action(ActionCheck),
    /// `after`: only messages after the first step matching it count.
    Message {
        within: Within,
        pattern: TextPattern,
        after: Option<Pattern>,
    },
    Judged {
        guidance: String,
    },
}

#[derive(Debug, Clone)]
pub(crate) enum Expect {
    /// The first column of the first row.
    Value(Matcher),
    /// The first column parsed as JSON equals this document exactly (typed:
    /// 68 differs from 68.0; key order is ignored).
    Json(Value),
    /// The first column is NULL (`true`) or not (`false`).
    Null(bool),
    Rows {
        min: usize,
        max: Option<usize>,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct ActionCheck {
    pub tool: String,
    pub args: Vec<(String, Matcher)>,
    pub min: usize,
    pub max: Option<usize>,
    pub include_failed: bool,
    pub after: Option<Pattern>,
    pub before: Option<Pattern>,
}

#[derive(Debug, Clone)]
pub(crate) enum Pattern {
    Tool {
        tool: String,
        args: Vec<(String, Matcher)>,
        include_failed: bool,
    },
    Message(TextPattern),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Within {
    Any,
    Last,
}

/// A record the state diff names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ChangeRef {
    pub table: String,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The first rows the query returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "Array<unknown> | null"))]
    pub rows: Option<Vec<Value>>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judgment: Option<Judgment>,
}

impl Evidence {
    fn detail(detail: impl Into<String>) -> Evidence {
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

/// What a finished episode offers to the checks.
pub(crate) struct Context<'a> {
    pub episode: &'a Episode,
    pub actions: &'a [Action],
    pub observations: &'a [Observation],
    pub judgments: &'a [Judgment],
    changes: OnceCell<Result<Changes, String>>,
    /// Each message normalized once (`None` for tool calls).
    normalized: OnceCell<Vec<Option<String>>>,
}

/// Rows shown as evidence; more are counted, not copied.
const EVIDENCE_ROWS: usize = 5;

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
        }
    }

    fn normalized(&self, i: usize) -> &str {
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

    fn changes(&self) -> Result<&Changes, String> {
        self.changes
            .get_or_init(|| self.episode.changes().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A call counts when it succeeded, or always with `include_failed`;
    /// a step without an observation is treated as failed.
    fn succeeded(&self, i: usize) -> bool {
        self.observations.get(i).is_some_and(|o| o.ok)
    }

    fn messages(&self) -> impl Iterator<Item = (usize, &'a str)> + 'a {
        self.actions
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a {
                Action::Message { message } => Some((i, message.as_str())),
                Action::Tool { .. } => None,
            })
    }
}

impl Criterion {
    pub(crate) fn evaluate(&self, cx: &Context<'_>) -> (Outcome, Evidence) {
        match &self.check {
            Check::Query { sql, expect } => eval_query(cx, sql, expect),
            Check::Changes { only } => eval_changes(cx, only),
            Check::Action(a) => eval_action(cx, a),
            Check::Message {
                within,
                pattern,
                after,
            } => eval_message(cx, *within, pattern, after.as_ref()),
            Check::Judged { .. } => eval_judged(cx, self),
        }
    }
}

fn eval_query(cx: &Context<'_>, sql: &str, expect: &Expect) -> (Outcome, Evidence) {
    let rows = match cx.episode.query(sql, &Map::new()) {
        Ok(rows) => rows,
        Err(e) => {
            let msg = format!("the query failed: {e}");
            let mut ev = Evidence::detail(msg.clone());
            ev.query = Some(sql.to_string());
            return (Outcome::Error(msg), ev);
        }
    };
    let first: Option<&Value> = rows.first().and_then(|r| r.values().next());
    let mut ev = Evidence {
        query: Some(sql.to_string()),
        row_count: Some(rows.len()),
        ..Evidence::default()
    };
    let (met, detail) = match expect {
        Expect::Rows { min, max } => {
            let n = rows.len();
            let ok = n >= *min && max.is_none_or(|m| n <= m);
            let want = match max {
                Some(m) if m == min => format!("{m}"),
                Some(m) => format!("{min} to {m}"),
                None => format!("at least {min}"),
            };
            ev.expected = Some(format!("{want} row(s)"));
            (
                ok,
                format!("the query returned {n} row(s); expected {want}"),
            )
        }
        Expect::Null(want_null) => {
            let is_null = first.is_none_or(Value::is_null);
            ev.value = first.cloned();
            let want = if *want_null { "NULL" } else { "not NULL" };
            ev.expected = Some(want.into());
            let got = match first {
                None => "no row".to_string(),
                Some(v) => compact(v),
            };
            (
                is_null == *want_null,
                format!("the value is {got}; expected {want}"),
            )
        }
        Expect::Value(m) => {
            let ok = first.is_some() && m.matches(first);
            ev.value = first.cloned();
            ev.expected = Some(m.describe());
            let got = match first {
                None => "no row".to_string(),
                Some(v) => compact(v),
            };
            (ok, format!("the value is {got}; expected {}", m.describe()))
        }
        Expect::Json(want) => {
            let got = first.map(|v| match v {
                Value::String(s) => serde_json::from_str::<Value>(s).unwrap_or_else(|_| v.clone()),
                other => other.clone(),
            });
            match got {
                None => (
                    false,
                    "the query returned no row; expected the record".to_string(),
                ),
                Some(got) if &got == want => {
                    (true, "the record equals the expected document".to_string())
                }
                Some(got) => {
                    let diff = first_difference(&got, want, "$");
                    ev.value = Some(got);
                    ev.expected = Some(shorten(&want.to_string(), 2000));
                    (
                        false,
                        format!("the record differs from the expected document: {diff}"),
                    )
                }
            }
        }
    };
    if !met || !matches!(expect, Expect::Json(_)) {
        ev.rows = Some(
            rows.iter()
                .take(EVIDENCE_ROWS)
                .map(|r| Value::Object(r.clone()))
                .collect(),
        );
    }
    ev.detail = detail;
    (Outcome::Met(met), ev)
}

/// Where two JSON documents first differ, as a path and both values.
pub(crate) fn first_difference(got: &Value, want: &Value, path: &str) -> String {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for (k, wv) in w {
                match g.get(k) {
                    None => return format!("{path}.{k} is missing (expected {})", compact(wv)),
                    Some(gv) if gv != wv => {
                        return first_difference(gv, wv, &format!("{path}.{k}"))
                    }
                    _ => {}
                }
            }
            if let Some(k) = g.keys().find(|k| !w.contains_key(*k)) {
                return format!("{path}.{k} is not expected");
            }
            format!("{path} differs")
        }
        (Value::Array(g), Value::Array(w)) => {
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                if gv != wv {
                    return first_difference(gv, wv, &format!("{path}[{i}]"));
                }
            }
            format!("{path} has {} item(s), expected {}", g.len(), w.len())
        }
        _ => format!("{path} is {}, expected {}", compact(got), compact(want)),
    }
}

fn eval_changes(cx: &Context<'_>, only: &[(String, Option<String>)]) -> (Outcome, Evidence) {
    let changes = match cx.changes() {
        Ok(c) => c,
        Err(e) => {
            return (
                Outcome::Error(format!("the state diff failed: {e}")),
                Evidence::detail(e),
            )
        }
    };
    let allowed = |table: &str, key: &str| {
        only.iter()
            .any(|(t, k)| t == table && k.as_deref().is_none_or(|k| k == key))
    };
    let mut unexpected = Vec::new();
    for (table, tc) in changes {
        let keys = tc
            .added
            .keys()
            .map(|k| (k.clone(), "added"))
            .chain(tc.changed.keys().map(|k| (k.clone(), "changed")))
            .chain(tc.removed.iter().map(|k| {
                (
                    k.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| k.to_string()),
                    "removed",
                )
            }));
        for (key, change) in keys {
            if !allowed(table, &key) {
                unexpected.push(ChangeRef {
                    table: table.clone(),
                    key,
                    change: change.to_string(),
                });
            }
        }
    }
    let detail = if unexpected.is_empty() {
        "no record changed outside the expected ones".to_string()
    } else {
        let list: Vec<String> = unexpected
            .iter()
            .take(5)
            .map(|c| format!("{} {} {}", c.table, c.key, c.change))
            .collect();
        format!(
            "{} record(s) changed that should not have: {}{}",
            unexpected.len(),
            list.join(", "),
            if unexpected.len() > 5 { ", …" } else { "" }
        )
    };
    let met = unexpected.is_empty();
    let mut ev = Evidence::detail(detail);
    ev.changes = unexpected;
    (Outcome::Met(met), ev)
}

fn args_match(args: &Map<String, Value>, matchers: &[(String, Matcher)]) -> bool {
    matchers.iter().all(|(name, m)| m.matches(args.get(name)))
}

impl Pattern {
    fn matches(&self, cx: &Context<'_>, i: usize) -> bool {
        match (self, &cx.actions[i]) {
            (
                Pattern::Tool {
                    tool,
                    args,
                    include_failed,
                },
                Action::Tool { tool: t, args: a },
            ) => t == tool && (*include_failed || cx.succeeded(i)) && args_match(a, args),
            (Pattern::Message(p), Action::Message { message }) => {
                p.find_in(message, cx.normalized(i)).is_some()
            }
            _ => false,
        }
    }

    fn describe(&self) -> String {
        match self {
            Pattern::Tool { tool, .. } => format!("a matching {tool} call"),
            Pattern::Message(p) => format!("a message with {}", p.describe()),
        }
    }
}

fn eval_action(cx: &Context<'_>, a: &ActionCheck) -> (Outcome, Evidence) {
    let mut counted = Vec::new();
    let mut failed = Vec::new();
    for (i, action) in cx.actions.iter().enumerate() {
        let Action::Tool { tool, args } = action else {
            continue;
        };
        if tool != &a.tool || !args_match(args, &a.args) {
            continue;
        }
        if a.include_failed || cx.succeeded(i) {
            counted.push(i);
        } else {
            failed.push(i);
        }
    }
    let n = counted.len();
    let count_ok = n >= a.min && a.max.is_none_or(|m| n <= m);
    let mut violations = Vec::new();
    if let Some(after) = &a.after {
        for &i in &counted {
            if !(0..i).any(|j| after.matches(cx, j)) {
                violations.push((
                    i,
                    format!("step {} came without {} before it", i + 1, after.describe()),
                ));
            }
        }
    }
    if let Some(before) = &a.before {
        for &i in &counted {
            if let Some(j) = (0..i).find(|&j| before.matches(cx, j)) {
                violations.push((
                    i,
                    format!(
                        "step {} came after {} at step {}",
                        i + 1,
                        before.describe(),
                        j + 1
                    ),
                ));
            }
        }
    }
    let steps_text = |v: &[usize]| {
        v.iter()
            .map(|i| (i + 1).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut detail = match n {
        0 => format!("no {} call matched", a.tool),
        _ => format!(
            "{n} matching {} call(s), at step(s) {}",
            a.tool,
            steps_text(&counted)
        ),
    };
    if !failed.is_empty() {
        detail.push_str(&format!(
            "; failed call(s) not counted at step(s) {}",
            steps_text(&failed)
        ));
    }
    let want = match (a.min, a.max) {
        (0, Some(0)) => "none".to_string(),
        (min, Some(max)) if min == max => format!("exactly {min}"),
        (min, Some(max)) => format!("{min} to {max}"),
        (min, None) => format!("at least {min}"),
    };
    if !count_ok {
        detail.push_str(&format!("; expected {want}"));
    }
    for (_, v) in &violations {
        detail.push_str("; ");
        detail.push_str(v);
    }
    let mut ev = Evidence::detail(detail);
    ev.steps = counted.clone();
    ev.expected = Some(format!("{want} matching call(s)"));
    for (i, _) in &violations {
        if !ev.steps.contains(i) {
            ev.steps.push(*i);
        }
    }
    (Outcome::Met(count_ok && violations.is_empty()), ev)
}

fn eval_message(
    cx: &Context<'_>,
    within: Within,
    pattern: &TextPattern,
    after: Option<&Pattern>,
) -> (Outcome, Evidence) {
    let from = match after {
        None => 0,
        Some(p) => match (0..cx.actions.len()).find(|&i| p.matches(cx, i)) {
            Some(i) => i + 1,
            None => {
                let mut ev = Evidence::detail(format!(
                    "no message can count: there was no {} to follow",
                    p.describe()
                ));
                ev.expected = Some(pattern.describe());
                return (Outcome::Met(false), ev);
            }
        },
    };
    let messages: Vec<(usize, &str)> = match within {
        Within::Any => cx.messages().filter(|(i, _)| *i >= from).collect(),
        Within::Last => cx
            .messages()
            .last()
            .into_iter()
            .filter(|(i, _)| *i >= from)
            .collect(),
    };
    let scope = match (within, after) {
        (Within::Last, _) => "the last message".to_string(),
        (Within::Any, Some(p)) => format!("the messages after {}", p.describe()),
        (Within::Any, None) => "any message".to_string(),
    };
    for (i, text) in &messages {
        if let Some(found) = pattern.find_in(text, cx.normalized(*i)) {
            let mut ev = Evidence::detail(format!(
                "step {} says {}: \"{}\"",
                i + 1,
                pattern.describe(),
                shorten(&found, 200)
            ));
            ev.steps = vec![*i];
            ev.excerpt = Some(excerpt_around(text, &found));
            return (Outcome::Met(true), ev);
        }
    }
    let detail = if messages.is_empty() {
        "no message was sent to the customer".to_string()
    } else {
        format!(
            "{} not found in {scope} ({} message(s) checked)",
            pattern.describe(),
            messages.len()
        )
    };
    let mut ev = Evidence::detail(detail);
    ev.expected = Some(pattern.describe());
    (Outcome::Met(false), ev)
}

/// A short window of the message around what matched.
fn excerpt_around(text: &str, found: &str) -> String {
    let Some(pos) = text
        .find(found)
        .or_else(|| text.to_lowercase().find(&found.to_lowercase()))
    else {
        return shorten(text, 160);
    };
    let start = text[..pos]
        .char_indices()
        .rev()
        .nth(60)
        .map_or(0, |(i, _)| i);
    let end_from = (pos + found.len()).min(text.len());
    let end = text[end_from..]
        .char_indices()
        .nth(60)
        .map_or(text.len(), |(i, _)| end_from + i);
    let mut s = String::new();
    if start > 0 {
        s.push('…');
    }
    s.push_str(&text[start..end]);
    if end < text.len() {
        s.push('…');
    }
    s
}

fn eval_judged(cx: &Context<'_>, c: &Criterion) -> (Outcome, Evidence) {
    let found = cx.judgments.iter().rev().find(|j| j.criterion_id == c.id);
    match found {
        None => (Outcome::Pending, Evidence::detail("not graded yet: a person or a judge must grade this criterion")),
        Some(j) if j.criterion_hash.as_deref().is_some_and(|h| h != c.hash) => (
            Outcome::Pending,
            Evidence::detail("the stored judgment graded an earlier version of this criterion; it must be graded again"),
        ),
        Some(j) => {
            let mut ev = Evidence::detail(format!("graded {} by {}: {}", if j.met { "met" } else { "not met" }, j.judge, j.reason));
            ev.judgment = Some(j.clone());
            (Outcome::Met(j.met), ev)
        }
    }
}
