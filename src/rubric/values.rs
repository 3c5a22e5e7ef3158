//! The values a message *states*, each with its kind: money, a count, a
//! date or an identifier. Committed answers need this: an answer is only
//! given when no competing value of the same kind stands beside it, so a
//! message that lists candidates ("$79.00, $80.00 or $81.00", "between 3
//! and 7") or stuffs every number commits to none of them.
//!
//! Kinds, as a reader would tell them apart:
//! - **money**: a number with a currency sign or exactly two decimals
//!   (`$1,093.34`, `1093.34`, `$790`);
//! - **count**: any other number (`14 users`, `5–10 days`, `20%`, `4.5`);
//! - **date**: a calendar date however it is written (see [`dates_in`]);
//! - **id**: a code with letters and digits (`INV-24073`, `#W6067464`,
//!   `3FRNFB`, `credit_card_4190576`) or a bare run of 7 or more digits (a
//!   tracking or item number). Ids compete only with ids of the same
//!   *shape* (`INV-` and five digits), so an invoice number does not
//!   compete with an order number.
//!
//! Names and free phrases have no kind: nothing tells a competing name
//! apart from any other word, so only a message's bounds limit them.

use std::sync::OnceLock;

use chrono::NaiveDate;
use regex::Regex;

use super::numbers::{self, FoundNumber};

/// The kind of a stated value; ids carry their shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// A number with a currency sign or exactly two decimals (`$790`,
    /// `1,093.34`).
    Money,
    /// Any other number (`14`, `5–10`, `20%`, `4.5`).
    Count,
    /// A calendar date, however it is written.
    Date,
    /// The id's shape: its leading letters as written (lowercased), then
    /// `9` for each digit and `a` for each later letter.
    Id(String),
}

impl ValueKind {
    /// The kind as a grader says it, in the plural: "other amounts",
    /// "other dates".
    pub fn plural(&self) -> &'static str {
        match self {
            ValueKind::Money => "amounts",
            ValueKind::Count => "numbers",
            ValueKind::Date => "dates",
            ValueKind::Id(_) => "references",
        }
    }
}

/// What a stated value is, comparable with an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueKey {
    /// Money or a count, by value: `$1,990.00` and `1990` are the same key.
    Number(f64),
    /// A calendar date, however it was written.
    Date(NaiveDate),
    /// An id, lowercased.
    Text(String),
}

impl ValueKey {
    /// Whether two keys name the same value (numbers by
    /// [`numbers::same_number`], ids case-insensitively).
    pub fn same(&self, other: &ValueKey) -> bool {
        match (self, other) {
            (ValueKey::Number(a), ValueKey::Number(b)) => numbers::same_number(*a, *b, 0.0),
            (ValueKey::Date(a), ValueKey::Date(b)) => a == b,
            (ValueKey::Text(a), ValueKey::Text(b)) => a == b,
            _ => false,
        }
    }
}

/// One value a message states.
#[derive(Debug, Clone, PartialEq)]
pub struct Stated {
    /// What kind of value it is; values compete only with values of their kind.
    pub kind: ValueKind,
    /// The value itself, to compare with an answer ([`ValueKey::same`]).
    pub key: ValueKey,
    /// As written.
    pub text: String,
    /// Byte offsets in the message.
    pub start: usize,
    /// Byte offset just past the value: `text` is `message[start..end]`.
    pub end: usize,
}

/// Every value `text` states, in order.
pub fn stated_values(text: &str) -> Vec<Stated> {
    let mut out: Vec<Stated> = dates_in(text)
        .into_iter()
        .map(|(date, start, end)| Stated {
            kind: ValueKind::Date,
            key: ValueKey::Date(date),
            text: text[start..end].to_string(),
            start,
            end,
        })
        .collect();
    let taken = |out: &[Stated], s: usize, e: usize| out.iter().any(|v| s < v.end && e > v.start);
    for m in word_regex().find_iter(text) {
        let word = m.as_str().trim_end_matches(['-', '_', '.']);
        let (start, end) = (m.start(), m.start() + word.len());
        if taken(&out, start, end) {
            continue;
        }
        // Digits right after a currency sign or inside a grouped number
        // (`$1234567`, `1,2345678`) are an amount, not an id.
        let glued = text[..start].chars().next_back();
        let spaced = text[..start].trim_end_matches(' ').chars().next_back();
        if glued.is_some_and(|c| matches!(c, '.' | ','))
            || spaced.is_some_and(|c| matches!(c, '$' | '€' | '£'))
        {
            continue;
        }
        if let Some(shape) = id_shape(word) {
            out.push(Stated {
                kind: ValueKind::Id(shape),
                key: ValueKey::Text(word.to_lowercase()),
                text: word.to_string(),
                start,
                end,
            });
        }
    }
    for n in numbers::numbers_in(text) {
        let end = n.start + n.text.len();
        if taken(&out, n.start, end) {
            continue;
        }
        out.push(Stated {
            kind: number_kind(&n),
            key: ValueKey::Number(n.value),
            text: n.text.clone(),
            start: n.start,
            end,
        });
    }
    out.sort_by_key(|v| v.start);
    out
}

