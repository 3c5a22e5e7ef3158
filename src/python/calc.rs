//! τ-bench's `calculate` tool, reproduced without a Python interpreter.
//!
//! The reference is
//! `str(round(float(eval(expression, {"__builtins__": None}, {})), 2))`
//! behind a character whitelist, with any exception rendered as
//! `Error: <message>`. Within the whitelist (`0-9 + - * / ( ) .` and space)
//! that is a tiny language, but its *error messages* come from CPython
//! 3.11's tokenizer and two-pass PEG parser, whose choice of message depends
//! on how far the parser looked ahead before giving up (`(1 2` is "'(' was
//! never closed" while `(1 2 3` is "Perhaps you forgot a comma?"). So the
//! parser below mirrors the relevant rules of CPython's `python.gram` in the
//! same order, with the same lazy token fetching, memoisation and
//! invalid-rule second pass, rather than being a plain precedence parser.
//!
//! Evaluation follows CPython's numeric objects: exact ints (see
//! [`super::bigint`]), IEEE doubles with CPython's `float_pow` /
//! floor-division rules, complex numbers (reachable through `(-8)**0.5`),
//! the empty tuple `()` and `...` (Ellipsis).
//!
//! Known, documented divergences (inputs no agent plausibly sends):
//! * ints larger than [`super::bigint::MAX_BITS`] bits are refused with
//!   `int too large to convert to float` where CPython would compute them
//!   for a very long time (the spec notes `9**9**9` hangs the reference);
//! * CPython's compile-time recursion limit depends on how deep the Python
//!   stack was when `eval` ran; `COMPILE_DEPTH_LIMIT` assumes τ-bench's
//!   9-frame worker stack, so an expression nested ~2,970 deep may fail at
//!   a slightly different depth under another caller.

use std::collections::HashMap;
use std::fmt;

use super::bigint::{BigInt, FloatOverflow, TooBig};
use super::number::{float_repr, round_half_even};

/// Failure of `calculate`: the Python exception message, without the
/// `Error: ` prefix that the observation adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalcError {
    message: String,
}

impl CalcError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The Python exception text, e.g. `division by zero`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CalcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CalcError {}

/// The observation τ-bench produces for `calculate(expression)`: the rounded
/// result as Python's `str(float)` (`4.0`, `0.33`, `1e+20`, `inf`), or
/// `Error: <message>`.
pub fn calculate_text(expression: &str) -> String {
    match calculate(expression) {
        Ok(value) => float_repr(value),
        Err(err) => format!("Error: {err}"),
    }
}

/// The observation for a `calculate` call whose `expression` argument is
/// any JSON value, since models do send numbers and lists.
///
/// τ-bench scans the argument with `all(char in WHITELIST for char in
/// expression)` before `eval`: a number, bool or null is not iterable; a
/// list (or an object's keys) is iterated element-wise, where each element
/// must be a string that is a *substring* of the whitelist, and a list that
/// passes is then rejected by `eval` itself. The exception text reaches the
/// observation through the environment's generic `Error: ` wrapper.
pub fn calculate_json_text(expression: &serde_json::Value) -> String {
    use serde_json::Value;
    fn python_type(v: &Value) -> &'static str {
        match v {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "int",
            Value::String(_) => "str",
            Value::Array(_) => "list",
            Value::Object(_) => "dict",
        }
    }
    let whitelist = std::str::from_utf8(WHITELIST).unwrap_or_default();
    let check = |item: &Value| -> Option<String> {
        match item {
            Value::String(s) if whitelist.contains(s.as_str()) => None,
            Value::String(_) => Some("Error: invalid characters in expression".to_string()),
            other => Some(format!(
                "Error: 'in <string>' requires string as left operand, not {}",
                python_type(other)
            )),
        }
    };
    let failure = match expression {
        Value::String(s) => return calculate_text(s),
        Value::Array(items) => items.iter().find_map(check),
        Value::Object(map) => map.keys().find_map(|k| check(&Value::String(k.clone()))),
        other => {
            return format!("Error: '{}' object is not iterable", python_type(other));
        }
    };
    failure
        .unwrap_or_else(|| "Error: eval() arg 1 must be a string, bytes or code object".to_string())
}

/// Evaluates `expression` exactly as τ-bench's `calculate` does and returns
/// `round(float(result), 2)`.
///
/// The parser and evaluator recurse as deeply as CPython's do (thousands of
/// levels for hostile input), so long expressions run on a helper thread
/// with a stack sized for that; short ones, the normal case, run inline.
pub fn calculate(expression: &str) -> Result<f64, CalcError> {
    if expression.len() <= INLINE_MAX_LEN {
        return calculate_on_this_stack(expression);
    }
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("calculate".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, || calculate_on_this_stack(expression))
            // Python reports running out of memory as a MemoryError, whose
            // message is empty; a thread we cannot start is the same thing.
            .map_err(|_| CalcError::new(""))?;
        worker.join().map_err(|_| CalcError::new(""))?
    })
}

/// Inputs up to this length nest at most ~50 levels, which any thread's
/// stack can take.
const INLINE_MAX_LEN: usize = 100;

/// Enough for [`MAX_PARSER_LEVEL`] nested rules in an unoptimised build.
const DEEP_STACK_BYTES: usize = 64 << 20;

fn calculate_on_this_stack(expression: &str) -> Result<f64, CalcError> {
    if !expression.bytes().all(|b| WHITELIST.contains(&b)) {
        return Err(CalcError::new("invalid characters in expression"));
    }
    // `eval` of a string skips leading spaces and tabs before compiling.
    let source = expression.trim_start_matches(' ');
    if source.is_empty() {
        return Err(syntax_error_at("invalid syntax", 0));
    }
    let mut parser = Parser::new(source, tokenize(source));
    let root = parser.parse()?;
    if depth(&parser.nodes, root) > COMPILE_DEPTH_LIMIT {
        return Err(CalcError::new(
            "maximum recursion depth exceeded during compilation",
        ));
    }
    let value = eval(&parser.nodes, root)?;
    let float = to_float(&value)?;
    Ok(round_half_even(float, 2))
}

const WHITELIST: &[u8] = b"0123456789+-*/(). ";

/// CPython's tokenizer refuses more than this many open parentheses.
const MAX_PAREN_LEVEL: u32 = 200;

/// CPython's PEG parser raises `MemoryError` (whose text is empty) past this
/// many nested rule calls (`MAXSTACK` in `Parser/parser.c`).
const MAX_PARSER_LEVEL: u32 = 6000;

