//! The world's message templates: a bounded environment, and filters so
//! world authors can show money and numbers the way an accountant expects
//! without SQL string gymnastics.
//!
//! A template is world code that runs on every call, so it gets the same
//! kind of bounds as world SQL and scripts: a fuel budget (counted in
//! template instructions and data, so it is deterministic) and a cap on the
//! size of the text it renders.

use std::io::Write;

use minijinja::{Environment, Error, ErrorKind, Value};

/// Fuel per render: about this many template instructions, or 64 times as
/// many bytes of data built. Real messages use a few thousand.
pub const FUEL: u64 = 500_000;

/// The most text one render may produce.
pub const MAX_OUTPUT_BYTES: usize = 1 << 20;

/// The environment every world's templates live in: lenient about missing
/// fields, with the world filters, and bounded.
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    env.set_fuel(Some(FUEL));
    register_filters(&mut env);
    env
}

/// Why a template did not render.
#[derive(Debug)]
pub enum RenderError {
    /// It used up its fuel: a runaway loop, or data too big to build.
    OutOfFuel,
    /// Its text grew past [`MAX_OUTPUT_BYTES`].
    TooLarge,
    /// Any other template error (an unknown filter, a type error, ...).
    Failed(Error),
}

impl RenderError {
    /// The error in words, naming the tool and the template.
    pub fn describe(&self, tool: &str, template: &str) -> String {
        match self {
            RenderError::OutOfFuel => format!(
                "the tool `{tool}`'s template `{template}` took too long and was stopped (it used up its budget of {FUEL} steps)"
            ),
            RenderError::TooLarge => format!(
                "the tool `{tool}`'s template `{template}` produced more than {MAX_OUTPUT_BYTES} bytes of text and was stopped"
            ),
            RenderError::Failed(e) => {
                format!("the tool `{tool}`'s template `{template}` failed: {e}")
            }
        }
    }
}

/// Renders the template `name` with `context`, within the fuel budget and
/// the output cap.
pub fn render<C: serde::Serialize + ?Sized>(
    env: &Environment<'static>,
    name: &str,
    context: &C,
) -> Result<String, RenderError> {
    let template = env.get_template(name).map_err(RenderError::Failed)?;
    let mut out = CappedBuffer::default();
    let rendered =
        template.render_captured_to(Value::from(minijinja::value::Serde(context)), &mut out);
    if out.overflowed {
        return Err(RenderError::TooLarge);
    }
    match rendered {
        Ok(_) => String::from_utf8(out.bytes)
            .map_err(|e| RenderError::Failed(Error::new(ErrorKind::WriteFailure, e.to_string()))),
        Err(e) if e.kind() == ErrorKind::OutOfFuel => Err(RenderError::OutOfFuel),
        Err(e) => Err(RenderError::Failed(e)),
    }
}

/// Collects rendered text, refusing to grow past [`MAX_OUTPUT_BYTES`].
#[derive(Default)]
struct CappedBuffer {
    bytes: Vec<u8>,
    overflowed: bool,
}

impl Write for CappedBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > MAX_OUTPUT_BYTES {
            self.overflowed = true;
            return Err(std::io::Error::other("the rendered text is too large"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn register_filters(env: &mut Environment<'static>) {
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

    /// Renders `source` alone in a world environment.
    fn render_source(source: &str, context: serde_json::Value) -> Result<String, RenderError> {
        let mut env = environment();
        env.add_template_owned("t".to_string(), source.to_string())
            .unwrap();
        render(&env, "t", &context)
    }

    #[test]
    fn renders_within_bounds() {
        let out = render_source(
            "Hi {{ who }}: {{ cents | money }}",
            serde_json::json!({"who": "Ada", "cents": 150}),
        );
        assert_eq!(out.unwrap(), "Hi Ada: $1.50");
    }

    #[test]
    fn runaway_loops_run_out_of_fuel_and_huge_text_is_refused() {
        let nested =
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
        let err = render_source(nested, serde_json::json!({})).unwrap_err();
        assert!(matches!(err, RenderError::OutOfFuel), "{err:?}");
        assert!(err.describe("spin", "spin/text").contains("`spin`"));
        let huge = "{% for i in range(5000) %}{{ 'x' * 1000 }}{% endfor %}";
        let err = render_source(huge, serde_json::json!({})).unwrap_err();
        assert!(matches!(err, RenderError::TooLarge), "{err:?}");
    }
}
