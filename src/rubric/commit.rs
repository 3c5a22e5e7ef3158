//! Committed answers: when a message criterion that must be met (positive
//! points or a gate) counts as *said*.
//!
//! A value merely appearing somewhere is not an answer: keyword stuffing
//! (every price up to $2,000.00) and spraying candidates ("$79.00, $80.00
//! or $81.00", "between 3 and 7") would earn it. So the answer is given
//! only when
//! - the message that states it is within the criterion's bounds: at most
//!   `max_values` distinct values of each kind and `max_length` characters;
//! - no message the criterion reads states a competing value of the same
//!   kind (see [`super::values`]): not the answer, not in its `allow` list
//!   and not the answer of another criterion of the rubric.
//!
//! Competing values are looked for in every message the criterion reads,
//! not only the one with the answer, so candidates spread over several
//! messages fail too.

use super::criterion::{Check, Criterion};
use super::matchers::TextPattern;
use super::numbers;
use super::values::{self, distinct_per_kind, is_one_of, Stated, ValueKey, ValueKind};

/// At most this many distinct values of one kind in the answer's message.
pub const DEFAULT_MAX_VALUES: usize = 6;
/// At most this many characters in the answer's message.
pub const DEFAULT_MAX_LENGTH: usize = 1200;

/// How a required answer must be given.
#[derive(Debug, Clone)]
pub(crate) struct Commit {
    pub max_values: usize,
    pub max_length: usize,
    /// Values that may stand beside the answer: the criterion's `allow`
    /// list, then the answers of the rubric's other criteria.
    pub allowed: Vec<ValueKey>,
}

impl Commit {
    pub fn new(max_values: usize, max_length: usize, allowed: Vec<ValueKey>) -> Commit {
        Commit {
            max_values,
            max_length,
            allowed,
        }
    }

    /// Why `text` cannot carry an answer: it is too long, or it states too
    /// many values of one kind.
    pub fn bounds_problem(&self, text: &str, values: &[Stated]) -> Option<String> {
        let chars = text.chars().count();
        if chars > self.max_length {
            return Some(format!(
                "it is {chars} characters long, more than the {} an answer may take",
                self.max_length
            ));
        }
        let (kind, n) = distinct_per_kind(values).into_iter().next()?;
        (n > self.max_values).then(|| {
            format!(
                "it gives {n} different {}, more than the {} an answer may list",
                kind.plural(),
                self.max_values
            )
        })
    }

    /// The values among `values` that compete with `answer`: of its kind,
    /// not the answer (`is_answer`) and not allowed.
    pub fn competitors<'v>(
        &self,
        answer: &ValueKind,
        is_answer: &dyn Fn(&ValueKey) -> bool,
        values: impl Iterator<Item = &'v Stated>,
    ) -> Vec<&'v Stated> {
        values
            .filter(|v| {
                &v.kind == answer && !is_answer(&v.key) && !is_one_of(&v.key, &self.allowed)
            })
            .collect()
    }
}

/// The answer a pattern stands for, as a value: a number, a date, or a
/// phrase that is one identifier. `None` for regexes and other phrases,
/// which have no kind to compete in.
pub(crate) fn answer_key(pattern: &TextPattern) -> Option<ValueKey> {
    match pattern {
        TextPattern::Number { value, .. } => Some(ValueKey::Number(*value)),
        TextPattern::Date(d, _) => Some(ValueKey::Date(*d)),
        TextPattern::Contains(p) => values::id_shape(p).map(|_| ValueKey::Text(p.clone())),
        TextPattern::Regex(_) => None,
    }
}

/// Whether the stated `key` is the pattern's answer.
pub(crate) fn is_answer(pattern: &TextPattern, key: &ValueKey) -> bool {
    match (pattern, key) {
        (TextPattern::Number { value, tolerance }, ValueKey::Number(n)) => {
            numbers::same_number(*n, *value, *tolerance)
        }
        // A long number read as an id (`123456789012`) is still a number.
        (TextPattern::Number { value, tolerance }, ValueKey::Text(t)) => {
            numbers::parse_number(t).is_some_and(|n| numbers::same_number(n, *value, *tolerance))
        }
        (TextPattern::Date(d, _), ValueKey::Date(x)) => d == x,
        (TextPattern::Contains(p), ValueKey::Text(t)) => p == t,
        _ => false,
    }
}

