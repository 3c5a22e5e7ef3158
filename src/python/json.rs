//! Python `json.dumps(value)` with default arguments.
//!
//! Every JSON observation in τ-bench is produced this way, so the engine
//! must match it byte for byte: `", "` / `": "` separators, insertion key
//! order, `ensure_ascii` escaping and `float.__repr__` for floats. A direct
//! recursive writer into one `String` is used rather than a `serde_json`
//! `Formatter` because it is shorter, needs no `io::Write` adapter and makes
//! no per-value allocation.
//!
//! One deliberate deviation from BEHAVIOUR.md §1.5: U+007F (DEL) *is*
//! escaped, as `\u007f`, because CPython 3.11.7's encoder passes through
//! only `' '..='~'` (checked against `json.dumps("\x7f")`).

use serde_json::{Map, Number, Value};

use super::number::{float_repr_into, number_str_into};

/// Python `json.dumps(value)`: separators `", "` and `": "`, keys in stored
/// order, non-ASCII escaped as `\uXXXX`, ints as digits and floats as
/// `repr(float)` (`68` vs `68.0`).
pub fn dumps(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    dumps_into(&mut out, value);
    out
}

/// Appends [`dumps`] of `value` to `out`, so callers can reuse a buffer.
pub fn dumps_into(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dumps_into(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map),
    }
}

fn write_object(out: &mut String, map: &Map<String, Value>) {
    out.push('{');
    for (i, (key, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_string(out, key);
        out.push_str(": ");
        dumps_into(out, item);
    }
    out.push('}');
}

/// Ints print as digits; floats (including integral ones such as `12.0`)
/// through `repr`, so the int/float distinction survives rendering.
fn write_number(out: &mut String, n: &Number) {
    if n.is_f64() {
        if let Some(f) = n.as_f64() {
            // serde_json cannot hold non-finite values; Python would print
            // `NaN`/`Infinity` here, which `float_repr_into` never sees.
            float_repr_into(out, f);
            return;
        }
    }
    number_str_into(out, n);
}

/// Escape code per ASCII byte: 0 = copy verbatim, `b'u'` = `\u00XX`,
/// anything else = backslash followed by that byte.
const ESCAPES: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut i = 0;
    while i < 0x20 {
        table[i] = b'u';
        i += 1;
    }
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    // CPython escapes everything outside ' '..='~', so DEL too (BEHAVIOUR.md
    // §1.5 says otherwise, but CPython 3.11.7 prints `"\u007f"`).
    table[0x7f] = b'u';
    table
};

const HEX: &[u8; 16] = b"0123456789abcdef";

fn push_u_escape(out: &mut String, unit: u16) {
    out.push_str("\\u");
    for shift in [12u16, 8, 4, 0] {
        out.push(char::from(HEX[usize::from((unit >> shift) & 0xf)]));
    }
}

