//! How much the graders of a task's runs agree, per criterion and for the
//! whole rubric.
//!
//! An item is one criterion of one run; a grader's grade of it is their
//! verdict (see `verdicts`): a judged criterion they graded, or an
//! automatic one they overrode or, once done, let stand. Per criterion the
//! items are its runs; for the rubric, every criterion of every run
//! together. Two graders give Cohen's κ, more give Krippendorff's α
//! (nominal, which also copes with graders who skipped items).
//!
//! A judged criterion on a scale is compared on its levels, not on met /
//! not met: two graders who both call a reply "met" but one "Clear and
//! kind" and the other "Clear but curt" disagree. Levels are ordered by
//! their points, so Krippendorff's ordinal α is used (for two graders
//! too): a grade one level apart is a smaller disagreement than one two
//! levels apart. The whole rubric's figure pools every criterion on met /
//! not met, the one question all criteria share.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::Serialize;

use super::agreement::{
    cohen_kappa, krippendorff_alpha, krippendorff_alpha_ordinal, percent_agreement, Category,
};
use super::automatic_score;
use super::verdicts::{given, verdicts, Verdict};
use crate::error::Result;
use crate::rubric::{CriterionKind, Rubric, ScaleLevel};
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
    /// The levels of a scale, two graders or more: ordered categories.
    KrippendorffAlphaOrdinal,
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
    let mut runs: Vec<BTreeMap<String, BTreeMap<String, Verdict>>> = Vec::new();
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
    let units_of = |criterion: &str, category: &dyn Fn(&Verdict) -> Option<Category>| {
        runs.iter()
            .map(|by| {
                graders
                    .iter()
                    .map(|g| category(by.get(g)?.get(criterion)?))
                    .collect()
            })
            .collect::<Vec<Vec<Option<Category>>>>()
    };
    let met = |v: &Verdict| Some(Category::from(v.met));
    let mut pooled = Vec::new();
    let criteria = rubric
        .criteria
        .iter()
        .map(|c| {
            let on_met = units_of(&c.id, &met);
            let agreement = if c.scale().is_empty() {
                agreement(&on_met)
            } else {
                let rank = level_ranks(c.scale());
                let level = |v: &Verdict| rank.get(v.level.as_deref()?).copied();
                ordinal_agreement(&units_of(&c.id, &level))
            };
            pooled.extend(on_met);
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

/// Each level's rank, lowest points first (file order among equal points):
/// the order the ordinal statistic compares levels in.
fn level_ranks(scale: &[ScaleLevel]) -> BTreeMap<&str, Category> {
    let mut order: Vec<&ScaleLevel> = scale.iter().collect();
    order.sort_by(|a, b| a.points.total_cmp(&b.points));
    order
        .into_iter()
        .enumerate()
        .map(|(rank, l)| (l.label.as_str(), rank as Category))
        .collect()
}

/// Agreement on items given as one row per item, one column per grader.
pub fn agreement(units: &[Vec<Option<Category>>]) -> Agreement {
    let graders = graders_of(units);
    let (method, value) = match graders.as_slice() {
        [] | [_] => (Method::None, None),
        [a, b] => {
            let column = |g: usize| -> Vec<Option<Category>> {
                units.iter().map(|u| u.get(g).copied().flatten()).collect()
            };
            (Method::CohenKappa, cohen_kappa(&column(*a), &column(*b)))
        }
        _ => (Method::KrippendorffAlpha, krippendorff_alpha(units)),
    };
    described(units, graders.len(), method, value)
}

/// Agreement on ordered categories (a scale's level ranks), one row per
/// item, one column per grader: Krippendorff's ordinal α for two graders
/// or more.
pub fn ordinal_agreement(units: &[Vec<Option<Category>>]) -> Agreement {
    let graders = graders_of(units).len();
    if graders < 2 {
        return described(units, graders, Method::None, None);
    }
    let value = krippendorff_alpha_ordinal(units);
    described(units, graders, Method::KrippendorffAlphaOrdinal, value)
}

/// The columns (graders) that graded any item.
fn graders_of(units: &[Vec<Option<Category>>]) -> Vec<usize> {
    let width = units.iter().map(Vec::len).max().unwrap_or(0);
    (0..width)
        .filter(|g| units.iter().any(|u| u.get(*g).copied().flatten().is_some()))
        .collect()
}

/// The statistic's value with the counts and, when there is no value, why.
fn described(
    units: &[Vec<Option<Category>>],
    graders: usize,
    method: Method,
    value: Option<f64>,
) -> Agreement {
    let items = units
        .iter()
        .filter(|u| u.iter().flatten().count() >= 2)
        .count() as u32;
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
        graders: graders as u32,
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