/// Deepest expression tree CPython 3.11 compiles. Its AST optimiser allows
/// 3 × the recursion limit (1000) minus 3 × the Python stack depth at the
/// `eval` call. In τ-bench that call sits 9 frames deep in a worker thread
/// (`Thread._bootstrap`, `_bootstrap_inner`, `run`, `_worker`,
/// `_WorkItem.run`, `_run`, `agent.solve`, `env.step`, `invoke`), giving
/// 3000 − 27. A different caller stack would move this by 3 per frame.
const COMPILE_DEPTH_LIMIT: usize = 2973;

/// Python's default `sys.get_int_max_str_digits()`.
const INT_MAX_STR_DIGITS: usize = 4300;

fn syntax_error_at(message: &str, line: u32) -> CalcError {
    CalcError::new(format!("{message} (<string>, line {line})"))
}

fn syntax_error(message: &str) -> CalcError {
    syntax_error_at(message, 1)
}

// ---------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
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
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
    /// Parenthesis depth after this token, as CPython records it.
    level: u32,
}

/// The token stream up to the first tokenizer error, and that error.
struct Lexed {
    tokens: Vec<Token>,
    /// Raised when the parser asks for the token after the last one; when
    /// `None` and parentheses are still open, that request raises
    /// "'(' was never closed" instead.
    error: Option<CalcError>,
}

/// Tokenizes the whole source up front, stopping at the first error.
///
/// CPython tokenizes lazily, and laziness is observable: a tokenizer error
/// only surfaces if the parser asks for that token, or if parsing fails
/// with a `SyntaxError` (then `_PyPegen_tokenize_full_source_to_check_for_errors`
/// scans the rest and the tokenizer's message replaces the parser's). A
/// parser `MemoryError` before that point wins. [`Parser::token`] replays
/// that order over the precomputed stream.
fn tokenize(src: &str) -> Lexed {
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

// ---------------------------------------------------------------------------
// AST
// ---------------------------------------------------------------------------

type NodeId = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Pow,
}

