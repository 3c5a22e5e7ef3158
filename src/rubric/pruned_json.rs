//! JSON text parsed into only the parts some field paths reach.
//!
//! Why: the scope index reads one or two fields of every record of a
//! world (an order's `user_id`, a user's email and card ids). Parsing each
//! whole document into a tree allocated every string, list and map of it
//! only to drop them again, a fifth of `score`'s start on tau-airline. Here
//! whatever no path goes into is checked and skipped without being kept.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

/// `text` parsed as JSON, keeping only what `paths` (segments, `*` for
/// every member) reach; `None` when it is not JSON. Walking one of the
/// paths through the result (`FieldPath::values_in`) finds what it finds
/// in the whole document: what no path reaches is left out of objects,
/// and is `null` in lists, so list positions hold. What no path reaches is
/// still checked to be JSON, with one leniency: a number too large for a
/// float (`1e400`), which a whole parse refuses, is only scanned there.
pub fn parse(text: &str, paths: &[&[String]]) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Pruned {
        paths: paths.to_vec(),
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    Some(value)
}

/// The paths still to walk below the current value.
struct Pruned<'p> {
    paths: Vec<&'p [String]>,
}

impl Pruned<'_> {
    /// The paths that go on below `step` (a member's key or a list index).
    fn below(&self, step: impl Fn(&str) -> bool) -> Pruned<'_> {
        Pruned {
            paths: self
                .paths
                .iter()
                .filter_map(|p| p.split_first())
                .filter(|(first, _)| first.as_str() == "*" || step(first))
                .map(|(_, rest)| rest)
                .collect(),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.paths.iter().any(|p| p.is_empty()) {
            // A path ends here: its value whole.
            Value::deserialize(d)
        } else {
            d.deserialize_any(self)
        }
    }
}

impl<'de> Visitor<'de> for Pruned<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    // A path that goes on below a plain value reaches nothing there.
    fn visit_bool<E>(self, _: bool) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_str<E>(self, _: &str) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let below = self.below(|k| k == key);
            if below.paths.is_empty() {
                map.next_value::<IgnoredAny>()?;
            } else {
                let value = map.next_value_seed(below)?;
                out.insert(key, value);
            }
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let i = out.len();
            let below = self.below(|k| k.parse::<usize>() == Ok(i));
            let next = if below.paths.is_empty() {
                seq.next_element::<IgnoredAny>()?.map(|_| Value::Null)
            } else {
                seq.next_element_seed(below)?
            };
            match next {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::world::scope::FieldPath;
    use serde_json::Value;

    fn field(path: &str) -> FieldPath {
        FieldPath {
            text: format!("t.doc.{path}"),
            table: "t".into(),
            column: "doc".into(),
            path: path.split('.').map(str::to_string).collect(),
        }
    }

    #[test]
    fn each_path_finds_in_the_pruned_document_what_it_finds_in_the_whole() {
        let docs = [
            r#"{"user_id": "ada_1", "items": [{"id": 1, "price": 2.5}, {"id": "x"}]}"#,
            r#"{"email": "a@b.c", "address": {"address1": "1 Main St", "zip": 12345}}"#,
            r#"{"payment_methods": {"card_1": {"id": "card_1", "last4": "0001"}, "gift_2": {"id": 7}}}"#,
            r#"{"saved_passengers": [{"dob": "1990-01-01"}, null, {"dob": null}, {"dob": "2000-02-02"}]}"#,
            r#"{"user_id": 5, "user_id": "later", "address": "not an object", "items": 3}"#,
            r#"[{"user_id": "in a list"}, {"user_id": "second"}]"#,
            r#""just text""#,
            r#"{"deep": {"a": {"b": {"c": [[1, 2], [3, {"d": "e"}]]}}}}"#,
            r#"{"big": 1e400, "neg": -12, "f": 0.1, "t": true, "n": null, "s": "é\u00e9"}"#,
        ];
        let paths = [
            "user_id",
            "items.*.id",
            "items.1.id",
            "items.0",
            "email",
            "address.address1",
            "address.zip",
            "payment_methods.*.id",
            "saved_passengers.*.dob",
            "saved_passengers.3.dob",
            "0.user_id",
            "*.user_id",
            "deep.a.b.c.*.*",
            "deep.a.b.c.1.1.d",
            "f",
            "s",
            "t",
            "nowhere",
        ];
        for doc in docs {
            let Ok(whole) = serde_json::from_str::<Value>(doc) else {
                // A number out of a float's range refuses the whole parse,
                // and a path that reaches it, but is only scanned elsewhere.
                assert!(doc.contains("1e400"), "{doc}");
                assert_eq!(parse(doc, &[field("big").path.as_slice()]), None);
                let pruned = parse(doc, &[field("s").path.as_slice()]).expect("JSON");
                assert_eq!(pruned, serde_json::json!({"s": "éé"}));
                continue;
            };
            for path in paths {
                let f = field(path);
                let pruned = parse(doc, &[f.path.as_slice()]).expect("JSON");
                assert_eq!(f.values_in(&pruned), f.values_in(&whole), "{path} in {doc}");
            }
            // Several paths at once, as one column's fields are read.
            let all: Vec<FieldPath> = paths.iter().map(|p| field(p)).collect();
            let slices: Vec<&[String]> = all.iter().map(|f| f.path.as_slice()).collect();
            let pruned = parse(doc, &slices).expect("JSON");
            for f in &all {
                assert_eq!(
                    f.values_in(&pruned),
                    f.values_in(&whole),
                    "{} in {doc} (all paths)",
                    f.text
                );
            }
        }
    }

    #[test]
    fn text_that_is_not_json_is_refused_whole() {
        let path = vec!["a".to_string()];
        for text in [
            "",
            "{",
            r#"{"a": 1,}"#,
            r#"{"a": 1} trailing"#,
            r#"{"b": [1, }"#,
            "nul",
        ] {
            assert_eq!(parse(text, &[path.as_slice()]), None, "{text:?}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
        }
        assert_eq!(
            parse(
                r#" {"b": {"skipped": [1, {"x": "y"}]}, "a": [1]} "#,
                &[path.as_slice()]
            ),
            Some(serde_json::json!({"a": [1]}))
        );
    }
}
