//! Minimal arbitrary-precision integers for the `calculate` evaluator.
//!
//! Python ints are exact at any size, and τ-bench's `calculate` exposes that
//! (`2**200 / 2**100`, `10**20 + 1 - 10**20`, `99999999999999999999` →
//! `1e+20`). Only what the evaluator needs is here: `+ - * // **`, correctly
//! rounded conversion to `f64` and correctly rounded true division, both
//! exactly as CPython's `PyLong_AsDouble` and `long_true_divide` do.
//!
//! Results are capped at [`MAX_BITS`]: CPython would happily spend minutes
//! (or hang, for `9**9**9`) on larger values, which an engine cannot do.

use std::cmp::Ordering;

/// Largest magnitude, in bits, the evaluator will build (about 79,000
/// decimal digits). Schoolbook multiplication stays in the low milliseconds
/// below it.
pub(crate) const MAX_BITS: u64 = 1 << 18;

/// A signed integer as sign + little-endian base-2^32 magnitude. The
/// magnitude never has trailing zero limbs and zero is never negative.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BigInt {
    negative: bool,
    mag: Vec<u32>,
}

/// An operation whose result would exceed [`MAX_BITS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooBig;

/// Why a conversion to `f64` failed: the value is beyond `f64::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FloatOverflow;

fn trim(mag: &mut Vec<u32>) {
    while mag.last() == Some(&0) {
        mag.pop();
    }
}

fn cmp_mag(a: &[u32], b: &[u32]) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

fn add_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(long.len() + 1);
    let mut carry = 0u64;
    for (i, &x) in long.iter().enumerate() {
        let sum = u64::from(x) + u64::from(short.get(i).copied().unwrap_or(0)) + carry;
        out.push(sum as u32);
        carry = sum >> 32;
    }
    if carry != 0 {
        out.push(carry as u32);
    }
    out
}

/// `a - b` for `|a| >= |b|`.
fn sub_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i64;
    for (i, &x) in a.iter().enumerate() {
        let mut diff = i64::from(x) - i64::from(b.get(i).copied().unwrap_or(0)) - borrow;
        borrow = 0;
        if diff < 0 {
            diff += 1 << 32;
            borrow = 1;
        }
        out.push(diff as u32);
    }
    trim(&mut out);
    out
}

fn mul_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0u32; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        let mut carry = 0u64;
        for (j, &y) in b.iter().enumerate() {
            let cur = u64::from(out[i + j]) + u64::from(x) * u64::from(y) + carry;
            out[i + j] = cur as u32;
            carry = cur >> 32;
        }
        out[i + b.len()] = carry as u32;
    }
    trim(&mut out);
    out
}

fn shl_mag(a: &[u32], bits: u64) -> Vec<u32> {
    if a.is_empty() {
        return Vec::new();
    }
    let limbs = (bits / 32) as usize;
    let shift = (bits % 32) as u32;
    let mut out = vec![0u32; limbs];
    if shift == 0 {
        out.extend_from_slice(a);
    } else {
        let mut carry = 0u32;
        for &x in a {
            out.push((x << shift) | carry);
            carry = x >> (32 - shift);
        }
        if carry != 0 {
            out.push(carry);
        }
    }
    out
}

fn shr_mag(a: &[u32], bits: u64) -> Vec<u32> {
    let limbs = (bits / 32) as usize;
    if limbs >= a.len() {
        return Vec::new();
    }
    let shift = (bits % 32) as u32;
    let src = &a[limbs..];
    let mut out = Vec::with_capacity(src.len());
    for (i, &x) in src.iter().enumerate() {
        let hi = if shift == 0 {
            0
        } else {
            src.get(i + 1).map_or(0, |&next| next << (32 - shift))
        };
        out.push((x >> shift) | hi);
    }
    trim(&mut out);
    out
}

/// True when any of the lowest `bits` bits of `a` is set.
fn low_bits_nonzero(a: &[u32], bits: u64) -> bool {
    let limbs = (bits / 32) as usize;
    let shift = (bits % 32) as u32;
    if a.iter().take(limbs).any(|&x| x != 0) {
        return true;
    }
    shift != 0
        && a.get(limbs)
            .is_some_and(|&x| x & ((1u32 << shift) - 1) != 0)
}

