//! τ-bench conformance: replaying every provided gold action list in the
//! τ-bench worlds gives exactly the observations and final state changes
//! τ-bench's own Python environment produced. JSON observations are compared
//! parsed (floats within 1e-9), everything else as exact text.

use understudy_testkit as common;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use understudy::replay;
use understudy::World;

/// τ-bench's task files with its own environment's results, copied into
/// the repository (MIT, with its LICENSE) so the test needs nothing beside
/// the clone.
fn data() -> PathBuf {
    common::repo().join("tests/data/tau-bench")
}

/// Equal as JSON, with floats within 1e-9 and ints equal to ints only.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.is_f64() != y.is_f64() {
                return false; // 68 and 68.0 differ in τ-bench's reward hash
            }
            match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => (p - q).abs() <= 1e-9 || p == q,
                _ => x == y,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn same_observation(expected: &str, actual: &str) -> bool {
    match (
        serde_json::from_str::<Value>(expected),
        serde_json::from_str::<Value>(actual),
    ) {
        (Ok(e @ (Value::Object(_) | Value::Array(_))), Ok(a)) => same(&e, &a),
        _ => expected == actual,
    }
}

/// Changes as τ-bench reports them: tables with no change may be omitted
/// on either side, `removed` is compared as a set.
fn same_changes(expected: &Value, actual: &Value) -> bool {
    let empty = serde_json::json!({"added": {}, "removed": [], "changed": {}});
    let tables = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut all = tables(expected);
    all.extend(tables(actual));
    all.iter().all(|t| {
        let e = expected.get(t).unwrap_or(&empty);
        let a = actual.get(t).unwrap_or(&empty);
        let sorted = |v: Option<&Value>| {
            let mut items: Vec<String> = v
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|x| x.to_string()).collect())
                .unwrap_or_default();
            items.sort();
            items
        };
        same(
            e.get("added").unwrap_or(&Value::Null),
            a.get("added").unwrap_or(&Value::Null),
        ) && same(
            e.get("changed").unwrap_or(&Value::Null),
            a.get("changed").unwrap_or(&Value::Null),
        ) && sorted(e.get("removed")) == sorted(a.get("removed"))
    })
}

fn check(world: &str, tasks: &str, expected_count: usize) {
    let world = Arc::new(
        World::load(common::repo().join("fixtures/worlds").join(world)).expect("world loads"),
    );
    let path = data().join(tasks);
    let text = std::fs::read_to_string(&path).expect("task file");
    let inputs = replay::parse_input(&text, &path.display().to_string()).expect("task lines parse");
    assert_eq!(inputs.len(), expected_count);
    let outputs = replay::replay_all(&world, &inputs, &|| {}).expect("replay");
    let mut failures = Vec::new();
    for (line, out) in text.lines().filter(|l| !l.trim().is_empty()).zip(&outputs) {
        let task: Value = serde_json::from_str(line).expect("json");
        let index = task["task_index"].clone();
        assert_eq!(
            out.task_index.as_ref(),
            Some(&index),
            "output order follows input order"
        );
        let expected = &task["expected"];
        let observations: Vec<&str> = expected["observations"]
            .as_array()
            .expect("observations")
            .iter()
            .map(|o| o.as_str().unwrap_or(""))
            .collect();
        if observations.len() != out.observations.len() {
            failures.push(format!(
                "task {index}: {} observations, expected {}",
                out.observations.len(),
                observations.len()
            ));
            continue;
        }
        for (i, (e, a)) in observations.iter().zip(&out.observations).enumerate() {
            if !same_observation(e, a) {
                failures.push(format!(
                    "task {index} action {i}:\n  expected {e}\n  actual   {a}"
                ));
            }
        }
        let actual = serde_json::to_value(&out.changes).expect("json");
        if !same_changes(&expected["changes"], &actual) {
            failures.push(format!(
                "task {index}: changes differ:\n  expected {}\n  actual   {actual}",
                expected["changes"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {expected_count} tasks diverge from τ-bench:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn retail_train_tasks_match_tau_bench() {
    check("tau-retail", "retail/tasks_train.jsonl", 500);
}

#[test]
fn airline_sample_tasks_match_tau_bench() {
    check("tau-airline", "airline/tasks_sample.jsonl", 25);
}

#[test]
fn the_comparison_is_strict() {
    assert!(!same(&serde_json::json!(68), &serde_json::json!(68.0)));
    assert!(same(&serde_json::json!(0.1 + 0.2), &serde_json::json!(0.3)));
    assert!(!same(
        &serde_json::json!(0.05),
        &serde_json::json!(0.04999999)
    ));
    assert!(!same_observation(
        "Error: user not found",
        "Error: User not found"
    ));
    assert!(same_observation(
        "{\"a\": 1, \"b\": [2.5]}",
        "{\"b\":[2.5],\"a\":1}"
    ));
}
