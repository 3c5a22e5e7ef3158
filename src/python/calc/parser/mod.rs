//! The parser: a transcription of the reachable part of CPython 3.11's
//! `python.gram`.
//!
//! CPython's choice of `SyntaxError` message depends on how far its PEG
//! parser looked ahead before giving up, so this mirrors the grammar's
//! rules in the same order, with the same lazy token fetching, memoisation,
//! rule-depth limit and invalid-rule second pass, rather than being a plain
//! precedence parser. This file holds the machinery (token access, memo,
//! the two passes); the rules themselves are in [`expressions`] and
//! [`arguments`].

mod arguments;
mod expressions;

use std::collections::HashMap;

use super::ast::{ArgKind, Node, NodeId};
use super::error::{syntax_error, CalcError};
use super::lexer::{tokenize, Kind, Lexed, Token};
use super::INT_MAX_STR_DIGITS;
use crate::python::bigint::BigInt;

/// CPython's PEG parser raises `MemoryError` (whose text is empty) past this
/// many nested rule calls (`MAXSTACK` in `Parser/parser.c`).
pub(super) const MAX_PARSER_LEVEL: u32 = 6000;

/// Parses `source` (non-empty, whitelisted) into an expression tree: the
/// node arena and its root.
pub(super) fn parse(source: &str) -> Result<(Vec<Node>, NodeId), CalcError> {
    let mut parser = Parser::new(source, tokenize(source));
    let root = parser.parse()?;
    Ok((parser.nodes, root))
}

/// A rule's outcome: `Ok(None)` is "no match"; `Err` is a raised error,
/// which (like CPython's `error_indicator`) unwinds the whole parse.
type PResult<T> = Result<T, CalcError>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Rule {
    Expression,
    Disjunction,
    BitwiseOr,
    Term,
    Factor,
    AwaitPrimary,
    Primary,
    InvalidNamedExpression,
}

/// A memoised outcome: the node and the position after it, or no match.
type Memo = Option<(NodeId, usize)>;

/// A memoised `arguments` outcome: the single argument and the position
/// after it, or no match.
type ArgsMemo = Option<((ArgKind, NodeId), usize)>;

