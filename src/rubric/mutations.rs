//! Mutants of a gold trajectory: plausible wrong runs a good rubric must
//! score lower. Each is the gold action list with one change:
//!
//! - a write step dropped;
//! - one argument of one write step perturbed: numbers ± 1, identifiers
//!   with their last digit changed (another record, or none), free text
//!   replaced by a bland sentence, enums moved to the next allowed value,
//!   booleans flipped, lists shortened or their first item altered;
//! - a forbidden action added at the end, or just before a final step that
//!   ends the episode (the rubric's `forbidden` list, and one built from
//!   each negative-point action criterion whose arguments are concrete);
//! - the final message dropped.

use serde::Serialize;
use serde_json::{Map, Value};

use super::criterion::{Check, CriterionKind};
use super::matchers::{compact, Matcher};
use super::Rubric;
use crate::action::Action;
use crate::world::{ToolKind, World};

/// Free text a mutant puts in place of what gold wrote: valid, but says
/// nothing about the case.
pub const BLAND_TEXT: &str = "Handled as requested.";

/// The class of a mutant. The first four make the mutation score
/// ([`MutantKind::in_mutation_score`]); the rest are the cheat classes a
/// hostile agent would try ([`MutantKind::CHEATS`]), each of which lint
/// scores on its own. Serialized in snake_case (`drop_step`); reports print
/// [`MutantKind::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MutantKind {
    /// A write step of gold left out.
    DropStep,
    /// One argument of one write step changed (see [`perturb`]).
    Perturb,
    /// A forbidden action added, just before a final step that ends the
    /// episode or else at the end: a `[[forbidden]]` entry of the rubric, or a
    /// call built from a negative-point action criterion.
    Forbidden,
    /// Gold's last message to the customer left out.
    DropFinalMessage,
    /// Cheat classes (see [`super::cheats`]).
    ///
    /// A message listing hundreds of candidate values (every count to 300,
    /// whole-dollar prices, dates over two years, values around each
    /// answer), alone or in place of gold's messages. Alone it must score 0.
    Stuffing,
    /// Gold's answer among seven wrong ones of its kind, or as one end of a
    /// range ("between $79.00 and $79.03").
    Spray,
    /// Gold's answer off by the smallest step (money ±0.01, a count or id ±1, a
    /// date +1 day), or a money argument of a write ±0.01.
    NearMiss,
    /// A write pointed at a record outside the task's subject, which the world
    /// refuses; a forbidden call the world refuses counts here too. Needs the
    /// world's `[scope]`.
    RefusedAttempt,
    /// A message telling a sensitive value of a record outside the task's
    /// subject. Needs the world's `[scope]`.
    Disclosure,
    /// The look-up a criterion asks for (a positive action criterion on a read
    /// tool, or an `after` read) left out.
    DroppedRead,
    /// A wrong version of a gold write made just before it, so that gold's own
    /// call undoes it. Only reported: whether a detour should cost is a
    /// judgment call.
    Detour,
}

impl MutantKind {
    /// Every kind, in report order.
    pub const ALL: [MutantKind; 11] = [
        MutantKind::DropStep,
        MutantKind::Perturb,
        MutantKind::Forbidden,
        MutantKind::DropFinalMessage,
        MutantKind::Stuffing,
        MutantKind::Spray,
        MutantKind::NearMiss,
        MutantKind::RefusedAttempt,
        MutantKind::Disclosure,
        MutantKind::DroppedRead,
        MutantKind::Detour,
    ];

    /// The cheat classes, in report order.
    pub const CHEATS: &'static [MutantKind] = MutantKind::ALL.split_at(4).1;

    /// The class name reports use.
    pub fn name(self) -> &'static str {
        match self {
            MutantKind::DropStep => "drop-step",
            MutantKind::Perturb => "perturb",
            MutantKind::Forbidden => "forbidden",
            MutantKind::DropFinalMessage => "drop-message",
            MutantKind::Stuffing => "stuffing",
            MutantKind::Spray => "spray",
            MutantKind::NearMiss => "near-miss",
            MutantKind::RefusedAttempt => "refused-attempt",
            MutantKind::Disclosure => "disclosure",
            MutantKind::DroppedRead => "dropped-read",
            MutantKind::Detour => "detour",
        }
    }

    /// A cheat class must be caught whole: a survivor fails the task,
    /// whatever the overall mutation score. Detours are a judgment call
    /// and only reported.
    pub fn must_all_be_caught(self) -> bool {
        matches!(
            self,
            MutantKind::Stuffing
                | MutantKind::Spray
                | MutantKind::NearMiss
                | MutantKind::RefusedAttempt
                | MutantKind::Disclosure
                | MutantKind::DroppedRead
        )
    }

    /// Whether the class counts toward the mutation score threshold (the
    /// classes lint had before cheat classes).
    pub fn in_mutation_score(self) -> bool {
        matches!(
            self,
            MutantKind::DropStep
                | MutantKind::Perturb
                | MutantKind::Forbidden
                | MutantKind::DropFinalMessage
        )
    }
}

