//! `kind = "action"`: a tool was called (or not), with argument matchers,
//! a count, and ordering against other steps (`after`, `before`).

use super::compile::{must_hold, CompileCx};
use super::patterns::{args_match, compile_args, Pattern};
use super::words::{steps, times, tool_phrase};
use crate::action::Action;
use crate::rubric::evaluation::{Context, Evidence, Outcome};
use crate::rubric::format::CriterionToml;
use crate::rubric::matchers::Matcher;
use crate::rubric::prose::capitalize;

/// The fields an action criterion may set.
pub(crate) const FIELDS: &[&str] = &[
    "tool",
    "args",
    "count",
    "called",
    "before",
    "after",
    "include_failed",
];

#[derive(Debug, Clone)]
pub(crate) struct ActionCheck {
    pub tool: String,
    pub args: Vec<(String, Matcher)>,
    pub min: usize,
    pub max: Option<usize>,
    pub include_failed: bool,
    pub after: Option<Pattern>,
    pub before: Option<Pattern>,
    /// Whether the criterion must be met (points ≥ 0): only then does the
    /// evidence say how often the tool should have been used, since a
    /// penalty's count says when it fires, not what was wanted.
    pub holds: bool,
}

impl ActionCheck {
    pub fn compile(c: &CriterionToml, cx: &mut CompileCx<'_, '_>) -> Option<ActionCheck> {
        let Some(tool) = &c.tool else {
            cx.problem(None, "an action criterion needs `tool`");
            return None;
        };
        let line = Some(cx.line(tool));
        let args = compile_args(cx, tool.get_ref(), c.args.as_ref(), "args", line);
        let (min, max) = compile_count(c, cx);
        let after = c
            .after
            .as_ref()
            .and_then(|p| Pattern::compile(cx, p, "after", line));
        let before = c
            .before
            .as_ref()
            .and_then(|p| Pattern::compile(cx, p, "before", line));
        Some(ActionCheck {
            tool: tool.get_ref().clone(),
            args: args?,
            min,
            max,
            // "Did the forbidden thing" counts attempts: a guard that
            // stopped the call does not excuse trying.
            include_failed: c.include_failed.unwrap_or(!must_hold(c)),
            after,
            before,
            holds: must_hold(c),
        })
    }

    pub fn evaluate(&self, cx: &Context<'_>) -> (Outcome, Evidence) {
        let a = self;
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
        let world = cx.episode.world();
        let mut violations = Vec::new();
        if let Some(after) = &a.after {
            for &i in &counted {
                if !(0..i).any(|j| after.matches(cx, j)) {
                    violations.push((
                        i,
                        format!(
                            "step {} came too early: it should follow {}",
                            i + 1,
                            after.describe(world)
                        ),
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
                            "step {} came too late: it should come before {}, which happened at step {}",
                            i + 1,
                            before.describe(world),
                            j + 1
                        ),
                    ));
                }
            }
        }
        let what = tool_phrase(world, &a.tool, &a.args);
        let mut parts = vec![match n {
            0 => format!("{what} was never used"),
            _ => format!("{what} was used {}, at {}", times(n), steps(&counted)),
        }];
        match failed.len() {
            0 => {}
            1 => parts.push(format!(
                "the attempt at {} was refused and does not count",
                steps(&failed)
            )),
            _ => parts.push(format!(
                "the attempts at {} were refused and do not count",
                steps(&failed)
            )),
        }
        let want = match (a.min, a.max) {
            (0, Some(0)) => "not at all".to_string(),
            (min, Some(max)) if min == max => format!("exactly {}", times(min)),
            (min, Some(max)) => format!("{min} to {max} times"),
            (min, None) => format!("at least {}", times(min)),
        };
        if !count_ok && a.holds {
            parts.push(match a.max {
                Some(0) => "it should not be used at all".to_string(),
                _ => format!("it should be used {want}"),
            });
        }
        parts.extend(violations.iter().map(|(_, v)| v.clone()));
        let mut ev = Evidence::detail(capitalize(&parts.join("; ")));
        ev.steps = counted.clone();
        ev.expected = Some(format!("{what} used {want}"));
        for (i, _) in &violations {
            if !ev.steps.contains(i) {
                ev.steps.push(*i);
            }
        }
        (Outcome::Met(count_ok && violations.is_empty()), ev)
    }
}

/// `called = true|false` or `count = n | { min, max }`, as a range of calls.
fn compile_count(c: &CriterionToml, cx: &mut CompileCx<'_, '_>) -> (usize, Option<usize>) {
    match (&c.count, c.called) {
        (Some(_), Some(_)) => {
            cx.problem(None, "use either `called` or `count`, not both");
            (1, None)
        }
        (None, Some(false)) => (0, Some(0)),
        (None, _) => (1, None),
        (Some(toml::Value::Integer(n)), None) if *n >= 0 => (*n as usize, Some(*n as usize)),
        (Some(toml::Value::Table(t)), None) => {
            let get = |k: &str| match t.get(k) {
                None => Ok(None),
                Some(toml::Value::Integer(n)) if *n >= 0 => Ok(Some(*n as usize)),
                Some(_) => Err(format!("count.{k} must be a whole number ≥ 0")),
            };
            if let Some(k) = t.keys().find(|k| *k != "min" && *k != "max") {
                cx.problem(None, format!("count: unknown key `{k}` (use min and max)"));
            }
            match (get("min"), get("max")) {
                (Ok(min), Ok(max)) => {
                    let min = min.unwrap_or(0);
                    if max.is_some_and(|m| m < min) {
                        cx.problem(None, "count.max is smaller than count.min");
                    }
                    if min == 0 && max.is_none() {
                        cx.problem(
                            None,
                            "count = { min = 0 } always holds; give a max, or use called = false",
                        );
                    }
                    (min, max)
                }
                (Err(e), _) | (_, Err(e)) => {
                    cx.problem(None, e);
                    (1, None)
                }
            }
        }
        (Some(_), None) => {
            cx.problem(
                None,
                "count must be a whole number ≥ 0 or { min = .., max = .. }",
            );
            (1, None)
        }
    }
}
