//! A world's **scope**: whose records a task is about, and which of their
//! fields are sensitive. Declared in `world.toml`:
//!
//! ```toml
//! [scope]
//! subject = "users"                                  # the table whose record a task is about
//! reach = [                                          # how records reach the subject, in order
//!   { table = "orders", via = "user_id" },           # orders whose user_id is a subject key
//!   { table = "payments", via = "order_id", from = "orders" },
//! ]
//! sensitive = ["users.email", "users.address.address1"]
//! ```
//!
//! A task's subject is the record of the subject table its `records` name;
//! the records that reach it (through `reach`) are the subject's too. Rubric
//! criteria of kind `scope` use this to penalize writes, or attempted
//! writes, on anyone else's records, and messages that disclose another
//! subject's sensitive values. Tables the scope does not name (a product
//! catalogue, flights) belong to nobody.

use serde::Serialize;
use serde_json::Value;

/// The validated `[scope]` of a world.
#[derive(Debug, Clone, Serialize)]
pub struct Scope {
    /// The table whose record a task is about.
    pub subject: String,
    /// How other tables' records reach the subject, in order.
    pub reach: Vec<Reach>,
    /// Fields never to be told about anyone but the subject.
    pub sensitive: Vec<FieldPath>,
}

/// Records of `table` whose `via` field holds the key of an in-scope
/// record of `from`.
#[derive(Debug, Clone, Serialize)]
pub struct Reach {
    /// The table whose records are reached.
    pub table: String,
    /// The field of `table` holding the key of a `from` record.
    pub via: FieldPath,
    /// The table already in scope that `via` points at.
    pub from: String,
}

/// A field of a table's records: a column, or a path into a JSON column
/// (the document column when the first segment is not a column). `*`
/// stands for every member of an object or list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldPath {
    /// As written, e.g. `users.address.address1`.
    pub text: String,
    /// The table the field belongs to.
    pub table: String,
    /// The column holding the value (or the JSON document).
    pub column: String,
    /// Segments inside the column's JSON (empty: the column itself).
    pub path: Vec<String>,
}

impl Scope {
    /// Every table the scope names: the subject first, then reached ones.
    pub fn tables(&self) -> Vec<&str> {
        let mut out = vec![self.subject.as_str()];
        for r in &self.reach {
            if !out.contains(&r.table.as_str()) {
                out.push(&r.table);
            }
        }
        out
    }
}

impl FieldPath {
    /// The values this field holds in a record whose column value is
    /// `column` (JSON text is parsed when the path goes inside it).
    pub fn values(&self, column: &Value) -> Vec<Value> {
        if self.path.is_empty() {
            return match column {
                Value::Null => Vec::new(),
                v => vec![v.clone()],
            };
        }
        let doc = match column {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(v) => v,
                Err(_) => return Vec::new(),
            },
            other => other.clone(),
        };
        self.values_in(&doc).into_iter().cloned().collect()
    }

    /// The values this field's path reaches inside `doc`, the column's
    /// value already parsed (borrowed: a caller reading several fields of
    /// one document parses it once and copies nothing).
    pub fn values_in<'a>(&self, doc: &'a Value) -> Vec<&'a Value> {
        let mut current = vec![doc];
        for seg in &self.path {
            current = current
                .into_iter()
                .flat_map(|v| match (seg.as_str(), v) {
                    ("*", Value::Object(m)) => m.values().collect(),
                    ("*", Value::Array(a)) => a.iter().collect(),
                    (k, Value::Object(m)) => m.get(k).into_iter().collect(),
                    (k, Value::Array(a)) => k
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| a.get(i))
                        .into_iter()
                        .collect(),
                    _ => Vec::new(),
                })
                .collect::<Vec<&Value>>();
        }
        current.into_iter().filter(|v| !v.is_null()).collect()
    }
}

/// A value as text (strings as they are, numbers as written); `None` for
/// objects, lists and nulls.
pub fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_walk_into_documents() {
        let p = FieldPath {
            text: "users.payment_methods.*.id".into(),
            table: "users".into(),
            column: "doc".into(),
            path: vec!["payment_methods".into(), "*".into(), "id".into()],
        };
        let doc =
            json!({"payment_methods": {"a": {"id": "card_1"}, "b": {"id": "gift_2"}}}).to_string();
        assert_eq!(
            p.values(&Value::String(doc)),
            vec![json!("card_1"), json!("gift_2")]
        );
        let col = FieldPath {
            path: Vec::new(),
            ..p
        };
        assert_eq!(col.values(&json!("x@y.z")), vec![json!("x@y.z")]);
        assert!(col.values(&Value::Null).is_empty());
    }
}
