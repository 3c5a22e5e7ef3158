//! `kind = "judged"`: graded by a person in the app or by a judge command
//! (run by `judge.rs`; only the grades, `Judgment`s, reach this file);
//! pending until then, never guessed.

use crate::rubric::evaluation::{Context, Evidence, Outcome};
use crate::rubric::format::CriterionToml;

/// The fields a judged criterion may set.
pub(crate) const FIELDS: &[&str] = &["guidance"];

#[derive(Debug, Clone)]
pub(crate) struct JudgedCheck {
    /// Instructions for whoever grades it.
    pub guidance: String,
}

impl JudgedCheck {
    pub fn compile(c: &CriterionToml) -> JudgedCheck {
        JudgedCheck {
            guidance: c.guidance.clone().unwrap_or_default(),
        }
    }

    /// The latest stored grade of criterion `id`, if it graded this version
    /// (`hash`) of it.
    pub fn evaluate(&self, cx: &Context<'_>, id: &str, hash: &str) -> (Outcome, Evidence) {
        let found = cx.judgments.iter().rev().find(|j| j.criterion_id == id);
        match found {
            None => (Outcome::Pending, Evidence::detail("not graded yet: a person or a judge must grade this criterion")),
            Some(j) if j.criterion_hash.as_deref().is_some_and(|h| h != hash) => (
                Outcome::Pending,
                Evidence::detail("the stored judgment graded an earlier version of this criterion; it must be graded again"),
            ),
            Some(j) => {
                let mut ev = Evidence::detail(format!("graded {} by {}: {}", if j.met { "met" } else { "not met" }, j.judge, j.reason));
                ev.judgment = Some(j.clone());
                (Outcome::Met(j.met), ev)
            }
        }
    }
}