/// Parser state: CPython's `Parser` struct, reduced to what the reachable
/// rules use.
struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    /// The tokenizer error that follows `tokens`, if any.
    tok_error: Option<CalcError>,
    /// Set when the error being propagated can no longer be replaced by a
    /// later tokenizer error: a tokenizer error itself, "'(' was never
    /// closed" (tokenizer at EOF) or a `MemoryError`.
    final_error: bool,
    /// Tokens handed to the grammar so far (CPython's `p->fill`).
    fill: usize,
    mark: usize,
    /// CPython's `call_invalid_rules`: on only in the second pass.
    invalid: bool,
    level: u32,
    #[cfg(test)]
    max_level: u32,
    memo: HashMap<(Rule, usize), Memo>,
    /// Memo of the `arguments` rule, whose result is not a single node.
    args_memo: HashMap<usize, ArgsMemo>,
    nodes: Vec<Node>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, lexed: Lexed) -> Self {
        Self {
            src,
            tokens: lexed.tokens,
            tok_error: lexed.error,
            final_error: false,
            fill: 0,
            mark: 0,
            invalid: false,
            level: 0,
            #[cfg(test)]
            max_level: 0,
            memo: HashMap::new(),
            args_memo: HashMap::new(),
            nodes: Vec::new(),
        }
    }

    /// `_PyPegen_run_parser`: a fast pass, then on failure a second pass
    /// with the `invalid_*` rules enabled to find a specific message, then
    /// the generic "invalid syntax".
    ///
    /// A `SyntaxError` from either pass is replaced by a tokenizer error
    /// further on in the source, as `_PyPegen_set_syntax_error` does.
    fn parse(&mut self) -> Result<NodeId, CalcError> {
        match self.eval_rule() {
            Ok(Some(node)) => return Ok(node),
            Ok(None) => {}
            Err(e) => return Err(self.settle(e)),
        }
        self.mark = 0;
        self.level = 0;
        self.memo.clear();
        self.args_memo.clear();
        self.invalid = true;
        let err = match self.eval_rule() {
            Ok(_) => syntax_error("invalid syntax"),
            Err(e) => e,
        };
        Err(self.settle(err))
    }

    fn settle(&mut self, err: CalcError) -> CalcError {
        if self.final_error {
            return err;
        }
        self.tok_error.take().unwrap_or(err)
    }

    // -- token access ------------------------------------------------------

    /// The token at `pos`, fetching it if the parser has not looked that far
    /// yet. Fetching the end of input while parentheses are open raises, as
    /// `_Pypegen_tokenizer_error` does for the tokenizer's E_EOF error.
    fn token(&mut self, pos: usize) -> PResult<Token> {
        if pos >= self.fill {
            self.fill = pos + 1;
        }
        if let Some(t) = self.tokens.get(pos) {
            return Ok(*t);
        }
        self.final_error = true;
        Err(self
            .tok_error
            .take()
            .unwrap_or_else(|| syntax_error("'(' was never closed")))
    }

    /// Looks at the current token without consuming it.
    fn check(&mut self, kind: Kind) -> PResult<bool> {
        Ok(self.token(self.mark)?.kind == kind)
    }

    /// Consumes the current token if it is `kind`.
    fn eat(&mut self, kind: Kind) -> PResult<bool> {
        if self.check(kind)? {
            self.mark += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// A grammar test for a token that the whitelist makes impossible
    /// (a NAME, keyword, `,`, `=`, `:=`, `[`, ...). It never matches but, as
    /// in CPython, still makes the tokenizer produce the current token.
    fn never(&mut self) -> PResult<bool> {
        self.token(self.mark)?;
        Ok(false)
    }

    // -- bookkeeping ---------------------------------------------------------

    /// Enters `n` nested rule calls (CPython's `p->level++` per rule).
    fn enter(&mut self, n: u32) -> PResult<()> {
        self.level += n;
        #[cfg(test)]
        {
            self.max_level = self.max_level.max(self.level);
        }
        if self.level > MAX_PARSER_LEVEL {
            // PyErr_NoMemory(): a MemoryError, whose str() is empty.
            self.final_error = true;
            return Err(CalcError::new(""));
        }
        Ok(())
    }

    fn leave(&mut self, n: u32) {
        self.level -= n;
    }

    fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// A memoised rule one level deep, the way CPython's generated parser
    /// writes them: answer from the memo at this position, otherwise run
    /// `body` (given the start position) and remember what it found.
    fn memoized(
        &mut self,
        rule: Rule,
        body: impl FnOnce(&mut Self, usize) -> PResult<Option<NodeId>>,
    ) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(hit) = p.memo_get(rule) {
                return Ok(hit.map(|(n, _)| n));
            }
            let result = body(p, start)?;
            Ok(p.memo_put(rule, start, result))
        })
    }

    /// A left-recursive rule: memoised, with its `_raw` helper one level
    /// deeper running the loop that grows the match.
    fn left_recursive(
        &mut self,
        rule: Rule,
        grow: fn(&mut Self) -> PResult<Option<NodeId>>,
    ) -> PResult<Option<NodeId>> {
        self.memoized(rule, |p, _| {
            p.enter(1)?; // <rule>_raw
            let result = grow(p);
            p.leave(1);
            result
        })
    }

    fn memo_get(&mut self, rule: Rule) -> Option<Memo> {
        let hit = self.memo.get(&(rule, self.mark)).copied()?;
        if let Some((_, end)) = hit {
            self.mark = end;
        }
        Some(hit)
    }

    fn memo_put(&mut self, rule: Rule, start: usize, result: Option<NodeId>) -> Option<NodeId> {
        let entry = result.map(|n| (n, self.mark));
        self.memo.insert((rule, start), entry);
        result
    }

    /// Runs a rule body one call level deeper, restoring the position when
    /// it does not match.
    fn rule<T>(
        &mut self,
        levels: u32,
        body: impl FnOnce(&mut Self) -> PResult<Option<T>>,
    ) -> PResult<Option<T>> {
        self.enter(levels)?;
        let start = self.mark;
        let result = body(self);
        self.leave(levels);
        match result {
            Ok(None) => {
                self.mark = start;
                Ok(None)
            }
            other => other,
        }
    }
}