impl BinOp {
    fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Pow => "** or pow()",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnOp {
    Plus,
    Minus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgKind {
    Plain,
    Star,
    DoubleStar,
}

#[derive(Debug, Clone)]
enum Node {
    Int(BigInt),
    Float(f64),
    Ellipsis,
    EmptyTuple,
    Unary(UnOp, NodeId),
    Binary(BinOp, NodeId, NodeId),
    Call(NodeId, Option<(ArgKind, NodeId)>),
}

/// Nesting depth of expression nodes, as CPython's compiler counts it.
fn depth(nodes: &[Node], root: NodeId) -> usize {
    // Iterative so that hostile input cannot exhaust the Rust stack.
    let mut best = 0;
    let mut stack = vec![(root, 1usize)];
    while let Some((id, d)) = stack.pop() {
        best = best.max(d);
        match nodes.get(id) {
            Some(Node::Unary(_, a)) => stack.push((*a, d + 1)),
            Some(Node::Binary(_, a, b)) => {
                stack.push((*a, d + 1));
                stack.push((*b, d + 1));
            }
            Some(Node::Call(f, arg)) => {
                stack.push((*f, d + 1));
                // `*x` adds a Starred node; `**x` is a keyword, not an expr.
                if let Some((kind, a)) = arg {
                    let extra = if *kind == ArgKind::Star { 2 } else { 1 };
                    stack.push((*a, d + extra));
                }
            }
            _ => {}
        }
    }
    best
}

// ---------------------------------------------------------------------------
// Parser: a transcription of the reachable part of CPython 3.11 python.gram
// ---------------------------------------------------------------------------

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

    // -- rules ---------------------------------------------------------------

    /// `eval: expressions NEWLINE* ENDMARKER`
    fn eval_rule(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let Some(e) = p.expressions()? else {
                return Ok(None);
            };
            // NEWLINE* (never produced for `eval` input), then ENDMARKER.
            p.never()?;
            if p.eat(Kind::EndMarker)? {
                Ok(Some(e))
            } else {
                Ok(None)
            }
        })
    }

    /// `expressions: expression (',' expression)+ [','] | expression ',' |
    /// expression` — commas are impossible, so the first two alternatives
    /// only peek after the (memoised) expression.
    fn expressions(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if p.expression()?.is_some() {
                p.never()?;
            }
            p.mark = start;
            if p.expression()?.is_some() {
                p.never()?;
            }
            p.mark = start;
            p.expression()
        })
    }

    /// `expression (memo): invalid_expression | invalid_legacy_expression |
    /// disjunction 'if' disjunction 'else' expression | disjunction | lambdef`
    fn expression(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(hit) = p.memo_get(Rule::Expression) {
                return Ok(hit.map(|(n, _)| n));
            }
            if p.invalid {
                p.invalid_expression()?;
                p.mark = start;
                // invalid_legacy_expression: NAME !'(' star_expressions
                p.rule(1, |p| p.never().map(|_| None::<NodeId>))?;
                p.mark = start;
            }
            if let Some(_d) = p.disjunction()? {
                // 'if' never matches.
                p.never()?;
            }
            p.mark = start;
            let result = p.disjunction()?;
            let result = if result.is_some() {
                result
            } else {
                p.mark = start;
                // lambdef: 'lambda' ...
                p.rule(1, |p| p.never().map(|_| None::<NodeId>))?;
                None
            };
            Ok(p.memo_put(Rule::Expression, start, result))
        })
    }

    /// `invalid_expression: !(NAME STRING | SOFT_KEYWORD) a=disjunction
    /// b=expression_without_invalid` raising "Perhaps you forgot a comma?"
    /// when `b` ends inside parentheses; the `'if'` alternative cannot match.
    fn invalid_expression(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            // The negative lookahead peeks at the current token.
            p.rule(1, |p| p.never().map(|_| None::<NodeId>))?;
            if p.disjunction()?.is_some() && p.expression_without_invalid()?.is_some() {
                let last = p.token(p.mark.saturating_sub(1))?;
                if last.level != 0 {
                    return Err(syntax_error("invalid syntax. Perhaps you forgot a comma?"));
                }
            }
            p.mark = start;
            if p.disjunction()?.is_some() {
                p.never()?;
            }
            Ok(None)
        })
    }

    /// `expression_without_invalid`: the expression alternatives with the
    /// invalid rules switched off for everything underneath.
    fn expression_without_invalid(&mut self) -> PResult<Option<NodeId>> {
        let saved = self.invalid;
        self.invalid = false;
        let result = self.rule(1, |p| {
            let start = p.mark;
            if p.disjunction()?.is_some() {
                p.never()?;
            }
            p.mark = start;
            if let Some(d) = p.disjunction()? {
                return Ok(Some(d));
            }
            p.rule(1, |p| p.never().map(|_| None::<NodeId>))
        });
        self.invalid = saved;
        result
    }

    /// `disjunction (memo)` down to `comparison`: no `or`, `and`, `not` or
    /// comparison operator can occur, so this is `bitwise_or` followed by
    /// peeks for those operators, four rule levels deeper.
    fn disjunction(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(hit) = p.memo_get(Rule::Disjunction) {
                return Ok(hit.map(|(n, _)| n));
            }
            // conjunction, inversion ('not' peek), comparison.
            p.enter(3)?;
            p.never()?;
            let result = p.bitwise_or();
            p.leave(3);
            let result = result?;
            if result.is_some() {
                // compare_op pairs, 'and', 'or': all peek at the same token.
                p.never()?;
            }
            Ok(p.memo_put(Rule::Disjunction, start, result))
        })
    }

    /// `bitwise_or` through `shift_expr` and the left-recursive `sum`
    /// (all memoised together: no `|`, `^`, `&`, `<<`, `>>` can occur).
    fn bitwise_or(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(hit) = p.memo_get(Rule::BitwiseOr) {
                return Ok(hit.map(|(n, _)| n));
            }
            // bitwise_or_raw, bitwise_xor(+raw), bitwise_and(+raw),
            // shift_expr(+raw), sum, sum_raw.
            p.enter(9)?;
            let result = p.sum_loop();
            p.leave(9);
            let result = result?;
            if result.is_some() {
                p.never()?;
            }
            Ok(p.memo_put(Rule::BitwiseOr, start, result))
        })
    }

    /// The grown left recursion of `sum: sum '+' term | sum '-' term | term`.
    fn sum_loop(&mut self) -> PResult<Option<NodeId>> {
        let Some(mut left) = self.term()? else {
            return Ok(None);
        };
        loop {
            let before = self.mark;
            let op = if self.eat(Kind::Plus)? {
                BinOp::Add
            } else if self.eat(Kind::Minus)? {
                BinOp::Sub
            } else {
                break;
            };
            match self.term()? {
                Some(right) => left = self.push(Node::Binary(op, left, right)),
                None => {
                    self.mark = before;
                    // The remaining alternative peeks at the same operator.
                    self.check(Kind::Minus)?;
                    break;
                }
            }
        }
        Ok(Some(left))
    }

    /// `term (left-recursive): term ('*' | '/' | '//' | '%' | '@') factor |
    /// factor`
    fn term(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(hit) = p.memo_get(Rule::Term) {
                return Ok(hit.map(|(n, _)| n));
            }
            p.enter(1)?; // term_raw
            let result = p.term_loop();
            p.leave(1);
            let result = result?;
            Ok(p.memo_put(Rule::Term, start, result))
        })
    }

    fn term_loop(&mut self) -> PResult<Option<NodeId>> {
        let Some(mut left) = self.factor()? else {
            return Ok(None);
        };
        loop {
            let before = self.mark;
            let op = if self.eat(Kind::Star)? {
                BinOp::Mul
            } else if self.eat(Kind::Slash)? {
                BinOp::Div
            } else if self.eat(Kind::DoubleSlash)? {
                BinOp::FloorDiv
            } else {
                // '%' and '@' never occur.
                break;
            };
            match self.factor()? {
                Some(right) => left = self.push(Node::Binary(op, left, right)),
                None => {
                    self.mark = before;
                    break;
                }
            }
        }
        Ok(Some(left))
    }

    /// `factor (memo): '+' factor | '-' factor | '~' factor | power`
    fn factor(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(hit) = p.memo_get(Rule::Factor) {
                return Ok(hit.map(|(n, _)| n));
            }
            let mut result = None;
            for (kind, op) in [(Kind::Plus, UnOp::Plus), (Kind::Minus, UnOp::Minus)] {
                p.mark = start;
                if p.eat(kind)? {
                    if let Some(operand) = p.factor()? {
                        result = Some(p.push(Node::Unary(op, operand)));
                        break;
                    }
                }
            }
            if result.is_none() {
                p.mark = start;
                p.never()?; // '~'
                result = p.power()?;
            }
            Ok(p.memo_put(Rule::Factor, start, result))
        })
    }

    /// `power: await_primary '**' factor | await_primary`
    fn power(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(base) = p.await_primary()? {
                if p.eat(Kind::DoubleStar)? {
                    if let Some(exp) = p.factor()? {
                        return Ok(Some(p.push(Node::Binary(BinOp::Pow, base, exp))));
                    }
                }
            }
            p.mark = start;
            p.await_primary()
        })
    }

    /// `await_primary (memo): AWAIT primary | primary`
    fn await_primary(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(hit) = p.memo_get(Rule::AwaitPrimary) {
                return Ok(hit.map(|(n, _)| n));
            }
            p.never()?; // AWAIT
            let result = p.primary()?;
            Ok(p.memo_put(Rule::AwaitPrimary, start, result))
        })
    }

    /// `primary (left-recursive): primary '.' NAME | primary genexp |
    /// primary '(' [arguments] ')' | primary '[' slices ']' | atom`
    fn primary(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(hit) = p.memo_get(Rule::Primary) {
                return Ok(hit.map(|(n, _)| n));
            }
            p.enter(1)?; // primary_raw
            let result = p.primary_loop();
            p.leave(1);
            let result = result?;
            Ok(p.memo_put(Rule::Primary, start, result))
        })
    }

    fn primary_loop(&mut self) -> PResult<Option<NodeId>> {
        let Some(mut current) = self.atom()? else {
            return Ok(None);
        };
        loop {
            let here = self.mark;
            // primary '.' NAME
            if self.eat(Kind::Dot)? {
                self.never()?;
            }
            self.mark = here;
            // primary genexp: can never complete (needs `for`), but parses.
            self.genexp()?;
            self.mark = here;
            // primary '(' [arguments] ')'
            if self.eat(Kind::LPar)? {
                let args = self.arguments()?;
                if self.eat(Kind::RPar)? {
                    current = self.push(Node::Call(current, args));
                    continue;
                }
            }
            self.mark = here;
            // primary '[' slices ']'
            self.never()?;
            break;
        }
        Ok(Some(current))
    }

    /// `atom: NAME | 'True' | 'False' | 'None' | &STRING strings | NUMBER |
    /// &'(' (tuple | group | genexp) | &'[' ... | &'{' ... | '...'`
    fn atom(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let tok = p.token(p.mark)?;
            match tok.kind {
                Kind::Number => {
                    p.mark += 1;
                    let node = number_literal(&p.src[tok.start..tok.end])?;
                    Ok(Some(p.push(node)))
                }
                Kind::Ellipsis => {
                    p.mark += 1;
                    Ok(Some(p.push(Node::Ellipsis)))
                }
                Kind::LPar => p.rule(1, |p| {
                    let start = p.mark;
                    if let Some(t) = p.tuple()? {
                        return Ok(Some(t));
                    }
                    p.mark = start;
                    if let Some(g) = p.group()? {
                        return Ok(Some(g));
                    }
                    p.mark = start;
                    p.genexp()
                }),
                _ => Ok(None),
            }
        })
    }

    /// `tuple: '(' [star_named_expression ',' [star_named_expressions]] ')'`
    /// — only `()` can match.
    fn tuple(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            if !p.eat(Kind::LPar)? {
                return Ok(None);
            }
            let inner = p.mark;
            p.rule(1, |p| {
                if p.star_named_expression()?.is_some() {
                    p.never()?; // ','
                }
                Ok(None::<NodeId>)
            })?;
            p.mark = inner;
            if p.eat(Kind::RPar)? {
                Ok(Some(p.push(Node::EmptyTuple)))
            } else {
                Ok(None)
            }
        })
    }

    /// `group: '(' (yield_expr | named_expression) ')' | invalid_group`
    fn group(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if p.eat(Kind::LPar)? {
                let inner = p.rule(1, |p| {
                    p.rule(1, |p| p.never().map(|_| None::<NodeId>))?; // yield_expr
                    p.named_expression()
                })?;
                if let Some(e) = inner {
                    if p.eat(Kind::RPar)? {
                        return Ok(Some(e));
                    }
                }
            }
            p.mark = start;
            if p.invalid {
                p.invalid_group()?;
            }
            Ok(None)
        })
    }

    /// `invalid_group: '(' starred_expression ')' | '(' '**' expression ')'`
    fn invalid_group(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if p.eat(Kind::LPar)? && p.starred_expression()?.is_some() && p.eat(Kind::RPar)? {
                return Err(syntax_error("cannot use starred expression here"));
            }
            p.mark = start;
            if p.eat(Kind::LPar)?
                && p.eat(Kind::DoubleStar)?
                && p.expression()?.is_some()
                && p.eat(Kind::RPar)?
            {
                return Err(syntax_error("cannot use double starred expression here"));
            }
            Ok(None)
        })
    }

    /// `genexp: '(' (assignment_expression | expression !':=')
    /// for_if_clauses ')' | invalid_comprehension` — `for` is impossible,
    /// so this never matches, but it parses and (second pass) may raise.
    fn genexp(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if p.eat(Kind::LPar)? {
                let inner = p.rule(1, |p| {
                    p.rule(1, |p| p.never().map(|_| None::<NodeId>))?; // NAME ':='
                    let e = p.expression()?;
                    if e.is_some() {
                        p.never()?; // !':='
                    }
                    Ok(e)
                })?;
                if inner.is_some() {
                    p.for_if_clauses()?;
                }
            }
            p.mark = start;
            if p.invalid {
                // invalid_comprehension: ('[' | '(' | '{') starred_expression
                // for_if_clauses | ...
                p.rule(1, |p| {
                    let found = p.rule(1, |p| Ok(p.eat(Kind::LPar)?.then_some(0)))?;
                    if found.is_some() && p.starred_expression()?.is_some() {
                        p.for_if_clauses()?;
                    }
                    p.mark = start;
                    p.never()?;
                    p.never()?;
                    Ok(None::<NodeId>)
                })?;
            }
            Ok(None)
        })
    }

    /// `for_if_clauses`: needs `for`, so only peeks.
    fn for_if_clauses(&mut self) -> PResult<Option<NodeId>> {
        self.rule(3, |p| {
            p.never()?;
            Ok(None)
        })
    }

    /// `named_expression: assignment_expression | invalid_named_expression |
    /// expression !':='`
    fn named_expression(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            p.rule(1, |p| p.never().map(|_| None::<NodeId>))?; // NAME ':='
            if p.invalid {
                p.invalid_named_expression()?;
                p.mark = start;
            }
            let e = p.expression()?;
            if e.is_some() {
                p.never()?;
            }
            Ok(e)
        })
    }

    /// `invalid_named_expression (memo)`: every alternative needs `:=` or
    /// `=`, so it never matches, but its sub-parses can raise.
    fn invalid_named_expression(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(hit) = p.memo_get(Rule::InvalidNamedExpression) {
                return Ok(hit.map(|(n, _)| n));
            }
            if p.expression()?.is_some() {
                p.never()?; // ':='
            }
            p.mark = start;
            p.never()?; // NAME '='
                        // !(list | tuple | genexp | 'True' | 'None' | 'False') bitwise_or '='
            let blocked = p.rule(1, |p| {
                p.rule(1, |p| p.never().map(|_| None::<NodeId>))?; // list
                let s = p.mark;
                if let Some(t) = p.tuple()? {
                    return Ok(Some(t));
                }
                p.mark = s;
                if let Some(g) = p.genexp()? {
                    return Ok(Some(g));
                }
                p.mark = s;
                p.never()?;
                Ok(None)
            })?;
            p.mark = start;
            if blocked.is_none() && p.bitwise_or()?.is_some() {
                p.never()?; // '='
            }
            p.mark = start;
            Ok(p.memo_put(Rule::InvalidNamedExpression, start, None))
        })
    }

    /// `star_named_expression: '*' bitwise_or | named_expression`
    fn star_named_expression(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if p.eat(Kind::Star)? {
                if let Some(e) = p.bitwise_or()? {
                    return Ok(Some(e));
                }
            }
            p.mark = start;
            p.named_expression()
        })
    }

    /// `starred_expression: '*' expression`
    fn starred_expression(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            if p.eat(Kind::Star)? {
                p.expression()
            } else {
                Ok(None)
            }
        })
    }

    /// `arguments (memo): args [','] &')' | invalid_arguments`, reduced to
    /// the single argument a comma-free call can have.
    fn arguments(&mut self) -> PResult<Option<(ArgKind, NodeId)>> {
        self.rule(1, |p| {
            let start = p.mark;
            if let Some(hit) = p.args_memo.get(&start).copied() {
                if let Some((_, end)) = hit {
                    p.mark = end;
                }
                return Ok(hit.map(|(arg, _)| arg));
            }
            let mut result = None;
            if let Some(arg) = p.args()? {
                p.never()?; // [',']
                if p.check(Kind::RPar)? {
                    result = Some(arg);
                }
            }
            if result.is_none() {
                p.mark = start;
                if p.invalid {
                    p.invalid_arguments()?;
                }
                p.mark = start;
            }
            p.args_memo.insert(start, result.map(|arg| (arg, p.mark)));
            Ok(result)
        })
    }

    /// `args: ','.(starred_expression | (assignment_expression | expression
    /// !':=') !'=')+ [',' kwargs] | kwargs`
    fn args(&mut self) -> PResult<Option<(ArgKind, NodeId)>> {
        self.rule(1, |p| {
            let start = p.mark;
            let first = p.rule(2, |p| {
                let s = p.mark;
                if let Some(e) = p.starred_expression()? {
                    return Ok(Some((ArgKind::Star, e)));
                }
                p.mark = s;
                let plain = p.rule(1, |p| {
                    p.rule(1, |p| p.never().map(|_| None::<NodeId>))?;
                    let e = p.expression()?;
                    if e.is_some() {
                        p.never()?; // !':='
                    }
                    Ok(e)
                })?;
                match plain {
                    Some(e) => {
                        p.never()?; // !'='
                        Ok(Some((ArgKind::Plain, e)))
                    }
                    None => Ok(None),
                }
            })?;
            if let Some(arg) = first {
                p.never()?; // ',' element
                p.never()?; // [',' kwargs]
                return Ok(Some(arg));
            }
            p.mark = start;
            p.kwargs()
        })
    }

    /// `kwargs`: only `*expr` (kwarg_or_starred) or `**expr`
    /// (kwarg_or_double_starred) can appear, one of them, without commas.
    fn kwargs(&mut self) -> PResult<Option<(ArgKind, NodeId)>> {
        self.rule(1, |p| {
            let start = p.mark;
            // Alternatives 1 and 2 both start with kwarg_or_starred+.
            for _ in 0..2 {
                p.mark = start;
                if let Some(e) = p.kwarg_or_starred()? {
                    p.never()?; // ','
                    return Ok(Some((ArgKind::Star, e)));
                }
            }
            p.mark = start;
            if let Some(e) = p.kwarg_or_double_starred()? {
                p.never()?;
                return Ok(Some((ArgKind::DoubleStar, e)));
            }
            Ok(None)
        })
    }

    fn kwarg_or_starred(&mut self) -> PResult<Option<NodeId>> {
        self.rule(2, |p| {
            let start = p.mark;
            if p.invalid {
                p.invalid_kwarg()?;
                p.mark = start;
            }
            p.never()?; // NAME '='
            p.starred_expression()
        })
    }

    fn kwarg_or_double_starred(&mut self) -> PResult<Option<NodeId>> {
        self.rule(2, |p| {
            let start = p.mark;
            if p.invalid {
                p.invalid_kwarg()?;
                p.mark = start;
            }
            p.never()?; // NAME '='
            if p.eat(Kind::DoubleStar)? {
                p.expression()
            } else {
                Ok(None)
            }
        })
    }

    /// `invalid_kwarg`: the `!(NAME '=') expression '='` alternative parses
    /// an expression (with invalid rules on) before failing.
    fn invalid_kwarg(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            p.never()?; // ('True'|'False'|'None') '='
            p.never()?; // NAME '=' expression for_if_clauses
            p.rule(1, |p| p.never().map(|_| None::<NodeId>))?;
            p.mark = start;
            if p.expression()?.is_some() {
                p.never()?; // '='
            }
            Ok(None)
        })
    }

    /// `invalid_arguments`: every alternative needs `,`, `=` or `for`; only
    /// the sub-parses matter.
    fn invalid_arguments(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            let start = p.mark;
            if p.args()?.is_some() {
                p.never()?;
            }
            p.mark = start;
            if p.expression()?.is_some() {
                p.for_if_clauses()?;
            }
            p.mark = start;
            p.never()?;
            if p.args()?.is_some() {
                p.for_if_clauses()?;
            }
            p.mark = start;
            if p.args()?.is_some() {
                p.never()?;
            }
            p.mark = start;
            if p.args()?.is_some() {
                p.never()?;
            }
            Ok(None)
        })
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

