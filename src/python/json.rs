pub fn dumps(v: &serde_json::Value) -> String { v.to_string() }
