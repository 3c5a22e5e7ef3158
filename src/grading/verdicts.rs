//! One grader's grades of one run, read from the store's judgments (for
//! judged criteria) and overrides (for automatic ones). Only grades of the
//! criterion as it is now count: a criterion edited since carries a new
//! hash and is graded afresh.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::rubric::{CriterionKind, Rubric, Score};
use crate::store::Store;

/// A grade a grader gave one criterion.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Given {
    pub met: bool,
    pub reason: String,
    pub at: String,
    /// For an override, what the automatic check had found.
    pub original_met: Option<bool>,
    /// For a judgment on a scale, the level chosen.
    pub level: Option<String>,
}

/// Each criterion's latest grade by `grader` on run `episode_id`.
pub(crate) fn given(
    store: &Store,
    rubric: &Rubric,
    episode_id: &str,
    grader: &str,
) -> Result<BTreeMap<String, Given>> {
    let current = |id: &str, hash: Option<&str>, judged: bool| {
        rubric.criterion(id).is_some_and(|c| {
            (c.kind == CriterionKind::Judged) == judged && hash.is_none_or(|h| h == c.hash)
        })
    };
    let mut out = BTreeMap::new();
    for j in store.judgments(episode_id)? {
        if j.judge == grader && current(&j.criterion_id, j.criterion_hash.as_deref(), true) {
            out.insert(
                j.criterion_id,
                Given {
                    met: j.met,
                    reason: j.reason,
                    at: j.at,
                    original_met: None,
                    level: j.level,
                },
            );
        }
    }
    for o in store.overrides(episode_id)? {
        if o.grader == grader && current(&o.criterion_id, o.criterion_hash.as_deref(), false) {
            out.insert(
                o.criterion_id,
                Given {
                    met: o.met,
                    reason: o.reason,
                    at: o.at,
                    original_met: o.original_met,
                    level: None,
                },
            );
        }
    }
    Ok(out)
}

/// What a grader's verdict on one criterion is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    pub met: bool,
    /// On a scale, the level's label.
    pub level: Option<String>,
}

/// A grader's verdict on every criterion they have one for: their grade,
/// else, once they said they were done (`done`), the automatic check's
/// verdict they let stand. Judged criteria they did not grade have none.
pub(crate) fn verdicts(
    auto: &Score,
    given: &BTreeMap<String, Given>,
    done: bool,
) -> BTreeMap<String, Verdict> {
    auto.criteria
        .iter()
        .filter_map(|c| {
            let verdict = match given.get(&c.id) {
                Some(g) => Some(Verdict {
                    met: g.met,
                    level: g.level.clone(),
                }),
                None if done && c.kind != CriterionKind::Judged => {
                    c.met.map(|met| Verdict { met, level: None })
                }
                None => None,
            };
            verdict.map(|v| (c.id.clone(), v))
        })
        .collect()
}
