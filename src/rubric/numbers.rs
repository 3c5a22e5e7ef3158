//! What a message *says*: normalized phrases, numbers read as numbers, and
//! dates in the ways people write them.
//!
//! Graders that test `"10" in message` reward "100" and "2010"; graders that
//! test exact strings miss "$1,990" for "1990.00". Here a number is matched
//! by value, only where the text really contains that number, and phrases
//! only at word boundaries. The rules are spelled out in `docs/rubrics.md`.

use std::sync::OnceLock;

use chrono::{Datelike, NaiveDate};
use regex::Regex;

/// Lowercases, maps typographic quotes, dashes and spaces to ASCII, and
/// collapses runs of whitespace, so "5–10 business days" and
/// "5-10  Business days" read the same.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201F}' | '\u{2033}' => '"',
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => '-',
            c if c.is_whitespace() => ' ',
            c => c,
        };
        if c == ' ' {
            if !space && !out.is_empty() {
                out.push(' ');
            }
            space = true;
            continue;
        }
        space = false;
        out.extend(c.to_lowercase());
    }
    if out.ends_with(' ') {
        out.pop();
    }
    out
}

/// Whether `needle` (already normalized) occurs in `haystack` (already
/// normalized) as a phrase: where the needle starts or ends with a letter or
/// digit, the text next to the match must not be one, so "10" is not found
/// in "100" and "inv-2407" is not found in "inv-24073".
pub fn contains_phrase(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    let first_alnum = needle.chars().next().is_some_and(char::is_alphanumeric);
    let last_alnum = needle
        .chars()
        .next_back()
        .is_some_and(char::is_alphanumeric);
    let mut from = 0;
    while let Some(pos) = haystack[from..].find(needle) {
        let start = from + pos;
        let end = start + needle.len();
        let before_ok = !first_alnum
            || !haystack[..start]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric);
        let after_ok = !last_alnum
            || !haystack[end..]
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric);
        if before_ok && after_ok {
            return true;
        }
        from = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// A number found in a text, with where it was.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundNumber {
    /// The number, read without currency sign and grouping (`$1,990.00` is
    /// 1990); negative after a `-` that follows a space or `(` or starts the
    /// text (the minus is not part of `text`).
    pub value: f64,
    /// The text as written, e.g. `$1,990.00`.
    pub text: String,
    /// Byte offset of `text` in the text searched.
    pub start: usize,
}

fn number_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?:[$€£]\s?)?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
            .expect("the number pattern is valid")
    })
}

fn masked_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // ISO dates and clock times are not quantities: "2025-04-01" does not
    // mention 4, and "11:30" does not mention 30.
    RE.get_or_init(|| {
        Regex::new(r"\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?|\d{1,2}:\d{2}(?::\d{2})?").expect("valid")
    })
}

/// Every number a text mentions, read as a number: `$1,990.00`, `1990` and
/// `1,990` are all 1990. Digits glued to letters (`INV-24073`, `2FA`,
/// `10am`) are identifiers, not numbers.
pub fn numbers_in(text: &str) -> Vec<FoundNumber> {
    let mut masked: Vec<(usize, usize)> = masked_regex()
        .find_iter(text)
        .map(|m| (m.start(), m.end()))
        .collect();
    masked.sort_unstable();
    let mut out = Vec::new();
    for m in number_regex().find_iter(text) {
        if masked.iter().any(|(s, e)| m.start() < *e && m.end() > *s) {
            continue;
        }
        let before = text[..m.start()].chars().next_back();
        let after = text[m.end()..].chars().next();
        // Glued to a letter or digit on the left: part of a word or id.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        // "INV-24073", "SUB-3012": a dash after a letter joins an id.
        let mut negative = false;
        if let Some(dash) = before.filter(|c| *c == '-' || *c == '\u{2212}' || *c == '\u{2013}') {
            let prev = text[..m.start() - dash.len_utf8()].chars().next_back();
            if prev.is_some_and(|c| c.is_alphabetic() || c == '_' || c == '#') {
                continue;
            }
            negative = dash != '\u{2013}' && prev.is_none_or(|c| c.is_whitespace() || c == '(');
        }
        if before == Some('#') {
            continue;
        }
        // Glued to a letter on the right: "10am", "2FA", "3x". A decimal
        // point followed by a digit cannot be left over (the regex is greedy).
        if after.is_some_and(|c| c.is_alphabetic() || c == '_') {
            continue;
        }
        let token = m.as_str();
        let digits: String = token
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let Ok(mut value) = digits.parse::<f64>() else {
            continue;
        };
        if negative {
            value = -value;
        }
        out.push(FoundNumber {
            value,
            text: token.to_string(),
            start: m.start(),
        });
    }
    out
}

/// Reads a whole string as one number (`"1,990.00"`, `"$79"`, `"-4"`), or
/// `None` when it is anything else.
pub fn parse_number(text: &str) -> Option<f64> {
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-').or_else(|| t.strip_prefix('\u{2212}')) {
        Some(rest) => (true, rest.trim_start()),
        None => (false, t),
    };
    let t = t.trim_start_matches(['$', '€', '£']).trim_start();
    let m = number_regex().find(t)?;
    if m.start() != 0 || m.end() != t.len() || t.is_empty() {
        return None;
    }
    let digits: String = t
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let v = digits.parse::<f64>().ok()?;
    Some(if negative { -v } else { v })
}

