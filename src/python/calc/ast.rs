//! The expression tree the parser builds and the evaluator walks.
//!
//! Nodes live in one arena (`Vec<Node>`) and refer to each other by index,
//! so that dropping or measuring a tree thousands of levels deep needs no
//! recursion.

use crate::python::bigint::BigInt;

pub(super) type NodeId = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Pow,
}

impl BinOp {
    pub(super) fn symbol(self) -> &'static str {
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
pub(super) enum UnOp {
    Plus,
    Minus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ArgKind {
    Plain,
    Star,
    DoubleStar,
}

#[derive(Debug, Clone)]
pub(super) enum Node {
    Int(BigInt),
    Float(f64),
    Ellipsis,
    EmptyTuple,
    Unary(UnOp, NodeId),
    Binary(BinOp, NodeId, NodeId),
    Call(NodeId, Option<(ArgKind, NodeId)>),
}

/// Nesting depth of expression nodes, as CPython's compiler counts it.
pub(super) fn depth(nodes: &[Node], root: NodeId) -> usize {
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
