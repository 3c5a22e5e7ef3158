//! Each criterion as one plain sentence, for the people who decide what
//! "done correctly" means (a lawyer, an accountant, a support lead) and
//! who should never have to read SQL or TOML to know what a rubric asks.
//!
//! The author's `description` wins when there is one. Otherwise the
//! sentence is built from the criterion's kind and fields, in the world's
//! own words: tool titles ("Issue refund"), record names from table names
//! ("Invoice INV-24073"), money columns (`amount_cents = 7900`) as amounts
//! ("$79.00"). Queries the builder cannot read fall back to saying that a
//! custom check runs on the records, never to the SQL itself.
//!
//! Rules (negative points) read as rules: "“Apply credit” is never used",
//! "Nothing about another customer is disclosed".

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::derive::singular;
use super::numbers;
use super::prose::{and_list, capitalize, or_list};
use crate::world::World;

/// The sentence for a criterion as written (`spec`: its fields, as JSON).
pub fn sentence(world: &World, spec: &Value) -> String {
    let empty = Map::new();
    let c = spec.as_object().unwrap_or(&empty);
    let text = |k: &str| c.get(k).and_then(Value::as_str).map(str::trim);
    if let Some(d) = text("description").filter(|d| !d.is_empty()) {
        return d.to_string();
    }
    generated(world, c)
}

/// The sentence built from the kind and fields alone (the description is
/// ignored): what the app shows for a fresh draft.
pub fn generated(world: &World, c: &Map<String, Value>) -> String {
    let negative = points(c) < 0.0;
    let s = match c.get("kind").and_then(Value::as_str).unwrap_or_default() {
        "state" => state(world, c, negative),
        "action" => action(world, c, negative),
        "message" => message(world, c, negative),
        "scope" => scope(world, c),
        "judged" => judged(c, negative),
        "" => "A criterion without a kind".to_string(),
        other => format!("A criterion of an unknown kind ({other})"),
    };
    capitalize(&s)
}

/// Whether [`generated`] reads this criterion's fields into words: false
/// for a state query the builder cannot read ("a custom check on the
/// records"), where a description written with the query says more.
pub fn reads_fields(world: &World, c: &Map<String, Value>) -> bool {
    c.get("kind").and_then(Value::as_str) != Some("state")
        || c.contains_key("changes")
        || parse_query(
            world,
            c.get("query").and_then(Value::as_str).unwrap_or_default(),
        )
        .is_some()
}

fn points(c: &Map<String, Value>) -> f64 {
    c.get("points").and_then(Value::as_f64).unwrap_or(1.0)
}

// ---- state ----

fn state(world: &World, c: &Map<String, Value>, negative: bool) -> String {
    if let Some(changes) = c.get("changes") {
        return changes_sentence(changes);
    }
    let query = c.get("query").and_then(Value::as_str).unwrap_or_default();
    let expect = c.get("expect").unwrap_or(&Value::Null);
    let body = match parse_query(world, query) {
        Some(q) => query_sentence(&q, expect),
        None => format!(
            "a custom check on the records {}",
            expect_phrase(None, expect)
        ),
    };
    if negative {
        format!("must not happen: {body}")
    } else {
        body
    }
}

fn changes_sentence(changes: &Value) -> String {
    if changes.get("none").and_then(Value::as_bool) == Some(true) {
        return "nothing in the records changes".into();
    }
    let only: Vec<String> = changes
        .get("only")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            let table = e.get("table").and_then(Value::as_str).unwrap_or("?");
            match e.get("key").and_then(Value::as_str) {
                Some(k) => format!("{} {k}", singular(table).to_lowercase()),
                None => format!("any {}", words(table)),
            }
        })
        .collect();
    if only.is_empty() {
        "nothing in the records changes".into()
    } else {
        format!("no record changes except {}", and_list(&only))
    }
}

/// A query of the shape the builder writes: one table, `AND`ed equalities.
#[derive(Debug)]
struct SimpleQuery {
    table: String,
    select: Select,
    /// `(column, value)`; the record's own key is taken out into `key`.
    conditions: Vec<(String, Value)>,
    key: Option<String>,
    key_column: Option<String>,
}

#[derive(Debug)]
enum Select {
    Count,
    Exists,
    Column(String),
    Record,
}

