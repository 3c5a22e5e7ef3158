//! The world's tables as the engine sees them: how rows are keyed in the
//! state diff, and how reset can put them back.

use std::collections::HashMap;

use rusqlite::Connection;

use super::context::LoadContext;
use crate::diagnostics::line_of;
use crate::world::manifest::WorldToml;
use crate::world::{seed, RestorePlan, TableInfo};

/// Every table of the schema, with its key and document column; tables the
/// manifest configures must exist and be trackable.
pub(super) fn table_infos(cx: &mut LoadContext<'_>, m: &WorldToml, text: &str) -> Vec<TableInfo> {
    let (conn, diags) = (&cx.conn, &mut cx.diags);
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .unwrap_or_default();
    for table in m.tables.keys() {
        if !names.contains(table) {
            let line = text
                .find(&format!("[tables.{table}]"))
                .map(|o| line_of(text, o));
            diags.push(
                "world.toml",
                line,
                Some(format!("tables.{table}")),
                format!("table `{table}` is not defined in schema.sql"),
            );
        }
    }
    let mut out = Vec::new();
    for name in names {
        let pk: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk")
            .and_then(|mut s| s.query_map([&name], |r| r.get(0))?.collect())
            .unwrap_or_default();
        let without_rowid: bool = conn
            .query_row(
                "SELECT sql LIKE '%WITHOUT ROWID%' FROM sqlite_schema WHERE name = ?1",
                [&name],
                |r| r.get(0),
            )
            .unwrap_or(false);
        if without_rowid {
            diags.push(
                "schema.sql",
                None,
                Some(format!("table `{name}`")),
                "WITHOUT ROWID tables are not supported; the state diff tracks rows by rowid",
            );
        }
        let options = m.tables.get(&name).cloned().unwrap_or_default();
        if let Some(doc) = &options.document_column {
            let cols = seed::table_columns(conn, &name).unwrap_or_default();
            if !cols.iter().any(|c| &c.name == doc) {
                diags.push(
                    "world.toml",
                    None,
                    Some(format!("tables.{name}")),
                    format!("document_column `{doc}` is not a column of `{name}`"),
                );
            }
        }
        out.push(TableInfo {
            key_column: if pk.len() == 1 {
                pk.into_iter().next()
            } else {
                None
            },
            name,
            document_column: options.document_column,
            labels: Default::default(),
            title: None,
        });
    }
    out
}

/// Decides whether row-by-row reset is safe, and in which table order.
pub(super) fn restore_plan(conn: &Connection, tables: &[TableInfo]) -> RestorePlan {
    let mut plan = RestorePlan::default();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap_or(1) };
    let triggers = count("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'");
    plan.has_sequence =
        count("SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_sequence'") > 0;
    let mut parents: HashMap<String, Vec<String>> = HashMap::new();
    let mut actions = false;
    for t in tables {
        let cols = seed::table_columns(conn, &t.name).unwrap_or_default();
        plan.columns
            .insert(t.name.clone(), cols.into_iter().map(|c| c.name).collect());
        let fks: Vec<(String, String, String)> = conn
            .prepare("SELECT \"table\", on_update, on_delete FROM pragma_foreign_key_list(?1)")
            .and_then(|mut s| {
                s.query_map([&t.name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .unwrap_or_default();
        for (parent, on_update, on_delete) in fks {
            let passive = |a: &str| a == "NO ACTION" || a == "RESTRICT";
            if !passive(&on_update) || !passive(&on_delete) || parent == t.name {
                actions = true;
            }
            parents.entry(t.name.clone()).or_default().push(parent);
        }
    }
    // Topological order, parents first; a cycle disables the fast path.
    let mut order: Vec<String> = Vec::new();
    let mut cyclic = false;
    fn visit(
        t: &str,
        parents: &HashMap<String, Vec<String>>,
        state: &mut HashMap<String, u8>,
        order: &mut Vec<String>,
        cyclic: &mut bool,
    ) {
        match state.get(t) {
            Some(2) => return,
            Some(1) => {
                *cyclic = true;
                return;
            }
            _ => {}
        }
        state.insert(t.to_string(), 1);
        for p in parents.get(t).into_iter().flatten() {
            visit(p, parents, state, order, cyclic);
        }
        state.insert(t.to_string(), 2);
        order.push(t.to_string());
    }
    let mut state = HashMap::new();
    for t in tables {
        visit(&t.name, &parents, &mut state, &mut order, &mut cyclic);
    }
    order.retain(|t| tables.iter().any(|x| &x.name == t));
    plan.order = order;
    plan.fast = triggers == 0 && !actions && !cyclic;
    plan
}
