//! `[scope]` of `world.toml`: the subject table, how other tables reach
//! it, and the sensitive fields; every name must fit the schema and every
//! field must hold a value in some seeded record.

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::Value;

use super::context::LoadContext;
use crate::diagnostics::line_of;
use crate::world::manifest::WorldToml;
use crate::world::scope::{FieldPath, Reach, Scope};
use crate::world::{seed, TableInfo};

pub(super) fn load_scope(
    cx: &mut LoadContext<'_>,
    m: &WorldToml,
    text: &str,
    tables: &[TableInfo],
) -> Option<Scope> {
    let spanned = m.scope.as_ref()?;
    let line = Some(line_of(text, spanned.span().start));
    let s = spanned.get_ref();
    let before = cx.diags.len();
    let problem = |cx: &mut LoadContext<'_>, msg: String| {
        cx.diags.push("world.toml", line, Some("scope".into()), msg);
    };
    let keyed: Vec<&str> = tables
        .iter()
        .filter(|t| t.key_column.is_some())
        .map(|t| t.name.as_str())
        .collect();
    if !keyed.contains(&s.subject.as_str()) {
        problem(
            cx,
            format!(
                "subject `{}` is not a table with a single-column primary key (tables: {})",
                s.subject,
                keyed.join(", ")
            ),
        );
        return None;
    }
    let mut known = vec![s.subject.clone()];
    let mut reach = Vec::new();
    for (i, r) in s.reach.iter().enumerate() {
        let from = r.from.clone().unwrap_or_else(|| s.subject.clone());
        if !keyed.contains(&r.table.as_str()) {
            problem(
                cx,
                format!(
                    "reach[{i}]: `{}` is not a table with a single-column primary key (tables: {})",
                    r.table,
                    keyed.join(", ")
                ),
            );
            continue;
        }
        if !known.contains(&from) {
            problem(cx, format!("reach[{i}]: `from = \"{from}\"` must be the subject or a table reached earlier ({})", known.join(", ")));
            continue;
        }
        match field(&cx.conn, tables, &r.table, &r.via, false) {
            Ok(via) => {
                known.push(r.table.clone());
                reach.push(Reach {
                    table: r.table.clone(),
                    via,
                    from,
                });
            }
            Err(e) => problem(cx, format!("reach[{i}]: via = \"{}\": {e}", r.via)),
        }
    }
    let mut sensitive = Vec::new();
    for p in &s.sensitive {
        let Some((table, rest)) = p.split_once('.') else {
            problem(
                cx,
                format!(
                    "sensitive: `{p}` must be table.field (e.g. {}.email)",
                    s.subject
                ),
            );
            continue;
        };
        if !known.iter().any(|k| k == table) {
            problem(
                cx,
                format!(
                    "sensitive: `{p}`: table `{table}` is not in the scope ({})",
                    known.join(", ")
                ),
            );
            continue;
        }
        match field(&cx.conn, tables, table, rest, true) {
            Ok(f) => sensitive.push(FieldPath {
                text: p.clone(),
                ..f
            }),
            Err(e) => problem(cx, format!("sensitive: `{p}`: {e}")),
        }
    }
    (cx.diags.len() == before).then(|| Scope {
        subject: s.subject.clone(),
        reach,
        sensitive,
    })
}

/// Resolves `path` (a column, or a path into the table's document column)
/// and, for a document path, checks some seeded record holds a value
/// there (when the seed has records of the table at all).
fn field(
    conn: &Connection,
    tables: &[TableInfo],
    table: &str,
    path: &str,
    wildcards: bool,
) -> Result<FieldPath, String> {
    let info = tables
        .iter()
        .find(|t| t.name == table)
        .ok_or_else(|| format!("there is no table `{table}`"))?;
    let columns: Vec<String> = seed::table_columns(conn, table)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|c| c.name)
        .collect();
    let segments: Vec<String> = path.split('.').map(str::to_string).collect();
    if segments.iter().any(String::is_empty) {
        return Err("a field path has no empty segments".into());
    }
    if !wildcards && segments.iter().any(|s| s == "*") {
        return Err("`*` is for sensitive fields; `via` names one field".into());
    }
    let (column, rest) = if columns.contains(&segments[0]) {
        (segments[0].clone(), segments[1..].to_vec())
    } else if let Some(doc) = &info.document_column {
        (doc.clone(), segments)
    } else {
        return Err(format!(
            "`{table}` has no column `{}` (columns: {})",
            segments[0],
            columns.join(", ")
        ));
    };
    let f = FieldPath {
        text: format!("{table}.{path}"),
        table: table.to_string(),
        column,
        path: rest,
    };
    // A plain column exists (checked above), so only a path into a JSON
    // document can be a typo the seed shows; a table the seed leaves empty
    // (records only tools create) has nothing to check against.
    if f.path.is_empty() {
        return Ok(f);
    }
    // Row by row, stopping at the first record that has the field: a big
    // world's documents are never all held at once.
    let mut any_record = false;
    let mut first_document: Option<Value> = None;
    let found = for_each_value(conn, table, &f.column, |v| {
        any_record = true;
        if first_document.is_none() {
            if let Value::String(s) = &v {
                first_document = serde_json::from_str::<Value>(s).ok();
            }
        }
        !f.values(&v).is_empty()
    })
    .map_err(|e| e.to_string())?;
    if found || !any_record {
        return Ok(f);
    }
    let fields = first_document.and_then(|d| {
        d.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>().join(", "))
    });
    Err(match fields {
        Some(keys) if !f.path.is_empty() => format!(
            "no seeded record of `{table}` has a value at `{path}` (its records have: {keys})"
        ),
        _ => format!("no seeded record of `{table}` has a value in `{path}`"),
    })
}

/// Calls `hit` with each value of one column, as JSON, until it returns
/// true; whether it did.
fn for_each_value(
    conn: &Connection,
    table: &str,
    column: &str,
    mut hit: impl FnMut(Value) -> bool,
) -> rusqlite::Result<bool> {
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut stmt = conn.prepare(&format!("SELECT {} FROM {}", q(column), q(table)))?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let v = match r.get_ref(0)? {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::from(i),
            ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
            ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(_) => Value::Null,
        };
        if hit(v) {
            return Ok(true);
        }
    }
    Ok(false)
}