fn parse_query(world: &World, sql: &str) -> Option<SimpleQuery> {
    static SHAPE: OnceLock<Regex> = OnceLock::new();
    static COND: OnceLock<Regex> = OnceLock::new();
    let shape = SHAPE.get_or_init(|| {
        Regex::new(r#"(?is)^\s*SELECT\s+(.+?)\s+FROM\s+"?([A-Za-z_][A-Za-z0-9_]*)"?\s+WHERE\s+(.+?)\s*;?\s*$"#)
            .expect("a valid regex")
    });
    let cond = COND.get_or_init(|| {
        Regex::new(r#"(?is)^\s*"?([A-Za-z_][A-Za-z0-9_]*)"?\s*=\s*('(?:[^']|'')*'|-?[0-9]+(?:\.[0-9]+)?)\s*$"#)
            .expect("a valid regex")
    });
    let caps = shape.captures(sql)?;
    let table = caps[2].to_string();
    let info = world.table(&table)?;
    let sel = caps[1].trim();
    let select = if sel.eq_ignore_ascii_case("count(*)") {
        Select::Count
    } else if sel == "1" {
        Select::Exists
    } else if sel.to_ascii_lowercase().starts_with("json_object(")
        || info.document_column.as_deref() == Some(sel.trim_matches('"'))
    {
        Select::Record
    } else if sel
        .trim_matches('"')
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
    {
        Select::Column(sel.trim_matches('"').to_string())
    } else {
        return None;
    };
    let mut conditions = Vec::new();
    let mut key = None;
    for part in split_and(&caps[3]) {
        let c = cond.captures(&part)?;
        let column = c[1].to_string();
        let raw = &c[2];
        let value = match raw.strip_prefix('\'') {
            Some(s) => Value::String(s[..s.len() - 1].replace("''", "'")),
            None => serde_json::from_str(raw).ok()?,
        };
        let is_key = info.key_column.as_deref() == Some(column.as_str())
            || (info.key_column.is_none() && column == "rowid");
        match (&value, is_key) {
            (Value::String(s), true) if key.is_none() => key = Some(s.clone()),
            (Value::Number(n), true) if key.is_none() => key = Some(n.to_string()),
            _ => conditions.push((column, value)),
        }
    }
    Some(SimpleQuery {
        table,
        select,
        conditions,
        key,
        key_column: info.key_column.clone(),
    })
}

/// `a = 1 AND b = 'x and y'`, split on `AND` outside quotes.
fn split_and(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut rest = s;
    while let Some(ch) = rest.chars().next() {
        if ch == '\'' {
            quoted = !quoted;
        }
        if !quoted && rest.len() >= 5 && rest[..5].eq_ignore_ascii_case(" and ") {
            out.push(String::new());
            rest = &rest[5..];
            continue;
        }
        if let Some(last) = out.last_mut() {
            last.push(ch);
        }
        rest = &rest[ch.len_utf8()..];
    }
    out
}

fn query_sentence(q: &SimpleQuery, expect: &Value) -> String {
    let record = singular(&q.table);
    let noun = match &q.key {
        Some(k) => format!("{record} {k}"),
        None => format!("a {} record", record.to_lowercase()),
    };
    let with = if q.conditions.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = q
            .conditions
            .iter()
            .map(|(c, v)| field_value(c, v))
            .collect();
        format!(" with {}", and_list(&parts))
    };
    match &q.select {
        Select::Count => {
            let n = expect.get("equals").and_then(Value::as_u64);
            let what = format!("{}{with}", words(&q.table));
            match n {
                Some(0) => format!("no {what} exist"),
                Some(1) => format!("exactly one {}{with} exists", record.to_lowercase()),
                Some(n) => format!("exactly {} {what} exist", count_word(n)),
                None => format!("the number of {what} {}", expect_phrase(None, expect)),
            }
        }
        Select::Exists | Select::Record | Select::Column(_) if expect.get("rows").is_some() => {
            match rows(expect) {
                Some((0, Some(0))) => format!("{noun}{with} does not exist (or no longer exists)"),
                Some((1, Some(1))) => format!("{noun}{with} exists"),
                _ => format!("{noun}{with} exists {}", expect_phrase(None, expect)),
            }
        }
        Select::Record => {
            let fields = expect
                .get("json_includes")
                .or_else(|| expect.get("json"))
                .and_then(|d| match d {
                    Value::String(s) => serde_json::from_str::<Value>(s).ok(),
                    other => Some(other.clone()),
                });
            match fields.as_ref().and_then(Value::as_object) {
                Some(m) if !m.is_empty() => {
                    // The record's own key and empty fields say nothing new.
                    let parts: Vec<String> = m
                        .iter()
                        .filter(|(c, v)| {
                            !v.is_null() && q.key_column.as_deref() != Some(c.as_str())
                        })
                        .map(|(c, v)| field_value(c, v))
                        .collect();
                    format!("{noun}{with} ends up with {}", and_list(&parts))
                }
                _ => format!("{noun}{with} {}", expect_phrase(None, expect)),
            }
        }
        Select::Exists => format!("{noun}{with} {}", expect_phrase(None, expect)),
        Select::Column(col) => match expect.get("equals") {
            Some(v) if expect.as_object().is_some_and(|o| o.len() == 1) => {
                format!("{noun}{with} ends up with {}", field_value(col, v))
            }
            _ => format!(
                "{noun}{with}: its {} {}",
                field_name(col),
                expect_phrase(Some(col), expect)
            ),
        },
    }
}

fn rows(expect: &Value) -> Option<(u64, Option<u64>)> {
    match expect.get("rows")? {
        Value::Number(n) => n.as_u64().map(|n| (n, Some(n))),
        Value::Object(o) => Some((
            o.get("min").and_then(Value::as_u64).unwrap_or(0),
            o.get("max").and_then(Value::as_u64),
        )),
        _ => None,
    }
}

/// What `expect` asks of a value, as the end of a sentence.
fn expect_phrase(col: Option<&str>, expect: &Value) -> String {
    let show = |v: &Value| match col {
        Some(c) => value_of(c, v),
        None => shown(v),
    };
    let Some(o) = expect.as_object() else {
        return "comes out as expected".into();
    };
    if let Some(v) = o.get("equals") {
        return format!("is {}", show(v));
    }
    if let Some(list) = o.get("any_of").and_then(Value::as_array) {
        let items: Vec<String> = list.iter().map(show).collect();
        return format!("is one of {}", or_list(&items));
    }
    if let Some(n) = o.get("number") {
        return match o.get("tolerance").and_then(Value::as_f64) {
            Some(t) if t > 0.0 => format!("is {} (give or take {t})", show(n)),
            _ => format!("is {}", show(n)),
        };
    }
    if let Some(p) = o.get("contains").and_then(Value::as_str) {
        return format!("mentions “{p}”");
    }
    if let Some(p) = o.get("regex").and_then(Value::as_str) {
        return format!("reads like the pattern {p}");
    }
    if let Some(b) = o.get("null").and_then(Value::as_bool) {
        return if b { "is empty" } else { "is filled in" }.into();
    }
    if o.contains_key("json") || o.contains_key("json_includes") {
        return "holds the expected details".into();
    }
    if let Some((min, max)) = rows(expect) {
        return match max {
            Some(max) if max == min => format!("({} record(s))", count_word(min)),
            Some(max) => format!("({min} to {max} records)"),
            None => format!("(at least {min} record(s))"),
        };
    }
    "comes out as expected".into()
}

/// `amount_cents`, 7900 → `amount $79.00`; `status`, "refunded" → `status “refunded”`.
fn field_value(col: &str, v: &Value) -> String {
    format!("{} {}", field_name(col), value_of(col, v))
}

fn field_name(col: &str) -> String {
    words(col.strip_suffix("_cents").unwrap_or(col))
}

fn value_of(col: &str, v: &Value) -> String {
    match (col.ends_with("_cents"), v.as_i64()) {
        (true, Some(cents)) => money(cents as f64 / 100.0),
        _ => shown(v),
    }
}

// ---- action ----

fn action(world: &World, c: &Map<String, Value>, negative: bool) -> String {
    let tool = c.get("tool").and_then(Value::as_str).unwrap_or_default();
    let name = tool_name(world, tool);
    let args = c
        .get("args")
        .and_then(Value::as_object)
        .map(|a| args_phrase(world, tool, a))
        .unwrap_or_default();
    let never = negative || c.get("called").and_then(Value::as_bool) == Some(false);
    let mut s = if never {
        format!("{name} is never used{args}")
    } else {
        let times = match count(c.get("count")) {
            (1, Some(1)) => " exactly once".to_string(),
            (n, Some(m)) if n == m => format!(" exactly {} times", count_word(n)),
            (0 | 1, None) => String::new(),
            (n, None) => format!(" at least {} times", count_word(n)),
            (0, Some(m)) => format!(" at most {} times", count_word(m)),
            (n, Some(m)) => format!(" {n} to {m} times"),
        };
        format!("{name} is used{times}{args}")
    };
    for (field, word) in [("after", "after"), ("before", "but not after")] {
        if let Some(p) = c.get(field).and_then(Value::as_object) {
            s.push_str(&format!(", {word} {}", pattern_phrase(world, p)));
        }
    }
    let include_failed = c.get("include_failed").and_then(Value::as_bool);
    if never && include_failed != Some(false) {
        s.push_str(" (trying counts, even if the system refuses it)");
    } else if !never && include_failed == Some(true) {
        s.push_str(" (a call the system refuses counts too)");
    }
    s
}

fn count(v: Option<&Value>) -> (u64, Option<u64>) {
    match v {
        Some(Value::Number(n)) => n.as_u64().map_or((1, None), |n| (n, Some(n))),
        Some(Value::Object(o)) => (
            o.get("min").and_then(Value::as_u64).unwrap_or(0),
            o.get("max").and_then(Value::as_u64),
        ),
        _ => (1, None),
    }
}

fn tool_name(world: &World, tool: &str) -> String {
    let title = world
        .tools
        .get(tool)
        .map(|t| t.title.trim())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| capitalize(&words(tool)));
    format!("“{title}”")
}

