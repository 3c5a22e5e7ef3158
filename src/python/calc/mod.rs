//! τ-bench's `calculate` tool, reproduced without a Python interpreter.
//!
//! The reference is
//! `str(round(float(eval(expression, {"__builtins__": None}, {})), 2))`
//! behind a character whitelist, with any exception rendered as
//! `Error: <message>`. Within the whitelist (`0-9 + - * / ( ) .` and space)
//! that is a tiny language, but its *error messages* come from CPython
//! 3.11's tokenizer and two-pass PEG parser, whose choice of message depends
//! on how far the parser looked ahead before giving up (`(1 2` is "'(' was
//! never closed" while `(1 2 3` is "Perhaps you forgot a comma?"). So
//! `parser` mirrors the relevant rules of CPython's `python.gram` in the
//! same order, with the same lazy token fetching, memoisation and
//! invalid-rule second pass, rather than being a plain precedence parser.
//!
//! Evaluation follows CPython's numeric objects: exact ints (see
//! [`crate::python::bigint`]), IEEE doubles with CPython's `float_pow` /
//! floor-division rules, complex numbers (reachable through `(-8)**0.5`),
//! the empty tuple `()` and `...` (Ellipsis).
//!
//! Known, documented divergences (inputs no agent plausibly sends):
//! * ints larger than [`crate::python::bigint::MAX_BITS`] bits are refused with
//!   `int too large to convert to float` where CPython would compute them
//!   for a very long time (the spec notes `9**9**9` hangs the reference);
//! * CPython's compile-time recursion limit depends on how deep the Python
//!   stack was when `eval` ran; `COMPILE_DEPTH_LIMIT` assumes τ-bench's
//!   9-frame worker stack, so an expression nested ~2,970 deep may fail at
//!   a slightly different depth under another caller.
//!
//! The stages, in the order `calculate` runs them: `lexer` (CPython's
//! tokenizer), `parser` (into the `ast` arena), the compiler's depth check
//! (`ast::depth`), then `eval` over `value`s with the numeric kernels in
//! `arith`. Every stage fails with the one [`CalcError`].

mod arith;
mod ast;
mod error;
mod eval;
mod lexer;
mod parser;
mod value;

pub use error::CalcError;

use super::number::round_half_even;
use error::syntax_error_at;

/// The observation τ-bench produces for `calculate(expression)`: the rounded
/// result as Python's `str(float)` (`4.0`, `0.33`, `1e+20`, `inf`), or
/// `Error: <message>`. The tests' oracle: the engine's `calculate` SQL
/// function formats the result itself.
#[cfg(test)]
pub fn calculate_text(expression: &str) -> String {
    match calculate(expression) {
        Ok(value) => super::number::float_repr(value),
        Err(err) => format!("Error: {err}"),
    }
}

/// The observation for a `calculate` call whose `expression` argument is
/// any JSON value, since models do send numbers and lists.
///
/// τ-bench scans the argument with `all(char in WHITELIST for char in
/// expression)` before `eval`: a number, bool or null is not iterable; a
/// list (or an object's keys) is iterated element-wise, where each element
/// must be a string that is a *substring* of the whitelist, and a list that
/// passes is then rejected by `eval` itself. The exception text reaches the
/// observation through the environment's generic `Error: ` wrapper.
#[cfg(test)]
pub fn calculate_json_text(expression: &serde_json::Value) -> String {
    use serde_json::Value;
    fn python_type(v: &Value) -> &'static str {
        match v {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "int",
            Value::String(_) => "str",
            Value::Array(_) => "list",
            Value::Object(_) => "dict",
        }
    }
    let whitelist = std::str::from_utf8(WHITELIST).unwrap_or_default();
    let check = |item: &Value| -> Option<String> {
        match item {
            Value::String(s) if whitelist.contains(s.as_str()) => None,
            Value::String(_) => Some("Error: invalid characters in expression".to_string()),
            other => Some(format!(
                "Error: 'in <string>' requires string as left operand, not {}",
                python_type(other)
            )),
        }
    };
    let failure = match expression {
        Value::String(s) => return calculate_text(s),
        Value::Array(items) => items.iter().find_map(check),
        Value::Object(map) => map.keys().find_map(|k| check(&Value::String(k.clone()))),
        other => {
            return format!("Error: '{}' object is not iterable", python_type(other));
        }
    };
    failure
        .unwrap_or_else(|| "Error: eval() arg 1 must be a string, bytes or code object".to_string())
}

