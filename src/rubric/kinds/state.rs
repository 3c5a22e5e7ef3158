//! `kind = "state"`: the final world, read by a query (`query` + `expect`,
//! here) or by which records changed (`changes`, in [`super::changes`]).

use serde_json::{Map, Value};

use super::changes::ChangesCheck;
use super::compile::CompileCx;
use crate::rubric::evaluation::{Context, Evidence, Outcome};
use crate::rubric::format::CriterionToml;
use crate::rubric::matchers::{plain, records, shorten, Matcher, MATCHER_KEYS};

/// The fields a state criterion may set.
pub(crate) const FIELDS: &[&str] = &["query", "expect", "changes"];

/// Rows shown as evidence; more are counted, not copied.
const EVIDENCE_ROWS: usize = 5;

#[derive(Debug, Clone)]
pub(crate) enum StateCheck {
    /// A read-only query on the final world and what it must return.
    Query {
        sql: String,
        expect: Expect,
    },
    Changes(ChangesCheck),
}

/// What a state query must return.
#[derive(Debug, Clone)]
pub(crate) enum Expect {
    /// The first column of the first row.
    Value(Matcher),
    /// The first column parsed as JSON equals this document exactly (typed:
    /// 68 differs from 68.0; key order is ignored).
    Json(Value),
    /// The first column parsed as JSON has at least these fields with these
    /// values (typed; objects compared field by field, lists whole), so the
    /// fields a rubric leaves out (free text, timestamps) are open.
    JsonIncludes(Value),
    /// The first column is NULL (`true`) or not (`false`).
    Null(bool),
    Rows {
        min: usize,
        max: Option<usize>,
    },
}

impl StateCheck {
    pub fn compile(c: &CriterionToml, cx: &mut CompileCx<'_, '_>) -> Option<StateCheck> {
        match (&c.query, &c.changes) {
            (Some(_), Some(_)) => {
                cx.problem(
                    None,
                    "a state criterion has either `query` + `expect` or `changes`, not both",
                );
                None
            }
            (None, None) => {
                cx.problem(
                    None,
                    "a state criterion needs `query` (with `expect`) or `changes`",
                );
                None
            }
            (Some(q), None) => {
                let line = Some(cx.line(q));
                let sql = q.get_ref().trim().to_string();
                if let Some(p) = first_parameter(&sql) {
                    cx.problem(line, format!("the query uses the parameter `{p}`; rubric queries take no parameters, write values in the SQL"));
                } else if let Err(e) = cx.probe.run(&sql) {
                    cx.problem(
                        line,
                        format!("the query does not run on the seeded world: {e}"),
                    );
                }
                let Some(expect) = &c.expect else {
                    cx.problem(line, "a query needs `expect`, e.g. { equals = 1 }, { rows = 0 }, { number = 79.0, tolerance = 0.005 }");
                    return None;
                };
                match compile_expect(expect) {
                    Ok(e) => Some(StateCheck::Query { sql, expect: e }),
                    Err(e) => {
                        cx.problem(None, format!("expect: {e}"));
                        None
                    }
                }
            }
            (None, Some(ch)) => {
                if c.expect.is_some() {
                    cx.problem(
                        None,
                        "`expect` goes with `query`; `changes` is its own expectation",
                    );
                }
                ChangesCheck::compile(ch, cx).map(StateCheck::Changes)
            }
        }
    }

    pub fn evaluate(&self, cx: &Context<'_>) -> (Outcome, Evidence) {
        match self {
            StateCheck::Query { sql, expect } => eval_query(cx, sql, expect),
            StateCheck::Changes(c) => c.evaluate(cx),
        }
    }
}

