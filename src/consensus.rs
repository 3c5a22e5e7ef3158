//! Demonstration agreement: where several experts' runs of one task end in
//! different states or took different actions, field by field and action
//! by action, with a summary a reviewer reads before approving gold.
//!
//! The input is plain data (each run's changed fields and its kept
//! actions), so any front end that can show a state diff can ask. A field
//! one run changed and another did not is compared with its seeded value
//! (the `before` a run that changed it reports): leaving a record alone is
//! a choice too. Tool calls are compared whole (tool and arguments);
//! messages to the customer are worded differently by everyone, so they
//! are counted, not compared.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::action::Action;

/// One field a run changed: its record, and the value before and after.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangedField {
    /// The table.
    pub table: String,
    /// The record's key.
    pub key: String,
    /// The field (every field of a record added or removed).
    pub field: String,
    /// The seeded value (null for an added record).
    pub before: Value,
    /// The value at the run's end (null for a removed record).
    pub after: Value,
}

/// What one run did, as the comparison needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// The run's id.
    pub episode_id: String,
    /// Every field whose final value differs from the seed.
    pub changed: Vec<ChangedField>,
    /// The kept actions, in order.
    pub actions: Vec<Action>,
}

/// One field across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FieldAgreement {
    /// The table.
    pub table: String,
    /// The record's key.
    pub key: String,
    /// The field.
    pub field: String,
    /// The seeded value.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub before: Value,
    /// Each run's final value, in the runs' order.
    #[cfg_attr(feature = "ts", ts(type = "Array<unknown>"))]
    pub values: Vec<Value>,
    /// Every run ended with the same value.
    pub agreed: bool,
}

/// One tool call across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ActionAgreement {
    /// The tool called.
    pub tool: String,
    /// Its arguments.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    pub args: serde_json::Map<String, Value>,
    /// Which runs made this exact call, in the runs' order.
    pub runs: Vec<bool>,
    /// Every run made it.
    pub agreed: bool,
}

/// The runs compared, and where they part.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Consensus {
    /// The runs' ids, in the order every list below uses.
    pub runs: Vec<String>,
    /// Fields any run changed, divergent ones first.
    pub fields: Vec<FieldAgreement>,
    /// Tool calls any run made, divergent ones first.
    pub actions: Vec<ActionAgreement>,
    /// Messages each run sent to the customer.
    pub messages: Vec<u32>,
    /// Fields every run ended with the same value.
    pub fields_agreed: u32,
    /// Tool calls every run made.
    pub actions_agreed: u32,
    /// Every field and every tool call agree.
    pub unanimous: bool,
}

/// A field's table, record key and name.
type FieldKey = (String, String, String);