/// Evaluates `expression` exactly as τ-bench's `calculate` does and returns
/// `round(float(result), 2)`.
///
/// The parser and evaluator recurse as deeply as CPython's do (thousands of
/// levels for hostile input), so long expressions run on a helper thread
/// with a stack sized for that; short ones, the normal case, run inline.
pub fn calculate(expression: &str) -> Result<f64, CalcError> {
    if expression.len() <= INLINE_MAX_LEN {
        return calculate_on_this_stack(expression);
    }
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("calculate".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, || calculate_on_this_stack(expression))
            // Python reports running out of memory as a MemoryError, whose
            // message is empty; a thread we cannot start is the same thing.
            .map_err(|_| CalcError::new(""))?;
        worker.join().map_err(|_| CalcError::new(""))?
    })
}

/// Inputs up to this length nest at most ~50 levels, which any thread's
/// stack can take.
const INLINE_MAX_LEN: usize = 100;

/// Enough for [`parser::MAX_PARSER_LEVEL`] nested rules in an unoptimised build.
const DEEP_STACK_BYTES: usize = 64 << 20;

fn calculate_on_this_stack(expression: &str) -> Result<f64, CalcError> {
    if !expression.bytes().all(|b| WHITELIST.contains(&b)) {
        return Err(CalcError::new("invalid characters in expression"));
    }
    // `eval` of a string skips leading spaces and tabs before compiling.
    let source = expression.trim_start_matches(' ');
    if source.is_empty() {
        return Err(syntax_error_at("invalid syntax", 0));
    }
    let (nodes, root) = parser::parse(source)?;
    if ast::depth(&nodes, root) > COMPILE_DEPTH_LIMIT {
        return Err(CalcError::new(
            "maximum recursion depth exceeded during compilation",
        ));
    }
    let value = eval::eval(&nodes, root)?;
    let float = value::to_float(&value)?;
    Ok(round_half_even(float, 2))
}

const WHITELIST: &[u8] = b"0123456789+-*/(). ";

/// Deepest expression tree CPython 3.11 compiles. Its AST optimiser allows
/// 3 × the recursion limit (1000) minus 3 × the Python stack depth at the
/// `eval` call. In τ-bench that call sits 9 frames deep in a worker thread
/// (`Thread._bootstrap`, `_bootstrap_inner`, `run`, `_worker`,
/// `_WorkItem.run`, `_run`, `agent.solve`, `env.step`, `invoke`), giving
/// 3000 − 27. A different caller stack would move this by 3 per frame.
const COMPILE_DEPTH_LIMIT: usize = 2973;

/// Python's default `sys.get_int_max_str_digits()`.
const INT_MAX_STR_DIGITS: usize = 4300;