fn compile_expect(v: &toml::Value) -> Result<Expect, String> {
    let usage = "expect must be a table: { equals = .. }, { any_of = [..] }, { number = .., tolerance = .. }, { regex = \"..\" }, { contains = \"..\" }, { null = true|false }, { json = \"<JSON document>\" }, { json_includes = \"<JSON object>\" } or { rows = n | { min = .., max = .. } }";
    let t = v.as_table().ok_or(usage)?;
    if t.is_empty() {
        return Err(usage.into());
    }
    let special = ["rows", "json", "json_includes", "null"];
    if let Some(k) = t
        .keys()
        .find(|k| !special.contains(&k.as_str()) && !MATCHER_KEYS.contains(&k.as_str()))
    {
        return Err(format!("unknown key `{k}`; {usage}"));
    }
    if t.len() == 1 {
        if let Some(rows) = t.get("rows") {
            return match rows {
                toml::Value::Integer(n) if *n >= 0 => Ok(Expect::Rows {
                    min: *n as usize,
                    max: Some(*n as usize),
                }),
                toml::Value::Table(r) => {
                    let get = |k: &str| -> Result<Option<usize>, String> {
                        match r.get(k) {
                            None => Ok(None),
                            Some(toml::Value::Integer(n)) if *n >= 0 => Ok(Some(*n as usize)),
                            Some(_) => Err(format!("rows.{k} must be a whole number ≥ 0")),
                        }
                    };
                    if let Some(k) = r.keys().find(|k| *k != "min" && *k != "max") {
                        return Err(format!("rows: unknown key `{k}` (use min and max)"));
                    }
                    let (min, max) = (get("min")?.unwrap_or(0), get("max")?);
                    if max.is_some_and(|m| m < min) {
                        return Err("rows.max is smaller than rows.min".into());
                    }
                    Ok(Expect::Rows { min, max })
                }
                _ => Err("rows must be a whole number ≥ 0 or { min = .., max = .. }".into()),
            };
        }
        if let Some(j) = t.get("json") {
            let text = j
                .as_str()
                .ok_or("json must be the expected document as JSON text")?;
            return serde_json::from_str::<Value>(text)
                .map(Expect::Json)
                .map_err(|e| format!("json is not valid JSON: {e}"));
        }
        if let Some(j) = t.get("json_includes") {
            let text = j
                .as_str()
                .ok_or("json_includes must be the expected fields as a JSON object in text")?;
            return match serde_json::from_str::<Value>(text) {
                Ok(v @ Value::Object(_)) => Ok(Expect::JsonIncludes(v)),
                Ok(_) => Err("json_includes must be a JSON object (the fields to compare)".into()),
                Err(e) => Err(format!("json_includes is not valid JSON: {e}")),
            };
        }
        if let Some(n) = t.get("null") {
            return n
                .as_bool()
                .map(Expect::Null)
                .ok_or_else(|| "null must be true or false".into());
        }
    }
    if t.keys().any(|k| special.contains(&k.as_str())) {
        return Err(format!("combine one expectation per criterion; {usage}"));
    }
    Matcher::parse(v).map(Expect::Value)
}

