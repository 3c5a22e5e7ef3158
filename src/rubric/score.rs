//! From criteria results to one number.
//!
//! **Formula.** Gates first: if any gate is not met the score is 0.
//! Otherwise score = Σ points of met criteria / Σ positive points, clipped
//! to [0, 1] (negative points subtract when their criterion is met, as in
//! HealthBench). With sections, each leaf section is scored that way over
//! its own criteria and a parent is the weighted mean of its children
//! (PaperBench), up to the top-level sections.
//!
//! **Pending.** A judged criterion nobody has graded yet makes the value
//! `None`; `range` says the lowest and highest value the pending grades
//! could still give. A check that could not run (error) counts against
//! the episode: a positive criterion is unmet, a negative one is met and a
//! gate fails, so a broken rubric never raises a score.

use serde::{Deserialize, Serialize};

use super::criterion::CriterionKind;
use super::evaluation::{Context, Evidence, Outcome};
use super::judgment::Judgment;
use super::Rubric;
use crate::action::Action;
use crate::episode::Episode;
use crate::observation::Observation;

/// A scored episode: the value, what each criterion found, and the exact
/// versions it was computed against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Score {
    /// The scored episode's id when it has one (a stored or exported episode);
    /// `None` for a bare action list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub episode_id: Option<String>,
    /// The task scored: the rubric's task.
    pub task_id: String,
    /// Id of the world the episode was replayed in.
    pub world_id: String,
    /// That world's version.
    pub world_version: String,
    /// That world's content hash (its rubrics are not part of it).
    pub world_hash: String,
    /// SHA-256 of the task as the world defines it.
    pub task_hash: String,
    /// The rubric file's format ([`FORMAT`](super::FORMAT)).
    pub rubric_format: u32,
    /// The rubric's own `version`, which its author bumps when a criterion
    /// changes meaning.
    pub rubric_version: String,
    /// SHA-256 of the rubric file's bytes: the exact rubric this score used.
    pub rubric_hash: String,
    /// In [0, 1]; `None` while a judged criterion is pending.
    pub value: Option<f64>,
    /// Every gate met and every required criterion right (positive ones
    /// met, negative ones not): the task was done. `None` while a pending
    /// judged criterion could still decide it.
    #[serde(default)]
    pub pass: Option<bool>,
    /// The lowest and highest value still possible; both equal `value`
    /// when nothing is pending.
    pub range: [f64; 2],
    /// Ids of judged criteria not graded yet.
    pub pending: Vec<String>,
    /// Ids of gates that were not met (then the score is 0).
    pub failed_gates: Vec<String>,
    /// Ids of criteria whose check could not run (counted against).
    pub errors: Vec<String>,
    /// One result per section, in the rubric's order; empty (and left out of the
    /// JSON) for a rubric without sections.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<SectionResult>,
    /// One result per criterion, in the rubric's order.
    pub criteria: Vec<CriterionResult>,
    /// Steps applied.
    pub steps: usize,
    /// Actions given after the episode had ended (an ending tool succeeded
    /// or the step limit was reached): not applied and not scored.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ignored_actions: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// What one criterion found in one episode, and the points it earned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CriterionResult {
    /// The criterion's id in its rubric.
    pub id: String,
    /// The criterion's kind (`state`, `action`, …).
    pub kind: CriterionKind,
    /// The criterion's points: positive for what must happen, negative for what
    /// must not.
    pub points: f64,
    /// Whether the criterion is a gate: not met, it takes the score to 0.
    pub gate: bool,
    /// Whether `pass` needs it to come out right.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub required: bool,
    /// `None` while pending. For a negative criterion, met means the bad
    /// thing happened.
    pub met: Option<bool>,
    /// Points counted: `points` when met, else 0.
    pub earned: f64,
    /// The section the criterion belongs to, when the rubric has sections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Why the check could not run, or why a judge could not grade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What decided the result (the step, rows or words), for a person to check.
    pub evidence: Evidence,
}

/// The value of one section of a rubric with sections: its criteria scored
/// like a whole rubric, or the weighted mean of its sub-sections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SectionResult {
    /// The section's id in its rubric.
    pub id: String,
    /// Its weight in the mean of its parent, or of the top-level sections.
    pub weight: f64,
    /// The section's value in [0, 1] (0 when a gate failed); `None` while any
    /// judged criterion of the episode is pending.
    pub value: Option<f64>,
    /// The lowest and highest value still possible; both equal `value` when
    /// nothing is pending.
    pub range: [f64; 2],
}

/// Scores a finished episode: `episode` holds the final state, `actions`
/// the kept actions in order and `observations` what each returned.
pub fn score_episode(
    rubric: &Rubric,
    episode: &Episode,
    actions: &[Action],
    observations: &[Observation],
) -> Score {
    score_episode_with(rubric, episode, actions, observations, &[])
}