// ---------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Value {
    Int(BigInt),
    Float(f64),
    Complex(f64, f64),
    Tuple,
    Ellipsis,
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Complex(..) => "complex",
            Value::Tuple => "tuple",
            Value::Ellipsis => "ellipsis",
        }
    }
}

const INT_TOO_LARGE: &str = "int too large to convert to float";

fn too_big(_: TooBig) -> CalcError {
    CalcError::new(INT_TOO_LARGE)
}

fn int_to_f64(i: &BigInt) -> Result<f64, CalcError> {
    i.to_f64()
        .map_err(|FloatOverflow| CalcError::new(INT_TOO_LARGE))
}

/// `float(value)`, the step between `eval` and `round`.
fn to_float(value: &Value) -> Result<f64, CalcError> {
    match value {
        Value::Int(i) => int_to_f64(i),
        Value::Float(f) => Ok(*f),
        other => Err(CalcError::new(format!(
            "float() argument must be a string or a real number, not '{}'",
            other.type_name()
        ))),
    }
}

/// Evaluates the tree in Python's order: operands left to right, then the
/// operation; call arguments before the call.
fn eval(nodes: &[Node], id: NodeId) -> Result<Value, CalcError> {
    let Some(node) = nodes.get(id) else {
        return Err(CalcError::new("internal error: dangling node"));
    };
    match node {
        Node::Int(i) => Ok(Value::Int(i.clone())),
        Node::Float(f) => Ok(Value::Float(*f)),
        Node::Ellipsis => Ok(Value::Ellipsis),
        Node::EmptyTuple => Ok(Value::Tuple),
        Node::Unary(op, a) => unary(*op, eval(nodes, *a)?),
        Node::Binary(op, a, b) => {
            let left = eval(nodes, *a)?;
            let right = eval(nodes, *b)?;
            binary(*op, left, right)
        }
        Node::Call(func, arg) => {
            let callee = eval(nodes, *func)?;
            if let Some((kind, a)) = arg {
                let value = eval(nodes, *a)?;
                match kind {
                    ArgKind::Plain => {}
                    ArgKind::Star if matches!(value, Value::Tuple) => {}
                    ArgKind::Star => {
                        return Err(CalcError::new(format!(
                            "{} argument after * must be an iterable, not {}",
                            python_str(&callee)?,
                            value.type_name()
                        )))
                    }
                    ArgKind::DoubleStar => {
                        return Err(CalcError::new(format!(
                            "{} argument after ** must be a mapping, not {}",
                            python_str(&callee)?,
                            value.type_name()
                        )))
                    }
                }
            }
            Err(CalcError::new(format!(
                "'{}' object is not callable",
                callee.type_name()
            )))
        }
    }
}

