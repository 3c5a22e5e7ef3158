//! CPython's arithmetic on its three numeric types: exact ints
//! ([`BigInt`]), IEEE doubles with `float_pow` and floor-division rules,
//! and complex numbers (`_Py_c_*`), each raising the errors CPython raises.

use super::ast::BinOp;
use super::error::CalcError;
use super::value::{int_to_f64, Value, INT_TOO_LARGE};
use crate::python::bigint::{BigInt, FloatOverflow, TooBig};

fn too_big(_: TooBig) -> CalcError {
    CalcError::new(INT_TOO_LARGE)
}

pub(super) fn int_op(op: BinOp, x: &BigInt, y: &BigInt) -> Result<Value, CalcError> {
    Ok(match op {
        BinOp::Add => Value::Int(x.add(y)),
        BinOp::Sub => Value::Int(x.sub(y)),
        BinOp::Mul => Value::Int(x.mul(y).map_err(too_big)?),
        BinOp::Div => match x.true_div(y) {
            None => return Err(CalcError::new("division by zero")),
            Some(Ok(q)) => Value::Float(q),
            Some(Err(FloatOverflow)) => {
                return Err(CalcError::new(
                    "integer division result too large for a float",
                ))
            }
        },
        BinOp::FloorDiv => match x.floor_div(y) {
            Some(q) => Value::Int(q),
            None => return Err(CalcError::new("integer division or modulo by zero")),
        },
        BinOp::Pow => {
            if y.is_negative() {
                // long_pow hands negative exponents to float_pow.
                let fx = int_to_f64(x)?;
                let fy = int_to_f64(y)?;
                return float_pow(fx, fy);
            }
            Value::Int(x.pow(y).map_err(too_big)?)
        }
    })
}

pub(super) fn float_op(op: BinOp, x: f64, y: f64) -> Result<Value, CalcError> {
    Ok(Value::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return Err(CalcError::new("float division by zero"));
            }
            x / y
        }
        BinOp::FloorDiv => {
            if y == 0.0 {
                return Err(CalcError::new("float floor division by zero"));
            }
            float_floor_div(x, y)
        }
        BinOp::Pow => return float_pow(x, y),
    }))
}

/// CPython's `_float_div_mod`, floor-quotient half.
fn float_floor_div(vx: f64, wx: f64) -> f64 {
    let modulo = vx % wx;
    let mut div = (vx - modulo) / wx;
    if modulo != 0.0 && ((wx < 0.0) != (modulo < 0.0)) {
        div -= 1.0;
    }
    if div != 0.0 {
        let mut floordiv = div.floor();
        if div - floordiv > 0.5 {
            floordiv += 1.0;
        }
        floordiv
    } else {
        (0.0f64).copysign(vx / wx)
    }
}

fn is_odd_integer(x: f64) -> bool {
    x.is_finite() && x == x.trunc() && (x % 2.0).abs() == 1.0
}

/// CPython's `float_pow`, including the hand-off to complex for a negative
/// base with a fractional exponent and OverflowError with errno text.
fn float_pow(iv: f64, iw: f64) -> Result<Value, CalcError> {
    let float = |x: f64| Ok(Value::Float(x));
    if iw == 0.0 {
        return float(1.0);
    }
    if iv.is_nan() {
        return float(iv);
    }
    if iw.is_nan() {
        return float(if iv == 1.0 { 1.0 } else { iw });
    }
    if iw.is_infinite() {
        let av = iv.abs();
        return float(if av == 1.0 {
            1.0
        } else if (iw > 0.0) == (av > 1.0) {
            iw.abs()
        } else {
            0.0
        });
    }
    if iv.is_infinite() {
        let odd = is_odd_integer(iw);
        return float(if iw > 0.0 {
            if odd {
                iv
            } else {
                iv.abs()
            }
        } else if odd {
            (0.0f64).copysign(iv)
        } else {
            0.0
        });
    }
    if iv == 0.0 {
        if iw < 0.0 {
            return Err(CalcError::new("0.0 cannot be raised to a negative power"));
        }
        return float(if is_odd_integer(iw) { iv } else { 0.0 });
    }
    let mut base = iv;
    let mut negate = false;
    if iv < 0.0 {
        if iw != iw.floor() {
            return complex_op(BinOp::Pow, (iv, 0.0), (iw, 0.0));
        }
        base = -iv;
        negate = is_odd_integer(iw);
    }
    if base == 1.0 {
        return float(if negate { -1.0 } else { 1.0 });
    }
    let ix = base.powf(iw);
    if ix.is_infinite() {
        return Err(CalcError::new("(34, 'Numerical result out of range')"));
    }
    float(if negate { -ix } else { ix })
}