/// Converts a NUMBER token, as the parser's action does when it consumes it.
fn number_literal(text: &str) -> Result<Node, CalcError> {
    if text.contains('.') {
        // Rust's parser is correctly rounded, like CPython's, and accepts
        // `1.`, `.5` and `00.5`; overflow gives inf as in Python.
        return Ok(Node::Float(text.parse().unwrap_or(f64::INFINITY)));
    }
    // CPython counts leading zeros too (`000…0` is the only such literal).
    if text.len() > INT_MAX_STR_DIGITS {
        return Err(syntax_error(&format!(
            "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion: \
             value has {} digits; use sys.set_int_max_str_digits() to increase the limit \
             - Consider hexadecimal for huge integer literals to avoid decimal conversion limits.",
            text.len()
        )));
    }
    Ok(Node::Int(BigInt::from_decimal(text)))
}

#[cfg(test)]
mod tests {
    use crate::python::calc::{calculate_text, check};

    #[test]
    fn syntax_errors() {
        for input in [
            "2+", "1 2", "1 2 3", "*", "1..2", "1.2.3", "5 .5", "1+*2", "1///2",
        ] {
            assert_eq!(
                calculate_text(input),
                "Error: invalid syntax (<string>, line 1)",
                "{input}"
            );
        }
        check(&[
            (
                "(1 2)",
                "Error: invalid syntax. Perhaps you forgot a comma? (<string>, line 1)",
            ),
            ("((2)", "Error: '(' was never closed (<string>, line 1)"),
            ("(", "Error: '(' was never closed (<string>, line 1)"),
        ]);
    }

    #[test]
    fn lookahead_dependent_syntax_errors() {
        check(&[
            ("(1 2", "Error: '(' was never closed (<string>, line 1)"),
            (
                "(1 2 3",
                "Error: invalid syntax. Perhaps you forgot a comma? (<string>, line 1)",
            ),
            (
                "2(1 2)",
                "Error: invalid syntax. Perhaps you forgot a comma? (<string>, line 1)",
            ),
            ("1 .", "Error: invalid syntax (<string>, line 1)"),
            ("(1 .", "Error: '(' was never closed (<string>, line 1)"),
            ("1 2 (3 4)", "Error: invalid syntax (<string>, line 1)"),
            (
                "1 + 2 (3 4)",
                "Error: invalid syntax. Perhaps you forgot a comma? (<string>, line 1)",
            ),
            (
                "(*())",
                "Error: cannot use starred expression here (<string>, line 1)",
            ),
            (
                "(**())",
                "Error: cannot use double starred expression here (<string>, line 1)",
            ),
            ("*()", "Error: invalid syntax (<string>, line 1)"),
            ("1...", "Error: invalid syntax (<string>, line 1)"),
            (
                "1/0 + 01",
                "Error: leading zeros in decimal integer literals are not permitted; \
                 use an 0o prefix for octal integers (<string>, line 1)",
            ),
            ("(1)2", "Error: invalid syntax (<string>, line 1)"),
        ]);
    }

    #[test]
    fn parser_stack_limit() {
        let compile = "Error: maximum recursion depth exceeded during compilation";
        // The parser's own MAXSTACK: 25 levels plus 2 per `**1`, 3 per `**-1`.
        assert_eq!(calculate_text(&format!("1{}", "**1".repeat(2987))), compile);
        assert_eq!(
            calculate_text(&format!("1{}", "**1".repeat(2988))),
            "Error: "
        );
        assert_eq!(calculate_text(&format!("1{}", "**-1".repeat(1486))), "1.0");
        assert_eq!(
            calculate_text(&format!("1{}", "**-1".repeat(1487))),
            compile
        );
        assert_eq!(
            calculate_text(&format!("1{}", "**-1".repeat(1991))),
            compile
        );
        assert_eq!(
            calculate_text(&format!("1{}", "**-1".repeat(1992))),
            "Error: "
        );
    }

    #[test]
    fn int_literal_digit_limit() {
        assert!(calculate_text(&"9".repeat(4301)).starts_with("Error: Exceeds the limit (4300"));
    }
}
