//! Cheat mutants: what a hostile agent tries instead of doing the task,
//! each a class lint reports on its own (see `docs/rubrics.md`):
//!
//! - **stuffing**: a message listing every candidate value, alone or in
//!   place of gold's messages;
//! - **spray**: gold's answer among wrong ones, or as one end of a range;
//! - **near miss**: gold's answer off by the smallest step (an id ±1,
//!   money ±0.01, a count ±1, a date +1 day), or a money argument ±0.01;
//! - **refused attempt** and **disclosure** (built in lint, which can
//!   replay and knows the world's scope);
//! - **dropped read**: the look-up a criterion asks for left out;
//! - **detour**: a wrong write that gold's own write then undoes (kept by
//!   lint only when the run ends in gold's state).

use chrono::{Duration, NaiveDate};
use serde_json::Value;

use super::commit::{answer_in, answer_key};
use super::criterion::Check;
use super::kinds::patterns::{args_match, Pattern};
use super::matchers::{compact, TextPattern};
use super::mutations::{insertion_point, is_write, perturb, Mutant, MutantKind};
use super::values::{stated_values, write_date, Stated, ValueKey, ValueKind};
use super::Rubric;
use crate::action::Action;
use crate::world::{ToolKind, World, VIEW_TOOL_PREFIX};

/// The answers the rubric's committed message criteria ask for.
fn answers(rubric: &Rubric) -> Vec<(&str, &TextPattern)> {
    rubric
        .criteria
        .iter()
        .filter_map(|c| match &c.check {
            Check::Message(m) if m.commit.is_some() && answer_key(&m.pattern).is_some() => {
                Some((c.id.as_str(), &m.pattern))
            }
            _ => None,
        })
        .collect()
}

/// Whether the rubric asks for something said (a message criterion that
/// must be met).
fn asks_for_words(rubric: &Rubric) -> bool {
    rubric
        .criteria
        .iter()
        .any(|c| matches!(c.check, Check::Message(_)) && (c.points > 0.0 || c.gate))
}

/// A message listing hundreds of candidates: every small count, prices in
/// whole dollars and near each answer to the cent, dates around each
/// answer and across two years, and ids beside each answer.
pub fn stuffing_message(rubric: &Rubric) -> String {
    let mut parts: Vec<String> = (0..=300).map(|i| i.to_string()).collect();
    parts.extend((1..=300).map(|i| format!("${i}.00")));
    let start = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap_or_default();
    parts.extend(
        (0..730)
            .step_by(7)
            .map(|d| write_date(start + Duration::days(d))),
    );
    for (_, pattern) in answers(rubric) {
        match pattern {
            TextPattern::Number { value, .. } => {
                parts.extend((-50..=50).map(|c| format!("${:.2}", value + c as f64 / 100.0)));
                parts.extend((-20..=20).map(|k| format!("{}", value.round() as i64 + k)));
            }
            TextPattern::Date(d, _) => {
                parts.extend((-20..=20).map(|k| write_date(*d + Duration::days(k))));
            }
            TextPattern::Contains(id) => parts.extend((0..10).map(|k| with_last_digit(id, k))),
            TextPattern::Regex(_) => {}
        }
    }
    format!("Possible answers: {}.", parts.join(", "))
}

/// `id` with its last digit set to `d` (the id itself when it has none).
fn with_last_digit(id: &str, d: u32) -> String {
    match id.rfind(|c: char| c.is_ascii_digit()) {
        Some(pos) => {
            let mut out = id.to_string();
            out.replace_range(pos..pos + 1, &(d % 10).to_string());
            out
        }
        None => id.to_string(),
    }
}

/// Where gold states `pattern`'s answer: the message step and the value.
fn stated_in_gold(gold: &[Action], pattern: &TextPattern) -> Option<(usize, Stated)> {
    gold.iter().enumerate().find_map(|(i, a)| match a {
        Action::Message { message } => {
            let values = stated_values(message);
            answer_in(pattern, &values).cloned().map(|v| (i, v))
        }
        Action::Tool { .. } => None,
    })
}

