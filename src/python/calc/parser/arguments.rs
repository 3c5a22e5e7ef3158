//! The call-argument rules of `python.gram` (`arguments` and below). With
//! no commas, names or `=` reachable, a call has at most one argument:
//! plain, `*expr` or `**expr`.

use super::{PResult, Parser};
use crate::python::calc::ast::{ArgKind, NodeId};
use crate::python::calc::lexer::Kind;

impl Parser<'_> {
    /// `arguments (memo): args [','] &')' | invalid_arguments`, reduced to
    /// the single argument a comma-free call can have.
    pub(super) fn arguments(&mut self) -> PResult<Option<(ArgKind, NodeId)>> {
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