/// Python `str(value)`, used where CPython names a non-function callee.
fn python_str(value: &Value) -> Result<String, CalcError> {
    Ok(match value {
        Value::Int(i) => {
            let text = i.to_decimal();
            let digits = text.trim_start_matches('-').len();
            if digits > INT_MAX_STR_DIGITS {
                return Err(CalcError::new(format!(
                    "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string \
                     conversion; use sys.set_int_max_str_digits() to increase the limit"
                )));
            }
            text
        }
        Value::Float(f) => float_repr(*f),
        Value::Complex(re, im) => complex_repr(*re, *im),
        Value::Tuple => "()".to_string(),
        Value::Ellipsis => "Ellipsis".to_string(),
    })
}

/// `repr(complex)`: parts in repr style without a forced `.0`.
fn complex_repr(re: f64, im: f64) -> String {
    fn part(x: f64) -> String {
        let text = float_repr(x);
        match text.strip_suffix(".0") {
            Some(short) => short.to_string(),
            None => text,
        }
    }
    let imag = part(im);
    if re == 0.0 && re.is_sign_positive() {
        return format!("{imag}j");
    }
    let sign = if im.is_sign_negative() { "" } else { "+" };
    format!("({}{sign}{imag}j)", part(re))
}

fn unary(op: UnOp, value: Value) -> Result<Value, CalcError> {
    Ok(match (op, value) {
        (UnOp::Plus, v @ (Value::Int(_) | Value::Float(_) | Value::Complex(..))) => v,
        (UnOp::Minus, Value::Int(i)) => Value::Int(i.neg()),
        (UnOp::Minus, Value::Float(f)) => Value::Float(-f),
        (UnOp::Minus, Value::Complex(re, im)) => Value::Complex(-re, -im),
        (op, other) => {
            return Err(CalcError::new(format!(
                "bad operand type for unary {}: '{}'",
                if op == UnOp::Plus { "+" } else { "-" },
                other.type_name()
            )))
        }
    })
}

