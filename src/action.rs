//! What a performer does: call a tool, or say something to the customer.
//!
//! A message is a first-class action rather than a pseudo-tool, because
//! rubrics, exports and reviewers all need to tell "what was said" from
//! "what was done".

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One action, in the engine's own shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Action {
    /// A call of a declared tool or of a view's read tool.
    Tool {
        /// The tool's name, e.g. `issue_refund` or `view_invoices`.
        tool: String,
        /// The arguments, checked against the tool's JSON Schema when the
        /// step runs (a mismatch is an observation, not an error).
        #[serde(default)]
        #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
        args: Map<String, Value>,
    },
    /// Something said to the customer; the observation is their reply.
    Message {
        /// The text, as the customer reads it.
        message: String,
    },
}

impl Action {
    /// A tool call. Arguments that are not a JSON object count as none, so
    /// `json!({})` and `Value::Null` both call without arguments.
    pub fn tool(name: impl Into<String>, args: Value) -> Action {
        Action::Tool {
            tool: name.into(),
            args: match args {
                Value::Object(m) => m,
                _ => Map::new(),
            },
        }
    }

    /// A message to the customer.
    pub fn message(text: impl Into<String>) -> Action {
        Action::Message {
            message: text.into(),
        }
    }

    /// Parses any accepted action shape:
    /// - `{"tool": name, "args": {...}}` and `{"message": text}` (engine);
    /// - `{"name": name, "kwargs": {...}}`, with `respond`'s `content` as a
    ///   message (τ-bench);
    /// - `{"name": name, "arguments": {...} | "<json>"}` (OpenAI tool call),
    ///   also wrapped as `{"function": {...}}`.
    pub fn from_json(value: &Value) -> Result<Action, String> {
        let obj = value
            .as_object()
            .ok_or_else(|| "an action must be a JSON object".to_string())?;
        if let Some(f) = obj.get("function").and_then(Value::as_object) {
            return Action::from_json(&Value::Object(f.clone()));
        }
        if let Some(message) = obj.get("message") {
            return message
                .as_str()
                .map(Action::message)
                .ok_or_else(|| "`message` must be text".to_string());
        }
        let (name, args) = if let Some(tool) = obj.get("tool") {
            (tool, obj.get("args"))
        } else if let Some(name) = obj.get("name") {
            (name, obj.get("kwargs").or_else(|| obj.get("arguments")))
        } else {
            return Err(
                "expected {\"tool\": .., \"args\": {..}}, {\"message\": ..}, {\"name\": .., \"kwargs\": {..}} or {\"name\": .., \"arguments\": ..}"
                    .to_string(),
            );
        };
        let name = name
            .as_str()
            .ok_or_else(|| "the tool name must be text".to_string())?
            .to_string();
        let args = match args {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(Value::String(s)) if s.trim().is_empty() => Map::new(),
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(m)) => m,
                Ok(_) => return Err("`arguments` must encode a JSON object".to_string()),
                Err(e) => return Err(format!("`arguments` is not valid JSON: {e}")),
            },
            Some(_) => return Err("the arguments must be a JSON object".to_string()),
        };
        if name == "respond" {
            if let Some(content) = args.get("content").and_then(Value::as_str) {
                return Ok(Action::message(content));
            }
        }
        Ok(Action::Tool { tool: name, args })
    }

    /// The tool's name, or `None` for a message.
    pub fn tool_name(&self) -> Option<&str> {
        match self {
            Action::Tool { tool, .. } => Some(tool),
            Action::Message { .. } => None,
        }
    }

    /// The engine's own JSON shape (`{"tool", "args"}` or `{"message"}`),
    /// which [`Action::from_json`] reads back.
    pub fn to_json(&self) -> Value {
        match self {
            Action::Tool { tool, args } => {
                serde_json::json!({"tool": tool, "args": Value::Object(args.clone())})
            }
            Action::Message { message } => serde_json::json!({ "message": message }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_every_shape() {
        let engine = Action::from_json(&json!({"tool": "t", "args": {"a": 1}})).unwrap();
        let tau = Action::from_json(&json!({"name": "t", "kwargs": {"a": 1}})).unwrap();
        let openai = Action::from_json(&json!({"name": "t", "arguments": "{\"a\": 1}"})).unwrap();
        let wrapped = Action::from_json(
            &json!({"type": "function", "function": {"name": "t", "arguments": {"a": 1}}}),
        )
        .unwrap();
        assert_eq!(engine, tau);
        assert_eq!(engine, openai);
        assert_eq!(engine, wrapped);
        assert_eq!(
            Action::from_json(&json!({"name": "respond", "kwargs": {"content": "hi"}})).unwrap(),
            Action::message("hi")
        );
        assert_eq!(
            Action::from_json(&json!({"message": "hi"})).unwrap(),
            Action::message("hi")
        );
    }

    #[test]
    fn rejects_bad_shapes_with_reasons() {
        assert!(Action::from_json(&json!([1]))
            .unwrap_err()
            .contains("object"));
        assert!(Action::from_json(&json!({"foo": 1}))
            .unwrap_err()
            .contains("expected"));
        assert!(
            Action::from_json(&json!({"name": "t", "arguments": "{oops"}))
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert!(Action::from_json(&json!({"tool": 3}))
            .unwrap_err()
            .contains("text"));
    }
}

/// The fields named in `keep` of the JSON object `text`, each parsed as a
/// [`Value`] exactly as a whole-document parse would give it (a repeated
/// key keeps its last value); every other field is only checked and
/// skipped, never built. Input lines of replay and score carry large parts
/// they do not read (τ-bench's `expected` results, recorded observations),
/// and building those trees was a tenth of replay's time.
///
/// `None` when `text` is not one well-formed JSON object: the caller then
/// parses it whole, so its error says what is wrong exactly as before.
pub fn json_object_fields(text: &str, keep: &[&str]) -> Option<Map<String, Value>> {
    use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

    struct Fields<'k>(&'k [&'k str]);

    impl<'de> Visitor<'de> for Fields<'_> {
        type Value = Map<String, Value>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                if self.0.contains(&key.as_str()) {
                    let value: Value = map.next_value()?;
                    out.insert(key, value);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(out)
        }
    }

    impl<'de> DeserializeSeed<'de> for Fields<'_> {
        type Value = Map<String, Value>;

        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }

    let mut de = serde_json::Deserializer::from_str(text);
    let fields = Fields(keep).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(fields)
}

#[cfg(test)]
mod object_fields_tests {
    use super::*;
    use serde_json::json;

    /// Kept fields equal a whole parse's; skipped ones are gone; a repeated
    /// key keeps its last value, as `serde_json::Value` does.
    #[test]
    fn keeps_only_the_named_fields_as_a_whole_parse_would() {
        let text = r#"{"b": [1, 2.50, {"x": null}], "expected": {"deep": [[[1]]]}, "a": "\u00e9", "b": {"last": true}}"#;
        let got = json_object_fields(text, &["a", "b", "missing"]).expect("an object");
        let whole: Value = serde_json::from_str(text).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got["a"], whole["a"]);
        assert_eq!(got["b"], whole["b"]);
        assert_eq!(got["b"], json!({"last": true}));
        assert!(!got.contains_key("expected"));
    }

    /// Anything but one well-formed object is `None`, so the caller's own
    /// parse reports it, even when the broken part is a skipped field.
    #[test]
    fn anything_but_one_well_formed_object_is_none() {
        for bad in [
            "[1, 2]",
            "3",
            "\"text\"",
            "{\"a\": 1} {\"a\": 2}",
            "{\"a\": 1, \"expected\": [1, }",
            "{\"a\": tru}",
            "{\"a\": 1",
            "",
        ] {
            assert_eq!(json_object_fields(bad, &["a"]), None, "{bad}");
        }
        assert_eq!(json_object_fields(" {} \n", &["a"]), Some(Map::new()));
    }
}