fn args_phrase(world: &World, tool: &str, args: &Map<String, Value>) -> String {
    let schema = world.tools.get(tool).map(|t| &t.parameters);
    let parts: Vec<String> = args
        .iter()
        .map(|(name, m)| {
            let label = schema
                .and_then(|s| s.get("properties"))
                .and_then(|p| p.get(name))
                .and_then(|p| p.get("title"))
                .and_then(Value::as_str)
                .map(|t| t.to_lowercase())
                .unwrap_or_else(|| words(name));
            format!("{label} {}", matcher_phrase(m))
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" with {}", and_list(&parts))
    }
}

/// An argument matcher in words: a plain value, or `{ any_of = .. }` etc.
fn matcher_phrase(m: &Value) -> String {
    let Some(o) = m.as_object().filter(|o| {
        !o.is_empty()
            && o.keys()
                .all(|k| super::matchers::MATCHER_KEYS.contains(&k.as_str()))
    }) else {
        return shown(m);
    };
    if let Some(v) = o.get("equals") {
        return shown(v);
    }
    if let Some(list) = o.get("any_of").and_then(Value::as_array) {
        let items: Vec<String> = list.iter().map(shown).collect();
        return format!("one of {}", or_list(&items));
    }
    if let Some(n) = o.get("number") {
        return match o.get("tolerance").and_then(Value::as_f64) {
            Some(t) if t > 0.0 => format!("{} (give or take {t})", shown(n)),
            _ => shown(n),
        };
    }
    if let Some(p) = o.get("contains").and_then(Value::as_str) {
        return format!("mentioning “{p}”");
    }
    if let Some(p) = o.get("regex").and_then(Value::as_str) {
        return format!("like the pattern {p}");
    }
    if o.get("absent").and_then(Value::as_bool) == Some(true) {
        return "left empty".into();
    }
    if o.get("present").and_then(Value::as_bool) == Some(true) {
        return "filled in".into();
    }
    shown(m)
}