/// The value `k` steps away from `v`, written the way `v` is.
fn neighbour(v: &Stated, k: i64) -> Option<String> {
    match (&v.kind, &v.key) {
        (ValueKind::Money, ValueKey::Number(n)) => {
            let sign = if v.text.trim_start().starts_with('$') {
                "$"
            } else {
                ""
            };
            Some(format!("{sign}{:.2}", n + k as f64 / 100.0))
        }
        (ValueKind::Count, ValueKey::Number(n)) => Some(format!("{}", n + k as f64)),
        (ValueKind::Date, ValueKey::Date(d)) => Some(write_date(*d + Duration::days(k))),
        (ValueKind::Id(_), _) => {
            let last = v.text.rfind(|c: char| c.is_ascii_digit())?;
            let d = v.text.as_bytes()[last] - b'0';
            Some(with_last_digit(
                &v.text,
                ((d as i64 + k).rem_euclid(10)) as u32,
            ))
        }
        _ => None,
    }
}

fn replace_value(gold: &[Action], step: usize, v: &Stated, with: &str) -> Vec<Action> {
    let mut actions = gold.to_vec();
    if let Some(Action::Message { message }) = actions.get_mut(step) {
        message.replace_range(v.start..v.end, with);
    }
    actions
}

/// Every cheat mutant of `gold` that this module builds.
pub fn cheat_mutants(world: &World, rubric: &Rubric, gold: &[Action]) -> Vec<Mutant> {
    let mut out = Vec::new();
    let stuffing = Action::message(stuffing_message(rubric));
    out.push(Mutant {
        id: "stuffing:alone".into(),
        kind: MutantKind::Stuffing,
        description:
            "stuffing alone: one message listing hundreds of candidate values, no tool call".into(),
        actions: vec![stuffing.clone()],
        added: Some(0),
    });
    if asks_for_words(rubric) {
        let mut actions: Vec<Action> = gold
            .iter()
            .filter(|a| matches!(a, Action::Tool { .. }))
            .cloned()
            .collect();
        let at = insertion_point(world, &actions);
        actions.insert(at, stuffing);
        out.push(Mutant {
            id: "stuffing:gold-writes".into(),
            kind: MutantKind::Stuffing,
            description: "gold's tool calls with its messages replaced by stuffing".into(),
            actions,
            added: Some(at),
        });
    }
    for (id, pattern) in answers(rubric) {
        let Some((step, v)) = stated_in_gold(gold, pattern) else {
            continue;
        };
        let wrong: Vec<String> = [3, -7, 12, -1, 5, 9, -4]
            .iter()
            .filter_map(|k| neighbour(&v, *k))
            .collect();
        if wrong.len() >= 5 {
            let mut list = wrong[..3].to_vec();
            list.push(v.text.clone());
            list.extend(wrong[3..].iter().cloned());
            let text = list.join(", ");
            out.push(Mutant {
                id: format!("spray:{id}"),
                kind: MutantKind::Spray,
                description: format!(
                    "step {}: {} said among wrong ones: {text}",
                    step + 1,
                    v.text
                ),
                actions: replace_value(gold, step, &v, &text),
                added: None,
            });
            let text = format!("between {} and {}", v.text, wrong[0]);
            out.push(Mutant {
                id: format!("spray-range:{id}"),
                kind: MutantKind::Spray,
                description: format!("step {}: {} said as a range, {text}", step + 1, v.text),
                actions: replace_value(gold, step, &v, &text),
                added: None,
            });
        }
        let step_size = if matches!(v.kind, ValueKind::Money) {
            "0.01"
        } else {
            "1"
        };
        if let Some(near) = neighbour(&v, 1) {
            out.push(Mutant {
                id: format!("near-miss:{id}"),
                kind: MutantKind::NearMiss,
                description: format!(
                    "step {}: {} said as {near} (off by {step_size})",
                    step + 1,
                    v.text
                ),
                actions: replace_value(gold, step, &v, &near),
                added: None,
            });
        }
    }
    out.extend(money_near_misses(world, gold));
    out.extend(dropped_reads(world, rubric, gold));
    out.extend(detours(world, gold));
    out
}

