//! One grader's sheet for one run: every criterion with what the automatic
//! check found (and its evidence) or, for judged ones, the guidance; the
//! grader's own grades; and the score with those grades applied beside the
//! automatic one.

use std::sync::Arc;

use serde::Serialize;

use super::automatic_score;
use super::verdicts::{given, Given};
use crate::error::{Error, Result};
use crate::rubric::{CriterionKind, Evidence, Judgment, Rubric, ScaleLevel, Score};
use crate::store::{JudgmentRecord, OverrideRecord, Store};
use crate::world::World;

/// What one grader sees and has done on one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GradingSheet {
    /// The run graded.
    pub episode_id: String,
    /// The task it ran.
    pub task_id: String,
    /// The grader's expert id.
    pub grader: String,
    /// The grader is assigned to the run (grading assigns them).
    pub assigned: bool,
    /// The grader said they were done.
    pub done: bool,
    /// The automatic score (judged criteria pending), as stored.
    pub automatic: Score,
    /// The score with this grader's grades and overrides applied.
    pub graded: Score,
    /// Every criterion, in the rubric's order.
    pub criteria: Vec<SheetCriterion>,
}

/// One criterion on a grading sheet.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SheetCriterion {
    /// The criterion's id.
    pub id: String,
    /// The behaviour, in plain words.
    pub description: String,
    /// For judged criteria: what met and not met mean.
    pub guidance: String,
    /// For a judged criterion graded on a scale: its levels, in the
    /// rubric's order (a grade picks one); empty: met or not met.
    pub scale: Vec<ScaleLevel>,
    /// How it is checked.
    pub kind: CriterionKind,
    /// Positive: must happen; negative: must not.
    pub points: f64,
    /// A gate zeroes the score when not met.
    pub gate: bool,
    /// A person grades it (no automatic verdict).
    pub judged: bool,
    /// What the automatic check found; `None` for judged criteria.
    pub automatic: Option<bool>,
    /// Why the check came out as it did.
    pub evidence: Evidence,
    /// Why the check could not run, when it could not.
    pub error: Option<String>,
    /// This grader's grade: a judgment, or an override of the check.
    pub grade: Option<Grade>,
}

/// A grader's grade of one criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Grade {
    /// The grader's verdict.
    pub met: bool,
    /// Why, in the grader's words.
    pub reason: String,
    /// When it was given (RFC 3339).
    pub at: String,
    /// For an override: what the automatic check had found.
    pub original: Option<bool>,
    /// For a judged criterion on a scale: the level chosen.
    pub level: Option<String>,
}

impl From<Given> for Grade {
    fn from(g: Given) -> Grade {
        Grade {
            met: g.met,
            reason: g.reason,
            at: g.at,
            original: g.original_met,
            level: g.level,
        }
    }
}

/// One grader at work on one run under one rubric: what a sheet is read
/// and changed for.
#[derive(Debug, Clone, Copy)]
pub struct RunGrader<'a> {
    /// Where the run, its grades and its stored score are.
    pub store: &'a Store,
    /// The run's world, to replay it in.
    pub world: &'a Arc<World>,
    /// The rubric graded with.
    pub rubric: &'a Rubric,
    /// The run graded.
    pub episode_id: &'a str,
    /// The expert grading it.
    pub grader: &'a str,
}

