//! Evaluation of the expression tree with CPython's object semantics:
//! operand order, operator dispatch by type, and the `TypeError` messages
//! for tuples, `...` and calls. The numeric kernels are in [`super::arith`].

use super::arith::{complex_op, float_op, int_op};
use super::ast::{ArgKind, BinOp, Node, NodeId, UnOp};
use super::error::CalcError;
use super::value::{int_to_f64, python_str, Value};

/// Evaluates the tree in Python's order: operands left to right, then the
/// operation; call arguments before the call.
pub(super) fn eval(nodes: &[Node], id: NodeId) -> Result<Value, CalcError> {
    let Some(node) = nodes.get(id) else {
        return Err(CalcError::new("internal error: dangling node"));
    };
    match node {
        Node::Int(i) => Ok(Value::Int(i.clone())),
        Node::Float(f) => Ok(Value::Float(*f)),
        Node::Ellipsis => Ok(Value::Ellipsis),
        Node::EmptyTuple => Ok(Value::Tuple),
        Node::Unary(op, a) => unary(*op, eval(nodes, *a)?),
        Node::Binary(op, a, b) => {
            let left = eval(nodes, *a)?;
            let right = eval(nodes, *b)?;
            binary(*op, left, right)
        }
        Node::Call(func, arg) => {
            let callee = eval(nodes, *func)?;
            if let Some((kind, a)) = arg {
                let value = eval(nodes, *a)?;
                match kind {
                    ArgKind::Plain => {}
                    ArgKind::Star if matches!(value, Value::Tuple) => {}
                    ArgKind::Star => {
                        return Err(CalcError::new(format!(
                            "{} argument after * must be an iterable, not {}",
                            python_str(&callee)?,
                            value.type_name()
                        )))
                    }
                    ArgKind::DoubleStar => {
                        return Err(CalcError::new(format!(
                            "{} argument after ** must be a mapping, not {}",
                            python_str(&callee)?,
                            value.type_name()
                        )))
                    }
                }
            }
            Err(CalcError::new(format!(
                "'{}' object is not callable",
                callee.type_name()
            )))
        }
    }
}

fn unary(op: UnOp, value: Value) -> Result<Value, CalcError> {
    Ok(match (op, value) {
        (UnOp::Plus, v @ (Value::Int(_) | Value::Float(_) | Value::Complex(..))) => v,
        (UnOp::Minus, Value::Int(i)) => Value::Int(i.neg()),
        (UnOp::Minus, Value::Float(f)) => Value::Float(-f),
        (UnOp::Minus, Value::Complex(re, im)) => Value::Complex(-re, -im),
        (op, other) => {
            return Err(CalcError::new(format!(
                "bad operand type for unary {}: '{}'",
                if op == UnOp::Plus { "+" } else { "-" },
                other.type_name()
            )))
        }
    })
}

fn unsupported(op: BinOp, a: &Value, b: &Value) -> CalcError {
    CalcError::new(format!(
        "unsupported operand type(s) for {}: '{}' and '{}'",
        op.symbol(),
        a.type_name(),
        b.type_name()
    ))
}

fn binary(op: BinOp, a: Value, b: Value) -> Result<Value, CalcError> {
    use Value::{Complex, Ellipsis, Float, Int, Tuple};
    match (&a, &b) {
        (Int(x), Int(y)) => int_op(op, x, y),
        (Int(_) | Float(_), Int(_) | Float(_)) => {
            let x = as_f64(&a)?;
            let y = as_f64(&b)?;
            float_op(op, x, y)
        }
        (Int(_) | Float(_) | Complex(..), Int(_) | Float(_) | Complex(..)) => {
            if op == BinOp::FloorDiv {
                return Err(unsupported(op, &a, &b));
            }
            let x = as_complex(&a)?;
            let y = as_complex(&b)?;
            complex_op(op, x, y)
        }
        (Tuple, Tuple) if op == BinOp::Add => Ok(Tuple),
        (Tuple, _) if op == BinOp::Add => Err(CalcError::new(format!(
            "can only concatenate tuple (not \"{}\") to tuple",
            b.type_name()
        ))),
        (Tuple, other) | (other, Tuple) if op == BinOp::Mul => match other {
            Int(n) => match n.to_i64() {
                Some(_) => Ok(Tuple),
                None => Err(CalcError::new(
                    "cannot fit 'int' into an index-sized integer",
                )),
            },
            // `tuple * tuple` names the right operand, the non-int one.
            _ => Err(CalcError::new(format!(
                "can't multiply sequence by non-int of type '{}'",
                if matches!(a, Tuple) {
                    b.type_name()
                } else {
                    a.type_name()
                }
            ))),
        },
        (Ellipsis, _) | (_, Ellipsis) | (Tuple, _) | (_, Tuple) => Err(unsupported(op, &a, &b)),
    }
}

fn as_f64(v: &Value) -> Result<f64, CalcError> {
    match v {
        Value::Int(i) => int_to_f64(i),
        Value::Float(f) => Ok(*f),
        _ => Ok(f64::NAN),
    }
}

fn as_complex(v: &Value) -> Result<(f64, f64), CalcError> {
    match v {
        Value::Complex(re, im) => Ok((*re, *im)),
        other => Ok((as_f64(other)?, 0.0)),
    }
}

#[cfg(test)]
mod tests {
    use crate::python::calc::check;

    #[test]
    fn object_errors() {
        check(&[
            ("2(3)", "Error: 'int' object is not callable"),
            ("(1.5)(2)", "Error: 'float' object is not callable"),
            (
                "()+1",
                "Error: can only concatenate tuple (not \"int\") to tuple",
            ),
            ("2(*())", "Error: 'int' object is not callable"),
            (
                "2(*1)",
                "Error: 2 argument after * must be an iterable, not int",
            ),
            (
                "2(**())",
                "Error: 2 argument after ** must be a mapping, not tuple",
            ),
            ("2(1/0)", "Error: division by zero"),
            ("()()", "Error: 'tuple' object is not callable"),
            ("...()", "Error: 'ellipsis' object is not callable"),
            (
                "...+1",
                "Error: unsupported operand type(s) for +: 'ellipsis' and 'int'",
            ),
            ("-...", "Error: bad operand type for unary -: 'ellipsis'"),
            ("+()", "Error: bad operand type for unary +: 'tuple'"),
            (
                "()*2.0",
                "Error: can't multiply sequence by non-int of type 'float'",
            ),
            (
                "()*(2**63)",
                "Error: cannot fit 'int' into an index-sized integer",
            ),
            (
                "()**2",
                "Error: unsupported operand type(s) for ** or pow(): 'tuple' and 'int'",
            ),
            (
                "1+()",
                "Error: unsupported operand type(s) for +: 'int' and 'tuple'",
            ),
            (
                "(-8)**0.5//1",
                "Error: unsupported operand type(s) for //: 'complex' and 'int'",
            ),
            (
                "(0*(-8)**0.5)(*1)",
                "Error: 0j argument after * must be an iterable, not int",
            ),
        ]);
    }
}