/// Compares the runs (at least one; with one, everything agrees).
pub fn compare(runs: &[RunOutcome]) -> Consensus {
    let n = runs.len();
    // (table, key, field) → seeded value and each run's final one.
    let mut fields: BTreeMap<FieldKey, (Value, Vec<Option<Value>>)> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        for c in &run.changed {
            let slot = fields
                .entry((c.table.clone(), c.key.clone(), c.field.clone()))
                .or_insert_with(|| (c.before.clone(), vec![None; n]));
            slot.1[i] = Some(c.after.clone());
        }
    }
    let mut field_rows: Vec<FieldAgreement> = fields
        .into_iter()
        .map(|((table, key, field), (before, values))| {
            let values: Vec<Value> = values
                .into_iter()
                .map(|v| v.unwrap_or_else(|| before.clone()))
                .collect();
            let agreed = values.windows(2).all(|w| w[0] == w[1]);
            FieldAgreement {
                table,
                key,
                field,
                before,
                values,
                agreed,
            }
        })
        .collect();
    field_rows.sort_by_key(|f| f.agreed);

    // Tool calls by their canonical text, in first-seen order.
    let mut texts: Vec<String> = Vec::new();
    let mut action_rows: Vec<ActionAgreement> = Vec::new();
    let mut messages = vec![0u32; n];
    for (i, run) in runs.iter().enumerate() {
        for action in &run.actions {
            match action {
                Action::Message { .. } => messages[i] += 1,
                Action::Tool { tool, args } => {
                    let text = format!("{tool} {}", Value::Object(args.clone()));
                    let at = match texts.iter().position(|t| *t == text) {
                        Some(at) => at,
                        None => {
                            texts.push(text);
                            action_rows.push(ActionAgreement {
                                tool: tool.clone(),
                                args: args.clone(),
                                runs: vec![false; n],
                                agreed: false,
                            });
                            action_rows.len() - 1
                        }
                    };
                    action_rows[at].runs[i] = true;
                }
            }
        }
    }
    for a in &mut action_rows {
        a.agreed = a.runs.iter().all(|b| *b);
    }
    action_rows.sort_by_key(|a| a.agreed);

    let fields_agreed = field_rows.iter().filter(|f| f.agreed).count() as u32;
    let actions_agreed = action_rows.iter().filter(|a| a.agreed).count() as u32;
    Consensus {
        runs: runs.iter().map(|r| r.episode_id.clone()).collect(),
        unanimous: fields_agreed as usize == field_rows.len()
            && actions_agreed as usize == action_rows.len(),
        fields: field_rows,
        actions: action_rows,
        messages,
        fields_agreed,
        actions_agreed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(key: &str, name: &str, before: Value, after: Value) -> ChangedField {
        ChangedField {
            table: "invoices".into(),
            key: key.into(),
            field: name.into(),
            before,
            after,
        }
    }

    fn refund(amount: f64) -> Action {
        Action::tool(
            "issue_refund",
            json!({"invoice_id": "INV-1", "amount": amount}),
        )
    }

    #[test]
    fn runs_are_compared_field_by_field_and_call_by_call() {
        let look = Action::tool("get_ticket", json!({"ticket_id": "T-1"}));
        let runs = vec![
            RunOutcome {
                episode_id: "a".into(),
                changed: vec![
                    field("INV-1", "refunded", json!(0), json!(7900)),
                    field("INV-1", "status", json!("paid"), json!("refunded")),
                ],
                actions: vec![look.clone(), refund(79.0), Action::message("Done.")],
            },
            RunOutcome {
                episode_id: "b".into(),
                changed: vec![field("INV-1", "refunded", json!(0), json!(7900))],
                actions: vec![look.clone(), refund(79.0)],
            },
            RunOutcome {
                episode_id: "c".into(),
                changed: vec![field("INV-1", "refunded", json!(0), json!(5000))],
                actions: vec![
                    look,
                    refund(50.0),
                    Action::message("Hi"),
                    Action::message("Bye"),
                ],
            },
        ];
        let c = compare(&runs);
        assert_eq!(c.runs, ["a", "b", "c"]);
        assert_eq!(c.fields.len(), 2);
        // Divergent first: both fields differ somewhere.
        let refunded = c.fields.iter().find(|f| f.field == "refunded").unwrap();
        assert_eq!(refunded.values, [json!(7900), json!(7900), json!(5000)]);
        assert!(!refunded.agreed);
        // A run that left the field alone ends with the seeded value.
        let status = c.fields.iter().find(|f| f.field == "status").unwrap();
        assert_eq!(
            status.values,
            [json!("refunded"), json!("paid"), json!("paid")]
        );
        assert_eq!(c.fields_agreed, 0);

        assert_eq!(c.actions.len(), 3);
        assert_eq!(c.actions_agreed, 1);
        assert!(!c.actions[0].agreed, "divergent calls come first");
        let look = c.actions.iter().find(|a| a.tool == "get_ticket").unwrap();
        assert!(look.agreed && look.runs == [true, true, true]);
        let full = c
            .actions
            .iter()
            .find(|a| a.args.get("amount") == Some(&json!(79.0)))
            .unwrap();
        assert_eq!(full.runs, [true, true, false]);
        assert_eq!(c.messages, [1, 0, 2]);
        assert!(!c.unanimous);
    }

    #[test]
    fn identical_runs_are_unanimous() {
        let run = |id: &str| RunOutcome {
            episode_id: id.into(),
            changed: vec![field("INV-1", "refunded", json!(0), json!(7900))],
            actions: vec![refund(79.0)],
        };
        let c = compare(&[run("a"), run("b")]);
        assert!(c.unanimous);
        assert_eq!((c.fields_agreed, c.actions_agreed), (1, 1));
        let empty = compare(&[]);
        assert!(empty.unanimous && empty.fields.is_empty());
    }
}