fn bit_len_mag(a: &[u32]) -> u64 {
    match a.last() {
        None => 0,
        Some(&top) => (a.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros()),
    }
}

/// Knuth's algorithm D: `(a / b, a % b)` for non-zero `b`.
fn divmod_mag(a: &[u32], b: &[u32]) -> (Vec<u32>, Vec<u32>) {
    // Callers never divide by zero; answer 0 rather than index out of range.
    if b.is_empty() || cmp_mag(a, b) == Ordering::Less {
        return (Vec::new(), a.to_vec());
    }
    if b.len() == 1 {
        let d = u64::from(b[0]);
        let mut q = vec![0u32; a.len()];
        let mut rem = 0u64;
        for i in (0..a.len()).rev() {
            let cur = (rem << 32) | u64::from(a[i]);
            q[i] = (cur / d) as u32;
            rem = cur % d;
        }
        trim(&mut q);
        let mut r = vec![rem as u32];
        trim(&mut r);
        return (q, r);
    }
    let shift = u64::from(b.last().map_or(0, |t| t.leading_zeros()));
    let v = shl_mag(b, shift);
    let mut u = shl_mag(a, shift);
    if u.len() == a.len() {
        u.push(0);
    }
    let n = v.len();
    let m = u.len() - n;
    let mut q = vec![0u32; m];
    let base = 1u64 << 32;
    let v_top = u64::from(v[n - 1]);
    let v_next = u64::from(v[n - 2]);
    for j in (0..m).rev() {
        let num = (u64::from(u[j + n]) << 32) | u64::from(u[j + n - 1]);
        let mut qhat = num / v_top;
        let mut rhat = num % v_top;
        while qhat >= base || qhat * v_next > ((rhat << 32) | u64::from(u[j + n - 2])) {
            qhat -= 1;
            rhat += v_top;
            if rhat >= base {
                break;
            }
        }
        let mut borrow = 0i64;
        let mut carry = 0u64;
        for i in 0..n {
            let product = qhat * u64::from(v[i]) + carry;
            carry = product >> 32;
            let diff = i64::from(u[i + j]) - (product & 0xffff_ffff) as i64 - borrow;
            u[i + j] = diff as u32;
            borrow = i64::from(diff < 0);
        }
        let diff = i64::from(u[j + n]) - carry as i64 - borrow;
        u[j + n] = diff as u32;
        if diff < 0 {
            qhat -= 1;
            let mut carry = 0u64;
            for i in 0..n {
                let sum = u64::from(u[i + j]) + u64::from(v[i]) + carry;
                u[i + j] = sum as u32;
                carry = sum >> 32;
            }
            u[j + n] = u[j + n].wrapping_add(carry as u32);
        }
        q[j] = qhat as u32;
    }
    trim(&mut q);
    u.truncate(n);
    trim(&mut u);
    (q, shr_mag(&u, shift))
}

/// Builds the double nearest to `(mant + tail) * 2^exp2`, where `mant` has
/// its top bit set and `tail` (known only through `sticky`) lies strictly
/// inside (0, 1) when `sticky` is true. Rounds half to even, including into
/// the subnormal range; `Err` when the result is beyond `f64::MAX`.
fn compose_f64(mant: u64, sticky: bool, exp2: i64) -> Result<f64, FloatOverflow> {
    // The value lies in [2^top, 2^(top+1)).
    let top = exp2 + 63;
    if top >= 1024 {
        return Err(FloatOverflow);
    }
    // Significant bits the result can keep at this magnitude.
    let keep = if top >= -1022 { 53 } else { top + 1075 };
    if keep <= 0 {
        // Below half the smallest subnormal, or exactly half (ties to 0).
        let above_half = keep == 0 && (mant != 1 << 63 || sticky);
        return Ok(if above_half { f64::from_bits(1) } else { 0.0 });
    }
    let drop = (64 - keep) as u32;
    let mut m = mant >> drop;
    let rem = mant & ((1u64 << drop) - 1);
    let half = 1u64 << (drop - 1);
    if rem > half || (rem == half && (sticky || m & 1 == 1)) {
        m += 1;
    }
    if top >= -1022 {
        let mut top = top;
        if m == 1 << 53 {
            m >>= 1;
            top += 1;
            if top >= 1024 {
                return Err(FloatOverflow);
            }
        }
        let biased = (top + 1023) as u64;
        Ok(f64::from_bits((biased << 52) | (m & ((1 << 52) - 1))))
    } else {
        // Subnormal: the value is m * 2^-1074; m == 2^52 encodes MIN_POSITIVE.
        Ok(f64::from_bits(m))
    }
}