/// Money or a count, by how the number is written.
pub fn number_kind(n: &FoundNumber) -> ValueKind {
    let t = n.text.trim();
    let currency = t.starts_with(['$', '€', '£']);
    let two_decimals = t
        .rsplit_once('.')
        .is_some_and(|(_, d)| d.len() == 2 && d.chars().all(|c| c.is_ascii_digit()));
    if currency || two_decimals {
        ValueKind::Money
    } else {
        ValueKind::Count
    }
}

/// How many distinct values of each kind `values` holds, most first.
pub fn distinct_per_kind(values: &[Stated]) -> Vec<(ValueKind, usize)> {
    let mut kinds: Vec<(ValueKind, Vec<&ValueKey>)> = Vec::new();
    for v in values {
        match kinds.iter_mut().find(|(k, _)| *k == v.kind) {
            Some((_, keys)) => {
                if !keys.iter().any(|k| k.same(&v.key)) {
                    keys.push(&v.key);
                }
            }
            None => kinds.push((v.kind.clone(), vec![&v.key])),
        }
    }
    let mut out: Vec<(ValueKind, usize)> = kinds.into_iter().map(|(k, v)| (k, v.len())).collect();
    out.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    out
}

fn word_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Only words with a digit can be ids; the others are never matched.
    RE.get_or_init(|| Regex::new(r"(?-u)#?[A-Za-z0-9_\-]*[0-9][A-Za-z0-9_\-]*").expect("valid"))
}

/// The shape of `word` when it is an identifier: it starts with `#` or a
/// letter and has a digit, or it is a code of 5–8 capitals and digits
/// starting with a digit (`3FRNFB`), or 7 or more bare digits. Ordinals,
/// times and units (`1st`, `10am`, `2FA`, `5GB`) are not ids.
pub fn id_shape(word: &str) -> Option<String> {
    let has_digit = word.chars().any(|c| c.is_ascii_digit());
    if !has_digit {
        return None;
    }
    let first = word.chars().next()?;
    let all_digits = word.chars().all(|c| c.is_ascii_digit());
    let code = (5..=8).contains(&word.len())
        && first.is_ascii_digit()
        && word
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        && word.chars().any(|c| c.is_ascii_uppercase())
        && word.chars().filter(|c| c.is_ascii_uppercase()).count() >= 3;
    let prefixed = first == '#' || first.is_ascii_alphabetic();
    if !(prefixed || code || (all_digits && word.len() >= 7)) {
        return None;
    }
    let mut shape = String::new();
    let mut in_prefix = prefixed;
    for c in word.chars() {
        if in_prefix && !c.is_ascii_digit() {
            shape.extend(c.to_lowercase());
            continue;
        }
        in_prefix = false;
        shape.push(if c.is_ascii_digit() {
            '9'
        } else if c.is_ascii_alphabetic() {
            'a'
        } else {
            c
        });
    }
    Some(shape)
}

const MONTHS: &str = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?";

fn date_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let day = r"(\d{1,2})(?:st|nd|rd|th)?";
        Regex::new(&format!(
            r"(?i-u)\b(?:{MONTHS}\s+{day},?\s+(\d{{4}})|{day}\s+(?:of\s+)?{MONTHS},?\s+(\d{{4}})|(\d{{4}})-(\d{{2}})-(\d{{2}})|(\d{{1,2}})/(\d{{1,2}})/(\d{{4}}))\b"
        ))
        .expect("the date pattern is valid")
    })
}