/// As [`score_episode`], with grades for judged criteria (from the store or
/// a judge command).
pub fn score_episode_with(
    rubric: &Rubric,
    episode: &Episode,
    actions: &[Action],
    observations: &[Observation],
    judgments: &[Judgment],
) -> Score {
    let world = episode.world();
    let cx = Context::new(episode, actions, observations, judgments);
    let wrong_task = (episode.task_id() != rubric.task_id).then(|| {
        format!(
            "the episode ran task `{}`, but this rubric grades `{}`",
            episode.task_id(),
            rubric.task_id
        )
    });
    let criteria = rubric
        .criteria
        .iter()
        .map(|c| {
            let (outcome, evidence) = match &wrong_task {
                Some(msg) => (
                    Outcome::Error(msg.clone()),
                    Evidence {
                        detail: msg.clone(),
                        ..Evidence::default()
                    },
                ),
                None => c.evaluate(&cx),
            };
            let (met, error) = match outcome {
                Outcome::Met(m) => (Some(m), None),
                Outcome::Pending => (None, None),
                // Fail closed: an error never helps the episode.
                Outcome::Error(e) => (Some(c.points < 0.0), Some(e)),
            };
            CriterionResult {
                id: c.id.clone(),
                kind: c.kind,
                points: c.points,
                gate: c.gate,
                required: c.required,
                earned: match evidence.judgment.as_ref().and_then(|j| c.graded(j)) {
                    // A grade on a scale earns its level's points.
                    Some((_, earned)) if met.is_some() && c.kind == CriterionKind::Judged => earned,
                    _ if met == Some(true) => c.points,
                    _ => 0.0,
                },
                met,
                section: c.section.clone(),
                error,
                evidence,
            }
        })
        .collect();
    let mut score = Score {
        episode_id: None,
        task_id: rubric.task_id.clone(),
        world_id: world.meta.id.clone(),
        world_version: world.meta.version.clone(),
        world_hash: world.content_hash.clone(),
        task_hash: rubric.task_hash.clone(),
        rubric_format: rubric.format,
        rubric_version: rubric.version.clone(),
        rubric_hash: rubric.hash.clone(),
        value: None,
        pass: None,
        range: [0.0, 0.0],
        pending: Vec::new(),
        failed_gates: Vec::new(),
        errors: Vec::new(),
        sections: Vec::new(),
        criteria,
        steps: actions.len(),
        ignored_actions: 0,
    };
    aggregate(rubric, &mut score);
    score
}

impl Score {
    /// Records a grade for a judged criterion and recomputes the value.
    /// Returns false when the rubric has no such judged criterion.
    pub fn apply_judgment(&mut self, rubric: &Rubric, judgment: &Judgment) -> bool {
        let Some(c) = rubric
            .criteria
            .iter()
            .find(|c| c.id == judgment.criterion_id && c.kind == CriterionKind::Judged)
        else {
            return false;
        };
        if judgment
            .criterion_hash
            .as_deref()
            .is_some_and(|h| h != c.hash)
        {
            return false;
        }
        let Some((met, earned)) = c.graded(judgment) else {
            return false;
        };
        let Some(r) = self.criteria.iter_mut().find(|r| r.id == c.id) else {
            return false;
        };
        r.met = Some(met);
        r.earned = earned;
        r.error = None;
        let grade = match &judgment.level {
            Some(level) if !c.scale().is_empty() => format!("“{level}”"),
            _ => (if met { "met" } else { "not met" }).to_string(),
        };
        r.evidence = Evidence {
            detail: format!("graded {grade} by {}: {}", judgment.judge, judgment.reason),
            judgment: Some(judgment.clone()),
            ..Evidence::default()
        };
        aggregate(rubric, self);
        true
    }

    /// Puts a grader's verdict in place of what an automatic check found,
    /// and recomputes the value: the score *with* a grader's overrides,
    /// shown beside the automatic one (which the caller keeps). The
    /// evidence stays, so the grader's reason reads against it. Returns
    /// false when the rubric has no such automatically checked criterion.
    pub fn apply_override(&mut self, rubric: &Rubric, criterion_id: &str, met: bool) -> bool {
        let Some(c) = rubric
            .criteria
            .iter()
            .find(|c| c.id == criterion_id && c.kind != CriterionKind::Judged)
        else {
            return false;
        };
        let Some(r) = self.criteria.iter_mut().find(|r| r.id == c.id) else {
            return false;
        };
        r.met = Some(met);
        r.earned = if met { r.points } else { 0.0 };
        aggregate(rubric, self);
        true
    }

    /// Marks a judged criterion's grading as failed (it stays pending).
    pub fn note_judge_error(&mut self, criterion_id: &str, error: String) {
        if let Some(r) = self.criteria.iter_mut().find(|r| r.id == criterion_id) {
            r.error = Some(error);
        }
    }

    /// Whether the episode passed (see [`Score::pass`]).
    pub fn passed(&self) -> bool {
        self.pass == Some(true)
    }

