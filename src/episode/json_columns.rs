//! Columns a world declares JSON (`json_columns`): SQLite stores JSON as
//! text, and without this the agent would read `"[\"penicillin\"]"`, an
//! escaped string, where the record holds a list.

use serde_json::{Map, Value};

/// Parses each declared column of each row from JSON text into its value.
/// NULL stays null and a number stays a number (both are JSON already);
/// text that is not JSON is an error naming the column, since the world
/// promised JSON there.
pub(super) fn decode(rows: &mut [Map<String, Value>], columns: &[String]) -> Result<(), String> {
    if columns.is_empty() {
        return Ok(());
    }
    for row in rows.iter_mut() {
        for column in columns {
            if let Some(value) = row.get_mut(column) {
                if let Value::String(text) = value {
                    *value = serde_json::from_str(text).map_err(|e| {
                        format!("the column `{column}` is declared JSON (json_columns) but holds text that is not JSON ({e}): {text:?}")
                    })?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::decode;
    use serde_json::{json, Map, Value};

    fn row(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn declared_columns_become_json_values() {
        let mut rows = vec![
            row(json!({"id": "P-1", "allergies": "[\"penicillin\"]", "note": "[1]"})),
            row(json!({"id": "P-2", "allergies": null, "note": "x"})),
        ];
        decode(&mut rows, &["allergies".into()]).unwrap();
        assert_eq!(rows[0]["allergies"], json!(["penicillin"]));
        assert_eq!(
            rows[0]["note"],
            json!("[1]"),
            "undeclared columns stay text"
        );
        assert_eq!(rows[1]["allergies"], Value::Null);
    }

    #[test]
    fn text_that_is_not_json_is_an_error_naming_the_column() {
        let mut rows = vec![row(json!({"allergies": "penicillin"}))];
        let e = decode(&mut rows, &["allergies".into()]).unwrap_err();
        assert!(e.contains("`allergies`") && e.contains("not JSON"), "{e}");
    }
}
