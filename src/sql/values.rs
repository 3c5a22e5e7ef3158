//! Conversion between SQLite values and JSON, and binding of named
//! parameters. Arguments are always bound, never spliced into SQL text.

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::Statement;
use serde_json::{Map, Number, Value};

use super::limits::ResultSize;

/// A SQLite value as JSON. Integers stay integers and reals stay floats, so
/// `68` and `68.0` survive a round trip.
pub fn to_json(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Number(i.into()),
        ValueRef::Real(f) => Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::String(hex::encode(b)),
    }
}

/// A JSON value as a SQLite value. Booleans become 1/0 (SQLite has no
/// boolean); arrays and objects become JSON text for `json_each` and friends.
pub fn from_json(value: &Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                SqlValue::Integer(i)
            } else {
                SqlValue::Real(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => SqlValue::Text(s.clone()),
        Value::Array(_) | Value::Object(_) => SqlValue::Text(value.to_string()),
    }
}

/// The `:name` parameters a statement uses, without their sigil.
pub fn parameter_names(stmt: &Statement<'_>) -> Vec<String> {
    (1..=stmt.parameter_count())
        .filter_map(|i| stmt.parameter_name(i))
        .map(|n| n.trim_start_matches([':', '@', '$']).to_string())
        .collect()
}

/// Binds every named parameter of `stmt` from `lookup`; a name `lookup`
/// does not know binds NULL (an omitted optional argument).
pub fn bind_named(
    stmt: &mut Statement<'_>,
    mut lookup: impl FnMut(&str) -> Option<SqlValue>,
) -> rusqlite::Result<()> {
    for i in 1..=stmt.parameter_count() {
        let value = match stmt.parameter_name(i) {
            Some(name) => {
                lookup(name.trim_start_matches([':', '@', '$'])).unwrap_or(SqlValue::Null)
            }
            None => SqlValue::Null,
        };
        stmt.raw_bind_parameter(i, value)?;
    }
    Ok(())
}

/// Runs a bound statement and collects its rows as JSON objects, keyed by
/// column name in column order; fails once they would take more than
/// [`super::limits::MAX_RESULT_BYTES`].
pub fn collect_rows(stmt: &mut Statement<'_>) -> rusqlite::Result<Vec<Map<String, Value>>> {
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    let mut size = ResultSize::default();
    while let Some(row) = rows.next()? {
        let mut obj = Map::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let value = row.get_ref(i)?;
            size.add(value)?;
            obj.insert(name.clone(), to_json(value));
        }
        out.push(obj);
    }
    Ok(out)
}

/// SQL truthiness as guards use it: NULL, 0, 0.0 and "" are false.
/// Takes the JSON form because guards read their row as JSON anyway (for
/// the error template).
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// An identifier quoted for SQL text (table and column names the engine
/// builds statements from; values are always bound, never quoted).
pub fn quote_ident(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// A value as a person reads it: text without quotes, anything else as JSON.
pub fn plain_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
