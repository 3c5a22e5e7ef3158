//! Template filters for tool messages, so world authors can show money and
//! numbers the way an accountant expects without SQL string gymnastics.

use minijinja::{Environment, Error, ErrorKind, Value};

pub fn register_filters(env: &mut Environment<'static>) {
    env.add_filter("money", money);
    env.add_filter("number", number);
}

/// Integer cents to `$1,234.56` (negative: `-$1,234.56`).
fn money(cents: Value) -> Result<String, Error> {
    let cents = i64::try_from(cents.clone())
        .or_else(|_| f64::try_from(cents).map(|f| f.round() as i64))
        .map_err(|_| {
            Error::new(
                ErrorKind::InvalidOperation,
                "money expects an amount in cents",
            )
        })?;
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    Ok(format!("{sign}${}.{:02}", group(abs / 100), abs % 100))
}

/// A number with thousands separators and `places` decimals.
fn number(value: Value, places: Option<u32>) -> Result<String, Error> {
    let x = f64::try_from(value)
        .map_err(|_| Error::new(ErrorKind::InvalidOperation, "number expects a number"))?;
    let places = places.unwrap_or(0).min(10) as usize;
    let text = format!("{:.*}", places, x.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let int: u64 = int.parse().unwrap_or(0);
    let sign = if x < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        "-"
    } else {
        ""
    };
    Ok(if frac.is_empty() {
        format!("{sign}{}", group(int))
    } else {
        format!("{sign}{}.{frac}", group(int))
    })
}

fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_money_and_numbers() {
        assert_eq!(money(Value::from(123456)).unwrap(), "$1,234.56");
        assert_eq!(money(Value::from(-5)).unwrap(), "-$0.05");
        assert_eq!(money(Value::from(0)).unwrap(), "$0.00");
        assert_eq!(number(Value::from(1234.5), Some(2)).unwrap(), "1,234.50");
        assert_eq!(number(Value::from(999), None).unwrap(), "999");
        assert_eq!(
            number(Value::from(-1234567.0), Some(1)).unwrap(),
            "-1,234,567.0"
        );
    }
}
