//! CPython 3.11's tokenizer, restricted to what the whitelist lets through:
//! numbers, `+ - * ** / // ( ) .`, `...` and spaces.

use super::error::{syntax_error, CalcError};

/// CPython's tokenizer refuses more than this many open parentheses.
const MAX_PAREN_LEVEL: u32 = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Number,
    Plus,
    Minus,
    Star,
    DoubleStar,
    Slash,
    DoubleSlash,
    LPar,
    RPar,
    Dot,
    Ellipsis,
    EndMarker,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Token {
    pub(super) kind: Kind,
    pub(super) start: usize,
    pub(super) end: usize,
    /// Parenthesis depth after this token, as CPython records it.
    pub(super) level: u32,
}

/// The token stream up to the first tokenizer error, and that error.
pub(super) struct Lexed {
    pub(super) tokens: Vec<Token>,
    /// Raised when the parser asks for the token after the last one; when
    /// `None` and parentheses are still open, that request raises
    /// "'(' was never closed" instead.
    pub(super) error: Option<CalcError>,
}

/// Tokenizes the whole source up front, stopping at the first error.
///
/// CPython tokenizes lazily, and laziness is observable: a tokenizer error
/// only surfaces if the parser asks for that token, or if parsing fails
/// with a `SyntaxError` (then `_PyPegen_tokenize_full_source_to_check_for_errors`
/// scans the rest and the tokenizer's message replaces the parser's). A
/// parser `MemoryError` before that point wins. The parser's
/// `Parser::token` replays that order over the precomputed stream.
pub(super) fn tokenize(src: &str) -> Lexed {
    match tokenize_until_error(src) {
        (tokens, Ok(())) => Lexed {
            tokens,
            error: None,
        },
        (tokens, Err(e)) => Lexed {
            tokens,
            error: Some(e),
        },
    }
}

fn tokenize_until_error(src: &str) -> (Vec<Token>, Result<(), CalcError>) {
    let bytes = src.as_bytes();
    let mut tokens = Vec::new();
    let mut level = 0u32;
    let mut i = 0;
    let at = |j: usize| bytes.get(j).copied().unwrap_or(0);
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let kind = match c {
            b' ' => {
                i += 1;
                continue;
            }
            b'+' => {
                i += 1;
                Kind::Plus
            }
            b'-' => {
                i += 1;
                Kind::Minus
            }
            b'*' if at(i + 1) == b'*' => {
                i += 2;
                Kind::DoubleStar
            }
            b'*' => {
                i += 1;
                Kind::Star
            }
            b'/' if at(i + 1) == b'/' => {
                i += 2;
                Kind::DoubleSlash
            }
            b'/' => {
                i += 1;
                Kind::Slash
            }
            b'(' => {
                if level >= MAX_PAREN_LEVEL {
                    return (tokens, Err(syntax_error("too many nested parentheses")));
                }
                level += 1;
                i += 1;
                Kind::LPar
            }
            b')' => {
                if level == 0 {
                    return (tokens, Err(syntax_error("unmatched ')'")));
                }
                level -= 1;
                i += 1;
                Kind::RPar
            }
            b'.' if at(i + 1).is_ascii_digit() => {
                i = scan_digits(bytes, i + 1);
                Kind::Number
            }
            b'.' if at(i + 1) == b'.' && at(i + 2) == b'.' => {
                i += 3;
                Kind::Ellipsis
            }
            b'.' => {
                i += 1;
                Kind::Dot
            }
            _ => match scan_number(bytes, i) {
                Ok(end) => {
                    i = end;
                    Kind::Number
                }
                Err(e) => return (tokens, Err(e)),
            },
        };
        tokens.push(Token {
            kind,
            start,
            end: i,
            level,
        });
    }
    if level == 0 {
        tokens.push(Token {
            kind: Kind::EndMarker,
            start: bytes.len(),
            end: bytes.len(),
            level,
        });
    }
    (tokens, Ok(()))
}

fn scan_digits(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// Scans a number starting with a digit, as CPython's `tok_get` does
/// (only decimal forms are reachable: no letters pass the whitelist).
fn scan_number(bytes: &[u8], start: usize) -> Result<usize, CalcError> {
    let mut i = start;
    if bytes[i] == b'0' {
        while bytes.get(i) == Some(&b'0') {
            i += 1;
        }
        let nonzero = bytes.get(i).is_some_and(u8::is_ascii_digit);
        i = scan_digits(bytes, i);
        if bytes.get(i) == Some(&b'.') {
            return Ok(scan_digits(bytes, i + 1));
        }
        if nonzero {
            return Err(syntax_error(
                "leading zeros in decimal integer literals are not permitted; \
                 use an 0o prefix for octal integers",
            ));
        }
        return Ok(i);
    }
    i = scan_digits(bytes, i);
    if bytes.get(i) == Some(&b'.') {
        i = scan_digits(bytes, i + 1);
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use crate::python::calc::{calculate_text, check};

    #[test]
    fn tokenizer_errors() {
        check(&[
            ("2))", "Error: unmatched ')' (<string>, line 1)"),
            (")", "Error: unmatched ')' (<string>, line 1)"),
            (
                "01",
                "Error: leading zeros in decimal integer literals are not permitted; \
                 use an 0o prefix for octal integers (<string>, line 1)",
            ),
        ]);
    }

    #[test]
    fn paren_nesting_limit() {
        assert_eq!(
            calculate_text(&format!("{}1{}", "(".repeat(201), ")".repeat(201))),
            "Error: too many nested parentheses (<string>, line 1)"
        );
        assert_eq!(
            calculate_text(&format!("{}1{}", "(".repeat(200), ")".repeat(200))),
            "1.0"
        );
    }
}
