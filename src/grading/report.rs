//! How much the graders of a task's runs agree, per criterion and for the
//! whole rubric.
//!
//! An item is one criterion of one run; a grader's grade of it is their
//! verdict (see `verdicts`): a judged criterion they graded, or an
//! automatic one they overrode or, once done, let stand. Per criterion the
//! items are its runs; for the rubric, every criterion of every run
//! together. Two graders give Cohen's κ, more give Krippendorff's α
//! (nominal, which also copes with graders who skipped items).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::Serialize;

use super::agreement::{cohen_kappa, krippendorff_alpha, percent_agreement, Category};
use super::automatic_score;
use super::verdicts::{given, verdicts};
use crate::error::Result;
use crate::rubric::{CriterionKind, Rubric};
use crate::store::Store;
use crate::world::World;

/// Which statistic a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Method {
    /// Two graders.
    CohenKappa,
    /// Three graders or more.
    KrippendorffAlpha,
    /// Fewer than two graders: nothing to compare.
    None,
}

/// Agreement on a set of items.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Agreement {
    /// The statistic used.
    pub method: Method,
    /// κ or α: 1 is full agreement, 0 what chance gives, below 0 worse.
    /// `None` when it cannot be computed (see `note`).
    pub value: Option<f64>,
    /// Graders who graded any of the items.
    pub graders: u32,
    /// Items at least two graders graded.
    pub items: u32,
    /// Share of agreeing pairs of grades on the same item.
    pub percent: Option<f64>,
    /// Why there is no value, in plain words.
    pub note: Option<String>,
}

/// Agreement on one criterion across the task's runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CriterionAgreement {
    /// The criterion's id.
    pub id: String,
    /// The behaviour, in plain words.
    pub description: String,
    /// A person grades it.
    pub judged: bool,
    /// How the graders agree on it.
    pub agreement: Agreement,
}

/// Agreement of the graders of one task's runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgreementReport {
    /// The task whose runs were graded.
    pub task_id: String,
    /// Expert ids of everyone who graded any of the runs.
    pub graders: Vec<String>,
    /// Runs looked at.
    pub runs: u32,
    /// Every criterion of every run together.
    pub rubric: Agreement,
    /// Each criterion, in the rubric's order.
    pub criteria: Vec<CriterionAgreement>,
}

/// The agreement of the graders assigned to `episode_ids` (runs of the
/// rubric's task).
pub fn agreement_report(
    store: &Store,
    world: &Arc<World>,
    rubric: &Rubric,
    episode_ids: &[String],
) -> Result<AgreementReport> {
    let mut assigned: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
    for a in store.assignments()? {
        assigned
            .entry(a.episode_id)
            .or_default()
            .push((a.grader, a.done_at.is_some()));
    }
    // Per run, each grader's verdict per criterion.
    let mut runs: Vec<BTreeMap<String, BTreeMap<String, bool>>> = Vec::new();
    let mut graders: BTreeSet<String> = BTreeSet::new();
    for id in episode_ids {
        let Some(people) = assigned.get(id) else {
            runs.push(BTreeMap::new());
            continue;
        };
        let run = store.trajectory(id)?;
        let auto = automatic_score(store, world, rubric, &run)?;
        let mut by_grader = BTreeMap::new();
        for (grader, done) in people {
            let v = verdicts(&auto, &given(store, rubric, id, grader)?, *done);
            if !v.is_empty() {
                graders.insert(grader.clone());
                by_grader.insert(grader.clone(), v);
            }
        }
        runs.push(by_grader);
    }
    let graders: Vec<String> = graders.into_iter().collect();
    let units_of = |criterion: &str| -> Vec<Vec<Option<Category>>> {
        runs.iter()
            .map(|by| {
                graders
                    .iter()
                    .map(|g| by.get(g)?.get(criterion).map(|m| Category::from(*m)))
                    .collect()
            })
            .collect()
    };
    let mut pooled = Vec::new();
    let criteria = rubric
        .criteria
        .iter()
        .map(|c| {
            let units = units_of(&c.id);
            let agreement = agreement(&units);
            pooled.extend(units);
            CriterionAgreement {
                id: c.id.clone(),
                description: c.description.clone(),
                judged: c.kind == CriterionKind::Judged,
                agreement,
            }
        })
        .collect();
    Ok(AgreementReport {
        task_id: rubric.task_id.clone(),
        runs: episode_ids.len() as u32,
        rubric: agreement(&pooled),
        graders,
        criteria,
    })
}

/// Agreement on items given as one row per item, one column per grader.
pub fn agreement(units: &[Vec<Option<Category>>]) -> Agreement {
    let width = units.iter().map(Vec::len).max().unwrap_or(0);
    let columns: Vec<usize> = (0..width)
        .filter(|g| units.iter().any(|u| u.get(*g).copied().flatten().is_some()))
        .collect();
    let items = units
        .iter()
        .filter(|u| u.iter().flatten().count() >= 2)
        .count() as u32;
    let (method, value) = match columns.as_slice() {
        [] | [_] => (Method::None, None),
        [a, b] => {
            let column = |g: usize| -> Vec<Option<Category>> {
                units.iter().map(|u| u.get(g).copied().flatten()).collect()
            };
            (Method::CohenKappa, cohen_kappa(&column(*a), &column(*b)))
        }
        _ => (Method::KrippendorffAlpha, krippendorff_alpha(units)),
    };
    let note = if method == Method::None {
        Some("Only one grader has graded these runs; agreement needs two.".to_string())
    } else if items == 0 {
        Some("No run has been graded by two graders yet.".to_string())
    } else if value.is_none() {
        Some("Every grade was the same, so agreement beyond chance cannot be measured.".to_string())
    } else {
        None
    };
    Agreement {
        method,
        value,
        graders: columns.len() as u32,
        items,
        percent: percent_agreement(units),
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_graders_get_kappa_three_get_alpha_and_gaps_are_explained() {
        let one = agreement(&[vec![Some(1), None], vec![Some(0), None]]);
        assert_eq!(
            (one.method, one.value, one.graders),
            (Method::None, None, 1)
        );
        assert!(one.note.unwrap().contains("Only one grader"));

        let apart = agreement(&[vec![Some(1), None], vec![None, Some(0)]]);
        assert_eq!((apart.method, apart.items), (Method::CohenKappa, 0));
        assert_eq!(
            apart.note.as_deref(),
            Some("No run has been graded by two graders yet.")
        );

        let two = agreement(&[
            vec![Some(1), Some(1)],
            vec![Some(0), Some(0)],
            vec![Some(1), Some(0)],
            vec![Some(0), Some(0)],
        ]);
        assert_eq!(
            (two.method, two.items, two.graders),
            (Method::CohenKappa, 4, 2)
        );
        // p_o = 3/4, p_e = (2/4·1/4 + 2/4·3/4) = 1/2, κ = 0.5.
        assert!((two.value.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(two.percent, Some(0.75));

        let three = agreement(&[
            vec![Some(1), Some(1), Some(1)],
            vec![Some(0), Some(0), Some(1)],
            vec![Some(1), None, Some(1)],
        ]);
        assert_eq!(three.method, Method::KrippendorffAlpha);
        assert_eq!(three.graders, 3);

        let same = agreement(&[vec![Some(1), Some(1)], vec![Some(1), Some(1)]]);
        assert_eq!(same.value, None);
        assert!(same.note.unwrap().contains("Every grade was the same"));
    }
}
