//! Shared pieces of the property-based fuzz tests (proptest, stable Rust):
//! the run's size, random JSON and TOML values, and edits that mutate a
//! real document (a world file, a request, an exported line) into a
//! hostile one.
//!
//! **Bounded by default.** Each harness ([`check`]) runs `PROPTEST_CASES`
//! cases (default [`DEFAULT_CASES`]) and stops early once
//! `UNDERSTUDY_FUZZ_SECONDS` (default [`DEFAULT_SECONDS`]) have passed, so
//! CI stays fast. A long run: `PROPTEST_CASES=20000
//! UNDERSTUDY_FUZZ_SECONDS=3600 cargo test --test it fuzz` (see
//! docs/ARCHITECTURE.md, "Fuzzing").

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;

/// Cases per harness unless `PROPTEST_CASES` says otherwise.
pub const DEFAULT_CASES: u32 = 64;
/// Seconds per harness unless `UNDERSTUDY_FUZZ_SECONDS` says otherwise.
pub const DEFAULT_SECONDS: u64 = 20;

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The proptest configuration: the number of cases, and no regression
/// files written into the source tree (a failure prints its input).
pub fn config() -> Config {
    Config {
        cases: env_number("PROPTEST_CASES").unwrap_or(DEFAULT_CASES),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Runs `test` on cases drawn from `strategy` until the run's case count
/// or time budget is used up. A failing (or panicking) case is shrunk to a
/// minimal one, which the panic message shows.
pub fn check<S>(name: &str, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    let config = config();
    let seconds = env_number("UNDERSTUDY_FUZZ_SECONDS").unwrap_or(DEFAULT_SECONDS);
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut runner = TestRunner::new(config.clone());
    let mut ran = 0;
    while ran < config.cases && Instant::now() < until {
        let case = strategy
            .new_tree(&mut runner)
            .unwrap_or_else(|e| panic!("{name}: cannot draw a case: {e}"));
        if let Err(e) = runner.run_one(case, &test) {
            panic!("{name}: {e}");
        }
        ran += 1;
    }
    eprintln!("{name}: {ran} case(s)");
}

/// Text that tends to break things: empty, huge, control characters,
/// template and SQL syntax, paths, names the test worlds use.
pub fn nasty_text() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        Just(String::new()),
        Just("{{ x }}".to_string()),
        Just("{% for i in range(10) %}{{ i }}{% endfor %}".to_string()),
        Just("'; DROP TABLE accounts; --".to_string()),
        Just("../../../../etc/passwd".to_string()),
        Just("\u{0}\u{1b}[31m\r\n".to_string()),
        Just("A-1".to_string()),
        Just("transfer".to_string()),
        Just("view_accounts".to_string()),
        Just("pay-back".to_string()),
        Just("frozen".to_string()),
        Just("mini".to_string()),
        Just("2025-01-01T09:00:00Z".to_string()),
        Just("x".repeat(70_000)),
        "\\PC{0,24}",
        "[a-z_]{1,12}",
        any::<String>(),
    ]
}

fn number() -> impl Strategy<Value = serde_json::Number> + Clone {
    prop_oneof![
        Just(serde_json::Number::from(0)),
        Just(serde_json::Number::from(-1)),
        Just(serde_json::Number::from(i64::MIN)),
        Just(serde_json::Number::from(i64::MAX)),
        Just(serde_json::Number::from(u64::MAX)),
        any::<i64>().prop_map(serde_json::Number::from),
        any::<f64>().prop_filter_map("finite", serde_json::Number::from_f64),
        Just(serde_json::Number::from_f64(1e308).expect("finite")),
        Just(serde_json::Number::from_f64(-0.0).expect("finite")),
    ]
}

/// Any JSON value, nested a few levels.
pub fn json_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        nasty_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,10}|\\PC{0,6}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
    .boxed()
}

/// Any TOML value, nested a few levels.
pub fn toml_value() -> BoxedStrategy<toml::Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(toml::Value::Boolean),
        any::<i64>().prop_map(toml::Value::Integer),
        Just(toml::Value::Integer(i64::MAX)),
        Just(toml::Value::Integer(i64::MIN)),
        Just(toml::Value::Integer(0)),
        Just(toml::Value::Integer(-1)),
        any::<f64>().prop_map(toml::Value::Float),
        Just(toml::Value::Float(f64::NAN)),
        Just(toml::Value::Float(f64::INFINITY)),
        nasty_text().prop_map(toml::Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(toml::Value::Array),
            prop::collection::vec(("[a-z_]{1,10}", inner), 0..6)
                .prop_map(|kv| toml::Value::Table(kv.into_iter().collect())),
        ]
    })
    .boxed()
}