/// Writes `s` as a JSON string the way Python's `ensure_ascii=True` encoder
/// does: runs of plain ASCII are copied in one go, everything else escaped.
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            let code = ESCAPES[usize::from(b)];
            if code == 0 {
                i += 1;
                continue;
            }
            out.push_str(&s[start..i]);
            if code == b'u' {
                push_u_escape(out, u16::from(b));
            } else {
                out.push('\\');
                out.push(char::from(code));
            }
            i += 1;
            start = i;
        } else {
            out.push_str(&s[start..i]);
            // `i` is always on a char boundary: ASCII bytes advance by one and
            // multi-byte chars by their full UTF-8 length.
            let Some(c) = s[i..].chars().next() else {
                break;
            };
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                push_u_escape(out, *unit);
            }
            i += c.len_utf8();
            start = i;
        }
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or(Value::Null)
    }

    #[test]
    fn scalars() {
        assert_eq!(dumps(&json!(null)), "null");
        assert_eq!(dumps(&json!(true)), "true");
        assert_eq!(dumps(&json!(false)), "false");
        assert_eq!(dumps(&json!(68)), "68");
        assert_eq!(dumps(&json!(-7)), "-7");
        assert_eq!(dumps(&json!(68.0)), "68.0");
        assert_eq!(dumps(&json!(12.0)), "12.0");
        assert_eq!(dumps(&json!(0.04999999999999716)), "0.04999999999999716");
        assert_eq!(dumps(&json!(71.96000000000001)), "71.96000000000001");
        assert_eq!(dumps(&json!(1e-5)), "1e-05");
        assert_eq!(dumps(&json!(1e16)), "1e+16");
        assert_eq!(dumps(&json!(-0.0)), "-0.0");
        assert_eq!(dumps(&json!(u64::MAX)), "18446744073709551615");
        assert_eq!(dumps(&json!("")), "\"\"");
    }

    #[test]
    fn ints_and_floats_from_parsed_text() {
        let v = parse(r#"{"balance": 68, "price": 68.0, "x": 1819.92}"#);
        assert_eq!(dumps(&v), r#"{"balance": 68, "price": 68.0, "x": 1819.92}"#);
    }

    #[test]
    fn containers_and_separators() {
        assert_eq!(dumps(&json!([])), "[]");
        assert_eq!(dumps(&json!({})), "{}");
        assert_eq!(dumps(&json!([1, 2.5, "a", null])), r#"[1, 2.5, "a", null]"#);
        let v = parse(r#"{"b": 1, "a": {"z": [1, {"y": []}], "c": {}}, "0": false}"#);
        assert_eq!(
            dumps(&v),
            r#"{"b": 1, "a": {"z": [1, {"y": []}], "c": {}}, "0": false}"#
        );
    }

    #[test]
    fn key_order_is_insertion_order() {
        let mut map = Map::new();
        map.insert("zeta".into(), json!(1));
        map.insert("alpha".into(), json!(2));
        map.insert("mid".into(), json!(3));
        map.insert("zeta".into(), json!(4));
        assert_eq!(
            dumps(&Value::Object(map)),
            r#"{"zeta": 4, "alpha": 2, "mid": 3}"#
        );
    }

    #[test]
    fn escapes_like_ensure_ascii() {
        assert_eq!(dumps(&json!("a\"b\\c")), r#""a\"b\\c""#);
        assert_eq!(dumps(&json!("\n\r\t\u{8}\u{c}")), r#""\n\r\t\b\f""#);
        assert_eq!(dumps(&json!("\u{0}\u{1}\u{1f}")), r#""\u0000\u0001\u001f""#);
        assert_eq!(dumps(&json!("a/b")), r#""a/b""#);
        assert_eq!(dumps(&json!("\u{7f}")), r#""\u007f""#);
        assert_eq!(dumps(&json!("café")), r#""caf\u00e9""#);
        assert_eq!(dumps(&json!("Ω≈")), r#""\u03a9\u2248""#);
        assert_eq!(dumps(&json!("😀")), r#""\ud83d\ude00""#);
        assert_eq!(dumps(&json!("x😀y\u{ffff}")), r#""x\ud83d\ude00y\uffff""#);
        assert_eq!(
            dumps(&json!({"ключ": "é"})),
            r#"{"\u043a\u043b\u044e\u0447": "\u00e9"}"#
        );
        assert_eq!(
            dumps(&json!("\u{80}\u{7ff}\u{800}")),
            r#""\u0080\u07ff\u0800""#
        );
    }

    #[test]
    fn realistic_record() {
        let v = parse(
            r##"{"order_id": "#W2611340", "items": [{"price": 46.66, "qty": 1}], "total": 0.04999999999999716, "amount": 71.96000000000001, "balance": 68}"##,
        );
        assert_eq!(
            dumps(&v),
            r##"{"order_id": "#W2611340", "items": [{"price": 46.66, "qty": 1}], "total": 0.04999999999999716, "amount": 71.96000000000001, "balance": 68}"##
        );
    }

    #[test]
    fn dumps_into_appends() {
        let mut out = String::from("x=");
        dumps_into(&mut out, &json!([1.5]));
        assert_eq!(out, "x=[1.5]");
    }
}