impl BigInt {
    pub(crate) fn zero() -> Self {
        Self {
            negative: false,
            mag: Vec::new(),
        }
    }

    fn from_parts(negative: bool, mut mag: Vec<u32>) -> Self {
        trim(&mut mag);
        let negative = negative && !mag.is_empty();
        Self { negative, mag }
    }

    pub(crate) fn from_u64(v: u64) -> Self {
        Self::from_parts(false, vec![v as u32, (v >> 32) as u32])
    }

    /// Parses a string of ASCII digits (the tokenizer guarantees the shape).
    pub(crate) fn from_decimal(digits: &str) -> Self {
        let mut mag: Vec<u32> = Vec::new();
        for chunk in digits.as_bytes().chunks(9) {
            let mut value = 0u64;
            let mut scale = 1u64;
            for &d in chunk {
                value = value * 10 + u64::from(d.wrapping_sub(b'0') % 10);
                scale *= 10;
            }
            let mut carry = value;
            for limb in mag.iter_mut() {
                let cur = u64::from(*limb) * scale + carry;
                *limb = cur as u32;
                carry = cur >> 32;
            }
            if carry != 0 {
                mag.push(carry as u32);
            }
        }
        Self::from_parts(false, mag)
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.mag.is_empty()
    }

    pub(crate) fn is_negative(&self) -> bool {
        self.negative
    }

    pub(crate) fn bit_len(&self) -> u64 {
        bit_len_mag(&self.mag)
    }

    pub(crate) fn neg(&self) -> Self {
        Self::from_parts(!self.negative, self.mag.clone())
    }

    pub(crate) fn to_i64(&self) -> Option<i64> {
        if self.mag.len() > 2 {
            return None;
        }
        let lo = u64::from(self.mag.first().copied().unwrap_or(0));
        let hi = u64::from(self.mag.get(1).copied().unwrap_or(0));
        let magnitude = (hi << 32) | lo;
        if self.negative {
            if magnitude <= 1 << 63 {
                Some((magnitude as i64).wrapping_neg())
            } else {
                None
            }
        } else {
            i64::try_from(magnitude).ok()
        }
    }

    /// The magnitude as a `u64`, if it fits (the sign is ignored).
    fn magnitude_u64(&self) -> Option<u64> {
        if self.mag.len() > 2 {
            return None;
        }
        let lo = u64::from(self.mag.first().copied().unwrap_or(0));
        let hi = u64::from(self.mag.get(1).copied().unwrap_or(0));
        Some((hi << 32) | lo)
    }

    pub(crate) fn add(&self, other: &Self) -> Self {
        if self.negative == other.negative {
            return Self::from_parts(self.negative, add_mag(&self.mag, &other.mag));
        }
        match cmp_mag(&self.mag, &other.mag) {
            Ordering::Less => Self::from_parts(other.negative, sub_mag(&other.mag, &self.mag)),
            _ => Self::from_parts(self.negative, sub_mag(&self.mag, &other.mag)),
        }
    }

    pub(crate) fn sub(&self, other: &Self) -> Self {
        self.add(&other.neg())
    }

    pub(crate) fn mul(&self, other: &Self) -> Result<Self, TooBig> {
        if self.bit_len() + other.bit_len() > MAX_BITS + 1 {
            return Err(TooBig);
        }
        Ok(Self::from_parts(
            self.negative != other.negative,
            mul_mag(&self.mag, &other.mag),
        ))
    }

    /// Python `//` (floor division); `None` when `other` is zero.
    pub(crate) fn floor_div(&self, other: &Self) -> Option<Self> {
        if other.is_zero() {
            return None;
        }
        let (q, r) = divmod_mag(&self.mag, &other.mag);
        let negative = self.negative != other.negative;
        let mut quotient = Self::from_parts(negative, q);
        if negative && !r.is_empty() {
            quotient = quotient.sub(&Self::from_u64(1));
        }
        Some(quotient)
    }