/// One scalar of each JSON kind, for [`Edit::Tweak`].
pub fn json_scalars() -> impl Strategy<Value = Vec<Value>> + Clone {
    (nasty_text(), number(), any::<bool>())
        .prop_map(|(s, n, b)| vec![Value::String(s), Value::Number(n), Value::Bool(b)])
}

/// One scalar of each TOML kind, for [`Edit::Tweak`].
pub fn toml_scalars() -> impl Strategy<Value = Vec<toml::Value>> + Clone {
    let int = prop_oneof![
        Just(0i64),
        Just(-1),
        Just(i64::MAX),
        Just(i64::MIN),
        Just(1_000_000_000_000),
        any::<i64>(),
    ];
    let float = prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-0.0),
        Just(1e308),
        any::<f64>(),
    ];
    (nasty_text(), int, float, any::<bool>()).prop_map(|(s, i, f, b)| {
        vec![
            toml::Value::String(s),
            toml::Value::Integer(i),
            toml::Value::Float(f),
            toml::Value::Boolean(b),
        ]
    })
}

/// One change to a document tree. Node numbers count the tree's nodes in
/// pre-order and wrap around, so any number picks some node.
#[derive(Debug, Clone)]
pub enum Edit<V> {
    /// The node becomes `V`.
    Replace(usize, V),
    /// The node, if a scalar, becomes the candidate of its own kind: the
    /// document keeps its shape, so the edit reaches past type checks to
    /// what the values mean.
    Tweak(usize, Vec<V>),
    /// The node's `k`-th child (if it has children) goes.
    Remove(usize, usize),
    /// The node (if a table or object) gets a key, or (an array) an item.
    Insert(usize, String, V),
}

/// A few edits: values from `value`, tweaks from `scalars`.
pub fn edits<V: std::fmt::Debug + Clone + 'static>(
    value: impl Strategy<Value = V> + Clone + 'static,
    scalars: impl Strategy<Value = Vec<V>> + Clone + 'static,
) -> impl Strategy<Value = Vec<Edit<V>>> {
    let key = prop_oneof![
        "[a-z_]{1,12}",
        Just("type".to_string()),
        Just("id".to_string())
    ];
    let edit = prop_oneof![
        3 => (any::<usize>(), scalars).prop_map(|(n, v)| Edit::Tweak(n, v)),
        1 => (any::<usize>(), value.clone()).prop_map(|(n, v)| Edit::Replace(n, v)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(n, k)| Edit::Remove(n, k)),
        1 => (any::<usize>(), key, value).prop_map(|(n, k, v)| Edit::Insert(n, k, v)),
    ];
    prop::collection::vec(edit, 1..5)
}

/// A document tree that [`apply`] can edit.
pub trait Tree: Clone {
    /// Which kind of value this is (same number, same kind).
    fn kind(&self) -> u8;
    fn children(&mut self) -> Vec<&mut Self>;
    fn remove(&mut self, k: usize);
    fn insert(&mut self, key: String, value: Self);
}

impl Tree for Value {
    fn kind(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            Value::Array(_) => 4,
            Value::Object(_) => 5,
        }
    }
    fn children(&mut self) -> Vec<&mut Value> {
        match self {
            Value::Array(a) => a.iter_mut().collect(),
            Value::Object(o) => o.values_mut().collect(),
            _ => Vec::new(),
        }
    }
    fn remove(&mut self, k: usize) {
        match self {
            Value::Array(a) if !a.is_empty() => {
                let i = k % a.len();
                a.remove(i);
            }
            Value::Object(o) if !o.is_empty() => {
                if let Some(key) = o.keys().nth(k % o.len()).cloned() {
                    o.shift_remove(&key);
                }
            }
            _ => {}
        }
    }
    fn insert(&mut self, key: String, value: Value) {
        match self {
            Value::Array(a) => a.push(value),
            Value::Object(o) => {
                o.insert(key, value);
            }
            _ => {}
        }
    }
}

impl Tree for toml::Value {
    fn kind(&self) -> u8 {
        match self {
            toml::Value::String(_) => 0,
            toml::Value::Integer(_) => 1,
            toml::Value::Float(_) => 2,
            toml::Value::Boolean(_) => 3,
            toml::Value::Datetime(_) => 4,
            toml::Value::Array(_) => 5,
            toml::Value::Table(_) => 6,
        }
    }
    fn children(&mut self) -> Vec<&mut toml::Value> {
        match self {
            toml::Value::Array(a) => a.iter_mut().collect(),
            toml::Value::Table(t) => t.iter_mut().map(|(_, v)| v).collect(),
            _ => Vec::new(),
        }
    }
    fn remove(&mut self, k: usize) {
        match self {
            toml::Value::Array(a) if !a.is_empty() => {
                let i = k % a.len();
                a.remove(i);
            }
            toml::Value::Table(t) if !t.is_empty() => {
                if let Some(key) = t.keys().nth(k % t.len()).cloned() {
                    t.remove(&key);
                }
            }
            _ => {}
        }
    }
    fn insert(&mut self, key: String, value: toml::Value) {
        match self {
            toml::Value::Array(a) => a.push(value),
            toml::Value::Table(t) => {
                t.insert(key, value);
            }
            _ => {}
        }
    }
}

