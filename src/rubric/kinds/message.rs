//! `kind = "message"`: what was said to the customer (a phrase, a regex, a
//! number read as a number, a date in any common form), in any message or
//! the last, optionally only after a given step.

use super::compile::{must_hold, CompileCx};
use super::patterns::{compile_text_pattern, Pattern};
use crate::rubric::commit::{
    self, allowed_value, answer_in, is_answer, Commit, DEFAULT_MAX_LENGTH, DEFAULT_MAX_VALUES,
};
use crate::rubric::evaluation::{Context, Evidence, Outcome};
use crate::rubric::format::CriterionToml;
use crate::rubric::matchers::{shorten, TextPattern};
use crate::rubric::prose::capitalize;
use crate::rubric::values::ValueKey;

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
    "commit",
    "allow",
    "max_values",
    "max_length",
];

/// `after`: only messages after the first step matching it count.
#[derive(Debug, Clone)]
pub(crate) struct MessageCheck {
    pub within: Within,
    pub pattern: TextPattern,
    pub after: Option<Pattern>,
    /// How the answer must be given (criteria that must be met, unless
    /// `commit = false`); `None`: any mention counts.
    pub commit: Option<Commit>,
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
        let pattern = match pattern {
            Ok(p) => p,
            Err(e) => {
                cx.problem(None, e);
                return None;
            }
        };
        let commit = compile_commit(c, cx, &pattern);
        Some(MessageCheck {
            within,
            pattern,
            after,
            commit,
        })
    }

    pub fn evaluate(&self, cx: &Context<'_>) -> (Outcome, Evidence) {
        let (within, pattern, after) = (self.within, &self.pattern, self.after.as_ref());
        let world = cx.episode.world();
        let from = match after {
            None => 0,
            Some(p) => match (0..cx.actions.len()).find(|&i| p.matches(cx, i)) {
                Some(i) => i + 1,
                None => {
                    let mut ev = Evidence::detail(format!(
                        "No message counts: the answer should follow {}, which never happened",
                        p.describe(world)
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
        let mut refused: Vec<String> = Vec::new();
        for (i, text) in &messages {
            let Some(found) = pattern.find_in(text, cx.normalized(*i)) else {
                continue;
            };
            if let Some(commit) = &self.commit {
                let stated = cx.stated(*i);
                if let Some(why) = commit.bounds_problem(text, stated) {
                    refused.push(format!(
                        "the message at step {} mentions {} but {why}",
                        i + 1,
                        pattern.describe()
                    ));
                    continue;
                }
                if let Some(answer) = answer_in(pattern, stated) {
                    let others = commit.competitors(
                        &answer.kind,
                        &|k| is_answer(pattern, k),
                        messages.iter().flat_map(|(j, _)| cx.stated(*j).iter()),
                    );
                    if !others.is_empty() {
                        let mut ev = Evidence::detail(format!(
                            "The message at step {} mentions {} but does not settle on it: the messages also give other {} ({})",
                            i + 1,
                            pattern.describe(),
                            answer.kind.plural(),
                            commit::list(&others)
                        ));
                        ev.steps = vec![*i];
                        ev.excerpt = Some(excerpt_around(text, &found));
                        ev.expected = Some(format!(
                            "{}, and no other {}",
                            pattern.describe(),
                            answer.kind.plural()
                        ));
                        return (Outcome::Met(false), ev);
                    }
                }
            }
            let mut ev = Evidence::detail(format!(
                "The message at step {} mentions {} (“{}”)",
                i + 1,
                pattern.describe(),
                shorten(as_written(text, &found), 200)
            ));
            ev.steps = vec![*i];
            ev.excerpt = Some(excerpt_around(text, &found));
            return (Outcome::Met(true), ev);
        }
        let user = &world.meta.user;
        let detail = if !refused.is_empty() {
            format!(
                "{}; an answer must stand on its own",
                capitalize(&refused.join("; "))
            )
        } else {
            match (messages.len(), within, after) {
                (0, _, Some(p)) if cx.messages().next().is_some() => {
                    format!("No message to the {user} came after {}", p.describe(world))
                }
                (0, _, _) => format!("No message was sent to the {user}"),
                (_, Within::Last, _) => {
                    format!("The last message does not mention {}", pattern.describe())
                }
                (1, Within::Any, None) => {
                    format!("The message does not mention {}", pattern.describe())
                }
                (n, Within::Any, None) => {
                    format!("None of the {n} messages mentions {}", pattern.describe())
                }
                (1, Within::Any, Some(p)) => format!(
                    "The message after {} does not mention {}",
                    p.describe(world),
                    pattern.describe()
                ),
                (n, Within::Any, Some(p)) => format!(
                    "None of the {n} messages after {} mentions {}",
                    p.describe(world),
                    pattern.describe()
                ),
            }
        };
        let mut ev = Evidence::detail(detail);
        ev.expected = Some(pattern.describe());
        (Outcome::Met(false), ev)
    }
}

/// `commit`, `allow`, `max_values` and `max_length`: criteria that must be
/// met commit by default; one that must not be met (a leak) fires on any
/// mention, so bounds make no sense there.
fn compile_commit(
    c: &CriterionToml,
    cx: &mut CompileCx<'_, '_>,
    pattern: &TextPattern,
) -> Option<Commit> {
    let bounds_given = c.allow.is_some() || c.max_values.is_some() || c.max_length.is_some();
    let holds = must_hold(c);
    let on = c.commit.unwrap_or(holds);
    if !on {
        if bounds_given {
            cx.problem(None, "allow, max_values and max_length bound a committed answer; they do not apply with commit = false or to a criterion with negative points");
        }
        return None;
    }
    if !holds {
        cx.problem(None, "commit = true is for criteria that must be met; a negative-point criterion fires on any mention");
        return None;
    }
    let bound =
        |v: &Option<toml::Value>, name: &str, default: usize, cx: &mut CompileCx<'_, '_>| match v {
            None => default,
            Some(toml::Value::Integer(n)) if *n >= 1 => *n as usize,
            Some(_) => {
                cx.problem(
                    None,
                    format!(
                    "{name} must be a whole number ≥ 1 (an answer states at least its own value)"
                ),
                );
                default
            }
        };
    let max_values = bound(&c.max_values, "max_values", DEFAULT_MAX_VALUES, cx);
    let max_length = bound(&c.max_length, "max_length", DEFAULT_MAX_LENGTH, cx);
    if let TextPattern::Contains(p) = pattern {
        if p.chars().count() > max_length {
            cx.problem(None, format!("this can never be met: the phrase is {} characters long but max_length is {max_length}", p.chars().count()));
        }
    }
    let mut allowed: Vec<ValueKey> = Vec::new();
    for v in c.allow.iter().flatten() {
        match allowed_value(v) {
            Ok(k) if is_answer(pattern, &k) => cx.problem(
                None,
                "allow lists the answer itself; list only the other values the message may state",
            ),
            Ok(k) => allowed.push(k),
            Err(e) => cx.problem(None, e),
        }
    }
    Some(Commit::new(max_values, max_length, allowed))
}

/// Where in `text` the match `found` starts. Phrases and dates are found
/// in the lowercased text, so that is searched too; its positions are only
/// used where they fall on the same characters of `text` (lowercasing can
/// change a letter's length: "İ" grows), so no slice can go wrong.
fn locate(text: &str, found: &str) -> Option<usize> {
    if let Some(pos) = text.find(found) {
        return Some(pos);
    }
    let lower = text.to_lowercase();
    let pos = lower.find(&found.to_lowercase())?;
    let end = pos + found.len();
    (lower.len() == text.len() && text.is_char_boundary(pos) && text.is_char_boundary(end))
        .then_some(pos)
}

/// What matched as the message writes it: a grader should read "April 1,
/// 2025", not the lowercased "april 1, 2025" it was found in; `found`
/// itself when it cannot be placed.
fn as_written<'a>(text: &'a str, found: &'a str) -> &'a str {
    locate(text, found)
        .and_then(|pos| text.get(pos..pos + found.len()))
        .unwrap_or(found)
}

/// A short window of the message around what matched.
fn excerpt_around(text: &str, found: &str) -> String {
    let Some(pos) = locate(text, found) else {
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

#[cfg(test)]
mod tests {
    use super::as_written;

    #[test]
    fn what_matched_is_quoted_as_written() {
        let text = "You keep full access until April 1, 2025, and won't be charged.";
        assert_eq!(as_written(text, "april 1, 2025"), "April 1, 2025");
        assert_eq!(as_written(text, "full access"), "full access");
        // Lowercasing "İ" lengthens the text: the match is quoted as found.
        assert_eq!(as_written("İstanbul, April 1", "april 1"), "april 1");
        assert_eq!(as_written("nothing here", "april 1"), "april 1");
    }

    #[test]
    fn an_excerpt_never_slices_inside_a_letter() {
        // Lowercasing turns the Kelvin sign (3 bytes) into "k" (1 byte): a
        // position found in the lowercased text falls inside it here.
        let text = "\u{212A}Refund of 25 sent";
        assert_eq!(
            super::excerpt_around(text, "refund of 25"),
            "\u{212A}Refund of 25 sent"
        );
        assert_eq!(as_written(text, "refund of 25"), "refund of 25");
        // Where lowercasing keeps every letter's length, the match is placed.
        assert_eq!(
            super::excerpt_around("Sent: Refund of 25.", "refund of 25"),
            "Sent: Refund of 25."
        );
    }
}
