//! How often a judge plug-in agrees with the people who graded the same
//! judged criteria: before a team lets a judge grade on its own, it wants
//! to see that the judge says what its experts say.
//!
//! A judge's grade is one whose grader is a judge command
//! (`command:<program>`, see `rubric::judge`): a judgment stored in the
//! store's `judgments` table, or the grade inside a score saved by
//! `understudy score --judge … --save`. A person's grade is a judgment by
//! anyone else (an expert id). Only grades of the criterion as it is now
//! count (same hash), as everywhere in grading.
//!
//! An item is one person's grade of one run's criterion that the judge
//! graded too: a run graded by two people gives two items. Per criterion,
//! the report gives the items, how many agreed, the share, and Cohen's κ
//! between the judge's column and the people's (chance-corrected: a judge
//! that always says "met" agrees often on a criterion nearly always met).
//!
//! On a criterion graded on a scale, a grade is its level: a judge that
//! says "Clear but curt" where the person said "Clear and kind" disagrees,
//! though both count as met. A grade there without a level (from before
//! the criterion had its scale) cannot be compared and is left out.

use std::collections::BTreeMap;

use serde::Serialize;

use super::agreement::{cohen_kappa, Category};
use crate::error::Result;
use crate::rubric::{CriterionKind, Rubric, Score};
use crate::store::Store;

/// The prefix of a judge command's name as a grader.
pub const JUDGE_PREFIX: &str = "command:";

/// Whether a grader's name is a judge command's rather than a person's.
pub fn is_judge(grader: &str) -> bool {
    grader.starts_with(JUDGE_PREFIX)
}

/// One run where the judge and a person disagree.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct JudgeDisagreement {
    /// The run.
    pub episode_id: String,
    /// The person's expert id.
    pub grader: String,
    /// What the judge said (met or not).
    pub judge_met: bool,
    /// What the person said.
    pub grader_met: bool,
    /// On a scale, the level the judge chose.
    pub judge_level: Option<String>,
    /// On a scale, the level the person chose.
    pub grader_level: Option<String>,
}

/// The judge against people on one judged criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct JudgeCriterionAgreement {
    /// The criterion's id.
    pub id: String,
    /// The behaviour, in plain words.
    pub description: String,
    /// The judge commands that graded it (`command:<program>`).
    pub judges: Vec<String>,
    /// Runs the judge graded.
    pub judged_runs: u32,
    /// Runs people graded.
    pub graded_runs: u32,
    /// People's grades of runs the judge graded too.
    pub items: u32,
    /// Of those, the ones where the person said what the judge said.
    pub agreed: u32,
    /// `agreed / items`; `None` with no item.
    pub percent: Option<f64>,
    /// Cohen's κ, judge against people; `None` when it cannot be computed
    /// (see `note`).
    pub kappa: Option<f64>,
    /// Why there is no κ, in plain words.
    pub note: Option<String>,
    /// Where they differ, oldest run first.
    pub disagreements: Vec<JudgeDisagreement>,
}

/// The judge against people on every judged criterion of a rubric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct JudgeAgreement {
    /// The task whose runs were looked at.
    pub task_id: String,
    /// Each judged criterion, in the rubric's order.
    pub criteria: Vec<JudgeCriterionAgreement>,
}

impl JudgeAgreement {
    /// Whether a judge graded any of the runs (else there is nothing to show).
    pub fn has_judge(&self) -> bool {
        self.criteria.iter().any(|c| c.judged_runs > 0)
    }
}

/// A grade of one criterion of one run: met, and on a scale the level.
#[derive(Debug, Clone, PartialEq)]
struct Grade {
    met: bool,
    level: Option<String>,
}

/// A judge's grade of one criterion of one run, and the judge's name.
type JudgeGrade = (Grade, String);