type Complex = (f64, f64);

fn c_prod(a: Complex, b: Complex) -> Complex {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

/// `_Py_c_quot` (Smith's algorithm); `None` on division by zero (EDOM).
fn c_quot(a: Complex, b: Complex) -> Option<Complex> {
    let abs_breal = b.0.abs();
    let abs_bimag = b.1.abs();
    if abs_breal >= abs_bimag {
        if abs_breal == 0.0 {
            return None;
        }
        let ratio = b.1 / b.0;
        let denom = b.0 + b.1 * ratio;
        Some(((a.0 + a.1 * ratio) / denom, (a.1 - a.0 * ratio) / denom))
    } else if abs_bimag >= abs_breal {
        let ratio = b.0 / b.1;
        let denom = b.0 * ratio + b.1;
        Some(((a.0 * ratio + a.1) / denom, (a.1 * ratio - a.0) / denom))
    } else {
        Some((f64::NAN, f64::NAN))
    }
}

/// `_Py_c_pow`; `None` for zero to a negative or complex power (EDOM).
fn c_pow(a: Complex, b: Complex) -> Option<Complex> {
    if b.0 == 0.0 && b.1 == 0.0 {
        return Some((1.0, 0.0));
    }
    if a.0 == 0.0 && a.1 == 0.0 {
        if b.1 != 0.0 || b.0 < 0.0 {
            return None;
        }
        return Some((0.0, 0.0));
    }
    let vabs = a.0.hypot(a.1);
    let mut len = vabs.powf(b.0);
    let at = a.1.atan2(a.0);
    let mut phase = at * b.0;
    if b.1 != 0.0 {
        len /= (at * b.1).exp();
        phase += b.1 * vabs.ln();
    }
    Some((len * phase.cos(), len * phase.sin()))
}

fn c_powu(x: Complex, n: i64) -> Complex {
    let mut r = (1.0, 0.0);
    let mut p = x;
    let mut mask = 1i64;
    while mask > 0 && n >= mask {
        if n & mask != 0 {
            r = c_prod(r, p);
        }
        mask <<= 1;
        p = c_prod(p, p);
    }
    r
}

pub(super) fn complex_op(op: BinOp, x: Complex, y: Complex) -> Result<Value, CalcError> {
    let (re, im) = match op {
        BinOp::Add => (x.0 + y.0, x.1 + y.1),
        BinOp::Sub => (x.0 - y.0, x.1 - y.1),
        BinOp::Mul => c_prod(x, y),
        BinOp::Div => c_quot(x, y).ok_or_else(|| CalcError::new("complex division by zero"))?,
        BinOp::FloorDiv => {
            return Err(CalcError::new(
                "unsupported operand type(s) for //: 'complex' and 'complex'",
            ))
        }
        BinOp::Pow => {
            // complex_pow: small integral exponents use repeated squaring.
            let result = if y.1 == 0.0 && y.0 == y.0.floor() && y.0.abs() <= 100.0 {
                let n = y.0 as i64;
                if n > 0 {
                    Some(c_powu(x, n))
                } else {
                    c_quot((1.0, 0.0), c_powu(x, -n))
                }
            } else {
                c_pow(x, y)
            };
            let Some((re, im)) = result else {
                return Err(CalcError::new("0.0 to a negative or complex power"));
            };
            if re.is_infinite() || im.is_infinite() {
                return Err(CalcError::new("complex exponentiation"));
            }
            (re, im)
        }
    };
    Ok(Value::Complex(re, im))
}

#[cfg(test)]
mod tests {
    use crate::python::calc::check;

    #[test]
    fn numeric_errors() {
        check(&[
            ("1/0", "Error: division by zero"),
            ("0/0", "Error: division by zero"),
            ("1.5/0", "Error: float division by zero"),
            ("1/0.0", "Error: float division by zero"),
            ("1//0", "Error: integer division or modulo by zero"),
            ("1.5//0", "Error: float floor division by zero"),
            ("1//0.0", "Error: float floor division by zero"),
            ("0**-1", "Error: 0.0 cannot be raised to a negative power"),
            ("2**10000", "Error: int too large to convert to float"),
            ("2.0**10000", "Error: (34, 'Numerical result out of range')"),
            ("(-8)**0.5/0", "Error: complex division by zero"),
            ("((-8)**0.5)**1000", "Error: complex exponentiation"),
            (
                "(0*(-8)**0.5)**-1",
                "Error: 0.0 to a negative or complex power",
            ),
            (
                "2**2000/3",
                "Error: integer division result too large for a float",
            ),
        ]);
    }
}
