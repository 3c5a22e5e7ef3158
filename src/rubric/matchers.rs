//! Value matchers: how a rubric says what an argument or a query result
//! must be. One vocabulary serves tool arguments, state expectations and
//! message patterns, so annotators learn it once.

use chrono::NaiveDate;
use regex::Regex;
use serde_json::Value;

use super::prose::or_list;
use super::{numbers, plain_pattern};

/// Keys that make a TOML table a matcher rather than a literal object.
pub const MATCHER_KEYS: &[&str] = &[
    "equals",
    "any_of",
    "number",
    "tolerance",
    "regex",
    "contains",
    "absent",
    "present",
];

/// What a value must be.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Equal as JSON, with numbers compared by value (79 = 79.0) and
    /// booleans equal to SQLite's 1/0.
    Exact(Value),
    /// Equal to one of these.
    AnyOf(Vec<Value>),
    /// A number (or text reading as one) within `tolerance`.
    Number { value: f64, tolerance: f64 },
    /// Text the regex finds a match in (not anchored unless written so).
    Regex(Regex),
    /// Text containing this phrase after normalization (see `numbers`).
    Contains(String),
    /// Missing or null.
    Absent,
    /// Present and not null.
    Present,
}

impl Matcher {
    /// Parses a matcher written in TOML. A table made only of matcher keys is
    /// a matcher; any other value is matched exactly.
    pub fn parse(value: &toml::Value) -> Result<Matcher, String> {
        let Some(table) = value.as_table() else {
            return Ok(Matcher::Exact(toml_to_json(value)));
        };
        let known = table
            .keys()
            .filter(|k| MATCHER_KEYS.contains(&k.as_str()))
            .count();
        if known == 0 {
            return Ok(Matcher::Exact(toml_to_json(value)));
        }
        if known != table.len() {
            let other: Vec<&str> = table
                .keys()
                .map(String::as_str)
                .filter(|k| !MATCHER_KEYS.contains(k))
                .collect();
            return Err(format!(
                "mixes matcher keys with other keys ({}); a matcher is one of {{ equals = .. }}, {{ any_of = [..] }}, {{ number = .., tolerance = .. }}, {{ regex = \"..\" }}, {{ contains = \"..\" }}, {{ absent = true }}, {{ present = true }} (wrap a literal object in {{ equals = {{ .. }} }})",
                other.join(", ")
            ));
        }
        let keys: Vec<&str> = table.keys().map(String::as_str).collect();
        let only = |k: &str| keys.len() == 1 && keys[0] == k;
        if only("equals") {
            return Ok(Matcher::Exact(toml_to_json(&table["equals"])));
        }
        if only("any_of") {
            let list = table["any_of"]
                .as_array()
                .ok_or("`any_of` must be a list of values")?;
            if list.is_empty() {
                return Err("`any_of` must list at least one value".into());
            }
            return Ok(Matcher::AnyOf(list.iter().map(toml_to_json).collect()));
        }
        if table.contains_key("number") && keys.iter().all(|k| *k == "number" || *k == "tolerance")
        {
            let value = as_f64(&table["number"]).ok_or("`number` must be a number")?;
            let tolerance = match table.get("tolerance") {
                None => 0.0,
                Some(t) => as_f64(t)
                    .filter(|t| *t >= 0.0)
                    .ok_or("`tolerance` must be a number ≥ 0")?,
            };
            return Ok(Matcher::Number { value, tolerance });
        }
        if only("regex") {
            let text = table["regex"].as_str().ok_or("`regex` must be text")?;
            return Regex::new(text)
                .map(Matcher::Regex)
                .map_err(|e| format!("`regex` does not compile: {e}"));
        }
        if only("contains") {
            let text = table["contains"]
                .as_str()
                .ok_or("`contains` must be text")?;
            if text.trim().is_empty() {
                return Err("`contains` must not be empty".into());
            }
            return Ok(Matcher::Contains(numbers::normalize(text)));
        }
        if only("absent") || only("present") {
            let key = keys[0];
            return match table[key].as_bool() {
                Some(true) => Ok(if key == "absent" {
                    Matcher::Absent
                } else {
                    Matcher::Present
                }),
                _ => Err(format!("write `{key} = true`")),
            };
        }
        if only("tolerance") {
            return Err(
                "`tolerance` goes with `number`, e.g. { number = 79.0, tolerance = 0.005 }".into(),
            );
        }
        Err(format!(
            "combines {}; use one matcher per value",
            keys.join(" and ")
        ))
    }

