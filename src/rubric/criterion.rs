//! A compiled criterion, and the list of kinds it can be: each kind's
//! compile and evaluate live in `kinds/`; this file only dispatches to them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::evaluation::{Context, Evidence, Outcome};
use super::format::CriterionToml;
use super::kinds::action::{self, ActionCheck};
use super::kinds::compile::CompileCx;
use super::kinds::judged::{self, JudgedCheck};
use super::kinds::message::{self, MessageCheck};
use super::kinds::scope::{self, ScopeCheck};
use super::kinds::state::{self, StateCheck};

/// One criterion of a rubric, validated against its world.
#[derive(Debug, Clone, Serialize)]
pub struct Criterion {
    /// Unique within its rubric: lowercase letters, digits, `-`, `_` and `.`.
    /// Scores, judgments and lint reports name the criterion by it.
    pub id: String,
    /// What an expert reads: the behaviour, in plain words.
    pub description: String,
    /// Positive for what must happen, negative for what must not.
    pub points: f64,
    /// When a gate is not met the whole score is 0.
    pub gate: bool,
    /// Whether `pass` needs this criterion to come out right: met when its
    /// points are positive, not met when they are negative (default).
    pub required: bool,
    /// The section it counts in; given exactly when the rubric has sections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Which kind of check it is (the compiled check itself is not public).
    pub kind: CriterionKind,
    /// The criterion as written, for display.
    pub spec: Value,
    /// SHA-256 of `spec` and the points: a stored judgment is only reused
    /// while the criterion it judged is unchanged.
    pub hash: String,
    /// 1-based line of the criterion in its rubric file.
    pub line: usize,
    #[serde(skip)]
    pub(crate) check: Check,
}

/// What a criterion looks at, as a rubric file names it in `kind = ".."`
/// (and as it is serialized).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum CriterionKind {
    /// The final world: a read-only SQL query with an `expect`, or which records
    /// may differ from the seeded world.
    State,
    /// The tool calls made: which tool, with which arguments, how often and in
    /// what order.
    Action,
    /// What was said to the customer: a number, phrase, regex or date; committed
    /// to, when it must be met.
    Message,
    /// Whose records: writes to, or disclosures of, records outside the task's
    /// subject. Needs the world's `[scope]` and negative points.
    Scope,
    /// Graded by a person or a judge command; pending until then, never guessed.
    Judged,
}

impl CriterionKind {
    /// The kind a file names in `kind = ".."`.
    pub(crate) fn parse(name: &str) -> Option<CriterionKind> {
        match name {
            "state" => Some(CriterionKind::State),
            "action" => Some(CriterionKind::Action),
            "message" => Some(CriterionKind::Message),
            "scope" => Some(CriterionKind::Scope),
            "judged" => Some(CriterionKind::Judged),
            _ => None,
        }
    }

    /// The kind-specific fields a criterion of this kind may set.
    pub(crate) fn fields(self) -> &'static [&'static str] {
        match self {
            CriterionKind::State => state::FIELDS,
            CriterionKind::Action => action::FIELDS,
            CriterionKind::Message => message::FIELDS,
            CriterionKind::Scope => scope::FIELDS,
            CriterionKind::Judged => judged::FIELDS,
        }
    }
}

/// A criterion's compiled check: one variant per kind.
#[derive(Debug, Clone)]
pub(crate) enum Check {
    State(StateCheck),
    Action(ActionCheck),
    Message(MessageCheck),
    Scope(ScopeCheck),
    Judged(JudgedCheck),
}

impl Check {
    /// Compiles the kind-specific fields of `c`; problems go to `cx`.
    pub fn compile(
        kind: CriterionKind,
        c: &CriterionToml,
        cx: &mut CompileCx<'_, '_>,
    ) -> Option<Check> {
        match kind {
            CriterionKind::State => StateCheck::compile(c, cx).map(Check::State),
            CriterionKind::Action => ActionCheck::compile(c, cx).map(Check::Action),
            CriterionKind::Message => MessageCheck::compile(c, cx).map(Check::Message),
            CriterionKind::Scope => ScopeCheck::compile(c, cx).map(Check::Scope),
            CriterionKind::Judged => JudgedCheck::compile(c, cx).map(Check::Judged),
        }
    }
}

impl Criterion {
    pub(crate) fn evaluate(&self, cx: &Context<'_>) -> (Outcome, Evidence) {
        match &self.check {
            Check::State(s) => s.evaluate(cx),
            Check::Action(a) => a.evaluate(cx),
            Check::Message(m) => m.evaluate(cx),
            Check::Scope(s) => s.evaluate(cx),
            Check::Judged(j) => j.evaluate(cx, &self.id, &self.hash, self.points),
        }
    }

    /// The levels a judged criterion is graded on; empty when it is met or
    /// not met (and for the kinds checked automatically).
    pub fn scale(&self) -> &[judged::ScaleLevel] {
        match &self.check {
            Check::Judged(j) => &j.scale,
            _ => &[],
        }
    }

    /// The points a grade of this judged criterion earns (its level's, on a
    /// scale) and whether it counts as met; `None` when the grade names a
    /// level the scale does not have.
    pub fn graded(&self, j: &super::judgment::Judgment) -> Option<(bool, f64)> {
        match &self.check {
            Check::Judged(check) => check.grade(self.points, j),
            _ => Some((j.met, if j.met { self.points } else { 0.0 })),
        }
    }

    /// What a judged criterion tells whoever grades it; empty for the
    /// kinds checked automatically.
    pub fn guidance(&self) -> &str {
        match &self.check {
            Check::Judged(j) => &j.guidance,
            _ => "",
        }
    }
}