/// The judge's and the people's grades of `episode_ids` (runs of the
/// rubric's task) on each judged criterion.
pub fn judge_agreement(
    store: &Store,
    rubric: &Rubric,
    episode_ids: &[String],
) -> Result<JudgeAgreement> {
    let judged: Vec<_> = rubric
        .criteria
        .iter()
        .filter(|c| c.kind == CriterionKind::Judged)
        .collect();
    let current = |id: &str, hash: Option<&str>| {
        judged
            .iter()
            .any(|c| c.id == id && hash.is_none_or(|h| h == c.hash))
    };
    // Per run: the judge's grade and each person's latest, per criterion.
    let mut by_judge: Vec<BTreeMap<String, JudgeGrade>> = Vec::new();
    let mut by_people: Vec<BTreeMap<String, BTreeMap<String, Grade>>> = Vec::new();
    for id in episode_ids {
        let mut judge: BTreeMap<String, JudgeGrade> = saved_judge_grades(store, id, &current)?;
        let mut people: BTreeMap<String, BTreeMap<String, Grade>> = BTreeMap::new();
        for j in store.judgments(id)? {
            if !current(&j.criterion_id, j.criterion_hash.as_deref()) {
                continue;
            }
            let grade = Grade {
                met: j.met,
                level: j.level,
            };
            if is_judge(&j.judge) {
                judge.insert(j.criterion_id, (grade, j.judge));
            } else {
                people
                    .entry(j.criterion_id)
                    .or_default()
                    .insert(j.judge, grade);
            }
        }
        by_judge.push(judge);
        by_people.push(people);
    }
    let criteria = judged
        .iter()
        .map(|c| {
            // What is compared: the level's rank on a scale, else met.
            let levels: Vec<&str> = c.scale().iter().map(|l| l.label.as_str()).collect();
            let category = |g: &Grade| -> Option<Category> {
                if levels.is_empty() {
                    return Some(Category::from(g.met));
                }
                let level = g.level.as_deref()?;
                levels
                    .iter()
                    .position(|l| *l == level)
                    .map(|i| i as Category)
            };
            let mut judges: Vec<String> = Vec::new();
            let (mut judged_runs, mut graded_runs) = (0u32, 0u32);
            let (mut a, mut b) = (Vec::<Option<Category>>::new(), Vec::new());
            let mut disagreements = Vec::new();
            for ((id, judge), people) in episode_ids.iter().zip(&by_judge).zip(&by_people) {
                let judge = judge.get(&c.id);
                let people = people.get(&c.id);
                judged_runs += u32::from(judge.is_some());
                graded_runs += u32::from(people.is_some_and(|p| !p.is_empty()));
                let (Some((said, name)), Some(people)) = (judge, people) else {
                    continue;
                };
                if !judges.contains(name) {
                    judges.push(name.clone());
                }
                let Some(theirs) = category(said) else {
                    continue;
                };
                for (grader, grade) in people {
                    let Some(mine) = category(grade) else {
                        continue;
                    };
                    a.push(Some(theirs));
                    b.push(Some(mine));
                    if mine != theirs {
                        disagreements.push(JudgeDisagreement {
                            episode_id: id.clone(),
                            grader: grader.clone(),
                            judge_met: said.met,
                            grader_met: grade.met,
                            judge_level: said.level.clone(),
                            grader_level: grade.level.clone(),
                        });
                    }
                }
            }
            let items = a.len() as u32;
            let agreed = items - disagreements.len() as u32;
            let kappa = cohen_kappa(&a, &b);
            let note = if judged_runs == 0 {
                Some("No judge has graded these runs.".to_string())
            } else if items == 0 {
                Some("Nobody has graded a run the judge graded yet.".to_string())
            } else if kappa.is_none() {
                Some(
                    "Every grade was the same, so agreement beyond chance cannot be measured."
                        .to_string(),
                )
            } else {
                None
            };
            JudgeCriterionAgreement {
                id: c.id.clone(),
                description: c.description.clone(),
                judges,
                judged_runs,
                graded_runs,
                items,
                agreed,
                percent: (items > 0).then(|| f64::from(agreed) / f64::from(items)),
                kappa,
                note,
                disagreements,
            }
        })
        .collect();
    Ok(JudgeAgreement {
        task_id: rubric.task_id.clone(),
        criteria,
    })
}

/// The judge's grades inside the run's saved scores (`understudy score
/// --judge … --save`), the latest score's winning. A score whose detail
/// does not read as a score is passed over: it cannot say what a judge said.
fn saved_judge_grades(
    store: &Store,
    episode_id: &str,
    current: &dyn Fn(&str, Option<&str>) -> bool,
) -> Result<BTreeMap<String, JudgeGrade>> {
    let mut out = BTreeMap::new();
    for stored in store.scores(episode_id)? {
        let Ok(score) = serde_json::from_str::<Score>(&stored.record.detail) else {
            continue;
        };
        for r in &score.criteria {
            let Some(j) = &r.evidence.judgment else {
                continue;
            };
            if is_judge(&j.judge) && current(&r.id, j.criterion_hash.as_deref()) {
                let grade = Grade {
                    met: j.met,
                    level: j.level.clone(),
                };
                out.insert(r.id.clone(), (grade, j.judge.clone()));
            }
        }
    }
    Ok(out)
}