/// The value of `values` that is the pattern's answer, when it has a kind.
pub(crate) fn answer_in<'v>(pattern: &TextPattern, values: &'v [Stated]) -> Option<&'v Stated> {
    answer_key(pattern)?;
    values.iter().find(|v| is_answer(pattern, &v.key))
}

/// Each committed answer may stand beside the rubric's other answers: a
/// task asking for a date and an amount gets both in one message.
pub(crate) fn allow_each_others_answers(criteria: &mut [Criterion]) {
    let answers: Vec<(usize, ValueKey)> = criteria
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match &c.check {
            Check::Message(m) if m.commit.is_some() => answer_key(&m.pattern).map(|k| (i, k)),
            _ => None,
        })
        .collect();
    for (i, c) in criteria.iter_mut().enumerate() {
        if let Check::Message(m) = &mut c.check {
            if let Some(commit) = &mut m.commit {
                for (j, k) in &answers {
                    if *j != i && !is_answer(&m.pattern, k) {
                        commit.allowed.push(k.clone());
                    }
                }
            }
        }
    }
}

/// A value written in a rubric's `allow` list.
pub(crate) fn allowed_value(v: &toml::Value) -> Result<ValueKey, String> {
    match v {
        toml::Value::Integer(i) => Ok(ValueKey::Number(*i as f64)),
        toml::Value::Float(f) => Ok(ValueKey::Number(*f)),
        toml::Value::Datetime(d) => chrono::NaiveDate::parse_from_str(&d.to_string(), "%Y-%m-%d")
            .map(ValueKey::Date)
            .map_err(|_| format!("allow: {d} is not a date in YYYY-MM-DD form")),
        toml::Value::String(s) => {
            if let Ok(d) = chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d") {
                return Ok(ValueKey::Date(d));
            }
            if let Some(n) = numbers::parse_number(s) {
                return Ok(ValueKey::Number(n));
            }
            let t = numbers::normalize(s);
            if values::id_shape(&t).is_none() {
                return Err(format!("allow: {s:?} is not a number, a date or an id"));
            }
            Ok(ValueKey::Text(t))
        }
        _ => Err("allow lists numbers, dates (\"2025-04-01\") and ids".into()),
    }
}

/// How a value reads in evidence.
pub(crate) fn list(values: &[&Stated]) -> String {
    let mut shown: Vec<&str> = Vec::new();
    for v in values {
        if !shown.contains(&v.text.as_str()) {
            shown.push(&v.text);
        }
    }
    let more = shown.len().saturating_sub(5);
    let mut s = shown.into_iter().take(5).collect::<Vec<_>>().join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rubric::values::stated_values;

    fn commit() -> Commit {
        Commit::new(DEFAULT_MAX_VALUES, DEFAULT_MAX_LENGTH, Vec::new())
    }

    fn competing(pattern: &TextPattern, text: &str) -> Vec<String> {
        let values = stated_values(text);
        let answer = answer_in(pattern, &values).expect("the answer is stated");
        commit()
            .competitors(&answer.kind, &|k| is_answer(pattern, k), values.iter())
            .into_iter()
            .map(|v| v.text.clone())
            .collect()
    }

    #[test]
    fn candidates_of_the_same_kind_compete() {
        let money = TextPattern::Number {
            value: 79.0,
            tolerance: 0.0,
        };
        assert!(competing(
            &money,
            "We refunded $79.00; it shows in 5–10 business days."
        )
        .is_empty());
        assert_eq!(
            competing(&money, "It is $78.00, $79.00 or $80.00."),
            vec!["$78.00", "$80.00"]
        );
        assert_eq!(
            competing(&money, "Somewhere between $79.00 and $95.00."),
            vec!["$95.00"]
        );
        let id = TextPattern::Contains("inv-24073".into());
        assert!(competing(&id, "Refunded on INV-24073 (order ORD-5512).").is_empty());
        assert_eq!(competing(&id, "INV-24073 or INV-24074"), vec!["INV-24074"]);
    }

    #[test]
    fn bounds_stop_stuffing() {
        let stuffed: String = (1..=50).map(|i| format!("${i}.00 ")).collect();
        assert!(commit()
            .bounds_problem(&stuffed, &stated_values(&stuffed))
            .is_some_and(
                |p| p == "it gives 50 different amounts, more than the 6 an answer may list"
            ));
        let long = "a ".repeat(700);
        assert!(commit()
            .bounds_problem(&long, &[])
            .is_some_and(|p| p.contains("characters")));
        assert_eq!(
            commit().bounds_problem("It is $79.00.", &stated_values("It is $79.00.")),
            None
        );
    }
}