fn unsupported(op: BinOp, a: &Value, b: &Value) -> CalcError {
    CalcError::new(format!(
        "unsupported operand type(s) for {}: '{}' and '{}'",
        op.symbol(),
        a.type_name(),
        b.type_name()
    ))
}

fn binary(op: BinOp, a: Value, b: Value) -> Result<Value, CalcError> {
    use Value::{Complex, Ellipsis, Float, Int, Tuple};
    match (&a, &b) {
        (Int(x), Int(y)) => int_op(op, x, y),
        (Int(_) | Float(_), Int(_) | Float(_)) => {
            let x = as_f64(&a)?;
            let y = as_f64(&b)?;
            float_op(op, x, y)
        }
        (Int(_) | Float(_) | Complex(..), Int(_) | Float(_) | Complex(..)) => {
            if op == BinOp::FloorDiv {
                return Err(unsupported(op, &a, &b));
            }
            let x = as_complex(&a)?;
            let y = as_complex(&b)?;
            complex_op(op, x, y)
        }
        (Tuple, Tuple) if op == BinOp::Add => Ok(Tuple),
        (Tuple, _) if op == BinOp::Add => Err(CalcError::new(format!(
            "can only concatenate tuple (not \"{}\") to tuple",
            b.type_name()
        ))),
        (Tuple, other) | (other, Tuple) if op == BinOp::Mul => match other {
            Int(n) => match n.to_i64() {
                Some(_) => Ok(Tuple),
                None => Err(CalcError::new(
                    "cannot fit 'int' into an index-sized integer",
                )),
            },
            // `tuple * tuple` names the right operand, the non-int one.
            _ => Err(CalcError::new(format!(
                "can't multiply sequence by non-int of type '{}'",
                if matches!(a, Tuple) {
                    b.type_name()
                } else {
                    a.type_name()
                }
            ))),
        },
        (Ellipsis, _) | (_, Ellipsis) | (Tuple, _) | (_, Tuple) => Err(unsupported(op, &a, &b)),
    }
}

fn as_f64(v: &Value) -> Result<f64, CalcError> {
    match v {
        Value::Int(i) => int_to_f64(i),
        Value::Float(f) => Ok(*f),
        _ => Ok(f64::NAN),
    }
}

fn as_complex(v: &Value) -> Result<(f64, f64), CalcError> {
    match v {
        Value::Complex(re, im) => Ok((*re, *im)),
        other => Ok((as_f64(other)?, 0.0)),
    }
}

fn int_op(op: BinOp, x: &BigInt, y: &BigInt) -> Result<Value, CalcError> {
    Ok(match op {
        BinOp::Add => Value::Int(x.add(y)),
        BinOp::Sub => Value::Int(x.sub(y)),
        BinOp::Mul => Value::Int(x.mul(y).map_err(too_big)?),
        BinOp::Div => match x.true_div(y) {
            None => return Err(CalcError::new("division by zero")),
            Some(Ok(q)) => Value::Float(q),
            Some(Err(FloatOverflow)) => {
                return Err(CalcError::new(
                    "integer division result too large for a float",
                ))
            }
        },
        BinOp::FloorDiv => match x.floor_div(y) {
            Some(q) => Value::Int(q),
            None => return Err(CalcError::new("integer division or modulo by zero")),
        },
        BinOp::Pow => {
            if y.is_negative() {
                // long_pow hands negative exponents to float_pow.
                let fx = int_to_f64(x)?;
                let fy = int_to_f64(y)?;
                return float_pow(fx, fy);
            }
            Value::Int(x.pow(y).map_err(too_big)?)
        }
    })
}

fn float_op(op: BinOp, x: f64, y: f64) -> Result<Value, CalcError> {
    Ok(Value::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return Err(CalcError::new("float division by zero"));
            }
            x / y
        }
        BinOp::FloorDiv => {
            if y == 0.0 {
                return Err(CalcError::new("float floor division by zero"));
            }
            float_floor_div(x, y)
        }
        BinOp::Pow => return float_pow(x, y),
    }))
}

/// CPython's `_float_div_mod`, floor-quotient half.
fn float_floor_div(vx: f64, wx: f64) -> f64 {
    let modulo = vx % wx;
    let mut div = (vx - modulo) / wx;
    if modulo != 0.0 && ((wx < 0.0) != (modulo < 0.0)) {
        div -= 1.0;
    }
    if div != 0.0 {
        let mut floordiv = div.floor();
        if div - floordiv > 0.5 {
            floordiv += 1.0;
        }
        floordiv
    } else {
        (0.0f64).copysign(vx / wx)
    }
}

fn is_odd_integer(x: f64) -> bool {
    x.is_finite() && x == x.trunc() && (x % 2.0).abs() == 1.0
}

