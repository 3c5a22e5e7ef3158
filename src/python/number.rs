//! Python 3.11 number formatting and rounding.
//!
//! τ-bench observations are produced by CPython, so every float that reaches
//! an observation goes through `float.__repr__` and every rounded amount
//! through `round(x, 2)`. Both are specified on the *exact* binary value of
//! the double, which is what Rust's float formatting also works on; this
//! module maps Rust's output onto Python's spelling instead of reimplementing
//! the digit generation.

use std::fmt::{self, Write as _};

use serde_json::Number;

/// Python refuses to round to more decimals than any double can carry
/// (`NDIGITS_MAX` in CPython's `floatobject.c`); beyond it `round` returns
/// its argument unchanged.
const NDIGITS_MAX: i32 = 323;

/// Below this many decimals every finite double rounds to a signed zero
/// (`NDIGITS_MIN` in CPython).
const NDIGITS_MIN: i32 = -308;

/// A fixed-capacity `fmt::Write` sink on the stack.
///
/// Formatting a float must not allocate on the JSON hot path; when the text
/// does not fit, `write_str` fails and callers fall back to a heap `String`.
pub(crate) struct StackBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackBuf<N> {
    pub(crate) fn new() -> Self {
        Self {
            buf: [0; N],
            len: 0,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only whole `&str`s are ever copied in, so the prefix is valid UTF-8;
        // the fallback can never be hit but avoids a panic path.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl<const N: usize> fmt::Write for StackBuf<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Python `repr(float)` (and `str(float)`): the shortest digit string that
/// reads back as the same double, in fixed notation when
/// `1e-4 <= |x| < 1e16` and exponent notation otherwise.
///
/// Non-finite values use Python's `str` spelling (`nan`, `inf`, `-inf`);
/// JSON output never sees them because `serde_json` cannot hold them.
pub fn float_repr(x: f64) -> String {
    let mut out = String::with_capacity(24);
    float_repr_into(&mut out, x);
    out
}

/// Appends [`float_repr`] of `x` to `out` without any other allocation.
pub fn float_repr_into(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("nan");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "inf" } else { "-inf" });
        return;
    }
    if x == 0.0 {
        out.push_str(if x.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    // Rust's `{:e}` yields shortest round-trip digits like CPython's `repr`;
    // only the layout differs, plus the tie rule fixed by `tie_to_even`.
    // 32 bytes hold any f64 in this form.
    let mut sci = StackBuf::<32>::new();
    if write!(sci, "{:e}", x.abs()).is_err() {
        // Unreachable for finite doubles; keep Rust's own spelling rather
        // than panic.
        let _ = write!(out, "{x}");
        return;
    }
    let text = sci.as_str();
    let (mantissa, exp_text) = text.split_once('e').unwrap_or((text, "0"));
    let exp: i32 = exp_text.parse().unwrap_or(0);
    let mut digits = [0u8; 24];
    let mut len = 0;
    for &b in mantissa.as_bytes() {
        if b.is_ascii_digit() && len < digits.len() {
            digits[len] = b;
            len += 1;
        }
    }
    if len == 0 {
        // Unreachable: `{:e}` always prints a digit. Avoid slicing panics.
        let _ = write!(out, "{x}");
        return;
    }
    let len = tie_to_even(x.abs(), &mut digits[..len], exp);
    let digits = &digits[..len];
    if x.is_sign_negative() {
        out.push('-');
    }
    let push_digits = |out: &mut String, ds: &[u8]| {
        for &d in ds {
            out.push(char::from(d));
        }
    };
    // CPython's 'r' format switches to exponent notation when the decimal
    // point position `exp + 1` is <= -4 or > 16.
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let before = exp as usize + 1;
            if digits.len() > before {
                push_digits(out, &digits[..before]);
                out.push('.');
                push_digits(out, &digits[before..]);
            } else {
                push_digits(out, digits);
                for _ in digits.len()..before {
                    out.push('0');
                }
                out.push_str(".0");
            }
        } else {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            push_digits(out, digits);
        }
    } else {
        push_digits(out, &digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            push_digits(out, &digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let magnitude = exp.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        let _ = write!(out, "{magnitude}");
    }
}

/// Applies CPython's tie rule to Rust's shortest digits, returning the
/// (possibly shorter) digit count.
///
/// When the exact binary value lies exactly halfway between two shortest
/// candidates (e.g. `1511105714476140.25` between `…140.2` and `…140.3`),
/// CPython's `dtoa` picks the even last digit while Rust picks the upper
/// one. A tie needs the exact decimal expansion of `x` to be one digit
/// longer than the shortest form and to end in 5, which only happens for
/// doubles with few significant bits; everything else returns at once.
fn tie_to_even(x: f64, digits: &mut [u8], exp: i32) -> usize {
    let len = digits.len();
    let Some(exact) = short_exact_decimal(x) else {
        return len;
    };
    if exact % 10 != 5 || decimal_len(exact) != len + 1 {
        return len;
    }
    let lower = exact / 10;
    let upper = lower + 1;
    let mut current: u128 = 0;
    for &d in digits.iter() {
        current = current * 10 + u128::from(d - b'0');
    }
    let alternative = if current == upper && upper % 2 == 1 {
        lower
    } else if current == lower && lower % 2 == 1 && decimal_len(upper) == len {
        upper
    } else {
        return len;
    };
    // Use the even candidate only if it also reads back as `x`.
    let mut text = StackBuf::<48>::new();
    let scale = exp - (len as i32 - 1);
    if write!(text, "{alternative}e{scale}").is_err() || text.as_str().parse::<f64>() != Ok(x) {
        return len;
    }
    let mut value = alternative;
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
    let mut kept = len;
    while kept > 1 && digits[kept - 1] == b'0' {
        kept -= 1;
    }
    kept
}

/// The significant decimal digits of positive finite `x` as an integer
/// (trailing decimal zeros removed), when there are at most 18 of them.
fn short_exact_decimal(x: f64) -> Option<u128> {
    let bits = x.to_bits();
    let exp_field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (mut m, mut e2) = if exp_field == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), exp_field - 1075)
    };
    if m == 0 {
        return None;
    }
    let tz = m.trailing_zeros();
    m >>= tz;
    e2 += tz as i32;
    let mut n = if e2 >= 0 {
        // A trailing 5 needs more factors of 5 in m than of 2 in x: e2 <= 22.
        if e2 > 22 {
            return None;
        }
        u128::from(m) << e2
    } else {
        // x = m * 5^j / 10^j; 5^25 * 2^53 still fits in u128.
        let j = e2.unsigned_abs();
        if j > 25 {
            return None;
        }
        u128::from(m) * 5u128.pow(j)
    };
    while n % 10 == 0 {
        n /= 10;
    }
    (n < 1_000_000_000_000_000_000).then_some(n)
}

