//! The expression rules of `python.gram`, from `eval` down to `atom`, with
//! the `invalid_*` rules that the second pass tries among them.

use super::{number_literal, PResult, Parser, Rule};
use crate::python::calc::ast::{BinOp, Node, NodeId, UnOp};
use crate::python::calc::error::syntax_error;
use crate::python::calc::lexer::Kind;

impl Parser<'_> {
    /// `eval: expressions NEWLINE* ENDMARKER`
    pub(super) fn eval_rule(&mut self) -> PResult<Option<NodeId>> {
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
    pub(super) fn expression(&mut self) -> PResult<Option<NodeId>> {
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
        self.left_recursive(Rule::Term, Self::term_loop)
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
        self.memoized(Rule::AwaitPrimary, |p, _| {
            p.never()?; // AWAIT
            p.primary()
        })
    }

    /// `primary (left-recursive): primary '.' NAME | primary genexp |
    /// primary '(' [arguments] ')' | primary '[' slices ']' | atom`
    fn primary(&mut self) -> PResult<Option<NodeId>> {
        self.left_recursive(Rule::Primary, Self::primary_loop)
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
    pub(super) fn for_if_clauses(&mut self) -> PResult<Option<NodeId>> {
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
    pub(super) fn starred_expression(&mut self) -> PResult<Option<NodeId>> {
        self.rule(1, |p| {
            if p.eat(Kind::Star)? {
                p.expression()
            } else {
                Ok(None)
            }
        })
    }
}