/// The first `:name`, `@name`, `$name` or `?` outside quotes and comments.
fn first_parameter(sql: &str) -> Option<String> {
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
            }
            b'[' => {
                while i < b.len() && b[i] != b']' {
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'?' => return Some("?".into()),
            p @ (b':' | b'@' | b'$')
                if b.get(i + 1)
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') =>
            {
                let end = (i + 1..b.len())
                    .find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_'))
                    .unwrap_or(b.len());
                return Some(format!("{}{}", p as char, &sql[i + 1..end]));
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn eval_query(cx: &Context<'_>, sql: &str, expect: &Expect) -> (Outcome, Evidence) {
    let rows = match cx.episode.query(sql, &Map::new()) {
        Ok(rows) => rows,
        Err(e) => {
            let msg = format!("the query failed: {e}");
            let mut ev = Evidence::detail(msg.clone());
            ev.query = Some(sql.to_string());
            return (Outcome::Error(msg), ev);
        }
    };
    let first: Option<&Value> = rows.first().and_then(|r| r.values().next());
    let mut ev = Evidence {
        query: Some(sql.to_string()),
        row_count: Some(rows.len()),
        ..Evidence::default()
    };
    let (met, detail) = match expect {
        Expect::Rows { min, max } => {
            let n = rows.len();
            let ok = n >= *min && max.is_none_or(|m| n <= m);
            let want = match max {
                Some(m) if m == min => records(*m),
                Some(m) => format!("{min} to {m} records"),
                None => format!("at least {}", records(*min)),
            };
            ev.expected = Some(want.clone());
            let found = if n == 0 {
                "No record".to_string()
            } else {
                records(n)
            };
            let detail = if ok {
                format!("{found} found, as expected")
            } else {
                format!("{found} found; there should be {want}")
            };
            (ok, detail)
        }
        Expect::Null(want_null) => {
            let is_null = first.is_none_or(Value::is_null);
            ev.value = first.cloned();
            let want = if *want_null { "empty" } else { "filled in" };
            ev.expected = Some(want.into());
            let got = match first {
                None => "No record was found".to_string(),
                Some(Value::Null) => "It is empty".to_string(),
                Some(v) => format!("It is {}", plain(v)),
            };
            let ok = is_null == *want_null;
            let detail = if ok {
                format!("{got}, as expected")
            } else {
                format!("{got}; it should be {want}")
            };
            (ok, detail)
        }
        Expect::Value(m) => {
            let ok = first.is_some() && m.matches(first);
            ev.value = first.cloned();
            ev.expected = Some(m.describe());
            let detail = match first {
                None => format!("No record was found; it should be {}", m.describe()),
                Some(v) if ok => format!("It is {}, as expected", plain(v)),
                Some(v) => format!("It is {}; it should be {}", plain(v), m.describe()),
            };
            (ok, detail)
        }
        Expect::JsonIncludes(want) => match first.map(as_document) {
            None => (
                false,
                "No record was found; the record should be there".to_string(),
            ),
            Some(got) => match missing_part(&got, want, "") {
                None => (true, "The record has the expected values".to_string()),
                Some(diff) => {
                    ev.value = Some(got);
                    ev.expected = Some(shorten(&want.to_string(), 2000));
                    (
                        false,
                        format!("The record differs from what is expected: {diff}"),
                    )
                }
            },
        },
        Expect::Json(want) => match first.map(as_document) {
            None => (
                false,
                "No record was found; the record should be there".to_string(),
            ),
            Some(got) if &got == want => (true, "The record is exactly as expected".to_string()),
            Some(got) => {
                let diff = first_difference(&got, want, "");
                ev.value = Some(got);
                ev.expected = Some(shorten(&want.to_string(), 2000));
                (
                    false,
                    format!("The record differs from what is expected: {diff}"),
                )
            }
        },
    };
    if !met || !matches!(expect, Expect::Json(_) | Expect::JsonIncludes(_)) {
        ev.rows = Some(
            rows.iter()
                .take(EVIDENCE_ROWS)
                .map(|r| Value::Object(r.clone()))
                .collect(),
        );
    }
    ev.detail = detail;
    (Outcome::Met(met), ev)
}

/// A column value as a JSON document: text holding JSON is parsed.
fn as_document(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str::<Value>(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

/// Where `got` lacks a field of `want` or holds another value there;
/// `None` when it has them all. Paths are in words (see [`field`]).
fn missing_part(got: &Value, want: &Value, path: &str) -> Option<String> {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => w.iter().find_map(|(k, wv)| match g.get(k) {
            None => Some(format!(
                "{} is missing; it should be {}",
                field(path, k),
                plain(wv)
            )),
            Some(gv) => missing_part(gv, wv, &field(path, k)),
        }),
        _ if got == want => None,
        _ => Some(first_difference(got, want, path)),
    }
}

/// Where two JSON documents first differ, as a path and both values.
fn first_difference(got: &Value, want: &Value, path: &str) -> String {
    let at = if path.is_empty() { "the record" } else { path };
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for (k, wv) in w {
                match g.get(k) {
                    None => {
                        return format!("{} is missing; it should be {}", field(path, k), plain(wv))
                    }
                    Some(gv) if gv != wv => return first_difference(gv, wv, &field(path, k)),
                    _ => {}
                }
            }
            if let Some(k) = g.keys().find(|k| !w.contains_key(*k)) {
                return format!("{} is there but should not be", field(path, k));
            }
            format!("{at} differs")
        }
        (Value::Array(g), Value::Array(w)) => {
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                if gv != wv {
                    return first_difference(gv, wv, &format!("{at} › item {}", i + 1));
                }
            }
            format!("{at} has {} item(s); it should have {}", g.len(), w.len())
        }
        _ => format!("{at} is {}; it should be {}", plain(got), plain(want)),
    }
}

/// A document field's path in words: `payment_history` inside `items`
/// item 2 reads "items › item 2 › payment history".
fn field(path: &str, key: &str) -> String {
    let key = key.replace('_', " ");
    if path.is_empty() {
        key
    } else {
        format!("{path} › {key}")
    }
}

#[cfg(test)]
mod tests {
    use super::{first_difference, first_parameter, missing_part};
    use serde_json::json;

    #[test]
    fn differences_are_said_as_fields_and_values_not_json_paths() {
        let got = json!({"status": "pending", "items": [{"price": 10}, {"price": 12.5}]});
        assert_eq!(
            missing_part(&got, &json!({"status": "cancelled"}), "").as_deref(),
            Some("status is “pending”; it should be “cancelled”")
        );
        assert_eq!(
            missing_part(&got, &json!({"cancel_reason": "ordered by mistake"}), "").as_deref(),
            Some("cancel reason is missing; it should be “ordered by mistake”")
        );
        assert_eq!(missing_part(&got, &json!({"status": "pending"}), ""), None);
        let want = json!({"status": "pending", "items": [{"price": 10}, {"price": 13}]});
        assert_eq!(
            first_difference(&got, &want, ""),
            "items › item 2 › price is 12.5; it should be 13"
        );
        assert_eq!(
            first_difference(&json!([1]), &json!([1, 2]), ""),
            "the record has 1 item(s); it should have 2"
        );
        assert_eq!(
            first_difference(&json!({"a": null, "b": true}), &json!({"a": null}), ""),
            "b is there but should not be"
        );
    }

    #[test]
    fn finds_parameters_outside_quotes_and_comments() {
        assert_eq!(
            first_parameter("SELECT 1 FROM t WHERE a = :x"),
            Some(":x".into())
        );
        assert_eq!(first_parameter("SELECT ':x', \"@y\" -- $z\n FROM t"), None);
        assert_eq!(
            first_parameter("SELECT * FROM t WHERE a = ?"),
            Some("?".into())
        );
        assert_eq!(first_parameter("SELECT '10:30' /* :no */"), None);
    }
}