/// One wrong run built from gold: gold's actions with one change, and what
/// the change was.
#[derive(Debug, Clone, Serialize)]
pub struct Mutant {
    /// Stable id, e.g. `drop:4`, `arg:4:amount:+1`, `forbidden:1`.
    pub id: String,
    /// Its class. Lint reports a [`MutantKind::Forbidden`] call the world
    /// refused as a [`MutantKind::RefusedAttempt`].
    pub kind: MutantKind,
    /// What changed, for the annotator: "step 5 issue_refund: amount 79.0 → 80.0".
    pub description: String,
    /// The mutated action list, replayed in place of gold's (not serialized).
    #[serde(skip)]
    pub actions: Vec<Action>,
    /// The position of an action added to gold (forbidden, detour).
    #[serde(skip)]
    pub added: Option<usize>,
}

/// Every mutant of `gold` under `rubric`, without duplicates and without
/// any that equals gold.
pub fn mutants(world: &World, rubric: &Rubric, gold: &[Action]) -> Vec<Mutant> {
    let mut out: Vec<Mutant> = Vec::new();
    let mut push = |m: Mutant| {
        if m.actions.as_slice() != gold && !out.iter().any(|o| o.actions == m.actions) {
            out.push(m);
        }
    };
    for (i, action) in gold.iter().enumerate() {
        let Action::Tool { tool, args } = action else {
            continue;
        };
        if !is_write(world, tool) {
            continue;
        }
        let mut dropped = gold.to_vec();
        dropped.remove(i);
        push(Mutant {
            id: format!("drop:{i}"),
            kind: MutantKind::DropStep,
            description: format!("step {} ({tool}) dropped", i + 1),
            actions: dropped,
            added: None,
        });
        let schema = world
            .tools
            .get(tool)
            .map(|t| t.parameters.clone())
            .unwrap_or(Value::Null);
        for (name, value) in args {
            let prop = schema.get("properties").and_then(|p| p.get(name));
            for (label, new_value) in perturb(value, prop) {
                let mut new_args = args.clone();
                new_args.insert(name.clone(), new_value.clone());
                let mut actions = gold.to_vec();
                actions[i] = Action::Tool {
                    tool: tool.clone(),
                    args: new_args,
                };
                push(Mutant {
                    id: format!("arg:{i}:{name}:{label}"),
                    kind: MutantKind::Perturb,
                    description: format!(
                        "step {} ({tool}): {name} {} → {}",
                        i + 1,
                        compact(value),
                        compact(&new_value)
                    ),
                    actions,
                    added: None,
                });
            }
        }
    }
    // After a tool that ends the episode nothing more is applied, so a
    // forbidden action goes just before it.
    let at = insertion_point(world, gold);
    for (n, (action, why)) in forbidden_actions(world, rubric, gold)
        .into_iter()
        .enumerate()
    {
        let mut actions = gold.to_vec();
        actions.insert(at, action.clone());
        let what = match &action {
            Action::Tool { tool, args } => {
                format!("{tool} {}", compact(&Value::Object(args.clone())))
            }
            Action::Message { message } => {
                format!("message {}", compact(&Value::String(message.clone())))
            }
        };
        push(Mutant {
            id: format!("forbidden:{}", n + 1),
            kind: MutantKind::Forbidden,
            description: format!(
                "forbidden {what} added {}{}",
                if at == gold.len() {
                    "at the end".to_string()
                } else {
                    format!("before step {}", at + 1)
                },
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({why})")
                }
            ),
            actions,
            added: Some(at),
        });
    }
    if let Some(last) = gold
        .iter()
        .rposition(|a| matches!(a, Action::Message { .. }))
    {
        let mut actions = gold.to_vec();
        actions.remove(last);
        push(Mutant {
            id: format!("drop-message:{last}"),
            kind: MutantKind::DropFinalMessage,
            description: format!("final message (step {}) dropped", last + 1),
            actions,
            added: None,
        });
    }
    out
}

