pub fn float_repr(x: f64) -> String { format!("{x:?}") }
pub fn round_half_even(x: f64, n: i32) -> f64 { let s = format!("{:.*}", n.max(0) as usize, x); s.parse().unwrap_or(x) }
