//! Time limits given on the command line as seconds (`--judge-timeout`,
//! `--idle-timeout`, ...), parsed once for every flag so a bad value is
//! refused by clap, naming the flag, instead of panicking later: a
//! `Duration` cannot hold `1e300` seconds, and an `Instant` cannot be
//! pushed `1e19` seconds ahead.

use std::time::Duration;

/// The shortest limit accepted, in seconds.
pub const MIN: f64 = 0.001;
/// The longest limit accepted, in seconds (about 31 years: "no limit" in practice).
pub const MAX: f64 = 1e9;

/// A clap value parser: a number of seconds from [`MIN`] to [`MAX`].
pub fn parse(text: &str) -> Result<Duration, String> {
    let range = || format!("a number of seconds from {MIN} to {MAX:.0} (about 31 years)");
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("expected {}", range()))?;
    if !(MIN..=MAX).contains(&value) {
        return Err(format!(
            "{} is out of range: expected {}",
            text.trim(),
            range()
        ));
    }
    Duration::try_from_secs_f64(value).map_err(|e| format!("{e}: expected {}", range()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_range_and_refuses_the_rest() {
        assert_eq!(parse("60"), Ok(Duration::from_secs(60)));
        assert_eq!(parse("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("1e9"), Ok(Duration::from_secs(1_000_000_000)));
        for bad in [
            "0", "-1", "1e300", "1e19", "inf", "NaN", "soon", "", "0.0001",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("from 0.001 to 1000000000"), "{bad}: {e}");
        }
    }
}
