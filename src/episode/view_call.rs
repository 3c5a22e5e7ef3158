//! Views as read tools: listing, filtering, sorting, paging, and opening one
//! record. Every look at the world is a recorded step, so an agent trained on
//! the trajectory sees how the expert found what they knew.

use serde_json::{json, Map, Value};

use super::json_columns;
use super::Episode;
use crate::observation::{Observation, ObservationErrorCode};
use crate::python;
use crate::sql::sandbox::SandboxMode;
use crate::sql::values::{collect_rows, from_json};
use crate::sql::values::{plain_text, quote_ident};
use crate::world::{sql_message, View};

const DEFAULT_LIMIT: i64 = 50;
const MAX_LIMIT: i64 = 500;

pub(super) fn run(ep: &mut Episode, view: &View, args: &Map<String, Value>) -> Observation {
    let request = match Request::parse(view, args) {
        Ok(r) => r,
        Err(m) => {
            return Observation::failure(
                ObservationErrorCode::InvalidArguments,
                format!("invalid arguments for {}: {m}", view.tool_name()),
            )
        }
    };
    let sandbox = ep.sandbox.clone();
    sandbox.with(SandboxMode::WorldRead, || match &request.key {
        Some(key) => open_record(ep, view, key),
        None => list(ep, view, &request),
    })
}

struct Request {
    filter: Vec<(String, Value)>,
    search: Option<String>,
    sort: Option<String>,
    descending: bool,
    limit: i64,
    offset: i64,
    key: Option<Value>,
}

impl Request {
    fn parse(view: &View, args: &Map<String, Value>) -> Result<Request, String> {
        let column = |c: &str, what: &str| -> Result<String, String> {
            if view.columns.iter().any(|x| x == c) {
                Ok(c.to_string())
            } else {
                Err(format!(
                    "{what}: `{c}` is not a column of {} (columns: {})",
                    view.title,
                    view.columns.join(", ")
                ))
            }
        };
        let mut r = Request {
            filter: Vec::new(),
            search: None,
            sort: None,
            descending: false,
            limit: DEFAULT_LIMIT,
            offset: 0,
            key: None,
        };
        for (name, value) in args {
            match name.as_str() {
                "filter" => {
                    let obj = value
                        .as_object()
                        .ok_or("filter: expected an object of column: value")?;
                    for (c, v) in obj {
                        if v.is_array() || v.is_object() {
                            return Err(format!("filter.{c}: expected a single value"));
                        }
                        r.filter.push((column(c, "filter")?, v.clone()));
                    }
                }
                "search" => {
                    r.search = Some(value.as_str().ok_or("search: expected text")?.to_string())
                }
                "sort" => {
                    r.sort = Some(column(
                        value.as_str().ok_or("sort: expected a column name")?,
                        "sort",
                    )?)
                }
                "descending" => {
                    r.descending = value
                        .as_bool()
                        .ok_or("descending: expected true or false")?
                }
                "limit" => {
                    r.limit = value
                        .as_i64()
                        .filter(|n| (1..=MAX_LIMIT).contains(n))
                        .ok_or(format!(
                            "limit: expected a whole number from 1 to {MAX_LIMIT}"
                        ))?
                }
                "offset" => {
                    r.offset = value
                        .as_i64()
                        .filter(|n| *n >= 0)
                        .ok_or("offset: expected a whole number, 0 or more")?
                }
                "key" if view.key.is_some() => {
                    if value.is_array() || value.is_object() || value.is_null() {
                        return Err("key: expected a single value".into());
                    }
                    r.key = Some(value.clone())
                }
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        Ok(r)
    }
}

fn list(ep: &Episode, view: &View, r: &Request) -> Observation {
    let mut conditions = Vec::new();
    let mut params: Vec<rusqlite::types::Value> = Vec::new();
    for (c, v) in &r.filter {
        conditions.push(format!("{} IS ?", quote_ident(c)));
        params.push(from_json(v));
    }
    if let Some(s) = r.search.as_ref().filter(|s| !s.is_empty()) {
        let escaped = s
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let any: Vec<String> = view
            .columns
            .iter()
            .map(|c| format!("CAST({} AS TEXT) LIKE ? ESCAPE '\\'", quote_ident(c)))
            .collect();
        conditions.push(format!("({})", any.join(" OR ")));
        for _ in &view.columns {
            params.push(rusqlite::types::Value::Text(format!("%{escaped}%")));
        }
    }
    let where_clause = if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    };
    let order = match &r.sort {
        Some(c) => format!(
            " ORDER BY {} {}",
            quote_ident(c),
            if r.descending { "DESC" } else { "ASC" }
        ),
        None => String::new(),
    };
    let base = format!("SELECT * FROM ({}) AS v{where_clause}", view.query);
    let page_sql = format!("{base}{order} LIMIT {} OFFSET {}", r.limit, r.offset);
    let count_sql = format!("SELECT count(*) FROM ({base})");
    let conn = ep.conn();
    let outcome = (|| -> rusqlite::Result<(Vec<Map<String, Value>>, i64)> {
        let mut stmt = conn.prepare_cached(&page_sql)?;
        for (i, p) in params.iter().enumerate() {
            stmt.raw_bind_parameter(i + 1, p)?;
        }
        let mut rows = collect_rows(&mut stmt)?;
        json_columns::decode(&mut rows, &view.json_columns).map_err(json_error)?;
        let total = conn
            .prepare_cached(&count_sql)?
            .query_row(rusqlite::params_from_iter(params.iter()), |row| row.get(0))?;
        Ok((rows, total))
    })();
    match outcome {
        Ok((rows, total)) => {
            let content = json!({
                "columns": view.columns,
                "rows": rows,
                "total": total,
            });
            let text = python::json::dumps(&content);
            Observation::success(content, text)
        }
        Err(e) => Observation::failure(ObservationErrorCode::ToolFailed, sql_message(&e)),
    }
}

fn open_record(ep: &Episode, view: &View, key: &Value) -> Observation {
    let conn = ep.conn();
    let key_col = view.key.clone().unwrap_or_default();
    let (sql, bind_key) = match &view.record {
        Some(sql) => (sql.clone(), true),
        None => (
            format!(
                "SELECT * FROM ({}) AS v WHERE {} IS :key",
                view.query,
                quote_ident(&key_col)
            ),
            true,
        ),
    };
    let outcome = (|| -> rusqlite::Result<Option<Map<String, Value>>> {
        let mut stmt = conn.prepare_cached(&sql)?;
        if bind_key {
            crate::sql::values::bind_named(&mut stmt, |_| Some(from_json(key)))?;
        }
        let mut rows = collect_rows(&mut stmt)?;
        json_columns::decode(&mut rows, &view.json_columns).map_err(json_error)?;
        Ok(rows.into_iter().next())
    })();
    match outcome {
        Ok(Some(record)) => {
            let content = Value::Object(record);
            let text = python::json::dumps(&content);
            Observation::success(content, text)
        }
        Ok(None) => Observation::failure(
            ObservationErrorCode::GuardFailed,
            format!(
                "there is no record with {key_col} {} in {}",
                plain_text(key),
                view.title
            ),
        ),
        Err(e) => Observation::failure(ObservationErrorCode::ToolFailed, sql_message(&e)),
    }
}

/// A declared JSON column that holds something else fails the call like
/// any SQL error, with the column named.
fn json_error(message: String) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(message.into())
}
