//! Two versions of one rubric side by side, as an annotator reads them:
//! which criteria were added, removed or changed, each as its sentence,
//! and what changed about a criterion in words ("worth 3 points, was 2";
//! "now checks something else"), so a reviewer sees what a new version
//! grades differently without reading the files.
//!
//! Criteria are matched by `id` (the file's own name for a criterion; the
//! editor keeps it when a criterion is edited or moved).

use serde::Serialize;
use serde_json::Value;

use super::document::{Fields, RubricDoc};
use super::sentence;
use crate::world::World;

/// A criterion that only one of the two versions has.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ComparedCriterion {
    /// The criterion's id.
    pub id: String,
    /// What it grades, as a sentence.
    pub sentence: String,
    /// Its points.
    pub points: f64,
}

/// A criterion both versions have, with what differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ChangedCriterion {
    /// The criterion's id.
    pub id: String,
    /// Its sentence in the older version.
    pub before: String,
    /// Its sentence in the newer version.
    pub after: String,
    /// Each difference, in words.
    pub changes: Vec<String>,
}

/// What differs between two versions of a rubric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RubricComparison {
    /// The older version's `version`.
    pub from_version: String,
    /// The newer version's `version`.
    pub to_version: String,
    /// Criteria only the newer version has, in its order.
    pub added: Vec<ComparedCriterion>,
    /// Criteria only the older version has, in its order.
    pub removed: Vec<ComparedCriterion>,
    /// Criteria in both whose fields differ, in the newer version's order.
    pub changed: Vec<ChangedCriterion>,
    /// How many criteria are the same in both.
    pub unchanged: u32,
    /// Differences outside the criteria (title, notes, order, forbidden
    /// actions, gold runs, groups), in words.
    pub other: Vec<String>,
}

impl RubricComparison {
    /// True when the two versions grade alike and read alike.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.other.is_empty()
    }
}

fn id_of(c: &Fields) -> String {
    c.get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn points_of(c: &Fields) -> f64 {
    c.get("points").and_then(Value::as_f64).unwrap_or(1.0)
}

fn flag(c: &Fields, key: &str, default: bool) -> bool {
    c.get(key).and_then(Value::as_bool).unwrap_or(default)
}

fn text(c: &Fields, key: &str) -> String {
    c.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default()
        .to_string()
}

/// A number as people write points: `2`, `1.5`, `-3`.
fn num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Keys that say how a criterion counts or reads, not what it checks.
const DESCRIBING: &[&str] = &["id", "description", "points", "gate", "required", "section"];

/// What differs between two versions of one criterion, in words.
fn differences(before: &Fields, after: &Fields) -> Vec<String> {
    let mut out = Vec::new();
    let (pb, pa) = (points_of(before), points_of(after));
    if pb != pa {
        out.push(format!("Worth {} points, was {}", num(pa), num(pb)));
    }
    match (flag(before, "gate", false), flag(after, "gate", false)) {
        (false, true) => out.push("Now a gate: if it does not hold, the whole score is 0".into()),
        (true, false) => out.push("No longer a gate".into()),
        _ => {}
    }
    match (
        flag(before, "required", true),
        flag(after, "required", true),
    ) {
        (true, false) => out.push("No longer needed to pass".into()),
        (false, true) => out.push("Now needed to pass".into()),
        _ => {}
    }
    let (sb, sa) = (text(before, "section"), text(after, "section"));
    if sb != sa {
        out.push(match (sb.is_empty(), sa.is_empty()) {
            (true, _) => format!("Now in the group “{sa}”"),
            (_, true) => format!("No longer in the group “{sb}”"),
            _ => format!("Moved from the group “{sb}” to “{sa}”"),
        });
    }
    if before.get("kind") != after.get("kind") {
        out.push(format!(
            "Now checks {} instead of {}",
            kind_words(&text(after, "kind")),
            kind_words(&text(before, "kind"))
        ));
    } else {
        let keys = before
            .keys()
            .chain(after.keys())
            .filter(|k| !DESCRIBING.contains(&k.as_str()))
            .collect::<std::collections::BTreeSet<_>>();
        let what: Vec<&str> = keys
            .into_iter()
            .filter(|k| before.get(*k) != after.get(*k))
            .map(|k| field_words(k))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if !what.is_empty() {
            out.push(format!("What it checks changed: {}", what.join(", ")));
        }
    }
    if text(before, "description") != text(after, "description") {
        out.push("Its plain words changed".into());
    }
    out
}

fn kind_words(kind: &str) -> &'static str {
    match kind {
        "state" => "the records at the end",
        "action" => "what was done",
        "message" => "what the customer is told",
        "scope" => "other customers' records",
        "judged" => "a person's judgment",
        _ => "something unknown",
    }
}

