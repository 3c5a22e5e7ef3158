//! `labels.toml`: the plain words the app shows instead of raw table and
//! column names (`outbox` → "Messages sent", `refunded_cents` → "Refunded
//! so far"), in the review's diff, the records lists and an opened record.
//!
//! A table's labels are written once; a view's columns take them by name,
//! and a view's own section labels only what it computes or renames.
//! Labels are for people only: they change nothing an agent sees or a
//! rubric reads, so the file is left out of the world's hash and relabelling
//! a column keeps recorded episodes standing. A label that names no column
//! would silently never show, so each one is checked.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use rusqlite::Connection;
use toml::Spanned;

use super::context::LoadContext;
use super::files;
use crate::diagnostics::line_of;
use crate::sql::values::quote_ident;
use crate::world::manifest::LabelsToml;
use crate::world::{TableInfo, View};

const FILE: &str = "labels.toml";

/// Reads `labels.toml` (optional) into `tables` and `views`.
pub(super) fn load_labels(
    cx: &mut LoadContext<'_>,
    tables: &mut [TableInfo],
    views: &mut IndexMap<String, View>,
) {
    let Some(text) = files::read_optional_text(cx.root, FILE, &mut cx.diags) else {
        return;
    };
    let Some(parsed) = files::parse_toml::<LabelsToml>(FILE, &text, &mut cx.diags) else {
        return;
    };
    for (name, title) in &parsed.table_titles {
        let line = Some(line_of(&text, title.span().start));
        let subject = Some(format!("table_titles.{name}"));
        let Some(table) = tables.iter_mut().find(|t| &t.name == name) else {
            let known: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
            let problem = format!(
                "`{name}` is not a table of schema.sql (tables: {})",
                known.join(", ")
            );
            cx.diags.push(FILE, line, subject, problem);
            continue;
        };
        let title = title.get_ref().trim();
        if title.is_empty() {
            cx.diags.push(
                FILE,
                line,
                subject,
                "the title is empty; write what the expert calls these records, e.g. \"Messages sent\"",
            );
        } else {
            table.title = Some(title.to_string());
        }
    }
    for (name, given) in &parsed.tables {
        let Some(table) = tables.iter_mut().find(|t| &t.name == name) else {
            let known: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
            let problem = format!(
                "`{name}` is not a table of schema.sql (tables: {})",
                known.join(", ")
            );
            unknown_section(cx, &text, format!("tables.{name}"), given, problem);
            continue;
        };
        table.labels = table_labels(cx, &text, table, given);
    }
    for (name, given) in &parsed.views {
        if !views.contains_key(name) {
            let known: Vec<&str> = views.keys().map(String::as_str).collect();
            let problem = format!(
                "`{name}` is not a view of views.toml (views: {})",
                known.join(", ")
            );
            unknown_section(cx, &text, format!("views.{name}"), given, problem);
        }
    }
    for view in views.values_mut() {
        let given = parsed.views.get(&view.name).cloned().unwrap_or_default();
        view.labels = view_labels(cx, &text, view, tables, &given);
    }
}

/// A `[tables.x]` or `[views.x]` section naming nothing: reported at its
/// first label's line.
fn unknown_section(
    cx: &mut LoadContext<'_>,
    text: &str,
    section: String,
    given: &BTreeMap<String, Spanned<String>>,
    problem: String,
) {
    let line = given.values().next().map(|l| line_of(text, l.span().start));
    cx.diags.push(FILE, line, Some(section), problem);
}

