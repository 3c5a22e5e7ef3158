//! `kind = "message"`: what was said to the customer (a phrase, a regex, a
//! number read as a number, a date in any common form), in any message or
//! the last, optionally only after a given step.

use super::compile::CompileCx;
use super::patterns::{compile_text_pattern, Pattern};
use crate::rubric::evaluation::{Context, Evidence, Outcome};
use crate::rubric::format::CriterionToml;
use crate::rubric::matchers::{shorten, TextPattern};

/// The fields a message criterion may set (`after` also orders messages:
/// "confirm after the upgrade").
pub(crate) const FIELDS: &[&str] = &[
    "contains",
    "regex",
    "number",
    "tolerance",
    "date",
    "within",
    "after",
];

/// `after`: only messages after the first step matching it count.
#[derive(Debug, Clone)]
pub(crate) struct MessageCheck {
    pub within: Within,
    pub pattern: TextPattern,
    pub after: Option<Pattern>,
}

/// Which messages a message criterion reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Within {
    Any,
    Last,
}

impl MessageCheck {
    pub fn compile(c: &CriterionToml, cx: &mut CompileCx<'_, '_>) -> Option<MessageCheck> {
        let within = match c.within.as_deref() {
            None | Some("any") => Within::Any,
            Some("last") => Within::Last,
            Some(other) => {
                cx.problem(
                    None,
                    format!("within = \"{other}\" is not known; use \"any\" (default) or \"last\""),
                );
                Within::Any
            }
        };
        let pattern = compile_text_pattern(
            c.contains.as_deref(),
            c.regex.as_deref(),
            c.number.as_ref(),
            c.tolerance.as_ref(),
            c.date.as_ref(),
        );
        let after = c
            .after
            .as_ref()
            .and_then(|p| Pattern::compile(cx, p, "after", None));
        match pattern {
            Ok(pattern) => Some(MessageCheck {
                within,
                pattern,
                after,
            }),
            Err(e) => {
                cx.problem(None, e);
                None
            }
        }
    }

    pub fn evaluate(&self, cx: &Context<'_>) -> (Outcome, Evidence) {
        let (within, pattern, after) = (self.within, &self.pattern, self.after.as_ref());
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