    /// Full marks: every point earned and no gate failed.
    pub fn is_success(&self) -> bool {
        self.value.is_some_and(|v| v >= 1.0 - 1e-9)
    }
}

/// Recomputes value, range, pending, failed gates, errors and sections from
/// the criteria results.
pub(crate) fn aggregate(rubric: &Rubric, score: &mut Score) {
    score.pending = score
        .criteria
        .iter()
        .filter(|r| r.met.is_none())
        .map(|r| r.id.clone())
        .collect();
    score.failed_gates = score
        .criteria
        .iter()
        .filter(|r| r.gate && r.met == Some(false))
        .map(|r| r.id.clone())
        .collect();
    score.errors = score
        .criteria
        .iter()
        .filter(|r| r.error.is_some() && r.met.is_some())
        .map(|r| r.id.clone())
        .collect();
    let lo = value_of(rubric, &score.criteria, false);
    let hi = value_of(rubric, &score.criteria, true);
    score.range = [lo.0, hi.0];
    // Pending grades that cannot move the value (a gate already failed)
    // leave it decided.
    score.value = (score.pending.is_empty() || (hi.0 - lo.0).abs() < 1e-12).then_some(lo.0);
    let (fails, passes) = (
        passes(&score.criteria, false),
        passes(&score.criteria, true),
    );
    score.pass = (fails == passes).then_some(passes);
    score.sections = rubric
        .sections
        .iter()
        .map(|s| {
            let l = lo.1.iter().find(|(id, _)| id == &s.id).map_or(0.0, |x| x.1);
            let h = hi.1.iter().find(|(id, _)| id == &s.id).map_or(0.0, |x| x.1);
            SectionResult {
                id: s.id.clone(),
                weight: s.weight,
                value: (l == h && score.pending.is_empty()).then_some(l),
                range: [l, h],
            }
        })
        .collect();
}

/// Whether the episode passes if every pending criterion came out worst
/// (`best = false`) or best for it: no gate failed and every required
/// criterion is right.
fn passes(results: &[CriterionResult], best: bool) -> bool {
    results.iter().all(|r| {
        let right = match r.met {
            Some(m) => m == (r.points >= 0.0 || r.gate),
            None => best,
        };
        right || !(r.gate || r.required)
    })
}

/// The score if every pending criterion came out worst (`best = false`) or
/// best (`best = true`) for the episode, with each section's value.
fn value_of(rubric: &Rubric, results: &[CriterionResult], best: bool) -> (f64, Vec<(String, f64)>) {
    let met = |r: &CriterionResult| match r.met {
        Some(m) => m,
        // Best case: positives and gates met, negatives not.
        None => best == (r.points >= 0.0),
    };
    if results.iter().any(|r| r.gate && !met(r)) {
        return (
            0.0,
            rubric
                .sections
                .iter()
                .map(|s| (s.id.clone(), 0.0))
                .collect(),
        );
    }
    let leaf = |rs: &mut dyn Iterator<Item = &CriterionResult>| {
        let (mut earned, mut possible) = (0.0, 0.0);
        for r in rs {
            if r.points > 0.0 {
                possible += r.points;
            }
            match r.met {
                // Decided: what it earned (a judged level may earn part).
                Some(_) => earned += r.earned,
                None if met(r) => earned += r.points,
                None => {}
            }
        }
        if possible > 0.0 {
            (earned / possible).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    if rubric.sections.is_empty() {
        return (leaf(&mut results.iter()), Vec::new());
    }
    let mut values: Vec<(String, f64)> = Vec::new();
    // Children before parents: repeat until every section has a value.
    let mut remaining: Vec<&super::Section> = rubric.sections.iter().collect();
    while !remaining.is_empty() {
        let before = remaining.len();
        remaining.retain(|s| {
            let children: Vec<&super::Section> = rubric
                .sections
                .iter()
                .filter(|c| c.parent.as_deref() == Some(&s.id))
                .collect();
            let v = if children.is_empty() {
                leaf(
                    &mut results
                        .iter()
                        .filter(|r| r.section.as_deref() == Some(&s.id)),
                )
            } else {
                let mut num = 0.0;
                let mut den = 0.0;
                for c in &children {
                    let Some((_, v)) = values.iter().find(|(id, _)| id == &c.id) else {
                        return true;
                    };
                    num += c.weight * v;
                    den += c.weight;
                }
                if den > 0.0 {
                    num / den
                } else {
                    0.0
                }
            };
            values.push((s.id.clone(), v));
            false
        });
        if remaining.len() == before {
            break;
        }
    }
    let (mut num, mut den) = (0.0, 0.0);
    for s in rubric.sections.iter().filter(|s| s.parent.is_none()) {
        let v = values
            .iter()
            .find(|(id, _)| id == &s.id)
            .map_or(0.0, |x| x.1);
        num += s.weight * v;
        den += s.weight;
    }
    (
        if den > 0.0 {
            (num / den).clamp(0.0, 1.0)
        } else {
            0.0
        },
        values,
    )
}
