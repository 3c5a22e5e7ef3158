//! What several kinds match against: a tool's arguments, the words of a
//! message, and a step (`after` / `before`: a matching call or message).

use chrono::NaiveDate;
use serde_json::{Map, Value};

use super::compile::{check_tool, CompileCx};
use super::words::tool_phrase;
use crate::action::Action;
use crate::rubric::evaluation::Context;
use crate::rubric::matchers::{as_f64, Matcher, TextPattern};
use crate::rubric::numbers;
use crate::world::World;

/// A step that orders another: a matching tool call, or a message.
#[derive(Debug, Clone)]
pub(crate) enum Pattern {
    Tool {
        tool: String,
        args: Vec<(String, Matcher)>,
        include_failed: bool,
    },
    Message(TextPattern),
}

impl Pattern {
    /// Whether step `i` is such a step.
    pub fn matches(&self, cx: &Context<'_>, i: usize) -> bool {
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

    /// The step in the world's words: "“Open ticket” with Ticket id
    /// “T-1049”", "a message with the number 25".
    pub fn describe(&self, world: &World) -> String {
        match self {
            Pattern::Tool { tool, args, .. } => tool_phrase(world, tool, args),
            Pattern::Message(p) => format!("a message with {}", p.describe()),
        }
    }

    /// Compiles `field = { tool = .., args = {..}, include_failed = .. }` or
    /// `field = { message = { contains|regex|number|date = .. } }`.
    pub fn compile(
        cx: &mut CompileCx<'_, '_>,
        t: &toml::Table,
        field: &str,
        line: Option<usize>,
    ) -> Option<Pattern> {
        if let Some(m) = t.get("message") {
            if t.len() != 1 {
                cx.problem(line, format!("{field}: a message pattern is {{ message = {{ contains|regex|number|date = .. }} }} and nothing else"));
                return None;
            }
            let Some(mt) = m.as_table() else {
                cx.problem(
                    line,
                    format!("{field}.message must be a table such as {{ number = 108.39 }}"),
                );
                return None;
            };
            if let Some(k) = mt.keys().find(|k| {
                !["contains", "regex", "number", "tolerance", "date"].contains(&k.as_str())
            }) {
                cx.problem(line, format!("{field}.message: unknown key `{k}`"));
                return None;
            }
            let s = |k: &str| mt.get(k).and_then(|v| v.as_str());
            return match compile_text_pattern(
                s("contains"),
                s("regex"),
                mt.get("number"),
                mt.get("tolerance"),
                mt.get("date"),
            ) {
                Ok(p) => Some(Pattern::Message(p)),
                Err(e) => {
                    cx.problem(line, format!("{field}.message: {e}"));
                    None
                }
            };
        }
        let Some(tool) = t.get("tool").and_then(|v| v.as_str()) else {
            cx.problem(line, format!("{field} needs `tool` (or `message`), e.g. {field} = {{ tool = \"verify_identity\" }}"));
            return None;
        };
        if let Some(k) = t
            .keys()
            .find(|k| !["tool", "args", "include_failed"].contains(&k.as_str()))
        {
            cx.problem(
                line,
                format!("{field}: unknown key `{k}` (use tool, args, include_failed)"),
            );
            return None;
        }
        let args = match t.get("args") {
            None => None,
            Some(toml::Value::Table(a)) => Some(a),
            Some(_) => {
                cx.problem(line, format!("{field}.args must be a table"));
                return None;
            }
        };
        let include_failed = match t.get("include_failed") {
            None => false,
            Some(toml::Value::Boolean(b)) => *b,
            Some(_) => {
                cx.problem(
                    line,
                    format!("{field}.include_failed must be true or false"),
                );
                return None;
            }
        };
        let args = compile_args(cx, tool, args, &format!("{field}.args"), line)?;
        Some(Pattern::Tool {
            tool: tool.to_string(),
            args,
            include_failed,
        })
    }
}

/// Whether every matcher holds for its argument.
pub(crate) fn args_match(args: &Map<String, Value>, matchers: &[(String, Matcher)]) -> bool {
    matchers.iter().all(|(name, m)| m.matches(args.get(name)))
}

/// Compiles matchers for arguments of `tool`: the task must be able to call
/// it and each argument must be a declared parameter.
pub(crate) fn compile_args(
    cx: &mut CompileCx<'_, '_>,
    tool: &str,
    args: Option<&toml::Table>,
    field: &str,
    line: Option<usize>,
) -> Option<Vec<(String, Matcher)>> {
    let params = match check_tool(cx.world, cx.task, tool) {
        Ok(p) => p,
        Err(e) => {
            cx.problem(line, e);
            return None;
        }
    };
    let declared: Vec<String> = params
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut ok = true;
    for (name, v) in args.into_iter().flatten() {
        if !declared.contains(name) {
            cx.problem(
                line,
                format!(
                    "{field}: tool `{tool}` has no parameter `{name}` (parameters: {})",
                    declared.join(", ")
                ),
            );
            ok = false;
            continue;
        }
        match Matcher::parse(v) {
            Ok(m) => out.push((name.clone(), m)),
            Err(e) => {
                cx.problem(line, format!("{field}.{name}: {e}"));
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

/// Exactly one of `contains`, `regex`, `number` (with its `tolerance`) or
/// `date`, as a pattern over a message's words.
pub(crate) fn compile_text_pattern(
    contains: Option<&str>,
    regex: Option<&str>,
    number: Option<&toml::Value>,
    tolerance: Option<&toml::Value>,
    date: Option<&toml::Value>,
) -> Result<TextPattern, String> {
    let given = [
        contains.is_some(),
        regex.is_some(),
        number.is_some(),
        date.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if given != 1 {
        return Err("a message check needs exactly one of contains, regex, number or date".into());
    }
    if tolerance.is_some() && number.is_none() {
        return Err("`tolerance` goes with `number`".into());
    }
    if let Some(c) = contains {
        if c.trim().is_empty() {
            return Err("`contains` must not be empty".into());
        }
        return Ok(TextPattern::Contains(numbers::normalize(c)));
    }
    if let Some(r) = regex {
        return regex::Regex::new(r)
            .map(TextPattern::Regex)
            .map_err(|e| format!("`regex` does not compile: {e}"));
    }
    if let Some(n) = number {
        let value = match n {
            toml::Value::String(s) => numbers::parse_number(s)
                .ok_or_else(|| format!("`number` = {s:?} does not read as a number"))?,
            other => as_f64(other).ok_or("`number` must be a number")?,
        };
        let tolerance = match tolerance {
            None => 0.0,
            Some(t) => as_f64(t)
                .filter(|t| *t >= 0.0)
                .ok_or("`tolerance` must be a number ≥ 0")?,
        };
        return Ok(TextPattern::Number { value, tolerance });
    }
    let d = date.ok_or("no pattern")?;
    let text = match d {
        toml::Value::String(s) => s.clone(),
        toml::Value::Datetime(dt) => dt.to_string(),
        _ => return Err("`date` must be a date such as \"2025-04-01\"".into()),
    };
    let date = NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .map_err(|_| format!("`date` = {text:?} is not a date in YYYY-MM-DD form"))?;
    Ok(TextPattern::Date(date, numbers::date_regex(date)))
}
