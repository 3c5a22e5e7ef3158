//! One file per criterion kind, each holding how the kind is written
//! (`compile`, from the file's fields to a check, with every problem) and
//! how it is checked (`evaluate`, with its evidence). The kinds are listed
//! and dispatched in [`super::criterion`]; what they share is in `compile`
//! (the inputs of compiling), `patterns` (arguments, words and steps) and
//! `words` (how evidence names tools, steps and counts).
//!
//! Adding a kind: a file here with its `FIELDS`, `compile` and `evaluate`,
//! a variant of `CriterionKind` and `Check`, and its fields in the file
//! format (`format.rs`).

pub(crate) mod action;
pub(crate) mod changes;
pub(crate) mod compile;
pub(crate) mod judged;
pub(crate) mod message;
pub(crate) mod patterns;
pub(crate) mod scope;
pub(crate) mod state;
pub(crate) mod words;