    /// `self ** exp` for `exp >= 0`.
    pub(crate) fn pow(&self, exp: &Self) -> Result<Self, TooBig> {
        if exp.is_zero() {
            return Ok(Self::from_u64(1));
        }
        let odd = exp.mag.first().is_some_and(|l| l & 1 == 1);
        if self.is_zero() {
            return Ok(Self::zero());
        }
        if self.mag == [1] {
            return Ok(Self::from_parts(self.negative && odd, vec![1]));
        }
        let Some(e) = exp.magnitude_u64() else {
            return Err(TooBig);
        };
        let estimate = (self.bit_len() - 1).saturating_mul(e);
        if estimate > MAX_BITS {
            return Err(TooBig);
        }
        let mut result = Self::from_u64(1);
        let mut base = self.clone();
        let mut rest = e;
        while rest > 0 {
            if rest & 1 == 1 {
                result = result.mul(&base)?;
            }
            rest >>= 1;
            if rest > 0 {
                base = base.mul(&base)?;
            }
        }
        Ok(result)
    }

    /// `PyLong_AsDouble`: correctly rounded, half to even.
    pub(crate) fn to_f64(&self) -> Result<f64, FloatOverflow> {
        let bits = self.bit_len();
        let magnitude = if bits <= 64 {
            // `as` rounds to nearest, ties to even.
            self.magnitude_u64().unwrap_or(0) as f64
        } else {
            let shift = bits - 64;
            let top = shr_mag(&self.mag, shift);
            let lo = u64::from(top.first().copied().unwrap_or(0));
            let hi = u64::from(top.get(1).copied().unwrap_or(0));
            let sticky = low_bits_nonzero(&self.mag, shift);
            compose_f64((hi << 32) | lo, sticky, shift as i64)?
        };
        Ok(if self.negative { -magnitude } else { magnitude })
    }

    /// Python's int `/` int: the correctly rounded quotient. `None` for a
    /// zero divisor, `Some(Err)` when the quotient overflows a double.
    pub(crate) fn true_div(&self, other: &Self) -> Option<Result<f64, FloatOverflow>> {
        if other.is_zero() {
            return None;
        }
        let negative = self.negative != other.negative;
        let sign = |x: f64| if negative { -x } else { x };
        if self.is_zero() {
            return Some(Ok(sign(0.0)));
        }
        // Scale so the integer quotient has 66 or 67 bits, then round once.
        let diff = self.bit_len() as i64 - other.bit_len() as i64;
        let scale = 66 - diff;
        let (num, den) = if scale >= 0 {
            (shl_mag(&self.mag, scale as u64), other.mag.clone())
        } else {
            (self.mag.clone(), shl_mag(&other.mag, scale.unsigned_abs()))
        };
        let (q, r) = divmod_mag(&num, &den);
        let qbits = bit_len_mag(&q);
        let drop = qbits.saturating_sub(64);
        let top = shr_mag(&q, drop);
        let lo = u64::from(top.first().copied().unwrap_or(0));
        let hi = u64::from(top.get(1).copied().unwrap_or(0));
        let mant = (hi << 32) | lo;
        let sticky = !r.is_empty() || low_bits_nonzero(&q, drop);
        Some(compose_f64(mant, sticky, drop as i64 - scale).map(sign))
    }