fn month_number(name: &str) -> Option<u32> {
    let n = name.to_lowercase();
    let all = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    all.iter()
        .position(|m| n.starts_with(m))
        .map(|i| i as u32 + 1)
}

/// Every calendar date in `text`, with its byte span: "April 12, 2025",
/// "Apr. 12th 2025", "12 April 2025", "2025-04-12", "04/12/2025" (US order).
/// Impossible dates (February 30) are not dates.
pub fn dates_in(text: &str) -> Vec<(NaiveDate, usize, usize)> {
    let num =
        |c: &regex::Captures<'_>, i: usize| c.get(i).and_then(|m| m.as_str().parse::<i64>().ok());
    let mut out = Vec::new();
    for c in date_regex().captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        let ymd = if let Some(month) = c.get(1) {
            (
                num(&c, 3),
                month_number(month.as_str()).map(i64::from),
                num(&c, 2),
            )
        } else if let Some(month) = c.get(5) {
            (
                num(&c, 6),
                month_number(month.as_str()).map(i64::from),
                num(&c, 4),
            )
        } else if c.get(7).is_some() {
            (num(&c, 7), num(&c, 8), num(&c, 9))
        } else {
            (num(&c, 12), num(&c, 10), num(&c, 11))
        };
        if let (Some(y), Some(mo), Some(d)) = ymd {
            if let Some(date) = NaiveDate::from_ymd_opt(y as i32, mo as u32, d as u32) {
                out.push((date, m.start(), m.end()));
            }
        }
    }
    out
}

/// The date as a person writes it in a message ("April 12, 2025").
pub fn write_date(date: NaiveDate) -> String {
    date.format("%B %-d, %Y").to_string()
}

/// Whether `key` is the same value as one of `keys`.
pub fn is_one_of(key: &ValueKey, keys: &[ValueKey]) -> bool {
    keys.iter().any(|k| k.same(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds_of(text: &str) -> Vec<(String, &'static str)> {
        stated_values(text)
            .into_iter()
            .map(|v| (v.text, v.kind.plural()))
            .collect()
    }

    #[test]
    fn values_are_read_with_their_kind() {
        assert_eq!(
            kinds_of("Refund of $79.00 on INV-24073, within 5–10 business days."),
            vec![
                ("$79.00".into(), "amounts"),
                ("INV-24073".into(), "references"),
                ("5".into(), "numbers"),
                ("10".into(), "numbers"),
            ]
        );
        assert_eq!(
            kinds_of("Renews on April 12, 2025 for 790.00; order #W6067464, code 3FRNFB, tracking 123456789012."),
            vec![
                ("April 12, 2025".into(), "dates"),
                ("790.00".into(), "amounts"),
                ("#W6067464".into(), "references"),
                ("3FRNFB".into(), "references"),
                ("123456789012".into(), "references"),
            ]
        );
        assert_eq!(kinds_of("enable 2FA at 10am on the 1st"), vec![]);
        assert_eq!(
            kinds_of("INV-1, INV-2"),
            vec![
                ("INV-1".into(), "references"),
                ("INV-2".into(), "references")
            ]
        );
        assert_eq!(id_shape("INV-24073").as_deref(), Some("inv-99999"));
        assert_eq!(id_shape("#W6067464").as_deref(), Some("#w9999999"));
        assert_eq!(
            id_shape("credit_card_4190576").as_deref(),
            Some("credit_card_9999999")
        );
        assert_eq!(id_shape("HAT170").as_deref(), Some("hat999"));
    }

    #[test]
    fn dates_are_found_in_every_common_spelling() {
        for text in [
            "April 1, 2025",
            "apr. 1st 2025",
            "1 April 2025",
            "2025-04-01",
            "04/01/2025",
        ] {
            let found = dates_in(text);
            assert_eq!(found.len(), 1, "{text}");
            assert_eq!(
                found[0].0,
                NaiveDate::from_ymd_opt(2025, 4, 1).expect("date")
            );
        }
        assert!(dates_in("February 30, 2025").is_empty());
    }

    #[test]
    fn distinct_values_are_counted_per_kind() {
        let v = stated_values("$1, $2, $2.00, 3 and 4");
        assert_eq!(
            distinct_per_kind(&v),
            vec![(ValueKind::Money, 2), (ValueKind::Count, 2)]
        );
    }
}
