//! The review shown before submitting: what the episode changed in the
//! world, field by field, and the final message to the customer.
//!
//! The engine's state diff gives each changed record as it is now; the
//! values before come from a fresh copy of the seeded world, read through
//! the engine's sandboxed query.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};
use ts_rs::TS;
use understudy::recorder::Recorder;
use understudy::replay::replay_prefix;
use understudy::trajectory::Trajectory;
use understudy::world::TableInfo;
use understudy::{Action, Episode, World};

use crate::error::AppResult;

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ReviewView {
    /// Tables with changes, in name order.
    pub tables: Vec<TableDiff>,
    /// What will be stored as the final message (the last message sent).
    pub final_message: Option<String>,
    pub steps_kept: u32,
    pub steps_undone: u32,
    pub messages_sent: u32,
    #[ts(type = "number")]
    pub active_ms: i64,
    /// The task has ended (a closing tool succeeded, or the step limit).
    pub done: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct TableDiff {
    pub table: String,
    /// What the world calls the table on screen (labels.toml's
    /// `[table_titles]`), if it says.
    pub label: Option<String>,
    pub added: Vec<RecordDiff>,
    pub changed: Vec<RecordDiff>,
    pub removed: Vec<RecordDiff>,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct RecordDiff {
    pub key: String,
    /// For a changed record only the fields that changed; for an added or
    /// removed one every field that has a value.
    pub fields: Vec<FieldChange>,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct FieldChange {
    pub field: String,
    /// The world's plain-language label of the field, if it gives one.
    pub label: Option<String>,
    #[ts(type = "unknown")]
    pub before: Value,
    #[ts(type = "unknown")]
    pub after: Value,
}

pub fn build(r: &Recorder) -> AppResult<ReviewView> {
    let tables = tables(r.episode())?;
    let kept = r.steps().iter().filter(|s| !s.retracted);
    let messages: Vec<&str> = kept
        .clone()
        .filter_map(|s| match &s.action {
            Action::Message { message } => Some(message.as_str()),
            Action::Tool { .. } => None,
        })
        .collect();
    Ok(ReviewView {
        tables,
        final_message: messages.last().map(|m| m.to_string()),
        steps_kept: kept.count() as u32,
        steps_undone: r.steps().iter().filter(|s| s.retracted).count() as u32,
        messages_sent: messages.len() as u32,
        active_ms: r.active_ms(),
        done: r.is_done(),
    })
}

/// What a stored run had changed in the world after its first `upto` kept
/// steps (`None`: all of them), field by field: the steps replayed on a
/// fresh episode ([`replay_prefix`]). A world changed since the recording
/// is replayed anyway; the views that show the result say so.
pub fn tables_after(
    world: &Arc<World>,
    trajectory: &Trajectory,
    upto: Option<usize>,
) -> AppResult<Vec<TableDiff>> {
    let upto = upto.unwrap_or_else(|| trajectory.kept_steps().count());
    tables(&replay_prefix(world, trajectory, upto, true)?)
}

/// What `episode` changed in the world so far, field by field, against a
/// fresh copy of its seeded world: the submit dialog's diff, and the
/// replay view's state after any step.
pub fn tables(episode: &Episode) -> AppResult<Vec<TableDiff>> {
    let world = Arc::clone(episode.world());
    let mut seeded = Episode::new(Arc::clone(&world))?;
    seeded.reset(episode.task_id(), episode.seed())?;
    let mut tables = Vec::new();
    for (table, changes) in episode.changes()? {
        let info = world.table(&table);
        let before = |key: &str| -> AppResult<Map<String, Value>> {
            Ok(match info {
                Some(info) => seeded_record(&seeded, info, key)?,
                None => Map::new(),
            })
        };
        let mut diff = TableDiff {
            table: table.clone(),
            label: info.and_then(|i| i.title.clone()),
            added: Vec::new(),
            changed: Vec::new(),
            removed: Vec::new(),
        };
        let fields = |before: &Map<String, Value>, after: &Map<String, Value>| {
            let mut fields = fields(before, after);
            for f in &mut fields {
                f.label = info.and_then(|i| i.labels.get(&f.field)).cloned();
            }
            fields
        };
        for (key, after) in &changes.added {
            diff.added.push(RecordDiff {
                key: key.clone(),
                fields: fields(&Map::new(), &as_map(after)),
            });
        }
        for (key, after) in &changes.changed {
            diff.changed.push(RecordDiff {
                key: key.clone(),
                fields: fields(&before(key)?, &as_map(after)),
            });
        }
        for key in &changes.removed {
            let key = key
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| key.to_string());
            diff.removed.push(RecordDiff {
                fields: fields(&before(&key)?, &Map::new()),
                key,
            });
        }
        tables.push(diff);
    }
    Ok(tables)
}

/// The changes between two versions of a record: every field whose value
/// differs, in the record's column order (absent counts as null).
fn fields(before: &Map<String, Value>, after: &Map<String, Value>) -> Vec<FieldChange> {
    let mut names: Vec<&String> = after.keys().collect();
    names.extend(before.keys().filter(|k| !after.contains_key(*k)));
    names
        .into_iter()
        .filter_map(|name| {
            let b = before.get(name).cloned().unwrap_or(Value::Null);
            let a = after.get(name).cloned().unwrap_or(Value::Null);
            (b != a).then(|| FieldChange {
                field: name.clone(),
                label: None,
                before: b,
                after: a,
            })
        })
        .collect()
}

fn as_map(v: &Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m.clone(),
        other => Map::from_iter([("value".to_string(), other.clone())]),
    }
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// A record of the seeded world, shaped as the engine's diff shapes it
/// (the document, for tables that keep one).
fn seeded_record(seeded: &Episode, info: &TableInfo, key: &str) -> AppResult<Map<String, Value>> {
    let column = info.key_column.clone().unwrap_or_else(|| "rowid".into());
    let sql = format!(
        "SELECT * FROM {} WHERE {} = :key",
        quote(&info.name),
        quote(&column)
    );
    let key_value = match (&info.key_column, key.parse::<i64>()) {
        (None, Ok(n)) => Value::from(n),
        _ => Value::from(key),
    };
    let params = Map::from_iter([("key".to_string(), key_value)]);
    let Some(row) = seeded.query(&sql, &params)?.into_iter().next() else {
        return Ok(Map::new());
    };
    if let Some(doc) = &info.document_column {
        if let Some(Value::Object(m)) = row
            .get(doc)
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
        {
            return Ok(m);
        }
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_lists_only_what_changed_in_column_order() {
        let before = as_map(&json!({"id": "INV-1", "refunded_cents": 0, "status": "paid"}));
        let after = as_map(&json!({"id": "INV-1", "refunded_cents": 7900, "status": "paid"}));
        assert_eq!(
            fields(&before, &after),
            vec![FieldChange {
                field: "refunded_cents".into(),
                label: None,
                before: json!(0),
                after: json!(7900)
            }]
        );
        let added = fields(&Map::new(), &as_map(&json!({"id": "RF-1", "amount": 5})));
        assert_eq!(
            added.iter().map(|f| f.field.as_str()).collect::<Vec<_>>(),
            ["id", "amount"]
        );
        assert!(added.iter().all(|f| f.before.is_null()));
    }
}