/// A criterion field in an annotator's words.
fn field_words(key: &str) -> &'static str {
    match key {
        "query" | "expect" => "the check on the records",
        "changes" => "which records may change",
        "tool" => "the tool",
        "args" => "the values it was used with",
        "count" | "called" => "how often",
        "before" | "after" => "the order of steps",
        "include_failed" => "whether refused calls count",
        "number" | "date" | "contains" | "regex" => "what must be said",
        "allow" | "max_values" | "max_length" | "commit" => "what else may be said",
        "within" => "which messages are read",
        "check" | "tables" | "paths" => "whose records",
        "guidance" => "the question for the grader",
        "scale" => "the grading scale",
        _ => "another field",
    }
}

fn compared(world: &World, c: &Fields) -> ComparedCriterion {
    ComparedCriterion {
        id: id_of(c),
        sentence: sentence::sentence(world, &Value::Object(c.clone())),
        points: points_of(c),
    }
}

/// What differs from `before` (the older version) to `after`.
pub fn compare(world: &World, before: &RubricDoc, after: &RubricDoc) -> RubricComparison {
    let find = |doc: &RubricDoc, id: &str| doc.criteria.iter().find(|c| id_of(c) == id).cloned();
    let mut out = RubricComparison {
        from_version: before.version.clone(),
        to_version: after.version.clone(),
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
        unchanged: 0,
        other: Vec::new(),
    };
    for c in &after.criteria {
        match find(before, &id_of(c)) {
            None => out.added.push(compared(world, c)),
            Some(old) => {
                let changes = differences(&old, c);
                if changes.is_empty() {
                    out.unchanged += 1;
                } else {
                    out.changed.push(ChangedCriterion {
                        id: id_of(c),
                        before: sentence::sentence(world, &Value::Object(old)),
                        after: sentence::sentence(world, &Value::Object(c.clone())),
                        changes,
                    });
                }
            }
        }
    }
    for c in &before.criteria {
        if find(after, &id_of(c)).is_none() {
            out.removed.push(compared(world, c));
        }
    }
    if before.title.trim() != after.title.trim() {
        out.other.push(format!(
            "Title: “{}”, was “{}”",
            after.title.trim(),
            before.title.trim()
        ));
    }
    if before.notes.trim() != after.notes.trim() {
        out.other.push("The notes for annotators changed".into());
    }
    if before.solution_is_gold != after.solution_is_gold {
        out.other.push(if after.solution_is_gold {
            "The task's reference solution must now score 1.0".into()
        } else {
            "The task's reference solution no longer has to score 1.0".into()
        });
    }
    let order = |doc: &RubricDoc, other: &RubricDoc| -> Vec<String> {
        doc.criteria
            .iter()
            .map(id_of)
            .filter(|id| find(other, id).is_some())
            .collect()
    };
    if order(before, after) != order(after, before) {
        out.other
            .push("The criteria are in a different order".into());
    }
    let lists: [(&str, &[Fields], &[Fields]); 3] = [
        ("Groups", &before.sections, &after.sections),
        (
            "Forbidden actions lint tries",
            &before.forbidden,
            &after.forbidden,
        ),
        ("Gold runs", &before.gold, &after.gold),
    ];
    for (what, b, a) in lists {
        if b.len() != a.len() {
            out.other
                .push(format!("{what}: {}, was {}", a.len(), b.len()));
        } else if b != a {
            out.other.push(format!("{what} changed"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rubric::RUBRICS_DIR;
    use serde_json::json;

    fn desk() -> std::sync::Arc<World> {
        crate::rubric::support_desk()
    }

    fn bundled(world: &World, task: &str) -> RubricDoc {
        let text =
            std::fs::read_to_string(world.root.join(RUBRICS_DIR).join(format!("{task}.toml")))
                .expect("bundled rubric");
        RubricDoc::parse(task, "test", &text).expect("parses")
    }

    #[test]
    fn the_same_rubric_has_nothing_to_compare() {
        let world = desk();
        let doc = bundled(&world, "duplicate-charge");
        let c = compare(&world, &doc, &doc.clone());
        assert!(c.is_empty(), "{c:?}");
        assert_eq!(c.unchanged as usize, doc.criteria.len());
    }

    #[test]
    fn added_removed_and_changed_criteria_read_as_sentences() {
        let world = desk();
        let before = bundled(&world, "duplicate-charge");
        let mut after = before.clone();
        after.version = "2".into();
        let removed = after.criteria.remove(1);
        let removed_id = id_of(&removed);
        after.criteria[0].insert("points".into(), json!(7));
        after.criteria[0].insert("gate".into(), json!(false));
        let fields: Fields = serde_json::from_value(json!({
            "id": "closed", "kind": "state",
            "query": "SELECT status FROM tickets WHERE id = 'T-1042'", "expect": {"equals": "closed"}, "points": 1
        }))
        .expect("fields");
        after.criteria.push(fields);
        let c = compare(&world, &before, &after);
        assert_eq!((c.from_version.as_str(), c.to_version.as_str()), ("1", "2"));
        assert_eq!(c.added.len(), 1);
        assert_eq!(
            c.added[0].sentence,
            "Ticket T-1042 ends up with status “closed”"
        );
        assert_eq!(c.removed.len(), 1);
        assert_eq!(c.removed[0].id, removed_id);
        assert!(!c.removed[0].sentence.is_empty());
        assert_eq!(c.changed.len(), 1, "{:?}", c.changed);
        let changed = &c.changed[0];
        assert_eq!(changed.id, id_of(&after.criteria[0]));
        // The bundled first criterion is a 4-point gate.
        assert_eq!(
            changed.changes,
            ["Worth 7 points, was 4", "No longer a gate"]
        );
        assert_eq!(c.unchanged as usize, before.criteria.len() - 2);
        assert!(!c.is_empty());
    }

    #[test]
    fn a_changed_check_and_other_changes_are_named() {
        let world = desk();
        let before = bundled(&world, "duplicate-charge");
        let mut after = before.clone();
        let i = after
            .criteria
            .iter()
            .position(|c| c.get("kind") == Some(&json!("message")))
            .expect("a message criterion");
        after.criteria[i].insert("within".into(), json!("last"));
        after.criteria.swap(0, 1);
        after.title = "A new title".into();
        after.forbidden.clear();
        let c = compare(&world, &before, &after);
        let changed = c
            .changed
            .iter()
            .find(|x| x.id == id_of(&after.criteria[i]))
            .expect("changed");
        assert_eq!(
            changed.changes,
            ["What it checks changed: which messages are read"]
        );
        assert!(
            c.other
                .iter()
                .any(|s| s == "The criteria are in a different order"),
            "{:?}",
            c.other
        );
        assert!(
            c.other
                .iter()
                .any(|s| s.starts_with("Title: “A new title”")),
            "{:?}",
            c.other
        );
        assert!(
            c.other
                .iter()
                .any(|s| s == "Forbidden actions lint tries: 0, was 2"),
            "{:?}",
            c.other
        );
    }
}