fn decimal_len(mut n: u128) -> usize {
    let mut len = 1;
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

/// Python `round(x, ndigits)` for a float: the double nearest to the exact
/// binary value of `x` rounded to `ndigits` decimals, ties to even.
///
/// Rust's `{:.N}` formatting is exact and rounds half to even, which is
/// precisely what CPython's `_Py_dg_dtoa(mode 3)` does, so formatting and
/// parsing back reproduces Python bit for bit. Negative `ndigits` rounds to
/// tens, hundreds, ... (`round(1234.5, -2) == 1200.0`). NaN and infinities
/// pass through.
///
/// Python raises `OverflowError("rounded value too large to represent")`
/// when rounding a value near `f64::MAX` to a power of ten pushes it past
/// the range (e.g. `round(1.7976931348623157e308, -308)`); this function
/// returns the corresponding infinity instead. `round2` never gets there.
pub fn round_half_even(x: f64, ndigits: i32) -> f64 {
    if !x.is_finite() || ndigits > NDIGITS_MAX {
        return x;
    }
    if ndigits < NDIGITS_MIN {
        return 0.0 * x;
    }
    if ndigits >= 0 {
        let places = ndigits as usize;
        let mut small = StackBuf::<64>::new();
        if write!(small, "{x:.places$}").is_ok() {
            return small.as_str().parse().unwrap_or(x);
        }
        return format!("{x:.places$}").parse().unwrap_or(x);
    }
    round_to_power_of_ten(x, ndigits.unsigned_abs() as usize)
}

/// Rounds finite `x` half-even to a multiple of `10^k` (`k >= 1`) working on
/// its exact decimal expansion, since `x / 10^k` is not exact in binary.
fn round_to_power_of_ten(x: f64, k: usize) -> f64 {
    let int_part = x.trunc();
    // `fract` is exact, so this tells whether anything lies below the units.
    let has_fraction = x != int_part;
    // Integral doubles print exactly with `{:.0}`.
    let digits = format!("{:.0}", int_part.abs());
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if digits.len() < k {
        // |x| < 10^(k-1) < half of 10^k: always rounds to a signed zero.
        return 0.0 * x.signum();
    }
    let (kept, dropped) = digits.split_at(digits.len() - k);
    let dropped = dropped.as_bytes();
    let half_cmp = {
        // Compare `dropped` against "500…0" of the same length.
        let first = dropped.first().copied().unwrap_or(b'0');
        match first.cmp(&b'5') {
            std::cmp::Ordering::Equal => {
                if dropped[1..].iter().any(|&d| d != b'0') {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            }
            other => other,
        }
    };
    let last_kept_odd = kept.as_bytes().last().is_some_and(|d| (d - b'0') % 2 == 1);
    let round_up = match half_cmp {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => has_fraction || last_kept_odd,
    };
    let mut mantissa: Vec<u8> = if kept.is_empty() {
        vec![b'0']
    } else {
        kept.as_bytes().to_vec()
    };
    if round_up {
        increment_decimal(&mut mantissa);
    }
    let text = format!(
        "{sign}{}e{k}",
        std::str::from_utf8(&mantissa).unwrap_or("0")
    );
    text.parse().unwrap_or(x)
}

/// Adds one to a big-endian ASCII decimal digit string in place.
fn increment_decimal(digits: &mut Vec<u8>) {
    for d in digits.iter_mut().rev() {
        if *d == b'9' {
            *d = b'0';
        } else {
            *d += 1;
            return;
        }
    }
    digits.insert(0, b'1');
}

/// Python `str()` of a JSON number: ints as plain digits, floats via
/// [`float_repr`].
#[cfg(test)]
pub fn number_str(n: &Number) -> String {
    let mut out = String::new();
    number_str_into(&mut out, n);
    out
}

/// Appends [`number_str`] of `n` to `out`.
pub fn number_str_into(out: &mut String, n: &Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(f) = n.as_f64() {
        float_repr_into(out, f);
    }
}

/// Python `round(n, ndigits)` on a JSON number, keeping Python's int/float
/// distinction: an int stays an int (rounded half-even to a multiple of
/// `10^-ndigits` when `ndigits` is negative, as `int.__round__` does), a
/// float rounds via [`round_half_even`] and stays a float even when integral.
///
/// A result that JSON cannot hold — a float rounding to infinity, or an int
/// rounding beyond the 64-bit range — is impossible for finite inputs with
/// `ndigits >= 0` and returns the input unchanged.
#[cfg(test)]
pub fn round_number(n: &Number, ndigits: i32) -> Number {
    if n.is_f64() {
        let Some(x) = n.as_f64() else {
            return n.clone();
        };
        return Number::from_f64(round_half_even(x, ndigits)).unwrap_or_else(|| n.clone());
    }
    if ndigits >= 0 {
        return n.clone();
    }
    let value: i128 = if let Some(i) = n.as_i64() {
        i128::from(i)
    } else if let Some(u) = n.as_u64() {
        i128::from(u)
    } else {
        return n.clone();
    };
    let rounded = round_int_half_even(value, ndigits.unsigned_abs());
    if let Ok(i) = i64::try_from(rounded) {
        Number::from(i)
    } else if let Ok(u) = u64::try_from(rounded) {
        Number::from(u)
    } else {
        n.clone()
    }
}

/// `int.__round__(value, -k)`: nearest multiple of `10^k`, ties to even.
#[cfg(test)]
fn round_int_half_even(value: i128, k: u32) -> i128 {
    // |value| < 2^64 < 10^20, so any k >= 21 rounds to 0; 10^38 still fits.
    let Some(unit) = 10i128.checked_pow(k.min(38)) else {
        return 0;
    };
    if k > 38 {
        return 0;
    }
    let quotient = value.div_euclid(unit);
    let remainder = value.rem_euclid(unit);
    let twice = remainder * 2;
    let up = twice > unit || (twice == unit && quotient % 2 != 0);
    let q = if up { quotient + 1 } else { quotient };
    q.saturating_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_fixed_notation() {
        let cases: &[(f64, &str)] = &[
            (100.0, "100.0"),
            (1819.92, "1819.92"),
            (0.04999999999999716, "0.04999999999999716"),
            (71.96000000000001, "71.96000000000001"),
            (0.0001, "0.0001"),
            (0.00012345, "0.00012345"),
            (1.5, "1.5"),
            (-2.25, "-2.25"),
            (123456789.0, "123456789.0"),
            (1000000000000000.0, "1000000000000000.0"),
            (9999999999999998.0, "9999999999999998.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (12.0, "12.0"),
            (8276.23, "8276.23"),
            (-17.99, "-17.99"),
            (1200.0, "1200.0"),
        ];
        for &(x, want) in cases {
            assert_eq!(float_repr(x), want, "repr of {x:e}");
        }
    }

    #[test]
    fn repr_exponent_notation() {
        let cases: &[(f64, &str)] = &[
            (1e-5, "1e-05"),
            (1e16, "1e+16"),
            (1.2345678901234568e16, "1.2345678901234568e+16"),
            (1e20, "1e+20"),
            (1.23456789e17, "1.23456789e+17"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (-1.5e-7, "-1.5e-07"),
            (9.999999999999999e-5, "9.999999999999999e-05"),
            // Exact ties between two shortest candidates go to the even one.
            (1511105714476140.0 + 0.25, "1511105714476140.2"),
            (-621631742901724.0 - 0.25, "-621631742901724.2"),
            (2521750292244.0 + 0.03125, "2521750292244.0312"),
            (88274986396474.0 + 0.125, "88274986396474.12"),
            (1e100, "1e+100"),
            (2.5e-100, "2.5e-100"),
        ];
        for &(x, want) in cases {
            assert_eq!(float_repr(x), want, "repr of {x:e}");
        }
    }

    #[test]
    fn repr_special_values() {
        assert_eq!(float_repr(0.0), "0.0");
        assert_eq!(float_repr(-0.0), "-0.0");
        assert_eq!(float_repr(f64::NAN), "nan");
        assert_eq!(float_repr(f64::INFINITY), "inf");
        assert_eq!(float_repr(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn repr_round_trips_across_the_range() {
        // A deterministic spread of bit patterns (xorshift) plus edge values.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut checked = 0;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state);
            if !x.is_finite() {
                continue;
            }
            let text = float_repr(x);
            let back: f64 = text.parse().unwrap_or(f64::NAN);
            assert_eq!(back.to_bits(), x.to_bits(), "{text}");
            checked += 1;
        }
        for i in -30..30 {
            for m in [1.0, 1.5, 9.999, 0.1, 7.25] {
                let x = m * 10f64.powi(i);
                let back: f64 = float_repr(x).parse().unwrap_or(f64::NAN);
                assert_eq!(back, x);
            }
        }
        assert!(checked > 10_000);
    }

    #[test]
    fn round2_examples_from_spec() {
        let cases: &[(f64, f64, &str)] = &[
            (0.125, 0.12, "0.12"),
            (0.375, 0.38, "0.38"),
            (2.675, 2.67, "2.67"),
            (1.005, 1.0, "1.0"),
            (0.015, 0.01, "0.01"),
            (0.025, 0.03, "0.03"),
            (1.115, 1.11, "1.11"),
            (-0.001, -0.0, "-0.0"),
            (12345.675, 12345.67, "12345.67"),
            (12.0, 12.0, "12.0"),
            (1.0 / 3.0, 0.33, "0.33"),
            (100.0 / 7.0, 14.29, "14.29"),
        ];
        for &(x, want, text) in cases {
            let got = round_half_even(x, 2);
            assert_eq!(got.to_bits(), want.to_bits(), "round({x}, 2)");
            assert_eq!(float_repr(got), text);
        }
    }

    #[test]
    fn round_other_ndigits() {
        assert_eq!(round_half_even(2.5, 0), 2.0);
        assert_eq!(round_half_even(3.5, 0), 4.0);
        assert_eq!(round_half_even(1234.5, -2), 1200.0);
        assert_eq!(round_half_even(1250.0, -2), 1200.0);
        assert_eq!(round_half_even(1350.0, -2), 1400.0);
        assert_eq!(round_half_even(1250.0000001, -2), 1300.0);
        assert_eq!(round_half_even(-1250.0, -2), -1200.0);
        let z = round_half_even(-40.0, -2);
        assert!(z == 0.0 && z.is_sign_negative());
        let z = round_half_even(40.0, -2);
        assert!(z == 0.0 && z.is_sign_positive());
        assert_eq!(round_half_even(999.0, -3), 1000.0);
        assert_eq!(round_half_even(5e-324, 330), 5e-324);
        assert_eq!(round_half_even(1e300, -400), 0.0);
        assert_eq!(
            float_repr(round_half_even(1.7976931348623157e308, -300)),
            "1.79769313e+308"
        );
        assert!(round_half_even(f64::NAN, 2).is_nan());
        assert_eq!(round_half_even(f64::INFINITY, 2), f64::INFINITY);
        assert_eq!(round_half_even(1e22, 2), 1e22);
        assert_eq!(round_half_even(0.1 + 0.2, 2), 0.3);
    }

    #[test]
    fn number_str_keeps_int_float_distinction() {
        let n: Number = serde_json::from_str("68").unwrap_or_else(|_| Number::from(0));
        assert_eq!(number_str(&n), "68");
        let f: Number = serde_json::from_str("68.0").unwrap_or_else(|_| Number::from(0));
        assert_eq!(number_str(&f), "68.0");
        assert_eq!(number_str(&Number::from(-5i64)), "-5");
        assert_eq!(number_str(&Number::from(u64::MAX)), "18446744073709551615");
        let tiny = Number::from_f64(1e-7).unwrap_or_else(|| Number::from(0));
        assert_eq!(number_str(&tiny), "1e-07");
    }

    #[test]
    fn round_number_int_stays_int() {
        let n = Number::from(68);
        let r = round_number(&n, 2);
        assert!(r.is_i64());
        assert_eq!(number_str(&r), "68");
        assert_eq!(number_str(&round_number(&Number::from(1250), -2)), "1200");
        assert_eq!(number_str(&round_number(&Number::from(1350), -2)), "1400");
        assert_eq!(number_str(&round_number(&Number::from(-1250), -2)), "-1200");
        assert_eq!(number_str(&round_number(&Number::from(15), -1)), "20");
        assert_eq!(number_str(&round_number(&Number::from(5), -1)), "0");
        assert_eq!(number_str(&round_number(&Number::from(123), -50)), "0");
        // Would exceed u64: left unchanged.
        let big = Number::from(u64::MAX);
        assert_eq!(round_number(&big, -1), big);
    }

    #[test]
    fn round_number_float_stays_float() {
        let f = Number::from_f64(12.004).unwrap_or_else(|| Number::from(0));
        let r = round_number(&f, 2);
        assert!(r.is_f64());
        assert_eq!(number_str(&r), "12.0");
        let f = Number::from_f64(2.675).unwrap_or_else(|| Number::from(0));
        assert_eq!(number_str(&round_number(&f, 2)), "2.67");
    }
}