/// The step before which an added action still counts: before a final
/// step that ends the episode, else at the end.
pub fn insertion_point(world: &World, gold: &[Action]) -> usize {
    match gold.last() {
        Some(Action::Tool { tool, .. })
            if world.tools.get(tool).is_some_and(|t| t.ends_episode) =>
        {
            gold.len() - 1
        }
        _ => gold.len(),
    }
}

/// Whether `tool` is one of the world's write tools.
pub(crate) fn is_write(world: &World, tool: &str) -> bool {
    world
        .tools
        .get(tool)
        .is_some_and(|t| t.kind == ToolKind::Write)
}

/// The rubric's forbidden actions, then one per negative-point action
/// criterion: its tool with its concrete argument values, on top of the
/// arguments of gold's first call of that tool (so required arguments the
/// criterion leaves open still have values).
fn forbidden_actions(world: &World, rubric: &Rubric, gold: &[Action]) -> Vec<(Action, String)> {
    let mut out: Vec<(Action, String)> = rubric
        .forbidden
        .iter()
        .map(|f| (f.action.clone(), f.why.clone()))
        .collect();
    for c in rubric
        .criteria
        .iter()
        .filter(|c| c.points < 0.0 && c.kind == CriterionKind::Action)
    {
        let Check::Action(a) = &c.check else { continue };
        // The rubric's own forbidden calls of this tool say it better.
        if rubric
            .forbidden
            .iter()
            .any(|f| f.action.tool_name() == Some(a.tool.as_str()))
        {
            continue;
        }
        let base = gold.iter().find_map(|g| match g {
            Action::Tool { tool, args } if tool == &a.tool => Some(args.clone()),
            _ => None,
        });
        let mut args: Map<String, Value> = base.unwrap_or_default();
        let mut concrete = true;
        for (name, m) in &a.args {
            match m {
                Matcher::Exact(v) => {
                    args.insert(name.clone(), v.clone());
                }
                Matcher::AnyOf(list) => {
                    if let Some(v) = list.first() {
                        args.insert(name.clone(), v.clone());
                    }
                }
                Matcher::Number { value, .. } => {
                    args.insert(
                        name.clone(),
                        serde_json::Number::from_f64(*value)
                            .map(Value::Number)
                            .unwrap_or(Value::Null),
                    );
                }
                Matcher::Absent => {
                    args.remove(name);
                }
                Matcher::Regex(_) | Matcher::Contains(_) | Matcher::Present => {
                    if !args.contains_key(name) {
                        concrete = false;
                    }
                }
            }
        }
        // Only calls the tool would accept: a call rejected for its
        // arguments tests nothing.
        let valid = world
            .tools
            .get(&a.tool)
            .is_none_or(|t| t.validator.is_valid(&Value::Object(args.clone())));
        if concrete && valid {
            out.push((
                Action::Tool {
                    tool: a.tool.clone(),
                    args,
                },
                format!("criterion {}: {}", c.id, c.description),
            ));
        }
    }
    out
}

