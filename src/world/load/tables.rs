//! The world's tables as the engine sees them: how rows are keyed in the
//! state diff.

use super::context::LoadContext;
use crate::diagnostics::line_of;
use crate::world::manifest::WorldToml;
use crate::world::{seed, TableInfo};

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
