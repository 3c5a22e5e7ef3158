//! The values an expression evaluates to, and their conversions to
//! Python's `float()` and `str()`.

use super::error::CalcError;
use super::INT_MAX_STR_DIGITS;
use crate::python::bigint::{BigInt, FloatOverflow};
use crate::python::number::float_repr;

/// A Python object that an expression in the whitelist can evaluate to.
#[derive(Debug, Clone)]
pub(super) enum Value {
    Int(BigInt),
    Float(f64),
    Complex(f64, f64),
    Tuple,
    Ellipsis,
}

impl Value {
    /// `type(value).__name__`, as exception messages spell it.
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Complex(..) => "complex",
            Value::Tuple => "tuple",
            Value::Ellipsis => "ellipsis",
        }
    }
}

/// The `OverflowError` text of `float(int)`, also raised for ints past
/// [`BigInt`]'s size limit.
pub(super) const INT_TOO_LARGE: &str = "int too large to convert to float";

/// `float(int)`.
pub(super) fn int_to_f64(i: &BigInt) -> Result<f64, CalcError> {
    i.to_f64()
        .map_err(|FloatOverflow| CalcError::new(INT_TOO_LARGE))
}

/// `float(value)`, the step between `eval` and `round`.
pub(super) fn to_float(value: &Value) -> Result<f64, CalcError> {
    match value {
        Value::Int(i) => int_to_f64(i),
        Value::Float(f) => Ok(*f),
        other => Err(CalcError::new(format!(
            "float() argument must be a string or a real number, not '{}'",
            other.type_name()
        ))),
    }
}

/// Python `str(value)`, used where CPython names a non-function callee.
pub(super) fn python_str(value: &Value) -> Result<String, CalcError> {
    Ok(match value {
        Value::Int(i) => {
            let text = i.to_decimal();
            let digits = text.trim_start_matches('-').len();
            if digits > INT_MAX_STR_DIGITS {
                return Err(CalcError::new(format!(
                    "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string \
                     conversion; use sys.set_int_max_str_digits() to increase the limit"
                )));
            }
            text
        }
        Value::Float(f) => float_repr(*f),
        Value::Complex(re, im) => complex_repr(*re, *im),
        Value::Tuple => "()".to_string(),
        Value::Ellipsis => "Ellipsis".to_string(),
    })
}

/// `repr(complex)`: parts in repr style without a forced `.0`.
fn complex_repr(re: f64, im: f64) -> String {
    fn part(x: f64) -> String {
        let text = float_repr(x);
        match text.strip_suffix(".0") {
            Some(short) => short.to_string(),
            None => text,
        }
    }
    let imag = part(im);
    if re == 0.0 && re.is_sign_positive() {
        return format!("{imag}j");
    }
    let sign = if im.is_sign_negative() { "" } else { "+" };
    format!("({}{sign}{imag}j)", part(re))
}

#[cfg(test)]
mod tests {
    use crate::python::calc::{calculate_text, check};

    #[test]
    fn float_conversion_errors() {
        check(&[
            (
                "(-8)**0.5",
                "Error: float() argument must be a string or a real number, not 'complex'",
            ),
            (
                "()",
                "Error: float() argument must be a string or a real number, not 'tuple'",
            ),
            (
                "...",
                "Error: float() argument must be a string or a real number, not 'ellipsis'",
            ),
            (
                "()*-(2**63)",
                "Error: float() argument must be a string or a real number, not 'tuple'",
            ),
        ]);
        assert_eq!(
            calculate_text(&"9".repeat(4300)),
            "Error: int too large to convert to float"
        );
    }
}