/// `after = { tool = .. }` or `{ message = .. }`.
fn pattern_phrase(world: &World, p: &Map<String, Value>) -> String {
    if let Some(m) = p.get("message") {
        let what = m
            .as_object()
            .and_then(|o| o.iter().next())
            .map(|(k, v)| match k.as_str() {
                "number" => number_shown(v),
                "date" => v.as_str().map(date_shown).unwrap_or_else(|| shown(v)),
                _ => shown(v),
            })
            .unwrap_or_else(|| shown(m));
        return format!("telling the customer {what}");
    }
    let tool = p.get("tool").and_then(Value::as_str).unwrap_or_default();
    let args = p
        .get("args")
        .and_then(Value::as_object)
        .map(|a| args_phrase(world, tool, a))
        .unwrap_or_default();
    format!("{}{args}", tool_name(world, tool))
}

// ---- message ----

fn message(world: &World, c: &Map<String, Value>, negative: bool) -> String {
    let (what, kind) = if let Some(n) = c.get("number") {
        let kind = if is_money(n) { "amount" } else { "number" };
        (number_shown(n), kind)
    } else if let Some(d) = c.get("date") {
        let text = d.as_str().map(date_shown).unwrap_or_else(|| shown(d));
        (format!("the date {text}"), "date")
    } else if let Some(p) = c.get("contains").and_then(Value::as_str) {
        let id = p.chars().any(|ch| ch.is_ascii_digit()) && p.chars().any(char::is_alphabetic);
        (
            format!("“{p}”"),
            if id { "reference of its kind" } else { "" },
        )
    } else if let Some(r) = c.get("regex").and_then(Value::as_str) {
        if r.trim() == "\\S" {
            return with_scope(c, "the customer gets a reply".into());
        }
        (format!("something like the pattern {r}"), "")
    } else {
        return "the customer is told something (nothing to look for is set)".into();
    };
    let s = if negative {
        format!("the customer is never told {what}")
    } else {
        let commit = c.get("commit").and_then(Value::as_bool) != Some(false);
        let mut s = format!("the customer is told {what}");
        if commit && !kind.is_empty() {
            s.push_str(&format!(", and no other {kind}"));
        }
        if let Some(list) = c
            .get("allow")
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty())
        {
            let items: Vec<String> = list.iter().map(number_or_shown).collect();
            s.push_str(&format!(" (besides {})", and_list(&items)));
        }
        s
    };
    let s = with_scope(c, s);
    match c.get("after").and_then(Value::as_object) {
        Some(p) => format!("{s}, after {}", pattern_phrase(world, p)),
        None => s,
    }
}

