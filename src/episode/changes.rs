//! The state diff: what an episode changed, per table, against the seed.
//!
//! SQLite's update hook records every (table, rowid) a step touched, so the
//! diff only compares those rows instead of scanning whole tables. Touched
//! rows whose change was rolled back compare equal and drop out.

use std::collections::BTreeMap;

use indexmap::IndexSet;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Episode;
use crate::error::Result;
use crate::sql::values::{collect_rows, to_json};
use crate::sql::values::{plain_text, quote_ident};
use crate::world::TableInfo;

/// Per table: `{added: {key: record}, removed: [key], changed: {key: record}}`.
pub type Changes = BTreeMap<String, TableChanges>;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
/// What one table gained, lost and changed since reset.
pub struct TableChanges {
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    /// Records inserted, by primary key, as they are now.
    pub added: Map<String, Value>,
    #[cfg_attr(feature = "ts", ts(type = "Array<unknown>"))]
    /// Primary keys of records deleted.
    pub removed: Vec<Value>,
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    /// Records updated, by primary key, as they are now.
    pub changed: Map<String, Value>,
}

impl TableChanges {
    /// True when the table is as it was seeded.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

pub(super) fn compute(ep: &Episode) -> Result<Changes> {
    let touched: Vec<(String, i64)> = ep
        .touched
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .cloned()
        .collect();
    let mut out = Changes::new();
    let mut by_table: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for (table, rowid) in &touched {
        by_table.entry(table).or_default().push(*rowid);
    }
    for (table, rowids) in by_table {
        let Some(info) = ep.world.table(table) else {
            continue;
        };
        let live = ep.conn();
        let base = crate::world::base::lock(&ep.base);
        let mut keys: IndexSet<Value> = IndexSet::new();
        for rowid in rowids {
            for conn in [live, &*base] {
                if let Some(k) = key_at(conn, info, rowid)? {
                    keys.insert(k);
                }
            }
        }
        let mut changes = TableChanges::default();
        for key in keys {
            let before = record(&base, info, &key)?;
            let after = record(live, info, &key)?;
            let label = plain_text(&key);
            match (before, after) {
                (None, Some(a)) => {
                    changes.added.insert(label, a);
                }
                (Some(_), None) => changes.removed.push(Value::String(label)),
                (Some(b), Some(a)) if b != a => {
                    changes.changed.insert(label, a);
                }
                _ => {}
            }
        }
        if !changes.is_empty() {
            out.insert(table.to_string(), changes);
        }
    }
    Ok(out)
}

fn key_column(info: &TableInfo) -> String {
    info.key_column.clone().unwrap_or_else(|| "rowid".into())
}

fn key_at(conn: &Connection, info: &TableInfo, rowid: i64) -> Result<Option<Value>> {
    let sql = format!(
        "SELECT {} FROM {} WHERE rowid = ?1",
        quote_ident(&key_column(info)),
        quote_ident(&info.name)
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([rowid])?;
    Ok(match rows.next()? {
        Some(row) => Some(to_json(row.get_ref(0)?)),
        None => None,
    })
}

fn record(conn: &Connection, info: &TableInfo, key: &Value) -> Result<Option<Value>> {
    let sql = format!(
        "SELECT * FROM {} WHERE {} IS ?1",
        quote_ident(&info.name),
        quote_ident(&key_column(info))
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    stmt.raw_bind_parameter(1, crate::sql::values::from_json(key))?;
    let row = collect_rows(&mut stmt)?.into_iter().next();
    Ok(row.map(|r| as_record(info, r)))
}

/// A row as the diff shows it: the document when the table has one.
fn as_record(info: &TableInfo, row: Map<String, Value>) -> Value {
    if let Some(doc) = &info.document_column {
        if let Some(Value::String(text)) = row.get(doc) {
            if let Ok(v) = serde_json::from_str::<Value>(text) {
                return v;
            }
        }
    }
    Value::Object(row)
}