impl RunGrader<'_> {
    /// The grader's sheet for the run.
    pub fn sheet(&self) -> Result<GradingSheet> {
        let run = self.store.trajectory(self.episode_id)?;
        let automatic = automatic_score(self.store, self.world, self.rubric, &run)?;
        let mut grades = given(self.store, self.rubric, self.episode_id, self.grader)?;
        let mut graded = automatic.clone();
        for (id, g) in &grades {
            match self.rubric.criterion(id).map(|c| (c.kind, c.hash.clone())) {
                Some((CriterionKind::Judged, hash)) => {
                    graded.apply_judgment(
                        self.rubric,
                        &Judgment {
                            criterion_id: id.clone(),
                            criterion_hash: Some(hash),
                            met: g.met,
                            reason: g.reason.clone(),
                            judge: self.grader.to_string(),
                            at: g.at.clone(),
                            level: g.level.clone(),
                        },
                    );
                }
                Some(_) => {
                    graded.apply_override(self.rubric, id, g.met);
                }
                None => {}
            }
        }
        let assignment = self.store.assignment(self.episode_id, self.grader)?;
        let criteria = self
            .rubric
            .criteria
            .iter()
            .filter_map(|c| {
                let result = automatic.criteria.iter().find(|r| r.id == c.id)?;
                let judged = c.kind == CriterionKind::Judged;
                Some(SheetCriterion {
                    id: c.id.clone(),
                    description: c.description.clone(),
                    guidance: c.guidance().to_string(),
                    scale: c.scale().to_vec(),
                    kind: c.kind,
                    points: c.points,
                    gate: c.gate,
                    judged,
                    automatic: if judged { None } else { result.met },
                    evidence: result.evidence.clone(),
                    error: result.error.clone(),
                    grade: grades.remove(&c.id).map(Grade::from),
                })
            })
            .collect();
        Ok(GradingSheet {
            episode_id: self.episode_id.to_string(),
            task_id: run.record.task_id.clone(),
            grader: self.grader.to_string(),
            assigned: assignment.is_some(),
            done: assignment.is_some_and(|a| a.done_at.is_some()),
            automatic,
            graded,
            criteria,
        })
    }

    /// Records the grader's grade of one criterion, with a reason: a
    /// judgment for a judged criterion, an override for an automatic one
    /// (kept beside what the check found). Grading a run assigns the grader
    /// to it. Refused: an unknown criterion, an empty reason.
    pub fn grade(&self, input: &GradeInput) -> Result<GradingSheet> {
        let GradeInput {
            criterion_id,
            met,
            reason,
            level,
        } = input;
        let c = self.rubric.criterion(criterion_id).ok_or_else(|| {
            Error::NotFound(format!(
                "criterion `{criterion_id}` in the rubric of task {}",
                self.rubric.task_id
            ))
        })?;
        let met = met_at_level(c, *met, level.as_deref())?;
        if reason.trim().is_empty() {
            return Err(Error::Conflict(format!(
                "a grade needs a reason: say why \"{}\" is {}",
                c.description,
                if met { "met" } else { "not met" }
            )));
        }
        self.store.assign_grader(self.episode_id, self.grader)?;
        if c.kind == CriterionKind::Judged {
            self.store.save_judgment(
                self.episode_id,
                &JudgmentRecord {
                    criterion_id: c.id.clone(),
                    criterion_hash: Some(c.hash.clone()),
                    met,
                    reason: reason.clone(),
                    judge: self.grader.to_string(),
                    at: String::new(),
                    level: level.clone().filter(|_| !c.scale().is_empty()),
                },
            )?;
        } else {
            let run = self.store.trajectory(self.episode_id)?;
            let automatic = automatic_score(self.store, self.world, self.rubric, &run)?;
            let original = automatic
                .criteria
                .iter()
                .find(|r| r.id == c.id)
                .and_then(|r| r.met);
            self.store.save_override(
                self.episode_id,
                &OverrideRecord {
                    criterion_id: c.id.clone(),
                    criterion_hash: Some(c.hash.clone()),
                    original_met: original,
                    met,
                    reason: reason.clone(),
                    grader: self.grader.to_string(),
                    at: String::new(),
                },
            )?;
        }
        self.sheet()
    }

    /// Marks the grader's grading of the run done. Refused while a judged
    /// criterion has no grade from them, naming the ones left.
    pub fn finish(&self) -> Result<GradingSheet> {
        let grades = given(self.store, self.rubric, self.episode_id, self.grader)?;
        let left: Vec<&str> = self
            .rubric
            .criteria
            .iter()
            .filter(|c| c.kind == CriterionKind::Judged && !grades.contains_key(&c.id))
            .map(|c| c.description.as_str())
            .collect();
        if !left.is_empty() {
            return Err(Error::Conflict(format!(
                "grade every criterion a person decides before finishing; not graded yet: {}",
                left.iter()
                    .map(|d| format!("\"{d}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        self.store.assign_grader(self.episode_id, self.grader)?;
        self.store
            .set_grading_done(self.episode_id, self.grader, true)?;
        self.sheet()
    }
}

/// A grade as a grader gives it.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GradeInput {
    /// The criterion graded.
    pub criterion_id: String,
    /// The grader's verdict.
    pub met: bool,
    /// Why: required.
    pub reason: String,
    /// For a judged criterion with a scale: the level chosen (required
    /// there; its points decide `met`).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub level: Option<String>,
}

/// Whether a grade of `c` at `level` is met: on a scale the level decides
/// (and must be one of its levels); without one, `met` as given. Refused: a
/// scale without a level, an unknown level, a level where there is no scale.
/// Every way a person's grade is recorded goes through it: the grading
/// sheet and `understudy rubric judge`.
pub fn met_at_level(c: &crate::rubric::Criterion, met: bool, level: Option<&str>) -> Result<bool> {
    let scale = c.scale();
    match (
        level.map(str::trim).filter(|l| !l.is_empty()),
        scale.is_empty(),
    ) {
        (None, true) => Ok(met),
        (Some(l), true) => Err(Error::Conflict(format!(
            "\"{}\" is graded met or not met; it has no scale with a level \"{l}\"",
            c.description
        ))),
        (None, false) => Err(Error::Conflict(format!(
            "\"{}\" is graded on a scale: choose one of {}",
            c.description,
            levels(scale)
        ))),
        (Some(l), false) => {
            let probe = Judgment {
                criterion_id: c.id.clone(),
                criterion_hash: None,
                met,
                reason: String::new(),
                judge: String::new(),
                at: String::new(),
                level: Some(l.to_string()),
            };
            c.graded(&probe).map(|(met, _)| met).ok_or_else(|| {
                Error::Conflict(format!(
                    "\"{l}\" is not a level of the scale of \"{}\"; choose one of {}",
                    c.description,
                    levels(scale)
                ))
            })
        }
    }
}

fn levels(scale: &[ScaleLevel]) -> String {
    scale
        .iter()
        .map(|l| format!("\"{}\"", l.label))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn rubric(scale: &str) -> Rubric {
        let world = Arc::new(
            World::load(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/worlds/support-desk"))
                .expect("support-desk loads"),
        );
        let text = format!(
            "format = 1\nversion = \"1\"\n\n[[criteria]]\nid = \"closed\"\ndescription = \"The ticket is closed\"\nkind = \"state\"\nquery = \"SELECT status FROM tickets WHERE id = 'T-1042'\"\nexpect = {{ equals = \"closed\" }}\npoints = 1\n\n[[criteria]]\nid = \"tone\"\ndescription = \"Kind and clear\"\nkind = \"judged\"\n{scale}\npoints = 2\n"
        );
        Rubric::from_str(&world, "duplicate-charge", "t.toml", &text).expect("compiles")
    }

    #[test]
    fn a_grade_on_a_scale_needs_one_of_its_levels_and_the_level_decides_met() {
        let r = rubric("scale = [{ label = \"Clear\", points = 2 }, { label = \"Curt\", points = 1 }, { label = \"Unclear\", points = 0 }]");
        let c = r.criterion("tone").expect("judged");
        assert!(met_at_level(c, false, Some("Curt")).expect("a level"));
        assert!(!met_at_level(c, true, Some(" Unclear ")).expect("a level"));
        let none = met_at_level(c, true, None)
            .expect_err("no level")
            .to_string();
        assert!(
            none.contains("graded on a scale: choose one of \"Clear\", \"Curt\", \"Unclear\""),
            "{none}"
        );
        let unknown = met_at_level(c, true, Some("Superb"))
            .expect_err("unknown")
            .to_string();
        assert!(
            unknown.contains("\"Superb\" is not a level of the scale of \"Kind and clear\""),
            "{unknown}"
        );

        let plain = rubric("");
        let c = plain.criterion("tone").expect("judged");
        assert!(met_at_level(c, true, None).expect("met"));
        assert!(!met_at_level(c, false, Some("")).expect("an empty level is none"));
        let stray = met_at_level(c, true, Some("Curt"))
            .expect_err("no scale")
            .to_string();
        assert!(
            stray.contains("graded met or not met; it has no scale"),
            "{stray}"
        );
    }
}