fn with_scope(c: &Map<String, Value>, s: String) -> String {
    if c.get("within").and_then(Value::as_str) == Some("last") {
        format!("in the last message, {s}")
    } else {
        s
    }
}

fn is_money(n: &Value) -> bool {
    match n {
        Value::Number(x) => x.is_f64(),
        Value::String(s) => {
            s.contains('$') || s.rsplit_once('.').is_some_and(|(_, d)| d.len() == 2)
        }
        _ => false,
    }
}

fn number_shown(n: &Value) -> String {
    let value = match n {
        Value::String(s) => numbers::parse_number(s),
        other => other.as_f64(),
    };
    match value {
        Some(v) if is_money(n) => money(v),
        Some(v) => thousands(v),
        None => shown(n),
    }
}

fn number_or_shown(v: &Value) -> String {
    match v {
        Value::Number(_) => number_shown(v),
        Value::String(s) if s.len() == 10 && s.as_bytes().get(4) == Some(&b'-') => date_shown(s),
        other => shown(other),
    }
}

fn date_shown(s: &str) -> String {
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map(|d| d.format("%B %-d, %Y").to_string())
        .unwrap_or_else(|_| s.to_string())
}

// ---- scope and judged ----

fn scope(world: &World, c: &Map<String, Value>) -> String {
    let subject = world
        .scope
        .as_ref()
        .map(|s| singular(&s.subject).to_lowercase())
        .unwrap_or_else(|| "subject".into());
    let list = |k: &str| -> Vec<String> {
        c.get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(words)
            .collect()
    };
    match c.get("check").and_then(Value::as_str) {
        Some("disclosure") => {
            let paths = list("paths");
            let mut s = format!("nothing about another {subject} is disclosed");
            if !paths.is_empty() {
                s.push_str(&format!(" ({})", and_list(&paths)));
            }
            s
        }
        _ => {
            let tables = list("tables");
            let mut s = format!(
                "no record of another {subject} is changed, or even tried (a refusal does not excuse it)"
            );
            if !tables.is_empty() {
                s.push_str(&format!("; checked: {}", and_list(&tables)));
            }
            s
        }
    }
}

fn judged(c: &Map<String, Value>, negative: bool) -> String {
    let guidance = c
        .get("guidance")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|g| !g.is_empty());
    match (guidance, negative) {
        (Some(g), false) => format!("a person judges: {g}"),
        (Some(g), true) => format!("a person judges that this does not happen: {g}"),
        (None, _) => "a person judges the run (no question written yet)".into(),
    }
}