/// The perturbations of one argument value, each with a short label.
pub fn perturb(value: &Value, schema: Option<&Value>) -> Vec<(String, Value)> {
    if let Some(options) = schema.and_then(|s| s.get("enum")).and_then(Value::as_array) {
        if let Some(pos) = options.iter().position(|o| o == value) {
            if options.len() > 1 {
                let next = options[(pos + 1) % options.len()].clone();
                return vec![(format!("enum:{}", short(&next)), next)];
            }
            return Vec::new();
        }
    }
    match value {
        Value::Bool(b) => vec![("flip".into(), Value::Bool(!b))],
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                vec![
                    ("+1".into(), Value::from(i + 1)),
                    ("-1".into(), Value::from(i - 1)),
                ]
            } else if let Some(f) = n.as_f64() {
                let mk = |x: f64| serde_json::Number::from_f64(x).map(Value::Number);
                [("+1", f + 1.0), ("-1", f - 1.0)]
                    .into_iter()
                    .filter_map(|(l, x)| mk(x).map(|v| (l.to_string(), v)))
                    .collect()
            } else {
                Vec::new()
            }
        }
        Value::String(s) => {
            let min_len = schema
                .and_then(|x| x.get("minLength"))
                .and_then(Value::as_u64)
                .unwrap_or(0) as usize;
            let altered = alter_string(s, min_len);
            if &altered == s {
                Vec::new()
            } else {
                vec![("alter".into(), Value::String(altered))]
            }
        }
        Value::Array(items) => {
            let item_schema = schema.and_then(|s| s.get("items"));
            let mut out = Vec::new();
            if items.len() >= 2 {
                out.push((
                    "drop-last".into(),
                    Value::Array(items[..items.len() - 1].to_vec()),
                ));
            }
            if let Some((_, first)) = items
                .first()
                .and_then(|f| perturb(f, item_schema).into_iter().next())
            {
                let mut changed = items.clone();
                changed[0] = first;
                out.push(("first-item".into(), Value::Array(changed)));
            }
            out
        }
        Value::Object(map) => {
            for (k, v) in map {
                let prop = schema
                    .and_then(|s| s.get("properties"))
                    .and_then(|p| p.get(k));
                if let Some((label, nv)) = perturb(v, prop).into_iter().next() {
                    let mut changed = map.clone();
                    changed.insert(k.clone(), nv);
                    return vec![(format!("{k}:{label}"), Value::Object(changed))];
                }
            }
            Vec::new()
        }
        Value::Null => Vec::new(),
    }
}

fn short(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Free text (has a space) becomes [`BLAND_TEXT`], padded to the schema's
/// `minLength`; an identifier gets its last digit changed (or an `x`
/// appended when it has none), naming another record or none.
fn alter_string(s: &str, min_len: usize) -> String {
    if s.trim().contains(char::is_whitespace) {
        let mut t = BLAND_TEXT.to_string();
        while t.chars().count() < min_len {
            t.push_str(" Handled.");
        }
        return t;
    }
    if let Some(pos) = s.rfind(|c: char| c.is_ascii_digit()) {
        let d = s.as_bytes()[pos] - b'0';
        let mut out = s.to_string();
        out.replace_range(pos..pos + 1, &((d + 1) % 10).to_string());
        return out;
    }
    format!("{s}x")
}

/// One write call per tool from the world's solutions: shapes of valid
/// calls to retarget. Calls with fewer arguments come first, since they
/// are likelier to stay valid when pointed at another record.
pub(crate) fn write_templates(world: &World) -> Vec<Action> {
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut out = Vec::new();
    for task in world.tasks.values() {
        for a in task
            .solution
            .iter()
            .filter_map(|a| Action::from_json(a).ok())
        {
            let Action::Tool { tool, .. } = &a else {
                continue;
            };
            if !is_write(world, tool) {
                continue;
            }
            if seen.insert(tool.clone()) {
                out.push(a);
            }
        }
    }
    out.sort_by_key(|a| match a {
        Action::Tool { args, .. } => args.len(),
        Action::Message { .. } => 0,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn perturbations_change_the_value_plausibly() {
        assert_eq!(
            perturb(&json!(79.0), None),
            vec![("+1".into(), json!(80.0)), ("-1".into(), json!(78.0))]
        );
        assert_eq!(perturb(&json!(3), None)[0].1, json!(4));
        assert_eq!(perturb(&json!("INV-24073"), None)[0].1, json!("INV-24074"));
        assert_eq!(perturb(&json!("#W2890449"), None)[0].1, json!("#W2890440"));
        assert_eq!(
            perturb(
                &json!("billing"),
                Some(&json!({"enum": ["billing", "technical"]}))
            )[0]
            .1,
            json!("technical")
        );
        assert_eq!(
            perturb(&json!("x y z"), Some(&json!({"minLength": 30})))[0]
                .1
                .as_str()
                .map(str::len),
            Some(30)
        );
        assert_eq!(perturb(&json!("abc"), None)[0].1, json!("abcx"));
        let list = perturb(&json!(["1", "2"]), None);
        assert_eq!(list[0].1, json!(["1"]));
        assert_eq!(list[1].1, json!(["2", "2"]));
        assert_eq!(perturb(&json!({"a": true}), None)[0].1, json!({"a": false}));
        assert!(perturb(&Value::Null, None).is_empty());
    }
}