/// Whether two numbers are the same. With a `tolerance` above 0 they may
/// differ by that much. Without one: integers (and identifiers read as
/// numbers) must be equal exactly, amounts with at most two decimals must
/// be equal to the cent, and only other non-integral values get a relative
/// 1e-9 for float noise. A 12-digit tracking number therefore never matches
/// its neighbour, which a relative tolerance alone would allow.
pub fn same_number(a: f64, b: f64, tolerance: f64) -> bool {
    if tolerance > 0.0 {
        let noise = 4.0 * f64::EPSILON * a.abs().max(b.abs()).max(1.0);
        return (a - b).abs() <= tolerance + noise;
    }
    if a.fract() == 0.0 && b.fract() == 0.0 {
        return a == b;
    }
    if is_cents(a) && is_cents(b) {
        return (a * 100.0).round() == (b * 100.0).round();
    }
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// At most two decimals, allowing for float noise (`0.1 + 0.2`).
fn is_cents(x: f64) -> bool {
    let c = x * 100.0;
    (c - c.round()).abs() <= 1e-6 * c.abs().max(1.0)
}

/// The first number in `text` equal to `value` within `tolerance`.
pub fn find_number(text: &str, value: f64, tolerance: f64) -> Option<FoundNumber> {
    numbers_in(text)
        .into_iter()
        .find(|n| same_number(n.value, value, tolerance))
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A pattern matching `date` as people write it: "April 1, 2025",
/// "Apr 1st 2025", "1 April 2025", "2025-04-01", "04/01/2025" (US order).
/// Matched against normalized (lowercase) text.
pub fn date_regex(date: NaiveDate) -> Regex {
    let month = MONTHS[date.month0() as usize];
    let short = &month[..3];
    let day = date.day();
    let year = date.year();
    let m = date.month();
    let month_alt = format!("(?:{month}|{short}\\.?)");
    let day_alt = format!("0?{day}(?:st|nd|rd|th)?");
    let pattern = format!(
        r"\b(?:{month_alt} {day_alt},? {year}|{day_alt} (?:of )?{month_alt},? {year}|{year}-{m:02}-{day:02}|0?{m}/0?{day}/{year})\b"
    );
    Regex::new(&pattern).unwrap_or_else(|_| {
        Regex::new(&regex::escape(&date.to_string())).expect("an escaped date is a valid regex")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<f64> {
        numbers_in(text).into_iter().map(|n| n.value).collect()
    }

    #[test]
    fn numbers_are_read_as_numbers() {
        for text in ["$1,990.00", "1990", "1,990", "it was 1990.", "($1,990)"] {
            assert!(find_number(text, 1990.0, 0.0).is_some(), "{text}");
        }
        assert!(find_number("we refunded 100 dollars", 10.0, 0.0).is_none());
        assert!(find_number("in 2010", 10.0, 0.0).is_none());
        assert!(find_number("10.5", 10.0, 0.0).is_none());
        assert_eq!(values("5–10 business days"), vec![5.0, 10.0]);
        assert_eq!(values("invoice INV-24073 and SUB-3012"), Vec::<f64>::new());
        assert_eq!(values("order #W6067464"), Vec::<f64>::new());
        assert_eq!(values("enable 2FA at 10am"), Vec::<f64>::new());
        assert_eq!(values("on 2025-04-01 at 11:30"), Vec::<f64>::new());
        assert_eq!(values("April 1, 2025"), vec![1.0, 2025.0]);
        assert_eq!(values("1,2,3"), vec![1.0, 2.0, 3.0]);
        assert_eq!(values("a balance of -4 and 108.39."), vec![-4.0, 108.39]);
        assert_eq!(values("20% off"), vec![20.0]);
    }

    #[test]
    fn integers_are_exact_money_is_to_the_cent() {
        assert!(!same_number(123_456_789_012.0, 123_456_789_013.0, 0.0));
        assert!(!same_number(123_456_789_012.0, 123_456_789_758.0, 0.0));
        assert!(same_number(1990.0, 1990.0, 0.0));
        assert!(!same_number(79.0, 79.01, 0.0));
        assert!(same_number(0.1 + 0.2, 0.3, 0.0));
        assert!(same_number(1093.34, 1093.34, 0.0));
        assert!(!same_number(1093.34, 1093.35, 0.0));
        assert!(same_number(79.004, 79.0, 0.005));
        assert!(same_number(79.005, 79.0, 0.005));
        assert!(!same_number(79.01, 79.0, 0.005));
        assert!(same_number(2.718_281_9, 2.718_281_900_000_1, 0.0));
    }

    #[test]
    fn whole_strings_parse_as_numbers_or_not() {
        assert_eq!(parse_number("1,990.00"), Some(1990.0));
        assert_eq!(parse_number("$79"), Some(79.0));
        assert_eq!(parse_number(" -4 "), Some(-4.0));
        assert_eq!(parse_number("INV-24073"), None);
        assert_eq!(parse_number("April 1, 2025"), None);
        assert_eq!(parse_number("12abc"), None);
        assert_eq!(parse_number(""), None);
    }

    #[test]
    fn phrases_respect_word_boundaries() {
        let text = normalize("Refund of $79.00 on INV-24073 — appears within 5–10 business days");
        assert!(contains_phrase(&text, &normalize("inv-24073")));
        assert!(!contains_phrase(&text, &normalize("INV-2407")));
        assert!(contains_phrase(&text, &normalize("5-10 Business  days")));
        assert!(!contains_phrase("refunded 100", "10"));
        assert!(contains_phrase("refunded 10.", "10"));
    }

    #[test]
    fn dates_match_common_spellings() {
        let re = date_regex(NaiveDate::from_ymd_opt(2025, 4, 1).expect("date"));
        for text in [
            "april 1, 2025",
            "apr. 1st 2025",
            "1 april 2025",
            "2025-04-01",
            "04/01/2025",
            "until april 1 2025.",
        ] {
            assert!(re.is_match(text), "{text}");
        }
        for text in ["april 11, 2025", "april 1, 2026", "march 1, 2025"] {
            assert!(!re.is_match(text), "{text}");
        }
    }
}