// ---- words ----

/// `invoice_id` → `invoice ID`, `refunded_cents` → `refunded cents`.
fn words(name: &str) -> String {
    name.split(['_', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            if w.eq_ignore_ascii_case("id") {
                "ID".to_string()
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("“{s}”"),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::Null => "empty".into(),
        Value::Number(n) => n.as_f64().map(thousands).unwrap_or_else(|| n.to_string()),
        other => super::matchers::compact(other),
    }
}

fn money(v: f64) -> String {
    let cents = (v * 100.0).round() as i64;
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.abs();
    format!("{sign}${}.{:02}", group(cents / 100), cents % 100)
}

fn thousands(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let sign = if v < 0.0 { "-" } else { "" };
        format!("{sign}{}", group(v.abs() as i64))
    } else {
        v.to_string()
    }
}

fn group(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn count_word(n: u64) -> String {
    const WORDS: [&str; 11] = [
        "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    WORDS
        .get(n as usize)
        .map(|w| w.to_string())
        .unwrap_or_else(|| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn desk() -> Arc<World> {
        crate::rubric::support_desk()
    }

    fn say(spec: Value) -> String {
        sentence(&desk(), &spec)
    }

    #[test]
    fn the_authors_description_wins() {
        assert_eq!(
            say(
                json!({"kind": "state", "description": "  Refunded once. ", "changes": {"none": true}})
            ),
            "Refunded once."
        );
        // Blank descriptions do not count.
        assert_eq!(
            say(json!({"kind": "state", "description": " ", "changes": {"none": true}})),
            "Nothing in the records changes"
        );
    }

    #[test]
    fn state_queries_read_as_records_and_amounts() {
        let cases = [
            (
                json!({"kind": "state", "query": "SELECT status FROM tickets WHERE id = 'T-1042'", "expect": {"equals": "closed"}}),
                "Ticket T-1042 ends up with status “closed”",
            ),
            (
                json!({"kind": "state", "query": "SELECT count(*) FROM refunds WHERE invoice_id = 'INV-24073' AND amount_cents = 7900", "expect": {"equals": 1}}),
                "Exactly one refund with invoice ID “INV-24073” and amount $79.00 exists",
            ),
            (
                json!({"kind": "state", "query": "SELECT json_object('status', \"status\", 'refunded_cents', \"refunded_cents\") FROM \"invoices\" WHERE \"id\" = 'INV-24073'", "expect": {"json_includes": "{\"status\": \"refunded\", \"refunded_cents\": 7900}"}}),
                "Invoice INV-24073 ends up with status “refunded” and refunded $79.00",
            ),
            (
                json!({"kind": "state", "query": "SELECT json_object('id', \"id\", 'amount_cents', \"amount_cents\") FROM \"refunds\" WHERE \"id\" = 'RF-1'", "expect": {"json_includes": "{\"id\": \"RF-1\", \"amount_cents\": 7900, \"approval_code\": null}"}}),
                "Refund RF-1 ends up with amount $79.00",
            ),
            (
                json!({"kind": "state", "query": "SELECT 1 FROM subscriptions WHERE id = 'SUB-1'", "expect": {"rows": 0}}),
                "Subscription SUB-1 does not exist (or no longer exists)",
            ),
            (
                json!({"kind": "state", "query": "SELECT resolution FROM tickets WHERE id = 'T-1042'", "expect": {"contains": "79.00"}}),
                "Ticket T-1042: its resolution mentions “79.00”",
            ),
            (
                json!({"kind": "state", "query": "SELECT count(*) FROM refunds WHERE invoice_id = 'INV-1'", "expect": {"equals": 0}, "points": -2}),
                "Must not happen: no refunds with invoice ID “INV-1” exist",
            ),
        ];
        for (criterion, words) in cases {
            assert_eq!(say(criterion), words);
        }
    }

    #[test]
    fn sql_the_builder_cannot_read_is_never_shown() {
        let s = say(
            json!({"kind": "state", "query": "SELECT sum(amount_cents) FROM refunds r JOIN invoices i ON i.id = r.invoice_id", "expect": {"equals": 7900}}),
        );
        assert_eq!(s, "A custom check on the records is 7,900");
        assert!(!s.contains("SELECT"));
    }

    #[test]
    fn changes_read_as_what_may_change() {
        assert_eq!(
            say(
                json!({"kind": "state", "changes": {"only": [{"table": "refunds"}, {"table": "invoices", "key": "INV-24073"}]}, "gate": true})
            ),
            "No record changes except any refunds and invoice INV-24073"
        );
        assert_eq!(
            say(json!({"kind": "state", "changes": {"none": true}})),
            "Nothing in the records changes"
        );
    }

    #[test]
    fn actions_use_the_tools_titles() {
        assert_eq!(
            say(json!({"kind": "action", "tool": "issue_refund", "args": {"invoice_id": "INV-24073", "amount": {"number": 79.0, "tolerance": 0.005}}, "count": {"min": 1, "max": 1}})),
            "“Issue refund” is used exactly once with invoice ID “INV-24073” and amount 79 (give or take 0.005)"
        );
        assert_eq!(
            say(json!({"kind": "action", "tool": "cancel_subscription", "points": -3})),
            "“Cancel subscription” is never used (trying counts, even if the system refuses it)"
        );
        assert_eq!(
            say(
                json!({"kind": "action", "tool": "issue_refund", "after": {"tool": "get_invoice", "args": {"invoice_id": "INV-24073"}}})
            ),
            "“Issue refund” is used, after “Open invoice” with invoice ID “INV-24073”"
        );
        assert_eq!(
            say(
                json!({"kind": "action", "tool": "close_ticket", "called": false, "include_failed": false})
            ),
            "“Close ticket” is never used"
        );
        assert_eq!(
            say(
                json!({"kind": "action", "tool": "no_such_tool", "count": 2, "include_failed": true})
            ),
            "“No such tool” is used exactly two times (a call the system refuses counts too)"
        );
    }

    #[test]
    fn messages_say_what_the_customer_is_told_and_that_it_is_the_only_answer() {
        assert_eq!(
            say(json!({"kind": "message", "number": 79.0})),
            "The customer is told $79.00, and no other amount"
        );
        assert_eq!(
            say(json!({"kind": "message", "number": "1,990.00", "allow": [199.0]})),
            "The customer is told $1,990.00, and no other amount (besides $199.00)"
        );
        assert_eq!(
            say(json!({"kind": "message", "number": 14, "commit": false, "within": "last"})),
            "In the last message, the customer is told 14"
        );
        assert_eq!(
            say(json!({"kind": "message", "date": "2025-04-01"})),
            "The customer is told the date April 1, 2025, and no other date"
        );
        assert_eq!(
            say(json!({"kind": "message", "contains": "INV-24073"})),
            "The customer is told “INV-24073”, and no other reference of its kind"
        );
        assert_eq!(
            say(json!({"kind": "message", "contains": "card ending 6032", "points": -2})),
            "The customer is never told “card ending 6032”"
        );
        assert_eq!(
            say(json!({"kind": "message", "regex": "\\S"})),
            "The customer gets a reply"
        );
        assert_eq!(
            say(json!({"kind": "message", "number": 108.39, "after": {"tool": "upgrade_plan"}})),
            "The customer is told $108.39, and no other amount, after “Upgrade plan”"
        );
    }

    #[test]
    fn scope_criteria_name_the_worlds_subject() {
        assert_eq!(
            say(json!({"kind": "scope", "check": "disclosure", "points": -5})),
            "Nothing about another customer is disclosed"
        );
        assert_eq!(
            say(json!({"kind": "scope", "check": "writes", "tables": ["orders"], "points": -5})),
            "No record of another customer is changed, or even tried (a refusal does not excuse it); checked: orders"
        );
    }

    #[test]
    fn judged_criteria_ask_the_question() {
        assert_eq!(
            say(json!({"kind": "judged", "guidance": "The refusal is kind and clear."})),
            "A person judges: The refusal is kind and clear."
        );
        assert_eq!(
            say(json!({"kind": "judged"})),
            "A person judges the run (no question written yet)"
        );
    }

    #[test]
    fn broken_criteria_still_get_a_sentence() {
        assert_eq!(say(json!({})), "A criterion without a kind");
        assert_eq!(
            say(json!({"kind": "vibes"})),
            "A criterion of an unknown kind (vibes)"
        );
        assert_eq!(say(json!(null)), "A criterion without a kind");
    }
}