/// A money argument of a write (a number with cents) off by 0.01.
fn money_near_misses(world: &World, gold: &[Action]) -> Vec<Mutant> {
    let mut out = Vec::new();
    for (i, a) in gold.iter().enumerate() {
        let Action::Tool { tool, args } = a else {
            continue;
        };
        if !is_write(world, tool) {
            continue;
        }
        for (name, v) in args {
            let Some(x) = v.as_f64().filter(|x| v.is_f64() && x.fract() != 0.0) else {
                continue;
            };
            let Some(near) = serde_json::Number::from_f64(((x + 0.01) * 100.0).round() / 100.0)
            else {
                continue;
            };
            let mut args = args.clone();
            args.insert(name.clone(), Value::Number(near.clone()));
            let mut actions = gold.to_vec();
            actions[i] = Action::Tool {
                tool: tool.clone(),
                args,
            };
            out.push(Mutant {
                id: format!("near-miss:{i}:{name}"),
                kind: MutantKind::NearMiss,
                description: format!("step {} ({tool}): {name} {x} → {near}", i + 1),
                actions,
                added: None,
            });
        }
    }
    out
}

/// The look-ups the rubric asks for: positive action criteria on a read
/// tool, and the `after` steps of criteria that must be met.
fn asked_reads(world: &World, rubric: &Rubric) -> Vec<(String, Pattern)> {
    let is_read = |t: &str| {
        t.starts_with(VIEW_TOOL_PREFIX)
            || world.tools.get(t).is_some_and(|x| x.kind == ToolKind::Read)
    };
    let mut out = Vec::new();
    for c in rubric.criteria.iter().filter(|c| c.points > 0.0 || c.gate) {
        let (own, after) = match &c.check {
            Check::Action(a) => (
                is_read(&a.tool).then(|| Pattern::Tool {
                    tool: a.tool.clone(),
                    args: a.args.clone(),
                    include_failed: a.include_failed,
                }),
                a.after.clone(),
            ),
            Check::Message(m) => (None, m.after.clone()),
            _ => (None, None),
        };
        for p in own.into_iter().chain(after) {
            if let Pattern::Tool { tool, .. } = &p {
                if is_read(tool) {
                    out.push((c.id.clone(), p));
                }
            }
        }
    }
    out
}

/// Gold without the read steps a criterion asks for.
fn dropped_reads(world: &World, rubric: &Rubric, gold: &[Action]) -> Vec<Mutant> {
    let mut out = Vec::new();
    for (id, p) in asked_reads(world, rubric) {
        let Pattern::Tool { tool, args, .. } = &p else {
            continue;
        };
        let hits: Vec<usize> = gold
            .iter()
            .enumerate()
            .filter(|(_, a)| match a {
                Action::Tool { tool: t, args: a } => t == tool && args_match(a, args),
                Action::Message { .. } => false,
            })
            .map(|(i, _)| i)
            .collect();
        if hits.is_empty() {
            continue;
        }
        let actions = gold
            .iter()
            .enumerate()
            .filter(|(i, _)| !hits.contains(i))
            .map(|(_, a)| a.clone())
            .collect();
        out.push(Mutant {
            id: format!("dropped-read:{id}"),
            kind: MutantKind::DroppedRead,
            description: format!(
                "the {tool} look-up criterion `{id}` asks for left out (step(s) {})",
                hits.iter()
                    .map(|i| (i + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            actions,
            added: None,
        });
    }
    out
}

/// A wrong version of each gold write made just before it, so gold's own
/// call corrects it. Lint keeps those that end in gold's state.
fn detours(world: &World, gold: &[Action]) -> Vec<Mutant> {
    let mut out = Vec::new();
    for (i, a) in gold.iter().enumerate() {
        let Action::Tool { tool, args } = a else {
            continue;
        };
        let Some(t) = world.tools.get(tool).filter(|t| t.kind == ToolKind::Write) else {
            continue;
        };
        let schema = t.parameters.get("properties");
        let first = args.iter().find_map(|(name, v)| {
            perturb(v, schema.and_then(|p| p.get(name)))
                .into_iter()
                .next()
                .map(|(_, nv)| (name.clone(), v.clone(), nv))
        });
        let Some((name, old, new)) = first else {
            continue;
        };
        let mut wrong = args.clone();
        wrong.insert(name.clone(), new.clone());
        let mut actions = gold.to_vec();
        actions.insert(
            i,
            Action::Tool {
                tool: tool.clone(),
                args: wrong,
            },
        );
        out.push(Mutant {
            id: format!("detour:{i}"),
            kind: MutantKind::Detour,
            description: format!(
                "detour: step {} ({tool}) first made with {name} {} → {}, then as gold makes it",
                i + 1,
                compact(&old),
                compact(&new)
            ),
            actions,
            added: Some(i),
        });
    }
    out
}