/// Asserts the observation for each `(expression, observation)` pair. The
/// tests of every stage go through the whole of [`calculate_text`], since
/// that text is the contract with τ-bench.
#[cfg(test)]
fn check(cases: &[(&str, &str)]) {
    for (input, want) in cases {
        assert_eq!(calculate_text(input), *want, "calculate({input:?})");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gold_samples() {
        check(&[
            ("3131.1 + 4777.75 + 367.38", "8276.23"),
            ("135.24 - 153.23", "-17.99"),
            ("164.28", "164.28"),
            ("2 * ((350 - 122) + (499 - 127))", "1200.0"),
        ]);
    }

    #[test]
    fn result_table() {
        check(&[
            ("2 + 2", "4.0"),
            ("1/3", "0.33"),
            ("100/7", "14.29"),
            ("0.1+0.2", "0.3"),
            ("2.675", "2.67"),
            ("0.125", "0.12"),
            ("-0.001", "-0.0"),
            ("10**20", "1e+20"),
            ("10000000000000000", "1e+16"),
            ("1000000000000000", "1000000000000000.0"),
            ("123456789*1000000000", "1.23456789e+17"),
            ("2.0**1023*2", "inf"),
            ("-(2.0**1023*2)", "-inf"),
            ("2.0**1023*2-2.0**1023*2", "nan"),
            ("99999999999999999999", "1e+20"),
        ]);
    }

    #[test]
    fn language_rules() {
        check(&[
            ("12", "12.0"),
            ("1.", "1.0"),
            (".5", "0.5"),
            ("00.5", "0.5"),
            ("0", "0.0"),
            ("00", "0.0"),
            ("-7//2", "-4.0"),
            ("7//-2", "-4.0"),
            ("7.5//2", "3.0"),
            ("-7.5//2", "-4.0"),
            ("2 ** 3 ** 2", "512.0"),
            ("-2**2", "-4.0"),
            ("2**-1", "0.5"),
            ("1--2", "3.0"),
            ("1++2", "3.0"),
            ("  1 + 1", "2.0"),
            ("(1)", "1.0"),
            ("((((1))))", "1.0"),
            ("-----1", "-1.0"),
            ("0/-5", "-0.0"),
            ("0*-1", "0.0"),
            ("0.0*-1", "-0.0"),
            ("2**200/2**100", "1.2676506002282294e+30"),
            ("10**20+1-10**20", "1.0"),
            ("1/2**2000", "0.0"),
            ("2**-2000", "0.0"),
            ("10.0**-310", "0.0"),
            ("(-8)**2", "64.0"),
            ("(-8.0)**3", "-512.0"),
            ("(-1)**0.0", "1.0"),
            ("0**0", "1.0"),
        ]);
    }

    #[test]
    fn empty_input() {
        check(&[
            ("", "Error: invalid syntax (<string>, line 0)"),
            ("   ", "Error: invalid syntax (<string>, line 0)"),
        ]);
    }

    #[test]
    fn whitelist() {
        for input in [
            "1\t+1", "1\n", "1e5", "1,2", "5%2", "1_000", "0x10", "abs(1)",
        ] {
            assert_eq!(
                calculate_text(input),
                "Error: invalid characters in expression",
                "{input:?}"
            );
        }
    }

    #[test]
    fn compile_depth_limit() {
        let compile = "Error: maximum recursion depth exceeded during compilation";
        // An AST nested COMPILE_DEPTH_LIMIT deep compiles, one more does not.
        let ok = COMPILE_DEPTH_LIMIT - 1;
        assert_eq!(calculate_text(&format!("{}1", "-".repeat(ok))), "1.0");
        assert_eq!(calculate_text(&format!("{}1", "-".repeat(ok + 1))), compile);
        assert_eq!(calculate_text(&format!("1{}", "+1".repeat(ok))), "2973.0");
        assert_eq!(
            calculate_text(&format!("1{}", "+1".repeat(ok + 1))),
            compile
        );
    }

    #[test]
    fn non_string_arguments() {
        use serde_json::json;
        let cases = [
            (json!("2 + 2"), "4.0"),
            (json!(5), "Error: 'int' object is not iterable"),
            (json!(1.5), "Error: 'float' object is not iterable"),
            (json!(true), "Error: 'bool' object is not iterable"),
            (json!(null), "Error: 'NoneType' object is not iterable"),
            (
                json!([]),
                "Error: eval() arg 1 must be a string, bytes or code object",
            ),
            (
                json!(["12", "+-*"]),
                "Error: eval() arg 1 must be a string, bytes or code object",
            ),
            (json!(["x"]), "Error: invalid characters in expression"),
            (json!(["21"]), "Error: invalid characters in expression"),
            (
                json!([1]),
                "Error: 'in <string>' requires string as left operand, not int",
            ),
            (
                json!([null]),
                "Error: 'in <string>' requires string as left operand, not NoneType",
            ),
            (
                json!([[]]),
                "Error: 'in <string>' requires string as left operand, not list",
            ),
            (
                json!({"1": 2}),
                "Error: eval() arg 1 must be a string, bytes or code object",
            ),
            (json!({"a": 1}), "Error: invalid characters in expression"),
        ];
        for (value, want) in cases {
            assert_eq!(calculate_json_text(&value), want, "{value}");
        }
    }

    #[test]
    fn calc_error_is_an_error() {
        let err = calculate("1/0").err();
        assert_eq!(
            err.as_ref().map(CalcError::message),
            Some("division by zero")
        );
        let boxed: Option<Box<dyn std::error::Error>> = err.map(|e| Box::new(e) as _);
        assert_eq!(
            boxed.map(|e| e.to_string()),
            Some("division by zero".into())
        );
        assert_eq!(calculate("2 + 2"), Ok(4.0));
    }
}