    /// Whether `value` (`None` when the argument or column is missing)
    /// satisfies the matcher.
    pub fn matches(&self, value: Option<&Value>) -> bool {
        let present = value.filter(|v| !v.is_null());
        match self {
            Matcher::Absent => present.is_none(),
            Matcher::Present => present.is_some(),
            Matcher::Exact(want) => value.is_some_and(|v| loose_eq(v, want)),
            Matcher::AnyOf(list) => value.is_some_and(|v| list.iter().any(|w| loose_eq(v, w))),
            Matcher::Number {
                value: want,
                tolerance,
            } => present
                .and_then(as_number)
                .is_some_and(|v| numbers::same_number(v, *want, *tolerance)),
            Matcher::Regex(re) => present
                .and_then(Value::as_str)
                .is_some_and(|s| re.is_match(s)),
            Matcher::Contains(phrase) => present
                .and_then(Value::as_str)
                .is_some_and(|s| numbers::contains_phrase(&numbers::normalize(s), phrase)),
        }
    }

    /// What the matcher accepts, in words that finish "it should be …":
    /// `cancelled`, "one of 1, 2 or 3", "about 12.5 (± 0.01)".
    pub fn describe(&self) -> String {
        match self {
            Matcher::Exact(v) => plain(v),
            Matcher::AnyOf(list) => {
                let words: Vec<String> = list.iter().map(plain).collect();
                format!("one of {}", or_list(&words))
            }
            Matcher::Number { value, tolerance } if *tolerance > 0.0 => {
                format!("about {value} (± {tolerance})")
            }
            Matcher::Number { value, .. } => format!("{value}"),
            Matcher::Regex(re) => match plain_pattern::phrases(re.as_str()) {
                Some(words) => format!("text that reads like {words}"),
                None => format!("text matching /{}/", re.as_str()),
            },
            Matcher::Contains(p) => format!("text containing “{p}”"),
            Matcher::Absent => "absent".into(),
            Matcher::Present => "present".into(),
        }
    }
}

/// A value as a person reads it: text in quotes, yes/no, "empty" for
/// null, numbers as they are, lists and records as compact JSON.
pub fn plain(v: &Value) -> String {
    match v {
        Value::Null => "empty".into(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::String(s) => format!("“{}”", shorten(s, 120)),
        other => compact(other),
    }
}

/// "1 record", "3 records".
pub fn records(n: usize) -> String {
    if n == 1 {
        "1 record".into()
    } else {
        format!("{n} records")
    }
}

/// A pattern over what was said to the customer.
#[derive(Debug, Clone)]
pub enum TextPattern {
    Contains(String),
    Regex(Regex),
    Number { value: f64, tolerance: f64 },
    Date(NaiveDate, Regex),
}

impl TextPattern {
    /// Where in `text` the pattern is found, as the excerpt that matched.
    /// `normalized` is `text` after [`numbers::normalize`], done once per
    /// message however many criteria read it.
    pub fn find_in(&self, text: &str, normalized: &str) -> Option<String> {
        match self {
            TextPattern::Contains(p) => numbers::contains_phrase(normalized, p).then(|| p.clone()),
            TextPattern::Regex(re) => re.find(text).map(|m| m.as_str().to_string()),
            TextPattern::Number { value, tolerance } => {
                numbers::find_number(text, *value, *tolerance).map(|n| n.text)
            }
            TextPattern::Date(_, re) => re.find(normalized).map(|m| m.as_str().to_string()),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            TextPattern::Contains(p) => format!("the phrase \"{p}\""),
            TextPattern::Regex(re) => match plain_pattern::phrases(re.as_str()) {
                Some(words) => format!("wording like {words}"),
                None => format!("text matching /{}/", re.as_str()),
            },
            TextPattern::Number { value, tolerance } if *tolerance > 0.0 => {
                format!("the number {value} (± {tolerance})")
            }
            TextPattern::Number { value, .. } => format!("the number {value}"),
            TextPattern::Date(d, _) => format!("the date {}", d.format("%B %-d, %Y")),
        }
    }
}

/// Numbers by value, booleans as 1/0, objects and arrays member by member.
pub fn loose_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_))
        | (Value::Bool(_), Value::Number(_))
        | (Value::Number(_), Value::Bool(_)) => match (as_number(a), as_number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| loose_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| loose_eq(v, w)))
        }
        // A JSON document stored as text compares as the document.
        (Value::String(s), Value::Object(_) | Value::Array(_)) => {
            serde_json::from_str::<Value>(s).is_ok_and(|parsed| loose_eq(&parsed, b))
        }
        _ => a == b,
    }
}