/// A table's labels: each must name a column of the table or, for a table
/// keeping documents, a top-level field of some seeded record; none may be
/// empty.
fn table_labels(
    cx: &mut LoadContext<'_>,
    text: &str,
    table: &TableInfo,
    given: &BTreeMap<String, Spanned<String>>,
) -> BTreeMap<String, String> {
    let columns: Vec<String> = crate::world::seed::table_columns(&cx.conn, &table.name)
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.name)
        .collect();
    let mut out = BTreeMap::new();
    for (name, label) in given {
        let line = Some(line_of(text, label.span().start));
        let subject = Some(format!("tables.{}.{name}", table.name));
        if label.get_ref().trim().is_empty() {
            cx.diags.push(
                FILE,
                line,
                subject,
                "the label is empty; write the column's name as the expert reads it, e.g. \"Refunded so far\"",
            );
        } else if !columns.contains(name)
            && !table
                .document_column
                .as_deref()
                .is_some_and(|doc| is_document_field(&cx.conn, &table.name, doc, name))
        {
            let mut known = format!("columns: {}", columns.join(", "));
            if let Some(doc) = &table.document_column {
                let fields = document_fields(&cx.conn, &table.name, doc);
                known.push_str(&format!("; fields of its records: {}", fields.join(", ")));
            }
            cx.diags.push(
                FILE,
                line,
                subject,
                format!("`{name}` is not a column of `{}` ({known})", table.name),
            );
        } else {
            out.insert(name.clone(), label.get_ref().trim().to_string());
        }
    }
    out
}

/// Whether some seeded record of a document table has the top-level field
/// `name`. The scan stops at the first record that has it (usually the
/// first), so checking a label costs the same however many records the
/// world holds; the whole list is read only to explain a label that names
/// nothing.
fn is_document_field(conn: &Connection, table: &str, doc: &str, name: &str) -> bool {
    let sql = format!(
        "SELECT 1 FROM {t}, json_each({t}.{d}) AS j WHERE json_valid({t}.{d}) AND j.key = ?1 LIMIT 1",
        t = quote_ident(table),
        d = quote_ident(doc)
    );
    conn.prepare(&sql)
        .and_then(|mut s| s.exists([name]))
        .unwrap_or(false)
}

/// The top-level fields of a document table's seeded records, sorted.
fn document_fields(conn: &Connection, table: &str, doc: &str) -> Vec<String> {
    let sql = format!(
        "SELECT DISTINCT j.key FROM {t}, json_each({t}.{d}) AS j WHERE json_valid({t}.{d}) ORDER BY j.key",
        t = quote_ident(table),
        d = quote_ident(doc)
    );
    conn.prepare(&sql)
        .and_then(|mut s| s.query_map([], |r| r.get::<_, String>(0))?.collect())
        .unwrap_or_default()
}

/// A view's labels: its own section first (each must name a column of its
/// listing or of its `record` query); then, for each column left, the label
/// of the table the view is named after (view `tickets`, table `tickets`);
/// else the label the tables give a column of that name, when every table
/// that labels it agrees (`status` labelled differently by two tables gets
/// none, and the app falls back to the name).
fn view_labels(
    cx: &mut LoadContext<'_>,
    text: &str,
    view: &View,
    tables: &[TableInfo],
    given: &BTreeMap<String, Spanned<String>>,
) -> BTreeMap<String, String> {
    let mut columns = view.columns.clone();
    if let Some(record) = &view.record {
        let record_columns = cx
            .conn
            .prepare(record)
            .map(|s| {
                s.column_names()
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        for c in record_columns {
            if !columns.contains(&c) {
                columns.push(c);
            }
        }
    }
    let mut out = BTreeMap::new();
    for (name, label) in given {
        let line = Some(line_of(text, label.span().start));
        let subject = Some(format!("views.{}.{name}", view.name));
        if label.get_ref().trim().is_empty() {
            cx.diags.push(FILE, line, subject, "the label is empty");
        } else if !columns.contains(name) {
            cx.diags.push(
                FILE,
                line,
                subject,
                format!(
                    "`{name}` is not a column of the view `{}` (columns: {})",
                    view.name,
                    columns.join(", ")
                ),
            );
        } else {
            out.insert(name.clone(), label.get_ref().trim().to_string());
        }
    }
    let namesake = tables.iter().find(|t| t.name == view.name);
    for column in &columns {
        if out.contains_key(column) {
            continue;
        }
        if let Some(label) = namesake.and_then(|t| t.labels.get(column)) {
            out.insert(column.clone(), label.clone());
            continue;
        }
        let mut labelled = tables.iter().filter_map(|t| t.labels.get(column));
        if let Some(first) = labelled.next() {
            if labelled.all(|l| l == first) {
                out.insert(column.clone(), first.clone());
            }
        }
    }
    out
}