/// CPython's `float_pow`, including the hand-off to complex for a negative
/// base with a fractional exponent and OverflowError with errno text.
fn float_pow(iv: f64, iw: f64) -> Result<Value, CalcError> {
    let float = |x: f64| Ok(Value::Float(x));
    if iw == 0.0 {
        return float(1.0);
    }
    if iv.is_nan() {
        return float(iv);
    }
    if iw.is_nan() {
        return float(if iv == 1.0 { 1.0 } else { iw });
    }
    if iw.is_infinite() {
        let av = iv.abs();
        return float(if av == 1.0 {
            1.0
        } else if (iw > 0.0) == (av > 1.0) {
            iw.abs()
        } else {
            0.0
        });
    }
    if iv.is_infinite() {
        let odd = is_odd_integer(iw);
        return float(if iw > 0.0 {
            if odd {
                iv
            } else {
                iv.abs()
            }
        } else if odd {
            (0.0f64).copysign(iv)
        } else {
            0.0
        });
    }
    if iv == 0.0 {
        if iw < 0.0 {
            return Err(CalcError::new("0.0 cannot be raised to a negative power"));
        }
        return float(if is_odd_integer(iw) { iv } else { 0.0 });
    }
    let mut base = iv;
    let mut negate = false;
    if iv < 0.0 {
        if iw != iw.floor() {
            return complex_op(BinOp::Pow, (iv, 0.0), (iw, 0.0));
        }
        base = -iv;
        negate = is_odd_integer(iw);
    }
    if base == 1.0 {
        return float(if negate { -1.0 } else { 1.0 });
    }
    let ix = base.powf(iw);
    if ix.is_infinite() {
        return Err(CalcError::new("(34, 'Numerical result out of range')"));
    }
    float(if negate { -ix } else { ix })
}

type Complex = (f64, f64);