/// A number, a boolean as 1/0, or text that reads as one number.
pub fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::String(s) => numbers::parse_number(s),
        _ => None,
    }
}

pub fn as_f64(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// TOML → JSON, keeping integers and floats apart (68 and 68.0 differ).
pub fn toml_to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
    }
}

/// A one-line rendering of a value, shortened for evidence.
pub fn compact(v: &Value) -> String {
    let s = match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    shorten(&s, 120)
}

pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(src: &str) -> Result<Matcher, String> {
        let table: toml::Table = toml::from_str(&format!("m = {src}")).expect("toml");
        Matcher::parse(&table["m"])
    }

    #[test]
    fn matchers_say_what_they_accept_in_words() {
        let said = |src: &str| parse(src).expect("matcher").describe();
        assert_eq!(said("79"), "79");
        assert_eq!(said("\"cancelled\""), "“cancelled”");
        assert_eq!(said("true"), "yes");
        assert_eq!(said("{ number = 79.5 }"), "79.5");
        assert_eq!(
            said("{ number = 79.0, tolerance = 0.005 }"),
            "about 79 (± 0.005)"
        );
        assert_eq!(
            said("{ any_of = [\"billing\", \"security\", \"technical\"] }"),
            "one of “billing”, “security” or “technical”"
        );
        assert_eq!(
            said("{ contains = \"INV-24073\" }"),
            "text containing “inv-24073”"
        );
        assert_eq!(plain(&json!(null)), "empty");
    }

    #[test]
    fn matchers_match_what_they_say() {
        let m = parse("79").expect("exact");
        assert!(m.matches(Some(&json!(79.0))));
        assert!(!m.matches(Some(&json!(790))));
        assert!(!m.matches(None));
        let m = parse("{ number = 79.0, tolerance = 0.005 }").expect("number");
        assert!(m.matches(Some(&json!(79.004))));
        assert!(m.matches(Some(&json!("$79.00"))));
        assert!(!m.matches(Some(&json!(79.01))));
        let m = parse("{ any_of = [\"billing\", \"security\"] }").expect("any_of");
        assert!(m.matches(Some(&json!("security"))));
        assert!(!m.matches(Some(&json!("technical"))));
        let m = parse("{ regex = \"(?i)duplicate\" }").expect("regex");
        assert!(m.matches(Some(&json!("Duplicate charge"))));
        assert!(!m.matches(Some(&json!(3))));
        let m = parse("{ contains = \"INV-24073\" }").expect("contains");
        assert!(m.matches(Some(&json!("refund on inv-24073."))));
        assert!(!m.matches(Some(&json!("refund on INV-240731"))));
        assert!(parse("{ absent = true }")
            .expect("absent")
            .matches(Some(&Value::Null)));
        assert!(parse("{ equals = { regex = 1 } }")
            .expect("literal")
            .matches(Some(&json!({"regex": 1}))));
        assert!(parse("{ a = 1 }")
            .expect("object")
            .matches(Some(&json!("{\"a\": 1.0}"))));
    }

    #[test]
    fn malformed_matchers_are_explained() {
        for (matcher, explanation) in [
            ("{ regex = \"(\" }", "does not compile"),
            ("{ any_of = [] }", "at least one"),
            ("{ number = \"x\" }", "must be a number"),
            ("{ number = 1, tolerance = -1 }", "≥ 0"),
            ("{ regex = \"a\", foo = 1 }", "mixes"),
            ("{ regex = \"a\", contains = \"b\" }", "one matcher"),
            ("{ tolerance = 1 }", "goes with `number`"),
            ("{ absent = false }", "absent = true"),
        ] {
            let err = parse(matcher).unwrap_err();
            assert!(err.contains(explanation), "{matcher}: {err}");
        }
    }
}
