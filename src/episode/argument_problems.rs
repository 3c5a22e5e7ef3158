//! JSON-Schema validation errors as [`ArgumentProblem`]s: the data behind
//! the `invalid_arguments` message, for front ends that word it themselves.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::ValidationError;
use serde_json::Value;

use crate::observation::ArgumentProblem;

/// The problems one validation error stands for: usually one; one per
/// argument for `additionalProperties`.
pub(super) fn problems(e: &ValidationError<'_>) -> Vec<ArgumentProblem> {
    let at = dotted(&e.instance_path().to_string());
    let problem = |field: String, expected: Value| ArgumentProblem {
        field,
        keyword: e.kind().keyword().to_string(),
        expected,
    };
    let expected = match e.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| property.to_string());
            return vec![problem(join(&at, &name), Value::Null)];
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            return unexpected
                .iter()
                .map(|name| problem(join(&at, name), Value::Null))
                .collect();
        }
        ValidationErrorKind::Type { kind } => match kind {
            TypeKind::Single(t) => Value::from(t.to_string()),
            TypeKind::Multiple(set) => set.iter().map(|t| Value::from(t.to_string())).collect(),
        },
        ValidationErrorKind::Pattern { pattern } => Value::from(pattern.as_str()),
        ValidationErrorKind::Format { format } => Value::from(format.as_str()),
        ValidationErrorKind::Enum { options } => (**options).clone(),
        ValidationErrorKind::Constant { expected_value } => (**expected_value).clone(),
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => limit.clone(),
        ValidationErrorKind::MinLength { limit }
        | ValidationErrorKind::MaxLength { limit }
        | ValidationErrorKind::MinItems { limit }
        | ValidationErrorKind::MaxItems { limit }
        | ValidationErrorKind::MinProperties { limit }
        | ValidationErrorKind::MaxProperties { limit } => Value::from(*limit),
        ValidationErrorKind::MultipleOf { multiple_of } => Value::from(*multiple_of),
        ValidationErrorKind::AnyOf { context }
        | ValidationErrorKind::OneOfNotValid { context }
        | ValidationErrorKind::OneOfMultipleValid { context } => context
            .iter()
            .map(|alternative| {
                let problems: Vec<ArgumentProblem> =
                    alternative.iter().flat_map(problems).collect();
                serde_json::to_value(problems).unwrap_or(Value::Null)
            })
            .collect(),
        _ => Value::Null,
    };
    vec![problem(at, expected)]
}

/// `/items/0/qty` → `items.0.qty`, as the engine's messages write paths.
fn dotted(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

fn join(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_string()
    } else {
        format!("{at}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn all(schema: Value, instance: Value) -> Vec<ArgumentProblem> {
        let validator = jsonschema::validator_for(&schema).unwrap();
        validator
            .iter_errors(&instance)
            .flat_map(|e| problems(&e))
            .collect()
    }

    fn triples(problems: &[ArgumentProblem]) -> Vec<(&str, &str, Value)> {
        problems
            .iter()
            .map(|p| (p.field.as_str(), p.keyword.as_str(), p.expected.clone()))
            .collect()
    }

    #[test]
    fn each_keyword_names_the_field_and_what_it_expects() {
        let schema = json!({
            "type": "object",
            "required": ["invoice_id", "amount"],
            "additionalProperties": false,
            "properties": {
                "invoice_id": {"type": "string", "pattern": "^INV-[0-9]+$"},
                "amount": {"type": "number", "exclusiveMinimum": 0},
                "reason": {"type": "string", "minLength": 5},
                "kind": {"enum": ["refund", "credit"]},
                "filter": {"type": "object", "properties": {"status": {"type": "string"}}}
            }
        });
        let got = all(
            schema,
            json!({"invoice_id": "X", "reason": "no", "kind": "gift", "filter": {"status": 3}, "colour": "red"}),
        );
        let mut got = triples(&got);
        got.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        assert_eq!(
            got,
            vec![
                ("amount", "required", Value::Null),
                ("colour", "additionalProperties", Value::Null),
                ("filter.status", "type", json!("string")),
                ("invoice_id", "pattern", json!("^INV-[0-9]+$")),
                ("kind", "enum", json!(["refund", "credit"])),
                ("reason", "minLength", json!(5)),
            ]
        );
    }

    #[test]
    fn alternatives_list_what_each_would_need() {
        let schema = json!({
            "type": "object",
            "anyOf": [{"required": ["email"]}, {"required": ["customer_id"]}]
        });
        let got = all(schema, json!({}));
        assert_eq!(got.len(), 1);
        assert_eq!(
            (got[0].field.as_str(), got[0].keyword.as_str()),
            ("", "anyOf")
        );
        assert_eq!(
            got[0].expected,
            json!([
                [{"field": "email", "keyword": "required", "expected": null}],
                [{"field": "customer_id", "keyword": "required", "expected": null}]
            ])
        );
    }
}