fn count<T: Tree>(node: &mut T) -> usize {
    1 + node.children().into_iter().map(count).sum::<usize>()
}

fn nth<'a, T: Tree>(node: &'a mut T, n: &mut usize) -> Option<&'a mut T> {
    if *n == 0 {
        return Some(node);
    }
    *n -= 1;
    for child in node.children() {
        if let Some(found) = nth(child, n) {
            return Some(found);
        }
    }
    None
}

/// `doc` with `edits` applied in order.
pub fn apply<T: Tree>(doc: &T, edits: &[Edit<T>]) -> T {
    let mut doc = doc.clone();
    for edit in edits {
        let total = count(&mut doc);
        let (n, op) = match edit {
            Edit::Replace(n, _)
            | Edit::Tweak(n, _)
            | Edit::Remove(n, _)
            | Edit::Insert(n, _, _) => (*n % total, edit),
        };
        let mut at = n;
        let Some(node) = nth(&mut doc, &mut at) else {
            continue;
        };
        match op {
            Edit::Replace(_, v) => *node = v.clone(),
            Edit::Tweak(_, candidates) => {
                if let Some(v) = candidates.iter().find(|c| c.kind() == node.kind()) {
                    *node = v.clone();
                }
            }
            Edit::Remove(_, k) => node.remove(*k),
            Edit::Insert(_, key, v) => node.insert(key.clone(), v.clone()),
        }
    }
    doc
}

/// One change to raw bytes.
#[derive(Debug, Clone)]
pub enum ByteEdit {
    Delete(usize, usize),
    Insert(usize, Vec<u8>),
    Set(usize, u8),
    /// The whole text repeated (a big document).
    Repeat(usize),
}

pub fn byte_edits() -> impl Strategy<Value = Vec<ByteEdit>> {
    let inserted = prop_oneof![
        prop::collection::vec(any::<u8>(), 1..16),
        Just(b"\"".to_vec()),
        Just(b"[[".to_vec()),
        Just(b"]]".to_vec()),
        Just(b"{".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"=".to_vec()),
        Just(b"\\u0000".to_vec()),
        Just(vec![0xff, 0xfe]),
    ];
    let edit = prop_oneof![
        (any::<usize>(), 1..32usize).prop_map(|(at, n)| ByteEdit::Delete(at, n)),
        (any::<usize>(), inserted).prop_map(|(at, b)| ByteEdit::Insert(at, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| ByteEdit::Set(at, b)),
        (1..4usize).prop_map(ByteEdit::Repeat),
    ];
    prop::collection::vec(edit, 1..6)
}

/// `text` with `edits` applied in order.
pub fn apply_bytes(text: &[u8], edits: &[ByteEdit]) -> Vec<u8> {
    let mut out = text.to_vec();
    for e in edits {
        let len = out.len();
        match e {
            ByteEdit::Delete(at, n) if len > 0 => {
                let start = at % len;
                let end = (start + n).min(len);
                out.drain(start..end);
            }
            ByteEdit::Insert(at, bytes) => {
                let at = if len == 0 { 0 } else { at % (len + 1) };
                out.splice(at..at, bytes.iter().copied());
            }
            ByteEdit::Set(at, b) if len > 0 => out[at % len] = *b,
            ByteEdit::Repeat(times) if len < (1 << 16) => {
                let copy = out.clone();
                for _ in 0..*times {
                    out.extend_from_slice(&copy);
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    #[should_panic(expected = "minimal failing input: 51")]
    fn a_panicking_case_fails_the_check_shrunk() {
        check("panics", 0..1000u32, |n| {
            assert!(n <= 50, "boom");
            Ok(())
        });
    }

    #[test]
    fn edits_reach_every_node() {
        let doc = json!({"a": [1, {"b": 2}], "c": "x"});
        assert_eq!(
            apply(&doc, &[Edit::Replace(4, json!(null))]),
            json!({"a": [1, {"b": null}], "c": "x"})
        );
        assert_eq!(
            apply(&doc, &[Edit::Remove(0, 1)]),
            json!({"a": [1, {"b": 2}]})
        );
        assert_eq!(
            apply(&doc, &[Edit::Insert(1, "k".into(), json!(3))]),
            json!({"a": [1, {"b": 2}, 3], "c": "x"})
        );
        assert_eq!(apply_bytes(b"abc", &[ByteEdit::Delete(1, 1)]), b"ac");
        assert_eq!(
            apply_bytes(b"abc", &[ByteEdit::Insert(3, b"d".to_vec())]),
            b"abcd"
        );
    }
}