fn c_prod(a: Complex, b: Complex) -> Complex {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

/// `_Py_c_quot` (Smith's algorithm); `None` on division by zero (EDOM).
fn c_quot(a: Complex, b: Complex) -> Option<Complex> {
    let abs_breal = b.0.abs();
    let abs_bimag = b.1.abs();
    if abs_breal >= abs_bimag {
        if abs_breal == 0.0 {
            return None;
        }
        let ratio = b.1 / b.0;
        let denom = b.0 + b.1 * ratio;
        Some(((a.0 + a.1 * ratio) / denom, (a.1 - a.0 * ratio) / denom))
    } else if abs_bimag >= abs_breal {
        let ratio = b.0 / b.1;
        let denom = b.0 * ratio + b.1;
        Some(((a.0 * ratio + a.1) / denom, (a.1 * ratio - a.0) / denom))
    } else {
        Some((f64::NAN, f64::NAN))
    }
}

/// `_Py_c_pow`; `None` for zero to a negative or complex power (EDOM).
fn c_pow(a: Complex, b: Complex) -> Option<Complex> {
    if b.0 == 0.0 && b.1 == 0.0 {
        return Some((1.0, 0.0));
    }
    if a.0 == 0.0 && a.1 == 0.0 {
        if b.1 != 0.0 || b.0 < 0.0 {
            return None;
        }
        return Some((0.0, 0.0));
    }
    let vabs = a.0.hypot(a.1);
    let mut len = vabs.powf(b.0);
    let at = a.1.atan2(a.0);
    let mut phase = at * b.0;
    if b.1 != 0.0 {
        len /= (at * b.1).exp();
        phase += b.1 * vabs.ln();
    }
    Some((len * phase.cos(), len * phase.sin()))
}

fn c_powu(x: Complex, n: i64) -> Complex {
    let mut r = (1.0, 0.0);
    let mut p = x;
    let mut mask = 1i64;
    while mask > 0 && n >= mask {
        if n & mask != 0 {
            r = c_prod(r, p);
        }
        mask <<= 1;
        p = c_prod(p, p);
    }
    r
}

fn complex_op(op: BinOp, x: Complex, y: Complex) -> Result<Value, CalcError> {
    let (re, im) = match op {
        BinOp::Add => (x.0 + y.0, x.1 + y.1),
        BinOp::Sub => (x.0 - y.0, x.1 - y.1),
        BinOp::Mul => c_prod(x, y),
        BinOp::Div => c_quot(x, y).ok_or_else(|| CalcError::new("complex division by zero"))?,
        BinOp::FloorDiv => {
            return Err(CalcError::new(
                "unsupported operand type(s) for //: 'complex' and 'complex'",
            ))
        }
        BinOp::Pow => {
            // complex_pow: small integral exponents use repeated squaring.
            let result = if y.1 == 0.0 && y.0 == y.0.floor() && y.0.abs() <= 100.0 {
                let n = y.0 as i64;
                if n > 0 {
                    Some(c_powu(x, n))
                } else {
                    c_quot((1.0, 0.0), c_powu(x, -n))
                }
            } else {
                c_pow(x, y)
            };
            let Some((re, im)) = result else {
                return Err(CalcError::new("0.0 to a negative or complex power"));
            };
            if re.is_infinite() || im.is_infinite() {
                return Err(CalcError::new("complex exponentiation"));
            }
            (re, im)
        }
    };
    Ok(Value::Complex(re, im))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cases: &[(&str, &str)]) {
        for (input, want) in cases {
            assert_eq!(calculate_text(input), *want, "calculate({input:?})");
        }
    }

    #[test]
    fn gold_samples() {
        check(&[
            ("3131.1 + 4777.75 + 367.38", "8276.23"),
            ("135.24 - 153.23", "-17.99"),
            ("164.28", "164.28"),
            ("2 * ((350 - 122) + (499 - 127))", "1200.0"),
        ]);
    }

    #[test]
    fn result_table() {
        check(&[
            ("2 + 2", "4.0"),
            ("1/3", "0.33"),
            ("100/7", "14.29"),
            ("0.1+0.2", "0.3"),
            ("2.675", "2.67"),
            ("0.125", "0.12"),
            ("-0.001", "-0.0"),
            ("10**20", "1e+20"),
            ("10000000000000000", "1e+16"),
            ("1000000000000000", "1000000000000000.0"),
            ("123456789*1000000000", "1.23456789e+17"),
            ("2.0**1023*2", "inf"),
            ("-(2.0**1023*2)", "-inf"),
            ("2.0**1023*2-2.0**1023*2", "nan"),
            ("99999999999999999999", "1e+20"),
        ]);
    }

    #[test]
    fn language_rules() {
        check(&[
            ("12", "12.0"),
            ("1.", "1.0"),
            (".5", "0.5"),
            ("00.5", "0.5"),
            ("0", "0.0"),
            ("00", "0.0"),
            ("-7//2", "-4.0"),
            ("7//-2", "-4.0"),
            ("7.5//2", "3.0"),
            ("-7.5//2", "-4.0"),
            ("2 ** 3 ** 2", "512.0"),
            ("-2**2", "-4.0"),
            ("2**-1", "0.5"),
            ("1--2", "3.0"),
            ("1++2", "3.0"),
            ("  1 + 1", "2.0"),
            ("(1)", "1.0"),
            ("((((1))))", "1.0"),
            ("-----1", "-1.0"),
            ("0/-5", "-0.0"),
            ("0*-1", "0.0"),
            ("0.0*-1", "-0.0"),
            ("2**200/2**100", "1.2676506002282294e+30"),
            ("10**20+1-10**20", "1.0"),
            ("1/2**2000", "0.0"),
            ("2**-2000", "0.0"),
            ("10.0**-310", "0.0"),
            ("(-8)**2", "64.0"),
            ("(-8.0)**3", "-512.0"),
            ("(-1)**0.0", "1.0"),
            ("0**0", "1.0"),
        ]);
    }

    #[test]
    fn error_table() {
        check(&[
            ("1/0", "Error: division by zero"),
            ("0/0", "Error: division by zero"),
            ("1.5/0", "Error: float division by zero"),
            ("1/0.0", "Error: float division by zero"),
            ("1//0", "Error: integer division or modulo by zero"),
            ("1.5//0", "Error: float floor division by zero"),
            ("1//0.0", "Error: float floor division by zero"),
            ("0**-1", "Error: 0.0 cannot be raised to a negative power"),
            ("2**10000", "Error: int too large to convert to float"),
            ("2.0**10000", "Error: (34, 'Numerical result out of range')"),
            (
                "(-8)**0.5",
                "Error: float() argument must be a string or a real number, not 'complex'",
            ),
            (
                "()",
                "Error: float() argument must be a string or a real number, not 'tuple'",
            ),
            (
                "()+1",
                "Error: can only concatenate tuple (not \"int\") to tuple",
            ),
            ("", "Error: invalid syntax (<string>, line 0)"),
            ("   ", "Error: invalid syntax (<string>, line 0)"),
            ("2(3)", "Error: 'int' object is not callable"),
            ("(1.5)(2)", "Error: 'float' object is not callable"),
        ]);
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
    fn whitelist() {
        for input in [
            "1\t+1", "1\n", "1e5", "1,2", "5%2", "1_000", "0x10", "abs(1)",
        ] {
            assert_eq!(
                calculate_text(input),
                "Error: invalid characters in expression",
                "{input:?}"
            );
        }
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
    fn object_errors() {
        check(&[
            ("2(*())", "Error: 'int' object is not callable"),
            (
                "2(*1)",
                "Error: 2 argument after * must be an iterable, not int",
            ),
            (
                "2(**())",
                "Error: 2 argument after ** must be a mapping, not tuple",
            ),
            ("2(1/0)", "Error: division by zero"),
            ("()()", "Error: 'tuple' object is not callable"),
            ("...()", "Error: 'ellipsis' object is not callable"),
            (
                "...",
                "Error: float() argument must be a string or a real number, not 'ellipsis'",
            ),
            (
                "...+1",
                "Error: unsupported operand type(s) for +: 'ellipsis' and 'int'",
            ),
            ("-...", "Error: bad operand type for unary -: 'ellipsis'"),
            ("+()", "Error: bad operand type for unary +: 'tuple'"),
            (
                "()*2.0",
                "Error: can't multiply sequence by non-int of type 'float'",
            ),
            (
                "()*(2**63)",
                "Error: cannot fit 'int' into an index-sized integer",
            ),
            (
                "()*-(2**63)",
                "Error: float() argument must be a string or a real number, not 'tuple'",
            ),
            (
                "()**2",
                "Error: unsupported operand type(s) for ** or pow(): 'tuple' and 'int'",
            ),
            (
                "1+()",
                "Error: unsupported operand type(s) for +: 'int' and 'tuple'",
            ),
            (
                "(-8)**0.5//1",
                "Error: unsupported operand type(s) for //: 'complex' and 'int'",
            ),
            ("(-8)**0.5/0", "Error: complex division by zero"),
            ("((-8)**0.5)**1000", "Error: complex exponentiation"),
            (
                "(0*(-8)**0.5)**-1",
                "Error: 0.0 to a negative or complex power",
            ),
            (
                "2**2000/3",
                "Error: integer division result too large for a float",
            ),
            (
                "(0*(-8)**0.5)(*1)",
                "Error: 0j argument after * must be an iterable, not int",
            ),
        ]);
    }

    #[test]
    fn limits() {
        assert_eq!(
            calculate_text(&format!("{}1{}", "(".repeat(201), ")".repeat(201))),
            "Error: too many nested parentheses (<string>, line 1)"
        );
        assert_eq!(
            calculate_text(&format!("{}1{}", "(".repeat(200), ")".repeat(200))),
            "1.0"
        );
        let compile = "Error: maximum recursion depth exceeded during compilation";
        // An AST nested COMPILE_DEPTH_LIMIT deep compiles, one more does not.
        let ok = COMPILE_DEPTH_LIMIT - 1;
        assert_eq!(calculate_text(&format!("{}1", "-".repeat(ok))), "1.0");
        assert_eq!(calculate_text(&format!("{}1", "-".repeat(ok + 1))), compile);
        assert_eq!(calculate_text(&format!("1{}", "+1".repeat(ok))), "2973.0");
        assert_eq!(
            calculate_text(&format!("1{}", "+1".repeat(ok + 1))),
            compile
        );
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
        assert!(calculate_text(&"9".repeat(4301)).starts_with("Error: Exceeds the limit (4300"));
        assert_eq!(
            calculate_text(&"9".repeat(4300)),
            "Error: int too large to convert to float"
        );
    }

    #[test]
    fn non_string_arguments() {
        use serde_json::json;
        let cases = [
            (json!("2 + 2"), "4.0"),
            (json!(5), "Error: 'int' object is not iterable"),
            (json!(1.5), "Error: 'float' object is not iterable"),
            (json!(true), "Error: 'bool' object is not iterable"),
            (json!(null), "Error: 'NoneType' object is not iterable"),
            (
                json!([]),
                "Error: eval() arg 1 must be a string, bytes or code object",
            ),
            (
                json!(["12", "+-*"]),
                "Error: eval() arg 1 must be a string, bytes or code object",
            ),
            (json!(["x"]), "Error: invalid characters in expression"),
            (json!(["21"]), "Error: invalid characters in expression"),
            (
                json!([1]),
                "Error: 'in <string>' requires string as left operand, not int",
            ),
            (
                json!([null]),
                "Error: 'in <string>' requires string as left operand, not NoneType",
            ),
            (
                json!([[]]),
                "Error: 'in <string>' requires string as left operand, not list",
            ),
            (
                json!({"1": 2}),
                "Error: eval() arg 1 must be a string, bytes or code object",
            ),
            (json!({"a": 1}), "Error: invalid characters in expression"),
        ];
        for (value, want) in cases {
            assert_eq!(calculate_json_text(&value), want, "{value}");
        }
    }

    #[test]
    fn calc_error_is_an_error() {
        let err = calculate("1/0").err();
        assert_eq!(
            err.as_ref().map(CalcError::message),
            Some("division by zero")
        );
        let boxed: Option<Box<dyn std::error::Error>> = err.map(|e| Box::new(e) as _);
        assert_eq!(
            boxed.map(|e| e.to_string()),
            Some("division by zero".into())
        );
        assert_eq!(calculate("2 + 2"), Ok(4.0));
    }
}