    /// Decimal digits with a leading `-` when negative.
    pub(crate) fn to_decimal(&self) -> String {
        if self.is_zero() {
            return "0".to_string();
        }
        let mut chunks = Vec::new();
        let mut cur = self.mag.clone();
        let billion = [1_000_000_000u32];
        while !cur.is_empty() {
            let (q, r) = divmod_mag(&cur, &billion);
            chunks.push(r.first().copied().unwrap_or(0));
            cur = q;
        }
        let mut out = String::new();
        if self.negative {
            out.push('-');
        }
        let mut iter = chunks.iter().rev();
        if let Some(first) = iter.next() {
            out.push_str(&first.to_string());
        }
        for chunk in iter {
            out.push_str(&format!("{chunk:09}"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(s: &str) -> BigInt {
        match s.strip_prefix('-') {
            Some(rest) => BigInt::from_decimal(rest).neg(),
            None => BigInt::from_decimal(s),
        }
    }

    #[test]
    fn decimal_round_trip() {
        for s in [
            "0",
            "1",
            "4294967296",
            "-18446744073709551617",
            "123456789012345678901234567890",
        ] {
            assert_eq!(big(s).to_decimal(), s);
        }
    }

    #[test]
    fn arithmetic() {
        let a = big("123456789012345678901234567890");
        let b = big("-987654321098765432109876543210");
        assert_eq!(a.add(&b).to_decimal(), "-864197532086419753208641975320");
        assert_eq!(a.sub(&b).to_decimal(), "1111111110111111111011111111100");
        assert_eq!(
            a.mul(&b).map(|p| p.to_decimal()),
            Ok("-121932631137021795226185032733622923332237463801111263526900".to_string())
        );
        assert_eq!(
            b.floor_div(&a).map(|q| q.to_decimal()),
            Some("-9".to_string())
        );
        assert_eq!(
            big("-7").floor_div(&big("2")).map(|q| q.to_decimal()),
            Some("-4".to_string())
        );
        assert_eq!(
            big("7").floor_div(&big("-2")).map(|q| q.to_decimal()),
            Some("-4".to_string())
        );
        assert_eq!(
            big("-8").floor_div(&big("2")).map(|q| q.to_decimal()),
            Some("-4".to_string())
        );
        assert!(big("1").floor_div(&BigInt::zero()).is_none());
        let p = big("3").pow(&big("100")).map(|p| p.to_decimal());
        assert_eq!(
            p,
            Ok("515377520732011331036461129765621272702107522001".to_string())
        );
        let big_q = big("515377520732011331036461129765621272702107522001")
            .floor_div(&big("3486784401"))
            .map(|q| q.to_decimal());
        assert_eq!(
            big_q,
            Some("147808829414345923316083210206383297601".to_string())
        );
        assert_eq!(
            big("-1").pow(&big("12345678901234567890123")),
            Ok(big("-1"))
        );
        assert_eq!(big("2").pow(&big("1000000000")), Err(TooBig));
    }

    #[test]
    fn float_conversion_is_correctly_rounded() {
        assert_eq!(big("99999999999999999999").to_f64(), Ok(1e20));
        assert_eq!(big("9007199254740993").to_f64(), Ok(9007199254740992.0));
        assert_eq!(big("9007199254740995").to_f64(), Ok(9007199254740996.0));
        let two_1023 = big("2")
            .pow(&big("1023"))
            .unwrap_or_else(|_| BigInt::zero());
        assert_eq!(two_1023.to_f64(), Ok(2f64.powi(1023)));
        let two_1024 = two_1023.mul(&big("2")).unwrap_or_else(|_| BigInt::zero());
        assert_eq!(two_1024.to_f64(), Err(FloatOverflow));
        // Just below 2^1024, rounding up overflows.
        let near = two_1024.sub(&big("1"));
        assert_eq!(near.to_f64(), Err(FloatOverflow));
        assert_eq!(near.neg().to_f64(), Err(FloatOverflow));
    }

    #[test]
    fn true_division_is_correctly_rounded() {
        let pow = |b: &str, e: &str| big(b).pow(&big(e)).unwrap_or_else(|_| BigInt::zero());
        assert_eq!(big("1").true_div(&big("3")), Some(Ok(1.0 / 3.0)));
        assert_eq!(
            pow("2", "200").true_div(&pow("2", "100")),
            Some(Ok(2f64.powi(100)))
        );
        assert_eq!(big("1").true_div(&pow("2", "2000")), Some(Ok(0.0)));
        assert_eq!(big("1").true_div(&pow("2", "1074")), Some(Ok(5e-324)));
        assert_eq!(big("1").true_div(&pow("2", "1075")), Some(Ok(0.0)));
        assert_eq!(big("3").true_div(&pow("2", "1076")), Some(Ok(5e-324)));
        assert_eq!(
            pow("2", "2000").true_div(&big("3")),
            Some(Err(FloatOverflow))
        );
        assert_eq!(
            big("0")
                .true_div(&big("-5"))
                .map(|r| r.map(f64::is_sign_negative)),
            Some(Ok(true))
        );
        assert_eq!(big("1").true_div(&BigInt::zero()), None);
        let ten = |e: &str| pow("10", e);
        assert_eq!(ten("400").true_div(&ten("399")), Some(Ok(10.0)));
    }
}
